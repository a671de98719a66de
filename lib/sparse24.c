/* SPDX-License-Identifier: Apache-2.0 */
/* 2:4 structured sparsity: validation of BkSparse24ConvertInfo,
 * BkSparse24PrepareInfo and BkSparse24GemmInfo into backend-neutral
 * problems. The interchange format is values [M, K/2] and metadata
 * [M, K/8] U16, K % 8 == 0 (bk_gemm.h, bk-gemm(7)). */
#include "bk_internal.h"

#include <stdio.h>

/* The report a conversion writes: 32 bytes, 8-byte aligned. */
#define REPORT_BYTES ((uint64_t)sizeof(BkSparse24Report))
_Static_assert(sizeof(BkSparse24Report) == 32, "BkSparse24Report is 32 bytes");

static BkResult expect_shape(const char *info, const char *field, const struct bk_matrix *m,
                             int64_t rows, int64_t cols, const char *cols_rule)
{
    if (m->rows != rows)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.%s.extent[0] = %lld must equal N = %lld (W's rows: output features)",
                        info, field, (long long)m->rows, (long long)rows);
    if (m->cols != cols)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s.extent[1] = %lld must equal %s = %lld",
                        info, field, (long long)m->cols, cols_rule, (long long)cols);
    return BK_SUCCESS;
}

static BkResult sparse_type(const char *info, const char *field, BkDataType t, bool with_f64)
{
    if (bk_data_type_size(t) == 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s = %d is not a BkDataType a tensor can "
                        "have", info, field, (int)t);
    if (t == BK_DATA_TYPE_F32 || t == BK_DATA_TYPE_F16 || t == BK_DATA_TYPE_BF16 ||
        (with_f64 && t == BK_DATA_TYPE_F64))
        return BK_SUCCESS;
    return bk_error(BK_ERROR_UNSUPPORTED, "%s.%s = %s is not supported (F32, F16, BF16%s)", info,
                    field, bk_data_type_name(t), with_f64 ? ", F64" : "");
}

static BkResult metadata_type(const char *info, const struct bk_tensor *t)
{
    if (t->type != BK_DATA_TYPE_U16)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.metadata.dataType = %s must be U16", info,
                        bk_data_type_name(t->type));
    return BK_SUCCESS;
}

/* ---- Conversions -------------------------------------------------------- */

BkResult bk_sparse24_convert_init(BkPlan plan, const void *info)
{
    const BkSparse24ConvertInfo *ci = info;
    const char *in = "BkSparse24ConvertInfo";
    struct bk_sparse24_convert_problem *p = &plan->problem.sparse24_convert;
    struct bk_tensor dense = { 0 }, values = { 0 }, meta = { 0 };
    BkResult r;

    if ((unsigned)ci->conversion > BK_SPARSE24_VALIDATE)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.conversion = %d is not a BkSparse24Conversion", in,
                        (int)ci->conversion);
    if (ci->reserved != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.reserved = %u must be 0", in,
                        ci->reserved);
    p->conversion = ci->conversion;
    const bool validate = ci->conversion == BK_SPARSE24_VALIDATE;
    const bool decompress = ci->conversion == BK_SPARSE24_DECOMPRESS;

    if ((r = bk_matrix_field(in, "metadata", &ci->metadata, &meta, &p->metadata)) != BK_SUCCESS ||
        (r = metadata_type(in, &meta)) != BK_SUCCESS)
        return r;
    if (validate) {
        p->type = BK_DATA_TYPE_UNDEFINED;
        p->m = p->metadata.rows;
        bool ovf = false;
        p->k = bk_mul_i64(p->metadata.cols, 8, &ovf);
        if (ovf)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.metadata.extent[1] = %lld (K/8) makes K overflow 64 bits", in,
                            (long long)p->metadata.cols);
    } else {
        if ((r = bk_matrix_field(in, "dense", &ci->dense, &dense, &p->dense)) != BK_SUCCESS ||
            (r = sparse_type(in, "dense.dataType", dense.type, true)) != BK_SUCCESS)
            return r;
        p->type = dense.type;
        p->m = p->dense.rows;
        p->k = p->dense.cols;
        if (p->k % 8)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.dense.extent[1] = %lld (K) must be a multiple of 8", in,
                            (long long)p->k);
        if ((r = bk_matrix_field(in, "values", &ci->values, &values, &p->values)) != BK_SUCCESS)
            return r;
        if (values.type != dense.type)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.values.dataType = %s must match dense.dataType %s", in,
                            bk_data_type_name(values.type), bk_data_type_name(dense.type));
        if ((r = expect_shape(in, "values", &p->values, p->m, p->k / 2, "K/2")) != BK_SUCCESS ||
            (r = expect_shape(in, "metadata", &p->metadata, p->m, p->k / 8, "K/8")) != BK_SUCCESS)
            return r;
        if (decompress)
            r = bk_check_written_field(in, "dense", &dense);
        else if ((r = bk_check_written_field(in, "values", &values)) == BK_SUCCESS)
            r = bk_check_written_field(in, "metadata", &meta);
        if (r != BK_SUCCESS)
            return r;
    }

    const bool empty = p->m == 0 || p->k == 0;
    const uint32_t es = (uint32_t)bk_data_type_size(p->type);
    plan->props.bindingCount = 4;
    bk_plan_set_slot(plan, BK_SPARSE24_CONVERT_BINDING_DENSE, "dense",
                     validate || empty ? 0 : dense.span, es ? es : 1, decompress);
    bk_plan_set_slot(plan, BK_SPARSE24_CONVERT_BINDING_VALUES, "values",
                     validate || empty ? 0 : values.span, es ? es : 1, !validate && !decompress);
    bk_plan_set_slot(plan, BK_SPARSE24_CONVERT_BINDING_METADATA, "metadata", empty ? 0 : meta.span,
                     2, !validate && !decompress);
    bk_plan_set_slot(plan, BK_SPARSE24_CONVERT_BINDING_REPORT, "report", REPORT_BYTES, 8, true);
    /* Each group is decided alone, and the first bad group is a minimum:
     * the same on every run. */
    plan->props.precision = (BkPrecisionGuarantee){
        .computeType = p->type == BK_DATA_TYPE_UNDEFINED ? BK_DATA_TYPE_U16 : p->type,
        .accumulatorType = p->type == BK_DATA_TYPE_UNDEFINED ? BK_DATA_TYPE_U16 : p->type,
        .deterministic = BK_TRUE,
        .bitStable = BK_TRUE,
    };
    return BK_SUCCESS;
}

/* ---- Prepare ------------------------------------------------------------ */

/* The prepared weight's size on this context's device, or an error. */
static BkResult prepared_size(BkPlan plan, const char *info, BkDataType type, int64_t m,
                              int64_t k, uint64_t *size)
{
    *size = m > 0 && k > 0 ? plan->ctx->backend->sparse24_prepared_size(plan->ctx, type, m, k) : 0;
    if (m > 0 && k > 0 && *size == 0)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s: the %s backend cannot prepare a %s 2:4 weight of N = %lld, K = %lld",
                        info, plan->ctx->backend->name, bk_data_type_name(type), (long long)m,
                        (long long)k);
    return BK_SUCCESS;
}

#define PREPARED_ALIGNMENT 16u

BkResult bk_sparse24_prepare_init(BkPlan plan, const void *info)
{
    const BkSparse24PrepareInfo *pi = info;
    const char *in = "BkSparse24PrepareInfo";
    struct bk_sparse24_prepare_problem *p = &plan->problem.sparse24_prepare;
    struct bk_tensor values, meta;
    BkResult r;

    if ((r = bk_matrix_field(in, "values", &pi->values, &values, &p->values)) != BK_SUCCESS ||
        (r = sparse_type(in, "values.dataType", values.type, false)) != BK_SUCCESS ||
        (r = bk_matrix_field(in, "metadata", &pi->metadata, &meta, &p->metadata)) != BK_SUCCESS ||
        (r = metadata_type(in, &meta)) != BK_SUCCESS)
        return r;
    p->type = values.type;
    p->m = p->values.rows;
    p->k = p->values.cols * 2;
    if (p->values.cols % 4)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.values.extent[1] = %lld (K/2) must be a multiple of 4, as K must be "
                        "a multiple of 8", in, (long long)p->values.cols);
    if ((r = expect_shape(in, "metadata", &p->metadata, p->m, p->k / 8, "K/8")) != BK_SUCCESS)
        return r;
    uint64_t size;
    if ((r = prepared_size(plan, in, p->type, p->m, p->k, &size)) != BK_SUCCESS)
        return r;

    const bool empty = size == 0;
    plan->props.bindingCount = 3;
    bk_plan_set_slot(plan, BK_SPARSE24_PREPARE_BINDING_VALUES, "values", empty ? 0 : values.span,
                     (uint32_t)bk_data_type_size(p->type), false);
    bk_plan_set_slot(plan, BK_SPARSE24_PREPARE_BINDING_METADATA, "metadata", empty ? 0 : meta.span,
                     2, false);
    bk_plan_set_slot(plan, BK_SPARSE24_PREPARE_BINDING_PREPARED, "prepared", size,
                     PREPARED_ALIGNMENT, true);
    plan->props.precision = (BkPrecisionGuarantee){
        .computeType = p->type, .accumulatorType = p->type,
        .deterministic = BK_TRUE, .bitStable = BK_TRUE,
    };
    return BK_SUCCESS;
}

/* ---- Sparse GEMM -------------------------------------------------------- */

enum { W, X, C, Y, BIAS, SLOTS };

BkResult bk_sparse24_gemm_init(BkPlan plan, const void *info)
{
    const BkSparse24GemmInfo *g = info;
    const char *in = "BkSparse24GemmInfo";
    static const char *const names[SLOTS] = { "weight", "x", "c", "y", "bias" };
    struct bk_sparse24_gemm_problem *p = &plan->problem.sparse24_gemm;
    struct bk_tensor t[SLOTS] = { 0 };
    bool present[SLOTS] = { true, true, !bk_desc_absent(&g->c), true, !bk_desc_absent(&g->bias) };
    const BkTensorDesc *desc[SLOTS] = { NULL, &g->x, &g->c, &g->y, NULL };
    struct bk_matrix *mat[SLOTS] = { NULL, &p->x, &p->c, &p->y, NULL };
    char name[96];
    BkResult r;

    if ((r = sparse_type(in, "weightType", g->weightType, false)) != BK_SUCCESS ||
        (r = bk_gemm_check_scalars(in, g->activation, g->alpha, g->beta, present[C])) != BK_SUCCESS)
        return r;
    if (g->m < 0 || g->k < 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s = %lld must not be negative", in,
                        g->m < 0 ? "m" : "k", (long long)(g->m < 0 ? g->m : g->k));
    if (g->k % 8)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.k = %lld must be a multiple of 8", in,
                        (long long)g->k);
    for (int i = X; i <= Y; i++) {
        if (!present[i])
            continue;
        snprintf(name, sizeof name, "%s.%s", in, names[i]);
        if ((r = bk_tensor_from_desc(desc[i], name, &t[i])) != BK_SUCCESS ||
            (r = bk_matrix_from_tensor(&t[i], name, false, false, mat[i])) != BK_SUCCESS)
            return r;
    }
    if (t[X].type != g->weightType)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.x.dataType = %s with weightType %s is not supported (x must have "
                        "the weight's type)", in, bk_data_type_name(t[X].type),
                        bk_data_type_name(g->weightType));
    if ((r = bk_gemm_check_output_type(in, "y", t[Y].type, "x", t[X].type)) != BK_SUCCESS)
        return r;
    if (present[C] && t[C].type != t[Y].type)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s.c.dataType = %s must be y.dataType %s", in,
                        bk_data_type_name(t[C].type), bk_data_type_name(t[Y].type));
    /* X [M, K] @ W^T [K, N] = Y [M, N]: M tokens, N = m output features. */
    if (p->x.cols != g->k)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.x.extent[%u] = %lld (x's columns) must equal k = %lld", in,
                        t[X].rank - 1, (long long)p->x.cols, (long long)g->k);
    if (p->y.cols != g->m)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.y.extent[%u] = %lld (y's columns) must equal m = %lld", in,
                        t[Y].rank - 1, (long long)p->y.cols, (long long)g->m);
    if (p->y.rows != p->x.rows)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: M (tokens) disagrees: y has %lld rows but x has %lld", in,
                        (long long)p->y.rows, (long long)p->x.rows);
    if (present[C] && (p->c.rows != p->y.rows || p->c.cols != p->y.cols))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.c is [%lld, %lld] but y is [%lld, %lld]: C must have Y's shape", in,
                        (long long)p->c.rows, (long long)p->c.cols, (long long)p->y.rows,
                        (long long)p->y.cols);
    for (int i = X; i <= C; i++)
        if (present[i] && (r = bk_gemm_check_batch(in, names[i], &t[i], &t[Y], "y")) != BK_SUCCESS)
            return r;
    if ((r = bk_check_written_field(in, "y", &t[Y])) != BK_SUCCESS)
        return r;
    if (present[BIAS] &&
        (r = bk_gemm_check_bias(in, &g->bias, g->m, "m", t[Y].type, &t[BIAS])) != BK_SUCCESS)
        return r;

    p->type = g->weightType;
    p->out_type = t[Y].type;
    p->m = g->m;
    p->k = g->k;
    p->n = p->y.rows;
    p->batch = t[Y].rank == 3 ? t[Y].extent[0] : 1;
    p->has_c = present[C];
    p->has_bias = present[BIAS];
    p->activation = g->activation;
    p->alpha = g->alpha;
    p->beta = g->beta;

    uint64_t size;
    if ((r = prepared_size(plan, in, p->type, p->m, p->k, &size)) != BK_SUCCESS)
        return r;
    const bool empty = t[Y].count == 0;
    for (int i = 0; i < SLOTS; i++)
        if (empty && i != Y)
            present[i] = false;
    bk_gemm_set_slots(plan, names, t, present, SLOTS, Y);
    bk_plan_set_slot(plan, W, "weight", empty ? 0 : size, PREPARED_ALIGNMENT, false);
    bk_gemm_slot_alias(plan, Y, &p->y, C, &p->c, present[C]);
    bk_plan_set_float_precision(plan, p->type);
    return BK_SUCCESS;
}
