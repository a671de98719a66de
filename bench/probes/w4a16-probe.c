/* SPDX-License-Identifier: Apache-2.0 */
/* A development probe for the W4A16 GEMM on the GPU (not bkbench): for a
 * few Llama shapes and M, the mean time per run of a reusable command
 * buffer that runs the plan on 8 weight sets (together past the L2),
 * submitted 25 times (TYPE [SHAPE [M]] narrows the run to one shape index,
 * or a shape KxN of its own, and one M, e.g. for a profiler). Weights are random words (the GEMM's speed does not
 * depend on their values). BK_PROBE_TRACE=1, with the GEMM module built
 * with -DBK_DECODE_TRACE (bench/probes/decode_trace.h), prints the
 * timeline of the last run of the tiles of 8 rows (M <= 8), whose trace
 * lies in C past its 16th row. bench/device-run.sh does not run it; build:
 *   cc -O2 -I include -I BUILD/include bench/probes/w4a16-probe.c -L BUILD/.libs -lbk */
#define _POSIX_C_SOURCE 200809L
#include <bk/bk.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode_trace.h"

#define SETS 8
#define CHECK(x) do { BkResult r_ = (x); if (r_ != BK_SUCCESS) { \
    fprintf(stderr, "%s: %s (%s)\n", #x, bkResultString(r_), bkGetLastErrorMessage()); exit(1); } } while (0)

static BkContext ctx;

static BkDeviceAddress alloc(uint64_t bytes, uint32_t fill)
{
    BkMemoryAllocateInfo ai = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .size = bytes };
    BkMemory m;
    CHECK(bkAllocateMemory(ctx, &ai, NULL, &m));
    BkDeviceAddress a;
    CHECK(bkGetMemoryAddress(m, &a));
    BkCommandBuffer cb;
    BkQueue q;
    CHECK(bkGetQueue(ctx, 0, &q));
    CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .usage = BK_COMMAND_BUFFER_USAGE_ONE_TIME };
    CHECK(bkBeginCommandBuffer(cb, &bi));
    CHECK(bkCmdFillMemory(cb, a, bytes / 4 * 4, fill));
    CHECK(bkEndCommandBuffer(cb));
    CHECK(bkQueueSubmit(q, 1, &cb));
    CHECK(bkQueueWaitIdle(q));
    bkFreeCommandBuffer(cb);
    return a;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static BkTensorDesc d2(BkDataType t, int64_t r, int64_t c)
{
    BkTensorDesc d = { .dataType = t, .rank = 2, .extent = { r, c } };
    return d;
}

int main(int argc, char **argv)
{
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_CUDA };
    CHECK(bkCreateContext(&ci, NULL, &ctx));
    int64_t shapes[][2] = { { 4096, 12288 }, { 4096, 22016 }, { 11008, 4096 },
                                         { 8192, 8192 }, { 8192, 10240 }, { 8192, 57344 },
                                         { 28672, 8192 } };
    static const int64_t ms[] = { 1, 4, 16, 32, 64, 128, 256 };
    const BkDataType type = argc > 1 && strcmp(argv[1], "bf16") == 0 ? BK_DATA_TYPE_BF16 : BK_DATA_TYPE_F16;
    printf("%-8s %6s %6s %5s %10s %10s %8s  %s\n", "type", "K", "N", "M", "us", "GB/s", "TFLOP/s", "kernel");
    long only_shape = argc > 2 ? strtol(argv[2], NULL, 10) : -1;
    long long own_k, own_n;
    if (argc > 2 && sscanf(argv[2], "%lldx%lld", &own_k, &own_n) == 2) {
        shapes[0][0] = own_k;
        shapes[0][1] = own_n;
        only_shape = 0;
    }
    const long only_m = argc > 3 ? strtol(argv[3], NULL, 10) : -1;
    const bool tracing = getenv("BK_PROBE_TRACE") && atoi(getenv("BK_PROBE_TRACE")) > 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        if (only_shape >= 0 && (size_t)only_shape != s)
            continue;
        const int64_t k = shapes[s][0], n = shapes[s][1], g = k / 128;
        const uint64_t wbytes = (uint64_t)k * n / 2, sbytes = (uint64_t)g * n * 2;
        BkDeviceAddress w[SETS], sc[SETS];
        for (int i = 0; i < SETS; i++) {
            w[i] = alloc(wbytes, 0x9ab4c5d3u + i);
            sc[i] = alloc(sbytes, 0x20002000u); /* small scales (2^-11 .. ) */
        }
        const BkDeviceAddress a = alloc(256 * k * 2, 0x3c003c00u), c = alloc(256 * n * 2, 0);
        for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
            const int64_t m = ms[mi];
            if (only_m >= 0 && only_m != m)
                continue;
            BkW4A16GemmInfo info = { .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = 128 };
            info.a = d2(type, m, k);
            info.packed = d2(BK_DATA_TYPE_I32, k / 16, 2 * n);
            info.packedScales = d2(type, g, n);
            info.c = d2(type, m, n);
            BkPlanCreateInfo pci = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &info };
            BkPlan plan;
            CHECK(bkCreatePlan(ctx, &pci, NULL, &plan));
            BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
            CHECK(bkGetPlanProperties(plan, &props));
            /* One workspace for the runs in order (stream-K's, where taken). */
            const BkDeviceAddress ws = props.workspaceSize ? alloc(props.workspaceSize, 0) : 0;
            BkCommandBuffer cb;
            CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
            BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                            .usage = BK_COMMAND_BUFFER_USAGE_REUSABLE };
            CHECK(bkBeginCommandBuffer(cb, &bi));
            for (int i = 0; i < SETS; i++) {
                BkDeviceAddress b[5] = { a, w[i], sc[i], 0, c };
                BkRunInfo ri = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 5, .pBindings = b,
                                 .workspace = ws, .workspaceSize = props.workspaceSize };
                CHECK(bkCmdRun(cb, plan, &ri));
            }
            CHECK(bkEndCommandBuffer(cb));
            BkQueue q;
            CHECK(bkGetQueue(ctx, 0, &q));
            for (int i = 0; i < 3; i++)
                CHECK(bkQueueSubmit(q, 1, &cb));
            CHECK(bkQueueWaitIdle(q));
            const int reps = 25;
            double best = 1e30;
            for (int trial = 0; trial < 5; trial++) {
                const double t0 = now();
                for (int i = 0; i < reps; i++)
                    CHECK(bkQueueSubmit(q, 1, &cb));
                CHECK(bkQueueWaitIdle(q));
                const double us = (now() - t0) * 1e6 / (reps * SETS);
                if (us < best)
                    best = us;
            }
            printf("%-8s %6lld %6lld %5lld %10.2f %10.1f %8.1f  %s\n", type == BK_DATA_TYPE_BF16 ? "bf16" : "f16",
                   (long long)k, (long long)n, (long long)m, best, (wbytes + sbytes) / best * 1e-3,
                   2.0 * m * n * k / best * 1e-6, props.kernelName);
            if (tracing && m <= 8) {
                enum { CTAS = 4096 };
                uint64_t *t = calloc(8 * CTAS, 8);
                const BkDeviceAddress at = c + 2 * 16 * (uint64_t)n;
                CHECK(bkCopyFromDevice(ctx, t, at, 8 * CTAS * 8));
                const int ctas = trace_ctas(t, CTAS);
                const uint64_t t0 = trace_first(t, ctas);
                printf("trace: %d CTAs\n", ctas);
                trace_sms(t, ctas);
                trace_point("start", t, ctas, 0, t0);
                trace_point("past the wait", t, ctas, 1, t0);
                trace_point("first stage in", t, ctas, 2, t0);
                trace_point("stages done", t, ctas, 3, t0);
                trace_point("end", t, ctas, 4, t0);
                trace_between("wait to first stage", t, ctas, 1, 2);
                trace_between("stages", t, ctas, 2, 3);
                trace_between("sum and store", t, ctas, 3, 4);
                memset(t, 0, 8 * CTAS * 8);
                CHECK(bkCopyToDevice(ctx, at, t, 8 * CTAS * 8));
                free(t);
            }
            bkFreeCommandBuffer(cb);
            bkDestroyPlan(plan);
        }
    }
    bkDestroyContext(ctx);
    return 0;
}
