/* SPDX-License-Identifier: Apache-2.0 */
/* Every plan that claims determinism (BkPlanProperties.precision) gives
 * bit-identical output over repeated runs on the same inputs, on the
 * device under test: every gated kind x data type x direction, on a
 * contiguous shape (the vector path on CUDA) and a strided one; and an
 * element's bits do not depend on the values beside it. */
#include "config.h"

#include <string.h>

#include "gated_case.h"

#define RUNS 3
#define MAX_SHAPES 32

static bool claims_determinism(BkContext ctx, const struct gated_case *c)
{
    union gated_info info;
    BkPlan plan;
    gated_case_info(c, &info);
    if (bkt_create_plan(ctx, &info, &plan) != BK_SUCCESS)
        return false;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    bool claimed = bkGetPlanProperties(plan, &props) == BK_SUCCESS &&
                   props.precision.deterministic && props.precision.bitStable;
    bkDestroyPlan(plan);
    return claimed;
}

static void test_repeats(BkContext ctx, const struct gated_case *c, struct bkt_rng *rng)
{
    if (!claims_determinism(ctx, c)) {
        tap_skip(1, "%s claims no bit-stable determinism", c->label);
        return;
    }
    const unsigned out = gated_case_output(c);
    struct gated_data d[RUNS];
    for (unsigned r = 0; r < RUNS; r++)
        gated_data_alloc(c, &d[r]);
    gated_data_randomize(c, &d[0], rng, false);
    bool ok = true;
    for (unsigned r = 0; r < RUNS; r++) {
        for (unsigned t = 0; t < gated_case_tensors(c); t++)
            if (t != out && r > 0)
                memcpy(d[r].host[t], d[0].host[t], d[0].bytes[t]);
        ok = ok && gated_case_run(ctx, c, &d[r]) == BK_SUCCESS;
        if (ok && r > 0 && memcmp(d[r].host[out], d[0].host[out], d[0].bytes[out]) != 0) {
            tap_diag("run %u differs from run 0", r);
            ok = false;
        }
    }
    tap_ok(ok, "%d runs are bit for bit the same: %s", RUNS, c->label);
    for (unsigned r = 0; r < RUNS; r++)
        gated_data_free(&d[r]);
}

/* An element's result does not depend on its neighbours: the host's
 * vector path takes a cheaper exponential for a chunk whose gates all keep
 * it normal, and must give the same bits as the general one. One row of
 * 256 gates in [-3, 3], then the same row with its last gate 200 (which
 * sends the chunk down the general path): the other 255 outputs agree bit
 * for bit. */
static void test_neighbours(BkContext ctx, BkGatedActivationKind kind, BkDataType type,
                            bool backward, struct bkt_rng *rng)
{
    enum { W = 256 };
    struct gated_shape shape = { .rank = 1, .split = 0, .half = { W } };
    struct gated_case c;
    gated_case_init(&c, kind, type, backward, &shape, rng);
    const unsigned out = gated_case_output(&c);
    struct gated_data d[2];
    gated_data_alloc(&c, &d[0]);
    gated_data_alloc(&c, &d[1]);
    gated_data_randomize(&c, &d[0], rng, false);
    for (int i = 0; i < W; i++)
        bkt_store(d[0].host[GATED_X], type, W + i, bkt_rand_value(rng, type, -3, 3));
    for (unsigned t = 0; t < gated_case_tensors(&c); t++)
        if (t != out)
            memcpy(d[1].host[t], d[0].host[t], d[0].bytes[t]);
    bkt_store(d[1].host[GATED_X], type, 2 * W - 1, 200.0);
    long bad = -1;
    if (gated_case_run(ctx, &c, &d[0]) == BK_SUCCESS && gated_case_run(ctx, &c, &d[1]) == BK_SUCCESS) {
        bad = 0;
        const size_t es = bkt_type_size(type);
        for (int part = 0; part < (backward ? 2 : 1); part++)
            for (int i = 0; i < W - 1; i++) {
                const size_t at = ((size_t)part * W + (size_t)i) * es;
                bad += memcmp((char *)d[0].host[out] + at, (char *)d[1].host[out] + at, es) != 0;
            }
    }
    tap_ok(bad == 0, "%s: an element's bits do not depend on its neighbours' gates (%ld differ)",
           c.label, bad);
    gated_data_free(&d[0]);
    gated_data_free(&d[1]);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(303);
    struct gated_shape shapes[MAX_SHAPES];
    unsigned n = gated_shapes(&rng, shapes, MAX_SHAPES);
    /* From the standard set (gated_case.c): 6 x 64 split last, contiguous
     * (the 16-byte vector path on CUDA), and a rank-3 transposed layout. */
    if (n < 14)
        tap_bail("gated_shapes gave %u shapes, expected at least 14", n);
    const struct gated_shape *picked[2] = { &shapes[13], &shapes[4] };
    for (unsigned dir = 0; dir < 2; dir++)
        for (unsigned k = 0; k < GATED_KIND_COUNT; k++)
            for (unsigned t = 0; t < GATED_TYPE_COUNT; t++)
                for (unsigned s = 0; s < 2; s++) {
                    struct gated_case c;
                    gated_case_init(&c, gated_kinds[k], gated_types[t], dir == 1, picked[s], &rng);
                    test_repeats(ctx, &c, &rng);
                }
    for (unsigned dir = 0; dir < 2; dir++)
        for (unsigned k = 0; k < GATED_KIND_COUNT; k++)
            for (unsigned t = 0; t < GATED_TYPE_COUNT; t++)
                if (gated_types[t] != BK_DATA_TYPE_F64)
                    test_neighbours(ctx, gated_kinds[k], gated_types[t], dir == 1, &rng);
    bkDestroyContext(ctx);
    return tap_done();
}
