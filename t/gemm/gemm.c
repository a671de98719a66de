/* SPDX-License-Identifier: Apache-2.0 */
/* Dense GEMM on the device under test against a long double reference:
 * every transpose and layout of each operand, every data type, odd shapes
 * that fill no tile, K = 0, batches with shared operands, the epilogue
 * (alpha, beta, C, bias, activations), C == D in place, a NaN C with
 * beta = 0, exact rounding of integer products, empty problems and
 * repeated runs. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gemm_ref.h"

struct dense_case {
    BkDataType ab, cd;                 /* A and B; C, D and bias */
    int64_t m, n, k, batch;            /* batch 0: every operand rank 2 */
    BkGemmOp ta, tb;
    enum tmat_layout la, lb, lc, ld;
    bool a_shared, b_shared, c_shared; /* rank 2 in a batched product */
    bool has_c, has_bias, in_place, nan_c;
    double alpha, beta;
    BkGemmActivation act;
    bool integers;                     /* inputs small integers: exact sums */
    bool repeat;                       /* run twice, results must be bit-identical */
};

static const char *type_name(BkDataType t)
{
    return bkt_type_name(t);
}

static void describe(const struct dense_case *dc, char *buf, size_t size)
{
    snprintf(buf, size,
             "gemm %s->%s m %lld n %lld k %lld batch %lld %c%c a:%s%s b:%s%s d:%s c:%s%s%s "
             "alpha %g beta %g bias %d %s",
             type_name(dc->ab), type_name(dc->cd), (long long)dc->m, (long long)dc->n,
             (long long)dc->k, (long long)dc->batch, dc->ta ? 'T' : 'N', dc->tb ? 'T' : 'N',
             tmat_layout_name(dc->la), dc->a_shared ? "(shared)" : "", tmat_layout_name(dc->lb),
             dc->b_shared ? "(shared)" : "", tmat_layout_name(dc->ld),
             dc->has_c ? (dc->in_place ? "in-place" : tmat_layout_name(dc->lc)) : "none",
             dc->c_shared ? "(shared)" : "", dc->nan_c ? "(NaN)" : "", dc->alpha, dc->beta,
             dc->has_bias, gemm_activation_name(dc->act));
}

static double random_input(struct bkt_rng *rng, BkDataType type, bool integers)
{
    return integers ? (double)bkt_rand_int(rng, -64, 64) : bkt_rand_value(rng, type, -1, 1);
}

/* The operands of a case, made and filled. */
struct dense_data {
    struct tmat a, b, c, d, bias;
    bool have_c_buffer;    /* c is its own buffer (not in place) */
};

static void dense_data_make(BkContext ctx, const struct dense_case *dc, struct dense_data *x,
                            struct bkt_rng *rng)
{
    memset(x, 0, sizeof *x);
    const int64_t m = dc->m, n = dc->n, k = dc->k;
    tmat_init(&x->a, dc->ab, dc->a_shared ? 0 : dc->batch, dc->ta ? k : m, dc->ta ? m : k,
              dc->la, rng);
    tmat_init(&x->b, dc->ab, dc->b_shared ? 0 : dc->batch, dc->tb ? n : k, dc->tb ? k : n,
              dc->lb, rng);
    tmat_init(&x->d, dc->cd, dc->batch, m, n, dc->ld, rng);
    tmat_init(&x->bias, dc->cd, 0, 1, n, TMAT_ROW, rng);
    for (int64_t i = 0; i < x->a.span; i++)
        bkt_store(x->a.host, dc->ab, i, random_input(rng, dc->ab, dc->integers));
    for (int64_t i = 0; i < x->b.span; i++)
        bkt_store(x->b.host, dc->ab, i, random_input(rng, dc->ab, dc->integers));
    tmat_fill_random(&x->bias, rng, -1, 1);
    tmat_poison(&x->d);
    if (dc->has_c) {
        /* In place: C's values live in D's elements (D's gaps stay poisoned). */
        x->have_c_buffer = !dc->in_place;
        if (x->have_c_buffer)
            tmat_init(&x->c, dc->cd, dc->c_shared ? 0 : dc->batch, m, n, dc->lc, rng);
        struct tmat *c = x->have_c_buffer ? &x->c : &x->d;
        for (int64_t b = 0; b < c->batch; b++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++)
                    tmat_set(c, b, i, j, dc->nan_c ? NAN : bkt_rand_value(rng, dc->cd, -1, 1));
        if (!x->have_c_buffer)   /* keep C's values for the reference */
            tmat_copy(&x->c, &x->d);
    }
    tmat_upload(ctx, &x->a);
    tmat_upload(ctx, &x->b);
    tmat_upload(ctx, &x->d);
    tmat_upload(ctx, &x->bias);
    if (x->have_c_buffer)
        tmat_upload(ctx, &x->c);
}

static void dense_data_free(BkContext ctx, struct dense_data *x)
{
    tmat_free(ctx, &x->a);
    tmat_free(ctx, &x->b);
    tmat_free(ctx, &x->c);
    tmat_free(ctx, &x->d);
    tmat_free(ctx, &x->bias);
}

static void dense_info(const struct dense_case *dc, const struct dense_data *x, BkGemmInfo *info)
{
    memset(info, 0, sizeof *info);
    info->sType = BK_STRUCTURE_TYPE_GEMM_INFO;
    info->transA = dc->ta;
    info->transB = dc->tb;
    info->activation = dc->act;
    info->alpha = dc->alpha;
    info->beta = dc->beta;
    tmat_desc(&x->a, &info->a);
    tmat_desc(&x->b, &info->b);
    tmat_desc(&x->d, &info->d);
    if (dc->has_c)
        tmat_desc(dc->in_place ? &x->d : &x->c, &info->c);
    if (dc->has_bias)
        info->bias = (BkTensorDesc){ .dataType = dc->cd, .rank = 1, .extent = { dc->n } };
}

/* The reference and the size of its terms, [b][i][j]. */
/* slack: what one rounding to D's type of alpha AB + beta C before the
 * bias is added can move the result (half an ulp there, times 1.2 for the
 * activation's slope), for backends that round there (bk-gemm(7)). */
static void dense_reference(const struct dense_case *dc, const struct dense_data *x,
                            long double *ref, double *scale, double *slack)
{
    for (int64_t b = 0; b < x->d.batch; b++)
        for (int64_t i = 0; i < dc->m; i++)
            for (int64_t j = 0; j < dc->n; j++) {
                long double sum = 0, size = 0;
                for (int64_t p = 0; p < dc->k; p++) {
                    long double av = dc->ta ? tmat_get(&x->a, b, p, i) : tmat_get(&x->a, b, i, p);
                    long double bv = dc->tb ? tmat_get(&x->b, b, j, p) : tmat_get(&x->b, b, p, j);
                    sum += av * bv;
                    size += fabsl(av * bv);
                }
                long double v = (long double)dc->alpha * sum;
                size *= fabs(dc->alpha);
                if (dc->has_c && dc->beta != 0) {   /* beta == 0: C is not read */
                    long double cv = tmat_get(&x->c, b, i, j);
                    v += (long double)dc->beta * cv;
                    size += fabsl((long double)dc->beta * cv);
                }
                const int64_t e = (b * dc->m + i) * dc->n + j;
                slack[e] = 0.6 * bkt_ulp(dc->cd, (double)fabsl(v));
                if (dc->has_bias) {
                    long double bias = tmat_get(&x->bias, 0, 0, j);
                    v += bias;
                    size += fabsl(bias);
                }
                ref[e] = gemm_ref_activation(dc->act, v);
                scale[e] = (double)size;
            }
}

/* Exact sums: D must be the exact value rounded to nearest even, bit for bit. */
static long dense_check_exact(const struct dense_case *dc, const struct dense_data *x,
                              const long double *ref, const char *label)
{
    long bad = 0;
    for (int64_t b = 0; b < x->d.batch; b++)
        for (int64_t i = 0; i < dc->m; i++)
            for (int64_t j = 0; j < dc->n; j++) {
                const long double r = ref[(b * dc->m + i) * dc->n + j];
                const double want = bkt_round_to(dc->cd, (double)r);
                const double got = tmat_get(&x->d, b, i, j);
                if (got != want && bad++ < 4)
                    tap_diag("%s: [%lld, %lld, %lld] exact %.17Lg rounds to %.17g, got %.17g",
                             label, (long long)b, (long long)i, (long long)j, r, want, got);
            }
    return bad + tmat_gap_errors(&x->d);
}

/* Plan, run (twice when dc->repeat) and download D; false on a failure,
 * said in a diagnostic. */
static bool dense_run(BkContext ctx, const struct dense_case *dc, struct dense_data *x,
                      const char *label, long *repeat_diffs)
{
    BkGemmInfo info;
    dense_info(dc, x, &info);
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    const BkDeviceAddress bindings[5] = {
        x->a.dev.address, x->b.dev.address,
        dc->has_c ? (dc->in_place ? x->d.dev.address : x->c.dev.address) : 0,
        x->d.dev.address, dc->has_bias ? x->bias.dev.address : 0,
    };
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 5, bindings);
    if (r == BK_SUCCESS)
        tmat_download(ctx, &x->d);
    if (r == BK_SUCCESS && dc->repeat) {
        void *first = malloc(x->d.bytes);
        if (!first)
            tap_bail("out of memory");
        memcpy(first, x->d.host, x->d.bytes);
        tmat_poison(&x->d);
        tmat_upload(ctx, &x->d);
        r = bkt_run(ctx, plan, 5, bindings);
        if (r == BK_SUCCESS)
            tmat_download(ctx, &x->d);
        *repeat_diffs = memcmp(first, x->d.host, x->d.bytes) != 0;
        free(first);
    }
    if (r != BK_SUCCESS)
        tap_diag("%s: %s (%s)", label, bkResultString(r), bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    return r == BK_SUCCESS;
}

/* On CUDA a half-type D with a bias may be rounded before the bias is
 * added (cuBLASLt's epilogue, or libbk's bias kernel after it): bk-gemm(7). */
static bool cuda_rounds_before_bias(BkContext ctx)
{
    return bkt_device_type(ctx) == BK_DEVICE_TYPE_CUDA;
}

/* One TAP line: run the case on fresh inputs and check it. */
static bool dense_test(BkContext ctx, const struct dense_case *dc, struct bkt_rng *rng)
{
    char label[320];
    describe(dc, label, sizeof label);
    struct dense_data x;
    dense_data_make(ctx, dc, &x, rng);
    long bad = -1, repeat_diffs = 0;
    if (dense_run(ctx, dc, &x, label, &repeat_diffs)) {
        const int64_t count = x.d.batch * dc->m * dc->n;
        long double *ref = calloc((size_t)count + 1, sizeof *ref);
        double *scale = calloc((size_t)count + 1, sizeof *scale);
        double *slack = calloc((size_t)count + 1, sizeof *slack);
        if (!ref || !scale || !slack)
            tap_bail("out of memory");
        dense_reference(dc, &x, ref, scale, slack);
        if (dc->integers)
            bad = dense_check_exact(dc, &x, ref, label);
        else
            bad = gemm_check(&x.d, ref, scale,
                             dc->has_bias && cuda_rounds_before_bias(ctx) ? slack : NULL,
                             gemm_tolerance(dc->ab, dc->cd, dc->k), label);
        if (repeat_diffs)
            tap_diag("%s: a second run gave different bits", label);
        bad += repeat_diffs;
        free(ref);
        free(scale);
        free(slack);
    }
    dense_data_free(ctx, &x);
    return tap_ok(bad == 0, "%s%s", label, dc->repeat ? " (twice, bit-identical)" : "");
}

/* A case with the common defaults: rank 2, row-major, no C, no bias. */
static struct dense_case base_case(BkDataType ab, BkDataType cd, int64_t m, int64_t n, int64_t k)
{
    return (struct dense_case){ .ab = ab, .cd = cd, .m = m, .n = n, .k = k, .alpha = 1,
                                .la = TMAT_ROW, .lb = TMAT_ROW, .lc = TMAT_ROW, .ld = TMAT_ROW };
}

/* Every transA x transB x layout of A, B and D (C random), padded or not. */
static void test_layouts(BkContext ctx, struct bkt_rng *rng)
{
    for (int combo = 0; combo < 32; combo++) {
        struct dense_case dc = base_case(BK_DATA_TYPE_F32, BK_DATA_TYPE_F32, 37, 29, 41);
        dc.ta = (BkGemmOp)(combo & 1);
        dc.tb = (BkGemmOp)((combo >> 1) & 1);
        /* bit 0 of a layout: column-major; bit 1 (random): padded */
        dc.la = (enum tmat_layout)(((combo >> 2) & 1) | 2 * bkt_rand_int(rng, 0, 1));
        dc.lb = (enum tmat_layout)(((combo >> 3) & 1) | 2 * bkt_rand_int(rng, 0, 1));
        dc.ld = (enum tmat_layout)(((combo >> 4) & 1) | 2 * bkt_rand_int(rng, 0, 1));
        dc.lc = tmat_random_layout(rng);
        dc.has_c = combo % 3 != 0;
        dc.beta = dc.has_c ? 0.5 : 0;
        dc.alpha = 1.25;
        dc.has_bias = combo % 2;
        dense_test(ctx, &dc, rng);
    }
}

static const BkDataType type_pairs[][2] = {
    { BK_DATA_TYPE_F32, BK_DATA_TYPE_F32 },   { BK_DATA_TYPE_F16, BK_DATA_TYPE_F16 },
    { BK_DATA_TYPE_F16, BK_DATA_TYPE_F32 },   { BK_DATA_TYPE_BF16, BK_DATA_TYPE_BF16 },
    { BK_DATA_TYPE_BF16, BK_DATA_TYPE_F32 },  { BK_DATA_TYPE_F64, BK_DATA_TYPE_F64 },
};
#define TYPE_PAIRS (sizeof type_pairs / sizeof type_pairs[0])

/* Shapes that fill no micro-tile or cache block, K past one k block,
 * vectors (N = 1, M = 1), M = 8; random transposes and layouts. */
static void test_shapes(BkContext ctx, struct bkt_rng *rng)
{
    static const int64_t shapes[][3] = {
        { 1, 1, 1 }, { 7, 33, 65 }, { 129, 65, 33 }, { 8, 1, 129 },
        { 65, 7, 1 }, { 33, 129, 7 }, { 1, 70, 300 }, { 100, 40, 513 },
    };
    for (size_t t = 0; t < TYPE_PAIRS; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            struct dense_case dc = base_case(type_pairs[t][0], type_pairs[t][1], shapes[s][0],
                                             shapes[s][1], shapes[s][2]);
            dc.ta = (BkGemmOp)bkt_rand_int(rng, 0, 1);
            dc.tb = (BkGemmOp)bkt_rand_int(rng, 0, 1);
            dc.la = tmat_random_layout(rng);
            dc.lb = tmat_random_layout(rng);
            dc.ld = tmat_random_layout(rng);
            dense_test(ctx, &dc, rng);
        }
}

/* K = 0: the product is 0, D = act(beta C + bias), or 0 without them. */
static void test_k0(BkContext ctx, struct bkt_rng *rng)
{
    for (size_t t = 0; t < TYPE_PAIRS; t += 2) {
        struct dense_case dc = base_case(type_pairs[t][0], type_pairs[t][1], 9, 21, 0);
        dc.has_c = true, dc.beta = -1.5, dc.has_bias = true, dc.act = BK_GEMM_ACTIVATION_RELU;
        dc.ld = TMAT_COL_PADDED;
        dense_test(ctx, &dc, rng);
        dc = base_case(type_pairs[t][0], type_pairs[t][1], 9, 21, 0);
        dc.alpha = 3;
        dense_test(ctx, &dc, rng);
    }
}

/* Batches: everything rank 3, or one operand rank 2 and shared. */
static void test_batches(BkContext ctx, struct bkt_rng *rng)
{
    static const BkDataType types[][2] = {
        { BK_DATA_TYPE_F32, BK_DATA_TYPE_F32 },
        { BK_DATA_TYPE_BF16, BK_DATA_TYPE_F32 },
        { BK_DATA_TYPE_F64, BK_DATA_TYPE_F64 },
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int shared = 0; shared < 4; shared++) {
            struct dense_case dc = base_case(types[t][0], types[t][1], 19, 27, 35);
            dc.batch = shared == 3 ? 1 : 3;
            dc.a_shared = shared == 0;
            dc.b_shared = shared == 1;
            dc.has_c = true, dc.beta = 0.75;
            dc.c_shared = shared == 2;
            dc.ta = (BkGemmOp)bkt_rand_int(rng, 0, 1);
            dc.tb = (BkGemmOp)bkt_rand_int(rng, 0, 1);
            dc.la = tmat_random_layout(rng);
            dc.lb = tmat_random_layout(rng);
            dc.lc = tmat_random_layout(rng);
            dc.ld = tmat_random_layout(rng);
            dense_test(ctx, &dc, rng);
        }
}

/* alpha, beta, bias and each activation, on outputs that cross 0. */
static void test_epilogue(BkContext ctx, struct bkt_rng *rng)
{
    static const BkGemmActivation acts[] = { BK_GEMM_ACTIVATION_NONE, BK_GEMM_ACTIVATION_RELU,
                                             BK_GEMM_ACTIVATION_GELU_TANH };
    for (size_t t = 0; t < TYPE_PAIRS; t++)
        for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
            struct dense_case dc = base_case(type_pairs[t][0], type_pairs[t][1], 23, 45, 33);
            dc.act = acts[a];
            dc.alpha = bkt_rand_int(rng, 0, 1) ? -0.7 : 2.5;
            dc.has_c = true;
            dc.beta = bkt_rand_int(rng, 0, 1) ? 1.0 : -0.3;
            dc.has_bias = true;
            dc.lc = tmat_random_layout(rng);
            dc.ld = tmat_random_layout(rng);
            dense_test(ctx, &dc, rng);
        }
}

/* C bound at D's address; beta = 0 with a NaN C (C must not be read). */
static void test_c_special(BkContext ctx, struct bkt_rng *rng)
{
    for (size_t t = 0; t < TYPE_PAIRS; t += 2) {
        struct dense_case dc = base_case(type_pairs[t][0], type_pairs[t][1], 31, 17, 26);
        dc.has_c = dc.in_place = true, dc.beta = 1;
        dc.batch = 2;
        dc.ld = TMAT_COL_PADDED;
        dense_test(ctx, &dc, rng);
        dc = base_case(type_pairs[t][0], type_pairs[t][1], 31, 17, 26);
        dc.has_c = dc.nan_c = true, dc.beta = 0;
        dc.has_bias = true;
        dc.lc = TMAT_COL;
        dense_test(ctx, &dc, rng);
    }
}

/* Integer inputs and a power-of-two alpha: the sums are exact in the
 * compute type, so D must be their rounding to nearest even. */
static void test_exact(BkContext ctx, struct bkt_rng *rng)
{
    for (size_t t = 0; t < TYPE_PAIRS; t++) {
        struct dense_case dc = base_case(type_pairs[t][0], type_pairs[t][1], 27, 38, 33);
        dc.integers = true;
        dc.alpha = 0.0625;
        dc.ta = BK_GEMM_OP_T;
        dense_test(ctx, &dc, rng);
    }
}

/* Two runs of one plan give the same bits (blocks, threads and k order
 * must not depend on timing). */
static void test_repeat(BkContext ctx, struct bkt_rng *rng)
{
    struct dense_case dc = base_case(BK_DATA_TYPE_F32, BK_DATA_TYPE_F32, 150, 290, 300);
    dc.repeat = true, dc.batch = 2, dc.has_c = true, dc.beta = 0.5, dc.has_bias = true;
    dc.act = BK_GEMM_ACTIVATION_GELU_TANH;
    dense_test(ctx, &dc, rng);
    dc = base_case(BK_DATA_TYPE_BF16, BK_DATA_TYPE_BF16, 97, 260, 270);
    dc.repeat = true, dc.tb = BK_GEMM_OP_T;
    dense_test(ctx, &dc, rng);
}

/* m, n or batch 0: the run succeeds and writes nothing. */
static void test_empty(BkContext ctx, struct bkt_rng *rng)
{
    static const int64_t shapes[][4] = { { 0, 5, 7, 0 }, { 6, 0, 7, 0 }, { 6, 5, 7, 0 } };
    for (size_t s = 0; s < 3; s++) {
        struct dense_case dc = base_case(BK_DATA_TYPE_F32, BK_DATA_TYPE_F32, shapes[s][0],
                                         shapes[s][1], shapes[s][2]);
        if (s == 2) {   /* batch 0: rank 3 with extent[0] = 0 */
            struct dense_data x;
            char label[320];
            dc.has_c = true, dc.beta = 1;
            describe(&dc, label, sizeof label);
            memset(&x, 0, sizeof x);
            tmat_init3(&x.a, dc.ab, 0, 6, 7, TMAT_ROW, rng);
            tmat_init3(&x.b, dc.ab, 0, 7, 5, TMAT_ROW, rng);
            tmat_init3(&x.c, dc.cd, 0, 6, 5, TMAT_ROW, rng);
            tmat_init3(&x.d, dc.cd, 0, 6, 5, TMAT_ROW, rng);
            tmat_init(&x.bias, dc.cd, 0, 1, 5, TMAT_ROW, rng);
            tmat_poison(&x.d);
            x.have_c_buffer = true;
            tmat_upload(ctx, &x.a), tmat_upload(ctx, &x.b), tmat_upload(ctx, &x.c);
            tmat_upload(ctx, &x.d), tmat_upload(ctx, &x.bias);
            long repeat_diffs = 0;
            bool ran = dense_run(ctx, &dc, &x, label, &repeat_diffs);
            /* D has no element: every byte must keep the poison. */
            tap_ok(ran && tmat_gap_errors(&x.d) == 0, "%s (batch 0) writes nothing", label);
            dense_data_free(ctx, &x);
            continue;
        }
        dc.has_c = true, dc.beta = 1;
        dense_test(ctx, &dc, rng);
    }
}

/* Not a check: how fast f32 512^3 runs here. Under valgrind or an
 * emulator a timing means nothing, and these runs alone would take most of
 * the test's time. */
static void report_speed(BkContext ctx, struct bkt_rng *rng)
{
    if (bkt_emulated()) {
        tap_diag("no timing under valgrind or an emulator");
        return;
    }
    const int64_t s = 512;
    struct dense_case dc = base_case(BK_DATA_TYPE_F32, BK_DATA_TYPE_F32, s, s, s);
    struct dense_data x;
    dense_data_make(ctx, &dc, &x, rng);
    BkGemmInfo info;
    dense_info(&dc, &x, &info);
    BkPlan plan = BK_NULL_HANDLE;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    const BkDeviceAddress bindings[5] = { x.a.dev.address, x.b.dev.address, 0, x.d.dev.address,
                                          0 };
    if (bkt_create_plan(ctx, &info, &plan) == BK_SUCCESS &&
        bkGetPlanProperties(plan, &props) == BK_SUCCESS &&
        bkt_run(ctx, plan, 5, bindings) == BK_SUCCESS) {
        double best = 1e30;
        for (int rep = 0; rep < 3; rep++) {
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if (bkt_run(ctx, plan, 5, bindings) != BK_SUCCESS)
                break;
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double sec = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            best = sec < best ? sec : best;
        }
        tap_diag("%s f32 512^3: %.1f GFLOP/s (kernel %s, workspace %llu bytes)",
                 bkt_device_name(bkt_device_type(ctx)), 2.0 * s * s * s / best * 1e-9,
                 props.kernelName, (unsigned long long)props.workspaceSize);
    }
    bkDestroyPlan(plan);
    dense_data_free(ctx, &x);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(201);
    test_layouts(ctx, &rng);
    test_shapes(ctx, &rng);
    test_k0(ctx, &rng);
    test_batches(ctx, &rng);
    test_epilogue(ctx, &rng);
    test_c_special(ctx, &rng);
    test_exact(ctx, &rng);
    test_repeat(ctx, &rng);
    test_empty(ctx, &rng);
    report_speed(ctx, &rng);
    bkDestroyContext(ctx);
    return tap_done();
}
