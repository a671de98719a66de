// SPDX-License-Identifier: Apache-2.0
/* A development probe (not bkbench, not built by make): how fast one SM
 * takes in a weight streamed through a ring of shared-memory stages, the
 * way the 2:4 decode kernels (kernels/sparse24_decode.cuh) read theirs, by
 * each of several loaders, so that the loader that raises a CTA's intake
 * can be chosen before a kernel is rewritten. A stage is the decode
 * kernels': 8 rows of 1 KiB of W (rows K / 64 KiB apart), 8 rows of 128
 * bytes of metadata and 16 rows of 128 bytes of X (X small, read by every
 * CTA); four consumer warps only wait for a stage and free it. Loaders:
 *   tma    the copy engine: a 2D box each of W, metadata and X (as libbk)
 *   tma-w  the copy engine for W only (metadata and X not loaded)
 *   bulk   one-dimensional bulk copies, one per row
 *   async  cp.async of 16 bytes from the producer warp's 32 lanes
 *   mixed  W by the copy engine, metadata and X by cp.async
 *   tma-c  as tma, but W and metadata laid out a stage after another (a
 *          stage's 8 rows of each contiguous: another prepared layout)
 *   tma-pf, tma-c-pf  as tma and tma-c, with the W and metadata boxes of
 *          the unit PF_AHEAD on prefetched into the L2 (more of the
 *          weight asked of the memory than the ring holds)
 * Weights of M x K / 2 f16 (M = 10240, K = 8192: Llama-70B's qkv), three
 * of them rotated past the L2; CUDA events around each run, median of 20;
 * grids of 8 CTAs (a CTA's own rate) and of one and two an SM. Build and
 * run on the GPU machine:
 *   nvcc -O3 -arch=sm_90a -Ikernels -Ikernels/shared \
 *       bench/probes/intake-probe.cu -lcuda -o intake-probe && ./intake-probe */
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "shared_memory_ops.cuh"
#include "tma_ops.cuh"

#include "cuda_check.h"

using namespace bk::hopper;

enum { TMA, TMA_W, BULK, ASYNC, MIXED, TMA_C, TMA_PF, TMA_C_PF, LOADERS };
static const char *const loader_names[] = { "tma", "tma-w", "bulk", "async", "mixed", "tma-c", "tma-pf", "tma-c-pf" };

constexpr int STAGES = 9, ROWS = 8, CONSUMERS = 4, PF_AHEAD = 2 * STAGES;
constexpr uint32_t W_ROW = 1024, E_ROW = 128, X_ROWS = 16, X_ROW = 128;
constexpr uint32_t X_OFF = 0, W_OFF = X_ROWS * X_ROW, E_OFF = W_OFF + ROWS * W_ROW;
constexpr uint32_t STAGE = E_OFF + ROWS * E_ROW;  // 11 KiB
constexpr uint32_t SMEM = STAGES * STAGE + 1024 + 16 * STAGES;

struct Args {
    CUtensorMap map_w, map_e, map_x, map_wc, map_ec;
    const char *w, *e, *x;
    unsigned long long tiles, ksteps;  // tiles of 8 rows; k steps of 1 KiB of W a row
    unsigned long long w_pitch, e_pitch;
    unsigned *sink;
};

// A box of a 2-D tensor map brought into the L2 only.
static __device__ __forceinline__ void prefetch_2d(const void *map, int c0, int c1)
{
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(map),
                 "r"(c0), "r"(c1)
                 : "memory");
}

// cp.async of 16 bytes, then (per lane) an arrival on bar once they land.
static __device__ __forceinline__ void cp16(uint32_t dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
static __device__ __forceinline__ void cp_arrive(uint32_t bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(bar) : "memory");
}

template <int L> __global__ void __launch_bounds__(160) stream(const __grid_constant__ Args a)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t base = bk::shared_address(smem), ring = base + (1024u - base % 1024u) % 1024u;
    const uint32_t bars = ring + STAGES * STAGE;
    auto full = [&](uint32_t s) { return bars + 8 * s; };
    auto empty = [&](uint32_t s) { return bars + 8 * (STAGES + s); };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Every lane of the producer warp arrives where it copies with cp.async.
    constexpr bool lanes = L == ASYNC || L == MIXED;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbar_init(full(s), lanes ? 33 : 1);
            mbar_init(empty(s), CONSUMERS);
        }
        mbar_fence_init();
    }
    __syncthreads();
    const unsigned long long units = a.tiles * a.ksteps;
    const unsigned long long u0 = units * blockIdx.x / gridDim.x;
    const unsigned long long u1 = units * (blockIdx.x + 1) / gridDim.x;
    RingPos pos;
    if (warp == CONSUMERS) {
        for (unsigned long long u = u0; u < u1; u++, pos.advance(STAGES)) {
            const unsigned long long tile = u / a.ksteps, ks = u % a.ksteps;
            mbar_wait(empty(pos.s), pos.phase ^ 1u);
            const uint32_t st = ring + pos.s * STAGE, bar = full(pos.s);
            const char *w = a.w + tile * ROWS * a.w_pitch + ks * W_ROW;
            const char *e = a.e + tile * ROWS * a.e_pitch + ks * E_ROW;
            const char *x = a.x + ks * X_ROW;  // X [16][K] f16 rows of K * 2 bytes; a box's rows
            if (lane == 0) {
                const uint32_t copied = L == TMA || L == BULK || L == TMA_C || L == TMA_PF ||
                                                L == TMA_C_PF
                                            ? STAGE
                                        : L == ASYNC          ? 0
                                                              : ROWS * W_ROW;
                if (copied)
                    mbar_expect_tx(bar, copied);
                else
                    mbar_arrive(bar);
                if (L == TMA || L == TMA_W || L == MIXED)
                    tma_load_2d(st + W_OFF, &a.map_w, (int)(ks * W_ROW / 8), (int)(tile * ROWS), bar);
                if (L == TMA || L == TMA_PF) {
                    tma_load_2d(st + E_OFF, &a.map_e, (int)(ks * E_ROW / 8), (int)(tile * ROWS), bar);
                    tma_load_2d(st + X_OFF, &a.map_x, (int)(ks * X_ROW / 8), 0, bar);
                }
                if (L == TMA_PF && u + PF_AHEAD < u1) {
                    const unsigned long long v = u + PF_AHEAD, vt = v / a.ksteps, vk = v % a.ksteps;
                    prefetch_2d(&a.map_w, (int)(vk * W_ROW / 8), (int)(vt * ROWS));
                    prefetch_2d(&a.map_e, (int)(vk * E_ROW / 8), (int)(vt * ROWS));
                }
                if (L == TMA_C_PF && u + PF_AHEAD < u1) {
                    prefetch_2d(&a.map_wc, 0, (int)((u + PF_AHEAD) * ROWS));
                    prefetch_2d(&a.map_ec, 0, (int)((u + PF_AHEAD) * ROWS));
                }
                if (L == TMA_C || L == TMA_C_PF) {  // rows of [tiles][ksteps][8]
                    const int row = (int)(u * ROWS);
                    tma_load_2d(st + W_OFF, &a.map_wc, 0, row, bar);
                    tma_load_2d(st + E_OFF, &a.map_ec, 0, row, bar);
                    tma_load_2d(st + X_OFF, &a.map_x, (int)(ks * X_ROW / 8), 0, bar);
                }
                if (L == BULK) {
                    for (int r = 0; r < ROWS; r++) {
                        bulk_load(st + W_OFF + r * W_ROW, w + r * a.w_pitch, W_ROW, bar);
                        bulk_load(st + E_OFF + r * E_ROW, e + r * a.e_pitch, E_ROW, bar);
                    }
                    for (int r = 0; r < (int)X_ROWS; r++)
                        bulk_load(st + X_OFF + r * X_ROW, x + r * a.ksteps * X_ROW, X_ROW, bar);
                }
            }
            if (lanes) {
                if (L == ASYNC)  // W: 512 chunks, 16 a lane
                    for (int c = lane; c < (int)(ROWS * W_ROW / 16); c += 32)
                        cp16(st + W_OFF + 16 * c, w + (c / 64) * a.w_pitch + 16 * (c % 64));
                for (int c = lane; c < (int)(ROWS * E_ROW / 16); c += 32)  // 64 chunks
                    cp16(st + E_OFF + 16 * c, e + (c / 8) * a.e_pitch + 16 * (c % 8));
                for (int c = lane; c < (int)(X_ROWS * X_ROW / 16); c += 32)  // 128 chunks
                    cp16(st + X_OFF + 16 * c, x + (c / 8) * a.ksteps * X_ROW + 16 * (c % 8));
                cp_arrive(bar);
            }
            __syncwarp();
        }
    } else {
        unsigned acc = 0;
        for (unsigned long long u = u0; u < u1; u++, pos.advance(STAGES)) {
            mbar_wait(full(pos.s), pos.phase);
            acc ^= bk::load_shared32(ring + pos.s * STAGE + W_OFF + 4 * (threadIdx.x % 256));
            fence_proxy_async_shared();
            __syncwarp();
            if (lane == 0)
                mbar_arrive(empty(pos.s));
        }
        if (acc == 0x12345678u)
            a.sink[0] = acc;
    }
}

static void encode(CUtensorMap *map, const void *base, unsigned long long cols_u64,
                   unsigned long long rows, unsigned box_cols, unsigned box_rows)
{
    const cuuint64_t dims[2] = { cols_u64, rows }, strides[1] = { cols_u64 * 8 };
    const cuuint32_t box[2] = { box_cols, box_rows }, elem[2] = { 1, 1 };
    CUresult r = cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_UINT64, 2, (void *)base, dims,
                                        strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", (int)r);
        std::exit(1);
    }
}

template <int L> static void launch(const Args &a, int grid)
{
    stream<L><<<grid, 160, SMEM>>>(a);
}

int main()
{
    const unsigned long long m = 10240, k = 8192;
    const unsigned long long tiles = m / 16 / ROWS, ksteps = k / 64;
    const unsigned long long w_pitch = ksteps * W_ROW, e_pitch = ksteps * E_ROW;
    const size_t w_bytes = tiles * ROWS * w_pitch, e_bytes = tiles * ROWS * e_pitch;
    const size_t x_bytes = X_ROWS * ksteps * X_ROW;
    const int copies = 3, runs = 20;
    CHECK(cudaFree(0));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<Args> args(copies);
    char *x;
    unsigned *sink;
    CHECK(cudaMalloc(&x, x_bytes));
    CHECK(cudaMalloc(&sink, 4));
    CHECK(cudaMemset(x, 1, x_bytes));
    for (int c = 0; c < copies; c++) {
        char *w, *e;
        CHECK(cudaMalloc(&w, w_bytes));
        CHECK(cudaMalloc(&e, e_bytes));
        CHECK(cudaMemset(w, 1, w_bytes));
        CHECK(cudaMemset(e, 1, e_bytes));
        Args &a = args[c];
        a.w = w, a.e = e, a.x = x, a.sink = sink;
        a.tiles = tiles, a.ksteps = ksteps, a.w_pitch = w_pitch, a.e_pitch = e_pitch;
        encode(&a.map_w, w, w_pitch / 8, tiles * ROWS, W_ROW / 8, ROWS);
        encode(&a.map_e, e, e_pitch / 8, tiles * ROWS, E_ROW / 8, ROWS);
        encode(&a.map_x, x, ksteps * X_ROW / 8, X_ROWS, X_ROW / 8, X_ROWS);
        encode(&a.map_wc, w, W_ROW / 8, tiles * ksteps * ROWS, W_ROW / 8, ROWS);
        encode(&a.map_ec, e, E_ROW / 8, tiles * ksteps * ROWS, E_ROW / 8, ROWS);
    }
    void (*const fns[LOADERS])(const Args &, int) = {
        launch<TMA>,   launch<TMA_W>, launch<BULK>,   launch<ASYNC>,
        launch<MIXED>, launch<TMA_C>, launch<TMA_PF>, launch<TMA_C_PF>,
    };
    const void *kernels[LOADERS] = {
        (const void *)stream<TMA>,   (const void *)stream<TMA_W>,  (const void *)stream<BULK>,
        (const void *)stream<ASYNC>, (const void *)stream<MIXED>,  (const void *)stream<TMA_C>,
        (const void *)stream<TMA_PF>, (const void *)stream<TMA_C_PF>,
    };
    for (int l = 0; l < LOADERS; l++)
        CHECK(cudaFuncSetAttribute(kernels[l], cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    const double stage_bytes[LOADERS] = { STAGE, ROWS * W_ROW, STAGE, STAGE,
                                          STAGE, STAGE,        STAGE, STAGE };
    std::printf("intake-probe: M %llu K %llu, W %.1f MB, %d SMs, stage %u bytes, %d stages\n", m,
                k, w_bytes / 1e6, sms, STAGE, STAGES);
    std::printf("%-6s %5s %9s %9s %11s\n", "loader", "ctas", "us", "GB/s", "GB/s a CTA");
    const int grids[] = { 8, sms, 2 * sms };
    for (int round = 0; round < 2; round++)
        for (int l = 0; l < LOADERS; l++)
            for (int grid : grids) {
                std::vector<float> t;
                for (int r = 0; r < runs + 3; r++) {
                    CHECK(cudaEventRecord(t0));
                    fns[l](args[r % copies], grid);
                    CHECK(cudaEventRecord(t1));
                    CHECK(cudaEventSynchronize(t1));
                    float ms;
                    CHECK(cudaEventElapsedTime(&ms, t0, t1));
                    if (r >= 3)
                        t.push_back(ms);
                }
                CHECK(cudaGetLastError());
                std::sort(t.begin(), t.end());
                const double us = 1e3 * t[t.size() / 2];
                // Bytes a run brings: the units a grid covers (8 CTAs take all of them too).
                const double bytes = (double)tiles * ksteps * stage_bytes[l];
                std::printf("%-6s %5d %9.1f %9.0f %11.1f\n", loader_names[l], grid, us,
                            bytes / us / 1e3, bytes / us / 1e3 / grid);
            }
    return 0;
}
