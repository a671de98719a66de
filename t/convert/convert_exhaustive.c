/* SPDX-License-Identifier: Apache-2.0 */
/* The conversion op's rounding against the reference model's independent
 * decoders and rounding (t/lib/convert_ref.c): every one of the 65536 F16
 * and BF16 bit patterns to F32 and F64 (NaN payloads kept bit for bit),
 * and F32 to F16 and BF16 at every rounding boundary of the output type:
 * each representable value, each midpoint between neighbours (the largest
 * finite value and the overflow point included) and the F32 values one
 * and two steps either side of them, both signs; with the F32 specials
 * and a million random F32 bit patterns. BK_TEST_EXHAUSTIVE=1 adds every
 * one of the 2^32 F32 bit patterns (minutes). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ref.h"
#include "test_util.h"

static BkContext ctx;

/* out[i] = in[i] converted, n elements, contiguous, on the test device. */
static BkResult convert(BkDataType it, const void *in, size_t ies, BkDataType ot, void *out,
                        size_t oes, int64_t n)
{
    BkConvertInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONVERT_INFO,
        .input = { .dataType = it, .rank = 1, .extent = { n } },
        .output = { .dataType = ot, .rank = 1, .extent = { n } },
    };
    struct bkt_buffer ib = bkt_alloc(ctx, (uint64_t)n * ies), ob = bkt_alloc(ctx, (uint64_t)n * oes);
    bkt_upload(ctx, ib.address, in, (uint64_t)n * ies);
    bkt_fill(ctx, ob.address, ob.size, BKT_POISON);
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ ib.address, ob.address });
    bkt_download(ctx, out, ob.address, (uint64_t)n * oes);
    bkDestroyPlan(plan);
    bkt_free(ctx, &ib);
    bkt_free(ctx, &ob);
    return r;
}

/* Every half-type pattern widened to F32 and F64. */
static void test_widen(BkDataType ht, const char *name)
{
    double (*decode)(uint16_t) = ht == BK_DATA_TYPE_F16 ? convert_ref_f16 : convert_ref_bf16;
    const int shift = ht == BK_DATA_TYPE_F16 ? 13 : 16; /* payload: mantissa bits to F32's */
    uint16_t *h = malloc(65536 * 2);
    float *f = malloc(65536 * 4);
    double *d = malloc(65536 * 8);
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    BkResult r = convert(ht, h, 2, BK_DATA_TYPE_F32, f, 4, 65536);
    long bad = 0;
    for (uint32_t i = 0; r == BK_SUCCESS && i < 65536; i++) {
        const double want = decode(h[i]);
        bool same = convert_ref_same(f[i], want);
        if (isnan(want)) { /* the payload kept: sign, all-ones exponent, mantissa moved up
                            * (an x87 FPU may set the quiet bit on the way) */
            uint32_t u, m = ht == BK_DATA_TYPE_F16 ? (i & 0x3FFu) : (i & 0x7Fu);
            memcpy(&u, &f[i], 4);
            same = (u | 0x400000u) == ((((i & 0x8000u) << 16) | 0x7F800000u | (m << shift)) | 0x400000u);
        }
        if (!same && bad++ < 3)
            tap_diag("%s 0x%04x -> f32 %.9g, want %.9g", name, i, f[i], want);
    }
    tap_ok(r == BK_SUCCESS && bad == 0, "every %s pattern to f32 (%ld wrong)", name, bad);
    r = convert(ht, h, 2, BK_DATA_TYPE_F64, d, 8, 65536);
    bad = 0;
    for (uint32_t i = 0; r == BK_SUCCESS && i < 65536; i++)
        if (!convert_ref_same(d[i], decode(h[i])) && bad++ < 3)
            tap_diag("%s 0x%04x -> f64 %.17g, want %.17g", name, i, d[i], decode(h[i]));
    tap_ok(r == BK_SUCCESS && bad == 0, "every %s pattern to f64 (%ld wrong)", name, bad);
    free(h), free(f), free(d);
}

/* Checks n F32 values converted to ht against the reference; returns the
 * elements wrong. */
static long check_narrow(BkDataType ht, const float *x, int64_t n, const char *name)
{
    double (*decode)(uint16_t) = ht == BK_DATA_TYPE_F16 ? convert_ref_f16 : convert_ref_bf16;
    uint16_t *h = malloc((size_t)n * 2);
    if (convert(BK_DATA_TYPE_F32, x, 4, ht, h, 2, n) != BK_SUCCESS) {
        free(h);
        return -1;
    }
    long bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const double want = convert_ref_round(ht, x[i]), got = decode(h[i]);
        if ((!convert_ref_same(got, want) || (isnan(x[i]) && (signbit(x[i]) != 0) != ((h[i] & 0x8000) != 0))) &&
            bad++ < 3)
            tap_diag("f32 %a -> %s 0x%04x (%a), want %a", x[i], name, h[i], got, want);
    }
    free(h);
    return bad;
}

static float next_f32(float x, int steps)
{
    for (; steps > 0; steps--)
        x = nextafterf(x, INFINITY);
    for (; steps < 0; steps++)
        x = nextafterf(x, -INFINITY);
    return x;
}

/* Every rounding boundary of ht, both signs. */
static void test_boundaries(BkDataType ht, const char *name)
{
    double (*decode)(uint16_t) = ht == BK_DATA_TYPE_F16 ? convert_ref_f16 : convert_ref_bf16;
    const uint16_t inf = ht == BK_DATA_TYPE_F16 ? 0x7C00 : 0x7F80;
    const int64_t cap = (int64_t)inf * 16 + 64 > (1 << 20) ? (int64_t)inf * 16 + 64 : (1 << 20);
    float *x = malloc((size_t)cap * sizeof *x);
    int64_t n = 0;
    for (uint32_t b = 0; b < inf; b++) {
        const double v = decode((uint16_t)b);
        /* the next value up; past the largest finite one, where overflow begins */
        const double next = b + 1 < inf ? decode((uint16_t)(b + 1)) : 2 * v - decode((uint16_t)(b - 1));
        const float mid = (float)((v + next) / 2); /* exact: one bit more than ht has */
        const float pts[] = { (float)v, next_f32((float)v, 1), next_f32((float)v, -1), mid,
                              next_f32(mid, 1), next_f32(mid, -1), next_f32(mid, 2),
                              next_f32(mid, -2) };
        for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
            x[n++] = pts[k];
            x[n++] = -pts[k];
        }
    }
    const uint32_t specials[] = { 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00000u,
                                  0x7F800001u, 0x7FBFFFFFu, 0xFFFFFFFFu, 0x7F7FFFFFu,
                                  0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00800000u,
                                  0x33000000u, 0x33000001u, 0x477FEFFFu, 0x477FF000u };
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
        memcpy(&x[n++], &specials[k], 4);
    const long bad = check_narrow(ht, x, n, name);
    tap_ok(bad == 0, "f32 -> %s at every rounding boundary, %lld values (%ld wrong)", name,
           (long long)n, bad);

    struct bkt_rng rng = bkt_rng_new(ht);
    for (int64_t i = 0; i < (1 << 20); i++) {
        const uint32_t u = (uint32_t)bkt_rand_u64(&rng);
        memcpy(&x[i], &u, 4);
    }
    const long rbad = check_narrow(ht, x, 1 << 20, name);
    tap_ok(rbad == 0, "f32 -> %s on 2^20 random patterns (%ld wrong)", name, rbad);
    free(x);
}

/* Every F32 pattern, in batches. */
static void test_all_f32(BkDataType ht, const char *name)
{
    const int64_t batch = 1 << 24;
    float *x = malloc((size_t)batch * sizeof *x);
    long bad = 0;
    for (uint64_t start = 0; start < (UINT64_C(1) << 32) && bad == 0; start += (uint64_t)batch) {
        for (int64_t i = 0; i < batch; i++) {
            const uint32_t u = (uint32_t)(start + (uint64_t)i);
            memcpy(&x[i], &u, 4);
        }
        bad += check_narrow(ht, x, batch, name);
    }
    tap_ok(bad == 0, "f32 -> %s on all 2^32 patterns (%ld wrong)", name, bad);
    free(x);
}

int main(void)
{
    ctx = bkt_open_device();
    test_widen(BK_DATA_TYPE_F16, "f16");
    test_widen(BK_DATA_TYPE_BF16, "bf16");
    test_boundaries(BK_DATA_TYPE_F16, "f16");
    test_boundaries(BK_DATA_TYPE_BF16, "bf16");
    const char *all = getenv("BK_TEST_EXHAUSTIVE");
    if (all && strcmp(all, "1") == 0) {
        test_all_f32(BK_DATA_TYPE_F16, "f16");
        test_all_f32(BK_DATA_TYPE_BF16, "bf16");
    }
    bkDestroyContext(ctx);
    return tap_done();
}
