// SPDX-License-Identifier: Apache-2.0
/* A development probe (not bkbench, not built by make): how fast the
 * Hopper tensor cores take one wgmma shape when nothing else runs, to tell
 * a kernel's instruction mix from its memory. Two warpgroups a CTA (as the
 * libbk kernels' consumers), one CTA an SM, each issuing the same
 * 64-wide k step again and again from one shared-memory tile (random
 * values, 128-byte swizzled, K-major) with one group in flight:
 *   sp  wgmma.mma_async.sp m64nNk32, A (2:4 sparse) in registers, x2 a step
 *   rs  wgmma m64nNk16, A in registers, x4 a step
 *   ss  wgmma m64nNk16, A in shared memory too, x4 a step
 * and prints dense-equivalent TFLOP/s (2 x 64 x N x 64 a step a warpgroup)
 * per shape, median of 9 timed launches. The 2:4 kernels' tiles of 256
 * rows (doc/design/gemm.md, "Tried and rejected") asked whether narrower
 * instructions cost more per product. Build and run on the GPU machine:
 *   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Ikernels \
 *        bench/probes/wgmma-width-probe.cu \
 *        -o wgmma-width-probe && ./wgmma-width-probe */
#include <algorithm>
#include <cstdio>
#include <vector>

#include "cuda_check.h"
#include "wgmma_ops.cuh"

using namespace bk::hopper;

enum Kind { SP, RS, SS };

constexpr int STEPS = 4096;
constexpr int THREADS = 256;
constexpr int SMEM = 160 * 1024;  // one CTA an SM
constexpr uint32_t B_AT = 0, A_AT = 64 * 1024;  // B: up to 256 rows x 128 B; A: 64 x 128 B

template <Kind K, int N> struct Shape;
template <int N> struct Shape<SP, N> {
    static __device__ void step(float (&d)[N / 8][4], const uint32_t (&a)[4], uint32_t smem)
    {
        const uint32_t e = 0x44444444u;  // kept values 0 and 1 of every group of four
#pragma unroll
        for (int kk = 0; kk < 2; kk++) {
            const uint64_t db = smem_desc(smem + B_AT + 64 * kk, 16, 1024);
            if constexpr (N == 128)
                mma_sp_rs_n128_k<__half>(d, a, db, e);
            else if constexpr (N == 160)
                mma_sp_rs_n160_k<__half>(d, a, db, e);
            else if constexpr (N == 192)
                mma_sp_rs_n192_k<__half>(d, a, db, e);
            else
                mma_sp_rs_n256_k<__half>(d, a, db, e);
        }
    }
};
template <int N> struct Shape<RS, N> {
    static __device__ void step(float (&d)[N / 8][4], const uint32_t (&a)[4], uint32_t smem)
    {
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            const uint64_t db = smem_desc(smem + B_AT + 32 * kk, 16, 1024);
            if constexpr (N == 64)
                mma_rs_n64_k<__half>(d, a, db);
            else if constexpr (N == 128)
                mma_rs_n128_k<__half>(d, a, db);
            else
                mma_rs_n256_k<__half>(d, a, db);
        }
    }
};
template <int N> struct Shape<SS, N> {
    static __device__ void step(float (&d)[N / 8][4], const uint32_t (&)[4], uint32_t smem)
    {
#pragma unroll
        for (int kk = 0; kk < 4; kk++) {
            const uint64_t da = smem_desc(smem + A_AT + 32 * kk, 16, 1024);
            const uint64_t db = smem_desc(smem + B_AT + 32 * kk, 16, 1024);
            if constexpr (N == 64)
                mma_ss_n64<__half>(d, da, db, 1);
            else if constexpr (N == 128)
                mma_ss_n128<__half>(d, da, db, 1);
            else
                mma_ss_n192<__half>(d, da, db, 1);
        }
    }
};

template <Kind K, int N> __global__ void __launch_bounds__(THREADS, 1)
    width(const uint4 *random, float *out)
{
    extern __shared__ __align__(1024) unsigned char smem[];
    // Random operands: the tensor cores' power (and so the clock under a
    // power cap) follows the bits they switch.
    uint4 *s = reinterpret_cast<uint4 *>(smem);
    for (int i = threadIdx.x; i < (int)((A_AT + 64 * 128) / 16); i += THREADS)
        s[i] = random[i];
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    uint32_t a[4];
    const uint4 r = random[threadIdx.x];
    a[0] = r.x, a[1] = r.y, a[2] = r.z, a[3] = r.w;
    float d[N / 8][4];
#pragma unroll
    for (int j = 0; j < N / 8; j++)
#pragma unroll
        for (int q = 0; q < 4; q++)
            d[j][q] = 0.f;
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    for (int st = 0; st < STEPS; st++) {
        wgmma_fence();
        Shape<K, N>::step(d, a, base);
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    fence_operand(d);
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < N / 8; j++)
        sum += d[j][0] + d[j][3];
    if (sum == 1234.5f)  // keeps the products
        out[threadIdx.x] = sum;
}

template <Kind K, int N> void time_shape(const char *name, const uint4 *random, float *out,
                                         int sms)
{
    auto *fn = width<K, N>;
    CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int i = 0; i < 11; i++) {
        CHECK(cudaEventRecord(e0));
        fn<<<sms, THREADS, SMEM>>>(random, out);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float t;
        CHECK(cudaEventElapsedTime(&t, e0, e1));
        if (i >= 2)
            ms.push_back(t);
    }
    CHECK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    const double flop = 2.0 * 64 * N * 64 * STEPS * 2 * sms;
    std::printf("%s n%d: %.3f ms, %.1f dense-equivalent TFLOP/s\n", name, N, ms[ms.size() / 2],
                flop / (ms[ms.size() / 2] * 1e-3) / 1e12);
}

int main()
{
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<uint4> host(SMEM / 16);
    uint32_t x = 12345;
    for (auto &v : host) {
        uint32_t w[4];
        for (auto &u : w) {  // f16 pairs in [-1, 1): sign, exponent 0x38-0x3b, any mantissa
            x = x * 1664525u + 1013904223u;
            u = (x & 0x83ff83ffu) | 0x38003800u | ((x >> 8) & 0x0c000c00u);
        }
        v = make_uint4(w[0], w[1], w[2], w[3]);
    }
    uint4 *random;
    float *out;
    CHECK(cudaMalloc(&random, SMEM));
    CHECK(cudaMalloc(&out, THREADS * sizeof(float)));
    CHECK(cudaMemcpy(random, host.data(), SMEM, cudaMemcpyHostToDevice));
    for (int round = 0; round < 2; round++) {
        time_shape<SP, 128>("sp", random, out, sms);
        time_shape<SP, 160>("sp", random, out, sms);
        time_shape<SP, 192>("sp", random, out, sms);
        time_shape<SP, 256>("sp", random, out, sms);
        time_shape<RS, 64>("rs", random, out, sms);
        time_shape<RS, 128>("rs", random, out, sms);
        time_shape<RS, 256>("rs", random, out, sms);
        time_shape<SS, 64>("ss", random, out, sms);
        time_shape<SS, 128>("ss", random, out, sms);
        time_shape<SS, 192>("ss", random, out, sms);
    }
    return 0;
}
