/* SPDX-License-Identifier: Apache-2.0 */
/* W4A16 on the device under test: quantizing from F32, F16 and BF16 gives
 * the documented values and scales bit for bit (ties to even, zero, NaN
 * and infinite columns by hand too); packing matches an independent
 * Marlin packer (t/lib/w4a16_ref.c) byte for byte and unpacking gives the
 * plain form back; the GEMM matches a long double reference for both
 * types, every group size, strided and column-major A and C, with and
 * without perm; GPTQ checkpoints (exact and minus-one zeros, with and
 * without act-order g_idx) repack to the reference packing and perm, and
 * the GEMM on them matches the checkpoint's own dequantization; reports
 * of asymmetric zeros, bad g_idx and uneven groups name the first bad
 * entry and count them, in the documented order. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"
#include "w4a16_ref.h"
#include "w4a16_util.h"

static const int32_t group_sizes[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL };
#define GROUP_SIZES (sizeof group_sizes / sizeof group_sizes[0])
static const BkDataType half_types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };

/* ---- Host arrays and device blobs ----------------------------------------- */

static uint8_t get_u8(const struct tmat *m, int64_t i, int64_t j)
{
    return *(const uint8_t *)tmat_elem(m, i, j);
}

static uint16_t get_u16(const struct tmat *m, int64_t i, int64_t j)
{
    uint16_t v;
    memcpy(&v, tmat_elem(m, i, j), 2);
    return v;
}

/* A row-major host array [rows][cols] of es-byte elements into m. */
static void tmat_from(struct tmat *m, const void *src)
{
    const size_t es = bkt_type_size(m->type);
    for (int64_t i = 0; i < m->rows; i++)
        for (int64_t j = 0; j < m->cols; j++)
            memcpy(tmat_elem(m, i, j), (const char *)src + (size_t)(i * m->cols + j) * es, es);
}

static BkTensorDesc tdesc(const struct tmat *m)
{
    BkTensorDesc d;
    tmat_desc(m, &d);
    return d;
}

/* ---- Conversions ------------------------------------------------------------- */

/* Tensors of a conversion; those it does not use are NULL (absent). */
struct convert_args {
    struct tmat *weight, *quantized, *scales;
    struct w4a16_blob *packed, *packed_scales;
};

static BkResult convert_run(BkContext ctx, BkW4A16Conversion conv, int32_t group_size,
                            int64_t k, int64_t n, BkDataType scale_type,
                            const struct convert_args *t, const char *label)
{
    const int64_t groups = k / w4a16_ref_group_rows(group_size, k);
    BkW4A16ConvertInfo info = { .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO,
                                .conversion = conv, .groupSize = group_size };
    if (t->weight)
        info.weight = tdesc(t->weight);
    info.quantized = tdesc(t->quantized);
    info.scales = tdesc(t->scales);
    if (t->packed) {
        info.packed = w4a16_mat(BK_DATA_TYPE_I32, k / 16, 2 * n);
        info.packedScales = w4a16_mat(scale_type, groups, n);
    }
    const BkDeviceAddress bindings[5] = {
        t->weight ? t->weight->dev.address : 0, t->quantized->dev.address,
        t->scales->dev.address, t->packed ? t->packed->dev.address : 0,
        t->packed ? t->packed_scales->dev.address : 0,
    };
    BkResult r = w4a16_plan_run(ctx, &info, 5, bindings, label);
    if (r == BK_SUCCESS && conv == BK_W4A16_PACK) {
        w4a16_blob_download(ctx, t->packed);
        w4a16_blob_download(ctx, t->packed_scales);
    } else if (r == BK_SUCCESS) {
        tmat_download(ctx, t->quantized);
        tmat_download(ctx, t->scales);
    }
    return r;
}

/* Hand-made column 0 of group 0 (under a scale of exactly 1/8: max|w| is
 * 7.5/8) with the q each must get: ties go to even. */
static const struct {
    double w;       /* in units of the scale */
    uint8_t q;
} tie_rows[] = {
    { 7.5, 15 }, { 2.5, 10 }, { 3.5, 12 }, { -0.5, 8 }, { -7.5, 0 }, { 1.5, 10 }, { -2.5, 6 },
    { 0.5, 8 },  { -1.5, 6 }, { 6.5, 14 }, { 0.25, 8 }, { -3.0, 5 },
};
#define TIE_ROWS (sizeof tie_rows / sizeof tie_rows[0])

/* Quantize random weights (a random magnitude per column) with special
 * columns in group 0: the ties above, all zeros (scale 0, q 8), a NaN
 * (not counted, q 8) and an infinity (scale inf, every q 8). */
static void test_quantize(BkContext ctx, struct bkt_rng *rng)
{
    static const BkDataType weight_types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16,
                                               BK_DATA_TYPE_BF16 };
    for (size_t wt = 0; wt < 3; wt++)
        for (size_t st = 0; st < 2; st++)
            for (size_t gi = 0; gi < GROUP_SIZES; gi++) {
                const BkDataType wtype = weight_types[wt], stype = half_types[st];
                const int32_t gs = group_sizes[gi];
                const int64_t k = w4a16_random_k(rng, gs, 3), n = bkt_rand_int(rng, 4, 80);
                const int64_t groups = k / w4a16_ref_group_rows(gs, k);
                char label[128];
                snprintf(label, sizeof label, "quantize %s -> %s scales, %s, [%lld, %lld]",
                         bkt_type_name(wtype), bkt_type_name(stype), w4a16_group_name(gs),
                         (long long)k, (long long)n);
                struct tmat w, q, s;
                tmat_init(&w, wtype, 0, k, n, tmat_random_layout(rng), rng);
                tmat_init(&q, BK_DATA_TYPE_U8, 0, k, n, tmat_random_layout(rng), rng);
                tmat_init(&s, stype, 0, groups, n, tmat_random_layout(rng), rng);
                for (int64_t j = 0; j < n; j++) {
                    const double mag = ldexp(1.0, (int)bkt_rand_int(rng, -8, 2));
                    for (int64_t i = 0; i < k; i++)
                        tmat_set(&w, 0, i, j, bkt_rand_value(rng, wtype, -mag, mag));
                }
                for (int64_t i = 0; i < k; i++) {
                    tmat_set(&w, 0, i, 0, i < (int64_t)TIE_ROWS ? tie_rows[i].w / 8 : 0.0);
                    tmat_set(&w, 0, i, 1, 0.0);
                }
                tmat_set(&w, 0, 1, 2, NAN);
                tmat_set(&w, 0, 3, 3, INFINITY);
                tmat_poison(&q);
                tmat_poison(&s);
                tmat_upload(ctx, &w);
                tmat_upload(ctx, &q);
                tmat_upload(ctx, &s);

                float *wf = w4a16_xmalloc((size_t)(k * n) * sizeof *wf);
                uint8_t *want_q = w4a16_xmalloc((size_t)(k * n));
                uint16_t *want_s = w4a16_xmalloc((size_t)(groups * n) * 2);
                for (int64_t i = 0; i < k; i++)
                    for (int64_t j = 0; j < n; j++)
                        wf[i * n + j] = (float)tmat_get(&w, 0, i, j);
                w4a16_ref_quantize(wf, k, n, gs, stype, want_q, want_s);

                const struct convert_args args = { .weight = &w, .quantized = &q, .scales = &s };
                const bool ran = convert_run(ctx, BK_W4A16_QUANTIZE, gs, k, n, stype, &args,
                                             label) == BK_SUCCESS;
                long bad = 0, hand = 0;
                for (int64_t i = 0; ran && i < k; i++)
                    for (int64_t j = 0; j < n; j++)
                        if (get_u8(&q, i, j) != want_q[i * n + j] && bad++ < 4)
                            tap_diag("%s: q[%lld, %lld] = %u for w = %g, expected %u", label,
                                     (long long)i, (long long)j, get_u8(&q, i, j),
                                     (double)wf[i * n + j], want_q[i * n + j]);
                for (int64_t g = 0; ran && g < groups; g++)
                    for (int64_t j = 0; j < n; j++)
                        if (get_u16(&s, g, j) != want_s[g * n + j] && bad++ < 4)
                            tap_diag("%s: scales[%lld, %lld] = 0x%04x, expected 0x%04x", label,
                                     (long long)g, (long long)j, get_u16(&s, g, j),
                                     want_s[g * n + j]);
                bad += tmat_gap_errors(&q) + tmat_gap_errors(&s);
                tap_ok(ran && bad == 0, "%s: values and scales bit for bit (w %s, q %s, s %s)",
                       label, tmat_layout_name(w.layout), tmat_layout_name(q.layout),
                       tmat_layout_name(s.layout));
                /* The special columns, against the rule read by hand. */
                const double scale0 = tmat_get(&s, 0, 0, 0);
                for (size_t i = 0; ran && i < TIE_ROWS && (int64_t)i < k; i++)
                    if (get_u8(&q, (int64_t)i, 0) != tie_rows[i].q && hand++ < 4)
                        tap_diag("%s: w = %g x scale gave q %u, expected %u", label,
                                 tie_rows[i].w, get_u8(&q, (int64_t)i, 0), tie_rows[i].q);
                for (int64_t i = 0; ran && i < k; i++)   /* the infinity is in group 0 */
                    hand += get_u8(&q, i, 1) != 8 ||
                            (i < w4a16_ref_group_rows(gs, k) && get_u8(&q, i, 3) != 8);
                hand += ran && get_u8(&q, 1, 2) != 8;
                const double scale3 = tmat_get(&s, 0, 0, 3);
                tap_ok(ran && hand == 0 && scale0 == 0.125 && tmat_get(&s, 0, 0, 1) == 0 &&
                           isinf(scale3) && scale3 > 0 && isfinite(tmat_get(&s, 0, 0, 2)),
                       "%s: ties to even; a zero column has scale 0 and q 8; NaN gives 8; an "
                       "infinity makes the scale inf and every q 8", label);
                free(wf);
                free(want_q);
                free(want_s);
                tmat_free(ctx, &w);
                tmat_free(ctx, &q);
                tmat_free(ctx, &s);
            }
}

/* A random plain form: q [k][n] (0..15, or any byte when wide) and
 * scales [groups][n], row-major host arrays. */
static void random_plain(struct bkt_rng *rng, BkDataType type, int64_t k, int64_t n,
                         int64_t groups, bool wide, uint8_t *q, uint16_t *scales)
{
    for (int64_t i = 0; i < k * n; i++)
        q[i] = (uint8_t)bkt_rand_int(rng, 0, wide ? 255 : 15);
    for (int64_t i = 0; i < groups * n; i++)
        scales[i] = w4a16_random_half(rng, type, 1e-3, 2.0, true);
}

/* Pack against the reference packer, byte for byte; unpack back into
 * other layouts. wide: q values past 15, of which pack keeps the low 4
 * bits. */
static void pack_case(BkContext ctx, struct bkt_rng *rng, BkDataType type, int32_t gs, int64_t k,
                      int64_t n, bool wide)
{
    const int64_t groups = k / w4a16_ref_group_rows(gs, k);
    char label[128];
    snprintf(label, sizeof label, "pack %s, %s, [%lld, %lld]%s", bkt_type_name(type),
             w4a16_group_name(gs), (long long)k, (long long)n, wide ? ", q with high bits" : "");
    uint8_t *q = w4a16_xmalloc((size_t)(k * n));
    uint16_t *scales = w4a16_xmalloc((size_t)(groups * n) * 2);
    random_plain(rng, type, k, n, groups, wide, q, scales);
    uint32_t *want = w4a16_xmalloc((size_t)(k / 16 * 2 * n) * 4);
    uint16_t *want_s = w4a16_xmalloc((size_t)(groups * n) * 2);
    w4a16_ref_pack(q, scales, k, n, gs, want, want_s);

    struct tmat tq, ts;
    tmat_init(&tq, BK_DATA_TYPE_U8, 0, k, n, tmat_random_layout(rng), rng);
    tmat_init(&ts, type, 0, groups, n, tmat_random_layout(rng), rng);
    tmat_poison(&tq);
    tmat_poison(&ts);
    tmat_from(&tq, q);
    tmat_from(&ts, scales);
    tmat_upload(ctx, &tq);
    tmat_upload(ctx, &ts);
    struct w4a16_blob packed, pscales;
    w4a16_blob_init(ctx, &packed, (uint64_t)(k / 16 * 2 * n) * 4);
    w4a16_blob_init(ctx, &pscales, (uint64_t)(groups * n) * 2);
    struct convert_args args = { .quantized = &tq, .scales = &ts, .packed = &packed,
                                 .packed_scales = &pscales };
    bool ran = convert_run(ctx, BK_W4A16_PACK, gs, k, n, type, &args, label) == BK_SUCCESS;
    long bad = 0;
    for (int64_t i = 0; ran && i < k / 16 * 2 * n; i++)
        if (((uint32_t *)packed.host)[i] != want[i] && bad++ < 4)
            tap_diag("%s: packed word %lld (row %lld) = 0x%08x, Marlin's packer gives 0x%08x",
                     label, (long long)i, (long long)(i / (2 * n)), ((uint32_t *)packed.host)[i],
                     want[i]);
    for (int64_t i = 0; ran && i < groups * n; i++)
        if (((uint16_t *)pscales.host)[i] != want_s[i] && bad++ < 4)
            tap_diag("%s: packedScales[%lld] = 0x%04x, Marlin's packer gives 0x%04x", label,
                     (long long)i, ((uint16_t *)pscales.host)[i], want_s[i]);
    tap_ok(ran && bad == 0, "%s: packed and packedScales are Marlin's, byte for byte (q %s, "
           "scales %s)", label, tmat_layout_name(tq.layout), tmat_layout_name(ts.layout));

    struct tmat bq, bs;
    tmat_init(&bq, BK_DATA_TYPE_U8, 0, k, n, tmat_random_layout(rng), rng);
    tmat_init(&bs, type, 0, groups, n, tmat_random_layout(rng), rng);
    tmat_poison(&bq);
    tmat_poison(&bs);
    tmat_upload(ctx, &bq);
    tmat_upload(ctx, &bs);
    args = (struct convert_args){ .quantized = &bq, .scales = &bs, .packed = &packed,
                                  .packed_scales = &pscales };
    ran = ran && convert_run(ctx, BK_W4A16_UNPACK, gs, k, n, type, &args, label) == BK_SUCCESS;
    bad = 0;
    for (int64_t i = 0; ran && i < k; i++)
        for (int64_t j = 0; j < n; j++)
            if (get_u8(&bq, i, j) != (q[i * n + j] & 15) && bad++ < 4)
                tap_diag("%s: unpacked q[%lld, %lld] = %u, expected %u", label, (long long)i,
                         (long long)j, get_u8(&bq, i, j), q[i * n + j] & 15);
    for (int64_t g = 0; ran && g < groups; g++)
        for (int64_t j = 0; j < n; j++)
            if (get_u16(&bs, g, j) != scales[g * n + j] && bad++ < 4)
                tap_diag("%s: unpacked scales[%lld, %lld] = 0x%04x, expected 0x%04x", label,
                         (long long)g, (long long)j, get_u16(&bs, g, j), scales[g * n + j]);
    bad += tmat_gap_errors(&bq) + tmat_gap_errors(&bs);
    tap_ok(ran && bad == 0, "%s: unpack (q %s, scales %s) gives the plain form back", label,
           tmat_layout_name(bq.layout), tmat_layout_name(bs.layout));
    tmat_free(ctx, &tq);
    tmat_free(ctx, &ts);
    tmat_free(ctx, &bq);
    tmat_free(ctx, &bs);
    w4a16_blob_free(ctx, &packed);
    w4a16_blob_free(ctx, &pscales);
    free(q);
    free(scales);
    free(want);
    free(want_s);
}

static void test_pack(BkContext ctx, struct bkt_rng *rng)
{
    for (size_t t = 0; t < 2; t++)
        for (size_t gi = 0; gi < GROUP_SIZES; gi++)
            pack_case(ctx, rng, half_types[t], group_sizes[gi],
                      w4a16_random_k(rng, group_sizes[gi], 2), 64 * bkt_rand_int(rng, 1, 4), false);
    pack_case(ctx, rng, BK_DATA_TYPE_F16, 32, 32, 64, false);       /* the smallest */
    pack_case(ctx, rng, BK_DATA_TYPE_BF16, BK_W4A16_GROUP_PER_CHANNEL, 16, 64, false);
    pack_case(ctx, rng, BK_DATA_TYPE_F16, 128, 256, 256, false);
    pack_case(ctx, rng, BK_DATA_TYPE_BF16, 64, 128, 128, true);
}

/* ---- GEMM ----------------------------------------------------------------------- */

/* Run the GEMM on uploaded packed weights; perm NULL: not bound. */
static BkResult gemm_run(BkContext ctx, BkDataType type, int32_t gs, int64_t k, int64_t n,
                         struct tmat *a, struct w4a16_blob *packed, struct w4a16_blob *pscales,
                         struct w4a16_blob *perm, struct tmat *c, const char *label)
{
    const int64_t groups = k / w4a16_ref_group_rows(gs, k);
    BkW4A16GemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = gs,
        .a = tdesc(a), .packed = w4a16_mat(BK_DATA_TYPE_I32, k / 16, 2 * n),
        .packedScales = w4a16_mat(type, groups, n), .c = tdesc(c),
    };
    if (perm)
        info.perm = w4a16_vec(BK_DATA_TYPE_I32, k);
    const BkDeviceAddress bindings[5] = { a->dev.address, packed->dev.address,
                                          pscales->dev.address, perm ? perm->dev.address : 0,
                                          c->dev.address };
    BkResult r = w4a16_plan_run(ctx, &info, 5, bindings, label);
    if (r == BK_SUCCESS)
        tmat_download(ctx, c);
    return r;
}

/* c against ref (long double [m][n]) and size: per element, and Marlin's
 * mean relative error. Returns the misses (gaps included). */
static long check_c(const struct tmat *c, const long double *ref, const double *size, int64_t k,
                    const char *label)
{
    long bad = 0;
    long double err = 0, mag = 0;
    for (int64_t i = 0; i < c->rows; i++)
        for (int64_t j = 0; j < c->cols; j++) {
            const int64_t e = i * c->cols + j;
            const double got = tmat_get(c, 0, i, j);
            err += fabsl((long double)got - ref[e]);
            mag += fabsl(ref[e]);
            if (!w4a16_ref_close(ref[e], size[e], got, c->type, k) && bad++ < 4)
                tap_diag("%s: c[%lld, %lld] = %.9g, reference %.9Lg (terms %.3g)", label,
                         (long long)i, (long long)j, got, ref[e], size[e]);
        }
    const double rel = mag > 0 ? (double)(err / mag) : (double)err;
    if (rel >= w4a16_ref_mean_error_limit(c->type)) {
        tap_diag("%s: mean |c - ref| / mean |ref| = %.3g, limit %g", label, rel,
                 w4a16_ref_mean_error_limit(c->type));
        bad++;
    }
    return bad + tmat_gap_errors(c);
}

struct gemm_case {
    BkDataType type;
    int32_t gs;
    int64_t m, k, n;
    bool perm, twice;
};

/* One TAP line: random q, scales and A; the reference packer's weight;
 * C against the long double product of the dequantized weight. */
static void gemm_case(BkContext ctx, struct bkt_rng *rng, const struct gemm_case *gc)
{
    const int64_t m = gc->m, k = gc->k, n = gc->n;
    const int64_t groups = k / w4a16_ref_group_rows(gc->gs, k);
    uint8_t *q = w4a16_xmalloc((size_t)(k * n));
    uint16_t *scales = w4a16_xmalloc((size_t)(groups * n) * 2);
    for (int64_t i = 0; i < k * n; i++)
        q[i] = (uint8_t)bkt_rand_int(rng, 0, 15);
    for (int64_t i = 0; i < groups * n; i++)
        scales[i] = w4a16_random_half(rng, gc->type, 0.005, 0.05, false);
    struct w4a16_blob packed, pscales, perm;
    w4a16_blob_init(ctx, &packed, (uint64_t)(k / 16 * 2 * n) * 4);
    w4a16_blob_init(ctx, &pscales, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &perm, (uint64_t)k * 4);
    w4a16_ref_pack(q, scales, k, n, gc->gs, packed.host, pscales.host);
    w4a16_random_permutation(rng, perm.host, k);
    w4a16_blob_upload(ctx, &packed);
    w4a16_blob_upload(ctx, &pscales);
    w4a16_blob_upload(ctx, &perm);

    struct tmat a, c;
    tmat_init(&a, gc->type, 0, m, k, tmat_random_layout(rng), rng);
    tmat_init(&c, gc->type, 0, m, n, tmat_random_layout(rng), rng);
    tmat_fill_random(&a, rng, -1, 1);
    tmat_poison(&c);
    tmat_upload(ctx, &a);
    tmat_upload(ctx, &c);
    char label[160];
    snprintf(label, sizeof label, "gemm %s, %s, M %lld K %lld N %lld, a %s, c %s%s",
             bkt_type_name(gc->type), w4a16_group_name(gc->gs), (long long)m, (long long)k,
             (long long)n, tmat_layout_name(a.layout), tmat_layout_name(c.layout),
             gc->perm ? ", perm" : "");
    BkResult r = gemm_run(ctx, gc->type, gc->gs, k, n, &a, &packed, &pscales,
                          gc->perm ? &perm : NULL, &c, label);
    long bad = -1;
    if (r == BK_SUCCESS) {
        double *w = w4a16_xmalloc((size_t)(k * n) * sizeof *w);
        double *av = w4a16_xmalloc((size_t)(m * k) * 8);
        double *size = w4a16_xmalloc((size_t)(m * n) * sizeof *size);
        long double *ref = w4a16_xmalloc((size_t)(m * n) * sizeof *ref);
        w4a16_ref_dequant(q, scales, gc->type, k, n, gc->gs, w);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++)
                av[i * k + j] = tmat_get(&a, 0, i, j);
        w4a16_ref_gemm(av, w, gc->perm ? perm.host : NULL, m, k, n, ref, size);
        bad = check_c(&c, ref, size, k, label);
        if (gc->twice) {
            void *first = w4a16_xmalloc((size_t)c.bytes);
            memcpy(first, c.host, c.bytes);
            tmat_poison(&c);
            tmat_upload(ctx, &c);
            r = gemm_run(ctx, gc->type, gc->gs, k, n, &a, &packed, &pscales,
                         gc->perm ? &perm : NULL, &c, label);
            if (r != BK_SUCCESS || memcmp(first, c.host, c.bytes)) {
                tap_diag("%s: a second run gave other bits", label);
                bad++;
            }
            free(first);
        }
        free(w);
        free(av);
        free(size);
        free(ref);
    }
    tap_ok(bad == 0, "%s%s", label, gc->twice ? " (twice, bit-identical)" : "");
    tmat_free(ctx, &a);
    tmat_free(ctx, &c);
    w4a16_blob_free(ctx, &packed);
    w4a16_blob_free(ctx, &pscales);
    w4a16_blob_free(ctx, &perm);
    free(q);
    free(scales);
}

static void test_gemm(BkContext ctx, struct bkt_rng *rng)
{
    static const int64_t ms[] = { 1, 3, 16, 33 };
    int count = 0;
    for (size_t t = 0; t < 2; t++)
        for (size_t gi = 0; gi < GROUP_SIZES; gi++)
            for (size_t mi = 0; mi < 4; mi++) {
                const struct gemm_case gc = {
                    .type = half_types[t], .gs = group_sizes[gi], .m = ms[mi],
                    .k = w4a16_random_k(rng, group_sizes[gi], 3), .n = 64 * bkt_rand_int(rng, 1, 3),
                    .perm = count++ % 2,
                };
                gemm_case(ctx, rng, &gc);
            }
    const struct gemm_case big[] = {
        { BK_DATA_TYPE_F16, 128, 64, 1024, 512, true, true },
        { BK_DATA_TYPE_BF16, BK_W4A16_GROUP_PER_CHANNEL, 40, 768, 256, false, true },
    };
    for (size_t i = 0; i < 2; i++)
        gemm_case(ctx, rng, &big[i]);

    /* M = 0: planned, and a run with every binding 0 does nothing. */
    BkW4A16GemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = 64,
        .a = w4a16_mat(BK_DATA_TYPE_F16, 0, 128), .packed = w4a16_mat(BK_DATA_TYPE_I32, 8, 128),
        .packedScales = w4a16_mat(BK_DATA_TYPE_F16, 2, 64), .c = w4a16_mat(BK_DATA_TYPE_F16, 0, 64),
    };
    const BkDeviceAddress zero[5] = { 0 };
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, &info, &plan), BK_SUCCESS, NULL, "gemm: M = 0 is planned");
    BKT_EXPECT(plan ? bkt_run(ctx, plan, 5, zero) : BK_ERROR_INVALID_ARGUMENT, BK_SUCCESS, NULL,
               "gemm: M = 0 runs with every binding 0");
    bkDestroyPlan(plan);
}

/* ---- GPTQ ------------------------------------------------------------------------- */

enum g_idx_kind { G_IDX_NONE, G_IDX_SORTED, G_IDX_ACT_ORDER };
enum zeros_kind { ZEROS_EXACT, ZEROS_MINUS_ONE, ZEROS_ABSENT };

/* A GPTQ checkpoint on the device: plain q [k][n], scales, stored zeros
 * and g_idx on the host. */
struct checkpoint {
    BkDataType type;
    int32_t gs;
    int64_t k, n, groups, rows;
    uint8_t *q, *z;                /* z: stored zeros [groups][n] */
    uint16_t *scales;
    int32_t *g_idx;                /* NULL: none */
    enum zeros_kind zeros;
    struct tmat qweight, tscales, qzeros;
    struct w4a16_blob g_idx_blob;
};

static void checkpoint_make(struct bkt_rng *rng, struct checkpoint *cp,
                            BkDataType type, int32_t gs, int64_t k, int64_t n,
                            enum zeros_kind zeros, enum g_idx_kind gk)
{
    memset(cp, 0, sizeof *cp);
    cp->type = type, cp->gs = gs, cp->k = k, cp->n = n, cp->zeros = zeros;
    cp->rows = w4a16_ref_group_rows(gs, k);
    cp->groups = k / cp->rows;
    cp->q = w4a16_xmalloc((size_t)(k * n));
    cp->z = w4a16_xmalloc((size_t)(cp->groups * n));
    cp->scales = w4a16_xmalloc((size_t)(cp->groups * n) * 2);
    for (int64_t i = 0; i < k * n; i++)
        cp->q[i] = (uint8_t)bkt_rand_int(rng, 0, 15);
    for (int64_t i = 0; i < cp->groups * n; i++) {
        cp->scales[i] = w4a16_random_half(rng, type, 0.005, 0.05, false);
        cp->z[i] = zeros == ZEROS_MINUS_ONE ? 7 : 8;
    }
    if (gk != G_IDX_NONE) {
        cp->g_idx = w4a16_xmalloc((size_t)k * 4);
        int32_t *order = w4a16_xmalloc((size_t)k * 4);
        w4a16_random_permutation(rng, order, k);
        for (int64_t i = 0; i < k; i++)   /* act order: row order[j] is the j-th of its group */
            cp->g_idx[gk == G_IDX_SORTED ? i : order[i]] = (int32_t)(i / cp->rows);
        free(order);
    }
    tmat_init(&cp->qweight, BK_DATA_TYPE_I32, 0, k / 8, n, tmat_random_layout(rng), rng);
    tmat_init(&cp->tscales, type, 0, cp->groups, n, tmat_random_layout(rng), rng);
    tmat_init(&cp->qzeros, BK_DATA_TYPE_I32, 0, cp->groups, n / 8, tmat_random_layout(rng), rng);
    tmat_poison(&cp->qweight);
    tmat_poison(&cp->tscales);
    tmat_poison(&cp->qzeros);
}

/* Pack the host arrays into the device tensors (after edits too). */
static void checkpoint_upload(BkContext ctx, struct checkpoint *cp)
{
    uint32_t *words = w4a16_xmalloc((size_t)(cp->k / 8 * cp->n) * 4);
    w4a16_ref_gptq_pack(cp->q, cp->k, cp->n, words);
    tmat_from(&cp->qweight, words);
    w4a16_ref_gptq_pack_zeros(cp->z, cp->groups, cp->n, words);
    tmat_from(&cp->qzeros, words);
    free(words);
    tmat_from(&cp->tscales, cp->scales);
    tmat_upload(ctx, &cp->qweight);
    tmat_upload(ctx, &cp->tscales);
    tmat_upload(ctx, &cp->qzeros);
    if (cp->g_idx) {
        if (!cp->g_idx_blob.host)
            w4a16_blob_init(ctx, &cp->g_idx_blob, (uint64_t)cp->k * 4);
        memcpy(cp->g_idx_blob.host, cp->g_idx, (size_t)cp->k * 4);
        w4a16_blob_upload(ctx, &cp->g_idx_blob);
    }
}

static void checkpoint_free(BkContext ctx, struct checkpoint *cp)
{
    free(cp->q);
    free(cp->z);
    free(cp->scales);
    free(cp->g_idx);
    tmat_free(ctx, &cp->qweight);
    tmat_free(ctx, &cp->tscales);
    tmat_free(ctx, &cp->qzeros);
    w4a16_blob_free(ctx, &cp->g_idx_blob);
}

/* What a repack writes (poisoned before it runs). */
struct repacked {
    struct w4a16_blob packed, pscales, perm, report;
    bool has_perm;
};

static BkResult repack_run(BkContext ctx, struct checkpoint *cp, struct repacked *out,
                           bool bind_perm, BkW4A16RepackReport *rep, const char *label)
{
    w4a16_blob_init(ctx, &out->packed, (uint64_t)(cp->k / 16 * 2 * cp->n) * 4);
    w4a16_blob_init(ctx, &out->pscales, (uint64_t)(cp->groups * cp->n) * 2);
    w4a16_blob_init(ctx, &out->perm, (uint64_t)cp->k * 4);
    w4a16_blob_init(ctx, &out->report, sizeof *rep);
    out->has_perm = bind_perm;
    BkW4A16GptqRepackInfo info = {
        .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO,
        .zeros = cp->zeros == ZEROS_MINUS_ONE ? BK_W4A16_GPTQ_ZEROS_MINUS_ONE
                                              : BK_W4A16_GPTQ_ZEROS_EXACT,
        .groupSize = cp->gs,
        .qweight = tdesc(&cp->qweight), .scales = tdesc(&cp->tscales),
        .packed = w4a16_mat(BK_DATA_TYPE_I32, cp->k / 16, 2 * cp->n),
        .packedScales = w4a16_mat(cp->type, cp->groups, cp->n),
    };
    if (cp->zeros != ZEROS_ABSENT)
        info.qzeros = tdesc(&cp->qzeros);
    if (cp->g_idx)
        info.gIdx = w4a16_vec(BK_DATA_TYPE_I32, cp->k);
    if (bind_perm)
        info.perm = w4a16_vec(BK_DATA_TYPE_I32, cp->k);
    const BkDeviceAddress bindings[8] = {
        cp->qweight.dev.address, cp->tscales.dev.address,
        cp->zeros != ZEROS_ABSENT ? cp->qzeros.dev.address : 0,
        cp->g_idx ? cp->g_idx_blob.dev.address : 0, out->packed.dev.address,
        out->pscales.dev.address, bind_perm ? out->perm.dev.address : 0,
        out->report.dev.address,
    };
    BkResult r = w4a16_plan_run(ctx, &info, 8, bindings, label);
    if (r == BK_SUCCESS) {
        w4a16_blob_download(ctx, &out->packed);
        w4a16_blob_download(ctx, &out->pscales);
        w4a16_blob_download(ctx, &out->perm);
        w4a16_blob_download(ctx, &out->report);
        memcpy(rep, out->report.host, sizeof *rep);
    }
    return r;
}

static void repacked_free(BkContext ctx, struct repacked *out)
{
    w4a16_blob_free(ctx, &out->packed);
    w4a16_blob_free(ctx, &out->pscales);
    w4a16_blob_free(ctx, &out->perm);
    w4a16_blob_free(ctx, &out->report);
}

static bool report_is(const BkW4A16RepackReport *r, BkW4A16RepackStatus status, uint64_t count,
                      uint64_t row, uint64_t column, const char *label)
{
    const bool ok = r->status == (uint32_t)status && r->badCount == count &&
                    r->firstBadRow == row && r->firstBadColumn == column;
    if (!ok)
        tap_diag("%s: report {status %u, count %llu, row %llu, column %llu}, expected {%u, %llu, "
                 "%llu, %llu}", label, r->status, (unsigned long long)r->badCount,
                 (unsigned long long)r->firstBadRow, (unsigned long long)r->firstBadColumn,
                 (unsigned)status, (unsigned long long)count, (unsigned long long)row,
                 (unsigned long long)column);
    return ok;
}

/* The expected perm: rows stably sorted by g_idx (identity without). */
static void expected_perm(const struct checkpoint *cp, int32_t *perm)
{
    int64_t at = 0;
    if (!cp->g_idx) {
        for (int64_t i = 0; i < cp->k; i++)
            perm[i] = (int32_t)i;
        return;
    }
    for (int64_t g = 0; g < cp->groups; g++)
        for (int64_t i = 0; i < cp->k; i++)
            if (cp->g_idx[i] == g)
                perm[at++] = (int32_t)i;
}

/* Repack a symmetric checkpoint: report OK, perm, packed as the reference
 * packer packs the sorted rows; then the GEMM with perm against the
 * checkpoint's own dequantization (q - zero point) * scales[g_idx[k]]. */
static void gptq_case(BkContext ctx, struct bkt_rng *rng, BkDataType type, int32_t gs,
                      enum zeros_kind zeros, enum g_idx_kind gk, bool bind_perm)
{
    static const char *const zeros_names[] = { "exact zeros 8", "minus-one zeros 7", "no qzeros" };
    static const char *const g_idx_names[] = { "no g_idx", "sorted g_idx", "act-order g_idx" };
    const int64_t k = w4a16_random_k(rng, gs, 3), n = 64 * bkt_rand_int(rng, 1, 2), m = 5;
    char label[192];
    snprintf(label, sizeof label, "gptq %s, %s, K %lld N %lld, %s, %s%s", bkt_type_name(type),
             w4a16_group_name(gs), (long long)k, (long long)n, zeros_names[zeros], g_idx_names[gk],
             bind_perm ? ", perm bound" : "");
    struct checkpoint cp;
    checkpoint_make(rng, &cp, type, gs, k, n, zeros, gk);
    checkpoint_upload(ctx, &cp);
    struct repacked out;
    BkW4A16RepackReport rep;
    bool ran = repack_run(ctx, &cp, &out, bind_perm, &rep, label) == BK_SUCCESS;

    int32_t *perm = w4a16_xmalloc((size_t)k * 4);
    expected_perm(&cp, perm);
    bool identity = true;
    for (int64_t i = 0; i < k; i++)
        identity = identity && perm[i] == i;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_OK, 0, 0, 0, label) &&
               rep.identityPermutation == (identity ? BK_TRUE : BK_FALSE) &&
               bkCheckW4A16RepackReport(&rep) == BK_SUCCESS,
           "%s: report OK, identityPermutation %d", label, identity);

    uint8_t *sorted = w4a16_xmalloc((size_t)(k * n));
    for (int64_t i = 0; i < k; i++)
        memcpy(sorted + i * n, cp.q + (int64_t)perm[i] * n, (size_t)n);
    uint32_t *want = w4a16_xmalloc((size_t)(k / 16 * 2 * n) * 4);
    uint16_t *want_s = w4a16_xmalloc((size_t)(cp.groups * n) * 2);
    w4a16_ref_pack(sorted, cp.scales, k, n, gs, want, want_s);
    bool same = ran && memcmp(out.packed.host, want, (size_t)(k / 16 * 2 * n) * 4) == 0 &&
                memcmp(out.pscales.host, want_s, (size_t)(cp.groups * n) * 2) == 0;
    if (bind_perm)
        same = same && memcmp(out.perm.host, perm, (size_t)k * 4) == 0;
    tap_ok(same, "%s: perm%s, packed and packedScales are the reference packing of the sorted "
           "rows (qweight %s, scales %s)", label, bind_perm ? "" : " (not bound)",
           tmat_layout_name(cp.qweight.layout), tmat_layout_name(cp.tscales.layout));

    /* The GEMM on the repacked weight against the checkpoint itself. */
    struct tmat a, c;
    tmat_init(&a, type, 0, m, k, tmat_random_layout(rng), rng);
    tmat_init(&c, type, 0, m, n, tmat_random_layout(rng), rng);
    tmat_fill_random(&a, rng, -1, 1);
    tmat_poison(&c);
    tmat_upload(ctx, &a);
    tmat_upload(ctx, &c);
    long bad = -1;
    if (ran && gemm_run(ctx, type, gs, k, n, &a, &out.packed, &out.pscales,
                        bind_perm ? &out.perm : NULL, &c, label) == BK_SUCCESS) {
        double *w = w4a16_xmalloc((size_t)(k * n) * 8), *av = w4a16_xmalloc((size_t)(m * k) * 8);
        double *size = w4a16_xmalloc((size_t)(m * n) * 8);
        long double *ref = w4a16_xmalloc((size_t)(m * n) * sizeof *ref);
        const int offset = zeros == ZEROS_MINUS_ONE ? 1 : 0;
        for (int64_t i = 0; i < k; i++) {
            const int64_t g = cp.g_idx ? cp.g_idx[i] : i / cp.rows;
            for (int64_t j = 0; j < n; j++)
                w[i * n + j] = w4a16_ref_weight(cp.q[i * n + j], cp.z[g * n + j] + offset,
                                                cp.scales[g * n + j], type);
        }
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++)
                av[i * k + j] = tmat_get(&a, 0, i, j);
        w4a16_ref_gemm(av, w, NULL, m, k, n, ref, size);
        bad = check_c(&c, ref, size, k, label);
        free(w);
        free(av);
        free(size);
        free(ref);
    }
    tap_ok(bad == 0, "%s: the GEMM on the repacked weight%s matches the checkpoint's "
           "dequantization", label, bind_perm ? " with perm" : "");
    tmat_free(ctx, &a);
    tmat_free(ctx, &c);
    free(perm);
    free(sorted);
    free(want);
    free(want_s);
    repacked_free(ctx, &out);
    checkpoint_free(ctx, &cp);
}

static void test_gptq(BkContext ctx, struct bkt_rng *rng)
{
    int i = 0;
    for (int gk = G_IDX_NONE; gk <= G_IDX_ACT_ORDER; gk++)
        for (size_t gi = 0; gi < GROUP_SIZES; gi++, i++)
            gptq_case(ctx, rng, half_types[i % 2], group_sizes[gi], (enum zeros_kind)(i % 3),
                      (enum g_idx_kind)gk, gk != G_IDX_NONE || i % 2);
}

/* ---- Reports ------------------------------------------------------------------------ */

/* A [128, 64] f16 checkpoint in groups of 32 with sorted g_idx, edited
 * by each case, then repacked: the report's fields and what
 * bkCheckW4A16RepackReport makes of it. */
static void test_reports(BkContext ctx, struct bkt_rng *rng)
{
    enum { K = 128, N = 64, GS = 32, G = K / GS };
    struct checkpoint cp;
    struct repacked out;
    BkW4A16RepackReport rep;
    checkpoint_make(rng, &cp, BK_DATA_TYPE_F16, GS, K, N, ZEROS_EXACT, G_IDX_SORTED);

    /* One asymmetric zero point; then three, the first in (group, column) order. */
    cp.z[2 * N + 37] = 9;
    checkpoint_upload(ctx, &cp);
    bool ran = repack_run(ctx, &cp, &out, true, &rep, "one asymmetric zero") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_ASYMMETRIC, 1, 2, 37, "one zero") &&
               rep.identityPermutation == BK_FALSE,
           "report: one zero point 9 at group 2, column 37: ASYMMETRIC, count 1, there");
    BKT_EXPECT(bkCheckW4A16RepackReport(&rep), BK_ERROR_UNSUPPORTED, "group 2, column 37",
               "bkCheckW4A16RepackReport: asymmetric zeros are UNSUPPORTED, named");
    BKT_EXPECT(bkCheckW4A16RepackReport(&rep), BK_ERROR_UNSUPPORTED,
               "BK_W4A16_GPTQ_ZEROS_MINUS_ONE", "bkCheckW4A16RepackReport: the hint names "
               "BK_W4A16_GPTQ_ZEROS_MINUS_ONE");
    repacked_free(ctx, &out);
    cp.z[3 * N + 5] = 0, cp.z[1 * N + 60] = 7, cp.z[1 * N + 61] = 15;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "four asymmetric zeros") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_ASYMMETRIC, 4, 1, 60, "four zeros"),
           "report: four bad zero points: count 4, first group 1, column 60");
    repacked_free(ctx, &out);

    /* The zeros' form mistaken: every entry is off. */
    memset(cp.z, 8, G * N);
    cp.zeros = ZEROS_MINUS_ONE;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "exact zeros read as minus-one") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_ASYMMETRIC, G * N, 0, 0, "8 + 1"),
           "report: stored 8 under MINUS_ONE (zero point 9): all %d entries, first (0, 0)",
           G * N);
    repacked_free(ctx, &out);
    memset(cp.z, 7, G * N);
    cp.zeros = ZEROS_EXACT;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "legacy zeros read as exact") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_ASYMMETRIC, G * N, 0, 0, "7"),
           "report: AutoGPTQ's legacy 7 under EXACT: all %d entries", G * N);
    repacked_free(ctx, &out);
    cp.zeros = ZEROS_MINUS_ONE;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "legacy zeros as minus-one") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_OK, 0, 0, 0, "ok") &&
               rep.identityPermutation == BK_TRUE,
           "report: the same under MINUS_ONE: OK, sorted g_idx gives identityPermutation");
    repacked_free(ctx, &out);

    /* Bad g_idx, before the (again asymmetric) zeros. */
    cp.z[0] = 3;
    cp.g_idx[5] = G, cp.g_idx[9] = -1, cp.g_idx[100] = 1000;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "bad g_idx") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX, 3, 5, G, "g_idx") &&
               rep.identityPermutation == BK_FALSE,
           "report: g_idx 4, -1, 1000 at rows 5, 9, 100: BAD_GROUP_INDEX (before zeros), count "
           "3, row 5, value 4");
    BKT_EXPECT(bkCheckW4A16RepackReport(&rep), BK_ERROR_INVALID_ARGUMENT, "gIdx[5] = 4",
               "bkCheckW4A16RepackReport: a bad group index is INVALID_ARGUMENT, named");
    repacked_free(ctx, &out);
    cp.g_idx[5] = 5 / GS;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "negative g_idx") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX, 2, 9, UINT64_MAX,
                            "negative"),
           "report: g_idx -1 at row 9: the value sign-extended");
    BKT_EXPECT(bkCheckW4A16RepackReport(&rep), BK_ERROR_INVALID_ARGUMENT, "gIdx[9] = -1",
               "bkCheckW4A16RepackReport: a negative group index is shown as such");
    repacked_free(ctx, &out);

    /* Uneven groups, before the zeros: row 0 moved to group 1. */
    cp.g_idx[9] = 0, cp.g_idx[100] = 100 / GS, cp.g_idx[0] = 1;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "uneven groups") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS, 2, 0, GS - 1, "uneven"),
           "report: a row moved from group 0 to 1: UNEVEN_GROUPS (before zeros), count 2, "
           "group 0 with %d rows", GS - 1);
    BKT_EXPECT(bkCheckW4A16RepackReport(&rep), BK_ERROR_INVALID_ARGUMENT,
               "group 0 of gIdx has 31 rows",
               "bkCheckW4A16RepackReport: uneven groups are INVALID_ARGUMENT, named");
    repacked_free(ctx, &out);

    /* Valid again, then act order: identityPermutation false. */
    cp.g_idx[0] = 0, cp.z[0] = 7;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "fixed") == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_OK, 0, 0, 0, "fixed") &&
               rep.identityPermutation == BK_TRUE,
           "report: fixed again: OK, identityPermutation");
    repacked_free(ctx, &out);
    int32_t t = cp.g_idx[3];
    cp.g_idx[3] = cp.g_idx[K - 1], cp.g_idx[K - 1] = t;
    checkpoint_upload(ctx, &cp);
    ran = repack_run(ctx, &cp, &out, true, &rep, "two rows swapped") == BK_SUCCESS;
    int32_t *perm = out.perm.host;
    tap_ok(ran && report_is(&rep, BK_W4A16_REPACK_STATUS_OK, 0, 0, 0, "swapped") &&
               rep.identityPermutation == BK_FALSE && perm[3] == 4 && perm[GS - 1] == K - 1 &&
               perm[3 * GS] == 3 && perm[K - 1] == K - 2,
           "report: rows 3 and %d in each other's group: OK, perm moves them, not identity",
           K - 1);
    repacked_free(ctx, &out);
    checkpoint_free(ctx, &cp);

    const BkW4A16RepackReport unknown = { .status = 4 };
    BKT_EXPECT(bkCheckW4A16RepackReport(&unknown), BK_ERROR_INVALID_ARGUMENT,
               "BkW4A16RepackReport.status = 4", "bkCheckW4A16RepackReport: status 4");
    BKT_EXPECT(bkCheckW4A16RepackReport(NULL), BK_ERROR_INVALID_ARGUMENT, "pReport",
               "bkCheckW4A16RepackReport(NULL)");
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(401);
    test_quantize(ctx, &rng);
    test_pack(ctx, &rng);
    test_gemm(ctx, &rng);
    test_gptq(ctx, &rng);
    test_reports(ctx, &rng);
    bkDestroyContext(ctx);
    return tap_done();
}
