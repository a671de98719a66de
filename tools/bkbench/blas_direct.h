/* SPDX-License-Identifier: Apache-2.0 */
/* The host BLAS called directly (sgemm, dgemm), for bkbench's host dense
 * GEMM rows: the library libbk's host GEMMs run on where the build has
 * one, timed beside libbk as cuBLASLt is on a GPU. */
#ifndef BK_TOOL_BLAS_DIRECT_H
#define BK_TOOL_BLAS_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

/* Whether this build has a BLAS; if so, out gets its name: the file the
 * loader took cblas_sgemm from (the BLAS alternative in use). */
bool blas_direct_available(char *out, size_t size);
/* Whether the BLAS computes this type: F32 or F64. */
bool blas_direct_takes(BkDataType dtype);
/* D[M, N] = A[M, K] @ B[N, K]^T, all row-major and contiguous, host memory. */
void blas_direct_gemm(BkDataType dtype, int64_t m, int64_t n, int64_t k, void *d, const void *a,
                      const void *b);

#endif /* BK_TOOL_BLAS_DIRECT_H */
