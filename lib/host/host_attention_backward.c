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
 * and dk, dv of its kv head NaN. */
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

/* false when the row contributes nothing (lse -inf: it saw no key). */
static bool load_query(const struct host_attn *a, int64_t b, int64_t h, int64_t i,
                       struct query_row *r)
{
    const struct bk_attention_problem *p = a->p;
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
    if (host_attn_bad(a, b, h)) {
        host_attn_fill_row(p->type, a->dq, off, p->stride.dq[3], p->d, NAN);
        return;
    }
    struct query_row r;
    double acc[HOST_ATTN_MAX_DIM] = { 0 }, k[HOST_ATTN_MAX_DIM], v[HOST_ATTN_MAX_DIM];
    if (load_query(a, b, h, i, &r)) {
        const int64_t kvh = h / a->group;
        struct host_attn_keys keys = host_attn_keys_of(a, host_attn_pattern(a, b, h), i);
        int64_t j0, j1;
        while (host_attn_next_keys(&keys, &j0, &j1))
            for (int64_t j = j0; j < j1; j++) {
                const double prob = exp(host_attn_score(a, r.q, b, kvh, j, k) - r.lse);
                host_attn_load_row(p->type, a->v, host_attn_row(p->stride.v, b, kvh, j),
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

/* Whether any of the task's keys is visible to query i (pattern pat). */
static bool row_reaches(const struct host_attn *a, const uint8_t *pat, const struct key_task *t,
                        int64_t i, bool *seen)
{
    bool any = false;
    for (int64_t jj = 0; jj < t->n; jj++)
        any |= seen[jj] = host_attn_visible(a, pat, i, t->j0 + jj);
    return any;
}

/* Adds what query heads h of the group, rows 0..Lq-1, give the keys. */
static void key_sums(const struct host_attn *a, struct key_task *t, int64_t h)
{
    const struct bk_attention_problem *p = a->p;
    const uint8_t *pat = host_attn_pattern(a, t->b, h);
    /* Under the causal rule no row before this one sees key j0. */
    int64_t first = p->causal ? t->j0 - (p->lk - p->lq) : 0;
    struct query_row r;
    bool seen[MAX_TASK_KEYS];
    for (int64_t i = first < 0 ? 0 : first; i < p->lq; i++) {
        if (!row_reaches(a, pat, t, i, seen) || !load_query(a, t->b, h, i, &r))
            continue;
        for (int64_t jj = 0; jj < t->n; jj++) {
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

static void key_task_run(const struct host_attn *a, struct key_task *t)
{
    const struct bk_attention_problem *p = a->p;
    bool bad = false;
    for (int64_t h = t->kvh * a->group; h < (t->kvh + 1) * a->group; h++)
        bad |= host_attn_bad(a, t->b, h);
    for (int64_t jj = 0; jj < t->n; jj++) {
        const int64_t j = t->j0 + jj;
        host_attn_load_row(p->type, a->k, host_attn_row(p->stride.k, t->b, t->kvh, j),
                           p->stride.k[3], p->d, t->k + jj * p->d);
        host_attn_load_row(p->type, a->v, host_attn_row(p->stride.v, t->b, t->kvh, j),
                           p->stride.v[3], p->dv, t->v + jj * p->dv);
    }
    memset(t->dk, 0, (size_t)(t->n * p->d) * sizeof *t->dk);
    memset(t->dv, 0, (size_t)(t->n * p->dv) * sizeof *t->dv);
    for (int64_t h = t->kvh * a->group; !bad && h < (t->kvh + 1) * a->group; h++)
        key_sums(a, t, h);
    for (int64_t jj = 0; jj < t->n; jj++) {
        const int64_t j = t->j0 + jj;
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
