/* SPDX-License-Identifier: Apache-2.0 */
/* Builds the GEMM family's op infos for the tools, all in the layout of a
 * transformer's linear layer (row-major, contiguous):
 *   dense GEMM   D[M, N] = A[M, K] @ B[N, K]^T   (transA = N, transB = T)
 *   2:4 sparse   Y[N, M] = X[N, K] @ W[M, K]^T   (W pruned and prepared)
 * The dense equivalent of a sparse GEMM (M, N, K) is the dense GEMM of
 * A = X, B = W: gemm_op_desc {m = N, n = M, k = K}. */
#ifndef BK_TOOL_GEMM_OP_H
#define BK_TOOL_GEMM_OP_H

#include <stdbool.h>
#include <stdint.h>

#include <bk/bk.h>

struct gemm_op_desc {
    BkDataType dtype;                 /* A, B and D */
    bool tf32;                        /* F32 only: BK_GEMM_ALLOW_TF32_BIT */
    int64_t m, n, k;
};

/* Fills *info and returns the pointer for BkPlanCreateInfo.pOperation. */
const void *gemm_op_build(const struct gemm_op_desc *d, BkGemmInfo *info);

/* dense W[m, k] <-> values[m, k/2], metadata[m, k/8] (U16). */
const void *sparse24_convert_build(BkSparse24Conversion conversion, BkDataType dtype, int64_t m,
                                   int64_t k, BkSparse24ConvertInfo *info);
const void *sparse24_prepare_build(BkDataType dtype, int64_t m, int64_t k,
                                   BkSparse24PrepareInfo *info);
/* Y[n, m] = X[n, k] @ W^T with a prepared W[m, k]. */
const void *sparse24_gemm_build(BkDataType dtype, int64_t m, int64_t k, int64_t n,
                                BkSparse24GemmInfo *info);

/* W4A16 with group rows per scale (group > 0), dtype the scales' and
 * activations' type: QUANTIZE weight [k, n] -> quantized, scales; PACK and
 * UNPACK between those and packed, packedScales. */
const void *w4a16_convert_build(BkW4A16Conversion conversion, BkDataType dtype, int64_t k,
                                int64_t n, int32_t group, BkW4A16ConvertInfo *info);
/* A GPTQ checkpoint with qzeros (AutoGPTQ's zero - 1) and g_idx; perm is written. */
const void *w4a16_repack_build(BkDataType dtype, int64_t k, int64_t n, int32_t group,
                               BkW4A16GptqRepackInfo *info);
/* Zero points to chain to one of those: plain zeros [k/group, n] U8 (a
 * conversion's), packedZeros [k/group, n/8] I32 (PACK, UNPACK, the GEMM). */
const void *w4a16_zero_points_build(bool plain, bool packed, int64_t k, int64_t n, int32_t group,
                                    BkW4A16ZeroPointsInfo *info);
/* C[m, n] = A[m, k] @ dequant(packed), no perm. */
const void *w4a16_gemm_build(BkDataType dtype, int64_t m, int64_t k, int64_t n, int32_t group,
                             BkW4A16GemmInfo *info);

/* Bytes of a row-major [rows, cols] matrix of dtype. */
uint64_t gemm_matrix_bytes(BkDataType dtype, int64_t rows, int64_t cols);

#endif /* BK_TOOL_GEMM_OP_H */
