/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations around the sizes where the host backend changes how it
 * runs: small runs stay on the calling thread, runs of 65536 output
 * elements and more are split over threads in blocks of rows (several
 * short rows to a block, the last block shorter). Each shape, forward and
 * backward, against the long double closed forms, on the device under
 * test; kinds and data types rotate over the shapes. */
#include "config.h"

#include "gated_case.h"

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(1401);
    const enum gated_layout C = GATED_CONTIGUOUS, P = GATED_PADDED, T = GATED_TRANSPOSED;
    const struct gated_shape shapes[] = {
        { .rank = 1, .split = 0, .half = { 1 }, .layout = { C, C, C } },
        { .rank = 2, .split = 1, .half = { 2, 32 }, .layout = { C, C, C } },
        { .rank = 1, .split = 0, .half = { 65535 }, .layout = { C, C, C } },
        { .rank = 1, .split = 0, .half = { 65536 }, .layout = { C, C, C } },
        { .rank = 2, .split = 1, .half = { 257, 255 }, .layout = { C, C, C } },
        { .rank = 2, .split = 1, .half = { 257, 257 }, .layout = { P, P, P } },
        { .rank = 2, .split = 1, .half = { 21846, 3 }, .layout = { C, C, C } },
        { .rank = 2, .split = 0, .half = { 65537, 1 }, .layout = { C, P, C } },
        { .rank = 2, .split = 1, .half = { 4099, 16 }, .layout = { P, C, P } },
        { .rank = 3, .split = 2, .half = { 3, 7, 3121 }, .layout = { T, P, T } },
    };
    const unsigned n = sizeof shapes / sizeof shapes[0];
    for (unsigned s = 0; s < n; s++)
        for (int backward = 0; backward < 2; backward++) {
            struct gated_case c;
            gated_case_init(&c, gated_kinds[(2 * s + (unsigned)backward) % GATED_KIND_COUNT],
                            gated_types[s % GATED_TYPE_COUNT], backward, &shapes[s], &rng);
            gated_case_test_reference(ctx, &c, &rng);
        }
    bkDestroyContext(ctx);
    return tap_done();
}
