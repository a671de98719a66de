// SPDX-License-Identifier: Apache-2.0
/* A development probe (not bkbench, not built by make): does a 2:4 decode
 * kernel that reads its weight with ordinary 16-byte loads from many warps
 * (as cuBLASLt's dense GEMV does, at ~82% of the DRAM's peak) stream the
 * o projection's prepared weight faster than the copy-engine ring libbk's
 * decode kernels use (~64%)? Nothing is multiplied: each loader only
 * brings the bytes and folds them into a register, so what is timed is
 * how fast the weight arrives.
 *
 * The weight is laid out as libbk prepares it (stage-major: unit u, one
 * k step of a 128-row block, is 8 KiB of values at u * 8 KiB and 1 KiB of
 * metadata at u * 1 KiB of a second region), 8192 x 8192 f16 at 2:4 (75.5
 * MB), three copies rotated past the L2; CUDA events around each run as
 * bkbench times, median of 30. A CTA takes an equal run of units.
 *   bulk      libbk's loader: one producer lane, 9 stages of 8 KiB + 1 KiB
 *             + X's 2 KiB (from the L2) by plain bulk copies, four
 *             consumer warps that wait and free
 *   bulk-nox  the same without X
 *   ldg W/U/P W warps, each lane U 16-byte loads of values (and lanes 0-3
 *             of metadata) a batch; P = 1 issues the next batch before
 *             folding this one (two in flight), P = 0 one batch
 * Build and run on the GPU machine:
 *   nvcc -O3 -arch=sm_90a -Ikernels -Ikernels/shared bench/probes/ldg-probe.cu -o ldg-probe && ./ldg-probe */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "shared_memory_ops.cuh"
#include "tma_ops.cuh"

#include "cuda_check.h"

using namespace bk::hopper;

constexpr uint32_t W_UNIT = 8192, E_UNIT = 1024, X_UNIT = 2048;
constexpr int STAGES = 9, CONSUMERS = 4;
constexpr uint32_t STAGE = W_UNIT + E_UNIT + X_UNIT;
constexpr uint32_t RING_SMEM = STAGES * STAGE + 1024 + 16 * STAGES;

struct Args {
    const unsigned char *w, *e, *x;
    unsigned long long units;
    unsigned *sink;
};

template <bool WITH_X> __global__ void __launch_bounds__(160) ring(const __grid_constant__ Args a)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t base = bk::shared_address(smem), st0 = base + (1024u - base % 1024u) % 1024u;
    const uint32_t bars = st0 + STAGES * STAGE;
    auto full = [&](uint32_t s) { return bars + 8 * s; };
    auto empty = [&](uint32_t s) { return bars + 8 * (STAGES + s); };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), CONSUMERS * 32);
        }
        mbar_fence_init();
    }
    __syncthreads();
    const unsigned long long u0 = a.units * blockIdx.x / gridDim.x;
    const unsigned long long u1 = a.units * (blockIdx.x + 1) / gridDim.x;
    RingPos pos;
    if (warp == CONSUMERS) {
        for (unsigned long long u = u0; u < u1; u++, pos.advance(STAGES)) {
            mbar_wait(empty(pos.s), pos.phase ^ 1u);
            if (lane == 0) {
                const uint32_t st = st0 + pos.s * STAGE, bar = full(pos.s);
                mbar_expect_tx(bar, WITH_X ? STAGE : W_UNIT + E_UNIT);
                bulk_load(st, a.w + u * W_UNIT, W_UNIT, bar);
                bulk_load(st + W_UNIT, a.e + u * E_UNIT, E_UNIT, bar);
                if (WITH_X)
                    bulk_load(st + W_UNIT + E_UNIT, a.x + (u % 64) * X_UNIT, X_UNIT, bar);
            }
            __syncwarp();
        }
    } else {
        unsigned acc = 0;
        for (unsigned long long u = u0; u < u1; u++, pos.advance(STAGES)) {
            mbar_wait(full(pos.s), pos.phase);
            acc ^= bk::load_shared32(st0 + pos.s * STAGE + 4 * (threadIdx.x % 256));
            fence_proxy_async_shared();
            mbar_arrive(empty(pos.s));
        }
        if (acc == 0x12345678u)
            a.sink[0] = acc;
    }
}

static __device__ __forceinline__ uint4 ldg16(const void *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// A batch of U units for one warp: its value chunks (CHUNKS of 512 bytes a
// unit) and, lanes 0-3, its share of the metadata.
template <int W, int U> struct Batch {
    static constexpr int CHUNKS = 16 / W;
    uint4 v[U][CHUNKS], m[U];
    __device__ void load(const Args &a, unsigned long long u, unsigned long long u1, int warp,
                         int lane)
    {
#pragma unroll
        for (int i = 0; i < U; i++) {
            const unsigned long long at = u + i < u1 ? u + i : u1 - 1;
#pragma unroll
            for (int c = 0; c < CHUNKS; c++)
                v[i][c] = ldg16(a.w + at * W_UNIT + (warp * CHUNKS + c) * 512 + lane * 16);
            m[i] = lane < 64 / W ? ldg16(a.e + at * E_UNIT + warp * (1024 / W) + lane * 16)
                                 : make_uint4(0, 0, 0, 0);
        }
    }
    __device__ unsigned fold() const
    {
        unsigned acc = 0;
#pragma unroll
        for (int i = 0; i < U; i++) {
#pragma unroll
            for (int c = 0; c < CHUNKS; c++)
                acc ^= v[i][c].x ^ v[i][c].y ^ v[i][c].z ^ v[i][c].w;
            acc ^= m[i].x ^ m[i].y ^ m[i].z ^ m[i].w;
        }
        return acc;
    }
};

template <int W, int U, int P> __global__ void __launch_bounds__(32 * W) ldg(const __grid_constant__ Args a)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const unsigned long long u0 = a.units * blockIdx.x / gridDim.x;
    const unsigned long long u1 = a.units * (blockIdx.x + 1) / gridDim.x;
    unsigned acc = 0;
    if (P == 0) {
        for (unsigned long long u = u0; u < u1; u += U) {
            Batch<W, U> b;
            b.load(a, u, u1, warp, lane);
            acc ^= b.fold();
        }
    } else {
        // Two batches in flight: ping-pong, no register copies.
        Batch<W, U> x, y;
        x.load(a, u0, u1, warp, lane);
        for (unsigned long long u = u0; u < u1; u += 2 * U) {
            const bool more = u + U < u1;
            if (more)
                y.load(a, u + U, u1, warp, lane);
            acc ^= x.fold();
            if (u + 2 * U < u1)
                x.load(a, u + 2 * U, u1, warp, lane);
            if (more)
                acc ^= y.fold();
        }
    }
    if (acc == 0x12345678u)
        a.sink[0] = acc;
}

struct Loader {
    const char *name;
    const void *fn;
    int threads;
    uint32_t smem;
    double bytes_a_unit;
};

int main()
{
    const unsigned long long m = 8192, k = 8192, units = m / 128 * (k / 64);
    const size_t w_bytes = units * W_UNIT, e_bytes = units * E_UNIT, x_bytes = 64 * X_UNIT;
    const int copies = 3, runs = 30;
    CHECK(cudaFree(0));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<Args> args(copies);
    unsigned char *x;
    unsigned *sink;
    CHECK(cudaMalloc(&x, x_bytes));
    CHECK(cudaMalloc(&sink, 4));
    CHECK(cudaMemset(x, 1, x_bytes));
    for (int c = 0; c < copies; c++) {
        unsigned char *w, *e;
        CHECK(cudaMalloc(&w, w_bytes));
        CHECK(cudaMalloc(&e, e_bytes));
        CHECK(cudaMemset(w, 1, w_bytes));
        CHECK(cudaMemset(e, 1, e_bytes));
        args[c] = Args{ w, e, x, units, sink };
    }
    const double wb = W_UNIT + E_UNIT;
    const Loader loaders[] = {
        { "bulk", (const void *)ring<true>, 160, RING_SMEM, wb },
        { "bulk-nox", (const void *)ring<false>, 160, RING_SMEM, wb },
        { "ldg 8/4/0", (const void *)ldg<8, 4, 0>, 256, 0, wb },
        { "ldg 8/8/0", (const void *)ldg<8, 8, 0>, 256, 0, wb },
        { "ldg 8/4/1", (const void *)ldg<8, 4, 1>, 256, 0, wb },
        { "ldg 16/4/0", (const void *)ldg<16, 4, 0>, 512, 0, wb },
        { "ldg 16/8/0", (const void *)ldg<16, 8, 0>, 512, 0, wb },
        { "ldg 16/16/0", (const void *)ldg<16, 16, 0>, 512, 0, wb },
        { "ldg 16/4/1", (const void *)ldg<16, 4, 1>, 512, 0, wb },
        { "ldg 16/8/1", (const void *)ldg<16, 8, 1>, 512, 0, wb },
    };
    for (const Loader &l : loaders)
        if (l.smem)
            CHECK(cudaFuncSetAttribute(l.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       l.smem));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    std::printf("ldg-probe: o 8192 x 8192 2:4 f16, W+E %.1f MB a copy, %d copies, %d SMs\n",
                (w_bytes + e_bytes) / 1e6, copies, sms);
    std::printf("%-12s %5s %9s %9s %12s\n", "loader", "ctas", "us/run", "GB/s", "us b2b");
    const int grids[] = { 128, sms, 2 * sms };
    for (int round = 0; round < 2; round++)
        for (const Loader &l : loaders)
            for (int grid : grids) {
                std::vector<float> t;
                for (int r = 0; r < runs + 3; r++) {
                    void *params[] = { &args[r % copies] };
                    CHECK(cudaEventRecord(t0));
                    CHECK(cudaLaunchKernel(l.fn, grid, l.threads, params, l.smem, 0));
                    CHECK(cudaEventRecord(t1));
                    CHECK(cudaEventSynchronize(t1));
                    float ms;
                    CHECK(cudaEventElapsedTime(&ms, t0, t1));
                    if (r >= 3)
                        t.push_back(ms);
                }
                CHECK(cudaGetLastError());
                // Back to back: 30 runs between two events.
                CHECK(cudaEventRecord(t0));
                for (int r = 0; r < runs; r++) {
                    void *params[] = { &args[r % copies] };
                    CHECK(cudaLaunchKernel(l.fn, grid, l.threads, params, l.smem, 0));
                }
                CHECK(cudaEventRecord(t1));
                CHECK(cudaEventSynchronize(t1));
                float b2b;
                CHECK(cudaEventElapsedTime(&b2b, t0, t1));
                std::sort(t.begin(), t.end());
                const double us = 1e3 * t[t.size() / 2];
                std::printf("%-12s %5d %9.2f %9.0f %12.2f\n", l.name, grid, us,
                            units * l.bytes_a_unit / us / 1e3, 1e3 * b2b / runs);
            }
    return 0;
}
