/* Op infos for the fuzz harness: see fuzz_ops.h. */
#include "config.h"

#include "fuzz_ops.h"

#include <string.h>

/* ---- Shared by every family ------------------------------------------------ */

static const BkDataType float_types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                          BK_DATA_TYPE_F64 };
static const BkDataType other_types[] = { BK_DATA_TYPE_I32, BK_DATA_TYPE_U8, BK_DATA_TYPE_U16 };

/* Mostly a floating type, sometimes one no gated op takes. */
static BkDataType pick_type(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    return b % 8 < 7 ? float_types[b % 4] : other_types[b % 3];
}

/* Strides for t's extents: zero (contiguous), explicit row-major, padded,
 * or a random dimension order with padding. Never self-overlapping. */
static void layout(struct fz_input *in, BkTensorDesc *t)
{
    unsigned mode = fz_byte(in) % 4;
    if (mode == 0) {
        memset(t->stride, 0, sizeof t->stride);
        return;
    }
    uint32_t order[BK_MAX_TENSOR_RANK];
    for (uint32_t k = 0; k < t->rank; k++)
        order[k] = t->rank - 1 - k; /* fastest first */
    if (mode == 3)
        for (uint32_t k = t->rank; k > 1; k--) {
            uint32_t j = fz_byte(in) % k, tmp = order[k - 1];
            order[k - 1] = order[j], order[j] = tmp;
        }
    int64_t s = 1;
    for (uint32_t k = 0; k < t->rank; k++) {
        t->stride[order[k]] = s;
        int64_t pad = mode >= 2 ? fz_byte(in) % 3 : 0;
        s *= (t->extent[order[k]] > 0 ? t->extent[order[k]] : 1) + pad;
    }
}

/* Breaks one field of tensor t. */
static void mutate_tensor(struct fz_input *in, BkTensorDesc *t)
{
    switch (fz_byte(in) % 7) {
    case 0: t->rank = fz_pick_u32(in); break;
    case 1: t->dataType = (BkDataType)fz_pick_u32(in); break;
    case 2: case 3: t->extent[fz_byte(in) % BK_MAX_TENSOR_RANK] = fz_pick_i64(in); break;
    case 4: case 5: t->stride[fz_byte(in) % BK_MAX_TENSOR_RANK] = fz_pick_i64(in); break;
    default: { /* equal small strides everywhere: usually self-overlapping */
        int64_t s = fz_byte(in) % 3;
        for (uint32_t k = 0; k < BK_MAX_TENSOR_RANK; k++)
            t->stride[k] = s;
        break;
    }
    }
}

/* ---- Gated activations, forward and backward ----------------------------- */

static struct fz_op_view view_gated(union fz_op_info *op)
{
    return (struct fz_op_view){ 2, { &op->gated.input, &op->gated.output }, { false, true } };
}

static struct fz_op_view view_gated_bwd(union fz_op_info *op)
{
    return (struct fz_op_view){
        3, { &op->gated_bwd.input, &op->gated_bwd.gradOutput, &op->gated_bwd.gradInput },
        { false, false, true } };
}

/* kind and splitAxis sit at the same place in both infos. */
static void build_gated_common(struct fz_input *in, union fz_op_info *op,
                               struct fz_op_view v)
{
    uint32_t rank = 1 + fz_byte(in) % 4;
    if (fz_one_in(in, 8))
        rank = 1 + fz_byte(in) % BK_MAX_TENSOR_RANK;
    uint32_t axis = fz_byte(in) % rank;
    int64_t half[BK_MAX_TENSOR_RANK];
    for (uint32_t k = 0; k < rank; k++) {
        uint8_t b = fz_byte(in);
        half[k] = b % 32 == 31 ? 0 : 1 + b % (rank > 4 ? 2 : 6);
    }
    BkDataType type = pick_type(in);
    uint8_t kb = fz_byte(in);
    op->gated.kind = kb < 250 ? (BkGatedActivationKind)(kb % 5)
                              : (BkGatedActivationKind)fz_pick_u32(in);
    op->gated.splitAxis = axis;
    for (unsigned i = 0; i < v.count; i++) {
        BkTensorDesc *t = v.t[i];
        bool is_half = i == 1; /* output, or gradOutput */
        t->dataType = type;
        t->rank = rank;
        for (uint32_t k = 0; k < rank; k++)
            t->extent[k] = half[k] * (k == axis && !is_half ? 2 : 1);
        layout(in, t);
    }
}

static void build_gated(struct fz_input *in, union fz_op_info *op)
{
    op->base.sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO;
    build_gated_common(in, op, view_gated(op));
}

static void build_gated_bwd(struct fz_input *in, union fz_op_info *op)
{
    op->base.sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO;
    build_gated_common(in, op, view_gated_bwd(op));
}

static void mutate_gated_scalars(struct fz_input *in, union fz_op_info *op)
{
    if (fz_byte(in) & 1)
        op->gated.kind = (BkGatedActivationKind)fz_pick_u32(in);
    else
        op->gated.splitAxis = fz_pick_u32(in);
}

/* ---- The families ----------------------------------------------------------- */

static const struct {
    BkStructureType stype;
    void (*build)(struct fz_input *in, union fz_op_info *op);
    struct fz_op_view (*view)(union fz_op_info *op);
    void (*mutate_scalars)(struct fz_input *in, union fz_op_info *op);
} families[] = {
    { BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, build_gated, view_gated, mutate_gated_scalars },
    { BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, build_gated_bwd, view_gated_bwd,
      mutate_gated_scalars },
};
#define N_FAMILIES (sizeof families / sizeof families[0])

unsigned fz_build_op(struct fz_input *in, union fz_op_info *op)
{
    memset(op, 0, sizeof *op);
    unsigned f = fz_byte(in) % N_FAMILIES;
    families[f].build(in, op);
    return f;
}

void fz_mutate_op(struct fz_input *in, union fz_op_info *op, unsigned family)
{
    struct fz_op_view v = families[family].view(op);
    switch (fz_byte(in) % 8) {
    case 0: op->base.sType = fz_pick_stype(in); break;
    case 1: families[family].mutate_scalars(in, op); break;
    case 2: op->base.pNext = fz_pick_chain(in); break;
    case 3: { /* swap two tensors */
        unsigned i = fz_byte(in) % v.count, j = fz_byte(in) % v.count;
        BkTensorDesc tmp = *v.t[i];
        *v.t[i] = *v.t[j];
        *v.t[j] = tmp;
        break;
    }
    default: mutate_tensor(in, v.t[fz_byte(in) % v.count]); break;
    }
}

bool fz_view_op(union fz_op_info *op, struct fz_op_view *view)
{
    for (unsigned f = 0; f < N_FAMILIES; f++)
        if (families[f].stype == op->base.sType) {
            *view = families[f].view(op);
            return true;
        }
    return false;
}
