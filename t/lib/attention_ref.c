/* SPDX-License-Identifier: Apache-2.0 */
/* The test model of block-sparse attention: see attention_ref.h. */
#include "config.h"

#include "attention_ref.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size);
    if (!p)
        tap_bail("out of memory for %zu x %zu bytes", count, size);
    return p;
}

static int64_t at_least_1(int64_t n)
{
    return n > 0 ? n : 1;
}

const char *attn_layout_name(enum attn_layout layout)
{
    static const char *const names[] = { "contiguous", "blhd", "padded", "transposed" };
    return (unsigned)layout < ATTN_LAYOUT_COUNT ? names[layout] : "?";
}

const char *attn_case_name(const struct attn_case *c, char *buf, size_t size)
{
    static const char *const forms[] = { "dense", "mask", "list" };
    char blocks[32] = "";
    if (c->form != BK_ATTENTION_PATTERN_DENSE)
        snprintf(blocks, sizeof blocks, " %dx%d %.0f%%%s%s", (int)c->block_q, (int)c->block_k,
                 100 * c->density, c->shared_batch ? " Bp1" : "", c->shared_heads ? " Hp1" : "");
    snprintf(buf, size, "%s B%lld H%lld/%lld Lq%lld Lk%lld D%lld/%lld %s%s%s %s%s",
             bkt_type_name(c->type), (long long)c->batch, (long long)c->heads,
             (long long)c->kv_heads, (long long)c->lq, (long long)c->lk, (long long)c->d,
             (long long)c->dv, forms[c->form], blocks, c->causal ? " causal" : "",
             attn_layout_name(c->layout), c->no_lse ? " no-lse" : "");
    return buf;
}

/* ---- Tensors ------------------------------------------------------------- */

/* Strides for logical extents n[0..rank) stored in the order perm
 * (slowest first), with gap elements after each dimension but the last. */
static void strides_for(struct attn_tensor *t, const int *perm, const int64_t *gap, int64_t cs)
{
    int64_t s = cs;
    for (int k = (int)t->rank - 1; k >= 0; k--) {
        t->stride[perm[k]] = s;
        s = s * at_least_1(t->extent[perm[k]]) + gap[k];
    }
}

static void tensor_init(struct attn_tensor *t, BkDataType type, uint32_t rank, const int64_t *n,
                        enum attn_layout layout, bool pattern, struct bkt_rng *rng)
{
    static const int rowmajor[4] = { 0, 1, 2, 3 };
    static const int blhd4[4] = { 0, 2, 1, 3 }, blh3[3] = { 0, 2, 1 };
    static const int bhdl4[4] = { 0, 1, 3, 2 }, lbh3[3] = { 2, 0, 1 };
    memset(t, 0, sizeof *t);
    t->type = type;
    t->rank = rank;
    memcpy(t->extent, n, rank * sizeof *n);
    int64_t gap[4] = { 0 }, cs = 1;
    const int *perm = rowmajor;
    if (pattern && layout != ATTN_LAYOUT_PADDED)
        layout = ATTN_LAYOUT_CONTIGUOUS;
    switch (layout) {
    case ATTN_LAYOUT_BLHD: perm = rank == 4 ? blhd4 : blh3; break;
    case ATTN_LAYOUT_TRANSPOSED: perm = rank == 4 ? bhdl4 : lbh3; break;
    case ATTN_LAYOUT_PADDED:
        cs = bkt_rand_int(rng, 1, 2);
        for (uint32_t k = 0; k + 1 < rank; k++)
            gap[k] = bkt_rand_int(rng, 0, 5);
        break;
    default: t->zero_strides = true; break;
    }
    strides_for(t, perm, gap, cs);
    t->count = 1;
    t->span = 1;
    for (uint32_t k = 0; k < rank; k++) {
        t->count *= n[k];
        t->span += (at_least_1(n[k]) - 1) * t->stride[k];
    }
    if (t->count == 0)
        t->span = 0;
    t->bytes = ((uint64_t)t->span * bkt_type_size(type) + 3) / 4 * 4;
    t->host = xcalloc((size_t)t->bytes, 1);
    attn_poison(t);
}

static void tensor_free(BkContext ctx, struct attn_tensor *t)
{
    if (t->dev.memory)
        bkt_free(ctx, &t->dev);
    free(t->host);
    memset(t, 0, sizeof *t);
}

BkTensorDesc attn_desc(const struct attn_tensor *t)
{
    BkTensorDesc d = { .dataType = t->rank ? t->type : BK_DATA_TYPE_UNDEFINED };
    if (!t->rank)
        return d;
    d.rank = t->rank;
    for (uint32_t k = 0; k < t->rank; k++) {
        d.extent[k] = t->extent[k];
        d.stride[k] = t->zero_strides ? 0 : t->stride[k];
    }
    return d;
}

int64_t attn_index(const struct attn_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return i0 * t->stride[0] + i1 * t->stride[1] + i2 * t->stride[2] +
           (t->rank == 4 ? i3 * t->stride[3] : 0);
}

double attn_get(const struct attn_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    const int64_t i = attn_index(t, i0, i1, i2, i3);
    switch (t->type) {
    case BK_DATA_TYPE_I32: return ((const int32_t *)t->host)[i];
    case BK_DATA_TYPE_U8: return ((const uint8_t *)t->host)[i];
    default: return bkt_load(t->host, t->type, i);
    }
}

void attn_set(struct attn_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, double v)
{
    const int64_t i = attn_index(t, i0, i1, i2, i3);
    switch (t->type) {
    case BK_DATA_TYPE_I32: ((int32_t *)t->host)[i] = (int32_t)v; break;
    case BK_DATA_TYPE_U8: ((uint8_t *)t->host)[i] = (uint8_t)v; break;
    default: bkt_store(t->host, t->type, i, v); break;
    }
}

void attn_poison(struct attn_tensor *t)
{
    const uint32_t poison = BKT_POISON;
    for (uint64_t i = 0; i < t->bytes; i += 4)
        memcpy((char *)t->host + i, &poison, 4);
}

bool attn_identical(const struct attn_tensor *a, const struct attn_tensor *b)
{
    return a->bytes == b->bytes && memcmp(a->host, b->host, (size_t)a->bytes) == 0;
}

/* Calls fn for every element of t in row-major logical order. */
#define FOR_EACH_ELEMENT(t, i0, i1, i2, i3)                                              \
    for (int64_t i0 = 0; i0 < (t)->extent[0]; i0++)                                      \
        for (int64_t i1 = 0; i1 < (t)->extent[1]; i1++)                                  \
            for (int64_t i2 = 0; i2 < (t)->extent[2]; i2++)                              \
                for (int64_t i3 = 0; i3 < ((t)->rank == 4 ? (t)->extent[3] : 1); i3++)

/* ---- Problems -------------------------------------------------------------- */

static void random_fill(struct attn_tensor *t, struct bkt_rng *rng, double range)
{
    FOR_EACH_ELEMENT(t, a, b, c, d)
        attn_set(t, a, b, c, d, bkt_rand_value(rng, t->type, -range, range));
}

void attn_problem_init(struct attn_problem *pr, const struct attn_case *c, struct bkt_rng *rng)
{
    memset(pr, 0, sizeof *pr);
    pr->c = *c;
    pr->scale = c->scale != 0 ? c->scale : 1 / sqrt((double)c->d);
    const bool dense = c->form == BK_ATTENTION_PATTERN_DENSE;
    pr->nbq = dense ? 1 : (c->lq + c->block_q - 1) / c->block_q;
    pr->nbk = dense ? 1 : (c->lk + c->block_k - 1) / c->block_k;
    pr->bp = c->shared_batch ? 1 : c->batch;
    pr->hp = c->shared_heads ? 1 : c->heads;
    pr->capacity = pr->nbk + (pr->nbk + 1) / 2 + 1;

    const BkDataType t = c->type;
    const BkDataType lt = t == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    const enum attn_layout l = c->layout;
    const int64_t B = c->batch, H = c->heads, Hkv = c->kv_heads;
    tensor_init(&pr->q, t, 4, (int64_t[]){ B, H, c->lq, c->d }, l, false, rng);
    tensor_init(&pr->k, t, 4, (int64_t[]){ B, Hkv, c->lk, c->d }, l, false, rng);
    tensor_init(&pr->v, t, 4, (int64_t[]){ B, Hkv, c->lk, c->dv }, l, false, rng);
    tensor_init(&pr->y, t, 4, (int64_t[]){ B, H, c->lq, c->dv }, l, false, rng);
    tensor_init(&pr->lse, lt, 3, (int64_t[]){ B, H, c->lq }, l, false, rng);
    tensor_init(&pr->dy, t, 4, (int64_t[]){ B, H, c->lq, c->dv }, l, false, rng);
    tensor_init(&pr->dq, t, 4, (int64_t[]){ B, H, c->lq, c->d }, l, false, rng);
    tensor_init(&pr->dk, t, 4, (int64_t[]){ B, Hkv, c->lk, c->d }, l, false, rng);
    tensor_init(&pr->dv, t, 4, (int64_t[]){ B, Hkv, c->lk, c->dv }, l, false, rng);
    tensor_init(&pr->mask, BK_DATA_TYPE_U8, 3, (int64_t[]){ pr->bp, pr->hp, pr->nbq * pr->nbk },
                l, true, rng);
    tensor_init(&pr->counts, BK_DATA_TYPE_I32, 3, (int64_t[]){ pr->bp, pr->hp, pr->nbq }, l,
                true, rng);
    tensor_init(&pr->indices, BK_DATA_TYPE_I32, 4,
                (int64_t[]){ pr->bp, pr->hp, pr->nbq, pr->capacity }, l, true, rng);

    const double range = c->range > 0 ? c->range : 1;
    random_fill(&pr->q, rng, range);
    random_fill(&pr->k, rng, range);
    random_fill(&pr->v, rng, range);
    random_fill(&pr->dy, rng, range);

    const int64_t blocks = pr->bp * pr->hp * pr->nbq * pr->nbk;
    pr->active = xcalloc((size_t)blocks, 1);
    pr->bad = xcalloc((size_t)(pr->bp * pr->hp), sizeof *pr->bad);
    for (int64_t i = 0; i < blocks; i++)
        pr->active[i] = dense || bkt_rand_uniform(rng, 0, 1) < c->density;
    attn_encode_pattern(pr, rng);
}

void attn_problem_free(BkContext ctx, struct attn_problem *pr)
{
    struct attn_tensor *all[] = { &pr->q,  &pr->k,  &pr->v,    &pr->y,      &pr->lse,
                                  &pr->dy, &pr->dq, &pr->dk,   &pr->dv,     &pr->mask,
                                  &pr->counts, &pr->indices };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        tensor_free(ctx, all[i]);
    free(pr->active);
    free(pr->bad);
    memset(pr, 0, sizeof *pr);
}

static uint8_t active_at(const struct attn_problem *pr, int64_t pb, int64_t ph, int64_t ib,
                         int64_t jb)
{
    return pr->active[((pb * pr->hp + ph) * pr->nbq + ib) * pr->nbk + jb];
}

void attn_encode_pattern(struct attn_problem *pr, struct bkt_rng *rng)
{
    const int32_t junk[] = { -1, (int32_t)pr->nbk, 123456789, INT32_MIN };
    int32_t *list = xcalloc((size_t)pr->capacity, sizeof *list);
    memset(pr->bad, 0, (size_t)(pr->bp * pr->hp) * sizeof *pr->bad);
    for (int64_t pb = 0; pb < pr->bp; pb++)
        for (int64_t ph = 0; ph < pr->hp; ph++) {
            bool filled = false;
            for (int64_t ib = 0; ib < pr->nbq; ib++) {
                int64_t n = 0;
                for (int64_t jb = 0; jb < pr->nbk; jb++) {
                    const bool on = active_at(pr, pb, ph, ib, jb);
                    attn_set(&pr->mask, pb, ph, ib * pr->nbk + jb, 0,
                             on ? (double)bkt_rand_int(rng, 1, 255) : 0);
                    if (on)
                        list[n++] = (int32_t)jb;
                }
                for (int64_t e = n; e > 1; e--) {        /* Fisher-Yates */
                    const int64_t f = bkt_rand_int(rng, 0, e - 1);
                    const int32_t x = list[e - 1];
                    list[e - 1] = list[f], list[f] = x;
                }
                /* Repeats; the first non-empty list of each entry fills the capacity. */
                const bool fill = !filled && n > 0;
                filled |= fill;
                while (n > 0 && n < pr->capacity && (fill || bkt_rand_uniform(rng, 0, 1) < 0.4)) {
                    list[n] = list[bkt_rand_int(rng, 0, n - 1)];    /* a repeat */
                    n++;
                }
                attn_set(&pr->counts, pb, ph, ib, 0, (double)n);
                for (int64_t e = 0; e < pr->capacity; e++)
                    attn_set(&pr->indices, pb, ph, ib, e, e < n ? list[e] : junk[e % 4]);
            }
        }
    free(list);
}

void attn_break_list(struct attn_problem *pr, int64_t pb, int64_t ph, int64_t ib,
                     enum attn_list_error how)
{
    const double count = attn_get(&pr->counts, pb, ph, ib, 0);
    switch (how) {
    case ATTN_COUNT_OVER_CAPACITY:
        /* Every stored entry valid: only the count is wrong. */
        for (int64_t e = 0; e < pr->capacity; e++)
            attn_set(&pr->indices, pb, ph, ib, e, (double)(e % at_least_1(pr->nbk)));
        attn_set(&pr->counts, pb, ph, ib, 0, (double)(pr->capacity + 1));
        break;
    case ATTN_COUNT_NEGATIVE: attn_set(&pr->counts, pb, ph, ib, 0, -1); break;
    case ATTN_INDEX_PAST_END:
    case ATTN_INDEX_NEGATIVE:
        /* The last entry within the count, or a new one. */
        if (count < (double)pr->capacity)
            attn_set(&pr->counts, pb, ph, ib, 0, count + 1);
        attn_set(&pr->indices, pb, ph, ib, count < (double)pr->capacity ? (int64_t)count :
                 pr->capacity - 1, how == ATTN_INDEX_PAST_END ? (double)pr->nbk : -3);
        break;
    }
    pr->bad[pb * pr->hp + ph] = true;
}

/* ---- Infos and bindings ----------------------------------------------------- */

static BkAttentionPattern pattern_of(const struct attn_problem *pr)
{
    BkAttentionPattern pat = { .form = pr->c.form, .blockQ = pr->c.block_q,
                               .blockK = pr->c.block_k };
    if (pr->c.form == BK_ATTENTION_PATTERN_MASK) {
        pat.mask = attn_desc(&pr->mask);
    } else if (pr->c.form == BK_ATTENTION_PATTERN_LIST) {
        pat.counts = attn_desc(&pr->counts);
        pat.indices = attn_desc(&pr->indices);
    }
    return pat;
}

BkAttentionInfo attn_forward_info(const struct attn_problem *pr)
{
    BkAttentionInfo info = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO,
        .flags = pr->c.causal ? BK_ATTENTION_CAUSAL_BIT : 0,
        .scale = pr->scale, .pattern = pattern_of(pr),
        .q = attn_desc(&pr->q), .k = attn_desc(&pr->k), .v = attn_desc(&pr->v),
        .y = attn_desc(&pr->y),
    };
    if (!pr->c.no_lse)
        info.lse = attn_desc(&pr->lse);
    return info;
}

BkAttentionBackwardInfo attn_backward_info(const struct attn_problem *pr)
{
    return (BkAttentionBackwardInfo){
        .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO,
        .flags = pr->c.causal ? BK_ATTENTION_CAUSAL_BIT : 0,
        .scale = pr->scale, .pattern = pattern_of(pr),
        .q = attn_desc(&pr->q), .k = attn_desc(&pr->k), .v = attn_desc(&pr->v),
        .y = attn_desc(&pr->y), .lse = attn_desc(&pr->lse), .dy = attn_desc(&pr->dy),
        .dq = attn_desc(&pr->dq), .dk = attn_desc(&pr->dk), .dv = attn_desc(&pr->dv),
    };
}

void attn_upload_tensor(BkContext ctx, struct attn_tensor *t)
{
    if (t->bytes == 0)
        return;
    if (!t->dev.memory)
        t->dev = bkt_alloc(ctx, t->bytes);
    bkt_upload(ctx, t->dev.address, t->host, t->bytes);
}

void attn_upload(BkContext ctx, struct attn_problem *pr)
{
    struct attn_tensor *all[] = { &pr->q,  &pr->k,  &pr->v,  &pr->y,    &pr->lse,
                                  &pr->dy, &pr->dq, &pr->dk, &pr->dv,   &pr->mask,
                                  &pr->counts, &pr->indices };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        attn_upload_tensor(ctx, all[i]);
}

void attn_download(BkContext ctx, struct attn_tensor *t)
{
    if (t->bytes)
        bkt_download(ctx, t->host, t->dev.address, t->bytes);
}

static void pattern_bindings(const struct attn_problem *pr, BkDeviceAddress *b)
{
    b[BK_ATTENTION_BINDING_MASK] =
        pr->c.form == BK_ATTENTION_PATTERN_MASK ? pr->mask.dev.address : 0;
    b[BK_ATTENTION_BINDING_COUNTS] =
        pr->c.form == BK_ATTENTION_PATTERN_LIST ? pr->counts.dev.address : 0;
    b[BK_ATTENTION_BINDING_INDICES] =
        pr->c.form == BK_ATTENTION_PATTERN_LIST ? pr->indices.dev.address : 0;
}

void attn_forward_bindings(const struct attn_problem *pr, BkDeviceAddress bindings[8])
{
    bindings[BK_ATTENTION_BINDING_Q] = pr->q.dev.address;
    bindings[BK_ATTENTION_BINDING_K] = pr->k.dev.address;
    bindings[BK_ATTENTION_BINDING_V] = pr->v.dev.address;
    pattern_bindings(pr, bindings);
    bindings[BK_ATTENTION_BINDING_Y] = pr->y.dev.address;
    bindings[BK_ATTENTION_BINDING_LSE] = pr->c.no_lse ? 0 : pr->lse.dev.address;
}

void attn_backward_bindings(const struct attn_problem *pr, BkDeviceAddress bindings[12])
{
    bindings[BK_ATTENTION_BACKWARD_BINDING_Q] = pr->q.dev.address;
    bindings[BK_ATTENTION_BACKWARD_BINDING_K] = pr->k.dev.address;
    bindings[BK_ATTENTION_BACKWARD_BINDING_V] = pr->v.dev.address;
    pattern_bindings(pr, bindings);
    bindings[BK_ATTENTION_BACKWARD_BINDING_Y] = pr->y.dev.address;
    bindings[BK_ATTENTION_BACKWARD_BINDING_LSE] = pr->lse.dev.address;
    bindings[BK_ATTENTION_BACKWARD_BINDING_DY] = pr->dy.dev.address;
    bindings[BK_ATTENTION_BACKWARD_BINDING_DQ] = pr->dq.dev.address;
    bindings[BK_ATTENTION_BACKWARD_BINDING_DK] = pr->dk.dev.address;
    bindings[BK_ATTENTION_BACKWARD_BINDING_DV] = pr->dv.dev.address;
}

/* ---- Reference ---------------------------------------------------------------- */

bool attn_ref_visible(const struct attn_problem *pr, int64_t b, int64_t h, int64_t i, int64_t j)
{
    /* Causal: key j is at most as far from the end as query i is. */
    if (pr->c.causal && pr->c.lk - j < pr->c.lq - i)
        return false;
    if (pr->c.form == BK_ATTENTION_PATTERN_DENSE)
        return true;
    return active_at(pr, pr->c.shared_batch ? 0 : b, pr->c.shared_heads ? 0 : h,
                     i / pr->c.block_q, j / pr->c.block_k);
}

long double *attn_ref_alloc(const struct attn_tensor *t)
{
    return xcalloc((size_t)t->count, sizeof(long double));
}

static bool head_bad(const struct attn_problem *pr, int64_t b, int64_t h)
{
    return pr->bad[(pr->c.shared_batch ? 0 : b) * pr->hp + (pr->c.shared_heads ? 0 : h)];
}

/* Rows [rows][cols] of head h of batch b of a 4-D operand, widened. */
static void head_rows(const struct attn_tensor *t, int64_t b, int64_t h, long double *out)
{
    for (int64_t r = 0; r < t->extent[2]; r++)
        for (int64_t e = 0; e < t->extent[3]; e++)
            out[r * t->extent[3] + e] = attn_get(t, b, h, r, e);
}

/* One head of one batch, widened, with its scaled score matrix. */
struct head {
    int64_t b, h, kvh;
    long double *q, *k, *v, *s;       /* [Lq][D], [Lk][D], [Lk][Dv], [Lq][Lk] */
    bool *vis;                        /* [Lq][Lk] */
};

static void head_alloc(const struct attn_problem *pr, struct head *hd)
{
    const struct attn_case *c = &pr->c;
    hd->q = xcalloc((size_t)(c->lq * c->d), sizeof *hd->q);
    hd->k = xcalloc((size_t)(c->lk * c->d), sizeof *hd->k);
    hd->v = xcalloc((size_t)(c->lk * c->dv), sizeof *hd->v);
    hd->s = xcalloc((size_t)(c->lq * c->lk), sizeof *hd->s);
    hd->vis = xcalloc((size_t)(c->lq * c->lk), sizeof *hd->vis);
}

static void head_release(struct head *hd)
{
    free(hd->q);
    free(hd->k);
    free(hd->v);
    free(hd->s);
    free(hd->vis);
}

static void head_load(const struct attn_problem *pr, int64_t b, int64_t h, struct head *hd)
{
    const struct attn_case *c = &pr->c;
    hd->b = b, hd->h = h, hd->kvh = h / (c->heads / c->kv_heads);
    head_rows(&pr->q, b, h, hd->q);
    head_rows(&pr->k, b, hd->kvh, hd->k);
    head_rows(&pr->v, b, hd->kvh, hd->v);
    for (int64_t i = 0; i < c->lq; i++)
        for (int64_t j = 0; j < c->lk; j++) {
            long double dot = 0;
            for (int64_t d = 0; d < c->d; d++)
                dot += hd->q[i * c->d + d] * hd->k[j * c->d + d];
            hd->s[i * c->lk + j] = (long double)pr->scale * dot;
            hd->vis[i * c->lk + j] = attn_ref_visible(pr, b, h, i, j);
        }
}

void attn_ref_forward(const struct attn_problem *pr, long double *y, long double *lse)
{
    const struct attn_case *c = &pr->c;
    struct head hd;
    head_alloc(pr, &hd);
    long double *w = xcalloc((size_t)c->lk, sizeof *w);
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t h = 0; h < c->heads; h++) {
            const int64_t row0 = (b * c->heads + h) * c->lq;
            const bool bad = head_bad(pr, b, h);
            head_load(pr, b, h, &hd);
            for (int64_t i = 0; i < c->lq; i++) {
                const long double *si = hd.s + i * c->lk;
                const bool *vi = hd.vis + i * c->lk;
                long double top = -INFINITY, total = 0;
                bool any = false;
                for (int64_t j = 0; j < c->lk; j++)
                    if (vi[j] && (!any || si[j] > top))
                        top = si[j], any = true;
                for (int64_t j = 0; j < c->lk; j++)
                    total += w[j] = vi[j] ? expl(si[j] - top) : 0;
                for (int64_t e = 0; e < c->dv; e++) {
                    long double sum = 0;
                    for (int64_t j = 0; j < c->lk; j++)
                        if (vi[j])
                            sum += w[j] / total * hd.v[j * c->dv + e];
                    y[(row0 + i) * c->dv + e] = bad ? NAN : sum;
                }
                lse[row0 + i] = bad ? NAN : any ? top + logl(total) : -INFINITY;
            }
        }
    free(w);
    head_release(&hd);
}

/* dq of one head, and what it adds to dk and dv of its kv head (rows
 * kv0.. of the reference arrays), from the bound y and lse. */
static void head_backward(const struct attn_problem *pr, const struct head *hd, long double *dy,
                          long double *dq, long double *dk, long double *dv)
{
    const struct attn_case *c = &pr->c;
    const long double scale = pr->scale;
    const int64_t kv0 = (hd->b * c->kv_heads + hd->kvh) * c->lk;
    for (int64_t i = 0; i < c->lq; i++) {
        const double lse = attn_get(&pr->lse, hd->b, hd->h, i, 0);
        const long double l = lse;
        long double rowsum = 0;
        for (int64_t e = 0; e < c->dv; e++)
            rowsum += dy[i * c->dv + e] * (long double)attn_get(&pr->y, hd->b, hd->h, i, e);
        for (int64_t j = 0; j < c->lk; j++) {
            if (!hd->vis[i * c->lk + j] || lse == -INFINITY)
                continue;
            const long double p = expl(hd->s[i * c->lk + j] - l);
            long double dp = 0;
            for (int64_t e = 0; e < c->dv; e++)
                dp += dy[i * c->dv + e] * hd->v[j * c->dv + e];
            const long double ds = p * (dp - rowsum);
            for (int64_t x = 0; x < c->d; x++) {
                dq[i * c->d + x] += scale * ds * hd->k[j * c->d + x];
                dk[(kv0 + j) * c->d + x] += scale * ds * hd->q[i * c->d + x];
            }
            for (int64_t e = 0; e < c->dv; e++)
                dv[(kv0 + j) * c->dv + e] += p * dy[i * c->dv + e];
        }
    }
}

void attn_ref_backward(const struct attn_problem *pr, long double *dq, long double *dk,
                       long double *dv)
{
    const struct attn_case *c = &pr->c;
    struct head hd;
    head_alloc(pr, &hd);
    long double *dy = xcalloc((size_t)(c->lq * c->dv), sizeof *dy);
    bool *kv_bad = xcalloc((size_t)(c->batch * c->kv_heads), sizeof *kv_bad);
    memset(dq, 0, (size_t)pr->dq.count * sizeof *dq);
    memset(dk, 0, (size_t)pr->dk.count * sizeof *dk);
    memset(dv, 0, (size_t)pr->dv.count * sizeof *dv);
    for (int64_t b = 0; b < c->batch; b++)
        for (int64_t h = 0; h < c->heads; h++) {
            long double *dqh = dq + (b * c->heads + h) * c->lq * c->d;
            if (head_bad(pr, b, h)) {
                kv_bad[b * c->kv_heads + h / (c->heads / c->kv_heads)] = true;
                for (int64_t x = 0; x < c->lq * c->d; x++)
                    dqh[x] = NAN;
                continue;
            }
            head_load(pr, b, h, &hd);
            head_rows(&pr->dy, b, h, dy);
            head_backward(pr, &hd, dy, dqh, dk, dv);
        }
    for (int64_t g = 0; g < c->batch * c->kv_heads; g++)
        if (kv_bad[g]) {
            for (int64_t x = 0; x < c->lk * c->d; x++)
                dk[g * c->lk * c->d + x] = NAN;
            for (int64_t x = 0; x < c->lk * c->dv; x++)
                dv[g * c->lk * c->dv + x] = NAN;
        }
    free(dy);
    free(kv_bad);
    head_release(&hd);
}

void attn_set_forward_outputs(struct attn_problem *pr)
{
    long double *y = attn_ref_alloc(&pr->y), *lse = attn_ref_alloc(&pr->lse);
    attn_ref_forward(pr, y, lse);
    int64_t n = 0;
    FOR_EACH_ELEMENT(&pr->y, a, b, c, d)
        attn_set(&pr->y, a, b, c, d, (double)y[n++]);
    n = 0;
    FOR_EACH_ELEMENT(&pr->lse, a, b, c, d)
        attn_set(&pr->lse, a, b, c, d, (double)lse[n++]);
    free(y);
    free(lse);
}

/* ---- Comparison ------------------------------------------------------------------ */

double attn_tolerance(BkDataType type)
{
    switch (type) {
    case BK_DATA_TYPE_F64: return 1e-12;
    case BK_DATA_TYPE_F32: return 1e-5;
    case BK_DATA_TYPE_F16: return 2e-3;
    default: return 1.6e-2;
    }
}

/* Bytes of out's host copy that belong to no element and lost the poison. */
static long gap_errors(const struct attn_tensor *out)
{
    const size_t es = bkt_type_size(out->type);
    bool *used = xcalloc((size_t)out->bytes, sizeof *used);
    FOR_EACH_ELEMENT(out, a, b, c, d)
        memset(used + attn_index(out, a, b, c, d) * (int64_t)es, 1, es);
    const uint32_t poison = BKT_POISON;
    long bad = 0;
    for (uint64_t i = 0; i < out->bytes; i++)
        bad += !used[i] && ((const uint8_t *)out->host)[i] != ((const uint8_t *)&poison)[i % 4];
    free(used);
    return bad;
}

/* Whether a reference value is infinite. Past DBL_MAX counts too: under
 * valgrind, whose x87 is 64-bit, a long double infinity is stored as
 * LDBL_MAX. */
static bool ref_infinite(long double r)
{
    return isinf(r) || fabsl(r) > DBL_MAX;
}

long attn_check(const struct attn_tensor *out, const long double *ref, double tol,
                const char *label, double *max_error)
{
    long double top = 0;
    for (int64_t n = 0; n < out->count; n++)
        if (!isnan(ref[n]) && !ref_infinite(ref[n]) && fabsl(ref[n]) > top)
            top = fabsl(ref[n]);
    long misses = 0;
    double worst = 0;
    int64_t n = 0;
    FOR_EACH_ELEMENT(out, a, b, c, d) {
        const long double r = ref[n++];
        const double got = attn_get(out, a, b, c, d);
        bool ok;
        if (isnan(r)) {
            ok = isnan(got);
        } else if (ref_infinite(r)) {
            ok = got == (r > 0 ? INFINITY : -INFINITY);
        } else {
            const long double err = fabsl((long double)got - r);
            ok = isfinite(got) && err <= (long double)tol * top;
            if (top > 0 && isfinite(got) && (double)(err / top) > worst)
                worst = (double)(err / top);
        }
        if (!ok && misses++ < 4)
            tap_diag("%s [%lld, %lld, %lld, %lld] = %.17g, expected %.17Lg (max |ref| %.3Lg)",
                     label, (long long)a, (long long)b, (long long)c, (long long)d, got, r, top);
    }
    const long gaps = gap_errors(out);
    if (gaps)
        tap_diag("%s: %ld gap bytes lost the poison", label, gaps);
    if (max_error)
        *max_error = worst;
    return misses + gaps;
}
