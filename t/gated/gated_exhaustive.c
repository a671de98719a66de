/* SPDX-License-Identifier: Apache-2.0 */
/* Every finite f16 and bf16 value as the gate input b, for every kind, on
 * the device under test (BK_TEST_DEVICE): forward y = 1 * g(b) and the
 * backward dx(a) = 1 * g(b) must be within one unit in the last place of
 * g(b) computed in long double (t/lib/gated_ref.c). This pins the far tails,
 * where 0.5 (1 + erf) and 0.5 (1 + tanh) cancel, and the fast float math
 * the CUDA kernels use for the half types. The only slack is below float's
 * normal range (2^-126, times the size of b), which the CUDA kernels flush
 * to zero. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gated_case.h"

#define PATTERNS 65536u

/* The finite values of type as raw 16-bit patterns; returns their count. */
static uint32_t finite_patterns(BkDataType type, uint16_t *out)
{
    uint32_t n = 0;
    for (uint32_t u = 0; u < PATTERNS; u++) {
        uint16_t v = (uint16_t)u;
        if (isfinite(bkt_load(&v, type, 0)))
            out[n++] = v;
    }
    return n;
}

/* 1.0 in type, as raw bits. */
static uint16_t one_bits(BkDataType type)
{
    return type == BK_DATA_TYPE_F16 ? 0x3C00 : 0x3F80;
}

static BkTensorDesc matrix(BkDataType type, int64_t rows, int64_t cols)
{
    BkTensorDesc d = { type, 2, { rows, cols }, { 0 } };
    return d;
}

/* Runs the op on x = (a | b) (a = 1) and returns the n results g(b): y
 * forward, dx(a) backward with dy = 1. x is n rows of (a, b), or with
 * one_row a single row (a_0 .. a_n-1 | b_0 .. b_n-1): the layout of a long
 * contiguous run, which the host takes by table for the half types. */
static bool run(BkContext ctx, BkGatedActivationKind kind, BkDataType type, bool backward,
                const uint16_t *x, uint32_t n, uint16_t *g, bool one_row)
{
    const int64_t rows = one_row ? 1 : n, cols = one_row ? n : 1;
    const uint64_t xbytes = (uint64_t)n * 4, ybytes = (uint64_t)n * 2;
    struct bkt_buffer bx = bkt_alloc(ctx, xbytes), by = bkt_alloc(ctx, ybytes);
    struct bkt_buffer bdx = bkt_alloc(ctx, backward ? xbytes : 4);
    bkt_upload(ctx, bx.address, x, xbytes);
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r;
    if (backward) {
        uint16_t *ones = malloc(ybytes);
        if (!ones)
            tap_bail("out of host memory");
        for (uint32_t i = 0; i < n; i++)
            ones[i] = one_bits(type);
        bkt_upload(ctx, by.address, ones, ybytes);
        free(ones);
        BkGatedActivationBackwardInfo info = { BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO,
                                               NULL, kind, 1, matrix(type, rows, 2 * cols),
                                               matrix(type, rows, cols),
                                               matrix(type, rows, 2 * cols) };
        r = bkt_create_plan(ctx, &info, &plan);
        BkDeviceAddress bind[3] = { bx.address, by.address, bdx.address };
        if (r == BK_SUCCESS && bkt_fill(ctx, bdx.address, bdx.size, BKT_POISON) == BK_SUCCESS)
            r = bkt_run(ctx, plan, 3, bind);
    } else {
        BkGatedActivationInfo info = { BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, NULL, kind, 1,
                                       matrix(type, rows, 2 * cols), matrix(type, rows, cols) };
        r = bkt_create_plan(ctx, &info, &plan);
        BkDeviceAddress bind[2] = { bx.address, by.address };
        if (r == BK_SUCCESS && bkt_fill(ctx, by.address, by.size, BKT_POISON) == BK_SUCCESS)
            r = bkt_run(ctx, plan, 2, bind);
    }
    if (r == BK_SUCCESS) {
        if (backward) {   /* dx = (da | db) per row: keep da */
            uint16_t *dx = malloc(xbytes);
            if (!dx)
                tap_bail("out of host memory");
            bkt_download(ctx, dx, bdx.address, xbytes);
            for (uint32_t i = 0; i < n; i++)
                g[i] = dx[one_row ? i : 2 * i];
            free(dx);
        } else {
            bkt_download(ctx, g, by.address, ybytes);
        }
    } else {
        tap_diag("%s", bkGetLastErrorMessage());
    }
    bkDestroyPlan(plan);
    bkt_free(ctx, &bdx);
    bkt_free(ctx, &by);
    bkt_free(ctx, &bx);
    return r == BK_SUCCESS;
}

static void check(BkContext ctx, BkGatedActivationKind kind, BkDataType type, bool backward,
                  const uint16_t *b, uint32_t n, bool one_row)
{
    uint16_t *x = calloc((size_t)n, 4), *g = calloc((size_t)n, 2);
    if (!x || !g)
        tap_bail("out of host memory");
    const uint16_t one = one_bits(type);
    for (uint32_t i = 0; i < n; i++) {
        x[one_row ? i : 2 * i] = one;
        x[one_row ? n + i : 2 * i + 1] = b[i];
    }
    long bad = 0;
    if (run(ctx, kind, type, backward, x, n, g, one_row)) {
        const struct bkt_tolerance one_ulp = { 0, 0x1p-126, 1 };
        for (uint32_t i = 0; i < n; i++) {
            double bv = bkt_load(b, type, i);
            long double want = gated_ref_gate(kind, bv);
            double got = bkt_load(g, type, i);
            if (!bkt_close(want, got, type, one_ulp, 1 + fabs(bv)) && bad++ < 3)
                tap_diag("b = %.9g: g(b) = %.9Lg, got %.9g", bv, want, got);
        }
    } else {
        bad = 1;
    }
    tap_ok(bad == 0, "%s %s %s, all %u finite b%s: within 1 ulp of g(b) (%ld off)",
           gated_kind_name(kind), bkt_type_name(type), backward ? "backward dx(a)" : "forward",
           n, one_row ? " (twice over, one row)" : "", bad);
    free(g);
    free(x);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    static uint16_t b[2 * PATTERNS];
    const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        uint32_t n = finite_patterns(types[t], b);
        /* The one-row run twice over: more than the host's table threshold. */
        memcpy(b + n, b, (size_t)n * sizeof b[0]);
        for (unsigned k = 0; k < GATED_KIND_COUNT; k++)
            for (int backward = 0; backward < 2; backward++) {
                check(ctx, gated_kinds[k], types[t], backward, b, n, false);
                check(ctx, gated_kinds[k], types[t], backward, b, 2 * n, true);
            }
    }
    bkDestroyContext(ctx);
    return tap_done();
}
