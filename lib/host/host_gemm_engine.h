/* SPDX-License-Identifier: Apache-2.0 */
/* The host's blocked GEMM engine, shared by dense GEMM and 2:4 sparse GEMM:
 *
 *   D = act(alpha * A @ B + beta * C + bias),  A [m, k], B [k, n].
 *
 * The engine tiles D into blocks of MC x NC (one task each, tasks spread
 * over OpenMP threads), walks k in blocks of KC, and for each asks the
 * operands' packers for panels in the compute type (f32, or f64 for f64):
 * a dense packer reads a strided matrix, the sparse one decodes a prepared
 * 2:4 weight. A register-blocked micro-kernel multiplies MR x NR tiles of
 * the panels into an accumulator block in the workspace, continuing each
 * element's sum in k order, so results do not depend on the thread count
 * or on the blocking. The epilogue applies alpha, beta * C, bias and the
 * activation and rounds to D's type. */
#ifndef BK_HOST_GEMM_ENGINE_H
#define BK_HOST_GEMM_ENGINE_H

#include "host_internal.h"

enum host_gemm_compute { HOST_GEMM_F32, HOST_GEMM_F64, HOST_GEMM_COMPUTE_COUNT };

struct host_gemm_operand;

/* Pack rows [r0, r0 + rows) and columns [p0, p0 + kc) of the operand's
 * view in batch b into panels of R rows, in the compute type:
 * element (r0 + r, p0 + p) goes to dst[(r / R) * kc * R + p * R + r % R].
 * rows is a multiple of R; rows at or past op->rows are zeros. */
typedef void (*host_gemm_pack_fn)(const struct host_gemm_operand *op, int64_t b, int64_t r0,
                                  int64_t rows, int64_t p0, int64_t kc, int R, void *dst);

/* A panel of an operand [rows, kc] in the compute type as a BLAS reads
 * it (host_blas.c): element (r, p) at p[r * ld + p] when row_major, else
 * at p[p * ld + r]. */
struct host_blas_panel {
    const void *p;
    int64_t ld;
    bool row_major;
};

/* Write rows [r0, r0 + rows) and columns [p0, p0 + kc) of the operand in
 * batch b to dst in the compute type, and say where they are. */
typedef struct host_blas_panel (*host_blas_fill_fn)(const struct host_gemm_operand *op,
                                                   int64_t b, int64_t r0, int64_t rows,
                                                   int64_t p0, int64_t kc, void *dst);

/* An input of the engine seen as [rows, k]: A itself, and B transposed
 * (B^T [n, k]), so one packer serves both. Strides in elements. The BLAS
 * path reads a dense operand (fill NULL) of its type as it is where it
 * can, else through fill. */
struct host_gemm_operand {
    host_gemm_pack_fn pack;
    host_blas_fill_fn fill;   /* NULL: a dense matrix of type */
    BkDataType type;
    const char *base;
    int64_t rows;
    int64_t row_stride, col_stride, batch_stride;
    const char *aux;          /* the sparse packer's metadata; row length aux_stride */
    int64_t aux_stride;
    const void *ctx;          /* what a fill needs besides */
};

/* C or D: element (i, j) of batch b at base + b * batch_stride +
 * i * row_stride + j * col_stride elements of type. */
struct host_gemm_output {
    char *base;
    BkDataType type;
    int64_t row_stride, col_stride, batch_stride;
};

/* A bound matrix of the core's problem as an engine output. */
static inline struct host_gemm_output host_gemm_output_of(BkDeviceAddress address,
                                                          const struct bk_matrix *m)
{
    return (struct host_gemm_output){
        .base = (char *)(uintptr_t)address,
        .type = m->type,
        .row_stride = m->row_stride,
        .col_stride = m->col_stride,
        .batch_stride = m->batch_stride,
    };
}

struct host_gemm_job {
    enum host_gemm_compute compute;
    int64_t m, n, k, batch;
    struct host_gemm_operand a;   /* [m, k] */
    struct host_gemm_operand bt;  /* B^T: [n, k] */
    struct host_gemm_output c, d; /* c is read only when read_c */
    const char *bias;             /* bias[j] for column j, d.type, contiguous; NULL: none */
    bool read_c;                  /* has C and beta != 0: C is not read otherwise */
    BkGemmActivation activation;
    double alpha, beta;
};

/* Bytes of workspace a job of this shape needs: packing buffers and an
 * accumulator block for each thread it will use (omp_get_max_threads()
 * now, fewer for small problems). 0 for an empty problem. */
BK_HIDDEN uint64_t host_gemm_workspace_size(enum host_gemm_compute compute, int64_t m, int64_t n,
                                            int64_t k, int64_t batch);
/* Run a job with workspace_size bytes of workspace (the size
 * host_gemm_workspace_size gave for its shape: the run uses no more
 * threads than that workspace holds buffers for). */
BK_HIDDEN void host_gemm_run(const struct host_gemm_job *job, void *workspace,
                             uint64_t workspace_size);

/* The epilogue for a block of D, rows [i0, i0 + rows) and columns [j0,
 * j0 + cols) of batch b (cols <= HOST_GEMM_MAX_BLOCK), from an
 * accumulator block in the compute type whose rows are ld elements apart:
 * D = act(alpha * acc + beta * C + bias), rounded to D's type. */
BK_HIDDEN void host_gemm_epilogue(const struct host_gemm_job *job, int64_t b, int64_t i0,
                                  int64_t j0, int64_t rows, int64_t cols, void *acc, int64_t ld);

/* The dense packer of a matrix of type (F32, F16, BF16 -> f32; F64 -> f64),
 * NULL for another type (host_gemm_pack.c). */
BK_HIDDEN host_gemm_pack_fn host_gemm_dense_packer(BkDataType type);

/* Strided row segments of C, D and bias in the compute type (host_gemm_pack.c). */
typedef void (*host_gemm_load_fn)(const char *p, int64_t stride, int64_t n, void *out);
typedef void (*host_gemm_store_fn)(char *p, int64_t stride, int64_t n, const void *in);
BK_HIDDEN host_gemm_load_fn host_gemm_row_loader(BkDataType type);
BK_HIDDEN host_gemm_store_fn host_gemm_row_storer(BkDataType type);
/* Element (i, j) of a strided matrix of es-byte elements at base. */
static inline char *host_matrix_at(char *base, const struct bk_matrix *m, int64_t i, int64_t j,
                                   size_t es)
{
    return base + (i * m->row_stride + j * m->col_stride) * (int64_t)es;
}

/* "f32", "f16", "bf16", "f64": for kernel names. */
BK_HIDDEN const char *host_gemm_type_name(BkDataType type);

/* ---- Micro-kernels (host_gemm_kernel.c) --------------------------------
 * c[MR x NR block, row stride ldc] = (first ? 0 : c) + a_panel @ b_panel
 * over kc, with a panel [kc][MR] and b panel [kc][NR], each element's sum
 * in k order (no fused multiply-add: every build and instruction set gives
 * the same bits). */
typedef void (*host_gemm_kernel_fn)(int64_t kc, const void *a, const void *b, void *c,
                                    int64_t ldc, int first);

/* No cache block (mc, nc) is wider: the epilogue's scratch rows. */
#define HOST_GEMM_MAX_BLOCK 256

struct host_gemm_blocking {
    int mr, nr;                   /* micro-tile */
    int64_t mc, nc, kc;           /* cache blocks: mc % mr == 0, nc % nr == 0 */
    size_t elem;                  /* bytes of the compute type */
};
BK_HIDDEN const struct host_gemm_blocking *host_gemm_blocking(enum host_gemm_compute compute);
/* The fastest kernel this CPU runs (same results from each). */
BK_HIDDEN host_gemm_kernel_fn host_gemm_kernel(enum host_gemm_compute compute);
/* Its instruction set, for kernel names: "avx2" or "generic". */
BK_HIDDEN const char *host_gemm_isa(void);

#endif /* BK_HOST_GEMM_ENGINE_H */
