/* SPDX-License-Identifier: Apache-2.0 */
/* cuSPARSELt called directly by bkbench, as a comparison only: loaded at
 * run time with dlopen ($BK_CUSPARSELT_LIBRARY, else libcusparseLt.so.0),
 * never a dependency of libbk. Only the few types and entry points needed
 * are declared; no CUDA header is used and nothing links against CUDA.
 *
 * The product is bkbench's 2:4 sparse GEMM: row-major Y[M, N] =
 * X[M, K] @ W^T with a 2:4 W[N, K] (groups of 4 along K), alpha 1, beta 0
 * (M tokens, N output features: the parameters m and n below are N and M).
 * cuSPARSELt is column-major, so it is handed the same memory as
 * Y^T[M, N] = op(A) @ B with the structured operand as A: A is W read as
 * the column-major [K, M] (ld K) with opA = T, B is X read as the
 * column-major [K, N] (ld K) with opB = N, C = D is Y read as the
 * column-major [M, N] (ld M). F16 and BF16 in and out, F32 sums. */
#ifndef BK_TOOL_CUSPARSELT_DIRECT_H
#define BK_TOOL_CUSPARSELT_DIRECT_H

#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

struct cusparselt;
struct cusparselt_mm;

/* Loads the library and its entry points and checks its version (0.6 or
 * a later 0.x, whose declarations these are); no GPU is needed. On
 * failure returns NULL and writes the reason into err. */
struct cusparselt *cusparselt_open(char *err, size_t err_size);
void cusparselt_close(struct cusparselt *lt);
/* The file that was loaded, and major * 1000 + minor * 100 + patch. */
const char *cusparselt_library(const struct cusparselt *lt);
int cusparselt_version(const struct cusparselt *lt);

/* Each function below returns 0, or -1 with the failing call and its
 * status name in err. The calling thread's current CUDA context must be
 * the device's primary context; stream is a CUstream. */

/* Describes Y[n, m] = X[n, k] @ W[m, k]^T for dtype (F16 or BF16) and
 * makes a plan with cuSPARSELt's default algorithm. */
int cusparselt_mm_plan(struct cusparselt *lt, BkDataType dtype, int64_t m, int64_t n, int64_t k,
                       struct cusparselt_mm **out, char *err, size_t err_size);
/* Bytes of a compressed W and of the scratch buffer compressing needs. */
int cusparselt_mm_compressed_size(struct cusparselt_mm *g, uint64_t *compressed,
                                  uint64_t *scratch, char *err, size_t err_size);
/* Prunes the dense W[m, k] in place (cuSPARSELt's strip pruning, which
 * leaves a W that is already 2:4 as it is) and compresses it. */
int cusparselt_mm_compress(struct cusparselt_mm *g, uint64_t w, uint64_t compressed,
                           uint64_t scratch, void *stream, char *err, size_t err_size);
/* Bytes of workspace the plan's algorithm needs now. */
int cusparselt_mm_workspace(struct cusparselt_mm *g, uint64_t *bytes, char *err,
                            size_t err_size);
/* cusparseLtMatmulSearch on these operands: runs the candidate
 * algorithms and keeps the fastest in the plan (query the workspace
 * again afterwards). Y is overwritten. */
int cusparselt_mm_search(struct cusparselt_mm *g, uint64_t y, uint64_t x, uint64_t compressed,
                         uint64_t workspace, void *stream, char *err, size_t err_size);
/* Enqueues one Y = X @ W^T. */
int cusparselt_mm_run(struct cusparselt_mm *g, uint64_t y, uint64_t x, uint64_t compressed,
                      uint64_t workspace, void *stream, char *err, size_t err_size);
void cusparselt_mm_destroy(struct cusparselt_mm *g);

#endif /* BK_TOOL_CUSPARSELT_DIRECT_H */
