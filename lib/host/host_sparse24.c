/* SPDX-License-Identifier: Apache-2.0 */
/* 2:4 sparse weights on the host: the prepared layout, prepare, and the
 * sparse GEMM. The prepared weight is the interchange format packed:
 *
 *   values   [m, k/2] of the weight type, row-major, at offset 0;
 *   metadata [m, k/8] U16, row-major, at the values' size rounded up to 16.
 *
 * The sparse GEMM Y = act(alpha * X @ W^T + beta * C + bias) is a job of
 * the dense engine (host_gemm_engine.c) with A = X (the dense packer) and
 * B^T = W, whose panels a packer decodes from the prepared weight: one
 * blocked engine, two packers. Where the build has a BLAS, W is decoded a
 * panel of k at a time into f32 for sgemm (host_blas.c). Products with the
 * zeros of W are computed: the host gains nothing from the sparsity, the
 * GPU does. */
#include "host_blas.h"
#include "host_half_convert.h"

#include <stdio.h>
#include <string.h>

/* ---- The prepared layout ------------------------------------------------ */

struct prepared_layout {
    uint64_t meta_offset, size;
};

static bool prepared_layout(BkDataType type, int64_t m, int64_t k, struct prepared_layout *l)
{
    if (type != BK_DATA_TYPE_F32 && type != BK_DATA_TYPE_F16 && type != BK_DATA_TYPE_BF16)
        return false;
    if (m < 0 || k < 0 || k % 8)
        return false;
    bool ovf = false;
    const uint64_t values = bk_mul_u64(bk_mul_u64((uint64_t)m, (uint64_t)(k / 2), &ovf),
                                       bk_data_type_size(type), &ovf);
    const uint64_t meta = bk_mul_u64(bk_mul_u64((uint64_t)m, (uint64_t)(k / 8), &ovf), 2, &ovf);
    l->meta_offset = bk_align_up_u64(values, 16, &ovf);
    l->size = bk_add_u64(l->meta_offset, meta, &ovf);
    return !ovf && l->size <= INT64_MAX;
}

uint64_t bk_host_sparse24_prepared_size(BkContext ctx, BkDataType type, int64_t m, int64_t k)
{
    struct prepared_layout l;
    (void)ctx;
    return prepared_layout(type, m, k, &l) ? l.size : 0;
}

/* ---- Prepare: strided interchange format -> packed ----------------------- */

/* Copy a strided [rows, cols] matrix of es-byte elements to a row-major one. */
static void pack_rows(char *dst, const char *src, const struct bk_matrix *m, size_t es)
{
    const int64_t rows = m->rows, cols = m->cols;
#pragma omp parallel for schedule(static) if (rows * cols >= (1 << 16))
    for (int64_t r = 0; r < rows; r++) {
        char *d = dst + (size_t)(r * cols) * es;
        const char *s = src + r * m->row_stride * (int64_t)es;
        if (m->col_stride == 1)
            memcpy(d, s, (size_t)cols * es);
        else
            for (int64_t c = 0; c < cols; c++)
                memcpy(d + (size_t)c * es, s + c * m->col_stride * (int64_t)es, es);
    }
}

static BkResult prepare_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_sparse24_prepare_problem *p = &plan->problem.sparse24_prepare;
    struct prepared_layout l;
    (void)queue;
    if (p->m == 0 || p->k == 0 || !prepared_layout(p->type, p->m, p->k, &l))
        return BK_SUCCESS;
    char *prepared = (char *)(uintptr_t)args->binding[BK_SPARSE24_PREPARE_BINDING_PREPARED];
    const char *values = (const char *)(uintptr_t)args->binding[BK_SPARSE24_PREPARE_BINDING_VALUES];
    const char *meta = (const char *)(uintptr_t)args->binding[BK_SPARSE24_PREPARE_BINDING_METADATA];
    pack_rows(prepared, values, &p->values, bk_data_type_size(p->type));
    /* The gap before the metadata: defined bytes, so copies of a prepared
     * weight compare equal. */
    const uint64_t values_bytes = (uint64_t)(p->m * (p->k / 2)) * bk_data_type_size(p->type);
    memset(prepared + values_bytes, 0, (size_t)(l.meta_offset - values_bytes));
    pack_rows(prepared + l.meta_offset, meta, &p->metadata, 2);
    return BK_SUCCESS;
}

BkResult bk_host_sparse24_prepare_select(BkPlan plan)
{
    const struct bk_sparse24_prepare_problem *p = &plan->problem.sparse24_prepare;
    plan->launch = prepare_launch;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_sparse24_prepare_%s",
             host_gemm_type_name(p->type));
    return BK_SUCCESS;
}

/* ---- Sparse GEMM ----------------------------------------------------------- */

/* Panels of B^T = W [m, k] (rows of W) decoded from the prepared weight:
 * op->base is the values, op->aux the metadata. p0 and kc are multiples of
 * 8 (k is, and so is every k block), so groups never straddle a block.
 * A value goes where its position says; for equal positions (invalid
 * metadata, which the caller was to validate) the second wins, as in
 * decompression. */
#define DEFINE_SPARSE_PACK(NAME, STORAGE, TO)                                              \
    static void pack_sparse_##NAME(const struct host_gemm_operand *op, int64_t b,          \
                                   int64_t r0, int64_t rows, int64_t p0, int64_t kc, int R, \
                                   void *dst_)                                             \
    {                                                                                      \
        float *dst = dst_;                                                                 \
        (void)b; /* the weight is shared by every batch */                                 \
        memset(dst, 0, (size_t)(rows * kc) * sizeof *dst);                                 \
        for (int64_t rb = 0; rb < rows; rb += R) {                                         \
            float *panel = dst + rb * kc;                                                  \
            const int64_t live = op->rows - (r0 + rb);                                     \
            const int nr = live <= 0 ? 0 : live < R ? (int)live : R;                       \
            for (int r = 0; r < nr; r++) {                                                 \
                const int64_t row = r0 + rb + r;                                           \
                const STORAGE *v = (const STORAGE *)(const void *)op->base +               \
                                   row * op->row_stride + p0 / 2;                          \
                const uint16_t *meta = (const uint16_t *)(const void *)op->aux +           \
                                       row * op->aux_stride + p0 / 8;                      \
                for (int64_t g = 0; g < kc / 4; g++) {                                     \
                    const unsigned byte = (unsigned)(meta[g / 2] >> (8 * (g % 2)));         \
                    float *col = panel + 4 * g * R + r;                                    \
                    col[(byte & 3u) * (unsigned)R] = TO(v[2 * g]);                         \
                    col[((byte >> 2) & 3u) * (unsigned)R] = TO(v[2 * g + 1]);              \
                }                                                                          \
            }                                                                              \
        }                                                                                  \
    }

#define IDENTITY(x) (x)
DEFINE_SPARSE_PACK(f32, float, IDENTITY)
DEFINE_SPARSE_PACK(f16, uint16_t, host_f16_to_f32)
DEFINE_SPARSE_PACK(bf16, uint16_t, host_bf16_to_f32)

/* The same decoding into a row-major panel [rows, kc] of f32 for the BLAS
 * (host_blas.c): a row's values converted to f32 by the GEMM's row loader
 * (vectorised), the row zeroed, then each value stored at its position
 * (the second of equal positions wins, as above). */
static struct host_blas_panel fill_sparse(const struct host_gemm_operand *op, int64_t b,
                                          int64_t r0, int64_t rows, int64_t p0, int64_t kc,
                                          void *dst_)
{
    const host_gemm_load_fn load = host_gemm_row_loader(op->type);
    const size_t es = bk_data_type_size(op->type);
    float *dst = dst_, values[HOST_BLAS_PANEL_K / 2];
    (void)b; /* the weight is shared by every batch */
    for (int64_t r = 0; r < rows; r++) {
        const uint16_t *meta = (const uint16_t *)(const void *)op->aux +
                               (r0 + r) * op->aux_stride + p0 / 8;
        float *row = dst + r * kc;
        if (r + HOST_BLAS_PREFETCH_ROWS < rows) {
            const int64_t ahead = r0 + r + HOST_BLAS_PREFETCH_ROWS;
            host_blas_prefetch(op->base + (size_t)(ahead * op->row_stride + p0 / 2) * es,
                               kc / 2 * (int64_t)es);
            host_blas_prefetch((const uint16_t *)(const void *)op->aux +
                                   ahead * op->aux_stride + p0 / 8,
                               kc / 4);
        }
        memset(row, 0, (size_t)kc * sizeof *row);
        for (int64_t c0 = 0; c0 < kc; c0 += HOST_BLAS_PANEL_K) {
            const int64_t cols = kc - c0 < HOST_BLAS_PANEL_K ? kc - c0 : HOST_BLAS_PANEL_K;
            load(op->base + (size_t)((r0 + r) * op->row_stride + (p0 + c0) / 2) * es, 1,
                 cols / 2, values);
            for (int64_t g = 0; g < cols / 4; g++) {
                const unsigned byte = (unsigned)(meta[(c0 / 4 + g) / 2] >> (8 * (g % 2)));
                row[c0 + 4 * g + (byte & 3u)] = values[2 * g];
                row[c0 + 4 * g + ((byte >> 2) & 3u)] = values[2 * g + 1];
            }
        }
    }
    return (struct host_blas_panel){ .p = dst, .ld = kc, .row_major = true };
}

static const struct {
    host_gemm_pack_fn pack;
    host_blas_fill_fn fill;
} sparse_packers[] = {
    [BK_DATA_TYPE_F32] = { pack_sparse_f32, fill_sparse },
    [BK_DATA_TYPE_F16] = { pack_sparse_f16, fill_sparse },
    [BK_DATA_TYPE_BF16] = { pack_sparse_bf16, fill_sparse },
};

/* The plan's problem as a job: engine rows are X's rows (n), engine
 * columns W's rows (m), D is Y. Without run arguments (plan creation) its
 * addresses are 0. */
static struct host_gemm_job job_of(BkPlan plan, const struct bk_run_args *args,
                                   const struct prepared_layout *l)
{
    const struct bk_sparse24_gemm_problem *p = &plan->problem.sparse24_gemm;
    const BkDeviceAddress none[BK_SPARSE24_GEMM_BINDING_BIAS + 1] = { 0 };
    const BkDeviceAddress *bound = args ? args->binding : none;
    const char *weight = (const char *)(uintptr_t)bound[BK_SPARSE24_GEMM_BINDING_WEIGHT];
    struct host_gemm_job job = {
        .compute = HOST_GEMM_F32,
        .m = p->n, .n = p->m, .k = p->k, .batch = p->batch,
        .a = {
            .pack = host_gemm_dense_packer(p->type),
            .type = p->type,
            .base = (const char *)(uintptr_t)bound[BK_SPARSE24_GEMM_BINDING_X],
            .rows = p->n,
            .row_stride = p->x.row_stride, .col_stride = p->x.col_stride,
            .batch_stride = p->x.batch_stride,
        },
        .bt = {
            .pack = sparse_packers[p->type].pack,
            .fill = sparse_packers[p->type].fill,
            .type = p->type,
            .base = weight,
            .rows = p->m,
            .row_stride = p->k / 2,
            .aux = weight ? weight + l->meta_offset : NULL, /* K = 0: nothing is bound */
            .aux_stride = p->k / 8,
        },
        .d = host_gemm_output_of(bound[BK_SPARSE24_GEMM_BINDING_Y], &p->y),
        .bias = p->has_bias ? (const char *)(uintptr_t)bound[BK_SPARSE24_GEMM_BINDING_BIAS]
                            : NULL,
        .read_c = p->has_c && p->beta != 0,
        .activation = p->activation,
        .alpha = p->alpha,
        .beta = p->beta,
    };
    if (job.read_c)
        job.c = host_gemm_output_of(bound[BK_SPARSE24_GEMM_BINDING_C], &p->c);
    return job;
}

/* Fewer tokens (rows of X) than this stay with the engine where the build
 * has a BLAS: the BLAS path decodes all of W into f32 panels and reads
 * them back for a product of a few rows, where the engine decodes a
 * block of W per block of D. 2-core Zen 4, OpenBLAS, W 4096x4096, best of
 * 3, engine / BLAS: f16 N = 1: 26 / 43 ms; N = 16: 31-35 / 39-44;
 * N = 64: 54-65 / 63-109; N = 128: 164 / 91; f32 N = 16: 23 / 66,
 * N = 128: 93 / 86 (doc/design/host.md). */
#define BLAS_MIN_TOKENS 32

/* Whether the BLAS serves the problem: tokens enough, and a job it takes. */
static bool blas_serves(const struct bk_sparse24_gemm_problem *p, const struct host_gemm_job *job)
{
    return p->n >= BLAS_MIN_TOKENS && host_blas_takes(job);
}

static BkResult sparse_gemm_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_sparse24_gemm_problem *p = &plan->problem.sparse24_gemm;
    struct prepared_layout l = { 0 };
    (void)queue;
    if (p->m == 0 || p->n == 0 || p->batch == 0)
        return BK_SUCCESS;
    if (p->k > 0 && !prepared_layout(p->type, p->m, p->k, &l))
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: no prepared layout", plan->op_name);
    const struct host_gemm_job job = job_of(plan, args, &l);
    if (blas_serves(p, &job))
        host_blas_run(&job, (void *)(uintptr_t)args->workspace);
    else
        host_gemm_run(&job, (void *)(uintptr_t)args->workspace, plan->props.workspaceSize);
    return BK_SUCCESS;
}

BkResult bk_host_sparse24_gemm_select(BkPlan plan)
{
    const struct bk_sparse24_gemm_problem *p = &plan->problem.sparse24_gemm;
    if ((unsigned)p->type >= sizeof sparse_packers / sizeof sparse_packers[0] ||
        !sparse_packers[p->type].pack)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the host backend has no sparse GEMM for %s",
                        plan->op_name, bk_data_type_name(p->type));
    const struct prepared_layout none = { 0 };
    const struct host_gemm_job job = job_of(plan, NULL, &none);
    const bool blas = p->m > 0 && p->n > 0 && p->batch > 0 && blas_serves(p, &job);
    uint64_t ws = blas ? host_blas_workspace_size(&job)
                       : host_gemm_workspace_size(HOST_GEMM_F32, p->n, p->m, p->k, p->batch);
    if (ws > plan->props.workspaceSize)
        plan->props.workspaceSize = ws;
    plan->launch = sparse_gemm_launch;
    if (p->type == p->out_type)
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_sparse24_gemm_%s_%s",
                 host_gemm_type_name(p->type), blas ? "blas" : host_gemm_isa());
    else
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName,
                 "host_sparse24_gemm_%s_%s_%s", host_gemm_type_name(p->type),
                 host_gemm_type_name(p->out_type), blas ? "blas" : host_gemm_isa());
    return BK_SUCCESS;
}
