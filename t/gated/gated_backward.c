/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations backward on the device under test: every kind and
 * data type on every test shape, against the closed-form derivatives in
 * long double; plus ReGLU's documented derivative 0 at b = 0. */
#include "config.h"

#include <string.h>

#include "gated_case.h"

#define MAX_SHAPES 32

/* x = {a | b} with b = +0 and -0: dx_a = dy max(b, 0) = 0, dx_b = 0. */
static void test_reglu_kink(BkContext ctx, BkDataType type)
{
    struct gated_shape shape = { .rank = 1, .split = 0, .half = { 2 } };
    struct bkt_rng rng = bkt_rng_new(7);
    struct gated_case c;
    gated_case_init(&c, BK_GATED_ACTIVATION_REGLU, type, true, &shape, &rng);
    struct gated_data d;
    gated_data_alloc(&c, &d);
    const double x[4] = { 1.5, -2.0, 0.0, -0.0 }, dy[2] = { 1.0, -3.0 };
    for (int i = 0; i < 4; i++)
        bkt_store(d.host[GATED_X], type, i, x[i]);
    for (int i = 0; i < 2; i++)
        bkt_store(d.host[GATED_DY], type, i, dy[i]);
    bool ok = gated_case_run(ctx, &c, &d) == BK_SUCCESS;
    for (int i = 0; ok && i < 4; i++)
        ok = bkt_load(d.host[GATED_DX], type, i) == 0.0;
    tap_ok(ok, "ReGLU %s backward at b = +-0 gives 0 for da and db", bkt_type_name(type));
    gated_data_free(&d);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(202);
    struct gated_shape shapes[MAX_SHAPES];
    unsigned n = gated_shapes(&rng, shapes, MAX_SHAPES);
    gated_case_test_all(ctx, true, shapes, n, &rng);
    for (unsigned t = 0; t < GATED_TYPE_COUNT; t++)
        test_reglu_kink(ctx, gated_types[t]);
    bkDestroyContext(ctx);
    return tap_done();
}
