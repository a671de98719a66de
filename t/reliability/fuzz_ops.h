/* Op infos for the fuzz harness: for each op family, a generator of
 * consistent info structs, a mutation that breaks one field, and the view
 * of its tensors in binding-slot order. A new op family adds a row to the
 * table in fuzz_ops.c and a member to union fz_op_info. */
#ifndef BK_FUZZ_OPS_H
#define BK_FUZZ_OPS_H

#include "fuzz_input.h"

#define FZ_MAX_SLOTS 8

/* Large enough for any op info, so one read under another sType stays in
 * bounds. */
union fz_op_info {
    BkBaseInStructure base;
    BkGatedActivationInfo gated;
    BkGatedActivationBackwardInfo gated_bwd;
    unsigned char pad[2048];
};

/* An op info's tensors, in binding-slot order, and which are written. */
struct fz_op_view {
    unsigned count;
    BkTensorDesc *t[FZ_MAX_SLOTS];
    bool written[FZ_MAX_SLOTS];
};

/* Builds a consistent info of a family the input picks; returns the
 * family, for fz_mutate_op. */
unsigned fz_build_op(struct fz_input *in, union fz_op_info *op);
/* Breaks one field (the sType, a scalar, a tensor field, the pNext chain). */
void fz_mutate_op(struct fz_input *in, union fz_op_info *op, unsigned family);
/* The tensors libbk reads for op's sType; false when no op has it. */
bool fz_view_op(union fz_op_info *op, struct fz_op_view *view);

#endif /* BK_FUZZ_OPS_H */
