/* SPDX-License-Identifier: Apache-2.0 */
/* bkQueueRun: a run in one call gives the bits a command buffer of the
 * same run gives, on every queue, with or without a workspace; each bad
 * argument gives a negative BkResult and a message naming the field, and
 * runs nothing. */
#include "config.h"

#include <string.h>

#include "gemm_infos.h"
#include "test_util.h"

/* GLU forward, f32: input {4, 8} (128 bytes) -> output {4, 4} (64 bytes). */
#define IN_FLOATS 32
#define OUT_FLOATS 16

static BkPlan glu_plan(BkContext ctx)
{
    BkGatedActivationInfo f = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, .kind = BK_GATED_ACTIVATION_GLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 8 } },
        .output = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 4 } },
    };
    BkPlan plan = BK_NULL_HANDLE;
    if (bkt_create_plan(ctx, &f, &plan) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    return plan;
}

static BkRunInfo run_info(uint32_t count, const BkDeviceAddress *bindings)
{
    return (BkRunInfo){ .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = count,
                        .pBindings = bindings };
}

/* The output after bkQueueRun on queue q and a wait, from a poisoned start. */
static BkResult queue_run(BkContext ctx, BkQueue q, BkPlan plan, const BkRunInfo *run,
                          const struct bkt_buffer *out, void *got)
{
    bkt_fill(ctx, out->address, out->size, BKT_POISON);
    BkResult r = bkQueueRun(q, plan, run);
    if (r == BK_SUCCESS)
        r = bkQueueWaitIdle(q);
    bkt_download(ctx, got, out->address, out->size);
    return r;
}

/* The same run through bkCmdRun and bkQueueSubmit, the reference. */
static void reference_run(BkContext ctx, BkPlan plan, uint32_t count,
                          const BkDeviceAddress *bindings, const struct bkt_buffer *out,
                          void *want)
{
    bkt_fill(ctx, out->address, out->size, BKT_POISON);
    if (bkt_run(ctx, plan, count, bindings) != BK_SUCCESS)
        tap_bail("the reference run: %s", bkGetLastErrorMessage());
    bkt_download(ctx, want, out->address, out->size);
}

static void test_glu(BkContext ctx, BkPlan plan)
{
    struct bkt_buffer in = bkt_alloc(ctx, IN_FLOATS * 4), out = bkt_alloc(ctx, OUT_FLOATS * 4);
    float x[IN_FLOATS], want[OUT_FLOATS], got[OUT_FLOATS];
    for (int i = 0; i < IN_FLOATS; i++)
        x[i] = (float)(i % 9) * 0.375f - 1.5f;
    bkt_upload(ctx, in.address, x, sizeof x);
    const BkDeviceAddress b[2] = { in.address, out.address };
    reference_run(ctx, plan, 2, b, &out, want);

    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkGetContextProperties(ctx, &props);
    /* The first queue and the last. */
    const uint32_t step = props.queueCount > 1 ? props.queueCount - 1 : 1;
    for (uint32_t qi = 0; qi < props.queueCount; qi += step) {
        BkQueue q;
        if (bkGetQueue(ctx, qi, &q) != BK_SUCCESS)
            tap_bail("bkGetQueue(%u): %s", qi, bkGetLastErrorMessage());
        BkRunInfo run = run_info(2, b);
        BKT_EXPECT(queue_run(ctx, q, plan, &run, &out, got), BK_SUCCESS, NULL,
                   "bkQueueRun on queue %u, then bkQueueWaitIdle", qi);
        tap_ok(memcmp(got, want, sizeof got) == 0,
               "queue %u: the output equals bkCmdRun + bkQueueSubmit's bit for bit", qi);
    }
    /* The reference itself must be the op, not poison left in place. */
    float a = x[1], g = x[4 + 1];
    tap_ok(__builtin_fabsf(want[1] - a / (1.0f + __builtin_expf(-g))) <= 1e-6f,
           "the reference is GLU (y = a * sigmoid(b))");

    /* Twice in a row, no wait between: the second sees the same input. */
    BkQueue q = bkt_queue(ctx);
    BkRunInfo run = run_info(2, b);
    bkt_fill(ctx, out.address, out.size, BKT_POISON);
    bool ok = bkQueueRun(q, plan, &run) == BK_SUCCESS &&
              bkQueueRun(q, plan, &run) == BK_SUCCESS && bkQueueWaitIdle(q) == BK_SUCCESS;
    bkt_download(ctx, got, out.address, out.size);
    tap_ok(ok && memcmp(got, want, sizeof got) == 0, "two runs queued back to back");
    bkt_free(ctx, &in);
    bkt_free(ctx, &out);
}

/* Every bad argument: its code, the field in the message, and no run. */
static void test_errors(BkContext ctx, BkPlan plan)
{
    struct bkt_buffer in = bkt_alloc(ctx, IN_FLOATS * 4), out = bkt_alloc(ctx, OUT_FLOATS * 4);
    const BkDeviceAddress ok[2] = { in.address, out.address };
    BkQueue q = bkt_queue(ctx);
    BkRunInfo good = run_info(2, ok), run;
    bkt_fill(ctx, in.address, in.size, 0);
    bkt_fill(ctx, out.address, out.size, BKT_POISON);

    BKT_EXPECT(bkQueueRun(BK_NULL_HANDLE, plan, &good), BK_ERROR_INVALID_ARGUMENT,
               "bkQueueRun: queue is NULL", "a NULL queue");
    BKT_EXPECT(bkQueueRun(q, BK_NULL_HANDLE, &good), BK_ERROR_INVALID_ARGUMENT,
               "bkQueueRun: plan is NULL", "a NULL plan");
    BKT_EXPECT(bkQueueRun(q, plan, NULL), BK_ERROR_INVALID_ARGUMENT,
               "bkQueueRun: pRunInfo is NULL", "a NULL pRunInfo");
    run = good;
    run.sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO;
    BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.sType",
               "a BkRunInfo of the wrong sType");

    BkContext other = bkt_open_host();
    BkPlan foreign = glu_plan(other);
    BKT_EXPECT(bkQueueRun(q, foreign, &good), BK_ERROR_INVALID_ARGUMENT,
               "bkQueueRun: plan belongs to another context than queue",
               "a plan of another context");
    struct bkt_buffer theirs = bkt_alloc(other, OUT_FLOATS * 4);
    run = run_info(2, (BkDeviceAddress[2]){ in.address, theirs.address });
    if (bkt_device_type(ctx) == BK_DEVICE_TYPE_HOST)
        BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_INVALID_ARGUMENT,
                   "pBindings[1] (output) = ", "the output in memory of another context");
    else
        tap_skip(1, "another device's memory is not in this context's address space");
    bkt_free(other, &theirs);
    bkDestroyPlan(foreign);
    bkDestroyContext(other);

    run = run_info(1, ok);
    BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.bindingCount",
               "bindingCount 1 for a plan of 2");
    run = run_info(2, NULL);
    BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_INVALID_ARGUMENT, "pBindings",
               "pBindings NULL");
    run = run_info(2, (BkDeviceAddress[2]){ in.address, 0 });
    BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_INVALID_ARGUMENT, "pBindings[1]",
               "the output bound to 0");
    run = run_info(2, (BkDeviceAddress[2]){ in.address + 2, out.address });
    BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_MISALIGNED_OPERAND, "pBindings[0]",
               "the input not aligned to its element");
    run = run_info(2, (BkDeviceAddress[2]){ in.address, in.address + 64 });
    BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_INVALID_ARGUMENT, "overlaps",
               "the output inside the input");
    run = good;
    run.pBindingSizes = (const uint64_t[2]){ in.size, out.size - 4 };
    BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_BUFFER_TOO_SMALL, "pBindingSizes[1]",
               "pBindingSizes[1] smaller than the output");

    uint32_t got[OUT_FLOATS];
    bkQueueWaitIdle(q);
    bkt_download(ctx, got, out.address, sizeof got);
    bool untouched = true;
    for (int i = 0; i < OUT_FLOATS; i++)
        untouched = untouched && got[i] == BKT_POISON;
    tap_ok(untouched, "no failed bkQueueRun wrote the output");
    bkt_free(ctx, &in);
    bkt_free(ctx, &out);
}

/* A plan with a workspace: given in BkRunInfo as for bkCmdRun. f16 A and
 * B: the host converts them in its workspace (with a BLAS as without). */
static void test_workspace(BkContext ctx)
{
    BkGemmInfo info = gemm_info();
    info.a = mat(BK_DATA_TYPE_F16, M, K), info.b = mat(BK_DATA_TYPE_F16, K, N);
    BkPlan plan;
    if (bkt_create_plan(ctx, &info, &plan) != BK_SUCCESS)
        tap_bail("bkCreatePlan(GEMM): %s", bkGetLastErrorMessage());
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    bkGetPlanProperties(plan, &props);
    struct bkt_buffer a = bkt_alloc(ctx, M * K * 4), b = bkt_alloc(ctx, K * N * 4),
                      c = bkt_alloc(ctx, M * N * 4), d = bkt_alloc(ctx, M * N * 4),
                      bias = bkt_alloc(ctx, N * 4);
    float host[M * K + K * N + M * N]; /* room for the largest operand */
    for (int i = 0; i < M * K + K * N + M * N; i++)
        host[i] = (float)(i % 5) - 2.0f;
    uint16_t half[M * K + K * N];   /* small integers: exact */
    for (int i = 0; i < M * K + K * N; i++)
        half[i] = bkt_f32_to_f16(host[i]);
    bkt_upload(ctx, a.address, half, M * K * 2);
    bkt_upload(ctx, b.address, half, K * N * 2);
    bkt_upload(ctx, c.address, host, M * N * 4);
    bkt_upload(ctx, bias.address, host, N * 4);
    const BkDeviceAddress bind[5] = { a.address, b.address, c.address, d.address, bias.address };
    float want[M * N], got[M * N];
    reference_run(ctx, plan, 5, bind, &d, want);

    tap_ok(bkt_device_type(ctx) != BK_DEVICE_TYPE_HOST || props.workspaceSize > 0,
           "the host GEMM plan needs a workspace (%llu bytes)",
           (unsigned long long)props.workspaceSize);
    struct bkt_buffer ws = bkt_alloc(ctx, props.workspaceSize + props.workspaceAlignment);
    BkDeviceAddress ws_at = (ws.address + props.workspaceAlignment - 1) /
                            props.workspaceAlignment * props.workspaceAlignment;
    BkQueue q = bkt_queue(ctx);
    BkRunInfo run = run_info(5, bind);
    run.workspace = ws_at;
    run.workspaceSize = props.workspaceSize;
    BKT_EXPECT(queue_run(ctx, q, plan, &run, &d, got), BK_SUCCESS, NULL,
               "a GEMM with its workspace in BkRunInfo");
    tap_ok(memcmp(got, want, sizeof got) == 0, "the GEMM's D equals bkCmdRun's bit for bit");
    if (props.workspaceSize > 0) {
        run.workspaceSize = props.workspaceSize - 1;
        BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_WORKSPACE_TOO_SMALL,
                   "BkRunInfo.workspaceSize", "a workspace one byte short");
        run.workspace = 0;
        run.workspaceSize = props.workspaceSize;
        BKT_EXPECT(bkQueueRun(q, plan, &run), BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.workspace",
                   "no workspace for a plan that needs one");
    } else {
        tap_skip(2, "the plan needs no workspace on this device");
    }
    struct bkt_buffer *bufs[] = { &a, &b, &c, &d, &bias, &ws };
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        bkt_free(ctx, bufs[i]);
    bkDestroyPlan(plan);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    BkPlan plan = glu_plan(ctx);
    test_glu(ctx, plan);
    test_errors(ctx, plan);
    test_workspace(ctx);
    bkDestroyPlan(plan);
    bkDestroyContext(ctx);
    return tap_done();
}
