// SPDX-License-Identifier: Apache-2.0
// The 2:4 sparse GEMM's Hopper decode kernels (sm_90a; module
// sparse24_wgmma includes this file), Y[b, n, m] = act(alpha X[b, n, :] .
// W[m, :] + beta C + bias) for N <= 16: the weight is read once, so the
// time is the memory's, and what matters is how much of W is in flight.
//
// The sm_80 decode tiles (sparse24_mma.cu) copy W with cp.async from every
// thread and wait at a CTA barrier each k step: on the H200 their few warps
// spend their time issuing copies and waiting (ncu: 3.9 warps an SM, DRAM
// at 48%), well short of cuSPARSELt. Here one producer lane asks the copy
// engine for whole stages (11 KiB: X[16][64] as the wgmma kernels' 128-byte
// swizzled box, and the 8 tile rows of W's values and of its metadata,
// contiguous in the prepared weight, by two plain bulk copies: 1-5% faster
// than tensor boxes of the same bytes), nine stages deep, and four consumer
// warps only read their fragments and issue
// mma.sp: warp w takes tile rows 2 w and 2 w + 1 (their A fragments: one
// 16-byte and one 4-byte shared load per k32 block, as in the sm_80
// kernel), both n8 tiles of X (ldmatrix.x4, whose rows the swizzle keeps
// free of bank conflicts: bk_sp24_x_chunk is the copy engine's 128-byte
// swizzle). Two CTAs fit an SM, but the planner gives each its own where
// it can: two on one SM share its intake and finish last.
//
// A CTA streams its share of W at about 50 GB/s whatever the rest of the
// GPU does (H200: 2.5 us + 0.22 us a k step, from one CTA to 80), so the
// CTAs have to share the k steps evenly over every SM for the memory's
// 4 TB/s. Two schedules (the planner's rule: cuda_sparse24_gemm.c): S =
// 0, stream-K: the grid's G CTAs take equal runs of the units (tile, k
// step) in order, a tile's k
// steps split wherever a run ends; a CTA's run begins with a tile's tail
// (its partial sums go to the workspace, a flag raised) and ends with a
// tile's head, which adds the tails of the CTAs after it in their order
// (the same bits on every run) and stores the tile. Heads wait only on
// tails, written first thing by CTAs that wait on nothing, and the grid
// is never more than the GPU holds at once. S >= 1 (1 or 2 where the m
// tiles times S fill the GPU evenly; 3, 4 and 8 forced only): K splits
// over the S CTAs of a cluster (rank r takes the r-th of S equal runs of
// k steps) for each m tile; rank 0 adds the others' partial tiles through
// distributed shared memory in rank order; clusters of more than two CTAs
// pack badly into the GPCs (H200: a split of 3 for 80 m tiles ran 10%
// slower than none).
#ifndef BK_SPARSE24_DECODE_CUH
#define BK_SPARSE24_DECODE_CUH

#include "shared_memory_ops.cuh"
#include "sparse24_common.cuh"
#include "split_sum_sync.cuh"
#include "tma_ops.cuh"

namespace bk_sp24_decode {

using namespace bk::hopper;

// A stage's share of the prepared weight for the 128-row block at row m0,
// k step ks, by the copy engine: the values at w_dst, the metadata right
// after them (BK_SP24_WG_W_BYTES on), each one box of the stage-major rows
// (bk_sp24_step_row). The wgmma kernels' producers, whose CTAs take blocks
// of BK_SP24_WG_BM rows (the decode producer copies the same bytes as plain
// runs: weight_step_bulk).
static_assert(BK_SP24_WG_BM == 16 * BK_SP24_BLOCK_TILE_ROWS,
              "a CTA's k step is one box of the prepared rows");
static __device__ __forceinline__ void load_weight_step(uint32_t w_dst,
                                                        const bk_sp24_wgmma_args &q, int64_t m0,
                                                        int64_t ks, int64_t kbs, uint32_t bar)
{
    const int row = (int)bk_sp24_step_row(m0, ks, kbs);
    tma_load_2d(w_dst, q.map_w, 0, row, bar);
    tma_load_2d(w_dst + BK_SP24_WG_W_BYTES, q.map_e, 0, row, bar);
}

// The same bytes by plain bulk copies (no tensor maps): a stage-major k
// step's values and metadata are each one contiguous run. Consumers of
// these copies free a stage thread by thread (Decode::consume).
static __device__ __forceinline__ void weight_step_bulk(uint32_t w_dst,
                                                        const bk_sp24_gemm_args &p, int64_t m0,
                                                        int64_t ks, uint32_t bar)
{
    const int64_t row = bk_sp24_step_row(m0, ks, p.kbs);
    const unsigned char *w = reinterpret_cast<const unsigned char *>(p.w);
    bulk_load(w_dst, w + row * (2 * BK_SP24_TILE_BYTES), BK_SP24_WG_W_BYTES, bar);
    bulk_load(w_dst + BK_SP24_WG_W_BYTES, w + p.meta_offset + row * (2 * BK_SP24_META_BYTES),
              BK_SP24_WG_E_BYTES, bar);
}

template <typename T, typename O, int S> struct Decode {
    static constexpr int BM = BK_SP24_WG_BM;             // 8 tile rows
    static constexpr int BN = BK_SP24_DECODE_BN;
    static constexpr int STAGES = BK_SP24_DECODE_STAGES;
    static constexpr int WARPS = 4;                      // consumer warps
    static constexpr int ROWS = BM / 16 / WARPS;         // tile rows a consumer warp
    static constexpr int NT = BN / 8;                    // n8 tiles
    static constexpr int CONSUMERS = 32 * WARPS;
    static constexpr uint32_t X_BYTES = BK_SP24_WG_X_BYTES(BN);
    static constexpr uint32_t W_OFF = X_BYTES, E_OFF = X_BYTES + BK_SP24_WG_W_BYTES;
    static constexpr uint32_t STAGE_BYTES = BK_SP24_DECODE_STAGE_BYTES;
    static constexpr int PITCH = BK_SP24_DECODE_OUT_PITCH;  // floats: conflict-free stores
    static_assert(BK_SP24_DECODE_THREADS == CONSUMERS + 32, "four consumers and a producer");
    static_assert(STAGE_BYTES % 1024 == 0, "stages keep the swizzle atoms aligned");
    static_assert(2 * (BK_SP24_DECODE_SMEM + 1024) <= 228 * 1024, "two CTAs fit an SM");
    static_assert(BK_SP24_PAD_M % BM == 0 && BK_SP24_PAD_K == 64,
                  "the prepared weight has whole tiles and k steps");

    const bk_sp24_gemm_args &p;
    float *staging;                                       // [BN][PITCH] floats
    uint32_t ring, bars, rank;
    int64_t m0, k0, k1;                                   // the piece's rows and k steps

    __device__ Decode(const bk_sp24_gemm_args &args, unsigned char *raw) : p(args)
    {
        const uint32_t base = bk::shared_address(raw);
        const uint32_t pad = (1024u - base % 1024u) % 1024u;  // BK_SP24_DECODE_SMEM has it
        ring = base + pad;
        staging = reinterpret_cast<float *>(raw + pad + STAGES * STAGE_BYTES);
        bars = ring + STAGES * STAGE_BYTES + BK_SP24_DECODE_STAGING_BYTES;
        rank = S > 1 ? cluster_rank() : 0;
        const int64_t ksteps = p.kbs / 2;
        m0 = (int64_t)(blockIdx.x / (S > 0 ? S : 1)) * BM;
        k0 = S > 0 ? ksteps * rank / S : 0;
        k1 = S > 0 ? ksteps * (rank + 1) / S : ksteps;
    }

    __device__ uint32_t full(uint32_t s) const { return bars + 8 * s; }
    __device__ uint32_t empty(uint32_t s) const { return bars + 8 * (STAGES + s); }

    static __device__ void consumers_sync()
    {
        asm volatile("bar.sync 1, %0;\n" ::"n"(CONSUMERS) : "memory");
    }

    // f(i, j, r) for every register of a consumer thread's sums: tile row
    // i of its warp's, n8 tile j, register r of the m16n8 fragment.
    template <typename F> static __device__ __forceinline__ void each_sum(F f)
    {
#pragma unroll
        for (int i = 0; i < ROWS; i++)
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int r = 0; r < 4; r++)
                    f(i, j, r);
    }

    // The producer warp's stages of one (batch, n tile): lane 0 copies, the
    // warp waits with it (a stage is refilled once the consumers let go).
    __device__ void produce(const bk_sp24_wgmma_args &q, int64_t b, int64_t n0, RingPos &pos,
                            int lane) const
    {
        for (int64_t ks = k0; ks < k1; ks++, pos.advance(STAGES)) {
            mbar_wait(empty(pos.s), pos.phase ^ 1u);
            if (lane == 0) {
                const uint32_t stage = ring + pos.s * STAGE_BYTES, bar = full(pos.s);
                mbar_expect_tx(bar, STAGE_BYTES);  // every box is whole (zeros past the edges)
                tma_load_3d(stage, q.map_x, (int)(ks * 64), (int)n0, (int)b, bar);
                weight_step_bulk(stage + W_OFF, p, m0, ks, bar);
            }
        }
        __syncwarp();
    }

    // Consumer warp w's sums over this CTA's k steps. Each thread frees
    // the stage after a proxy fence: its shared loads (generic proxy) are
    // ordered before the copy engine's next writes (async proxy), and an
    // arrival releases only the arriving thread's accesses (with one lane
    // arriving for its warp, racecheck saw the other lanes' loads race the
    // bulk copies' writes; tensor copies it does not check so).
    __device__ void consume(float (&acc)[ROWS][NT][4], RingPos &pos, int w, int lane) const
    {
        each_sum([&](int i, int j, int r) { acc[i][j][r] = 0.f; });
        const uint32_t a_at = W_OFF + (uint32_t)(w * ROWS) * (2 * BK_SP24_TILE_BYTES);
        const uint32_t e_at = E_OFF + (uint32_t)(w * ROWS) * (2 * BK_SP24_META_BYTES) +
                              4 * bk_sp24_meta_lane_word(lane);
        for (int64_t ks = k0; ks < k1; ks++, pos.advance(STAGES)) {
            mbar_wait(full(pos.s), pos.phase);
            const uint32_t stage = ring + pos.s * STAGE_BYTES;
#pragma unroll
            for (int sub = 0; sub < 2; sub++) {
                uint4 a[ROWS];
                uint32_t e[ROWS];
#pragma unroll
                for (int i = 0; i < ROWS; i++) {
                    a[i] = bk_sp24::load_a_fragment(stage + a_at + i * (2 * BK_SP24_TILE_BYTES),
                                                    (uint32_t)sub, (uint32_t)lane);
                    e[i] = bk::load_shared32(stage + e_at + (i * 2 + sub) * BK_SP24_META_BYTES);
                }
                uint32_t bf[NT][4];
#pragma unroll
                for (int j = 0; j < NT; j++)
                    bk::ldmatrix_x4(bf[j], stage + bk_sp24_x_chunk(j * 8 + (lane & 7),
                                                                   sub * 4 + (lane >> 3)));
#pragma unroll
                for (int i = 0; i < ROWS; i++)
#pragma unroll
                    for (int j = 0; j < NT; j++)
                        bk_sp24::SparseMma<T>::run(acc[i][j], a[i], bf[j], e[i]);
            }
            fence_proxy_async_shared();
            mbar_arrive(empty(pos.s));
        }
    }

    // Stream-K: consumer warp w's flag, and its lane's first float4 of the
    // slot of CTA cta (the layout of the wgmma kernels' workspace).
    __device__ uint64_t *flag(uint32_t cta, int w) const { return bk_sp24::sk_flag(p, cta, w); }
    __device__ float4 *slot(uint32_t cta, int w, int lane) const
    {
        return bk_sp24::sk_slot(p, cta, BK_SP24_SK_SLOT_BYTES(BN)) + w * ROWS * NT * 32 + lane;
    }

    // A warp's sums as the split_sum helpers take them: ROWS x NT blocks
    // of four floats a lane, in the order of the registers.
    using Flat = float[ROWS * NT][4];
    static __device__ Flat &flat(float (&acc)[ROWS][NT][4])
    {
        return reinterpret_cast<Flat &>(acc);
    }

    // A tail's sums to this CTA's slot under the warp's flag (tagged:
    // split_sum_sync.cuh).
    __device__ void write_partial(float (&acc)[ROWS][NT][4], int w, int lane) const
    {
        bk::split_sum::hand_over<ROWS * NT>(flat(acc), slot(blockIdx.x, w, lane),
                                            flag(blockIdx.x, w), p.sk_tag, lane);
    }

    // A head's sums plus the tails of CTAs blockIdx.x + 1 .. last, in order.
    __device__ void add_partials(float (&acc)[ROWS][NT][4], uint32_t last, int w,
                                 int lane) const
    {
        for (uint32_t from = blockIdx.x + 1; from <= last; from++)
            bk::split_sum::take_over<ROWS * NT>(flat(acc), slot(from, w, lane), flag(from, w),
                                                p.sk_tag, lane);
    }

    // Where a consumer thread's sums sit in staging ([n][m], PITCH floats
    // a row): block (i, j), register r of the m16n8 fragment.
    static __device__ int place(int w, int lane, int i, int j, int r)
    {
        const int ml = (w * ROWS + i) * 16 + lane / 4 + (r >> 1) * 8;
        const int nl = j * 8 + 2 * (lane % 4) + (r & 1);
        return nl * PITCH + ml;
    }
    __device__ void put(const float (&v)[ROWS][NT][4], int w, int lane) const
    {
        each_sum([&](int i, int j, int r) { staging[place(w, lane, i, j, r)] = v[i][j][r]; });
    }

    // The tile's sums to Y: every thread of the CTA calls it (the cluster
    // barriers count them all). Ranks other than 0 leave their partial
    // sums in their staging buffer; rank 0's consumer threads add, in rank
    // order, the other ranks' sums at their own fragment's places (all of
    // a rank's loads issued before any is used: one round trip over the
    // cluster a rank, where a loop of dependent loads took sixteen: H200,
    // o N = 16 f16 1.40x -> 1.48x dense), then store the tile. Rank 0
    // arrives on the cluster barrier once it has read them, before its
    // store: no rank reuses or leaves its staging buffer before that.
    __device__ void finish(const float (&acc)[ROWS][NT][4], bool consumer, int w, int lane,
                           int64_t b, int64_t n0) const
    {
        if (consumer) {
            if (S <= 1)
                consumers_sync();  // the last tile's stores have read the buffer
            if (S <= 1 || rank != 0)
                put(acc, w, lane);
        }
        if (S > 1)
            cluster_sync();
        else if (consumer)
            consumers_sync();
        float sum[ROWS][NT][4];
        if (S > 1 && consumer && rank == 0) {
            const uint32_t base = bk::shared_address(staging);
            each_sum([&](int i, int j, int r) { sum[i][j][r] = acc[i][j][r]; });
#pragma unroll 1
            for (int from = 1; from < S; from++) {
                float v[ROWS][NT][4];
                each_sum([&](int i, int j, int r) {
                    v[i][j][r] = load_cluster_f32(base + 4u * (uint32_t)place(w, lane, i, j, r),
                                                  (uint32_t)from);
                });
                each_sum([&](int i, int j, int r) { sum[i][j][r] += v[i][j][r]; });
            }
        }
        // Rank 0 has read the other ranks' sums: they may go on (or end)
        // while it stores the tile.
        if (S > 1)
            cluster_arrive();
        if (consumer && rank == 0) {
            const int tid = (int)threadIdx.x;
            if (S > 1) {
                put(sum, w, lane);
                consumers_sync();
            }
            if (p.y_cs == 1)
                bk_sp24::store_tile_runs<O, BM, BN>(p, b, m0, n0, staging, PITCH, tid, CONSUMERS);
            else
                bk_sp24::store_tile<O, BM, BN>(p, b, m0, n0, staging, PITCH, tid, CONSUMERS);
        }
        if (S > 1)
            cluster_wait();
    }

    __device__ void run(const bk_sp24_wgmma_args &q)
    {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const bool consumer = warp < WARPS;
        if (threadIdx.x == 0) {
            for (int s = 0; s < STAGES; s++) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), CONSUMERS);
            }
            mbar_fence_init();
        }
        bk::grid_dependency_wait();
        __syncthreads();
        RingPos pos;
        if constexpr (S == 0) {
            run_stream_k(q, consumer, warp, lane, pos);
        } else {
            for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z)
                for (uint32_t nt = 0; nt < p.n_tiles; nt++) {
                    const int64_t n0 = (int64_t)nt * BN;
                    float acc[ROWS][NT][4];
                    if (consumer)
                        consume(acc, pos, warp, lane);
                    else
                        produce(q, b, n0, pos, lane);
                    finish(acc, consumer, warp, lane, b, n0);
                }
        }
    }

    // Stream-K: this CTA's run of the units (tile t, k step s) = t ksteps +
    // s, tiles in order of m, then n, then batch (CTAs at work together
    // read the same X); a run's pieces: whole tiles, at most one tail
    // first and one head last.
    __device__ void run_stream_k(const bk_sp24_wgmma_args &q, bool consumer, int warp, int lane,
                                 RingPos &pos)
    {
        const uint64_t ksteps = (uint64_t)(p.kbs / 2), ctas = gridDim.x;
        const uint64_t units = (uint64_t)p.m_tiles * p.n_tiles * (uint64_t)p.batch * ksteps;
        const uint64_t end = units * (blockIdx.x + 1) / ctas;
        for (uint64_t u = units * blockIdx.x / ctas; u < end;) {
            const uint64_t tile = u / ksteps, rest = tile / p.m_tiles;
            k0 = (int64_t)(u - tile * ksteps);
            k1 = (int64_t)(end - u < ksteps - (uint64_t)k0 ? (uint64_t)k0 + end - u : ksteps);
            m0 = (int64_t)(tile - rest * p.m_tiles) * BM;
            const int64_t n0 = (int64_t)(rest % p.n_tiles) * BN, b = (int64_t)(rest / p.n_tiles);
            u += (uint64_t)(k1 - k0);
            if (!consumer) {
                produce(q, b, n0, pos, lane);
                continue;
            }
            float acc[ROWS][NT][4];
            consume(acc, pos, warp, lane);
            if (k0 != 0) {  // a tail
                write_partial(acc, warp, lane);
                continue;
            }
            if ((uint64_t)k1 != ksteps)  // a head: the last CTA with a piece of the tile
                add_partials(acc, (uint32_t)(((tile + 1) * ksteps * ctas - 1) / units), warp,
                             lane);
            finish(acc, true, warp, lane, b, n0);
        }
    }
};

}  // namespace bk_sp24_decode

// Kernels: bk_sp24_decode_<type>_<out>_128x16_s<S>, S of BK_SP24_DECODE_SPLITS
// (a grid of the m tiles times S in x by the batches in z), and
// bk_sp24_decode_<type>_<out>_128x16_sk, stream-K (no clusters, a grid of
// at most what the GPU holds at once, in x).
#define BK_SP24_DECODE_BODY(T, O, S)                                                          \
    {                                                                                         \
        extern __shared__ __align__(128) unsigned char smem[];                                \
        bk_sp24_decode::Decode<T, O, S> d(q.a, smem);                                         \
        d.run(q);                                                                             \
    }
#define BK_SP24_DECODE_SPLIT_KERNEL(TNAME, T, ONAME, O, S)                                     \
    extern "C" __global__ void __cluster_dims__(S, 1, 1)                                      \
    __launch_bounds__(BK_SP24_DECODE_THREADS, 2)                                              \
        bk_sp24_decode_##TNAME##_##ONAME##_128x16_s##S(                                       \
            const __grid_constant__ bk_sp24_wgmma_args q) BK_SP24_DECODE_BODY(T, O, S)
#define BK_SP24_DECODE_SK_KERNEL(TNAME, T, ONAME, O, UNUSED)                                   \
    extern "C" __global__ void __launch_bounds__(BK_SP24_DECODE_THREADS, 2)                   \
        bk_sp24_decode_##TNAME##_##ONAME##_128x16_sk(                                         \
            const __grid_constant__ bk_sp24_wgmma_args q) BK_SP24_DECODE_BODY(T, O, 0)
#define BK_SP24_DECODE_TYPES(KERNEL, S)                                          \
    KERNEL(f16, __half, f16, __half, S)                                          \
    KERNEL(f16, __half, f32, float, S)                                           \
    KERNEL(bf16, __nv_bfloat16, bf16, __nv_bfloat16, S)                          \
    KERNEL(bf16, __nv_bfloat16, f32, float, S)
#define BK_SP24_DECODE_SPLIT_TYPES(S) BK_SP24_DECODE_TYPES(BK_SP24_DECODE_SPLIT_KERNEL, S)

#endif  // BK_SPARSE24_DECODE_CUH
