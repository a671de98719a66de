/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activation op infos: every validation rule, with its code and the
 * field the message must name; and empty tensors, which plan and run as
 * no-ops. */
#include "config.h"

#include <string.h>

#include "test_util.h"

static BkContext ctx;

/* Valid infos the checks below break one field at a time:
 * forward input {3, 8} split 1 -> output {3, 4}; backward the same. */
static BkGatedActivationInfo fwd(void)
{
    BkGatedActivationInfo info = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
        .kind = BK_GATED_ACTIVATION_GLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 3, 8 } },
        .output = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 3, 4 } },
    };
    return info;
}

static BkGatedActivationBackwardInfo bwd(void)
{
    BkGatedActivationBackwardInfo info = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO,
        .kind = BK_GATED_ACTIVATION_REGLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 3, 8 } },
        .gradOutput = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 3, 4 } },
        .gradInput = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 3, 8 } },
    };
    return info;
}

/* Plan creation must give code and name needle; a plan made by mistake
 * is destroyed. */
static void expect_plan(const void *info, BkResult code, const char *needle, const char *what)
{
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, info, &plan), code, needle, "%s", what);
    bkDestroyPlan(plan);
}

static void test_forward_rules(void)
{
    BkGatedActivationInfo f = fwd();
    expect_plan(&f, BK_SUCCESS, NULL, "the valid forward info");

    f = fwd(), f.input.extent[1] = 7, f.output.extent[1] = 3;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.extent[1]", "odd extent along splitAxis");
    f = fwd(), f.input.rank = 0;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.rank", "input rank 0");
    f = fwd(), f.input.rank = 9;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.rank", "input rank 9");
    f = fwd(), f.output.rank = 9;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.rank", "output rank 9");
    f = fwd(), f.output.rank = 3, f.output.extent[2] = 1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.rank", "output rank 3 for input rank 2");
    f = fwd(), f.splitAxis = 2;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "splitAxis", "splitAxis = rank");
    f = fwd(), f.splitAxis = UINT32_MAX;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "splitAxis", "splitAxis UINT32_MAX");
    f = fwd(), f.input.extent[0] = -3, f.output.extent[0] = -3;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.extent[0]", "negative input extent");
    f = fwd(), f.output.extent[0] = -3;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.extent[0]", "negative output extent");

    f = fwd(), f.input.stride[0] = 8, f.input.stride[1] = -1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.stride[1]", "negative input stride");
    f = fwd(), f.input.stride[0] = 8, f.input.stride[1] = 0;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.stride[1]", "input strides {8, 0} mix zero");
    f = fwd(), f.output.stride[0] = 0, f.output.stride[1] = 1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.stride[0]",
                "output strides {0, 1} mix zero");

    f = fwd(), f.output.dataType = BK_DATA_TYPE_F16;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.dataType", "output f16, input f32");
    f = fwd(), f.input.dataType = f.output.dataType = BK_DATA_TYPE_I32;
    expect_plan(&f, BK_ERROR_UNSUPPORTED, "dataType", "i32 is unsupported");
    f = fwd(), f.input.dataType = f.output.dataType = BK_DATA_TYPE_U8;
    expect_plan(&f, BK_ERROR_UNSUPPORTED, "dataType", "u8 is unsupported");
    f = fwd(), f.input.dataType = f.output.dataType = (BkDataType)77;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.dataType", "data type 77 is no BkDataType");
    f = fwd(), f.input.dataType = f.output.dataType = BK_DATA_TYPE_UNDEFINED;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input.dataType", "data type UNDEFINED");
    f = fwd(), f.kind = (BkGatedActivationKind)5;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "kind", "kind 5 is unknown");
    f = fwd(), f.kind = (BkGatedActivationKind)-1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "kind", "kind -1 is unknown");

    f = fwd(), f.output.extent[1] = 8;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.extent[1]",
                "output extent along splitAxis is not half");
    f = fwd(), f.output.extent[0] = 2;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.extent[0]",
                "output extent off the split axis differs");

    /* A written tensor must not reach one element twice; a read one may. */
    f = fwd(), f.output.stride[0] = 1, f.output.stride[1] = 1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.stride", "output strides {1, 1} overlap");
    f = fwd(), f.output.stride[0] = 2, f.output.stride[1] = 1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output.stride",
                "output strides {2, 1} over {3, 4} overlap");
    f = fwd(), f.output.stride[0] = 1, f.output.stride[1] = 3;
    expect_plan(&f, BK_SUCCESS, NULL, "output strides {1, 3} (column-major) are fine");
    f = fwd(), f.input.stride[0] = 1, f.input.stride[1] = 1;
    expect_plan(&f, BK_SUCCESS, NULL, "input strides {1, 1} (overlapping reads) are fine");

    /* Sizes must fit in 64 bits. */
    f = fwd(), f.input.extent[0] = f.output.extent[0] = INT64_C(1) << 40;
    f.input.extent[1] = INT64_C(1) << 40, f.output.extent[1] = INT64_C(1) << 39;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input", "2^80 elements overflow");
    f = fwd(), f.input.stride[0] = INT64_MAX / 2, f.input.stride[1] = 1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "input", "a byte span past 2^64 overflows");
    f = fwd(), f.output.stride[0] = INT64_C(1) << 61, f.output.stride[1] = 1;
    expect_plan(&f, BK_ERROR_INVALID_ARGUMENT, "output", "an output span of 2^64 bytes overflows");
}

static void test_backward_rules(void)
{
    BkGatedActivationBackwardInfo b = bwd();
    expect_plan(&b, BK_SUCCESS, NULL, "the valid backward info");
    b = bwd(), b.gradOutput.extent[1] = 8;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradOutput.extent[1]",
                "gradOutput is not half along splitAxis");
    b = bwd(), b.gradOutput.extent[0] = 4;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradOutput.extent[0]",
                "gradOutput differs off the split axis");
    b = bwd(), b.gradInput.extent[1] = 4;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradInput.extent[1]",
                "gradInput has the output's shape, not the input's");
    b = bwd(), b.gradInput.extent[0] = 2;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradInput.extent[0]", "gradInput extent differs");
    b = bwd(), b.gradInput.dataType = BK_DATA_TYPE_F64;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradInput.dataType", "gradInput f64, input f32");
    b = bwd(), b.gradOutput.dataType = BK_DATA_TYPE_BF16;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradOutput.dataType",
                "gradOutput bf16, input f32");
    b = bwd(), b.gradInput.rank = 0;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradInput.rank", "gradInput rank 0");
    b = bwd(), b.gradInput.stride[0] = 1, b.gradInput.stride[1] = 1;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradInput.stride", "gradInput overlaps itself");
    b = bwd(), b.gradOutput.stride[0] = 1, b.gradOutput.stride[1] = 1;
    expect_plan(&b, BK_SUCCESS, NULL, "gradOutput may overlap itself (it is read)");
    b = bwd(), b.splitAxis = 2;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "splitAxis", "backward splitAxis = rank");
    b = bwd(), b.kind = (BkGatedActivationKind)99;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "kind", "backward kind 99");
    b = bwd(), b.input.dataType = b.gradOutput.dataType = b.gradInput.dataType = BK_DATA_TYPE_I32;
    expect_plan(&b, BK_ERROR_UNSUPPORTED, "dataType", "backward i32 is unsupported");
    b = bwd(), b.gradInput.stride[1] = 2;
    expect_plan(&b, BK_ERROR_INVALID_ARGUMENT, "gradInput.stride[0]",
                "gradInput strides {0, 2} mix zero");
}

/* A zero extent anywhere makes empty tensors: the plan is made and a run
 * succeeds, with bindings 0 or real ones it must leave alone. */
static void test_empty(void)
{
    struct bkt_buffer in = bkt_alloc(ctx, 64), out = bkt_alloc(ctx, 64);
    /* {0, 2^60}: the largest F32 extent whose non-empty twin {1, 2^60}
     * still fits; {0, 2^62} does not and is refused below. */
    const int64_t shapes[][2] = { { 0, 8 }, { 3, 0 }, { 0, INT64_C(1) << 60 } };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        BkGatedActivationInfo f = fwd();
        f.input.extent[0] = f.output.extent[0] = shapes[i][0];
        f.input.extent[1] = shapes[i][1];
        f.output.extent[1] = shapes[i][1] / 2;
        BkPlan plan = BK_NULL_HANDLE;
        BKT_EXPECT(bkt_create_plan(ctx, &f, &plan), BK_SUCCESS, NULL,
                   "empty input {%lld, %lld}: plan", (long long)shapes[i][0],
                   (long long)shapes[i][1]);
        if (!plan) {
            tap_skip(3, "no plan");
            continue;
        }
        BKT_EXPECT(bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ 0, 0 }), BK_SUCCESS, NULL,
                   "... runs with bindings 0");
        bkt_fill(ctx, out.address, out.size, BKT_POISON);
        BKT_EXPECT(bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ in.address, out.address }),
                   BK_SUCCESS, NULL, "... runs with real bindings");
        uint32_t w[16];
        bkt_download(ctx, w, out.address, sizeof w);
        bool untouched = true;
        for (int k = 0; k < 16; k++)
            untouched = untouched && w[k] == BKT_POISON;
        tap_ok(untouched, "... and writes nothing");
        bkDestroyPlan(plan);
    }
    /* An extent of 0 does not lift the size limits from the others. */
    BkGatedActivationInfo huge = fwd();
    huge.input.extent[0] = huge.output.extent[0] = 0;
    huge.input.extent[1] = INT64_C(1) << 62;
    huge.output.extent[1] = INT64_C(1) << 61;
    expect_plan(&huge, BK_ERROR_INVALID_ARGUMENT, "BkGatedActivationInfo.input",
                "empty input {0, 2^62}: its other extent spans past 64 bits");
    BkGatedActivationBackwardInfo b = bwd();
    b.input.extent[0] = b.gradOutput.extent[0] = b.gradInput.extent[0] = 0;
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, &b, &plan), BK_SUCCESS, NULL, "empty backward: plan");
    BKT_EXPECT(bkt_run(ctx, plan, 3, (BkDeviceAddress[3]){ 0, 0, 0 }), BK_SUCCESS, NULL,
               "... runs with bindings 0");
    bkDestroyPlan(plan);
    bkt_free(ctx, &in);
    bkt_free(ctx, &out);
}

int main(void)
{
    ctx = bkt_open_device();
    test_forward_rules();
    test_backward_rules();
    test_empty();
    bkDestroyContext(ctx);
    return tap_done();
}
