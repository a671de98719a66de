// Block-sparse attention backward on Hopper (sm_90a): wgmma, operands
// brought by the bulk tensor copy engine, warp-specialised. F16 and BF16,
// D = Dv = 64 or 128, blocks that are multiples of 64; the row sums
// rowsum(dY * Y) come from ptx/attention_general.cu's kernel, launched
// first. As on the mma.sync path (ptx/attention_mma_backward.cu), two
// kernels, each the only writer of its outputs, so the result is
// deterministic without atomics:
// - dq: a CTA owns 128 query rows of one (batch, head), 64 per consumer
//   warpgroup, and walks the key tiles as the forward does (the same
//   producer, ptx/attention_wgmma_walk.cuh, with dY beside Q):
//   S = Q K^T, dP = dY V^T, dS = P (dP - rowsum), dQ += dS K;
// - dk/dv: a CTA owns 128 keys of one (batch, kv head), 64 per consumer,
//   and its producer walks the 64-query tiles of every query head of the
//   group that see either consumer's key block (the pattern read by
//   column), streaming Q, dY, lse and rowsum through a ring:
//   S^T = K Q^T, dP^T = V dY^T, dS^T = P^T (dP^T - rowsum),
//   dV += P^T dY, dK += dS^T Q (P^T and dS^T as register operands).
// The two consumers of a CTA overlap each other's GEMMs and element-wise
// work (taking turns, as the forward does, measured no faster); within
// one, P is computed under dP's GEMM. One kernel that also adds each key
// block's dQ share in order (5 GEMMs instead of 7) was built and measured
// slower on sparse patterns: see DESIGN-NOTES.
#include "attention_wgmma_walk.cuh"

namespace bk {
namespace attention {
namespace wg {

// ---------------------------------------------------------------- dq

// Shared memory of the dq kernel: Q and dY of both consumers (64 rows
// each), the ring of 128-key K and V tiles, records and barriers.
template <int DH> struct DqLayout {
    static constexpr int NC = 2;
    static constexpr int CB = DH / 64;
    static constexpr int STAGES = BK_ATTENTION_WGMMA_STAGES(DH);
    static constexpr int ROW_OPERANDS = 2;
    static constexpr bool V_LAGS = false; // K and V are used and freed together
    static constexpr uint32_t Q_BLOCK = ROWS * 128, KV_BLOCK = 128 * 128;
    static constexpr uint32_t Q_BYTES = CB * Q_BLOCK, KV_BYTES = CB * KV_BLOCK;
    static constexpr uint32_t Q = 0;
    static constexpr uint32_t K = 4 * Q_BYTES;
    static constexpr uint32_t V = K + STAGES * KV_BYTES;
    static constexpr uint32_t RECORDS = V + STAGES * KV_BYTES;
    static constexpr uint32_t BARS = RECORDS + 16 * STAGES;
    static constexpr uint32_t BYTES = BARS + 8 * (2 + 4 * STAGES) + 1024;
    static_assert(BYTES == BK_ATTENTION_WGMMA_DQ_SHARED_BYTES(DH),
                  "the plan asks for the shared memory this layout takes");
};

// A dq consumer warpgroup over the CTA's query tiles (persistent as the
// forward: union tiles count on from one query tile to the next; a query
// tile ends with the tile whose record says it is the last, or with a
// record without a tile, whose stage it frees too).
template <typename T, int DH>
static __device__ void dq_consumer(const bk_attention_tma_args &p, const QueryTiles<2> &tiles,
                                   uint32_t base, int c)
{
    typedef DqLayout<DH> L;
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, q4 = lane % 4;
    const uint32_t q_tile = base + L::Q + c * L::Q_BYTES, dy_tile = q_tile + 2 * L::Q_BYTES;
    int n = 0, use = 0;
    for (uint32_t item = tiles.first(a); item < tiles.end(a); item += tiles.step(a), use++) {
        int64_t r0, h, b;
        tiles.coords(a, item, r0, h, b);
        const bool bad = pattern_bad(a, pattern_b(a, b), pattern_h(a, h));
        const int64_t rows0 = r0 + ROWS * c;
        const int64_t row_a = rows0 + warp * 16 + lane / 4;
        // This thread's two rows: lse in base 2 (+inf: P = 0), rowsum, last key.
        float lse2[2], rsum[2];
        int64_t end[2];
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int64_t row = row_a + 8 * half;
            const float2 st = backward_row_stats(a, b, h, row);
            lse2[half] = st.x;
            rsum[half] = st.y;
            end[half] = key_end(a, row);
        }
        const int64_t first_end = key_end(a, rows0);
        const float sl2 = (float)a.scale * LOG2E;

        float dq[DH / 8][4];
        zero(dq);
        uint32_t qf[L::CB * 4][4], yf[L::CB * 4][4];
        mbar_wait(base + L::BARS, (uint32_t)use & 1u); // Q and dY
        load_row_fragments<L>(qf, q_tile, warp, lane);
        load_row_fragments<L>(yf, dy_tile, warp, lane);
        release(base + L::BARS + 8); // the next query tile's Q and dY may come
        for (;; n++) {
            const Stage st = Stage::of<L>(base, n);
            mbar_wait(st.k_full, st.parity);
            const uint4 rec = read_record(st.record);
            if (!(rec.z & TILE_TAKEN << c)) {
                // A tile for the other consumer, or the record of no tile.
                release_skipped<L>(st, n);
                if (rec.z & (TILE_END | TILE_LAST)) {
                    n++;
                    break;
                }
                continue;
            }
            // The tile's two 64-key halves one after the other (a half this
            // consumer does not need costs nothing): S and dP issued together,
            // P computed under dP's GEMM, then dQ += dS K of the half. Unrolled:
            // as a loop, ptxas (CUDA 13.0) gave dS the registers of Q's
            // fragments at D = 64, which the next half still reads.
#pragma unroll
            for (int hh = 0; hh < 2; hh++) {
                if (!(rec.z & (hh ? TILE_USES_HI : TILE_USES_LO) << 2 * c))
                    continue;
                const int64_t kh = (int32_t)(hh ? rec.y : rec.x);
                const uint32_t off = hh * SLOT * 128;
                float s[SLOT / 8][4], dp[SLOT / 8][4];
                issue_fragments_bt<T, L, SLOT>(s, qf, st.k_tile + off);
                mbar_wait(st.v_full, st.parity);
                issue_fragments_bt<T, L, SLOT>(dp, yf, st.v_tile + off);
                // Keys past Lk or past the causal limit.
                const bool edge = kh + SLOT > first_end;
                wgmma_wait<1>();
                fence_operand(s);
#pragma unroll
                for (int j = 0; j < SLOT / 8; j++) {
                    const int64_t key = kh + j * 8 + 2 * q4;
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        s[j][e] = exp2_fast(fmaf(s[j][e], sl2, -lse2[e / 2]));
                        if (edge && key + (e & 1) >= end[e / 2])
                            s[j][e] = 0.f;
                    }
                }
                wgmma_wait<0>();
                fence_operand(dp);
                uint32_t da[SLOT / 16][4];
#pragma unroll
                for (int j = 0; j < SLOT / 8; j++) {
                    float ds[4];
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        ds[e] = s[j][e] * (dp[j][e] - rsum[e / 2]);
                    da[j / 2][(j % 2) * 2] = pack2<T>(ds[0], ds[1]);
                    da[j / 2][(j % 2) * 2 + 1] = pack2<T>(ds[2], ds[3]);
                }
                issue_ab<T, L, SLOT>(dq, da, st.k_tile + off);
                wgmma_wait<0>();
                fence_operand(dq);
                fence_operand(da);
            }
            release(st.k_empty);
            release(st.v_empty);
            if (rec.z & TILE_LAST) {
                n++;
                break;
            }
        }
        const float f = bad ? quiet_nan() : (float)a.scale;
        store_rows<T, DH>(a.dq, b, h, rows0 + warp * 16, a.lq, dq, f, f, lane);
    }
}

template <typename T, int DH> static __device__ void dq(const bk_attention_tma_args &p)
{
    typedef DqLayout<DH> L;
    const uint32_t base = shared_base_1024();
    init_ring<L>(base);
    __syncthreads();
    grid_dependency_wait(); // the row sums (and a LIST's mask) come from the kernels before
    const QueryTiles<2> tiles(p.a);
    if (threadIdx.x < 128) {
        producer_registers();
        if (threadIdx.x < 32)
            produce_tiles<L>(p, base, tiles);
    } else {
        consumer_registers<2>();
        dq_consumer<T, DH>(p, tiles, base, threadIdx.x / 128 - 1);
    }
}

// ---------------------------------------------------------------- dk/dv

// Shared memory of the dk/dv kernel: K and V of both consumers (64 keys
// each), then a ring of Q and dY tiles (64 queries) with their lse (base
// 2) and rowsum (64 F32 each), records and barriers: kv_full, then full
// and empty per stage. Every tile has 64 rows (the issue steps' A and B
// column blocks alike).
template <int DH> struct DkvLayout {
    static constexpr int CB = DH / 64;
    static constexpr int STAGES = BK_ATTENTION_WGMMA_DKV_STAGES;
    static constexpr uint32_t Q_BLOCK = 64 * 128, KV_BLOCK = Q_BLOCK, TILE = CB * Q_BLOCK;
    static constexpr uint32_t K = 0, V = 2 * TILE, Q = 4 * TILE;
    static constexpr uint32_t DY = Q + STAGES * TILE;
    static constexpr uint32_t STATS = DY + STAGES * TILE;
    static constexpr uint32_t RECORDS = STATS + STAGES * 512;
    static constexpr uint32_t BARS = RECORDS + 16 * STAGES;
    static constexpr uint32_t BYTES = BARS + 8 * (1 + 2 * STAGES) + 1024;
    static_assert(BYTES == BK_ATTENTION_WGMMA_DKV_SHARED_BYTES(DH),
                  "the plan asks for the shared memory this layout takes");
};

// Stage s of the dk/dv ring: full (the producer's 32 lanes, and lane 0
// once more with the copies' bytes: 33) and empty (one arrival per
// consumer thread, 256: every thread reads the stage's lse and rowsum,
// and compute-sanitizer's racecheck orders only an arriving thread's own
// reads before the producer's next writes).
struct QueryStage {
    uint32_t full, empty, parity, q_tile, dy_tile, stats, record;
    template <typename L> static __device__ QueryStage of(uint32_t base, int n)
    {
        const int s = n % L::STAGES;
        QueryStage st;
        st.full = base + L::BARS + 8 * (1 + s);
        st.empty = st.full + 8 * L::STAGES;
        st.parity = (uint32_t)((n / L::STAGES) & 1);
        st.q_tile = base + L::Q + s * L::TILE;
        st.dy_tile = base + L::DY + s * L::TILE;
        st.stats = base + L::STATS + 512 * s;
        st.record = base + L::RECORDS + 16 * s;
        return st;
    }
};

// A query tile's lse and rowsum as stored, two rows a lane (i = lane,
// lane + 32; -inf and 0 past Lq), loaded a tile ahead of its stage by the
// producer and turned into base 2 only when stored (a use next to the
// load would wait for it there).
struct TileStats {
    float l[2], rs[2];
};

// The producer's side of the dk/dv ring: fills stage n with a query tile
// (or the end record) once the consumers have freed its previous use. The
// tile's copies go first and its statistics were loaded a tile before
// (the producer's round trips to memory, one after the other, bounded the
// kernel where each tile is a single consumer's: query blocks of 64).
template <typename L> struct QueryRing {
    const bk_attention_tma_args &p;
    uint32_t base;
    int b, n;

    // The statistics of query tile q0, from the head's rows: loads under
    // predicates, all four in flight together.
    __device__ __forceinline__ TileStats load(int q0, const float *lse, const float *rowsum) const
    {
        const Args &a = p.a;
        const int lane = threadIdx.x % 32;
        TileStats t;
#pragma unroll
        for (int k = 0; k < 2; k++) {
            const int q = q0 + lane + 32 * k;
            t.l[k] = q < a.lq ? lse[q * a.lse_s[2]] : -INFINITY;
            t.rs[k] = q < a.lq ? rowsum[q] : 0.f;
        }
        return t;
    }

    // Query tile q0 of head h with its statistics t, or the end.
    __device__ __forceinline__ void emit(int h, int q0, const TileStats &t, uint32_t flags)
    {
        const int lane = threadIdx.x % 32;
        const QueryStage st = QueryStage::of<L>(base, n++);
        if (n > L::STAGES) // the previous use of the stage, one phase back
            mbar_wait(st.empty, st.parity ^ 1u);
        const bool end = (flags & TILE_END) != 0;
        // Lane 0 arrives twice: with the copies' bytes (or alone, for the
        // end), then with the other lanes once its statistics are stored.
        if (lane == 0) {
            store_shared16(st.record, make_uint4((uint32_t)h, (uint32_t)q0, flags, 0u));
            if (end) {
                mbar_arrive(st.full);
            } else {
                mbar_expect_tx(st.full, 2 * L::TILE);
                for (int cb = 0; cb < L::CB; cb++) {
                    tma_load_4d(st.q_tile + cb * L::Q_BLOCK, p.map_q, 64 * cb, q0, h, b, st.full);
                    tma_load_4d(st.dy_tile + cb * L::Q_BLOCK, p.map_dy, 64 * cb, q0, h, b,
                                st.full);
                }
            }
        }
        if (!end)
#pragma unroll
            for (int k = 0; k < 2; k++) {
                store_shared_f32(st.stats + 4 * (lane + 32 * k), lse_base2(t.l[k]));
                store_shared_f32(st.stats + 256 + 4 * (lane + 32 * k), t.rs[k]);
            }
        mbar_arrive(st.full);
    }
};

// Run by warp 0: loads both consumers' K and V, then walks (query head of
// the group, 64-query tile) in order, 32 tiles per mask read, and fills
// the ring with each tile that either consumer's key block sees: its
// record (head, first query, which consumers use it), lse and rowsum (by
// every lane), Q and dY (lane 0). A last record ends the walk. Rows and
// tiles fit in int (the plan takes this path for Lq, Lk < 2^31): the
// producer runs in 40 registers.
template <typename L>
static __device__ void dkv_producer(const bk_attention_tma_args &p, uint32_t base, int k0,
                                    int kvh, int b, bool bad)
{
    const Args &a = p.a;
    const int lane = threadIdx.x % 32;
    if (lane == 0) {
        const uint32_t kv_full = base + L::BARS;
        mbar_expect_tx(kv_full, 4 * L::TILE);
        for (int c = 0; c < 2; c++)
            for (int cb = 0; cb < L::CB; cb++) {
                const uint32_t at = c * L::TILE + cb * L::Q_BLOCK;
                tma_load_4d(base + L::K + at, p.map_k, 64 * cb, k0 + 64 * c, kvh, b, kv_full);
                tma_load_4d(base + L::V + at, p.map_v, 64 * cb, k0 + 64 * c, kvh, b, kv_full);
            }
    }
    QueryRing<L> ring{ p, base, b, 0 };
    const int group = (int)a.heads / (int)a.kv_heads;
    const int tiles = (int)((a.lq + 63) / 64), per_block = (int)(a.block_q / 64);
    const int block_k = (int)a.block_k; // 32-bit division: the producer's registers are few
    const int64_t pb = pattern_b(a, b);
    // Each consumer's keys: whether it has any, the first query that sees
    // one (causal), its key block.
    const bool has0 = !bad && k0 < a.lk, has1 = !bad && k0 + 64 < a.lk;
    const int first0 = (int)query_begin(a, k0), first1 = (int)query_begin(a, k0 + 64);
    const int jb0 = k0 / block_k, jb1 = (k0 + 64) / block_k;
    // The tile found last, held until the next is found (its statistics
    // loading meanwhile): held_h < 0, none.
    int held_h = -1, held_q0 = 0;
    uint32_t held_flags = 0;
    TileStats held{};
    for (int g = 0; g < group && has0; g++) {
        const int h = kvh * group + g;
        const int64_t ph = pattern_h(a, h);
        const float *lse = lse_at<const float>(a, b, h, 0);
        const float *rowsum = rowsum_at<const float>(a, b, h, 0);
        for (int t0 = first0 / 64; t0 < tiles; t0 += 32) {
            const int t = t0 + lane, last = min(t * 64 + 63, (int)a.lq - 1);
            const bool in = t < tiles;
            const uint32_t need0 = __ballot_sync(
                0xFFFFFFFFu, in && last >= first0 && block_active(a, pb, ph, t / per_block, jb0));
            const uint32_t need1 = __ballot_sync(
                0xFFFFFFFFu,
                has1 && in && last >= first1 && block_active(a, pb, ph, t / per_block, jb1));
            for (uint32_t bits = need0 | need1; bits; bits &= bits - 1) {
                const int i = __ffs(bits) - 1;
                const TileStats next = ring.load((t0 + i) * 64, lse, rowsum);
                if (held_h >= 0)
                    ring.emit(held_h, held_q0, held, held_flags);
                held = next;
                held_h = h;
                held_q0 = (t0 + i) * 64;
                held_flags = ((need0 >> i) & 1u ? TILE_TAKEN : 0u) |
                             ((need1 >> i) & 1u ? TILE_TAKEN << 1 : 0u);
            }
        }
    }
    if (held_h >= 0)
        ring.emit(held_h, held_q0, held, held_flags);
    ring.emit(0, 0, held, TILE_END);
}

// D (64 x 64) = A B^T, A and B tiles of 64 rows x DH in shared memory
// (K-major, DH / 64 column blocks), D in steps of 16; issued and
// committed: S^T = K Q^T, or dP^T = V dY^T.
template <typename T, typename L>
static __device__ __forceinline__ void issue_abt(float (&d)[8][4], uint32_t a_tile,
                                                 uint32_t b_tile)
{
    const uint64_t da0 = smem_desc(a_tile, 16, 1024), db0 = smem_desc(b_tile, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < L::CB * 4; kk++) {
        const uint32_t at = (kk / 4) * L::Q_BLOCK + (kk % 4) * 32;
        mma_ss_n64<T>(d, smem_desc_add(da0, at), smem_desc_add(db0, at), kk > 0);
    }
    wgmma_commit();
}

template <typename T, int DH>
static __device__ void dkv_consumer(const bk_attention_tma_args &p, uint32_t base, int c,
                                    int64_t k0, int64_t kvh, int64_t b, bool bad)
{
    typedef DkvLayout<DH> L;
    constexpr int BQ = 64; // queries per tile
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, q4 = lane % 4;
    // Rows and tiles fit in int: the plan takes this path for Lq, Lk < 2^31.
    const int keys0 = (int)k0 + 64 * c;
    const int key_a = keys0 + warp * 16 + lane / 4;
    // The first query that sees each of this thread's keys, and the first
    // that sees all of the consumer's (causal).
    const int begin[2] = { (int)query_begin(a, key_a), (int)query_begin(a, key_a + 8) };
    const int all_begin = (int)query_begin(a, keys0 + 63);
    const bool causal = (a.flags & BK_ATTENTION_CAUSAL) != 0;
    const uint32_t k_tile = base + L::K + c * L::TILE, v_tile = base + L::V + c * L::TILE;
    const float sl2 = (float)a.scale * LOG2E;

    float dk[DH / 8][4], dv[DH / 8][4];
    zero(dk);
    zero(dv);
    mbar_wait(base + L::BARS, 0); // K and V
    for (int n = 0;; n++) {
        const QueryStage st = QueryStage::of<L>(base, n);
        mbar_wait(st.full, st.parity);
        const uint4 rec = read_record(st.record);
        if (rec.z & TILE_END)
            break;
        if (rec.z & TILE_TAKEN << c) {
            // S^T and dP^T issued together, P^T computed under dP^T's GEMM
            // (in F32: dS^T takes it unrounded).
            float s[BQ / 8][4], dp[BQ / 8][4];
            issue_abt<T, L>(s, k_tile, st.q_tile);
            issue_abt<T, L>(dp, v_tile, st.dy_tile);
            const int q0 = (int)rec.y;
            const bool diagonal = causal && q0 < all_begin;
            wgmma_wait<1>();
            fence_operand(s);
#pragma unroll
            for (int j = 0; j < BQ / 8; j++) {
                const int col = j * 8 + 2 * q4;
                const float2 l = load_shared_f32x2(st.stats + 4 * col);
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    s[j][e] = exp2_fast(fmaf(s[j][e], sl2, -(e & 1 ? l.y : l.x)));
                    if (diagonal && q0 + col + (e & 1) < begin[e / 2])
                        s[j][e] = 0.f;
                }
            }
            wgmma_wait<0>();
            fence_operand(dp);
            uint32_t pa[BQ / 16][4], da[BQ / 16][4];
#pragma unroll
            for (int j = 0; j < BQ / 8; j++) {
                const int col = j * 8 + 2 * q4;
                const float2 rs = load_shared_f32x2(st.stats + 256 + 4 * col);
                float ds[4];
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ds[e] = s[j][e] * (dp[j][e] - (e & 1 ? rs.y : rs.x));
                pa[j / 2][(j % 2) * 2] = pack2<T>(s[j][0], s[j][1]);
                pa[j / 2][(j % 2) * 2 + 1] = pack2<T>(s[j][2], s[j][3]);
                da[j / 2][(j % 2) * 2] = pack2<T>(ds[0], ds[1]);
                da[j / 2][(j % 2) * 2 + 1] = pack2<T>(ds[2], ds[3]);
            }
            issue_ab<T, L, BQ>(dv, pa, st.dy_tile);
            issue_ab<T, L, BQ>(dk, da, st.q_tile);
            wgmma_wait<0>();
            fence_operand(dv);
            fence_operand(dk);
            fence_operand(pa);
            fence_operand(da);
        }
        mbar_arrive(st.empty);
    }
    const float nan = quiet_nan();
    const float fk = bad ? nan : (float)a.scale, fv = bad ? nan : 1.f;
    store_rows<T, DH>(a.dk, b, kvh, keys0 + warp * 16, a.lk, dk, fk, fk, lane);
    store_rows<T, DH>(a.dv, b, kvh, keys0 + warp * 16, a.lk, dv, fv, fv, lane);
}

template <typename T, int DH> static __device__ void dkv(const bk_attention_tma_args &p)
{
    typedef DkvLayout<DH> L;
    const uint32_t base = shared_base_1024();
    const Args &a = p.a;
    const int64_t k0 = (int64_t)blockIdx.x * 128, kvh = blockIdx.y, b = blockIdx.z;
    if (threadIdx.x == 0) {
        mbar_init(base + L::BARS, 1);
        for (int s = 0; s < L::STAGES; s++) {
            mbar_init(base + L::BARS + 8 * (1 + s), 33); // see QueryRing::emit
            mbar_init(base + L::BARS + 8 * (1 + L::STAGES + s), 256);
        }
        mbar_fence_init();
    }
    __syncthreads();
    // What this kernel reads (lse, the row sums, a LIST's mask) comes from
    // the kernels before dq, and dq lets this grid launch only once each of
    // its CTAs has waited for those: so the dk/dv CTAs start at once, on
    // the SMs dq's last wave leaves idle, and wait for dq only at the end,
    // so that the kernels after them still find dq finished.
    grid_dependents_launch();
    const bool bad = group_bad(a, b, kvh);
    if (threadIdx.x < 128) {
        producer_registers();
        if (threadIdx.x < 32)
            dkv_producer<L>(p, base, (int)k0, (int)kvh, (int)b, bad);
    } else {
        consumer_registers<2>();
        dkv_consumer<T, DH>(p, base, threadIdx.x / 128 - 1, k0, kvh, b, bad);
        grid_dependency_wait_only(); // the CTA ends after dq
    }
}

} // namespace wg
} // namespace attention
} // namespace bk

#define BK_ATTENTION_WGMMA_BACKWARD(NAME, T, DH)                                                 \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_dq_wgmma_##NAME##_d##DH(const __grid_constant__ bk_attention_tma_args p)    \
    {                                                                                            \
        bk::attention::wg::dq<T, DH>(p);                                                         \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_dkv_wgmma_##NAME##_d##DH(const __grid_constant__ bk_attention_tma_args p)   \
    {                                                                                            \
        bk::attention::wg::dkv<T, DH>(p);                                                        \
    }

BK_ATTENTION_WGMMA_BACKWARD(f16, __half, 64)
BK_ATTENTION_WGMMA_BACKWARD(f16, __half, 128)
BK_ATTENTION_WGMMA_BACKWARD(bf16, __nv_bfloat16, 64)
BK_ATTENTION_WGMMA_BACKWARD(bf16, __nv_bfloat16, 128)
