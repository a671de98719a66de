/* SPDX-License-Identifier: Apache-2.0 */
/* CHECK(x) for the standalone CUDA probes in bench/ (runtime API): a
 * failing call prints itself and the runtime's message, then exits. */
#ifndef BK_BENCH_CUDA_CHECK_H
#define BK_BENCH_CUDA_CHECK_H

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                     \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

#endif /* BK_BENCH_CUDA_CHECK_H */
