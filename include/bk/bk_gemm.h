/* SPDX-License-Identifier: Apache-2.0 */
/* The GEMM family: dense GEMM, the 2:4 structured-sparse weight format
 * (compress, prune, decompress, validate, prepare) and the sparse GEMM on
 * a prepared weight. See bk-gemm(7).
 *
 * Matrices are BkTensorDesc of rank 2 ([rows, cols]) or 3 ([batch, rows,
 * cols]); strides say the layout: row-major has stride[rank-1] == 1,
 * column-major stride[rank-2] == 1 (all-zero strides: row-major
 * contiguous). A rank-2 operand of a batched (rank-3) product is shared by
 * every batch. */
#ifndef BK_GEMM_H
#define BK_GEMM_H

#include <bk/bk_core.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum BkGemmOp {
    BK_GEMM_OP_N = 0,                   /* op(X) = X */
    BK_GEMM_OP_T = 1,                   /* op(X) = X transposed */
    BK_GEMM_OP_MAX_ENUM = 0x7FFFFFFF
} BkGemmOp;

/* Applied last: D = act(alpha * product + beta * C + bias). */
typedef enum BkGemmActivation {
    BK_GEMM_ACTIVATION_NONE = 0,
    BK_GEMM_ACTIVATION_RELU = 1,        /* max(x, 0) */
    BK_GEMM_ACTIVATION_GELU_TANH = 2,   /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    BK_GEMM_ACTIVATION_MAX_ENUM = 0x7FFFFFFF
} BkGemmActivation;

typedef enum BkGemmFlagBits {
    /* F32 only: the product may round its inputs to TF32 (10-bit mantissa)
     * on tensor cores; the plan's precision guarantee then says so. */
    BK_GEMM_ALLOW_TF32_BIT = 0x00000001,
    BK_GEMM_FLAG_BITS_MAX_ENUM = 0x7FFFFFFF
} BkGemmFlagBits;
typedef uint32_t BkGemmFlags;

/* Dense GEMM: D[M, N] = act(alpha * op(A)[M, K] @ op(B)[K, N] + beta * C[M, N] + bias[N]).
 * A and B: F32, F16, BF16 or F64, the same type. C, D and bias: A's type,
 * or F32 when A is F16 or BF16. The sums are kept in F32 (F64 for F64).
 * C is optional (dataType BK_DATA_TYPE_UNDEFINED; beta must then be 0), so
 * is bias (a contiguous vector of N, added to every row of D). C may be
 * bound at D's address when its layout equals D's: the one in-place case.
 * Binding slots: 0 = a, 1 = b, 2 = c, 3 = d, 4 = bias. */
typedef struct BkGemmInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_GEMM_INFO */
    const void *pNext;
    BkGemmOp transA;
    BkGemmOp transB;
    BkGemmActivation activation;
    BkGemmFlags flags;
    double alpha;                       /* finite */
    double beta;                        /* finite; 0 when there is no C */
    BkTensorDesc a;                     /* op(A) is [M, K] */
    BkTensorDesc b;                     /* op(B) is [K, N] */
    BkTensorDesc c;                     /* [M, N], or dataType UNDEFINED */
    BkTensorDesc d;                     /* [M, N], written */
    BkTensorDesc bias;                  /* [N], or dataType UNDEFINED */
} BkGemmInfo;

enum {
    BK_GEMM_BINDING_A = 0,
    BK_GEMM_BINDING_B = 1,
    BK_GEMM_BINDING_C = 2,
    BK_GEMM_BINDING_D = 3,
    BK_GEMM_BINDING_BIAS = 4
};

/* ---- 2:4 structured sparsity -------------------------------------------
 * A weight W[N, K] (N output features) is 2:4 sparse when each group of
 * 4 consecutive elements of a row (columns 4g .. 4g+3) holds at most 2
 * non-zeros. The interchange format, K % 8 == 0:
 *   values   [N, K/2] of W's type: the two kept elements of group g at
 *            columns 2g and 2g+1, in increasing position;
 *   metadata [N, K/8] U16: one byte per group, group 2j in the low byte of
 *            element j and group 2j+1 in the high byte; bits 0-1 hold the
 *            position (0-3) of the first kept element, bits 2-3 the second,
 *            first < second, bits 4-7 zero. */
typedef enum BkSparse24Conversion {
    BK_SPARSE24_COMPRESS_STRICT = 0,    /* dense -> values, metadata; W must already be 2:4 */
    BK_SPARSE24_COMPRESS_PRUNE = 1,     /* keep the two largest |w| of each group, ties to the lower position */
    BK_SPARSE24_DECOMPRESS = 2,         /* values, metadata -> dense */
    BK_SPARSE24_VALIDATE = 3,           /* check metadata only */
    BK_SPARSE24_CONVERSION_MAX_ENUM = 0x7FFFFFFF
} BkSparse24Conversion;

typedef enum BkSparse24Status {
    BK_SPARSE24_STATUS_OK = 0,
    BK_SPARSE24_STATUS_TOO_MANY_NONZEROS = 1, /* strict compression: a group with 3 or 4 */
    BK_SPARSE24_STATUS_BAD_METADATA = 2,      /* equal or decreasing positions, or bits 4-7 set */
    BK_SPARSE24_STATUS_MAX_ENUM = 0x7FFFFFFF
} BkSparse24Status;

/* What a conversion plan writes to its report binding (32 bytes, 8-byte
 * aligned). Read it back after the queue is idle; bkCheckSparse24Report
 * turns it into a BkResult and a message. */
typedef struct BkSparse24Report {
    uint32_t status;                    /* a BkSparse24Status */
    uint32_t reserved;
    uint64_t badGroupCount;             /* groups that broke the rule */
    uint64_t firstBadRow;               /* the first of them, in row-major order; 0 when OK */
    uint64_t firstBadGroup;             /* its group: columns 4 g .. 4 g + 3; 0 when OK */
} BkSparse24Report;

/* A conversion between a dense W and the interchange format. Types: F32,
 * F16, BF16, F64 (dense and values alike); metadata U16. Tensors are
 * rank 2 with any positive strides. VALIDATE reads metadata only: dense
 * and values are then not used and may be left zeroed (rank 0). Strict
 * compression stores the groups it rejects as pruning would.
 * Binding slots: 0 = dense, 1 = values, 2 = metadata, 3 = report. */
typedef struct BkSparse24ConvertInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO */
    const void *pNext;
    BkSparse24Conversion conversion;
    uint32_t reserved;                  /* 0 */
    BkTensorDesc dense;                 /* [N, K] */
    BkTensorDesc values;                /* [N, K/2] */
    BkTensorDesc metadata;              /* [N, K/8], U16 */
} BkSparse24ConvertInfo;

enum {
    BK_SPARSE24_CONVERT_BINDING_DENSE = 0,
    BK_SPARSE24_CONVERT_BINDING_VALUES = 1,
    BK_SPARSE24_CONVERT_BINDING_METADATA = 2,
    BK_SPARSE24_CONVERT_BINDING_REPORT = 3
};

/* Prepare: the interchange format -> the device's own layout of the
 * weight (opaque; its size is the prepared binding's size in
 * BkPlanBindingProperties). A prepared weight serves sparse GEMM plans of
 * the same context with the same weightType, N and K. Metadata must be
 * valid (BK_SPARSE24_VALIDATE checks it).
 * Binding slots: 0 = values, 1 = metadata, 2 = prepared. */
typedef struct BkSparse24PrepareInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO */
    const void *pNext;
    BkTensorDesc values;                /* [N, K/2]: F32, F16 or BF16 */
    BkTensorDesc metadata;              /* [N, K/8], U16 */
} BkSparse24PrepareInfo;

enum {
    BK_SPARSE24_PREPARE_BINDING_VALUES = 0,
    BK_SPARSE24_PREPARE_BINDING_METADATA = 1,
    BK_SPARSE24_PREPARE_BINDING_PREPARED = 2
};

/* Sparse GEMM with a prepared 2:4 weight W[N, K]:
 *   Y[M, N] = act(alpha * X[M, K] @ W^T + beta * C[M, N] + bias[N]),
 * the linear layer of a transformer (M tokens, N output features, K
 * input features; the field m holds N). With column-major X and Y it is
 * Y^T[N, M] = W @ X^T, the "sparse A times dense B" form. X: weightType;
 * C, Y and bias as for BkGemmInfo. F16 and BF16 run on sparse tensor cores
 * where the GPU has them; F32 is exact F32 arithmetic (TF32 is not used).
 * X, C and Y may be rank 3 ([batch, M, ...]): the weight is shared.
 * Binding slots: 0 = weight (prepared), 1 = x, 2 = c, 3 = y, 4 = bias. */
typedef struct BkSparse24GemmInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO */
    const void *pNext;
    BkDataType weightType;              /* F32, F16 or BF16 */
    BkGemmActivation activation;
    int64_t m;                          /* N, the rows of W: output features */
    int64_t k;                          /* columns of W: input features, K % 8 == 0 */
    double alpha;
    double beta;
    BkTensorDesc x;                     /* [M, K] */
    BkTensorDesc c;                     /* [M, N], or dataType UNDEFINED */
    BkTensorDesc y;                     /* [M, N], written */
    BkTensorDesc bias;                  /* [N], or dataType UNDEFINED */
} BkSparse24GemmInfo;

enum {
    BK_SPARSE24_GEMM_BINDING_WEIGHT = 0,
    BK_SPARSE24_GEMM_BINDING_X = 1,
    BK_SPARSE24_GEMM_BINDING_C = 2,
    BK_SPARSE24_GEMM_BINDING_Y = 3,
    BK_SPARSE24_GEMM_BINDING_BIAS = 4
};

/* BK_SUCCESS for a report whose status is OK; otherwise
 * BK_ERROR_INVALID_ARGUMENT and a message naming the first bad row and
 * group and the rule it broke. */
BK_API BkResult bkCheckSparse24Report(const BkSparse24Report *pReport);

#ifdef __cplusplus
}
#endif
#endif /* BK_GEMM_H */
