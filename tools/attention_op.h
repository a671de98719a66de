/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention op infos for bkinfo and bkbench (bk_attention.h):
 * contiguous q [B, H, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv],
 * y [B, H, Lq, Dv] and lse [B, H, Lq], scale 1 / sqrt(D), and the block
 * patterns the tools use, made on the host:
 *   full     every block (BK_ATTENTION_PATTERN_DENSE);
 *   N%       each block row keeps max(1, round(N% of nbk)) key blocks: its
 *            diagonal block and the rest drawn at random (seeded, below);
 *   window   a sliding window of W tokens and a sink: block (i, j) is
 *            active when j == 0 or it holds a query q and a key k with
 *            0 <= q - k < W (q counted from the bottom-right alignment),
 *            composed with BK_ATTENTION_CAUSAL_BIT.
 * A MASK or the same blocks as a LIST (capacity: the longest row).
 *
 * The random draw, which bench/attention-peers.py repeats exactly (check
 * the two with the pattern hash): a splitmix64 generator seeded with
 * ATTENTION_SEED + N runs over the patterns (b, h) in order and their
 * block rows i in order; row i keeps j0 = min(nbk - 1, i * blockQ /
 * blockK) and picks keep - 1 of the other key blocks, listed in
 * increasing order as c[0 .. nbk-2], by a partial Fisher-Yates shuffle:
 * for t = 0 .. keep-2, r = t + next() % (nbk - 1 - t), swap c[t] and
 * c[r], keep c[t]. */
#ifndef BK_TOOL_ATTENTION_OP_H
#define BK_TOOL_ATTENTION_OP_H

#include <stdbool.h>
#include <stdint.h>

#include <bk/bk.h>

#define ATTENTION_SEED 0xB10C5EEDull

enum attention_pattern_kind {
    ATTENTION_PATTERN_FULL,               /* every block */
    ATTENTION_PATTERN_RANDOM,             /* percent of each block row */
    ATTENTION_PATTERN_WINDOW,             /* causal sliding window + sink */
};

struct attention_pattern_desc {
    enum attention_pattern_kind kind;
    int percent;                          /* RANDOM: 1..100 */
    int64_t window;                       /* WINDOW: tokens */
};

struct attention_op_desc {
    bool backward;
    BkDataType dtype;                     /* q, k, v, y and the gradients */
    int64_t batch, heads, kv_heads;       /* B, H, Hkv */
    int64_t lq, lk, d, dv;
    int32_t block_q, block_k;             /* DENSE too: 0 or a valid size */
    BkAttentionPatternForm form;
    bool causal;
    int64_t pattern_batch, pattern_heads; /* Bp (1 or B), Hp (1 or H) */
    int64_t capacity;                     /* LIST: entries per block row */
};

union attention_op_info {
    BkAttentionInfo fwd;
    BkAttentionBackwardInfo bwd;
};

/* "attention-fwd" or "attention-bwd". */
const char *attention_op_name(bool backward);
/* "dense", "mask" or "list". */
const char *attention_form_name(BkAttentionPatternForm form);
/* Fills *info and returns the pointer for BkPlanCreateInfo.pOperation. */
const void *attention_op_build(const struct attention_op_desc *d, union attention_op_info *info);

/* Blocks of the score matrix: ceil(Lq / blockQ), ceil(Lk / blockK). */
int64_t attention_nbq(const struct attention_op_desc *d);
int64_t attention_nbk(const struct attention_op_desc *d);
/* Bytes of the pattern's mask, [Bp, Hp, nbq, nbk] (0 for DENSE). */
uint64_t attention_mask_bytes(const struct attention_op_desc *d);

/* splitmix64's next value (tiny, and simple to repeat in Python): the
 * patterns' generator, and the paged caches' page shuffle. */
uint64_t attention_splitmix64(uint64_t *state);

/* Writes the pattern into mask [Bp, Hp, nbq, nbk], one 0/1 byte a block
 * (d's shape and blocks; a FULL pattern sets every byte). */
void attention_pattern_mask(const struct attention_op_desc *d,
                            const struct attention_pattern_desc *p, uint8_t *mask);
/* The longest block row of mask, at least 1: a LIST's capacity. */
int64_t attention_mask_capacity(const struct attention_op_desc *d, const uint8_t *mask);
/* mask as a LIST: counts [Bp, Hp, nbq], indices [Bp, Hp, nbq, d->capacity]
 * (active key blocks in increasing order, the rest of a row zero). */
void attention_mask_to_list(const struct attention_op_desc *d, const uint8_t *mask,
                            int32_t *counts, int32_t *indices);
/* Whether query i sees key j through block (bi, bj) of mask (NULL: every
 * block), the causal rule included. */
bool attention_visible(const struct attention_op_desc *d, const uint8_t *mask, int64_t b,
                       int64_t h, int64_t i, int64_t j);
/* Active blocks summed over every batch and head; with the causal flag a
 * block counts when it holds one visible (query, key) pair, so a block the
 * diagonal cuts counts as a whole one. mask NULL: every block. */
int64_t attention_active_blocks(const struct attention_op_desc *d, const uint8_t *mask);
/* FLOPs over the active blocks: forward 2 * blockQ * blockK * (D + Dv)
 * each (4 blockQ blockK D when Dv = D), backward 2.5 times that. For
 * DENSE, blocks of d's block sizes (or the whole matrix when 0). */
double attention_flops(const struct attention_op_desc *d, int64_t active_blocks);
/* FNV-1a (64 bits) of the mask's bytes, for comparing patterns made by
 * other programs. */
uint64_t attention_mask_hash(const uint8_t *mask, uint64_t bytes);

#endif /* BK_TOOL_ATTENTION_OP_H */
