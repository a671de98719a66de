// SPDX-License-Identifier: Apache-2.0
/* A development probe (not bkbench, not built by make): how fast a plain
 * read of N MB runs on this GPU, the ceiling a memory-bound kernel such as
 * the W4A16 GEMM at M = 1 can reach at that size. For each size, buffers
 * rotated past the L2, a grid-stride kernel of 16-byte streaming loads
 * (2, 4 and 8 CTAs of 512 threads an SM) timed two ways: CUDA events
 * around each run, as bkbench times (median of 100), and 100 runs back to
 * back between two events. Build and run on the GPU machine:
 *   nvcc -O3 -arch=sm_90 bench/probes/read-probe.cu -o read-probe && ./read-probe */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

// Reads n 16-byte words; stores only if their xor is an unlikely value,
// so that the loads stay.
__global__ void read_all(const uint4 *p, size_t n, unsigned *out)
{
    unsigned x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = __ldcs(p + i);
        x ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (x == 0x12345678u)
        out[0] = x;
}

int main()
{
    const double sizes_mb[] = { 8, 12, 16, 23, 25, 34, 46, 100, 235 };
    const int runs = 100;
    unsigned *out;
    CHECK(cudaMalloc(&out, 4));
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    std::vector<cudaEvent_t> ev(runs + 1);
    for (auto &e : ev)
        CHECK(cudaEventCreate(&e));
    for (double mb : sizes_mb) {
        const size_t bytes = (size_t)(mb * 1e6) / 16 * 16, words = bytes / 16;
        const int sets = std::max(2, (int)(200e6 / bytes)); // together past the L2
        std::vector<uint4 *> bufs(sets);
        for (auto &b : bufs) {
            CHECK(cudaMalloc(&b, bytes));
            CHECK(cudaMemset(b, 1, bytes));
        }
        for (int per_sm : { 2, 4, 8 }) {
            const int grid = sms * per_sm;
            for (int i = 0; i < 10; i++)
                read_all<<<grid, 512>>>(bufs[i % sets], words, out);
            CHECK(cudaEventRecord(ev[0]));
            for (int i = 0; i < runs; i++) {
                read_all<<<grid, 512>>>(bufs[i % sets], words, out);
                CHECK(cudaEventRecord(ev[i + 1]));
            }
            CHECK(cudaEventSynchronize(ev[runs]));
            std::vector<float> ms(runs);
            for (int i = 0; i < runs; i++)
                CHECK(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
            std::sort(ms.begin(), ms.end());
            CHECK(cudaEventRecord(ev[0]));
            for (int i = 0; i < runs; i++)
                read_all<<<grid, 512>>>(bufs[i % sets], words, out);
            CHECK(cudaEventRecord(ev[1]));
            CHECK(cudaEventSynchronize(ev[1]));
            float all;
            CHECK(cudaEventElapsedTime(&all, ev[0], ev[1]));
            const double per_run = ms[runs / 2] * 1e-3, b2b = all * 1e-3 / runs;
            std::printf("%6.1f MB, %4d CTAs: per run %7.2f us (%5.0f GB/s), back to back %7.2f us "
                        "(%5.0f GB/s)\n",
                        mb, grid, per_run * 1e6, bytes / per_run * 1e-9, b2b * 1e6,
                        bytes / b2b * 1e-9);
        }
        for (auto &b : bufs)
            CHECK(cudaFree(b));
    }
    CHECK(cudaGetLastError());
    return 0;
}
