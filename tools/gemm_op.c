/* SPDX-License-Identifier: Apache-2.0 */
/* GEMM-family op infos for bkinfo and bkbench. */
#include "gemm_op.h"

#include <string.h>

#include "tool_common.h"

/* A row-major contiguous [rows, cols] tensor (all-zero strides). */
static BkTensorDesc matrix(BkDataType dtype, int64_t rows, int64_t cols)
{
    BkTensorDesc t;
    memset(&t, 0, sizeof t);
    t.dataType = dtype;
    t.rank = 2;
    t.extent[0] = rows;
    t.extent[1] = cols;
    return t;
}

/* A contiguous vector of n elements. */
static BkTensorDesc vector(BkDataType dtype, int64_t n)
{
    BkTensorDesc t;
    memset(&t, 0, sizeof t);
    t.dataType = dtype;
    t.rank = 1;
    t.extent[0] = n;
    return t;
}

const void *w4a16_convert_build(BkW4A16Conversion conversion, BkDataType dtype, int64_t k,
                                int64_t n, int32_t group, BkW4A16ConvertInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO;
    info->conversion = conversion;
    info->groupSize = group;
    info->quantized = matrix(BK_DATA_TYPE_U8, k, n);
    info->scales = matrix(dtype, k / group, n);
    if (conversion == BK_W4A16_QUANTIZE) {
        info->weight = matrix(dtype, k, n);
    } else {
        info->packed = matrix(BK_DATA_TYPE_I32, k / 16, 2 * n);
        info->packedScales = matrix(dtype, k / group, n);
    }
    return info;
}

const void *w4a16_repack_build(BkDataType dtype, int64_t k, int64_t n, int32_t group,
                               BkW4A16GptqRepackInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO;
    info->zeros = BK_W4A16_GPTQ_ZEROS_MINUS_ONE;
    info->groupSize = group;
    info->qweight = matrix(BK_DATA_TYPE_I32, k / 8, n);
    info->scales = matrix(dtype, k / group, n);
    info->qzeros = matrix(BK_DATA_TYPE_I32, k / group, n / 8);
    info->gIdx = vector(BK_DATA_TYPE_I32, k);
    info->packed = matrix(BK_DATA_TYPE_I32, k / 16, 2 * n);
    info->packedScales = matrix(dtype, k / group, n);
    info->perm = vector(BK_DATA_TYPE_I32, k);
    return info;
}

const void *w4a16_zero_points_build(bool plain, bool packed, int64_t k, int64_t n, int32_t group,
                                    BkW4A16ZeroPointsInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO;
    if (plain)
        info->zeros = matrix(BK_DATA_TYPE_U8, k / group, n);
    if (packed)
        info->packedZeros = matrix(BK_DATA_TYPE_I32, k / group, n / 8);
    return info;
}

const void *w4a16_gemm_build(BkDataType dtype, int64_t m, int64_t k, int64_t n, int32_t group,
                             BkW4A16GemmInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO;
    info->groupSize = group;
    info->a = matrix(dtype, m, k);
    info->packed = matrix(BK_DATA_TYPE_I32, k / 16, 2 * n);
    info->packedScales = matrix(dtype, k / group, n);
    info->c = matrix(dtype, m, n);
    return info;
}

uint64_t gemm_matrix_bytes(BkDataType dtype, int64_t rows, int64_t cols)
{
    return (uint64_t)rows * (uint64_t)cols * tool_dtype_size(dtype);
}

const void *gemm_op_build(const struct gemm_op_desc *d, BkGemmInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_GEMM_INFO;
    info->transA = BK_GEMM_OP_N;
    info->transB = BK_GEMM_OP_T;
    info->activation = BK_GEMM_ACTIVATION_NONE;
    info->flags = d->tf32 ? BK_GEMM_ALLOW_TF32_BIT : 0;
    info->alpha = 1.0;
    info->beta = 0.0;
    info->a = matrix(d->dtype, d->m, d->k);
    info->b = matrix(d->dtype, d->n, d->k);
    info->c.dataType = BK_DATA_TYPE_UNDEFINED;     /* no C */
    info->d = matrix(d->dtype, d->m, d->n);
    info->bias.dataType = BK_DATA_TYPE_UNDEFINED;  /* no bias */
    return info;
}

const void *sparse24_convert_build(BkSparse24Conversion conversion, BkDataType dtype, int64_t m,
                                   int64_t k, BkSparse24ConvertInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO;
    info->conversion = conversion;
    info->dense = matrix(dtype, m, k);
    info->values = matrix(dtype, m, k / 2);
    info->metadata = matrix(BK_DATA_TYPE_U16, m, k / 8);
    return info;
}

const void *sparse24_prepare_build(BkDataType dtype, int64_t m, int64_t k,
                                   BkSparse24PrepareInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO;
    info->values = matrix(dtype, m, k / 2);
    info->metadata = matrix(BK_DATA_TYPE_U16, m, k / 8);
    return info;
}

const void *sparse24_gemm_build(BkDataType dtype, int64_t m, int64_t k, int64_t n,
                                BkSparse24GemmInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO;
    info->weightType = dtype;
    info->activation = BK_GEMM_ACTIVATION_NONE;
    info->m = m;
    info->k = k;
    info->alpha = 1.0;
    info->beta = 0.0;
    info->x = matrix(dtype, n, k);
    info->c.dataType = BK_DATA_TYPE_UNDEFINED;
    info->y = matrix(dtype, n, m);
    info->bias.dataType = BK_DATA_TYPE_UNDEFINED;
    return info;
}
