/* SPDX-License-Identifier: Apache-2.0 */
/* Launch-cost measurements of bkbench. */
#include "bench_launch.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gated_op.h"
#include "tool_common.h"

/* [tokens, hidden] of LAUNCH_TINY and LAUNCH_MINIMAL */
static const int64_t launch_shapes[LAUNCH_SHAPES][2] = { { 4, 128 }, { 1, 16 } };
#define SYNC_EVERY 64u     /* keep the device queue from filling up */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        tool_die("out of host memory");
    return p;
}

static BkPlan tiny_plan(struct bench_device *d, BkGatedActivationKind kind, const int64_t shape[2])
{
    struct gated_op_desc desc = {false, kind, BK_DATA_TYPE_F32, shape[0], shape[1], 0};
    union gated_op_info info;
    BkPlanCreateInfo ci = {BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, NULL,
                           gated_op_build(&desc, &info), 0};
    BkPlan plan;
    tool_check(bkCreatePlan(d->ctx, &ci, NULL, &plan), "bkCreatePlan (tiny)");
    return plan;
}

static void begin(BkCommandBuffer cmd, BkCommandBufferUsage usage)
{
    BkCommandBufferBeginInfo bi = {BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, usage};
    tool_check(bkBeginCommandBuffer(cmd, &bi), "bkBeginCommandBuffer");
}

static void record_run(BkCommandBuffer cmd, BkPlan plan, BkDeviceAddress in, uint64_t in_size,
                       BkDeviceAddress out, uint64_t out_size)
{
    BkDeviceAddress addr[2] = {in, out};
    uint64_t size[2] = {in_size, out_size};
    BkRunInfo ri = {BK_STRUCTURE_TYPE_RUN_INFO, NULL, 2, addr, size, 0, 0};
    tool_check(bkCmdRun(cmd, plan, &ri), "bkCmdRun");
}

/* same: the same output every time; else alternately the first and the
 * second out_bytes of out. */
static double one_time_cost(struct bench_device *d, uint32_t iterations, BkPlan plan,
                            const struct bench_buffer *in, const struct bench_buffer *out,
                            uint64_t out_bytes, bool same)
{
    BkCommandBuffer cmd;
    tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &cmd), "bkAllocateCommandBuffer");
    double *us = xcalloc(iterations, sizeof *us);
    uint32_t warmup = iterations / 10 + 1;
    for (uint32_t i = 0; i < warmup + iterations; i++) {
        if (i % SYNC_EVERY == 0)
            bench_device_wait(d);
        double t0 = tool_now_us();
        begin(cmd, BK_COMMAND_BUFFER_USAGE_ONE_TIME);
        record_run(cmd, plan, in->address, in->size,
                   out->address + (same ? 0 : (i & 1u) * out_bytes), out_bytes);
        tool_check(bkEndCommandBuffer(cmd), "bkEndCommandBuffer");
        tool_check(bkQueueSubmit(d->queue, 1, &cmd), "bkQueueSubmit");
        double t = tool_now_us() - t0;
        if (i >= warmup)
            us[i - warmup] = t;
    }
    bench_device_wait(d);
    double median = tool_median(us, iterations);
    free(us);
    bkFreeCommandBuffer(cmd);
    return median;
}

static double replay_cost(struct bench_device *d, const struct launch_settings *s,
                          const BkPlan *plans, const struct bench_buffer *in,
                          const struct bench_buffer *out, uint64_t out_bytes)
{
    BkCommandBuffer cmd;
    tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &cmd), "bkAllocateCommandBuffer");
    begin(cmd, BK_COMMAND_BUFFER_USAGE_REUSABLE);
    /* Each plan writes its own slice of out, as a real sequence would. */
    for (uint32_t i = 0; i < BENCH_LAUNCH_PLANS; i++)
        record_run(cmd, plans[i], in->address, in->size, out->address + i * out_bytes,
                   out_bytes);
    tool_check(bkEndCommandBuffer(cmd), "bkEndCommandBuffer");

    for (uint32_t i = 0; i < 3; i++)   /* warm-up; builds the graph on CUDA */
        tool_check(bkQueueSubmit(d->queue, 1, &cmd), "bkQueueSubmit");
    bench_device_wait(d);

    double *us = xcalloc(s->replay_batches, sizeof *us);
    for (uint32_t b = 0; b < s->replay_batches; b++) {
        double t0 = tool_now_us();
        for (uint32_t r = 0; r < s->replays_per_batch; r++)
            tool_check(bkQueueSubmit(d->queue, 1, &cmd), "bkQueueSubmit");
        bench_device_wait(d);
        us[b] = (tool_now_us() - t0) / s->replays_per_batch / BENCH_LAUNCH_PLANS;
    }
    double median = tool_median(us, s->replay_batches);
    free(us);
    bkFreeCommandBuffer(cmd);
    return median;
}

/* The costs of plans of one shape into *r. */
static void shape_costs(struct bench_device *d, const struct launch_settings *s,
                        const int64_t shape[2], struct launch_shape_costs *r)
{
    uint64_t in_bytes = (uint64_t)shape[0] * 2 * shape[1] * sizeof(float);
    uint64_t out_bytes = in_bytes / 2;
    struct bench_buffer in, out;
    bench_buffer_alloc(d, in_bytes, &in);
    bench_buffer_alloc(d, out_bytes * BENCH_LAUNCH_PLANS, &out);
    bench_buffer_fill_random(d, &in, BK_DATA_TYPE_F32, 42);

    /* Distinct plan objects, cycling through the kinds. */
    BkPlan plans[BENCH_LAUNCH_PLANS];
    for (uint32_t i = 0; i < BENCH_LAUNCH_PLANS; i++)
        plans[i] = tiny_plan(d, gated_kinds[i % GATED_KIND_COUNT], shape);

    r->extent[0] = shape[0];
    r->extent[1] = 2 * shape[1];
    r->one_time_us = one_time_cost(d, s->one_time_iterations, plans[0], &in, &out, out_bytes,
                                   false);
    r->one_time_same_us = one_time_cost(d, s->one_time_iterations, plans[0], &in, &out,
                                        out_bytes, true);
    r->replay_us_per_plan = replay_cost(d, s, plans, &in, &out, out_bytes);

    for (uint32_t i = 0; i < BENCH_LAUNCH_PLANS; i++)
        bkDestroyPlan(plans[i]);
    bench_buffer_free(d, &out);
    bench_buffer_free(d, &in);
}

void bench_launch_costs(struct bench_device *d, const struct launch_settings *s,
                        struct launch_result *r)
{
    memset(r, 0, sizeof *r);
    r->dtype = BK_DATA_TYPE_F32;
    for (int i = 0; i < LAUNCH_SHAPES; i++)
        shape_costs(d, s, launch_shapes[i], &r->shape[i]);
}
