/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention on the host: what the forward (host_attention.c)
 * and the backward (host_attention_backward.c) share. Everything is
 * computed in double from inputs converted exactly; each output is
 * rounded once. No run allocates: rows of at most 256 elements live on
 * the stack and scores are recomputed rather than stored. */
#ifndef BK_HOST_ATTENTION_H
#define BK_HOST_ATTENTION_H

#include "host_internal.h"

#include <math.h>

/* D and Dv are at most this (bk_attention.h). */
#define HOST_ATTN_MAX_DIM 256

/* Below this many multiply-adds a pass runs on one thread. */
#define HOST_ATTN_PARALLEL_MIN_WORK (1 << 18)

/* OpenMP's parallel for with a static schedule (results never depend on
 * the thread count), before a for statement; without OpenMP the
 * condition is only evaluated. */
#define HOST_ATTN_PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define HOST_ATTN_PARALLEL_FOR(cond) HOST_ATTN_PRAGMA(omp parallel for schedule(static) if (cond))
#else
#define HOST_ATTN_PARALLEL_FOR(cond) (void)(cond);
#endif

/* One run: the problem and its bound base addresses (inputs too are
 * char *: they come from integers). */
struct host_attn {
    const struct bk_attention_problem *p;
    char *q, *k, *v, *y, *lse, *dy, *dq, *dk, *dv;
    const uint8_t *mask;         /* [Bp, Hp, nbq, nbk] through mask_stride; NULL: dense */
    const uint8_t *bad;          /* [Bp * Hp] list errors; NULL: not a list */
    int64_t group;               /* query heads per kv head */
    const int32_t *lengths_q, *lengths_k; /* NULL: absent (the whole axis) */
    const int32_t *block_table;  /* paged only */
};

/* One sequence: a problem of its own inside the bound tensors. Without a
 * sequences struct each batch entry is one, of Lq queries and Lk keys. */
struct host_attn_seq {
    int64_t b;                   /* batch index of its rows (PACKED: 0) */
    int64_t pb;                  /* its pattern entry's batch index (PACKED: s) */
    int64_t q0, k0;              /* rows of its first query and key */
    int64_t lq, lk;              /* its queries and keys */
    bool bad;                    /* its run-time lengths broke a rule: NaN */
};

/* Where a query row (or a key row) of the tensors falls. */
enum host_attn_place {
    HOST_ATTN_IN_SEQ,            /* local index into a sequence */
    HOST_ATTN_PAST_END,          /* PADDED: past its sequence's length */
    HOST_ATTN_NAN                /* a bad sequence's, or no sequence's */
};

/* Query row i (key row j) of batch b: the sequence and the local index
 * (host_attention_sequences.c). A PACKED row belongs to the sequence
 * whose offsets enclose it; offsets that break a rule make the rows they
 * claim (and rows no sequence claims) NaN, never read out of bounds. */
BK_HIDDEN enum host_attn_place host_attn_query_place(const struct host_attn *a, int64_t b,
                                                     int64_t i, struct host_attn_seq *s,
                                                     int64_t *local);
BK_HIDDEN enum host_attn_place host_attn_key_place(const struct host_attn *a, int64_t b,
                                                   int64_t j, struct host_attn_seq *s,
                                                   int64_t *local);

/* Element offset of key j (local) of kv head kvh of sequence s in k or v
 * (stride): through the block table when paged. */
static inline int64_t host_attn_key_offset(const struct host_attn *a,
                                           const struct host_attn_seq *s, const int64_t *stride,
                                           int64_t kvh, int64_t j)
{
    const struct bk_attention_problem *p = a->p;
    if (!p->paged)
        return s->b * stride[0] + kvh * stride[1] + (s->k0 + j) * stride[2];
    const int64_t page = a->block_table[s->b * p->block_table_stride[0] +
                                        j / p->page_size * p->block_table_stride[1]];
    return page * stride[0] + kvh * stride[1] + j % p->page_size * stride[2];
}

/* The run's bindings (slots 0..7 are the same in both plans, the
 * backward's 8..11 are read only by the backward) and, for a list, the
 * list scattered into the workspace's mask with its bad flags. */
BK_HIDDEN void host_attn_begin(struct host_attn *a, BkPlan plan, const struct bk_run_args *args);

/* Row r of a [b, h, r, c] operand: n elements from element offset off
 * with column stride cs, converted to double; and the store, rounding
 * once to type (to nearest even). */
BK_HIDDEN void host_attn_load_row(BkDataType type, const char *base, int64_t off, int64_t cs,
                                  int64_t n, double *out);
BK_HIDDEN void host_attn_store_row(BkDataType type, char *base, int64_t off, int64_t cs,
                                   int64_t n, const double *in);
/* n copies of value (0 or NaN) into a row. */
BK_HIDDEN void host_attn_fill_row(BkDataType type, char *base, int64_t off, int64_t cs, int64_t n,
                                  double value);
BK_HIDDEN double host_attn_load(BkDataType type, const char *base, int64_t off);
BK_HIDDEN void host_attn_store(BkDataType type, char *base, int64_t off, double value);

/* Element offset of row r of head h, batch b in a 4-D operand. */
static inline int64_t host_attn_row(const int64_t *stride, int64_t b, int64_t h, int64_t r)
{
    return b * stride[0] + h * stride[1] + r * stride[2];
}

/* The pattern entry of (b, h): its mask's first byte, NULL when dense. */
static inline const uint8_t *host_attn_pattern(const struct host_attn *a, int64_t b, int64_t h)
{
    const struct bk_attention_problem *p = a->p;
    if (!a->mask)
        return NULL;
    return a->mask + b % p->pattern_batch * p->mask_stride[0] +
           h % p->pattern_heads * p->mask_stride[1];
}

/* Whether the list of (b, h) broke a rule: its outputs are NaN. */
static inline bool host_attn_bad(const struct host_attn *a, int64_t b, int64_t h)
{
    const struct bk_attention_problem *p = a->p;
    return a->bad && a->bad[b % p->pattern_batch * p->pattern_heads + h % p->pattern_heads];
}

/* One past the last key query i of sequence s may see under the causal
 * rule (the diagonal aligned to the sequence's bottom right), clamped to
 * 0..its keys. */
static inline int64_t host_attn_key_end(const struct bk_attention_problem *p,
                                        const struct host_attn_seq *s, int64_t i)
{
    if (!p->causal)
        return s->lk;
    const int64_t end = i + (s->lk - s->lq) + 1;
    return end < 0 ? 0 : end < s->lk ? end : s->lk;
}

/* Whether query i of sequence s, a head with pattern entry pat, sees key
 * j (both local to the sequence). */
static inline bool host_attn_visible(const struct host_attn *a, const struct host_attn_seq *s,
                                     const uint8_t *pat, int64_t i, int64_t j)
{
    const struct bk_attention_problem *p = a->p;
    if (j >= host_attn_key_end(p, s, i))
        return false;
    return !pat || pat[i / p->block_q * p->mask_stride[2] + j / p->block_k * p->mask_stride[3]];
}

/* The keys query i sees, as runs [j0, j1) of whole or cut blocks. */
struct host_attn_keys {
    const uint8_t *row;          /* the query block's mask row; NULL: dense */
    int64_t stride, block, blocks, end, next;
};

static inline struct host_attn_keys host_attn_keys_of(const struct host_attn *a,
                                                      const struct host_attn_seq *s,
                                                      const uint8_t *pat, int64_t i)
{
    const struct bk_attention_problem *p = a->p;
    return (struct host_attn_keys){
        .row = pat ? pat + i / p->block_q * p->mask_stride[2] : NULL,
        .stride = p->mask_stride[3], .block = p->block_k, .blocks = p->nbk,
        .end = host_attn_key_end(p, s, i),
    };
}

static inline bool host_attn_next_keys(struct host_attn_keys *it, int64_t *j0, int64_t *j1)
{
    if (!it->row) {
        *j0 = 0, *j1 = it->end;
        return it->next++ == 0 && it->end > 0;
    }
    for (; it->next < it->blocks && it->next * it->block < it->end; it->next++)
        if (it->row[it->next * it->stride]) {
            *j0 = it->next * it->block;
            *j1 = *j0 + it->block < it->end ? *j0 + it->block : it->end;
            it->next++;
            return true;
        }
    return false;
}

static inline double host_attn_dot(const double *x, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t c = 0; c < n; c++)
        s += x[c] * y[c];
    return s;
}

/* s_ij = scale * q_i . k_j for kv head kvh of sequence s (j local). */
static inline double host_attn_score(const struct host_attn *a, const double *q,
                                     const struct host_attn_seq *s, int64_t kvh, int64_t j,
                                     double *k_row)
{
    const struct bk_attention_problem *p = a->p;
    host_attn_load_row(p->type, a->k, host_attn_key_offset(a, s, p->stride.k, kvh, j),
                       p->stride.k[3], p->d, k_row);
    return p->scale * host_attn_dot(q, k_row, p->d);
}

/* The counts the passes iterate over: rows (B x H x Lq) and, for the
 * backward, key tasks of per keys, runs of them per (b, kv head). Checked:
 * plan selection refuses a problem whose counts overflow, so the passes
 * need not (host_attention_backward.c). */
struct host_attn_sizes {
    int64_t rows, per, runs, tasks;
};
BK_HIDDEN bool host_attn_sizes(const struct bk_attention_problem *p, struct host_attn_sizes *s);

/* The backward pass (host_attention_backward.c). */
BK_HIDDEN void host_attn_backward(const struct host_attn *a);

#endif /* BK_HOST_ATTENTION_H */
