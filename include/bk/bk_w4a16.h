/* SPDX-License-Identifier: Apache-2.0 */
/* The W4A16 family: GEMM with 4-bit integer weights and 16-bit
 * activations, C[M, N] = A[M, K] @ dequant(B)[K, N], on weights in the
 * layout of IST-DASLab's Marlin kernel; and the plans that make such
 * weights: quantize, pack, unpack, and repack GPTQ checkpoints. See
 * bk-w4a16(7).
 *
 * Forms of a quantized weight B[K, N] (K input features, N output
 * features), symmetric with zero point 8 unless a BkW4A16ZeroPointsInfo
 * is chained (below):
 *   plain    quantized U8 [K, N], each 0..15, and scales [G, N] (F16 or
 *            BF16); the weight is (q[k, n] - 8) * scales[k / groupSize, n];
 *   packed   Marlin's layout: packed I32 [K/16, 2N] (eight 4-bit values
 *            per word, reshuffled by 16 x 16 tiles) and packedScales
 *            [G, N] (columns permuted within blocks of 64, or of 32 when
 *            per-channel), K % 16 == 0, N % 64 == 0;
 *   GPTQ     a checkpoint's qweight I32 [K/8, N], scales [G, N], qzeros
 *            I32 [G, N/8] and g_idx I32 [K] (repacked, never run as is);
 *   AWQ      a checkpoint's qweight I32 [K, N/8], qzeros I32 [G, N/8]
 *            (columns in AWQ's order) and scales [G, N] (repacked too).
 * groupSize is 32, 64 or 128 (G = K / groupSize, K % groupSize == 0), or
 * BK_W4A16_GROUP_PER_CHANNEL: one scale per column (G = 1). */
#ifndef BK_W4A16_H
#define BK_W4A16_H

#include <bk/bk_core.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BK_W4A16_GROUP_PER_CHANNEL (-1)

typedef enum BkW4A16Conversion {
    /* weight [K, N] (F32, F16 or BF16) -> quantized, scales: per group
     * and column, scale = max|w| * 2/15 rounded to the scales' type, and
     * q = clamp(nearest-even(w / scale) + 8, 0, 15) (q = 8 where the
     * scale is 0). With a BkW4A16ZeroPointsInfo, asymmetric: lo =
     * min(0, min w), hi = max(0, max w), scale = (hi - lo) / 15 rounded,
     * z = clamp(nearest-even(-lo / scale), 0, 15) and q = clamp(nearest-
     * even(w / scale) + z, 0, 15) (z = q = 8 where the scale is 0 or
     * infinite). */
    BK_W4A16_QUANTIZE = 0,
    BK_W4A16_PACK = 1,                  /* quantized, scales -> packed, packedScales */
    BK_W4A16_UNPACK = 2,                /* packed, packedScales -> quantized, scales */
    BK_W4A16_CONVERSION_MAX_ENUM = 0x7FFFFFFF
} BkW4A16Conversion;

/* A conversion between the forms. The plain tensors take any positive
 * strides; packed and packedScales are contiguous. Tensors a conversion
 * does not use are left zeroed (dataType UNDEFINED).
 * Binding slots: 0 = weight, 1 = quantized, 2 = scales, 3 = packed,
 * 4 = packedScales. */
typedef struct BkW4A16ConvertInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO */
    const void *pNext;
    BkW4A16Conversion conversion;
    int32_t groupSize;                  /* 32, 64, 128 or BK_W4A16_GROUP_PER_CHANNEL */
    BkTensorDesc weight;                /* [K, N]: QUANTIZE's input */
    BkTensorDesc quantized;             /* [K, N], U8 */
    BkTensorDesc scales;                /* [G, N], F16 or BF16 */
    BkTensorDesc packed;                /* [K/16, 2N], I32 */
    BkTensorDesc packedScales;          /* [G, N], scales' type */
} BkW4A16ConvertInfo;

enum {
    BK_W4A16_CONVERT_BINDING_WEIGHT = 0,
    BK_W4A16_CONVERT_BINDING_QUANTIZED = 1,
    BK_W4A16_CONVERT_BINDING_SCALES = 2,
    BK_W4A16_CONVERT_BINDING_PACKED = 3,
    BK_W4A16_CONVERT_BINDING_PACKED_SCALES = 4
};

/* How a GPTQ checkpoint stores its zero points. Without a
 * BkW4A16ZeroPointsInfo only symmetric weights (zero point 8 everywhere)
 * can be repacked; with one, any. */
typedef enum BkW4A16GptqZeros {
    BK_W4A16_GPTQ_ZEROS_EXACT = 0,      /* qzeros hold the zero point: 8 */
    BK_W4A16_GPTQ_ZEROS_MINUS_ONE = 1,  /* AutoGPTQ's legacy form: zero point - 1, so 7 */
    BK_W4A16_GPTQ_ZEROS_MAX_ENUM = 0x7FFFFFFF
} BkW4A16GptqZeros;

typedef enum BkW4A16RepackStatus {
    BK_W4A16_REPACK_STATUS_OK = 0,
    BK_W4A16_REPACK_STATUS_ASYMMETRIC = 1,   /* a zero point other than 8 */
    BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX = 2, /* g_idx[k] outside 0..G-1 */
    BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS = 3,   /* a group with other than groupSize rows */
    BK_W4A16_REPACK_STATUS_MAX_ENUM = 0x7FFFFFFF
} BkW4A16RepackStatus;

/* What a GPTQ repack writes to its report binding (32 bytes, 8-byte
 * aligned); bkCheckW4A16RepackReport turns it into a BkResult and a
 * message. The checks run in this order: g_idx range, group sizes, zero
 * points; only the first rule broken is reported. */
typedef struct BkW4A16RepackReport {
    uint32_t status;                    /* a BkW4A16RepackStatus */
    BkBool32 identityPermutation;       /* perm is 0, 1, ..., K-1: the GEMM needs no perm
                                           (BK_FALSE when status is not OK) */
    uint64_t badCount;                  /* entries that broke the rule */
    uint64_t firstBadRow;               /* ASYMMETRIC: group; BAD_GROUP_INDEX: k; UNEVEN: group */
    uint64_t firstBadColumn;            /* ASYMMETRIC: column n; BAD_GROUP_INDEX: g_idx[k];
                                           UNEVEN_GROUPS: the group's row count */
} BkW4A16RepackReport;

/* A GPTQ checkpoint -> the packed form. qweight[r, n] holds rows
 * 8r .. 8r+7 of column n, row k in bits 4 (k % 8) .. 4 (k % 8) + 3;
 * qzeros[g, j] holds columns 8j .. 8j+7 the same way. packed and
 * packedScales must be 16-byte aligned (as for the GEMM). gIdx (optional) gives each row's
 * group; when it is not sorted (act-order), the rows are sorted by group
 * (stable), packed in that order, and perm [K] receives the order: the
 * GEMM must then bind perm, and reads A[m, perm[k]] as its column k.
 * Without gIdx, row k is in group k / groupSize and perm (when bound)
 * receives 0..K-1. qzeros is optional (absent: zero point 8). Every
 * group must hold groupSize rows.
 * Binding slots: 0 = qweight, 1 = scales, 2 = qzeros, 3 = gIdx,
 * 4 = packed, 5 = packedScales, 6 = perm, 7 = report. */
typedef struct BkW4A16GptqRepackInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO */
    const void *pNext;
    BkW4A16GptqZeros zeros;
    int32_t groupSize;                  /* 32, 64, 128 or BK_W4A16_GROUP_PER_CHANNEL */
    BkTensorDesc qweight;               /* [K/8, N], I32 */
    BkTensorDesc scales;                /* [G, N], F16 or BF16 */
    BkTensorDesc qzeros;                /* [G, N/8], I32, or dataType UNDEFINED */
    BkTensorDesc gIdx;                  /* [K], I32, or dataType UNDEFINED */
    BkTensorDesc packed;                /* [K/16, 2N], I32, written */
    BkTensorDesc packedScales;          /* [G, N], scales' type, written */
    BkTensorDesc perm;                  /* [K], I32, written; required with gIdx, else optional */
} BkW4A16GptqRepackInfo;

enum {
    BK_W4A16_REPACK_BINDING_QWEIGHT = 0,
    BK_W4A16_REPACK_BINDING_SCALES = 1,
    BK_W4A16_REPACK_BINDING_QZEROS = 2,
    BK_W4A16_REPACK_BINDING_G_IDX = 3,
    BK_W4A16_REPACK_BINDING_PACKED = 4,
    BK_W4A16_REPACK_BINDING_PACKED_SCALES = 5,
    BK_W4A16_REPACK_BINDING_PERM = 6,
    BK_W4A16_REPACK_BINDING_REPORT = 7
};

/* C[M, N] = A[M, K] @ dequant(packed, packedScales)[K, N]: A and C F16
 * or BF16 (packedScales of the same type), any positive strides; each
 * weight (q - 8) * scale is rounded to A's type, products are summed in
 * F32 (split-K partials too) and C is rounded once. perm (optional, I32
 * [K], a permutation of 0..K-1): column k of the product reads A[m,
 * perm[k]], the act-order case of a GPTQ repack. The workspace, when
 * the plan reports one, is scratch: never cleared, any content.
 * Binding slots: 0 = a, 1 = packed, 2 = packedScales, 3 = perm, 4 = c. */
typedef struct BkW4A16GemmInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_W4A16_GEMM_INFO */
    const void *pNext;
    uint32_t flags;                     /* reserved, 0 */
    int32_t groupSize;                  /* 32, 64, 128 or BK_W4A16_GROUP_PER_CHANNEL */
    BkTensorDesc a;                     /* [M, K] */
    BkTensorDesc packed;                /* [K/16, 2N], I32 */
    BkTensorDesc packedScales;          /* [G, N], a's type */
    BkTensorDesc perm;                  /* [K], I32, or dataType UNDEFINED */
    BkTensorDesc c;                     /* [M, N], a's type, written */
} BkW4A16GemmInfo;

enum {
    BK_W4A16_GEMM_BINDING_A = 0,
    BK_W4A16_GEMM_BINDING_PACKED = 1,
    BK_W4A16_GEMM_BINDING_PACKED_SCALES = 2,
    BK_W4A16_GEMM_BINDING_PERM = 3,
    BK_W4A16_GEMM_BINDING_C = 4
};

/* The layout of a repacked checkpoint's qweight and qzeros. */
typedef enum BkW4A16CheckpointFormat {
    /* GPTQ: qweight [K/8, N], row k of column n in bits 4 (k % 8) ..;
     * qzeros [G, N/8], column n in bits 4 (n % 8) .. */
    BK_W4A16_CHECKPOINT_GPTQ = 0,
    /* AWQ: qweight [K, N/8] and qzeros [G, N/8], column 8j + c of word j
     * in bits 4 i .. 4 i + 3 where i = 4 (c % 2) + c / 2 (nibbles hold
     * columns 0, 2, 4, 6, 1, 3, 5, 7); qzeros hold the zero point itself
     * (BK_W4A16_GPTQ_ZEROS_EXACT); no gIdx. */
    BK_W4A16_CHECKPOINT_AWQ = 1,
    BK_W4A16_CHECKPOINT_FORMAT_MAX_ENUM = 0x7FFFFFFF
} BkW4A16CheckpointFormat;

/* Chained to a BkW4A16ConvertInfo, BkW4A16GptqRepackInfo or
 * BkW4A16GemmInfo: the weight is asymmetric, each group and column with
 * its own zero point z (0..15), W[k, n] = (q[k, n] - z[k / groupSize, n])
 * * scales[k / groupSize, n]. Its tensors take the binding slots after
 * the info's own (BK_W4A16_*_BINDING_ZEROS, _PACKED_ZEROS below).
 *   zeros        plain U8 [G, N], each 0..15, any positive strides: a
 *                conversion's (QUANTIZE writes it, computing scales and
 *                zero points from each group's minimum and maximum; PACK
 *                reads it; UNPACK writes it); zeroed elsewhere;
 *   packedZeros  I32 [G, N/8], contiguous, 16-byte aligned: the zero
 *                point of column n is nibble p % 8 (bits 4 (p % 8) ..) of
 *                word p / 8 of its row, p = the position of column n's
 *                scale in packedScales, so a lane of the GEMM finds the
 *                zero points of its eight scales in one word. PACK and
 *                the repack write it, UNPACK and the GEMM read it;
 *                zeroed for QUANTIZE.
 * checkpointFormat is the repack's (GPTQ or AWQ); BK_W4A16_CHECKPOINT_GPTQ
 * elsewhere. A repack with this struct accepts every zero point (the
 * report's ASYMMETRIC status is never set). */
typedef struct BkW4A16ZeroPointsInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO */
    const void *pNext;
    BkW4A16CheckpointFormat checkpointFormat;
    uint32_t flags;                     /* reserved, 0 */
    BkTensorDesc zeros;                 /* [G, N], U8, or dataType UNDEFINED */
    BkTensorDesc packedZeros;           /* [G, N/8], I32, or dataType UNDEFINED */
} BkW4A16ZeroPointsInfo;

/* The slots of a BkW4A16ZeroPointsInfo's tensors, after each info's own:
 * the plan's bindingCount grows by 2 (a conversion), 1 (a repack or the
 * GEMM). */
enum {
    BK_W4A16_CONVERT_BINDING_ZEROS = 5,
    BK_W4A16_CONVERT_BINDING_PACKED_ZEROS = 6,
    BK_W4A16_REPACK_BINDING_PACKED_ZEROS = 8,
    BK_W4A16_GEMM_BINDING_PACKED_ZEROS = 5
};

/* BK_SUCCESS for a report whose status is OK; otherwise
 * BK_ERROR_INVALID_ARGUMENT (BK_ERROR_UNSUPPORTED for asymmetric zero
 * points) and a message naming the first bad entry and the rule. */
BK_API BkResult bkCheckW4A16RepackReport(const BkW4A16RepackReport *pReport);

#ifdef __cplusplus
}
#endif
#endif /* BK_W4A16_H */
