// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention backward on Hopper (sm_90a): wgmma, operands
// brought by the bulk tensor copy engine, warp-specialised. F16 and BF16,
// D = Dv = 64 or 128, blocks that are multiples of 64; the row sums
// rowsum(dY * Y) come from kernels/attention_general.cu's kernel, launched
// first. As on the mma.sync path (kernels/attention_mma_backward.cu), two
// kernels, each the only writer of its outputs, so the result is
// deterministic without atomics:
// - dq: a CTA owns 128 query rows of one (batch, head), 64 per consumer
//   warpgroup, and walks the key tiles as the forward does (the same
//   producer, kernels/attention_wgmma_walk.cuh, with dY beside Q):
//   S = Q K^T, dP = dY V^T, dS = P (dP - rowsum), dQ += dS K;
// - dk/dv: a CTA owns 128 keys of one (batch, kv head), 64 per consumer,
//   and its producer walks the 64-query tiles of every query head of the
//   group that see either consumer's key block (the pattern read by
//   column), streaming Q, dY, lse and rowsum through a ring:
//   S^T = K Q^T, dP^T = V dY^T, dS^T = P^T (dP^T - rowsum),
//   dV += P^T dY, dK += dS^T Q (P^T and dS^T as register operands).
// The two consumers of a CTA overlap each other's GEMMs and element-wise
// work (taking turns, as the forward does, measured no faster); within
// one, P is computed under dP's GEMM. For DENSE patterns at D = 128 the
// plan takes a third kernel that does all three (dkvq, 5 GEMMs a tile
// instead of 7): the dk/dv kernel that also computes each query tile's dQ
// share over its keys and hands it over in a fixed order (DenseOrder, or
// CausalOrder with the causal mask) to an F32 sum in the workspace
// (BK_CUDA_ATTENTION_BACKWARD=two keeps dq and dk/dv;
// doc/design/attention.md).
#include "attention_wgmma_walk.cuh"
#include "split_sum_sync.cuh"

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

// Query tile `item` of a dq CTA's walk: its first row r0, head h and
// batch b, and whether its pattern head (or sequence) is bad. SEQ: rows
// local to the tile's sequence sq (rows past its lq have no statistics
// and see no key, stored from its q0 up to q_out); false where no rows
// of a sequence are there, a tile every loop skips alike.
template <bool SEQ, typename Tiles>
static __device__ __forceinline__ bool query_tile(const Args &a, const Tiles &tiles, uint32_t item,
                                                  int64_t &r0, int64_t &h, int64_t &b, Seq &sq,
                                                  bool &bad)
{
    if constexpr (SEQ) {
        if (!tiles.place(a, item, r0, h, sq))
            return false;
        b = sq.b;
        bad = sq.bad || pattern_bad(a, sq.pb, pattern_h(a, h));
    } else {
        tiles.coords(a, item, r0, h, b);
        bad = pattern_bad(a, pattern_b(a, b), pattern_h(a, h));
    }
    return true;
}

// A dq thread's two rows row_a and + 8 of the 64 from rows0: lse in base
// 2 (+inf: P = 0), rowsum, last key; and the first key limit of the 64
// rows, past which a key tile needs the per-row masks (SEQ: 0 where any
// row is past lq, every tile an edge).
template <bool SEQ> struct DqRows {
    float lse2[2], rsum[2];
    int64_t end[2], first_end;
    __device__ __forceinline__ DqRows(const Args &a, const Seq &sq, int64_t b, int64_t h,
                                      int64_t rows0, int64_t row_a)
    {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int64_t row = row_a + 8 * half;
            if constexpr (SEQ) {
                const bool in = row < sq.lq;
                const float2 st = in ? backward_row_stats(a, b, h, sq.q0 + row)
                                     : make_float2(INFINITY, 0.f);
                lse2[half] = st.x;
                rsum[half] = st.y;
                end[half] = in ? key_end(a, sq, row) : 0;
            } else {
                const float2 st = backward_row_stats(a, b, h, row);
                lse2[half] = st.x;
                rsum[half] = st.y;
                end[half] = key_end(a, row);
            }
        }
        if constexpr (SEQ)
            first_end = rows0 + ROWS <= sq.lq ? key_end(a, sq, rows0) : 0;
        else
            first_end = key_end(a, rows0);
    }

    // The masks of a tile of W keys from kh as one 32-bit bound a row:
    // fragment column 8 j + (e & 1) of a thread (its keys kh + 2 q4 + ..)
    // sees no key where it is at least bound[e / 2]; W where the tile
    // needs no mask. A compare against a constant and a select a score,
    // where the 64-bit key test beside the edge test cost three.
    template <int W>
    __device__ __forceinline__ void bounds(int64_t kh, int q4, int (&bound)[2]) const
    {
        const bool edge = kh + W > first_end;
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int64_t d = end[half] - kh - 2 * q4;
            bound[half] = edge ? (int)min(max(d, (int64_t)-1), (int64_t)W) : W;
        }
    }
};

// A dq consumer warpgroup over the CTA's query tiles (persistent as the
// forward: union tiles count on from one query tile to the next; a query
// tile ends with the tile whose record says it is the last, or with a
// record without a tile, whose stage it frees too).
template <typename T, int DH, bool SEQ>
static __device__ void dq_consumer(const bk_attention_tma_args &p,
                                   const QueryTiles<2, SEQ, DqLayout<DH>::BYTES - 1024> &tiles,
                                   uint32_t base, int c)
{
    typedef DqLayout<DH> L;
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, q4 = lane % 4;
    const uint32_t q_tile = base + L::Q + c * L::Q_BYTES, dy_tile = q_tile + 2 * L::Q_BYTES;
    int n = 0, use = 0;
    for (uint32_t item = tiles.first(a); item < tiles.end(a); item = tiles.next(a, item)) {
        int64_t r0, h, b;
        bool bad;
        Seq sq;
        if (!query_tile<SEQ>(a, tiles, item, r0, h, b, sq, bad))
            continue;
        const int64_t rows0 = r0 + ROWS * c;
        const int64_t row_a = rows0 + warp * 16 + lane / 4;
        uint32_t qf[L::CB * 4][4], yf[L::CB * 4][4];
        mbar_wait(base + L::BARS, (uint32_t)use & 1u); // Q and dY
        load_row_fragments<L>(qf, q_tile, warp, lane);
        load_row_fragments<L>(yf, dy_tile, warp, lane);
        release_row_operands<L>(base); // the next query tile's Q and dY may come
        const DqRows<SEQ> rs(a, sq, b, h, rows0, row_a);
        const float(&lse2)[2] = rs.lse2, (&rsum)[2] = rs.rsum;
        const float sl2 = (float)a.scale * LOG2E;

        float dq[DH / 8][4];
        zero(dq);
        for (;; n++) {
            const Stage st = Stage::of<L>(base, n);
            mbar_wait(st.k_full, st.parity);
            const uint4 rec = read_record(st.record);
            if constexpr (SEQ)
                if (rec.z & TILE_TAKEN << c) {
                    const int keys[2] = { (int)rec.x, (int)rec.y };
                    zero_unowned_slots<L, true, 2>(st, keys, (int)sq.lk, (int)(a.lk - sq.k0),
                                                   tid, ZEROED_BARRIER + c);
                }
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
                int bound[2];
                rs.template bounds<SLOT>(kh, q4, bound);
                wgmma_wait<1>();
                fence_operand(s);
#pragma unroll
                for (int j = 0; j < SLOT / 8; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        s[j][e] = exp2_fast(fmaf(s[j][e], sl2, -lse2[e / 2]));
                        if (j * 8 + (e & 1) >= bound[e / 2])
                            s[j][e] = 0.f;
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
        if constexpr (SEQ)
            store_rows<T, DH>(a.dq, b, h, sq.q0 + rows0 + warp * 16, sq.q_out, dq, f, f, lane,
                              a.d);
        else
            store_rows<T, DH>(a.dq, b, h, rows0 + warp * 16, a.lq, dq, f, f, lane, a.d);
        use++;
    }
}

template <typename T, int DH, bool SEQ> static __device__ void dq(const bk_attention_tma_args &p)
{
    typedef DqLayout<DH> L;
    const uint32_t base = warp_uniform(shared_base_1024());
    init_ring<L>(base);
    __syncthreads();
    grid_dependency_wait(); // the row sums (and a LIST's mask) come from the kernels before
    const QueryTiles<2, SEQ, L::BYTES - 1024> tiles(p.a);
    if (threadIdx.x < 128) {
        producer_registers();
        if (threadIdx.x < 32)
            produce_tiles<L, SEQ>(p, base, tiles);
    } else {
        consumer_registers<2>();
        dq_consumer<T, DH, SEQ>(p, tiles, base, warp_uniform((int)threadIdx.x / 128 - 1));
    }
}

// ---------------------------------------------------------------- dk/dv

// Shared memory of the dk/dv kernel: K and V of both consumers (64 keys
// each), then a ring of Q and dY tiles (64 queries) with their lse (base
// 2) and rowsum (64 F32 each), records and barriers: kv_full, then full
// and empty per stage. Every tile has 64 rows (the issue steps' A and B
// column blocks alike).
template <int DH, bool FQ = false> struct DkvLayout {
    static constexpr int CB = DH / 64;
    static constexpr int KEY_BLOCKS = 2; // 64-key blocks a CTA: one a consumer
    static constexpr int STAGES = FQ ? BK_ATTENTION_WGMMA_DKVQ_STAGES : BK_ATTENTION_WGMMA_DKV_STAGES;
    static constexpr uint32_t Q_BLOCK = 64 * 128, KV_BLOCK = Q_BLOCK, TILE = CB * Q_BLOCK;
    static constexpr uint32_t K = 0, V = 2 * TILE, Q = 4 * TILE;
    static constexpr uint32_t DY = Q + STAGES * TILE;
    static constexpr uint32_t STATS = DY + STAGES * TILE;
    static constexpr uint32_t RECORDS = STATS + STAGES * 512;
    static constexpr uint32_t BARS = RECORDS + 16 * STAGES;
    // With dq: part_full and part_empty of each consumer's dQ share.
    static constexpr uint32_t PART_BARS = BARS + 8 * (1 + 2 * STAGES);
    static constexpr uint32_t BARS_END = PART_BARS + (FQ ? 8 * 4 : 0);
    // With dq (FQ): dS of the tile, A of dQ = dS K (64 queries x 128 keys,
    // K-major, a 64-key column block per consumer), in two buffers; then
    // each consumer's F32 half of the tile's dQ share, in the order of its
    // accumulator fragments (float4 k of thread t at 16 (128 k + t)), for
    // the copy engine.
    static constexpr uint32_t DS = (BARS_END + 1023) / 1024 * 1024;
    static constexpr uint32_t DS_BYTES = 2 * Q_BLOCK;
    static constexpr uint32_t PART = DS + 2 * DS_BYTES, PART_BYTES = 64 * 64 * 4;
    static constexpr uint32_t BYTES = (FQ ? PART + 2 * PART_BYTES : BARS_END) + 1024;
    // With dq at width 64 a tile's dQ is one 64-column block, which the
    // consumers compute by turns (tile n by consumer n % 2); at 128
    // consumer c computes column block c of every tile.
    static constexpr bool DQ_TURNS = FQ && CB == 1;
    static __device__ __forceinline__ int dq_block(int c) { return DQ_TURNS ? 0 : c; }
    static_assert(BYTES == (FQ ? BK_ATTENTION_WGMMA_DKVQ_SHARED_BYTES(DH)
                               : BK_ATTENTION_WGMMA_DKV_SHARED_BYTES(DH)),
                  "the plan asks for the shared memory this layout takes");
    static_assert(BYTES <= 232448, "a CTA's shared memory on sm_90");
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
template <typename L, bool SEQ = false> struct QueryRing {
    const bk_attention_tma_args &p;
    uint32_t base;
    int b, n;
    // SEQ: the sequence's queries and its first query row (tiles are
    // numbered from it; rows past lq have lse -inf and rowsum 0: P = 0).
    int lq = 0, q_first = 0;

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
            const bool in = SEQ ? q < lq : q < a.lq;
            t.l[k] = in ? lse[q * a.lse_s[2]] : -INFINITY;
            t.rs[k] = in ? rowsum[q] : 0.f;
            // SEQ: a row whose lse is NaN (one that bad offsets let two
            // sequences claim: the forward left it NaN, and its row sum)
            // takes row sum 0. Its P is NaN wherever it sees a key, and
            // where it sees none (P = 0) it so adds nothing, as on the
            // mma.sync path, instead of spreading 0 x NaN into the keys.
            if (SEQ && t.l[k] != t.l[k])
                t.rs[k] = 0.f;
        }
        return t;
    }

    // Query tile q0 of head h with its statistics t, or the end; w rides
    // in the record's last word (the fused kernel's hand-over rank).
    __device__ __forceinline__ void emit(int h, int q0, const TileStats &t, uint32_t flags,
                                         uint32_t w = 0u)
    {
        const int lane = threadIdx.x % 32;
        const QueryStage st = QueryStage::of<L>(base, n++);
        if (n > L::STAGES) // the previous use of the stage, one phase back
            mbar_wait(st.empty, st.parity ^ 1u);
        const bool end = (flags & TILE_END) != 0;
        // Lane 0 arrives twice: with the copies' bytes (or alone, for the
        // end), then with the other lanes once its statistics are stored.
        if (lane == 0) {
            store_shared16(st.record, make_uint4((uint32_t)h, (uint32_t)q0, flags, w));
            if (end) {
                mbar_arrive(st.full);
            } else {
                mbar_expect_tx(st.full, 2 * L::TILE);
                const int row = SEQ ? q_first + q0 : q0;
                for (int cb = 0; cb < L::CB; cb++) {
                    tma_load_4d(st.q_tile + cb * L::Q_BLOCK, p.map_q, 64 * cb, row, h, b,
                                st.full);
                    tma_load_4d(st.dy_tile + cb * L::Q_BLOCK, p.map_dy, 64 * cb, row, h, b,
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
// Lane 0: the CTA's K and V (64 L::KEY_BLOCKS keys from k0) onto kv_full.
template <typename L>
static __device__ __forceinline__ void load_keys(const bk_attention_tma_args &p, uint32_t base,
                                                 int k0, int kvh, int b)
{
    if (threadIdx.x % 32 == 0) {
        const uint32_t kv_full = base + L::BARS;
        mbar_expect_tx(kv_full, 2 * L::KEY_BLOCKS * L::TILE);
        for (int c = 0; c < L::KEY_BLOCKS; c++)
            for (int cb = 0; cb < L::CB; cb++) {
                const uint32_t at = c * L::TILE + cb * L::Q_BLOCK;
                tma_load_4d(base + L::K + at, p.map_k, 64 * cb, k0 + 64 * c, kvh, b, kv_full);
                tma_load_4d(base + L::V + at, p.map_v, 64 * cb, k0 + 64 * c, kvh, b, kv_full);
            }
    }
}

// With dq (dkvq_atomic), a bad group still walks its good heads (their dQ
// shares are needed; dk and dv come out NaN all the same): bad is false
// and each bad head is skipped.
//
// SEQ: keys and query tiles are sequence sq's own (k0 local; its keys
// from sq.k0, its queries from sq.q0, lse and rowsum of rows past its lq
// -inf and 0 so that P = 0 there).
template <typename L, bool WITH_DQ = false, bool SEQ = false>
static __device__ void dkv_producer(const bk_attention_tma_args &p, uint32_t base, int k0,
                                    int kvh, int b, bool bad, const Seq &sq = Seq{})
{
    const Args &a = p.a;
    const int lane = threadIdx.x % 32;
    load_keys<L>(p, base, SEQ ? (int)sq.k0 + k0 : k0, kvh, b);
    QueryRing<L, SEQ> ring{ p, base, b, 0 };
    if constexpr (SEQ) {
        ring.lq = (int)sq.lq;
        ring.q_first = (int)sq.q0;
    }
    const int lq = SEQ ? (int)sq.lq : (int)a.lq; // (as int: the non-SEQ code as it was)
    const int group = (int)a.heads / (int)a.kv_heads;
    const int tiles = SEQ ? (lq + 63) / 64 : (int)((a.lq + 63) / 64),
              per_block = (int)(a.block_q / 64);
    const int block_k = (int)a.block_k; // 32-bit division: the producer's registers are few
    const int64_t pb = SEQ ? sq.pb : pattern_b(a, b);
    // Each consumer's keys: whether it has any, the first query that sees
    // one (causal), its key block.
    const int64_t lk = SEQ ? sq.lk : a.lk;
    const bool has0 = !bad && k0 < lk, has1 = L::KEY_BLOCKS > 1 && !bad && k0 + 64 < lk;
    const int first0 = SEQ ? (int)query_begin(a, sq, k0) : (int)query_begin(a, k0),
              first1 = SEQ ? (int)query_begin(a, sq, k0 + 64) : (int)query_begin(a, k0 + 64);
    const int jb0 = k0 / block_k, jb1 = (k0 + 64) / block_k;
    // The tile found last, held until the next is found (its statistics
    // loading meanwhile): held_h < 0, none.
    int held_h = -1, held_q0 = 0;
    uint32_t held_flags = 0;
    TileStats held{};
    // With dq, the CTAs of a kv head start their walks at tiles spread over
    // the query tiles (at r), so that at any time their shares of dQ go to
    // different tiles' sums, not all to one sum's lines. (On an H200 it ran
    // level with every CTA walking from the first tile: 82a20dd.)
    const int lo = first0 / 64;
    const int r = WITH_DQ ? lo + (int)((int64_t)(tiles - lo) * (int)blockIdx.x / (int)gridDim.x)
                          : lo;
    for (int g = 0; g < group && has0; g++) {
        const int h = kvh * group + g;
        const int64_t ph = pattern_h(a, h);
        if (WITH_DQ && pattern_bad(a, pb, ph))
            continue;
        const float *lse = lse_at<const float>(a, b, h, SEQ ? sq.q0 : 0);
        const float *rowsum = rowsum_at<const float>(a, b, h, SEQ ? sq.q0 : 0);
        // The tiles from first0's in two runs: [r, tiles), then [lo, r).
        for (int run = 0; run < (WITH_DQ ? 2 : 1); run++)
        for (int t0 = run ? lo : r, to = run ? r : tiles; t0 < to; t0 += 32) {
            const int t = t0 + lane, last = min(t * 64 + 63, (SEQ ? lq : (int)a.lq) - 1);
            const bool in = t < to;
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

// One step of a dk/dv-with-dq CTA's walk: query head g of the group, its
// 64-query tile t, the CTA's rank in the tile's hand-over and whether it
// is the last (adds the sum to its share and writes dQ), and which
// consumers' keys the tile's rows see (TILE_TAKEN bits).
struct HandItem {
    int g, t, rank;
    bool last;
    uint32_t flags;
    // The record's last word: the rank, and the last rank's bit.
    __device__ __forceinline__ uint32_t word() const
    {
        return (uint32_t)rank | (last ? 1u << 31 : 0u);
    }
};

// The order in which the dk/dv-with-dq kernel's CTAs of one (batch, kv
// head) walk their query tiles, and in which they hand over each tile's
// dQ. Item v = g * tiles + t is tile t of query head g of the group; CTA
// j walks v = j s, j s + 1, ... (mod nkc s, past the items skipped), so at
// any time the CTAs are on different tiles, each s steps ahead of CTA
// j - 1 on the same ones; CTA j's rank for item v, its place in the
// tile's hand-over, is its steps before v over s: (v / s - j) mod nkc.
// Rank 0 stores the tile's sum, the others wait for their turn to add to
// it (counter = rank), the last adds it to its own share and writes dQ:
// a fixed order, so the result is deterministic, that follows the CTAs'
// own pace. CTA j waits only for CTA j + 1 (mod nkc), which came to the
// tile s steps before it (its first s items are rank 0 and wait for none);
// CTAs start in order, so a successor not yet running starts once the
// CTAs before it end.
struct DenseOrder {
    int tiles, group, total, nkc, s, span, j;
    __device__ explicit DenseOrder(const Args &a)
        : tiles((int)((a.lq + 63) / 64)), group((int)(a.heads / a.kv_heads)),
          total(tiles * group), nkc((int)gridDim.x), s((total + nkc - 1) / nkc), span(s * nkc),
          j((int)blockIdx.x)
    {
    }
    __device__ __forceinline__ int steps() const { return span; }
    // Step i's item (false: none, a slot past the last).
    __device__ __forceinline__ bool at(int i, HandItem &it) const
    {
        int v = j * s + i;
        v = v >= span ? v - span : v;
        if (v >= total)
            return false;
        it.g = v / tiles;
        it.t = v - it.g * tiles;
        it.rank = i / s;
        it.last = it.rank == nkc - 1;
        it.flags = TILE_TAKEN | TILE_TAKEN << 1;
        return true;
    }
};

// The causal order (bottom-right aligned): key CTA j (128 keys from
// 128 j) sees the tiles from the first whose rows reach its first key,
// and walks them in order, head by head; tile t's contributors are the
// CTAs 0 .. jmax(t) (the last whose keys its last row sees), handing over
// from jmax(t) down to 0: CTA j's rank is jmax(t) - j, CTA 0 the last.
// CTA j + 1 has two tiles fewer a head (128 keys, 64-row tiles), so it
// comes to each tile two steps a head before CTA j: none waits while they
// keep pace. The grid runs j from the last CTA to the first (the lightest
// first, as FlashAttention-3's deterministic causal backward), so that
// every CTA a rank waits for started before it.
struct CausalOrder {
    int lq, lk, tiles, group, nkc, j, k0, first, n;
    __device__ CausalOrder(const Args &a, int j_)
        : lq((int)a.lq), lk((int)a.lk), tiles((lq + 63) / 64),
          group((int)(a.heads / a.kv_heads)), nkc((int)gridDim.x), j(j_), k0(128 * j_),
          first((int)query_begin(a, k0) / 64), n(tiles - first)
    {
    }
    __device__ __forceinline__ int steps() const { return n > 0 ? group * n : 0; }
    // The last key that query row r sees (< 0: none).
    __device__ __forceinline__ int last_key(int r) const { return min(r + lk - lq, lk - 1); }
    __device__ __forceinline__ bool at(int i, HandItem &it) const
    {
        it.g = i / n;
        it.t = first + (i - it.g * n);
        const int key = last_key(min(64 * it.t + 63, lq - 1));
        it.rank = min(nkc - 1, key / 128) - j;
        it.last = j == 0;
        it.flags = TILE_TAKEN | (key >= k0 + 64 ? TILE_TAKEN << 1 : 0u);
        return true;
    }
};

// The dk/dv-with-dq kernel's producer: K and V, then its query tiles in
// the order O (DenseOrder, CausalOrder), each with the consumers whose
// keys it sees and the CTA's hand-over rank, then the end.
template <typename L, typename O>
static __device__ void dkvq_producer(const bk_attention_tma_args &p, uint32_t base, int k0,
                                     int kvh, int b, const O &o)
{
    const Args &a = p.a;
    load_keys<L>(p, base, k0, kvh, b);
    QueryRing<L> ring{ p, base, b, 0 };
    HandItem held{}, it{};
    held.g = -1;
    TileStats stats{};
    for (int i = 0; i < o.steps(); i++) {
        if (!o.at(i, it))
            continue;
        const int h = kvh * o.group + it.g;
        const TileStats next = ring.load(it.t * 64, lse_at<const float>(a, b, h, 0),
                                         rowsum_at<const float>(a, b, h, 0));
        if (held.g >= 0)
            ring.emit(kvh * o.group + held.g, held.t * 64, stats, held.flags, held.word());
        stats = next;
        held = it;
    }
    if (held.g >= 0)
        ring.emit(kvh * o.group + held.g, held.t * 64, stats, held.flags, held.word());
    ring.emit(0, 0, stats, TILE_END);
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

// Named barriers of the dk/dv-with-dq kernel: both consumers (1), one (2 + c);
// at width 64, tile n's dS stored (DS_STORED + n % 2: the consumer that
// does not compute the tile's dQ arrives, the other waits).
static __device__ __forceinline__ void pair_sync()
{
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
}
static __device__ __forceinline__ void pair_arrive(int id)
{
    asm volatile("bar.arrive %0, 256;\n" ::"r"(id) : "memory");
}
static __device__ __forceinline__ void pair_wait(int id)
{
    asm volatile("bar.sync %0, 256;\n" ::"r"(id) : "memory");
}
constexpr int DS_STORED = 4;
static __device__ __forceinline__ void consumer_sync(int c)
{
    if (c == 0)
        asm volatile("bar.sync 2, 128;\n" ::: "memory");
    else
        asm volatile("bar.sync 3, 128;\n" ::: "memory");
}

// Where a dQ share goes: its place in the tile's hand-over (rank, and
// whether it is the last), the F32 sum of chunk i and its counter.
struct DqChunk {
    int rank;
    bool last;
    float *sum;
    uint32_t *count;
    __device__ __forceinline__ DqChunk(const Args &a, int r, bool l, int64_t i)
        : rank(r), last(l), sum((float *)a.dq_sum + i * (64 * 64)),
          count((uint32_t *)a.dq_count + i)
    {
    }
};

// The dq side of consumer c (128 threads) in the dk/dv-with-dq kernel:
// the tile's dS to shared memory, the consumer's half of dQ (64 columns)
// over the CTA's 128 keys, and its hand-over: the last rank's here, the
// others' by the consumer's hand-over warp (dq_hand_over). With ATOMIC
// the consumer's thread 0 adds every share to its chunk of the F32 sums
// through the copy engine (the L2's reductions), in no order: there is no
// turn to wait for, and the copy has long read the staged share when the
// next one comes.
template <typename T, typename L, bool ATOMIC = false> struct DqShare {
    uint32_t base;
    int c, tid;
    int staged;      // shares staged so far
    uint64_t dq_sum; // the F32 sums (ATOMIC)

    // The column block of dQ this consumer computes.
    __device__ __forceinline__ int block() const { return L::dq_block(c); }

    // This warp's dS^T (its 16 keys x the tile's 64 queries, fragments da)
    // into the consumer's column block of dS, transposed: query rows, keys
    // along them (16-byte chunk k of row q at chunk k ^ (q % 8)).
    __device__ __forceinline__ void store_ds(uint32_t ds, const uint32_t (&da)[4][4]) const
    {
        const int warp = tid / 32, lane = tid % 32, i = lane / 8, r = lane % 8;
        const uint32_t row = ds + c * L::Q_BLOCK + (uint32_t)(((2 * warp + i % 2) ^ r) << 4);
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            stmatrix_x4_trans(row + (uint32_t)(16 * kk + 8 * (i / 2) + r) * 128, da[kk]);
    }

    // d (the tile's 64 queries x columns 64 c ..) = dS K: dS K-major, the
    // keys' K tiles MN-major, both in shared memory; issued and committed.
    __device__ __forceinline__ void issue(float (&d)[8][4], uint32_t ds) const
    {
        const uint64_t da0 = smem_desc(ds, 16, 1024);
        const uint64_t db0 =
            smem_desc(base + L::K + block() * L::Q_BLOCK, L::KV_BLOCK, 1024);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 8; kk++)
            mma_ss_n64_t<T>(d, smem_desc_add(da0, (kk / 4) * L::Q_BLOCK + (kk % 4) * 32),
                            smem_desc_add(db0, (kk / 4) * L::TILE + (kk % 4) * 2048), kk > 0);
        wgmma_commit();
    }

    // The share d of query tile q0 of head h, with the record's hand-over
    // word w (HandItem::word: the producer's, no division here): the last
    // rank adds the sum to it once every other rank is in and writes dQ
    // (times the scale); the others stage it for the hand-over warp.
    __device__ __forceinline__ void hand_over(const Args &a, float (&d)[8][4], int64_t b, int h,
                                              int q0, uint32_t w)
    {
        const int64_t chunk = dq_chunk(a, b, h, q0 / 64) + block();
        if constexpr (ATOMIC) {
            stage(d, chunk);
            return;
        }
        const DqChunk ch(a, (int)(w & 0x7FFFFFFFu), (w >> 31) != 0u, chunk);
        if (ch.last) {
            if (tid == 0 && ch.rank > 0)
                split_sum::wait_for(ch.count, (uint32_t)ch.rank);
            consumer_sync(c);
            if (ch.rank > 0)
#pragma unroll
                for (int k = 0; k < 8; k++) {
                    const float4 x = __ldcg((const float4 *)ch.sum + 128 * k + tid);
                    d[k][0] += x.x;
                    d[k][1] += x.y;
                    d[k][2] += x.z;
                    d[k][3] += x.w;
                }
            View out = a.dq;
            out.base += (uint64_t)(64 * block()) * sizeof(T);
            const float f = (float)a.scale;
            store_rows<T, 64>(out, b, h, q0 + 16 * (tid / 32), a.lq, d, f, f, tid % 32,
                              a.d - 64 * block());
            return;
        }
        stage(d, -1);
    }

    // The share d to the consumer's staging buffer, once the copy engine
    // has read the last one: for the hand-over warp, or with ATOMIC added
    // to `chunk` of the sums here.
    __device__ __forceinline__ void stage(const float (&d)[8][4], int64_t chunk)
    {
        const uint32_t part = base + L::PART + c * L::PART_BYTES;
        const uint32_t full = base + L::PART_BARS + 16 * c, empty = full + 8;
        if (ATOMIC && staged > 0) {
            if (tid == 0)
                wait_stores_read<0>();
            consumer_sync(c);
        } else if (staged > 0) {
            mbar_wait(empty, (uint32_t)(staged - 1) & 1u);
        }
#pragma unroll
        for (int k = 0; k < 8; k++)
            store_shared16(part + 16 * (128 * k + tid),
                           make_uint4(__float_as_uint(d[k][0]), __float_as_uint(d[k][1]),
                                      __float_as_uint(d[k][2]), __float_as_uint(d[k][3])));
        fence_proxy_async_shared();
        if (ATOMIC) {
            consumer_sync(c);
            if (tid == 0) {
                bulk_add_f32((float *)dq_sum + chunk * (64 * 64), part, L::PART_BYTES);
                commit_stores();
            }
        } else {
            mbar_arrive(full);
        }
        staged++;
    }

    // ATOMIC: the consumer's additions done before the CTA ends (the
    // kernel after it reads the sums).
    __device__ __forceinline__ void finish() const
    {
        if (tid == 0)
            wait_stores_done();
    }
};

// Lane 0 of producer warp 1 + c: consumer c's dQ shares in the walk's
// order (O, as dkvq_producer), past the last ranks (the consumer writes
// those): each in its turn stored (rank 0) or added to the tile's sum by
// the copy engine, its shared memory freed once read, the tile's counter
// raised once the copy is done. Apart from the consumers, so that they
// wait for neither the turn nor the copy. At width 64 (one column block)
// consumer c has the walk's tiles n with n % 2 = c.
template <typename L, typename O>
static __device__ void dq_hand_over(const Args &a, uint32_t base, int64_t kvh, int64_t b, int c,
                                    const O &o)
{
    const uint32_t part = base + L::PART + c * L::PART_BYTES;
    const uint32_t full = base + L::PART_BARS + 16 * c, empty = full + 8;
    int staged = 0;
    bool mine_next = c == 0; // DQ_TURNS: whether the walk's next tile is this consumer's
    HandItem it{};
    for (int i = 0; i < o.steps(); i++) {
        if (!o.at(i, it))
            continue;
        if constexpr (L::DQ_TURNS) {
            const bool mine = mine_next;
            mine_next = !mine_next;
            if (!mine)
                continue;
        }
        if (it.last)
            continue;
        const DqChunk ch(a, it.rank, false,
                         dq_chunk(a, b, kvh * o.group + it.g, it.t) + L::dq_block(c));
        mbar_wait(full, (uint32_t)staged & 1u);
        if (ch.rank > 0) {
            split_sum::wait_for(ch.count, (uint32_t)ch.rank);
            fence_proxy_async_global();
            bulk_add_f32(ch.sum, part, L::PART_BYTES);
        } else {
            bulk_store(ch.sum, part, L::PART_BYTES);
        }
        commit_stores();
        wait_stores_read<0>();
        mbar_arrive(empty);
        wait_stores_done();
        fence_proxy_async_global();
        split_sum::raise(ch.count);
        staged++;
    }
}

// dk and dv of the CTA's 128 keys (64 a consumer); with FQ also dQ
// shares, handed over in DenseOrder or CausalOrder (DENSE) or, with ATOMIC,
// added as they come (any pattern, causal too): a tile that one consumer
// takes and the other does not still needs both consumers' halves of dQ,
// the other's dS zero.
//
// SEQ: keys local to sequence sq (k0 local), those past its lk get P = 0
// (a PADDED sequence's padding keys, whose rows it writes: zeros), and the
// rows stored from sq.k0 up to sq.k_out.
template <typename T, int DH, bool FQ = false, bool ATOMIC = false, bool SEQ = false>
static __device__ void dkv_consumer(const bk_attention_tma_args &p, uint32_t base, int c,
                                    int64_t k0, int64_t kvh, int64_t b, bool bad,
                                    const Seq &sq = Seq{})
{
    typedef DkvLayout<DH, FQ> L;
    constexpr int BQ = 64; // queries per tile
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, q4 = lane % 4;
    // Rows and tiles fit in int: the plan takes this path for Lq, Lk < 2^31.
    const int keys0 = (int)k0 + 64 * c;
    const int key_a = keys0 + warp * 16 + lane / 4;
    // The first query that sees each of this thread's keys, and the first
    // that sees all of the consumer's (causal).
    // SEQ: a key past the sequence's (the next sequence's, or a PADDED
    // sequence's padding) is seen by no query: P = 0, its first query
    // INT_MAX, and any such key makes every tile a diagonal one (the
    // masking as the causal diagonal's, no branch of its own).
    int begin[2], all_begin;
    bool beyond = false;
    if constexpr (SEQ) {
        begin[0] = key_a < sq.lk ? (int)query_begin(a, sq, key_a) : INT_MAX;
        begin[1] = key_a + 8 < sq.lk ? (int)query_begin(a, sq, key_a + 8) : INT_MAX;
        all_begin = (int)query_begin(a, sq, keys0 + 63);
        beyond = keys0 + 64 > sq.lk;
    } else {
        begin[0] = (int)query_begin(a, key_a);
        begin[1] = (int)query_begin(a, key_a + 8);
        all_begin = (int)query_begin(a, keys0 + 63);
    }
    const bool causal = (a.flags & BK_ATTENTION_CAUSAL) != 0;
    const uint32_t k_tile = base + L::K + c * L::TILE, v_tile = base + L::V + c * L::TILE;
    const float sl2 = (float)a.scale * LOG2E;
    // With dq: keys past Lk get P = 0 (their K rows are zeros, but 2^-lse
    // could overflow and reach dQ as NaN).
    const bool past[2] = { FQ && key_a >= a.lk, FQ && key_a + 8 >= a.lk };
    DqShare<T, L, ATOMIC> share{ base, c, tid, 0, a.dq_sum };

    float dk[DH / 8][4], dv[DH / 8][4];
    zero(dk);
    zero(dv);
    mbar_wait(base + L::BARS, 0); // K and V
    if constexpr (SEQ) {
        // Rows past the sequence's keys (but in the tensors: the engine
        // fills the rest with zeros) zeroed before dP^T = V dY^T reads them
        // (attention_unread_keys.cuh); this consumer's keys are its own.
        zero_kv_rows<L::CB>(k_tile, v_tile, L::KV_BLOCK,
                            unowned_rows(keys0, sq.lk, a.lk - sq.k0, 64), tid,
                            ZEROED_BARRIER + c);
    }
    for (int n = 0;; n++) {
        const QueryStage st = QueryStage::of<L>(base, n);
        mbar_wait(st.full, st.parity);
        const uint4 rec = read_record<FQ ? 3 : 2>(st.record); // with dq: w, the rank
        if (rec.z & TILE_END)
            break;
        const bool mine = (rec.z & TILE_TAKEN << c) != 0;
        // With dq both consumers take part in every tile of the ring: each
        // computes a half of its dQ over both consumers' keys.
        if (mine || FQ) {
            const int q0 = (int)rec.y;
            uint32_t pa[BQ / 16][4], da[BQ / 16][4];
            if (mine) {
                // S^T and dP^T issued together, P^T computed under dP^T's
                // GEMM (in F32: dS^T takes it unrounded).
                float s[BQ / 8][4], dp[BQ / 8][4];
                issue_abt<T, L>(s, k_tile, st.q_tile);
                issue_abt<T, L>(dp, v_tile, st.dy_tile);
                const bool diagonal = (causal && q0 < all_begin) || (SEQ && beyond);
                // With dq, each key's first query that sees it on this tile
                // as one bound (the queries below it get P = 0): a compare
                // and a select a score, where the two tests (the mask's and
                // past Lk) made ptxas branch on every score.
                int see[2];
#pragma unroll
                for (int k = 0; k < 2; k++)
                    see[k] = past[k] ? INT_MAX : diagonal ? begin[k] : INT_MIN;
                wgmma_wait<1>();
                fence_operand(s);
#pragma unroll
                for (int j = 0; j < BQ / 8; j++) {
                    const int col = j * 8 + 2 * q4;
                    const float2 l = load_shared_f32x2(st.stats + 4 * col);
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        s[j][e] = exp2_fast(fmaf(s[j][e], sl2, -(e & 1 ? l.y : l.x)));
                        const int q = q0 + col + (e & 1);
                        if (FQ ? q < see[e / 2] : diagonal && q < begin[e / 2])
                            s[j][e] = 0.f;
                    }
                }
                wgmma_wait<0>();
                fence_operand(dp);
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
                if constexpr (!FQ) {
                    issue_ab<T, L, BQ>(dv, pa, st.dy_tile);
                    issue_ab<T, L, BQ>(dk, da, st.q_tile);
                }
            } else {
#pragma unroll
                for (int j = 0; j < BQ / 16; j++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        pa[j][e] = da[j][e] = 0u;
            }
            // With dq: dS in buffer n % 2 (the other consumer may still
            // read the last tile's) before dV's GEMM, then half of dQ = dS K
            // each between dV and dK, so that the share is staged (in the
            // tile's order, or with ATOMIC as it comes) while dK runs. At
            // width 64, consumer n % 2 computes the tile's whole dQ (one
            // column block) and waits for the other's dS, which does not
            // wait: the next tile's turn is its own. Buffer n % 2 is
            // written again at tile n + 2 only after the consumer of tile
            // n's dQ has announced tile n + 1, past that dQ's hand-over.
            if constexpr (FQ) {
                const uint32_t ds = base + L::DS + (n & 1) * L::DS_BYTES;
                share.store_ds(ds, da);
                if (mine)
                    issue_ab<T, L, BQ>(dv, pa, st.dy_tile);
                fence_proxy_async_shared();
                if (L::DQ_TURNS && (n & 1) != c) {
                    pair_arrive(DS_STORED + (n & 1));
                    if (mine)
                        issue_ab<T, L, BQ>(dk, da, st.q_tile);
                } else {
                    if (L::DQ_TURNS)
                        pair_wait(DS_STORED + (n & 1));
                    else
                        pair_sync();
                    float dq[8][4];
                    share.issue(dq, ds);
                    if (mine) {
                        issue_ab<T, L, BQ>(dk, da, st.q_tile);
                        wgmma_wait<1>();
                    } else {
                        wgmma_wait<0>();
                    }
                    fence_operand(dq);
                    share.hand_over(a, dq, b, (int)rec.x, q0, rec.w);
                }
            }
            wgmma_wait<0>();
            fence_operand(dv);
            fence_operand(dk);
            fence_operand(pa);
            fence_operand(da);
        }
        mbar_arrive(st.empty);
    }
    if constexpr (ATOMIC)
        share.finish();
    const float nan = quiet_nan();
    const float fk = bad ? nan : (float)a.scale, fv = bad ? nan : 1.f;
    const int64_t row0 = (SEQ ? sq.k0 : 0) + keys0 + warp * 16, rows = SEQ ? sq.k_out : a.lk;
    store_rows<T, DH>(a.dk, b, kvh, row0, rows, dk, fk, fk, lane, a.d);
    store_rows<T, DH>(a.dv, b, kvh, row0, rows, dv, fv, fv, lane, a.dv_cols);
}

template <typename L> static __device__ __forceinline__ void init_dkv_barriers(uint32_t base)
{
    if (threadIdx.x == 0) {
        mbar_init(base + L::BARS, 1);
        for (int s = 0; s < L::STAGES; s++) {
            mbar_init(base + L::BARS + 8 * (1 + s), 33); // see QueryRing::emit
            mbar_init(base + L::BARS + 8 * (1 + L::STAGES + s), 256);
        }
        for (uint32_t at = L::PART_BARS; at < L::BARS_END; at += 16) {
            mbar_init(base + at, 128); // part_full: every consumer thread
            mbar_init(base + at + 8, 1); // part_empty: the hand-over warp
        }
        mbar_fence_init();
    }
    __syncthreads();
}

// The dk/dv CTA of grid x index x, z index z with sequences (SEQ): its
// sequence s and first key k0 (local); false where no keys of a sequence
// are there. PACKED, as QueryTiles::place for queries: the key slots of
// 128 over Lk / 128 + S (packed_slot), or, where the key offsets run back
// by a tile or more (packed_fallback gave rect, the tiles of the longest
// good sequence), the rectangle S x rect, tile x % rect of sequence
// x / rect, each good sequence's tiles then a CTA each exactly once. The
// plan's grid covers both (it cannot know which the offsets need); the
// CTAs past the one taken end at once.
// Tiles of R keys: 128, or the pair kernels' 64.
template <int R = 128>
static __device__ bool key_tile_place(const Args &a, uint32_t x, uint32_t z, uint32_t rect,
                                      int64_t &k0, Seq &s)
{
    if (a.seq_form == BK_ATTENTION_SEQ_PACKED && rect) {
        z = x / rect;
        x -= z * rect;
        if (z >= (uint32_t)a.seq_count)
            return false;
    } else if (a.seq_form == BK_ATTENTION_SEQ_PACKED) {
        z = packed_slot<R>(a, a.seq_k, a.seq_s[1], x);
    }
    s = sequence(a, z);
    k0 = (int64_t)x * R;
    return s.k0 + k0 < s.k_out;
}

// The dk/dv CTA's tile of R keys (grid x, kv head kvh, grid z): its first
// key k0 (SEQ: local to its sequence sq) and batch b, and whether its kv
// head's group (or sequence) is bad; false where no keys of a sequence are
// there. SEQ: every thread takes part in the check (__syncthreads_or); its
// answer made warp-uniform, so that the placement stays in uniform
// registers (else the producer's 40 spill).
template <int R, bool SEQ>
static __device__ __forceinline__ bool key_tile(const Args &a, int64_t kvh, int64_t &k0,
                                                int64_t &b, Seq &sq, bool &bad)
{
    if constexpr (SEQ) {
        const uint32_t rect = warp_uniform(packed_fallback<R>(a, a.seq_k, a.seq_s[1], a.max_lk));
        if (!key_tile_place<R>(a, blockIdx.x, blockIdx.z, rect, k0, sq))
            return false;
        b = sq.b;
        bad = sq.bad || group_bad_pb(a, sq.pb, kvh);
    } else {
        bad = group_bad(a, b, kvh);
    }
    return true;
}

// The dk/dv CTA of layout L over its tile of R keys: the barriers, the
// placement (a slot of no keys ends at once), then the producer warp's
// ring and consume(base, k0, kvh, b, bad, sq) on the consumer
// warpgroups, with the registers moved to them.
//
// What the kernel reads (lse, the row sums, a LIST's mask) comes from the
// kernels before dq, and dq lets this grid launch only once each of its
// CTAs has waited for those: so the dk/dv CTAs start at once, on the SMs
// dq's last wave leaves idle, and wait for dq only at the end, so that the
// kernels after them still find dq finished.
template <typename L, int R, bool SEQ, typename Consume>
static __device__ __forceinline__ void dkv_cta(const bk_attention_tma_args &p,
                                               const Consume &consume)
{
    const uint32_t base = warp_uniform(shared_base_1024());
    const Args &a = p.a;
    int64_t k0 = (int64_t)blockIdx.x * R, kvh = blockIdx.y, b = blockIdx.z;
    init_dkv_barriers<L>(base);
    grid_dependents_launch();
    Seq sq{};
    bool bad;
    if (!key_tile<R, SEQ>(a, kvh, k0, b, sq, bad)) {
        grid_dependency_wait_only(); // a slot of no keys: still ends after dq
        return;
    }
    if (threadIdx.x < 128) {
        producer_registers();
        if (threadIdx.x < 32)
            dkv_producer<L, false, SEQ>(p, base, (int)k0, (int)kvh, (int)b, bad, sq);
    } else {
        consumer_registers<2>();
        consume(base, k0, kvh, b, bad, sq);
        grid_dependency_wait_only(); // the CTA ends after dq
    }
}

template <typename T, int DH, bool SEQ>
static __device__ void dkv(const bk_attention_tma_args &p)
{
    dkv_cta<DkvLayout<DH>, 128, SEQ>(p, [&](uint32_t base, int64_t k0, int64_t kvh, int64_t b,
                                            bool bad, const Seq &sq) {
        dkv_consumer<T, DH, false, false, SEQ>(p, base, warp_uniform((int)threadIdx.x / 128 - 1),
                                               k0, kvh, b, bad, sq);
    });
}

// Consumer c's half of dQ for the query rows that see no key (causal,
// Lq past Lk: the tiles before key CTA 0's first): zeros, written by CTA
// 0, as no share reaches them.
template <typename T>
static __device__ void dq_unseen_rows(const Args &a, int64_t b, int64_t kvh, int c, int tiles)
{
    const int tid = threadIdx.x % 128, group = (int)(a.heads / a.kv_heads);
    float zeros[8][4];
    zero(zeros);
    View out = a.dq;
    out.base += (uint64_t)(64 * c) * sizeof(T);
    for (int g = 0; g < group; g++)
        for (int t = 0; t < tiles; t++)
            store_rows<T, 64>(out, b, kvh * group + g, t * 64 + 16 * (tid / 32), a.lq, zeros,
                              1.f, 1.f, tid % 32, a.d - 64 * c);
}

// The dk/dv-with-dq kernel's registers: the producer warpgroup's and the
// consumers' (of 3 x 128 x 168): the forward's 40 + 2 x 232, but at
// width 64 56 + 2 x 224, where the producer's walk spilled at 40.
template <int DH, bool PRODUCER> static __device__ __forceinline__ void dkvq_registers()
{
    if constexpr (DH == 128) {
        if constexpr (PRODUCER)
            producer_registers();
        else
            consumer_registers<2>();
    } else if (BK_ATTENTION_WGMMA_SETMAXNREG) {
        if constexpr (PRODUCER)
            registers_shrink_to<56>();
        else
            registers_grow_to<224>();
    }
}

// dk, dv and dq in one kernel (DENSE: 5 GEMMs a tile instead of the two
// kernels' 7), right after the row sums; the CTAs of a kv head walk and
// hand over in DenseOrder, or with the causal mask in CausalOrder (key
// CTAs in reverse grid order).
template <typename T, int DH> static __device__ void dkvq(const bk_attention_tma_args &p)
{
    typedef DkvLayout<DH, true> L;
    const uint32_t base = shared_base_1024();
    const Args &a = p.a;
    const bool causal = (a.flags & BK_ATTENTION_CAUSAL) != 0;
    const int j = causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int64_t k0 = (int64_t)j * 128, kvh = blockIdx.y, b = blockIdx.z;
    init_dkv_barriers<L>(base);
    grid_dependency_wait(); // the row sums and the zeroed counters
    if (threadIdx.x < 128) {
        dkvq_registers<DH, true>();
        const int w = (int)threadIdx.x / 32;
        if (w > 2 || (w > 0 && threadIdx.x % 32 != 0))
            return;
        if (causal) {
            const CausalOrder o(a, j);
            if (w == 0)
                dkvq_producer<L>(p, base, (int)k0, (int)kvh, (int)b, o);
            else
                dq_hand_over<L>(a, base, kvh, b, w - 1, o);
        } else {
            const DenseOrder o(a);
            if (w == 0)
                dkvq_producer<L>(p, base, (int)k0, (int)kvh, (int)b, o);
            else
                dq_hand_over<L>(a, base, kvh, b, w - 1, o);
        }
    } else {
        dkvq_registers<DH, false>();
        const int c = (int)threadIdx.x / 128 - 1;
        if (causal && j == 0 && L::dq_block(c) == c) // at width 64, consumer 0's block
            dq_unseen_rows<T>(a, b, kvh, c, (int)(query_begin(a, 0) / 64));
        dkv_consumer<T, DH, true>(p, base, c, k0, kvh, b, false);
    }
}

// dk, dv and dq in one kernel with float atomics (the plan's
// ALLOW_ATOMICS, D = 128, any pattern, causal too): the dk/dv kernel's walk,
// both consumers' dQ shares over the CTA's keys added to the F32 sums (the
// row sums' kernel zeroed them) as they come, by the consumers themselves
// (DqShare); dq_from_sum writes dQ after.
template <typename T, int DH> static __device__ void dkvq_atomic(const bk_attention_tma_args &p)
{
    typedef DkvLayout<DH, true> L;
    const uint32_t base = warp_uniform(shared_base_1024());
    const Args &a = p.a;
    const int64_t k0 = (int64_t)blockIdx.x * 128, kvh = blockIdx.y, b = blockIdx.z;
    init_dkv_barriers<L>(base);
    grid_dependency_wait(); // the row sums and the zeroed dQ sums
    grid_dependents_launch(); // dq_from_sum waits for the whole grid
    if (threadIdx.x < 128) {
        producer_registers();
        if (threadIdx.x < 32)
            dkv_producer<L, true>(p, base, (int)k0, (int)kvh, (int)b, false);
    } else {
        consumer_registers<2>();
        const int c = warp_uniform((int)threadIdx.x / 128 - 1);
        dkv_consumer<T, DH, true, true>(p, base, c, k0, kvh, b, group_bad(a, b, kvh));
    }
}

// dQ from the F32 sums of dkvq_atomic: a CTA per (64-query tile, head,
// batch), thread t of half c taking the fragments that consumer thread t
// staged (times the scale; NaN for a bad head, as dq).
template <typename T> static __device__ void dq_from_sum(const Args &a)
{
    grid_dependency_wait(); // every share added
    const int64_t t = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    const int c = (int)threadIdx.x / 128, tid = (int)threadIdx.x % 128;
    const float4 *sum = (const float4 *)((const float *)a.dq_sum + (dq_chunk(a, b, h, t) + c) *
                                                                      (64 * 64));
    float d[8][4];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const float4 x = __ldcg(sum + 128 * k + tid);
        d[k][0] = x.x, d[k][1] = x.y, d[k][2] = x.z, d[k][3] = x.w;
    }
    const bool bad = pattern_bad(a, pattern_b(a, b), pattern_h(a, h));
    const float f = bad ? quiet_nan() : (float)a.scale;
    View out = a.dq;
    out.base += (uint64_t)(64 * c) * sizeof(T);
    store_rows<T, 64>(out, b, h, t * 64 + 16 * (tid / 32), a.lq, d, f, f, tid % 32,
                      a.d - 64 * c);
}

} // namespace wg
} // namespace attention
} // namespace bk

#include "attention_wgmma_backward_pair.cuh"

// dq and dk/dv, each with a twin for plans with sequences of their own
// lengths (_seq after the width): KIND _ the 128-row kernels (widths 64
// and 128), _pair_ the pair kernels (widths 192 and 256).
#define BK_ATTENTION_WGMMA_BACKWARD_KERNELS(KIND, DQ, DKV, NAME, T, DH, SEQ, TAG)                \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_dq_wgmma##KIND##NAME##_d##DH##TAG(                                          \
            const __grid_constant__ bk_attention_tma_args p)                                     \
    {                                                                                            \
        bk::attention::wg::DQ<T, DH, SEQ>(p);                                                    \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_dkv_wgmma##KIND##NAME##_d##DH##TAG(                                         \
            const __grid_constant__ bk_attention_tma_args p)                                     \
    {                                                                                            \
        bk::attention::wg::DKV<T, DH, SEQ>(p);                                                   \
    }
#define BK_ATTENTION_WGMMA_BACKWARD(NAME, T, DH)                                                 \
    BK_ATTENTION_WGMMA_BACKWARD_KERNELS(_, dq, dkv, NAME, T, DH, false, )                        \
    BK_ATTENTION_WGMMA_BACKWARD_KERNELS(_, dq, dkv, NAME, T, DH, true, _seq)
#define BK_ATTENTION_WGMMA_BACKWARD_PAIR(NAME, T, DH)                                            \
    BK_ATTENTION_WGMMA_BACKWARD_KERNELS(_pair_, dq_pair, dkv_pair, NAME, T, DH, false, )         \
    BK_ATTENTION_WGMMA_BACKWARD_KERNELS(_pair_, dq_pair, dkv_pair, NAME, T, DH, true, _seq)

#define BK_ATTENTION_WGMMA_BACKWARD_DQ(NAME, T)                                                  \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_dkvq_wgmma_##NAME##_d128(const __grid_constant__ bk_attention_tma_args p)   \
    {                                                                                            \
        bk::attention::wg::dkvq<T, 128>(p);                                                      \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_dkvq_wgmma_##NAME##_d64(const __grid_constant__ bk_attention_tma_args p)    \
    {                                                                                            \
        bk::attention::wg::dkvq<T, 64>(p);                                                       \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_dkvq_atomic_wgmma_##NAME##_d128(                                           \
            const __grid_constant__ bk_attention_tma_args p)                                     \
    {                                                                                            \
        bk::attention::wg::dkvq_atomic<T, 128>(p);                                               \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_DQ_FROM_SUM_THREADS)             \
        bk_attention_dq_from_sum_##NAME(const __grid_constant__ bk_attention_tma_args p)         \
    {                                                                                            \
        bk::attention::wg::dq_from_sum<T>(p.a);                                                  \
    }

BK_ATTENTION_WGMMA_BACKWARD_DQ(f16, __half)
BK_ATTENTION_WGMMA_BACKWARD_DQ(bf16, __nv_bfloat16)
BK_ATTENTION_WGMMA_BACKWARD(f16, __half, 64)
BK_ATTENTION_WGMMA_BACKWARD(f16, __half, 128)
BK_ATTENTION_WGMMA_BACKWARD(bf16, __nv_bfloat16, 64)
BK_ATTENTION_WGMMA_BACKWARD(bf16, __nv_bfloat16, 128)
BK_ATTENTION_WGMMA_BACKWARD_PAIR(f16, __half, 192)
BK_ATTENTION_WGMMA_BACKWARD_PAIR(f16, __half, 256)
BK_ATTENTION_WGMMA_BACKWARD_PAIR(bf16, __nv_bfloat16, 192)
BK_ATTENTION_WGMMA_BACKWARD_PAIR(bf16, __nv_bfloat16, 256)
