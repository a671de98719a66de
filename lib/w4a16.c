/* SPDX-License-Identifier: Apache-2.0 */
/* W4A16: validation of BkW4A16ConvertInfo, BkW4A16GptqRepackInfo and
 * BkW4A16GemmInfo into backend-neutral problems (bk_w4a16.h,
 * bk-w4a16(7)). Plain and GPTQ operands take any positive strides; the
 * packed forms and the index vectors are contiguous, because the kernels
 * read them as Marlin's tiles. */
#include "bk_internal.h"

#include <stdio.h>

/* The report a GPTQ repack writes: 32 bytes, 8-byte aligned. */
#define REPORT_BYTES ((uint64_t)sizeof(BkW4A16RepackReport))
_Static_assert(sizeof(BkW4A16RepackReport) == 32, "BkW4A16RepackReport is 32 bytes");

/* packed and packedScales are read in 16-byte vectors. */
#define PACKED_ALIGNMENT 16u
#define MARLIN_RULE "the Marlin layout tiles K by 16 and N by 64"

/* Where K or N is read from, for messages: "<info>.<field>.extent[<dim>] =
 * <value> (K)", or "... (K/8, so K = 24)" when the extent is a fraction. */
struct dim_source {
    const char *field;
    int dim;
    int64_t extent;
    int64_t scale;        /* K (or N) = scale * extent */
    const char *what;     /* "K", "N", "K/8", "N/8" */
    const char *whole;    /* "K" or "N" where scale > 1 */
};

static void describe(char *buf, size_t size, const char *info, const struct dim_source *d)
{
    if (d->scale == 1)
        snprintf(buf, size, "%s.%s.extent[%d] = %lld (%s)", info, d->field, d->dim,
                 (long long)d->extent, d->what);
    else
        snprintf(buf, size, "%s.%s.extent[%d] = %lld (%s, so %s = %lld)", info, d->field,
                 d->dim, (long long)d->extent, d->what, d->whole,
                 (long long)bk_mul_i64(d->extent, d->scale, &(bool){ false }));
}

static BkResult check_group_size(const char *info, int32_t group_size)
{
    if (group_size == 32 || group_size == 64 || group_size == 128 ||
        group_size == BK_W4A16_GROUP_PER_CHANNEL)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT,
                    "%s.groupSize = %d must be 32, 64, 128 or BK_W4A16_GROUP_PER_CHANNEL (-1)",
                    info, (int)group_size);
}

/* The weight's shape from K and N (each > 0, K a multiple of the group);
 * marlin: the packed layout's rule K % 16 == 0, N % 64 == 0 too. */
static BkResult shape_init(const char *info, int32_t group_size, const struct dim_source *ks,
                           const struct dim_source *ns, bool marlin, struct bk_w4a16_shape *s)
{
    char kd[160], nd[160];
    describe(kd, sizeof kd, info, ks);
    describe(nd, sizeof nd, info, ns);
    bool ovf = false;
    const int64_t k = bk_mul_i64(ks->extent, ks->scale, &ovf);
    const struct dim_source *big = ks;
    int64_t n = 0;
    if (!ovf) {
        big = ns;
        n = bk_mul_i64(ns->extent, ns->scale, &ovf);
    }
    if (ovf)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.%s.extent[%d] = %lld (%s) is too large: %s = %lld x extent[%d] must "
                        "fit in 64 bits", info, big->field, big->dim, (long long)big->extent,
                        big->what, big->whole, (long long)big->scale, big->dim);
    if (k <= 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s must be positive", kd);
    if (n <= 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s must be positive", nd);
    s->k = k;
    s->n = n;
    s->per_channel = group_size == BK_W4A16_GROUP_PER_CHANNEL;
    s->group = s->per_channel ? k : group_size;
    if (k % s->group)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s must be a multiple of %s.groupSize = %d",
                        kd, info, (int)group_size);
    s->groups = k / s->group;
    if (marlin && k % 16)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s must be a multiple of 16: " MARLIN_RULE,
                        kd);
    if (marlin && n % 64)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s must be a multiple of 64: " MARLIN_RULE,
                        nd);
    return BK_SUCCESS;
}

/* Index vectors (gIdx, perm) hold row numbers as I32. */
static BkResult check_i32_rows(const char *info, const char *field, int64_t k)
{
    if (k <= INT32_MAX)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT,
                    "%s.%s: K = %lld rows cannot be numbered in I32 (at most 2147483647)", info,
                    field, (long long)k);
}

static BkResult scale_type(const char *info, const char *field, BkDataType t)
{
    if (t == BK_DATA_TYPE_F16 || t == BK_DATA_TYPE_BF16)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_UNSUPPORTED, "%s.%s.dataType = %s is not supported (F16, BF16)",
                    info, field, bk_data_type_name(t));
}

/* A format rule: the field's type is fixed. */
static BkResult type_is(const char *info, const char *field, BkDataType got, BkDataType want)
{
    if (got == want)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s.dataType = %s must be %s", info, field,
                    bk_data_type_name(got), bk_data_type_name(want));
}

/* A packed operand or index vector: the rank given, contiguous row-major
 * (all-zero strides or exactly the row-major ones). */
static BkResult contiguous(const char *info, const char *field, const BkTensorDesc *desc,
                           uint32_t rank, struct bk_tensor *t)
{
    BkResult r = bk_tensor_field(info, field, desc, rank, t);
    if (r != BK_SUCCESS)
        return r;
    char name[96];
    snprintf(name, sizeof name, "%s.%s", info, field);
    int64_t want = 1;
    for (uint32_t i = rank; i-- > 0;) {
        if (t->stride[i] != want)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.stride[%u] = %lld must be %lld: the tensor must be contiguous "
                            "row-major (or all strides 0)", name, i, (long long)t->stride[i],
                            (long long)want);
        bool ovf = false; /* cannot: the element count fits (bk_tensor_from_desc) */
        want = bk_mul_i64(want, t->extent[i] > 0 ? t->extent[i] : 1, &ovf);
    }
    return BK_SUCCESS;
}

static BkResult expect_extent(const char *info, const char *field, const struct bk_tensor *t,
                              int dim, uint64_t want, const char *rule)
{
    if ((uint64_t)t->extent[dim] == want)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s.extent[%d] = %lld must equal %s = %llu",
                    info, field, dim, (long long)t->extent[dim], rule, (unsigned long long)want);
}

/* A [rows, cols] operand (plain or packed). */
static BkResult expect_shape(const char *info, const char *field, const struct bk_tensor *t,
                             uint64_t rows, const char *rows_rule, uint64_t cols,
                             const char *cols_rule)
{
    BkResult r = expect_extent(info, field, t, 0, rows, rows_rule);
    return r != BK_SUCCESS ? r : expect_extent(info, field, t, 1, cols, cols_rule);
}

/* packed I32 [K/16, 2N] and packedScales [G, N] of the scales' type. */
static BkResult packed_pair(const char *info, const BkTensorDesc *packed_desc,
                            const BkTensorDesc *scales_desc, const struct bk_w4a16_shape *s,
                            const char *scales_type_from, struct bk_tensor *packed,
                            struct bk_tensor *packed_scales)
{
    BkResult r;
    if ((r = contiguous(info, "packed", packed_desc, 2, packed)) != BK_SUCCESS ||
        (r = type_is(info, "packed", packed->type, BK_DATA_TYPE_I32)) != BK_SUCCESS ||
        (r = expect_shape(info, "packed", packed, (uint64_t)s->k / 16, "K/16",
                          2 * (uint64_t)s->n, "2N")) != BK_SUCCESS ||
        (r = contiguous(info, "packedScales", scales_desc, 2, packed_scales)) != BK_SUCCESS)
        return r;
    if (packed_scales->type != s->scale_type)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.packedScales.dataType = %s must be %s's type %s", info,
                        bk_data_type_name(packed_scales->type), scales_type_from,
                        bk_data_type_name(s->scale_type));
    return expect_shape(info, "packedScales", packed_scales, (uint64_t)s->groups, "G",
                        (uint64_t)s->n, "N");
}

/* An optional I32 vector [K] (gIdx, perm): contiguous. */
static BkResult index_vector(const char *info, const char *field, const BkTensorDesc *desc,
                             int64_t k, struct bk_tensor *t)
{
    BkResult r;
    if ((r = contiguous(info, field, desc, 1, t)) != BK_SUCCESS ||
        (r = type_is(info, field, t->type, BK_DATA_TYPE_I32)) != BK_SUCCESS ||
        (r = expect_extent(info, field, t, 0, (uint64_t)k, "K")) != BK_SUCCESS)
        return r;
    return check_i32_rows(info, field, k);
}

/* ---- Zero points (BkW4A16ZeroPointsInfo) ------------------------------------ */

#define ZP "BkW4A16ZeroPointsInfo"

/* The BkW4A16ZeroPointsInfo chained to an info (NULL when none; at most
 * one), its flags 0 and its format known; only a repack reads the format,
 * so elsewhere it must be GPTQ's (0), as a zeroed struct has it. */
static BkResult zero_points_info(const char *in, const void *next, bool repack,
                                 const BkW4A16ZeroPointsInfo **out)
{
    BkResult r;
    *out = NULL;
    if ((r = bk_check_output_chain(&(BkBaseInStructure){ .pNext = next }, in)) != BK_SUCCESS)
        return r;
    for (const BkBaseInStructure *c = next; c; c = c->pNext) {
        if (c->sType != BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO)
            continue;
        if (*out)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.pNext chains " ZP " twice: it may be chained once", in);
        *out = (const BkW4A16ZeroPointsInfo *)(const void *)c;
    }
    const BkW4A16ZeroPointsInfo *z = *out;
    if (!z)
        return BK_SUCCESS;
    if (z->flags != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, ZP ".flags = 0x%x must be 0", z->flags);
    if ((unsigned)z->checkpointFormat > BK_W4A16_CHECKPOINT_AWQ)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        ZP ".checkpointFormat = %d is not a BkW4A16CheckpointFormat",
                        (int)z->checkpointFormat);
    if (!repack && z->checkpointFormat != BK_W4A16_CHECKPOINT_GPTQ)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        ZP ".checkpointFormat = %d must be BK_W4A16_CHECKPOINT_GPTQ (0) when "
                        "chained to %s: only a repack reads a checkpoint",
                        (int)z->checkpointFormat, in);
    return BK_SUCCESS;
}

/* packedZeros: I32 [G, N/8], contiguous. */
static BkResult packed_zeros(const BkW4A16ZeroPointsInfo *z, const struct bk_w4a16_shape *s,
                             struct bk_tensor *t)
{
    BkResult r;
    if (bk_desc_absent(&z->packedZeros))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        ZP ".packedZeros is absent: this operation reads or writes the packed "
                        "zero points");
    if ((r = contiguous(ZP, "packedZeros", &z->packedZeros, 2, t)) != BK_SUCCESS ||
        (r = type_is(ZP, "packedZeros", t->type, BK_DATA_TYPE_I32)) != BK_SUCCESS)
        return r;
    return expect_shape(ZP, "packedZeros", t, (uint64_t)s->groups, "G", (uint64_t)s->n / 8,
                        "N/8");
}

/* zeros: U8 [G, N], any positive strides. */
static BkResult plain_zeros(const BkW4A16ZeroPointsInfo *z, const struct bk_w4a16_shape *s,
                            struct bk_tensor *t, struct bk_matrix *m)
{
    BkResult r;
    if (bk_desc_absent(&z->zeros))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        ZP ".zeros is absent: a conversion reads or writes the plain zero "
                        "points");
    if ((r = bk_matrix_field(ZP, "zeros", &z->zeros, t, m)) != BK_SUCCESS ||
        (r = type_is(ZP, "zeros", t->type, BK_DATA_TYPE_U8)) != BK_SUCCESS)
        return r;
    return expect_shape(ZP, "zeros", t, (uint64_t)s->groups, "G", (uint64_t)s->n, "N");
}

/* Conversions and the repack move bits (values keep their exact bits);
 * quantizing computes in F32. */
static void set_convert_precision(BkPlan plan, BkDataType compute)
{
    plan->props.precision = (BkPrecisionGuarantee){
        .computeType = compute, .accumulatorType = compute,
        .deterministic = BK_TRUE, .bitStable = BK_TRUE,
    };
    plan->props.workspaceSize = 0;
}

/* ---- Conversions -------------------------------------------------------- */

static const char *const conversion_names[] = {
    [BK_W4A16_QUANTIZE] = "BK_W4A16_QUANTIZE",
    [BK_W4A16_PACK] = "BK_W4A16_PACK",
    [BK_W4A16_UNPACK] = "BK_W4A16_UNPACK",
};

BkResult bk_w4a16_convert_init(BkPlan plan, const void *info)
{
    const BkW4A16ConvertInfo *ci = info;
    const char *in = "BkW4A16ConvertInfo";
    struct bk_w4a16_convert_problem *p = &plan->problem.w4a16_convert;
    struct bk_tensor weight = { 0 }, quantized = { 0 }, scales = { 0 }, packed = { 0 },
                     packed_scales = { 0 }, zeros = { 0 }, packed_zeros_t = { 0 };
    BkResult r;

    if ((unsigned)ci->conversion > BK_W4A16_UNPACK)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.conversion = %d is not a BkW4A16Conversion",
                        in, (int)ci->conversion);
    if ((r = check_group_size(in, ci->groupSize)) != BK_SUCCESS)
        return r;
    const BkW4A16ZeroPointsInfo *zp;
    if ((r = zero_points_info(in, ci->pNext, false, &zp)) != BK_SUCCESS)
        return r;
    p->conversion = ci->conversion;
    const char *conv = conversion_names[ci->conversion];
    const bool quantize = ci->conversion == BK_W4A16_QUANTIZE;
    const bool pack = ci->conversion == BK_W4A16_PACK;

    /* The plain form gives the shape: weight for QUANTIZE, else quantized. */
    if (quantize) {
        if ((r = bk_matrix_field(in, "weight", &ci->weight, &weight, &p->weight)) != BK_SUCCESS)
            return r;
        if (weight.type != BK_DATA_TYPE_F32 && weight.type != BK_DATA_TYPE_F16 &&
            weight.type != BK_DATA_TYPE_BF16)
            return bk_error(BK_ERROR_UNSUPPORTED,
                            "%s.weight.dataType = %s is not supported (F32, F16, BF16)", in,
                            bk_data_type_name(weight.type));
    } else {
        if ((r = bk_check_absent_field(in, "weight", &ci->weight, conv)) != BK_SUCCESS)
            return r;
        p->weight = (struct bk_matrix){ .type = BK_DATA_TYPE_UNDEFINED };
    }
    if ((r = bk_matrix_field(in, "quantized", &ci->quantized, &quantized, &p->quantized)) !=
            BK_SUCCESS ||
        (r = type_is(in, "quantized", quantized.type, BK_DATA_TYPE_U8)) != BK_SUCCESS)
        return r;
    const struct bk_matrix *src = quantize ? &p->weight : &p->quantized;
    const char *src_name = quantize ? "weight" : "quantized";
    const struct dim_source ks = { src_name, 0, src->rows, 1, "K", "K" };
    const struct dim_source ns = { src_name, 1, src->cols, 1, "N", "N" };
    if ((r = shape_init(in, ci->groupSize, &ks, &ns, !quantize, &p->shape)) != BK_SUCCESS)
        return r;
    struct bk_w4a16_shape *s = &p->shape;
    if (quantize && (r = expect_shape(in, "quantized", &quantized, (uint64_t)s->k, "K",
                                      (uint64_t)s->n, "N")) != BK_SUCCESS)
        return r;
    if ((r = bk_matrix_field(in, "scales", &ci->scales, &scales, &p->scales)) != BK_SUCCESS ||
        (r = scale_type(in, "scales", scales.type)) != BK_SUCCESS ||
        (r = expect_shape(in, "scales", &scales, (uint64_t)s->groups, "G", (uint64_t)s->n, "N")) !=
            BK_SUCCESS)
        return r;
    s->scale_type = scales.type;

    if (quantize) {
        if ((r = bk_check_absent_field(in, "packed", &ci->packed, conv)) != BK_SUCCESS ||
            (r = bk_check_absent_field(in, "packedScales", &ci->packedScales, conv)) !=
                BK_SUCCESS)
            return r;
    } else if ((r = packed_pair(in, &ci->packed, &ci->packedScales, s, "scales", &packed,
                                &packed_scales)) != BK_SUCCESS) {
        return r;
    }
    p->has_zeros = zp != NULL;
    p->zeros = (struct bk_matrix){ .type = BK_DATA_TYPE_UNDEFINED };
    if (zp && ((r = plain_zeros(zp, s, &zeros, &p->zeros)) != BK_SUCCESS ||
               (r = quantize ? bk_check_absent_field(ZP, "packedZeros", &zp->packedZeros, conv)
                             : packed_zeros(zp, s, &packed_zeros_t)) != BK_SUCCESS))
        return r;
    /* Written plain tensors; the packed ones are contiguous. */
    if (!pack && ((r = bk_check_written_field(in, "quantized", &quantized)) != BK_SUCCESS ||
                  (r = bk_check_written_field(in, "scales", &scales)) != BK_SUCCESS ||
                  (zp && (r = bk_check_written_field(ZP, "zeros", &zeros)) != BK_SUCCESS)))
        return r;

    plan->props.bindingCount = zp ? 7 : 5;
    const uint32_t packed_align = quantize ? 1 : PACKED_ALIGNMENT;
    bk_plan_set_slot(plan, BK_W4A16_CONVERT_BINDING_WEIGHT, "weight", weight.span,
                     (uint32_t)bk_data_type_size(weight.type), false);
    bk_plan_set_slot(plan, BK_W4A16_CONVERT_BINDING_QUANTIZED, "quantized", quantized.span, 1,
                     !pack);
    bk_plan_set_slot(plan, BK_W4A16_CONVERT_BINDING_SCALES, "scales", scales.span, 2, !pack);
    bk_plan_set_slot(plan, BK_W4A16_CONVERT_BINDING_PACKED, "packed", packed.span, packed_align,
                     pack);
    bk_plan_set_slot(plan, BK_W4A16_CONVERT_BINDING_PACKED_SCALES, "packedScales",
                     packed_scales.span, packed_align, pack);
    if (zp) {
        bk_plan_set_slot(plan, BK_W4A16_CONVERT_BINDING_ZEROS, "zeros", zeros.span, 1, !pack);
        bk_plan_set_slot(plan, BK_W4A16_CONVERT_BINDING_PACKED_ZEROS, "packedZeros",
                         packed_zeros_t.span, packed_align, pack);
    }
    set_convert_precision(plan, quantize ? BK_DATA_TYPE_F32 : s->scale_type);
    return BK_SUCCESS;
}

/* ---- GPTQ repack ---------------------------------------------------------- */

enum { R_QWEIGHT, R_SCALES, R_QZEROS, R_G_IDX, R_PACKED, R_PACKED_SCALES, R_PERM, R_SLOTS };

BkResult bk_w4a16_repack_init(BkPlan plan, const void *info)
{
    const BkW4A16GptqRepackInfo *ri = info;
    const char *in = "BkW4A16GptqRepackInfo";
    struct bk_w4a16_repack_problem *p = &plan->problem.w4a16_repack;
    struct bk_tensor t[R_SLOTS] = { 0 };
    BkResult r;

    if ((unsigned)ri->zeros > BK_W4A16_GPTQ_ZEROS_MINUS_ONE)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.zeros = %d is not a BkW4A16GptqZeros", in,
                        (int)ri->zeros);
    if ((r = check_group_size(in, ri->groupSize)) != BK_SUCCESS)
        return r;
    const BkW4A16ZeroPointsInfo *zp;
    if ((r = zero_points_info(in, ri->pNext, true, &zp)) != BK_SUCCESS)
        return r;
    p->has_zeros = zp != NULL;
    p->format = zp ? zp->checkpointFormat : BK_W4A16_CHECKPOINT_GPTQ;
    p->zeros = ri->zeros;
    p->has_g_idx = !bk_desc_absent(&ri->gIdx);
    if (p->format == BK_W4A16_CHECKPOINT_AWQ && p->has_g_idx)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.gIdx is given with " ZP ".checkpointFormat = "
                        "BK_W4A16_CHECKPOINT_AWQ: AWQ checkpoints have no g_idx", in);
    p->has_perm = !bk_desc_absent(&ri->perm);

    if ((r = bk_matrix_field(in, "qweight", &ri->qweight, &t[R_QWEIGHT], &p->qweight)) !=
            BK_SUCCESS ||
        (r = type_is(in, "qweight", t[R_QWEIGHT].type, BK_DATA_TYPE_I32)) != BK_SUCCESS)
        return r;
    const bool awq = p->format == BK_W4A16_CHECKPOINT_AWQ;
    const struct dim_source ks = awq ? (struct dim_source){ "qweight", 0, p->qweight.rows, 1, "K",
                                                            "K" }
                                     : (struct dim_source){ "qweight", 0, p->qweight.rows, 8,
                                                            "K/8", "K" };
    const struct dim_source ns = awq ? (struct dim_source){ "qweight", 1, p->qweight.cols, 8,
                                                            "N/8", "N" }
                                     : (struct dim_source){ "qweight", 1, p->qweight.cols, 1, "N",
                                                            "N" };
    if ((r = shape_init(in, ri->groupSize, &ks, &ns, true, &p->shape)) != BK_SUCCESS)
        return r;
    struct bk_w4a16_shape *s = &p->shape;
    if ((r = bk_matrix_field(in, "scales", &ri->scales, &t[R_SCALES], &p->scales)) != BK_SUCCESS ||
        (r = scale_type(in, "scales", t[R_SCALES].type)) != BK_SUCCESS ||
        (r = expect_shape(in, "scales", &t[R_SCALES], (uint64_t)s->groups, "G", (uint64_t)s->n,
                          "N")) != BK_SUCCESS)
        return r;
    s->scale_type = t[R_SCALES].type;
    p->qzeros = (struct bk_matrix){ .type = BK_DATA_TYPE_UNDEFINED };
    if (!bk_desc_absent(&ri->qzeros) &&
        ((r = bk_matrix_field(in, "qzeros", &ri->qzeros, &t[R_QZEROS], &p->qzeros)) != BK_SUCCESS ||
         (r = type_is(in, "qzeros", t[R_QZEROS].type, BK_DATA_TYPE_I32)) != BK_SUCCESS ||
         (r = expect_shape(in, "qzeros", &t[R_QZEROS], (uint64_t)s->groups, "G", (uint64_t)s->n / 8,
                           "N/8")) != BK_SUCCESS))
        return r;
    if (p->has_g_idx &&
        (r = index_vector(in, "gIdx", &ri->gIdx, s->k, &t[R_G_IDX])) != BK_SUCCESS)
        return r;
    if ((r = packed_pair(in, &ri->packed, &ri->packedScales, s, "scales", &t[R_PACKED],
                         &t[R_PACKED_SCALES])) != BK_SUCCESS)
        return r;
    if (p->has_g_idx && !p->has_perm)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.perm is absent but gIdx is given: the rows of an act-order "
                        "checkpoint are sorted by group, and the GEMM needs that permutation "
                        "(bind perm here and in BkW4A16GemmInfo)", in);
    if (p->has_perm &&
        (r = index_vector(in, "perm", &ri->perm, s->k, &t[R_PERM])) != BK_SUCCESS)
        return r;
    struct bk_tensor packed_zeros_t = { 0 };
    if (zp && ((r = bk_check_absent_field(ZP, "zeros", &zp->zeros, "a repack")) != BK_SUCCESS ||
               (r = packed_zeros(zp, s, &packed_zeros_t)) != BK_SUCCESS))
        return r;

    static const char *const names[R_SLOTS] = { "qweight", "scales", "qzeros", "gIdx", "packed",
                                                "packedScales", "perm" };
    static const uint32_t align[R_SLOTS] = { 4, 2, 4, 4, PACKED_ALIGNMENT, PACKED_ALIGNMENT, 4 };
    plan->props.bindingCount = R_SLOTS + (zp ? 2 : 1);
    for (int i = 0; i < R_SLOTS; i++) {
        const bool present = t[i].type != BK_DATA_TYPE_UNDEFINED;
        bk_plan_set_slot(plan, (uint32_t)i, names[i], t[i].span, present ? align[i] : 1,
                         present && i >= R_PACKED);
    }
    bk_plan_set_slot(plan, BK_W4A16_REPACK_BINDING_REPORT, "report", REPORT_BYTES, 8, true);
    if (zp)
        bk_plan_set_slot(plan, BK_W4A16_REPACK_BINDING_PACKED_ZEROS, "packedZeros",
                         packed_zeros_t.span, PACKED_ALIGNMENT, true);
    set_convert_precision(plan, s->scale_type);
    return BK_SUCCESS;
}

/* ---- GEMM ------------------------------------------------------------------- */

enum { G_A, G_PACKED, G_PACKED_SCALES, G_PERM, G_C, G_SLOTS };

BkResult bk_w4a16_gemm_init(BkPlan plan, const void *info)
{
    const BkW4A16GemmInfo *g = info;
    const char *in = "BkW4A16GemmInfo";
    struct bk_w4a16_gemm_problem *p = &plan->problem.w4a16_gemm;
    struct bk_tensor t[G_SLOTS] = { 0 };
    BkResult r;

    if (g->flags != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.flags = 0x%x must be 0", in, g->flags);
    const BkW4A16ZeroPointsInfo *zp;
    if ((r = zero_points_info(in, g->pNext, false, &zp)) != BK_SUCCESS)
        return r;
    if ((r = check_group_size(in, g->groupSize)) != BK_SUCCESS)
        return r;
    if ((r = bk_matrix_field(in, "a", &g->a, &t[G_A], &p->a)) != BK_SUCCESS)
        return r;
    if (t[G_A].type != BK_DATA_TYPE_F16 && t[G_A].type != BK_DATA_TYPE_BF16)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s.a.dataType = %s is not supported (F16, BF16)",
                        in, bk_data_type_name(t[G_A].type));
    if ((r = bk_matrix_field(in, "c", &g->c, &t[G_C], &p->c)) != BK_SUCCESS)
        return r;
    if (t[G_C].type != t[G_A].type)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.c.dataType = %s is not supported with a.dataType %s (c must have "
                        "a's type)", in, bk_data_type_name(t[G_C].type),
                        bk_data_type_name(t[G_A].type));
    const struct dim_source ks = { "a", 1, p->a.cols, 1, "K", "K" };
    const struct dim_source ns = { "c", 1, p->c.cols, 1, "N", "N" };
    if ((r = shape_init(in, g->groupSize, &ks, &ns, true, &p->shape)) != BK_SUCCESS)
        return r;
    p->shape.scale_type = t[G_A].type;
    p->m = p->a.rows;
    if (p->c.rows != p->m)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.c.extent[0] = %lld must equal M = %lld (a.extent[0])", in,
                        (long long)p->c.rows, (long long)p->m);
    if ((r = packed_pair(in, &g->packed, &g->packedScales, &p->shape, "a", &t[G_PACKED],
                         &t[G_PACKED_SCALES])) != BK_SUCCESS)
        return r;
    p->has_perm = !bk_desc_absent(&g->perm);
    if (p->has_perm &&
        (r = index_vector(in, "perm", &g->perm, p->shape.k, &t[G_PERM])) != BK_SUCCESS)
        return r;
    if ((r = bk_check_written_field(in, "c", &t[G_C])) != BK_SUCCESS)
        return r;
    struct bk_tensor packed_zeros_t = { 0 };
    p->has_zeros = zp != NULL;
    if (zp && ((r = bk_check_absent_field(ZP, "zeros", &zp->zeros, "the GEMM")) != BK_SUCCESS ||
               (r = packed_zeros(zp, &p->shape, &packed_zeros_t)) != BK_SUCCESS))
        return r;

    /* M == 0: nothing is read or written, and the bindings may be 0. */
    static const char *const names[G_SLOTS] = { "a", "packed", "packedScales", "perm", "c" };
    const uint32_t es = (uint32_t)bk_data_type_size(t[G_A].type);
    const uint32_t align[G_SLOTS] = { es, PACKED_ALIGNMENT, PACKED_ALIGNMENT, 4, es };
    plan->props.bindingCount = G_SLOTS;
    for (int i = 0; i < G_SLOTS; i++)
        bk_plan_set_slot(plan, (uint32_t)i, names[i], p->m ? t[i].span : 0,
                         t[i].type != BK_DATA_TYPE_UNDEFINED ? align[i] : 1, i == G_C);
    if (zp) {
        plan->props.bindingCount = G_SLOTS + 1;
        bk_plan_set_slot(plan, BK_W4A16_GEMM_BINDING_PACKED_ZEROS, "packedZeros",
                         p->m ? packed_zeros_t.span : 0, PACKED_ALIGNMENT, false);
    }
    /* Weights are rounded to a's type; products are summed in F32. */
    plan->props.precision = (BkPrecisionGuarantee){
        .computeType = t[G_A].type, .accumulatorType = BK_DATA_TYPE_F32,
        .deterministic = BK_TRUE, .bitStable = BK_TRUE,
    };
    plan->props.workspaceSize = 0;
    return BK_SUCCESS;
}
