/* SPDX-License-Identifier: Apache-2.0 */
/* Op infos for the fuzz harness: for each op family, a generator of
 * consistent info structs, a mutation that breaks one field, its tensor
 * fields (for the mutations), and the view of what a run touches in
 * binding-slot order. A new op family adds a row to the table in
 * fuzz_ops.c, a member to union fz_op_info and its values of the family
 * byte in fz_build_op (new ones, so that the corpus keeps its meaning). */
#ifndef BK_FUZZ_OPS_H
#define BK_FUZZ_OPS_H

#include "fuzz_input.h"

/* The most binding slots of an op (attention backward with a
 * BkAttentionSequencesInfo chained has 14). */
#define FZ_MAX_SLOTS 14

/* Large enough for any op info, so one read under another sType stays in
 * bounds. */
union fz_op_info {
    BkBaseInStructure base;
    BkGatedActivationInfo gated;
    BkGatedActivationBackwardInfo gated_bwd;
    BkGemmInfo gemm;
    BkSparse24ConvertInfo sp24_convert;
    BkSparse24PrepareInfo sp24_prepare;
    BkSparse24GemmInfo sp24_gemm;
    BkW4A16ConvertInfo w4_convert;
    BkW4A16GptqRepackInfo w4_repack;
    BkW4A16GemmInfo w4_gemm;
    BkAttentionInfo attn;
    BkAttentionBackwardInfo attn_bwd;
    BkConvertInfo convert;
    unsigned char pad[2048];
};

/* What a run of an accepted op info touches, in binding-slot order, from
 * the harness's own reading of the info (not libbk's). A slot is a tensor
 * (t), a fixed number of bytes (the 2:4 and W4A16 repack reports), or
 * opaque: a prepared weight, whose size only the plan knows
 * (BkPlanBindingProperties). A slot the run does not use (an absent C or
 * bias, lse or pattern tensor, the dense tensor of a validation, every
 * input of an empty problem) has neither: 0 bytes. align is the alignment
 * of a slot without a tensor, or, for a tensor, one beyond its element
 * size that the op documents
 * (W4A16's packed forms: 16 bytes); 0 otherwise. */
struct fz_op_view {
    unsigned count;
    BkTensorDesc *t[FZ_MAX_SLOTS];
    bool written[FZ_MAX_SLOTS];
    uint64_t bytes[FZ_MAX_SLOTS];     /* slots without a tensor */
    uint32_t align[FZ_MAX_SLOTS];     /* ... and their alignment (see above) */
    bool opaque[FZ_MAX_SLOTS];
    int alias[FZ_MAX_SLOTS];          /* a written slot may sit at this slot's address; -1 */
    bool chained;                     /* attention with per-sequence or paged structs */
};

/* Builds a consistent info of a family the input picks; returns the
 * family, for fz_mutate_op. */
unsigned fz_build_op(struct fz_input *in, union fz_op_info *op);
/* Breaks one field (the sType, a scalar, a tensor field, the pNext chain). */
void fz_mutate_op(struct fz_input *in, union fz_op_info *op, unsigned family);
/* What a plan made from op touches, by op's sType; false when no op has it. */
bool fz_view_op(union fz_op_info *op, struct fz_op_view *view);
/* The families: how many, the index of an op info's sType (-1: none) and
 * a family's name. */
#define FZ_MAX_FAMILIES 12
unsigned fz_family_count(void);
int fz_family_of(BkStructureType stype);
const char *fz_family_name(unsigned family);

#endif /* BK_FUZZ_OPS_H */
