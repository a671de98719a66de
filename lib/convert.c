/* SPDX-License-Identifier: Apache-2.0 */
/* Type conversion: validation of BkConvertInfo and its normalisation into
 * a backend-neutral struct bk_convert_problem. */
#include "bk_internal.h"

#include <stdio.h>

#define INFO "BkConvertInfo"

/* The types a conversion reads and writes: every value of each is exact
 * in F64 (bk-convert(7)). */
static bool supported_type(BkDataType t)
{
    switch (t) {
    case BK_DATA_TYPE_F32: case BK_DATA_TYPE_F64: case BK_DATA_TYPE_F16:
    case BK_DATA_TYPE_BF16: case BK_DATA_TYPE_I32: case BK_DATA_TYPE_U32:
    case BK_DATA_TYPE_U16: case BK_DATA_TYPE_I8: case BK_DATA_TYPE_U8:
        return true;
    default:
        return false;
    }
}

static BkResult check_field(const char *field, const BkTensorDesc *desc, struct bk_tensor *t)
{
    char name[64];
    snprintf(name, sizeof name, INFO ".%s", field);
    BkResult r = bk_tensor_from_desc(desc, name, t);
    if (r != BK_SUCCESS)
        return r;
    if (!supported_type(t->type))
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.dataType = %s is not supported by conversions (F32, F64, F16, BF16, "
                        "I32, U32, U16, I8, U8)", name, bk_data_type_name(t->type));
    return BK_SUCCESS;
}

static BkResult validate(const BkConvertInfo *c, struct bk_tensor *in, struct bk_tensor *out)
{
    if (c->flags != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, INFO ".flags = 0x%x must be 0", c->flags);
    if (c->reserved != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, INFO ".reserved = %u must be 0", c->reserved);
    BkResult r = check_field("input", &c->input, in);
    if (r == BK_SUCCESS)
        r = check_field("output", &c->output, out);
    if (r != BK_SUCCESS)
        return r;
    if (out->rank != in->rank)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, INFO ".output.rank = %u must match "
                        "input.rank %u", out->rank, in->rank);
    for (uint32_t k = 0; k < in->rank; k++)
        if (out->extent[k] != in->extent[k])
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            INFO ".output.extent[%u] = %lld must match input.extent[%u] %lld", k,
                            (long long)out->extent[k], k, (long long)in->extent[k]);
    return bk_check_written_field(INFO, "output", out);
}

/* Drops unit dimensions and merges neighbours that are contiguous in both
 * tensors, so kernels see the smallest rank (a contiguous problem becomes
 * rank 1). */
static void normalise(const struct bk_tensor *in, const struct bk_tensor *out,
                      struct bk_convert_problem *p)
{
    p->in_type = in->type;
    p->out_type = out->type;
    p->count = in->count;
    uint32_t r = 0;
    for (uint32_t k = 0; p->count && k < in->rank; k++) {
        const int64_t e = in->extent[k];
        if (e == 1)
            continue;
        const int64_t is = in->stride[k], os = out->stride[k];
        if (r > 0) {
            const uint32_t o = r - 1;
            bool ovf = false; /* a product past 64 bits matches no stride */
            const int64_t ie = bk_mul_i64(is, e, &ovf), oe = bk_mul_i64(os, e, &ovf);
            if (!ovf && p->in_stride[o] == ie && p->out_stride[o] == oe) {
                p->extent[o] *= e;
                p->in_stride[o] = is, p->out_stride[o] = os;
                continue;
            }
        }
        p->extent[r] = e;
        p->in_stride[r] = is, p->out_stride[r] = os;
        r++;
    }
    if (r == 0) { /* a single element, or nothing */
        p->extent[0] = p->count;
        p->in_stride[0] = p->out_stride[0] = 1;
        r = 1;
    }
    p->rank = r;
}

BkResult bk_convert_init(BkPlan plan, const void *info)
{
    const BkConvertInfo *c = info;
    struct bk_tensor in, out;
    BkResult r = validate(c, &in, &out);
    if (r != BK_SUCCESS)
        return r;
    plan->props.bindingCount = 2;
    bk_plan_set_slot(plan, BK_CONVERT_BINDING_INPUT, "input", in.span,
                     (uint32_t)bk_data_type_size(in.type), false);
    bk_plan_set_slot(plan, BK_CONVERT_BINDING_OUTPUT, "output", out.span,
                     (uint32_t)bk_data_type_size(out.type), true);
    normalise(&in, &out, &plan->problem.convert);
    /* Elementwise, exact until the one rounding: deterministic, bit-stable,
     * computed in F64 (what every input type is exact in). */
    bk_plan_set_float_precision(plan, BK_DATA_TYPE_F64);
    return BK_SUCCESS;
}
