/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's W4A16 cases (bk_w4a16.h): C[M, N] = A[M, K] @ dequant(B)[K, N]
 * with a 4-bit weight B in Marlin's packed layout, groups of 128 rows,
 * for the linear layers of Llama-2-7B and Llama-70B and a square weight,
 * at decode and small-batch M. Each case is rated in TFLOP/s, against
 * its memory floor (the time to read the int4 weight and its scales at
 * the copy bandwidth measured in the same run) and against a dense
 * f16/bf16 GEMM of the same M, N, K (cuBLASLt called directly on a CUDA
 * device where it loads, else libbk's dense BkGemmInfo plan); a few
 * entries of C are checked against a dequantized reference made on the
 * host. Shapes are the GPU ones divided by the scale's divisor, K
 * rounded to a multiple of 128 and N to one of 64; M is never scaled.
 * Llama-2-7B's layers in F16 also run with zero points (layer "qkv-zp"
 * and so on: an asymmetric weight, BkW4A16ZeroPointsInfo), whose floor
 * counts the packed zero points too. */
#ifndef BK_TOOL_BENCH_W4A16_H
#define BK_TOOL_BENCH_W4A16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "bench_device.h"
#include "bench_gemm.h"

#define W4A16_GROUP 128                   /* rows of B per scale */
#define W4A16_CHECK_COLUMNS 8             /* columns of C checked, rows 0, M/2 and M-1 */
#define W4A16_CHECK_LIMIT 1e-2            /* max |C - ref| / max |ref| allowed */

struct w4a16_case {
    BkDataType dtype;                     /* A, C and the scales: F16 or BF16 */
    const char *model;                    /* "llama-2-7b", "llama-70b"; NULL: square */
    const char *layer;                    /* "qkv", "gate-up", "down", "square" */
    int64_t m, n, k;                      /* A[M, K], B[K, N], C[M, N] */
    bool zeros;                           /* asymmetric, with zero points */
    char shape[64];                       /* "16x12288x4096": M x N x K */
};

struct w4a16_result {
    bool supported;                       /* false: a plan was unsupported (message) */
    bool check_failed;                    /* C is not the reference's (message) */
    char message[256];
    char kernel[BK_MAX_KERNEL_NAME_SIZE]; /* the W4A16 GEMM plan's */
    uint64_t workspace;                   /* its workspace, bytes */
    uint64_t weight_bytes;                /* K*N/2 + (K/128)*N*2: packed + packedScales
                                             (+ (K/128)*N/2 of packedZeros) */
    uint32_t sets;                        /* weight sets rotated through */
    double us;                            /* median, reusable submits */
    struct bench_spread t;                /* us, min and max of every round's runs */
    double floor_us;                      /* weight_bytes at the copy bandwidth; 0: unknown */
    double max_rel_err;                   /* the check's max |C - ref| / max |ref|; < 0: not run */
    uint32_t check_rows;                  /* rows of C checked */
    /* The dense GEMM D[M, N] = A[M, K] @ B[N, K]^T of the same sizes:
     * by "cublasLt" (called directly) or "libbk" (its BkGemmInfo plan);
     * status "ok", "failed" (dense_message says why), "unsupported"
     * (libbk's plan; dense_message says why) or "skipped" (the W4A16 case
     * itself did not run). */
    const char *dense_by;
    const char *dense_status;
    char dense_message[256];
    char dense_kernel[BK_MAX_KERNEL_NAME_SIZE];  /* libbk's plan's; "" for cuBLASLt */
    int dense_algo;                       /* cuBLASLt's CUBLASLT_ALGO_CONFIG_ID; -1: none */
    uint64_t dense_workspace;
    double dense_us;                      /* median; 0: not timed */
    /* On the host, the BLAS's sgemm of the same M, N and K on f32
     * operands (bench_host_blas.h), timed in the same rounds: median; 0:
     * not timed (a GPU, or no BLAS). */
    double blas_us;
};

/* A quantized, packed weight in its rotation sets, with the host's
 * reference of a few of its columns: made for a case and kept while the
 * next cases have the same dtype, K and N (the cases come M innermost). */
struct w4a16_weight;

size_t bench_w4a16_case_count(void);
size_t bench_w4a16_cases(enum bench_gemm_scale scale, struct w4a16_case *out, size_t max);
/* The cases of a shape M x N x K of --shape that no standard case has:
 * one per type, of layer "shape", none where K is not a multiple of the
 * group or N of 64. */
size_t bench_w4a16_shape_cases(int64_t m, int64_t n, int64_t k, struct w4a16_case *out, size_t max);
/* 2 M N K. */
double w4a16_case_flops(const struct w4a16_case *c);
/* Bytes of the packed weight and its scales: K*N/2 + (K/128)*N*2; with
 * zero points also their (K/128)*N/2. */
uint64_t w4a16_weight_bytes(int64_t k, int64_t n, bool zeros);

/* Measures one case: s->lt (when not NULL) times the dense GEMM, else
 * libbk's dense plan does; copy_gb_per_s gives the floor. *weight is the
 * prepared weight of the case before (NULL at first), replaced when this
 * case needs another one. Exits on libbk errors other than unsupported. */
void bench_w4a16_run(struct bench_device *d, const struct w4a16_case *c,
                     const struct gemm_settings *s, double copy_gb_per_s,
                     struct w4a16_weight **weight, struct w4a16_result *r);
/* Frees *weight (NULL: nothing) and sets it to NULL. */
void bench_w4a16_release(struct bench_device *d, struct w4a16_weight **weight);

/* The text table and the JSON array of "w4a16" (bench_gemm_report.c).
 * dense: what times the dense GEMM ("cuBLASLt direct, libcublasLt.so.13
 * 130100"). */
void bench_w4a16_print_header(const struct gemm_settings *s, double copy_gb_per_s,
                              const char *dense);
void bench_w4a16_print_row(const struct w4a16_case *c, const struct w4a16_result *r);
/* On the host, the 2:4 and W4A16 rows beside the BLAS (their blas_us), a
 * table of its own after the W4A16 rows. */
void bench_host_blas_print(const struct sparse24_case *sc, const struct sparse24_result *sr,
                           size_t ns, const struct w4a16_case *wc,
                           const struct w4a16_result *wr, size_t nw);
/* The records of "w4a16" (bench_record.h). */
struct rec;
void bench_w4a16_records(struct rec *w, const struct w4a16_case *c,
                         const struct w4a16_result *r, size_t n);

#endif /* BK_TOOL_BENCH_W4A16_H */
