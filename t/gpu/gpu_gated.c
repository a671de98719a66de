/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations on CUDA against the host backend: every kind x data
 * type x direction on the test shapes plus odd and large ones, fresh
 * random inputs, NaN-poisoned outputs, every element compared and the gaps
 * of strided outputs checked. Skips without a GPU; fails instead with
 * BK_TEST_REQUIRE_GPU=1. */
#include "config.h"

#include <string.h>

#include "gated_case.h"

#define MAX_SHAPES 40

static struct bkt_tolerance gpu_tolerance(BkDataType type)
{
    switch (type) {
    case BK_DATA_TYPE_F64: return (struct bkt_tolerance){ 1e-12, 1e-14, 1 };
    case BK_DATA_TYPE_F32: return (struct bkt_tolerance){ 1e-5, 1e-6, 1 };
    case BK_DATA_TYPE_F16: return (struct bkt_tolerance){ 1e-3, 1e-5, 1 };
    default: return (struct bkt_tolerance){ 1e-2, 1e-5, 1 };
    }
}

/* Shapes beyond the common ones: odd sizes split on each axis, large ones
 * that fill the GPU, inner extents of whole 16-byte vectors (a CUDA fast
 * path) bound aligned and one element off, and rows that take the half
 * types' packed kernels through full and partial steps and through more
 * rows than the grid has. */
static unsigned more_shapes(struct gated_shape *s, unsigned n)
{
    const struct gated_shape extra[] = {
        { 3, 0, { 7, 13, 33 }, { GATED_CONTIGUOUS, GATED_CONTIGUOUS, GATED_CONTIGUOUS }, 0 },
        { 3, 1, { 7, 13, 33 }, { GATED_PADDED, GATED_TRANSPOSED, GATED_PADDED }, 0 },
        { 3, 2, { 7, 13, 33 }, { GATED_TRANSPOSED_PADDED, GATED_PADDED, GATED_TRANSPOSED }, 0 },
        { 2, 1, { 1031, 1021 }, { GATED_CONTIGUOUS, GATED_CONTIGUOUS, GATED_CONTIGUOUS }, 0 },
        { 2, 0, { 512, 1023 }, { GATED_PADDED, GATED_PADDED, GATED_PADDED }, 0 },
        /* whole 16-byte vectors: aligned, then one element off */
        { 2, 1, { 1024, 1024 }, { GATED_CONTIGUOUS, GATED_CONTIGUOUS, GATED_CONTIGUOUS }, 0 },
        { 2, 1, { 64, 4096 }, { GATED_CONTIGUOUS, GATED_CONTIGUOUS, GATED_CONTIGUOUS }, 1 },
        { 4, 1, { 3, 5, 8, 64 }, { GATED_CONTIGUOUS, GATED_CONTIGUOUS, GATED_CONTIGUOUS }, 0 },
        /* rows of whole steps and a part (f16: 515 vectors, a step 512)
         * and more rows than the grid has blocks down */
        { 2, 1, { 24, 4120 }, { GATED_CONTIGUOUS, GATED_CONTIGUOUS, GATED_CONTIGUOUS }, 0 },
        { 2, 1, { 70000, 8 }, { GATED_CONTIGUOUS, GATED_CONTIGUOUS, GATED_CONTIGUOUS }, 0 },
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0] && n < MAX_SHAPES; i++)
        s[n++] = extra[i];
    return n;
}

static void compare_case(BkContext gpu, BkContext host, const struct gated_case *c,
                         struct bkt_rng *rng)
{
    struct gated_data dg, dh;
    gated_data_alloc(c, &dg);
    gated_data_alloc(c, &dh);
    gated_data_randomize(c, &dg, rng, false);
    for (unsigned t = 0; t < gated_case_tensors(c); t++)
        memcpy(dh.host[t], dg.host[t], dg.bytes[t]);
    bool ok = gated_case_run(gpu, c, &dg) == BK_SUCCESS && gated_case_run(host, c, &dh) == BK_SUCCESS;
    if (ok)
        ok = gated_check_gaps(c, &dh) == 0 &&
             gated_check_against(c, &dg, &dh, gpu_tolerance(c->type)) == 0;
    tap_ok(ok, "cuda = host: %s", c->label);
    gated_data_free(&dg);
    gated_data_free(&dh);
}

int main(void)
{
    BkContext gpu = bkt_open_cuda();
    BkContext host = bkt_open_host();
    struct bkt_rng rng = bkt_rng_new(404);
    struct gated_shape shapes[MAX_SHAPES];
    unsigned n = more_shapes(shapes, gated_shapes(&rng, shapes, MAX_SHAPES));
    for (unsigned k = 0; k < GATED_KIND_COUNT; k++)
        for (unsigned t = 0; t < GATED_TYPE_COUNT; t++)
            for (int back = 0; back < 2; back++)
                for (unsigned s = 0; s < n; s++) {
                    struct gated_case c;
                    gated_case_init(&c, gated_kinds[k], gated_types[t], back, &shapes[s], &rng);
                    compare_case(gpu, host, &c, &rng);
                }
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    return tap_done();
}
