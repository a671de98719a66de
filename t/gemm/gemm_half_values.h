/* SPDX-License-Identifier: Apache-2.0 */
/* 16-bit float conversions through the dense GEMM (gemm_f16_values.c,
 * gemm_bf16_values.c), D = A @ B with K = 1 and the other operand 1, so
 * that each product is one input exactly. The host converts f16 and bf16
 * by branch-free loops (a row at a time, or whole panels for the BLAS);
 * this holds them to the test's own conversions:
 *   - input: every 16-bit pattern of the type (normals, subnormals,
 *     zeros, infinities and NaNs, both signs) in A, in B and in B^T, into
 *     an f32 D;
 *   - output: every value of the type times a few scales of the type
 *     into a D of the type, so that sums round to nearest even, ties
 *     included, into normals, subnormals, zeros and infinities.
 * Zeros compare by value (a sum may drop the sign of -0) and NaNs by
 * being NaN (payloads are not kept by every device). */
#ifndef BKT_GEMM_HALF_VALUES_H
#define BKT_GEMM_HALF_VALUES_H

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"

#define VALUES 65536

/* A 16-bit float type: the test's own conversions (test_numeric.h), its
 * exponent and mantissa masks, and the scales of the output check. */
struct half_type {
    BkDataType type;
    const char *name;
    float (*to_f32)(uint16_t);
    uint16_t (*from_f32)(float);
    uint16_t exponent, mantissa;
    const uint16_t *scales;
    int64_t scale_count;
};

/* Where the values go: A [VALUES, 1] or B [1, VALUES], the latter also
 * given as B^T [VALUES, 1] (the values contiguous in either case). */
enum side { VALUES_IN_A, VALUES_IN_B, VALUES_IN_BT };

static const char *const side_names[] = { "A [65536, 1]", "B [1, 65536]", "B^T [65536, 1]" };

static BkTensorDesc mat(BkDataType type, int64_t rows, int64_t cols)
{
    return (BkTensorDesc){ .dataType = type, .rank = 2, .extent = { rows, cols } };
}

static void check_side(BkContext ctx, const struct half_type *h, enum side side,
                       const uint16_t *values)
{
    const int64_t m = side == VALUES_IN_A ? VALUES : 1, n = side == VALUES_IN_A ? 1 : VALUES;
    const uint16_t one = h->from_f32(1.0f);
    BkGemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO,
        .transB = side == VALUES_IN_BT ? BK_GEMM_OP_T : BK_GEMM_OP_N,
        .alpha = 1,
        .a = mat(h->type, m, 1),
        .b = side == VALUES_IN_BT ? mat(h->type, n, 1) : mat(h->type, 1, n),
        .d = mat(BK_DATA_TYPE_F32, m, n),
    };
    struct bkt_buffer a = bkt_alloc(ctx, (uint64_t)m * 2), b = bkt_alloc(ctx, (uint64_t)n * 2);
    struct bkt_buffer d = bkt_alloc(ctx, (uint64_t)(m * n) * 4);
    bkt_upload(ctx, a.address, side == VALUES_IN_A ? values : &one, (uint64_t)m * 2);
    bkt_upload(ctx, b.address, side == VALUES_IN_A ? &one : values, (uint64_t)n * 2);
    if (bkt_fill(ctx, d.address, d.size, BKT_POISON) != BK_SUCCESS)
        tap_diag("poisoning D failed");
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    const BkDeviceAddress bind[5] = { a.address, b.address, 0, d.address, 0 };
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 5, bind);
    long bad = 0;
    if (r == BK_SUCCESS) {
        float *got = malloc(VALUES * sizeof *got);
        if (!got)
            abort();
        bkt_download(ctx, got, d.address, VALUES * sizeof *got);
        for (int64_t i = 0; i < VALUES; i++) {
            const float want = h->to_f32(values[i]);
            const bool ok = isnan(want) ? isnan(got[i]) : got[i] == want;
            if (!ok && bad++ < 4)
                tap_diag("%s 0x%04x: got %.9g, want %.9g", h->name, values[i], got[i], want);
        }
        free(got);
    } else {
        tap_diag("%s (%s)", bkResultString(r), bkGetLastErrorMessage());
    }
    tap_ok(r == BK_SUCCESS && bad == 0, "every %s value in %s, exact in f32 D (%ld wrong)",
           h->name, side_names[side], bad);
    bkDestroyPlan(plan);
    bkt_free(ctx, &a);
    bkt_free(ctx, &b);
    bkt_free(ctx, &d);
}

static bool is_nan(const struct half_type *h, uint16_t v)
{
    return (v & h->exponent) == h->exponent && (v & h->mantissa) != 0;
}

static void check_output(BkContext ctx, const struct half_type *h, const uint16_t *values)
{
    const int64_t scales = h->scale_count;
    uint16_t *got = malloc((size_t)(scales * VALUES) * sizeof *got);
    if (!got)
        abort();
    BkGemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO,
        .alpha = 1,
        .a = mat(h->type, scales, 1),
        .b = mat(h->type, 1, VALUES),
        .d = mat(h->type, scales, VALUES),
    };
    struct bkt_buffer a = bkt_alloc(ctx, (uint64_t)scales * 2), b = bkt_alloc(ctx, VALUES * 2);
    struct bkt_buffer d = bkt_alloc(ctx, (uint64_t)(scales * VALUES) * 2);
    bkt_upload(ctx, a.address, h->scales, (uint64_t)scales * 2);
    bkt_upload(ctx, b.address, values, VALUES * 2);
    if (bkt_fill(ctx, d.address, d.size, BKT_POISON) != BK_SUCCESS)
        tap_diag("poisoning D failed");
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    const BkDeviceAddress bind[5] = { a.address, b.address, 0, d.address, 0 };
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 5, bind);
    long bad = 0;
    const uint16_t magnitude = (uint16_t)(h->exponent | h->mantissa);
    if (r == BK_SUCCESS) {
        bkt_download(ctx, got, d.address, (uint64_t)(scales * VALUES) * 2);
        for (int64_t i = 0; i < scales; i++)
            for (int64_t j = 0; j < VALUES; j++) {
                const float product = h->to_f32(h->scales[i]) * h->to_f32(values[j]);
                const uint16_t want = h->from_f32(product), have = got[i * VALUES + j];
                const bool ok = is_nan(h, want)            ? is_nan(h, have)
                                : (want & magnitude) == 0 ? (have & magnitude) == 0
                                                          : have == want;
                if (!ok && bad++ < 4)
                    tap_diag("%s 0x%04x * 0x%04x = %a: got 0x%04x, want 0x%04x", h->name,
                             h->scales[i], values[j], (double)product, have, want);
            }
    } else {
        tap_diag("%s (%s)", bkResultString(r), bkGetLastErrorMessage());
    }
    tap_ok(r == BK_SUCCESS && bad == 0,
           "every %s value times %lld scales, rounded into D of that type (%ld wrong)",
           h->name, (long long)scales, bad);
    bkDestroyPlan(plan);
    bkt_free(ctx, &a);
    bkt_free(ctx, &b);
    bkt_free(ctx, &d);
    free(got);
}

/* Every 16-bit pattern through A, B and B^T, and times the scales. */
static int check_type(const struct half_type *h)
{
    BkContext ctx = bkt_open_device();
    tap_plan(4);
    uint16_t *values = malloc(VALUES * sizeof *values);
    if (!values)
        abort();
    for (uint32_t i = 0; i < VALUES; i++)
        values[i] = (uint16_t)i;
    for (int s = VALUES_IN_A; s <= VALUES_IN_BT; s++)
        check_side(ctx, h, (enum side)s, values);
    check_output(ctx, h, values);
    free(values);
    bkDestroyContext(ctx);
    return tap_done();
}

#endif /* BKT_GEMM_HALF_VALUES_H */
