/* SPDX-License-Identifier: Apache-2.0 */
/* 2:4 sparsity on CUDA against the host backend, on fresh random inputs:
 *
 * - conversions bit for bit: strict compression of 2:4 weights and of
 *   weights with groups of 3 and 4 non-zeros, pruning (with ties and
 *   negative zeros), decompression, validation of good and corrupted
 *   metadata: values, metadata, dense and the whole 32-byte report equal,
 *   for f32, f16, bf16 and f64, row-major, column-major and padded tensors;
 * - prepare + sparse GEMM: each device prepares the same values and
 *   metadata in its own layout, then Y = act(alpha X W^T + beta C + bias)
 *   must agree within (4 sqrt(k) + 8) eps S + 1 ulp of the output, S =
 *   |alpha| sum |x||w| + |beta c| + |bias|, eps 2^-22 on tensor cores
 *   (f16, bf16: their sums are not IEEE) and 2^-24 for f32; shapes on and
 *   off the tensor-core tiles (M, N multiples of 128 and not, K multiples
 *   of 64 and K = 8, 40; N = 1, 16, 64), strided and column-major X, a
 *   column-major Y (Y^T = W X^T), X one element past 16-byte alignment,
 *   batches with a shared C, bias and activations, C == Y in place and a
 *   replayed reusable command buffer.
 * f16/bf16 cases also run with BK_CUDA_SPARSE24_KERNEL=general (CUDA
 * cores), =mma (the sm_80 tensor-core kernel) and =strided (X through
 * registers), and with each Hopper tiling forced (BK_CUDA_SPARSE24_TILING=
 * wg128x256, wg128x128), without clusters (BK_CUDA_SPARSE24_CLUSTER=1),
 * with the last round's tiles split along K and with whole tiles only
 * (BK_CUDA_SPARSE24_SCHEDULE=stream-k, tiles),
 * both depths of the 32-row decode tiles for N <= 16 (32x16, 32x16_deep),
 * the Hopper decode kernels at any N (BK_CUDA_SPARSE24_TILING=decode),
 * with K split over clusters of 3 and 8 CTAs (BK_CUDA_SPARSE24_DECODE_SPLIT)
 * and stream-K over 7 and 200 CTAs (BK_CUDA_SPARSE24_DECODE_CTAS: tiles
 * split between many CTAs, CTAs inside one tile),
 * set while their plan is made: the general plan's
 * kernel name must differ from the default one, all must agree with the
 * host, and the sm_80 kernel's two X loaders (and a misaligned X with the
 * default plan) must give the same bits. Kernel names are printed.
 * Skips without a GPU; fails instead with BK_TEST_REQUIRE_GPU=1. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pair.h"

static BkContext gpu, host;
static struct bkt_rng rng;

static BkTensorDesc desc_of(const struct tmat *m)
{
    BkTensorDesc d;
    tmat_desc(m, &d);
    return d;
}

static uint16_t *u16(const struct tmat *m)
{
    return (uint16_t *)m->host;
}

/* ---- Test weights ------------------------------------------------------------ */

static double nonzero(BkDataType type)
{
    double v = bkt_rand_value(&rng, type, 0.0625, 2);
    return bkt_rand_u64(&rng) & 1 ? -v : v;
}

/* A dense W: each group of 4 has 0, 1 or 2 non-zeros, or with dirty, 3 or
 * 4 in about one group of 8; some groups hold equal magnitudes (ties for
 * pruning) and some zeros are negative. */
static void fill_weight(struct tmat *w, bool dirty)
{
    const int64_t bad_row = (int64_t)(bkt_rand_u64(&rng) % (uint64_t)w->rows);
    const int64_t bad_group = (int64_t)(bkt_rand_u64(&rng) % (uint64_t)(w->cols / 4));
    for (int64_t i = 0; i < w->rows; i++)
        for (int64_t g = 0; g < w->cols / 4; g++) {
            const uint64_t r = bkt_rand_u64(&rng);
            int count = (int)(r % 3);
            if (dirty && (r % 8 == 7 || (i == bad_row && g == bad_group)))
                count = 3 + (int)((r >> 8) % 2);
            bool keep[4] = { false };
            for (int placed = 0; placed < count;) {
                int p = (int)(bkt_rand_u64(&rng) % 4);
                if (!keep[p])
                    keep[p] = true, placed++;
            }
            const bool tie = (r >> 12) % 4 == 0;
            const double mag = fabs(nonzero(w->type));
            for (int p = 0; p < 4; p++) {
                double v = (bkt_rand_u64(&rng) % 8 == 0) ? -0.0 : 0.0;
                if (keep[p])
                    v = !tie ? nonzero(w->type) : bkt_rand_u64(&rng) & 1 ? -mag : mag;
                tmat_set(w, 0, i, 4 * g + p, v);
            }
        }
}

/* Position pair byte of a valid group: (first, second), first < second. */
static uint16_t pair_byte(int first, int second)
{
    return (uint16_t)(first | second << 2);
}

/* Random valid metadata [m, k/8]; with corrupt, about one group in 16
 * breaks a rule (equal or decreasing positions, or bits 4-7 set). */
static void fill_metadata(struct tmat *md, bool corrupt)
{
    static const int pairs[6][2] = { { 0, 1 }, { 0, 2 }, { 0, 3 }, { 1, 2 }, { 1, 3 }, { 2, 3 } };
    const int64_t bad_row = (int64_t)(bkt_rand_u64(&rng) % (uint64_t)md->rows);
    const int64_t bad_group = (int64_t)(bkt_rand_u64(&rng) % (uint64_t)(md->cols * 2));
    for (int64_t i = 0; i < md->rows; i++)
        for (int64_t j = 0; j < md->cols; j++) {
            uint16_t word = 0;
            for (int h = 0; h < 2; h++) {
                const uint64_t r = bkt_rand_u64(&rng);
                uint16_t byte = pair_byte(pairs[r % 6][0], pairs[r % 6][1]);
                const bool forced = i == bad_row && 2 * j + h == bad_group;
                if (corrupt && ((r >> 8) % 16 == 0 || forced)) {
                    switch ((r >> 16) % 3) {
                    case 0: byte = pair_byte((int)((r >> 20) % 4), (int)((r >> 20) % 4)); break;
                    case 1: byte = pair_byte(3, (int)((r >> 20) % 3)); break;
                    default: byte = (uint16_t)(byte | (1u + (r >> 20) % 15) << 4); break;
                    }
                }
                word |= (uint16_t)(byte << (8 * h));
            }
            u16(md)[tmat_index(md, 0, i, j)] = word;
        }
}

/* ---- Conversions, bit for bit --------------------------------------------------- */

struct conv_io {
    struct tmat dense, values, meta;  /* their state before the run */
};

/* Runs conversion on ctx; the written tensors come back into out (same
 * layouts), the report into *report. */
static BkResult convert_on(BkContext ctx, BkSparse24Conversion conversion,
                           const struct conv_io *in, struct conv_io *out,
                           BkSparse24Report *report, long *guards, char *kernel)
{
    const bool validate = conversion == BK_SPARSE24_VALIDATE;
    BkSparse24ConvertInfo info = {
        .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO,
        .conversion = conversion,
        .metadata = desc_of(&in->meta),
    };
    if (!validate)
        info.dense = desc_of(&in->dense), info.values = desc_of(&in->values);
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    *guards = 0;
    if (r != BK_SUCCESS)
        return r;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    bkGetPlanProperties(plan, &props);
    snprintf(kernel, BK_MAX_KERNEL_NAME_SIZE, "%s", props.kernelName);
    struct placed pd = { .addr = 0 }, pv = { .addr = 0 };
    if (!validate) {
        pd = place(ctx, in->dense.host, in->dense.bytes, 0);
        pv = place(ctx, in->values.host, in->values.bytes, 0);
    }
    struct placed pm = place(ctx, in->meta.host, in->meta.bytes, 0);
    unsigned char poison[sizeof *report];
    memset(poison, 0xA5, sizeof poison);
    struct placed pr = place(ctx, poison, sizeof poison, 0);
    r = bkt_run(ctx, plan, 4, (BkDeviceAddress[4]){ pd.addr, pv.addr, pm.addr, pr.addr });
    if (!validate) {
        *guards += fetch(ctx, &pd, out->dense.host);
        *guards += fetch(ctx, &pv, out->values.host);
        unplace(ctx, &pd), unplace(ctx, &pv);
    }
    *guards += fetch(ctx, &pm, out->meta.host);
    *guards += fetch(ctx, &pr, report);
    unplace(ctx, &pm), unplace(ctx, &pr);
    bkDestroyPlan(plan);
    return r;
}

static const char *conversion_name(BkSparse24Conversion c)
{
    static const char *const names[] = { "compress strict", "compress prune", "decompress",
                                         "validate" };
    return (unsigned)c < 4 ? names[c] : "?";
}

static void test_conversion(BkSparse24Conversion conversion, BkDataType type, int64_t m,
                            int64_t k, enum tmat_layout ld, enum tmat_layout lv,
                            enum tmat_layout lm, bool dirty)
{
    struct conv_io in, g, h;
    tmat_init(&in.dense, type, 0, m, k, ld, &rng);
    tmat_init(&in.values, type, 0, m, k / 2, lv, &rng);
    tmat_init(&in.meta, BK_DATA_TYPE_U16, 0, m, k / 8, lm, &rng);
    tmat_poison(&in.dense), tmat_poison(&in.values), tmat_poison(&in.meta);
    switch (conversion) {
    case BK_SPARSE24_COMPRESS_STRICT: case BK_SPARSE24_COMPRESS_PRUNE:
        fill_weight(&in.dense, dirty);
        break;
    case BK_SPARSE24_DECOMPRESS:
        tmat_fill_random(&in.values, &rng, -2, 2);
        fill_metadata(&in.meta, false);
        break;
    default:
        fill_metadata(&in.meta, dirty);
        break;
    }
    tmat_copy(&g.dense, &in.dense), tmat_copy(&g.values, &in.values), tmat_copy(&g.meta, &in.meta);
    tmat_copy(&h.dense, &in.dense), tmat_copy(&h.values, &in.values), tmat_copy(&h.meta, &in.meta);
    BkSparse24Report rg, rh;
    long guards_g, guards_h;
    char kg[BK_MAX_KERNEL_NAME_SIZE] = "", kh[BK_MAX_KERNEL_NAME_SIZE] = "";
    BkResult resg = convert_on(gpu, conversion, &in, &g, &rg, &guards_g, kg);
    if (resg == BK_SUCCESS)
        kernel_seen(kg);
    BkResult resh = convert_on(host, conversion, &in, &h, &rh, &guards_h, kh);
    char label[200];
    snprintf(label, sizeof label, "%s %s [%lld, %lld] dense %s values %s metadata %s%s [%s]",
             conversion_name(conversion), bkt_type_name(type), (long long)m, (long long)k,
             tmat_layout_name(ld), tmat_layout_name(lv), tmat_layout_name(lm),
             dirty ? " (not 2:4)" : "", kg);
    if (resg != BK_SUCCESS || resh != BK_SUCCESS) {
        tap_ok(false, "cuda = host bit for bit: %s (cuda %s, host %s: %s)", label,
               bkResultString(resg), bkResultString(resh), bkGetLastErrorMessage());
    } else {
        long diff = 0;
        if (conversion == BK_SPARSE24_DECOMPRESS) {
            diff += bit_differences(&in.dense, g.dense.host, h.dense.host, label);
            diff += gap_changes(&in.dense, g.dense.host, in.dense.host);
        } else if (conversion != BK_SPARSE24_VALIDATE) {
            diff += bit_differences(&in.values, g.values.host, h.values.host, label);
            diff += bit_differences(&in.meta, g.meta.host, h.meta.host, label);
            diff += gap_changes(&in.values, g.values.host, in.values.host);
            diff += gap_changes(&in.meta, g.meta.host, in.meta.host);
        }
        /* What is only read must come back unchanged. */
        if (conversion != BK_SPARSE24_VALIDATE && conversion != BK_SPARSE24_DECOMPRESS)
            diff += memcmp(g.dense.host, in.dense.host, in.dense.bytes) != 0;
        if (conversion == BK_SPARSE24_VALIDATE || conversion == BK_SPARSE24_DECOMPRESS)
            diff += memcmp(g.meta.host, in.meta.host, in.meta.bytes) != 0;
        if (conversion == BK_SPARSE24_DECOMPRESS)
            diff += memcmp(g.values.host, in.values.host, in.values.bytes) != 0;
        const bool same_report = memcmp(&rg, &rh, sizeof rg) == 0;
        if (!same_report)
            tap_diag("%s: report cuda {%u, %u, %llu, %llu, %llu}, host {%u, %u, %llu, %llu, "
                     "%llu}", label, rg.status, rg.reserved,
                     (unsigned long long)rg.badGroupCount, (unsigned long long)rg.firstBadRow,
                     (unsigned long long)rg.firstBadGroup, rh.status, rh.reserved,
                     (unsigned long long)rh.badGroupCount, (unsigned long long)rh.firstBadRow,
                     (unsigned long long)rh.firstBadGroup);
        const bool expect_bad = dirty && conversion != BK_SPARSE24_COMPRESS_PRUNE &&
                                conversion != BK_SPARSE24_DECOMPRESS;
        const bool status_ok = expect_bad ? rh.status != BK_SPARSE24_STATUS_OK
                                          : rh.status == BK_SPARSE24_STATUS_OK;
        tap_ok(diff == 0 && same_report && status_ok && guards_g == 0 && guards_h == 0,
               "cuda = host bit for bit: %s; report status %u, %llu bad groups", label,
               rg.status, (unsigned long long)rg.badGroupCount);
    }
    tmat_free(BK_NULL_HANDLE, &in.dense), tmat_free(BK_NULL_HANDLE, &in.values);
    tmat_free(BK_NULL_HANDLE, &in.meta), tmat_free(BK_NULL_HANDLE, &g.dense);
    tmat_free(BK_NULL_HANDLE, &g.values), tmat_free(BK_NULL_HANDLE, &g.meta);
    tmat_free(BK_NULL_HANDLE, &h.dense), tmat_free(BK_NULL_HANDLE, &h.values);
    tmat_free(BK_NULL_HANDLE, &h.meta);
}

static void test_conversions(void)
{
    const BkDataType types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                 BK_DATA_TYPE_F64 };
    const int64_t shapes[][2] = { { 1, 8 }, { 7, 40 }, { 128, 64 }, { 129, 264 }, { 300, 1024 } };
    unsigned v = 0;
    for (size_t t = 0; t < 4; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int conv = 0; conv < 4; conv++)
                for (int dirty = 0; dirty < 2; dirty++, v++) {
                    if (conv == BK_SPARSE24_DECOMPRESS && dirty)
                        continue;
                    const enum tmat_layout l[3] = { (enum tmat_layout)(v % 4),
                                                    (enum tmat_layout)((v / 4) % 4),
                                                    (enum tmat_layout)((v / 2 + 1) % 4) };
                    test_conversion((BkSparse24Conversion)conv, types[t], shapes[s][0],
                                    shapes[s][1], l[0], l[1], l[2], dirty);
                }
}

/* ---- Prepare + sparse GEMM ---------------------------------------------------------- */

/* Kernels a plan is made to take by its environment: the CUDA-core
 * kernel, the sm_80 tensor-core kernel (cp.async X; what Hopper falls back
 * to) and its register X loader, and each Hopper tiling (on other GPUs
 * these take the default kernel). */
enum path {
    PATH_AUTO, PATH_GENERAL, PATH_MMA, PATH_STRIDED, PATH_WG_WIDE, PATH_WG_NARROW, PATH_WG_SINGLE,
    PATH_DECODE, PATH_DECODE_DEEP, PATH_WG_STREAM_K, PATH_WG_TILES, PATH_WG_DECODE,
    PATH_WG_DECODE_S3, PATH_WG_DECODE_S8, PATH_WG_DECODE_G7, PATH_WG_DECODE_G200
};
static const struct {
    const char *var, *value;
} path_env[] = {
    { NULL, NULL },
    { "BK_CUDA_SPARSE24_KERNEL", "general" },
    { "BK_CUDA_SPARSE24_KERNEL", "mma" },
    { "BK_CUDA_SPARSE24_KERNEL", "strided" },
    { "BK_CUDA_SPARSE24_TILING", "wg128x256" },
    { "BK_CUDA_SPARSE24_TILING", "wg128x128" },
    { "BK_CUDA_SPARSE24_CLUSTER", "1" },
    { "BK_CUDA_SPARSE24_TILING", "32x16" },
    { "BK_CUDA_SPARSE24_TILING", "32x16_deep" },
    { "BK_CUDA_SPARSE24_SCHEDULE", "stream-k" },
    { "BK_CUDA_SPARSE24_SCHEDULE", "tiles" },
    { "BK_CUDA_SPARSE24_TILING", "decode" },
    { "BK_CUDA_SPARSE24_DECODE_SPLIT", "3" },
    { "BK_CUDA_SPARSE24_DECODE_SPLIT", "8" },
    { "BK_CUDA_SPARSE24_DECODE_CTAS", "7" },
    { "BK_CUDA_SPARSE24_DECODE_CTAS", "200" },
};

struct scase {
    BkDataType w, out;
    int64_t m, n, k, batch;           /* batch 0: rank 2 */
    enum tmat_layout lx, lc, ly;
    bool has_c, c_shared, has_bias, in_place;
    BkGemmActivation act;
    double alpha, beta;
    unsigned x_offset;                /* elements past 16-byte alignment */
    bool paths;                       /* also the general and strided kernels */
    bool replay;
};

struct sdata {
    struct tmat values, meta, x, c, y, bias;
    double *w;                        /* dense W [m][k], for the scales */
};

static void sdata_make(const struct scase *c, struct sdata *s)
{
    memset(s, 0, sizeof *s);
    tmat_init(&s->values, c->w, 0, c->m, c->k / 2, TMAT_ROW, &rng);
    tmat_init(&s->meta, BK_DATA_TYPE_U16, 0, c->m, c->k / 8, TMAT_ROW, &rng);
    tmat_fill_random(&s->values, &rng, -1, 1);
    fill_metadata(&s->meta, false);
    s->w = calloc((size_t)(c->m * c->k) + 1, sizeof *s->w);
    if (!s->w)
        tap_bail("out of memory");
    for (int64_t i = 0; i < c->m; i++)
        for (int64_t g = 0; g < c->k / 4; g++) {
            const uint16_t word = u16(&s->meta)[tmat_index(&s->meta, 0, i, g / 2)];
            const unsigned byte = (word >> (8 * (g % 2))) & 0xFFu;
            s->w[i * c->k + 4 * g + (byte & 3)] = tmat_get(&s->values, 0, i, 2 * g);
            s->w[i * c->k + 4 * g + ((byte >> 2) & 3)] = tmat_get(&s->values, 0, i, 2 * g + 1);
        }
    tmat_init(&s->x, c->w, c->batch, c->n, c->k, c->lx, &rng);
    tmat_fill_random(&s->x, &rng, -1, 1);
    tmat_init(&s->bias, c->out, 0, 1, c->m, TMAT_ROW, &rng);
    tmat_fill_random(&s->bias, &rng, -1, 1);
    if (c->has_c) {
        tmat_init(&s->c, c->out, c->c_shared ? 0 : c->batch, c->n, c->m, c->lc, &rng);
        tmat_poison(&s->c);
        tmat_fill_random(&s->c, &rng, -1, 1);
    }
    if (c->in_place) {
        tmat_copy(&s->y, &s->c);
    } else {
        tmat_init(&s->y, c->out, c->batch, c->n, c->m, c->ly, &rng);
        tmat_poison(&s->y);
    }
}

static void sdata_free(struct sdata *s)
{
    tmat_free(BK_NULL_HANDLE, &s->values), tmat_free(BK_NULL_HANDLE, &s->meta);
    tmat_free(BK_NULL_HANDLE, &s->x), tmat_free(BK_NULL_HANDLE, &s->y);
    tmat_free(BK_NULL_HANDLE, &s->bias);
    if (s->c.host)
        tmat_free(BK_NULL_HANDLE, &s->c);
    free(s->w);
}

struct sresult {
    BkResult r;
    long guards;
    char prepare_kernel[BK_MAX_KERNEL_NAME_SIZE], kernel[BK_MAX_KERNEL_NAME_SIZE];
};

/* Prepares the weight on ctx, then plans (under path's environment) and
 * runs the sparse GEMM, submitted `submits` times; Y's image to y_out. */
static struct sresult sgemm_on(BkContext ctx, const struct scase *c, const struct sdata *s,
                               enum path path, unsigned x_offset, unsigned submits, void *y_out)
{
    struct sresult res = { .r = BK_SUCCESS };
    BkSparse24PrepareInfo pi = {
        .sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO,
        .values = desc_of(&s->values),
        .metadata = desc_of(&s->meta),
    };
    BkSparse24GemmInfo gi = {
        .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO,
        .weightType = c->w, .activation = c->act, .m = c->m, .k = c->k,
        .alpha = c->alpha, .beta = c->has_c ? c->beta : 0,
        .x = desc_of(&s->x), .y = desc_of(&s->y),
    };
    if (c->has_c)
        gi.c = desc_of(&s->c);
    if (c->has_bias)
        gi.bias = (BkTensorDesc){ .dataType = c->out, .rank = 1, .extent = { c->m } };
    BkPlan prep = BK_NULL_HANDLE, plan = BK_NULL_HANDLE;
    if ((res.r = bkt_create_plan(ctx, &pi, &prep)) != BK_SUCCESS)
        return res;
    if (path_env[path].var)
        setenv(path_env[path].var, path_env[path].value, 1);
    res.r = bkt_create_plan(ctx, &gi, &plan);
    if (path_env[path].var)
        unsetenv(path_env[path].var);
    if (res.r != BK_SUCCESS) {
        bkDestroyPlan(prep);
        return res;
    }
    BkPlanBindingProperties pb = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    BkPlanProperties pp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &pb };
    bkGetPlanProperties(prep, &pp);
    snprintf(res.prepare_kernel, sizeof res.prepare_kernel, "%s", pp.kernelName);
    const uint64_t prepared_size = pb.bindings[BK_SPARSE24_PREPARE_BINDING_PREPARED].size;
    BkPlanBindingProperties gb = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    BkPlanProperties gp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &gb };
    bkGetPlanProperties(plan, &gp);
    snprintf(res.kernel, sizeof res.kernel, "%s", gp.kernelName);
    /* An empty Y reads no weight: its slot is then 0 bytes. */
    if (gb.bindings[BK_SPARSE24_GEMM_BINDING_WEIGHT].size != (c->n ? prepared_size : 0)) {
        tap_diag("prepared size %llu but the sparse GEMM's weight slot is %llu bytes",
                 (unsigned long long)prepared_size,
                 (unsigned long long)gb.bindings[BK_SPARSE24_GEMM_BINDING_WEIGHT].size);
        res.r = BK_ERROR_INVALID_ARGUMENT;
    }

    unsigned char *junk = malloc(prepared_size + 1);
    if (!junk)
        tap_bail("out of memory");
    memset(junk, 0xA5, prepared_size + 1);
    struct placed pw = place(ctx, junk, prepared_size, 0);
    free(junk);
    struct placed pv = place(ctx, s->values.host, s->values.bytes, 0);
    struct placed pm = place(ctx, s->meta.host, s->meta.bytes, 0);
    if (res.r == BK_SUCCESS)
        res.r = bkt_run(ctx, prep, 3, (BkDeviceAddress[3]){ pv.addr, pm.addr, pw.addr });

    const uint64_t ew = bkt_type_size(c->w);
    struct placed px = place(ctx, s->x.host, s->x.bytes, x_offset * ew);
    struct placed py = place(ctx, s->y.host, s->y.bytes, 0);
    struct placed pc = { .addr = 0 }, pbias = { .addr = 0 };
    if (c->has_c && !c->in_place)
        pc = place(ctx, s->c.host, s->c.bytes, 0);
    if (c->has_bias)
        pbias = place(ctx, s->bias.host, s->bias.bytes, 0);
    const BkDeviceAddress bind[5] = { pw.addr, px.addr, c->in_place ? py.addr : pc.addr, py.addr,
                                      pbias.addr };
    if (res.r == BK_SUCCESS)
        res.r = bkt_run_on(ctx, 0, submits > 1 ? BK_COMMAND_BUFFER_USAGE_REUSABLE
                                               : BK_COMMAND_BUFFER_USAGE_ONE_TIME,
                           submits, plan, 5, bind);
    if (res.r != BK_SUCCESS)
        tap_diag("%s: %s (%s)", bkt_device_name(bkt_device_type(ctx)), bkResultString(res.r),
                 bkGetLastErrorMessage());
    res.guards = fetch(ctx, &py, y_out);
    unplace(ctx, &pw), unplace(ctx, &pv), unplace(ctx, &pm), unplace(ctx, &px);
    unplace(ctx, &py);
    if (pc.buf.memory)
        unplace(ctx, &pc);
    if (pbias.buf.memory)
        unplace(ctx, &pbias);
    bkDestroyPlan(plan);
    bkDestroyPlan(prep);
    return res;
}

static double *sgemm_scales(const struct scase *c, const struct sdata *s)
{
    const int64_t batches = c->batch ? c->batch : 1;
    double *sc = calloc((size_t)(batches * c->n * c->m) + 1, sizeof *sc);
    double *xa = malloc(((size_t)c->k + 1) * sizeof *xa);
    if (!sc || !xa)
        tap_bail("out of memory");
    for (int64_t b = 0; b < batches; b++)
        for (int64_t i = 0; i < c->n; i++) {
            for (int64_t p = 0; p < c->k; p++)
                xa[p] = fabs(tmat_get(&s->x, b, i, p)) * fabs(c->alpha);
            for (int64_t j = 0; j < c->m; j++) {
                double v = 0;
                const double *wr = s->w + j * c->k;
                for (int64_t p = 0; p < c->k; p++)
                    v += xa[p] * fabs(wr[p]);
                if (c->has_c)
                    v += fabs(c->beta) * fabs(tmat_get(&s->c, b, i, j));
                if (c->has_bias)
                    v += fabs(tmat_get(&s->bias, 0, 0, j));
                sc[(b * c->n + i) * c->m + j] = v;
            }
        }
    free(xa);
    return sc;
}

static void describe(const struct scase *c, char *buf, size_t size)
{
    snprintf(buf, size, "sparse %s->%s M %lld N %lld K %lld%s%.0lld x:%s c:%s%s y:%s%s%s a%g b%g%s",
             bkt_type_name(c->w), bkt_type_name(c->out), (long long)c->m, (long long)c->n,
             (long long)c->k, c->batch ? " batch " : "", (long long)c->batch,
             tmat_layout_name(c->lx),
             !c->has_c ? "none" : c->in_place ? "=y" : tmat_layout_name(c->lc),
             c->c_shared ? "(shared)" : "", tmat_layout_name(c->ly), c->has_bias ? " bias" : "",
             c->act ? (c->act == BK_GEMM_ACTIVATION_RELU ? " relu" : " gelu") : "", c->alpha,
             c->beta, c->replay ? " replayed" : "");
}

struct run_spec {
    enum path path;
    unsigned offset;
    const char *what;
};

static void test_sgemm(const struct scase *c)
{
    struct sdata s;
    sdata_make(c, &s);
    const uint64_t yb = s.y.bytes;
    char label[256];
    describe(c, label, sizeof label);
    unsigned char *yh = malloc(yb), *yg = malloc(yb), *yo = malloc(yb), *yd = malloc(yb);
    if (!yh || !yg || !yo || !yd)
        tap_bail("out of memory");
    struct sresult rh = sgemm_on(host, c, &s, PATH_AUTO, 0, 1, yh);
    double *scale = sgemm_scales(c, &s);
    const bool half = c->w != BK_DATA_TYPE_F32;
    const struct bkt_tolerance tol = {
        .rel = 0, .abs = (4.0 * sqrt((double)c->k) + 8.0) * (half ? 0x1p-22 : 0x1p-24), .ulps = 1,
    };
    /* The paths this case runs: default, the other kernels, misaligned X
     * (which the sm_80 kernel's register loader takes). The sm_80 kernel's
     * two X loaders must give the same bits. */
    struct run_spec runs[20];
    unsigned nruns = 0;
    runs[nruns++] = (struct run_spec){ PATH_AUTO, c->x_offset, "default" };
    if (c->paths && half) {
        runs[nruns++] = (struct run_spec){ PATH_GENERAL, c->x_offset, "general (CUDA cores)" };
        runs[nruns++] = (struct run_spec){ PATH_MMA, c->x_offset, "sm_80 tensor-core kernel" };
        runs[nruns++] = (struct run_spec){ PATH_STRIDED, c->x_offset, "strided X loader" };
        if (c->x_offset == 0)
            runs[nruns++] = (struct run_spec){ PATH_AUTO, 1, "X one element off 16 bytes" };
        runs[nruns++] = (struct run_spec){ PATH_WG_WIDE, c->x_offset, "Hopper 128x256 tiles" };
        runs[nruns++] = (struct run_spec){ PATH_WG_NARROW, c->x_offset, "Hopper 128x128 tiles" };
        runs[nruns++] = (struct run_spec){ PATH_WG_SINGLE, c->x_offset, "Hopper, no clusters" };
        runs[nruns++] = (struct run_spec){ PATH_WG_STREAM_K, c->x_offset,
                                           "Hopper, last round's tiles split (stream-K)" };
        runs[nruns++] = (struct run_spec){ PATH_WG_TILES, c->x_offset, "Hopper, whole tiles" };
        if (c->n <= 16) { /* both depths of the 32-row decode tiles */
            runs[nruns++] = (struct run_spec){ PATH_DECODE, c->x_offset, "32x16 tiles" };
            runs[nruns++] = (struct run_spec){ PATH_DECODE_DEEP, c->x_offset, "32x16_deep tiles" };
            runs[nruns++] = (struct run_spec){ PATH_WG_DECODE_S3, c->x_offset,
                                               "Hopper decode, K over 3 CTAs" };
            runs[nruns++] = (struct run_spec){ PATH_WG_DECODE_S8, c->x_offset,
                                               "Hopper decode, K over 8 CTAs" };
            runs[nruns++] = (struct run_spec){ PATH_WG_DECODE_G7, c->x_offset,
                                               "Hopper decode, stream-K over 7 CTAs" };
            runs[nruns++] = (struct run_spec){ PATH_WG_DECODE_G200, c->x_offset,
                                               "Hopper decode, stream-K over 200 CTAs" };
        } else {
            runs[nruns++] = (struct run_spec){ PATH_WG_DECODE, c->x_offset,
                                               "Hopper decode kernel forced" };
        }
    }
    char default_kernel[BK_MAX_KERNEL_NAME_SIZE] = "";
    for (unsigned i = 0; i < nruns; i++) {
        struct sresult rg = sgemm_on(gpu, c, &s, runs[i].path, runs[i].offset, 1, yg);
        if (rg.r == BK_SUCCESS) {
            kernel_seen(rg.prepare_kernel);
            kernel_seen(rg.kernel);
        }
        if (i == 0) {
            snprintf(default_kernel, sizeof default_kernel, "%s", rg.kernel);
            memcpy(yd, yg, yb);
        }
        if (rh.r != BK_SUCCESS || rg.r != BK_SUCCESS) {
            tap_ok(false, "cuda = host: %s, %s (cuda %s, host %s)", label, runs[i].what,
                   bkResultString(rg.r), bkResultString(rh.r));
            continue;
        }
        long bad = close_differences(&s.y, yg, yh, scale, tol, label, NULL);
        long gaps = gap_changes(&s.y, yg, s.y.host) + gap_changes(&s.y, yh, s.y.host);
        bool names_ok = true;
        long same_bits = 0;
        if (runs[i].path == PATH_GENERAL) {
            names_ok = strcmp(rg.kernel, default_kernel) != 0;
            if (!names_ok)
                tap_diag("the general plan's kernel name equals the default's: %s", rg.kernel);
        }
        /* The sm_80 kernel's run (default where there is no other) holds
         * the bits its other X loader must match. */
        const bool loader_only = runs[i].path == PATH_STRIDED || runs[i].offset != c->x_offset;
        if (i == 0 || runs[i].path == PATH_MMA)
            memcpy(yo, yg, yb);
        else if (loader_only)
            same_bits = bit_differences(&s.y, yg, yo, runs[i].what);
        tap_ok(bad == 0 && gaps == 0 && rg.guards == 0 && rh.guards == 0 && names_ok &&
               same_bits == 0,
               "cuda = host: %s, %s%s [%s; prepare %s]", label, runs[i].what,
               loader_only ? " (same bits as the sm_80 kernel)" : "", rg.kernel,
               rg.prepare_kernel);
    }
    if (c->replay && rh.r == BK_SUCCESS) {
        struct sresult rr = sgemm_on(gpu, c, &s, PATH_AUTO, c->x_offset, 3, yg);
        tap_ok(rr.r == BK_SUCCESS && bit_differences(&s.y, yg, yd, "replay") == 0 &&
               gap_changes(&s.y, yg, s.y.host) == 0 && rr.guards == 0,
               "%s: 3 replays of a reusable buffer give the one-time bits [%s]", label,
               rr.kernel);
    }
    free(scale);
    free(yh), free(yg), free(yo), free(yd);
    sdata_free(&s);
}

static void test_sparse_gemms(void)
{
    const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16, bf16 = BK_DATA_TYPE_BF16;
    const enum tmat_layout R = TMAT_ROW, C = TMAT_COL, RP = TMAT_ROW_PADDED,
                           CP = TMAT_COL_PADDED;
    const BkGemmActivation relu = BK_GEMM_ACTIVATION_RELU, gelu = BK_GEMM_ACTIVATION_GELU_TANH;
    /* w, out, m, n, k, batch, x, c, y layouts, has_c, c_shared, has_bias,
     * in_place, act, alpha, beta, x_offset, paths, replay */
    const struct scase cases[] = {
        /* On the tensor-core tiles. */
        { f16, f16, 128, 128, 64, 0, R, R, R, true, false, true, false, relu, 1, 1, 0, true,
          false },
        { bf16, bf16, 256, 256, 128, 0, R, R, R, false, false, true, false, gelu, 0.5, 0, 0,
          true, false },
        { f16, f32, 384, 512, 512, 0, R, R, R, true, false, false, false, 0, 1, -1, 0, true,
          false },
        /* Off them: M, N not multiples of 128, K = 40, 8, 72. */
        { f16, f16, 100, 7, 40, 0, R, R, R, true, false, true, false, gelu, 1, 0.5, 0, true,
          false },
        { f16, f32, 64, 1, 8, 0, R, R, R, false, false, true, false, relu, 2, 0, 0, true,
          false },
        { bf16, f32, 130, 16, 72, 0, R, R, R, true, false, true, false, 0, 1, 1, 0, true,
          false },
        { bf16, bf16, 33, 64, 8, 0, R, R, R, false, false, false, false, relu, 1, 0, 0, true,
          false },
        /* Strided and column-major X; column-major Y (Y^T = W X^T). */
        { f16, f32, 257, 64, 136, 0, C, C, C, true, false, true, false, gelu, 1, 0.25, 0, true,
          false },
        { f16, f16, 128, 16, 64, 0, RP, RP, RP, true, false, false, false, 0, 1, 1, 0, true,
          false },
        { bf16, bf16, 200, 48, 96, 0, CP, R, C, false, false, true, false, relu, 1, 0, 0, true,
          false },
        /* X one element off 16-byte alignment. */
        { f16, f16, 128, 64, 64, 0, R, R, R, true, false, true, false, 0, 1, 1, 1, true,
          false },
        /* Batches, with a shared C. */
        { f16, f16, 96, 40, 64, 3, R, R, R, true, true, true, false, relu, 1, 1, 0, true,
          false },
        { bf16, f32, 128, 128, 128, 2, C, C, C, true, false, false, false, gelu, 1, -0.5, 0,
          true, false },
        /* C == Y in place; replay. */
        { f16, f16, 128, 32, 64, 0, R, R, R, true, false, true, true, relu, 1, 1, 0, false,
          false },
        { bf16, f32, 129, 17, 40, 2, R, C, C, true, false, false, true, 0, 1, -2, 0, false,
          false },
        { f16, f16, 256, 64, 128, 0, R, R, R, true, false, true, false, gelu, 1, 1, 0, false,
          true },
        /* Hopper's tiles (N > 64) and their edges: M, N, K off the tiles,
         * K past the ring's depth, batches (rank-3 X), column-major Y. */
        { f16, f16, 200, 300, 1000, 0, R, R, R, true, false, true, false, gelu, 1, 0.5, 0, true,
          false },
        { bf16, bf16, 130, 520, 576, 3, R, R, C, true, true, true, false, relu, 1, 1, 0, true,
          false },
        { bf16, f32, 64, 65, 64, 0, R, R, R, false, false, false, false, 0, 1, 0, 0, true,
          false },
        { f16, f32, 384, 257, 2048, 2, RP, R, RP, true, false, true, false, 0, 0.5, -1, 0, true,
          true },
        /* Only alpha to apply: Hopper stores a 16-byte aligned Y by the
         * copy engine (M, N off the tiles; batches; more tiles than the
         * grid), and a misaligned one itself. */
        { f16, f16, 200, 300, 1000, 0, R, R, R, false, false, false, false, 0, 0.5, 0, 0, true,
          false },
        { bf16, bf16, 136, 520, 576, 3, R, R, R, false, false, false, false, 0, 1, 0, 0, true,
          false },
        { f16, f16, 1536, 2304, 200, 0, R, R, R, false, false, false, false, 0, 2, 0, 0, false,
          true },
        { f16, f16, 201, 300, 64, 0, R, R, R, false, false, false, false, 0, 1, 0, 0, true,
          false },
        /* More tiles than the persistent Hopper grid holds, K steps not a
         * multiple of the ring's depth (the ring runs on across tiles). */
        { f16, f16, 2048, 2304, 328, 0, R, R, R, false, false, true, false, relu, 1, 0, 0, true,
          false },
        /* The last round's tiles split along K (stream-K, forced in the
         * paths: as many pieces as the clusters allow; sparse24_args.h) on
         * the H100's 132 SMs: T tiles on C clusters with T mod C at most
         * C / 2. Single CTAs (13 m tiles), 143 tiles, 11 left, 12 pieces
         * of 16 k steps, Y by the copy engine, replayed; pairs, 72 tiles,
         * 6 left, 11 pieces, with C, bias and an activation (the staged
         * epilogue), f32 out; batches of 20 pair tiles, 14 left, 4 pieces
         * of 9 k steps. */
        { bf16, bf16, 1664, 2816, 1000, 0, R, R, R, false, false, false, false, 0, 1, 0, 0,
          true, true },
        { f16, f32, 2048, 2200, 1000, 0, R, R, R, true, false, true, false, gelu, 1, 0.5, 0, true,
          false },
        { bf16, f32, 1000, 1100, 520, 4, R, R, R, true, true, false, false, relu, 1, 1, 0, true,
          false },
        /* Decode (N <= 16): the Hopper kernels' stream-K and K split over
         * a cluster (K past the ring's depth, K not a multiple of 64 nor
         * of the pieces, M off the 128-row tiles, batches), with C, bias
         * and activations, f32 out, and a column-major Y; the planner's
         * own grid for a few m tiles and many k steps. */
        { f16, f16, 1000, 16, 2000, 0, R, R, R, true, false, true, false, gelu, 1, 0.5, 0, true,
          true },
        { bf16, f32, 300, 5, 4160, 2, R, R, C, true, false, true, false, relu, 0.5, -1, 0, true,
          false },
        { bf16, bf16, 257, 9, 1032, 3, R, R, R, false, false, false, false, 0, 1, 0, 0, true,
          false },
        { f16, f32, 256, 16, 8192, 0, R, R, R, false, false, true, false, 0, 1, 0, 0, false,
          true },
        /* F32: exact f32 arithmetic on CUDA cores. */
        { f32, f32, 65, 33, 64, 0, R, R, R, true, false, true, false, relu, 1, 1, 0, false,
          false },
        { f32, f32, 128, 16, 40, 2, C, C, C, true, true, true, false, gelu, 0.5, 2, 0, false,
          true },
        { f32, f32, 7, 1, 8, 0, R, R, R, false, false, false, false, 0, 1, 0, 1, false, false },
        /* Empty: N = 0. */
        { f16, f16, 64, 0, 64, 0, R, R, R, true, false, true, false, 0, 1, 1, 0, false, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        test_sgemm(&cases[i]);
}

/* A Hopper plan that splits its last round's tiles reports its workspace
 * (a partial 128 x 256 tile of F32 and 8 flags a CTA), and a run given
 * less, or none, is refused naming the field; the same plan with whole
 * tiles only needs none; and the planner splits them by itself where the
 * last round leaves most SMs idle for long (Llama-70B's gate and up
 * projection at 2048 tokens: 1792 tiles on 66 clusters, K = 8192). */
static void test_stream_k_workspace(void)
{
    const int64_t m = 2048, n = 2304, k = 1024;
    const BkDataType t = BK_DATA_TYPE_F16;
    BkSparse24GemmInfo gi = { .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, .weightType = t,
                              .m = m, .k = k, .alpha = 1 };
    gi.x = (BkTensorDesc){ .dataType = t, .rank = 2, .extent = { n, k } };
    gi.y = (BkTensorDesc){ .dataType = t, .rank = 2, .extent = { n, m } };
    uint64_t ws[2] = { 0, 0 };
    BkPlan plans[2] = { BK_NULL_HANDLE, BK_NULL_HANDLE };
    for (int i = 0; i < 2; i++) {
        setenv("BK_CUDA_SPARSE24_SCHEDULE", i == 0 ? "stream-k" : "tiles", 1);
        const BkResult made = bkt_create_plan(gpu, &gi, &plans[i]);
        unsetenv("BK_CUDA_SPARSE24_SCHEDULE");
        if (made != BK_SUCCESS) {
            tap_ok(false, "sparse plan: %s", bkGetLastErrorMessage());
            return;
        }
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        bkGetPlanProperties(plans[i], &props);
        ws[i] = props.workspaceSize;
    }
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkGetContextProperties(gpu, &dev);
    const bool hopper = dev.computeCapabilityMajor == 9 && dev.computeCapabilityMinor == 0;
    BkSparse24GemmInfo big = gi;
    big.m = 57344;
    big.k = 8192;
    big.x.extent[0] = big.y.extent[0] = 2048;
    big.x.extent[1] = 8192;
    big.y.extent[1] = 57344;
    BkPlan chosen;
    if (bkt_create_plan(gpu, &big, &chosen) == BK_SUCCESS) {
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        bkGetPlanProperties(chosen, &props);
        tap_ok(hopper == (props.workspaceSize > 0),
               "N 2048 M 57344 K 8192: the planner %s the last round (workspace %llu bytes) [%s]",
               props.workspaceSize ? "splits" : "does not split",
               (unsigned long long)props.workspaceSize, props.kernelName);
        bkDestroyPlan(chosen);
    } else {
        tap_ok(false, "sparse plan N 2048 M 57344 K 8192: %s", bkGetLastErrorMessage());
    }
    const uint64_t slot = 128 * 256 * 4, ctas = ws[0] / slot;
    const uint64_t flags = (ctas * 8 * 8 + 255) / 256 * 256;  /* 64-bit flags */
    if (!hopper) {
        tap_ok(ws[0] == 0 && ws[1] == 0, "no Hopper kernels, no workspace: %llu, %llu bytes",
               (unsigned long long)ws[0], (unsigned long long)ws[1]);
    } else {
        tap_ok(ctas >= 1 && ctas <= dev.multiprocessorCount && ws[0] == ctas * slot + flags &&
                   ws[1] == 0,
               "stream-K reports %llu workspace bytes (%llu CTAs' partial tiles and flags), whole "
               "tiles %llu", (unsigned long long)ws[0], (unsigned long long)ctas,
               (unsigned long long)ws[1]);
        workspace_refusals(gpu, plans[0], "sparse stream-K");
    }
    bkDestroyPlan(plans[0]);
    bkDestroyPlan(plans[1]);
}

/* The planner's decode kernel on Hopper (N <= 16, X aligned): K split
 * over clusters of S = 2 or 1 CTAs where the m tiles times S make 7/8 of
 * the SMs to all of them, each CTA with 4 k steps or more; else stream-K
 * over a CTA an SM, or over a grid of at least 7/10 of the SMs whose runs
 * are whole tiles or equal parts of one or else cut every tile in two
 * (aligned_grid), each with at least 8 units (tile, k step), reporting
 * its workspace (a partial 128 x 16 tile of F32 and 8 flags a CTA), a run
 * given less refused naming the field (Llama-70B's shapes at 16 tokens
 * and a small one); elsewhere the sm_80 decode tiles and no workspace. */
static uint64_t aligned_grid(uint64_t tiles, uint64_t sms)
{
    for (uint64_t g = sms; g * 10 >= 7 * sms; g--)  /* whole tiles or equal parts */
        if (g % tiles == 0)
            return g;
    for (uint64_t g = sms; g * 10 >= 7 * sms; g--)  /* every tile in two pieces */
        if (g > tiles && tiles % (g - tiles) == 0)
            return g;
    return 0;
}

static void test_decode_choice(void)
{
    static const int64_t shapes[][2] = { { 8192, 8192 }, { 10240, 8192 }, { 57344, 8192 },
                                         { 8192, 28672 }, { 128, 256 }, { 12288, 4096 },
                                         { 4096, 4096 } };
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkGetContextProperties(gpu, &dev);
    const bool hopper = dev.computeCapabilityMajor == 9 && dev.computeCapabilityMinor == 0;
    const BkDataType t = BK_DATA_TYPE_F16;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const int64_t m = shapes[i][0], k = shapes[i][1];
        BkSparse24GemmInfo gi = { .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, .weightType = t,
                                  .m = m, .k = k, .alpha = 1 };
        gi.x = (BkTensorDesc){ .dataType = t, .rank = 2, .extent = { 16, k } };
        gi.y = (BkTensorDesc){ .dataType = t, .rank = 2, .extent = { 16, m } };
        BkPlan plan;
        if (bkt_create_plan(gpu, &gi, &plan) != BK_SUCCESS) {
            tap_ok(false, "sparse plan N 16 M %lld K %lld: %s", (long long)m, (long long)k,
                   bkGetLastErrorMessage());
            continue;
        }
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        bkGetPlanProperties(plan, &props);
        uint64_t expect = 0;
        bool ok;
        if (!hopper) {
            ok = strstr(props.kernelName, "decode") == NULL;
        } else {
            const uint64_t tiles = (uint64_t)(m + 127) / 128, ksteps = (uint64_t)(k + 63) / 64;
            const uint64_t sms = (uint64_t)dev.multiprocessorCount;
            unsigned split = 0;
            for (unsigned s = 2; s >= 1 && !split; s--)
                if (tiles * s <= sms && 8 * tiles * s >= 7 * sms && ksteps >= 4 * s)
                    split = s;
            char want[64] = "bk_sp24_decode_f16_f16_128x16_sk";
            if (split) {
                snprintf(want, sizeof want, "bk_sp24_decode_f16_f16_128x16_s%u", split);
            } else {
                uint64_t ctas = aligned_grid(tiles, sms);
                ctas = ctas ? ctas : sms;
                ctas = tiles * ksteps / 8 < ctas ? tiles * ksteps / 8 : ctas;
                ctas = ctas < 1 ? 1 : ctas;
                expect = (ctas * 8 * 8 + 255) / 256 * 256 + ctas * 128 * 16 * 4;
            }
            ok = strcmp(props.kernelName, want) == 0;
        }
        tap_ok(ok && props.workspaceSize == expect,
               "N 16 M %lld K %lld: %s, workspace %llu bytes (expected %llu) [%s]", (long long)m,
               (long long)k, hopper ? "the Hopper decode kernel, split or stream-K by the rule"
                                    : "the sm_80 decode tiles",
               (unsigned long long)props.workspaceSize, (unsigned long long)expect,
               props.kernelName);
        if (hopper && expect > 0 && i == 1)
            workspace_refusals(gpu, plan, "sparse decode stream-K");
        bkDestroyPlan(plan);
    }
}

int main(void)
{
    gpu = bkt_open_cuda();
    host = bkt_open_host();
    rng = bkt_rng_new(2424);
    unsetenv("BK_CUDA_SPARSE24_KERNEL");
    unsetenv("BK_CUDA_SPARSE24_TILING");
    unsetenv("BK_CUDA_SPARSE24_CLUSTER");
    unsetenv("BK_CUDA_SPARSE24_SCHEDULE");
    unsetenv("BK_CUDA_SPARSE24_DECODE_SPLIT");
    unsetenv("BK_CUDA_SPARSE24_DECODE_CTAS");
    test_conversions();
    test_sparse_gemms();
    test_stream_k_workspace();
    test_decode_choice();
    kernels_report("2:4 on CUDA (plans' kernel names; a misaligned x runs the _strided variant)");
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    return tap_done();
}
