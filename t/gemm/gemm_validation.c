/* SPDX-License-Identifier: Apache-2.0 */
/* The dense GEMM's validation, on the host device: every documented rule
 * of BkGemmInfo broken one field at a time (result code, and the message
 * naming the field, and for shape rules the dimension and both values);
 * for the whole GEMM family (dense and 2:4, whose info rules are in
 * t/sparse24/sparse24_validation.c) what BkPlanBindingProperties reports for each
 * plan (checked against the test's own arithmetic and against the
 * run-time checks it describes), the run-time checks on these plans
 * (workspace, alignment, buffer sizes, overlap and the one in-place case,
 * C == D), empty problems, and that nothing leaks: the context and every
 * object made from it use the counting allocator. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_infos.h"
#include "test_util.h"

static BkContext ctx;
static BkCommandBuffer cmd;        /* recording; never submitted */

/* ---- Expectations ------------------------------------------------------------ */

#define EXPECT_PLAN(info, code, what, ...) BKT_EXPECT_PLAN(ctx, (info), (code), (what), __VA_ARGS__)

/* A plan the later checks need: one TAP line; NULL when it cannot be made. */
static BkPlan make_plan(const void *info, const char *what)
{
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, info, &plan), BK_SUCCESS, NULL, "plan: %s", what);
    return plan;
}

/* Byte span of a descriptor, the test's own arithmetic: 0 when empty,
 * all-zero strides meaning row-major contiguous. */
static uint64_t span_of(const BkTensorDesc *d)
{
    if (d->dataType == BK_DATA_TYPE_UNDEFINED)
        return 0;
    int64_t stride[BK_MAX_TENSOR_RANK], s = 1;
    bool zero = true;
    for (uint32_t k = 0; k < d->rank; k++)
        zero = zero && d->stride[k] == 0;
    for (uint32_t k = d->rank; k-- > 0;) {
        if (d->extent[k] == 0)
            return 0;
        stride[k] = zero ? s : d->stride[k];
        s *= d->extent[k];
    }
    uint64_t last = 0;
    for (uint32_t k = 0; k < d->rank; k++)
        last += (uint64_t)(d->extent[k] - 1) * (uint64_t)stride[k];
    return (last + 1) * bkt_type_size(d->dataType);
}

static BkPlanProperties properties(BkPlan plan, BkPlanBindingProperties *bind)
{
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = bind };
    if (bind) {
        memset(bind, 0xEE, sizeof *bind);
        bind->sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES;
        bind->pNext = NULL;
    }
    if (bkGetPlanProperties(plan, &props) != BK_SUCCESS)
        tap_bail("bkGetPlanProperties: %s", bkGetLastErrorMessage());
    return props;
}

/* Records one run into cmd (never submitted). */
static BkResult record(BkPlan plan, uint32_t count, const BkDeviceAddress *bindings,
                       const uint64_t *sizes, BkDeviceAddress workspace, uint64_t workspace_size)
{
    BkRunInfo run = {
        .sType = BK_STRUCTURE_TYPE_RUN_INFO,
        .bindingCount = count,
        .pBindings = bindings,
        .pBindingSizes = sizes,
        .workspace = workspace,
        .workspaceSize = workspace_size,
    };
    return bkCmdRun(cmd, plan, &run);
}

/* One buffer for the workspace of every recording check. */
static struct bkt_buffer workspace_buf;

static BkResult record_ws(BkPlan plan, uint32_t count, const BkDeviceAddress *bindings,
                          const uint64_t *sizes)
{
    BkPlanProperties props = properties(plan, NULL);
    return record(plan, count, bindings, sizes, props.workspaceSize ? workspace_buf.address : 0,
                  props.workspaceSize);
}

/* ---- Dense GEMM: the info rules ------------------------------------------------ */

static void test_gemm_rules(void)
{
    BkGemmInfo g = gemm_info();
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: the valid info (C, bias, RELU)", NULL);
    g = gemm_info(), g.c = ABSENT_DESC, g.bias = ABSENT_DESC, g.beta = 0;
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: no C, no bias, beta 0", NULL);
    g = gemm_info(), g.c = ABSENT_DESC, g.beta = 0, g.c.rank = 9, g.c.extent[0] = -5;
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: an absent C is not read, whatever its other fields", NULL);
    g = gemm_info(), g.bias = ABSENT_DESC, g.bias.rank = 3;
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: an absent bias is not read", NULL);
    g = gemm_info(), g.transA = BK_GEMM_OP_T, g.a = mat(BK_DATA_TYPE_F32, K, M);
    g.transB = BK_GEMM_OP_T, g.b = mat(BK_DATA_TYPE_F32, N, K);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: transA = transB = T with transposed shapes", NULL);
    g = gemm_info(), g.flags = BK_GEMM_ALLOW_TF32_BIT;
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: ALLOW_TF32 on f32", NULL);
    g = gemm_info(), g.alpha = -0.0, g.beta = 0.0;
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: alpha -0, beta 0 with C", NULL);
    BkBaseInStructure ext = { .sType = (BkStructureType)0x5151 };
    g = gemm_info(), g.pNext = &ext;
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: an unknown pNext struct is skipped", NULL);

    /* Enums, flags, scalars. */
    g = gemm_info(), g.transA = (BkGemmOp)2;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: transA 2", "BkGemmInfo.transA", "2");
    g = gemm_info(), g.transB = (BkGemmOp)-1;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: transB -1", "BkGemmInfo.transB", "-1");
    g = gemm_info(), g.activation = (BkGemmActivation)3;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: activation 3", "BkGemmInfo.activation");
    g = gemm_info(), g.activation = BK_GEMM_ACTIVATION_MAX_ENUM;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: activation MAX_ENUM",
                "BkGemmInfo.activation");
    g = gemm_info(), g.flags = 2;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: flags 0x2", "BkGemmInfo.flags", "0x2");
    g = gemm_info(), g.flags = 0x80000001u;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: flags with a high bit beside TF32",
                "BkGemmInfo.flags");
    g = gemm_info(), g.alpha = NAN;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: alpha NaN", "BkGemmInfo.alpha", "finite");
    g = gemm_info(), g.alpha = -INFINITY;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: alpha -inf", "BkGemmInfo.alpha");
    g = gemm_info(), g.beta = INFINITY;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: beta inf", "BkGemmInfo.beta", "finite");
    g = gemm_info(), g.beta = NAN, g.c = ABSENT_DESC;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: beta NaN without C", "BkGemmInfo.beta");
    g = gemm_info(), g.c = ABSENT_DESC;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: beta 0.5 without C", "BkGemmInfo.beta",
                "0.5", "needs c");
    g = gemm_info(), g.c = ABSENT_DESC, g.beta = -1e-300;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a tiny beta without C is still not 0",
                "BkGemmInfo.beta");

    /* Ranks. */
    g = gemm_info(), g.a = vec(BK_DATA_TYPE_F32, K);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a of rank 1", "BkGemmInfo.a.rank", "1");
    g = gemm_info(), g.b.rank = 4, g.b.extent[2] = 1, g.b.extent[3] = 1;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: b of rank 4", "BkGemmInfo.b.rank", "4");
    g = gemm_info(), g.c.rank = 4, g.c.extent[2] = g.c.extent[3] = 1;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: c of rank 4", "BkGemmInfo.c.rank", "4");
    g = gemm_info(), g.d = vec(BK_DATA_TYPE_F32, M * N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: d of rank 1", "BkGemmInfo.d.rank", "1");
    g = gemm_info(), g.d.rank = 0;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: d of rank 0", "BkGemmInfo.d.rank");
    g = gemm_info(), g.a.rank = 9;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a of rank 9", "BkGemmInfo.a.rank");

    /* Layouts: one stride must be 1, the other the leading dimension. */
    g = gemm_info(), g.a = mat_s(BK_DATA_TYPE_F32, M, K, 16, 2);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a with neither stride 1",
                "BkGemmInfo.a", "stride[0] = 16", "stride[1] = 2");
    g = gemm_info(), g.d = mat_s(BK_DATA_TYPE_F32, M, N, 2, 8);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: d with neither stride 1", "BkGemmInfo.d",
                "stride[0] = 2", "stride[1] = 8");
    g = gemm_info(), g.a = mat_s(BK_DATA_TYPE_F32, M, K, 7, 1);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: row-major a with leading dimension 7 < 8",
                "BkGemmInfo.a.stride[0] = 7", "extent[1] = 8");
    g = gemm_info(), g.b = mat_s(BK_DATA_TYPE_F32, K, N, 1, 7);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: column-major b with leading dimension 7 < 8",
                "BkGemmInfo.b.stride[1] = 7", "extent[0] = 8");
    g = gemm_info(), g.c = mat_s(BK_DATA_TYPE_F32, M, N, 1, 3);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: column-major c with leading dimension 3 < 4",
                "BkGemmInfo.c.stride[1] = 3", "extent[0] = 4");
    g = gemm_info(), g.d = mat_s(BK_DATA_TYPE_F32, M, N, 5, 1);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: row-major d with leading dimension 5 < 6",
                "BkGemmInfo.d.stride[0] = 5", "extent[1] = 6");
    g = gemm_info(), g.a = mat_s(BK_DATA_TYPE_F32, M, K, -8, 1);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a negative stride", "BkGemmInfo.a.stride[0]");
    g = gemm_info(), g.a = mat_s(BK_DATA_TYPE_F32, M, K, 1, 4);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: column-major a with leading dimension 4", NULL);
    g = gemm_info(), g.a = mat_s(BK_DATA_TYPE_F32, M, K, 11, 1);
    g.d = mat_s(BK_DATA_TYPE_F32, M, N, 1, 9);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: padded row-major a, padded column-major d", NULL);
    /* A vector takes either layout: the stride that steps over 1 is unused. */
    g = gemm_info(), g.a = mat_s(BK_DATA_TYPE_F32, 1, K, 3, 5), g.c = mat(BK_DATA_TYPE_F32, 1, N);
    g.d = mat_s(BK_DATA_TYPE_F32, 1, N, 2, 1);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: M = 1, a row vector with strides {3, 5} (column-major, "
                "ld 5), d with an unused row stride 2", NULL);
    g = gemm_info(), g.b = mat_s(BK_DATA_TYPE_F32, K, 1, 1, 3), g.c = mat(BK_DATA_TYPE_F32, M, 1);
    g.d = mat_s(BK_DATA_TYPE_F32, M, 1, 1, 1), g.bias = vec(BK_DATA_TYPE_F32, 1);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: N = 1, b and d column vectors with any unused stride",
                NULL);

    /* Shapes: K, M, N and C, naming the dimension and both values. */
    g = gemm_info(), g.b = mat(BK_DATA_TYPE_F32, 7, N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: K 8 vs 7", "K disagrees", "8 columns",
                "7 rows");
    g = gemm_info(), g.transA = BK_GEMM_OP_T, g.a = mat(BK_DATA_TYPE_F32, 9, M);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: K 9 (transA = T) vs 8", "K disagrees",
                "9 columns", "transA = T", "8 rows");
    g = gemm_info(), g.transB = BK_GEMM_OP_T, g.b = mat(BK_DATA_TYPE_F32, N, 5);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: K 8 vs 5 (transB = T)", "K disagrees",
                "8 columns", "5 rows", "transB = T");
    g = gemm_info(), g.transB = BK_GEMM_OP_T;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: transB = T on an untransposed b",
                "disagrees");
    g = gemm_info(), g.d = mat(BK_DATA_TYPE_F32, 5, N), g.c = g.d;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: M 5 (d) vs 4 (a)", "M disagrees",
                "5 rows", "has 4");
    g = gemm_info(), g.d = mat(BK_DATA_TYPE_F32, M, 7), g.c = g.d;
    g.bias = vec(BK_DATA_TYPE_F32, 7);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: N 7 (d) vs 6 (b)", "N disagrees",
                "7 columns", "has 6");
    g = gemm_info(), g.c = mat(BK_DATA_TYPE_F32, M, 5);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: c [4, 5] vs d [4, 6]", "BkGemmInfo.c",
                "[4, 5]", "[4, 6]");
    g = gemm_info(), g.c = mat(BK_DATA_TYPE_F32, N, M);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: c [6, 4] vs d [4, 6]", "BkGemmInfo.c",
                "[6, 4]", "[4, 6]");

    /* Batches: rank-3 operands against the output. */
    g = gemm_info(), g.a = mat3(BK_DATA_TYPE_F32, 3, M, K), g.b = mat3(BK_DATA_TYPE_F32, 3, K, N);
    g.c = mat3(BK_DATA_TYPE_F32, 3, M, N), g.d = mat3(BK_DATA_TYPE_F32, 3, M, N);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: a batch of 3", NULL);
    g.b = mat(BK_DATA_TYPE_F32, K, N), g.c = mat(BK_DATA_TYPE_F32, M, N);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: a batch of 3 with b and c shared (rank 2)", NULL);
    g = gemm_info(), g.a = mat3(BK_DATA_TYPE_F32, 2, M, K), g.d = mat3(BK_DATA_TYPE_F32, 3, M, N);
    g.c = ABSENT_DESC, g.beta = 0;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a batch 2 vs d batch 3",
                "BkGemmInfo.a.extent[0] = 2", "d.extent[0] = 3");
    g = gemm_info(), g.b = mat3(BK_DATA_TYPE_F32, 4, K, N), g.d = mat3(BK_DATA_TYPE_F32, 3, M, N);
    g.c = mat3(BK_DATA_TYPE_F32, 3, M, N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: b batch 4 vs d batch 3",
                "BkGemmInfo.b.extent[0] = 4", "d.extent[0] = 3");
    g = gemm_info(), g.c = mat3(BK_DATA_TYPE_F32, 2, M, N), g.d = mat3(BK_DATA_TYPE_F32, 3, M, N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: c batch 2 vs d batch 3",
                "BkGemmInfo.c.extent[0] = 2", "d.extent[0] = 3");
    g = gemm_info(), g.a = mat3(BK_DATA_TYPE_F32, 2, M, K);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: rank-3 a with a rank-2 d",
                "BkGemmInfo.a.rank = 3", "d.rank");
    g = gemm_info(), g.b = mat3(BK_DATA_TYPE_F32, 2, K, N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: rank-3 b with a rank-2 d",
                "BkGemmInfo.b.rank = 3");
    g = gemm_info(), g.c = mat3(BK_DATA_TYPE_F32, 1, M, N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: rank-3 c with a rank-2 d",
                "BkGemmInfo.c.rank = 3");
    /* A written d whose batches overlap; a read a may. */
    g = gemm_info(), g.a = mat3(BK_DATA_TYPE_F32, 3, M, K), g.c = ABSENT_DESC, g.beta = 0;
    g.d = (BkTensorDesc){ BK_DATA_TYPE_F32, 3, { 3, M, N }, { 2 * N, N, 1 } };
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: d batches overlapping (batch stride 12)",
                "BkGemmInfo.d.stride[0] = 12", "overlap");
    g.d = mat3(BK_DATA_TYPE_F32, 3, M, N);
    g.a = (BkTensorDesc){ BK_DATA_TYPE_F32, 3, { 3, M, K }, { 1, K, 1 } };
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: a read operand's batches may overlap", NULL);
    g = gemm_info(), g.d = (BkTensorDesc){ BK_DATA_TYPE_F32, 3, { 2, M, N }, { 0, N, 1 } };
    g.c = ABSENT_DESC, g.beta = 0;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: d batch stride 0 among non-zero strides",
                "BkGemmInfo.d.stride[0]");

    /* Types. */
    const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16, bf16 = BK_DATA_TYPE_BF16,
                     f64 = BK_DATA_TYPE_F64;
    g = gemm_info(), g.a.dataType = g.b.dataType = BK_DATA_TYPE_I32;
    g.c.dataType = g.d.dataType = g.bias.dataType = BK_DATA_TYPE_I32;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: i32", "BkGemmInfo.a.dataType",
                "BK_DATA_TYPE_I32");
    g = gemm_info(), g.a.dataType = g.b.dataType = BK_DATA_TYPE_U8;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: u8 inputs", "BkGemmInfo.a.dataType",
                "BK_DATA_TYPE_U8");
    g = gemm_info(), g.b.dataType = f16;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: a f32, b f16", "BkGemmInfo.b.dataType",
                "BK_DATA_TYPE_F16", "BK_DATA_TYPE_F32");
    g = gemm_info(), g.a.dataType = g.b.dataType = bf16, g.c.dataType = g.d.dataType = f16;
    g.bias.dataType = f16;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: bf16 inputs, f16 output",
                "BkGemmInfo.d.dataType", "BK_DATA_TYPE_F16", "BK_DATA_TYPE_BF16");
    g = gemm_info(), g.c.dataType = g.d.dataType = g.bias.dataType = f16;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: f32 inputs, f16 output",
                "BkGemmInfo.d.dataType", "BK_DATA_TYPE_F16", "BK_DATA_TYPE_F32");
    g = gemm_info(), g.a.dataType = g.b.dataType = f64;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: f64 inputs, f32 output",
                "BkGemmInfo.d.dataType", "BK_DATA_TYPE_F32", "BK_DATA_TYPE_F64");
    g = gemm_info(), g.c.dataType = f64;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: c f64, d f32", "BkGemmInfo.c.dataType",
                "BK_DATA_TYPE_F64");
    g = gemm_info(), g.a.dataType = g.b.dataType = f16, g.c.dataType = g.bias.dataType = f16;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: f16 inputs, c f16 but d f32",
                "BkGemmInfo.c.dataType", "BK_DATA_TYPE_F16");
    g = gemm_info(), g.a.dataType = (BkDataType)77;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a.dataType 77", "BkGemmInfo.a.dataType");
    g = gemm_info(), g.a.dataType = g.b.dataType = BK_DATA_TYPE_TF32;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: TF32 is no tensor type",
                "BkGemmInfo.a.dataType");
    g = gemm_info(), g.a.dataType = BK_DATA_TYPE_UNDEFINED;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a is required", "BkGemmInfo.a.dataType");
    g = gemm_info(), g.d.dataType = BK_DATA_TYPE_UNDEFINED;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: d is required", "BkGemmInfo.d.dataType");
    const struct { BkDataType ab, cd; } ok_types[] = {
        { f32, f32 }, { f16, f16 }, { f16, f32 }, { bf16, bf16 }, { bf16, f32 }, { f64, f64 },
    };
    for (size_t i = 0; i < sizeof ok_types / sizeof ok_types[0]; i++) {
        char what[96];
        g = gemm_info(), g.a.dataType = g.b.dataType = ok_types[i].ab;
        g.c.dataType = g.d.dataType = g.bias.dataType = ok_types[i].cd;
        snprintf(what, sizeof what, "gemm: %s inputs, %s output", bkt_type_name(ok_types[i].ab),
                 bkt_type_name(ok_types[i].cd));
        EXPECT_PLAN(&g, BK_SUCCESS, what, NULL);
    }

    /* Bias: a contiguous vector of N elements of D's type. */
    g = gemm_info(), g.bias = vec(f32, 5);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: bias of 5 for N = 6", "BkGemmInfo.bias",
                "6 elements", "extent[0] = 5");
    g = gemm_info(), g.bias = mat(f32, 1, N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: bias of rank 2", "BkGemmInfo.bias",
                "rank 2");
    g = gemm_info(), g.bias = vec(f32, M);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: bias of M, not N", "BkGemmInfo.bias",
                "N", "extent[0] = 4");
    g = gemm_info(), g.bias.stride[0] = 2;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: bias with stride 2",
                "BkGemmInfo.bias.stride[0] = 2");
    g = gemm_info(), g.bias.stride[0] = 1;
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: bias with an explicit stride 1", NULL);
    g = gemm_info(), g.bias.dataType = f16;
    EXPECT_PLAN(&g, BK_ERROR_UNSUPPORTED, "gemm: f16 bias, f32 d", "BkGemmInfo.bias.dataType",
                "BK_DATA_TYPE_F16", "BK_DATA_TYPE_F32");
    g = gemm_info(), g.bias.dataType = (BkDataType)99;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: bias.dataType 99",
                "BkGemmInfo.bias.dataType");
    g = gemm_info(), g.bias.extent[0] = -1;
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: bias extent -1", "BkGemmInfo.bias.extent[0]");

    /* Sizes that do not fit in 64 bits. */
    g = gemm_info(), g.a = mat_s(f32, M, K, INT64_C(1) << 62, 1);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a spanning 2^64 bytes", "BkGemmInfo.a");
    g = gemm_info(), g.a = mat(f32, INT64_C(1) << 40, INT64_C(1) << 40);
    g.d = mat(f32, INT64_C(1) << 40, N), g.c = ABSENT_DESC, g.beta = 0;
    g.b = mat(f32, INT64_C(1) << 40, N);
    EXPECT_PLAN(&g, BK_ERROR_INVALID_ARGUMENT, "gemm: a of 2^80 elements", "BkGemmInfo.a");

    /* Empty problems are planned. */
    g = gemm_info(), g.a = mat(f32, 0, K), g.c = mat(f32, 0, N), g.d = mat(f32, 0, N);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: M = 0", NULL);
    g = gemm_info(), g.a = mat(f32, M, 0), g.b = mat(f32, 0, N);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: K = 0 (D = act(beta C + bias))", NULL);
    g = gemm_info(), g.a = mat3(f32, 0, M, K), g.c = mat3(f32, 0, M, N), g.d = mat3(f32, 0, M, N);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: batch 0", NULL);
}

/* ---- BkPlanBindingProperties -------------------------------------------------------- */

struct slot_want {
    const char *name;
    uint64_t size;        /* UINT64_MAX: opaque, only > 0 checked */
    uint64_t alignment;   /* 0: any power of two */
    bool written;
};

/* The plan's slots must be exactly these; every entry past bindingCount
 * zeroed. Returns the properties read, for further checks. */
static BkPlanBindingProperties check_slots(BkPlan plan, const char *what,
                                           const struct slot_want *want, uint32_t count)
{
    BkPlanBindingProperties bind;
    /* An unknown out-struct before it in the chain is skipped. */
    BkBaseOutStructure unknown = { .sType = (BkStructureType)0x6262, .pNext = NULL };
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &unknown };
    memset(&bind, 0xEE, sizeof bind);
    bind.sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES;
    bind.pNext = NULL;
    unknown.pNext = (BkBaseOutStructure *)&bind;
    BkResult r = bkGetPlanProperties(plan, &props);
    bool ok = r == BK_SUCCESS && props.pNext == &unknown && unknown.pNext == (void *)&bind &&
              unknown.sType == (BkStructureType)0x6262 &&
              bind.sType == BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES && bind.pNext == NULL &&
              bind.bindingCount == count && props.bindingCount == count && bind.reserved == 0;
    if (!tap_ok(ok, "%s: BkPlanBindingProperties after an unknown struct: %u slots", what, count)) {
        tap_diag("result %s, bindingCount %u (props %u), reserved %u", bkResultString(r),
                 bind.bindingCount, props.bindingCount, bind.reserved);
        return bind;
    }
    for (uint32_t i = 0; i < count; i++) {
        const BkBindingProperties *b = &bind.bindings[i];
        bool named = memchr(b->name, '\0', sizeof b->name) && strcmp(b->name, want[i].name) == 0;
        bool sized = want[i].size == UINT64_MAX ? b->size > 0 : b->size == want[i].size;
        bool aligned = want[i].alignment ? b->alignment == want[i].alignment
                                         : b->alignment && !(b->alignment & (b->alignment - 1));
        bool slot_ok = named && sized && aligned && b->written == (want[i].written ? 1u : 0u) &&
                       b->reserved == 0;
        if (!tap_ok(slot_ok, "%s: slot %u is \"%s\", %llu bytes, aligned to %llu, %s", what, i,
                    want[i].name, (unsigned long long)want[i].size,
                    (unsigned long long)want[i].alignment, want[i].written ? "written" : "read"))
            tap_diag("got \"%.32s\", %llu bytes, alignment %llu, written %u, reserved %u",
                     named ? b->name : "?", (unsigned long long)b->size,
                     (unsigned long long)b->alignment, b->written, b->reserved);
    }
    bool zero = true;
    for (uint32_t i = count; i < BK_MAX_BINDINGS; i++) {
        const unsigned char *p = (const unsigned char *)&bind.bindings[i];
        for (size_t k = 0; k < sizeof bind.bindings[i]; k++)
            zero = zero && p[k] == 0;
    }
    tap_ok(zero, "%s: entries past bindingCount are zeroed", what);
    return bind;
}

/* What BkPlanBindingProperties says is what bkCmdRun checks: each used
 * slot accepts pBindingSizes[i] = size and refuses size - 1, and an
 * address alignment / 2 off is misaligned. Other bindings sit apart in
 * big, each at a multiple of 256 bytes. */
static void check_slots_are_limits(BkPlan plan, const char *what,
                                   const BkPlanBindingProperties *bind,
                                   const struct bkt_buffer *big)
{
    const uint32_t n = bind->bindingCount;
    BkDeviceAddress addr[BK_MAX_BINDINGS];
    uint64_t sizes[BK_MAX_BINDINGS] = { 0 }, at = 0;
    for (uint32_t i = 0; i < n; i++) {
        addr[i] = big->address + at;
        at += (bind->bindings[i].size + 256 + 255) / 256 * 256;
    }
    if (at > big->size) {
        tap_skip(1, "%s: bindings too large for the test buffer", what);
        return;
    }
    long wrong = 0, tried = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t size = bind->bindings[i].size, align = bind->bindings[i].alignment;
        if (size == 0)
            continue;
        tried++;
        memset(sizes, 0, sizeof sizes);
        sizes[i] = size;
        BkResult r1 = record_ws(plan, n, addr, sizes);
        sizes[i] = size - 1;
        bkt_expect_begin();
        BkResult r2 = record_ws(plan, n, addr, sizes);
        bool named2 = r2 == BK_ERROR_BUFFER_TOO_SMALL &&
                      strstr(bkGetLastErrorMessage(), bind->bindings[i].name);
        BkResult r3 = BK_ERROR_MISALIGNED_OPERAND;
        if (align > 1) {
            BkDeviceAddress keep = addr[i];
            addr[i] += align / 2;
            r3 = record_ws(plan, n, addr, NULL);
            addr[i] = keep;
        }
        if (r1 != BK_SUCCESS || !named2 || r3 != BK_ERROR_MISALIGNED_OPERAND) {
            if (wrong++ == 0)
                tap_diag("%s: slot %u (%s): size %llu gives %s, size - 1 gives %s (%s), "
                         "alignment / 2 off gives %s", what, i, bind->bindings[i].name,
                         (unsigned long long)size, bkResultString(r1), bkResultString(r2),
                         bkGetLastErrorMessage(), bkResultString(r3));
        }
    }
    tap_ok(tried > 0 && wrong == 0, "%s: each reported size and alignment is what bkCmdRun checks "
           "(%ld slots)", what, tried);
}

static void test_binding_properties(const struct bkt_buffer *big)
{
    const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16, u16 = BK_DATA_TYPE_U16;
    BkPlan plan;
    BkPlanBindingProperties bind;

    BkGemmInfo g = gemm_info();
    if ((plan = make_plan(&g, "gemm f32 with C and bias"))) {
        const struct slot_want w[] = {
            { "a", span_of(&g.a), 4, false }, { "b", span_of(&g.b), 4, false },
            { "c", span_of(&g.c), 4, false }, { "d", span_of(&g.d), 4, true },
            { "bias", span_of(&g.bias), 4, false },
        };
        bind = check_slots(plan, "gemm f32", w, 5);
        check_slots_are_limits(plan, "gemm f32", &bind, big);
        bkDestroyPlan(plan);
    }
    /* f16 in, f32 out, transposed padded column-major a, padded d. */
    g = gemm_info(), g.transA = BK_GEMM_OP_T, g.a = mat_s(f16, K, M, 1, K + 3);
    g.b = mat_s(f16, K, N, 1, K + 1), g.d = mat_s(f32, M, N, N + 2, 1), g.c = ABSENT_DESC;
    g.beta = 0;
    if ((plan = make_plan(&g, "gemm f16 -> f32, padded, no C"))) {
        const struct slot_want w[] = {
            { "a", span_of(&g.a), 2, false }, { "b", span_of(&g.b), 2, false },
            { "c", 0, 0, false }, { "d", span_of(&g.d), 4, true },
            { "bias", span_of(&g.bias), 4, false },
        };
        bind = check_slots(plan, "gemm f16 -> f32", w, 5);
        check_slots_are_limits(plan, "gemm f16 -> f32", &bind, big);
        bkDestroyPlan(plan);
    }
    g = gemm_info(), g.a = mat3(BK_DATA_TYPE_F64, 3, M, K), g.b = mat(BK_DATA_TYPE_F64, K, N);
    g.c = mat(BK_DATA_TYPE_F64, M, N), g.d = mat3(BK_DATA_TYPE_F64, 3, M, N), g.bias = ABSENT_DESC;
    if ((plan = make_plan(&g, "gemm f64, batch 3, shared b and c"))) {
        const struct slot_want w[] = {
            { "a", span_of(&g.a), 8, false }, { "b", span_of(&g.b), 8, false },
            { "c", span_of(&g.c), 8, false }, { "d", span_of(&g.d), 8, true },
            { "bias", 0, 0, false },
        };
        bind = check_slots(plan, "gemm f64 batched", w, 5);
        check_slots_are_limits(plan, "gemm f64 batched", &bind, big);
        bkDestroyPlan(plan);
    }
    g = gemm_info(), g.a = mat(f32, 0, K), g.c = mat(f32, 0, N), g.d = mat(f32, 0, N);
    if ((plan = make_plan(&g, "gemm M = 0"))) {
        const struct slot_want w[] = {
            { "a", 0, 0, false }, { "b", 0, 0, false }, { "c", 0, 0, false },
            { "d", 0, 0, true }, { "bias", 0, 0, false },
        };
        check_slots(plan, "gemm M = 0 (nothing is read)", w, 5);
        bkDestroyPlan(plan);
    }

    /* Conversions. */
    const struct {
        BkSparse24Conversion conversion;
        const char *what;
        bool dense_w, packed_w, uses_data;
    } conv[] = {
        { BK_SPARSE24_COMPRESS_STRICT, "compress strict", false, true, true },
        { BK_SPARSE24_COMPRESS_PRUNE, "compress prune", false, true, true },
        { BK_SPARSE24_DECOMPRESS, "decompress", true, false, true },
        { BK_SPARSE24_VALIDATE, "validate", false, false, false },
    };
    for (size_t i = 0; i < 4; i++) {
        BkSparse24ConvertInfo ci = convert_info(conv[i].conversion, f16);
        ci.values = mat_s(f16, SM, SK / 2, 1, SM + 1); /* column-major, padded */
        if (!(plan = make_plan(&ci, conv[i].what)))
            continue;
        const struct slot_want w[] = {
            { "dense", conv[i].uses_data ? span_of(&ci.dense) : 0, conv[i].uses_data ? 2 : 0,
              conv[i].dense_w },
            { "values", conv[i].uses_data ? span_of(&ci.values) : 0, conv[i].uses_data ? 2 : 0,
              conv[i].packed_w },
            { "metadata", span_of(&ci.metadata), 2, conv[i].packed_w },
            { "report", sizeof(BkSparse24Report), 8, true },
        };
        bind = check_slots(plan, conv[i].what, w, 4);
        check_slots_are_limits(plan, conv[i].what, &bind, big);
        bkDestroyPlan(plan);
    }
    BkSparse24ConvertInfo ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32);
    ci.dense = mat(f32, 0, SK), ci.values = mat(f32, 0, SK / 2), ci.metadata = mat(u16, 0, 2);
    if ((plan = make_plan(&ci, "compress M = 0"))) {
        const struct slot_want w[] = {
            { "dense", 0, 0, false }, { "values", 0, 0, true }, { "metadata", 0, 0, true },
            { "report", sizeof(BkSparse24Report), 8, true },
        };
        check_slots(plan, "compress M = 0 (only the report)", w, 4);
        bkDestroyPlan(plan);
    }

    /* Prepare and sparse GEMM: the prepared size is the device's own,
     * the same in both plans. */
    BkSparse24PrepareInfo pi = prepare_info(f16);
    uint64_t prepared = 0;
    if ((plan = make_plan(&pi, "prepare f16"))) {
        const struct slot_want w[] = {
            { "values", span_of(&pi.values), 2, false },
            { "metadata", span_of(&pi.metadata), 2, false },
            { "prepared", UINT64_MAX, 0, true },
        };
        bind = check_slots(plan, "prepare f16", w, 3);
        prepared = bind.bindings[2].size;
        check_slots_are_limits(plan, "prepare f16", &bind, big);
        bkDestroyPlan(plan);
    }
    BkSparse24GemmInfo s = sgemm_info(f16, f32);
    s.x = mat_s(f16, SN, SK, 1, SN);
    if ((plan = make_plan(&s, "sparse gemm f16 -> f32"))) {
        const struct slot_want w[] = {
            { "weight", prepared ? prepared : UINT64_MAX, 0, false },
            { "x", span_of(&s.x), 2, false }, { "c", span_of(&s.c), 4, false },
            { "y", span_of(&s.y), 4, true }, { "bias", span_of(&s.bias), 4, false },
        };
        bind = check_slots(plan, "sparse gemm f16 -> f32 (weight: the prepared size)", w, 5);
        check_slots_are_limits(plan, "sparse gemm f16 -> f32", &bind, big);
        bkDestroyPlan(plan);
    }
    /* The prepared size depends on the type and shape, not on the plan. */
    pi = prepare_info(f32), s = sgemm_info(f32, f32), s.c = ABSENT_DESC, s.bias = ABSENT_DESC, s.beta = 0;
    BkPlan p1 = make_plan(&pi, "prepare f32"), p2 = make_plan(&s, "sparse gemm f32, no C");
    if (p1 && p2) {
        BkPlanBindingProperties b1, b2;
        properties(p1, &b1), properties(p2, &b2);
        tap_ok(b1.bindings[2].size > 0 && b1.bindings[2].size == b2.bindings[0].size &&
               b2.bindings[2].size == 0 && b2.bindings[4].size == 0,
               "f32: prepared size %llu = sparse gemm weight size %llu; absent c and bias 0",
               (unsigned long long)b1.bindings[2].size, (unsigned long long)b2.bindings[0].size);
    } else {
        tap_skip(1, "no plans");
    }
    bkDestroyPlan(p1);
    bkDestroyPlan(p2);
}

/* ---- Run-time checks on GEMM-family plans ------------------------------------------ */

static void test_workspace(const struct bkt_buffer *big)
{
    BkGemmInfo g = gemm_info();
    BkPlan plan = make_plan(&g, "gemm for the workspace checks");
    /* Where a BLAS writes an f32 D itself that plan needs no workspace; f16
     * A and B are converted in one. */
    const bool half_inputs = plan && properties(plan, NULL).workspaceSize == 0;
    if (half_inputs) {
        bkDestroyPlan(plan);
        g.a = mat(BK_DATA_TYPE_F16, M, K), g.b = mat(BK_DATA_TYPE_F16, K, N);
        plan = make_plan(&g, "gemm of f16 A and B for the workspace checks");
    }
    if (!plan) {
        tap_skip(8, "no plan");
        return;
    }
    BkPlanProperties props = properties(plan, NULL);
    const uint64_t ws = props.workspaceSize, wa = props.workspaceAlignment;
    if (!tap_ok(ws > 0 && wa >= 1 && !(wa & (wa - 1)),
                "the host gemm plan reports a workspace (%llu bytes, alignment %llu)",
                (unsigned long long)ws, (unsigned long long)wa)) {
        bkDestroyPlan(plan);
        return;
    }
    /* Bindings at the start of big; the workspace in workspace_buf. */
    const BkDeviceAddress b[5] = { big->address, big->address + 256, big->address + 512,
                                   big->address + 768, big->address + 1024 };
    struct bkt_buffer wbuf = bkt_alloc(ctx, ws + 2 * wa);
    BKT_EXPECT(record(plan, 5, b, NULL, wbuf.address, ws), BK_SUCCESS, NULL,
               "workspace of exactly workspaceSize");
    BKT_EXPECT(record(plan, 5, b, NULL, wbuf.address, ws - 1), BK_ERROR_WORKSPACE_TOO_SMALL,
               "workspaceSize", "workspace one byte short");
    BKT_EXPECT(record(plan, 5, b, NULL, 0, 0), BK_ERROR_WORKSPACE_TOO_SMALL, "workspaceSize",
               "no workspace");
    BKT_EXPECT(record(plan, 5, b, NULL, 0, ws), BK_ERROR_INVALID_ARGUMENT, "workspace",
               "workspace address 0");
    if (wa > 1)
        BKT_EXPECT(record(plan, 5, b, NULL, wbuf.address + wa / 2, ws),
                   BK_ERROR_MISALIGNED_OPERAND, "workspace", "workspace misaligned by %llu",
                   (unsigned long long)(wa / 2));
    else
        tap_skip(1, "workspace alignment 1");
    BkDeviceAddress wb = (big->address + 2048 + wa - 1) / wa * wa; /* aligned, inside big */
    const BkDeviceAddress b2[5] = { big->address, big->address + 256, big->address + 512,
                                    wb, big->address + 1024 };
    BKT_EXPECT(record(plan, 5, b2, NULL, wb, ws), BK_ERROR_INVALID_ARGUMENT, "pBindings[3]",
               "workspace overlapping d");
    /* Running with a workspace of exactly its size: in a BkMemory of that
     * size, so a run past its end would be an out-of-bounds write. */
    struct bkt_buffer exact = bkt_alloc(ctx, ws);
    float a[M * K], bm[K * N], c[M * N], bias[N], d[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < K * N; i++)
        bm[i] = (float)(i % 5 - 2);
    for (int i = 0; i < M * N; i++)
        c[i] = (float)(2 * (i % 9) - 8);
    for (int i = 0; i < N; i++)
        bias[i] = (float)(i - 2);
    uint16_t a16[M * K], b16[K * N];   /* small integers: exact */
    for (int i = 0; i < M * K; i++)
        a16[i] = bkt_f32_to_f16(a[i]);
    for (int i = 0; i < K * N; i++)
        b16[i] = bkt_f32_to_f16(bm[i]);
    if (half_inputs) {
        bkt_upload(ctx, b[0], a16, sizeof a16);
        bkt_upload(ctx, b[1], b16, sizeof b16);
    } else {
        bkt_upload(ctx, b[0], a, sizeof a);
        bkt_upload(ctx, b[1], bm, sizeof bm);
    }
    bkt_upload(ctx, b[2], c, sizeof c);
    bkt_upload(ctx, b[4], bias, sizeof bias);
    bkt_fill(ctx, b[3], sizeof d, BKT_POISON);
    BkCommandBuffer one;
    BkQueue q = bkt_queue(ctx);
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 5, .pBindings = b,
                      .workspace = exact.address, .workspaceSize = ws };
    bool ran = bkAllocateCommandBuffer(ctx, NULL, &one) == BK_SUCCESS &&
               bkBeginCommandBuffer(one, &begin) == BK_SUCCESS &&
               bkCmdRun(one, plan, &run) == BK_SUCCESS && bkEndCommandBuffer(one) == BK_SUCCESS &&
               bkQueueSubmit(q, 1, &one) == BK_SUCCESS && bkQueueWaitIdle(q) == BK_SUCCESS;
    bkFreeCommandBuffer(one);
    bkt_download(ctx, d, b[3], sizeof d);
    long bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int p = 0; p < K; p++)
                s += (double)a[i * K + p] * bm[p * N + j];
            double want = 2.0 * s + 0.5 * c[i * N + j] + bias[j];
            want = want > 0 ? want : 0;
            if (d[i * N + j] != (float)want && bad++ == 0)
                tap_diag("d[%d][%d] = %g, expected %g", i, j, (double)d[i * N + j], want);
        }
    tap_ok(ran && bad == 0, "a run with exactly workspaceSize bytes gives relu(2 AB + C/2 + "
           "bias) exactly (%ld wrong)", bad);
    bkt_free(ctx, &exact);
    bkt_free(ctx, &wbuf);
    bkDestroyPlan(plan);
}

static void test_alignment_and_sizes(const struct bkt_buffer *big)
{
    const BkDeviceAddress base = big->address;
    /* a 0, b 256, c 512, d 768, bias 1024, each with room; f32. */
    BkGemmInfo g = gemm_info();
    BkPlan plan = make_plan(&g, "gemm for the binding checks");
    if (plan) {
        BkDeviceAddress b[5] = { base, base + 256, base + 512, base + 768, base + 1024 };
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_SUCCESS, NULL, "gemm: valid bindings");
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_INVALID_ARGUMENT, "bindingCount",
                   "gemm: bindingCount 4 for 5 slots");
        b[0] = base + 2;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_MISALIGNED_OPERAND, "pBindings[0] (a)",
                   "gemm: a 2 bytes off");
        b[0] = base, b[4] = base + 1026;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_MISALIGNED_OPERAND,
                   "pBindings[4] (bias)", "gemm: bias 2 bytes off");
        b[4] = base + 1024, b[3] = base + 769;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_MISALIGNED_OPERAND, "pBindings[3] (d)",
                   "gemm: d 1 byte off");
        b[3] = base + 768, b[2] = 0;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_INVALID_ARGUMENT, "pBindings[2] (c)",
                   "gemm: c bound to 0");
        b[2] = base + 512, b[1] = base + 4;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_SUCCESS, NULL,
                   "gemm: b 4 bytes off (element-aligned) and overlapping a (both read)");
        b[1] = base + 256;
        uint64_t sizes[5] = { 128, 192, 96, 96, 24 };
        BKT_EXPECT(record_ws(plan, 5, b, sizes), BK_SUCCESS, NULL, "gemm: exact pBindingSizes");
        sizes[1] = 191;
        BKT_EXPECT(record_ws(plan, 5, b, sizes), BK_ERROR_BUFFER_TOO_SMALL, "pBindingSizes[1] (b)",
                   "gemm: b one byte short");
        sizes[1] = 192, sizes[4] = 20;
        BKT_EXPECT(record_ws(plan, 5, b, sizes), BK_ERROR_BUFFER_TOO_SMALL,
                   "pBindingSizes[4] (bias)", "gemm: bias one element short");
        /* In a BkMemory: its end bounds what follows the address. */
        b[1] = base + big->size - 188;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_BUFFER_TOO_SMALL, "pBindings[1] (b)",
                   "gemm: b runs past the end of its BkMemory");
        b[1] = base + big->size - 192;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_SUCCESS, NULL,
                   "gemm: b ends exactly at the end of its BkMemory");
        b[1] = base + 256, b[3] = base + big->size - 92;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_BUFFER_TOO_SMALL, "pBindings[3] (d)",
                   "gemm: d runs past the end of its BkMemory");
        bkDestroyPlan(plan);
    }
    /* Absent C and bias: their bindings are not looked at. */
    g = gemm_info(), g.c = ABSENT_DESC, g.bias = ABSENT_DESC, g.beta = 0;
    if ((plan = make_plan(&g, "gemm without C and bias"))) {
        BkDeviceAddress b[5] = { base, base + 256, 0, base + 768, 1 };
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_SUCCESS, NULL,
                   "gemm: absent c bound to 0 and bias to 1 (unused)");
        b[2] = base + 768, b[4] = base + 770;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_SUCCESS, NULL,
                   "gemm: absent c and bias may sit anywhere, even on d");
        BKT_EXPECT(record_ws(plan, 3, b, NULL), BK_ERROR_INVALID_ARGUMENT, "bindingCount",
                   "gemm: still 5 slots without C and bias");
        bkDestroyPlan(plan);
    }
    /* f16: 2-byte alignment; f64: 8. */
    g = gemm_info(), g.a.dataType = g.b.dataType = BK_DATA_TYPE_F16, g.bias = ABSENT_DESC;
    if ((plan = make_plan(&g, "gemm f16 -> f32"))) {
        BkDeviceAddress b[5] = { base + 2, base + 258, base + 512, base + 768, 0 };
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_SUCCESS, NULL,
                   "gemm f16: a and b one element (2 bytes) off 16-byte alignment");
        b[1] = base + 257;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_MISALIGNED_OPERAND, "pBindings[1] (b)",
                   "gemm f16: b 1 byte off");
        b[1] = base + 258, b[2] = base + 514;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_MISALIGNED_OPERAND, "pBindings[2] (c)",
                   "gemm f16: c (f32) 2 bytes off");
        bkDestroyPlan(plan);
    }
    g = gemm_info(), g.a.dataType = g.b.dataType = g.c.dataType = g.d.dataType =
        g.bias.dataType = BK_DATA_TYPE_F64;
    if ((plan = make_plan(&g, "gemm f64"))) {
        BkDeviceAddress b[5] = { base, base + 512, base + 1024, base + 1536, base + 2044 };
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_MISALIGNED_OPERAND, "pBindings[4] (bias)",
                   "gemm f64: bias 4 bytes off");
        b[4] = base + 2048, b[3] = base + 1540;
        BKT_EXPECT(record_ws(plan, 5, b, NULL), BK_ERROR_MISALIGNED_OPERAND, "pBindings[3] (d)",
                   "gemm f64: d 4 bytes off");
        bkDestroyPlan(plan);
    }

    /* Conversions: the report (32 bytes, 8-byte aligned) is always written. */
    BkSparse24ConvertInfo ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, BK_DATA_TYPE_F16);
    if ((plan = make_plan(&ci, "compress prune f16"))) {
        /* dense 128 bytes, values 64, metadata 16, report 32 */
        BkDeviceAddress b[4] = { base, base + 256, base + 512, base + 768 };
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_SUCCESS, NULL, "compress: valid bindings");
        b[3] = base + 772;
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_MISALIGNED_OPERAND,
                   "pBindings[3] (report)", "compress: report 4 bytes off 8");
        b[3] = base + 768;
        BKT_EXPECT(record_ws(plan, 4, b, (uint64_t[4]){ 0, 0, 0, 31 }),
                   BK_ERROR_BUFFER_TOO_SMALL, "pBindingSizes[3] (report)",
                   "compress: a 31-byte report");
        b[3] = base + big->size - 24;
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_BUFFER_TOO_SMALL, "pBindings[3] (report)",
                   "compress: report past the end of its BkMemory");
        b[3] = 0;
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_INVALID_ARGUMENT, "pBindings[3] (report)",
                   "compress: report bound to 0");
        b[3] = base + 768, b[2] = base + 256 + 56;
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "compress: metadata overlapping values (both written)");
        b[2] = base + 512, b[3] = base + 496;
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "compress: report overlapping metadata");
        b[3] = base + 768, b[0] = base + 256;
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "compress: values at the dense input's address");
        bkDestroyPlan(plan);
    }
    ci = convert_info(BK_SPARSE24_VALIDATE, BK_DATA_TYPE_F32);
    if ((plan = make_plan(&ci, "validate"))) {
        BkDeviceAddress b[4] = { 0, 0, base + 512, base + 768 };
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_SUCCESS, NULL,
                   "validate: dense and values bound to 0 (unused)");
        b[3] = base + 512;
        BKT_EXPECT(record_ws(plan, 4, b, NULL), BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "validate: report on the metadata");
        bkDestroyPlan(plan);
    }
    BkSparse24PrepareInfo pi = prepare_info(BK_DATA_TYPE_BF16);
    if ((plan = make_plan(&pi, "prepare bf16"))) {
        BkPlanBindingProperties bind;
        properties(plan, &bind);
        const uint64_t align = bind.bindings[2].alignment;
        BkDeviceAddress b[3] = { base, base + 256, base + 1024 };
        BKT_EXPECT(record_ws(plan, 3, b, NULL), BK_SUCCESS, NULL, "prepare: valid bindings");
        if (align > 2) {
            b[2] = base + 1024 + align / 2;
            BKT_EXPECT(record_ws(plan, 3, b, NULL), BK_ERROR_MISALIGNED_OPERAND,
                       "pBindings[2] (prepared)", "prepare: prepared %llu bytes off %llu",
                       (unsigned long long)(align / 2), (unsigned long long)align);
        } else {
            tap_skip(1, "prepared alignment %llu", (unsigned long long)align);
        }
        b[2] = base + 1024;
        BKT_EXPECT(record_ws(plan, 3, b, (uint64_t[3]){ 0, 0, bind.bindings[2].size - 1 }),
                   BK_ERROR_BUFFER_TOO_SMALL, "pBindingSizes[2] (prepared)",
                   "prepare: prepared one byte short of its reported size");
        b[2] = base;
        BKT_EXPECT(record_ws(plan, 3, b, NULL), BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "prepare: prepared on the values");
        bkDestroyPlan(plan);
    }
}

/* C == D in place: accepted at exactly the same address when the layouts
 * are equal; any other overlap is refused. */
static void test_in_place(const struct bkt_buffer *big)
{
    const BkDeviceAddress base = big->address;
    const BkDeviceAddress a = base, b = base + 256, c = base + 512, bias = base + 1024;
    BkGemmInfo g = gemm_info();
    BkPlan plan = make_plan(&g, "gemm for the in-place checks");
    if (plan) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, bias }, NULL), BK_SUCCESS,
                   NULL, "gemm: c == d at the same address, same layout");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c + 4, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "gemm: d one element after c");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c + 4, c, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "gemm: d one element before c");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c + 92, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "gemm: d's first element on c's last");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c + 96, bias }, NULL),
                   BK_SUCCESS, NULL, "gemm: d right after c");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, a, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "gemm: d at a's address");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, b, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "gemm: d at b's address");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, c }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "gemm: c == d, bias there too");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ c, b, c, c, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "gemm: c == d, a there too");
        bkDestroyPlan(plan);
    }
    /* Equal spans, different layouts: C column-major [4, 6] (ld 4) and D
     * row-major spans 96 bytes each. */
    g = gemm_info(), g.c = mat_s(BK_DATA_TYPE_F32, M, N, 1, M);
    if ((plan = make_plan(&g, "gemm, c column-major, d row-major"))) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "gemm: c == d refused when c is column-major and d row-major");
        bkDestroyPlan(plan);
    }
    g = gemm_info(), g.c = mat_s(BK_DATA_TYPE_F32, M, N, N + 2, 1);
    if ((plan = make_plan(&g, "gemm, c padded"))) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, bias }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "gemm: c == d refused when c's leading dimension is 8 and d's 6");
        bkDestroyPlan(plan);
    }
    g = gemm_info(), g.c = mat_s(BK_DATA_TYPE_F32, M, N, N + 2, 1);
    g.d = mat_s(BK_DATA_TYPE_F32, M, N, N + 2, 1);
    if ((plan = make_plan(&g, "gemm, c and d both padded"))) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, bias }, NULL), BK_SUCCESS,
                   NULL, "gemm: c == d with equal padded layouts");
        bkDestroyPlan(plan);
    }
    g = gemm_info(), g.c = mat_s(BK_DATA_TYPE_F32, M, N, 1, M), g.d = g.c;
    if ((plan = make_plan(&g, "gemm, c and d column-major"))) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, bias }, NULL), BK_SUCCESS,
                   NULL, "gemm: c == d both column-major");
        bkDestroyPlan(plan);
    }
    /* Batched: the same rank-3 layout may alias; a shared (rank-2) C may not. */
    g = gemm_info(), g.a = mat3(BK_DATA_TYPE_F32, 2, M, K), g.c = mat3(BK_DATA_TYPE_F32, 2, M, N);
    g.d = mat3(BK_DATA_TYPE_F32, 2, M, N);
    if ((plan = make_plan(&g, "gemm batch 2"))) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, bias + 256 }, NULL),
                   BK_SUCCESS, NULL, "gemm batch 2: c == d, both rank 3");
        bkDestroyPlan(plan);
    }
    g.c = mat(BK_DATA_TYPE_F32, M, N);
    if ((plan = make_plan(&g, "gemm batch 2, c shared"))) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ a, b, c, c, bias + 256 }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "gemm batch 2: a shared (rank-2) c at d's address is refused");
        bkDestroyPlan(plan);
    }
    /* Sparse GEMM: c == y the same way. */
    BkSparse24GemmInfo s = sgemm_info(BK_DATA_TYPE_F16, BK_DATA_TYPE_F16);
    if ((plan = make_plan(&s, "sparse gemm for the in-place checks"))) {
        BkPlanBindingProperties bind;
        properties(plan, &bind);
        BkDeviceAddress w = base + 2048, x = base + 256, sc = base + 512, sb = base + 1024;
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ w, x, sc, sc, sb }, NULL), BK_SUCCESS,
                   NULL, "sparse gemm: c == y at the same address");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ w, x, sc, sc + 2, sb }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "sparse gemm: y one element after c");
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ w, x, sc, w, sb }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps", "sparse gemm: y on the weight");
        bkDestroyPlan(plan);
    }
    s = sgemm_info(BK_DATA_TYPE_F16, BK_DATA_TYPE_F16);
    s.c = mat_s(BK_DATA_TYPE_F16, SN, SM, 1, SN);
    s.y = mat_s(BK_DATA_TYPE_F16, SN, SM, SM, 1);
    if ((plan = make_plan(&s, "sparse gemm, c column-major, y row-major"))) {
        BKT_EXPECT(record_ws(plan, 5, (BkDeviceAddress[5]){ base + 2048, base + 256, base + 512,
                                                            base + 512, base + 1024 }, NULL),
                   BK_ERROR_INVALID_ARGUMENT, "overlaps",
                   "sparse gemm: c == y refused with different layouts of equal span");
        bkDestroyPlan(plan);
    }
}

/* The in-place run gives the bits the out-of-place one gives. */
static void test_in_place_run(void)
{
    enum { BM = 33, BN = 17, BK = 20 };
    BkGemmInfo g = gemm_info();
    g.a = mat(BK_DATA_TYPE_F32, BM, BK), g.b = mat_s(BK_DATA_TYPE_F32, BK, BN, 1, BK);
    g.c = g.d = mat_s(BK_DATA_TYPE_F32, BM, BN, BN + 3, 1), g.bias = vec(BK_DATA_TYPE_F32, BN);
    g.activation = BK_GEMM_ACTIVATION_GELU_TANH, g.alpha = 0.75, g.beta = -1.25;
    BkPlan plan = make_plan(&g, "gemm 33 x 17 x 20, padded c == d");
    if (!plan)
        return;
    struct bkt_rng rng = bkt_rng_new(31);
    const uint64_t na = BM * BK, nb = BK * BN, nd = (BM - 1) * (BN + 3) + BN;
    float *ha = malloc(na * 4), *hb = malloc(nb * 4), *hc = malloc(nd * 4), *hbias = malloc(BN * 4);
    float *out = malloc(nd * 4), *in_place = malloc(nd * 4);
    if (!ha || !hb || !hc || !hbias || !out || !in_place)
        tap_bail("out of memory");
    for (uint64_t i = 0; i < na; i++)
        ha[i] = (float)bkt_rand_uniform(&rng, -1, 1);
    for (uint64_t i = 0; i < nb; i++)
        hb[i] = (float)bkt_rand_uniform(&rng, -1, 1);
    for (uint64_t i = 0; i < nd; i++)
        hc[i] = (float)bkt_rand_uniform(&rng, -2, 2);
    for (uint64_t i = 0; i < BN; i++)
        hbias[i] = (float)bkt_rand_uniform(&rng, -1, 1);
    struct bkt_buffer da = bkt_alloc(ctx, na * 4), db = bkt_alloc(ctx, nb * 4),
                      dc = bkt_alloc(ctx, nd * 4), dd = bkt_alloc(ctx, nd * 4),
                      dbias = bkt_alloc(ctx, BN * 4);
    bkt_upload(ctx, da.address, ha, na * 4);
    bkt_upload(ctx, db.address, hb, nb * 4);
    bkt_upload(ctx, dc.address, hc, nd * 4);
    bkt_upload(ctx, dd.address, hc, nd * 4); /* d's gaps hold c's: the same after either run */
    bkt_upload(ctx, dbias.address, hbias, BN * 4);
    BkResult r1 = bkt_run(ctx, plan, 5, (BkDeviceAddress[5]){ da.address, db.address, dc.address,
                                                              dd.address, dbias.address });
    bkt_download(ctx, out, dd.address, nd * 4);
    BkResult r2 = bkt_run(ctx, plan, 5, (BkDeviceAddress[5]){ da.address, db.address, dc.address,
                                                              dc.address, dbias.address });
    bkt_download(ctx, in_place, dc.address, nd * 4);
    long changed = 0;
    for (uint64_t i = 0; i < nd; i++)
        changed += memcmp(&out[i], &in_place[i], 4) != 0;
    bool moved = false;
    for (uint64_t i = 0; i < nd; i++)
        moved = moved || memcmp(&out[i], &hc[i], 4) != 0;
    tap_ok(r1 == BK_SUCCESS && r2 == BK_SUCCESS && changed == 0 && moved,
           "gemm in place (c == d, padded) gives the out-of-place bits, gaps kept (%ld differ; "
           "%s, %s)", changed, bkResultString(r1), bkResultString(r2));
    bkt_free(ctx, &da), bkt_free(ctx, &db), bkt_free(ctx, &dc), bkt_free(ctx, &dd);
    bkt_free(ctx, &dbias);
    free(ha), free(hb), free(hc), free(hbias), free(out), free(in_place);
    bkDestroyPlan(plan);
}

/* ---- Empty problems and reports on the host ------------------------------------------ */

static void test_empty_runs(void)
{
    BkGemmInfo g = gemm_info();
    g.a = mat(BK_DATA_TYPE_F32, 0, K), g.c = mat(BK_DATA_TYPE_F32, 0, N);
    g.d = mat(BK_DATA_TYPE_F32, 0, N);
    BkPlan plan = make_plan(&g, "gemm M = 0");
    if (plan) {
        BKT_EXPECT(bkt_run(ctx, plan, 5, (BkDeviceAddress[5]){ 0, 0, 0, 0, 0 }), BK_SUCCESS,
                   NULL, "gemm M = 0 runs with every binding 0");
        bkDestroyPlan(plan);
    }
    /* K = 0: D = act(beta C + bias), a and b need no memory. */
    g = gemm_info(), g.a = mat(BK_DATA_TYPE_F32, M, 0), g.b = mat(BK_DATA_TYPE_F32, 0, N);
    if ((plan = make_plan(&g, "gemm K = 0"))) {
        float c[M * N], bias[N], d[M * N];
        for (int i = 0; i < M * N; i++)
            c[i] = (float)(i % 7) - 3.0f;
        for (int j = 0; j < N; j++)
            bias[j] = (float)j - 1.5f;
        struct bkt_buffer dc = bkt_alloc(ctx, sizeof c), dd = bkt_alloc(ctx, sizeof d),
                          dbias = bkt_alloc(ctx, sizeof bias);
        bkt_upload(ctx, dc.address, c, sizeof c);
        bkt_upload(ctx, dbias.address, bias, sizeof bias);
        bkt_fill(ctx, dd.address, sizeof d, BKT_POISON);
        BkResult r = bkt_run(ctx, plan, 5, (BkDeviceAddress[5]){ 0, 0, dc.address, dd.address,
                                                                 dbias.address });
        bkt_download(ctx, d, dd.address, sizeof d);
        long bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float want = 0.5f * c[i * N + j] + bias[j];
                want = want > 0 ? want : 0;
                bad += d[i * N + j] != want;
            }
        tap_ok(r == BK_SUCCESS && bad == 0, "gemm K = 0 gives relu(C/2 + bias) exactly (%ld "
               "wrong, %s)", bad, bkResultString(r));
        bkt_free(ctx, &dc), bkt_free(ctx, &dd), bkt_free(ctx, &dbias);
        bkDestroyPlan(plan);
    }
    BkSparse24ConvertInfo ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, BK_DATA_TYPE_F32);
    ci.dense = mat(BK_DATA_TYPE_F32, 0, SK), ci.values = mat(BK_DATA_TYPE_F32, 0, SK / 2);
    ci.metadata = mat(BK_DATA_TYPE_U16, 0, SK / 8);
    if ((plan = make_plan(&ci, "compress M = 0"))) {
        struct bkt_buffer rep = bkt_alloc(ctx, sizeof(BkSparse24Report));
        bkt_fill(ctx, rep.address, rep.size, 0xFFFFFFFFu);
        BkResult r = bkt_run(ctx, plan, 4, (BkDeviceAddress[4]){ 0, 0, 0, rep.address });
        BkSparse24Report report;
        bkt_download(ctx, &report, rep.address, sizeof report);
        tap_ok(r == BK_SUCCESS && report.status == BK_SPARSE24_STATUS_OK &&
               report.badGroupCount == 0, "compress M = 0 runs and reports OK (status %u, %llu "
               "bad groups)", report.status, (unsigned long long)report.badGroupCount);
        bkt_free(ctx, &rep);
        bkDestroyPlan(plan);
    }
    BkSparse24GemmInfo s = sgemm_info(BK_DATA_TYPE_BF16, BK_DATA_TYPE_BF16);
    s.x = mat3(BK_DATA_TYPE_BF16, 0, SN, SK), s.y = mat3(BK_DATA_TYPE_BF16, 0, SN, SM);
    if ((plan = make_plan(&s, "sparse gemm batch 0"))) {
        BKT_EXPECT(bkt_run(ctx, plan, 5, (BkDeviceAddress[5]){ 0 }), BK_SUCCESS, NULL,
                   "sparse gemm batch 0 runs with every binding 0");
        bkDestroyPlan(plan);
    }
}

/* ---- Allocation failures in plan creation --------------------------------------------- */

static void test_plan_allocation_failures(void)
{
    BkGemmInfo g = gemm_info();
    BkSparse24ConvertInfo ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, BK_DATA_TYPE_BF16);
    BkSparse24PrepareInfo pi = prepare_info(BK_DATA_TYPE_F16);
    BkSparse24GemmInfo s = sgemm_info(BK_DATA_TYPE_F32, BK_DATA_TYPE_F32);
    const void *infos[] = { &g, &ci, &pi, &s };
    const char *names[] = { "gemm", "convert", "prepare", "sparse gemm" };
    for (int i = 0; i < 4; i++) {
        bool made;
        long needed;
        const bool ok = bkt_plan_allocation_failures_clean(ctx, infos[i], &made, &needed);
        if (!made) {
            tap_skip(1, "%s: no plan (%s)", names[i], bkGetLastErrorMessage());
            continue;
        }
        tap_ok(ok, "%s: each of %ld allocation failures in bkCreatePlan gives OUT_OF_HOST_MEMORY "
               "and leaks nothing", names[i], needed);
    }
}

int main(void)
{
    struct bkt_alloc_stats stats;
    BkAllocationCallbacks cb = bkt_counting_allocator(&stats);
    BkContextCreateInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
        .deviceType = BK_DEVICE_TYPE_HOST,
        .apiVersion = BK_HEADER_VERSION,
    };
    bkt_capture_messages();
    if (bkCreateContext(&info, &cb, &ctx) != BK_SUCCESS)
        tap_bail("bkCreateContext: %s", bkGetLastErrorMessage());
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        tap_bail("bkAllocateCommandBuffer: %s", bkGetLastErrorMessage());
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    if (bkBeginCommandBuffer(cmd, &begin) != BK_SUCCESS)
        tap_bail("bkBeginCommandBuffer: %s", bkGetLastErrorMessage());
    struct bkt_buffer big = bkt_alloc(ctx, 8192);
    workspace_buf = bkt_alloc(ctx, 1 << 24);

    test_gemm_rules();
    test_binding_properties(&big);
    test_workspace(&big);
    test_alignment_and_sizes(&big);
    test_in_place(&big);
    test_in_place_run();
    test_empty_runs();
    test_plan_allocation_failures();
    tap_ok(bkt_stray_plans() == 0, "failed bkCreatePlan calls left no handle (%ld did)",
           bkt_stray_plans());

    bkFreeCommandBuffer(cmd);   /* never submitted: the runs recorded used no real data */
    bkt_free(ctx, &big);
    bkt_free(ctx, &workspace_buf);
    bkDestroyContext(ctx);
    tap_ok(bkt_alloc_live(&stats) == 0 && stats.unknown_frees == 0 && stats.bad_alignment == 0,
           "everything allocated through the context's callbacks was freed (%ld live, %ld "
           "foreign frees, %ld bad alignments; %ld allocations)", bkt_alloc_live(&stats),
           stats.unknown_frees, stats.bad_alignment, stats.allocations);
    return tap_done();
}
