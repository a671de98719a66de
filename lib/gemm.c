/* SPDX-License-Identifier: Apache-2.0 */
/* Dense GEMM: validation of BkGemmInfo and its normalisation into a
 * backend-neutral struct bk_gemm_problem (transposes folded into strides,
 * batch counts checked, in-place C == D recognised). */
#include "bk_internal.h"

#include <math.h>
#include <stdio.h>

static const char *const op_names[] = { "N", "T" };

static bool half_type(BkDataType t)
{
    return t == BK_DATA_TYPE_F16 || t == BK_DATA_TYPE_BF16;
}

bool bk_gemm_input_type(BkDataType t)
{
    return t == BK_DATA_TYPE_F32 || half_type(t) || t == BK_DATA_TYPE_F64;
}

BkResult bk_gemm_check_output_type(const char *info, const char *field, BkDataType out,
                                   const char *in_field, BkDataType in)
{
    if (out == in || (out == BK_DATA_TYPE_F32 && half_type(in)))
        return BK_SUCCESS;
    return bk_error(BK_ERROR_UNSUPPORTED,
                    "%s.%s.dataType = %s with %s.dataType %s is not supported (it must be %s%s)",
                    info, field, bk_data_type_name(out), in_field, bk_data_type_name(in),
                    bk_data_type_name(in), half_type(in) ? " or F32" : "");
}

BkResult bk_gemm_check_scalars(const char *info, BkGemmActivation act, double alpha, double beta,
                               bool has_c)
{
    if ((unsigned)act > BK_GEMM_ACTIVATION_GELU_TANH)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.activation = %d is not a BkGemmActivation",
                        info, (int)act);
    if (!isfinite(alpha))
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.alpha = %g must be finite", info, alpha);
    if (!isfinite(beta))
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.beta = %g must be finite", info, beta);
    if (!has_c && beta != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.beta = %g needs c, but c.dataType is UNDEFINED (no C): beta must be 0",
                        info, beta);
    return BK_SUCCESS;
}

BkResult bk_gemm_check_bias(const char *info, const BkTensorDesc *desc, int64_t length,
                            const char *length_name, BkDataType out_type, struct bk_tensor *t)
{
    char name[96];
    snprintf(name, sizeof name, "%s.bias", info);
    BkResult r = bk_tensor_from_desc(desc, name, t);
    if (r != BK_SUCCESS)
        return r;
    if (t->rank != 1 || t->extent[0] != length)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s must be a vector of %s = %lld elements (it has rank %u, extent[0] = "
                        "%lld)", name, length_name, (long long)length, t->rank,
                        (long long)t->extent[0]);
    if (t->count > 1 && t->stride[0] != 1)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s.stride[0] = %lld: a bias must be contiguous",
                        name, (long long)t->stride[0]);
    if (t->type != out_type)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s.dataType = %s must be the output's type %s",
                        name, bk_data_type_name(t->type), bk_data_type_name(out_type));
    return BK_SUCCESS;
}

BkResult bk_gemm_check_batch(const char *info, const char *field, const struct bk_tensor *t,
                             const struct bk_tensor *out, const char *out_field)
{
    if (t->rank > out->rank)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.%s.rank = %u: a batched operand needs a batched output (%s.rank is %u)",
                        info, field, t->rank, out_field, out->rank);
    if (t->rank == 3 && t->extent[0] != out->extent[0])
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.%s.extent[0] = %lld (batch) must equal %s.extent[0] = %lld", info,
                        field, (long long)t->extent[0], out_field, (long long)out->extent[0]);
    return BK_SUCCESS;
}

/* The slot of a written output that C may share: same type and layout. */
void bk_gemm_slot_alias(BkPlan plan, uint32_t out_slot, const struct bk_matrix *out,
                        uint32_t c_slot, const struct bk_matrix *c, bool has_c)
{
    if (has_c && c->type == out->type && c->row_stride == out->row_stride &&
        c->col_stride == out->col_stride && c->batch_stride == out->batch_stride &&
        plan->slot[c_slot].span == plan->slot[out_slot].span)
        plan->slot[out_slot].alias_of = (int8_t)c_slot;
}

void bk_gemm_set_slots(BkPlan plan, const char *const *names, const struct bk_tensor *t,
                       const bool *present, uint32_t count, uint32_t written)
{
    plan->props.bindingCount = count;
    for (uint32_t i = 0; i < count; i++) {
        plan->slot[i].name = names[i];
        plan->slot[i].span = present[i] ? t[i].span : 0;
        plan->slot[i].alignment = present[i] ? (uint32_t)bk_data_type_size(t[i].type) : 1;
        plan->slot[i].written = i == written;
    }
}

enum { A, B, C, D, BIAS, SLOTS };

BkResult bk_gemm_init(BkPlan plan, const void *info)
{
    const BkGemmInfo *g = info;
    const char *in = "BkGemmInfo";
    static const char *const names[SLOTS] = { "a", "b", "c", "d", "bias" };
    const BkTensorDesc *desc[SLOTS] = { &g->a, &g->b, &g->c, &g->d, &g->bias };
    struct bk_tensor t[SLOTS] = { 0 };
    bool present[SLOTS] = { true, true, !bk_desc_absent(&g->c), true, !bk_desc_absent(&g->bias) };
    char name[96];
    BkResult r;

    if ((unsigned)g->transA > BK_GEMM_OP_T)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.transA = %d is not a BkGemmOp", in,
                        (int)g->transA);
    if ((unsigned)g->transB > BK_GEMM_OP_T)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.transB = %d is not a BkGemmOp", in,
                        (int)g->transB);
    if (g->flags & ~(BkGemmFlags)BK_GEMM_ALLOW_TF32_BIT)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.flags = 0x%x has unknown bits", in,
                        g->flags);
    if ((r = bk_gemm_check_scalars(in, g->activation, g->alpha, g->beta, present[C])) != BK_SUCCESS)
        return r;

    for (int i = A; i <= D; i++) {
        if (!present[i])
            continue;
        snprintf(name, sizeof name, "%s.%s", in, names[i]);
        if ((r = bk_tensor_from_desc(desc[i], name, &t[i])) != BK_SUCCESS)
            return r;
    }
    if (!bk_gemm_input_type(t[A].type))
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.a.dataType = %s is not supported by GEMM (F32, F16, BF16, F64)", in,
                        bk_data_type_name(t[A].type));
    if (t[B].type != t[A].type)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.b.dataType = %s with a.dataType %s is not supported (a and b must "
                        "have one type)", in, bk_data_type_name(t[B].type),
                        bk_data_type_name(t[A].type));
    if ((r = bk_gemm_check_output_type(in, "d", t[D].type, "a", t[A].type)) != BK_SUCCESS)
        return r;
    if (present[C] && t[C].type != t[D].type)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s.c.dataType = %s must be d.dataType %s", in,
                        bk_data_type_name(t[C].type), bk_data_type_name(t[D].type));

    struct bk_gemm_problem *p = &plan->problem.gemm;
    const bool trans[SLOTS] = { g->transA == BK_GEMM_OP_T, g->transB == BK_GEMM_OP_T };
    struct bk_matrix *mat[SLOTS] = { &p->a, &p->b, &p->c, &p->d, NULL };
    for (int i = A; i <= D; i++) {
        if (!present[i])
            continue;
        snprintf(name, sizeof name, "%s.%s", in, names[i]);
        if ((r = bk_matrix_from_tensor(&t[i], name, trans[i], true, mat[i])) != BK_SUCCESS)
            return r;
    }
    /* op(A) [M, K] @ op(B) [K, N] = D [M, N]; C like D. */
    if (p->a.cols != p->b.rows)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: K disagrees: op(a) has %lld columns (transA = %s) but op(b) has "
                        "%lld rows (transB = %s)", in, (long long)p->a.cols, op_names[g->transA],
                        (long long)p->b.rows, op_names[g->transB]);
    if (p->d.rows != p->a.rows)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: M disagrees: d has %lld rows but op(a) has %lld (transA = %s)", in,
                        (long long)p->d.rows, (long long)p->a.rows, op_names[g->transA]);
    if (p->d.cols != p->b.cols)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: N disagrees: d has %lld columns but op(b) has %lld (transB = %s)",
                        in, (long long)p->d.cols, (long long)p->b.cols, op_names[g->transB]);
    if (present[C] && (p->c.rows != p->d.rows || p->c.cols != p->d.cols))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.c is [%lld, %lld] but d is [%lld, %lld]: C must have D's shape", in,
                        (long long)p->c.rows, (long long)p->c.cols, (long long)p->d.rows,
                        (long long)p->d.cols);
    for (int i = A; i <= C; i++)
        if (present[i] && (r = bk_gemm_check_batch(in, names[i], &t[i], &t[D], "d")) != BK_SUCCESS)
            return r;
    snprintf(name, sizeof name, "%s.d", in);
    if ((r = bk_tensor_check_no_self_overlap(&t[D], name)) != BK_SUCCESS)
        return r;
    if (present[BIAS] &&
        (r = bk_gemm_check_bias(in, &g->bias, p->d.cols, "N (d's columns)", t[D].type,
                                &t[BIAS])) != BK_SUCCESS)
        return r;

    p->ab_type = t[A].type;
    p->cd_type = t[D].type;
    p->m = p->d.rows;
    p->n = p->d.cols;
    p->k = p->a.cols;
    p->batch = t[D].rank == 3 ? t[D].extent[0] : 1;
    p->has_c = present[C];
    p->has_bias = present[BIAS];
    p->tf32 = (g->flags & BK_GEMM_ALLOW_TF32_BIT) && t[A].type == BK_DATA_TYPE_F32;
    p->activation = g->activation;
    p->alpha = g->alpha;
    p->beta = g->beta;

    /* An empty output reads nothing: its inputs need no binding. */
    const bool empty = t[D].count == 0;
    for (int i = 0; i < SLOTS; i++)
        if (empty && i != D)
            present[i] = false;
    bk_gemm_set_slots(plan, names, t, present, SLOTS, D);
    bk_gemm_slot_alias(plan, D, &p->d, C, &p->c, present[C]);
    bk_plan_set_float_precision(plan, p->ab_type);
    return BK_SUCCESS;
}
