/* SPDX-License-Identifier: Apache-2.0 */
/* The valid infos of the GEMM family that t/gemm/gemm_validation.c and
 * t/sparse24/sparse24_validation.c break one field at a time, and the descriptor
 * helpers that build them. */
#ifndef BK_TEST_GEMM_INFOS_H
#define BK_TEST_GEMM_INFOS_H

#include <bk/bk.h>

static inline BkTensorDesc mat(BkDataType type, int64_t rows, int64_t cols)
{
    return (BkTensorDesc){ .dataType = type, .rank = 2, .extent = { rows, cols } };
}

static inline BkTensorDesc mat_s(BkDataType type, int64_t rows, int64_t cols, int64_t s0, int64_t s1)
{
    return (BkTensorDesc){ .dataType = type, .rank = 2, .extent = { rows, cols },
                           .stride = { s0, s1 } };
}

static inline BkTensorDesc mat3(BkDataType type, int64_t batch, int64_t rows, int64_t cols)
{
    return (BkTensorDesc){ .dataType = type, .rank = 3, .extent = { batch, rows, cols } };
}

static inline BkTensorDesc vec(BkDataType type, int64_t n)
{
    return (BkTensorDesc){ .dataType = type, .rank = 1, .extent = { n } };
}

/* dataType UNDEFINED: no C, no bias. */
#define ABSENT_DESC ((BkTensorDesc){ .dataType = BK_DATA_TYPE_UNDEFINED })

/* The valid infos the checks break one field at a time. Dense:
 * op(A) [4, 8] @ op(B) [8, 6] + C [4, 6] + bias [6], f32. */
enum { M = 4, K = 8, N = 6 };

static inline BkGemmInfo gemm_info(void)
{
    return (BkGemmInfo){
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO,
        .transA = BK_GEMM_OP_N, .transB = BK_GEMM_OP_N,
        .activation = BK_GEMM_ACTIVATION_RELU,
        .alpha = 2.0, .beta = 0.5,
        .a = mat(BK_DATA_TYPE_F32, M, K), .b = mat(BK_DATA_TYPE_F32, K, N),
        .c = mat(BK_DATA_TYPE_F32, M, N), .d = mat(BK_DATA_TYPE_F32, M, N),
        .bias = vec(BK_DATA_TYPE_F32, N),
    };
}

/* Sparse: W [SM, SK] = [4, 16]; values [4, 8], metadata [4, 2]; X [3, 16],
 * Y [3, 4]. */
enum { SM = 4, SK = 16, SN = 3 };

static inline BkSparse24ConvertInfo convert_info(BkSparse24Conversion conversion, BkDataType type)
{
    return (BkSparse24ConvertInfo){
        .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO,
        .conversion = conversion,
        .dense = mat(type, SM, SK),
        .values = mat(type, SM, SK / 2),
        .metadata = mat(BK_DATA_TYPE_U16, SM, SK / 8),
    };
}

static inline BkSparse24PrepareInfo prepare_info(BkDataType type)
{
    return (BkSparse24PrepareInfo){
        .sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO,
        .values = mat(type, SM, SK / 2),
        .metadata = mat(BK_DATA_TYPE_U16, SM, SK / 8),
    };
}

static inline BkSparse24GemmInfo sgemm_info(BkDataType type, BkDataType out)
{
    return (BkSparse24GemmInfo){
        .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO,
        .weightType = type,
        .activation = BK_GEMM_ACTIVATION_GELU_TANH,
        .m = SM, .k = SK,
        .alpha = 1.0, .beta = 1.0,
        .x = mat(type, SN, SK),
        .c = mat(out, SN, SM), .y = mat(out, SN, SM),
        .bias = vec(out, SM),
    };
}

#endif /* BK_TEST_GEMM_INFOS_H */
