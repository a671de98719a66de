/* SPDX-License-Identifier: Apache-2.0 */
/* Conversion op infos: every validation rule, with its code and the field
 * the message must name; a run whose output overlaps its input; and empty
 * tensors, which plan and run as no-ops. */
#include "config.h"

#include <string.h>

#include "test_util.h"

static BkContext ctx;

/* A valid info the checks below break one field at a time: {3, 4} f32 to
 * {3, 4} f16. */
static BkConvertInfo base(void)
{
    BkConvertInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONVERT_INFO,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 3, 4 } },
        .output = { .dataType = BK_DATA_TYPE_F16, .rank = 2, .extent = { 3, 4 } },
    };
    return info;
}

static void expect_plan(const BkConvertInfo *info, BkResult code, const char *needle,
                        const char *what)
{
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, info, &plan), code, needle, "%s", what);
    bkDestroyPlan(plan);
}

static void test_rules(void)
{
    BkConvertInfo c = base();
    expect_plan(&c, BK_SUCCESS, NULL, "the valid info");
    c = base(), c.flags = 1;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "BkConvertInfo.flags", "flags 1");
    c = base(), c.reserved = 7;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "BkConvertInfo.reserved", "reserved 7");
    c = base(), c.input.rank = 0;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "input.rank", "input rank 0");
    c = base(), c.input.rank = 9;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "input.rank", "input rank 9");
    c = base(), c.output.rank = 9;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output.rank", "output rank 9");
    c = base(), c.output.rank = 3, c.output.extent[2] = 1;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output.rank", "output rank 3 for input rank 2");
    c = base(), c.output.extent[1] = 5;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output.extent[1]", "output extent differs");
    c = base(), c.input.extent[0] = -3;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "input.extent[0]", "negative input extent");
    c = base(), c.input.stride[0] = 4, c.input.stride[1] = -1;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "input.stride[1]", "negative input stride");
    c = base(), c.output.stride[0] = 0, c.output.stride[1] = 1;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output.stride[0]", "output strides mix zero");

    /* Types: every pair of the nine is taken; others are not. */
    c = base(), c.input.dataType = BK_DATA_TYPE_TF32;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "input.dataType", "TF32 is no tensor type");
    c = base(), c.output.dataType = (BkDataType)77;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output.dataType", "data type 77");
    c = base(), c.output.dataType = BK_DATA_TYPE_UNDEFINED;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output.dataType", "output type UNDEFINED");
    c = base(), c.input.dataType = BK_DATA_TYPE_U8, c.output.dataType = BK_DATA_TYPE_I8;
    expect_plan(&c, BK_SUCCESS, NULL, "u8 to i8 is a conversion");
    c = base(), c.input.dataType = BK_DATA_TYPE_BF16, c.output.dataType = BK_DATA_TYPE_BF16;
    expect_plan(&c, BK_SUCCESS, NULL, "bf16 to bf16 is a copy");

    /* The written tensor must not reach one element twice; the read one may. */
    c = base(), c.output.stride[0] = 1, c.output.stride[1] = 1;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output.stride", "output strides {1, 1} overlap");
    c = base(), c.output.stride[0] = 1, c.output.stride[1] = 3;
    expect_plan(&c, BK_SUCCESS, NULL, "column-major output is fine");
    c = base(), c.input.stride[0] = 1, c.input.stride[1] = 1;
    expect_plan(&c, BK_SUCCESS, NULL, "overlapping reads are fine");

    /* Sizes must fit in 64 bits. */
    c = base(), c.input.extent[0] = c.output.extent[0] = INT64_C(1) << 40;
    c.input.extent[1] = c.output.extent[1] = INT64_C(1) << 40;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "input", "2^80 elements overflow");
    c = base(), c.output.stride[0] = INT64_C(1) << 61, c.output.stride[1] = 1;
    expect_plan(&c, BK_ERROR_INVALID_ARGUMENT, "output", "an output span past 2^64 bytes");
}

/* The generic run-time checks: bindings that overlap, or are short. */
static void test_bindings(void)
{
    BkConvertInfo c = base();
    BkPlan plan = BK_NULL_HANDLE;
    if (bkt_create_plan(ctx, &c, &plan) != BK_SUCCESS) {
        tap_skip(2, "no plan");
        return;
    }
    struct bkt_buffer buf = bkt_alloc(ctx, 256);
    const unsigned char zeros[256] = { 0 }; /* defined inputs (valgrind reads them) */
    bkt_upload(ctx, buf.address, zeros, sizeof zeros);
    BKT_EXPECT(bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ buf.address, buf.address + 8 }),
               BK_ERROR_INVALID_ARGUMENT, "overlaps", "an output over the input is refused");
    BKT_EXPECT(bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ buf.address, buf.address + 48 }),
               BK_SUCCESS, NULL, "an output just past the input runs");
    bkt_free(ctx, &buf);
    bkDestroyPlan(plan);
}

/* Empty tensors plan and run, with null bindings too, and write nothing. */
static void test_empty(void)
{
    BkConvertInfo c = base();
    c.input.extent[0] = c.output.extent[0] = 0;
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, &c, &plan), BK_SUCCESS, NULL, "an empty conversion plans");
    if (!plan) {
        tap_skip(3, "no plan");
        return;
    }
    BKT_EXPECT(bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ 0, 0 }), BK_SUCCESS, NULL,
               "... runs with null bindings");
    struct bkt_buffer in = bkt_alloc(ctx, 64), out = bkt_alloc(ctx, 64);
    bkt_fill(ctx, out.address, out.size, BKT_POISON);
    BKT_EXPECT(bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ in.address, out.address }),
               BK_SUCCESS, NULL, "... and with buffers");
    uint32_t w[16];
    bkt_download(ctx, w, out.address, sizeof w);
    bool untouched = true;
    for (int i = 0; i < 16; i++)
        untouched &= w[i] == BKT_POISON;
    tap_ok(untouched, "... and writes nothing");
    bkt_free(ctx, &in);
    bkt_free(ctx, &out);
    bkDestroyPlan(plan);
}

int main(void)
{
    ctx = bkt_open_device();
    test_rules();
    test_bindings();
    test_empty();
    tap_is_int(bkt_stray_plans(), 0, "failed creates leave the handle NULL");
    bkDestroyContext(ctx);
    return tap_done();
}
