/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention on the host: which sequence a query or key row
 * belongs to (BkAttentionSequencesInfo, BkAttentionPagedKvInfo). The
 * lengths are read as the plan runs, so every rule of bk_attention.h is
 * checked here: a sequence that breaks one is bad (its outputs NaN) and
 * no index it gives is ever used. Nothing is kept between rows: each row
 * reads what it needs, so no run allocates. */
#include "host_attention.h"

static int64_t lengths_at(const int32_t *t, int64_t stride, int64_t i)
{
    return t[i * stride];
}

/* Batch entry b as one sequence (no struct, or PADDED, paged or not). */
static void batch_seq(const struct host_attn *a, int64_t b, struct host_attn_seq *s)
{
    const struct bk_attention_problem *p = a->p;
    *s = (struct host_attn_seq){ .b = b, .pb = b, .lq = p->lq, .lk = p->lk };
    if (a->lengths_q)
        s->lq = lengths_at(a->lengths_q, p->lengths_q_stride, b);
    if (a->lengths_k)
        s->lk = lengths_at(a->lengths_k, p->lengths_k_stride, b);
    s->bad = s->lq < 0 || s->lq > p->lq || s->lk < 0 || s->lk > p->lk;
    if (s->bad || !p->paged)
        return;
    /* The pages its keys use must lie in the pool. */
    const int64_t used = s->lk / p->page_size + (s->lk % p->page_size != 0);
    for (int64_t e = 0; e < used && !s->bad; e++) {
        const int32_t page = a->block_table[b * p->block_table_stride[0] +
                                            e * p->block_table_stride[1]];
        s->bad = page < 0 || page >= p->pages;
    }
}

/* Whether PACKED offsets off[s], off[s + 1] of an axis of extent n with
 * bound max break a rule: outside 0..n, decreasing, longer than max, or
 * the first not 0 or the last not n. */
static bool offsets_bad(const int32_t *off, int64_t stride, int64_t s, int64_t count, int64_t n,
                        int64_t max)
{
    const int64_t lo = lengths_at(off, stride, s), hi = lengths_at(off, stride, s + 1);
    return lo < 0 || hi > n || hi < lo || hi - lo > max || (s == 0 && lo != 0) ||
           (s == count - 1 && hi != n);
}

static void packed_seq(const struct host_attn *a, int64_t s, struct host_attn_seq *out)
{
    const struct bk_attention_problem *p = a->p;
    const int64_t q0 = lengths_at(a->lengths_q, p->lengths_q_stride, s);
    const int64_t k0 = lengths_at(a->lengths_k, p->lengths_k_stride, s);
    *out = (struct host_attn_seq){
        .b = 0, .pb = s, .q0 = q0, .k0 = k0,
        .lq = lengths_at(a->lengths_q, p->lengths_q_stride, s + 1) - q0,
        .lk = lengths_at(a->lengths_k, p->lengths_k_stride, s + 1) - k0,
        .bad = offsets_bad(a->lengths_q, p->lengths_q_stride, s, p->seq_count, p->lq,
                           p->max_len_q) ||
               offsets_bad(a->lengths_k, p->lengths_k_stride, s, p->seq_count, p->lk,
                           p->max_len_k),
    };
}

/* The PACKED sequence claiming row r of an axis (keys when key): the
 * rows between its two offsets, whichever order they are in. A row a bad
 * sequence claims, two claim, or none claims is NaN. */
static enum host_attn_place packed_place(const struct host_attn *a, int64_t r, bool key,
                                         struct host_attn_seq *s, int64_t *local)
{
    const struct bk_attention_problem *p = a->p;
    int found = 0;
    for (int64_t n = 0; n < p->seq_count; n++) {
        struct host_attn_seq c;
        packed_seq(a, n, &c);
        const int64_t first = key ? c.k0 : c.q0, len = key ? c.lk : c.lq;
        const int64_t lo = len < 0 ? first + len : first, hi = len < 0 ? first : first + len;
        if (r < lo || r >= hi)
            continue;
        if (c.bad || found++)
            return HOST_ATTN_NAN;
        *s = c;
    }
    if (!found)
        return HOST_ATTN_NAN;
    *local = r - (key ? s->k0 : s->q0);
    return HOST_ATTN_IN_SEQ;
}

enum host_attn_place host_attn_query_place(const struct host_attn *a, int64_t b, int64_t i,
                                           struct host_attn_seq *s, int64_t *local)
{
    const struct bk_attention_problem *p = a->p;
    if (p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED)
        return packed_place(a, i, false, s, local);
    batch_seq(a, b, s);
    *local = i;
    return s->bad ? HOST_ATTN_NAN : i < s->lq ? HOST_ATTN_IN_SEQ : HOST_ATTN_PAST_END;
}

enum host_attn_place host_attn_key_place(const struct host_attn *a, int64_t b, int64_t j,
                                         struct host_attn_seq *s, int64_t *local)
{
    const struct bk_attention_problem *p = a->p;
    if (p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED)
        return packed_place(a, j, true, s, local);
    batch_seq(a, b, s);
    *local = j;
    return s->bad ? HOST_ATTN_NAN : j < s->lk ? HOST_ATTN_IN_SEQ : HOST_ATTN_PAST_END;
}
