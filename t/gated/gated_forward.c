/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations forward on the device under test: every kind and data
 * type on every test shape, against long double closed forms, and exact
 * rounding (t/api/determinism.c checks repeated runs). */
#include "config.h"

#include <string.h>

#include "gated_case.h"

#define MAX_SHAPES 32

/* ReGLU forward is y = a * max(b, 0): for b > 0 the product of two values
 * of the type, exact in the compute type for f16 and bf16 (11 + 11 bits)
 * and exact in double for f32, so the result must be that product rounded
 * to nearest even, bit for bit. Specials: overflow to infinity, results
 * in the subnormal range, and ties. */
static void test_rounding(BkContext ctx, BkDataType type, struct bkt_rng *rng)
{
    struct gated_shape shape = { .rank = 1, .split = 0, .half = { 512 } };
    struct gated_case c;
    gated_case_init(&c, BK_GATED_ACTIVATION_REGLU, type, false, &shape, rng);
    struct gated_data d;
    gated_data_alloc(&c, &d);
    const double specials[][2] = {
        { 300, 300 },                 /* 90000: past the f16 range */
        { 0x1p-10, 0x1p-10 },         /* 2^-20: an f16 subnormal */
        { 0x1.8p-13, 0x1.8p-13 },     /* 1.125 * 2^-24, between f16 subnormals */
        { 1 + 0x1p-10, 1 + 0x1p-10 }, /* 1 + 2^-9 + 2^-20: rounds in f16 and bf16 */
        { 1 + 0x1p-7, 1 + 0x1p-7 },   /* 1 + 2^-6 + 2^-14: a bf16 rounding case */
        { -3, 5 }, { 7, -2 },
    };
    const int ns = (int)(sizeof specials / sizeof specials[0]);
    for (int i = 0; i < 512; i++) {
        double a = i < ns ? specials[i][0] : bkt_rand_value(rng, type, -8, 8);
        double b = i < ns ? specials[i][1] : bkt_rand_value(rng, type, -8, 8);
        bkt_store(d.host[GATED_X], type, i, bkt_round_to(type, a));
        bkt_store(d.host[GATED_X], type, 512 + i, bkt_round_to(type, b));
    }
    long bad = -1;
    if (gated_case_run(ctx, &c, &d) == BK_SUCCESS) {
        bad = 0;
        for (int i = 0; i < 512; i++) {
            double a = bkt_load(d.host[GATED_X], type, i);
            double b = bkt_load(d.host[GATED_X], type, 512 + i);
            double want = bkt_round_to(type, a * (b > 0 ? b : 0.0));
            double got = bkt_load(d.host[GATED_Y], type, i);
            if (got != want && bad++ < 3)
                tap_diag("%.17g * max(%.17g, 0): expected %.17g, got %.17g", a, b, want, got);
        }
    }
    tap_ok(bad == 0, "ReGLU %s forward is the product rounded to nearest even", bkt_type_name(type));
    gated_data_free(&d);
}

/* NaN through the half types' vector paths (ReGLU's one pass, GLU's
 * table: runs of 65536 outputs take them): a NaN a, quiet or signaling, and
 * inf * 0 give NaN, never a finite or infinite value; ReGLU's gate of a NaN
 * b is 0 (max(b, 0) read as b > 0 ? b : 0), GLU's is NaN. */
static void test_nan(BkContext ctx, BkDataType type, BkGatedActivationKind kind,
                     struct bkt_rng *rng)
{
    enum { N = 65536 };
    struct gated_shape shape = { .rank = 1, .split = 0, .half = { N } };
    struct gated_case c;
    gated_case_init(&c, kind, type, false, &shape, rng);
    struct gated_data d;
    gated_data_alloc(&c, &d);
    gated_data_randomize(&c, &d, rng, false);
    const bool bf16 = type == BK_DATA_TYPE_BF16;
    const uint16_t quiet = bf16 ? 0x7FC1u : 0x7E01u, signaling = bf16 ? 0xFF81u : 0xFC01u;
    const uint16_t inf = bf16 ? 0x7F80u : 0x7C00u, minus_one = bf16 ? 0xBF80u : 0xBC00u;
    uint16_t *x = d.host[GATED_X];
    for (int i = 0; i < N; i += 97) {
        switch ((i / 97) % 4) {
        case 0: x[i] = quiet; break;
        case 1: x[i] = signaling; break;
        case 2: x[i] = inf, x[N + i] = minus_one; break;   /* ReGLU: inf * 0 */
        default: x[N + i] = quiet; break;                   /* NaN gate */
        }
    }
    long bad = -1;
    if (gated_case_run(ctx, &c, &d) == BK_SUCCESS) {
        bad = 0;
        const uint16_t *y = d.host[GATED_Y];
        const uint16_t exp = bf16 ? 0x7F80u : 0x7C00u;
        for (int i = 0; i < N; i++) {
            const bool nan_a = (x[i] & 0x7FFFu) > exp, nan_b = (x[N + i] & 0x7FFFu) > exp;
            const bool inf_zero = (x[i] & 0x7FFFu) == exp && x[N + i] == minus_one;
            const bool want = nan_a || (nan_b && kind == BK_GATED_ACTIVATION_GLU) ||
                              (inf_zero && kind == BK_GATED_ACTIVATION_REGLU);
            const bool got = (y[i] & 0x7FFFu) > exp;
            if (want != got && bad++ < 3)
                tap_diag("a 0x%04x b 0x%04x: y 0x%04x", x[i], x[N + i], y[i]);
        }
    }
    tap_ok(bad == 0, "%s %s forward: NaN in, NaN out, through the vector paths",
           kind == BK_GATED_ACTIVATION_GLU ? "GLU" : "ReGLU", bkt_type_name(type));
    gated_data_free(&d);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(101);
    struct gated_shape shapes[MAX_SHAPES];
    unsigned n = gated_shapes(&rng, shapes, MAX_SHAPES);
    gated_case_test_all(ctx, false, shapes, n, &rng);
    for (unsigned t = 0; t < GATED_TYPE_COUNT; t++)
        test_rounding(ctx, gated_types[t], &rng);
    for (int k = 0; k < 2; k++) {
        const BkGatedActivationKind kind = k ? BK_GATED_ACTIVATION_GLU : BK_GATED_ACTIVATION_REGLU;
        test_nan(ctx, BK_DATA_TYPE_F16, kind, &rng);
        test_nan(ctx, BK_DATA_TYPE_BF16, kind, &rng);
    }
    bkDestroyContext(ctx);
    return tap_done();
}
