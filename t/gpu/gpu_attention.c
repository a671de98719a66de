/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention on CUDA against the host backend (which computes
 * in F64 and rounds once), on fresh random inputs and random patterns:
 *
 * - forward on the tensor-core path (F16, BF16, D = Dv = 64 and 128,
 *   blocks 64 and 128, DENSE, MASK and LIST, causal, Lq != Lk, lengths
 *   that are no multiple of the tiles, GQA, [B, L, H, D] storage), at
 *   head sizes from 1 to 256 around each compiled width, D != Dv,
 *   loaded in 16-byte pieces (padded rows) and element by element (rows
 *   of odd lengths, a binding off 16 bytes); F32 on its tensor-core
 *   kernels (3xTF32) likewise, D from 1 to 256;
 *   and on the general path (F32, F64, odd D and Dv, blocks 16, 48 and
 *   the single size 8);
 * - backward (dq, dk, dv) for every type;
 * - a bad LIST: NaN exactly where the host writes NaN;
 * - sequences of their own lengths, PADDED and PACKED, forward and
 *   backward, bad lengths and offsets among them (varlen_cases; on the
 *   Hopper kernels, hopper_varlen_cases, under every grid and forced
 *   forward kernel the fast cases run under).
 * The fast cases run once per kernel family (BK_CUDA_ATTENTION_PATH),
 * with the Hopper kernels' persistent CTAs capped (BK_CUDA_ATTENTION_CTAS)
 * and each of the forward's kernels forced (BK_CUDA_ATTENTION_FORWARD).
 * Each output element within a per-type bound of the host's, scaled by
 * the largest magnitude of that output; lse within an absolute bound;
 * outputs poisoned before each run, so an unwritten element fails.
 * Skips without a GPU; fails instead with BK_TEST_REQUIRE_GPU=1.
 * BK_TEST_ONLY=TEXT runs only the cases whose label contains TEXT (to
 * repeat one sequence of cases many times; their data then differ from a
 * whole run's with the same seed). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pair.h"

static BkContext gpu, host;
static struct bkt_rng rng;

enum layout { BHLD, BLHD, PADDED };
static const char *const layout_names[] = { "BHLD", "BLHD", "padded" };

struct acase {
    BkDataType type;
    int64_t b, h, hkv, lq, lk, d, dv;
    BkAttentionPatternForm form;
    int32_t bq, bk;
    double density;
    bool causal, backward;
    enum layout layout;
    uint64_t offset;         /* bytes past 256 of q's binding (16-byte misalignment) */
    bool bad_list;
    bool set_scale;          /* scale below, else 1 / sqrt(D) */
    int64_t list_capacity;   /* LIST: entries per query block (0: nbk + 2) */
    double scale;
};

/* A [B, heads, rows, cols] tensor in the case's layout, and its bytes. */
struct tensor {
    BkTensorDesc desc;
    uint64_t bytes;
    void *gpu_img, *host_img;
};

static void make_tensor(struct tensor *t, BkDataType type, int64_t b, int64_t h, int64_t l,
                        int64_t c, enum layout layout, int rank)
{
    memset(t, 0, sizeof *t);
    BkTensorDesc *d = &t->desc;
    d->dataType = type;
    d->rank = (uint32_t)rank;
    const int64_t e[4] = { b, h, l, c };
    for (int i = 0; i < rank; i++)
        d->extent[i] = e[i];
    /* Padded rows start on 16-byte steps whatever c: the tensor-core
     * kernels copy them 16 bytes at a time. */
    const int64_t pc = layout == PADDED ? (c + 7) / 8 * 8 + 8 : c;
    if (l == 0) /* strides as for one row: an empty tensor's must still be positive */
        l = 1;
    if (rank == 4 && layout == BLHD) {
        d->stride[3] = 1, d->stride[1] = c, d->stride[2] = h * c, d->stride[0] = l * h * c;
    } else if (rank == 4) {
        d->stride[3] = 1, d->stride[2] = pc, d->stride[1] = l * pc, d->stride[0] = h * l * pc;
    } else { /* lse [B, H, L]: contiguous */
        d->stride[2] = 1, d->stride[1] = l, d->stride[0] = h * l;
    }
    int64_t last = 0;
    for (int i = 0; i < rank; i++)
        last += (e[i] > 0 ? e[i] - 1 : 0) * d->stride[i];
    t->bytes = (uint64_t)(last + 1) * bkt_type_size(type);
    t->gpu_img = calloc(1, t->bytes);
    t->host_img = calloc(1, t->bytes);
}

static void random_fill(struct tensor *t, double lo, double hi)
{
    const BkTensorDesc *d = &t->desc;
    for (int64_t i0 = 0; i0 < d->extent[0]; i0++)
        for (int64_t i1 = 0; i1 < d->extent[1]; i1++)
            for (int64_t i2 = 0; i2 < d->extent[2]; i2++)
                for (int64_t i3 = 0; i3 < d->extent[3]; i3++) {
                    const int64_t e = i0 * d->stride[0] + i1 * d->stride[1] +
                                      i2 * d->stride[2] + i3 * d->stride[3];
                    bkt_store(t->gpu_img, d->dataType, e,
                              bkt_rand_value(&rng, d->dataType, lo, hi));
                }
    memcpy(t->host_img, t->gpu_img, t->bytes);
}

static void free_tensor(struct tensor *t)
{
    free(t->gpu_img);
    free(t->host_img);
}

/* Compares the GPU image with the host's over the tensor's elements:
 * |gpu - host| <= tol * max|host| (+ abs_tol); NaN must match NaN. */
/* t's extents and strides as four dimensions (leading ones of 1). */
static void dims4(const struct tensor *t, int64_t e[4], int64_t s[4])
{
    const BkTensorDesc *d = &t->desc;
    const int rank = (int)d->rank;
    for (int i = 0; i < 4; i++)
        e[i] = 1, s[i] = 0;
    for (int i = 0; i < rank; i++)
        e[4 - rank + i] = d->extent[i], s[4 - rank + i] = d->stride[i];
}

static bool compare(const struct tensor *t, double tol, double abs_tol, const char *what,
                    const char *label)
{
    const BkTensorDesc *d = &t->desc;
    int64_t e[4], s[4];
    dims4(t, e, s);
    double scale = 0, worst = 0;
    long bad = 0, count = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int64_t a = 0; a < e[0]; a++)
            for (int64_t b = 0; b < e[1]; b++)
                for (int64_t c = 0; c < e[2]; c++)
                    for (int64_t x = 0; x < e[3]; x++) {
                        const int64_t k = a * s[0] + b * s[1] + c * s[2] + x * s[3];
                        const double hv = bkt_load(t->host_img, d->dataType, k);
                        const double gv = bkt_load(t->gpu_img, d->dataType, k);
                        if (pass == 0) {
                            if (isfinite(hv) && fabs(hv) > scale)
                                scale = fabs(hv);
                            continue;
                        }
                        count++;
                        bool ok;
                        if (isnan(hv) || isnan(gv))
                            ok = isnan(hv) && isnan(gv);
                        else if (isinf(hv) || isinf(gv))
                            ok = hv == gv;
                        else
                            ok = fabs(gv - hv) <= tol * scale + abs_tol;
                        if (ok && isfinite(hv) && scale > 0)
                            worst = fmax(worst, fabs(gv - hv) / scale);
                        if (!ok && bad++ < 3)
                            tap_diag("%s %s [%lld,%lld,%lld,%lld]: gpu %.9g host %.9g", label,
                                     what, (long long)a, (long long)b, (long long)c,
                                     (long long)x, gv, hv);
                    }
    if (bad)
        tap_diag("%s %s: %ld of %ld elements off (scale %.3g)", label, what, bad, count, scale);
    else if (getenv("BK_TEST_VERBOSE"))
        tap_diag("%s %s: worst relative error %.3g", label, what, worst);
    return bad == 0;
}

/* The bound on each element's error over the output's largest magnitude
 * (twice it for the backward's outputs). F32's is F32's accuracy, which
 * the F32 tensor-core kernels keep with 3xTF32 products: on this file's
 * inputs (q, k in [-2, 2], v in [-1, 1], scale 1 / sqrt(D)) their errors,
 * emulated on the host, came to 1.5e-7 to 9e-7 (D 1 to 128, 100 to 300
 * keys), where plain TF32 products (10 mantissa bits, 2^-11 a rounding)
 * came to 3e-4 to 6.5e-4: 2e-5 passes the first by 20 times and fails
 * the second by 15. */
static double tolerance(BkDataType t)
{
    switch (t) {
    case BK_DATA_TYPE_F16: return 4e-3;
    case BK_DATA_TYPE_BF16: return 3e-2;
    case BK_DATA_TYPE_F32: return 2e-5;
    default: return 1e-11;
    }
}

/* The pattern: MASK bytes, or the same as a LIST (unsorted, with repeats). */
struct pattern {
    uint8_t *mask;
    int32_t *counts, *indices;
    int64_t blocks, nbq, nbk, capacity;
};

static void make_pattern(const struct acase *c, struct pattern *p, BkAttentionPattern *out)
{
    memset(p, 0, sizeof *p);
    memset(out, 0, sizeof *out);
    out->form = c->form;
    if (c->form == BK_ATTENTION_PATTERN_DENSE)
        return;
    out->blockQ = c->bq;
    out->blockK = c->bk;
    p->nbq = (c->lq + c->bq - 1) / c->bq;
    p->nbk = (c->lk + c->bk - 1) / c->bk;
    const int64_t heads = c->b * c->h, per = p->nbq * p->nbk;
    p->mask = calloc((size_t)(heads * per + 1), 1);
    for (int64_t i = 0; i < heads * per; i++)
        p->mask[i] = bkt_rand_uniform(&rng, 0, 1) < c->density;
    if (c->form == BK_ATTENTION_PATTERN_MASK) {
        out->mask = (BkTensorDesc){ .dataType = BK_DATA_TYPE_U8, .rank = 3,
                                    .extent = { c->b, c->h, per } };
        return;
    }
    p->capacity = c->list_capacity ? c->list_capacity : p->nbk + 2;
    p->counts = calloc((size_t)(heads * p->nbq + 1), 4);
    p->indices = calloc((size_t)(heads * p->nbq * p->capacity + 1), 4);
    for (int64_t r = 0; r < heads * p->nbq; r++) {
        int32_t n = 0, *idx = p->indices + r * p->capacity;
        for (int64_t j = p->nbk; j-- > 0;) /* descending: not sorted */
            if (p->mask[r * p->nbk + j] && n < p->capacity) /* a short list: the first */
                idx[n++] = (int32_t)j;
        if (n > 0 && n < p->capacity)
            idx[n] = idx[0], n++; /* a repeat changes nothing */
        for (int64_t e = n; e < p->capacity; e++)
            idx[e] = -7;          /* past the count: never read */
        p->counts[r] = n;
    }
    if (c->bad_list) /* one head's list points past nbk */
        p->counts[0] = 1, p->indices[0] = (int32_t)p->nbk;
    out->counts = (BkTensorDesc){ .dataType = BK_DATA_TYPE_I32, .rank = 3,
                                  .extent = { c->b, c->h, p->nbq } };
    out->indices = (BkTensorDesc){ .dataType = BK_DATA_TYPE_I32, .rank = 4,
                                   .extent = { c->b, c->h, p->nbq, p->capacity } };
}

static void free_pattern(struct pattern *p)
{
    free(p->mask);
    free(p->counts);
    free(p->indices);
}

static void bind(struct binding *gb, struct binding *hb, int slot, struct tensor *t,
                 uint64_t offset)
{
    gb[slot] = (struct binding){ t->gpu_img, t->bytes, offset };
    hb[slot] = (struct binding){ t->host_img, t->bytes, 0 };
}

/* The forward's five tensors (the backward reads them at the same slots). */
static void bind_forward(struct binding *gb, struct binding *hb, struct tensor *q, struct tensor *k,
                         struct tensor *v, struct tensor *y, struct tensor *lse)
{
    bind(gb, hb, BK_ATTENTION_BINDING_Q, q, 0);
    bind(gb, hb, BK_ATTENTION_BINDING_K, k, 0);
    bind(gb, hb, BK_ATTENTION_BINDING_V, v, 0);
    bind(gb, hb, BK_ATTENTION_BINDING_Y, y, 0);
    bind(gb, hb, BK_ATTENTION_BINDING_LSE, lse, 0);
}

/* The backward's dY and its three gradients. */
static void bind_gradients(struct binding *gb, struct binding *hb, struct tensor *dy,
                           struct tensor *dq, struct tensor *dk, struct tensor *dv)
{
    bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_DY, dy, 0);
    bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_DQ, dq, 0);
    bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_DK, dk, 0);
    bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_DV, dv, 0);
}

static void bind_pattern(struct binding *gb, struct binding *hb, const struct acase *c,
                         struct pattern *p)
{
    const int64_t heads = c->b * c->h;
    if (c->form == BK_ATTENTION_PATTERN_MASK) {
        gb[3] = hb[3] = (struct binding){ p->mask, (uint64_t)(heads * p->nbq * p->nbk), 0 };
    } else if (c->form == BK_ATTENTION_PATTERN_LIST) {
        gb[4] = hb[4] = (struct binding){ p->counts, (uint64_t)(heads * p->nbq) * 4, 0 };
        gb[5] = hb[5] = (struct binding){ p->indices,
                                          (uint64_t)(heads * p->nbq * p->capacity) * 4, 0 };
    }
}

static const char *form_name(BkAttentionPatternForm f)
{
    return f == BK_ATTENTION_PATTERN_DENSE ? "dense" : f == BK_ATTENTION_PATTERN_MASK ? "mask"
                                                                                     : "list";
}

/* Where a replay's t differs from the first run's bits (first): how many
 * elements in how many rows (of one batch and head), the first few with
 * both values, the largest difference; then the replay against the host,
 * to tell which run is off. */
static void describe_difference(const struct tensor *t, const void *first, double tol,
                                const char *what, const char *label)
{
    const BkDataType type = t->desc.dataType;
    const size_t es = bkt_type_size(type);
    int64_t e[4], s[4];
    dims4(t, e, s);
    long elements = 0, rows = 0;
    double largest = 0;
    for (int64_t a = 0; a < e[0]; a++)
        for (int64_t b = 0; b < e[1]; b++)
            for (int64_t c = 0; c < e[2]; c++) {
                long in_row = 0;
                for (int64_t x = 0; x < e[3]; x++) {
                    const int64_t k = a * s[0] + b * s[1] + c * s[2] + x * s[3];
                    if (memcmp((const char *)first + k * es, (const char *)t->gpu_img + k * es,
                               es) == 0)
                        continue;
                    const double f = bkt_load(first, type, k), g = bkt_load(t->gpu_img, type, k);
                    largest = fmax(largest, fabs(f - g));
                    if (in_row++ == 0 && rows < 4)
                        tap_diag("%s %s: row [%lld,%lld,%lld] differs from column %lld: first "
                                 "run %.9g, replay %.9g", label, what, (long long)a,
                                 (long long)b, (long long)c, (long long)x, f, g);
                }
                elements += in_row;
                rows += in_row > 0;
            }
    tap_diag("%s %s: %ld elements in %ld rows differ, by at most %.3g", label, what, elements,
             rows, largest);
    if (compare(t, tol, 0, what, label))
        tap_diag("%s %s: the replay is within tolerance of the host", label, what);
}

/* The backward's plans allow float atomics (a pass of the cases). */
static bool allow_atomics;

/* Whether the plan for info says it is deterministic; -1: no plan. */
static int plan_deterministic(const void *info)
{
    BkPlan plan;
    if (bkt_create_plan(gpu, info, &plan) != BK_SUCCESS)
        return -1;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    bkGetPlanProperties(plan, &props);
    const int det = props.precision.deterministic == BK_TRUE;
    bkDestroyPlan(plan);
    return det;
}

/* Deterministic without ALLOW_ATOMICS: a second plan, its buffer replayed
 * three times over the same (uncleared) workspace, gives the first run's
 * bits. With atomics taken (det: the plan says it is not deterministic),
 * the replays are within tolerance of the host instead: the sums of the
 * last run are in the workspace and must not leak into the next. */
static bool same_bits_again(const BkAttentionBackwardInfo *bi, bool det, struct binding *gb,
                            struct tensor *const outs[3], double tol, const char *label)
{
    if (!det) {
        for (int i = 0; i < 3; i++)
            poison(outs[i]->gpu_img, outs[i]->bytes);
        const BkResult r = run_images(gpu, bi, gb, 12, 3, NULL);
        if (r != BK_SUCCESS) {
            tap_diag("%s: a second plan replayed failed (%d)", label, (int)r);
            return false;
        }
        bool ok = compare(outs[0], tol, 0, "dq (replayed)", label);
        ok = compare(outs[1], tol, 0, "dk (replayed)", label) && ok;
        return compare(outs[2], tol, 0, "dv (replayed)", label) && ok;
    }
    void *first[3];
    bool same = true;
    for (int i = 0; i < 3; i++) {
        first[i] = malloc(outs[i]->bytes);
        if (!first[i])
            tap_bail("out of memory");
        memcpy(first[i], outs[i]->gpu_img, outs[i]->bytes);
        poison(outs[i]->gpu_img, outs[i]->bytes);
    }
    const BkResult r = run_images(gpu, bi, gb, 12, 3, NULL);
    if (r != BK_SUCCESS) {
        tap_diag("%s: a second plan replayed failed (%d)", label, (int)r);
        same = false;
    }
    static const char *const names[3] = { "dq", "dk", "dv" };
    for (int i = 0; i < 3; i++) {
        /* Which output differs, in how many bytes and from where: a race
         * shows as a few scattered elements, a wrong operand as blocks. */
        const unsigned char *x = first[i], *y = outs[i]->gpu_img;
        uint64_t differ = 0, at = 0;
        for (uint64_t j = 0; r == BK_SUCCESS && j < outs[i]->bytes; j++)
            if (x[j] != y[j] && differ++ == 0)
                at = j;
        if (differ) {
            tap_diag("%s: a second plan replayed gave other bits in %s: %llu of %llu bytes, "
                     "the first at byte %llu",
                     label, names[i], (unsigned long long)differ,
                     (unsigned long long)outs[i]->bytes, (unsigned long long)at);
            same = false;
            describe_difference(outs[i], first[i], tol, names[i], label);
        }
        free(first[i]);
    }
    return same;
}

/* The Hopper forward's grid or kernel when BK_CUDA_ATTENTION_CTAS or
 * BK_CUDA_ATTENTION_FORWARD is set (in the label). */
static const char *grid_label = "";

static void run_case(const struct acase *c)
{
    char label[256];
    snprintf(label, sizeof label,
             "%s %s B%lld H%lld/%lld Lq%lld Lk%lld D%lld/%lld %s %dx%d%s %s%s%s scale %g%s",
             c->backward ? "backward" : "forward", bkt_type_name(c->type), (long long)c->b,
             (long long)c->h, (long long)c->hkv, (long long)c->lq, (long long)c->lk,
             (long long)c->d, (long long)c->dv, form_name(c->form), c->bq, c->bk,
             c->causal ? " causal" : "", layout_names[c->layout], c->offset ? " off16" : "",
             c->bad_list ? " bad list" : "", c->set_scale ? c->scale : 1.0 / sqrt((double)c->d),
             grid_label);
    const char *only = getenv("BK_TEST_ONLY");
    if (only && !strstr(label, only))
        return;
    const BkDataType lt = c->type == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    struct tensor q, k, v, y, lse, dy, dq, dk, dv;
    make_tensor(&q, c->type, c->b, c->h, c->lq, c->d, c->layout, 4);
    make_tensor(&k, c->type, c->b, c->hkv, c->lk, c->d, c->layout, 4);
    make_tensor(&v, c->type, c->b, c->hkv, c->lk, c->dv, c->layout, 4);
    make_tensor(&y, c->type, c->b, c->h, c->lq, c->dv, c->layout, 4);
    make_tensor(&lse, lt, c->b, c->h, c->lq, 1, BHLD, 3);
    make_tensor(&dy, c->type, c->b, c->h, c->lq, c->dv, c->layout, 4);
    make_tensor(&dq, c->type, c->b, c->h, c->lq, c->d, c->layout, 4);
    make_tensor(&dk, c->type, c->b, c->hkv, c->lk, c->d, c->layout, 4);
    make_tensor(&dv, c->type, c->b, c->hkv, c->lk, c->dv, c->layout, 4);
    random_fill(&q, -2, 2);
    random_fill(&k, -2, 2);
    random_fill(&v, -1, 1);
    struct pattern pat;
    BkAttentionPattern pdesc;
    make_pattern(c, &pat, &pdesc);
    const double scale = c->set_scale ? c->scale : 1.0 / sqrt((double)c->d);
    const BkAttentionFlags flags = c->causal ? BK_ATTENTION_CAUSAL_BIT : 0;
    const BkAttentionFlags backward_flags =
        flags | (allow_atomics ? BK_ATTENTION_ALLOW_ATOMICS_BIT : 0);
    struct binding gb[GPU_PAIR_SLOTS] = { { 0 } }, hb[GPU_PAIR_SLOTS] = { { 0 } };
    bind_pattern(gb, hb, c, &pat);
    char kernel[BK_MAX_KERNEL_NAME_SIZE] = "";
    bool ok = true;

    BkAttentionInfo fi = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .flags = flags, .scale = scale,
        .pattern = pdesc, .q = q.desc, .k = k.desc, .v = v.desc, .y = y.desc, .lse = lse.desc,
    };
    bind(gb, hb, 0, &q, c->offset);
    bind(gb, hb, 1, &k, 0);
    bind(gb, hb, 2, &v, 0);
    bind(gb, hb, 6, &y, 0);
    bind(gb, hb, 7, &lse, 0);
    poison(y.gpu_img, y.bytes), poison(y.host_img, y.bytes);
    poison(lse.gpu_img, lse.bytes), poison(lse.host_img, lse.bytes);
    /* The backward case needs the forward's y and lse: the host's, for both. */
    BkResult rh = run_images(host, &fi, hb, 8, 1, NULL);
    BkResult rg = c->backward ? BK_SUCCESS : run_images(gpu, &fi, gb, 8, 1, kernel);
    if (rh != BK_SUCCESS || rg != BK_SUCCESS) {
        tap_ok(false, "%s: runs (host %d, cuda %d: %s)", label, rh, rg, bkGetLastErrorMessage());
        goto done;
    }
    if (!c->backward) {
        kernel_seen(kernel);
        const double lt_tol = c->type == BK_DATA_TYPE_F64 ? 1e-11 : 2e-4;
        ok = compare(&y, tolerance(c->type), 0, "y", label) &&
             compare(&lse, 0, lt_tol, "lse", label);
        tap_ok(ok, "%s (%s)", label, kernel);
        goto done;
    }
    memcpy(y.gpu_img, y.host_img, y.bytes);
    memcpy(lse.gpu_img, lse.host_img, lse.bytes);
    random_fill(&dy, -1, 1);
    BkAttentionBackwardInfo bi = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, .flags = backward_flags,
        .scale = scale,
        .pattern = pdesc, .q = q.desc, .k = k.desc, .v = v.desc, .y = y.desc, .lse = lse.desc,
        .dy = dy.desc, .dq = dq.desc, .dk = dk.desc, .dv = dv.desc,
    };
    bind(gb, hb, 8, &dy, 0);
    bind(gb, hb, 9, &dq, 0);
    bind(gb, hb, 10, &dk, 0);
    bind(gb, hb, 11, &dv, 0);
    struct tensor *outs[] = { &dq, &dk, &dv };
    for (int i = 0; i < 3; i++)
        poison(outs[i]->gpu_img, outs[i]->bytes), poison(outs[i]->host_img, outs[i]->bytes);
    rh = run_images(host, &bi, hb, 12, 1, NULL);
    rg = run_images(gpu, &bi, gb, 12, 1, kernel);
    if (rh != BK_SUCCESS || rg != BK_SUCCESS) {
        tap_ok(false, "%s: runs (host %d, cuda %d: %s)", label, rh, rg, bkGetLastErrorMessage());
        goto done;
    }
    kernel_seen(kernel);
    const double tol = 2 * tolerance(c->type);
    /* The plan says it is not deterministic exactly where it adds dQ with
     * atomics. */
    const int det = plan_deterministic(&bi);
    if (det < 0 || (det == 0) != (strstr(kernel, "atomic") != NULL)) {
        tap_diag("%s: kernel %s, but the plan says deterministic = %d (%s)", label, kernel, det,
                 det < 0 ? bkGetLastErrorMessage() : "");
        ok = false;
    }
    ok = compare(&dq, tol, 0, "dq", label) && ok;
    ok = compare(&dk, tol, 0, "dk", label) && ok;
    ok = compare(&dv, tol, 0, "dv", label) && ok;
    ok = same_bits_again(&bi, det != 0, gb, outs, tol, label) && ok;
    tap_ok(ok, "%s (%s)", label, kernel);
done:
    free_pattern(&pat);
    struct tensor *all[] = { &q, &k, &v, &y, &lse, &dy, &dq, &dk, &dv };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free_tensor(all[i]);
}

static const BkAttentionPatternForm forms[] = { BK_ATTENTION_PATTERN_DENSE,
                                                BK_ATTENTION_PATTERN_MASK,
                                                BK_ATTENTION_PATTERN_LIST };

static void fast_cases(bool backward)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    /* The Hopper kernels' widths: past 128 the forward's tall kernel and
     * the backward's pair kernels. */
    const int widths = 4;
    for (int t = 0; t < 2; t++)
        for (int wi = 0; wi < widths; wi++)
            for (int f = 0; f < 3; f++) {
                const int dh = 64 * (wi + 1);
                const int32_t blk = f == 2 ? 128 : 64;
                struct acase c = {
                    .type = types[t], .b = 2, .h = 4, .hkv = 2, .lq = 256, .lk = 320, .d = dh,
                    .dv = dh, .form = forms[f], .bq = blk, .bk = blk, .density = 0.5,
                    .backward = backward,
                };
                run_case(&c);
                c.causal = true, c.lq = 200, c.lk = 333, c.layout = BLHD, c.hkv = 1;
                run_case(&c);
                c.causal = false, c.lq = 320, c.lk = 130, c.layout = PADDED, c.hkv = 4;
                c.bq = 128, c.bk = 64;
                run_case(&c);
                /* A negative scale and a zero one, causal so that keys are
                 * masked: the masked scores must still weigh nothing. */
                if (f == 1) {
                    c.causal = true, c.set_scale = true, c.scale = -0.2;
                    run_case(&c);
                    c.scale = 0;
                    run_case(&c);
                }
                /* Many 64-key blocks, about a third of them active at
                 * random, over 64-row query blocks: neighbours share few
                 * blocks, and each has few (about 7), so at D = 128 the
                 * plan's run-time count chooses the narrow kernel; with
                 * deep forced, its walk pairs many slots of one consumer
                 * and leaves some over at the end. Then nine in ten
                 * active: neighbours share most, and the count chooses
                 * deep; then three in five of more blocks (about 38
                 * each): deep again (U about 0.7 N), its walk skipping
                 * often. */
                if (f == 1) {
                    c = (struct acase){
                        .type = types[t], .b = 1, .h = 2, .hkv = 1, .lq = 256, .lk = 1536,
                        .d = dh, .dv = dh, .form = forms[f], .bq = 64, .bk = 64, .density = 0.3,
                        .backward = backward,
                    };
                    run_case(&c);
                    c.density = 0.9;
                    run_case(&c);
                    c.density = 0.6, c.lk = 4096;
                    run_case(&c);
                }
                /* A short list of 64-key blocks (at most 1/8 of them per
                 * query block) over 64-row query blocks: neighbouring
                 * blocks with few, different key blocks. */
                if (f == 2) {
                    c = (struct acase){
                        .type = types[t], .b = 1, .h = 2, .hkv = 1, .lq = 256, .lk = 1024,
                        .d = dh, .dv = dh, .form = forms[f], .bq = 64, .bk = 64, .density = 0.2,
                        .list_capacity = 2, .backward = backward,
                    };
                    run_case(&c);
                }
            }
}

/* The Hopper backward's kernel that computes dq with dk and dv (the
 * plan's choice for DENSE patterns up to D = 128), at head size d, its
 * CTAs handing each query tile's dQ share over in a fixed order: one key
 * CTA (its own last rank), one item or fewer per CTA (s = 1) with a short
 * last query tile and query heads sharing kv heads, and many key CTAs
 * with s = 2 (the fast cases, run with it too, have s = 3 with a skipped
 * slot, and keys past Lk); causal (the order by key CTA, from the last):
 * Lq below Lk, Lq past Lk by more than a tile (rows that see no key, whose
 * dQ only key CTA 0 writes), and tiles one consumer's keys see and the
 * other's not. Run with it and with the two kernels. */
static void fused_cases(int64_t d)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    static const int64_t shapes[][5] = {
        /* lq, lk, h, hkv, causal */
        { 384, 128, 2, 1, 0 },  { 64, 640, 2, 2, 0 },  { 100, 1000, 4, 2, 0 },
        { 1024, 1536, 1, 1, 0 }, { 700, 1000, 4, 2, 1 }, { 1000, 700, 2, 1, 1 },
        { 1024, 1024, 2, 2, 1 },
    };
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            struct acase c = {
                .type = types[t], .b = 2, .h = shapes[i][2], .hkv = shapes[i][3],
                .lq = shapes[i][0], .lk = shapes[i][1], .d = d, .dv = d,
                .form = BK_ATTENTION_PATTERN_DENSE, .causal = shapes[i][4] != 0,
                .backward = true, .layout = i % 2 ? BLHD : BHLD,
            };
            run_case(&c);
        }
}

/* The GPU's multiprocessors (bkGetContextProperties). */
static uint32_t gpu_sms;

/* Dense backwards with more key tiles of 128 than the GPU holds CTAs of
 * the fused kernel (one an SM): its DENSE order hands a tile over after
 * the next key CTA, which then could not start (a hang), so the plan keeps
 * the two kernels there; the causal order waits only for CTAs that
 * started before, and keeps the fused kernel. Both widths, both types. */
static void long_key_cases(void)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    const int64_t lk = 128 * ((int64_t)gpu_sms + 3) + 37;
    for (int t = 0; t < 2; t++)
        for (int causal = 0; causal < 2; causal++) {
            struct acase c = {
                .type = types[t], .b = 1, .h = 2, .hkv = 1, .lq = 100, .lk = lk,
                .d = t ? 128 : 64, .dv = t ? 128 : 64, .form = BK_ATTENTION_PATTERN_DENSE,
                .causal = causal != 0, .backward = true, .layout = BHLD,
            };
            run_case(&c);
        }
}

/* Head sizes from 1 to 256 on the tensor-core kernels of F16 and BF16 (F32:
 * f32_cases), which run each at
 * a compiled width (32, 64, 96, 128, 160, 192, 256) with the columns past
 * it zero: every width, sizes just past one (33, 255) and between (7, 48,
 * 100), D != Dv at its own pair of widths (192 and 128) and at the larger
 * width for both (64 and 128, 80 and 96, 7 and 40); each pattern form,
 * causal or not, Lq above and below Lk (neither a multiple of 64), GQA;
 * contiguous rows of an odd length and [B, L, H, D] rows load element by
 * element, padded ones in 16-byte pieces cut at D; then a binding off 16
 * bytes. */
static void headsize_cases(bool backward)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    static const int64_t sizes[][2] = {
        { 1, 1 },     { 7, 7 },     { 16, 16 },   { 32, 32 },   { 33, 33 },   { 48, 48 },
        { 80, 80 },   { 96, 96 },   { 100, 100 }, { 160, 160 }, { 192, 192 }, { 255, 255 },
        { 256, 256 }, { 192, 128 }, { 64, 128 },  { 80, 96 },   { 7, 40 },
    };
    static const enum layout layouts[] = { BHLD, PADDED, BLHD };
    const int n = (int)(sizeof sizes / sizeof sizes[0]);
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < n; i++) {
            const int f = (i + t) % 3;
            struct acase c = {
                .type = types[t], .b = 1, .h = 4, .hkv = 2, .lq = i % 2 ? 100 : 150,
                .lk = i % 2 ? 150 : 70, .d = sizes[i][0], .dv = sizes[i][1], .form = forms[f],
                .bq = 64, .bk = f == 2 ? 128 : 64, .density = 0.6, .causal = (i + t) % 2 == 0,
                .layout = layouts[(i + 2 * t) % 3], .backward = backward,
            };
            run_case(&c);
        }
    struct acase c = {
        .type = BK_DATA_TYPE_F16, .b = 1, .h = 2, .hkv = 1, .lq = 130, .lk = 70, .d = 48,
        .dv = 48, .form = BK_ATTENTION_PATTERN_DENSE, .offset = 2, .causal = true,
        .backward = backward,
    };
    run_case(&c);
    c.type = BK_DATA_TYPE_BF16, c.d = 192, c.dv = 128, c.lq = 64, c.lk = 200, c.hkv = 2;
    c.form = BK_ATTENTION_PATTERN_MASK, c.bq = c.bk = 64, c.density = 0.7, c.causal = false;
    run_case(&c);
}

/* F32 on the tensor-core kernels (3xTF32): each width around the
 * compiled ones (1, 7, 33, 64, 100, 128, 160, 192, 255, 256; D != Dv),
 * each pattern form with blocks of 64 and 128, causal with Lq above and
 * below Lk, GQA, the three layouts (odd rows and [B, L, H, D] element by
 * element, padded rows in 16-byte pieces cut at D), a binding off 16
 * bytes, a negative scale; many 64-key blocks of a MASK. */
static void f32_cases(bool backward)
{
    static const int64_t sizes[][2] = {
        { 1, 1 },     { 7, 7 },     { 33, 33 },   { 64, 64 },   { 100, 100 }, { 128, 128 },
        { 160, 160 }, { 192, 192 }, { 255, 255 }, { 256, 256 }, { 192, 128 }, { 7, 40 },
    };
    static const enum layout layouts[] = { BHLD, PADDED, BLHD };
    const int n = (int)(sizeof sizes / sizeof sizes[0]);
    for (int i = 0; i < n; i++)
        for (int f = 0; f < 3; f++) {
            const int32_t blk = f == 2 ? 128 : 64;
            struct acase c = {
                .type = BK_DATA_TYPE_F32, .b = 2, .h = 4, .hkv = 2, .lq = 256, .lk = 320,
                .d = sizes[i][0], .dv = sizes[i][1], .form = forms[f], .bq = blk, .bk = blk,
                .density = 0.5, .layout = layouts[(i + f) % 3], .backward = backward,
            };
            run_case(&c);
            c.causal = true, c.lq = i % 2 ? 100 : 200, c.lk = i % 2 ? 150 : 133, c.hkv = 1;
            c.layout = layouts[(i + f + 1) % 3];
            run_case(&c);
        }
    struct acase c = {
        .type = BK_DATA_TYPE_F32, .b = 1, .h = 2, .hkv = 1, .lq = 130, .lk = 70, .d = 48,
        .dv = 48, .form = BK_ATTENTION_PATTERN_DENSE, .offset = 4, .causal = true,
        .backward = backward,
    };
    run_case(&c);
    c.d = c.dv = 128, c.offset = 0, c.set_scale = true, c.scale = -0.2, c.lq = 200;
    c.lk = 333;
    run_case(&c);
    c = (struct acase){
        .type = BK_DATA_TYPE_F32, .b = 1, .h = 2, .hkv = 1, .lq = 256, .lk = 1536, .d = 64,
        .dv = 64, .form = BK_ATTENTION_PATTERN_MASK, .bq = 64, .bk = 64, .density = 0.3,
        .backward = backward,
    };
    run_case(&c);
}

static void general_cases(bool backward)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F64, BK_DATA_TYPE_F16,
                                        BK_DATA_TYPE_BF16 };
    for (int t = 0; t < 4; t++) {
        struct acase c = {
            .type = types[t], .b = 1, .h = 3, .hkv = 1, .lq = 97, .lk = 150, .d = 40, .dv = 72,
            .form = BK_ATTENTION_PATTERN_MASK, .bq = 16, .bk = 48, .density = 0.4,
            .causal = true, .backward = backward,
        };
        run_case(&c);
        c.form = BK_ATTENTION_PATTERN_LIST, c.bq = c.bk = 8, c.causal = false, c.d = 256;
        c.dv = 24, c.layout = BLHD;
        run_case(&c);
        c.form = BK_ATTENTION_PATTERN_DENSE, c.d = c.dv = 64, c.layout = BHLD, c.lq = 150;
        c.lk = 60, c.causal = true; /* Lq > Lk: the first 90 rows see nothing */
        run_case(&c);
    }
    /* The fast kernel's shape, bound off 16 bytes: the tensor-core kernels
     * load it element by element. */
    struct acase c = {
        .type = BK_DATA_TYPE_F16, .b = 1, .h = 2, .hkv = 2, .lq = 128, .lk = 128, .d = 64,
        .dv = 64, .form = BK_ATTENTION_PATTERN_DENSE, .offset = 2, .backward = backward,
    };
    run_case(&c);
    /* A bad list: NaN for the head that owns it, normal values elsewhere. */
    c = (struct acase){
        .type = BK_DATA_TYPE_BF16, .b = 2, .h = 2, .hkv = 1, .lq = 128, .lk = 192, .d = 128,
        .dv = 128, .form = BK_ATTENTION_PATTERN_LIST, .bq = 64, .bk = 64, .density = 0.6,
        .bad_list = true, .backward = backward,
    };
    run_case(&c);
}

/* Head sizes the Hopper kernels take by padding: D and Dv in whole
 * 8-column steps up to 128, run on the kernels of width 64 or 128 whose
 * tensor maps zero-fill the columns past them (D != Dv too); elsewhere the
 * plans' other kernels, compared with the host all the same. */
static void padded_width_cases(bool backward)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    static const int64_t heads[][2] = {
        { 32, 32 }, { 80, 80 }, { 96, 96 }, { 48, 48 }, { 8, 8 }, { 64, 128 }, { 128, 64 },
        { 96, 64 }, { 16, 40 }, { 120, 112 },
    };
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++)
            for (int f = 0; f < 3; f++) {
                const int32_t blk = f == 2 ? 128 : 64;
                struct acase c = {
                    .type = types[t], .b = 2, .h = 4, .hkv = 2, .lq = 256, .lk = 320,
                    .d = heads[i][0], .dv = heads[i][1], .form = forms[f], .bq = blk, .bk = blk,
                    .density = 0.5, .backward = backward,
                };
                run_case(&c);
                c.causal = true, c.lq = 200, c.lk = 333, c.layout = BLHD, c.hkv = 1;
                run_case(&c);
            }
}

/* Few query rows over many keys (a decode step): the plan splits the keys
 * over CTAs and packs the query heads of a kv head into one tile (rows =
 * H / Hkv * Lq: one warp a stream up to 16, two up to 32, four up to 64,
 * eight past that, in several row groups past 128; up to 8, the narrow
 * kernels' keys-as-rows tiles); lengths that are not whole steps or
 * splits, parts with no keys, Lk of 0 and 1, causal rows that see nothing,
 * a negative scale; 256 units of one kv head each (B32 H32/8: streams
 * walking whole units fill 132 SMs' 264). */
static void decode_cases(void)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    static const struct {
        int64_t b, h, hkv, lq, lk;
        bool causal;
        enum layout layout;
    } shapes[] = {
        { 2, 4, 4, 1, 1000, false, BHLD },   { 1, 16, 2, 1, 4099, false, BLHD },
        { 2, 8, 2, 4, 777, true, PADDED },   { 1, 16, 1, 2, 2050, true, BHLD },
        { 1, 8, 1, 7, 300, true, BLHD },     { 1, 16, 1, 16, 1500, true, BHLD },
        { 3, 4, 2, 3, 1, true, BHLD },       { 2, 4, 1, 5, 0, false, BHLD },
        { 1, 2, 2, 16, 64, false, PADDED },  { 1, 32, 2, 1, 20000, false, BHLD },
        { 2, 16, 2, 16, 3000, true, BLHD }, { 2, 8, 2, 2, 3001, true, BHLD },
        { 1, 12, 4, 2, 515, true, BLHD },    { 32, 32, 8, 1, 333, false, BLHD },
        /* More than 64 packed rows: the forward's CTA (two row groups, the
         * second half full; Lq 4 of 64 heads) */
        { 1, 32, 2, 8, 1777, true, BHLD },   { 2, 24, 2, 16, 900, true, PADDED },
        { 1, 64, 1, 4, 5000, false, BLHD },
    };
    for (int t = 0; t < 2; t++)
        for (int dh = 64; dh <= 128; dh *= 2)
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                struct acase c = {
                    .type = types[t], .b = shapes[i].b, .h = shapes[i].h,
                    .hkv = shapes[i].hkv, .lq = shapes[i].lq, .lk = shapes[i].lk, .d = dh,
                    .dv = dh, .form = BK_ATTENTION_PATTERN_DENSE, .causal = shapes[i].causal,
                    .layout = shapes[i].layout,
                };
                run_case(&c);
                if (i == 2 || i == 11) {
                    c.set_scale = true, c.scale = -0.3;
                    run_case(&c);
                }
            }
}

/* A decode batch of sequences of their own lengths (PADDED lengths of
 * queries and keys), over a contiguous cache or a paged one (pages in
 * random order, one page shared by two sequences, unused block-table
 * entries holding junk), and a sequence whose lengths or pages are out of
 * range (its outputs NaN, the others' exact). */
struct seq_case {
    BkDataType type;
    int64_t b, h, hkv, lq, lk, d;
    int32_t page_size; /* 0: contiguous */
    bool causal, lengths_q, bad;
    enum layout layout;
};

/* NaN in every row of K and V that no sequence reads (a contiguous
 * cache's keys past a sequence's length; a paged pool's rows no used
 * page entry names below its sequence's length), in both images: a
 * kernel that reads them, even to weigh them by 0, turns y to NaN. */
static void nan_unused_keys(struct tensor *k, struct tensor *v, int64_t b_count, int64_t rows,
                            int32_t page_size, int64_t max_pages, const int32_t *kl,
                            const int32_t *tb)
{
    const int64_t pages = k->desc.extent[0], hkv = k->desc.extent[1];
    const int64_t units = page_size ? pages : b_count, per = page_size ? page_size : rows;
    bool *used = calloc((size_t)(units * per), sizeof *used);
    for (int64_t b = 0; b < b_count; b++)
        for (int64_t j = 0; j < kl[b] && j < rows; j++) {
            const int64_t pg = page_size ? tb[b * max_pages + j / page_size] : b;
            if (pg >= 0 && pg < units)
                used[pg * per + (page_size ? j % page_size : j)] = true;
        }
    struct tensor *kv[2] = { k, v };
    for (int t = 0; t < 2; t++) {
        const BkTensorDesc *d = &kv[t]->desc;
        for (int64_t u = 0; u < units; u++)
            for (int64_t h = 0; h < hkv; h++)
                for (int64_t r = 0; r < per; r++)
                    for (int64_t c = 0; !used[u * per + r] && c < d->extent[3]; c++) {
                        const int64_t e = u * d->stride[0] + h * d->stride[1] +
                                          r * d->stride[2] + c * d->stride[3];
                        bkt_store(kv[t]->gpu_img, d->dataType, e, NAN);
                        bkt_store(kv[t]->host_img, d->dataType, e, NAN);
                    }
    }
    free(used);
}

static void run_seq_case(const struct seq_case *c)
{
    char label[200];
    snprintf(label, sizeof label,
             "forward %s B%lld H%lld/%lld Lq%lld Lk%lld D%lld%s lengths%s %s page %d%s%s",
             bkt_type_name(c->type), (long long)c->b, (long long)c->h, (long long)c->hkv,
             (long long)c->lq, (long long)c->lk, (long long)c->d, c->causal ? " causal" : "",
             c->lengths_q ? " q k" : " k", layout_names[c->layout], c->page_size,
             c->bad ? " bad" : "", grid_label);
    const char *only = getenv("BK_TEST_ONLY");
    if (only && !strstr(label, only))
        return;
    const int64_t max_pages = c->page_size ? (c->lk + c->page_size - 1) / c->page_size : 0;
    const int64_t lk = c->page_size ? max_pages * c->page_size : c->lk;
    const int64_t pages = c->b * max_pages + 1;
    struct tensor q, k, v, y, lse, lq, lkt, table;
    make_tensor(&q, c->type, c->b, c->h, c->lq, c->d, c->layout, 4);
    if (c->page_size) {
        make_tensor(&k, c->type, pages, c->hkv, c->page_size, c->d, c->layout, 4);
        make_tensor(&v, c->type, pages, c->hkv, c->page_size, c->d, c->layout, 4);
    } else {
        make_tensor(&k, c->type, c->b, c->hkv, lk, c->d, c->layout, 4);
        make_tensor(&v, c->type, c->b, c->hkv, lk, c->d, c->layout, 4);
    }
    make_tensor(&y, c->type, c->b, c->h, c->lq, c->d, c->layout, 4);
    make_tensor(&lse, BK_DATA_TYPE_F32, c->b, c->h, c->lq, 1, BHLD, 3);
    make_tensor(&lq, BK_DATA_TYPE_I32, 1, 1, 1, c->b, BHLD, 4);
    make_tensor(&lkt, BK_DATA_TYPE_I32, 1, 1, 1, c->b, BHLD, 4);
    make_tensor(&table, BK_DATA_TYPE_I32, 1, 1, c->b, max_pages ? max_pages : 1, BHLD, 4);
    random_fill(&q, -2, 2);
    random_fill(&k, -2, 2);
    random_fill(&v, -1, 1);
    /* Lengths: 0, 1, full and random ones; the last sequence's keys out
     * of range in a bad case. */
    int32_t *ql = lq.gpu_img, *kl = lkt.gpu_img, *tb = table.gpu_img;
    for (int64_t b = 0; b < c->b; b++) {
        kl[b] = b == 0 ? (int32_t)lk : b == 1 ? 1 : (int32_t)bkt_rand_int(&rng, 0, lk);
        ql[b] = b == 2 ? 0 : (int32_t)bkt_rand_int(&rng, 1, c->lq);
    }
    if (c->bad && !c->page_size)
        kl[c->b - 1] = (int32_t)lk + 1;
    /* Pages: a random permutation of the pool; sequence 1 shares sequence
     * 0's first page; entries past a sequence's keys are junk. */
    if (c->page_size) {
        int32_t *perm = malloc(sizeof *perm * (size_t)pages);
        for (int64_t i = 0; i < pages; i++)
            perm[i] = (int32_t)i;
        for (int64_t i = pages - 1; i > 0; i--) {
            const int64_t j = bkt_rand_int(&rng, 0, i);
            const int32_t t = perm[i];
            perm[i] = perm[j], perm[j] = t;
        }
        for (int64_t b = 0; b < c->b; b++)
            for (int64_t p = 0; p < max_pages; p++) {
                const bool used = p * c->page_size < kl[b];
                tb[b * max_pages + p] = used ? perm[b * max_pages + p] : -7 - (int32_t)p;
            }
        if (c->b > 1)
            tb[max_pages] = tb[0];
        if (c->bad) /* a used page of the last sequence out of range */
            tb[(c->b - 1) * max_pages] = (int32_t)pages + 3, kl[c->b - 1] = (int32_t)lk;
        free(perm);
    }
    memcpy(lq.host_img, lq.gpu_img, lq.bytes);
    memcpy(lkt.host_img, lkt.gpu_img, lkt.bytes);
    memcpy(table.host_img, table.gpu_img, table.bytes);
    nan_unused_keys(&k, &v, c->b, lk, c->page_size, max_pages, kl, tb);
    BkTensorDesc lqd = { .dataType = BK_DATA_TYPE_I32, .rank = 1, .extent = { c->b },
                         .stride = { 1 } };
    BkTensorDesc tbd = { .dataType = BK_DATA_TYPE_I32, .rank = 2,
                         .extent = { c->b, max_pages }, .stride = { max_pages, 1 } };
    BkAttentionPagedKvInfo paged = { .sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO,
                                     .blockTable = tbd };
    BkAttentionSequencesInfo seqs = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO,
        .pNext = c->page_size ? &paged : NULL, .form = BK_ATTENTION_SEQUENCES_PADDED,
        .lengthsK = lqd,
    };
    if (c->lengths_q)
        seqs.lengthsQ = lqd;
    BkAttentionInfo fi = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .pNext = &seqs,
        .flags = c->causal ? BK_ATTENTION_CAUSAL_BIT : 0, .scale = 1.0 / sqrt((double)c->d),
        .q = q.desc, .k = k.desc, .v = v.desc, .y = y.desc, .lse = lse.desc,
    };
    struct binding gb[GPU_PAIR_SLOTS] = { { 0 } }, hb[GPU_PAIR_SLOTS] = { { 0 } };
    bind_forward(gb, hb, &q, &k, &v, &y, &lse);
    if (c->lengths_q)
        bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_Q, &lq, 0);
    bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_K, &lkt, 0);
    if (c->page_size)
        bind(gb, hb, BK_ATTENTION_BINDING_BLOCK_TABLE, &table, 0);
    poison(y.gpu_img, y.bytes), poison(y.host_img, y.bytes);
    poison(lse.gpu_img, lse.bytes), poison(lse.host_img, lse.bytes);
    char kernel[BK_MAX_KERNEL_NAME_SIZE] = "";
    const BkResult rh = run_images(host, &fi, hb, 11, 1, NULL);
    const BkResult rg = run_images(gpu, &fi, gb, 11, 1, kernel);
    if (rh != BK_SUCCESS || rg != BK_SUCCESS) {
        tap_ok(false, "%s: runs (host %d, cuda %d: %s)", label, rh, rg, bkGetLastErrorMessage());
    } else {
        kernel_seen(kernel);
        const bool ok = compare(&y, tolerance(c->type), 0, "y", label) &
                        compare(&lse, 0, 2e-4, "lse", label);
        tap_ok(ok, "%s (%s)", label, kernel);
    }
    struct tensor *all[] = { &q, &k, &v, &y, &lse, &lq, &lkt, &table };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free_tensor(all[i]);
}

static void decode_sequence_cases(void)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    static const struct seq_case shapes[] = {
        { 0, 4, 16, 2, 1, 3000, 0, 0, false, false, false, BHLD },
        { 0, 5, 16, 2, 4, 777, 0, 0, true, true, false, BLHD },
        { 0, 4, 8, 8, 1, 1000, 0, 16, false, false, false, BLHD },
        { 0, 3, 32, 4, 2, 2048, 0, 64, true, true, false, BLHD },
        { 0, 4, 16, 1, 1, 1500, 0, 256, false, false, false, BHLD },
        { 0, 4, 16, 2, 3, 900, 0, 0, true, true, true, BHLD },
        { 0, 4, 16, 2, 1, 900, 0, 32, false, false, true, BLHD },
        /* Pages that a step's first key may start inside of (17, 48):
         * up to five pages a step, from any position. */
        { 0, 3, 8, 1, 1, 1234, 0, 17, false, false, false, BLHD },
        { 0, 2, 32, 2, 2, 2000, 0, 48, true, true, false, BHLD },
        /* Streams of 2, 4 and 8 warps over pages of 16 to 128 (a page
         * shorter or longer than a step, or than a thread's row stride),
         * and a page out of range on a two-warp stream. */
        { 0, 3, 32, 4, 4, 2500, 0, 16, true, true, false, BLHD },
        { 0, 2, 64, 4, 8, 1800, 0, 32, true, false, false, BHLD },
        { 0, 2, 32, 2, 16, 1000, 0, 16, true, true, false, BLHD },
        { 0, 4, 32, 4, 4, 700, 0, 128, true, false, true, BHLD },
        /* More than 64 packed rows of a contiguous cache: the forward's CTA */
        { 0, 4, 32, 2, 8, 1500, 0, 0, true, true, true, BLHD },
        { 0, 3, 48, 2, 4, 999, 0, 0, false, false, false, BHLD },
    };
    for (int t = 0; t < 2; t++)
        for (int dh = 64; dh <= 128; dh *= 2)
            for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
                struct seq_case c = shapes[i];
                c.type = types[t], c.d = dh;
                run_seq_case(&c);
            }
}

/* Sequences of their own lengths on the prefill and training kernels
 * (tensor cores, and the general kernels): PADDED batches and PACKED
 * ones (offsets along one length axis), forward and backward, each
 * sequence's queries and keys of its own number (0, 1, the whole axis,
 * shorter and longer than a 64-row tile), its causal diagonal and its
 * pattern (shared, or one per sequence); and offsets or lengths that
 * break a rule: NaN exactly where the host writes NaN (the sequence's
 * rows, and PACKED rows no sequence or a bad one claims). */
enum varlen_bad {
    VARLEN_GOOD,
    VARLEN_LONG,       /* PADDED: a length past the axis */
    VARLEN_DECREASING, /* PACKED: an offset below the one before */
    VARLEN_SHORT_END,  /* PACKED: the last offset short of the axis */
    VARLEN_OVER_MAX,   /* PACKED: a sequence longer than maxLength */
    VARLEN_JUMP        /* PACKED: a query (backward: and key) offset far ahead,
                          the next far back */
};
static const char *const varlen_bad_names[] = { "", " bad: long", " bad: decreasing",
                                                " bad: short end", " bad: over max",
                                                " bad: jump" };

struct varlen_case {
    BkDataType type;
    BkAttentionSequenceForm form;
    int64_t h, hkv, d, dv;
    int n;                        /* sequences */
    const int32_t *lq, *lk;       /* their lengths */
    BkAttentionPatternForm pattern;
    bool per_sequence;            /* pattern extent[0] S (or B), else 1 */
    bool causal, backward;
    enum layout layout;
    enum varlen_bad bad;
    bool hopper; /* on sm_90 the plan must take a Hopper (wgmma) kernel */
};

static bool sm90; /* the GPU is sm_90 (the Hopper kernels' device) */

static void run_varlen_case(const struct varlen_case *c)
{
    const bool packed = c->form == BK_ATTENTION_SEQUENCES_PACKED;
    int64_t maxq = 0, maxk = 0, totq = 0, totk = 0;
    for (int s = 0; s < c->n; s++) {
        maxq = c->lq[s] > maxq ? c->lq[s] : maxq, totq += c->lq[s];
        maxk = c->lk[s] > maxk ? c->lk[s] : maxk, totk += c->lk[s];
    }
    /* PADDED: the axes a little past the longest; PACKED: end to end. */
    const int64_t b = packed ? 1 : c->n;
    const int64_t lq = packed ? totq : maxq + 3, lk = packed ? totk : maxk + 5;
    char label[256];
    snprintf(label, sizeof label, "%s %s %s S%d H%lld/%lld Lq%lld Lk%lld D%lld/%lld %s%s%s %s%s%s",
             c->backward ? "backward" : "forward", bkt_type_name(c->type),
             packed ? "packed" : "padded", c->n, (long long)c->h, (long long)c->hkv,
             (long long)lq, (long long)lk, (long long)c->d, (long long)c->dv,
             form_name(c->pattern), c->per_sequence ? " per sequence" : "",
             c->causal ? " causal" : "", layout_names[c->layout], varlen_bad_names[c->bad],
             grid_label);
    const char *only = getenv("BK_TEST_ONLY");
    if (only && !strstr(label, only))
        return;
    const BkDataType lt = c->type == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    const int64_t nl = packed ? c->n + 1 : c->n;
    struct tensor q, k, v, y, lse, dy, dq, dk, dv, lqt, lkt;
    make_tensor(&q, c->type, b, c->h, lq, c->d, c->layout, 4);
    make_tensor(&k, c->type, b, c->hkv, lk, c->d, c->layout, 4);
    make_tensor(&v, c->type, b, c->hkv, lk, c->dv, c->layout, 4);
    make_tensor(&y, c->type, b, c->h, lq, c->dv, c->layout, 4);
    make_tensor(&lse, lt, b, c->h, lq, 1, BHLD, 3);
    make_tensor(&dy, c->type, b, c->h, lq, c->dv, c->layout, 4);
    make_tensor(&dq, c->type, b, c->h, lq, c->d, c->layout, 4);
    make_tensor(&dk, c->type, b, c->hkv, lk, c->d, c->layout, 4);
    make_tensor(&dv, c->type, b, c->hkv, lk, c->dv, c->layout, 4);
    make_tensor(&lqt, BK_DATA_TYPE_I32, 1, 1, 1, nl, BHLD, 4);
    make_tensor(&lkt, BK_DATA_TYPE_I32, 1, 1, 1, nl, BHLD, 4);
    random_fill(&q, -2, 2);
    random_fill(&k, -2, 2);
    random_fill(&v, -1, 1);
    random_fill(&dy, -1, 1);
    int32_t *ql = lqt.gpu_img, *kl = lkt.gpu_img;
    int64_t max_q = maxq, max_k = maxk;
    if (packed) {
        ql[0] = kl[0] = 0;
        for (int s = 0; s < c->n; s++)
            ql[s + 1] = ql[s] + c->lq[s], kl[s + 1] = kl[s] + c->lk[s];
        if (c->bad == VARLEN_DECREASING && c->n > 2) /* sequence 1 runs backwards */
            ql[2] = ql[1] > 3 ? ql[1] - 3 : 0, ql[1] = ql[2] + 3;
        if (c->bad == VARLEN_SHORT_END) /* its last rows belong to none */
            kl[c->n] -= kl[c->n] > 2 ? 2 : 0, ql[c->n] -= ql[c->n] > 3 ? 3 : 0;
        if (c->bad == VARLEN_OVER_MAX) /* the longest breaks the bound */
            max_q = maxq > 1 ? maxq - 1 : 1;
        /* Sequence 0 ends 200 rows before sequence 3 does, so that sequence
         * 1 runs back by more than a tile: the Hopper kernels' tile slots
         * (off[s] / R + s) then fall, which their fallback must catch. */
        if (c->bad == VARLEN_JUMP && c->n > 3 && ql[4] > 200)
            ql[1] = ql[4] - 200;
        /* The backward's keys alike, for the dk/dv kernel's key slots
         * (koff[s] / 128 + s): hopper_varlen_cases' offsets 0, 664, 263,
         * 264, ... leave sequence 2's one key to no slot without the
         * fallback. */
        if (c->bad == VARLEN_JUMP && c->backward && c->n > 3 && kl[4] > 200)
            kl[1] = kl[4] - 200;
    } else {
        for (int s = 0; s < c->n; s++)
            ql[s] = c->lq[s], kl[s] = c->lk[s];
        if (c->bad == VARLEN_LONG)
            ql[c->n - 1] = (int32_t)lq + 1;
    }
    memcpy(lqt.host_img, lqt.gpu_img, lqt.bytes);
    memcpy(lkt.host_img, lkt.gpu_img, lkt.bytes);
    if (!packed) /* keys past a sequence's length are never read */
        nan_unused_keys(&k, &v, c->n, lk, 0, 0, kl, NULL);
    /* The pattern's blocks of 64: over the longest sequence (PACKED, its
     * bound) or the padded axes (PADDED). */
    const struct acase pc = {
        .b = c->per_sequence ? c->n : 1, .h = c->h, .lq = packed ? max_q : lq,
        .lk = packed ? max_k : lk,
        .form = c->pattern, .bq = 64, .bk = 64, .density = 0.6,
    };
    struct pattern pat;
    BkAttentionPattern pdesc;
    make_pattern(&pc, &pat, &pdesc);
    const BkTensorDesc lengths = { .dataType = BK_DATA_TYPE_I32, .rank = 1, .extent = { nl },
                                   .stride = { 1 } };
    const BkAttentionSequencesInfo seqs = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO, .form = c->form,
        .lengthsQ = lengths, .lengthsK = lengths,
        .maxLengthQ = packed ? max_q : 0, .maxLengthK = packed ? max_k : 0,
    };
    const double scale = 1.0 / sqrt((double)c->d);
    const BkAttentionFlags flags = c->causal ? BK_ATTENTION_CAUSAL_BIT : 0;
    struct binding gb[GPU_PAIR_SLOTS] = { { 0 } }, hb[GPU_PAIR_SLOTS] = { { 0 } };
    bind_pattern(gb, hb, &pc, &pat);
    bind_forward(gb, hb, &q, &k, &v, &y, &lse);
    char kernel[BK_MAX_KERNEL_NAME_SIZE] = "";
    bool ok = true;
    BkResult rh, rg;
    poison(y.gpu_img, y.bytes), poison(y.host_img, y.bytes);
    poison(lse.gpu_img, lse.bytes), poison(lse.host_img, lse.bytes);
    /* The forward: the run checked, or the backward's y and lse. */
    const BkAttentionInfo fi = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .pNext = &seqs, .flags = flags,
        .scale = scale, .pattern = pdesc, .q = q.desc, .k = k.desc, .v = v.desc,
        .y = y.desc, .lse = lse.desc,
    };
    if (!c->backward) {
        bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_Q, &lqt, 0);
        bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_K, &lkt, 0);
        rh = run_images(host, &fi, hb, BK_ATTENTION_BINDING_BLOCK_TABLE + 1, 1, NULL);
        rg = run_images(gpu, &fi, gb, BK_ATTENTION_BINDING_BLOCK_TABLE + 1, 1, kernel);
        if (rh == BK_SUCCESS && rg == BK_SUCCESS) {
            const double lt_tol = c->type == BK_DATA_TYPE_F64 ? 1e-11 : 2e-4;
            ok = compare(&y, tolerance(c->type), 0, "y", label) &
                 compare(&lse, 0, lt_tol, "lse", label);
        }
    } else {
        /* y and lse: the host forward's (random ones would make P
         * meaningless), bound to both. */
        bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_Q, &lqt, 0);
        bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_K, &lkt, 0);
        rh = run_images(host, &fi, hb, BK_ATTENTION_BINDING_BLOCK_TABLE + 1, 1, NULL);
        memcpy(y.gpu_img, y.host_img, y.bytes);
        memcpy(lse.gpu_img, lse.host_img, lse.bytes);
        gb[BK_ATTENTION_BINDING_LENGTHS_Q] = gb[BK_ATTENTION_BINDING_LENGTHS_K] =
            (struct binding){ 0 };
        hb[BK_ATTENTION_BINDING_LENGTHS_Q] = hb[BK_ATTENTION_BINDING_LENGTHS_K] =
            (struct binding){ 0 };
        const BkAttentionBackwardInfo bi = {
            .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, .pNext = &seqs, .flags = flags,
            .scale = scale, .pattern = pdesc, .q = q.desc, .k = k.desc, .v = v.desc,
            .y = y.desc, .lse = lse.desc, .dy = dy.desc, .dq = dq.desc, .dk = dk.desc,
            .dv = dv.desc,
        };
        bind_gradients(gb, hb, &dy, &dq, &dk, &dv);
        bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_LENGTHS_Q, &lqt, 0);
        bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_LENGTHS_K, &lkt, 0);
        struct tensor *outs[] = { &dq, &dk, &dv };
        for (int i = 0; i < 3; i++)
            poison(outs[i]->gpu_img, outs[i]->bytes), poison(outs[i]->host_img, outs[i]->bytes);
        rg = BK_SUCCESS;
        if (rh == BK_SUCCESS)
            rh = run_images(host, &bi, hb, 14, 1, NULL);
        if (rh == BK_SUCCESS)
            rg = run_images(gpu, &bi, gb, 14, 1, kernel);
        if (rh == BK_SUCCESS && rg == BK_SUCCESS) {
            const double tol = 2 * tolerance(c->type);
            ok = compare(&dq, tol, 0, "dq", label) & compare(&dk, tol, 0, "dk", label) &
                 compare(&dv, tol, 0, "dv", label);
        }
    }
    if (rh != BK_SUCCESS || rg != BK_SUCCESS) {
        tap_ok(false, "%s: runs (host %d, cuda %d: %s)", label, rh, rg, bkGetLastErrorMessage());
    } else {
        kernel_seen(kernel);
        tap_ok(ok, "%s (%s)", label, kernel);
        /* Where the Hopper kernels take the case, the plan must have. */
        if (c->hopper && sm90 && !getenv("BK_CUDA_ATTENTION_PATH"))
            tap_ok(strstr(kernel, "wgmma") != NULL, "%s: a Hopper kernel (%s)", label, kernel);
    }
    free_pattern(&pat);
    struct tensor *all[] = { &q, &k, &v, &y, &lse, &dy, &dq, &dk, &dv, &lqt, &lkt };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free_tensor(all[i]);
}

/* PACKED with no sequence (offsets [0]) over tensors of 100 rows that none
 * claims, its per-sequence LIST empty (extent[0] = 0) and unbound, forward
 * and backward: the plan reads no pattern and writes what the host does. */
static void no_sequence_cases(void)
{
    enum { H = 4, HKV = 2, L = 100 };
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    for (int t = 0; t < 2; t++)
        for (int d = 64; d <= 128; d += 64)
            for (int backward = 0; backward < 2; backward++) {
                char label[160];
                snprintf(label, sizeof label, "%s %s packed S0 H%d/%d L%d D%d unbound list%s",
                         backward ? "backward" : "forward", bkt_type_name(types[t]), H, HKV, L,
                         d, grid_label);
                const char *only = getenv("BK_TEST_ONLY");
                if (only && !strstr(label, only))
                    continue;
                const BkDataType ty = types[t];
                struct tensor q, k, v, y, lse, dy, dq, dk, dv, off;
                make_tensor(&q, ty, 1, H, L, d, BHLD, 4);
                make_tensor(&k, ty, 1, HKV, L, d, BHLD, 4);
                make_tensor(&v, ty, 1, HKV, L, d, BHLD, 4);
                make_tensor(&y, ty, 1, H, L, d, BHLD, 4);
                make_tensor(&lse, BK_DATA_TYPE_F32, 1, H, L, 1, BHLD, 3);
                make_tensor(&dy, ty, 1, H, L, d, BHLD, 4);
                make_tensor(&dq, ty, 1, H, L, d, BHLD, 4);
                make_tensor(&dk, ty, 1, HKV, L, d, BHLD, 4);
                make_tensor(&dv, ty, 1, HKV, L, d, BHLD, 4);
                make_tensor(&off, BK_DATA_TYPE_I32, 1, 1, 1, 1, BHLD, 4);
                struct tensor *in[] = { &q, &k, &v, &y, &lse, &dy };
                for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
                    random_fill(in[i], -1, 1);
                struct tensor *out[] = { backward ? &dq : &y, backward ? &dk : &lse, &dv };
                for (int i = 0; i < (backward ? 3 : 2); i++)
                    poison(out[i]->gpu_img, out[i]->bytes),
                        poison(out[i]->host_img, out[i]->bytes);
                const BkTensorDesc one = { .dataType = BK_DATA_TYPE_I32, .rank = 1,
                                           .extent = { 1 }, .stride = { 1 } };
                const BkAttentionSequencesInfo seqs = {
                    .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO,
                    .form = BK_ATTENTION_SEQUENCES_PACKED, .lengthsQ = one, .lengthsK = one,
                    .maxLengthQ = L, .maxLengthK = L,
                };
                const BkTensorDesc counts = { .dataType = BK_DATA_TYPE_I32, .rank = 3,
                                              .extent = { 0, H, 2 },
                                              .stride = { 2 * H, 2, 1 } };
                const BkTensorDesc indices = { .dataType = BK_DATA_TYPE_I32, .rank = 4,
                                               .extent = { 0, H, 2, 2 },
                                               .stride = { 4 * H, 4, 2, 1 } };
                const BkAttentionPattern pat = { .form = BK_ATTENTION_PATTERN_LIST,
                                                 .blockQ = 64, .blockK = 64, .counts = counts,
                                                 .indices = indices };
                const double scale = 1.0 / sqrt((double)d);
                const BkAttentionInfo fi = {
                    .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .pNext = &seqs, .scale = scale,
                    .pattern = pat, .q = q.desc, .k = k.desc, .v = v.desc, .y = y.desc,
                    .lse = lse.desc,
                };
                const BkAttentionBackwardInfo bi = {
                    .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, .pNext = &seqs,
                    .scale = scale, .pattern = pat, .q = q.desc, .k = k.desc, .v = v.desc,
                    .y = y.desc, .lse = lse.desc, .dy = dy.desc, .dq = dq.desc, .dk = dk.desc,
                    .dv = dv.desc,
                };
                struct binding gb[GPU_PAIR_SLOTS] = { { 0 } }, hb[GPU_PAIR_SLOTS] = { { 0 } };
                bind_forward(gb, hb, &q, &k, &v, &y, &lse);
                if (backward) {
                    bind_gradients(gb, hb, &dy, &dq, &dk, &dv);
                    bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_LENGTHS_Q, &off, 0);
                    bind(gb, hb, BK_ATTENTION_BACKWARD_BINDING_LENGTHS_K, &off, 0);
                } else {
                    bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_Q, &off, 0);
                    bind(gb, hb, BK_ATTENTION_BINDING_LENGTHS_K, &off, 0);
                }
                const void *info = backward ? (const void *)&bi : (const void *)&fi;
                char kernel[BK_MAX_KERNEL_NAME_SIZE] = "";
                const uint32_t slots = backward ? 14 : BK_ATTENTION_BINDING_BLOCK_TABLE + 1;
                const BkResult rh = run_images(host, info, hb, slots, 1, NULL);
                const BkResult rg = run_images(gpu, info, gb, slots, 1, kernel);
                if (rh != BK_SUCCESS || rg != BK_SUCCESS) {
                    tap_ok(false, "%s: runs (host %d, cuda %d: %s)", label, rh, rg,
                           bkGetLastErrorMessage());
                } else {
                    kernel_seen(kernel);
                    const bool ok = backward ? compare(&dq, 0, 0, "dq", label) &
                                                   compare(&dk, 0, 0, "dk", label) &
                                                   compare(&dv, 0, 0, "dv", label)
                                             : compare(&y, 0, 0, "y", label) &
                                                   compare(&lse, 0, 0, "lse", label);
                    tap_ok(ok, "%s (%s)", label, kernel);
                }
                struct tensor *all[] = { &q, &k, &v, &y, &lse, &dy, &dq, &dk, &dv, &off };
                for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
                    free_tensor(all[i]);
            }
}

/* A varlen case's shape, pattern and layout (its lengths apart). */
struct varlen_shape {
    BkDataType type;
    int64_t h, hkv, d, dv;
    BkAttentionPatternForm pattern;
    bool per_sequence, causal;
    enum layout layout;
};

static struct varlen_case varlen_case_of(const struct varlen_shape *v, bool backward)
{
    struct varlen_case c = {
        .type = v->type, .h = v->h, .hkv = v->hkv, .d = v->d, .dv = v->dv,
        .pattern = v->pattern, .per_sequence = v->per_sequence, .causal = v->causal,
        .backward = backward, .layout = v->layout,
    };
    return c;
}

static void varlen_cases(bool backward)
{
    /* Lengths of queries and keys: empty sequences, 1, under a tile, one
     * tile, several; Lq != Lk within a sequence. */
    static const int32_t pq[] = { 70, 0, 1, 200, 64, 130 }, pk[] = { 70, 5, 1, 150, 64, 200 };
    static const int32_t dq[] = { 190, 0, 1, 77 }, dk[] = { 230, 9, 1, 100 };
    static const struct varlen_shape shapes[] = {
        { BK_DATA_TYPE_BF16, 4, 2, 128, 128, BK_ATTENTION_PATTERN_DENSE, false, true, BHLD },
        { BK_DATA_TYPE_F16, 4, 4, 64, 64, BK_ATTENTION_PATTERN_DENSE, false, false, BLHD },
        { BK_DATA_TYPE_F16, 6, 2, 80, 80, BK_ATTENTION_PATTERN_MASK, true, true, BHLD },
        { BK_DATA_TYPE_BF16, 4, 1, 7, 7, BK_ATTENTION_PATTERN_LIST, false, false, BHLD },
        { BK_DATA_TYPE_BF16, 4, 2, 64, 64, BK_ATTENTION_PATTERN_LIST, true, true, PADDED },
        { BK_DATA_TYPE_F32, 2, 1, 40, 24, BK_ATTENTION_PATTERN_MASK, false, true, BHLD },
    };
    static const enum varlen_bad packed_bad[] = { VARLEN_GOOD, VARLEN_DECREASING,
                                                  VARLEN_SHORT_END, VARLEN_OVER_MAX };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        struct varlen_case c = varlen_case_of(&shapes[i], backward);
        c.form = BK_ATTENTION_SEQUENCES_PACKED, c.n = 6, c.lq = pq, c.lk = pk;
        for (size_t e = 0; e < sizeof packed_bad / sizeof packed_bad[0]; e++) {
            c.bad = packed_bad[e];
            if (e == 0 || i < 3) /* the bad offsets on a few shapes */
                run_varlen_case(&c);
        }
        c.form = BK_ATTENTION_SEQUENCES_PADDED, c.n = 4, c.lq = dq, c.lk = dk;
        c.bad = VARLEN_GOOD;
        run_varlen_case(&c);
        c.bad = VARLEN_LONG;
        if (i < 3)
            run_varlen_case(&c);
    }
}

/* Sequences of their own lengths on the Hopper kernels: each head width
 * they take (64, 128, 192 and 256; past 128 the backward's pair kernels,
 * on 64-row tiles, offsets that run back too),
 * each default forward kernel (DENSE: trio at D = 64, wide at 128, tall
 * past; blocks of 64: solo at 64, the deep-or-narrow choice at 128) and,
 * forced, the others; sequences of several 128- and 192-row tiles next
 * to empty ones, of one row, of lengths no multiple of 64, with keys
 * fewer or more than queries; GQA; causal; per-sequence patterns; lse;
 * PACKED (whose tiles' last rows and keys are the next sequence's) and
 * PADDED, bad offsets and lengths among them. Their labels name 7
 * PACKED or 5 PADDED sequences ("packed S7 ", "padded S5 "), no other
 * cases' do (BK_TEST_ONLY). */
static void hopper_varlen_cases(bool backward)
{
    static const int32_t pq[] = { 300, 0, 1, 513, 64, 129, 7 };
    static const int32_t pk[] = { 260, 3, 1, 600, 64, 129, 200 };
    static const int32_t dq[] = { 385, 0, 1, 130, 64 }, dk[] = { 400, 64, 1, 77, 200 };
    static const struct varlen_shape shapes[] = {
        { BK_DATA_TYPE_BF16, 4, 2, 64, 64, BK_ATTENTION_PATTERN_DENSE, false, true, BHLD },
        { BK_DATA_TYPE_F16, 2, 2, 128, 128, BK_ATTENTION_PATTERN_DENSE, false, false, BLHD },
        { BK_DATA_TYPE_BF16, 4, 1, 128, 128, BK_ATTENTION_PATTERN_MASK, true, true, BHLD },
        { BK_DATA_TYPE_F16, 4, 2, 64, 64, BK_ATTENTION_PATTERN_LIST, false, true, PADDED },
        { BK_DATA_TYPE_BF16, 2, 2, 96, 64, BK_ATTENTION_PATTERN_DENSE, false, true, BHLD },
        { BK_DATA_TYPE_BF16, 2, 1, 192, 128, BK_ATTENTION_PATTERN_DENSE, false, true, BLHD },
        { BK_DATA_TYPE_F16, 2, 2, 256, 256, BK_ATTENTION_PATTERN_MASK, true, true, BHLD },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        struct varlen_case c = varlen_case_of(&shapes[i], backward);
        c.hopper = true;
        c.form = BK_ATTENTION_SEQUENCES_PACKED, c.n = 7, c.lq = pq, c.lk = pk;
        c.bad = VARLEN_GOOD;
        run_varlen_case(&c);
        if (i == 0 || i == 2 || i == 5 || i == 6) {
            c.bad = VARLEN_JUMP;
            run_varlen_case(&c);
        }
        if (i == 0) {
            c.bad = VARLEN_DECREASING;
            run_varlen_case(&c);
            c.bad = VARLEN_SHORT_END;
            run_varlen_case(&c);
        }
        c.form = BK_ATTENTION_SEQUENCES_PADDED, c.n = 5, c.lq = dq, c.lk = dk;
        c.bad = VARLEN_GOOD;
        run_varlen_case(&c);
        if (i == 2) {
            c.bad = VARLEN_LONG;
            run_varlen_case(&c);
        }
    }
}

int main(void)
{
    gpu = bkt_open_cuda();
    host = bkt_open_host();
    rng = bkt_rng_new(5150);
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    sm90 = gpu && bkGetContextProperties(gpu, &dev) == BK_SUCCESS &&
           dev.computeCapabilityMajor == 9 && dev.computeCapabilityMinor == 0;
    gpu_sms = gpu ? dev.multiprocessorCount : 0;
    /* Each kernel the plans can choose: the best for the device (on the
     * H100 the wgmma forward), then mma.sync, then CUDA cores only. */
    static const char *const paths[] = { NULL, "mma", "general" };
    for (int i = 0; i < 3; i++) {
        if (paths[i])
            setenv("BK_CUDA_ATTENTION_PATH", paths[i], 1);
        fast_cases(false);
        fast_cases(true);
        headsize_cases(false);
        headsize_cases(true);
    }
    unsetenv("BK_CUDA_ATTENTION_PATH");
    /* F32 takes the same kernels on either tensor-core path. */
    f32_cases(false);
    f32_cases(true);
    grid_label = " (padded widths)";
    padded_width_cases(false);
    padded_width_cases(true);
    /* The decode kernels: the plan's choice, then each set alone (the
     * Hopper ones, wgmma and the forward's CTA, run only on sm_90;
     * elsewhere their cases take the others; whole: the narrow kernels'
     * streams walking whole units, one launch), and the forward's CTA
     * with stream-K parts, a CTA a unit, and a cluster of two a unit. */
    static const struct {
        const char *set, *split, *label;
    } decode_sets[] = {
        { NULL, NULL, " (decode)" },
        { "mma", NULL, " (decode, mma)" },
        { "mma16", NULL, " (decode, mma16)" },
        { "wgmma", NULL, " (decode, wgmma)" },
        { "forward", "parts", " (decode, forward)" },
        { "forward", "whole", " (decode, forward whole)" },
        { "forward", "pairs", " (decode, forward pairs)" },
        { "whole", NULL, " (decode, whole)" },
    };
    for (size_t i = 0; i < sizeof decode_sets / sizeof decode_sets[0]; i++) {
        if (decode_sets[i].set)
            setenv("BK_CUDA_ATTENTION_DECODE", decode_sets[i].set, 1);
        if (decode_sets[i].split)
            setenv("BK_CUDA_ATTENTION_DECODE_SPLIT", decode_sets[i].split, 1);
        else
            unsetenv("BK_CUDA_ATTENTION_DECODE_SPLIT");
        grid_label = decode_sets[i].label;
        decode_cases();
        decode_sequence_cases();
    }
    unsetenv("BK_CUDA_ATTENTION_DECODE");
    unsetenv("BK_CUDA_ATTENTION_DECODE_SPLIT");
    grid_label = "";
    varlen_cases(false);
    varlen_cases(true);
    no_sequence_cases();
    hopper_varlen_cases(false);
    hopper_varlen_cases(true);
    setenv("BK_CUDA_ATTENTION_PATH", "general", 1);
    grid_label = " (general)";
    varlen_cases(false);
    varlen_cases(true);
    no_sequence_cases();
    unsetenv("BK_CUDA_ATTENTION_PATH");
    /* The fused backward at both widths (at 64 the consumers take a
     * tile's dQ by turns), then the same cases on the two kernels. */
    grid_label = "";
    fused_cases(128);
    fused_cases(64);
    fused_cases(96);
    long_key_cases();
    setenv("BK_CUDA_ATTENTION_BACKWARD", "two", 1);
    grid_label = " (two kernels)";
    fused_cases(128);
    fused_cases(64);
    fast_cases(true);
    headsize_cases(true);
    /* The backward with float atomics allowed: by default the plans keep
     * the deterministic kernels (and say so); with
     * BK_CUDA_ATTENTION_BACKWARD=atomic, at D = 128 on sm_90, the kernel
     * that adds its dQ shares as they come (any pattern, causal too: the
     * fast cases have blocks of 64 whose two key halves differ, keys past
     * Lk, short query tiles, GQA; the general ones a bad list beside a
     * good head). */
    unsetenv("BK_CUDA_ATTENTION_BACKWARD");
    allow_atomics = true;
    grid_label = " (atomics allowed)";
    fast_cases(true);
    setenv("BK_CUDA_ATTENTION_BACKWARD", "atomic", 1);
    grid_label = " (atomics)";
    fast_cases(true);
    fused_cases(128);
    general_cases(true);
    unsetenv("BK_CUDA_ATTENTION_BACKWARD");
    allow_atomics = false;
    grid_label = "";
    general_cases(false);
    general_cases(true);
    /* The Hopper forward's and dq's persistent CTAs each taking several
     * tiles of query rows (the ring, the turns and Q running on from one
     * to the next, a bad list's NaN head among good ones), and their grid
     * of a CTA a tile. */
    static const char *const ctas[] = { "3", "0" };
    for (int i = 0; i < 2; i++) {
        setenv("BK_CUDA_ATTENTION_CTAS", ctas[i], 1);
        grid_label = i == 0 ? " (3 CTAs)" : " (a CTA a tile)";
        fast_cases(false);
        fast_cases(true);
        general_cases(false);
        general_cases(true);
        hopper_varlen_cases(false);
        hopper_varlen_cases(true);
    }
    unsetenv("BK_CUDA_ATTENTION_CTAS");
    /* The Hopper forward's kernels for query blocks of 64 rows with
     * patterns of their own, forced for every forward of their head size
     * (the solo kernel: one consumer, two CTAs an SM, at D = 128 a ring of
     * one stage; the narrow one at D = 128: solo on tiles of 64 keys, two
     * stages; the deep one at D = 128: a third stage) and for DENSE
     * patterns (the trio kernel at D = 64: three consumers, which on a MASK
     * or LIST pattern span two query blocks; the wide one at D = 128: tiles
     * of three 64-key slots, which reads no pattern: forced, it takes DENSE
     * only, and the plan runs its default for the others; the tall one,
     * the default at widths 192 and 256, forced elsewhere runs the
     * default too), their persistent CTAs
     * also taking many tiles each; and the plain kernel where the plan
     * would take them. */
    static const char *const kinds[][2] = {
        { "solo", NULL }, { "solo", "3" }, { "narrow", NULL }, { "narrow", "3" },
        { "deep", NULL }, { "deep", "3" },
        { "trio", NULL }, { "trio", "3" }, { "wide", NULL }, { "wide", "3" },
        { "tall", NULL }, { "tall", "3" }, { "plain", NULL },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        static char kind_label[64];
        snprintf(kind_label, sizeof kind_label, " (%s)", kinds[i][0]);
        setenv("BK_CUDA_ATTENTION_FORWARD", kinds[i][0], 1);
        if (kinds[i][1]) {
            snprintf(kind_label, sizeof kind_label, " (%s, %s CTAs)", kinds[i][0], kinds[i][1]);
            setenv("BK_CUDA_ATTENTION_CTAS", kinds[i][1], 1);
        }
        grid_label = kind_label;
        fast_cases(false);
        hopper_varlen_cases(false);
        unsetenv("BK_CUDA_ATTENTION_CTAS");
    }
    unsetenv("BK_CUDA_ATTENTION_FORWARD");
    grid_label = "";
    kernels_report("attention on CUDA (plans' kernel names)");
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    return tap_done();
}
