/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention, forward and backward: Y = softmax(scale Q K^T
 * + mask) V over the blocks of the score matrix a pattern marks active,
 * flash-attention style (no Lq x Lk matrix is ever stored). See
 * bk-attention(7).
 *
 * Shapes (extent[0] slowest, any positive strides, so [B, L, H, D]
 * storage binds as a permuted view without a copy):
 *   q [B, H, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv],
 *   y [B, H, Lq, Dv], lse [B, H, Lq];
 * H % Hkv == 0: query head h reads kv head h / (H / Hkv) (grouped-query
 * attention). D and Dv are 1..256. q, k, v, y (and the gradients) share
 * one type: F16, BF16 (the fast paths), F32 or F64; lse is F32 (F64 for
 * F64 inputs). Scores, softmax and sums are F32 (F64 for F64).
 *
 * The score matrix of each (batch, head) is cut into blocks of blockQ
 * query rows by blockK key columns: nbq = ceil(Lq / blockQ) block rows,
 * nbk = ceil(Lk / blockK) block columns (the last ones may be partial).
 * Query i sees key j when the block (i / blockQ, j / blockK) is active
 * and, with BK_ATTENTION_CAUSAL_BIT, j <= i + (Lk - Lq): the causal
 * diagonal is aligned to the bottom right, so the last query sees every
 * key (a decode step with Lq < Lk). A query that sees no key gets y = 0
 * and lse = -inf, and zero gradients. */
#ifndef BK_ATTENTION_H
#define BK_ATTENTION_H

#include <bk/bk_core.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum BkAttentionFlagBits {
    /* Compose the pattern with a causal mask (bottom-right aligned). */
    BK_ATTENTION_CAUSAL_BIT = 0x00000001,
    /* Backward only: the plan may sum dQ with float atomics, which is
     * faster and not deterministic; BkPlanProperties.precision says
     * whether it did. Without it every result is deterministic. */
    BK_ATTENTION_ALLOW_ATOMICS_BIT = 0x00000002,
    BK_ATTENTION_FLAG_BITS_MAX_ENUM = 0x7FFFFFFF
} BkAttentionFlagBits;
typedef uint32_t BkAttentionFlags;

typedef enum BkAttentionPatternForm {
    /* Every block is active (dense attention); no pattern tensor. */
    BK_ATTENTION_PATTERN_DENSE = 0,
    /* mask U8 [Bp, Hp, nbq * nbk], row-major over (query block, key
     * block): a nonzero byte makes the block active. */
    BK_ATTENTION_PATTERN_MASK = 1,
    /* counts I32 [Bp, Hp, nbq] and indices I32 [Bp, Hp, nbq, capacity]:
     * query block i of (b, h) attends to the key blocks
     * indices[b, h, i, 0 .. counts[b, h, i] - 1] (FlexAttention's
     * BlockMask, kv_num_blocks and kv_indices). The entries form a set:
     * order and repeats do not matter; entries past the count are not
     * read. A count outside 0..capacity or an index outside 0..nbk-1 is
     * an error found on the device: every output of that (b, h) is NaN
     * (y, lse, dq, and dk, dv of its kv head), never a silent answer. */
    BK_ATTENTION_PATTERN_LIST = 2,
    BK_ATTENTION_PATTERN_FORM_MAX_ENUM = 0x7FFFFFFF
} BkAttentionPatternForm;

/* Which blocks are active. Bp is 1 or B and Hp is 1 or H: a pattern of
 * extent 1 there is shared by every batch or head. blockQ and blockK are
 * 16..128; a single block size below 16 (1..15, the older single
 * block_size form) is accepted when blockQ == blockK. Tensors a form does
 * not use are left zeroed (dataType UNDEFINED). */
typedef struct BkAttentionPattern {
    BkAttentionPatternForm form;
    int32_t blockQ;
    int32_t blockK;
    uint32_t reserved;                  /* 0 */
    BkTensorDesc mask;                  /* MASK: U8 [Bp, Hp, nbq * nbk] */
    BkTensorDesc counts;                /* LIST: I32 [Bp, Hp, nbq] */
    BkTensorDesc indices;               /* LIST: I32 [Bp, Hp, nbq, capacity] */
} BkAttentionPattern;

/* Forward: y and, when lse is given, the log-sum-exp of each query's
 * scaled scores (natural log), which the backward plan needs.
 * Binding slots: 0 = q, 1 = k, 2 = v, 3 = mask, 4 = counts,
 * 5 = indices, 6 = y, 7 = lse (slots of absent tensors take 0). */
typedef struct BkAttentionInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_ATTENTION_INFO */
    const void *pNext;
    BkAttentionFlags flags;             /* BK_ATTENTION_CAUSAL_BIT */
    uint32_t reserved;                  /* 0 */
    double scale;                       /* finite; usually 1 / sqrt(D) */
    BkAttentionPattern pattern;
    BkTensorDesc q;                     /* [B, H, Lq, D] */
    BkTensorDesc k;                     /* [B, Hkv, Lk, D] */
    BkTensorDesc v;                     /* [B, Hkv, Lk, Dv] */
    BkTensorDesc y;                     /* [B, H, Lq, Dv], written */
    BkTensorDesc lse;                   /* [B, H, Lq], written; or dataType UNDEFINED */
} BkAttentionInfo;

enum {
    BK_ATTENTION_BINDING_Q = 0,
    BK_ATTENTION_BINDING_K = 1,
    BK_ATTENTION_BINDING_V = 2,
    BK_ATTENTION_BINDING_MASK = 3,
    BK_ATTENTION_BINDING_COUNTS = 4,
    BK_ATTENTION_BINDING_INDICES = 5,
    BK_ATTENTION_BINDING_Y = 6,
    BK_ATTENTION_BINDING_LSE = 7
};

/* Backward: dq, dk and dv from dy and the forward's q, k, v, y and lse
 * (the same scale, flags and pattern as the forward). dk and dv of a kv
 * head sum over the H / Hkv query heads that read it. The plan reports
 * a workspace (row sums of dy * y, and the list form's pattern as a
 * mask), scratch that need not be cleared.
 * Binding slots: 0 = q, 1 = k, 2 = v, 3 = mask, 4 = counts,
 * 5 = indices, 6 = y, 7 = lse, 8 = dy, 9 = dq, 10 = dk, 11 = dv. */
typedef struct BkAttentionBackwardInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO */
    const void *pNext;
    BkAttentionFlags flags;             /* CAUSAL_BIT, ALLOW_ATOMICS_BIT */
    uint32_t reserved;                  /* 0 */
    double scale;
    BkAttentionPattern pattern;
    BkTensorDesc q;                     /* [B, H, Lq, D] */
    BkTensorDesc k;                     /* [B, Hkv, Lk, D] */
    BkTensorDesc v;                     /* [B, Hkv, Lk, Dv] */
    BkTensorDesc y;                     /* [B, H, Lq, Dv]: the forward's output */
    BkTensorDesc lse;                   /* [B, H, Lq]: the forward's lse */
    BkTensorDesc dy;                    /* [B, H, Lq, Dv] */
    BkTensorDesc dq;                    /* [B, H, Lq, D], written */
    BkTensorDesc dk;                    /* [B, Hkv, Lk, D], written */
    BkTensorDesc dv;                    /* [B, Hkv, Lk, Dv], written */
} BkAttentionBackwardInfo;

enum {
    BK_ATTENTION_BACKWARD_BINDING_Q = 0,
    BK_ATTENTION_BACKWARD_BINDING_K = 1,
    BK_ATTENTION_BACKWARD_BINDING_V = 2,
    BK_ATTENTION_BACKWARD_BINDING_MASK = 3,
    BK_ATTENTION_BACKWARD_BINDING_COUNTS = 4,
    BK_ATTENTION_BACKWARD_BINDING_INDICES = 5,
    BK_ATTENTION_BACKWARD_BINDING_Y = 6,
    BK_ATTENTION_BACKWARD_BINDING_LSE = 7,
    BK_ATTENTION_BACKWARD_BINDING_DY = 8,
    BK_ATTENTION_BACKWARD_BINDING_DQ = 9,
    BK_ATTENTION_BACKWARD_BINDING_DK = 10,
    BK_ATTENTION_BACKWARD_BINDING_DV = 11
};

typedef enum BkAttentionSequenceForm {
    /* The batch keeps its [B, ...] tensors: sequence b uses only its first
     * lengthsQ[b] queries and lengthsK[b] keys (a decode batch over a
     * cache of Lk slots). Query rows past a sequence's length get y = 0
     * and lse = -inf, as a query that sees no key (and zero gradients). */
    BK_ATTENTION_SEQUENCES_PADDED = 0,
    /* The sequences lie end to end along the length axis of tensors whose
     * extent[0] (B) is 1: sequence s is queries lengthsQ[s] ..
     * lengthsQ[s + 1] - 1 and keys lengthsK[s] .. lengthsK[s + 1] - 1
     * (FlashAttention's cu_seqlens). */
    BK_ATTENTION_SEQUENCES_PACKED = 1,
    BK_ATTENTION_SEQUENCE_FORM_MAX_ENUM = 0x7FFFFFFF
} BkAttentionSequenceForm;

/* Sequences of their own lengths in one plan, chained (pNext) to
 * BkAttentionInfo or BkAttentionBackwardInfo. Each sequence is a problem
 * of its own: the causal diagonal is aligned to its own bottom right, and
 * pattern blocks count from its own first query and key (a PACKED
 * pattern's extent[0] is 1 or the number of sequences, and nbq, nbk come
 * from maxLengthQ, maxLengthK). Lengths are read on the device when the
 * plan runs: a length (or offset) out of range, or offsets that decrease,
 * make every output of that sequence NaN, never a read out of bounds.
 * Binding slots: forward 8 = lengthsQ, 9 = lengthsK; backward 12 =
 * lengthsQ, 13 = lengthsK (slots of absent tensors take 0). */
typedef struct BkAttentionSequencesInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO */
    const void *pNext;
    BkAttentionSequenceForm form;
    uint32_t reserved;                  /* 0 */
    /* PADDED: I32 [B], each in 0..Lq (lengthsQ) or 0..Lk (lengthsK); one
     * left zeroed (dataType UNDEFINED) means every sequence uses all of
     * that axis. PACKED: I32 [S + 1], from 0, non-decreasing, to Lq
     * (lengthsQ) or Lk (lengthsK), S sequences; both required. */
    BkTensorDesc lengthsQ;
    BkTensorDesc lengthsK;
    /* PACKED: bounds on every sequence's queries and keys (they size the
     * pattern and the work; a longer sequence's outputs are NaN). PADDED:
     * 0. */
    int64_t maxLengthQ;
    int64_t maxLengthK;
} BkAttentionSequencesInfo;

/* A paged KV cache, chained (pNext) to BkAttentionInfo (forward only)
 * together with a PADDED BkAttentionSequencesInfo whose lengthsK gives
 * each sequence's keys. k and v then describe the pool of pages: k [pages,
 * Hkv, pageSize, D], v [pages, Hkv, pageSize, Dv] (extent[0] the pages,
 * extent[2] the page size, 16..256; any strides, so a [pages, pageSize,
 * Hkv, D] cache binds as a permuted view). Key j of sequence b is row
 * j % pageSize of page blockTable[b, j / pageSize]; Lk, for the causal
 * diagonal and the pattern, is maxPagesPerSequence * pageSize. A page
 * index outside 0..pages - 1 among the pages a sequence uses makes every
 * output of that sequence NaN. Pages may be shared and in any order.
 * Binding slot 10 = blockTable. */
typedef struct BkAttentionPagedKvInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO */
    const void *pNext;
    BkTensorDesc blockTable;            /* I32 [B, maxPagesPerSequence] */
} BkAttentionPagedKvInfo;

enum {
    BK_ATTENTION_BINDING_LENGTHS_Q = 8,
    BK_ATTENTION_BINDING_LENGTHS_K = 9,
    BK_ATTENTION_BINDING_BLOCK_TABLE = 10,
    BK_ATTENTION_BACKWARD_BINDING_LENGTHS_Q = 12,
    BK_ATTENTION_BACKWARD_BINDING_LENGTHS_K = 13
};

#ifdef __cplusplus
}
#endif
#endif /* BK_ATTENTION_H */
