/* SPDX-License-Identifier: Apache-2.0 */
/* The host device binds any host pointer: plans run on plain malloc'd
 * arrays, copies work between them, and pBindingSizes is the only size
 * check when no BkMemory holds the address. Always on the host device. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define ROWS 3
#define HALF 5

static BkDeviceAddress addr(const void *p)
{
    return (BkDeviceAddress)(uintptr_t)p;
}

int main(void)
{
    BkContext ctx = bkt_open_host();
    double *x = malloc(sizeof(double) * ROWS * 2 * HALF);
    double *y = malloc(sizeof(double) * ROWS * HALF);
    for (int i = 0; i < ROWS * 2 * HALF; i++)
        x[i] = (i % 7) * 0.5 - 1.5;
    for (int i = 0; i < ROWS * HALF; i++)
        y[i] = NAN;

    BkGatedActivationInfo info = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
        .kind = BK_GATED_ACTIVATION_GLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F64, .rank = 2, .extent = { ROWS, 2 * HALF } },
        .output = { .dataType = BK_DATA_TYPE_F64, .rank = 2, .extent = { ROWS, HALF } },
    };
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, &info, &plan), BK_SUCCESS, NULL, "plan");
    BKT_EXPECT(bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ addr(x), addr(y) }), BK_SUCCESS, NULL,
               "run on malloc'd host arrays");
    bool ok = true;
    for (int r = 0; r < ROWS; r++)
        for (int j = 0; j < HALF; j++) {
            double a = x[r * 2 * HALF + j], b = x[r * 2 * HALF + HALF + j];
            double want = a / (1 + exp(-b));
            ok = ok && fabs(y[r * HALF + j] - want) <= 1e-14 * (1 + fabs(want));
        }
    tap_ok(ok, "GLU on host pointers is right");

    /* With no BkMemory around, pBindingSizes is what is checked. */
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    bkAllocateCommandBuffer(ctx, NULL, &cmd);
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    bkBeginCommandBuffer(cmd, &begin);
    BkRunInfo run = {
        .sType = BK_STRUCTURE_TYPE_RUN_INFO,
        .bindingCount = 2,
        .pBindings = (BkDeviceAddress[2]){ addr(x), addr(y) },
        .pBindingSizes = (uint64_t[2]){ sizeof(double) * ROWS * 2 * HALF,
                                        sizeof(double) * ROWS * HALF - 8 },
    };
    BKT_EXPECT(bkCmdRun(cmd, plan, &run), BK_ERROR_BUFFER_TOO_SMALL, "pBindingSizes[1]",
               "pBindingSizes smaller than the output");
    BKT_EXPECT(bkCmdRun(cmd, plan, &(BkRunInfo){
                   .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2,
                   .pBindings = (BkDeviceAddress[2]){ addr(x) + 4, addr(y) } }),
               BK_ERROR_MISALIGNED_OPERAND, "pBindings[0]", "an f64 host pointer off by 4 bytes");

    /* Copies between plain host arrays. */
    unsigned char src[100], dst[100];
    for (int i = 0; i < 100; i++)
        src[i] = (unsigned char)(i * 7);
    memset(dst, 0, sizeof dst);
    BKT_EXPECT(bkCmdCopyMemory(cmd, addr(dst), addr(src), sizeof src), BK_SUCCESS, NULL,
               "record a copy between host arrays");
    BkQueue q = bkt_queue(ctx);
    ok = bkEndCommandBuffer(cmd) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS;
    tap_ok(ok && memcmp(src, dst, sizeof src) == 0,
           "the copy is done when bkQueueSubmit returns on the host");
    unsigned char back[100];
    BKT_EXPECT(bkCopyFromDevice(ctx, back, addr(src), sizeof src), BK_SUCCESS, NULL,
               "bkCopyFromDevice from a host pointer");
    tap_ok(memcmp(back, src, sizeof src) == 0, "... reads it");

    bkFreeCommandBuffer(cmd);
    bkDestroyPlan(plan);
    free(x);
    free(y);
    bkDestroyContext(ctx);
    return tap_done();
}
