/* SPDX-License-Identifier: Apache-2.0 */
/* cuBLASLt called directly by the tools, loaded at run time with dlopen
 * (libcublasLt.so.13, .12, .so; or the one file $BK_CUBLASLT_LIBRARY
 * names, as for libbk's CUDA backend), so that
 * bkbench can time libbk's dense GEMM beside the library it wraps and
 * bkinfo can say whether that library is there. Only the few types and
 * entry points needed are declared; no CUDA header is used and nothing
 * links against CUDA.
 *
 * The GEMM is the tools' one layout (gemm_op.h): row-major D[M, N] =
 * A[M, K] @ B[N, K]^T, alpha 1, beta 0, no epilogue. It is handed to
 * cuBLASLt as the column-major D^T[N, M] = B @ A^T (transa = T, transb =
 * N, m = N, n = M, k = K), libbk's mapping of that layout, and the
 * algorithm is the heuristic's first under a workspace limit, with
 * cuBLASLt's other preferences left at their defaults. */
#ifndef BK_TOOL_CUBLASLT_DIRECT_H
#define BK_TOOL_CUBLASLT_DIRECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

struct cublaslt;
struct cublaslt_gemm;

/* Loads the library and its entry points; no GPU is needed. On failure
 * returns NULL and writes the reason into err. */
struct cublaslt *cublaslt_open(char *err, size_t err_size);
void cublaslt_close(struct cublaslt *lt);
/* The file that was loaded ("libcublasLt.so.13") and cublasLtGetVersion()
 * (major * 10000 + minor * 100 + patch). */
const char *cublaslt_library(const struct cublaslt *lt);
size_t cublaslt_version(const struct cublaslt *lt);

/* Plans D = A @ B^T for dtype (F16, BF16 and F32 sum in F32, F32 with tf32
 * on TF32 tensor cores; F64 in F64), D in dtype. The calling thread's
 * current CUDA context must be the device's primary context. Returns NULL
 * with the reason in err when cuBLASLt has no algorithm or fails. */
struct cublaslt_gemm *cublaslt_gemm_plan(struct cublaslt *lt, BkDataType dtype, bool tf32,
                                         int64_t m, int64_t n, int64_t k,
                                         uint64_t workspace_limit, char *err, size_t err_size);
/* Bytes of workspace the chosen algorithm needs (<= the limit), and its
 * CUBLASLT_ALGO_CONFIG_ID (-1 if cuBLASLt does not say), the number libbk
 * puts in its plan's kernelName ("cublaslt_bf16_tn_algo66"). */
uint64_t cublaslt_gemm_workspace(const struct cublaslt_gemm *g);
int cublaslt_gemm_algo_id(const struct cublaslt_gemm *g);
/* The workspace limit libbk's CUDA GEMM offers cuBLASLt:
 * $BK_CUBLASLT_WORKSPACE_LIMIT bytes, else 32 MiB. */
uint64_t cublaslt_workspace_limit(void);
/* Enqueues one GEMM on stream (a CUstream). Returns 0, or -1 with the
 * cuBLASLt status in err. */
int cublaslt_gemm_run(struct cublaslt_gemm *g, uint64_t d, uint64_t a, uint64_t b,
                      uint64_t workspace, uint64_t workspace_size, void *stream, char *err,
                      size_t err_size);
void cublaslt_gemm_destroy(struct cublaslt_gemm *g);

#endif /* BK_TOOL_CUBLASLT_DIRECT_H */
