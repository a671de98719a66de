/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention on the host backend against the naive long
 * double model of t/lib/attention_ref.c: forward and backward on random data
 * and patterns for every type, both pattern forms, causal masks with
 * Lq < Lk and Lq > Lk, lengths that are not multiples of the blocks,
 * grouped-query heads, strided layouts, shared patterns, every block size
 * class and head sizes up to 256; rows that see no key (y = 0, lse =
 * -inf, zero gradients) and empty problems; broken lists (NaN exactly in
 * the documented outputs); the backward against central finite
 * differences of sum(y * w); MASK and LIST (and a full pattern and DENSE)
 * bit for bit the same, and two runs bit for bit the same. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_ref.h"

static BkContext ctx;

#define f16 BK_DATA_TYPE_F16
#define bf16 BK_DATA_TYPE_BF16
#define f32 BK_DATA_TYPE_F32
#define f64 BK_DATA_TYPE_F64
#define DENSE BK_ATTENTION_PATTERN_DENSE
#define MASK BK_ATTENTION_PATTERN_MASK
#define LIST BK_ATTENTION_PATTERN_LIST

/* ---- Running the plans ----------------------------------------------------------- */

static BkResult run_info(const void *info, uint32_t count, const BkDeviceAddress *bindings,
                         const char *label)
{
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, info, &plan);
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, count, bindings);
    if (r != BK_SUCCESS)
        tap_diag("%s: %s (%s)", label, bkResultString(r), bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    return r;
}

/* The forward on pr's host inputs; y and lse downloaded into pr. */
static bool run_forward(struct attn_problem *pr, const char *label)
{
    attn_poison(&pr->y);
    attn_poison(&pr->lse);
    attn_upload(ctx, pr);
    const BkAttentionInfo info = attn_forward_info(pr);
    BkDeviceAddress bindings[8];
    attn_forward_bindings(pr, bindings);
    if (run_info(&info, 8, bindings, label) != BK_SUCCESS)
        return false;
    attn_download(ctx, &pr->y);
    attn_download(ctx, &pr->lse);
    return true;
}

/* The backward from pr's host y and lse; gradients downloaded. */
static bool run_backward(struct attn_problem *pr, const char *label)
{
    attn_poison(&pr->dq);
    attn_poison(&pr->dk);
    attn_poison(&pr->dv);
    attn_upload(ctx, pr);
    const BkAttentionBackwardInfo info = attn_backward_info(pr);
    BkDeviceAddress bindings[12];
    attn_backward_bindings(pr, bindings);
    if (run_info(&info, 12, bindings, label) != BK_SUCCESS)
        return false;
    attn_download(ctx, &pr->dq);
    attn_download(ctx, &pr->dk);
    attn_download(ctx, &pr->dv);
    return true;
}

/* ---- Checks against the model ------------------------------------------------------ */

static bool check_forward(struct attn_problem *pr, const char *label)
{
    char what[256];
    long double *y = attn_ref_alloc(&pr->y), *lse = attn_ref_alloc(&pr->lse);
    attn_ref_forward(pr, y, lse);
    const double tol = attn_tolerance(pr->c.type);
    double ey = 0, el = 0;
    snprintf(what, sizeof what, "%s: y", label);
    long bad = attn_check(&pr->y, y, tol, what, &ey);
    if (!pr->c.no_lse) {
        snprintf(what, sizeof what, "%s: lse", label);
        bad += attn_check(&pr->lse, lse, attn_tolerance(pr->lse.type), what, &el);
    } else {
        long lost = 0;
        for (uint64_t i = 0; i < pr->lse.bytes; i += 4)
            lost += memcmp((char *)pr->lse.host + i, &(uint32_t){ BKT_POISON }, 4) != 0;
        if (lost)
            tap_diag("%s: %ld words of the unbound lse changed", label, lost);
        bad += lost;
    }
    free(y);
    free(lse);
    return tap_ok(bad == 0, "forward %s (max error %.2g y, %.2g lse)", label, ey, el);
}

static bool check_backward(struct attn_problem *pr, const char *label)
{
    char what[256];
    long double *dq = attn_ref_alloc(&pr->dq), *dk = attn_ref_alloc(&pr->dk),
                *dv = attn_ref_alloc(&pr->dv);
    attn_ref_backward(pr, dq, dk, dv);
    const double tol = attn_tolerance(pr->c.type);
    double e[3] = { 0, 0, 0 };
    snprintf(what, sizeof what, "%s: dq", label);
    long bad = attn_check(&pr->dq, dq, tol, what, &e[0]);
    snprintf(what, sizeof what, "%s: dk", label);
    bad += attn_check(&pr->dk, dk, tol, what, &e[1]);
    snprintf(what, sizeof what, "%s: dv", label);
    bad += attn_check(&pr->dv, dv, tol, what, &e[2]);
    free(dq);
    free(dk);
    free(dv);
    return tap_ok(bad == 0, "backward %s (max error %.2g dq, %.2g dk, %.2g dv)", label, e[0],
                  e[1], e[2]);
}

/* Forward, then backward from the forward's outputs (from the model's,
 * rounded, when the forward had no lse). */
static void forward_backward(const struct attn_case *c, struct bkt_rng *rng)
{
    char label[160];
    attn_case_name(c, label, sizeof label);
    struct attn_problem pr;
    attn_problem_init(&pr, c, rng);
    const bool ran = run_forward(&pr, label);
    if (tap_ok(ran, "forward %s runs", label))
        check_forward(&pr, label);
    if (c->no_lse || !ran)
        attn_set_forward_outputs(&pr);
    if (tap_ok(run_backward(&pr, label), "backward %s runs", label))
        check_backward(&pr, label);
    else
        tap_skip(1, "backward did not run");
    attn_problem_free(ctx, &pr);
}

/* ---- Random problems ------------------------------------------------------------------ */

static const struct attn_case cases[] = {
    /* type, B, H, Hkv, Lq, Lk, D, Dv, form, blockQ, blockK, causal, density,
     * shared batch, shared heads, layout, no lse, scale (0: 1/sqrt(D)), range */
    { f64, 1, 2, 2, 37, 53, 16, 8, DENSE, 0, 0, false, 0, false, false,
      ATTN_LAYOUT_CONTIGUOUS, false, 0, 0 },
    { f32, 2, 2, 1, 100, 100, 32, 32, MASK, 16, 16, true, 0.5, false, false, ATTN_LAYOUT_BLHD,
      false, 0, 0 },
    /* A decode-like step: few queries, the last sees every key. */
    { f16, 1, 4, 2, 40, 130, 32, 16, LIST, 16, 32, true, 0.6, false, false, ATTN_LAYOUT_PADDED,
      false, 0, 2 },
    /* More queries than keys: the first Lq - Lk rows see nothing. */
    { bf16, 1, 4, 1, 150, 90, 24, 40, MASK, 64, 64, true, 0.7, false, false,
      ATTN_LAYOUT_TRANSPOSED, false, 0, 0 },
    { f32, 2, 2, 2, 128, 200, 64, 32, LIST, 128, 128, false, 0.6, true, true,
      ATTN_LAYOUT_CONTIGUOUS, false, 0, 0 },
    { f64, 2, 3, 3, 45, 61, 5, 7, MASK, 8, 8, true, 0.5, false, true, ATTN_LAYOUT_PADDED,
      false, 0.3, 0 },
    { f16, 1, 2, 1, 48, 80, 256, 256, LIST, 16, 64, false, 0.5, true, false,
      ATTN_LAYOUT_BLHD, false, 0, 0 },
    { bf16, 1, 2, 2, 64, 64, 128, 64, DENSE, 0, 0, true, 0, false, false,
      ATTN_LAYOUT_CONTIGUOUS, true, 0, 0 },
    { f32, 1, 2, 1, 33, 250, 16, 16, MASK, 16, 128, false, 0.3, false, true,
      ATTN_LAYOUT_TRANSPOSED, false, 0, 0 },
    /* One element per block. */
    { f64, 1, 2, 1, 12, 15, 6, 6, LIST, 1, 1, true, 0.5, false, false, ATTN_LAYOUT_PADDED,
      false, 0, 0 },
    /* Every row empty, then every block active. */
    { f32, 1, 2, 2, 40, 40, 16, 16, LIST, 16, 16, false, 0.0, false, false,
      ATTN_LAYOUT_CONTIGUOUS, false, 0, 0 },
    { f16, 2, 2, 2, 70, 50, 16, 16, MASK, 32, 16, false, 1.0, false, false, ATTN_LAYOUT_BLHD,
      false, 0, 0 },
    /* A long one, f32, small heads. */
    { f32, 1, 1, 1, 64, 600, 8, 8, LIST, 16, 64, true, 0.5, false, false,
      ATTN_LAYOUT_CONTIGUOUS, true, 0, 0 },
    { bf16, 2, 4, 2, 60, 60, 16, 16, LIST, 3, 3, true, 0.4, true, false, ATTN_LAYOUT_PADDED,
      false, 0, 0 },
};
#define CASES (sizeof cases / sizeof cases[0])

static void test_random_cases(struct bkt_rng *rng)
{
    for (size_t i = 0; i < CASES; i++)
        forward_backward(&cases[i], rng);
}

/* Empty problems run and write what they must: with Lk = 0 every row sees
 * nothing (y = 0, lse = -inf, dq = 0); with Lq = 0 or H = 0 every key's
 * dk and dv are 0. */
static void test_empty(struct bkt_rng *rng)
{
    static const struct {
        int64_t b, h, hkv, lq, lk;
        BkAttentionPatternForm form;
        bool causal;
    } shapes[] = {
        { 0, 2, 1, 8, 8, MASK, false }, { 1, 0, 1, 8, 8, LIST, false },
        { 2, 2, 1, 0, 8, MASK, true },  { 2, 2, 2, 0, 8, LIST, false },
        { 2, 2, 1, 9, 0, DENSE, true }, { 1, 2, 1, 9, 0, MASK, false },
        { 1, 2, 2, 9, 0, LIST, true },
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        const struct attn_case c = {
            .type = f32, .batch = shapes[i].b, .heads = shapes[i].h, .kv_heads = shapes[i].hkv,
            .lq = shapes[i].lq, .lk = shapes[i].lk, .d = 4, .dv = 3, .form = shapes[i].form,
            .block_q = 4, .block_k = 4, .causal = shapes[i].causal, .density = 0.5,
        };
        forward_backward(&c, rng);
    }
}

/* ---- Broken lists ------------------------------------------------------------------------ */

static void test_bad_lists(struct bkt_rng *rng)
{
    static const char *const names[] = { "count over capacity", "negative count",
                                         "index nbk", "negative index" };
    for (int how = 0; how < 4; how++)
        for (int shared = 0; shared < 2; shared++) {
            const struct attn_case c = {
                .type = how % 2 ? f16 : f64, .batch = 2, .heads = 4, .kv_heads = 2, .lq = 40,
                .lk = 50, .d = 8, .dv = 8, .form = LIST, .block_q = 16, .block_k = 16,
                .causal = how == 1, .density = 0.6, .shared_batch = shared,
                .layout = shared ? ATTN_LAYOUT_PADDED : ATTN_LAYOUT_CONTIGUOUS,
            };
            struct attn_problem pr;
            attn_problem_init(&pr, &c, rng);
            /* Head 1 (of kv head 0) broken; kv head 0's other query head
             * and kv head 1 stay normal. */
            attn_break_list(&pr, pr.bp - 1, 1, bkt_rand_int(rng, 0, pr.nbq - 1),
                            (enum attn_list_error)how);
            char label[200], name[160];
            snprintf(label, sizeof label, "broken list (%s) %s", names[how],
                     attn_case_name(&c, name, sizeof name));
            if (tap_ok(run_forward(&pr, label), "forward %s runs", label))
                check_forward(&pr, label);
            else
                tap_skip(1, "forward did not run");
            if (tap_ok(run_backward(&pr, label), "backward %s runs", label))
                check_backward(&pr, label);
            else
                tap_skip(1, "backward did not run");
            attn_problem_free(ctx, &pr);
        }
}

/* ---- Finite differences --------------------------------------------------------------- */

/* sum(y * dy) after a forward through plan. */
static double loss(struct attn_problem *pr, BkPlan plan, const BkDeviceAddress *bindings)
{
    if (bkt_run(ctx, plan, 8, bindings) != BK_SUCCESS)
        tap_bail("forward: %s", bkGetLastErrorMessage());
    attn_download(ctx, &pr->y);
    double sum = 0;
    for (int64_t b = 0; b < pr->c.batch; b++)
        for (int64_t h = 0; h < pr->c.heads; h++)
            for (int64_t i = 0; i < pr->c.lq; i++)
                for (int64_t e = 0; e < pr->c.dv; e++)
                    sum += attn_get(&pr->y, b, h, i, e) * attn_get(&pr->dy, b, h, i, e);
    return sum;
}

/* Each element of input t: the central difference of the loss against
 * grad's element. */
static long fd_check(struct attn_problem *pr, struct attn_tensor *t, const struct attn_tensor *grad,
                     BkPlan plan, const BkDeviceAddress *bindings, const char *what)
{
    const double step = 1e-5;
    double *fd = calloc((size_t)t->count, sizeof *fd), top = 0;
    if (!fd)
        tap_bail("out of memory");
    int64_t n = 0;
    for (int64_t a = 0; a < t->extent[0]; a++)
        for (int64_t b = 0; b < t->extent[1]; b++)
            for (int64_t i = 0; i < t->extent[2]; i++)
                for (int64_t e = 0; e < t->extent[3]; e++, n++) {
                    const double x = attn_get(t, a, b, i, e);
                    attn_set(t, a, b, i, e, x + step);
                    attn_upload_tensor(ctx, t);
                    const double up = loss(pr, plan, bindings);
                    attn_set(t, a, b, i, e, x - step);
                    attn_upload_tensor(ctx, t);
                    const double down = loss(pr, plan, bindings);
                    attn_set(t, a, b, i, e, x);
                    attn_upload_tensor(ctx, t);
                    fd[n] = (up - down) / (2 * step);
                    top = fabs(fd[n]) > top ? fabs(fd[n]) : top;
                }
    long bad = 0;
    n = 0;
    for (int64_t a = 0; a < t->extent[0]; a++)
        for (int64_t b = 0; b < t->extent[1]; b++)
            for (int64_t i = 0; i < t->extent[2]; i++)
                for (int64_t e = 0; e < t->extent[3]; e++, n++) {
                    const double g = attn_get(grad, a, b, i, e);
                    if (!(fabs(g - fd[n]) <= 1e-7 * top + 1e-12) && bad++ < 4)
                        tap_diag("%s [%lld, %lld, %lld, %lld] = %.12g, finite difference %.12g",
                                 what, (long long)a, (long long)b, (long long)i, (long long)e,
                                 g, fd[n]);
                }
    free(fd);
    return bad;
}

static void test_finite_differences(struct bkt_rng *rng)
{
    const struct attn_case fd_cases[] = {
        { .type = f64, .batch = 1, .heads = 2, .kv_heads = 1, .lq = 6, .lk = 9, .d = 4, .dv = 3,
          .form = MASK, .block_q = 3, .block_k = 3, .causal = true, .density = 0.7,
          .range = 2 },
        { .type = f64, .batch = 2, .heads = 2, .kv_heads = 2, .lq = 7, .lk = 5, .d = 3, .dv = 2,
          .form = DENSE, .causal = true, .layout = ATTN_LAYOUT_BLHD, .range = 2 },
        { .type = f64, .batch = 1, .heads = 3, .kv_heads = 1, .lq = 5, .lk = 8, .d = 2, .dv = 4,
          .form = LIST, .block_q = 2, .block_k = 2, .density = 0.6,
          .layout = ATTN_LAYOUT_PADDED, .range = 2, .scale = 0.7 },
    };
    for (size_t i = 0; i < sizeof fd_cases / sizeof fd_cases[0]; i++) {
        char label[160];
        attn_case_name(&fd_cases[i], label, sizeof label);
        struct attn_problem pr;
        attn_problem_init(&pr, &fd_cases[i], rng);
        if (!run_forward(&pr, label) || !run_backward(&pr, label)) {
            tap_ok(false, "finite differences %s: the plans run", label);
            attn_problem_free(ctx, &pr);
            continue;
        }
        const BkAttentionInfo info = attn_forward_info(&pr);
        BkDeviceAddress bindings[8];
        attn_forward_bindings(&pr, bindings);
        BkPlan plan = BK_NULL_HANDLE;
        if (bkt_create_plan(ctx, &info, &plan) != BK_SUCCESS)
            tap_bail("forward plan: %s", bkGetLastErrorMessage());
        long bad = fd_check(&pr, &pr.q, &pr.dq, plan, bindings, "dq");
        bad += fd_check(&pr, &pr.k, &pr.dk, plan, bindings, "dk");
        bad += fd_check(&pr, &pr.v, &pr.dv, plan, bindings, "dv");
        tap_ok(bad == 0, "finite differences of sum(y * dy) %s: dq, dk and dv agree", label);
        bkDestroyPlan(plan);
        attn_problem_free(ctx, &pr);
    }
}

/* ---- Bit-for-bit ------------------------------------------------------------------------- */

struct outputs {
    struct attn_tensor t[5];
};

static void keep_outputs(const struct attn_problem *pr, struct outputs *o)
{
    const struct attn_tensor *src[5] = { &pr->y, &pr->lse, &pr->dq, &pr->dk, &pr->dv };
    for (int i = 0; i < 5; i++) {
        o->t[i] = *src[i];
        o->t[i].host = malloc((size_t)src[i]->bytes + 1);
        if (!o->t[i].host)
            tap_bail("out of memory");
        memcpy(o->t[i].host, src[i]->host, (size_t)src[i]->bytes);
    }
}

static bool same_outputs(const struct attn_problem *pr, struct outputs *o)
{
    const struct attn_tensor *now[5] = { &pr->y, &pr->lse, &pr->dq, &pr->dk, &pr->dv };
    bool same = true;
    for (int i = 0; i < 5; i++) {
        same &= attn_identical(&o->t[i], now[i]);
        free(o->t[i].host);
    }
    return same;
}

static bool forward_backward_runs(struct attn_problem *pr, const char *label)
{
    return run_forward(pr, label) && run_backward(pr, label);
}

/* The same pattern as MASK and as LIST (repeats, shuffled), and a full
 * MASK and DENSE: the same bits; and a run repeated. */
static void test_bit_identical(struct bkt_rng *rng)
{
    const struct attn_case c = {
        .type = bf16, .batch = 2, .heads = 4, .kv_heads = 2, .lq = 70, .lk = 90, .d = 24,
        .dv = 16, .form = MASK, .block_q = 16, .block_k = 32, .causal = true, .density = 0.5,
        .layout = ATTN_LAYOUT_PADDED,
    };
    struct attn_problem pr;
    struct outputs o;
    attn_problem_init(&pr, &c, rng);
    bool ok = forward_backward_runs(&pr, "mask");
    keep_outputs(&pr, &o);
    pr.c.form = LIST;
    ok = forward_backward_runs(&pr, "list") && ok;
    tap_ok(same_outputs(&pr, &o) && ok, "MASK and LIST give the same bits (y, lse, dq, dk, dv)");

    for (int64_t i = 0; i < pr.bp * pr.hp * pr.nbq * pr.nbk; i++)
        pr.active[i] = 1;
    attn_encode_pattern(&pr, rng);
    pr.c.form = MASK;
    ok = forward_backward_runs(&pr, "full mask");
    keep_outputs(&pr, &o);
    pr.c.form = DENSE;
    ok = forward_backward_runs(&pr, "dense") && ok;
    tap_ok(same_outputs(&pr, &o) && ok, "a full MASK and DENSE give the same bits");
    attn_problem_free(ctx, &pr);

    /* Large enough to run on several threads. */
    const struct attn_case big = {
        .type = f32, .batch = 1, .heads = 2, .kv_heads = 1, .lq = 192, .lk = 192, .d = 32,
        .dv = 32, .form = LIST, .block_q = 64, .block_k = 32, .causal = true, .density = 0.7,
    };
    attn_problem_init(&pr, &big, rng);
    ok = forward_backward_runs(&pr, "first run");
    keep_outputs(&pr, &o);
    ok = forward_backward_runs(&pr, "second run") && ok;
    tap_ok(same_outputs(&pr, &o) && ok, "two runs give the same bits");
    attn_problem_free(ctx, &pr);
}

int main(void)
{
    ctx = bkt_open_host();
    struct bkt_rng rng = bkt_rng_new(0xA77E);
    test_random_cases(&rng);
    test_empty(&rng);
    test_bad_lists(&rng);
    test_finite_differences(&rng);
    test_bit_identical(&rng);
    bkDestroyContext(ctx);
    return tap_done();
}
