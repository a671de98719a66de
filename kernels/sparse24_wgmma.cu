// SPDX-License-Identifier: Apache-2.0
// Module sparse24_wgmma: the 2:4 sparse GEMM on Hopper's sparse tensor
// cores (sm_90a), Y[b, n, m] = act(alpha X[b, n, :] . W[m, :] + beta C +
// bias), F16 and BF16 with f32 sums.
//
// wgmma.sp takes the sparse operand as A, so the weight is A (m: output
// features, 64 rows a warpgroup) and X is B (n: rows of X, K-major, as the
// bulk tensor copy engine lays it out with the 128-byte swizzle). The
// prepared weight's values are already wgmma's unswizzled K-major operand
// (sparse24_args.h: a warpgroup's 64 rows of a k32 block are one
// descriptor), so the tensor cores read A from shared memory themselves;
// each consumer lane loads only its metadata word for sparsity selector 0
// (one 4-byte shared load per k32 block). The copy engine brings the
// weight's tiles as plain rows (8 tile rows of 1 KiB, 8 of 128 bytes of
// metadata per 64-wide k step).
//
// Warp-specialised: the first thread of warpgroup 0 fills the ring, two
// consumer warpgroups (m rows 0-63 and 64-127) each run one m64nBNk32 per
// k32 block. A consumer keeps one k step's group in flight: its metadata
// registers come in two sets (the loop unrolled by two), and it waits for
// step ks - 1's group, releases that stage and loads step ks + 1's
// metadata while step ks's runs.
//
// Clusters of two CTAs along m (CL = 2) share X: each CTA loads half of
// X's rows and multicasts them to both, so a stage is free again only when
// the consumers of both CTAs have released it (they arrive on the empty
// barriers of every CTA of the cluster). That halves X's traffic from L2,
// which at 128 x 256 tiles is three quarters of the total.
//
// The epilogue goes through shared memory: where the run has a map of Y
// (F16/BF16, unit m stride, only alpha to apply) each consumer warpgroup
// stores its part by the copy engine (epilogue_by_copy); else runs of 8
// consecutive m per thread with 16-byte stores where Y's m stride is 1
// (store_tile_runs), else element by element (store_tile). The sums run in
// a fixed order: the same bits on every run.
#include "shared_memory_ops.cuh"
#include "sparse24_common.cuh"
#include "sparse24_decode.cuh"
#include "split_sum_sync.cuh"
#include "tma_ops.cuh"
#include "wgmma_ops.cuh"

namespace {

using namespace bk::hopper;

template <typename T, int BN> struct SparseWgmma;
template <typename T> struct SparseWgmma<T, 128> {
    static __device__ __forceinline__ void run(float (&d)[16][4], uint64_t da, uint64_t db,
                                               uint32_t e)
    {
        mma_sp_ss_n128_k<T>(d, da, db, e);
    }
};
template <typename T> struct SparseWgmma<T, 256> {
    static __device__ __forceinline__ void run(float (&d)[32][4], uint64_t da, uint64_t db,
                                               uint32_t e)
    {
        mma_sp_ss_n256_k<T>(d, da, db, e);
    }
};

// A warp's metadata words for one 64-wide k step (its two k32 blocks).
struct AMeta {
    uint32_t e[2];
};

// Persistent: each cluster of CL CTAs walks the tiles t = its index, + the
// number of clusters, ... (every batch's m-tile pairs by n tiles, in
// tile_coords' order), then, where the last round's tiles are split along
// K, its piece of one (stream-K: the schedule in sparse24_args.h), the producer running on into the next
// tile while the consumers finish this one through a staging buffer of
// their own.
template <typename T, typename O, int BN, int STAGES, int CL> struct SpGemm {
    static constexpr int BM = BK_SP24_WG_BM;
    static constexpr uint32_t X_BYTES = BK_SP24_WG_X_BYTES(BN);
    static constexpr uint32_t X_PART = X_BYTES / CL;  // the rows of X each CTA of a cluster loads
    static constexpr uint32_t W_OFF = X_BYTES, E_OFF = X_BYTES + BK_SP24_WG_W_BYTES;
    static constexpr uint32_t STAGE_BYTES = BK_SP24_WG_STAGE_BYTES(BN);
    static constexpr uint32_t TX = STAGE_BYTES;  // every box is whole (zeros past the edges)
    static constexpr int NT = BN / 8;            // accumulator tiles of 8 columns (n)
    static constexpr int OUT_PITCH = BK_SP24_WG_OUT_PITCH;  // floats: conflict-free stores
    static constexpr int PASS_N = BK_SP24_WG_PASS_N;        // n rows per epilogue pass
    static_assert(STAGE_BYTES % 1024 == 0, "stages keep the swizzle atoms aligned");
    static_assert(BK_SP24_WG_SMEM(BN, STAGES) <= 227 * 1024, "fits the H100's shared memory");
    static_assert(X_PART % 1024 == 0, "each CTA's part of X keeps the swizzle atoms aligned");
    static_assert(BN % PASS_N == 0 && PASS_N % 8 == 0, "whole accumulator tiles per pass");
    static_assert(BK_SP24_PAD_M % BM == 0 && BK_SP24_PAD_K == 64,
                  "the prepared weight has whole tiles and k steps");

    const bk_sp24_gemm_args &p;
    float *staging;                              // [PASS_N][OUT_PITCH] floats
    uint32_t ring, bars;
    uint32_t rank, cluster, clusters;            // this CTA in its cluster; the clusters
    uint32_t pair_tiles;                         // per batch
    int64_t ksteps;

    // Set per tile.
    int64_t b, m0, n0;

    __device__ SpGemm(const bk_sp24_gemm_args &args, unsigned char *raw) : p(args)
    {
        const uint32_t base = bk::shared_address(raw);
        const uint32_t pad = (1024u - base % 1024u) % 1024u;  // BK_SP24_WG_SMEM has the slack
        ring = warp_uniform(base + pad);  // uniform descriptors (wgmma_ops.cuh)
        staging = reinterpret_cast<float *>(raw + pad + STAGES * STAGE_BYTES);
        bars = ring + STAGES * STAGE_BYTES + BK_SP24_WG_STAGING_BYTES;
        rank = CL > 1 ? cluster_rank() : 0;
        cluster = blockIdx.x / CL;
        clusters = gridDim.x / CL;
        pair_tiles = p.m_tiles / CL * p.n_tiles;
        ksteps = p.kbs / 2;
    }

    // f(t, k0, k1, last) for each piece of this cluster's work in order:
    // k steps k0 .. k1 - 1 of tile t, whose last piece is cluster last's.
    template <typename F> __device__ void for_each_piece(F f) const
    {
        const uint32_t steps = (uint32_t)ksteps, split = p.sk_split;
        for (uint32_t t = cluster; t < p.dp_tiles; t += clusters)
            f(t, 0u, steps, cluster);
        if (split != 0 && cluster < (pair_tiles * (uint32_t)p.batch - p.dp_tiles) * split) {
            const uint32_t i = cluster / split, j = cluster % split;
            f(p.dp_tiles + i, j * steps / split, (j + 1) * steps / split, i * split + split - 1);
        }
    }

    // Tile t's batch and corner: a cluster's CTAs take consecutive m tiles
    // of one n tile.
    __device__ void set_tile(uint32_t t)
    {
        uint32_t mt, nt;
        bk_sp24::tile_coords(p.m_tiles / CL, p.n_tiles, t % pair_tiles, mt, nt);
        b = t / pair_tiles;
        m0 = (int64_t)(mt * CL + rank) * BM;
        n0 = (int64_t)nt * BN;
    }

    __device__ uint32_t full(uint32_t s) const { return bars + 8 * s; }
    __device__ uint32_t empty(uint32_t s) const { return bars + 8 * (STAGES + s); }

    // A stage is refilled once every consumer warp of the cluster has
    // released it (the first pass over the ring waits for nothing: parity 1
    // of a fresh barrier counts as complete).
    __device__ void produce(const bk_sp24_wgmma_args &q)
    {
        RingPos pos;
        for_each_piece([&](uint32_t t, uint32_t k0, uint32_t k1, uint32_t) {
            set_tile(t);
            const int x_row = (int)n0 + (int)rank * (BN / CL);
            for (int ks = (int)k0; ks < (int)k1; ks++, pos.advance(STAGES)) {
                mbar_wait(empty(pos.s), pos.phase ^ 1u);
                const uint32_t stage = ring + pos.s * STAGE_BYTES, bar = full(pos.s);
                mbar_expect_tx(bar, TX);
                // X's rows are shared by the cluster: each CTA loads its
                // part into every CTA (the stage is free in all: release).
                if (CL > 1)
                    tma_load_3d_multicast(stage + rank * X_PART, q.map_x, (int)(ks * 64), x_row,
                                          (int)b, bar, (uint16_t)((1u << CL) - 1));
                else
                    tma_load_3d(stage, q.map_x, (int)(ks * 64), x_row, (int)b, bar);
                bk_sp24_decode::load_weight_step(stage + W_OFF, q, m0, ks, p.kbs, bar);
            }
        });
    }

    // The metadata words of the warp (at e_at of a stage) for the k step in
    // the stage at pos, once it has landed.
    __device__ void load_meta(AMeta &f, const RingPos &pos, uint32_t e_at) const
    {
        mbar_wait(full(pos.s), pos.phase);
        const uint32_t stage = ring + pos.s * STAGE_BYTES;
#pragma unroll
        for (int kk = 0; kk < 2; kk++)
            f.e[kk] = bk::load_shared32(stage + e_at + kk * BK_SP24_META_BYTES);
    }

    // K step ks (of n; stage at pos) with metadata cur (loaded) and the
    // warpgroup's A at a_at of the stage; then, its group left in flight,
    // step ks - 1's group waited for (its stage, prev, released) and step
    // ks + 1's metadata loaded into nxt. pos and prev advance by one step.
    __device__ void step(float (&acc)[NT][4], AMeta &cur, AMeta &nxt, int ks, int n, RingPos &pos,
                         RingPos &prev, uint32_t a_at, uint32_t e_at, int lane) const
    {
        if (ks >= n)
            return;
        const uint32_t stage = ring + pos.s * STAGE_BYTES;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 2; kk++)
            SparseWgmma<T, BN>::run(
                acc,
                smem_desc_plain(stage + a_at + 2 * BK_SP24_CORE_K_BYTES * kk,
                                BK_SP24_CORE_K_BYTES, BK_SP24_CORE_M_BYTES),
                smem_desc(stage + 64 * kk, 16, 1024), cur.e[kk]);
        wgmma_commit();
        wgmma_wait<1>();
        if (ks > 0) {
            release(prev.s, lane);
            prev.advance(STAGES);
        }
        pos.advance(STAGES);
        if (ks + 1 < n)
            load_meta(nxt, pos, e_at);
    }

    // A piece's n k steps from the ring at pos (left past them).
    __device__ void consume(float (&acc)[NT][4], RingPos &pos, int n, int wi, int w,
                            int lane) const
    {
        // Warpgroup wi's rows: tile rows 4 wi .. 4 wi + 3 of the stage's 8.
        const uint32_t a_at = W_OFF + 4 * wi * (2 * BK_SP24_TILE_BYTES);
        const uint32_t e_at = E_OFF + (4 * wi + w) * (2 * BK_SP24_META_BYTES) +
                              4 * bk_sp24_meta_lane_word(lane);
        RingPos prev = pos;
        AMeta f0, f1;
        load_meta(f0, pos, e_at);
        for (int ks = 0; ks < n; ks += 2) {
            step(acc, f0, f1, ks, n, pos, prev, a_at, e_at, lane);
            step(acc, f1, f0, ks + 1, n, pos, prev, a_at, e_at, lane);
        }
        wgmma_wait<0>();
        fence_operand(acc);
        release(prev.s, lane);
    }

    // A consumer warp is done with stage s: it tells every CTA of the
    // cluster, whose producers refill their part of X in all of them.
    __device__ void release(uint32_t s, int lane) const
    {
        __syncwarp();
        if (lane == 0) {
            if (CL > 1) {
#pragma unroll
                for (int r = 0; r < CL; r++)
                    mbar_arrive_cluster(empty(s), (uint32_t)r);
            } else {
                mbar_arrive(empty(s));
            }
        }
    }

    // Stream-K: consumer warp cw's flag and its lane's first float4 of the
    // slot of CTA cta.
    __device__ uint64_t *flag(uint32_t cta, int cw) const { return bk_sp24::sk_flag(p, cta, cw); }
    __device__ float4 *slot(uint32_t cta, int cw, int lane) const
    {
        return bk_sp24::sk_slot(p, cta, BK_SP24_SK_SLOT_BYTES(BN)) + cw * NT * 32 + lane;
    }

    // A piece's sums (one that does not start the tile) to this CTA's
    // slot under the warp's flag (tagged: split_sum_sync.cuh).
    __device__ void write_partial(const float (&acc)[NT][4], int cw, int lane) const
    {
        bk::split_sum::hand_over<NT>(acc, slot(blockIdx.x, cw, lane), flag(blockIdx.x, cw),
                                     p.sk_tag, lane);
    }

    // The head of a split tile: its sums plus the other pieces', in the
    // order of the clusters after this one up to last, each once written.
    __device__ void add_partials(float (&acc)[NT][4], uint32_t last, int cw, int lane) const
    {
        for (uint32_t from = blockIdx.x + CL; from <= last * CL + rank; from += CL)
            bk::split_sum::take_over<NT>(acc, slot(from, cw, lane), flag(from, cw), p.sk_tag,
                                         lane);
    }

    // The consumers' products to Y through the staging buffer, PASS_N rows
    // of n at a time: both write theirs as [PASS_N][OUT_PITCH] floats, then
    // store them (named barrier 1: the 256 consumer threads; the first
    // also keeps this tile from overwriting the last one's staging before
    // it is stored).
    __device__ void epilogue(const float (&acc)[NT][4], int wi, int w, int lane) const
    {
        const int ml = 64 * wi + 16 * w + lane / 4;
#pragma unroll
        for (int pass = 0; pass < BN / PASS_N; pass++) {
            asm volatile("bar.sync 1, 256;\n" ::: "memory");
#pragma unroll
            for (int jj = 0; jj < PASS_N / 8; jj++) {
                const int j = pass * (PASS_N / 8) + jj;
                const int nl = 8 * jj + 2 * (lane % 4);
                staging[nl * OUT_PITCH + ml] = acc[j][0];
                staging[(nl + 1) * OUT_PITCH + ml] = acc[j][1];
                staging[nl * OUT_PITCH + ml + 8] = acc[j][2];
                staging[(nl + 1) * OUT_PITCH + ml + 8] = acc[j][3];
            }
            asm volatile("bar.sync 1, 256;\n" ::: "memory");
            const int64_t n_pass = n0 + pass * PASS_N;
            if (p.y_cs == 1)
                bk_sp24::store_tile_runs<O, BM, PASS_N>(p, b, m0, n_pass, staging, OUT_PITCH,
                                                        threadIdx.x - 128, 256);
            else
                bk_sp24::store_tile<O, BM, PASS_N>(p, b, m0, n_pass, staging, OUT_PITCH,
                                                   threadIdx.x - 128, 256);
        }
    }

    // Y by the copy engine (BK_SP24_Y_MAP): consumer warpgroup wi turns its
    // 64 m x Y_BOX_N n of a pass into O, writes them transposed with
    // stmatrix into a 128-byte-swizzled box of its own (two, alternating),
    // and its first thread stores the box. A box is written again once the
    // engine has read it; the warpgroups need not wait for each other, nor
    // for the stores to land.
    static constexpr int YN = BK_SP24_WG_Y_BOX_N;
    static constexpr uint32_t Y_BOX_BYTES = YN * 128;  // 64 m of 2 bytes a row
    static_assert(4 * Y_BOX_BYTES <= BK_SP24_WG_STAGING_BYTES, "two boxes a consumer");
    static_assert(BN % YN == 0 && YN % 16 == 0, "whole pairs of accumulator tiles per box");

    // alpha lo and alpha hi as two O in one word.
    __device__ uint32_t pack(float lo, float hi) const
    {
        return bk_sp24::pack2<O>(bk_sp24::mul_rn(p.alpha, lo), bk_sp24::mul_rn(p.alpha, hi));
    }

    __device__ void epilogue_by_copy(const float (&acc)[NT][4], const bk_sp24_wgmma_args &q,
                                     int wi, int w, int lane) const
    {
        const uint32_t boxes = bk::shared_address(staging) + (uint32_t)wi * 2 * Y_BOX_BYTES;
        const bool issuer = threadIdx.x % 128 == 0;
        // Lane 8 i + r names row r of matrix i: n tile jj + i / 2, m rows
        // 16 w + 8 (i % 2) .. + 7 (16-byte chunk 2 w + i % 2 of a box row).
        const uint32_t i = (uint32_t)lane / 8, r = (uint32_t)lane % 8;
        const uint32_t chunk = 2u * (uint32_t)w + i % 2;
#pragma unroll
        for (int pass = 0; pass < BN / YN; pass++) {
            const uint32_t box = boxes + (uint32_t)(pass % 2) * Y_BOX_BYTES;
            if (issuer)
                wait_stores_read<1>();
            asm volatile("bar.sync %0, 128;\n" ::"r"(2 + wi) : "memory");
#pragma unroll
            for (int jj = 0; jj < YN / 8; jj += 2) {
                const int j = pass * (YN / 8) + jj;
                const uint32_t nl = 8u * ((uint32_t)jj + i / 2) + r;
                bk::stmatrix_x4_trans(box + nl * 128u + ((chunk ^ (nl % 8u)) * 16u),
                                      pack(acc[j][0], acc[j][1]), pack(acc[j][2], acc[j][3]),
                                      pack(acc[j + 1][0], acc[j + 1][1]),
                                      pack(acc[j + 1][2], acc[j + 1][3]));
            }
            fence_proxy_async_shared();
            asm volatile("bar.sync %0, 128;\n" ::"r"(2 + wi) : "memory");
            if (issuer) {
                tma_store_3d(q.map_y, box, (int)m0 + 64 * wi, (int)n0 + pass * YN, (int)b);
                commit_stores();
            }
        }
    }

    __device__ void run(const bk_sp24_wgmma_args &q)
    {
        const int warp = warp_uniform((int)threadIdx.x / 32), lane = threadIdx.x % 32,
                  wg = warp / 4;
        if (threadIdx.x == 0) {
            for (int s = 0; s < STAGES; s++) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), 8 * CL);  // the consumer warps of the cluster
            }
            mbar_fence_init();
        }
        bk::grid_dependency_wait();
        // Every CTA's barriers are ready before any copy or arrival from
        // another reaches them.
        if (CL > 1)
            cluster_sync();
        else
            __syncthreads();
        if (wg == 0) {
            registers_shrink_to<40>();
            if (threadIdx.x == 0)
                produce(q);
        } else {
            registers_grow_to<232>();
            RingPos pos;
            const int cw = warp - 4;  // consumer warp 0 .. 7
            for_each_piece([&](uint32_t t, uint32_t k0, uint32_t k1, uint32_t last) {
                set_tile(t);
                float acc[NT][4];
#pragma unroll
                for (int j = 0; j < NT; j++)
#pragma unroll
                    for (int r = 0; r < 4; r++)
                        acc[j][r] = 0.f;
                consume(acc, pos, (int)(k1 - k0), wg - 1, warp % 4, lane);
                if (k0 > 0) {
                    write_partial(acc, cw, lane);
                    return;
                }
                if (k1 < (uint32_t)ksteps)
                    add_partials(acc, last, cw, lane);
                if constexpr (sizeof(O) == 2) {  // the host maps only 16-bit Y
                    if (p.flags & BK_SP24_Y_MAP) {
                        epilogue_by_copy(acc, q, wg - 1, warp % 4, lane);
                        return;
                    }
                }
                epilogue(acc, wg - 1, warp % 4, lane);
            });
            // The shared memory the stores read stays until they are done.
            if ((p.flags & BK_SP24_Y_MAP) && threadIdx.x % 128 == 0)
                wait_stores_done();
        }
        // The other CTAs' copies into and arrivals on this one are done.
        if (CL > 1)
            cluster_sync();
    }
};

}  // namespace

// Kernels: bk_sp24_wgmma_<type>_<out>_128x<BN>, the tilings of
// BK_SP24_WG_TILINGS (sparse24_args.h); the grid is the m x n tiles (x)
// by the batches (z).
#define BK_SP24_WG_KERNEL1(TNAME, T, ONAME, O, BN, STAGES, CL)                                \
    extern "C" __global__ void __cluster_dims__(CL, 1, 1)                                      \
    __launch_bounds__(BK_SP24_WG_THREADS, 1)                                                   \
        bk_sp24_wgmma_##TNAME##_##ONAME##_128x##BN##_c##CL(                                    \
            const __grid_constant__ bk_sp24_wgmma_args q)                                      \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        SpGemm<T, O, BN, STAGES, CL> g(q.a, smem);                                             \
        g.run(q);                                                                              \
    }
#define BK_SP24_WG_KERNEL(TNAME, T, ONAME, O, BN, STAGES) \
    BK_SP24_WG_KERNEL1(TNAME, T, ONAME, O, BN, STAGES, 1) \
    BK_SP24_WG_KERNEL1(TNAME, T, ONAME, O, BN, STAGES, 2)

#define BK_SP24_WG_TYPES(BN, STAGES)                                            \
    BK_SP24_WG_KERNEL(f16, __half, f16, __half, BN, STAGES)                     \
    BK_SP24_WG_KERNEL(f16, __half, f32, float, BN, STAGES)                      \
    BK_SP24_WG_KERNEL(bf16, __nv_bfloat16, bf16, __nv_bfloat16, BN, STAGES)     \
    BK_SP24_WG_KERNEL(bf16, __nv_bfloat16, f32, float, BN, STAGES)

BK_SP24_WG_TILINGS(BK_SP24_WG_TYPES)

// The decode kernels for N <= 16 (sparse24_decode.cuh).
BK_SP24_DECODE_SPLITS(BK_SP24_DECODE_SPLIT_TYPES)
BK_SP24_DECODE_TYPES(BK_SP24_DECODE_SK_KERNEL, 0)
