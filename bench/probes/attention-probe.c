/* SPDX-License-Identifier: Apache-2.0 */
/* A development probe for the attention kernels on the GPU (not bkbench):
 * at the shapes (B * L = 16k tokens, H * D = 2048, L = 8192), the
 * mean time per run of a reusable command buffer submitted 10 times, and
 * TFLOP/s over the active blocks (forward 4 B H bq bk D per block, the
 * diagonal blocks of a causal pattern counted whole; backward 2.5x).
 * Inputs are random in [-2, 2) (the softmax's row maxima move as they
 * would in use). Arguments: f16 or bf16; then fwd to skip the backward
 * (any other word runs both); then 64 or 128 to run that D only (0: both);
 * then list to give the pattern as a LIST (counts and key-block indices
 * per query block) instead of a MASK. After the patterns, the DENSE form
 * ("dense") and DENSE with the causal mask ("causal", its diagonal blocks
 * counted whole), at blocks of 128 only (the form has no blocks).
 * BK_PROBE_PATTERNS (e.g. "dense,100,dense,100") runs only those, in that
 * order (100, 50, 25, 10 a density; window, dense, causal); BK_PROBE_RANDOM
 * makes the densities' blocks independent (see spread); BK_PROBE_BLOCK (64
 * or 128) runs that block size only; BK_PROBE_ATOMICS=1 lets the backward
 * add dQ with float atomics (BK_ATTENTION_ALLOW_ATOMICS_BIT).
 * bench/device-run.sh does not run it; build:
 *   cc -O2 -I include -I BUILD/include bench/probes/attention-probe.c -L BUILD/.libs -lbk */
#define _POSIX_C_SOURCE 200809L
#include <bk/bk.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { BkResult r_ = (x); if (r_ != BK_SUCCESS) { \
    fprintf(stderr, "%s: %s (%s)\n", #x, bkResultString(r_), bkGetLastErrorMessage()); exit(1); } } while (0)

static BkContext ctx;
static BkQueue queue;

/* Where block (i, j) falls in 0..99: regular ((i * 7 + j * 13) % 100, so
 * that neighbouring query blocks share most of their key blocks), or with
 * BK_PROBE_RANDOM set, a hash of (i, j): independent blocks, as bkbench's
 * random rows (neighbours then share few). */
static int spread(int64_t i, int64_t j, bool random)
{
    if (!random)
        return (int)((i * 7 + j * 13) % 100);
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)j * 2246822519u;
    x ^= x >> 15;
    x *= 2654435761u;
    x ^= x >> 13;
    return (int)(x % 100u);
}

static BkDeviceAddress alloc(uint64_t bytes, uint32_t fill)
{
    BkMemoryAllocateInfo ai = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = bytes ? bytes : 4 };
    BkMemory m;
    CHECK(bkAllocateMemory(ctx, &ai, NULL, &m));
    BkDeviceAddress a;
    CHECK(bkGetMemoryAddress(m, &a));
    BkCommandBuffer cb;
    CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .usage = BK_COMMAND_BUFFER_USAGE_ONE_TIME };
    CHECK(bkBeginCommandBuffer(cb, &bi));
    CHECK(bkCmdFillMemory(cb, a, (ai.size + 3) / 4 * 4, fill));
    CHECK(bkEndCommandBuffer(cb));
    CHECK(bkQueueSubmit(queue, 1, &cb));
    CHECK(bkQueueWaitIdle(queue));
    bkFreeCommandBuffer(cb);
    return a;
}

/* A buffer of n random F16 or BF16 values in [-2, 2). */
static BkDeviceAddress alloc_random(uint64_t n, BkDataType type)
{
    BkDeviceAddress a = alloc(2 * n, 0);
    uint16_t *h = malloc(2 * n);
    uint32_t x = 12345;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        const float f = ((x >> 8) * (1.0f / 16777216.0f)) * 4.0f - 2.0f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (type == BK_DATA_TYPE_BF16) {
            h[i] = (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        } else { /* |f| < 2: a normal F16 or zero, rounded toward zero */
            const uint32_t sign = (bits >> 16) & 0x8000u;
            const int e = (int)((bits >> 23) & 0xFF) - 127 + 15;
            h[i] = (uint16_t)(e <= 0 ? sign : sign | (uint32_t)e << 10 | ((bits >> 13) & 0x3FFu));
        }
    }
    CHECK(bkCopyToDevice(ctx, a, h, 2 * n));
    free(h);
    return a;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static BkTensorDesc d4(BkDataType t, int64_t b, int64_t h, int64_t l, int64_t d)
{
    BkTensorDesc x = { .dataType = t, .rank = 4, .extent = { b, h, l, d } };
    return x;
}

/* Seconds per run of plan (mean of 10 replays after 2). */
static double time_plan(BkPlan plan, uint32_t n, const BkDeviceAddress *bind)
{
    BkPlanProperties pp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    CHECK(bkGetPlanProperties(plan, &pp));
    BkDeviceAddress ws = pp.workspaceSize ? alloc(pp.workspaceSize, 0) : 0;
    BkRunInfo ri = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = n, .pBindings = bind,
                     .workspace = ws, .workspaceSize = pp.workspaceSize };
    BkCommandBuffer cb;
    CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .usage = BK_COMMAND_BUFFER_USAGE_REUSABLE };
    CHECK(bkBeginCommandBuffer(cb, &bi));
    CHECK(bkCmdRun(cb, plan, &ri));
    CHECK(bkEndCommandBuffer(cb));
    for (int i = 0; i < 2; i++)
        CHECK(bkQueueSubmit(queue, 1, &cb));
    CHECK(bkQueueWaitIdle(queue));
    const int reps = 10;
    double t0 = now();
    for (int i = 0; i < reps; i++)
        CHECK(bkQueueSubmit(queue, 1, &cb));
    CHECK(bkQueueWaitIdle(queue));
    double t = (now() - t0) / reps;
    bkFreeCommandBuffer(cb);
    return t;
}

int main(int argc, char **argv)
{
    const BkDataType type = argc > 1 && !strcmp(argv[1], "bf16") ? BK_DATA_TYPE_BF16
                                                                 : BK_DATA_TYPE_F16;
    const bool forward_only = argc > 2 && !strcmp(argv[2], "fwd");
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_CUDA };
    CHECK(bkCreateContext(&ci, NULL, &ctx));
    CHECK(bkGetQueue(ctx, 0, &queue));
    const int64_t L = 8192, B = 2;
    const int64_t only_d = argc > 3 ? atoll(argv[3]) : 0; /* 64 or 128: that D only */
    const bool as_list = argc > 4 && !strcmp(argv[4], "list");
    for (int64_t D = 64; D <= 128; D *= 2) {
        if (only_d && D != only_d)
            continue;
        const int64_t H = 2048 / D;
        const uint64_t bytes = (uint64_t)(B * H * L * D) * 2;
        const uint64_t elements = bytes / 2;
        BkDeviceAddress q = alloc_random(elements, type), k = alloc_random(elements, type),
                        v = alloc_random(elements, type), y = alloc(bytes, 0),
                        dy = alloc_random(elements, type), dq = alloc(bytes, 0),
                        dk = alloc(bytes, 0), dv = alloc(bytes, 0),
                        lse = alloc((uint64_t)(B * H * L) * 4, 0);
        const char *one_block = getenv("BK_PROBE_BLOCK");
        for (int32_t blk = 64; blk <= 128; blk *= 2) {
            if (one_block && atoi(one_block) != blk)
                continue;
            const int64_t nb = L / blk;
            uint8_t *mask = malloc((size_t)(nb * nb));
            /* density d: block (i, j) active when spread(i, j) < d, plus the diagonal */
            static const int all[] = { 100, 50, 25, 10, -1, -2, -3 };
            int dens[64], count = 0;
            const char *only = getenv("BK_PROBE_PATTERNS");
            const bool random = getenv("BK_PROBE_RANDOM") != NULL;
            const char *atomics_env = getenv("BK_PROBE_ATOMICS");
            const bool atomics = atomics_env && *atomics_env && strcmp(atomics_env, "0") != 0;
            for (const char *t = only; t && *t && count < 64; t += strcspn(t, ","), t += *t == ',')
                dens[count++] = !strncmp(t, "window", 6)  ? -1
                                : !strncmp(t, "dense", 5) ? -2
                                : !strncmp(t, "causal", 6) ? -3
                                                           : atoi(t);
            for (int i = 0; !only && i < 7; i++)
                dens[count++] = all[i];
            for (int di = 0; di < count; di++) {
                int64_t active = 0;
                const bool window = dens[di] == -1, dense = dens[di] < -1;
                const bool causal = window || dens[di] == -3;
                if (dense && blk != 128)
                    continue;
                for (int64_t i = 0; i < nb; i++)
                    for (int64_t j = 0; j < nb; j++) {
                        bool on = window ? (j <= i && (i - j) * blk < 1024 + blk) || j == 0
                                  : dense ? true
                                          : (spread(i, j, random) < dens[di] || i == j);
                        if (causal && j > i)
                            on = false;
                        mask[i * nb + j] = on;
                        active += on;
                    }
                BkDeviceAddress m = alloc((uint64_t)(nb * nb), 0), cnt = 0, idx = 0;
                CHECK(bkCopyToDevice(ctx, m, mask, (uint64_t)(nb * nb)));
                BkAttentionPattern pat = { .form = BK_ATTENTION_PATTERN_MASK, .blockQ = blk,
                                           .blockK = blk };
                pat.mask = (BkTensorDesc){ .dataType = BK_DATA_TYPE_U8, .rank = 3,
                                           .extent = { 1, 1, nb * nb } };
                if (as_list) {
                    /* The same blocks as counts and indices, capacity the longest row. */
                    int32_t *counts = calloc((size_t)nb, sizeof *counts);
                    int32_t *indices = calloc((size_t)(nb * nb), sizeof *indices);
                    int64_t capacity = 1;
                    for (int64_t i = 0; i < nb; i++) {
                        for (int64_t j = 0; j < nb; j++)
                            if (mask[i * nb + j])
                                indices[i * nb + counts[i]++] = (int32_t)j;
                        capacity = counts[i] > capacity ? counts[i] : capacity;
                    }
                    int32_t *packed = calloc((size_t)(nb * capacity), sizeof *packed);
                    for (int64_t i = 0; i < nb; i++)
                        memcpy(packed + i * capacity, indices + i * nb,
                               (size_t)counts[i] * sizeof *packed);
                    cnt = alloc((uint64_t)nb * 4, 0);
                    idx = alloc((uint64_t)(nb * capacity) * 4, 0);
                    CHECK(bkCopyToDevice(ctx, cnt, counts, (uint64_t)nb * 4));
                    CHECK(bkCopyToDevice(ctx, idx, packed, (uint64_t)(nb * capacity) * 4));
                    pat.form = BK_ATTENTION_PATTERN_LIST;
                    pat.mask = (BkTensorDesc){ 0 };
                    pat.counts = (BkTensorDesc){ .dataType = BK_DATA_TYPE_I32, .rank = 3,
                                                 .extent = { 1, 1, nb } };
                    pat.indices = (BkTensorDesc){ .dataType = BK_DATA_TYPE_I32, .rank = 4,
                                                  .extent = { 1, 1, nb, capacity } };
                    free(counts);
                    free(indices);
                    free(packed);
                    m = 0;
                }
                if (dense) {
                    pat = (BkAttentionPattern){ .form = BK_ATTENTION_PATTERN_DENSE };
                    m = 0;
                }
                BkAttentionInfo fi = {
                    .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .scale = 0.125,
                    .flags = causal ? BK_ATTENTION_CAUSAL_BIT : 0, .pattern = pat,
                    .q = d4(type, B, H, L, D), .k = d4(type, B, H, L, D),
                    .v = d4(type, B, H, L, D), .y = d4(type, B, H, L, D),
                    .lse = { .dataType = BK_DATA_TYPE_F32, .rank = 3, .extent = { B, H, L } },
                };
                BkAttentionBackwardInfo bi = {
                    .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, .scale = 0.125,
                    .flags = fi.flags | (atomics ? BK_ATTENTION_ALLOW_ATOMICS_BIT : 0),
                    .pattern = pat, .q = fi.q, .k = fi.k, .v = fi.v,
                    .y = fi.y, .lse = fi.lse, .dy = fi.y, .dq = fi.q, .dk = fi.k, .dv = fi.v,
                };
                BkPlanCreateInfo pc = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO,
                                        .pOperation = &fi };
                BkPlan fp, bp;
                CHECK(bkCreatePlan(ctx, &pc, NULL, &fp));
                pc.pOperation = &bi;
                CHECK(bkCreatePlan(ctx, &pc, NULL, &bp));
                const BkDeviceAddress fb[8] = { q, k, v, m, cnt, idx, y, lse };
                const BkDeviceAddress bb[12] = { q, k, v, m, cnt, idx, y, lse, dy, dq, dk, dv };
                const double tf = time_plan(fp, 8, fb);
                const double tb = forward_only ? 1e9 : time_plan(bp, 12, bb);
                const double flops = 4.0 * B * H * blk * blk * D * (double)active;
                BkPlanProperties pf = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES },
                                 pb = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
                bkGetPlanProperties(fp, &pf);
                bkGetPlanProperties(bp, &pb);
                char pname[16];
                snprintf(pname, sizeof pname, window ? "window" : dens[di] == -2 ? "dense"
                                             : dens[di] == -3                 ? "causal"
                                                                              : "%d%%",
                         dens[di]);
                printf("%s D%-3lld blk%-3d %-7s density %5.1f%%  fwd %8.3f ms %6.1f TFLOP/s (%s)"
                       "  bwd %8.3f ms %6.1f TFLOP/s (%s)\n",
                       type == BK_DATA_TYPE_F16 ? "f16" : "bf16", (long long)D, blk, pname,
                       100.0 * active / (nb * nb), tf * 1e3, flops / tf * 1e-12, pf.kernelName,
                       tb * 1e3, 2.5 * flops / tb * 1e-12, pb.kernelName);
                fflush(stdout);
                bkDestroyPlan(fp);
                bkDestroyPlan(bp);
            }
            free(mask);
        }
    }
    bkDestroyContext(ctx);
    return 0;
}
