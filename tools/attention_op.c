/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention op infos and block patterns for bkinfo and
 * bkbench. */
#include "attention_op.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tool_common.h"

const char *attention_op_name(bool backward)
{
    return backward ? "attention-bwd" : "attention-fwd";
}

const char *attention_form_name(BkAttentionPatternForm form)
{
    return form == BK_ATTENTION_PATTERN_MASK   ? "mask"
           : form == BK_ATTENTION_PATTERN_LIST ? "list"
                                               : "dense";
}

/* A contiguous tensor of rank 3 or 4 (all-zero strides). */
static BkTensorDesc tensor(BkDataType dtype, uint32_t rank, int64_t e0, int64_t e1, int64_t e2,
                           int64_t e3)
{
    BkTensorDesc t;
    memset(&t, 0, sizeof t);
    t.dataType = dtype;
    t.rank = rank;
    t.extent[0] = e0;
    t.extent[1] = e1;
    t.extent[2] = e2;
    t.extent[3] = e3;
    return t;
}

int64_t attention_nbq(const struct attention_op_desc *d)
{
    return d->block_q > 0 ? (d->lq + d->block_q - 1) / d->block_q : 1;
}

int64_t attention_nbk(const struct attention_op_desc *d)
{
    return d->block_k > 0 ? (d->lk + d->block_k - 1) / d->block_k : 1;
}

uint64_t attention_mask_bytes(const struct attention_op_desc *d)
{
    if (d->form == BK_ATTENTION_PATTERN_DENSE)
        return 0;
    return (uint64_t)d->pattern_batch * (uint64_t)d->pattern_heads *
           (uint64_t)attention_nbq(d) * (uint64_t)attention_nbk(d);
}

static BkAttentionPattern pattern(const struct attention_op_desc *d)
{
    BkAttentionPattern p;
    memset(&p, 0, sizeof p);
    p.form = d->form;
    p.blockQ = d->block_q;
    p.blockK = d->block_k;
    const int64_t bp = d->pattern_batch, hp = d->pattern_heads, nbq = attention_nbq(d);
    if (d->form == BK_ATTENTION_PATTERN_MASK) {
        p.mask = tensor(BK_DATA_TYPE_U8, 3, bp, hp, nbq * attention_nbk(d), 0);
    } else if (d->form == BK_ATTENTION_PATTERN_LIST) {
        p.counts = tensor(BK_DATA_TYPE_I32, 3, bp, hp, nbq, 0);
        p.indices = tensor(BK_DATA_TYPE_I32, 4, bp, hp, nbq, d->capacity);
    }
    return p;
}

const void *attention_op_build(const struct attention_op_desc *d, union attention_op_info *info)
{
    const BkDataType t = d->dtype;
    const BkDataType lse_type = t == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    const BkTensorDesc q = tensor(t, 4, d->batch, d->heads, d->lq, d->d);
    const BkTensorDesc k = tensor(t, 4, d->batch, d->kv_heads, d->lk, d->d);
    const BkTensorDesc v = tensor(t, 4, d->batch, d->kv_heads, d->lk, d->dv);
    const BkTensorDesc y = tensor(t, 4, d->batch, d->heads, d->lq, d->dv);
    const BkTensorDesc lse = tensor(lse_type, 3, d->batch, d->heads, d->lq, 0);
    const BkAttentionFlags flags = d->causal ? BK_ATTENTION_CAUSAL_BIT : 0;
    const double scale = 1.0 / sqrt((double)d->d);

    memset(info, 0, sizeof *info);
    if (d->backward) {
        BkAttentionBackwardInfo *b = &info->bwd;
        b->sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO;
        b->flags = flags;
        b->scale = scale;
        b->pattern = pattern(d);
        b->q = q;
        b->k = k;
        b->v = v;
        b->y = y;
        b->lse = lse;
        b->dy = y;
        b->dq = q;
        b->dk = k;
        b->dv = v;
        return b;
    }
    BkAttentionInfo *f = &info->fwd;
    f->sType = BK_STRUCTURE_TYPE_ATTENTION_INFO;
    f->flags = flags;
    f->scale = scale;
    f->pattern = pattern(d);
    f->q = q;
    f->k = k;
    f->v = v;
    f->y = y;
    f->lse = lse;
    return f;
}

/* ---- Patterns ------------------------------------------------------------ */

uint64_t attention_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* One block row of a RANDOM pattern (see attention_op.h). */
static void random_row(int64_t i, int64_t nbk, int64_t keep, int32_t bq, int32_t bk,
                       int64_t *cand, uint64_t *state, uint8_t *row)
{
    int64_t j0 = i * bq / bk;
    if (j0 > nbk - 1)
        j0 = nbk - 1;
    row[j0] = 1;
    int64_t n = 0;
    for (int64_t j = 0; j < nbk; j++)
        if (j != j0)
            cand[n++] = j;
    for (int64_t t = 0; t + 1 < keep; t++) {
        int64_t r = t + (int64_t)(attention_splitmix64(state) % (uint64_t)(n - t));
        int64_t c = cand[r];
        cand[r] = cand[t];
        cand[t] = c;
        row[c] = 1;
    }
}

/* Block (bi, bj) holds a query q and key k with 0 <= q - k < window
 * (q shifted by Lk - Lq, the causal alignment), or is the sink column. */
static bool window_block(const struct attention_op_desc *d, int64_t window, int64_t bi,
                         int64_t bj)
{
    if (bj == 0)
        return true;
    const int64_t off = d->lk - d->lq;
    const int64_t q_lo = bi * d->block_q + off;
    const int64_t q_hi = (bi + 1) * d->block_q < d->lq ? (bi + 1) * d->block_q - 1 + off
                                                         : d->lq - 1 + off;
    const int64_t k_lo = bj * d->block_k;
    const int64_t k_hi = (bj + 1) * d->block_k < d->lk ? (bj + 1) * d->block_k - 1 : d->lk - 1;
    return q_hi - k_lo >= 0 && q_lo - k_hi < window;
}

void attention_pattern_mask(const struct attention_op_desc *d,
                            const struct attention_pattern_desc *p, uint8_t *mask)
{
    const int64_t nbq = attention_nbq(d), nbk = attention_nbk(d);
    const int64_t heads = d->pattern_batch * d->pattern_heads;
    const uint64_t bytes = (uint64_t)heads * (uint64_t)nbq * (uint64_t)nbk;
    if (p->kind == ATTENTION_PATTERN_FULL) {
        memset(mask, 1, bytes);
        return;
    }
    memset(mask, 0, bytes);
    if (p->kind == ATTENTION_PATTERN_WINDOW) {
        for (int64_t ph = 0; ph < heads; ph++)
            for (int64_t i = 0; i < nbq; i++)
                for (int64_t j = 0; j < nbk; j++)
                    mask[(ph * nbq + i) * nbk + j] = window_block(d, p->window, i, j);
        return;
    }
    /* Round half up, at least one block. */
    int64_t keep = ((int64_t)p->percent * nbk + 50) / 100;
    keep = keep < 1 ? 1 : keep > nbk ? nbk : keep;
    int64_t *cand = malloc((size_t)nbk * sizeof *cand);
    if (!cand)
        tool_die("out of host memory");
    uint64_t state = ATTENTION_SEED + (uint64_t)p->percent;
    for (int64_t ph = 0; ph < heads; ph++)
        for (int64_t i = 0; i < nbq; i++)
            random_row(i, nbk, keep, d->block_q, d->block_k, cand, &state,
                       mask + (ph * nbq + i) * nbk);
    free(cand);
}

int64_t attention_mask_capacity(const struct attention_op_desc *d, const uint8_t *mask)
{
    const int64_t nbk = attention_nbk(d);
    const int64_t rows = d->pattern_batch * d->pattern_heads * attention_nbq(d);
    int64_t most = 1;
    for (int64_t r = 0; r < rows; r++) {
        int64_t n = 0;
        for (int64_t j = 0; j < nbk; j++)
            n += mask[r * nbk + j] != 0;
        if (n > most)
            most = n;
    }
    return most;
}

void attention_mask_to_list(const struct attention_op_desc *d, const uint8_t *mask,
                            int32_t *counts, int32_t *indices)
{
    const int64_t nbk = attention_nbk(d);
    const int64_t rows = d->pattern_batch * d->pattern_heads * attention_nbq(d);
    for (int64_t r = 0; r < rows; r++) {
        int32_t *out = indices + r * d->capacity;
        int32_t n = 0;
        memset(out, 0, (size_t)d->capacity * sizeof *out);
        for (int64_t j = 0; j < nbk && n < d->capacity; j++)
            if (mask[r * nbk + j])
                out[n++] = (int32_t)j;
        counts[r] = n;
    }
}

/* The mask byte of block (bi, bj) for batch b and head h. */
static bool block_active(const struct attention_op_desc *d, const uint8_t *mask, int64_t b,
                         int64_t h, int64_t bi, int64_t bj)
{
    if (!mask)
        return true;
    const int64_t ph = (b % d->pattern_batch) * d->pattern_heads + h % d->pattern_heads;
    return mask[(ph * attention_nbq(d) + bi) * attention_nbk(d) + bj] != 0;
}

bool attention_visible(const struct attention_op_desc *d, const uint8_t *mask, int64_t b,
                       int64_t h, int64_t i, int64_t j)
{
    if (d->causal && j > i + (d->lk - d->lq))
        return false;
    const int64_t bi = d->block_q > 0 ? i / d->block_q : 0;
    const int64_t bj = d->block_k > 0 ? j / d->block_k : 0;
    return block_active(d, mask, b, h, bi, bj);
}

int64_t attention_active_blocks(const struct attention_op_desc *d, const uint8_t *mask)
{
    const int64_t nbq = attention_nbq(d), nbk = attention_nbk(d);
    const int64_t bq = d->block_q > 0 ? d->block_q : d->lq;
    const int64_t bk = d->block_k > 0 ? d->block_k : d->lk;
    int64_t total = 0;
    for (int64_t b = 0; b < d->batch; b++)
        for (int64_t h = 0; h < d->heads; h++)
            for (int64_t i = 0; i < nbq; i++) {
                /* The last query of the block row sees keys up to here. */
                const int64_t last_q = (i + 1) * bq < d->lq ? (i + 1) * bq - 1 : d->lq - 1;
                for (int64_t j = 0; j < nbk; j++) {
                    if (d->causal && j * bk > last_q + (d->lk - d->lq))
                        break;
                    total += block_active(d, mask, b, h, i, j);
                }
            }
    return total;
}

double attention_flops(const struct attention_op_desc *d, int64_t active_blocks)
{
    const double bq = d->block_q > 0 ? (double)d->block_q : (double)d->lq;
    const double bk = d->block_k > 0 ? (double)d->block_k : (double)d->lk;
    const double fwd = 2.0 * bq * bk * (double)(d->d + d->dv) * (double)active_blocks;
    return d->backward ? 2.5 * fwd : fwd;
}

uint64_t attention_mask_hash(const uint8_t *mask, uint64_t bytes)
{
    uint64_t h = 0xCBF29CE484222325ull;
    for (uint64_t i = 0; i < bytes; i++) {
        h ^= mask[i] != 0;
        h *= 0x100000001B3ull;
    }
    return h;
}
