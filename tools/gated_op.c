/* SPDX-License-Identifier: Apache-2.0 */
/* Gated-activation op infos for bkinfo and bkbench. */
#include "gated_op.h"

#include <string.h>

const BkGatedActivationKind gated_kinds[GATED_KIND_COUNT] = {
    BK_GATED_ACTIVATION_GLU, BK_GATED_ACTIVATION_REGLU, BK_GATED_ACTIVATION_SWIGLU,
    BK_GATED_ACTIVATION_GEGLU, BK_GATED_ACTIVATION_GEGLU_TANH,
};

const BkDataType gated_dtypes[GATED_DTYPE_COUNT] = {
    BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16, BK_DATA_TYPE_F64,
};

const char *gated_op_name(bool backward)
{
    return backward ? "gated-bwd" : "gated-fwd";
}

/* A rank-2 tensor [rows, cols] with the given row stride (0 = contiguous). */
static BkTensorDesc matrix(BkDataType dtype, int64_t rows, int64_t cols, int64_t row_stride)
{
    BkTensorDesc t;
    memset(&t, 0, sizeof t);
    t.dataType = dtype;
    t.rank = 2;
    t.extent[0] = rows;
    t.extent[1] = cols;
    if (row_stride != 0) {
        t.stride[0] = row_stride;
        t.stride[1] = 1;
    }
    return t;
}

const void *gated_op_build(const struct gated_op_desc *d, union gated_op_info *info)
{
    BkTensorDesc x = matrix(d->dtype, d->tokens, 2 * d->hidden, d->row_stride);
    BkTensorDesc y = matrix(d->dtype, d->tokens, d->hidden, 0);

    memset(info, 0, sizeof *info);
    if (d->backward) {
        info->bwd.sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO;
        info->bwd.kind = d->kind;
        info->bwd.splitAxis = 1;
        info->bwd.input = x;
        info->bwd.gradOutput = y;
        info->bwd.gradInput = x;
        return &info->bwd;
    }
    info->fwd.sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO;
    info->fwd.kind = d->kind;
    info->fwd.splitAxis = 1;
    info->fwd.input = x;
    info->fwd.output = y;
    return &info->fwd;
}
