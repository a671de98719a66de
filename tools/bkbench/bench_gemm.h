/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's GEMM-family cases, compute-bound and rated in TFLOP/s:
 *   gemm      dense D[M, N] = A[M, K] @ B[N, K]^T (the transformer layout),
 *             libbk's plan as one-time and as reusable submits beside
 *             cuBLASLt called directly with the same algorithm policy;
 *   sparse24  Y[M, N] = X[M, K] @ W^T with a 2:4 W[N, K], libbk's sparse
 *             plan beside its dense plan of the same shape and beside
 *             cuSPARSELt called directly on the same pruned W (flops
 *             counted as the dense 2 M N K for all).
 * Shapes are the GPU ones divided by the scale's divisor (a handful of
 * tokens, N = 16, stays as it is). The W4A16 cases are in bench_w4a16.h. */
#ifndef BK_TOOL_BENCH_GEMM_H
#define BK_TOOL_BENCH_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "bench_device.h"
#include "bench_run.h"
#include "bench_sets.h"
#include "cublaslt_direct.h"
#include "cusparselt_direct.h"

enum bench_gemm_scale {
    BENCH_GEMM_GPU = 1,                   /* 4096^3, 8192^3, Llama-70B layers */
    BENCH_GEMM_HOST = 8,                  /* the same / 8: seconds on a CPU */
    BENCH_GEMM_QUICK = 64                 /* the same / 64: a smoke test */
};

struct gemm_case {
    BkDataType dtype;
    bool tf32;                            /* F32 on TF32 tensor cores */
    int64_t m, n, k;
    char shape[32];                       /* "8192x8192x8192": M x N x K */
};

struct gemm_result {
    bool supported;                       /* false: libbk said unsupported */
    char message[256];                    /* why */
    char kernel[BK_MAX_KERNEL_NAME_SIZE];
    uint64_t workspace;                   /* libbk's plan's workspace, bytes */
    uint32_t sets;                        /* buffer sets rotated through */
    double one_time_us, reusable_us;      /* medians */
    struct bench_spread reusable_t;       /* reusable_us, min and max of every round's runs */
    /* cuBLASLt called directly: "ok", "skipped" (not a CUDA device),
     * "unavailable" (no library), "failed" (lt_message says why) or
     * "mismatch" (timed, but its D is not libbk's). */
    const char *lt_status;
    char lt_message[256];
    double lt_us;
    uint64_t lt_workspace;                /* the chosen algorithm's workspace */
    int lt_algo;                          /* its CUBLASLT_ALGO_CONFIG_ID */
    /* Both D of one run compared: max |libbk - cuBLASLt| / max |libbk|,
     * and whether that is within a few roundings of D's type ("ok"
     * becomes "mismatch" when not). Negative: not compared. */
    double lt_max_rel_diff;
    double peak_tflops;                   /* the device's dense peak, 0 = unknown */
};

struct sparse24_case {
    BkDataType dtype;
    const char *layer;                    /* "square", "qkv", "o", "gate-up", "down" */
    /* m: W's rows, the output features (BkSparse24GemmInfo's m; N in the
     * tables), n: X's rows, the tokens (M), k: the input features. */
    int64_t m, n, k;
    char shape[32];                       /* "2048x10240x8192": tokens x out x in */
};

struct sparse24_result {
    bool supported;                       /* false: a plan was unsupported */
    char message[256];
    char kernel[BK_MAX_KERNEL_NAME_SIZE]; /* the sparse plan's */
    char dense_kernel[BK_MAX_KERNEL_NAME_SIZE];
    uint64_t prepared_bytes;              /* the prepared weight */
    uint32_t sets;
    double sparse_us, dense_us;           /* medians, reusable submits */
    struct bench_spread sparse_t;         /* sparse_us, min and max of every round's runs */
    double peak_tflops;                   /* dense peak, 0 = unknown */
    /* cuSPARSELt called directly: "ok", "unavailable" (no library or not
     * a CUDA device), "failed" (slt_message says why) or "mismatch"
     * (timed, but its Y is not libbk's sparse Y). */
    const char *slt_status;
    char slt_message[256];
    double slt_us;                        /* median; 0 = not timed */
    uint64_t slt_compressed_bytes;        /* its compressed W */
    uint64_t slt_workspace;               /* its searched algorithm's workspace */
    double slt_max_rel_diff;              /* max |libbk - cuSPARSELt| / max |libbk|; < 0: not compared */
    /* On the host, the BLAS's sgemm of the same shape on f32 operands
     * (bench_host_blas.h), timed in the same rounds: median; 0: not timed
     * (a GPU, or no BLAS). */
    double blas_us;
};

/* Settings of the GEMM cases beyond the shared ones. */
struct gemm_settings {
    struct bench_settings bench;
    enum bench_gemm_scale scale;
    struct cublaslt *lt;                  /* NULL: no cuBLASLt comparison */
    bool host_blas;                       /* the dense cases' "Lt": the host BLAS direct */
    const char *lt_name;                  /* "cuBLASLt" or "BLAS": the Lt column's library */
    const char *lt_status;                /* when lt is NULL: "skipped" or "unavailable" */
    const char *lt_message;
    uint64_t lt_workspace_limit;          /* bytes offered to cuBLASLt's heuristic, as libbk */
    struct cusparselt *slt;               /* NULL: no cuSPARSELt comparison */
    const char *slt_message;              /* when slt is NULL: why ("unavailable") */
};

size_t bench_gemm_case_count(void);
size_t bench_gemm_cases(enum bench_gemm_scale scale, struct gemm_case *out, size_t max);
/* The cases of one shape M x N x K that is not a standard one (--shape):
 * one per type, at most GEMM_SHAPE_CASES; the sparse ones of layer
 * "shape". */
#define GEMM_SHAPE_CASES 4
size_t bench_gemm_shape_cases(int64_t m, int64_t n, int64_t k, struct gemm_case *out, size_t max);
size_t bench_sparse24_case_count(void);
size_t bench_sparse24_cases(enum bench_gemm_scale scale, struct sparse24_case *out, size_t max);
size_t bench_sparse24_shape_cases(int64_t m, int64_t n, int64_t k, struct sparse24_case *out,
                                  size_t max);

/* cuBLASLt run round robin over rotation sets, on the queue's stream: run
 * i computes D = A B^T of set i % (sets of d_sets), D, A and B at their
 * slots of their sets (which may be different rotations of as many sets).
 * The first failure stops the runs and is kept in err. */
struct lt_rotation {
    struct cublaslt_gemm *g;              /* NULL with host_blas */
    bool host_blas;                       /* the host BLAS (blas_direct.h) instead */
    BkDataType dtype;
    int64_t m, n, k;
    const struct bench_sets *d_sets, *a_sets, *b_sets;
    uint32_t d_slot, a_slot, b_slot;
    uint64_t workspace, workspace_size;
    void *stream;
    bool failed;
    char err[256];
};
/* A bench_enqueue_fn: user is a struct lt_rotation. */
void lt_rotation_run(void *user, uint32_t i);

/* 2 M N K. */
double gemm_case_flops(const struct gemm_case *c);
double sparse24_case_flops(const struct sparse24_case *c);

/* Measure one case; exit on libbk errors other than unsupported. */
void bench_gemm_run(struct bench_device *d, const struct gemm_case *c,
                    const struct gemm_settings *s, struct gemm_result *r);
void bench_sparse24_run(struct bench_device *d, const struct sparse24_case *c,
                        const struct gemm_settings *s, struct sparse24_result *r);
/* The cuSPARSELt part of a sparse24 case (bench_sparse24_slt.c), run with
 * s->slt: the slots of sets hold X, Y and the dense W already pruned to
 * libbk's 2:4 pattern (kept for as long as the handle); ref_y is libbk's
 * sparse Y of set 0 on the host. Open compresses every set's W, chooses
 * cuSPARSELt's algorithm, compares its Y of set 0 with ref_y and fills r's
 * slt_ members: NULL where cuSPARSELt fails (r says why). Time gives one
 * round's median (runs round robin over the sets), 0 after a cuSPARSELt
 * error (r says which). Never exits for cuSPARSELt's errors. */
struct bench_slt;
struct bench_slt *bench_sparse24_slt_open(struct bench_device *d, const struct sparse24_case *c,
                                          const struct gemm_settings *s,
                                          const struct bench_sets *sets, const uint32_t slots[3],
                                          const void *ref_y, struct sparse24_result *r);
double bench_sparse24_slt_time(struct bench_device *d, struct bench_slt *t,
                               const struct gemm_settings *s, struct sparse24_result *r);
void bench_sparse24_slt_close(struct bench_device *d, struct bench_slt *t);
/* How far two GEMMs' outputs may differ, over max |D|: a few roundings of
 * dtype. */
double gemm_agreement(BkDataType dtype);

/* Text rows (bench_gemm_report.c); each header starts a table. */
/* peak_model: NULL for an unknown device; lt: the cuBLASLt library or
 * why there is no comparison. */
void bench_gemm_print_header(const struct gemm_settings *s, const char *peak_model,
                             const char *lt);
void bench_gemm_print_row(const struct gemm_case *c, const struct gemm_result *r);
/* slt: the cuSPARSELt library or why there is no comparison. */
void bench_sparse24_print_header(const char *slt);
/* The cuSPARSELt comparison of the sparse cases, a table of its own
 * (printed once all of them ran). */
void bench_sparse24_print_slt(const struct sparse24_case *c, const struct sparse24_result *r,
                              size_t n);
void bench_sparse24_print_row(const struct sparse24_case *c, const struct sparse24_result *r);
/* The records of "gemm" and of "sparse24" (bench_record.h). */
struct rec;
void bench_gemm_records(struct rec *w, const struct gemm_case *c, const struct gemm_result *r,
                        size_t n);
void bench_sparse24_records(struct rec *w, const struct sparse24_case *c,
                            const struct sparse24_result *r, size_t n);

#endif /* BK_TOOL_BENCH_GEMM_H */
