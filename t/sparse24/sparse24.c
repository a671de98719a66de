/* SPDX-License-Identifier: Apache-2.0 */
/* 2:4 structured sparsity on the device under test: strict compression
 * round-trips through decompression, pruning keeps the two largest with
 * ties to the lower position (hand-made groups and random ties), reports
 * of non-2:4 weights and corrupt metadata name the first bad row and group
 * and count them, bkCheckSparse24Report turns them into results, and
 * prepare + sparse GEMM match a long double reference for every weight
 * type, layout, batch and epilogue. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"

static const BkDataType convert_types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                            BK_DATA_TYPE_F64 };
#define CONVERT_TYPES (sizeof convert_types / sizeof convert_types[0])

static uint16_t meta_get(const struct tmat *meta, int64_t i, int64_t j)
{
    uint16_t w;
    memcpy(&w, tmat_elem(meta, i, j), 2);
    return w;
}

static void meta_set(struct tmat *meta, int64_t i, int64_t j, uint16_t w)
{
    memcpy((char *)meta->host + tmat_index(meta, 0, i, j) * 2, &w, 2);
}

/* A random non-zero value of the type in [-2, 2]. */
static double nonzero(struct bkt_rng *rng, BkDataType type)
{
    for (;;) {
        double v = bkt_rand_value(rng, type, -2, 2);
        if (v != 0)
            return v;
    }
}

/* W 2:4 sparse: each group holds 0, 1 or (mostly) 2 non-zeros at random
 * positions; the rest +0. */
static void fill_24(struct tmat *w, struct bkt_rng *rng)
{
    for (int64_t i = 0; i < w->rows; i++)
        for (int64_t g = 0; g < w->cols / 4; g++) {
            const int64_t count = bkt_rand_int(rng, 0, 7) == 0 ? bkt_rand_int(rng, 0, 1) : 2;
            int64_t first = bkt_rand_int(rng, 0, 3), second = (first + bkt_rand_int(rng, 1, 3)) % 4;
            for (int q = 0; q < 4; q++)
                tmat_set(w, 0, i, 4 * g + q, 0.0);
            if (count >= 1)
                tmat_set(w, 0, i, 4 * g + first, nonzero(rng, w->type));
            if (count == 2)
                tmat_set(w, 0, i, 4 * g + second, nonzero(rng, w->type));
        }
}

/* Whether element (x at position px) sorts before (y at py) in pruning's
 * order: NaN first, then larger |w|, then the lower position. */
static bool sorts_before(double x, int px, double y, int py)
{
    if (isnan(x) != isnan(y))
        return isnan(x);
    if (!isnan(x) && fabs(x) != fabs(y))
        return fabs(x) > fabs(y);
    return px < py;
}

/* The two positions pruning keeps, by sorting the group. Returns
 * lo | hi << 2. */
static unsigned ref_keep(const double w[4])
{
    int order[4] = { 0, 1, 2, 3 };
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (sorts_before(w[order[j]], order[j], w[order[i]], order[i])) {
                int t = order[i];
                order[i] = order[j], order[j] = t;
            }
    const int lo = order[0] < order[1] ? order[0] : order[1];
    const int hi = order[0] < order[1] ? order[1] : order[0];
    return (unsigned)(lo | hi << 2);
}

/* ---- Conversions ---------------------------------------------------------- */

/* Plan and run a conversion; dense or values NULL for VALIDATE. Downloads
 * what the conversion writes and the report (poisoned before). */
static BkResult convert_run(BkContext ctx, BkSparse24Conversion conv, struct tmat *dense,
                            struct tmat *values, struct tmat *meta, BkSparse24Report *report)
{
    BkSparse24ConvertInfo info = { .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO,
                                   .conversion = conv };
    if (dense)
        tmat_desc(dense, &info.dense);
    if (values)
        tmat_desc(values, &info.values);
    tmat_desc(meta, &info.metadata);
    struct bkt_buffer rep = bkt_alloc(ctx, sizeof *report);
    BkResult r = bkt_fill(ctx, rep.address, rep.size, BKT_POISON);
    BkPlan plan = BK_NULL_HANDLE;
    if (r == BK_SUCCESS)
        r = bkt_create_plan(ctx, &info, &plan);
    if (r == BK_SUCCESS) {
        const BkDeviceAddress bindings[4] = { dense ? dense->dev.address : 0,
                                              values ? values->dev.address : 0,
                                              meta->dev.address, rep.address };
        r = bkt_run(ctx, plan, 4, bindings);
    }
    if (r == BK_SUCCESS) {
        bkt_download(ctx, report, rep.address, sizeof *report);
        if (conv == BK_SPARSE24_DECOMPRESS)
            tmat_download(ctx, dense);
        else if (conv != BK_SPARSE24_VALIDATE) {
            tmat_download(ctx, values);
            tmat_download(ctx, meta);
        }
    } else
        tap_diag("conversion %d: %s (%s)", (int)conv, bkResultString(r), bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    bkt_free(ctx, &rep);
    return r;
}

/* The report must say status, count and first bad row and group. */
static bool report_is(const BkSparse24Report *r, BkSparse24Status status, uint64_t count,
                      uint64_t row, uint64_t group, const char *label)
{
    const bool ok = r->status == (uint32_t)status && r->badGroupCount == count &&
                    r->firstBadRow == row && r->firstBadGroup == group;
    if (!ok)
        tap_diag("%s: report {status %u, count %llu, row %llu, group %llu}, expected {%u, %llu, "
                 "%llu, %llu}", label, r->status, (unsigned long long)r->badGroupCount,
                 (unsigned long long)r->firstBadRow, (unsigned long long)r->firstBadGroup,
                 (unsigned)status, (unsigned long long)count, (unsigned long long)row,
                 (unsigned long long)group);
    return ok;
}

/* values and metadata against ref_keep on dense: kept elements bit for
 * bit; gaps of both must keep the poison. Returns the misses. */
static long check_compressed(const struct tmat *dense, const struct tmat *values,
                             const struct tmat *meta, const char *label)
{
    const size_t es = bkt_type_size(dense->type);
    long bad = 0;
    for (int64_t i = 0; i < dense->rows; i++)
        for (int64_t j = 0; j < dense->cols / 8; j++) {
            unsigned want = 0;
            for (int h = 0; h < 2; h++) {
                const int64_t g = 2 * j + h;
                double w[4];
                for (int q = 0; q < 4; q++)
                    w[q] = tmat_get(dense, 0, i, 4 * g + q);
                const unsigned keep = ref_keep(w);
                want |= keep << (8 * h);
                const int pos[2] = { (int)(keep & 3u), (int)(keep >> 2) };
                for (int v = 0; v < 2; v++)
                    if (memcmp(tmat_elem(values, i, 2 * g + v),
                               tmat_elem(dense, i, 4 * g + pos[v]), es) &&
                        bad++ < 4)
                        tap_diag("%s: row %lld group %lld: values[%d] is not w[%d] = %g", label,
                                 (long long)i, (long long)g, v, pos[v], w[pos[v]]);
            }
            if (meta_get(meta, i, j) != want && bad++ < 4)
                tap_diag("%s: metadata[%lld, %lld] = 0x%04x, expected 0x%04x", label,
                         (long long)i, (long long)j, meta_get(meta, i, j), want);
        }
    return bad + tmat_gap_errors(values) + tmat_gap_errors(meta);
}

/* A dense W and its (poisoned) compressed form, all uploaded. */
struct sparse_weight {
    struct tmat dense, values, meta;
};

static void weight_make(BkContext ctx, struct sparse_weight *sw, BkDataType type, int64_t m,
                        int64_t k, struct bkt_rng *rng)
{
    tmat_init(&sw->dense, type, 0, m, k, tmat_random_layout(rng), rng);
    tmat_init(&sw->values, type, 0, m, k / 2, tmat_random_layout(rng), rng);
    tmat_init(&sw->meta, BK_DATA_TYPE_U16, 0, m, k / 8, tmat_random_layout(rng), rng);
    fill_24(&sw->dense, rng);
    tmat_poison(&sw->values);
    tmat_poison(&sw->meta);
    tmat_upload(ctx, &sw->dense);
    tmat_upload(ctx, &sw->values);
    tmat_upload(ctx, &sw->meta);
}

static void weight_free(BkContext ctx, struct sparse_weight *sw)
{
    tmat_free(ctx, &sw->dense);
    tmat_free(ctx, &sw->values);
    tmat_free(ctx, &sw->meta);
}

/* Strict compression of 2:4 data: report OK, the expected values and
 * metadata; decompression into another layout gives W back exactly. */
static void test_round_trip(BkContext ctx, struct bkt_rng *rng)
{
    for (size_t t = 0; t < CONVERT_TYPES; t++) {
        const BkDataType type = convert_types[t];
        const int64_t m = bkt_rand_int(rng, 1, 40), k = 8 * bkt_rand_int(rng, 1, 12);
        char label[128];
        snprintf(label, sizeof label, "%s W [%lld, %lld]", bkt_type_name(type), (long long)m,
                 (long long)k);
        struct sparse_weight sw;
        weight_make(ctx, &sw, type, m, k, rng);
        BkSparse24Report rep;
        bool ran = convert_run(ctx, BK_SPARSE24_COMPRESS_STRICT, &sw.dense, &sw.values, &sw.meta,
                               &rep) == BK_SUCCESS;
        tap_ok(ran && report_is(&rep, BK_SPARSE24_STATUS_OK, 0, 0, 0, label) &&
                   bkCheckSparse24Report(&rep) == BK_SUCCESS,
               "%s: strict compression of 2:4 data reports OK", label);
        tap_ok(ran && check_compressed(&sw.dense, &sw.values, &sw.meta, label) == 0,
               "%s: strict compression keeps the non-zeros (values %s, metadata %s)", label,
               tmat_layout_name(sw.values.layout), tmat_layout_name(sw.meta.layout));
        struct tmat back;
        tmat_init(&back, type, 0, m, k, tmat_random_layout(rng), rng);
        tmat_poison(&back);
        tmat_upload(ctx, &back);
        ran = ran && convert_run(ctx, BK_SPARSE24_DECOMPRESS, &back, &sw.values, &sw.meta, &rep) ==
                         BK_SUCCESS;
        long bad = 0;
        const size_t es = bkt_type_size(type);
        for (int64_t i = 0; ran && i < m; i++)
            for (int64_t j = 0; j < k; j++)
                if (memcmp(tmat_elem(&back, i, j), tmat_elem(&sw.dense, i, j), es) && bad++ < 4)
                    tap_diag("%s: decompressed [%lld, %lld] = %g, W has %g", label, (long long)i,
                             (long long)j, tmat_get(&back, 0, i, j), tmat_get(&sw.dense, 0, i, j));
        bad += tmat_gap_errors(&back);
        tap_ok(ran && bad == 0 && report_is(&rep, BK_SPARSE24_STATUS_OK, 0, 0, 0, label),
               "%s: decompression (%s) gives W back bit for bit", label,
               tmat_layout_name(back.layout));
        tmat_free(ctx, &back);
        weight_free(ctx, &sw);
    }
}

/* Groups whose kept positions are known by hand: ties, zeros, NaN, inf. */
static const struct {
    double w[4];
    int lo, hi;
} prune_groups[] = {
    { { 3, -3, 1, 3 }, 0, 1 },         { { 1, 2, 2, 2 }, 1, 2 },
    { { 0, 0, 0, 0 }, 0, 1 },          { { 0, 0, 5, 0 }, 0, 2 },
    { { 0, 0, 0, -7 }, 0, 3 },         { { NAN, 1, 2, 3 }, 0, 3 },
    { { 1, NAN, 2, NAN }, 1, 3 },      { { -5, 5, 5, -5 }, 0, 1 },
    { { 1, 4, -4, 2 }, 1, 2 },         { { 2, 1, 1, 1 }, 0, 1 },
    { { 1, 1, 1, 2 }, 0, 3 },          { { INFINITY, -INFINITY, 1, 1 }, 0, 1 },
    { { 0.25, -0.5, 0, 0.75 }, 1, 3 }, { { -0.0, 0, 0, 1 }, 0, 3 },
    { { 1, 1, 1, 1 }, 0, 1 },          { { 0.5, 0, -0.5, 0.5 }, 0, 2 },
};
#define PRUNE_GROUPS (sizeof prune_groups / sizeof prune_groups[0])

/* Pruning: the hand-made groups (row 0) and random groups full of ties
 * (values from {-2, -1, 0, 1, 2}) against the sort-based reference. */
static void test_prune(BkContext ctx, struct bkt_rng *rng)
{
    for (size_t t = 0; t < CONVERT_TYPES; t++) {
        const BkDataType type = convert_types[t];
        const int64_t m = 9, k = 8 * ((PRUNE_GROUPS + 1) / 2);
        char label[96];
        snprintf(label, sizeof label, "%s prune W [%lld, %lld]", bkt_type_name(type), (long long)m,
                 (long long)k);
        struct sparse_weight sw;
        weight_make(ctx, &sw, type, m, k, rng);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < k; j++)
                tmat_set(&sw.dense, 0, i, j, (double)bkt_rand_int(rng, -2, 2));
        for (size_t g = 0; g < PRUNE_GROUPS; g++)
            for (int q = 0; q < 4; q++)
                tmat_set(&sw.dense, 0, 0, 4 * (int64_t)g + q, prune_groups[g].w[q]);
        tmat_upload(ctx, &sw.dense);
        BkSparse24Report rep;
        bool ran = convert_run(ctx, BK_SPARSE24_COMPRESS_PRUNE, &sw.dense, &sw.values, &sw.meta,
                               &rep) == BK_SUCCESS;
        long bad = 0;
        for (size_t g = 0; ran && g < PRUNE_GROUPS; g++) {
            const unsigned byte = (meta_get(&sw.meta, 0, (int64_t)g / 2) >> (8 * (g % 2))) & 0xFFu;
            const unsigned want = (unsigned)(prune_groups[g].lo | prune_groups[g].hi << 2);
            if (byte != want && bad++ < 4)
                tap_diag("%s: group {%g, %g, %g, %g} kept positions %u, %u; expected %d, %d", label,
                         prune_groups[g].w[0], prune_groups[g].w[1], prune_groups[g].w[2],
                         prune_groups[g].w[3], byte & 3u, byte >> 2, prune_groups[g].lo,
                         prune_groups[g].hi);
        }
        tap_ok(ran && bad == 0, "%s: hand-made groups keep the expected positions", label);
        tap_ok(ran && check_compressed(&sw.dense, &sw.values, &sw.meta, label) == 0 &&
                   report_is(&rep, BK_SPARSE24_STATUS_OK, 0, 0, 0, label),
               "%s: every group keeps its two largest, ties to the lower position; report OK",
               label);
        weight_free(ctx, &sw);
    }
}

/* Three non-2:4 groups at known places: strict compression reports the
 * count and the first; the groups are stored as pruning would. */
static void test_strict_rejects(BkContext ctx, struct bkt_rng *rng)
{
    static const int64_t bad_groups[][3] = { /* row, group, non-zeros */
        { 3, 7, 4 }, { 3, 5, 3 }, { 10, 0, 3 },
    };
    for (size_t t = 0; t < CONVERT_TYPES; t++) {
        const BkDataType type = convert_types[t];
        char label[96];
        snprintf(label, sizeof label, "%s strict W [12, 40] with 3 bad groups",
                 bkt_type_name(type));
        struct sparse_weight sw;
        weight_make(ctx, &sw, type, 12, 40, rng);
        for (size_t b = 0; b < 3; b++)   /* a NaN is a non-zero too */
            for (int q = 0; q < 4; q++)
                tmat_set(&sw.dense, 0, bad_groups[b][0], 4 * bad_groups[b][1] + q,
                         q >= bad_groups[b][2] ? 0.0 : b == 2 && q == 1 ? NAN
                                                                        : nonzero(rng, type));
        tmat_upload(ctx, &sw.dense);
        BkSparse24Report rep;
        bool ran = convert_run(ctx, BK_SPARSE24_COMPRESS_STRICT, &sw.dense, &sw.values, &sw.meta,
                               &rep) == BK_SUCCESS;
        tap_ok(ran && report_is(&rep, BK_SPARSE24_STATUS_TOO_MANY_NONZEROS, 3, 3, 5, label),
               "%s: report TOO_MANY_NONZEROS, 3 groups, first row 3 group 5", label);
        tap_ok(ran && check_compressed(&sw.dense, &sw.values, &sw.meta, label) == 0,
               "%s: rejected groups are stored as pruning would", label);
        if (t == 0) {
            BKT_EXPECT(bkCheckSparse24Report(&rep), BK_ERROR_INVALID_ARGUMENT, "row 3, group 5",
                       "bkCheckSparse24Report names the first group with too many non-zeros");
            BKT_EXPECT(bkCheckSparse24Report(NULL), BK_ERROR_INVALID_ARGUMENT, "pReport",
                       "bkCheckSparse24Report(NULL)");
        }
        weight_free(ctx, &sw);
    }
}

/* Corrupt metadata: equal positions, decreasing positions, a high bit,
 * alone and together; validate and decompress report them. */
static void test_bad_metadata(BkContext ctx, struct bkt_rng *rng)
{
    static const struct {
        const char *what;
        unsigned byte;
        int64_t row, group;
    } faults[] = {
        { "equal positions", 1u | 1u << 2, 5, 9 },
        { "decreasing positions", 2u | 1u << 2, 2, 3 },
        { "bit 4 set", 0x10u | 0u | 1u << 2, 7, 0 },
        { "bit 7 set", 0x80u | 2u | 3u << 2, 0, 14 },
    };
    const size_t nf = sizeof faults / sizeof faults[0];
    const int64_t m = 8, k = 64;
    struct sparse_weight sw;
    weight_make(ctx, &sw, BK_DATA_TYPE_F32, m, k, rng);
    BkSparse24Report rep;
    if (convert_run(ctx, BK_SPARSE24_COMPRESS_STRICT, &sw.dense, &sw.values, &sw.meta, &rep) !=
        BK_SUCCESS)
        tap_bail("compression failed");
    void *good = malloc(sw.meta.bytes);
    if (!good)
        tap_bail("out of memory");
    memcpy(good, sw.meta.host, sw.meta.bytes);
    bool ran = convert_run(ctx, BK_SPARSE24_VALIDATE, NULL, NULL, &sw.meta, &rep) == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_SPARSE24_STATUS_OK, 0, 0, 0, "validate"),
           "validate: metadata from compression is valid (%s)", tmat_layout_name(sw.meta.layout));

    /* Each fault alone, then all together (the first in row-major order wins). */
    for (size_t f = 0; f <= nf; f++) {
        memcpy(sw.meta.host, good, sw.meta.bytes);
        int64_t first_row = INT64_MAX, first_group = 0;
        for (size_t g = 0; g < nf; g++) {
            if (f < nf && g != f)
                continue;
            const int64_t r = faults[g].row, j = faults[g].group / 2;
            const int shift = 8 * (int)(faults[g].group % 2);
            uint16_t w = meta_get(&sw.meta, r, j);
            w = (uint16_t)((w & ~(0xFFu << shift)) | faults[g].byte << shift);
            meta_set(&sw.meta, r, j, w);
            if (r < first_row || (r == first_row && faults[g].group < first_group))
                first_row = r, first_group = faults[g].group;
        }
        const uint64_t count = f < nf ? 1 : nf;
        const char *what = f < nf ? faults[f].what : "all four faults";
        tmat_upload(ctx, &sw.meta);
        ran = convert_run(ctx, BK_SPARSE24_VALIDATE, NULL, NULL, &sw.meta, &rep) == BK_SUCCESS;
        tap_ok(ran && report_is(&rep, BK_SPARSE24_STATUS_BAD_METADATA, count, (uint64_t)first_row,
                                (uint64_t)first_group, what),
               "validate: %s: BAD_METADATA, %llu group(s), first row %lld group %lld", what,
               (unsigned long long)count, (long long)first_row, (long long)first_group);
        if (f == 0)
            BKT_EXPECT(bkCheckSparse24Report(&rep), BK_ERROR_INVALID_ARGUMENT, "row 5, group 9",
                       "bkCheckSparse24Report names the first corrupt group");
    }

    /* Decompression with all faults: reported, and each value lands where
     * its position says (the second where they are equal). */
    struct tmat back;
    tmat_init(&back, BK_DATA_TYPE_F32, 0, m, k, tmat_random_layout(rng), rng);
    tmat_poison(&back);
    tmat_upload(ctx, &back);
    ran = convert_run(ctx, BK_SPARSE24_DECOMPRESS, &back, &sw.values, &sw.meta, &rep) == BK_SUCCESS;
    long bad = 0;
    for (int64_t i = 0; ran && i < m; i++)
        for (int64_t g = 0; g < k / 4; g++) {
            const unsigned byte = (meta_get(&sw.meta, i, g / 2) >> (8 * (g % 2))) & 0xFFu;
            double want[4] = { 0, 0, 0, 0 };
            want[byte & 3u] = tmat_get(&sw.values, 0, i, 2 * g);
            want[(byte >> 2) & 3u] = tmat_get(&sw.values, 0, i, 2 * g + 1);
            for (int q = 0; q < 4; q++)
                if (tmat_get(&back, 0, i, 4 * g + q) != want[q] && bad++ < 4)
                    tap_diag("decompress: [%lld, %lld] = %g, expected %g (metadata 0x%02x)",
                             (long long)i, (long long)(4 * g + q), tmat_get(&back, 0, i, 4 * g + q),
                             want[q], byte);
        }
    tap_ok(ran && bad == 0 && report_is(&rep, BK_SPARSE24_STATUS_BAD_METADATA, nf, 0, 14,
                                        "decompress"),
           "decompress of corrupt metadata: BAD_METADATA and values where the positions say");
    tmat_free(ctx, &back);

    /* Every byte value once: 6 of the 256 are valid. */
    struct tmat all;
    tmat_init(&all, BK_DATA_TYPE_U16, 0, 16, 8, tmat_random_layout(rng), rng);
    for (int64_t i = 0; i < 16; i++)
        for (int64_t j = 0; j < 8; j++) {
            const unsigned g = (unsigned)(i * 16 + 2 * j);
            meta_set(&all, i, j, (uint16_t)((g & 0xFFu) | ((g + 1) & 0xFFu) << 8));
        }
    tmat_upload(ctx, &all);
    ran = convert_run(ctx, BK_SPARSE24_VALIDATE, NULL, NULL, &all, &rep) == BK_SUCCESS;
    tap_ok(ran && report_is(&rep, BK_SPARSE24_STATUS_BAD_METADATA, 250, 0, 0, "every byte"),
           "validate: every metadata byte value: 250 bad, 6 valid");
    tmat_free(ctx, &all);
    free(good);
    weight_free(ctx, &sw);
}

/* ---- Prepare and sparse GEMM -------------------------------------------- */

struct sparse_case {
    BkDataType type, out;
    int64_t m, n, k, batch;           /* W [m, k], X [n, k], Y [n, m]; batch 0: rank 2 */
    enum tmat_layout lx, ly, lc;
    bool has_c, c_shared, in_place, has_bias, repeat;
    double alpha, beta;
    BkGemmActivation act;
};

/* The byte size a plan gives binding slot i. */
static uint64_t slot_size(BkPlan plan, uint32_t i)
{
    BkPlanBindingProperties b = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &b };
    if (bkGetPlanProperties(plan, &props) != BK_SUCCESS || i >= b.bindingCount)
        return UINT64_MAX;
    return b.bindings[i].size;
}

/* Compress (strict), prepare: the prepared weight's buffer and its size. */
static BkResult prepare_weight(BkContext ctx, struct sparse_weight *sw, struct bkt_buffer *prepared,
                               uint64_t *size)
{
    BkSparse24Report rep;
    BkResult r = convert_run(ctx, BK_SPARSE24_COMPRESS_STRICT, &sw->dense, &sw->values, &sw->meta,
                             &rep);
    if (r == BK_SUCCESS && rep.status != BK_SPARSE24_STATUS_OK)
        return BK_ERROR_INVALID_ARGUMENT;
    BkSparse24PrepareInfo info = { .sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO };
    tmat_desc(&sw->values, &info.values);
    tmat_desc(&sw->meta, &info.metadata);
    BkPlan plan = BK_NULL_HANDLE;
    if (r == BK_SUCCESS)
        r = bkt_create_plan(ctx, &info, &plan);
    if (r == BK_SUCCESS) {
        *size = slot_size(plan, BK_SPARSE24_PREPARE_BINDING_PREPARED);
        *prepared = bkt_alloc(ctx, *size);
        const BkDeviceAddress bindings[3] = { sw->values.dev.address, sw->meta.dev.address,
                                              prepared->address };
        r = bkt_run(ctx, plan, 3, bindings);
    }
    if (r != BK_SUCCESS)
        tap_diag("prepare: %s (%s)", bkResultString(r), bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    return r;
}

static void sparse_describe(const struct sparse_case *sc, char *buf, size_t size)
{
    snprintf(buf, size,
             "sparse gemm %s->%s m %lld n %lld k %lld batch %lld x:%s y:%s c:%s%s alpha %g "
             "beta %g bias %d %s", bkt_type_name(sc->type), bkt_type_name(sc->out),
             (long long)sc->m, (long long)sc->n, (long long)sc->k, (long long)sc->batch,
             tmat_layout_name(sc->lx), tmat_layout_name(sc->ly),
             sc->has_c ? (sc->in_place ? "in-place" : tmat_layout_name(sc->lc)) : "none",
             sc->c_shared ? "(shared)" : "", sc->alpha, sc->beta, sc->has_bias,
             gemm_activation_name(sc->act));
}

/* One TAP line: W 2:4 random, compressed, prepared; Y from the plan
 * against the long double reference with the dense W. */
static bool sparse_test(BkContext ctx, const struct sparse_case *sc, struct bkt_rng *rng)
{
    char label[256];
    sparse_describe(sc, label, sizeof label);
    struct sparse_weight sw;
    weight_make(ctx, &sw, sc->type, sc->m, sc->k, rng);
    struct bkt_buffer prepared = { 0 };
    uint64_t prepared_size = 0;
    BkResult r = sc->k > 0 ? prepare_weight(ctx, &sw, &prepared, &prepared_size) : BK_SUCCESS;

    struct tmat x, c, y, bias;
    tmat_init(&x, sc->type, sc->batch, sc->n, sc->k, sc->lx, rng);
    tmat_init(&y, sc->out, sc->batch, sc->n, sc->m, sc->ly, rng);
    tmat_init(&bias, sc->out, 0, 1, sc->m, TMAT_ROW, rng);
    tmat_fill_random(&x, rng, -1, 1);
    tmat_fill_random(&bias, rng, -1, 1);
    tmat_poison(&y);
    memset(&c, 0, sizeof c);
    if (sc->has_c && sc->in_place) {
        tmat_fill_random(&y, rng, -1, 1);   /* C's values in Y's elements */
        tmat_copy(&c, &y);
    } else if (sc->has_c) {
        tmat_init(&c, sc->out, sc->c_shared ? 0 : sc->batch, sc->n, sc->m, sc->lc, rng);
        tmat_fill_random(&c, rng, -1, 1);
        tmat_upload(ctx, &c);
    }
    tmat_upload(ctx, &x);
    tmat_upload(ctx, &y);
    tmat_upload(ctx, &bias);

    BkSparse24GemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, .weightType = sc->type,
        .activation = sc->act, .m = sc->m, .k = sc->k, .alpha = sc->alpha, .beta = sc->beta,
    };
    tmat_desc(&x, &info.x);
    tmat_desc(&y, &info.y);
    if (sc->has_c)
        tmat_desc(sc->in_place ? &y : &c, &info.c);
    if (sc->has_bias)
        info.bias = (BkTensorDesc){ .dataType = sc->out, .rank = 1, .extent = { sc->m } };
    BkPlan plan = BK_NULL_HANDLE;
    if (r == BK_SUCCESS)
        r = bkt_create_plan(ctx, &info, &plan);
    long bad = -1;
    if (r == BK_SUCCESS && sc->k > 0 && slot_size(plan, BK_SPARSE24_GEMM_BINDING_WEIGHT) !=
                                            prepared_size) {
        tap_diag("%s: the GEMM plan's weight is %llu bytes, the prepared one %llu", label,
                 (unsigned long long)slot_size(plan, BK_SPARSE24_GEMM_BINDING_WEIGHT),
                 (unsigned long long)prepared_size);
        r = BK_ERROR_INVALID_ARGUMENT;
    }
    const BkDeviceAddress bindings[5] = {
        prepared.address, x.dev.address,
        sc->has_c ? (sc->in_place ? y.dev.address : c.dev.address) : 0,
        y.dev.address, sc->has_bias ? bias.dev.address : 0,
    };
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 5, bindings);
    if (r == BK_SUCCESS) {
        tmat_download(ctx, &y);
        long repeat_diffs = 0;
        if (sc->repeat) {
            void *first = malloc(y.bytes);
            if (!first)
                tap_bail("out of memory");
            memcpy(first, y.host, y.bytes);
            tmat_poison(&y);
            tmat_upload(ctx, &y);
            r = bkt_run(ctx, plan, 5, bindings);
            tmat_download(ctx, &y);
            repeat_diffs = r != BK_SUCCESS || memcmp(first, y.host, y.bytes) != 0;
            if (repeat_diffs)
                tap_diag("%s: a second run gave different bits", label);
            free(first);
        }
        const int64_t count = y.batch * sc->n * sc->m;
        long double *ref = calloc((size_t)count + 1, sizeof *ref);
        double *scale = calloc((size_t)count + 1, sizeof *scale);
        if (!ref || !scale)
            tap_bail("out of memory");
        for (int64_t b = 0; b < y.batch; b++)
            for (int64_t i = 0; i < sc->n; i++)
                for (int64_t j = 0; j < sc->m; j++) {
                    long double sum = 0, size = 0;
                    for (int64_t p = 0; p < sc->k; p++) {
                        long double t = (long double)tmat_get(&x, b, i, p) *
                                        tmat_get(&sw.dense, 0, j, p);
                        sum += t;
                        size += fabsl(t);
                    }
                    long double v = sc->alpha * sum;
                    size *= fabs(sc->alpha);
                    if (sc->has_c && sc->beta != 0) {
                        const long double cv = tmat_get(&c, b, i, j);
                        v += sc->beta * cv;
                        size += fabsl(sc->beta * cv);
                    }
                    if (sc->has_bias) {
                        const long double bv = tmat_get(&bias, 0, 0, j);
                        v += bv;
                        size += fabsl(bv);
                    }
                    const int64_t e = (b * sc->n + i) * sc->m + j;
                    ref[e] = gemm_ref_activation(sc->act, v);
                    scale[e] = (double)size;
                }
        bad = gemm_check(&y, ref, scale, NULL, gemm_tolerance(sc->type, sc->out, sc->k), label) +
              repeat_diffs;
        free(ref);
        free(scale);
    } else
        tap_diag("%s: %s (%s)", label, bkResultString(r), bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    if (prepared.memory)
        bkt_free(ctx, &prepared);
    tmat_free(ctx, &x);
    tmat_free(ctx, &c);
    tmat_free(ctx, &y);
    tmat_free(ctx, &bias);
    weight_free(ctx, &sw);
    return tap_ok(bad == 0, "%s%s", label, sc->repeat ? " (twice, bit-identical)" : "");
}

static const BkDataType gemm_types[][2] = {
    { BK_DATA_TYPE_F32, BK_DATA_TYPE_F32 },  { BK_DATA_TYPE_F16, BK_DATA_TYPE_F16 },
    { BK_DATA_TYPE_F16, BK_DATA_TYPE_F32 },  { BK_DATA_TYPE_BF16, BK_DATA_TYPE_BF16 },
    { BK_DATA_TYPE_BF16, BK_DATA_TYPE_F32 },
};
#define GEMM_TYPES (sizeof gemm_types / sizeof gemm_types[0])

static struct sparse_case base_sparse(size_t t, int64_t m, int64_t n, int64_t k)
{
    return (struct sparse_case){ .type = gemm_types[t][0], .out = gemm_types[t][1], .m = m,
                                 .n = n, .k = k, .alpha = 1, .lx = TMAT_ROW, .ly = TMAT_ROW,
                                 .lc = TMAT_ROW };
}

/* Odd M and N, K a multiple of 8 but not of 32 (and past one k block),
 * N = 1, random layouts of X and Y. */
static void test_sparse_shapes(BkContext ctx, struct bkt_rng *rng)
{
    static const int64_t shapes[][3] = { /* m, n, k */
        { 37, 13, 24 }, { 65, 1, 40 }, { 7, 33, 72 }, { 1, 5, 8 }, { 130, 21, 264 },
    };
    for (size_t t = 0; t < GEMM_TYPES; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            struct sparse_case sc = base_sparse(t, shapes[s][0], shapes[s][1], shapes[s][2]);
            sc.lx = tmat_random_layout(rng);
            sc.ly = tmat_random_layout(rng);
            sparse_test(ctx, &sc, rng);
        }
}

/* Y^T = W X^T: column-major X and Y; batches with a shared C; the
 * epilogue; C == Y in place; beta 0; K = 0; two runs. Batches and the
 * epilogue with N of 32 or more too: the host runs fewer tokens on its
 * engine and more on a BLAS where it has one. */
static void test_sparse_cases(BkContext ctx, struct bkt_rng *rng)
{
    static const BkGemmActivation acts[] = { BK_GEMM_ACTIVATION_NONE, BK_GEMM_ACTIVATION_RELU,
                                             BK_GEMM_ACTIVATION_GELU_TANH };
    for (size_t t = 0; t < GEMM_TYPES; t++) {
        struct sparse_case sc = base_sparse(t, 45, 19, 56);
        sc.lx = TMAT_COL, sc.ly = TMAT_COL;
        sparse_test(ctx, &sc, rng);

        for (int64_t n = 11; n < 64; n += 26) {
            sc = base_sparse(t, 29, n, 40);
            sc.batch = 3, sc.lx = tmat_random_layout(rng), sc.ly = tmat_random_layout(rng);
            sc.has_c = true, sc.c_shared = t % 2, sc.beta = -0.5, sc.lc = tmat_random_layout(rng);
            sparse_test(ctx, &sc, rng);
        }

        for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
            sc = base_sparse(t, 33, a % 2 ? 40 : 17, 48);
            sc.act = acts[a];
            sc.alpha = a == 1 ? -1.5 : 2;
            sc.has_c = true, sc.beta = a == 2 ? 0 : 0.75, sc.lc = tmat_random_layout(rng);
            sc.has_bias = true;
            sparse_test(ctx, &sc, rng);
        }
    }
    struct sparse_case sc = base_sparse(0, 27, 14, 32);
    sc.has_c = sc.in_place = true, sc.beta = 1, sc.batch = 2, sc.ly = TMAT_COL_PADDED;
    sparse_test(ctx, &sc, rng);
    sc = base_sparse(3, 27, 14, 0);   /* K = 0: Y = act(beta C + bias) */
    sc.has_c = true, sc.beta = 2, sc.has_bias = true, sc.act = BK_GEMM_ACTIVATION_RELU;
    sparse_test(ctx, &sc, rng);
    sc = base_sparse(1, 200, 150, 296);
    sc.repeat = true, sc.has_bias = true, sc.act = BK_GEMM_ACTIVATION_GELU_TANH;
    sparse_test(ctx, &sc, rng);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(301);
    test_round_trip(ctx, &rng);
    test_prune(ctx, &rng);
    test_strict_rejects(ctx, &rng);
    test_bad_metadata(ctx, &rng);
    test_sparse_shapes(ctx, &rng);
    test_sparse_cases(ctx, &rng);
    bkDestroyContext(ctx);
    return tap_done();
}
