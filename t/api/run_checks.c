/* SPDX-License-Identifier: Apache-2.0 */
/* bkCmdRun's run-time checks, shared by every op: binding count, null,
 * alignment, sizes, overlap (no in-place runs), state, and a plan from
 * another context. A failed bkCmdRun records nothing. */
#include "config.h"

#include <string.h>

#include "test_util.h"

static BkContext ctx;
static BkCommandBuffer cmd;
static BkPlan forward, backward;

/* Forward f32: input {4, 8} (128 bytes), output {4, 4} (64 bytes).
 * Backward f32: input {4, 8}, gradOutput {4, 4}, gradInput {4, 8}. */
#define IN_BYTES 128
#define OUT_BYTES 64

static BkPlan make_plan(bool back)
{
    BkTensorDesc full = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 8 } };
    BkTensorDesc half = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 4 } };
    BkGatedActivationInfo f = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, .kind = BK_GATED_ACTIVATION_GLU,
        .splitAxis = 1, .input = full, .output = half,
    };
    BkGatedActivationBackwardInfo b = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO,
        .kind = BK_GATED_ACTIVATION_GLU, .splitAxis = 1, .input = full, .gradOutput = half,
        .gradInput = full,
    };
    BkPlan plan = BK_NULL_HANDLE;
    if (bkt_create_plan(ctx, back ? (const void *)&b : (const void *)&f, &plan) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    return plan;
}

static BkRunInfo run_info(uint32_t count, const BkDeviceAddress *bindings, const uint64_t *sizes)
{
    BkRunInfo info = {
        .sType = BK_STRUCTURE_TYPE_RUN_INFO,
        .bindingCount = count,
        .pBindings = bindings,
        .pBindingSizes = sizes,
    };
    return info;
}

static BkResult run(BkPlan plan, uint32_t count, const BkDeviceAddress *bindings,
                    const uint64_t *sizes)
{
    BkRunInfo info = run_info(count, bindings, sizes);
    return bkCmdRun(cmd, plan, &info);
}

static void test_forward_bindings(const struct bkt_buffer *in, const struct bkt_buffer *out,
                                  const struct bkt_buffer *big)
{
    const BkDeviceAddress ok[2] = { in->address, out->address };
    BKT_EXPECT(run(forward, 2, ok, NULL), BK_SUCCESS, NULL, "a valid run records");
    BKT_EXPECT(run(forward, 1, ok, NULL), BK_ERROR_INVALID_ARGUMENT, "bindingCount",
               "bindingCount 1 for a plan of 2");
    BKT_EXPECT(run(forward, 3, (BkDeviceAddress[3]){ in->address, out->address, big->address },
                   NULL),
               BK_ERROR_INVALID_ARGUMENT, "bindingCount", "bindingCount 3 for a plan of 2");
    BKT_EXPECT(run(forward, 2, NULL, NULL), BK_ERROR_INVALID_ARGUMENT, "pBindings",
               "pBindings NULL");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ 0, out->address }, NULL),
               BK_ERROR_INVALID_ARGUMENT, "pBindings[0]", "input bound to 0");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ in->address, 0 }, NULL),
               BK_ERROR_INVALID_ARGUMENT, "pBindings[1]", "output bound to 0");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ big->address + 2, out->address }, NULL),
               BK_ERROR_MISALIGNED_OPERAND, "pBindings[0]", "input not aligned to 4 bytes");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ in->address, big->address + 6 }, NULL),
               BK_ERROR_MISALIGNED_OPERAND, "pBindings[1]", "output not aligned to 4 bytes");

    BKT_EXPECT(run(forward, 2, ok, (uint64_t[2]){ IN_BYTES - 4, OUT_BYTES }),
               BK_ERROR_BUFFER_TOO_SMALL, "pBindingSizes[0]", "pBindingSizes[0] too small");
    BKT_EXPECT(run(forward, 2, ok, (uint64_t[2]){ IN_BYTES, OUT_BYTES - 1 }),
               BK_ERROR_BUFFER_TOO_SMALL, "pBindingSizes[1]", "pBindingSizes[1] too small");
    BKT_EXPECT(run(forward, 2, ok, (uint64_t[2]){ IN_BYTES, 0 }), BK_SUCCESS, NULL,
               "pBindingSizes exact, or 0 for unknown");
    /* The binding lies in a BkMemory with too few bytes left. */
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ in->address + 4, out->address }, NULL),
               BK_ERROR_BUFFER_TOO_SMALL, "pBindings[0]", "input runs past the end of its BkMemory");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ in->address, big->address + big->size - 60 },
                   NULL),
               BK_ERROR_BUFFER_TOO_SMALL, "pBindings[1]",
               "output runs past the end of its BkMemory");

    /* Ops do not run in place: a written binding overlaps no other. */
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ big->address, big->address + 64 }, NULL),
               BK_ERROR_INVALID_ARGUMENT, "in place", "output inside the input's span");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ big->address + 64, big->address + 32 },
                   NULL),
               BK_ERROR_INVALID_ARGUMENT, "in place", "output overlapping the input's start");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ big->address + 64, big->address }, NULL),
               BK_SUCCESS, NULL, "output right before the input in one allocation");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ big->address, big->address }, NULL),
               BK_ERROR_INVALID_ARGUMENT, "in place", "output at the input's address");
    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ big->address, big->address + IN_BYTES },
                   NULL),
               BK_SUCCESS, NULL, "output right after the input in one allocation");
}

static void test_backward_bindings(const struct bkt_buffer *big)
{
    BkDeviceAddress x = big->address, dy = big->address + 256, dx = big->address + 512;
    BKT_EXPECT(run(backward, 3, (BkDeviceAddress[3]){ x, dy, dx }, NULL), BK_SUCCESS, NULL,
               "a valid backward run records");
    BKT_EXPECT(run(backward, 3, (BkDeviceAddress[3]){ x, x + 64, dx }, NULL), BK_SUCCESS, NULL,
               "the two inputs may overlap (both are read)");
    BKT_EXPECT(run(backward, 3, (BkDeviceAddress[3]){ x, dy, x + 64 }, NULL),
               BK_ERROR_INVALID_ARGUMENT, "in place", "gradInput overlapping input");
    BKT_EXPECT(run(backward, 3, (BkDeviceAddress[3]){ x, dy, dy + 32 }, NULL),
               BK_ERROR_INVALID_ARGUMENT, "in place", "gradInput overlapping gradOutput");
    BKT_EXPECT(run(backward, 2, (BkDeviceAddress[2]){ x, dy }, NULL), BK_ERROR_INVALID_ARGUMENT,
               "bindingCount", "bindingCount 2 for a plan of 3");
    BKT_EXPECT(run(backward, 3, (BkDeviceAddress[3]){ x, dy, dx + 2 }, NULL),
               BK_ERROR_MISALIGNED_OPERAND, "pBindings[2]", "gradInput not aligned");
}

/* What BkPlanBindingProperties reports is what bkCmdRun checks, slot by
 * slot: pBindingSizes[i] = size is accepted and size - 1 refused naming
 * the slot, an address alignment / 2 off is misaligned; and no slot of a
 * gated op may share an address with another (no in-place case). */
static void test_reported_limits(BkPlan plan, const char *what, const struct bkt_buffer *big)
{
    BkPlanBindingProperties bind = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &bind };
    if (!tap_ok(bkGetPlanProperties(plan, &props) == BK_SUCCESS && bind.bindingCount >= 2 &&
                bind.bindingCount <= 3, "%s: BkPlanBindingProperties", what))
        return;
    const uint32_t n = bind.bindingCount;
    BkDeviceAddress b[3];
    for (uint32_t i = 0; i < n; i++)
        b[i] = big->address + 256 * i;
    long wrong = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t sizes[3] = { 0 };
        sizes[i] = bind.bindings[i].size;
        BkResult r1 = run(plan, n, b, sizes);
        sizes[i]--;
        bkt_expect_begin();
        BkResult r2 = run(plan, n, b, sizes);
        bool named = r2 == BK_ERROR_BUFFER_TOO_SMALL &&
                     strstr(bkGetLastErrorMessage(), bind.bindings[i].name);
        b[i] += bind.bindings[i].alignment / 2;
        BkResult r3 = run(plan, n, b, NULL);
        b[i] -= bind.bindings[i].alignment / 2;
        if ((r1 != BK_SUCCESS || !named || r3 != BK_ERROR_MISALIGNED_OPERAND) && wrong++ == 0)
            tap_diag("%s slot %u (%s): size gives %s, size - 1 %s (%s), misaligned %s", what, i,
                     bind.bindings[i].name, bkResultString(r1), bkResultString(r2),
                     bkGetLastErrorMessage(), bkResultString(r3));
    }
    tap_ok(wrong == 0, "%s: each reported size and alignment is the limit bkCmdRun checks", what);
    long aliased = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            if (i == j || !bind.bindings[i].written)
                continue;
            BkDeviceAddress c[3] = { b[0], n > 1 ? b[1] : 0, n > 2 ? b[2] : 0 };
            c[i] = c[j];
            aliased += run(plan, n, c, NULL) != BK_ERROR_INVALID_ARGUMENT;
        }
    tap_ok(aliased == 0, "%s: a written slot at the address of any other slot is refused (no "
           "in-place case)", what);
}

static void test_call_errors(const struct bkt_buffer *in, const struct bkt_buffer *out)
{
    const BkDeviceAddress ok[2] = { in->address, out->address };
    BkRunInfo info = run_info(2, ok, NULL);
    info.sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO;
    BKT_EXPECT(bkCmdRun(cmd, forward, &info), BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.sType",
               "wrong sType on BkRunInfo");
    BKT_EXPECT(bkCmdRun(cmd, forward, NULL), BK_ERROR_INVALID_ARGUMENT, "pRunInfo",
               "pRunInfo NULL");
    info = run_info(2, ok, NULL);
    BKT_EXPECT(bkCmdRun(cmd, BK_NULL_HANDLE, &info), BK_ERROR_INVALID_ARGUMENT, "plan",
               "plan NULL");
    BKT_EXPECT(bkCmdRun(BK_NULL_HANDLE, forward, &info), BK_ERROR_INVALID_ARGUMENT,
               "commandBuffer", "commandBuffer NULL");

    BkBaseInStructure ext = { .sType = (BkStructureType)0x4242 };
    info.pNext = &ext;
    BKT_EXPECT(bkCmdRun(cmd, forward, &info), BK_SUCCESS, NULL, "an unknown pNext is skipped");

    /* A plan is bound to the context it was made in. */
    BkContext other = bkt_open_host();
    BkGatedActivationInfo f = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, .kind = BK_GATED_ACTIVATION_GLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 8 } },
        .output = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 4 } },
    };
    BkPlan foreign = BK_NULL_HANDLE;
    bkt_create_plan(other, &f, &foreign);
    info = run_info(2, ok, NULL);
    BKT_EXPECT(bkCmdRun(cmd, foreign, &info), BK_ERROR_INVALID_ARGUMENT, "plan",
               "a plan from another context");
    bkDestroyPlan(foreign);
    bkDestroyContext(other);
}

/* Record only failures into a buffer: submitting it must change nothing. */
static void test_failures_record_nothing(const struct bkt_buffer *in, const struct bkt_buffer *out)
{
    float x[32];
    for (int i = 0; i < 32; i++)
        x[i] = (float)i / 8.0f;
    bkt_upload(ctx, in->address, x, sizeof x);
    if (bkt_fill(ctx, out->address, out->size, BKT_POISON) != BK_SUCCESS)
        tap_bail("fill: %s", bkGetLastErrorMessage());

    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    bkBeginCommandBuffer(cmd, &begin);
    run(forward, 1, (BkDeviceAddress[2]){ in->address, out->address }, NULL);
    run(forward, 2, (BkDeviceAddress[2]){ in->address, 0 }, NULL);
    run(forward, 2, (BkDeviceAddress[2]){ in->address, out->address }, (uint64_t[2]){ 4, 4 });
    BkQueue q = bkt_queue(ctx);
    bool ok = bkEndCommandBuffer(cmd) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS &&
              bkQueueWaitIdle(q) == BK_SUCCESS;
    uint32_t y[16];
    bkt_download(ctx, y, out->address, sizeof y);
    bool untouched = true;
    for (int i = 0; i < 16; i++)
        untouched = untouched && y[i] == BKT_POISON;
    tap_ok(ok && untouched, "failed bkCmdRun calls recorded nothing");

    BKT_EXPECT(run(forward, 2, (BkDeviceAddress[2]){ in->address, out->address }, NULL),
               BK_ERROR_INVALID_STATE, "bkCmdRun", "bkCmdRun into a buffer that is not recording");
    /* The same run, recorded properly, does write the output. */
    BKT_EXPECT(bkt_run(ctx, forward, 2, (BkDeviceAddress[2]){ in->address, out->address }),
               BK_SUCCESS, NULL, "the valid run");
    bkt_download(ctx, y, out->address, sizeof y);
    untouched = false;
    for (int i = 0; i < 16; i++)
        untouched = untouched || y[i] == BKT_POISON;
    tap_ok(!untouched, "... writes every output element");
}

int main(void)
{
    ctx = bkt_open_device();
    forward = make_plan(false);
    backward = make_plan(true);
    struct bkt_buffer in = bkt_alloc(ctx, IN_BYTES), out = bkt_alloc(ctx, OUT_BYTES);
    struct bkt_buffer big = bkt_alloc(ctx, 1024);
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        tap_bail("bkAllocateCommandBuffer: %s", bkGetLastErrorMessage());
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    bkBeginCommandBuffer(cmd, &begin);
    test_forward_bindings(&in, &out, &big);
    test_backward_bindings(&big);
    test_reported_limits(forward, "forward", &big);
    test_reported_limits(backward, "backward", &big);
    test_call_errors(&in, &out);
    bkEndCommandBuffer(cmd);   /* never submitted: the valid runs above used no real data */
    test_failures_record_nothing(&in, &out);

    bkFreeCommandBuffer(cmd);
    bkDestroyPlan(forward);
    bkDestroyPlan(backward);
    bkt_free(ctx, &in);
    bkt_free(ctx, &out);
    bkt_free(ctx, &big);
    bkDestroyContext(ctx);
    return tap_done();
}
