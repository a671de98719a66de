/* SPDX-License-Identifier: Apache-2.0 */
/* Dense GEMM on CUDA (cuBLASLt) against the host backend, on fresh random
 * inputs with NaN-poisoned outputs: every transpose and row/column-major
 * combination, padded leading dimensions, odd shapes (1, 7, 33, 65, 129,
 * 257), N = 1, M = 8, f32 with and without TF32, f16 and bf16 into half
 * and f32, f64, batches with shared operands, bias with RELU and GELU-tanh,
 * beta with C, C == D in place, operands one element past 16-byte
 * alignment (cuBLASLt's general algorithm instead of the 16-byte one),
 * K = 0, an empty problem and reusable command buffer replay.
 *
 * Each element must lie within a bound of the host's: the sum of k
 * products in F32 (F64) accumulates at most about sqrt(k) roundings of
 * the size of the terms, S = |alpha| sum |a||b| + |beta c| + |bias|; so
 * |cuda - host| <= (4 sqrt(k) + 8) eps S + 1 ulp of the output type, with
 * eps 2^-24 (2^-53 for f64; 2^-22 for f16/bf16 on tensor cores, whose
 * sums are not IEEE), plus 2^-9 S where the plan reports TF32 (both inputs
 * rounded to a 10-bit mantissa) and 2^-11 S with GELU-tanh (cuBLASLt's
 * epilogue may use an approximate tanh; the largest error seen relative to
 * the bound is printed), and 2^-11 S (f16) or 2^-8 S (bf16) for a half-type
 * D with a bias, which CUDA may round once before adding the bias. Bytes of the output that are no element, and the
 * guard bytes around every buffer, must keep what they held. The plan's
 * kernel name (cuBLASLt algorithms) is in each description. Skips without
 * a GPU; fails instead with BK_TEST_REQUIRE_GPU=1. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pair.h"

static BkContext gpu, host;
static struct bkt_rng rng;
static double worst_gelu;       /* largest |cuda - host| / bound with GELU */

struct gcase {
    BkDataType ab, cd;               /* A and B; C, D and bias */
    bool tf32;                       /* BK_GEMM_ALLOW_TF32_BIT */
    int64_t m, n, k, batch;          /* batch 0: every operand rank 2 */
    BkGemmOp ta, tb;
    enum tmat_layout la, lb, lc, ld;
    bool a_shared, b_shared, c_shared;
    bool has_c, has_bias, in_place;
    BkGemmActivation act;
    double alpha, beta;
    unsigned offset;                 /* elements past 256-byte alignment, every operand */
    bool replay;                     /* also a reusable buffer submitted 3 times: same bits */
    bool c_other_order;              /* C row-major with D column-major or back */
};

struct gdata {
    struct tmat a, b, c, d;          /* d: its state before the run */
    struct tmat bias;                /* [1, n]: its host image is the vector */
};

static void describe(const struct gcase *c, const char *kernel, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s%s->%s %lldx%lldx%lld%s%.0lld %c%c a:%s%s b:%s%s c:%s%s d:%s%s%s a%g b%g%s%s",
             bkt_type_name(c->ab), c->tf32 ? "(tf32)" : "", bkt_type_name(c->cd),
             (long long)c->m, (long long)c->n, (long long)c->k, c->batch ? " batch " : "",
             (long long)c->batch, c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', tmat_layout_name(c->la),
             c->a_shared ? "(shared)" : "", tmat_layout_name(c->lb),
             c->b_shared ? "(shared)" : "",
             !c->has_c ? "none" : c->in_place ? "=d" : tmat_layout_name(c->lc),
             c->c_shared ? "(shared)" : "", tmat_layout_name(c->ld),
             c->has_bias ? " bias" : "",
             c->act ? (c->act == BK_GEMM_ACTIVATION_RELU ? " relu" : " gelu") : "", c->alpha,
             c->beta, c->offset ? " +1 element (general algorithm)" : "",
             c->replay ? " replayed" : "");
    size_t used = strlen(buf);
    if (kernel && used + 4 < size)
        snprintf(buf + used, size - used, " [%s]", kernel);
}

static void data_make(const struct gcase *c, struct gdata *x)
{
    memset(x, 0, sizeof *x);
    const int64_t m = c->m, n = c->n, k = c->k;
    tmat_init(&x->a, c->ab, c->a_shared ? 0 : c->batch, c->ta ? k : m, c->ta ? m : k, c->la,
              &rng);
    tmat_init(&x->b, c->ab, c->b_shared ? 0 : c->batch, c->tb ? n : k, c->tb ? k : n, c->lb,
              &rng);
    tmat_fill_random(&x->a, &rng, -1, 1);
    tmat_fill_random(&x->b, &rng, -1, 1);
    tmat_init(&x->bias, c->cd, 0, 1, n, TMAT_ROW, &rng);
    tmat_fill_random(&x->bias, &rng, -1, 1);
    if (c->has_c) {
        tmat_init(&x->c, c->cd, c->c_shared ? 0 : c->batch, m, n, c->lc, &rng);
        tmat_poison(&x->c);
        tmat_fill_random(&x->c, &rng, -1, 1);
    }
    if (c->in_place) {
        tmat_copy(&x->d, &x->c);   /* C's layout and values, gaps poisoned */
    } else {
        tmat_init(&x->d, c->cd, c->batch, m, n, c->ld, &rng);
        tmat_poison(&x->d);
    }
}

static void data_free(struct gdata *x)
{
    tmat_free(BK_NULL_HANDLE, &x->a);
    tmat_free(BK_NULL_HANDLE, &x->b);
    if (x->c.host)
        tmat_free(BK_NULL_HANDLE, &x->c);
    tmat_free(BK_NULL_HANDLE, &x->d);
    tmat_free(BK_NULL_HANDLE, &x->bias);
}

static BkGemmInfo info_of(const struct gcase *c, const struct gdata *x)
{
    BkGemmInfo g = {
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO,
        .transA = c->ta, .transB = c->tb,
        .activation = c->act,
        .flags = c->tf32 ? BK_GEMM_ALLOW_TF32_BIT : 0,
        .alpha = c->alpha, .beta = c->has_c ? c->beta : 0,
    };
    tmat_desc(&x->a, &g.a);
    tmat_desc(&x->b, &g.b);
    tmat_desc(&x->d, &g.d);
    if (c->has_c)
        tmat_desc(&x->c, &g.c);
    if (c->has_bias)
        g.bias = (BkTensorDesc){ .dataType = c->cd, .rank = 1, .extent = { c->n } };
    return g;
}

/* Plans and runs the case on ctx with `submits` submits (a reusable
 * buffer when more than 1); d_out gets D's image. Returns the first
 * failure; *guards counts guard bytes of d that lost their poison. */
static BkResult run_on(BkContext ctx, const struct gcase *c, const struct gdata *x,
                       unsigned submits, void *d_out, long *guards, BkPlanProperties *props)
{
    const BkGemmInfo info = info_of(c, x);
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    *guards = 0;
    if (r != BK_SUCCESS)
        return r;
    *props = (BkPlanProperties){ .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    if ((r = bkGetPlanProperties(plan, props)) != BK_SUCCESS) {
        bkDestroyPlan(plan);
        return r;
    }
    const uint64_t eab = bkt_type_size(c->ab), ecd = bkt_type_size(c->cd);
    struct placed pa = place(ctx, x->a.host, x->a.bytes, c->offset * eab);
    struct placed pb = place(ctx, x->b.host, x->b.bytes, c->offset * eab);
    struct placed pd = place(ctx, x->d.host, x->d.bytes, c->offset * ecd);
    struct placed pc = { .addr = 0 }, pbias = { .addr = 0 };
    if (c->has_c && !c->in_place)
        pc = place(ctx, x->c.host, x->c.bytes, c->offset * ecd);
    if (c->has_bias)
        pbias = place(ctx, x->bias.host, x->bias.bytes, c->offset * ecd);
    const BkDeviceAddress bind[5] = {
        pa.addr, pb.addr, c->in_place ? pd.addr : pc.addr, pd.addr, pbias.addr,
    };
    r = bkt_run_on(ctx, 0, submits > 1 ? BK_COMMAND_BUFFER_USAGE_REUSABLE
                                       : BK_COMMAND_BUFFER_USAGE_ONE_TIME,
                   submits, plan, 5, bind);
    *guards = fetch(ctx, &pd, d_out);
    if (r != BK_SUCCESS)
        tap_diag("%s run: %s (%s)", bkt_device_name(bkt_device_type(ctx)), bkResultString(r),
                 bkGetLastErrorMessage());
    unplace(ctx, &pa), unplace(ctx, &pb), unplace(ctx, &pd);
    if (pc.buf.memory)
        unplace(ctx, &pc);
    if (pbias.buf.memory)
        unplace(ctx, &pbias);
    bkDestroyPlan(plan);
    return r;
}

/* S per element of D, [b][i][j]. */
static double *scales(const struct gcase *c, const struct gdata *x)
{
    const int64_t batches = c->batch ? c->batch : 1, m = c->m, n = c->n, k = c->k;
    double *s = calloc((size_t)(batches * m * n) + 1, sizeof *s);
    double *oa = malloc(((size_t)(m * k) + 1) * sizeof *oa);
    double *ob = malloc(((size_t)(k * n) + 1) * sizeof *ob);
    if (!s || !oa || !ob)
        tap_bail("out of memory");
    for (int64_t b = 0; b < batches; b++) {
        for (int64_t i = 0; i < m; i++)
            for (int64_t p = 0; p < k; p++)
                oa[i * k + p] = fabs(c->ta ? tmat_get(&x->a, b, p, i) : tmat_get(&x->a, b, i, p));
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++)
                ob[p * n + j] = fabs(c->tb ? tmat_get(&x->b, b, j, p) : tmat_get(&x->b, b, p, j));
        for (int64_t i = 0; i < m; i++) {
            double *row = s + (b * m + i) * n;
            for (int64_t p = 0; p < k; p++) {
                const double av = oa[i * k + p] * fabs(c->alpha);
                for (int64_t j = 0; j < n; j++)
                    row[j] += av * ob[p * n + j];
            }
            for (int64_t j = 0; j < n; j++) {
                if (c->has_c)
                    row[j] += fabs(c->beta) * fabs(tmat_get(&x->c, b, i, j));
                if (c->has_bias)
                    row[j] += fabs(tmat_get(&x->bias, 0, 0, j));
            }
        }
    }
    free(oa);
    free(ob);
    return s;
}

/* The plan's precision must be what bk_gemm.h promises: sums in F32 (F64),
 * TF32 only when allowed. */
static bool precision_ok(const struct gcase *c, const BkPrecisionGuarantee *p)
{
    const bool f64 = c->ab == BK_DATA_TYPE_F64;
    const BkDataType acc = f64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    bool compute = p->computeType == acc || (c->tf32 && p->computeType == BK_DATA_TYPE_TF32);
    if (!compute || p->accumulatorType != acc)
        tap_diag("precision: computeType %d, accumulatorType %d", (int)p->computeType,
                 (int)p->accumulatorType);
    return compute && p->accumulatorType == acc;
}

static struct bkt_tolerance tolerance(const struct gcase *c, const BkPrecisionGuarantee *p)
{
    const bool half = c->ab == BK_DATA_TYPE_F16 || c->ab == BK_DATA_TYPE_BF16;
    const double eps = c->ab == BK_DATA_TYPE_F64 ? 0x1p-53 : half ? 0x1p-22 : 0x1p-24;
    double abs = (4.0 * sqrt((double)c->k) + 8.0) * eps;
    if (p->computeType == BK_DATA_TYPE_TF32)
        abs += 0x1p-9;
    if (c->act == BK_GEMM_ACTIVATION_GELU_TANH)
        abs += 0x1p-11;
    /* A half-type D with a bias may be rounded once before the bias is
     * added on CUDA (bk-gemm(7)): one more rounding of D's type. */
    if (c->has_bias)
        abs += c->cd == BK_DATA_TYPE_BF16 ? 0x1p-8 : c->cd == BK_DATA_TYPE_F16 ? 0x1p-11 : 0;
    return (struct bkt_tolerance){ .rel = 0, .abs = abs, .ulps = 1 };
}

static void test_case(const struct gcase *c)
{
    struct gdata x;
    data_make(c, &x);
    const uint64_t dbytes = x.d.bytes;
    unsigned char *dg = malloc(dbytes), *dh = malloc(dbytes), *again = malloc(dbytes);
    if (!dg || !dh || !again)
        tap_bail("out of memory");
    BkPlanProperties pg, ph;
    long guards_g = 0, guards_h = 0, guards_again = 0;
    BkResult rg = run_on(gpu, c, &x, 1, dg, &guards_g, &pg);
    if (rg == BK_SUCCESS)
        kernel_seen(pg.kernelName);
    char label[320];
    describe(c, rg == BK_SUCCESS ? pg.kernelName : NULL, label, sizeof label);

    /* C in the other order than D runs too: libbk copies C into D first. */
    if (c->c_other_order && rg == BK_SUCCESS && c->beta != 0 && !c->in_place &&
        strncmp(pg.kernelName, "copy+", 5) != 0)
        tap_diag("%s: C in the other order ran without the copy step", label);
    BkResult rh = run_on(host, c, &x, 1, dh, &guards_h, &ph);
    BkResult ra = BK_SUCCESS;
    if (c->replay && rg == BK_SUCCESS)
        ra = run_on(gpu, c, &x, 3, again, &guards_again, &pg);
    bool ok = rg == BK_SUCCESS && rh == BK_SUCCESS && ra == BK_SUCCESS;
    if (!ok) {
        tap_ok(false, "cuda = host: %s (cuda %s, host %s%s%s)", label, bkResultString(rg),
               bkResultString(rh), c->replay ? ", replay " : "",
               c->replay ? bkResultString(ra) : "");
        goto done;
    }
    double *scale = scales(c, &x);
    double worst = 0;
    const struct bkt_tolerance tol = tolerance(c, &pg.precision);
    long bad = close_differences(&x.d, dg, dh, scale, tol, label, &worst);
    if (c->act == BK_GEMM_ACTIVATION_GELU_TANH && worst > worst_gelu)
        worst_gelu = worst;
    long gaps = gap_changes(&x.d, dg, x.d.host) + gap_changes(&x.d, dh, x.d.host);
    long replay_diff = c->replay ? bit_differences(&x.d, again, dg, "replay") +
                                       gap_changes(&x.d, again, x.d.host) : 0;
    bool prec = precision_ok(c, &pg.precision);
    if (gaps || guards_g || guards_h || guards_again)
        tap_diag("%s: %ld gap bytes changed, %ld/%ld/%ld guard bytes lost the poison", label,
                 gaps, guards_g, guards_h, guards_again);
    tap_ok(bad == 0 && gaps == 0 && guards_g == 0 && guards_h == 0 && guards_again == 0 &&
           replay_diff == 0 && prec,
           "cuda = host: %s%s", label, c->replay ? ", 3 replays give the one-time bits" : "");
    free(scale);
done:
    free(dg);
    free(dh);
    free(again);
    data_free(&x);
}

/* ---- The cases -------------------------------------------------------------- */

#define MAX_CASES 200
static struct gcase cases[MAX_CASES];
static unsigned ncases;

static struct gcase *add(struct gcase c)
{
    if (ncases == MAX_CASES)
        tap_bail("too many cases");
    cases[ncases] = c;
    return &cases[ncases++];
}

static const BkGemmActivation acts[] = { BK_GEMM_ACTIVATION_NONE, BK_GEMM_ACTIVATION_RELU,
                                         BK_GEMM_ACTIVATION_GELU_TANH };

static void build_cases(void)
{
    const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16, bf16 = BK_DATA_TYPE_BF16,
                     f64 = BK_DATA_TYPE_F64;
    const enum tmat_layout R = TMAT_ROW, C = TMAT_COL, RP = TMAT_ROW_PADDED,
                           CP = TMAT_COL_PADDED;
    unsigned v = 0;

    /* Every transpose and row/column-major combination of A, B and D, f32,
     * with C (in D's order), bias every other case, the activations in turn. */
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++)
            for (int la = 0; la < 2; la++)
                for (int lb = 0; lb < 2; lb++)
                    for (int ld = 0; ld < 2; ld++, v++)
                        add((struct gcase){
                            .ab = f32, .cd = f32, .m = 65, .n = 33, .k = 47,
                            .ta = (BkGemmOp)ta, .tb = (BkGemmOp)tb,
                            .la = la ? C : R, .lb = lb ? C : R, .ld = ld ? C : R,
                            .lc = ld ? (v % 4 < 2 ? C : CP) : (v % 4 < 2 ? R : RP),
                            .has_c = v % 3 != 2, .has_bias = v % 2 == 0, .act = acts[v % 3],
                            .alpha = 1.5, .beta = -0.5,
                        });

    /* Every type combination, transposes and D's order. */
    const struct { BkDataType ab, cd; bool tf32; int64_t m, n, k; } types[] = {
        { f32, f32, true, 129, 65, 257 },  { f16, f16, false, 129, 65, 257 },
        { f16, f32, false, 129, 65, 257 }, { bf16, bf16, false, 129, 65, 257 },
        { bf16, f32, false, 129, 65, 257 }, { f64, f64, false, 65, 33, 129 },
    };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int ld = 0; ld < 2; ld++, v++)
                    add((struct gcase){
                        .ab = types[t].ab, .cd = types[t].cd, .tf32 = types[t].tf32,
                        .m = types[t].m, .n = types[t].n, .k = types[t].k,
                        .ta = (BkGemmOp)ta, .tb = (BkGemmOp)tb,
                        .la = (ta + ld) % 2 ? C : R, .lb = tb ? R : C, .ld = ld ? C : R,
                        .lc = ld ? C : R, .has_c = true, .has_bias = v % 2 == 0,
                        .act = acts[v % 3], .alpha = 0.75, .beta = 1.0,
                    });
    /* f32 without TF32 on the same shape: must keep f32 accuracy. */
    add((struct gcase){ .ab = f32, .cd = f32, .m = 129, .n = 65, .k = 257, .tb = BK_GEMM_OP_T,
                        .la = R, .lb = R, .ld = R, .lc = R, .has_c = true, .beta = 0.5,
                        .alpha = 1, .has_bias = true, .act = BK_GEMM_ACTIVATION_RELU });

    /* Odd and tile-filling shapes: M = 1, N = 1, M = 8, 7, 33, 65, 129, 257, 256, 512. */
    const int64_t shapes[][3] = {
        { 1, 1, 1 }, { 1, 7, 33 }, { 129, 1, 257 }, { 8, 257, 129 }, { 7, 13, 65 },
        { 257, 129, 65 }, { 256, 256, 256 }, { 512, 384, 256 }, { 33, 1, 8 },
    };
    const struct { BkDataType ab, cd; } shape_types[] = { { f32, f32 }, { f16, f32 },
                                                          { bf16, bf16 } };
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++, v++)
            add((struct gcase){
                .ab = shape_types[t].ab, .cd = shape_types[t].cd,
                .m = shapes[s][0], .n = shapes[s][1], .k = shapes[s][2],
                .tb = BK_GEMM_OP_T, .la = R, .lb = R, .ld = v % 2 ? C : R, .lc = v % 2 ? C : R,
                .has_c = s % 2 == 0, .has_bias = true, .act = acts[v % 3],
                .alpha = 1, .beta = -1,
            });

    /* Padded leading dimensions everywhere. */
    add((struct gcase){ .ab = f16, .cd = f16, .m = 96, .n = 80, .k = 72, .la = RP, .lb = CP,
                        .lc = RP, .ld = RP, .has_c = true, .beta = 0.5, .alpha = 2,
                        .has_bias = true, .act = BK_GEMM_ACTIVATION_GELU_TANH });
    add((struct gcase){ .ab = f32, .cd = f32, .m = 77, .n = 51, .k = 99, .ta = BK_GEMM_OP_T,
                        .la = CP, .lb = RP, .lc = CP, .ld = CP, .has_c = true, .beta = 1,
                        .alpha = 1 });
    add((struct gcase){ .ab = bf16, .cd = f32, .m = 64, .n = 64, .k = 64, .tb = BK_GEMM_OP_T,
                        .la = RP, .lb = RP, .lc = RP, .ld = RP, .has_bias = true,
                        .act = BK_GEMM_ACTIVATION_RELU, .alpha = 1 });
    add((struct gcase){ .ab = f64, .cd = f64, .m = 33, .n = 65, .k = 17, .la = CP, .lb = CP,
                        .lc = CP, .ld = CP, .has_c = true, .beta = -0.25, .alpha = 3 });

    /* Batches, with a shared (rank-2) operand. */
    add((struct gcase){ .ab = f32, .cd = f32, .m = 33, .n = 17, .k = 65, .batch = 3,
                        .a_shared = true, .la = R, .lb = C, .lc = R, .ld = R, .has_c = true,
                        .beta = 1, .alpha = 1, .has_bias = true });
    add((struct gcase){ .ab = f16, .cd = f16, .m = 128, .n = 64, .k = 96, .batch = 4,
                        .b_shared = true, .tb = BK_GEMM_OP_T, .la = R, .lb = R, .ld = C,
                        .alpha = 1, .act = BK_GEMM_ACTIVATION_RELU });
    add((struct gcase){ .ab = bf16, .cd = f32, .m = 65, .n = 33, .k = 40, .batch = 2,
                        .c_shared = true, .la = C, .lb = R, .lc = R, .ld = R, .has_c = true,
                        .beta = 0.5, .alpha = -1, .has_bias = true,
                        .act = BK_GEMM_ACTIVATION_GELU_TANH });
    add((struct gcase){ .ab = f64, .cd = f64, .m = 17, .n = 9, .k = 33, .batch = 5,
                        .ta = BK_GEMM_OP_T, .tb = BK_GEMM_OP_T, .la = RP, .lb = CP, .lc = C,
                        .ld = C, .has_c = true, .beta = 2, .alpha = 0.5 });
    add((struct gcase){ .ab = f16, .cd = f32, .m = 7, .n = 129, .k = 33, .batch = 3,
                        .a_shared = true, .b_shared = true, .la = R, .lb = R, .ld = R,
                        .alpha = 1, .has_bias = true });

    /* C == D in place. */
    add((struct gcase){ .ab = f32, .cd = f32, .m = 65, .n = 33, .k = 47, .la = R, .lb = R,
                        .lc = RP, .ld = RP, .has_c = true, .in_place = true, .beta = 1,
                        .alpha = 1, .has_bias = true, .act = BK_GEMM_ACTIVATION_RELU });
    add((struct gcase){ .ab = f16, .cd = f16, .m = 128, .n = 96, .k = 64, .ta = BK_GEMM_OP_T,
                        .la = R, .lb = C, .lc = C, .ld = C, .has_c = true, .in_place = true,
                        .beta = -2, .alpha = 1 });
    add((struct gcase){ .ab = bf16, .cd = f32, .m = 33, .n = 65, .k = 31, .batch = 3,
                        .la = R, .lb = R, .lc = R, .ld = R, .has_c = true, .in_place = true,
                        .beta = 0.5, .alpha = 1, .act = BK_GEMM_ACTIVATION_GELU_TANH });

    /* One element past 16-byte alignment: the general algorithm runs. */
    add((struct gcase){ .ab = f32, .cd = f32, .m = 64, .n = 32, .k = 48, .la = R, .lb = R,
                        .lc = R, .ld = R, .has_c = true, .beta = 1, .alpha = 1, .offset = 1 });
    add((struct gcase){ .ab = f16, .cd = f16, .m = 128, .n = 128, .k = 128, .tb = BK_GEMM_OP_T,
                        .la = R, .lb = R, .lc = C, .ld = C, .has_c = true, .beta = 0.5,
                        .alpha = 1, .has_bias = true, .act = BK_GEMM_ACTIVATION_RELU,
                        .offset = 1 });
    add((struct gcase){ .ab = bf16, .cd = f32, .m = 256, .n = 64, .k = 64, .la = C, .lb = C,
                        .ld = R, .alpha = 1, .has_bias = true, .offset = 1 });
    add((struct gcase){ .ab = f64, .cd = f64, .m = 64, .n = 64, .k = 32, .la = R, .lb = R,
                        .lc = R, .ld = R, .has_c = true, .beta = 1, .alpha = 1, .offset = 1 });
    add((struct gcase){ .ab = f16, .cd = f32, .m = 128, .n = 128, .k = 128, .tb = BK_GEMM_OP_T,
                        .la = R, .lb = R, .ld = R, .alpha = 1, .offset = 0 });
    add((struct gcase){ .ab = f16, .cd = f32, .m = 128, .n = 128, .k = 128, .tb = BK_GEMM_OP_T,
                        .la = R, .lb = R, .ld = R, .alpha = 1, .offset = 1 });

    /* Reusable command buffers replayed. */
    add((struct gcase){ .ab = f16, .cd = f16, .m = 256, .n = 128, .k = 64, .la = R, .lb = C,
                        .lc = R, .ld = R, .has_c = true, .beta = 1, .alpha = 1,
                        .has_bias = true, .act = BK_GEMM_ACTIVATION_GELU_TANH, .replay = true });
    add((struct gcase){ .ab = f32, .cd = f32, .tf32 = true, .m = 100, .n = 60, .k = 80,
                        .la = R, .lb = R, .ld = C, .alpha = 1, .replay = true, .offset = 1 });

    /* C stored in the other order than D. */
    add((struct gcase){ .ab = f32, .cd = f32, .m = 33, .n = 17, .k = 9, .la = R, .lb = R,
                        .lc = C, .ld = R, .has_c = true, .beta = 1, .alpha = 1,
                        .c_other_order = true });

    /* Layouts cuBLASLt cannot take alone: C copied into D first, bias and
     * activation after cuBLASLt (column-major D), and F64 GELU in F64. */
    add((struct gcase){ .ab = f16, .cd = f16, .m = 65, .n = 33, .k = 40, .la = R, .lb = C,
                        .lc = R, .ld = C, .has_c = true, .beta = 0.5, .alpha = 1,
                        .has_bias = true, .act = BK_GEMM_ACTIVATION_RELU,
                        .c_other_order = true, .replay = true });
    add((struct gcase){ .ab = bf16, .cd = f32, .m = 48, .n = 80, .k = 64, .batch = 2,
                        .la = C, .lb = R, .lc = C, .ld = R, .has_c = true, .beta = -1,
                        .alpha = 1, .has_bias = true, .act = BK_GEMM_ACTIVATION_GELU_TANH,
                        .c_other_order = true });
    add((struct gcase){ .ab = f64, .cd = f64, .m = 37, .n = 29, .k = 41, .la = R, .lb = R,
                        .lc = R, .ld = R, .has_c = true, .beta = 1, .alpha = -0.75,
                        .has_bias = true, .act = BK_GEMM_ACTIVATION_GELU_TANH });

    /* Empty: M = 0; K = 0 (D = act(beta C + bias)). */
    add((struct gcase){ .ab = f32, .cd = f32, .m = 0, .n = 17, .k = 9, .la = R, .lb = R,
                        .ld = R, .alpha = 1 });
    add((struct gcase){ .ab = f32, .cd = f32, .m = 33, .n = 17, .k = 0, .la = R, .lb = R,
                        .lc = R, .ld = R, .has_c = true, .beta = 0.5, .alpha = 1,
                        .has_bias = true, .act = BK_GEMM_ACTIVATION_GELU_TANH });
    add((struct gcase){ .ab = f16, .cd = f16, .m = 16, .n = 8, .k = 0, .la = C, .lb = C,
                        .lc = C, .ld = C, .has_c = true, .beta = -1, .alpha = 1,
                        .has_bias = true, .act = BK_GEMM_ACTIVATION_RELU });
}

static unsigned callback_calls;
static void count_messages(BkResult result, const char *message, void *user)
{
    (void)result, (void)message, (void)user;
    callback_calls++;
}

/* A plan that takes the bias kernel because cuBLASLt has no algorithm for
 * its first try succeeds without an error message reaching the callback. */
static void test_quiet_fallback(void)
{
    BkGemmInfo g = {
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO, .activation = BK_GEMM_ACTIVATION_RELU,
        .alpha = 1,
        .a = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 64, 32 } },
        .b = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 32, 48 } },
        .d = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 64, 48 }, .stride = { 1, 64 } },
        .bias = { .dataType = BK_DATA_TYPE_F32, .rank = 1, .extent = { 48 } },
    };
    BkPlan plan = BK_NULL_HANDLE;
    callback_calls = 0;
    bkSetMessageCallback(count_messages, NULL);
    BkResult r = bkt_create_plan(gpu, &g, &plan);
    bkSetMessageCallback(NULL, NULL);
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    if (r == BK_SUCCESS)
        bkGetPlanProperties(plan, &props);
    tap_ok(r == BK_SUCCESS && callback_calls == 0,
           "column-major D with a bias: plan %s (%s), %u messages sent to the callback",
           bkResultString(r), props.kernelName, callback_calls);
    bkDestroyPlan(plan);
}

int main(void)
{
    gpu = bkt_open_cuda();
    host = bkt_open_host();
    rng = bkt_rng_new(303);
    build_cases();
    for (unsigned i = 0; i < ncases; i++)
        test_case(&cases[i]);
    test_quiet_fallback();
    tap_diag("GELU-tanh: the largest |cuda - host| was %.3g of its bound", worst_gelu);
    kernels_report("dense GEMM on CUDA");
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    return tap_done();
}
