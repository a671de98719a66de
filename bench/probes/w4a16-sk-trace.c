/* SPDX-License-Identifier: Apache-2.0 */
/* A development probe for the W4A16 stream-K schedule (not bkbench): one
 * CUDA GEMM plan (f16, group 128) on K N M from the command line, a
 * reusable command buffer of 8 runs submitted 5 times, then the trace the
 * last run left after the plan's workspace: per CTA its start and end
 * (globaltimer) and for each tile of its share the clock cycles of the
 * main loop and of what follows (C stored, or the partial tile written,
 * or the others' copied and added). Needs the wgmma module built with
 * -DBK_W4A16_SK_TRACE (which spills, so with nvcc directly:
 *   nvcc -gencode arch=compute_90a,code=sm_90a -fatbin -O3 -DBK_W4A16_SK_TRACE
 *        -I kernels -I kernels/shared -o DIR/w4a16_wgmma.fatbin kernels/w4a16_wgmma.cu
 * with the other modules copied to DIR) and BK_CUDA_MODULE_DIR=DIR,
 * BK_CUDA_W4A16_SCHEDULE=stream-k. Build:
 *   cc -O2 -I include -I BUILD/include bench/probes/w4a16-sk-trace.c -L BUILD/.libs -lbk */
#define _POSIX_C_SOURCE 200809L
#include <bk/bk.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { BkResult r_ = (x); if (r_ != BK_SUCCESS) { fprintf(stderr, "%s: %s (%s)\n", #x, bkResultString(r_), bkGetLastErrorMessage()); exit(1); } } while (0)
static BkContext ctx;
static BkDeviceAddress alloc(uint64_t bytes, uint32_t fill)
{
    BkMemoryAllocateInfo ai = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .size = bytes };
    BkMemory m; CHECK(bkAllocateMemory(ctx, &ai, NULL, &m));
    BkDeviceAddress a; CHECK(bkGetMemoryAddress(m, &a));
    BkCommandBuffer cb; BkQueue q; CHECK(bkGetQueue(ctx, 0, &q)); CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .usage = BK_COMMAND_BUFFER_USAGE_ONE_TIME };
    CHECK(bkBeginCommandBuffer(cb, &bi)); CHECK(bkCmdFillMemory(cb, a, bytes / 4 * 4, fill)); CHECK(bkEndCommandBuffer(cb));
    CHECK(bkQueueSubmit(q, 1, &cb)); CHECK(bkQueueWaitIdle(q)); bkFreeCommandBuffer(cb);
    return a;
}
static BkTensorDesc d2(BkDataType t, int64_t r, int64_t c) { BkTensorDesc d = { .dataType = t, .rank = 2, .extent = { r, c } }; return d; }
int main(int argc, char **argv)
{
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, .deviceType = BK_DEVICE_TYPE_CUDA };
    CHECK(bkCreateContext(&ci, NULL, &ctx));
    if (argc < 4) {
        fprintf(stderr, "usage: w4a16-sk-trace K N M\n");
        return 2;
    }
    const int64_t k = atol(argv[1]), n = atol(argv[2]), m = atol(argv[3]), g = k / 128;
    const BkDataType type = BK_DATA_TYPE_F16;
    BkDeviceAddress w = alloc(k * n / 2, 0x9ab4c5d3u), sc = alloc(g * n * 2, 0x20002000u);
    BkDeviceAddress a = alloc(m * k * 2, 0x3c003c00u), c = alloc(m * n * 2, 0);
    BkW4A16GemmInfo info = { .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = 128 };
    info.a = d2(type, m, k); info.packed = d2(BK_DATA_TYPE_I32, k / 16, 2 * n);
    info.packedScales = d2(type, g, n); info.c = d2(type, m, n);
    BkPlanCreateInfo pci = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &info };
    BkPlan plan; CHECK(bkCreatePlan(ctx, &pci, NULL, &plan));
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES }; CHECK(bkGetPlanProperties(plan, &props));
    BkDeviceProperties dp = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    CHECK(bkGetContextProperties(ctx, &dp));
    const int ctas = (int)dp.multiprocessorCount; /* stream-K: one CTA an SM */
    const uint64_t trace_bytes = (uint64_t)ctas * 32 * 8;
    BkDeviceAddress ws = alloc(props.workspaceSize + trace_bytes, 0);
    BkCommandBuffer cb; CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, .usage = BK_COMMAND_BUFFER_USAGE_REUSABLE };
    CHECK(bkBeginCommandBuffer(cb, &bi));
    for (int i = 0; i < 8; i++) {
        BkDeviceAddress b[5] = { a, w, sc, 0, c };
        BkRunInfo ri = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 5, .pBindings = b, .workspace = ws, .workspaceSize = props.workspaceSize + trace_bytes };
        CHECK(bkCmdRun(cb, plan, &ri));
    }
    CHECK(bkEndCommandBuffer(cb));
    BkQueue q; CHECK(bkGetQueue(ctx, 0, &q));
    for (int i = 0; i < 5; i++) CHECK(bkQueueSubmit(q, 1, &cb));
    CHECK(bkQueueWaitIdle(q));
    uint64_t *t = malloc(trace_bytes);
    CHECK(bkCopyFromDevice(ctx, t, ws + props.workspaceSize, trace_bytes));
    printf("%s workspace %llu\n", props.kernelName, (unsigned long long)props.workspaceSize);
    uint64_t g0 = ~0ull, g1 = 0;
    for (int x = 0; x < ctas; x++) { uint64_t *r = t + 32 * x; if (r[0] < g0) g0 = r[0]; if (r[31] > g1) g1 = r[31]; }
    printf("kernel span (globaltimer) %.2f us\n", (g1 - g0) * 1e-3);
    for (int x = 0; x < ctas; x++) {
        uint64_t *r = t + 32 * x;
        printf("cta %3d start %+6.2f end %+6.2f us |", x, (r[0] - g0) * 1e-3, (r[31] - g0) * 1e-3);
        uint64_t prev = r[1];
        for (int s = 0; s < (int)r[30] && s < 7; s++) {
            uint64_t tc = r[2 + 4 * s], td = r[3 + 4 * s], inf = r[4 + 4 * s];
            printf(" [tile %llu c0 %llu n %llu %s%s: main %.0f kcyc fix %.1f kcyc]", (unsigned long long)r[5 + 4 * s],
                   (unsigned long long)((inf >> 8) & 0xffffff), (unsigned long long)(inf >> 32), (inf & 2) ? "W" : "P", (inf & 1) ? "L" : "",
                   (tc - prev) * 1e-3, (td - tc) * 1e-3);
            prev = td;
        }
        printf("\n");
    }
    return 0;
}
