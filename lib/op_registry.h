/* SPDX-License-Identifier: Apache-2.0 */
/* The op registry: one row per operation. The op enum (bk_internal.h),
 * bkCreatePlan's table (plan.c) and each backend's kernel selection table
 * (lib/host/host_backend.c, lib/cuda/cuda_backend.c) are all made from
 * it, so a new op is one row here and no table can miss it.
 *
 *   X(OP, STYPE, INFO, INIT, HOST_SELECT, CUDA_SELECT)
 *
 * OP           the op's id, enum bk_op's BK_OP_<OP>
 * STYPE        sType of its info struct (BkPlanCreateInfo.pOperation);
 *              one op per sType (plan.c's switch rejects a repeat)
 * INFO         the info struct's name, plan->op_name, for messages
 * INIT         core validation (lib/FAMILY.c): fills plan->problem, the
 *              binding slots, precision and workspace
 * HOST_SELECT  host kernel selection (lib/host/), NULL if none
 * CUDA_SELECT  CUDA kernel selection (lib/cuda/), NULL if none
 *
 * A backend without a selection for an op answers BK_ERROR_UNSUPPORTED.
 * Order is the enum's; it is internal and may change. */
#ifndef BK_OP_REGISTRY_H
#define BK_OP_REGISTRY_H

#define BK_OPS(X)                                                                              \
    X(GATED_FORWARD, BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, "BkGatedActivationInfo",        \
      bk_gated_activation_init, bk_host_gated_select, bk_cuda_gated_select)                   \
    X(GATED_BACKWARD, BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO,                       \
      "BkGatedActivationBackwardInfo", bk_gated_activation_init, bk_host_gated_select,         \
      bk_cuda_gated_select)                                                                    \
    X(GEMM, BK_STRUCTURE_TYPE_GEMM_INFO, "BkGemmInfo", bk_gemm_init, bk_host_gemm_select,     \
      bk_cuda_gemm_select)                                                                     \
    X(SPARSE24_CONVERT, BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO, "BkSparse24ConvertInfo",     \
      bk_sparse24_convert_init, bk_host_sparse24_convert_select,                               \
      bk_cuda_sparse24_convert_select)                                                         \
    X(SPARSE24_PREPARE, BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO, "BkSparse24PrepareInfo",     \
      bk_sparse24_prepare_init, bk_host_sparse24_prepare_select,                               \
      bk_cuda_sparse24_prepare_select)                                                         \
    X(SPARSE24_GEMM, BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, "BkSparse24GemmInfo",              \
      bk_sparse24_gemm_init, bk_host_sparse24_gemm_select, bk_cuda_sparse24_gemm_select)       \
    X(W4A16_CONVERT, BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, "BkW4A16ConvertInfo",              \
      bk_w4a16_convert_init, bk_host_w4a16_convert_select, bk_cuda_w4a16_convert_select)       \
    X(W4A16_GPTQ_REPACK, BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO, "BkW4A16GptqRepackInfo",   \
      bk_w4a16_repack_init, bk_host_w4a16_repack_select, bk_cuda_w4a16_repack_select)          \
    X(W4A16_GEMM, BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, "BkW4A16GemmInfo", bk_w4a16_gemm_init,   \
      bk_host_w4a16_gemm_select, bk_cuda_w4a16_gemm_select)                                    \
    X(ATTENTION_FORWARD, BK_STRUCTURE_TYPE_ATTENTION_INFO, "BkAttentionInfo",                 \
      bk_attention_init, bk_host_attention_select, bk_cuda_attention_select)                   \
    X(ATTENTION_BACKWARD, BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, "BkAttentionBackwardInfo", \
      bk_attention_init, bk_host_attention_select, bk_cuda_attention_select)                   \
    X(CONVERT, BK_STRUCTURE_TYPE_CONVERT_INFO, "BkConvertInfo", bk_convert_init,               \
      bk_host_convert_select, bk_cuda_convert_select)

/* A backend's selection table, indexed by enum bk_op: COLUMN is
 * BK_OP_HOST_SELECT or BK_OP_CUDA_SELECT. */
#define BK_OP_HOST_SELECT(op, stype, info, init, host, cuda) [BK_OP_##op] = host,
#define BK_OP_CUDA_SELECT(op, stype, info, init, host, cuda) [BK_OP_##op] = cuda,
#define BK_OP_SELECT_TABLE(name, COLUMN)                                                       \
    static BkResult (*const name[])(BkPlan) = { BK_OPS(COLUMN) };                              \
    _Static_assert(sizeof name / sizeof name[0] == BK_OP_COUNT,                                \
                   #name " must have a row for every op of BK_OPS")

#endif /* BK_OP_REGISTRY_H */
