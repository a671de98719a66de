// SPDX-License-Identifier: Apache-2.0
// The Hopper attention backward at widths 192 and 256 (D and Dv padded to
// them): the pair kernels. At these widths the dk/dv kernel's two F32
// accumulators of 64 keys take 2 x 96 or 2 x 128 registers a thread, and
// dq's Q and dY fragments beside dQ as many: more than a consumer
// warpgroup has. So a CTA owns 64 rows (keys, or queries) and its two
// consumers share them, each with its own GEMMs:
// - dk/dv: consumer 0 computes S^T = K Q^T and P^T, and holds dV += P^T dY;
//   consumer 1 computes dP^T = V dY^T, takes P^T from consumer 0 through
//   shared memory, and holds dK += dS^T Q, dS^T = P^T (dP^T - rowsum). P^T
//   crosses once a tile, one way; each consumer does two of the tile's four
//   GEMMs.
// - dq: consumer 0 computes S = Q K^T and P, consumer 1 dP = dY V^T and dS
//   (P from consumer 0), and each holds its share of dQ's column blocks,
//   dQ += dS K (dS from consumer 1): two hand-overs a tile.
// The walks are the 128-row kernels' (dkv_producer with one key block;
// the forward's walk with one 64-row consumer and 64-key tiles), and the
// results as deterministic: each output has one writer. With sequences
// of their own lengths (SEQ: the _seq twins) tiles are
// placed as the 128-row kernels' are, with 64-row slots.
#ifndef BK_ATTENTION_WGMMA_BACKWARD_PAIR_CUH
#define BK_ATTENTION_WGMMA_BACKWARD_PAIR_CUH

namespace bk {
namespace attention {
namespace wg {

// Named barriers of the pair kernels' hand-overs (four from each first
// id; 0 is __syncthreads, 1-3 the other backward kernels'; pair_arrive and
// pair_wait in attention_wgmma_backward.cu).
constexpr int PAIR_BAR_P = 4, PAIR_BAR_DS = 8;

// A consumer warpgroup's 64 x 64 tile of T as wgmma A fragments (f[kk]:
// the 16 columns from 16 kk, as pack2 builds them) to and from a buffer
// of 64 rows of 128 bytes, 16-byte chunk k of row r at k ^ (r % 8).
static __device__ __forceinline__ uint32_t fragment_row(uint32_t buf, int kk, int warp, int lane)
{
    const int r = warp * 16 + lane % 16, chunk = 2 * kk + lane / 16;
    return buf + (uint32_t)(r * 128 + ((chunk ^ (r % 8)) << 4));
}

// A one-way hand-over of such tiles from one consumer to the other, use u
// in buffer u % 2: named barrier bar + u % 2 says it is written, bar + 2 +
// u % 2 that it was read. A named barrier pairs one arrival with one
// wait, so the sender also waits for the last two reads (close).
struct Exchange {
    uint32_t buf;
    int bar;
    static constexpr uint32_t BYTES = 64 * 128;

    __device__ __forceinline__ void send(int u, const uint32_t (&f)[4][4], int warp,
                                         int lane) const
    {
        if (u >= 2)
            pair_wait(bar + 2 + (u & 1));
        const uint32_t at = buf + (uint32_t)(u & 1) * BYTES;
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            stmatrix_x4(fragment_row(at, kk, warp, lane), f[kk]);
        pair_arrive(bar + (u & 1));
    }
    __device__ __forceinline__ void receive(int u, uint32_t (&f)[4][4], int warp, int lane) const
    {
        pair_wait(bar + (u & 1));
        const uint32_t at = buf + (uint32_t)(u & 1) * BYTES;
#pragma unroll
        for (int kk = 0; kk < 4; kk++)
            ldmatrix_x4(f[kk], fragment_row(at, kk, warp, lane));
        pair_arrive(bar + 2 + (u & 1));
    }
    __device__ __forceinline__ void close(int uses) const
    {
        if (uses >= 2)
            pair_wait(bar + 2 + (uses & 1));
        if (uses >= 1)
            pair_wait(bar + 2 + ((uses - 1) & 1));
    }
};

// ---------------------------------------------------------------- dq

// The forward's ring for one 64-row tile (NC = 1 for the walk; both
// consumers take every tile: eight warps free each stage) of 64-key
// tiles: Q and dY, K and V stages, the P and dS hand-overs, records and
// barriers.
template <int DH> struct PairDqLayout {
    static constexpr int NC = 1;
    static constexpr int CB = DH / 64;
    static constexpr int STAGES = BK_ATTENTION_WGMMA_PAIR_STAGES(DH);
    static constexpr int ROW_OPERANDS = 2;
    static constexpr bool V_LAGS = false;
    static constexpr uint32_t Q_BLOCK = ROWS * 128, KV_BLOCK = SLOT * 128;
    static constexpr uint32_t Q_BYTES = CB * Q_BLOCK, KV_BYTES = CB * KV_BLOCK;
    static constexpr uint32_t Q = 0;
    static constexpr uint32_t K = 2 * Q_BYTES;
    static constexpr uint32_t V = K + STAGES * KV_BYTES;
    static constexpr uint32_t P = V + STAGES * KV_BYTES;
    static constexpr uint32_t DS = P + 2 * Exchange::BYTES;
    static constexpr uint32_t RECORDS = DS + 2 * Exchange::BYTES;
    static constexpr uint32_t BARS = RECORDS + 16 * BK_ATTENTION_WGMMA_RECORD_SLOTS(STAGES);
    static constexpr uint32_t BYTES = BARS + 8 * (2 + 4 * STAGES) + 1024;
    static_assert(BYTES == BK_ATTENTION_WGMMA_PAIR_DQ_SHARED_BYTES(DH),
                  "the plan asks for the shared memory this layout takes");
    static_assert(BYTES <= 232448, "a CTA's shared memory on sm_90");
};

// Consumer C of the pair dq kernel over the CTA's query tiles: S (C = 0,
// from Q's fragments) or dP (C = 1, from dY's) against each key tile,
// then its column blocks of dQ += dS K: consumer 0 the first
// ceil(CB / 2), consumer 1 the rest.
template <typename T, int DH, int C, bool SEQ>
static __device__ void dq_pair_consumer(const bk_attention_tma_args &p,
                                        const QueryTiles<1, SEQ, PairDqLayout<DH>::BYTES - 1024> &tiles,
                                        uint32_t base)
{
    typedef PairDqLayout<DH> L;
    constexpr int NB0 = (L::CB + 1) / 2, NB = C ? L::CB - NB0 : NB0, B0 = C ? NB0 : 0;
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, q4 = lane % 4;
    const Exchange p_share{ base + L::P, PAIR_BAR_P }, ds_share{ base + L::DS, PAIR_BAR_DS };
    const float sl2 = (float)a.scale * LOG2E;
    int n = 0, use = 0, used = 0;
    for (uint32_t item = tiles.first(a); item < tiles.end(a); item = tiles.next(a, item)) {
        int64_t r0, h, b;
        bool bad;
        Seq sq;
        if (!query_tile<SEQ>(a, tiles, item, r0, h, b, sq, bad))
            continue;
        uint32_t f[L::CB * 4][4];
        mbar_wait(base + L::BARS, (uint32_t)use & 1u); // Q and dY
        load_row_fragments<L>(f, base + L::Q + C * L::Q_BYTES, warp, lane);
        release_row_operands<L>(base);
        const DqRows<SEQ> rs(a, sq, b, h, r0, r0 + warp * 16 + lane / 4);
        float acc[NB * 8][4];
        zero(acc);
        for (;; n++) {
            const Stage st = Stage::of<L>(base, n);
            mbar_wait(st.k_full, st.parity);
            const uint4 rec = read_record(st.record);
            if (!(rec.z & TILE_TAKEN)) { // the record of no tile
                release_skipped<L>(st, n);
                if (rec.z & (TILE_END | TILE_LAST)) {
                    n++;
                    break;
                }
                continue;
            }
            const int64_t kh = (int32_t)rec.x;
            mbar_wait(st.v_full, st.parity);
            if constexpr (SEQ) // rows past the sequence's keys (attention_unread_keys.cuh)
                zero_kv_rows<L::CB>(st.k_tile, st.v_tile, L::KV_BLOCK,
                                    unowned_rows(kh, sq.lk, a.lk - sq.k0, SLOT), tid,
                                    ZEROED_BARRIER + C);
            float x[SLOT / 8][4];
            issue_fragments_bt<T, L, SLOT>(x, f, C ? st.v_tile : st.k_tile);
            wgmma_wait<0>();
            fence_operand(x);
            uint32_t ds[SLOT / 16][4];
            if constexpr (C == 0) {
                // P, zero past Lk and the causal limit (where the tile may pass them).
                int bound[2];
                rs.template bounds<SLOT>(kh, q4, bound);
                uint32_t pa[SLOT / 16][4];
#pragma unroll
                for (int j = 0; j < SLOT / 8; j++) {
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        x[j][e] = exp2_fast(fmaf(x[j][e], sl2, -rs.lse2[e / 2]));
                        if (j * 8 + (e & 1) >= bound[e / 2])
                            x[j][e] = 0.f;
                    }
                    pa[j / 2][(j % 2) * 2] = pack2<T>(x[j][0], x[j][1]);
                    pa[j / 2][(j % 2) * 2 + 1] = pack2<T>(x[j][2], x[j][3]);
                }
                p_share.send(used, pa, warp, lane);
                ds_share.receive(used, ds, warp, lane);
            } else {
                uint32_t pf[SLOT / 16][4];
                p_share.receive(used, pf, warp, lane);
#pragma unroll
                for (int j = 0; j < SLOT / 8; j++) {
                    const float2 lo = unpack2<T>(pf[j / 2][(j % 2) * 2]),
                                 hi = unpack2<T>(pf[j / 2][(j % 2) * 2 + 1]);
                    ds[j / 2][(j % 2) * 2] =
                        pack2<T>(lo.x * (x[j][0] - rs.rsum[0]), lo.y * (x[j][1] - rs.rsum[0]));
                    ds[j / 2][(j % 2) * 2 + 1] =
                        pack2<T>(hi.x * (x[j][2] - rs.rsum[1]), hi.y * (x[j][3] - rs.rsum[1]));
                }
                ds_share.send(used, ds, warp, lane);
            }
            issue_ab<T, L, SLOT, NB>(acc, ds, st.k_tile + B0 * L::KV_BLOCK);
            wgmma_wait<0>();
            fence_operand(acc);
            fence_operand(ds);
            release(st.k_empty);
            release(st.v_empty);
            used++;
            if (rec.z & TILE_LAST) {
                n++;
                break;
            }
        }
        const float fs = bad ? quiet_nan() : (float)a.scale;
        View out = a.dq;
        out.base += (uint64_t)(64 * B0) * sizeof(T);
        if constexpr (SEQ)
            store_rows<T, NB * 64>(out, b, h, sq.q0 + r0 + warp * 16, sq.q_out, acc, fs, fs, lane,
                                   a.d - 64 * B0);
        else
            store_rows<T, NB * 64>(out, b, h, r0 + warp * 16, a.lq, acc, fs, fs, lane,
                                   a.d - 64 * B0);
        use++;
    }
    if constexpr (C == 0)
        p_share.close(used);
    else
        ds_share.close(used);
}

template <typename T, int DH, bool SEQ>
static __device__ void dq_pair(const bk_attention_tma_args &p)
{
    typedef PairDqLayout<DH> L;
    const uint32_t base = warp_uniform(shared_base_1024());
    init_ring<L, 8>(base);
    __syncthreads();
    grid_dependency_wait(); // the row sums (and a LIST's mask) come from the kernels before
    const QueryTiles<1, SEQ, L::BYTES - 1024> tiles(p.a);
    if (threadIdx.x < 128) {
        producer_registers();
        if (threadIdx.x < 32)
            produce_tiles<L, SEQ>(p, base, tiles);
    } else {
        consumer_registers<2>();
        if (threadIdx.x < 256)
            dq_pair_consumer<T, DH, 0, SEQ>(p, tiles, base);
        else
            dq_pair_consumer<T, DH, 1, SEQ>(p, tiles, base);
    }
}

// ---------------------------------------------------------------- dk/dv

// The dk/dv ring (QueryStage, QueryRing, dkv_producer) for one 64-key
// block: K and V, the Q and dY stages, the P^T hand-over, the statistics,
// records and barriers (kv_full, then full and empty per stage).
template <int DH> struct PairDkvLayout {
    static constexpr int CB = DH / 64;
    static constexpr int KEY_BLOCKS = 1;
    static constexpr int STAGES = BK_ATTENTION_WGMMA_PAIR_STAGES(DH);
    static constexpr uint32_t Q_BLOCK = 64 * 128, KV_BLOCK = Q_BLOCK, TILE = CB * Q_BLOCK;
    static constexpr uint32_t K = 0, V = TILE, Q = 2 * TILE;
    static constexpr uint32_t DY = Q + STAGES * TILE;
    static constexpr uint32_t P = DY + STAGES * TILE;
    static constexpr uint32_t STATS = P + 2 * Exchange::BYTES;
    static constexpr uint32_t RECORDS = STATS + STAGES * 512;
    static constexpr uint32_t BARS = RECORDS + 16 * STAGES;
    static constexpr uint32_t PART_BARS = BARS + 8 * (1 + 2 * STAGES), BARS_END = PART_BARS;
    static constexpr uint32_t BYTES = BARS_END + 1024;
    static_assert(BYTES == BK_ATTENTION_WGMMA_PAIR_DKV_SHARED_BYTES(DH),
                  "the plan asks for the shared memory this layout takes");
    static_assert(BYTES <= 232448, "a CTA's shared memory on sm_90");
};

// Consumer C of the pair dk/dv kernel: S^T and P^T, dV += P^T dY (C = 0),
// or dP^T, dS^T and dK += dS^T Q (C = 1), over every query tile the ring
// brings.
template <typename T, int DH, int C, bool SEQ>
static __device__ void dkv_pair_consumer(const bk_attention_tma_args &p, uint32_t base,
                                         int64_t k0, int64_t kvh, int64_t b, bool bad,
                                         const Seq &sq)
{
    typedef PairDkvLayout<DH> L;
    constexpr int BQ = 64; // queries per tile
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, q4 = lane % 4;
    // Rows and tiles fit in int: the plan takes this path for Lq, Lk < 2^31.
    const int keys0 = (int)k0, key_a = keys0 + warp * 16 + lane / 4;
    // The first query that sees each of this thread's keys, and the first
    // that sees all of the CTA's (causal). SEQ: as dkv_consumer's (a key
    // past the sequence's is seen by no query, and makes every tile a
    // diagonal one).
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
    const float sl2 = (float)a.scale * LOG2E;
    const Exchange p_share{ base + L::P, PAIR_BAR_P };
    float acc[DH / 8][4]; // dV (C = 0) or dK
    zero(acc);
    mbar_wait(base + L::BARS, 0); // K and V
    if constexpr (SEQ) // rows past the sequence's keys (attention_unread_keys.cuh)
        zero_kv_rows<L::CB>(base + L::K, base + L::V, L::KV_BLOCK,
                            unowned_rows(keys0, sq.lk, a.lk - sq.k0, 64), tid, ZEROED_BARRIER + C);
    int used = 0;
    for (int n = 0;; n++) {
        const QueryStage st = QueryStage::of<L>(base, n);
        mbar_wait(st.full, st.parity);
        const uint4 rec = read_record(st.record);
        if (rec.z & TILE_END)
            break;
        if (rec.z & TILE_TAKEN) {
            const int q0 = (int)rec.y;
            float x[BQ / 8][4];
            issue_abt<T, L>(x, base + (C ? L::V : L::K), C ? st.dy_tile : st.q_tile);
            wgmma_wait<0>();
            fence_operand(x);
            uint32_t f[BQ / 16][4];
            if constexpr (C == 0) {
                const bool diagonal = (causal && q0 < all_begin) || (SEQ && beyond);
#pragma unroll
                for (int j = 0; j < BQ / 8; j++) {
                    const int col = j * 8 + 2 * q4;
                    const float2 l = load_shared_f32x2(st.stats + 4 * col);
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        x[j][e] = exp2_fast(fmaf(x[j][e], sl2, -(e & 1 ? l.y : l.x)));
                        if (diagonal && q0 + col + (e & 1) < begin[e / 2])
                            x[j][e] = 0.f;
                    }
                    f[j / 2][(j % 2) * 2] = pack2<T>(x[j][0], x[j][1]);
                    f[j / 2][(j % 2) * 2 + 1] = pack2<T>(x[j][2], x[j][3]);
                }
                p_share.send(used, f, warp, lane);
                issue_ab<T, L, BQ>(acc, f, st.dy_tile);
            } else {
                uint32_t pf[BQ / 16][4];
                p_share.receive(used, pf, warp, lane);
#pragma unroll
                for (int j = 0; j < BQ / 8; j++) {
                    const int col = j * 8 + 2 * q4;
                    const float2 rs = load_shared_f32x2(st.stats + 256 + 4 * col);
                    const float2 lo = unpack2<T>(pf[j / 2][(j % 2) * 2]),
                                 hi = unpack2<T>(pf[j / 2][(j % 2) * 2 + 1]);
                    f[j / 2][(j % 2) * 2] =
                        pack2<T>(lo.x * (x[j][0] - rs.x), lo.y * (x[j][1] - rs.y));
                    f[j / 2][(j % 2) * 2 + 1] =
                        pack2<T>(hi.x * (x[j][2] - rs.x), hi.y * (x[j][3] - rs.y));
                }
                issue_ab<T, L, BQ>(acc, f, st.q_tile);
            }
            wgmma_wait<0>();
            fence_operand(acc);
            fence_operand(f);
            used++;
        }
        mbar_arrive(st.empty);
    }
    if constexpr (C == 0)
        p_share.close(used);
    const float nan = quiet_nan();
    const int64_t row0 = (SEQ ? sq.k0 : 0) + keys0 + warp * 16, rows = SEQ ? sq.k_out : a.lk;
    if constexpr (C == 0) {
        const float fv = bad ? nan : 1.f;
        store_rows<T, DH>(a.dv, b, kvh, row0, rows, acc, fv, fv, lane, a.dv_cols);
    } else {
        const float fk = bad ? nan : (float)a.scale;
        store_rows<T, DH>(a.dk, b, kvh, row0, rows, acc, fk, fk, lane, a.d);
    }
}

template <typename T, int DH, bool SEQ>
static __device__ void dkv_pair(const bk_attention_tma_args &p)
{
    dkv_cta<PairDkvLayout<DH>, 64, SEQ>(p, [&](uint32_t base, int64_t k0, int64_t kvh, int64_t b,
                                               bool bad, const Seq &sq) {
        if (threadIdx.x < 256)
            dkv_pair_consumer<T, DH, 0, SEQ>(p, base, k0, kvh, b, bad, sq);
        else
            dkv_pair_consumer<T, DH, 1, SEQ>(p, base, k0, kvh, b, bad, sq);
    });
}

} // namespace wg
} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_WGMMA_BACKWARD_PAIR_CUH
