/* SPDX-License-Identifier: Apache-2.0 */
/* Builds gated-activation op infos for the tools: a [tokens, 2*hidden]
 * input split on its last axis, optionally with padded rows. */
#ifndef BK_TOOL_GATED_OP_H
#define BK_TOOL_GATED_OP_H

#include <stdbool.h>
#include <stdint.h>

#include <bk/bk.h>

#define GATED_KIND_COUNT 5u
#define GATED_DTYPE_COUNT 4u

extern const BkGatedActivationKind gated_kinds[GATED_KIND_COUNT];
extern const BkDataType gated_dtypes[GATED_DTYPE_COUNT];

struct gated_op_desc {
    bool backward;
    BkGatedActivationKind kind;
    BkDataType dtype;
    int64_t tokens;
    int64_t hidden;
    /* Elements between rows of x (and of dx); 0 = contiguous (2*hidden). */
    int64_t row_stride;
};

union gated_op_info {
    BkGatedActivationInfo fwd;
    BkGatedActivationBackwardInfo bwd;
};

/* The op name the tools print: "gated-fwd" or "gated-bwd". */
const char *gated_op_name(bool backward);
/* Fills *info and returns the pointer for BkPlanCreateInfo.pOperation. */
const void *gated_op_build(const struct gated_op_desc *d, union gated_op_info *info);

#endif /* BK_TOOL_GATED_OP_H */
