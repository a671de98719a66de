/* SPDX-License-Identifier: Apache-2.0 */
/* One-time submits on CUDA go through launches the backend caches per plan,
 * stream and kernel (lib/cuda/cuda_launch.c). One plan runs on every queue,
 * on two input/output sets, with the same bindings twice in a row and with
 * 16-byte aligned and misaligned bindings (two kernels), so that cached
 * launches are reused, updated and run out (more stream x kernel pairs
 * than a plan caches); then from a reusable buffer. Every output is
 * poisoned first and compared with the closed form. Skips without a GPU. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "gated_case.h"

#define ROWS 64
#define HIDDEN 256
#define ELEMS_X (ROWS * 2 * HIDDEN)
#define ELEMS_Y (ROWS * HIDDEN)

static const BkGatedActivationKind kind = BK_GATED_ACTIVATION_SWIGLU;

struct set {
    float x[ELEMS_X];
    struct bkt_buffer bx, by;   /* one element more than needed, for misalignment */
};

/* Poisons set's output, runs, and compares with the closed form. */
static void check_run(BkContext ctx, BkPlan plan, struct set *s, uint32_t queue_index,
                      bool misaligned, BkCommandBufferUsage usage, const char *what)
{
    const uint64_t shift = misaligned ? sizeof(float) : 0;
    BkDeviceAddress bind[2] = { s->bx.address + shift, s->by.address + shift };
    static float y[ELEMS_Y + 1];
    long bad = 0;
    BkResult r = bkt_fill(ctx, s->by.address, s->by.size, BKT_POISON);
    if (r == BK_SUCCESS)
        r = bkt_run_on(ctx, queue_index, usage,
                       usage == BK_COMMAND_BUFFER_USAGE_REUSABLE ? 3 : 1, plan, 2, bind);
    if (r == BK_SUCCESS) {
        bkt_download(ctx, y, s->by.address, s->by.size);
        const struct bkt_tolerance tol = { 1e-5, 1e-6, 1 };
        for (int i = 0; i < ELEMS_Y; i++) {
            int row = i / HIDDEN, col = i % HIDDEN;
            float a = s->x[row * 2 * HIDDEN + col], b = s->x[row * 2 * HIDDEN + HIDDEN + col];
            long double want = gated_ref_forward(kind, a, b);
            float got = y[i + (misaligned ? 1 : 0)];
            if (!bkt_close(want, got, BK_DATA_TYPE_F32, tol, (1 + fabsf(a)) * (1 + fabsf(b))) &&
                bad++ < 3)
                tap_diag("y[%d] = %.9g, want %.9Lg", i, got, want);
        }
    } else {
        tap_diag("%s", bkGetLastErrorMessage());
        bad = 1;
    }
    tap_ok(bad == 0, "%s: queue %u, %s bindings", what, queue_index,
           misaligned ? "misaligned" : "16-byte aligned");
}

int main(void)
{
    BkContext ctx = bkt_open_cuda();
    struct bkt_rng rng = bkt_rng_new(707);
    static struct set sets[2];
    for (int k = 0; k < 2; k++) {
        struct set *s = &sets[k];
        s->bx = bkt_alloc(ctx, (ELEMS_X + 1) * sizeof(float));
        s->by = bkt_alloc(ctx, (ELEMS_Y + 1) * sizeof(float));
        for (int i = 0; i < ELEMS_X; i++)
            s->x[i] = (float)bkt_rand_value(&rng, BK_DATA_TYPE_F32, -6, 6);
    }
    BkGatedActivationInfo info = { BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, NULL, kind, 1,
                                   { BK_DATA_TYPE_F32, 2, { ROWS, 2 * HIDDEN }, { 0 } },
                                   { BK_DATA_TYPE_F32, 2, { ROWS, HIDDEN }, { 0 } } };
    BkPlan plan;
    if (bkt_create_plan(ctx, &info, &plan) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    if (bkGetContextProperties(ctx, &props) != BK_SUCCESS)
        tap_bail("bkGetContextProperties: %s", bkGetLastErrorMessage());
    /* Each run uploads its input at its offset (both layouts share a buffer). */
    static const int order[] = { 0, 1, 1, 0 };   /* update, reuse as is, update */
    for (uint32_t q = 0; q < props.queueCount; q++)
        for (int misaligned = 0; misaligned < 2; misaligned++)
            for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
                struct set *s = &sets[order[o]];
                bkt_upload(ctx, s->bx.address + (misaligned ? sizeof(float) : 0), s->x,
                           sizeof s->x);
                check_run(ctx, plan, s, q, misaligned, BK_COMMAND_BUFFER_USAGE_ONE_TIME,
                          order[o] ? "one-time, set 1" : "one-time, set 0");
            }
    bkt_upload(ctx, sets[0].bx.address, sets[0].x, sizeof sets[0].x);
    check_run(ctx, plan, &sets[0], 0, false, BK_COMMAND_BUFFER_USAGE_REUSABLE,
              "reusable, after the one-time runs");
    bkDestroyPlan(plan);
    for (int k = 0; k < 2; k++) {
        bkt_free(ctx, &sets[k].bx);
        bkt_free(ctx, &sets[k].by);
    }
    bkDestroyContext(ctx);
    return tap_done();
}
