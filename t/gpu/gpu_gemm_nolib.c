/* SPDX-License-Identifier: Apache-2.0 */
/* Dense GEMM on CUDA without cuBLASLt: with BK_CUBLASLT_LIBRARY naming a
 * file that does not exist (set before the first GEMM plan: libbk opens
 * cuBLASLt once per process), a GEMM plan is BK_ERROR_UNSUPPORTED with a
 * message naming cuBLASLt and the file, every time; a plan of an empty
 * problem (nothing to run) and the ops that do not use cuBLASLt (gated
 * activations, 2:4 conversions) still work in the same context. Skips
 * without a GPU; fails instead with BK_TEST_REQUIRE_GPU=1. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define MISSING "/nonexistent/libcublasLt.so"

static BkGemmInfo gemm_info(int64_t m)
{
    return (BkGemmInfo){
        .sType = BK_STRUCTURE_TYPE_GEMM_INFO,
        .alpha = 1,
        .a = { .dataType = BK_DATA_TYPE_F16, .rank = 2, .extent = { m, 64 } },
        .b = { .dataType = BK_DATA_TYPE_F16, .rank = 2, .extent = { 64, 32 } },
        .d = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { m, 32 } },
    };
}

int main(void)
{
    if (setenv("BK_CUBLASLT_LIBRARY", MISSING, 1) != 0)
        tap_bail("setenv failed");
    BkContext ctx = bkt_open_cuda();

    for (int attempt = 1; attempt <= 2; attempt++) {
        BkGemmInfo g = gemm_info(128);
        BkPlan plan = (BkPlan)(uintptr_t)1;
        bkt_expect_begin();
        BkResult r = bkt_create_plan(ctx, &g, &plan);
        const char *msg = bkGetLastErrorMessage();
        /* The first of the needles the message lacks, to report. */
        const char *needle = !strstr(msg, "cuBLASLt") ? "cuBLASLt" : MISSING;
        bkt_expect_end(r, BK_ERROR_UNSUPPORTED, needle,
                       "GEMM plan %d without cuBLASLt: UNSUPPORTED naming cuBLASLt and %s",
                       attempt, MISSING);
        tap_ok(plan == BK_NULL_HANDLE, "... and no plan handle");
        if (r == BK_SUCCESS && plan)
            bkDestroyPlan(plan);
    }

    /* An empty problem runs nothing: it needs no library. */
    BkGemmInfo empty = gemm_info(0);
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, &empty, &plan), BK_SUCCESS, NULL,
               "an empty GEMM (M = 0) plans without cuBLASLt");
    if (plan)
        BKT_EXPECT(bkt_run(ctx, plan, 5, (BkDeviceAddress[5]){ 0 }), BK_SUCCESS, NULL,
                   "... and runs");
    else
        tap_skip(1, "no plan");
    bkDestroyPlan(plan);

    /* Ops of libbk's own kernels are unaffected. */
    BkGatedActivationInfo gated = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
        .kind = BK_GATED_ACTIVATION_SWIGLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 8 } },
        .output = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 4, 4 } },
    };
    plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, &gated, &plan), BK_SUCCESS, NULL,
               "a gated activation plans in the same context");
    if (plan) {
        struct bkt_buffer in = bkt_alloc(ctx, 128), out = bkt_alloc(ctx, 64);
        float x[32], y[16];
        for (int i = 0; i < 32; i++)
            x[i] = (float)(i % 5) - 2.0f;
        bkt_upload(ctx, in.address, x, sizeof x);
        BkResult r = bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ in.address, out.address });
        bkt_download(ctx, y, out.address, sizeof y);
        bool ok = r == BK_SUCCESS;
        for (int i = 0; ok && i < 4; i++)
            for (int j = 0; j < 4; j++) {
                float a = x[i * 8 + j], b = x[i * 8 + 4 + j];
                float want = a * b / (1.0f + __builtin_expf(-b));
                ok = ok && __builtin_fabsf(y[i * 4 + j] - want) <=
                               1e-5f * (1 + __builtin_fabsf(want));
            }
        tap_ok(ok, "... and runs correctly (%s)", bkResultString(r));
        bkt_free(ctx, &in);
        bkt_free(ctx, &out);
    } else {
        tap_skip(1, "no plan");
    }
    bkDestroyPlan(plan);

    BkSparse24ConvertInfo conv = {
        .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO,
        .conversion = BK_SPARSE24_VALIDATE,
        .metadata = { .dataType = BK_DATA_TYPE_U16, .rank = 2, .extent = { 16, 4 } },
    };
    plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, &conv, &plan), BK_SUCCESS, NULL,
               "a 2:4 validation plans in the same context");
    if (plan) {
        struct bkt_buffer meta = bkt_alloc(ctx, 16 * 4 * 2), rep = bkt_alloc(ctx, 32);
        uint16_t md[64];
        for (int i = 0; i < 64; i++)
            md[i] = 0x0E04;   /* positions (0, 1) and (2, 3) */
        bkt_upload(ctx, meta.address, md, sizeof md);
        bkt_fill(ctx, rep.address, 32, 0xFFFFFFFFu);
        BkResult r = bkt_run(ctx, plan, 4, (BkDeviceAddress[4]){ 0, 0, meta.address,
                                                                 rep.address });
        BkSparse24Report report;
        bkt_download(ctx, &report, rep.address, sizeof report);
        tap_ok(r == BK_SUCCESS && report.status == BK_SPARSE24_STATUS_OK &&
               report.badGroupCount == 0, "... and runs (%s, status %u)", bkResultString(r),
               report.status);
        bkt_free(ctx, &meta);
        bkt_free(ctx, &rep);
    } else {
        tap_skip(1, "no plan");
    }
    bkDestroyPlan(plan);

    bkDestroyContext(ctx);
    return tap_done();
}
