/* SPDX-License-Identifier: Apache-2.0 */
/* Zeroing a plan's workspace counters before a kernel that counts in them
 * (the W4A16 wgmma kernels' stream-K: several writers count arrivals on one
 * counter; the 2:4 kernels' flags, one writer each, are tagged instead:
 * split_sum_sync.cuh), so that a workspace may hold anything between
 * runs: a small kernel each module that needs it defines with
 * BK_WORKSPACE_CLEAR_KERNEL, launched by bk_cuda_launch_clear
 * (lib/cuda/cuda_launch.c) just before the kernel.
 * It lets that kernel launch at once (programmatic dependent launch) and
 * first waits for the grid before it, which may use the same workspace;
 * the kernel after it waits for it before it touches the counters. */
#ifndef BK_WORKSPACE_CLEAR_H
#define BK_WORKSPACE_CLEAR_H

#include <stdint.h>

#define BK_WORKSPACE_CLEAR_THREADS 256
#define BK_WORKSPACE_CLEAR_MAX_BLOCKS 264 /* a grid-stride loop: a few blocks clear any count */

struct bk_workspace_clear_args {
    uint64_t words_at;            /* device address of the first word */
    uint64_t words;               /* 32-bit words to zero */
};

#if defined(__CUDACC__)
#define BK_WORKSPACE_CLEAR_KERNEL(NAME)                                                        \
    extern "C" __global__ void __launch_bounds__(BK_WORKSPACE_CLEAR_THREADS)                   \
        NAME(const __grid_constant__ bk_workspace_clear_args a)                                \
    {                                                                                          \
        bk::grid_dependents_launch();                                                          \
        bk::grid_dependency_wait_only();                                                       \
        uint32_t *words = reinterpret_cast<uint32_t *>(a.words_at);                            \
        for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < a.words;        \
             i += (uint64_t)gridDim.x * blockDim.x)                                            \
            words[i] = 0;                                                                      \
    }
#endif

#endif /* BK_WORKSPACE_CLEAR_H */
