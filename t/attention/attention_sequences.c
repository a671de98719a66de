/* SPDX-License-Identifier: Apache-2.0 */
/* Per-sequence lengths (PADDED, PACKED) and the paged KV cache on the
 * host backend, against a naive long double model written from
 * bk_attention.h: each sequence a problem of its own (its causal
 * diagonal at its bottom right, its pattern blocks from its first query
 * and key), rows past a PADDED length y = 0 and lse = -inf, a sequence
 * with bad run-time lengths or pages NaN and every other one exact. F64
 * throughout, so the tolerance is a few roundings. */
#include "config.h"

#include "../lib/tap.h"
#include "../lib/test_util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXS 16
#define TOL 1e-10

enum seq_form { FORM_NONE, FORM_PADDED, FORM_PACKED };

struct scase {
    const char *name;
    int b, h, hkv, lq, lk, d, dv;      /* lk: the cache's slots (paged: max_pages x page) */
    enum seq_form form;
    bool causal, backward;
    BkAttentionPatternForm pattern;
    int bq, bk, bp, hp;                /* bp, hp: 1 or full */
    int32_t len_q[MAXS + 1], len_k[MAXS + 1]; /* PADDED lengths / PACKED offsets */
    bool no_len_q;                     /* PADDED lengthsQ absent */
    int s;                             /* PACKED sequences */
    int max_q, max_k;
    int page, pages, max_pages;        /* paged when page > 0 */
    int32_t table[64];                 /* [b][max_pages] */
    int bad_seq;                       /* expected NaN sequence (-1: none) */
};

static uint64_t rng_state = 12345;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0 * 2 - 1;
}

/* One sequence of the model. */
struct mseq {
    int b, pb, q0, k0, nq, nk;
    bool bad;
};

struct model {
    const struct scase *c;
    int nbq, nbk, kb;                  /* kb: the key tensor's extent[0] */
    double *q, *k, *v, *dy;
    uint8_t *active;                   /* [bp][hp][nbq][nbk] */
};

static double kv_at(const struct model *m, const double *t, int dim, const struct mseq *s,
                    int kvh, int j, int c)
{
    const struct scase *x = m->c;
    if (x->page) {
        const int page = x->table[s->b * x->max_pages + j / x->page];
        return t[(((size_t)page * x->hkv + kvh) * x->page + j % x->page) * dim + c];
    }
    return t[(((size_t)s->b * x->hkv + kvh) * x->lk + s->k0 + j) * dim + c];
}

static int seq_count(const struct scase *c)
{
    return c->form == FORM_PACKED ? c->s : c->b;
}

/* The model's sequences: its own reading of the header's rules. */
static struct mseq seq_of(const struct scase *c, int n)
{
    struct mseq s = { .b = n, .pb = n, .nq = c->lq, .nk = c->lk };
    if (c->form == FORM_PADDED) {
        if (!c->no_len_q)
            s.nq = c->len_q[n];
        s.nk = c->len_k[n];
    } else if (c->form == FORM_PACKED) {
        s = (struct mseq){ .b = 0, .pb = n, .q0 = c->len_q[n], .k0 = c->len_k[n],
                           .nq = c->len_q[n + 1] - c->len_q[n],
                           .nk = c->len_k[n + 1] - c->len_k[n] };
    }
    s.bad = n == c->bad_seq;
    return s;
}

static bool visible(const struct model *m, const struct mseq *s, int h, int i, int j)
{
    const struct scase *c = m->c;
    if (c->causal && j > i + (s->nk - s->nq))
        return false;
    if (c->pattern == BK_ATTENTION_PATTERN_DENSE)
        return true;
    const int pb = c->bp == 1 ? 0 : s->pb, ph = c->hp == 1 ? 0 : h;
    return m->active[((pb * c->hp + ph) * m->nbq + i / c->bq) * m->nbk + j / c->bk];
}

/* y [b][h][lq][dv], lse [b][h][lq]; and with dq, dk, dv the backward
 * from the model's own y and lse. */
static void model_run(const struct model *m, long double *y, long double *lse, long double *dq,
                      long double *dk, long double *dv)
{
    const struct scase *c = m->c;
    const long double scale = 1.0L / sqrtl(c->d);
    const size_t rows = (size_t)c->b * c->h * c->lq;
    for (size_t r = 0; r < rows; r++) {
        lse[r] = -INFINITY;
        for (int e = 0; e < c->dv; e++)
            y[r * c->dv + e] = 0;
        for (int e = 0; dq && e < c->d; e++)
            dq[r * c->d + e] = 0;
    }
    if (dk)
        for (size_t r = 0; r < (size_t)c->b * c->hkv * c->lk; r++) {
            for (int e = 0; e < c->d; e++)
                dk[r * c->d + e] = 0;
            for (int e = 0; e < c->dv; e++)
                dv[r * c->dv + e] = 0;
        }
    for (int n = 0; n < seq_count(c); n++) {
        const struct mseq s = seq_of(c, n);
        for (int h = 0; h < c->h; h++) {
            const int kvh = h / (c->h / c->hkv);
            for (int i = 0; i < s.nq && !s.bad; i++) {
                const size_t r = ((size_t)s.b * c->h + h) * c->lq + s.q0 + i;
                const double *qi = m->q + r * c->d;
                long double sc[512], mx = -INFINITY, l = 0;
                for (int j = 0; j < s.nk; j++) {
                    sc[j] = -INFINITY;
                    if (!visible(m, &s, h, i, j))
                        continue;
                    long double dot = 0;
                    for (int e = 0; e < c->d; e++)
                        dot += (long double)qi[e] * kv_at(m, m->k, c->d, &s, kvh, j, e);
                    sc[j] = scale * dot;
                    mx = sc[j] > mx ? sc[j] : mx;
                }
                if (mx == -INFINITY)
                    continue;
                for (int j = 0; j < s.nk; j++)
                    l += expl(sc[j] - mx);
                lse[r] = mx + logl(l);
                for (int j = 0; j < s.nk; j++)
                    for (int e = 0; e < c->dv; e++)
                        y[r * c->dv + e] += expl(sc[j] - mx) / l *
                                            kv_at(m, m->v, c->dv, &s, kvh, j, e);
                if (!dq)
                    continue;
                long double rowsum = 0;
                for (int e = 0; e < c->dv; e++)
                    rowsum += (long double)m->dy[r * c->dv + e] * (double)y[r * c->dv + e];
                for (int j = 0; j < s.nk; j++) {
                    if (sc[j] == -INFINITY)
                        continue;
                    const long double p = expl(sc[j] - lse[r]);
                    long double dpv = 0;
                    for (int e = 0; e < c->dv; e++)
                        dpv += (long double)m->dy[r * c->dv + e] *
                               kv_at(m, m->v, c->dv, &s, kvh, j, e);
                    const long double ds = p * (dpv - rowsum);
                    const size_t kr = ((size_t)s.b * c->hkv + kvh) * c->lk + s.k0 + j;
                    for (int e = 0; e < c->d; e++) {
                        dq[r * c->d + e] += scale * ds * kv_at(m, m->k, c->d, &s, kvh, j, e);
                        dk[kr * c->d + e] += scale * ds * qi[e];
                    }
                    for (int e = 0; e < c->dv; e++)
                        dv[kr * c->dv + e] += p * m->dy[r * c->dv + e];
                }
            }
            if (!s.bad)
                continue;
            for (int i = 0; c->form == FORM_PACKED && i < s.nq; i++) {
                const size_t r = ((size_t)s.b * c->h + h) * c->lq + s.q0 + i;
                lse[r] = NAN;
                for (int e = 0; e < c->dv; e++)
                    y[r * c->dv + e] = NAN;
                for (int e = 0; dq && e < c->d; e++)
                    dq[r * c->d + e] = NAN;
            }
            if (c->form != FORM_PACKED) /* every row of the batch entry */
                for (int i = 0; i < c->lq; i++) {
                    const size_t r = ((size_t)s.b * c->h + h) * c->lq + i;
                    lse[r] = NAN;
                    for (int e = 0; e < c->dv; e++)
                        y[r * c->dv + e] = NAN;
                    for (int e = 0; dq && e < c->d; e++)
                        dq[r * c->d + e] = NAN;
                }
            for (int j = 0; dk && j < (c->form != FORM_PACKED ? c->lk : s.nk); j++) {
                const size_t kr = ((size_t)s.b * c->hkv + kvh) * c->lk + s.k0 + j;
                for (int e = 0; e < c->d; e++)
                    dk[kr * c->d + e] = NAN;
                for (int e = 0; e < c->dv; e++)
                    dv[kr * c->dv + e] = NAN;
            }
        }
    }
}

static long compare(const char *what, const double *got, const long double *ref, size_t n)
{
    /* A reference past double's range is an infinity: valgrind runs long
     * double at double's precision and turns -inf into -LDBL_MAX. */
    long double big = 1;
    for (size_t i = 0; i < n; i++)
        if (fabsl(ref[i]) <= DBL_MAX && fabsl(ref[i]) > big)
            big = fabsl(ref[i]);
    long miss = 0;
    for (size_t i = 0; i < n; i++) {
        const bool ok = isnan(ref[i])               ? isnan(got[i])
                        : fabsl(ref[i]) > DBL_MAX ? got[i] == (ref[i] < 0 ? -INFINITY : INFINITY)
                                                    : fabsl(got[i] - ref[i]) <= TOL * big;
        if (!ok && miss++ < 3)
            tap_diag("%s[%zu] = %.17g, expected %.17Lg", what, i, got[i], ref[i]);
    }
    return miss;
}

static BkTensorDesc desc(BkDataType t, uint32_t rank, const int64_t *ext)
{
    BkTensorDesc d = { .dataType = t, .rank = rank };
    for (uint32_t i = 0; i < rank; i++)
        d.extent[i] = ext[i];
    return d;
}

#define D4(t, a, b_, c_, d_) desc((t), 4, (const int64_t[]){ (a), (b_), (c_), (d_) })
#define D3(t, a, b_, c_) desc((t), 3, (const int64_t[]){ (a), (b_), (c_) })
#define D2(t, a, b_) desc((t), 2, (const int64_t[]){ (a), (b_) })
#define D1(t, a) desc((t), 1, (const int64_t[]){ (a) })

struct buf {
    struct bkt_buffer dev;
    size_t bytes;
};

static BkDeviceAddress put(BkContext ctx, struct buf *b, const void *host, size_t bytes)
{
    b->bytes = bytes;
    b->dev = bkt_alloc(ctx, bytes ? bytes : 4);
    if (bytes)
        bkt_upload(ctx, b->dev.address, host, bytes);
    return b->dev.address;
}

static double *randoms(size_t n)
{
    double *x = malloc((n ? n : 1) * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = uniform();
    return x;
}

/* NaN in every K and V row that no good sequence owns (PADDED keys past
 * a length, PACKED rows between or after the sequences, pool rows that
 * no used page entry names): a backend that reads them, even to weigh
 * them by 0, breaks the outputs of the sequences around them. */
static void nan_unowned_keys(struct model *m, int kb, int kl)
{
    const struct scase *c = m->c;
    bool *owned = calloc((size_t)kb * kl + 1, sizeof *owned);
    for (int n = 0; n < seq_count(c); n++) {
        const struct mseq s = seq_of(c, n);
        for (int j = 0; !s.bad && j < s.nk; j++) {
            const int page = c->page ? c->table[s.b * c->max_pages + j / c->page] : 0;
            if (c->page && page >= 0 && page < c->pages)
                owned[(size_t)page * kl + j % c->page] = true;
            else if (!c->page && s.k0 + j < kl)
                owned[(size_t)s.b * kl + s.k0 + j] = true;
        }
    }
    for (int u = 0; u < kb; u++)
        for (int h = 0; h < c->hkv; h++)
            for (int r = 0; r < kl; r++) {
                const size_t row = ((size_t)u * c->hkv + h) * kl + r;
                for (int e = 0; !owned[(size_t)u * kl + r] && e < c->d; e++)
                    m->k[row * c->d + e] = NAN;
                for (int e = 0; !owned[(size_t)u * kl + r] && e < c->dv; e++)
                    m->v[row * c->dv + e] = NAN;
            }
    free(owned);
}

static void run_case(BkContext ctx, const struct scase *c)
{
    struct model m = { .c = c };
    const int kb = c->page ? c->pages : c->b, kl = c->page ? c->page : c->lk;
    const int lq_axis = c->form == FORM_PACKED ? c->max_q : c->lq;
    const int lk_axis = c->form == FORM_PACKED ? c->max_k : c->lk;
    m.nbq = c->pattern ? (lq_axis + c->bq - 1) / c->bq : 1;
    m.nbk = c->pattern ? (lk_axis + c->bk - 1) / c->bk : 1;
    const size_t nq = (size_t)c->b * c->h * c->lq, nk = (size_t)kb * c->hkv * kl;
    const size_t nkg = (size_t)c->b * c->hkv * c->lk;
    m.q = randoms(nq * c->d);
    m.k = randoms(nk * c->d);
    m.v = randoms(nk * c->dv);
    m.dy = randoms(nq * c->dv);
    nan_unowned_keys(&m, kb, kl);
    const size_t nact = (size_t)c->bp * c->hp * m.nbq * m.nbk;
    m.active = malloc(nact + 1);
    int32_t *counts = calloc((size_t)c->bp * c->hp * m.nbq + 1, 4);
    int32_t *idx = calloc(nact + 1, 4);
    for (size_t e = 0; e < nact; e++)
        m.active[e] = uniform() > -0.4; /* 70% of blocks */
    for (size_t r = 0; r < (size_t)c->bp * c->hp * m.nbq; r++)
        for (int jb = m.nbk - 1; jb >= 0; jb--) /* reversed: a list is a set */
            if (m.active[r * m.nbk + jb])
                idx[r * m.nbk + counts[r]++] = jb;

    long double *ry = calloc(nq * c->dv + 1, sizeof *ry), *rl = calloc(nq + 1, sizeof *rl);
    long double *rdq = calloc(nq * c->d + 1, sizeof *rdq);
    long double *rdk = calloc(nkg * c->d + 1, sizeof *rdk);
    long double *rdv = calloc(nkg * c->dv + 1, sizeof *rdv);
    model_run(&m, ry, rl, c->backward ? rdq : NULL, rdk, rdv);

    struct buf bq, bk, bv, by, bl, bdy, bdq, bdk, bdv, bm, bc, bi, blq, blk, bt;
    BkDeviceAddress bind[14] = { 0 };
    bind[0] = put(ctx, &bq, m.q, nq * c->d * 8);
    bind[1] = put(ctx, &bk, m.k, nk * c->d * 8);
    bind[2] = put(ctx, &bv, m.v, nk * c->dv * 8);
    bind[3] = put(ctx, &bm, m.active, nact);
    bind[4] = put(ctx, &bc, counts, (size_t)c->bp * c->hp * m.nbq * 4);
    bind[5] = put(ctx, &bi, idx, nact * 4);
    double *yin = malloc((nq * c->dv + 1) * 8), *lin = malloc((nq + 1) * 8);
    for (size_t i = 0; i < nq * c->dv; i++)
        yin[i] = (double)ry[i];
    for (size_t i = 0; i < nq; i++)
        lin[i] = (double)rl[i];
    bind[6] = put(ctx, &by, yin, nq * c->dv * 8);
    bind[7] = put(ctx, &bl, lin, nq * 8);
    const int nlen = c->form == FORM_PACKED ? c->s + 1 : c->b;
    const uint32_t lslot = c->backward ? 12 : 8;
    if (c->form != FORM_NONE) {
        bind[lslot] = c->no_len_q ? 0 : put(ctx, &blq, c->len_q, (size_t)nlen * 4);
        bind[lslot + 1] = put(ctx, &blk, c->len_k, (size_t)nlen * 4);
    }
    if (c->page)
        bind[10] = put(ctx, &bt, c->table, (size_t)c->b * c->max_pages * 4);
    if (c->backward) {
        bind[8] = put(ctx, &bdy, m.dy, nq * c->dv * 8);
        bdq.dev = bkt_alloc(ctx, nq * c->d * 8 + 4), bind[9] = bdq.dev.address;
        bdk.dev = bkt_alloc(ctx, nkg * c->d * 8 + 4), bind[10] = bdk.dev.address;
        bdv.dev = bkt_alloc(ctx, nkg * c->dv * 8 + 4), bind[11] = bdv.dev.address;
    }

    const BkDataType F = BK_DATA_TYPE_F64, I = BK_DATA_TYPE_I32;
    BkAttentionPagedKvInfo paged = { .sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO,
                                     .blockTable = D2(I, c->b, c->max_pages) };
    BkAttentionSequencesInfo seqs = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO,
        .pNext = c->page ? &paged : NULL,
        .form = c->form == FORM_PACKED ? BK_ATTENTION_SEQUENCES_PACKED
                                       : BK_ATTENTION_SEQUENCES_PADDED,
        .lengthsQ = c->no_len_q ? (BkTensorDesc){ 0 } : D1(I, nlen), .lengthsK = D1(I, nlen),
        .maxLengthQ = c->form == FORM_PACKED ? c->max_q : 0,
        .maxLengthK = c->form == FORM_PACKED ? c->max_k : 0,
    };
    BkAttentionPattern pat = { .form = c->pattern, .blockQ = c->bq, .blockK = c->bk };
    if (c->pattern == BK_ATTENTION_PATTERN_MASK)
        pat.mask = D3(BK_DATA_TYPE_U8, c->bp, c->hp, m.nbq * m.nbk);
    if (c->pattern == BK_ATTENTION_PATTERN_LIST) {
        pat.counts = D3(I, c->bp, c->hp, m.nbq);
        pat.indices = D4(I, c->bp, c->hp, m.nbq, m.nbk);
    }
    const void *chain = c->form == FORM_NONE ? NULL : (const void *)&seqs;
    const BkTensorDesc q = D4(F, c->b, c->h, c->lq, c->d), k = D4(F, kb, c->hkv, kl, c->d),
                       v = D4(F, kb, c->hkv, kl, c->dv), y = D4(F, c->b, c->h, c->lq, c->dv),
                       lse = D3(F, c->b, c->h, c->lq);
    BkAttentionInfo fwd = { .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .pNext = chain,
                            .flags = c->causal ? BK_ATTENTION_CAUSAL_BIT : 0,
                            .scale = 1 / sqrt(c->d), .pattern = pat,
                            .q = q, .k = k, .v = v, .y = y, .lse = lse };
    BkAttentionBackwardInfo bwd = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, .pNext = chain,
        .flags = fwd.flags, .scale = fwd.scale, .pattern = pat, .q = q, .k = k, .v = v,
        .y = y, .lse = lse, .dy = y, .dq = q, .dk = k, .dv = v };
    BkPlan plan = NULL;
    BkResult r = bkt_create_plan(ctx, c->backward ? (const void *)&bwd : (const void *)&fwd,
                                 &plan);
    if (!tap_ok(r == BK_SUCCESS, "%s: plan", c->name)) {
        tap_diag("%s", bkGetLastErrorMessage());
    } else {
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        bkGetPlanProperties(plan, &props);
        const uint32_t want = c->form == FORM_NONE ? (c->backward ? 12 : 8)
                                                   : (c->backward ? 14 : 11);
        tap_is_int(props.bindingCount, want, "%s: bindingCount", c->name);
        /* Outputs poisoned (NaN): a row left unwritten is caught. */
        if (!c->backward) {
            bkt_fill(ctx, bind[6], nq * c->dv * 8, 0x7fc00001u);
            bkt_fill(ctx, bind[7], nq * 8, 0x7fc00001u);
        } else {
            bkt_fill(ctx, bind[9], nq * c->d * 8, 0x7fc00001u);
            bkt_fill(ctx, bind[10], nkg * c->d * 8, 0x7fc00001u);
            bkt_fill(ctx, bind[11], nkg * c->dv * 8, 0x7fc00001u);
        }
        r = bkt_run(ctx, plan, props.bindingCount, bind);
        tap_ok(r == BK_SUCCESS, "%s: run (%s)", c->name, r ? bkGetLastErrorMessage() : "ok");
        if (!c->backward) {
            bkt_download(ctx, yin, bind[6], nq * c->dv * 8);
            bkt_download(ctx, lin, bind[7], nq * 8);
            tap_ok(compare("y", yin, ry, nq * c->dv) == 0 && compare("lse", lin, rl, nq) == 0,
                   "%s: y and lse match the per-sequence model", c->name);
        } else {
            double *g = malloc((nkg > nq ? nkg : nq) * (c->d > c->dv ? c->d : c->dv) * 8 + 8);
            bkt_download(ctx, g, bind[9], nq * c->d * 8);
            long miss = compare("dq", g, rdq, nq * c->d);
            bkt_download(ctx, g, bind[10], nkg * c->d * 8);
            miss += compare("dk", g, rdk, nkg * c->d);
            bkt_download(ctx, g, bind[11], nkg * c->dv * 8);
            miss += compare("dv", g, rdv, nkg * c->dv);
            tap_ok(miss == 0, "%s: dq, dk, dv match the per-sequence model", c->name);
            free(g);
        }
        bkDestroyPlan(plan);
    }
    struct buf *all[] = { &bq, &bk, &bv, &by, &bl, &bm, &bc, &bi };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bkt_free(ctx, &all[i]->dev);
    if (c->form != FORM_NONE) {
        if (!c->no_len_q)
            bkt_free(ctx, &blq.dev);
        bkt_free(ctx, &blk.dev);
    }
    if (c->page)
        bkt_free(ctx, &bt.dev);
    if (c->backward) {
        bkt_free(ctx, &bdy.dev);
        bkt_free(ctx, &bdq.dev);
        bkt_free(ctx, &bdk.dev);
        bkt_free(ctx, &bdv.dev);
    }
    free(m.q), free(m.k), free(m.v), free(m.dy), free(m.active), free(counts), free(idx);
    free(ry), free(rl), free(rdq), free(rdk), free(rdv), free(yin), free(lin);
}

/* ---- Cases ------------------------------------------------------------------ */

#define PADDED_4 .b = 4, .h = 4, .hkv = 2, .lq = 20, .lk = 40, .d = 16, .dv = 8, \
    .form = FORM_PADDED, .len_q = { 0, 1, 7, 20 }, .len_k = { 0, 3, 40, 25 }, .bad_seq = -1
#define PACKED_4 .b = 1, .h = 2, .hkv = 1, .lq = 30, .lk = 40, .d = 16, .dv = 16, \
    .form = FORM_PACKED, .s = 4, .len_q = { 0, 5, 5, 17, 30 }, .len_k = { 0, 9, 12, 12, 40 }, \
    .max_q = 13, .max_k = 28, .bad_seq = -1
#define PAGED_16 .b = 3, .h = 2, .hkv = 2, .lq = 4, .lk = 64, .d = 8, .dv = 8, \
    .form = FORM_PADDED, .len_q = { 1, 4, 2 }, .len_k = { 64, 20, 33 }, .page = 16, \
    .pages = 8, .max_pages = 4, .bad_seq = -1, \
    .table = { 5, 2, 7, 0, /**/ 2, 6, 99, -5, /**/ 3, 3, 1, 1000 }

/* A case is a family's defaults with a few fields overridden. */
#pragma GCC diagnostic push
#if defined(__clang__)
#pragma GCC diagnostic ignored "-Winitializer-overrides"
#else
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
static const struct scase cases[] = {
    { "padded lengths 0, 1, partial, full, causal, GQA", PADDED_4, .causal = true },
    { "padded mask pattern", PADDED_4, .pattern = BK_ATTENTION_PATTERN_MASK, .bq = 16,
      .bk = 16, .bp = 4, .hp = 1 },
    { "padded lengthsK only", PADDED_4, .no_len_q = true, .causal = true },
    { "padded bad lengthsK[2] = Lk + 1", PADDED_4, .len_k = { 0, 3, 41, 25 }, .bad_seq = 2 },
    { "padded bad lengthsQ[3] = -1", PADDED_4, .len_q = { 0, 1, 7, -1 }, .bad_seq = 3,
      .causal = true },
    { "backward padded causal GQA", PADDED_4, .causal = true, .backward = true },
    { "backward padded list pattern", PADDED_4, .pattern = BK_ATTENTION_PATTERN_LIST,
      .bq = 16, .bk = 16, .bp = 1, .hp = 4, .backward = true, .causal = true },
    { "backward padded bad lengthsK[1]", PADDED_4, .len_k = { 0, -2, 40, 25 }, .bad_seq = 1,
      .backward = true },
    { "packed with empty sequences, causal", PACKED_4, .causal = true },
    { "packed mask per sequence", PACKED_4, .pattern = BK_ATTENTION_PATTERN_MASK, .bq = 16,
      .bk = 16, .bp = 4, .hp = 2, .causal = true },
    { "packed list per sequence", PACKED_4, .pattern = BK_ATTENTION_PATTERN_LIST, .bq = 16,
      .bk = 16, .bp = 4, .hp = 1 },
    { "packed shared mask", PACKED_4, .pattern = BK_ATTENTION_PATTERN_MASK, .bq = 16,
      .bk = 16, .bp = 1, .hp = 1 },
    { "packed sequence 3 past maxLengthQ", PACKED_4, .max_q = 12, .bad_seq = 3 },
    { "backward packed causal", PACKED_4, .causal = true, .backward = true },
    { "backward packed list per sequence", PACKED_4, .pattern = BK_ATTENTION_PATTERN_LIST,
      .bq = 16, .bk = 16, .bp = 4, .hp = 2, .causal = true, .backward = true },
    { "backward packed sequence 0 past maxLengthK", PACKED_4,
      .len_k = { 0, 30, 33, 33, 40 }, .bad_seq = 0, .causal = true, .backward = true },
    { "paged 16, pages out of order and shared, causal", PAGED_16, .causal = true },
    { "paged 16, mask pattern", PAGED_16, .pattern = BK_ATTENTION_PATTERN_MASK, .bq = 16,
      .bk = 16, .bp = 3, .hp = 1 },
    { "paged 16, page index 8 of 8 in sequence 1", PAGED_16, .bad_seq = 1,
      .table = { 5, 2, 7, 0, /**/ 2, 8, 99, -5, /**/ 3, 3, 1, 1000 } },
    { "paged 64", .b = 2, .h = 2, .hkv = 1, .lq = 3, .lk = 192, .d = 8, .dv = 4,
      .form = FORM_PADDED, .len_q = { 3, 2 }, .len_k = { 150, 64 }, .page = 64, .pages = 5,
      .max_pages = 3, .table = { 4, 0, 2, /**/ 1, 77, 77 }, .bad_seq = -1, .causal = true },
    { "paged 256", .b = 2, .h = 1, .hkv = 1, .lq = 2, .lk = 512, .d = 8, .dv = 8,
      .form = FORM_PADDED, .len_q = { 2, 1 }, .len_k = { 300, 10 }, .page = 256, .pages = 3,
      .max_pages = 2, .table = { 2, 0, /**/ 2, -1 }, .bad_seq = -1 },
};
#pragma GCC diagnostic pop

/* ---- Validation --------------------------------------------------------------- */

struct vinfo {
    BkAttentionInfo fwd;
    BkAttentionBackwardInfo bwd;
    BkAttentionSequencesInfo seqs, seqs2;
    BkAttentionPagedKvInfo paged;
    BkBaseInStructure unknown;
    bool backward;
};

/* A valid PADDED forward (B 2, H 2, Lq 8, Lk 32, D 16), paged when paged. */
static void vbase(struct vinfo *v, bool paged)
{
    const BkDataType F = BK_DATA_TYPE_F32, I = BK_DATA_TYPE_I32;
    memset(v, 0, sizeof *v);
    v->seqs = (BkAttentionSequencesInfo){ .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO,
                                          .lengthsQ = D1(I, 2), .lengthsK = D1(I, 2) };
    v->paged = (BkAttentionPagedKvInfo){ .sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO,
                                         .blockTable = D2(I, 2, 2) };
    v->fwd = (BkAttentionInfo){ .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .pNext = &v->seqs,
                                .scale = 0.25, .q = D4(F, 2, 2, 8, 16),
                                .k = D4(F, 2, 2, 32, 16), .v = D4(F, 2, 2, 32, 16),
                                .y = D4(F, 2, 2, 8, 16), .lse = D3(F, 2, 2, 8) };
    if (paged) {
        v->seqs.pNext = &v->paged;
        v->fwd.k = D4(F, 5, 2, 16, 16);
        v->fwd.v = D4(F, 5, 2, 16, 16);
    }
}

/* The PACKED form: B 1, Lq 8, Lk 32, three sequences. */
static void vpacked(struct vinfo *v)
{
    const BkDataType F = BK_DATA_TYPE_F32, I = BK_DATA_TYPE_I32;
    vbase(v, false);
    v->seqs.form = BK_ATTENTION_SEQUENCES_PACKED;
    v->seqs.lengthsQ = D1(I, 4);
    v->seqs.lengthsK = D1(I, 4);
    v->seqs.maxLengthQ = 5;
    v->seqs.maxLengthK = 20;
    v->fwd.q = D4(F, 1, 2, 8, 16);
    v->fwd.k = v->fwd.v = D4(F, 1, 2, 32, 16);
    v->fwd.y = D4(F, 1, 2, 8, 16);
    v->fwd.lse = D3(F, 1, 2, 8);
}

static void vbackward(struct vinfo *v)
{
    const BkAttentionInfo *f = &v->fwd;
    v->bwd = (BkAttentionBackwardInfo){ .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO,
                                        .pNext = f->pNext, .scale = f->scale, .q = f->q,
                                        .k = f->k, .v = f->v, .y = f->y, .lse = f->lse,
                                        .dy = f->y, .dq = f->q, .dk = f->k, .dv = f->v };
    v->backward = true;
}

static void expect(BkContext ctx, struct vinfo *v, BkResult code, const char *what,
                   const char *needle)
{
    const void *info = v->backward ? (const void *)&v->bwd : (const void *)&v->fwd;
    bkt_expect_plan(ctx, info, code, what, (const char *const[]){ needle, NULL });
}

static void test_validation(BkContext ctx)
{
    const BkDataType I = BK_DATA_TYPE_I32;
    struct vinfo v;
    const BkResult BAD = BK_ERROR_INVALID_ARGUMENT;

    vbase(&v, false);
    expect(ctx, &v, BK_SUCCESS, "padded: valid", NULL);
    vbase(&v, false);
    v.unknown = (BkBaseInStructure){ .sType = (BkStructureType)99999 };
    v.fwd.pNext = &v.unknown;
    v.unknown.pNext = (const void *)&v.seqs;
    expect(ctx, &v, BK_SUCCESS, "an unknown sType in the chain is skipped", NULL);
    vbase(&v, false);
    v.seqs.lengthsQ = (BkTensorDesc){ 0 };
    expect(ctx, &v, BK_SUCCESS, "padded: lengthsQ absent", NULL);
    vbase(&v, true);
    expect(ctx, &v, BK_SUCCESS, "paged: valid", NULL);
    vpacked(&v);
    expect(ctx, &v, BK_SUCCESS, "packed: valid", NULL);
    vpacked(&v), vbackward(&v);
    expect(ctx, &v, BK_SUCCESS, "packed backward: valid", NULL);

    vbase(&v, false);
    v.seqs2 = v.seqs;
    v.seqs.pNext = &v.seqs2;
    expect(ctx, &v, BAD, "sequences chained twice", "chains BkAttentionSequencesInfo twice");
    vbase(&v, true);
    {
        BkAttentionPagedKvInfo p2 = v.paged;
        v.paged.pNext = &p2;
        expect(ctx, &v, BAD, "paged chained twice", "chains BkAttentionPagedKvInfo twice");
    }
    vbase(&v, true), vbackward(&v);
    expect(ctx, &v, BAD, "paged on the backward", "forward only");
    vbase(&v, true);
    v.fwd.pNext = &v.paged;
    expect(ctx, &v, BAD, "paged without sequences", "without a PADDED BkAttentionSequencesInfo");
    vbase(&v, true);
    v.seqs.lengthsK = (BkTensorDesc){ 0 };
    expect(ctx, &v, BAD, "paged without lengthsK", "whose lengthsK gives");
    vbase(&v, true);
    v.seqs.form = BK_ATTENTION_SEQUENCES_PACKED;
    expect(ctx, &v, BAD, "paged over PACKED", "without a PADDED");

    vbase(&v, false);
    v.seqs.form = (BkAttentionSequenceForm)7;
    expect(ctx, &v, BAD, "form 7", "BkAttentionSequencesInfo.form = 7");
    vbase(&v, false);
    v.seqs.reserved = 1;
    expect(ctx, &v, BAD, "reserved", "BkAttentionSequencesInfo.reserved = 1 must be 0");
    vbase(&v, false);
    v.seqs.lengthsQ.dataType = BK_DATA_TYPE_F32;
    expect(ctx, &v, BAD, "lengthsQ F32", "BkAttentionSequencesInfo.lengthsQ.dataType");
    vbase(&v, false);
    v.seqs.lengthsK = D2(I, 2, 1);
    expect(ctx, &v, BAD, "lengthsK rank 2", "BkAttentionSequencesInfo.lengthsK");
    vbase(&v, false);
    v.seqs.lengthsK = D1(I, 3);
    expect(ctx, &v, BAD, "padded lengthsK [B + 1]",
           "BkAttentionSequencesInfo.lengthsK.extent[0] = 3 must equal B");
    vbase(&v, false);
    v.seqs.maxLengthQ = 3;
    expect(ctx, &v, BAD, "padded maxLengthQ", "maxLengthQ = 3 and maxLengthK = 0 must be 0");
    vbase(&v, false);
    v.seqs.maxLengthK = 3;
    expect(ctx, &v, BAD, "padded maxLengthK", "maxLengthK = 3 must be 0");

    vpacked(&v);
    v.fwd.q.extent[0] = 2, v.fwd.k.extent[0] = v.fwd.v.extent[0] = 2;
    expect(ctx, &v, BAD, "packed B 2", "q.extent[0] = 2 must be 1");
    vpacked(&v);
    v.seqs.maxLengthQ = 0;
    expect(ctx, &v, BAD, "packed maxLengthQ 0", "maxLengthQ = 0 must be in 1..Lq");
    vpacked(&v);
    v.seqs.maxLengthK = 33;
    expect(ctx, &v, BAD, "packed maxLengthK past Lk", "maxLengthK = 33 must be in 1..Lk");
    vpacked(&v);
    v.seqs.lengthsK = D1(I, 3);
    expect(ctx, &v, BAD, "packed lengthsK [S]", "lengthsK.extent[0] = 3 must equal S + 1");
    vpacked(&v);
    v.seqs.lengthsQ = (BkTensorDesc){ 0 };
    expect(ctx, &v, BAD, "packed lengthsQ absent", "BkAttentionSequencesInfo.lengthsQ");
    vpacked(&v);
    v.seqs.lengthsQ = D1(I, 0);
    v.seqs.lengthsK = D1(I, 0);
    expect(ctx, &v, BAD, "packed lengthsQ [0]", "lengthsQ.extent[0] = 0 must be S + 1 >= 1");
    vpacked(&v);
    v.fwd.pattern = (BkAttentionPattern){ .form = BK_ATTENTION_PATTERN_MASK, .blockQ = 16,
                                          .blockK = 16,
                                          .mask = D3(BK_DATA_TYPE_U8, 3, 2, 1 * 2) };
    expect(ctx, &v, BK_SUCCESS, "packed mask [S, H, nbq x nbk] from maxLengthQ/K", NULL);
    v.fwd.pattern.mask = D3(BK_DATA_TYPE_U8, 2, 2, 2);
    expect(ctx, &v, BAD, "packed mask extent[0] 2 of S 3", "must be 1 (shared) or S");
    v.fwd.pattern.mask = D3(BK_DATA_TYPE_U8, 1, 2, 2 * 2);
    expect(ctx, &v, BAD, "packed mask nbk from Lk", "mask.extent[2] = 4 must equal nbq x nbk");

    vbase(&v, true);
    v.fwd.k.extent[2] = v.fwd.v.extent[2] = 8;
    expect(ctx, &v, BAD, "paged pageSize 8", "k.extent[2] = 8 (pageSize");
    vbase(&v, true);
    v.fwd.k.extent[2] = v.fwd.v.extent[2] = 512;
    expect(ctx, &v, BAD, "paged pageSize 512", "must be in 16..256");
    vbase(&v, true);
    v.fwd.v.extent[0] = 4;
    expect(ctx, &v, BAD, "paged v pages", "v.extent[0] = 4 must equal pages");
    vbase(&v, true);
    v.fwd.v.extent[2] = 32;
    expect(ctx, &v, BAD, "paged v pageSize", "v.extent[2] = 32 must equal pageSize");
    vbase(&v, true);
    v.paged.blockTable.dataType = BK_DATA_TYPE_U32;
    expect(ctx, &v, BAD, "blockTable U32", "BkAttentionPagedKvInfo.blockTable.dataType");
    vbase(&v, true);
    v.paged.blockTable.extent[0] = 3;
    expect(ctx, &v, BAD, "blockTable [B + 1, ...]", "blockTable.extent[0] = 3 must equal B");
}

/* PACKED with no sequence (lengthsQ = lengthsK = [0]) and a LIST per
 * sequence: counts [0, H, nbq] and indices [0, H, nbq, nbk] are empty and
 * left unbound (0). No row reads the pattern, so a run must not touch
 * them, and writes what the same problem in the DENSE form writes (the
 * rows no sequence claims), forward and backward. */
static void test_no_sequences(BkContext ctx)
{
    enum { H = 2, L = 8, D = 4, NB = 2 };
    const BkDataType F = BK_DATA_TYPE_F64, I = BK_DATA_TYPE_I32;
    const int32_t zero = 0;
    struct buf bq, blq, blk;
    const size_t n = (size_t)H * L * D;
    double *in = randoms(n);
    const BkDeviceAddress q = put(ctx, &bq, in, n * 8);
    const BkDeviceAddress lq = put(ctx, &blq, &zero, 4), lk = put(ctx, &blk, &zero, 4);
    const BkAttentionSequencesInfo seqs = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO,
        .form = BK_ATTENTION_SEQUENCES_PACKED, .lengthsQ = D1(I, 1), .lengthsK = D1(I, 1),
        .maxLengthQ = L, .maxLengthK = L,
    };
    const BkTensorDesc t = D4(F, 1, H, L, D), lse = D3(F, 1, H, L);
    for (int backward = 0; backward < 2; backward++) {
        double *got[2];
        for (int list = 0; list < 2; list++) {
            BkAttentionPattern pat = { .form = BK_ATTENTION_PATTERN_DENSE };
            if (list)
                pat = (BkAttentionPattern){ .form = BK_ATTENTION_PATTERN_LIST,
                                            .blockQ = L / NB, .blockK = L / NB,
                                            .counts = D3(I, 0, H, NB),
                                            .indices = D4(I, 0, H, NB, NB) };
            const BkAttentionInfo fwd = { .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO,
                                          .pNext = &seqs, .scale = 0.5, .pattern = pat,
                                          .q = t, .k = t, .v = t, .y = t, .lse = lse };
            const BkAttentionBackwardInfo bwd = {
                .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, .pNext = &seqs,
                .scale = 0.5, .pattern = pat, .q = t, .k = t, .v = t, .y = t, .lse = lse,
                .dy = t, .dq = t, .dk = t, .dv = t };
            /* Outputs: y and lse, or dq, dk and dv, each n doubles. */
            struct bkt_buffer out = bkt_alloc(ctx, 3 * n * 8);
            bkt_fill(ctx, out.address, 3 * n * 8, 0x7fc00001u);
            const BkDeviceAddress o = out.address;
            BkDeviceAddress bind[14] = { q, q, q, 0, 0, 0, o, o + n * 8 };
            if (backward) {
                bind[6] = q, bind[7] = q; /* y and lse read only */
                bind[8] = q, bind[9] = o, bind[10] = o + n * 8, bind[11] = o + 2 * n * 8;
                bind[12] = lq, bind[13] = lk;
            } else {
                bind[8] = lq, bind[9] = lk;
            }
            BkPlan plan = NULL;
            BkResult r = bkt_create_plan(ctx, backward ? (const void *)&bwd : (const void *)&fwd,
                                         &plan);
            if (r == BK_SUCCESS) {
                BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
                bkGetPlanProperties(plan, &props);
                r = bkt_run(ctx, plan, props.bindingCount, bind);
                bkDestroyPlan(plan);
            }
            tap_ok(r == BK_SUCCESS, "no sequences, %s, %s pattern: runs (%s)",
                   backward ? "backward" : "forward", list ? "unbound LIST" : "DENSE",
                   r ? bkGetLastErrorMessage() : "ok");
            got[list] = malloc(3 * n * 8);
            bkt_download(ctx, got[list], o, 3 * n * 8);
            bkt_free(ctx, &out);
        }
        tap_ok(memcmp(got[0], got[1], (backward ? 3 : 1) * n * 8 + (backward ? 0 : L * H * 8)) ==
                   0,
               "no sequences, %s: the unbound LIST writes what DENSE does",
               backward ? "backward" : "forward");
        free(got[0]), free(got[1]);
    }
    bkt_free(ctx, &bq.dev), bkt_free(ctx, &blq.dev), bkt_free(ctx, &blk.dev);
    free(in);
}

int main(void)
{
    bkt_capture_messages();
    BkContext ctx = bkt_open_host();
    test_validation(ctx);
    test_no_sequences(ctx);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_case(ctx, &cases[i]);
    tap_ok(bkt_stray_plans() == 0, "failed bkCreatePlan calls left no handle");
    bkDestroyContext(ctx);
    return tap_done();
}
