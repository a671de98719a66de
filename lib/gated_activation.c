/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations: validation of BkGatedActivationInfo and
 * BkGatedActivationBackwardInfo, and their normalisation into a
 * backend-neutral struct bk_gated_problem. */
#include "bk_internal.h"

#include <stdio.h>

/* The tensors of one op info, in binding-slot order. */
struct gated_operands {
    const char *info_name;
    BkGatedActivationKind kind;
    uint32_t split_axis;
    uint32_t count;                        /* 2 forward, 3 backward */
    const BkTensorDesc *desc[3];
    const char *field[3];                  /* "input", "output", ... */
    bool half[3];                          /* has the output (half) shape */
    bool written[3];
};

static bool supported_type(BkDataType t)
{
    return t == BK_DATA_TYPE_F32 || t == BK_DATA_TYPE_F16 || t == BK_DATA_TYPE_BF16 ||
           t == BK_DATA_TYPE_F64;
}

static BkResult validate(const struct gated_operands *ops, struct bk_tensor *t)
{
    char name[96];
    const char *in = ops->info_name;
    if ((unsigned)ops->kind > BK_GATED_ACTIVATION_GEGLU_TANH)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.kind = %d is not a BkGatedActivationKind",
                        in, (int)ops->kind);

    snprintf(name, sizeof name, "%s.%s", in, ops->field[0]);
    BkResult r = bk_tensor_from_desc(ops->desc[0], name, &t[0]);
    if (r != BK_SUCCESS)
        return r;
    if (!supported_type(t[0].type))
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.dataType = %s is not supported by gated activations (F32, F16, BF16, "
                        "F64)", name, bk_data_type_name(t[0].type));
    const uint32_t axis = ops->split_axis;
    if (axis >= t[0].rank)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.splitAxis = %u must be less than %s.rank %u",
                        in, axis, ops->field[0], t[0].rank);
    if (t[0].extent[axis] % 2)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.extent[%u] = %lld must be even along splitAxis %u", name, axis,
                        (long long)t[0].extent[axis], axis);

    for (uint32_t i = 1; i < ops->count; i++) {
        snprintf(name, sizeof name, "%s.%s", in, ops->field[i]);
        if ((r = bk_tensor_from_desc(ops->desc[i], name, &t[i])) != BK_SUCCESS)
            return r;
        if (t[i].type != t[0].type)
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.dataType = %s must match %s.dataType %s",
                            name, bk_data_type_name(t[i].type), ops->field[0],
                            bk_data_type_name(t[0].type));
        if (t[i].rank != t[0].rank)
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.rank = %u must match %s.rank %u", name,
                            t[i].rank, ops->field[0], t[0].rank);
        for (uint32_t k = 0; k < t[0].rank; k++) {
            int64_t want = t[0].extent[k] / (ops->half[i] && k == axis ? 2 : 1);
            if (t[i].extent[k] != want)
                return bk_error(BK_ERROR_INVALID_ARGUMENT,
                                "%s.extent[%u] = %lld must be %lld (%s.extent[%u]%s)", name, k,
                                (long long)t[i].extent[k], (long long)want, ops->field[0], k,
                                ops->half[i] && k == axis ? " / 2 along splitAxis" : "");
        }
        if (ops->written[i] && (r = bk_tensor_check_no_self_overlap(&t[i], name)) != BK_SUCCESS)
            return r;
    }
    return BK_SUCCESS;
}

/* Fold the split axis into gate offsets, then drop unit dimensions and
 * merge neighbours that are contiguous in every tensor, so kernels see the
 * smallest rank (a contiguous problem becomes rank 1 or 2). */
static void normalise(const struct gated_operands *ops, const struct bk_tensor *t,
                      struct bk_gated_problem *p)
{
    const uint32_t axis = ops->split_axis;
    const int64_t half = t[0].extent[axis] / 2;
    /* Per iteration dim: strides of x, y (output or dy), dx. */
    const struct bk_tensor *x = &t[0], *y = &t[1], *dx = ops->count > 2 ? &t[2] : NULL;

    p->kind = ops->kind;
    p->type = x->type;
    p->backward = ops->count > 2;
    p->count = y->count;
    /* An empty problem's strides were never checked for overflow (it spans
     * no byte): keep them out of every product. */
    p->x_gate_offset = p->count ? half * x->stride[axis] : 0;
    p->dx_gate_offset = dx && p->count ? half * dx->stride[axis] : 0;

    uint32_t r = 0;
    for (uint32_t k = 0; p->count && k < x->rank; k++) {
        if (y->extent[k] == 1)
            continue;
        int64_t xs = x->stride[k], ys = y->stride[k], ds = dx ? dx->stride[k] : 0;
        if (r > 0) {
            uint32_t o = r - 1;
            int64_t e = y->extent[k];
            bool ovf = false; /* a product past 64 bits matches no stride */
            const int64_t xe = bk_mul_i64(xs, e, &ovf), ye = bk_mul_i64(ys, e, &ovf),
                          de = bk_mul_i64(ds, e, &ovf);
            if (!ovf && p->x_stride[o] == xe && p->y_stride[o] == ye && p->dx_stride[o] == de) {
                p->extent[o] *= e;
                p->x_stride[o] = xs, p->y_stride[o] = ys, p->dx_stride[o] = ds;
                continue;
            }
        }
        p->extent[r] = y->extent[k];
        p->x_stride[r] = xs, p->y_stride[r] = ys, p->dx_stride[r] = ds;
        r++;
    }
    if (r == 0 || p->count == 0) { /* a single element, or nothing */
        p->extent[0] = p->count;
        p->x_stride[0] = p->y_stride[0] = 1;
        p->dx_stride[0] = dx ? 1 : 0;
        r = 1;
    }
    p->rank = r;
}

BkResult bk_gated_activation_init(BkPlan plan, const void *info)
{
    struct gated_operands ops = { 0 };
    if (((const BkBaseInStructure *)info)->sType == BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO) {
        const BkGatedActivationInfo *f = info;
        ops = (struct gated_operands){
            .info_name = "BkGatedActivationInfo", .kind = f->kind, .split_axis = f->splitAxis,
            .count = 2, .desc = { &f->input, &f->output }, .field = { "input", "output" },
            .half = { false, true }, .written = { false, true },
        };
    } else {
        const BkGatedActivationBackwardInfo *b = info;
        ops = (struct gated_operands){
            .info_name = "BkGatedActivationBackwardInfo", .kind = b->kind,
            .split_axis = b->splitAxis, .count = 3,
            .desc = { &b->input, &b->gradOutput, &b->gradInput },
            .field = { "input", "gradOutput", "gradInput" },
            .half = { false, true, false }, .written = { false, false, true },
        };
    }

    struct bk_tensor t[3];
    BkResult r = validate(&ops, t);
    if (r != BK_SUCCESS)
        return r;

    plan->props.bindingCount = ops.count;
    for (uint32_t i = 0; i < ops.count; i++) {
        plan->slot[i].name = ops.field[i];
        plan->slot[i].span = t[i].span;
        plan->slot[i].alignment = (uint32_t)bk_data_type_size(t[i].type);
        plan->slot[i].written = ops.written[i];
    }
    normalise(&ops, t, &plan->problem.gated);

    /* Every backend: elementwise, so deterministic and bit-stable. */
    bk_plan_set_float_precision(plan, t[0].type);
    return BK_SUCCESS;
}
