/* SPDX-License-Identifier: Apache-2.0 */
/* The conversion op against the reference model (t/lib/convert_ref.c):
 * every pair of the nine types, on layouts of rank 1 to 8 (contiguous,
 * transposed, padded, unit dimensions), inputs that mix random bits
 * (NaN, infinities, subnormals) with values at and near the output's
 * rounding and saturation points; outputs poisoned first, every element
 * compared and every byte between elements checked untouched. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ref.h"
#include "test_util.h"

struct layout {
    const char *name;
    uint32_t rank;
    int64_t extent[8];
    int64_t in_stride[8], out_stride[8]; /* all 0: contiguous */
};

static const struct layout layouts[] = {
    { "[1000] contiguous", 1, { 1000 }, { 0 }, { 0 } },
    { "[37, 29] transposed in, padded out", 2, { 37, 29 }, { 1, 37 }, { 32, 1 } },
    { "[5, 1, 13] padded both", 3, { 5, 1, 13 }, { 40, 40, 3 }, { 30, 7, 2 } },
    { "[2,1,3,1,2,2,1,3] rank 8, strided out", 8, { 2, 1, 3, 1, 2, 2, 1, 3 }, { 0 },
      { 144, 72, 24, 24, 12, 6, 6, 2 } },
    { "[64, 24] contiguous rows", 2, { 64, 24 }, { 0 }, { 0 } },
    { "[1] one element", 1, { 1 }, { 0 }, { 0 } },
};

static size_t type_size(BkDataType t)
{
    return t == BK_DATA_TYPE_F64 ? 8
           : t == BK_DATA_TYPE_F32 || t == BK_DATA_TYPE_I32 || t == BK_DATA_TYPE_U32 ? 4
           : t == BK_DATA_TYPE_I8 || t == BK_DATA_TYPE_U8 ? 1 : 2;
}

static bool is_float(BkDataType t)
{
    return t == BK_DATA_TYPE_F32 || t == BK_DATA_TYPE_F64 || t == BK_DATA_TYPE_F16 ||
           t == BK_DATA_TYPE_BF16;
}

/* Explicit strides (row-major where the layout gives none) and the span
 * in elements. */
static int64_t strides_of(const struct layout *l, const int64_t *given, int64_t *s)
{
    bool zero = true;
    for (uint32_t k = 0; k < l->rank; k++)
        zero &= given[k] == 0;
    int64_t c = 1, span = 1;
    for (uint32_t k = l->rank; k-- > 0;) {
        s[k] = zero ? c : given[k];
        c *= l->extent[k];
        span += (l->extent[k] - 1) * s[k];
    }
    return span;
}

/* A value to convert into out: random bits of the input type, or a value
 * at, or half an output quantum from, a rounding or saturation point. */
static void random_input(struct bkt_rng *rng, BkDataType in, BkDataType out, void *base,
                         int64_t i)
{
    const uint64_t bits = bkt_rand_u64(rng);
    const int pick = (int)bkt_rand_int(rng, 0, 3);
    if (pick == 0 || !is_float(in)) {
        if (!is_float(in) && pick > 1) { /* small integers and the range ends */
            const double ends[] = { 0, 1, -1, 127, 128, -128, -129, 255, 256, 65535, 65536,
                                    2147483647.0, -2147483648.0, 4294967295.0, 2049, 16777217 };
            double v = ends[bkt_rand_int(rng, 0, sizeof ends / sizeof ends[0] - 1)];
            convert_ref_store(in, base, i, convert_ref_round(in, v));
            return;
        }
        memcpy((char *)base + (size_t)i * type_size(in), &bits, type_size(in));
        return;
    }
    double v;
    if (is_float(out)) { /* near a point of the output's grid, at its scale */
        const int e = (int)bkt_rand_int(rng, -140, 130);
        const double frac[] = { 0.5, 0.25, 0.75, 1.0, 0.5 + 0x1p-12, 0.5 - 0x1p-12, 0 };
        const int p = out == BK_DATA_TYPE_BF16 ? 8 : out == BK_DATA_TYPE_F16 ? 11 : 24;
        v = ldexp(bkt_rand_int(rng, 1 << (p - 1), (1 << p) - 1) +
                      frac[bkt_rand_int(rng, 0, 6)], e - p);
    } else { /* halves, near the range ends */
        v = bkt_rand_int(rng, -300, 70000) + 0.5 * (double)bkt_rand_int(rng, -1, 1);
        if (pick == 3)
            v = ldexp(v, (int)bkt_rand_int(rng, 0, 18));
    }
    if (bits & 1)
        v = -v;
    convert_ref_store(in, base, i, convert_ref_round(in, v));
}

static bool run_case(BkContext ctx, struct bkt_rng *rng, BkDataType in, BkDataType out,
                     const struct layout *l)
{
    int64_t is[8], os[8];
    const int64_t ispan = strides_of(l, l->in_stride, is), ospan = strides_of(l, l->out_stride, os);
    const size_t ies = type_size(in), oes = type_size(out);
    char *ih = calloc((size_t)ispan, ies), *oh = malloc((size_t)ospan * oes + 4);
    char *mask = calloc((size_t)ospan, 1);
    int64_t count = 1;
    for (uint32_t k = 0; k < l->rank; k++)
        count *= l->extent[k];
    for (int64_t e = 0; e < ispan; e++)
        random_input(rng, in, out, ih, e);
    for (int64_t b = 0; b < ospan * (int64_t)oes; b += 4)
        memcpy(oh + b, &(uint32_t){ BKT_POISON }, 4);

    BkConvertInfo info = { .sType = BK_STRUCTURE_TYPE_CONVERT_INFO };
    info.input = (BkTensorDesc){ .dataType = in, .rank = l->rank };
    info.output = (BkTensorDesc){ .dataType = out, .rank = l->rank };
    memcpy(info.input.extent, l->extent, sizeof l->extent);
    memcpy(info.output.extent, l->extent, sizeof l->extent);
    memcpy(info.input.stride, l->in_stride, sizeof l->in_stride);
    memcpy(info.output.stride, l->out_stride, sizeof l->out_stride);

    struct bkt_buffer ib = bkt_alloc(ctx, (uint64_t)ispan * ies);
    struct bkt_buffer ob = bkt_alloc(ctx, (uint64_t)ospan * oes);
    bkt_upload(ctx, ib.address, ih, (uint64_t)ispan * ies);
    bkt_upload(ctx, ob.address, oh, (uint64_t)ospan * oes);
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ ib.address, ob.address });
    char *got = malloc((size_t)ospan * oes);
    bkt_download(ctx, got, ob.address, (uint64_t)ospan * oes);

    long bad = 0;
    for (int64_t n = 0; r == BK_SUCCESS && n < count; n++) {
        int64_t rem = n, io = 0, oo = 0;
        for (uint32_t k = l->rank; k-- > 0;) {
            const int64_t idx = rem % l->extent[k];
            rem /= l->extent[k];
            io += idx * is[k];
            oo += idx * os[k];
        }
        mask[oo] = 1;
        const double x = convert_ref_load(in, ih, io);
        const double want = convert_ref_round(out, x);
        const double g = convert_ref_load(out, got, oo);
        bool same = convert_ref_same(g, want);
        if (in == out) /* a copy: the bits */
            same = memcmp(got + oo * (int64_t)oes, ih + io * (int64_t)ies, ies) == 0;
        if (!same && bad++ < 3)
            tap_diag("%s -> %s element %lld: %.17g gave %.17g, want %.17g", convert_type_name(in),
                     convert_type_name(out), (long long)n, x, g, want);
    }
    for (int64_t e = 0; r == BK_SUCCESS && e < ospan; e++)
        if (!mask[e] && memcmp(got + e * (int64_t)oes, oh + e * (int64_t)oes, oes) != 0 &&
            bad++ < 3)
            tap_diag("%s -> %s: gap element %lld written", convert_type_name(in),
                     convert_type_name(out), (long long)e);
    const bool ok = tap_ok(r == BK_SUCCESS && bad == 0, "%s -> %s, %s (%ld wrong)",
                           convert_type_name(in), convert_type_name(out), l->name, bad);
    bkDestroyPlan(plan);
    bkt_free(ctx, &ib);
    bkt_free(ctx, &ob);
    free(ih), free(oh), free(got), free(mask);
    return ok;
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(500);
    for (unsigned a = 0; a < CONVERT_TYPE_COUNT; a++)
        for (unsigned b = 0; b < CONVERT_TYPE_COUNT; b++)
            for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
                run_case(ctx, &rng, convert_types[a], convert_types[b], &layouts[l]);
    bkDestroyContext(ctx);
    return tap_done();
}
