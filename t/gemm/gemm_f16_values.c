/* SPDX-License-Identifier: Apache-2.0 */
/* binary16 conversions through the dense GEMM, D = A @ B with K = 1 and
 * the other operand 1, so that each product is one input exactly. The
 * host converts f16 by branch-free loops (a row at a time, or whole
 * panels for the BLAS); this holds them to the test's own conversions:
 *   - input: every binary16 (normals, subnormals, zeros, infinities and
 *     NaNs, both signs) in A, in B and in B^T, into an f32 D;
 *   - output: every binary16 times a few binary16 scales (exact in f32)
 *     into an f16 D, so that sums round to nearest even, ties included,
 *     into normals, subnormals, zeros and infinities.
 * Zeros compare by value (a sum may drop the sign of -0) and NaNs by
 * being NaN (payloads are not kept by every device). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"

#define VALUES 65536

/* Where the values go: A [VALUES, 1] or B [1, VALUES], the latter also
 * given as B^T [VALUES, 1] (the values contiguous in either case). */
enum side { VALUES_IN_A, VALUES_IN_B, VALUES_IN_BT };

static const char *const side_names[] = { "A [65536, 1]", "B [1, 65536]", "B^T [65536, 1]" };

static BkTensorDesc mat(BkDataType type, int64_t rows, int64_t cols)
{
    return (BkTensorDesc){ .dataType = type, .rank = 2, .extent = { rows, cols } };
}

/* D poisoned, then D = A @ B planned and run; the first failure. */
static BkResult poison_and_run(BkContext ctx, const BkGemmInfo *info, const struct bkt_buffer *a,
                               const struct bkt_buffer *b, const struct bkt_buffer *d)
{
    if (bkt_fill(ctx, d->address, d->size, BKT_POISON) != BK_SUCCESS)
        tap_diag("poisoning D failed");
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, info, &plan);
    const BkDeviceAddress bind[5] = { a->address, b->address, 0, d->address, 0 };
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 5, bind);
    bkDestroyPlan(plan);
    return r;
}

static void check_side(BkContext ctx, enum side side, const uint16_t *values)
{
    const int64_t m = side == VALUES_IN_A ? VALUES : 1, n = side == VALUES_IN_A ? 1 : VALUES;
    const uint16_t one = bkt_f32_to_f16(1.0f);
    BkGemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO,
        .transB = side == VALUES_IN_BT ? BK_GEMM_OP_T : BK_GEMM_OP_N,
        .alpha = 1,
        .a = mat(BK_DATA_TYPE_F16, m, 1),
        .b = side == VALUES_IN_BT ? mat(BK_DATA_TYPE_F16, n, 1) : mat(BK_DATA_TYPE_F16, 1, n),
        .d = mat(BK_DATA_TYPE_F32, m, n),
    };
    struct bkt_buffer a = bkt_alloc(ctx, (uint64_t)m * 2), b = bkt_alloc(ctx, (uint64_t)n * 2);
    struct bkt_buffer d = bkt_alloc(ctx, (uint64_t)(m * n) * 4);
    bkt_upload(ctx, a.address, side == VALUES_IN_A ? values : &one, (uint64_t)m * 2);
    bkt_upload(ctx, b.address, side == VALUES_IN_A ? &one : values, (uint64_t)n * 2);
    BkResult r = poison_and_run(ctx, &info, &a, &b, &d);
    long bad = 0;
    if (r == BK_SUCCESS) {
        float *got = malloc(VALUES * sizeof *got);
        if (!got)
            abort();
        bkt_download(ctx, got, d.address, VALUES * sizeof *got);
        for (int64_t i = 0; i < VALUES; i++) {
            const float want = bkt_f16_to_f32(values[i]);
            const bool ok = isnan(want) ? isnan(got[i]) : got[i] == want;
            if (!ok && bad++ < 4)
                tap_diag("f16 0x%04x: got %.9g, want %.9g", values[i], got[i], want);
        }
        free(got);
    } else {
        tap_diag("%s (%s)", bkResultString(r), bkGetLastErrorMessage());
    }
    tap_ok(r == BK_SUCCESS && bad == 0, "every f16 value in %s, exact in f32 D (%ld wrong)",
           side_names[side], bad);
    bkt_free(ctx, &a);
    bkt_free(ctx, &b);
    bkt_free(ctx, &d);
}

static bool f16_is_nan(uint16_t h)
{
    return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0;
}

/* Scales of the output check: exact f32 products with any binary16 that
 * land on, between and at ties of binary16 values (1 + 2^-10 ties where
 * the other mantissa's low bits are 0x200), in the subnormals (2^-10 and
 * below) and past the largest finite (2 and up). */
static const uint16_t scales[] = { 0x3C01, 0x3BFF, 0x3E01, 0x1401, 0x0C00, 0x4001, 0xBC01 };
#define SCALES ((int64_t)(sizeof scales / sizeof scales[0]))

static void check_output(BkContext ctx, const uint16_t *values)
{
    uint16_t *got = malloc((size_t)(SCALES * VALUES) * sizeof *got);
    if (!got)
        abort();
    BkGemmInfo info = {
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO,
        .alpha = 1,
        .a = mat(BK_DATA_TYPE_F16, SCALES, 1),
        .b = mat(BK_DATA_TYPE_F16, 1, VALUES),
        .d = mat(BK_DATA_TYPE_F16, SCALES, VALUES),
    };
    struct bkt_buffer a = bkt_alloc(ctx, SCALES * 2), b = bkt_alloc(ctx, VALUES * 2);
    struct bkt_buffer d = bkt_alloc(ctx, (uint64_t)(SCALES * VALUES) * 2);
    bkt_upload(ctx, a.address, scales, SCALES * 2);
    bkt_upload(ctx, b.address, values, VALUES * 2);
    BkResult r = poison_and_run(ctx, &info, &a, &b, &d);
    long bad = 0;
    if (r == BK_SUCCESS) {
        bkt_download(ctx, got, d.address, (uint64_t)(SCALES * VALUES) * 2);
        for (int64_t i = 0; i < SCALES; i++)
            for (int64_t j = 0; j < VALUES; j++) {
                const float exact = bkt_f16_to_f32(scales[i]) * bkt_f16_to_f32(values[j]);
                const uint16_t want = bkt_f32_to_f16(exact), have = got[i * VALUES + j];
                const bool ok = f16_is_nan(want) ? f16_is_nan(have)
                                : (want & 0x7FFFu) == 0 ? (have & 0x7FFFu) == 0
                                                        : have == want;
                if (!ok && bad++ < 4)
                    tap_diag("f16 0x%04x * 0x%04x = %a: got 0x%04x, want 0x%04x", scales[i],
                             values[j], (double)exact, have, want);
            }
    } else {
        tap_diag("%s (%s)", bkResultString(r), bkGetLastErrorMessage());
    }
    tap_ok(r == BK_SUCCESS && bad == 0,
           "every f16 value times %lld scales, rounded into an f16 D (%ld wrong)",
           (long long)SCALES, bad);
    bkt_free(ctx, &a);
    bkt_free(ctx, &b);
    bkt_free(ctx, &d);
    free(got);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    tap_plan(4);
    uint16_t *values = malloc(VALUES * sizeof *values);
    if (!values)
        abort();
    for (uint32_t i = 0; i < VALUES; i++)
        values[i] = (uint16_t)i;
    for (int s = VALUES_IN_A; s <= VALUES_IN_BT; s++)
        check_side(ctx, (enum side)s, values);
    check_output(ctx, values);
    free(values);
    bkDestroyContext(ctx);
    return tap_done();
}
