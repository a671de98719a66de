/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention's backward on the host, in double, from the
 * forward's y and lse as bound:
 *
 *   D_i = sum_c dy[i, c] y[i, c],   P_ij = exp(s_ij - lse_i),
 *   dS_ij = P_ij (sum_c dy[i, c] v[j, c] - D_i),
 *   dq[i] = scale sum_j dS_ij k[j],
 *   dk[j] = scale sum_(h, i) dS_ij q[i],   dv[j] = sum_(h, i) P_ij dy[i],
 *
 * over the pairs (i, j) the pattern shows, h over the query heads of the
 * key's kv head. Two passes, no atomics: dq one task per query row; dk
 * and dv one task per run of keys of a kv head, summing over its heads
 * and then rows in order. D_i is recomputed where needed rather than
 * kept (the workspace's F32 row sums would round it). A row whose lse is
 * -inf adds nothing and gets dq = 0; a bad list makes dq of its (b, h)
 * and dk, dv of its kv head NaN. With sequences each is a problem of its
 * own: rows past a PADDED length get dq = 0, and a bad sequence's dq and
 * its keys' dk, dv are NaN (host_attention_sequences.c). */
#include "host_attention.h"

#include <string.h>

/* Keys per dk/dv task: as many as fit KEY_TILE doubles per operand. */
#define KEY_TILE 1024
#define MAX_TASK_KEYS 16

/* What every pass needs of query row i of (b, h): q, dy, lse and D. */
struct query_row {
    double q[HOST_ATTN_MAX_DIM], dy[HOST_ATTN_MAX_DIM];
    double lse, rowsum;
};

/* false when the row contributes nothing (lse -inf: it saw no key).
 * Query i (local) of sequence s. */
static bool load_query(const struct host_attn *a, const struct host_attn_seq *s, int64_t h,
                       int64_t il, struct query_row *r)
{
    const struct bk_attention_problem *p = a->p;
    const int64_t b = s->b, i = s->q0 + il;
    r->lse = host_attn_load(p->lse_type, a->lse,
                            b * p->stride.lse[0] + h * p->stride.lse[1] + i * p->stride.lse[2]);
    if (r->lse == -INFINITY)
        return false;
    double y[HOST_ATTN_MAX_DIM];
    host_attn_load_row(p->type, a->q, host_attn_row(p->stride.q, b, h, i), p->stride.q[3], p->d,
                       r->q);
    host_attn_load_row(p->type, a->dy, host_attn_row(p->stride.dy, b, h, i), p->stride.dy[3],
                       p->dv, r->dy);
    host_attn_load_row(p->type, a->y, host_attn_row(p->stride.y, b, h, i), p->stride.y[3], p->dv,
                       y);
    r->rowsum = host_attn_dot(r->dy, y, p->dv);
    return true;
}

/* ---- dq ------------------------------------------------------------------------ */

static void dq_row(const struct host_attn *a, int64_t b, int64_t h, int64_t i)
{
    const struct bk_attention_problem *p = a->p;
    const int64_t off = host_attn_row(p->stride.dq, b, h, i);
    struct host_attn_seq s;
    int64_t il;
    const enum host_attn_place place = host_attn_query_place(a, b, i, &s, &il);
    if (place == HOST_ATTN_NAN || host_attn_bad(a, s.pb, h)) {
        host_attn_fill_row(p->type, a->dq, off, p->stride.dq[3], p->d, NAN);
        return;
    }
    struct query_row r;
    double acc[HOST_ATTN_MAX_DIM] = { 0 }, k[HOST_ATTN_MAX_DIM], v[HOST_ATTN_MAX_DIM];
    if (place == HOST_ATTN_IN_SEQ && load_query(a, &s, h, il, &r)) {
        const int64_t kvh = h / a->group;
        struct host_attn_keys keys = host_attn_keys_of(a, &s, host_attn_pattern(a, s.pb, h), il);
        int64_t j0, j1;
        while (host_attn_next_keys(&keys, &j0, &j1))
            for (int64_t j = j0; j < j1; j++) {
                const double prob = exp(host_attn_score(a, r.q, &s, kvh, j, k) - r.lse);
                host_attn_load_row(p->type, a->v, host_attn_key_offset(a, &s, p->stride.v, kvh, j),
                                   p->stride.v[3], p->dv, v);
                const double ds = prob * (host_attn_dot(r.dy, v, p->dv) - r.rowsum);
                for (int64_t c = 0; c < p->d; c++)
                    acc[c] += ds * k[c];
            }
        for (int64_t c = 0; c < p->d; c++)
            acc[c] *= p->scale;
    }
    host_attn_store_row(p->type, a->dq, off, p->stride.dq[3], p->d, acc);
}

/* ---- dk, dv ---------------------------------------------------------------------- */

/* Keys j0 .. j0 + n - 1 of kv head kvh, batch b, with their sums. */
struct key_task {
    int64_t b, kvh, j0, n;
    double k[KEY_TILE], v[KEY_TILE], dk[KEY_TILE], dv[KEY_TILE];
};

/* The task's keys jj0 .. jj1 - 1, all of sequence s (jl0 the local
 * index of jj0). */
struct key_run {
    const struct host_attn_seq *s;
    int64_t jj0, jj1, jl0;
};

/* Whether any of the run's keys is visible to query i (pattern pat). */
static bool row_reaches(const struct host_attn *a, const uint8_t *pat, const struct key_run *u,
                        int64_t i, bool *seen)
{
    bool any = false;
    for (int64_t jj = u->jj0; jj < u->jj1; jj++)
        any |= seen[jj] = host_attn_visible(a, u->s, pat, i, u->jl0 + jj - u->jj0);
    return any;
}

/* Adds what query head h of the group, the sequence's rows, give the
 * run's keys. */
static void key_sums(const struct host_attn *a, struct key_task *t, const struct key_run *u,
                     int64_t h)
{
    const struct bk_attention_problem *p = a->p;
    const struct host_attn_seq *s = u->s;
    const uint8_t *pat = host_attn_pattern(a, s->pb, h);
    /* Under the causal rule no row before this one sees key jl0. */
    int64_t first = p->causal ? u->jl0 - (s->lk - s->lq) : 0;
    struct query_row r;
    bool seen[MAX_TASK_KEYS];
    for (int64_t i = first < 0 ? 0 : first; i < s->lq; i++) {
        if (!row_reaches(a, pat, u, i, seen) || !load_query(a, s, h, i, &r))
            continue;
        for (int64_t jj = u->jj0; jj < u->jj1; jj++) {
            if (!seen[jj])
                continue;
            const double *k = t->k + jj * p->d, *v = t->v + jj * p->dv;
            const double prob = exp(p->scale * host_attn_dot(r.q, k, p->d) - r.lse);
            const double ds = prob * (host_attn_dot(r.dy, v, p->dv) - r.rowsum);
            double *dk = t->dk + jj * p->d, *dv = t->dv + jj * p->dv;
            for (int64_t c = 0; c < p->d; c++)
                dk[c] += ds * r.q[c];
            for (int64_t c = 0; c < p->dv; c++)
                dv[c] += prob * r.dy[c];
        }
    }
}

/* Splits the task's keys into runs of one sequence each; a key of a bad
 * sequence (or of a bad list of its kv head) gets NaN. */
static void key_task_sums(const struct host_attn *a, struct key_task *t, bool *nan)
{
    const struct bk_attention_problem *p = a->p;
    for (int64_t jj = 0; jj < t->n;) {
        struct host_attn_seq s;
        struct key_run u = { .s = &s, .jj0 = jj };
        const enum host_attn_place place = host_attn_key_place(a, t->b, t->j0 + jj, &s, &u.jl0);
        /* A PACKED sequence's keys end at its last; a batch's keys are all
         * of the task (those past a PADDED length are seen by none). */
        u.jj1 = place == HOST_ATTN_NAN ? jj + 1
              : p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED &&
                        s.k0 + s.lk - t->j0 < t->n
                  ? s.k0 + s.lk - t->j0
                  : t->n;
        bool bad = place == HOST_ATTN_NAN;
        for (int64_t h = t->kvh * a->group; !bad && h < (t->kvh + 1) * a->group; h++)
            bad = host_attn_bad(a, s.pb, h);
        for (int64_t h = t->kvh * a->group; !bad && h < (t->kvh + 1) * a->group; h++)
            key_sums(a, t, &u, h);
        for (; jj < u.jj1; jj++)
            nan[jj] = bad;
    }
}

static void key_task_run(const struct host_attn *a, struct key_task *t)
{
    const struct bk_attention_problem *p = a->p;
    bool nan[MAX_TASK_KEYS];
    for (int64_t jj = 0; jj < t->n; jj++) {
        const int64_t j = t->j0 + jj;
        host_attn_load_row(p->type, a->k, host_attn_row(p->stride.k, t->b, t->kvh, j),
                           p->stride.k[3], p->d, t->k + jj * p->d);
        host_attn_load_row(p->type, a->v, host_attn_row(p->stride.v, t->b, t->kvh, j),
                           p->stride.v[3], p->dv, t->v + jj * p->dv);
    }
    memset(t->dk, 0, (size_t)(t->n * p->d) * sizeof *t->dk);
    memset(t->dv, 0, (size_t)(t->n * p->dv) * sizeof *t->dv);
    key_task_sums(a, t, nan);
    for (int64_t jj = 0; jj < t->n; jj++) {
        const int64_t j = t->j0 + jj;
        const bool bad = nan[jj];
        double *dk = t->dk + jj * p->d;
        for (int64_t c = 0; c < p->d; c++)
            dk[c] = bad ? NAN : p->scale * dk[c];
        if (bad)
            for (int64_t c = 0; c < p->dv; c++)
                t->dv[jj * p->dv + c] = NAN;
        host_attn_store_row(p->type, a->dk, host_attn_row(p->stride.dk, t->b, t->kvh, j),
                            p->stride.dk[3], p->d, dk);
        host_attn_store_row(p->type, a->dv, host_attn_row(p->stride.dv, t->b, t->kvh, j),
                            p->stride.dv[3], p->dv, t->dv + jj * p->dv);
    }
}

bool host_attn_sizes(const struct bk_attention_problem *p, struct host_attn_sizes *s)
{
    bool ovf = false;
    s->rows = bk_product_i64((const int64_t[]){ p->batch, p->heads, p->lq }, 3, &ovf);
    /* The task size depends on the shape only, so results do not depend
     * on how tasks fall to threads. */
    const int64_t widest = p->d > p->dv ? p->d : p->dv;
    s->per = KEY_TILE / widest < MAX_TASK_KEYS ? KEY_TILE / widest : MAX_TASK_KEYS;
    s->runs = bk_ceil_div_i64(p->lk, s->per, &ovf);
    s->tasks = bk_product_i64((const int64_t[]){ p->batch, p->kv_heads, s->runs }, 3, &ovf);
    return !ovf;
}

void host_attn_backward(const struct host_attn *a)
{
    const struct bk_attention_problem *p = a->p;
    struct host_attn_sizes z;
    if (!host_attn_sizes(p, &z)) /* refused at plan selection */
        return;
    const double work = (double)z.rows * (double)p->lk * (double)(2 * p->d + 2 * p->dv);
    HOST_ATTN_PARALLEL_FOR(work >= HOST_ATTN_PARALLEL_MIN_WORK)
    for (int64_t r = 0; r < z.rows; r++)
        dq_row(a, r / (p->heads * p->lq), r / p->lq % p->heads, r % p->lq);

    const int64_t per = z.per, runs = z.runs, tasks = z.tasks;
    HOST_ATTN_PARALLEL_FOR(work >= HOST_ATTN_PARALLEL_MIN_WORK)
    for (int64_t n = 0; n < tasks; n++) {
        struct key_task t;
        t.b = n / (p->kv_heads * runs);
        t.kvh = n / runs % p->kv_heads;
        t.j0 = n % runs * per;
        t.n = p->lk - t.j0 < per ? p->lk - t.j0 : per;
        key_task_run(a, &t);
    }
}
