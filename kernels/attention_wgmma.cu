// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention forward on Hopper (sm_90a): wgmma with K and V
// tiles brought by the bulk tensor copy engine, warp-specialised. F16 and
// BF16, head widths 64, 128, 192 and 256 (the plan pads D and Dv up to one:
// zero-filled tensor maps), blocks that are multiples of 64; the plan
// takes kernels/attention_mma.cu elsewhere.
//
// A CTA owns 128 query rows of one (batch, head): warpgroup 0 is the
// producer, warpgroups 1 and 2 each own 64 rows. The producer (one warp,
// one lane writing) walks the key tiles (128 keys: two active 64-key
// slots) that either consumer needs (their query blocks' active key
// blocks, up to the causal limit), 32 slots per mask read, and fills a
// ring of stages: each tile's record (its keys, which consumer takes it),
// K, and V a tile behind. The consumers take turns to issue their GEMMs:
// in its turn a consumer reads the tile's record, issues S = Q K^T (both
// operands in shared memory) and P V of its previous tile (P from
// registers), then runs the online softmax of S while P V runs and the
// other consumer's turn comes. A tile only one consumer needs is skipped
// by the other (blocks of 64 rows may differ).
#include "attention_decode.cuh"
#include "attention_wgmma_walk.cuh"

// Tuning switch (a variant of the module, BK_CUDA_MODULE_DIR): the
// ping-pong of the two consumers' GEMMs (BK_ATTENTION_WGMMA_SETMAXNREG,
// the move of registers, is the walk header's).
#ifndef BK_ATTENTION_WGMMA_PINGPONG
#define BK_ATTENTION_WGMMA_PINGPONG 1
#endif

namespace bk {
namespace attention {
namespace wg {

// Shared memory of a CTA: NC Q tiles (64 rows each), STAGES K and V
// tiles (BN rows each), then the barriers. A tile is DH / 64 column
// blocks of rows x 128 bytes, each 128-byte swizzled.
template <int DH, int BN, int NC_, int STAGES_> struct Layout {
    static constexpr int NC = NC_;
    static constexpr int CB = DH / 64;
    static constexpr int STAGES = STAGES_;
    static constexpr int ROW_OPERANDS = 1;
    // Q as register fragments, loaded once a tile of rows; the trio CTAs'
    // consumers (160 registers), the wide CTAs' (scores of 192 keys) and
    // the tall ones' (O of 96 or 128 registers) leave it in shared memory.
    static constexpr bool Q_IN_REGISTERS = NC < 3 && BN <= 128 && DH <= 128;
    static constexpr bool V_LAGS = true; // see producer
    static constexpr uint32_t Q_BLOCK = ROWS * 128, KV_BLOCK = BN * 128;
    static constexpr uint32_t Q_BYTES = CB * Q_BLOCK, KV_BYTES = CB * KV_BLOCK;
    static constexpr uint32_t Q = 0;
    static constexpr uint32_t K = NC * Q_BYTES;
    static constexpr uint32_t V = K + STAGES * KV_BYTES;
    // A word per consumer thread that the softmax's sums are stored to
    // (see consumer), the record of each stage's tile, then the barriers.
    static constexpr uint32_t SINK = V + STAGES * KV_BYTES;
    static constexpr uint32_t RECORDS = SINK + 128 * NC * 4;
    static constexpr uint32_t BARS = RECORDS + 16 * BK_ATTENTION_WGMMA_RECORD_SLOTS(STAGES);
    // Barriers: q_full, then k_full, v_full, k_empty and v_empty per stage
    // (K is freed once both consumers have their scores, before P V); and
    // the slack to align the start to 1024 bytes.
    static constexpr uint32_t BYTES = BARS + 8 * (2 + 4 * STAGES) + 1024;
    static_assert(BYTES == BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(DH, BN, NC, STAGES),
                  "the plan asks for the shared memory this layout takes");
};

// The consumers take turns to issue their GEMMs (named barriers 2, 3 and
// 4, FlashAttention-3's ping-pong), consumer c passing to c + 1 mod NC:
// one warpgroup's softmax runs while the tensor cores work on the others'
// scores and P V. Every consumer takes the same number of turns (one per
// union tile and one to finish). A solo CTA (NC = 1) has no turns: its
// SM's other CTA fills the gaps.
constexpr int TURN_BARRIER = 2;
template <int NC> static __device__ __forceinline__ void wait_turn(int c)
{
    if (BK_ATTENTION_WGMMA_PINGPONG && NC >= 2)
        asm volatile("bar.sync %0, 256;\n" ::"r"(TURN_BARRIER + c) : "memory");
}
template <int NC> static __device__ __forceinline__ void pass_turn(int c)
{
    // (c ^ 1 for two: the plain kernels' SASS as it was measured.)
    const int next = NC == 2 ? c ^ 1 : c + 1 == NC ? 0 : c + 1;
    if (BK_ATTENTION_WGMMA_PINGPONG && NC >= 2)
        asm volatile("bar.arrive %0, 256;\n" ::"r"(TURN_BARRIER + next) : "memory");
}

// A consumer's rows, their softmax state and output accumulators.
template <typename T, int DH> struct Rows {
    float o[DH / 8][4];
    float m_a, m_b, l_a, l_b;
    int end_a, end_b, first_end; // key limits (32 bits: the fast kernels' lengths are)
    int q4;
};

// The keys of a tile's 64-key slots (two, or three in a wide CTA) for
// this consumer: where each starts, and whether the consumer needs it.
struct Halves {
    int k0, k1, k2;
    bool use0, use1, use2;
};

// Masks the tile's scores past each row's last key, then turns them into
// P in place, in base 2 against the rows' running maxima (moved as LAZY
// says); returns the factors that rescale the rows' running sums and
// outputs (1 where a maximum stayed).
template <typename T, int DH, int BN, bool LAZY>
static __device__ __forceinline__ float2 softmax(Rows<T, DH> &r, float (&sc)[BN / 8][4],
                                                 const Halves &hv, const ScoreScale &ss)
{
    // Mask a slot this consumer skips, keys past Lk and past the causal
    // limit (a tile of one slot has no upper ones).
    constexpr int SLOTS = BN / SLOT;
    const int k_max = SLOTS == 3 ? max(max(hv.k0, hv.k1), hv.k2) : max(hv.k0, hv.k1);
    if (!hv.use0 || (SLOTS > 1 && !hv.use1) || (SLOTS > 2 && !hv.use2) ||
        k_max + SLOT > r.first_end) {
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const int slot = j / (SLOT / 8);
            const bool use = slot == 0 ? hv.use0 : slot == 1 ? hv.use1 : hv.use2;
            const int first = (slot == 0 ? hv.k0 : slot == 1 ? hv.k1 : hv.k2) +
                              (j % (SLOT / 8)) * 8 + 2 * r.q4;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int key = first + e;
                if (!use || key >= r.end_a)
                    sc[j][e] = ss.masked;
                if (!use || key >= r.end_b)
                    sc[j][2 + e] = ss.masked;
            }
        }
    }
    float2 mx = row_max(sc, ss, make_float2(r.m_a, r.m_b));
#pragma unroll
    for (int x = 1; x <= 2; x *= 2) {
        mx.x = fmaxf(mx.x, __shfl_xor_sync(0xFFFFFFFFu, mx.x, x));
        mx.y = fmaxf(mx.y, __shfl_xor_sync(0xFFFFFFFFu, mx.y, x));
    }
    // LAZY: a row keeps its running maximum until the new one exceeds it by
    // more than STALE (base 2): P stays below 2^STALE, and O and the sum
    // are rescaled only where a maximum moved (FlashAttention-4's rule),
    // which after a row's first tiles is seldom.
    constexpr float STALE = 8.f;
    if (LAZY && r.m_a != -INFINITY && mx.x <= r.m_a + STALE)
        mx.x = r.m_a;
    if (LAZY && r.m_b != -INFINITY && mx.y <= r.m_b + STALE)
        mx.y = r.m_b;
    const float base_a = mx.x == -INFINITY ? 0.f : mx.x;
    const float base_b = mx.y == -INFINITY ? 0.f : mx.y;
    const bool kept_a = LAZY && mx.x == r.m_a, kept_b = LAZY && mx.y == r.m_b;
    const float2 corr = make_float2(kept_a ? 1.f : exp2_fast(r.m_a - base_a),
                                    kept_b ? 1.f : exp2_fast(r.m_b - base_b));
    r.m_a = mx.x;
    r.m_b = mx.y;
    float sum_a = 0.f, sum_b = 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        sc[j][0] = exp2_fast(fmaf(sc[j][0], ss.sl2, -base_a));
        sc[j][1] = exp2_fast(fmaf(sc[j][1], ss.sl2, -base_a));
        sc[j][2] = exp2_fast(fmaf(sc[j][2], ss.sl2, -base_b));
        sc[j][3] = exp2_fast(fmaf(sc[j][3], ss.sl2, -base_b));
        sum_a += sc[j][0] + sc[j][1];
        sum_b += sc[j][2] + sc[j][3];
    }
    r.l_a = r.l_a * corr.x + sum_a;
    r.l_b = r.l_b * corr.y + sum_b;
    return corr;
}

// The decode kernels' work as the forward's query tiles (the units, parts
// and stream-K split of kernels/attention_decode.cuh): a CTA is a key
// stream, and its items are the stretches of units it walks, each named
// by its first step (of KEYS keys, counted over all units end to end).
// A unit is 128 packed rows (ROWS per consumer) of one kv head. The
// CTA's first and last steps are kept in the two words at AT past the
// 1024-aligned base (as QueryTiles' rectangle), read where used: the
// producer has few registers. 32 bits: the plan keeps the steps below
// 2^32 and the keys below 2^31.
//
// PER_UNIT (BK_ATTENTION_DECODE_SPLIT_*): PARTS, the stream-K split above;
// WHOLE, a CTA a unit, which writes y and lse itself; PAIRS, the two CTAs
// of a cluster a unit, each walking half of its steps, merged through
// distributed shared memory (merge): no parts and no combining kernel.
template <int KEYS, uint32_t AT, int PER_UNIT = BK_ATTENTION_DECODE_SPLIT_PARTS>
struct DecodeTiles {
    static constexpr bool DECODE = true;
    static constexpr int SPLIT = PER_UNIT;
    // PAIRS: two barriers past the two words, in the alignment slack
    // (dynamic shared memory starts 128-aligned, so at least 128 bytes of
    // it lie past AT): FREE, this CTA's ring free for the other's rows (an
    // arrival from each of the other CTA's 8 consumer warps once its walk
    // is done), and DATA, those rows stored (`bytes` of the other CTA's
    // asynchronous stores, announced here at the start).
    static constexpr uint32_t FREE = AT + 8, DATA = AT + 16;
    static __device__ void init_barriers(uint32_t base, uint32_t bytes)
    {
        if (PER_UNIT == BK_ATTENTION_DECODE_SPLIT_PAIRS && threadIdx.x == 0) {
            mbar_init(base + FREE, 8);
            mbar_init(base + DATA, 1);
            mbar_fence_init();
            mbar_expect_tx(base + DATA, bytes);
        }
    }
    const decode::DecodeArgs &d;
    // A stretch: unit u (kv head (b, kvh), row group rgi), the sequence,
    // and its keys [key0, stop).
    struct Stretch {
        uint32_t u, b, kvh, rgi;
        int key0, stop;
        decode::Sequence seq;
    };
    __device__ explicit DecodeTiles(const decode::DecodeArgs &d_) : d(d_)
    {
        if (threadIdx.x == 0) {
            const bool walks = blockIdx.x < d.streams;
            const uint32_t from = walks ? (uint32_t)decode::stream_start(d, blockIdx.x) : 0u;
            const uint32_t to = walks ? (uint32_t)decode::stream_start(d, blockIdx.x + 1) : 0u;
            store_shared_f32(shared_base_1024() + AT, __uint_as_float(from));
            store_shared_f32(shared_base_1024() + AT + 4, __uint_as_float(to));
        }
        __syncthreads();
    }
    static __device__ uint32_t first(const Args &) { return load_shared32(shared_base_1024() + AT); }
    __device__ uint32_t end(const Args &) const { return load_shared32(shared_base_1024() + AT + 4); }
    // The next stretch: the next unit's first step.
    __device__ uint32_t next(const Args &, uint32_t at) const
    {
        const uint32_t us = (uint32_t)d.unit_steps;
        return (at / us + 1) * us;
    }
    __device__ void place(const Args &a, uint32_t at, Stretch &s) const
    {
        const uint32_t us = (uint32_t)d.unit_steps;
        s.u = at / us;
        const uint32_t s1 = min(end(a), (s.u + 1) * us) - s.u * us;
        s.rgi = s.u % d.row_groups;
        const uint32_t bk = s.u / d.row_groups, kvh = (uint32_t)a.kv_heads;
        s.b = bk / kvh;
        s.kvh = bk - s.b * kvh;
        s.seq = decode::sequence(d, s.b);
        s.key0 = (int)((at - s.u * us) * KEYS);
        s.stop = (int)min(s.seq.lk, (int64_t)s1 * KEYS);
    }
    // The keys (from key0) that some of the 64 packed rows from `first`
    // see: those to the stop for all but a bad sequence, rows past the kv
    // head's, or a sequence without queries (the last of its queries
    // sees every key).
    __device__ int rows_end(const Stretch &s, int64_t first) const
    {
        const bool any = first < d.rows && s.seq.lq > 0 && !s.seq.bad;
        return any && s.stop > s.key0 ? s.stop - s.key0 : 0;
    }
    // The keys (from key0) packed row r sees.
    __device__ int row_end(const Args &a, const Stretch &s, int64_t r) const
    {
        if (r >= d.rows)
            return 0;
        const int64_t end = min((int64_t)s.stop, decode::seq_key_end(a, s.seq, r % a.lq));
        return end > s.key0 ? (int)(end - s.key0) : 0;
    }
    // The keys every one of the 64 packed rows from `first` sees (each
    // query has its head's rows there: Lq divides 64), query 0's.
    __device__ int first_end(const Args &a, const Stretch &s, int64_t first) const
    {
        return first + ROWS <= d.rows && s.seq.lq == a.lq ? row_end(a, s, first) : 0;
    }
    // A thread's two rows of the stretch's part (`row` and row + 8 of the
    // unit): o / l, and lse = m + log2 l in base 2 (0 and -inf without a
    // key; NaN for a sequence out of range), in the part slot of this
    // stream.
    template <int NT_O>
    __device__ void store_part(const Stretch &s, int64_t row,
                               const float (&o)[NT_O][4], float l_a, float m_a, float l_b,
                               float m_b, int q4) const
    {
        // A page out of range among the stretch's (a warp's vote: every
        // consumer thread stores).
        const bool bad = s.seq.bad || decode::pages_bad(d, s.b, s.key0, s.stop, threadIdx.x % 32);
        const int64_t slot = blockIdx.x - decode::first_stream(d, s.u);
        const int64_t cell0 =
            ((int64_t)s.u * d.max_parts + slot) * BK_ATTENTION_DECODE_FORWARD_ROWS + row;
        const int64_t rows = (int64_t)d.rows - (int64_t)s.rgi * BK_ATTENTION_DECODE_FORWARD_ROWS;
#pragma unroll
        for (int half = 0; half < 2; half++)
            if (row + 8 * half < rows)
                decode::store_part_row(d, cell0 + 8 * half, o, half, half ? l_b : l_a,
                                       half ? m_b : m_a, q4, bad);
    }
    // WHOLE and PAIRS: a thread's rows row_a and row_a + 8 (packed rows of
    // the kv head) of consumer c as y and lse. PAIRS: rank c of the cluster
    // keeps consumer c's rows; the other rank's consumer c sends it its o,
    // m and l (the bad flag as a NaN l) into the keeper's ring at `buf`,
    // free once both of the keeper's consumers are done with it, a float4
    // a thread and slot (conflict-free), and the keeper weighs the two
    // parts by 2^(m - max), rank 0's first: deterministic, as the
    // combining kernel.
    template <typename T, int NT_O>
    __device__ void merge(const Args &a, const Stretch &s, int64_t row_a, uint32_t base,
                          uint32_t buf, int c, const float (&o)[NT_O][4], float l_a, float m_a,
                          float l_b, float m_b, int q4) const
    {
        const int lane = threadIdx.x % 32;
        const bool bad = s.seq.bad || decode::pages_bad(d, s.b, s.key0, s.stop, lane);
        float4 other = make_float4(-INFINITY, -INFINITY, 0.f, 0.f); // m_a, m_b, l_a, l_b
        bool first = true; // this CTA's part is rank 0's
        const uint32_t slot = buf + 16 * (threadIdx.x % 128); // PAIRS: this thread's, + j 2048
        if constexpr (PER_UNIT == BK_ATTENTION_DECODE_SPLIT_PAIRS) {
            const uint32_t rank = cluster_rank(), peer = rank ^ 1u;
            __syncwarp(); // this warp's products are done: its reads of the ring
            if (lane == 0)
                mbar_arrive_release_cluster(cluster_address(base + FREE, peer));
            if ((uint32_t)c != rank) {
                mbar_wait_cluster(base + FREE, 0); // the keeper's ring is free
                const uint32_t to = cluster_address(slot, peer);
                const uint32_t data = cluster_address(base + DATA, peer);
#pragma unroll
                for (int j = 0; j < NT_O; j++)
                    store_cluster_v4(to + j * 2048,
                                     make_float4(o[j][0], o[j][1], o[j][2], o[j][3]), data);
                store_cluster_v4(to + NT_O * 2048,
                                 make_float4(m_a, m_b, bad ? quiet_nan() : l_a, l_b), data);
                return;
            }
            mbar_wait_cluster(base + DATA, 0);
            other = load_shared_f32x4(slot + NT_O * 2048);
            first = rank == 0;
        }
        const bool nan = bad || isnan(other.z);
        const float m[2] = { m_a, m_b }, l[2] = { l_a, l_b }, mo[2] = { other.x, other.y };
        const float lo[2] = { other.z, other.w };
        float w0[2], w1[2], inv[2]; // the weights of this CTA's part and the other's
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const float top = fmaxf(m[half], mo[half]);
            w0[half] = top == -INFINITY ? 0.f : exp2f(m[half] - top);
            w1[half] = top == -INFINITY ? 0.f : exp2f(mo[half] - top);
            const float sum = first ? fmaf(lo[half], w1[half], l[half] * w0[half])
                                    : fmaf(l[half], w0[half], lo[half] * w1[half]);
            inv[half] = nan ? quiet_nan() : sum > 0.f ? 1.f / sum : 0.f;
            const int64_t r = row_a + 8 * half;
            if ((a.flags & BK_ATTENTION_HAS_LSE) && q4 == 0 && r < d.rows)
                *lse_at<float>(a, s.b, s.kvh * d.group + r / a.lq, r % a.lq) =
                    nan ? quiet_nan() : row_lse(top, sum);
        }
#pragma unroll
        for (int j = 0; j < NT_O; j++) {
            float4 p = make_float4(0.f, 0.f, 0.f, 0.f);
            if constexpr (PER_UNIT == BK_ATTENTION_DECODE_SPLIT_PAIRS)
                p = load_shared_f32x4(slot + j * 2048);
            const float po[4] = { p.x, p.y, p.z, p.w };
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int64_t r = row_a + 8 * half;
                if (r >= d.rows || j * 8 >= a.dv_cols)
                    continue;
                float v[2];
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float x = o[j][2 * half + e], y = po[2 * half + e];
                    v[e] = (first ? fmaf(y, w1[half], x * w0[half])
                                  : fmaf(x, w0[half], y * w1[half])) *
                           inv[half];
                }
                T *dst = at<T>(a.y, s.b, s.kvh * d.group + r / a.lq, r % a.lq) + 2 * q4;
                *(uint32_t *)(dst + j * 8) = pack2<T>(v[0], v[1]);
            }
        }
    }
};

// The stretch a consumer keeps of DecodeTiles (none of QueryTiles).
template <typename Tiles, bool = Tiles::DECODE> struct DecodeStretch {
    struct type {};
};
template <typename Tiles> struct DecodeStretch<Tiles, true> {
    typedef typename Tiles::Stretch type;
};

// A consumer warpgroup. In its turn for union tile n it reads the tile's
// record and issues S = Q K^T of tile n and P V of the last tile it took;
// the softmax of tile n runs under P V (and under the other consumer's
// GEMMs). K is freed once S is in registers, V once P V is done. After
// the query tile's last tile, its P V outside the turns. Union tiles
// count on across the CTA's query tiles (the ring and the turns run on;
// a query tile without tiles takes a turn of both consumers for its
// record), and a query tile's outputs are stored while the producer
// already brings the next one's Q, K and V.
//
// With DecodeTiles (Tiles::DECODE), the decode kernels' consumer: the
// items are stretches of units of packed rows, keys count from the
// stretch's first, and each leaves its part (o / l, and the lse in base
// 2) for the combining kernel.
template <typename T, int DH, int BN, int NC, int STAGES, bool SEQ,
          typename Tiles = QueryTiles<NC, SEQ, Layout<DH, BN, NC, STAGES>::BYTES - 1024>,
          typename P = bk_attention_tma_args>
static __device__ void consumer(const P &p, const Tiles &tiles, uint32_t base, int c)
{
    typedef Layout<DH, BN, NC, STAGES> L;
    constexpr int NT_O = DH / 8;
    // Lazy rescaling (see softmax) everywhere but the plain kernel at D = 64,
    // which it slowed by 2-3% (H200, bf16, random blocks of 128 at 25-50%;
    // the others +1-4%, trio +1-2%: daa3e98, bench/log/attention.md).
    constexpr bool LAZY = !(NC == 2 && DH == 64 && BN == 128);
    constexpr bool DECODE = Tiles::DECODE;
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
    const uint32_t q_tile = base + L::Q + c * L::Q_BYTES;
    const uint32_t sink = base + L::SINK + 4 * (threadIdx.x - 128);
    const ScoreScale ss = score_scale(a.scale);
    int n = 0; // the union tile, counted over the CTA's query tiles
    if (c == NC - 1)
        pass_turn<NC>(c); // consumer 0 goes first
    int use = 0;
    for (uint32_t item = tiles.first(a); item < tiles.end(a); item = tiles.next(a, item)) {
        int64_t r0, h, b, row_a, row_b;
        // SEQ: the rows of the tensors this tile's CTAs write end at q_out.
        int64_t q_out = a.lq;
        // The walk's keys the sequence owns, and those the tensors hold
        // (SEQ, DECODE): V's rows between them are zeroed before P V.
        int own_end = 0, tensor_end = 0;
        bool bad;
        Seq sq;
        typename DecodeStretch<Tiles>::type st; // DECODE: the stretch
        // Query tile i's place: its first row, head and batch, whether its
        // pattern is bad, and this thread's two rows (SEQ: rows local to
        // its sequence sq; DECODE: packed rows of the stretch's unit; false
        // where the loops skip the tile).
        auto locate = [&](uint32_t i) {
            bool taken = true;
            if constexpr (DECODE) {
                tiles.place(a, i, st);
                r0 = (int64_t)st.rgi * ROWS * NC;
                b = st.b;
                h = st.kvh;
                bad = st.seq.bad;
                own_end = (int)st.seq.lk - st.key0;
                tensor_end = (int)a.lk - st.key0;
            } else if constexpr (SEQ) {
                taken = tiles.place(a, i, r0, h, sq);
                b = sq.b;
                q_out = sq.q_out;
                own_end = (int)sq.lk;
                tensor_end = (int)(a.lk - sq.k0);
                bad = sq.bad || pattern_bad(a, sq.pb, pattern_h(a, h));
            } else {
                tiles.coords(a, i, r0, h, b);
                bad = pattern_bad(a, pattern_b(a, b), pattern_h(a, h));
            }
            row_a = r0 + ROWS * c + warp * 16 + lane / 4;
            row_b = row_a + 8;
            return taken;
        };
        if (!locate(item))
            continue;
        const int64_t rows0 = r0 + ROWS * c; // this consumer's first row (and Q tile c)
        Rows<T, DH> r;
        zero(r.o);
        r.m_a = r.m_b = -INFINITY;
        r.l_a = r.l_b = 0.f;
        if constexpr (DECODE) {
            r.end_a = tiles.row_end(a, st, row_a);
            r.end_b = tiles.row_end(a, st, row_b);
            r.first_end = tiles.first_end(a, st, rows0);
        } else if constexpr (SEQ) {
            // Rows past the sequence's queries see no key (PADDED: its
            // zeros), nor, through first_end, any row of a consumer with one.
            r.end_a = row_a < sq.lq ? (int)key_end(a, sq, row_a) : 0;
            r.end_b = row_b < sq.lq ? (int)key_end(a, sq, row_b) : 0;
            r.first_end = rows0 + ROWS <= sq.lq ? (int)key_end(a, sq, rows0) : 0;
        } else {
            r.end_a = (int)key_end(a, row_a);
            r.end_b = (int)key_end(a, row_b);
            r.first_end = (int)key_end(a, rows0);
        }
        r.q4 = lane % 4;

        mbar_wait(base + L::BARS, (uint32_t)use & 1u); // Q
        uint32_t qf[L::Q_IN_REGISTERS ? L::CB * 4 : 1][4];
        if constexpr (L::Q_IN_REGISTERS) {
            load_row_fragments<L>(qf, q_tile, warp, lane);
            release_row_operands<L>(base); // the next query tile's Q may come
        }
        float sc[BN / 8][4];
        // S = Q K^T of the tile whose K is k_tile, issued and committed.
        auto issue_scores = [&](uint32_t k_tile) {
            if constexpr (L::Q_IN_REGISTERS)
                issue_fragments_bt<T, L, BN>(sc, qf, k_tile);
            else
                issue_shared_bt<T, L, BN>(sc, q_tile, k_tile);
        };
        uint32_t pa[BN / 16][4] = {}; // P of the pending tile, the A fragments of 16-key steps
        int pending = -1;             // the union tile whose P V is still to issue or finish
        // Rescales O to the new row maxima and keeps P as the next P V's A.
        auto finish_softmax = [&](float2 corr) {
            if (!LAZY || __any_sync(0xFFFFFFFFu, corr.x != 1.f || corr.y != 1.f)) {
#pragma unroll
                for (int j = 0; j < NT_O; j++) {
                    r.o[j][0] *= corr.x;
                    r.o[j][1] *= corr.x;
                    r.o[j][2] *= corr.y;
                    r.o[j][3] *= corr.y;
                }
            }
#pragma unroll
            for (int j = 0; j < BN / 8; j++) {
                pa[j / 2][(j % 2) * 2] = pack2<T>(sc[j][0], sc[j][1]);
                pa[j / 2][(j % 2) * 2 + 1] = pack2<T>(sc[j][2], sc[j][3]);
            }
        };
        auto halves = [&](const uint4 &rec) {
            return Halves{ (int32_t)rec.x,
                           (int32_t)rec.y,
                           (int32_t)rec.w,
                           (rec.z & TILE_USES_LO << 2 * c) != 0,
                           (rec.z & TILE_USES_HI << 2 * c) != 0,
                           (rec.z & TILE_USES_THIRD << c) != 0 };
        };
        // After the query tile's last tile, a turn of its own (no stage, as
        // for a record without a tile) issues that tile's P V.
        for (bool drain = false;;) {
            const bool staged = !drain; // this turn has a stage and a record
            const Stage st = Stage::of<L>(base, n);
            const Stage pv = Stage::of<L>(base, pending < 0 ? 0 : pending);
            // The record (and K when there is a tile), read before the turn so
            // that its latency does not hold up the other consumer.
            uint4 rec = make_uint4(0u, 0u, TILE_END, 0u);
            if (staged) {
                mbar_wait(st.k_full, st.parity);
                rec = read_record<BN / SLOT>(st.record);
                if constexpr (SEQ || DECODE)
                    if ((rec.z & TILE_TAKEN << c) != 0) {
                        const Halves hv = halves(rec);
                        const int keys[3] = { hv.k0, hv.k1, hv.k2 };
                        zero_unowned_slots<L, false, BN / SLOT>(st, keys, own_end, tensor_end,
                                                                tid, ZEROED_BARRIER + c);
                    }
            }
            wait_turn<NC>(c);
            const bool end = (rec.z & TILE_END) != 0, mine = (rec.z & TILE_TAKEN << c) != 0;
            drain = (rec.z & TILE_LAST) != 0;
            // The steady state, in a branch of its own so that ptxas sees both
            // groups issued before the wait for the first: serialising them
            // otherwise (C7514).
            if (mine && pending >= 0) {
                issue_scores(st.k_tile);
                mbar_wait(pv.v_full, pv.parity);
                issue_ab<T, L, BN>(r.o, pa, pv.v_tile);
                pass_turn<NC>(c);
                const Halves hv = halves(rec);
                wgmma_wait<1>(); // the scores; P V may still run
                fence_operand(sc);
                release(st.k_empty);
                const float2 corr = softmax<T, DH, BN, LAZY>(r, sc, hv, ss);
                // ptxas would sink the softmax's exponentials below the wait for
                // P V (they would run after it instead of under it) but for a
                // store that needs their sum, ahead of the wait.
                asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(sink), "f"(r.l_a + r.l_b)
                             : "memory");
                wgmma_wait<0>(); // P V: O and pa are free
                fence_operand(r.o);
                fence_operand(pa);
                release(pv.v_empty);
                finish_softmax(corr);
                pending = n++;
                continue;
            }
            // The first tile, a skipped one, the record of no tile or the last
            // tile's P V: one GEMM at most, waited for in its own branch (else
            // ptxas serialises, C7515).
            if (mine) {
                issue_scores(st.k_tile);
                pass_turn<NC>(c);
                wgmma_wait<0>();
            } else if (pending >= 0) {
                mbar_wait(pv.v_full, pv.parity);
                issue_ab<T, L, BN>(r.o, pa, pv.v_tile);
                pass_turn<NC>(c);
                wgmma_wait<0>();
            } else {
                pass_turn<NC>(c);
            }
            fence_operand(sc);
            fence_operand(r.o);
            fence_operand(pa);
            if (pending >= 0)
                release(pv.v_empty);
            pending = -1;
            if (mine) {
                release(st.k_empty);
                finish_softmax(softmax<T, DH, BN, LAZY>(r, sc, halves(rec), ss));
                pending = n;
            } else if (staged) {
                // A skipped tile, or the stage of a record without a tile.
                release_skipped<L>(st, n);
            }
            if (staged)
                n++;
            if (end)
                break;
        }
        if constexpr (!L::Q_IN_REGISTERS)
            release(base + L::BARS + 8); // every S is done: the next query tile's Q may come

        // Where the outputs go: a trio, wide or tall CTA's consumers find it again
        // (kept over the tile's loop, it would take registers they lack).
        if constexpr (NC == 3 || BN > 128 || DH > 128) {
            uint32_t again = item;
            asm volatile("" : "+r"(again));
            locate(again);
        }

#pragma unroll
        for (int x = 1; x <= 2; x *= 2) {
            r.l_a += __shfl_xor_sync(0xFFFFFFFFu, r.l_a, x);
            r.l_b += __shfl_xor_sync(0xFFFFFFFFu, r.l_b, x);
        }
        if constexpr (DECODE) {
            if constexpr (Tiles::SPLIT == BK_ATTENTION_DECODE_SPLIT_PARTS)
                tiles.store_part(st, row_a - r0, r.o, r.l_a, r.m_a, r.l_b, r.m_b, r.q4);
            else
                tiles.template merge<T>(a, st, row_a, base, base + L::K, c, r.o, r.l_a, r.m_a,
                                        r.l_b, r.m_b, r.q4);
            use++;
            continue;
        }
        const float nan = quiet_nan();
#pragma unroll
        for (int half = 0; half < 2; half++) {
            // SEQ: the row of the tensors (its sequence's from q0).
            const int64_t row = (half ? row_b : row_a) + (SEQ ? sq.q0 : 0);
            if (row >= (SEQ ? q_out : a.lq))
                continue;
            const float l = half ? r.l_b : r.l_a, m = half ? r.m_b : r.m_a;
            const float inv = bad ? nan : l > 0.f ? 1.f / l : 0.f;
            T *y = at<T>(a.y, b, h, row) + 2 * r.q4;
#pragma unroll
            for (int j = 0; j < NT_O; j++)
                if (j * 8 < a.dv_cols) // the columns past Dv are the maps' zeros
                    *(uint32_t *)(y + j * 8) =
                        pack2<T>(r.o[j][2 * half] * inv, r.o[j][2 * half + 1] * inv);
            if ((a.flags & BK_ATTENTION_HAS_LSE) && r.q4 == 0)
                *lse_at<float>(a, b, h, row) = bad ? nan : row_lse(m, l);
        }
        use++;
    }
    if (c == 0)
        wait_turn<NC>(0); // the last consumer's last pass: every turn barrier ends complete
}

// The kernel the pattern chose (BK_ATTENTION_CHOSE_*) by the sums
// bk_attention_forward_choice left (a lane per CTA of it; every warp
// reads them all, so the CTA agrees): deep where neighbouring query blocks
// share key blocks (U <= 0.8 N), else narrow. With uniform descriptors
// (a62ba0e) narrow runs level with or ahead of solo on random blocks at
// 10-50% and deep ahead of both at 50% (U / N = 0.75): bench/log/attention.md.
static __device__ __forceinline__ int forward_choice(const Args &a)
{
    static_assert(BK_ATTENTION_CHOICE_CTAS == 32, "a lane per CTA's sums");
    const uint2 s = __ldcg((const uint2 *)a.choice + threadIdx.x % 32);
    const uint32_t u = __reduce_add_sync(0xFFFFFFFFu, s.x), n = __reduce_add_sync(0xFFFFFFFFu, s.y);
    return 5ull * u <= 4ull * n ? BK_ATTENTION_CHOSE_DEEP : BK_ATTENTION_CHOSE_NARROW;
}

template <typename T, int DH, int BN, int NC, int STAGES, bool SEQ>
static __device__ void forward(const bk_attention_tma_args &p)
{
    typedef Layout<DH, BN, NC, STAGES> L;
    // Uniform descriptors (warp_uniform): the D = 64 forward 4-11% faster.
    // Not for one consumer: ptxas then spills the solo kernel at D = 128.
    uint32_t base = shared_base_1024();
    if constexpr (NC > 1)
        base = warp_uniform(base);
    const Args &a = p.a;
    init_ring<L>(base);
    __syncthreads();
    grid_dependency_wait();
    // Of the kernels a plan launches in turn for the pattern to choose from
    // (narrow, deep), the one not chosen ends here. The solo kernel runs
    // only when forced, without a choice; its own KIND, which the choice
    // never returns, keeps it from ever taking a chosen pattern's place.
    constexpr int KIND = NC == 2      ? BK_ATTENTION_CHOSE_DEEP
                         : BN == SLOT ? BK_ATTENTION_CHOSE_NARROW
                                      : BK_ATTENTION_CHOSE_SOLO;
    if (a.choice && forward_choice(a) != KIND)
        return;
    // After the wait: a LIST's mask and bad flags come from the kernel before.
    const QueryTiles<NC, SEQ, L::BYTES - 1024> tiles(a);
    int group = threadIdx.x / 128;
    if constexpr (NC > 1)
        group = warp_uniform(group);
    // Registers move from the producer, which needs few, to the consumers.
    if (group == 0) {
        producer_registers<NC, BN, DH>();
        if (threadIdx.x < 32)
            produce_tiles<L, SEQ>(p, base, tiles);
    } else {
        consumer_registers<NC, BN, DH>();
        // One consumer's index is the constant 0, which keeps its wgmma
        // descriptors uniform (warp_uniform on it made the solo kernels spill).
        consumer<T, DH, BN, NC, STAGES, SEQ>(p, tiles, base, NC == 1 ? 0 : group - 1);
    }
}

// The decode kernels' producer warp over the CTA's stretches (the
// consumers' walks: every key of the stretch that a row of theirs sees),
// Q's packed rows from the first head of the kv head's group.
template <typename L, typename Tiles>
static __device__ __forceinline__ void
produce_stretches(const bk_attention_decode_forward_args &p, uint32_t base, const Tiles &tiles)
{
    const Args &a = p.a;
    int n = 0, use = 0;
    for (uint32_t at = tiles.first(a); at < tiles.end(a); at = tiles.next(a, at)) {
        typename Tiles::Stretch s;
        tiles.place(a, at, s);
        const int64_t r0 = (int64_t)s.rgi * ROWS * L::NC;
        Walk w = {};
        w.end0 = tiles.rows_end(s, r0);
        w.end1 = tiles.rows_end(s, r0 + ROWS);
        n = producer<L, true>(p, w, base, (int)r0, (int)s.kvh, (int)(s.kvh * p.d.group),
                              (int)s.b, n, use, s.key0);
        use++;
    }
}

// The decode kernels on the forward's CTA (two consumers of 64 packed
// rows, tiles of BN keys): kernels/attention_decode.cu's stream-K split
// and parts, the forward's walk and consumers.
template <typename T, int DH, int BN, int STAGES, int SPLIT>
static __device__ void decode_forward(const bk_attention_decode_forward_args &p)
{
    typedef Layout<DH, BN, 2, STAGES> L;
    typedef DecodeTiles<BN, L::BYTES - 1024, SPLIT> Tiles;
    static_assert(L::BYTES == BK_ATTENTION_DECODE_FORWARD_SHARED_BYTES(DH, BN, STAGES),
                  "the plan's shared memory");
    static_assert(Tiles::DATA + 8 <= L::BYTES - 1024 + 128, "the pair's barriers in the slack");
    static_assert((DH / 8 + 1) * 2048 <= STAGES * L::KV_BYTES, "the other rank's rows in K's ring");
    const uint32_t base = warp_uniform(shared_base_1024());
    init_ring<L>(base);
    Tiles::init_barriers(base, 128 * 16 * (DH / 8 + 1)); // PAIRS: a sender's o, m and l
    const Tiles tiles(p.d); // (its __syncthreads publishes the ring)
    if constexpr (SPLIT == BK_ATTENTION_DECODE_SPLIT_PAIRS)
        cluster_sync(); // both CTAs' barriers are ready before either arrives on the other's
    grid_dependency_wait();
    const int group = warp_uniform(threadIdx.x / 128);
    if (group == 0) {
        producer_registers<2, BN, DH>();
        if (threadIdx.x < 32)
            produce_stretches<L>(p, base, tiles);
    } else {
        consumer_registers<2, BN, DH>();
        consumer<T, DH, BN, 2, STAGES, false>(p, tiles, base, group - 1);
    }
}

} // namespace wg
} // namespace attention
} // namespace bk

// bk_attention_decode_forward_<type>_d<D>_k<BN>_s<STAGES>: the decode
// kernels on the forward's CTA, tiles of BN keys in a ring of STAGES;
// _whole: a CTA a unit; _pairs: clusters of two CTAs a unit.
#define BK_ATTENTION_DECODE_FORWARD(NAME, T, DH, BN, STAGES)                                     \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_decode_forward_##NAME##_d##DH##_k##BN##_s##STAGES(                          \
            const __grid_constant__ bk_attention_decode_forward_args p)                          \
    {                                                                                            \
        bk::attention::wg::decode_forward<T, DH, BN, STAGES, BK_ATTENTION_DECODE_SPLIT_PARTS>(p); \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_decode_forward_##NAME##_d##DH##_k##BN##_s##STAGES##_whole(                  \
            const __grid_constant__ bk_attention_decode_forward_args p)                          \
    {                                                                                            \
        bk::attention::wg::decode_forward<T, DH, BN, STAGES, BK_ATTENTION_DECODE_SPLIT_WHOLE>(p); \
    }                                                                                            \
    extern "C" __global__ void __cluster_dims__(2, 1, 1)                                         \
        __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                                         \
            bk_attention_decode_forward_##NAME##_d##DH##_k##BN##_s##STAGES##_pairs(              \
                const __grid_constant__ bk_attention_decode_forward_args p)                      \
    {                                                                                            \
        bk::attention::wg::decode_forward<T, DH, BN, STAGES, BK_ATTENTION_DECODE_SPLIT_PAIRS>(p); \
    }
#define BK_ATTENTION_DECODE_FORWARD_TILES(NAME, T)                                               \
    BK_ATTENTION_DECODE_FORWARD(NAME, T, 64, 192, 3)                                             \
    BK_ATTENTION_DECODE_FORWARD(NAME, T, 64, 192, 4)                                             \
    BK_ATTENTION_DECODE_FORWARD(NAME, T, 128, 192, 2)                                            \
    BK_ATTENTION_DECODE_FORWARD(NAME, T, 128, 128, 3)
BK_ATTENTION_DECODE_FORWARD_TILES(f16, __half)
BK_ATTENTION_DECODE_FORWARD_TILES(bf16, __nv_bfloat16)

// Tiles of BN keys (64-key slots) against 64 rows per consumer:
// bk_attention_forward_wgmma<KIND><type>_d<D> with NC consumers, STAGES
// and PER_SM CTAs an SM. KIND _: the plain kernels; for query blocks of 64
// rows whose neighbours' patterns differ, _solo_ (one consumer, two CTAs
// an SM; at D = 128 a ring of one stage), _narrow_ (D = 128: solo on
// tiles of one 64-key slot, two stages) and _deep_ (D = 128: a third
// stage); for DENSE patterns at D = 64, _trio_ (three consumers: two
// softmaxes under each one's GEMMs); at D = 192 and 256, _tall_ (the plain
// kernel on tiles of one 64-key slot, every pattern).
//
// Each with a twin for plans with sequences of their own lengths (_seq
// after the width: QueryTiles::place), so that the others' code stays as
// it was.
#define BK_ATTENTION_WGMMA_FORWARD_KERNEL(KIND, NAME, T, DH, BN, THREADS, PER_SM, NC, STAGES,     \
                                          SEQ, TAG)                                              \
    extern "C" __global__ void __launch_bounds__(THREADS, PER_SM)                              \
        bk_attention_forward_wgmma##KIND##NAME##_d##DH##TAG(                                     \
            const __grid_constant__ bk_attention_tma_args p)                                     \
    {                                                                                            \
        bk::attention::wg::forward<T, DH, BN, NC, STAGES, SEQ>(p);                               \
    }
#define BK_ATTENTION_WGMMA_FORWARD(KIND, NAME, T, DH, BN, THREADS, PER_SM, NC, STAGES)           \
    BK_ATTENTION_WGMMA_FORWARD_KERNEL(KIND, NAME, T, DH, BN, THREADS, PER_SM, NC, STAGES, false, ) \
    BK_ATTENTION_WGMMA_FORWARD_KERNEL(KIND, NAME, T, DH, BN, THREADS, PER_SM, NC, STAGES, true,  \
                                      _seq)
#define BK_ATTENTION_WGMMA_PLAIN(NAME, T, DH)                                                    \
    BK_ATTENTION_WGMMA_FORWARD(_, NAME, T, DH, 128, BK_ATTENTION_WGMMA_THREADS, 1, 2,            \
                               BK_ATTENTION_WGMMA_STAGES(DH))
#define BK_ATTENTION_WGMMA_SOLO(NAME, T, DH)                                                     \
    BK_ATTENTION_WGMMA_FORWARD(_solo_, NAME, T, DH, 128, BK_ATTENTION_WGMMA_SOLO_THREADS, 2, 1,  \
                               BK_ATTENTION_WGMMA_SOLO_STAGES(DH))
#define BK_ATTENTION_WGMMA_NARROW(NAME, T)                                                       \
    BK_ATTENTION_WGMMA_FORWARD(_narrow_, NAME, T, 128, BK_ATTENTION_WGMMA_NARROW_KEYS,           \
                               BK_ATTENTION_WGMMA_SOLO_THREADS, 2, 1,                            \
                               BK_ATTENTION_WGMMA_NARROW_STAGES)
#define BK_ATTENTION_WGMMA_TALL(NAME, T, DH)                                                     \
    BK_ATTENTION_WGMMA_FORWARD(_tall_, NAME, T, DH, BK_ATTENTION_WGMMA_TALL_KEYS,                \
                               BK_ATTENTION_WGMMA_THREADS, 1, 2, BK_ATTENTION_WGMMA_TALL_STAGES(DH))

BK_ATTENTION_WGMMA_PLAIN(f16, __half, 64)
BK_ATTENTION_WGMMA_PLAIN(f16, __half, 128)
BK_ATTENTION_WGMMA_PLAIN(bf16, __nv_bfloat16, 64)
BK_ATTENTION_WGMMA_PLAIN(bf16, __nv_bfloat16, 128)
BK_ATTENTION_WGMMA_SOLO(f16, __half, 64)
BK_ATTENTION_WGMMA_SOLO(f16, __half, 128)
BK_ATTENTION_WGMMA_SOLO(bf16, __nv_bfloat16, 64)
BK_ATTENTION_WGMMA_SOLO(bf16, __nv_bfloat16, 128)
BK_ATTENTION_WGMMA_NARROW(f16, __half)
BK_ATTENTION_WGMMA_NARROW(bf16, __nv_bfloat16)
BK_ATTENTION_WGMMA_FORWARD(_deep_, f16, __half, 128, 128, BK_ATTENTION_WGMMA_THREADS, 1, 2,
                           BK_ATTENTION_WGMMA_DEEP_STAGES)
BK_ATTENTION_WGMMA_FORWARD(_deep_, bf16, __nv_bfloat16, 128, 128, BK_ATTENTION_WGMMA_THREADS, 1, 2,
                           BK_ATTENTION_WGMMA_DEEP_STAGES)
BK_ATTENTION_WGMMA_FORWARD(_wide_, f16, __half, 128, BK_ATTENTION_WGMMA_WIDE_KEYS,
                           BK_ATTENTION_WGMMA_THREADS, 1, 2, BK_ATTENTION_WGMMA_STAGES(128))
BK_ATTENTION_WGMMA_FORWARD(_wide_, bf16, __nv_bfloat16, 128, BK_ATTENTION_WGMMA_WIDE_KEYS,
                           BK_ATTENTION_WGMMA_THREADS, 1, 2, BK_ATTENTION_WGMMA_STAGES(128))
BK_ATTENTION_WGMMA_TALL(f16, __half, 192)
BK_ATTENTION_WGMMA_TALL(bf16, __nv_bfloat16, 192)
BK_ATTENTION_WGMMA_TALL(f16, __half, 256)
BK_ATTENTION_WGMMA_TALL(bf16, __nv_bfloat16, 256)
BK_ATTENTION_WGMMA_FORWARD(_trio_, f16, __half, 64, 128, BK_ATTENTION_WGMMA_TRIO_THREADS, 1, 3,
                           BK_ATTENTION_WGMMA_STAGES(64))
BK_ATTENTION_WGMMA_FORWARD(_trio_, bf16, __nv_bfloat16, 64, 128, BK_ATTENTION_WGMMA_TRIO_THREADS, 1,
                           3, BK_ATTENTION_WGMMA_STAGES(64))
