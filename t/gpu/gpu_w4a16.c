/* SPDX-License-Identifier: Apache-2.0 */
/* The W4A16 family on CUDA against the host backend, on fresh random
 * inputs:
 *
 * - quantize (F32, F16, BF16 weights, F16 and BF16 scales, every group
 *   size, a row-major and a column-major weight), pack and unpack: every
 *   output byte equal to the host's;
 * - GPTQ repack with and without act-order g_idx, both zero conventions,
 *   and checkpoints that break each rule: packed, packedScales, perm and
 *   the 32-byte report equal to the host's (only the report when a rule
 *   is broken);
 * - the GEMM for F16 and BF16, every group size, M from 1 to 130 (each
 *   tile height and past it), the K splits 1 to 8
 *   (BK_CUDA_W4A16_SPLITS while the plan is made), both pipelines where
 *   the GPU has the Hopper one (BK_CUDA_W4A16_PIPELINE=cp.async for the
 *   other), both widths of the wgmma kernel's 64-row tiles
 *   (BK_CUDA_W4A16_COLUMNS=256 for the wide one, and an N the planner
 *   takes it for), the wgmma tiles' heights (BK_CUDA_W4A16_ROWS=64, 128,
 *   256, and an M and N the planner takes 128-row tiles for), the
 *   stream-K schedule (BK_CUDA_W4A16_SCHEDULE=stream-k, each height, and
 *   a shape the planner takes it for; its workspace reported, and a run
 *   with one byte less or none refused), K a
 *   multiple of the kernel's 128-row stage or not,
 *   A contiguous, padded, column-major, one element off 16 bytes and
 *   permuted, C row- and column-major: each element of both devices
 *   within w4a16_ref_close of the long double product of the same rounded
 *   weights (CUDA's tiles of 8 rows: of the exact weights, whose group
 *   sums they scale), the gaps of a padded C untouched, and a reusable command
 *   buffer replayed three times giving the same bits;
 * - zero points (BkW4A16ZeroPointsInfo): asymmetric quantize, pack and
 *   unpack with zero points, AWQ and asymmetric GPTQ repacks (act-order
 *   too) byte for byte equal to the host's, and the GEMM's zp kernels at
 *   every tile height, group size and split, A permuted and strided, each
 *   within w4a16_ref_close of the product of (q - z) * scale; on sm_90
 *   every such plan above 32 rows of A names the wgmma kernel's zp form
 *   (bk_w4a16_wgmma_zp_*, ..._sk where stream-K is forced), which runs
 *   at each of its heights and widths, both schedules, splits forced and
 *   chosen, grouped and per-channel scales, N a multiple of its tiles and
 *   not; up to 32 rows of a contiguous A, the Hopper pipeline's
 *   (bk_w4a16_gemm_tma_zp_*, groups of 64 rows and more), and a third
 *   of those cases on the cp.async pipeline.
 * Skips without a GPU; fails instead with BK_TEST_REQUIRE_GPU=1.
 * BK_TEST_ONLY=TEXT runs only the GEMM cases whose description (the
 * start of their TAP line, "GEMM with zero points bf16 g128 M 16 K ...")
 * contains TEXT, for compute-sanitizer runs of a few kernels. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pair.h"
#include "w4a16_ref.h"

static BkContext gpu, host;
static struct bkt_rng rng;
static bool sm90; /* the GPU runs the wgmma kernels (compute capability 9.0) */

static int64_t groups_of(int32_t gs, int64_t k)
{
    return k / w4a16_ref_group_rows(gs, k);
}

/* ---- Conversions ------------------------------------------------------------ */

/* The bindings of PACK and UNPACK: the plain form (quantized q, scales s)
 * and the packed one (p, ps); no weight. */
static void plain_and_packed(struct binding b[5], void *q, void *s, void *p, void *ps, int64_t k,
                             int64_t n, int64_t groups)
{
    b[0] = (struct binding){ 0 };
    b[1] = (struct binding){ q, (uint64_t)(k * n), 0 };
    b[2] = (struct binding){ s, (uint64_t)(groups * n) * 2, 0 };
    b[3] = (struct binding){ p, (uint64_t)(k / 16 * 2 * n) * 4, 0 };
    b[4] = (struct binding){ ps, (uint64_t)(groups * n) * 2, 0 };
}

static void test_quantize_pack(BkDataType wtype, BkDataType stype, int32_t gs, int64_t k,
                               int64_t n, bool column_major)
{
    const int64_t groups = groups_of(gs, k);
    const size_t es = bkt_type_size(wtype);
    void *w = malloc((size_t)(k * n) * es);
    for (int64_t i = 0; i < k * n; i++)
        bkt_store(w, wtype, i, bkt_rand_value(&rng, wtype, -3, 3) * (i % 97 == 0 ? 0 : 1));
    BkW4A16ConvertInfo q = { .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO,
                             .conversion = BK_W4A16_QUANTIZE, .groupSize = gs };
    q.weight =
        column_major ? w4a16_mat_strided(wtype, k, n, 1, k) : w4a16_mat_strided(wtype, k, n, 0, 0);
    q.quantized = w4a16_mat_strided(BK_DATA_TYPE_U8, k, n, 0, 0);
    q.scales = w4a16_mat_strided(stype, groups, n, 0, 0);
    uint8_t *qd = malloc((size_t)(k * n)), *qh = malloc((size_t)(k * n));
    uint16_t *sd = malloc((size_t)(groups * n) * 2), *sh = malloc((size_t)(groups * n) * 2);
    poison(qd, (uint64_t)(k * n)), poison(qh, (uint64_t)(k * n));
    poison(sd, (uint64_t)(groups * n * 2)), poison(sh, (uint64_t)(groups * n * 2));
    struct binding bd[5] = { { w, (uint64_t)(k * n) * es, 0 }, { qd, (uint64_t)(k * n), 0 },
                             { sd, (uint64_t)(groups * n) * 2, 0 } };
    struct binding bh[5] = { { w, (uint64_t)(k * n) * es, 0 }, { qh, (uint64_t)(k * n), 0 },
                             { sh, (uint64_t)(groups * n) * 2, 0 } };
    char label[128];
    snprintf(label, sizeof label, "quantize %s -> %s scales, %s, K %lld N %lld%s",
             bkt_type_name(wtype), bkt_type_name(stype), w4a16_group_name(gs), (long long)k,
             (long long)n, column_major ? ", column-major" : "");
    BkResult rd = run_images(gpu, &q, bd, 5, 1, NULL), rh = run_images(host, &q, bh, 5, 1, NULL);
    tap_ok(rd == BK_SUCCESS && rh == BK_SUCCESS && memcmp(qd, qh, (size_t)(k * n)) == 0 &&
               memcmp(sd, sh, (size_t)(groups * n) * 2) == 0,
           "%s: values and scales equal to the host's", label);

    /* Pack both devices' way from the same plain form, then unpack on CUDA. */
    const uint64_t pbytes = (uint64_t)(k / 16 * 2 * n) * 4;
    uint32_t *pd = malloc(pbytes), *ph = malloc(pbytes);
    uint16_t *psd = malloc((size_t)(groups * n) * 2), *psh = malloc((size_t)(groups * n) * 2);
    poison(pd, pbytes), poison(ph, pbytes);
    poison(psd, (uint64_t)(groups * n * 2)), poison(psh, (uint64_t)(groups * n * 2));
    BkW4A16ConvertInfo pk = { .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO,
                              .conversion = BK_W4A16_PACK, .groupSize = gs };
    pk.quantized = q.quantized;
    pk.scales = q.scales;
    pk.packed = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 16, 2 * n, 0, 0);
    pk.packedScales = w4a16_mat_strided(stype, groups, n, 0, 0);
    struct binding pbd[5], pbh[5];
    plain_and_packed(pbd, qh, sh, pd, psd, k, n, groups);
    plain_and_packed(pbh, qh, sh, ph, psh, k, n, groups);
    rd = run_images(gpu, &pk, pbd, 5, 1, NULL);
    rh = run_images(host, &pk, pbh, 5, 1, NULL);
    tap_ok(rd == BK_SUCCESS && rh == BK_SUCCESS && memcmp(pd, ph, pbytes) == 0 &&
               memcmp(psd, psh, (size_t)(groups * n) * 2) == 0,
           "%s: packed equal to the host's", label);

    BkW4A16ConvertInfo up = pk;
    up.conversion = BK_W4A16_UNPACK;
    uint8_t *qu = malloc((size_t)(k * n));
    uint16_t *su = malloc((size_t)(groups * n) * 2);
    poison(qu, (uint64_t)(k * n)), poison(su, (uint64_t)(groups * n * 2));
    struct binding ubd[5];
    plain_and_packed(ubd, qu, su, pd, psd, k, n, groups);
    rd = run_images(gpu, &up, ubd, 5, 1, NULL);
    tap_ok(rd == BK_SUCCESS && memcmp(qu, qh, (size_t)(k * n)) == 0 &&
               memcmp(su, sh, (size_t)(groups * n) * 2) == 0,
           "%s: unpack on CUDA gives the plain form back", label);
    free(w), free(qd), free(qh), free(sd), free(sh), free(pd), free(ph), free(psd), free(psh);
    free(qu), free(su);
}

static void test_conversions(void)
{
    static const BkDataType wtypes[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    static const int32_t groups[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL };
    for (int t = 0; t < 3; t++)
        for (int g = 0; g < 4; g++)
            test_quantize_pack(wtypes[t], g % 2 ? BK_DATA_TYPE_BF16 : BK_DATA_TYPE_F16, groups[g],
                               256, 192, (t + g) % 3 == 0);
    test_quantize_pack(BK_DATA_TYPE_F16, BK_DATA_TYPE_F16, 128, 1024, 640, false);
}

/* ---- GPTQ repack -------------------------------------------------------------- */

enum fault { FAULT_NONE, FAULT_ZERO, FAULT_G_IDX, FAULT_UNEVEN };

static void test_repack(BkDataType stype, int32_t gs, bool act_order, BkW4A16GptqZeros zeros,
                        enum fault fault)
{
    const int64_t k = 512, n = 128, groups = groups_of(gs, k), rows = k / groups;
    uint8_t *q = malloc((size_t)(k * n)), *z = malloc((size_t)(groups * n));
    for (int64_t i = 0; i < k * n; i++)
        q[i] = (uint8_t)bkt_rand_int(&rng, 0, 15);
    for (int64_t i = 0; i < groups * n; i++)
        z[i] = zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? 7 : 8;
    if (fault == FAULT_ZERO)
        z[bkt_rand_int(&rng, 0, groups * n - 1)] = 5;
    uint32_t *qw = malloc((size_t)(k / 8 * n) * 4), *qz = malloc((size_t)(groups * n / 8) * 4);
    w4a16_ref_gptq_pack(q, k, n, qw);
    w4a16_ref_gptq_pack_zeros(z, groups, n, qz);
    uint16_t *s = malloc((size_t)(groups * n) * 2);
    for (int64_t i = 0; i < groups * n; i++)
        s[i] = stype == BK_DATA_TYPE_BF16
                   ? bkt_f32_to_bf16((float)bkt_rand_uniform(&rng, 0.01, 0.1))
                   : bkt_f32_to_f16((float)bkt_rand_uniform(&rng, 0.01, 0.1));
    /* g_idx: row j of a random order of the rows is in group j / rows. */
    int32_t *g_idx = malloc((size_t)k * 4), *order = malloc((size_t)k * 4);
    for (int64_t i = 0; i < k; i++)
        order[i] = (int32_t)i;
    for (int64_t i = k - 1; act_order && i > 0; i--) {
        int64_t j = bkt_rand_int(&rng, 0, i);
        int32_t t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (int64_t j = 0; j < k; j++)
        g_idx[order[j]] = (int32_t)(j / rows);
    if (fault == FAULT_G_IDX)
        g_idx[bkt_rand_int(&rng, 0, k - 1)] = (int32_t)groups;
    if (fault == FAULT_UNEVEN && groups > 1)
        g_idx[order[0]] = (int32_t)(groups - 1);
    const bool with_g_idx = act_order || fault == FAULT_G_IDX || fault == FAULT_UNEVEN;

    BkW4A16GptqRepackInfo info = { .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO,
                                   .zeros = zeros, .groupSize = gs };
    info.qweight = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 8, n, 0, 0);
    info.scales = w4a16_mat_strided(stype, groups, n, 0, 0);
    info.qzeros = w4a16_mat_strided(BK_DATA_TYPE_I32, groups, n / 8, 0, 0);
    if (with_g_idx)
        info.gIdx = w4a16_vec(BK_DATA_TYPE_I32, k);
    info.packed = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 16, 2 * n, 0, 0);
    info.packedScales = w4a16_mat_strided(stype, groups, n, 0, 0);
    info.perm = w4a16_vec(BK_DATA_TYPE_I32, k);
    const uint64_t pbytes = (uint64_t)(k / 16 * 2 * n) * 4, sbytes = (uint64_t)(groups * n) * 2;
    void *out[2][4];
    for (int d = 0; d < 2; d++) {
        out[d][0] = malloc(pbytes), out[d][1] = malloc(sbytes);
        out[d][2] = malloc((size_t)k * 4), out[d][3] = malloc(32);
        poison(out[d][0], pbytes), poison(out[d][1], sbytes);
        poison(out[d][2], (uint64_t)k * 4), poison(out[d][3], 32);
    }
    BkResult r[2];
    for (int d = 0; d < 2; d++) {
        struct binding b[8] = {
            { qw, (uint64_t)(k / 8 * n) * 4, 0 },
            { s, sbytes, 0 },
            { qz, (uint64_t)(groups * n / 8) * 4, 0 },
            { with_g_idx ? g_idx : NULL, with_g_idx ? (uint64_t)k * 4 : 0, 0 },
            { out[d][0], pbytes, 0 },
            { out[d][1], sbytes, 0 },
            { out[d][2], (uint64_t)k * 4, 0 },
            { out[d][3], 32, 0 },
        };
        r[d] = run_images(d ? host : gpu, &info, b, 8, 1, NULL);
    }
    static const char *const fault_names[] = { "symmetric", "one asymmetric zero",
                                               "a g_idx out of range", "uneven groups" };
    BkW4A16RepackReport rep;
    memcpy(&rep, out[0][3], sizeof rep);
    bool same = r[0] == BK_SUCCESS && r[1] == BK_SUCCESS && memcmp(out[0][3], out[1][3], 32) == 0;
    if (fault == FAULT_NONE)
        same = same && rep.status == BK_W4A16_REPACK_STATUS_OK &&
               memcmp(out[0][0], out[1][0], pbytes) == 0 &&
               memcmp(out[0][1], out[1][1], sbytes) == 0 &&
               memcmp(out[0][2], out[1][2], (size_t)k * 4) == 0;
    else
        same = same && rep.status != BK_W4A16_REPACK_STATUS_OK;
    tap_ok(same,
           "GPTQ repack, %s scales, %s, %s, %s, %s: %s equal to the host's (status %u, "
           "identity %u)",
           bkt_type_name(stype), w4a16_group_name(gs), act_order ? "act-order" : "in order",
           zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? "zeros - 1" : "exact zeros", fault_names[fault],
           fault == FAULT_NONE ? "outputs and report" : "report", rep.status,
           (unsigned)rep.identityPermutation);
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 4; i++)
            free(out[d][i]);
    free(q), free(z), free(qw), free(qz), free(s), free(g_idx), free(order);
}

static void test_repacks(void)
{
    test_repack(BK_DATA_TYPE_F16, 128, false, BK_W4A16_GPTQ_ZEROS_EXACT, FAULT_NONE);
    test_repack(BK_DATA_TYPE_F16, 128, true, BK_W4A16_GPTQ_ZEROS_MINUS_ONE, FAULT_NONE);
    test_repack(BK_DATA_TYPE_BF16, 32, true, BK_W4A16_GPTQ_ZEROS_EXACT, FAULT_NONE);
    test_repack(BK_DATA_TYPE_BF16, 64, false, BK_W4A16_GPTQ_ZEROS_MINUS_ONE, FAULT_NONE);
    test_repack(BK_DATA_TYPE_F16, BK_W4A16_GROUP_PER_CHANNEL, true, BK_W4A16_GPTQ_ZEROS_EXACT,
                FAULT_NONE);
    test_repack(BK_DATA_TYPE_F16, 128, true, BK_W4A16_GPTQ_ZEROS_EXACT, FAULT_ZERO);
    test_repack(BK_DATA_TYPE_F16, 64, true, BK_W4A16_GPTQ_ZEROS_MINUS_ONE, FAULT_G_IDX);
    test_repack(BK_DATA_TYPE_BF16, 128, true, BK_W4A16_GPTQ_ZEROS_EXACT, FAULT_UNEVEN);
}

/* ---- Zero-point conversions and repacks ------------------------------------------ */

/* Asymmetric quantize of an F32 weight (some columns all positive or all
 * negative), pack with zero points on both devices, unpack on CUDA. */
static void test_zp_convert(BkDataType stype, int32_t gs, int64_t k, int64_t n,
                            bool column_major)
{
    const int64_t groups = groups_of(gs, k);
    float *w = malloc((size_t)(k * n) * 4);
    for (int64_t j = 0; j < n; j++) {
        const double off = bkt_rand_uniform(&rng, -2, 2);
        for (int64_t i = 0; i < k; i++)
            w[column_major ? j * k + i : i * n + j] =
                (float)(off + bkt_rand_uniform(&rng, -1, 1));
    }
    const uint64_t qb = (uint64_t)(k * n), sb = (uint64_t)(groups * n) * 2,
                   zb = (uint64_t)(groups * n), pb = (uint64_t)(k / 16 * 2 * n) * 4,
                   pzb = (uint64_t)(groups * n / 8) * 4;
    void *o[2][6];
    const uint64_t ob[6] = { qb, sb, zb, pb, sb, pzb };
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 6; i++)
            o[d][i] = malloc(ob[i]), poison(o[d][i], ob[i]);
    BkW4A16ZeroPointsInfo zp = { .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO };
    zp.zeros = w4a16_mat_strided(BK_DATA_TYPE_U8, groups, n, 0, 0);
    BkW4A16ConvertInfo ci = { .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, .pNext = &zp,
                              .conversion = BK_W4A16_QUANTIZE, .groupSize = gs };
    ci.weight = column_major ? w4a16_mat_strided(BK_DATA_TYPE_F32, k, n, 1, k)
                             : w4a16_mat_strided(BK_DATA_TYPE_F32, k, n, 0, 0);
    ci.quantized = w4a16_mat_strided(BK_DATA_TYPE_U8, k, n, 0, 0);
    ci.scales = w4a16_mat_strided(stype, groups, n, 0, 0);
    BkResult r[2];
    for (int d = 0; d < 2; d++) {
        struct binding b[7] = { { w, (uint64_t)(k * n) * 4, 0 }, { o[d][0], qb, 0 },
                                { o[d][1], sb, 0 }, { 0 }, { 0 }, { o[d][2], zb, 0 } };
        r[d] = run_images(d ? host : gpu, &ci, b, 7, 1, NULL);
    }
    char label[128];
    snprintf(label, sizeof label, "zero points: quantize f32 -> %s, %s, K %lld N %lld%s",
             bkt_type_name(stype), w4a16_group_name(gs), (long long)k, (long long)n,
             column_major ? ", column-major" : "");
    bool same = r[0] == BK_SUCCESS && r[1] == BK_SUCCESS;
    for (int i = 0; i < 3; i++)
        same = same && memcmp(o[0][i], o[1][i], ob[i]) == 0;
    tap_ok(same, "%s: values, scales and zero points equal to the host's", label);

    ci.conversion = BK_W4A16_PACK;
    ci.weight = (BkTensorDesc){ 0 };
    ci.packed = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 16, 2 * n, 0, 0);
    ci.packedScales = w4a16_mat_strided(stype, groups, n, 0, 0);
    zp.packedZeros = w4a16_mat_strided(BK_DATA_TYPE_I32, groups, n / 8, 0, 0);
    for (int d = 0; d < 2; d++) {
        struct binding b[7] = { { 0 }, { o[1][0], qb, 0 }, { o[1][1], sb, 0 },
                                { o[d][3], pb, 0 }, { o[d][4], sb, 0 }, { o[1][2], zb, 0 },
                                { o[d][5], pzb, 0 } };
        r[d] = run_images(d ? host : gpu, &ci, b, 7, 1, NULL);
    }
    same = r[0] == BK_SUCCESS && r[1] == BK_SUCCESS;
    for (int i = 3; i < 6; i++)
        same = same && memcmp(o[0][i], o[1][i], ob[i]) == 0;
    tap_ok(same, "%s: packed, packedScales and packedZeros equal to the host's", label);

    ci.conversion = BK_W4A16_UNPACK;
    for (int i = 0; i < 3; i++)
        poison(o[0][i], ob[i]);
    struct binding b[7] = { { 0 }, { o[0][0], qb, 0 }, { o[0][1], sb, 0 }, { o[1][3], pb, 0 },
                            { o[1][4], sb, 0 }, { o[0][2], zb, 0 }, { o[1][5], pzb, 0 } };
    r[0] = run_images(gpu, &ci, b, 7, 1, NULL);
    same = r[0] == BK_SUCCESS;
    for (int i = 0; i < 3; i++)
        same = same && memcmp(o[0][i], o[1][i], ob[i]) == 0;
    tap_ok(same, "%s: unpack on CUDA gives q, scales and zero points back", label);
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 6; i++)
            free(o[d][i]);
    free(w);
}

/* An AWQ or asymmetric GPTQ checkpoint of random q, z and scales, made
 * by the reference packers: every output of the repack equal to the
 * host's, and the report OK. */
static void test_zp_repack(BkW4A16CheckpointFormat format, BkW4A16GptqZeros zeros,
                           BkDataType stype, int32_t gs, bool act_order)
{
    const bool awq = format == BK_W4A16_CHECKPOINT_AWQ;
    const int64_t k = 512, n = 192, groups = groups_of(gs, k), rows = k / groups;
    uint8_t *q = malloc((size_t)(k * n)), *z = malloc((size_t)(groups * n));
    uint16_t *s = malloc((size_t)(groups * n) * 2);
    for (int64_t i = 0; i < k * n; i++)
        q[i] = (uint8_t)bkt_rand_int(&rng, 0, 15);
    for (int64_t i = 0; i < groups * n; i++) {
        z[i] = (uint8_t)bkt_rand_int(&rng, 0, 15);   /* as stored */
        s[i] = stype == BK_DATA_TYPE_BF16
                   ? bkt_f32_to_bf16((float)bkt_rand_uniform(&rng, 0.01, 0.1))
                   : bkt_f32_to_f16((float)bkt_rand_uniform(&rng, 0.01, 0.1));
    }
    const uint64_t qwb = (uint64_t)(k * n / 8) * 4, qzb = (uint64_t)(groups * n / 8) * 4;
    uint32_t *qw = malloc(qwb), *qz = malloc(qzb);
    if (awq) {
        w4a16_ref_awq_pack(q, k, n, qw);
        w4a16_ref_awq_pack(z, groups, n, qz);
    } else {
        w4a16_ref_gptq_pack(q, k, n, qw);
        w4a16_ref_gptq_pack_zeros(z, groups, n, qz);
    }
    int32_t *g_idx = malloc((size_t)k * 4), *order = malloc((size_t)k * 4);
    for (int64_t i = 0; i < k; i++)
        order[i] = (int32_t)i;
    for (int64_t i = k - 1; act_order && i > 0; i--) {
        const int64_t j = bkt_rand_int(&rng, 0, i);
        const int32_t t = order[i];
        order[i] = order[j], order[j] = t;
    }
    for (int64_t j = 0; j < k; j++)
        g_idx[order[j]] = (int32_t)(j / rows);
    const BkW4A16ZeroPointsInfo zp = {
        .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO, .checkpointFormat = format,
        .packedZeros = w4a16_mat_strided(BK_DATA_TYPE_I32, groups, n / 8, 0, 0),
    };
    BkW4A16GptqRepackInfo info = { .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO,
                                   .pNext = &zp, .zeros = zeros, .groupSize = gs };
    info.qweight = awq ? w4a16_mat_strided(BK_DATA_TYPE_I32, k, n / 8, 0, 0)
                       : w4a16_mat_strided(BK_DATA_TYPE_I32, k / 8, n, 0, 0);
    info.scales = w4a16_mat_strided(stype, groups, n, 0, 0);
    info.qzeros = w4a16_mat_strided(BK_DATA_TYPE_I32, groups, n / 8, 0, 0);
    if (act_order)
        info.gIdx = w4a16_vec(BK_DATA_TYPE_I32, k);
    info.packed = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 16, 2 * n, 0, 0);
    info.packedScales = w4a16_mat_strided(stype, groups, n, 0, 0);
    info.perm = w4a16_vec(BK_DATA_TYPE_I32, k);
    const uint64_t ob[5] = { (uint64_t)(k / 16 * 2 * n) * 4, (uint64_t)(groups * n) * 2,
                             (uint64_t)k * 4, 32, qzb };
    void *o[2][5];
    BkResult r[2];
    for (int d = 0; d < 2; d++) {
        for (int i = 0; i < 5; i++)
            o[d][i] = malloc(ob[i]), poison(o[d][i], ob[i]);
        struct binding b[9] = {
            { qw, qwb, 0 }, { s, (uint64_t)(groups * n) * 2, 0 }, { qz, qzb, 0 },
            { act_order ? g_idx : NULL, act_order ? (uint64_t)k * 4 : 0, 0 },
            { o[d][0], ob[0], 0 }, { o[d][1], ob[1], 0 }, { o[d][2], ob[2], 0 },
            { o[d][3], ob[3], 0 }, { o[d][4], ob[4], 0 },
        };
        r[d] = run_images(d ? host : gpu, &info, b, 9, 1, NULL);
    }
    BkW4A16RepackReport rep;
    memcpy(&rep, o[0][3], sizeof rep);
    bool same = r[0] == BK_SUCCESS && r[1] == BK_SUCCESS && rep.status == BK_W4A16_REPACK_STATUS_OK;
    for (int i = 0; i < 5; i++)
        same = same && memcmp(o[0][i], o[1][i], ob[i]) == 0;
    tap_ok(same, "%s repack with zero points, %s, %s scales, %s%s: packed, packedScales, perm, "
           "report and packedZeros equal to the host's (status %u)", awq ? "AWQ" : "GPTQ",
           zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? "zeros - 1" : "exact zeros",
           bkt_type_name(stype), w4a16_group_name(gs), act_order ? ", act-order" : "",
           rep.status);
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 5; i++)
            free(o[d][i]);
    free(q), free(z), free(s), free(qw), free(qz), free(g_idx), free(order);
}

static void test_zero_point_conversions(void)
{
    static const int32_t groups[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL };
    for (int g = 0; g < 4; g++)
        test_zp_convert(g % 2 ? BK_DATA_TYPE_BF16 : BK_DATA_TYPE_F16, groups[g], 256, 192,
                        g == 1);
    test_zp_repack(BK_W4A16_CHECKPOINT_AWQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_F16, 128,
                   false);
    test_zp_repack(BK_W4A16_CHECKPOINT_AWQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_BF16,
                   BK_W4A16_GROUP_PER_CHANNEL, false);
    test_zp_repack(BK_W4A16_CHECKPOINT_GPTQ, BK_W4A16_GPTQ_ZEROS_MINUS_ONE, BK_DATA_TYPE_F16, 32,
                   false);
    test_zp_repack(BK_W4A16_CHECKPOINT_GPTQ, BK_W4A16_GPTQ_ZEROS_EXACT, BK_DATA_TYPE_BF16, 64,
                   true);
}

/* ---- GEMM ------------------------------------------------------------------------ */

enum a_layout { A_ROW, A_PADDED, A_COLUMN, A_OFFSET, A_PERM, A_LAYOUTS };
static const char *const a_layout_names[] = { "A row-major", "A padded", "A column-major",
                                              "A off 16 bytes", "A permuted" };

struct gcase {
    BkDataType type;
    int32_t gs;
    int64_t m, k, n;
    enum a_layout a_layout;
    bool c_column;
    int splits;            /* 0: the planner's choice */
    uint32_t replays;
    bool portable;         /* the cp.async pipeline even where TMA runs */
    bool wide;             /* tiles of 64 rows 256 columns wide (BK_CUDA_W4A16_COLUMNS) */
    int rows;              /* the wgmma tiles' rows (BK_CUDA_W4A16_ROWS); 0: the planner's */
    bool stream_k;         /* the wgmma kernel in stream-K (BK_CUDA_W4A16_SCHEDULE) */
    bool zeros;            /* random zero points (BkW4A16ZeroPointsInfo) */
};

static void test_gemm(const struct gcase *c)
{
    const int64_t m = c->m, k = c->k, n = c->n, groups = groups_of(c->gs, k);
    const BkDataType t = c->type;
    char what[160];
    snprintf(what, sizeof what, "GEMM%s %s %s M %lld K %lld N %lld, %s, C %s",
             c->zeros ? " with zero points" : "", bkt_type_name(t), w4a16_group_name(c->gs),
             (long long)m, (long long)k, (long long)n, a_layout_names[c->a_layout],
             c->c_column ? "column-major" : "padded rows");
    const char *only = getenv("BK_TEST_ONLY");
    if (only && !strstr(what, only))
        return;
    /* A plain weight with scales of the type, packed by the host's plans. */
    uint8_t *q = malloc((size_t)(k * n));
    uint16_t *s = malloc((size_t)(groups * n) * 2);
    for (int64_t i = 0; i < k * n; i++)
        q[i] = (uint8_t)bkt_rand_int(&rng, 0, 15);
    for (int64_t i = 0; i < groups * n; i++)
        s[i] = t == BK_DATA_TYPE_BF16 ? bkt_f32_to_bf16((float)bkt_rand_uniform(&rng, 0.005, 0.05))
                                      : bkt_f32_to_f16((float)bkt_rand_uniform(&rng, 0.005, 0.05));
    const uint64_t pbytes = (uint64_t)(k / 16 * 2 * n) * 4, sbytes = (uint64_t)(groups * n) * 2;
    uint32_t *packed = malloc(pbytes);
    uint16_t *pscales = malloc(sbytes);
    w4a16_ref_pack(q, s, k, n, c->gs, packed, pscales);
    /* Zero points: 8 everywhere when symmetric. */
    const uint64_t zbytes = (uint64_t)(groups * n / 8) * 4;
    uint8_t *z = malloc((size_t)(groups * n));
    uint32_t *pzeros = malloc(zbytes);
    for (int64_t i = 0; i < groups * n; i++)
        z[i] = c->zeros ? (uint8_t)bkt_rand_int(&rng, 0, 15) : 8;
    w4a16_ref_pack_zeros(z, k, n, c->gs, pzeros);

    /* A in its layout. */
    const int64_t lda = c->a_layout == A_PADDED ? k + 24 : k;
    int64_t a_rs = lda, a_cs = 1, a_elems = m * lda;
    if (c->a_layout == A_COLUMN)
        a_rs = 1, a_cs = m, a_elems = m * k;
    const uint64_t a_bytes = (uint64_t)(a_elems > 0 ? a_elems : 1) * 2;
    void *a = malloc(a_bytes);
    double *av = calloc((size_t)(m * k + 1), sizeof *av);
    for (int64_t i = 0; i < a_elems; i++)
        bkt_store(a, t, i, 0);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < k; j++) {
            const double v = bkt_rand_value(&rng, t, -2, 2);
            bkt_store(a, t, i * a_rs + j * a_cs, v);
            av[i * k + j] = v;
        }
    int32_t *perm = NULL;
    if (c->a_layout == A_PERM) {
        perm = malloc((size_t)k * 4);
        for (int64_t j = 0; j < k; j++)
            perm[j] = (int32_t)j;
        for (int64_t j = k - 1; j > 0; j--) {
            int64_t r = bkt_rand_int(&rng, 0, j);
            int32_t x = perm[j];
            perm[j] = perm[r], perm[r] = x;
        }
    }
    /* C, column-major or row-major with a padded leading dimension. */
    const int64_t ldc = c->c_column ? m : n + 8;
    const int64_t c_rs = c->c_column ? 1 : ldc, c_cs = c->c_column ? m : 1;
    const int64_t c_elems = c->c_column ? m * n : (m > 0 ? (m - 1) * ldc + n : 0);
    const uint64_t c_bytes = (uint64_t)(c_elems > 0 ? c_elems : 1) * 2;

    BkW4A16GemmInfo info = { .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = c->gs };
    info.a = w4a16_mat_strided(t, m, k, a_rs, a_cs);
    info.packed = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 16, 2 * n, 0, 0);
    info.packedScales = w4a16_mat_strided(t, groups, n, 0, 0);
    if (perm)
        info.perm = w4a16_vec(BK_DATA_TYPE_I32, k);
    info.c = w4a16_mat_strided(t, m, n, c_rs, c_cs);
    const BkW4A16ZeroPointsInfo zp = {
        .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO,
        .packedZeros = w4a16_mat_strided(BK_DATA_TYPE_I32, groups, n / 8, 0, 0),
    };
    if (c->zeros)
        info.pNext = &zp;

    void *out[2];
    BkResult r[2];
    char kernel[BK_MAX_KERNEL_NAME_SIZE] = "";
    char splits[8], rows[8];
    snprintf(splits, sizeof splits, "%d", c->splits);
    snprintf(rows, sizeof rows, "%d", c->rows);
    for (int d = 0; d < 2; d++) {
        out[d] = malloc(c_bytes);
        poison(out[d], c_bytes);
        struct binding b[6] = {
            { a, a_bytes, c->a_layout == A_OFFSET ? 2u : 0u }, { packed, pbytes, 0 },
            { pscales, sbytes, 0 }, { perm, perm ? (uint64_t)k * 4 : 0, 0 }, { out[d], c_bytes, 0 },
            { pzeros, zbytes, 0 },
        };
        if (d == 0 && c->splits)
            setenv("BK_CUDA_W4A16_SPLITS", splits, 1);
        if (d == 0 && c->portable)
            setenv("BK_CUDA_W4A16_PIPELINE", "cp.async", 1);
        if (d == 0 && c->wide)
            setenv("BK_CUDA_W4A16_COLUMNS", "256", 1);
        if (d == 0 && c->rows)
            setenv("BK_CUDA_W4A16_ROWS", rows, 1);
        if (d == 0 && c->stream_k)
            setenv("BK_CUDA_W4A16_SCHEDULE", "stream-k", 1);
        r[d] = run_images(d ? host : gpu, &info, b, c->zeros ? 6 : 5, d ? 1 : c->replays,
                          d ? NULL : kernel);
        unsetenv("BK_CUDA_W4A16_SPLITS");
        unsetenv("BK_CUDA_W4A16_PIPELINE");
        unsetenv("BK_CUDA_W4A16_COLUMNS");
        unsetenv("BK_CUDA_W4A16_ROWS");
        unsetenv("BK_CUDA_W4A16_SCHEDULE");
    }
    if (kernel[0])
        kernel_seen(kernel);
    /* Zero points above 32 rows take the wgmma kernel's zp form on sm_90,
     * in stream-K where forced (every stream-K case has a unit an SM);
     * up to 32 rows of a contiguous A, the Hopper pipeline's where its
     * stages hold the zero rows. */
    bool kernel_ok = true;
    if (sm90 && c->zeros && m > 32 && !c->portable) {
        const size_t len = strlen(kernel);
        kernel_ok = strncmp(kernel, "bk_w4a16_wgmma_zp_", 18) == 0 &&
                    (!c->stream_k || (len > 3 && strcmp(kernel + len - 3, "_sk") == 0));
        if (!kernel_ok)
            tap_diag("the plan took %s, not the wgmma kernel's zp form%s", kernel,
                     c->stream_k ? " in stream-K" : "");
    }
    if (sm90 && c->zeros && m > 0 && m <= 32 && !c->portable &&
        (c->a_layout == A_ROW || c->a_layout == A_PADDED)) {
        /* Groups of 32 hold four zero rows a stage: the cp.async kernels. */
        const char *want = c->gs == 32 ? "bk_w4a16_gemm_zp_" : "bk_w4a16_gemm_tma_zp_";
        kernel_ok = strncmp(kernel, want, strlen(want)) == 0;
        if (!kernel_ok)
            tap_diag("the plan took %s, not %s*", kernel, want);
    }

    /* The exact product of the weights: rounded to the type for the host,
     * and for CUDA but where its tiles of 8 rows take them exactly. */
    double *w = malloc((size_t)(k * n) * sizeof *w);
    long double *ref[2];
    double *size[2];
    for (int d = 0; d < 2; d++) {
        if (d == 0 && w4a16_ref_cuda_exact(m))
            w4a16_ref_dequant_zp_exact(q, s, z, t, k, n, c->gs, w);
        else
            w4a16_ref_dequant_zp(q, s, z, t, k, n, c->gs, w);
        ref[d] = malloc((size_t)(m * n + 1) * sizeof *ref[d]);
        size[d] = malloc((size_t)(m * n + 1) * sizeof *size[d]);
        w4a16_ref_gemm(av, w, perm, m, k, n, ref[d], size[d]);
    }
    long bad[2] = { 0, 0 }, gaps = 0;
    for (int d = 0; d < 2; d++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                const double got = bkt_load(out[d], t, i * c_rs + j * c_cs);
                if (!w4a16_ref_close(ref[d][i * n + j], size[d][i * n + j], got, t, k) &&
                    bad[d]++ < 3)
                    tap_diag("%s: C[%lld][%lld] = %.9g, exact %.9Lg", d ? "host" : "cuda",
                             (long long)i, (long long)j, got, ref[d][i * n + j]);
            }
    if (!c->c_column) /* the row padding keeps its poison */
        for (int64_t i = 0; i + 1 < m; i++)
            for (int64_t j = n; j < ldc; j++) {
                uint16_t v;
                memcpy(&v, (char *)out[0] + (i * ldc + j) * 2, 2);
                gaps += v != (uint16_t)(BKT_POISON & 0xffffu) && v != (uint16_t)(BKT_POISON >> 16);
            }
    tap_ok(r[0] == BK_SUCCESS && r[1] == BK_SUCCESS && !bad[0] && !bad[1] && !gaps && kernel_ok,
           "%s, splits %s%s (%s): cuda %ld, host %ld misses, %ld gap writes", what,
           c->splits ? splits : "auto", c->replays > 1 ? ", replayed x3" : "", kernel, bad[0],
           bad[1], gaps);
    free(q), free(s), free(packed), free(pscales), free(a), free(av), free(perm), free(w);
    free(ref[0]), free(ref[1]), free(size[0]), free(size[1]);
    free(out[0]), free(out[1]), free(z), free(pzeros);
}

static void test_gemms(void)
{
    static const int32_t groups[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL };
    /* K past the last whole 128-row stage, for each group size. */
    static const int64_t k_tails[] = { 864, 832, 1152, 848 };
    static const int64_t ms[] = { 1, 5, 8, 9, 16, 17, 32, 33, 64, 65, 100, 130 };
    static const int splits[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
    int i = 0;
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < 4; g++)
            for (int mi = 0; mi < 12; mi++, i++) {
                struct gcase c = {
                    .type = t ? BK_DATA_TYPE_BF16 : BK_DATA_TYPE_F16, .gs = groups[g],
                    .m = ms[mi],
                    .k = i % 3 == 0 ? 1024 : i % 3 == 1 ? 512 + 128 * (i % 2) : k_tails[g],
                    .n = (i % 4 == 0) ? 192 : 256 + 64 * (i % 5),
                    .a_layout = (enum a_layout)(i % A_LAYOUTS), .c_column = i % 7 == 3,
                    .splits = splits[i % 9], .replays = i % 11 == 5 ? 3 : 1,
                    .portable = (i / 2) % 2 == 1, .wide = (i / 3) % 2 == 1,
                };
                test_gemm(&c);
            }
    /* Decode shapes the planner splits itself (both pipelines, a permuted
     * A on the Hopper one's producer warp). */
    for (int portable = 0; portable < 2; portable++) {
        struct gcase big = {
            BK_DATA_TYPE_F16, 128, 16, 4096, 4096, A_ROW, false, 0, 1, portable, false, 0, false, false
        };
        test_gemm(&big);
        struct gcase perm = {
            BK_DATA_TYPE_BF16, 128, 1, 2048, 1024, A_PERM, false, 0, 1, portable, false, 0, false, false
        };
        test_gemm(&perm);
    }
    /* Shapes the planner treats specially. */
    static const struct gcase planned[] = {
        /* K past a stage tail, split in two. */
        { BK_DATA_TYPE_BF16, BK_W4A16_GROUP_PER_CHANNEL, 3, 272, 64, A_ROW, false, 2, 1, false,
          false, 0, false, false },
        /* M = 0. */
        { BK_DATA_TYPE_F16, 64, 0, 256, 128, A_ROW, false, 0, 1, false, false, 0, false, false },
        /* N wide enough that the planner itself takes tiles of 64 x 256 on
         * the H100 (66 of them), the last one partly past N. */
        { BK_DATA_TYPE_BF16, 128, 48, 256, 16832, A_ROW, false, 0, 1, false, false, 0, false, false },
        /* M past one tile of each height: 256 rows in tiles of 128 (which
         * the planner itself takes here, where tiles of 256 fill few SMs),
         * 300 in tiles of 64 (the last one partly past M), 200 in one of
         * 256. */
        { BK_DATA_TYPE_F16, 128, 256, 1024, 512, A_ROW, false, 0, 1, false, false, 0, false, false },
        { BK_DATA_TYPE_BF16, 64, 300, 512, 384, A_PADDED, false, 0, 1, false, false, 64, false, false },
        { BK_DATA_TYPE_BF16, 32, 200, 1024, 320, A_ROW, true, 0, 3, false, false, 256, false, false },
        /* Stream-K (a unit per SM at least, else the plan keeps its
         * tiles): each height; tiles shared by up to ~14 CTAs (64 rows,
         * 160 units of 16 stages), C through the vector stores (padded
         * rows) and element by element (column-major), M partly past a
         * tile, replays of one workspace, and a shape the planner itself
         * takes stream-K for on the H100 (140 tiles of 64 x 128, 1.06
         * waves, a tile or more a CTA). */
        { BK_DATA_TYPE_F16, 128, 64, 2048, 1280, A_ROW, false, 0, 1, false, false, 0, true, false },
        { BK_DATA_TYPE_BF16, BK_W4A16_GROUP_PER_CHANNEL, 100, 1024, 2560, A_PADDED, true, 0, 3,
          false, false, 0, true, false },
        { BK_DATA_TYPE_F16, 32, 256, 768, 1536, A_PADDED, false, 0, 3, false, false, 0, true, false },
        { BK_DATA_TYPE_BF16, 64, 300, 512, 1152, A_ROW, false, 0, 1, false, false, 256, true, false },
        { BK_DATA_TYPE_F16, 128, 33, 4096, 17920, A_ROW, false, 0, 3, false, false, 0, false, false },
        /* At least a tile a CTA (133 tiles, 128 rows): whole tiles stored
         * between split ones, each split in two; C both ways. */
        { BK_DATA_TYPE_F16, 64, 130, 512, 17024, A_ROW, false, 0, 3, false, false, 0, true, false },
        { BK_DATA_TYPE_BF16, BK_W4A16_GROUP_PER_CHANNEL, 100, 512, 17024, A_ROW, true, 0, 1,
          false, false, 0, true, false },
    };
    for (size_t j = 0; j < sizeof planned / sizeof planned[0]; j++)
        test_gemm(&planned[j]);
    /* Zero points: the zp kernels at every tile height (M 1 .. 130), each
     * group size, splits forced and chosen, A in each layout. */
    i = 0;
    for (int t = 0; t < 2; t++)
        for (int g = 0; g < 4; g++)
            for (int mi = 0; mi < 12; mi += 2, i++) {
                struct gcase c = {
                    .type = t ? BK_DATA_TYPE_BF16 : BK_DATA_TYPE_F16, .gs = groups[g],
                    .m = ms[mi + i % 2], .k = i % 2 ? 1024 : k_tails[g],
                    .n = (i % 3 == 0) ? 192 : 256 + 64 * (i % 4),
                    .a_layout = (enum a_layout)(i % A_LAYOUTS), .c_column = i % 5 == 2,
                    .splits = splits[i % 9], .replays = i % 7 == 3 ? 3 : 1, .zeros = true,
                    .portable = (i / 2) % 3 == 2,
                };
                test_gemm(&c);
            }
    static const struct gcase zp_planned[] = {
        { BK_DATA_TYPE_F16, 128, 1, 4096, 4096, A_ROW, false, 0, 1, false, false, 0, false, true },
        { BK_DATA_TYPE_BF16, 128, 256, 1024, 512, A_ROW, false, 0, 1, false, false, 0, false,
          true },
        { BK_DATA_TYPE_F16, 32, 0, 256, 128, A_ROW, false, 0, 1, false, false, 0, false, true },
    };
    for (size_t j = 0; j < sizeof zp_planned / sizeof zp_planned[0]; j++)
        test_gemm(&zp_planned[j]);
    /* Zero points in the wgmma kernel: each height (64, 128, 256 rows; M
     * partly past a tile), the wide 64 x 256 tiles, splits forced, K past
     * a stage, N a multiple of the tile or not (or under one), A padded
     * and C column-major, replays; then stream-K at each height (tiles x
     * stages >= the SMs of an H100: 160, 160, 144, 144, 160 units). */
    const BkDataType F16 = BK_DATA_TYPE_F16, BF16 = BK_DATA_TYPE_BF16;
    const int32_t PC = BK_W4A16_GROUP_PER_CHANNEL;
    const struct gcase zp_wgmma[] = {
        { .type = F16, .gs = 128, .m = 64, .k = 1024, .n = 512 },
        { .type = BF16, .gs = 32, .m = 100, .k = 864, .n = 320, .a_layout = A_PADDED },
        { .type = F16, .gs = 64, .m = 256, .k = 1024, .n = 384 },
        { .type = BF16, .gs = PC, .m = 300, .k = 848, .n = 192, .rows = 64 },
        { .type = F16, .gs = 32, .m = 64, .k = 1024, .n = 320, .wide = true },
        { .type = BF16, .gs = 128, .m = 40, .k = 768, .n = 512, .wide = true, .splits = 3 },
        { .type = F16, .gs = PC, .m = 200, .k = 1024, .n = 256, .rows = 256, .c_column = true,
          .replays = 3 },
        { .type = BF16, .gs = 64, .m = 128, .k = 2048, .n = 768, .splits = 4 },
        { .type = F16, .gs = 32, .m = 300, .k = 512, .n = 384, .rows = 128, .splits = 2 },
        /* N narrower than a tile (boxes wider than the tensors). */
        { .type = BF16, .gs = 64, .m = 70, .k = 512, .n = 64 },
        { .type = F16, .gs = 128, .m = 64, .k = 2048, .n = 1280, .stream_k = true },
        { .type = BF16, .gs = 32, .m = 100, .k = 1024, .n = 2560, .stream_k = true,
          .a_layout = A_PADDED },
        { .type = F16, .gs = PC, .m = 256, .k = 768, .n = 1536, .stream_k = true,
          .c_column = true },
        { .type = BF16, .gs = 64, .m = 300, .k = 512, .n = 1152, .rows = 256, .stream_k = true,
          .replays = 3 },
        { .type = BF16, .gs = PC, .m = 65, .k = 2048, .n = 1280, .stream_k = true },
    };
    for (size_t j = 0; j < sizeof zp_wgmma / sizeof zp_wgmma[0]; j++) {
        struct gcase c = zp_wgmma[j];
        c.zeros = true;
        c.replays = c.replays ? c.replays : 1;
        test_gemm(&c);
    }
}

/* A plan the device runs in stream-K reports its workspace (counters and
 * two partial tiles of F32 an SM), and a run given less of it, or none, is
 * refused with a message that names the field. */
static void test_stream_k_workspace(void)
{
    const int64_t m = 64, k = 2048, n = 1280, groups = k / 128;
    const BkDataType t = BK_DATA_TYPE_F16;
    BkW4A16GemmInfo info = { .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = 128 };
    info.a = w4a16_mat_strided(t, m, k, 0, 0);
    info.packed = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 16, 2 * n, 0, 0);
    info.packedScales = w4a16_mat_strided(t, groups, n, 0, 0);
    info.c = w4a16_mat_strided(t, m, n, 0, 0);
    setenv("BK_CUDA_W4A16_SCHEDULE", "stream-k", 1);
    BkPlan plan;
    const BkResult made = bkt_create_plan(gpu, &info, &plan);
    unsetenv("BK_CUDA_W4A16_SCHEDULE");
    if (made != BK_SUCCESS) {
        tap_ok(false, "stream-K plan: %s", bkGetLastErrorMessage());
        return;
    }
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkGetPlanProperties(plan, &props);
    bkGetContextProperties(gpu, &dev);
    if (!strstr(props.kernelName, "_sk")) { /* a GPU without the wgmma kernels */
        tap_ok(props.workspaceSize == 0, "%s (not stream-K) needs no workspace: %llu bytes",
               props.kernelName, (unsigned long long)props.workspaceSize);
        bkDestroyPlan(plan);
        return;
    }
    const uint64_t ws = props.workspaceSize, partials = 2ull * dev.multiprocessorCount * 64 * 128 * 4;
    tap_ok(ws >= partials && ws < partials + (1u << 20),
           "%s reports %llu workspace bytes: its %u SMs' partial tiles (%llu) and counters",
           props.kernelName, (unsigned long long)ws, dev.multiprocessorCount,
           (unsigned long long)partials);
    workspace_refusals(gpu, plan, "stream-K");
    bkDestroyPlan(plan);
}

int main(void)
{
    gpu = bkt_open_cuda();
    host = bkt_open_host();
    rng = bkt_rng_new(4164);
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkGetContextProperties(gpu, &dev);
    sm90 = dev.computeCapabilityMajor == 9 && dev.computeCapabilityMinor == 0;
    unsetenv("BK_CUDA_W4A16_SPLITS");
    unsetenv("BK_CUDA_W4A16_SCHEDULE");
    const bool all = !getenv("BK_TEST_ONLY");
    if (all) {
        test_conversions();
        test_repacks();
        test_zero_point_conversions();
    }
    test_gemms();
    if (all)
        test_stream_k_workspace();
    kernels_report("W4A16 GEMM on CUDA (plans' kernel names)");
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    return tap_done();
}
