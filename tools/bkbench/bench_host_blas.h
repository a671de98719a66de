/* SPDX-License-Identifier: Apache-2.0 */
/* The host BLAS beside bkbench's host 2:4 and W4A16 cases: sgemm called
 * directly (blas_direct.h) on f32 operands of the case's M, N and K,
 * D[M, N] = A[M, K] @ B[N, K]^T, in rotation sets of its own past the
 * cache, timed in the rounds that time libbk's plan. The host's dense
 * GEMM is that call, and its 2:4 and W4A16 GEMMs decode their weights
 * into f32 panels for it: the figure says what the decoding costs. */
#ifndef BK_TOOL_BENCH_HOST_BLAS_H
#define BK_TOOL_BENCH_HOST_BLAS_H

#include <stdbool.h>
#include <stdint.h>

#include "bench_gemm.h"
#include "bench_sets.h"

struct host_blas_peer {
    bool open;
    struct bench_sets sets;
    struct lt_rotation rot;
};

/* Opens the peer where s has the host BLAS (s->host_blas), else leaves p
 * closed and returns false. */
bool host_blas_peer_open(struct bench_device *d, const struct gemm_settings *s, int64_t m,
                         int64_t n, int64_t k, struct host_blas_peer *p);
/* One round: the median of b's repeats after its warm-up, microseconds. */
double host_blas_peer_time(struct bench_device *d, struct host_blas_peer *p,
                           const struct bench_settings *b);
/* Frees what open allocated (a closed peer: nothing). */
void host_blas_peer_close(struct bench_device *d, struct host_blas_peer *p);

#endif /* BK_TOOL_BENCH_HOST_BLAS_H */
