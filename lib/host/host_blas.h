/* SPDX-License-Identifier: Apache-2.0 */
/* The host GEMM family on a CBLAS (configure's BK_HAVE_BLAS): a job of the
 * blocked engine (host_gemm_engine.h) run through sgemm or dgemm instead.
 *
 *   - Operands the BLAS can read as they are (the compute type, one unit
 *     stride) go to it directly; others are converted, a panel of at most
 *     HOST_BLAS_PANEL_K columns of k at a time, into the workspace in the
 *     compute type (f16 and bf16 to f32; the 2:4 and W4A16 weights are
 *     decoded there by their operand's fill function).
 *   - D of the compute type with one unit stride is the BLAS's output,
 *     alpha and beta * C included; bias and activation follow in place.
 *     Otherwise the BLAS sums a block of rows into an accumulator in the
 *     workspace and the engine's epilogue writes D from it.
 *
 * The BLAS is called from the submitting thread, outside any OpenMP
 * region of libbk, and uses its own threads. */
#ifndef BK_HOST_BLAS_H
#define BK_HOST_BLAS_H

#include "host_gemm_engine.h"

/* The deepest panel of k converted at once. A multiple of 16 (a W4A16
 * tile) and of 8 (a 2:4 metadata word). */
#define HOST_BLAS_PANEL_K 512

/* Rows a fill function converts ahead of: it asks for the source row
 * this many rows on (host_blas_prefetch) before converting a row. */
#define HOST_BLAS_PREFETCH_ROWS 2

/* Asks the caches for bytes at p (a row of a panel's source) ahead of its
 * conversion: rows of a panel are a row stride apart and short (a panel
 * is at most HOST_BLAS_PANEL_K wide), too short for the hardware
 * prefetcher to ramp up on each, and the BLAS call before has evicted
 * them. */
static inline void host_blas_prefetch(const void *p, int64_t bytes)
{
#if defined(__GNUC__) || defined(__clang__)
    for (int64_t i = 0; i < bytes; i += 64)
        __builtin_prefetch((const char *)p + i);
#else
    (void)p, (void)bytes;
#endif
}

/* Whether this build has a BLAS and the job's shape fits its int
 * arguments: then host_blas_workspace_size and host_blas_run serve the
 * job, else the engine does. Reads the job's shape, types, strides and
 * scalars, not its addresses (select passes a job without them). */
BK_HIDDEN bool host_blas_takes(const struct host_gemm_job *job);
BK_HIDDEN uint64_t host_blas_workspace_size(const struct host_gemm_job *job);
BK_HIDDEN void host_blas_run(const struct host_gemm_job *job, void *workspace);
/* "blas" with a BLAS, else the engine's instruction set: for kernel names. */
BK_HIDDEN const char *host_blas_isa(const struct host_gemm_job *job);

#endif /* BK_HOST_BLAS_H */
