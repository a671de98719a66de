/* SPDX-License-Identifier: Apache-2.0 */
/* Asymmetric W4A16 weights (BkW4A16ZeroPointsInfo) on the device under
 * test: asymmetric quantizing from F32 gives the reference's values,
 * scales and zero points bit for bit (zero, NaN and infinite columns
 * too) and every dequantized weight lies within half a scale of the
 * original; packing zero points matches an independent packer built
 * from Marlin's scale tables and unpacking gives them back; the GEMM on
 * random asymmetric weights matches a long double product of the
 * dequantized weight for both types and every group size, with and
 * without perm; AWQ checkpoints and asymmetric GPTQ checkpoints (exact
 * and minus-one zeros, act-order g_idx) made by the test's own packers
 * repack to the reference's packed weight, scales and zero points; and
 * every rule of the struct broken one field at a time is refused with a
 * message naming the field. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "w4a16_ref.h"
#include "w4a16_util.h"

static const int32_t group_sizes[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL };
#define GROUP_SIZES (sizeof group_sizes / sizeof group_sizes[0])
static const BkDataType half_types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };

static int64_t groups_of(int32_t gs, int64_t k)
{
    return k / w4a16_ref_group_rows(gs, k);
}

/* ---- Comparisons and values ---------------------------------------------- */

/* Element-wise comparison of n words of `bytes` each; diagnostics for the
 * first few. */
static long compare(const char *label, const char *what, const void *got, const void *want,
                    int64_t n, size_t bytes)
{
    long bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t g = 0, w = 0;
        memcpy(&g, (const char *)got + (size_t)i * bytes, bytes);
        memcpy(&w, (const char *)want + (size_t)i * bytes, bytes);
        if (g != w && bad++ < 4)
            tap_diag("%s: %s[%lld] = 0x%x, expected 0x%x", label, what, (long long)i, g, w);
    }
    return bad;
}

static float half_value(uint16_t bits, BkDataType type)
{
    return type == BK_DATA_TYPE_BF16 ? bkt_bf16_to_f32(bits) : bkt_f16_to_f32(bits);
}

/* ---- Asymmetric quantize --------------------------------------------------- */

/* Random F32 weights whose columns have a random offset and magnitude, so
 * some are all positive and some all negative, with special columns: 0
 * all zeros (scale 0, zero point and q 8), 1 a NaN (not counted, q = the
 * zero point), 2 an infinity in group 0 (scale inf, zero point and q 8). */
static void quantize_case(BkContext ctx, struct bkt_rng *rng, BkDataType stype, int32_t gs)
{
    const int64_t k = w4a16_random_k(rng, gs, 3), n = bkt_rand_int(rng, 4, 80);
    const int64_t groups = groups_of(gs, k), rows = w4a16_ref_group_rows(gs, k);
    char label[128];
    snprintf(label, sizeof label, "quantize asymmetric f32 -> %s, %s, [%lld, %lld]",
             bkt_type_name(stype), w4a16_group_name(gs), (long long)k, (long long)n);
    float *w = w4a16_xmalloc((size_t)(k * n) * sizeof *w);
    for (int64_t j = 0; j < n; j++) {
        const double mag = ldexp(1.0, (int)bkt_rand_int(rng, -8, 2));
        const double off = mag * bkt_rand_value(rng, BK_DATA_TYPE_F32, -1.5, 1.5);
        for (int64_t i = 0; i < k; i++)
            w[i * n + j] = (float)(off + bkt_rand_value(rng, BK_DATA_TYPE_F32, -mag, mag));
    }
    for (int64_t i = 0; i < k; i++)
        w[i * n] = 0.0f;
    w[1 * n + 1] = NAN;
    w[3 * n + 2] = INFINITY;
    uint8_t *want_q = w4a16_xmalloc((size_t)(k * n)), *want_z = w4a16_xmalloc((size_t)(groups * n));
    uint16_t *want_s = w4a16_xmalloc((size_t)(groups * n) * 2);
    w4a16_ref_quantize_asym(w, k, n, gs, stype, want_q, want_s, want_z);

    struct w4a16_blob bw, bq, bs, bz;
    w4a16_blob_init(ctx, &bw, (uint64_t)(k * n) * 4);
    w4a16_blob_init(ctx, &bq, (uint64_t)(k * n));
    w4a16_blob_init(ctx, &bs, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &bz, (uint64_t)(groups * n));
    memcpy(bw.host, w, (size_t)(k * n) * 4);
    w4a16_blob_upload(ctx, &bw);
    BkW4A16ZeroPointsInfo zp = {
        .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO,
        .zeros = w4a16_mat(BK_DATA_TYPE_U8, groups, n),
    };
    const BkW4A16ConvertInfo info = {
        .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, .pNext = &zp,
        .conversion = BK_W4A16_QUANTIZE, .groupSize = gs,
        .weight = w4a16_mat(BK_DATA_TYPE_F32, k, n),
        .quantized = w4a16_mat(BK_DATA_TYPE_U8, k, n),
        .scales = w4a16_mat(stype, groups, n),
    };
    const BkDeviceAddress bind[7] = { bw.dev.address, bq.dev.address, bs.dev.address, 0, 0,
                                      bz.dev.address, 0 };
    const bool ran = w4a16_plan_run(ctx, &info, 7, bind, label) == BK_SUCCESS;
    w4a16_blob_download(ctx, &bq);
    w4a16_blob_download(ctx, &bs);
    w4a16_blob_download(ctx, &bz);
    long bad = 0;
    if (ran) {
        bad += compare(label, "q", bq.host, want_q, k * n, 1);
        bad += compare(label, "scales", bs.host, want_s, groups * n, 2);
        bad += compare(label, "zeros", bz.host, want_z, groups * n, 1);
    }
    tap_ok(ran && bad == 0, "%s: q, scales and zero points bit for bit", label);

    /* The rule's promise: every finite weight of a regular column is within
     * half a scale of (q - z) * scale, plus up to 16 times the scale's
     * rounding (2^-8 relative in BF16, 2^-11 in F16) where the top of the
     * range is clamped. */
    const double rounding = stype == BK_DATA_TYPE_BF16 ? 0x1p-8 : 0x1p-11;
    const uint8_t *q = bq.host, *z = bz.host;
    const uint16_t *s = bs.host;
    long far = 0;
    for (int64_t i = 0; ran && i < k; i++)
        for (int64_t j = 3; j < n; j++) {
            const int64_t g = i / rows;
            const double sc = half_value(s[g * n + j], stype);
            const double back = (double)((int)q[i * n + j] - (int)z[g * n + j]) * sc;
            if (fabs(back - w[i * n + j]) > (0.5 + 16 * rounding) * sc && far++ < 4)
                tap_diag("%s: w[%lld, %lld] = %g comes back as %g (scale %g)", label,
                         (long long)i, (long long)j, (double)w[i * n + j], back, sc);
        }
    bool special = ran && s[0] == 0 && z[0] == 8 && z[2] == 8 &&
                   isinf(half_value(s[2], stype)) && q[1 * n + 1] == z[1];
    for (int64_t i = 0; special && i < k; i++)
        special = q[i * n] == 8 && (i >= rows || q[i * n + 2] == 8);
    tap_ok(ran && far == 0 && special,
           "%s: weights come back within half a scale; a zero column has scale 0, zero 8; "
           "NaN gives the zero point; an infinity makes every q and the zero 8", label);
    free(w);
    free(want_q);
    free(want_z);
    free(want_s);
    w4a16_blob_free(ctx, &bw);
    w4a16_blob_free(ctx, &bq);
    w4a16_blob_free(ctx, &bs);
    w4a16_blob_free(ctx, &bz);
}

/* ---- Pack and unpack with zero points ---------------------------------------- */

static void random_plain(struct bkt_rng *rng, BkDataType type, int64_t k, int64_t n,
                         int64_t groups, uint8_t *q, uint16_t *scales, uint8_t *z)
{
    for (int64_t i = 0; i < k * n; i++)
        q[i] = (uint8_t)bkt_rand_int(rng, 0, 15);
    for (int64_t i = 0; i < groups * n; i++) {
        scales[i] = w4a16_random_half(rng, type, 0.005, 0.05, false);
        z[i] = (uint8_t)bkt_rand_int(rng, 0, 15);
    }
}

static void pack_case(BkContext ctx, struct bkt_rng *rng, BkDataType type, int32_t gs)
{
    const int64_t k = w4a16_random_k(rng, gs, 2), n = 64 * bkt_rand_int(rng, 1, 4);
    const int64_t groups = groups_of(gs, k), words = k / 16 * 2 * n;
    char label[128];
    snprintf(label, sizeof label, "pack with zero points %s, %s, [%lld, %lld]",
             bkt_type_name(type), w4a16_group_name(gs), (long long)k, (long long)n);
    struct w4a16_blob bq, bs, bz, packed, pscales, pzeros;
    w4a16_blob_init(ctx, &bq, (uint64_t)(k * n));
    w4a16_blob_init(ctx, &bs, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &bz, (uint64_t)(groups * n));
    w4a16_blob_init(ctx, &packed, (uint64_t)words * 4);
    w4a16_blob_init(ctx, &pscales, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &pzeros, (uint64_t)(groups * n / 8) * 4);
    random_plain(rng, type, k, n, groups, bq.host, bs.host, bz.host);
    w4a16_blob_upload(ctx, &bq);
    w4a16_blob_upload(ctx, &bs);
    w4a16_blob_upload(ctx, &bz);
    uint32_t *want = w4a16_xmalloc((size_t)words * 4);
    uint32_t *want_z = w4a16_xmalloc((size_t)(groups * n / 8) * 4);
    uint16_t *want_s = w4a16_xmalloc((size_t)(groups * n) * 2);
    w4a16_ref_pack(bq.host, bs.host, k, n, gs, want, want_s);
    w4a16_ref_pack_zeros(bz.host, k, n, gs, want_z);

    BkW4A16ZeroPointsInfo zp = {
        .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO,
        .zeros = w4a16_mat(BK_DATA_TYPE_U8, groups, n),
        .packedZeros = w4a16_mat(BK_DATA_TYPE_I32, groups, n / 8),
    };
    BkW4A16ConvertInfo info = {
        .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, .pNext = &zp,
        .conversion = BK_W4A16_PACK, .groupSize = gs,
        .quantized = w4a16_mat(BK_DATA_TYPE_U8, k, n),
        .scales = w4a16_mat(type, groups, n),
        .packed = w4a16_mat(BK_DATA_TYPE_I32, k / 16, 2 * n),
        .packedScales = w4a16_mat(type, groups, n),
    };
    const BkDeviceAddress bind[7] = { 0, bq.dev.address, bs.dev.address, packed.dev.address,
                                      pscales.dev.address, bz.dev.address, pzeros.dev.address };
    bool ran = w4a16_plan_run(ctx, &info, 7, bind, label) == BK_SUCCESS;
    w4a16_blob_download(ctx, &packed);
    w4a16_blob_download(ctx, &pscales);
    w4a16_blob_download(ctx, &pzeros);
    long bad = 0;
    if (ran) {
        bad += compare(label, "packed", packed.host, want, words, 4);
        bad += compare(label, "packedScales", pscales.host, want_s, groups * n, 2);
        bad += compare(label, "packedZeros", pzeros.host, want_z, groups * n / 8, 4);
    }
    tap_ok(ran && bad == 0, "%s: packed, packedScales and packedZeros match the reference "
           "packer byte for byte", label);

    /* Unpack into fresh poisoned buffers. */
    struct w4a16_blob uq, us, uz;
    w4a16_blob_init(ctx, &uq, (uint64_t)(k * n));
    w4a16_blob_init(ctx, &us, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &uz, (uint64_t)(groups * n));
    info.conversion = BK_W4A16_UNPACK;
    const BkDeviceAddress ubind[7] = { 0, uq.dev.address, us.dev.address, packed.dev.address,
                                       pscales.dev.address, uz.dev.address, pzeros.dev.address };
    ran = ran && w4a16_plan_run(ctx, &info, 7, ubind, label) == BK_SUCCESS;
    w4a16_blob_download(ctx, &uq);
    w4a16_blob_download(ctx, &us);
    w4a16_blob_download(ctx, &uz);
    bad = 0;
    if (ran) {
        bad += compare(label, "unpacked q", uq.host, bq.host, k * n, 1);
        bad += compare(label, "unpacked scales", us.host, bs.host, groups * n, 2);
        bad += compare(label, "unpacked zeros", uz.host, bz.host, groups * n, 1);
    }
    tap_ok(ran && bad == 0, "%s: unpack gives q, scales and zero points back", label);
    struct w4a16_blob *all[] = { &bq, &bs, &bz, &packed, &pscales, &pzeros, &uq, &us, &uz };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        w4a16_blob_free(ctx, all[i]);
    free(want);
    free(want_z);
    free(want_s);
}

/* ---- GEMM ------------------------------------------------------------------------ */

/* C = A @ W on packed weights with zero points; c receives C [m][n] as
 * doubles. perm: bound when not NULL. */
static BkResult gemm_zp(BkContext ctx, BkDataType type, int32_t gs, int64_t m, int64_t k,
                        int64_t n, const uint16_t *a, struct w4a16_blob *packed,
                        struct w4a16_blob *pscales, struct w4a16_blob *pzeros, const int32_t *perm,
                        double *c, const char *label)
{
    const int64_t groups = groups_of(gs, k);
    struct w4a16_blob ba, bc, bp;
    w4a16_blob_init(ctx, &ba, (uint64_t)(m * k) * 2);
    w4a16_blob_init(ctx, &bc, (uint64_t)(m * n) * 2);
    w4a16_blob_init(ctx, &bp, (uint64_t)k * 4);
    memcpy(ba.host, a, (size_t)(m * k) * 2);
    w4a16_blob_upload(ctx, &ba);
    if (perm) {
        memcpy(bp.host, perm, (size_t)k * 4);
        w4a16_blob_upload(ctx, &bp);
    }
    const BkW4A16ZeroPointsInfo zp = {
        .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO,
        .packedZeros = w4a16_mat(BK_DATA_TYPE_I32, groups, n / 8),
    };
    BkW4A16GemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .pNext = &zp, .groupSize = gs,
        .a = w4a16_mat(type, m, k), .packed = w4a16_mat(BK_DATA_TYPE_I32, k / 16, 2 * n),
        .packedScales = w4a16_mat(type, groups, n), .c = w4a16_mat(type, m, n),
    };
    if (perm)
        info.perm = w4a16_vec(BK_DATA_TYPE_I32, k);
    const BkDeviceAddress bind[6] = { ba.dev.address, packed->dev.address, pscales->dev.address,
                                      perm ? bp.dev.address : 0, bc.dev.address,
                                      pzeros->dev.address };
    const BkResult r = w4a16_plan_run(ctx, &info, 6, bind, label);
    w4a16_blob_download(ctx, &bc);
    for (int64_t i = 0; i < m * n; i++)
        c[i] = half_value(((uint16_t *)bc.host)[i], type);
    w4a16_blob_free(ctx, &ba);
    w4a16_blob_free(ctx, &bc);
    w4a16_blob_free(ctx, &bp);
    return r;
}

/* c against the long double product of a and the dequantized w. */
static long check_c(const double *c, const double *a, const double *w, const int32_t *perm,
                    BkDataType type, int64_t m, int64_t k, int64_t n, const char *label)
{
    long double *ref = w4a16_xmalloc((size_t)(m * n) * sizeof *ref);
    double *size = w4a16_xmalloc((size_t)(m * n) * sizeof *size);
    w4a16_ref_gemm(a, w, perm, m, k, n, ref, size);
    long bad = 0;
    long double err = 0, mag = 0;
    for (int64_t i = 0; i < m * n; i++) {
        err += fabsl((long double)c[i] - ref[i]);
        mag += fabsl(ref[i]);
        if (!w4a16_ref_close(ref[i], size[i], c[i], type, k) && bad++ < 4)
            tap_diag("%s: c[%lld, %lld] = %.9g, reference %.9Lg", label, (long long)(i / n),
                     (long long)(i % n), c[i], ref[i]);
    }
    const double rel = mag > 0 ? (double)(err / mag) : (double)err;
    if (rel >= w4a16_ref_mean_error_limit(type)) {
        tap_diag("%s: mean relative error %.3g", label, rel);
        bad++;
    }
    free(ref);
    free(size);
    return bad;
}

static void random_a(struct bkt_rng *rng, BkDataType type, int64_t count, uint16_t *a,
                     double *ad)
{
    for (int64_t i = 0; i < count; i++) {
        a[i] = w4a16_random_half(rng, type, -1, 1, false);
        ad[i] = half_value(a[i], type);
    }
}

static void gemm_case(BkContext ctx, struct bkt_rng *rng, BkDataType type, int32_t gs, int64_t m,
                      int64_t k, int64_t n, bool with_perm)
{
    const int64_t groups = groups_of(gs, k);
    char label[160];
    snprintf(label, sizeof label, "gemm with zero points %s, %s, M %lld K %lld N %lld%s",
             bkt_type_name(type), w4a16_group_name(gs), (long long)m, (long long)k,
             (long long)n, with_perm ? ", perm" : "");
    uint8_t *q = w4a16_xmalloc((size_t)(k * n)), *z = w4a16_xmalloc((size_t)(groups * n));
    uint16_t *scales = w4a16_xmalloc((size_t)(groups * n) * 2);
    uint16_t *a = w4a16_xmalloc((size_t)(m * k) * 2);
    double *ad = w4a16_xmalloc((size_t)(m * k) * sizeof *ad);
    double *w = w4a16_xmalloc((size_t)(k * n) * sizeof *w);
    double *c = w4a16_xmalloc((size_t)(m * n) * sizeof *c);
    int32_t *perm = w4a16_xmalloc((size_t)k * 4);
    random_plain(rng, type, k, n, groups, q, scales, z);
    random_a(rng, type, m * k, a, ad);
    w4a16_random_permutation(rng, perm, k);
    struct w4a16_blob packed, pscales, pzeros;
    w4a16_blob_init(ctx, &packed, (uint64_t)(k / 16 * 2 * n) * 4);
    w4a16_blob_init(ctx, &pscales, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &pzeros, (uint64_t)(groups * n / 8) * 4);
    w4a16_ref_pack(q, scales, k, n, gs, packed.host, pscales.host);
    w4a16_ref_pack_zeros(z, k, n, gs, pzeros.host);
    w4a16_blob_upload(ctx, &packed);
    w4a16_blob_upload(ctx, &pscales);
    w4a16_blob_upload(ctx, &pzeros);
    w4a16_ref_dequant_zp(q, scales, z, type, k, n, gs, w);
    const bool ran = gemm_zp(ctx, type, gs, m, k, n, a, &packed, &pscales, &pzeros,
                             with_perm ? perm : NULL, c, label) == BK_SUCCESS;
    tap_ok(ran && check_c(c, ad, w, with_perm ? perm : NULL, type, m, k, n, label) == 0,
           "%s: C matches the product of (q - z) * scale", label);
    w4a16_blob_free(ctx, &packed);
    w4a16_blob_free(ctx, &pscales);
    w4a16_blob_free(ctx, &pzeros);
    free(q);
    free(z);
    free(scales);
    free(a);
    free(ad);
    free(w);
    free(c);
    free(perm);
}

/* ---- Checkpoints ------------------------------------------------------------------ */

struct ckpt_case {
    BkW4A16CheckpointFormat format;
    BkW4A16GptqZeros zeros;
    BkDataType type;
    int32_t gs;
    bool act_order;          /* GPTQ: g_idx scattering the rows */
    bool no_qzeros;          /* qzeros left out: zero point 8 */
};

/* A checkpoint of random q, z and scales packed by the test's own
 * packers; the repack's packed, packedScales and packedZeros against the
 * reference packing of (q in perm's order, scales, z), and the GEMM on
 * them against the checkpoint's dequantization. */
static void checkpoint_case(BkContext ctx, struct bkt_rng *rng, const struct ckpt_case *cc)
{
    const bool awq = cc->format == BK_W4A16_CHECKPOINT_AWQ;
    const int64_t k = w4a16_random_k(rng, cc->gs, 3), n = 64 * bkt_rand_int(rng, 1, 3), m = 3;
    const int64_t groups = groups_of(cc->gs, k), rows = w4a16_ref_group_rows(cc->gs, k);
    char label[160];
    snprintf(label, sizeof label, "%s checkpoint, %s zeros%s%s, %s, %s, K %lld N %lld",
             awq ? "AWQ" : "GPTQ", cc->zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? "minus-one"
                                                                            : "exact",
             cc->no_qzeros ? " (no qzeros)" : "", cc->act_order ? ", act-order" : "",
             bkt_type_name(cc->type), w4a16_group_name(cc->gs), (long long)k, (long long)n);
    uint8_t *q = w4a16_xmalloc((size_t)(k * n)), *z = w4a16_xmalloc((size_t)(groups * n));
    uint8_t *stored = w4a16_xmalloc((size_t)(groups * n));
    uint8_t *sorted_q = w4a16_xmalloc((size_t)(k * n));
    uint16_t *scales = w4a16_xmalloc((size_t)(groups * n) * 2);
    int32_t *g_idx = w4a16_xmalloc((size_t)k * 4), *want_perm = w4a16_xmalloc((size_t)k * 4);
    random_plain(rng, cc->type, k, n, groups, q, scales, z);
    const unsigned offset = cc->zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? 1 : 0;
    for (int64_t i = 0; i < groups * n; i++) {
        if (cc->no_qzeros)
            z[i] = 8;
        stored[i] = (uint8_t)((z[i] - offset) & 15u);   /* z = 0 stored as 15 when minus-one */
    }
    /* Act-order: each group's rows are a random subset; the repack sorts
     * rows by group, keeping their order. */
    int32_t *shuffle = w4a16_xmalloc((size_t)k * 4);
    w4a16_random_permutation(rng, shuffle, k);
    for (int64_t i = 0; i < k; i++)
        g_idx[i] = (int32_t)((cc->act_order ? shuffle[i] : i) / rows);
    int64_t at = 0;
    for (int64_t g = 0; g < groups; g++)
        for (int64_t i = 0; i < k; i++)
            if (g_idx[i] == g)
                want_perm[at++] = (int32_t)i;
    for (int64_t i = 0; i < k; i++)
        memcpy(sorted_q + i * n, q + (int64_t)want_perm[i] * n, (size_t)n);

    const int64_t qw_words = awq ? k * (n / 8) : k / 8 * n;
    struct w4a16_blob qweight, bscales, qzeros, gidx, packed, pscales, pzeros, perm, report;
    w4a16_blob_init(ctx, &qweight, (uint64_t)qw_words * 4);
    w4a16_blob_init(ctx, &bscales, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &qzeros, (uint64_t)(groups * n / 8) * 4);
    w4a16_blob_init(ctx, &gidx, (uint64_t)k * 4);
    w4a16_blob_init(ctx, &packed, (uint64_t)(k / 16 * 2 * n) * 4);
    w4a16_blob_init(ctx, &pscales, (uint64_t)(groups * n) * 2);
    w4a16_blob_init(ctx, &pzeros, (uint64_t)(groups * n / 8) * 4);
    w4a16_blob_init(ctx, &perm, (uint64_t)k * 4);
    w4a16_blob_init(ctx, &report, sizeof(BkW4A16RepackReport));
    if (awq) {
        w4a16_ref_awq_pack(q, k, n, qweight.host);
        w4a16_ref_awq_pack(stored, groups, n, qzeros.host);
    } else {
        w4a16_ref_gptq_pack(q, k, n, qweight.host);
        w4a16_ref_gptq_pack_zeros(stored, groups, n, qzeros.host);
    }
    memcpy(bscales.host, scales, (size_t)(groups * n) * 2);
    memcpy(gidx.host, g_idx, (size_t)k * 4);
    struct w4a16_blob *inputs[] = { &qweight, &bscales, &qzeros, &gidx };
    for (size_t i = 0; i < 4; i++)
        w4a16_blob_upload(ctx, inputs[i]);

    const BkW4A16ZeroPointsInfo zp = {
        .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO, .checkpointFormat = cc->format,
        .packedZeros = w4a16_mat(BK_DATA_TYPE_I32, groups, n / 8),
    };
    BkW4A16GptqRepackInfo info = {
        .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO, .pNext = &zp, .zeros = cc->zeros,
        .groupSize = cc->gs,
        .qweight = awq ? w4a16_mat(BK_DATA_TYPE_I32, k, n / 8)
                       : w4a16_mat(BK_DATA_TYPE_I32, k / 8, n),
        .scales = w4a16_mat(cc->type, groups, n),
        .packed = w4a16_mat(BK_DATA_TYPE_I32, k / 16, 2 * n),
        .packedScales = w4a16_mat(cc->type, groups, n),
        .perm = w4a16_vec(BK_DATA_TYPE_I32, k),
    };
    if (!cc->no_qzeros)
        info.qzeros = w4a16_mat(BK_DATA_TYPE_I32, groups, n / 8);
    if (cc->act_order)
        info.gIdx = w4a16_vec(BK_DATA_TYPE_I32, k);
    const BkDeviceAddress bind[9] = {
        qweight.dev.address, bscales.dev.address, cc->no_qzeros ? 0 : qzeros.dev.address,
        cc->act_order ? gidx.dev.address : 0, packed.dev.address, pscales.dev.address,
        perm.dev.address, report.dev.address, pzeros.dev.address,
    };
    bool ran = w4a16_plan_run(ctx, &info, 9, bind, label) == BK_SUCCESS;
    w4a16_blob_download(ctx, &packed);
    w4a16_blob_download(ctx, &pscales);
    w4a16_blob_download(ctx, &pzeros);
    w4a16_blob_download(ctx, &perm);
    w4a16_blob_download(ctx, &report);
    BkW4A16RepackReport rep;
    memcpy(&rep, report.host, sizeof rep);
    uint32_t *want = w4a16_xmalloc((size_t)(k / 16 * 2 * n) * 4);
    uint32_t *want_z = w4a16_xmalloc((size_t)(groups * n / 8) * 4);
    uint16_t *want_s = w4a16_xmalloc((size_t)(groups * n) * 2);
    w4a16_ref_pack(sorted_q, scales, k, n, cc->gs, want, want_s);
    w4a16_ref_pack_zeros(z, k, n, cc->gs, want_z);
    long bad = 0;
    if (ran) {
        bad += compare(label, "packed", packed.host, want, k / 16 * 2 * n, 4);
        bad += compare(label, "packedScales", pscales.host, want_s, groups * n, 2);
        bad += compare(label, "packedZeros", pzeros.host, want_z, groups * n / 8, 4);
        bad += compare(label, "perm", perm.host, want_perm, k, 4);
    }
    bool identity = true;
    for (int64_t i = 0; i < k; i++)
        identity = identity && want_perm[i] == i;
    const bool ok_report = rep.status == BK_W4A16_REPACK_STATUS_OK &&
                           rep.identityPermutation == (identity ? BK_TRUE : BK_FALSE);
    if (ran && !ok_report)
        tap_diag("%s: report status %u, identity %u", label, rep.status,
                 rep.identityPermutation);
    tap_ok(ran && bad == 0 && ok_report,
           "%s: repacked weight, scales, zero points and perm match the reference; report OK",
           label);

    /* The GEMM on the repacked weight computes the checkpoint's product. */
    uint16_t *a = w4a16_xmalloc((size_t)(m * k) * 2);
    double *ad = w4a16_xmalloc((size_t)(m * k) * sizeof *ad);
    double *w = w4a16_xmalloc((size_t)(k * n) * sizeof *w);
    double *c = w4a16_xmalloc((size_t)(m * n) * sizeof *c);
    random_a(rng, cc->type, m * k, a, ad);
    /* Row i of the product is checkpoint row want_perm[i] (its group's
     * zero point and scale: groups are contiguous once sorted). */
    w4a16_ref_dequant_zp(sorted_q, scales, z, cc->type, k, n, cc->gs, w);
    ran = ran && gemm_zp(ctx, cc->type, cc->gs, m, k, n, a, &packed, &pscales, &pzeros,
                         cc->act_order ? want_perm : NULL, c, label) == BK_SUCCESS;
    tap_ok(ran && check_c(c, ad, w, cc->act_order ? want_perm : NULL, cc->type, m, k, n,
                          label) == 0,
           "%s: the GEMM on the repacked weight gives the checkpoint's product", label);

    struct w4a16_blob *all[] = { &qweight, &bscales, &qzeros, &gidx, &packed,
                           &pscales, &pzeros, &perm, &report };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        w4a16_blob_free(ctx, all[i]);
    free(q);
    free(z);
    free(stored);
    free(sorted_q);
    free(scales);
    free(g_idx);
    free(want_perm);
    free(shuffle);
    free(want);
    free(want_z);
    free(want_s);
    free(a);
    free(ad);
    free(w);
    free(c);
}

/* ---- Validation ---------------------------------------------------------------------- */

enum { VK = 128, VN = 128, VGS = 32, VG = VK / VGS };
#define ZP_NAME "BkW4A16ZeroPointsInfo"

static BkW4A16ZeroPointsInfo zp_info(bool plain, bool packed)
{
    BkW4A16ZeroPointsInfo z = { .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO };
    if (plain)
        z.zeros = w4a16_mat(BK_DATA_TYPE_U8, VG, VN);
    if (packed)
        z.packedZeros = w4a16_mat(BK_DATA_TYPE_I32, VG, VN / 8);
    return z;
}

static BkW4A16GemmInfo v_gemm(const void *next)
{
    return (BkW4A16GemmInfo){
        .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .pNext = next, .groupSize = VGS,
        .a = w4a16_mat(BK_DATA_TYPE_F16, 4, VK),
        .packed = w4a16_mat(BK_DATA_TYPE_I32, VK / 16, 2 * VN),
        .packedScales = w4a16_mat(BK_DATA_TYPE_F16, VG, VN),
        .c = w4a16_mat(BK_DATA_TYPE_F16, 4, VN),
    };
}

static BkW4A16GptqRepackInfo v_repack(const void *next, bool awq)
{
    return (BkW4A16GptqRepackInfo){
        .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO, .pNext = next, .groupSize = VGS,
        .qweight = awq ? w4a16_mat(BK_DATA_TYPE_I32, VK, VN / 8)
                       : w4a16_mat(BK_DATA_TYPE_I32, VK / 8, VN),
        .scales = w4a16_mat(BK_DATA_TYPE_F16, VG, VN),
        .qzeros = w4a16_mat(BK_DATA_TYPE_I32, VG, VN / 8),
        .packed = w4a16_mat(BK_DATA_TYPE_I32, VK / 16, 2 * VN),
        .packedScales = w4a16_mat(BK_DATA_TYPE_F16, VG, VN),
    };
}

static BkW4A16ConvertInfo v_convert(const void *next, BkW4A16Conversion conv)
{
    BkW4A16ConvertInfo ci = {
        .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, .pNext = next, .conversion = conv,
        .groupSize = VGS, .quantized = w4a16_mat(BK_DATA_TYPE_U8, VK, VN),
        .scales = w4a16_mat(BK_DATA_TYPE_F16, VG, VN),
    };
    if (conv == BK_W4A16_QUANTIZE) {
        ci.weight = w4a16_mat(BK_DATA_TYPE_F32, VK, VN);
    } else {
        ci.packed = w4a16_mat(BK_DATA_TYPE_I32, VK / 16, 2 * VN);
        ci.packedScales = w4a16_mat(BK_DATA_TYPE_F16, VG, VN);
    }
    return ci;
}

/* The plan's binding count and one zero-point slot's alignment and direction. */
static void expect_slots(BkContext ctx, const void *info, uint32_t count, uint32_t slot,
                         uint32_t align, bool written, const char *what)
{
    BkPlan plan = BK_NULL_HANDLE;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    BkPlanBindingProperties bp = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    props.pNext = &bp;
    bool ok = bkt_create_plan(ctx, info, &plan) == BK_SUCCESS &&
              bkGetPlanProperties(plan, &props) == BK_SUCCESS;
    if (ok && !(props.bindingCount == count && bp.bindings[slot].alignment == align &&
                (bp.bindings[slot].written != 0) == written)) {
        tap_diag("%s: %u bindings, slot %u alignment %llu written %u", what,
                 props.bindingCount, slot, (unsigned long long)bp.bindings[slot].alignment,
                 bp.bindings[slot].written);
        ok = false;
    }
    tap_ok(ok, "%s: %u bindings; slot %u %u-byte aligned, %s", what, count, slot, align,
           written ? "written" : "read");
    bkDestroyPlan(plan);
}

static void test_validation(BkContext ctx)
{
#define EXPECT_PLAN(info, code, what, ...) BKT_EXPECT_PLAN(ctx, (info), (code), (what), __VA_ARGS__)
    const BkResult INVALID = BK_ERROR_INVALID_ARGUMENT;
    BkW4A16ZeroPointsInfo z = zp_info(false, true), z2 = zp_info(false, true);
    BkW4A16GemmInfo g = v_gemm(&z);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm with zero points", NULL);
    expect_slots(ctx, &g, 6, BK_W4A16_GEMM_BINDING_PACKED_ZEROS, 16, false, "gemm");
    z.pNext = &z2;
    EXPECT_PLAN(&g, INVALID, "gemm: the struct chained twice", ZP_NAME " twice");
    z = zp_info(false, true), z.flags = 1;
    EXPECT_PLAN(&g, INVALID, "gemm: flags 1", ZP_NAME ".flags = 0x1");
    z = zp_info(false, true), z.checkpointFormat = BK_W4A16_CHECKPOINT_AWQ;
    EXPECT_PLAN(&g, INVALID, "gemm: AWQ format", ZP_NAME ".checkpointFormat = 1",
                "only a repack");
    z = zp_info(false, true), z.checkpointFormat = (BkW4A16CheckpointFormat)7;
    EXPECT_PLAN(&g, INVALID, "gemm: format 7", ZP_NAME ".checkpointFormat = 7");
    z = zp_info(false, false);
    EXPECT_PLAN(&g, INVALID, "gemm: packedZeros absent", ZP_NAME ".packedZeros is absent");
    z = zp_info(true, true);
    EXPECT_PLAN(&g, INVALID, "gemm: plain zeros given", ZP_NAME ".zeros.dataType = BK_DATA_TYPE_U8",
                "the GEMM");
    z = zp_info(false, true), z.packedZeros.dataType = BK_DATA_TYPE_U32;
    EXPECT_PLAN(&g, INVALID, "gemm: packedZeros U32", ZP_NAME ".packedZeros.dataType = BK_DATA_TYPE_U32",
                "BK_DATA_TYPE_I32");
    z = zp_info(false, true), z.packedZeros.extent[0] = VG + 1;
    EXPECT_PLAN(&g, INVALID, "gemm: packedZeros G + 1 rows", ZP_NAME ".packedZeros.extent[0] = 5",
                "G = 4");
    z = zp_info(false, true), z.packedZeros.extent[1] = VN;
    EXPECT_PLAN(&g, INVALID, "gemm: packedZeros N columns",
                ZP_NAME ".packedZeros.extent[1] = 128", "N/8 = 16");
    z = zp_info(false, true), z.packedZeros.stride[0] = 32, z.packedZeros.stride[1] = 1;
    EXPECT_PLAN(&g, INVALID, "gemm: packedZeros strided", ZP_NAME ".packedZeros.stride[0] = 32",
                "contiguous");
    z = zp_info(false, true), z.packedZeros.rank = 1;
    EXPECT_PLAN(&g, INVALID, "gemm: packedZeros rank 1", ZP_NAME ".packedZeros");

    /* Conversions. */
    z = zp_info(true, false);
    BkW4A16ConvertInfo ci = v_convert(&z, BK_W4A16_QUANTIZE);
    EXPECT_PLAN(&ci, BK_SUCCESS, "quantize with zero points", NULL);
    expect_slots(ctx, &ci, 7, BK_W4A16_CONVERT_BINDING_ZEROS, 1, true, "quantize (zeros)");
    z = zp_info(true, true);
    EXPECT_PLAN(&ci, INVALID, "quantize: packedZeros given",
                ZP_NAME ".packedZeros.dataType = BK_DATA_TYPE_I32", "BK_W4A16_QUANTIZE");
    z = zp_info(false, false);
    EXPECT_PLAN(&ci, INVALID, "quantize: zeros absent", ZP_NAME ".zeros is absent");
    z = zp_info(true, false), z.zeros.dataType = BK_DATA_TYPE_I8;
    EXPECT_PLAN(&ci, INVALID, "quantize: zeros I8", ZP_NAME ".zeros.dataType = BK_DATA_TYPE_I8",
                "BK_DATA_TYPE_U8");
    z = zp_info(true, false), z.zeros.extent[1] = VN - 1;
    EXPECT_PLAN(&ci, INVALID, "quantize: zeros N - 1", ZP_NAME ".zeros.extent[1] = 127");
    z = zp_info(true, false), z.zeros.stride[0] = 1, z.zeros.stride[1] = 0;
    EXPECT_PLAN(&ci, INVALID, "quantize: zeros with a zero stride", ZP_NAME ".zeros");
    z = zp_info(true, true);
    ci = v_convert(&z, BK_W4A16_PACK);
    EXPECT_PLAN(&ci, BK_SUCCESS, "pack with zero points", NULL);
    expect_slots(ctx, &ci, 7, BK_W4A16_CONVERT_BINDING_PACKED_ZEROS, 16, true, "pack");
    ci = v_convert(&z, BK_W4A16_UNPACK);
    expect_slots(ctx, &ci, 7, BK_W4A16_CONVERT_BINDING_PACKED_ZEROS, 16, false, "unpack");
    z = zp_info(true, false);
    EXPECT_PLAN(&ci, INVALID, "unpack: packedZeros absent", ZP_NAME ".packedZeros is absent");

    /* Repack. */
    z = zp_info(false, true);
    BkW4A16GptqRepackInfo ri = v_repack(&z, false);
    EXPECT_PLAN(&ri, BK_SUCCESS, "GPTQ repack with zero points", NULL);
    expect_slots(ctx, &ri, 9, BK_W4A16_REPACK_BINDING_PACKED_ZEROS, 16, true, "GPTQ repack");
    z.checkpointFormat = BK_W4A16_CHECKPOINT_AWQ;
    ri = v_repack(&z, true);
    EXPECT_PLAN(&ri, BK_SUCCESS, "AWQ repack", NULL);
    ri.gIdx = w4a16_vec(BK_DATA_TYPE_I32, VK), ri.perm = w4a16_vec(BK_DATA_TYPE_I32, VK);
    EXPECT_PLAN(&ri, INVALID, "AWQ repack with gIdx", "gIdx is given", "no g_idx");
    ri = v_repack(&z, true), ri.qweight = w4a16_mat(BK_DATA_TYPE_I32, VK, VN);
    EXPECT_PLAN(&ri, INVALID, "AWQ repack: qweight [K, N] read as [K, N/8]",
                "scales.extent[1] = 128 must equal N = 1024");
    ri = v_repack(&z, true), ri.qzeros.extent[1] = VN;
    EXPECT_PLAN(&ri, INVALID, "AWQ repack: qzeros N columns", "qzeros.extent[1] = 128",
                "N/8 = 16");
    z = zp_info(true, true);
    ri = v_repack(&z, false);
    EXPECT_PLAN(&ri, INVALID, "repack: plain zeros given", ZP_NAME ".zeros.dataType = BK_DATA_TYPE_U8",
                "a repack");
    z = zp_info(false, false);
    EXPECT_PLAN(&ri, INVALID, "repack: packedZeros absent", ZP_NAME ".packedZeros is absent");

    /* A misaligned packedZeros binding at run time. */
    z = zp_info(false, true);
    g = v_gemm(&z);
    BkPlan plan = BK_NULL_HANDLE;
    struct bkt_buffer buf = bkt_alloc(ctx, 1 << 16);
    if (bkt_create_plan(ctx, &g, &plan) == BK_SUCCESS) {
        const BkDeviceAddress b = buf.address;
        const BkDeviceAddress bind[6] = { b, b + 4096, b + 12288, 0, b + 16384, b + 32768 + 4 };
        BKT_EXPECT(bkt_run(ctx, plan, 6, bind), BK_ERROR_MISALIGNED_OPERAND, "packedZeros",
                   "gemm: packedZeros 4 bytes past 16-byte alignment is refused at run time");
    } else {
        tap_ok(false, "gemm plan for the alignment check");
    }
    bkDestroyPlan(plan);
    bkt_free(ctx, &buf);
#undef EXPECT_PLAN
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(303);
    for (size_t t = 0; t < 2; t++)
        for (size_t gi = 0; gi < GROUP_SIZES; gi++) {
            quantize_case(ctx, &rng, half_types[t], group_sizes[gi]);
            pack_case(ctx, &rng, half_types[t], group_sizes[gi]);
            gemm_case(ctx, &rng, half_types[t], group_sizes[gi], bkt_rand_int(&rng, 1, 40),
                      w4a16_random_k(&rng, group_sizes[gi], 3), 64 * bkt_rand_int(&rng, 1, 3),
                      gi % 2 == 1);
        }
    gemm_case(ctx, &rng, BK_DATA_TYPE_F16, 128, 70, 512, 320, false);
    const struct ckpt_case ckpts[] = {
        { BK_W4A16_CHECKPOINT_AWQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_F16, 128, false, false },
        { BK_W4A16_CHECKPOINT_AWQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_BF16, 32, false, false },
        { BK_W4A16_CHECKPOINT_AWQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_F16,
          BK_W4A16_GROUP_PER_CHANNEL, false, false },
        { BK_W4A16_CHECKPOINT_GPTQ, BK_W4A16_GPTQ_ZEROS_MINUS_ONE, BK_DATA_TYPE_F16, 128, false,
          false },
        { BK_W4A16_CHECKPOINT_GPTQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_BF16, 64, false,
          false },
        { BK_W4A16_CHECKPOINT_GPTQ, BK_W4A16_GPTQ_ZEROS_MINUS_ONE, BK_DATA_TYPE_F16, 32, true,
          false },
        { BK_W4A16_CHECKPOINT_GPTQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_F16, 64, false,
          true },
    };
    for (size_t i = 0; i < sizeof ckpts / sizeof ckpts[0]; i++)
        checkpoint_case(ctx, &rng, &ckpts[i]);
    test_validation(ctx);
    tap_ok(bkt_stray_plans() == 0, "no failed plan creation left a handle");
    bkDestroyContext(ctx);
    return tap_done();
}
