/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activation test cases: see gated_case.h. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gated_case.h"

/* ---- Shapes and layouts ------------------------------------------------ */

const char *gated_layout_name(enum gated_layout layout)
{
    static const char *const names[] = { "contiguous", "padded", "transposed",
                                         "transposed+padded" };
    return layout < GATED_LAYOUT_COUNT ? names[layout] : "?";
}

static void add_shape(struct gated_shape *shapes, unsigned *n, unsigned max, uint32_t rank,
                      uint32_t split, const int64_t *half, enum gated_layout lx,
                      enum gated_layout ly, enum gated_layout ldx)
{
    if (*n >= max)
        return;
    struct gated_shape *s = &shapes[(*n)++];
    memset(s, 0, sizeof *s);
    s->rank = rank;
    s->split = split;
    memcpy(s->half, half, sizeof(int64_t) * rank);
    s->layout[0] = lx, s->layout[1] = ly, s->layout[2] = ldx;
}

/* Random extents in [lo, hi] for every axis. */
static const int64_t *random_extents(struct bkt_rng *rng, uint32_t rank, int64_t lo, int64_t hi)
{
    static int64_t e[BK_MAX_TENSOR_RANK];
    for (uint32_t k = 0; k < rank; k++)
        e[k] = bkt_rand_int(rng, lo, hi);
    return e;
}

unsigned gated_shapes(struct bkt_rng *rng, struct gated_shape *s, unsigned max)
{
    const enum gated_layout C = GATED_CONTIGUOUS, P = GATED_PADDED, T = GATED_TRANSPOSED,
                            TP = GATED_TRANSPOSED_PADDED;
    unsigned n = 0;
    add_shape(s, &n, max, 1, 0, (int64_t[]){ 37 }, C, C, C);
    add_shape(s, &n, max, 2, 1, (int64_t[]){ 5, 12 }, C, C, C);
    add_shape(s, &n, max, 2, 0, (int64_t[]){ 6, 7 }, C, P, P);
    add_shape(s, &n, max, 3, 1, (int64_t[]){ 3, bkt_rand_int(rng, 2, 6), 5 }, P, P, P);
    add_shape(s, &n, max, 3, 2, random_extents(rng, 3, 2, 7), T, TP, T);
    add_shape(s, &n, max, 4, 2, (int64_t[]){ 2, 3, 4, 5 }, TP, T, P);
    add_shape(s, &n, max, 5, 0, random_extents(rng, 5, 1, 4), C, T, TP);
    add_shape(s, &n, max, 6, 3, random_extents(rng, 6, 1, 3), P, TP, C);
    add_shape(s, &n, max, 7, 6, random_extents(rng, 7, 1, 3), T, C, P);
    add_shape(s, &n, max, 8, 7, random_extents(rng, 8, 1, 3), TP, TP, TP);
    add_shape(s, &n, max, 8, 0, random_extents(rng, 8, 1, 3), C, C, C);
    add_shape(s, &n, max, 3, 1, (int64_t[]){ 4, 1, 9 }, P, C, T);
    add_shape(s, &n, max, 4, 3, (int64_t[]){ 1, 1, 1, 1 }, C, C, C);
    /* Inner extents and gate offsets of whole 16-byte vectors, aligned and
     * then bound one element past the alignment. */
    add_shape(s, &n, max, 2, 1, (int64_t[]){ 6, 64 }, C, C, C);
    add_shape(s, &n, max, 3, 0, (int64_t[]){ 2, 4, 32 }, C, C, C);
    unsigned before = n;
    add_shape(s, &n, max, 2, 1, (int64_t[]){ 6, 64 }, C, C, C);
    if (n > before)
        s[before].offset = 1;
    return n;
}

/* Strides for one tensor in the given layout. Every layout is injective
 * (no two indices share an element), as written tensors must be. */
static void layout_strides(enum gated_layout layout, uint32_t rank, const int64_t *ext,
                           int64_t *stride, struct bkt_rng *rng)
{
    uint32_t order[BK_MAX_TENSOR_RANK];   /* order[rank-1] is the fastest axis */
    for (uint32_t k = 0; k < rank; k++)
        order[k] = k;
    bool transposed = layout == GATED_TRANSPOSED || layout == GATED_TRANSPOSED_PADDED;
    bool padded = layout == GATED_PADDED || layout == GATED_TRANSPOSED_PADDED;
    if (transposed && rank > 1) {
        for (uint32_t k = rank - 1; k > 0; k--) {
            uint32_t j = (uint32_t)bkt_rand_int(rng, 0, k), t = order[k];
            order[k] = order[j], order[j] = t;
        }
        bool identity = true;
        for (uint32_t k = 0; k < rank; k++)
            identity = identity && order[k] == k;
        if (identity)   /* make sure it is a real transposition */
            for (uint32_t k = 0; k < rank; k++)
                order[k] = rank - 1 - k;
    }
    int64_t acc = padded && rank == 1 ? 2 : 1;
    for (uint32_t i = rank; i-- > 0;) {
        uint32_t k = order[i];
        stride[k] = acc;
        acc *= ext[k] > 0 ? ext[k] : 1;
        if (padded)   /* at least one gap right above the fastest axis */
            acc += i == rank - 1 ? bkt_rand_int(rng, 1, 3) : bkt_rand_int(rng, 0, 3);
    }
}

static int64_t span_of(uint32_t rank, const int64_t *ext, const int64_t *stride)
{
    int64_t last = 0;
    for (uint32_t k = 0; k < rank; k++) {
        if (ext[k] == 0)
            return 0;
        last += (ext[k] - 1) * stride[k];
    }
    return last + 1;
}

void gated_case_init(struct gated_case *c, BkGatedActivationKind kind, BkDataType type,
                     bool backward, const struct gated_shape *shape, struct bkt_rng *rng)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->type = type;
    c->backward = backward;
    c->rank = shape->rank;
    c->split = shape->split;
    c->offset = shape->offset;
    for (uint32_t k = 0; k < c->rank; k++) {
        c->extent[GATED_Y][k] = shape->half[k];
        c->extent[GATED_X][k] = c->extent[GATED_DX][k] =
            shape->half[k] * (k == c->split ? 2 : 1);
    }
    int len = snprintf(c->label, sizeof c->label, "%s %s %s rank %u split %u half {",
                       gated_kind_name(kind), bkt_type_name(type), backward ? "backward" : "forward",
                       c->rank, c->split);
    for (uint32_t k = 0; k < c->rank; k++)
        len += snprintf(c->label + len, sizeof c->label - (size_t)len, "%s%lld", k ? "," : "",
                        (long long)shape->half[k]);
    len += snprintf(c->label + len, sizeof c->label - (size_t)len, "}");
    if (c->offset)
        len += snprintf(c->label + len, sizeof c->label - (size_t)len, " offset %lld",
                        (long long)c->offset);
    static const char *const names[3] = { "x", "y", "dx" };
    for (unsigned t = 0; t < gated_case_tensors(c); t++) {
        layout_strides(shape->layout[t], c->rank, c->extent[t], c->stride[t], rng);
        c->contiguous[t] = shape->layout[t] == GATED_CONTIGUOUS;
        c->span[t] = span_of(c->rank, c->extent[t], c->stride[t]);
        len += snprintf(c->label + len, sizeof c->label - (size_t)len, " %s:%s",
                        backward && t == GATED_DY ? "dy" : names[t],
                        gated_layout_name(shape->layout[t]));
    }
}

unsigned gated_case_tensors(const struct gated_case *c)
{
    return c->backward ? 3 : 2;
}

unsigned gated_case_output(const struct gated_case *c)
{
    return c->backward ? GATED_DX : GATED_Y;
}

void gated_case_desc(const struct gated_case *c, unsigned t, BkTensorDesc *desc)
{
    memset(desc, 0, sizeof *desc);
    desc->dataType = c->type;
    desc->rank = c->rank;
    for (uint32_t k = 0; k < c->rank; k++) {
        desc->extent[k] = c->extent[t][k];
        desc->stride[k] = c->contiguous[t] ? 0 : c->stride[t][k];
    }
}

void gated_case_info(const struct gated_case *c, union gated_info *info)
{
    memset(info, 0, sizeof *info);
    if (c->backward) {
        BkGatedActivationBackwardInfo *b = &info->backward;
        b->sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO;
        b->kind = c->kind;
        b->splitAxis = c->split;
        gated_case_desc(c, GATED_X, &b->input);
        gated_case_desc(c, GATED_DY, &b->gradOutput);
        gated_case_desc(c, GATED_DX, &b->gradInput);
    } else {
        BkGatedActivationInfo *f = &info->forward;
        f->sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO;
        f->kind = c->kind;
        f->splitAxis = c->split;
        gated_case_desc(c, GATED_X, &f->input);
        gated_case_desc(c, GATED_Y, &f->output);
    }
}

/* ---- Data ------------------------------------------------------------------ */

void gated_data_alloc(const struct gated_case *c, struct gated_data *d)
{
    memset(d, 0, sizeof *d);
    for (unsigned t = 0; t < gated_case_tensors(c); t++) {
        uint64_t bytes = (uint64_t)c->span[t] * bkt_type_size(c->type);
        d->bytes[t] = bytes ? (bytes + 3) / 4 * 4 : 4;
        d->host[t] = calloc(1, d->bytes[t]);
        if (!d->host[t])
            tap_bail("out of memory for %llu bytes", (unsigned long long)d->bytes[t]);
    }
}

void gated_data_free(struct gated_data *d)
{
    for (unsigned t = 0; t < 3; t++)
        free(d->host[t]);
    memset(d, 0, sizeof *d);
}

static double random_input(struct bkt_rng *rng, BkDataType type, double range, bool avoid_kink)
{
    for (;;) {
        bool wide = bkt_rand_int(rng, 0, 7) == 0;
        double v = bkt_rand_value(rng, type, wide ? -30.0 : -range, wide ? 30.0 : range);
        if (!avoid_kink || fabs(v) >= 1e-3)
            return v;
    }
}

void gated_data_randomize(const struct gated_case *c, struct gated_data *d, struct bkt_rng *rng,
                          bool avoid_kink)
{
    for (int64_t i = 0; i < c->span[GATED_X]; i++)
        bkt_store(d->host[GATED_X], c->type, i, random_input(rng, c->type, 4.0, avoid_kink));
    if (c->backward)
        for (int64_t i = 0; i < c->span[GATED_DY]; i++)
            bkt_store(d->host[GATED_DY], c->type, i, bkt_rand_value(rng, c->type, -2.0, 2.0));
}

BkResult gated_case_run(BkContext ctx, const struct gated_case *c, struct gated_data *d)
{
    const unsigned n = gated_case_tensors(c), out = gated_case_output(c);
    const uint64_t skip = (uint64_t)c->offset * bkt_type_size(c->type);
    struct bkt_buffer buf[3];
    BkDeviceAddress bindings[3];
    for (unsigned t = 0; t < n; t++) {
        buf[t] = bkt_alloc(ctx, skip + d->bytes[t]);
        bindings[t] = buf[t].address + skip;
        if (t != out)
            bkt_upload(ctx, bindings[t], d->host[t], d->bytes[t]);
    }
    BkPlan plan = BK_NULL_HANDLE;
    union gated_info info;
    gated_case_info(c, &info);
    const char *step = "bkCmdFillMemory (poison)";
    BkResult r = bkt_fill(ctx, buf[out].address, buf[out].size, BKT_POISON);
    if (r == BK_SUCCESS) {
        step = "bkCreatePlan";
        r = bkt_create_plan(ctx, &info, &plan);
    }
    if (r == BK_SUCCESS) {
        step = "run";
        r = bkt_run(ctx, plan, n, bindings);
    }
    if (r == BK_SUCCESS) {
        bkt_download(ctx, d->host[out], bindings[out], d->bytes[out]);
        const uint32_t poison = BKT_POISON;
        unsigned char prefix[64];
        d->prefix_written = 0;
        for (uint64_t done = 0; done < skip; done += sizeof prefix) {
            uint64_t len = skip - done < sizeof prefix ? skip - done : sizeof prefix;
            bkt_download(ctx, prefix, buf[out].address + done, len);
            for (uint64_t i = 0; i < len; i++)
                d->prefix_written += prefix[i] != ((const unsigned char *)&poison)[(done + i) % 4];
        }
    } else
        tap_diag("%s: %s failed: %s (%s)", c->label, step, bkResultString(r),
                 bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    for (unsigned t = 0; t < n; t++)
        bkt_free(ctx, &buf[t]);
    return r;
}

/* ---- Checks ----------------------------------------------------------------- */

void gated_for_each(const struct gated_case *c, gated_visit_fn visit, void *user)
{
    const int64_t *half = c->extent[GATED_Y];
    int64_t count = 1, idx[BK_MAX_TENSOR_RANK] = { 0 };
    for (uint32_t k = 0; k < c->rank; k++)
        count *= half[k];
    const int64_t n = half[c->split];
    for (int64_t i = 0; i < count; i++) {
        struct gated_offsets o = { 0 };
        for (uint32_t k = 0; k < c->rank; k++) {
            o.xa += idx[k] * c->stride[GATED_X][k];
            o.y += idx[k] * c->stride[GATED_Y][k];
            if (c->backward)
                o.dxa += idx[k] * c->stride[GATED_DX][k];
        }
        o.xb = o.xa + n * c->stride[GATED_X][c->split];
        if (c->backward)
            o.dxb = o.dxa + n * c->stride[GATED_DX][c->split];
        visit(user, &o);
        for (uint32_t k = c->rank; k-- > 0;) {
            if (++idx[k] < half[k])
                break;
            idx[k] = 0;
        }
    }
}

struct bkt_tolerance gated_reference_tolerance(BkDataType type)
{
    switch (type) {
    case BK_DATA_TYPE_F64: return (struct bkt_tolerance){ 1e-13, 1e-15, 1 };
    case BK_DATA_TYPE_F32: return (struct bkt_tolerance){ 2e-6, 2e-7, 1 };
    case BK_DATA_TYPE_F16: return (struct bkt_tolerance){ 1e-3, 1e-6, 1 };
    default: return (struct bkt_tolerance){ 8e-3, 1e-6, 1 };
    }
}

/* State of one element-by-element comparison. */
struct compare {
    const struct gated_case *c;
    const struct gated_data *d, *ref;   /* ref NULL: the closed forms */
    struct bkt_tolerance tol;
    long bad;
};

static void compare_one(struct compare *s, const char *what, int64_t off, long double want,
                        double got, double scale, double a, double b)
{
    if (bkt_close(want, got, s->c->type, s->tol, scale))
        return;
    if (s->bad++ < 3)
        tap_diag("%s[%lld] (a = %.9g, b = %.9g): expected %.17Lg, got %.17g", what,
                 (long long)off, a, b, want, got);
}

static void compare_visit(void *user, const struct gated_offsets *o)
{
    struct compare *s = user;
    const struct gated_case *c = s->c;
    const BkDataType t = c->type;
    double a = bkt_load(s->d->host[GATED_X], t, o->xa), b = bkt_load(s->d->host[GATED_X], t, o->xb);
    double scale = (1 + fabs(a)) * (1 + fabs(b));
    if (!c->backward) {
        long double want = s->ref ? bkt_load(s->ref->host[GATED_Y], t, o->y)
                                  : gated_ref_forward(c->kind, a, b);
        compare_one(s, "y", o->y, want, bkt_load(s->d->host[GATED_Y], t, o->y), scale, a, b);
        return;
    }
    double dy = bkt_load(s->d->host[GATED_DY], t, o->y);
    long double da, db;
    if (s->ref) {
        da = bkt_load(s->ref->host[GATED_DX], t, o->dxa);
        db = bkt_load(s->ref->host[GATED_DX], t, o->dxb);
    } else {
        gated_ref_backward(c->kind, a, b, dy, &da, &db);
    }
    scale *= fabs(dy);
    compare_one(s, "dx(a)", o->dxa, da, bkt_load(s->d->host[GATED_DX], t, o->dxa), scale, a, b);
    compare_one(s, "dx(b)", o->dxb, db, bkt_load(s->d->host[GATED_DX], t, o->dxb), scale, a, b);
}

/* Marks the output elements, then compares every other byte with the
 * poison pattern. */
struct gap_marks { const struct gated_case *c; unsigned char *mark; };

static void mark_visit(void *user, const struct gated_offsets *o)
{
    struct gap_marks *m = user;
    if (m->c->backward)
        m->mark[o->dxa] = m->mark[o->dxb] = 1;
    else
        m->mark[o->y] = 1;
}

long gated_check_gaps(const struct gated_case *c, const struct gated_data *d)
{
    const unsigned out = gated_case_output(c);
    const size_t esize = bkt_type_size(c->type);
    struct gap_marks m = { c, calloc(1, (size_t)c->span[out] + 1) };
    if (!m.mark)
        tap_bail("out of memory");
    gated_for_each(c, mark_visit, &m);
    const uint32_t poison = BKT_POISON;
    const unsigned char *bytes = d->host[out], *pattern = (const unsigned char *)&poison;
    long bad = 0;
    for (uint64_t i = 0; i < d->bytes[out]; i++) {
        uint64_t e = i / esize;
        if (e < (uint64_t)c->span[out] && m.mark[e])
            continue;
        if (bytes[i] != pattern[i % 4] && bad++ == 0)
            tap_diag("byte %llu of the output is no element but was written (0x%02x)",
                     (unsigned long long)i, bytes[i]);
    }
    free(m.mark);
    if (d->prefix_written)
        tap_diag("%ld bytes before the output's offset were written", d->prefix_written);
    return bad + d->prefix_written;
}

long gated_check_reference(const struct gated_case *c, const struct gated_data *d,
                           struct bkt_tolerance tol)
{
    struct compare s = { c, d, NULL, tol, 0 };
    gated_for_each(c, compare_visit, &s);
    if (s.bad > 3)
        tap_diag("... %ld elements out of tolerance in all", s.bad);
    return s.bad + gated_check_gaps(c, d);
}

long gated_check_against(const struct gated_case *c, const struct gated_data *d,
                         const struct gated_data *ref, struct bkt_tolerance tol)
{
    struct compare s = { c, d, ref, tol, 0 };
    gated_for_each(c, compare_visit, &s);
    if (s.bad > 3)
        tap_diag("... %ld elements out of tolerance in all", s.bad);
    return s.bad + gated_check_gaps(c, d);
}

bool gated_case_test_reference(BkContext ctx, const struct gated_case *c, struct bkt_rng *rng)
{
    struct gated_data d;
    gated_data_alloc(c, &d);
    gated_data_randomize(c, &d, rng, false);
    bool ok = gated_case_run(ctx, c, &d) == BK_SUCCESS &&
              gated_check_reference(c, &d, gated_reference_tolerance(c->type)) == 0;
    gated_data_free(&d);
    return tap_ok(ok, "%s", c->label);
}

void gated_case_test_all(BkContext ctx, bool backward, const struct gated_shape *shapes,
                         unsigned count, struct bkt_rng *rng)
{
    for (unsigned k = 0; k < GATED_KIND_COUNT; k++)
        for (unsigned t = 0; t < GATED_TYPE_COUNT; t++)
            for (unsigned s = 0; s < count; s++) {
                struct gated_case c;
                gated_case_init(&c, gated_kinds[k], gated_types[t], backward, &shapes[s], rng);
                gated_case_test_reference(ctx, &c, rng);
            }
}
