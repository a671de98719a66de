/* SPDX-License-Identifier: Apache-2.0 */
/* A development probe for attention over a KV cache (not bkbench): for
 * each decode shape below (or the one given as B H Hkv Lq Lk [causal]),
 * f16 and bf16, D = 128 (BK_PROBE_D for another), the median, lowest and
 * highest of 7 batches of 20 submits of a reusable command buffer, in us a
 * run, and the bytes of K and V (the step's memory floor is those bytes
 * at the read bandwidth: bench/attention-decode-peers.py measures it and
 * times PyTorch's SDPA on the same shapes). Inputs are random in [-2, 2).
 * BK_PROBE_PER_BUFFER=N records N runs in each command buffer;
 * BK_PROBE_PAGE=N stores K and V as a paged pool [pages, Hkv, N, D], every
 * sequence's pages shuffled over it, with a block table and lengths (Lk);
 * BK_PROBE_PAGE_ORDER=seq keeps them in order (sequence b's pages one
 * stretch of the pool), which tells the pool's scatter from the walk.
 * BK_PROBE_TRACE=1, with the decode module built with -DBK_DECODE_TRACE
 * (bench/probes/decode_trace.h), prints the split and combining kernels'
 * timelines of the last run.
 * Build: cc -O2 -I include bench/probes/attention-decode-probe.c -L BUILD/.libs -lbk */
#define _POSIX_C_SOURCE 200809L
#include <bk/bk.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode_trace.h"

#define CHECK(x) do { BkResult r_ = (x); if (r_ != BK_SUCCESS) { \
    fprintf(stderr, "%s: %s (%s)\n", #x, bkResultString(r_), bkGetLastErrorMessage()); exit(1); } } while (0)

static BkContext ctx;
static BkQueue queue;

static BkDeviceAddress alloc(uint64_t bytes)
{
    BkMemoryAllocateInfo ai = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = bytes ? bytes : 4 };
    BkMemory m;
    CHECK(bkAllocateMemory(ctx, &ai, NULL, &m));
    BkDeviceAddress a;
    CHECK(bkGetMemoryAddress(m, &a));
    return a;
}

/* n random F16 or BF16 values in [-2, 2), a 64 MiB pattern repeated. */
static BkDeviceAddress alloc_random(uint64_t n, BkDataType type)
{
    BkDeviceAddress a = alloc(2 * n);
    const uint64_t chunk = n < (32u << 20) ? n : (32u << 20);
    uint16_t *h = malloc(2 * chunk);
    uint32_t x = 12345;
    for (uint64_t i = 0; i < chunk; i++) {
        x = x * 1664525u + 1013904223u;
        const float f = ((x >> 8) * (1.0f / 16777216.0f)) * 4.0f - 2.0f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (type == BK_DATA_TYPE_BF16) {
            h[i] = (uint16_t)((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
        } else {
            const uint32_t sign = (bits >> 16) & 0x8000u;
            const int e = (int)((bits >> 23) & 0xFF) - 127 + 15;
            h[i] = (uint16_t)(e <= 0 ? sign : sign | (uint32_t)e << 10 | ((bits >> 13) & 0x3FFu));
        }
    }
    for (uint64_t at = 0; at < n; at += chunk)
        CHECK(bkCopyToDevice(ctx, a + 2 * at, h, 2 * (n - at < chunk ? n - at : chunk)));
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

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs recorded in one command buffer (BK_PROBE_PER_BUFFER, default 1):
 * more than one times the plan back to back inside one submit, as the
 * layers of a step would run, without the gaps between submits. */
static int per_buffer = 1;
/* BK_PROBE_PAGE: 0 for a contiguous cache; BK_PROBE_PAGE_ORDER=seq. */
static int64_t page_size;
static bool pages_in_order;
/* BK_PROBE_TRACE: y has room for the kernels' traces after it. */
static bool tracing;
#define TRACE_BYTES (2u * 8u * 8u * 8192u)

/* n I32 values on the device. */
static BkDeviceAddress upload_i32(const int32_t *v, uint64_t n)
{
    BkDeviceAddress a = alloc(4 * n);
    CHECK(bkCopyToDevice(ctx, a, v, 4 * n));
    return a;
}

/* The split kernel's stream records (kernels/attention_decode.cu): the
 * walks of the streams that stayed in one unit and of those that crossed
 * into another, and the slowest streams. */
static void trace_streams(uint64_t *t, int n, uint64_t t0)
{
    double one[8192], two[8192];
    int n1 = 0, n2 = 0;
    for (int i = 0; i < n; i++) {
        const double walk = (t[8 * i + 1] - t[8 * i]) * 1e-3;
        if (t[8 * i + 2] <= 1)
            one[n1++] = walk;
        else
            two[n2++] = walk;
    }
    qsort(one, (size_t)n1, sizeof one[0], cmp);
    qsort(two, (size_t)n2, sizeof two[0], cmp);
    if (n1)
        printf("  one unit:   %4d streams, walk med %7.2f max %7.2f us\n", n1, one[n1 / 2],
               one[n1 - 1]);
    if (n2)
        printf("  two units:  %4d streams, walk med %7.2f max %7.2f us\n", n2, two[n2 / 2],
               two[n2 - 1]);
    for (int k = 0; k < 8; k++) { /* the slowest eight */
        int worst = -1;
        for (int i = 0; i < n; i++)
            if (t[8 * i + 1] && (worst < 0 || t[8 * i + 1] > t[8 * worst + 1]))
                worst = i;
        if (worst < 0)
            break;
        const uint64_t *r = t + 8 * worst;
        printf("  slow stream %4d: SM %3llu, %llu units, past the wait %6.2f, first unit %6.2f, "
               "end %6.2f us\n", worst, (unsigned long long)r[7], (unsigned long long)r[2],
               (r[0] - t0) * 1e-3, r[3] ? (r[3] - t0) * 1e-3 : 0.0, (r[1] - t0) * 1e-3);
        t[8 * worst + 1] = 0; /* the next slowest next */
    }
}

static void run(BkDataType type, int64_t B, int64_t H, int64_t Hkv, int64_t Lq, int64_t Lk,
                int64_t D, bool causal)
{
    const int64_t per_seq = page_size ? (Lk + page_size - 1) / page_size : 0;
    const uint64_t nq = (uint64_t)(B * H * Lq * D),
                   nkv = page_size ? (uint64_t)(B * per_seq * Hkv * page_size * D)
                                   : (uint64_t)(B * Hkv * Lk * D);
    BkDeviceAddress q = alloc_random(nq, type), k = alloc_random(nkv, type),
                    v = alloc_random(nkv, type), y = alloc(2 * nq + (tracing ? 256 + TRACE_BYTES : 0)),
                    lse = alloc((uint64_t)(B * H * Lq) * 4);
    BkAttentionInfo info = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO,
        .flags = causal ? BK_ATTENTION_CAUSAL_BIT : 0, .scale = 0.08838834764831845,
        .q = d4(type, B, H, Lq, D), .k = d4(type, B, Hkv, Lk, D), .v = d4(type, B, Hkv, Lk, D),
        .y = d4(type, B, H, Lq, D),
        .lse = { .dataType = BK_DATA_TYPE_F32, .rank = 3, .extent = { B, H, Lq } },
    };
    BkAttentionSequencesInfo seq = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO, .form = BK_ATTENTION_SEQUENCES_PADDED,
        .lengthsK = { .dataType = BK_DATA_TYPE_I32, .rank = 1, .extent = { B } },
    };
    BkAttentionPagedKvInfo paged = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO, .pNext = &seq,
        .blockTable = { .dataType = BK_DATA_TYPE_I32, .rank = 2, .extent = { B, per_seq } },
    };
    BkDeviceAddress table = 0, lengths = 0;
    if (page_size) {
        const int64_t pages = B * per_seq;
        int32_t *t = malloc((size_t)pages * sizeof *t), *l = malloc((size_t)B * sizeof *l);
        uint32_t x = 777;
        for (int64_t i = 0; i < pages; i++)
            t[i] = (int32_t)i;
        for (int64_t i = pages - 1; i > 0 && !pages_in_order; i--) {
            x = x * 1664525u + 1013904223u;
            const int64_t j = (int64_t)(x % (uint32_t)(i + 1));
            const int32_t s = t[i];
            t[i] = t[j], t[j] = s;
        }
        for (int64_t b = 0; b < B; b++)
            l[b] = (int32_t)Lk;
        table = upload_i32(t, (uint64_t)pages);
        lengths = upload_i32(l, (uint64_t)B);
        free(t), free(l);
        info.k = info.v = d4(type, pages, Hkv, page_size, D);
        info.pNext = &paged;
    }
    BkPlanCreateInfo pci = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &info };
    BkPlan plan;
    CHECK(bkCreatePlan(ctx, &pci, NULL, &plan));
    BkPlanProperties pp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    CHECK(bkGetPlanProperties(plan, &pp));
    BkDeviceAddress ws = pp.workspaceSize ? alloc(pp.workspaceSize) : 0;
    /* The traces past y's last row (kernels/attention_decode.cu). */
    const BkDeviceAddress trace_at = (y + 2 * nq + 255) / 256 * 256;
    if (tracing) {
        void *zero = calloc(1, TRACE_BYTES);
        CHECK(bkCopyToDevice(ctx, trace_at, zero, TRACE_BYTES));
        free(zero);
    }
    const BkDeviceAddress bind[11] = { q, k, v, 0, 0, 0, y, lse, 0, lengths, table };
    BkRunInfo ri = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = page_size ? 11 : 8,
                     .pBindings = bind,
                     .workspace = ws, .workspaceSize = pp.workspaceSize };
    BkCommandBuffer cb;
    CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .usage = BK_COMMAND_BUFFER_USAGE_REUSABLE };
    CHECK(bkBeginCommandBuffer(cb, &bi));
    for (int i = 0; i < per_buffer; i++)
        CHECK(bkCmdRun(cb, plan, &ri));
    CHECK(bkEndCommandBuffer(cb));
    for (int i = 0; i < 5; i++)
        CHECK(bkQueueSubmit(queue, 1, &cb));
    CHECK(bkQueueWaitIdle(queue));
    enum { BATCHES = 7, REPS = 20 };
    double t[BATCHES];
    for (int j = 0; j < BATCHES; j++) {
        const double t0 = now();
        for (int i = 0; i < REPS; i++)
            CHECK(bkQueueSubmit(queue, 1, &cb));
        CHECK(bkQueueWaitIdle(queue));
        t[j] = (now() - t0) / (REPS * per_buffer) * 1e6;
    }
    qsort(t, BATCHES, sizeof t[0], cmp);
    if (tracing) {
        uint64_t *words = calloc(TRACE_BYTES / 8, 8);
        CHECK(bkCopyFromDevice(ctx, words, trace_at, TRACE_BYTES));
        uint64_t *split = words, *comb = words + 8 * 8192;
        const int ns = trace_ctas(split, 8192), nc = trace_ctas(comb, 8192);
        const uint64_t t0 = trace_first(split, ns);
        printf("trace: split %d streams, combining %d CTAs\n", ns, nc);
        trace_point("stream past the wait", split, ns, 0, t0);
        trace_point("stream end", split, ns, 1, t0);
        trace_between("stream walk", split, ns, 0, 1);
        trace_streams(split, ns, t0);
        trace_point("combine start", comb, nc, 0, t0);
        trace_point("combine past the wait", comb, nc, 1, t0);
        trace_point("combine folded", comb, nc, 2, t0);
        trace_between("combine fold", comb, nc, 1, 2);
        free(words);
    }
    printf("decode %s D%lld B%lld H%lld/%lld Lq%lld Lk%lld%s page%lld kv_bytes %llu us %.1f "
           "[%.1f, %.1f] %s\n",
           type == BK_DATA_TYPE_BF16 ? "bf16" : "f16", (long long)D, (long long)B, (long long)H,
           (long long)Hkv, (long long)Lq, (long long)Lk, causal ? " causal" : "",
           (long long)page_size, (unsigned long long)(2 * nkv * 2), t[BATCHES / 2], t[0], t[BATCHES - 1],
           pp.kernelName);
    fflush(stdout);
    bkFreeCommandBuffer(cb);
    bkDestroyPlan(plan);
    /* Memory is freed with the context at exit; each case allocates anew. */
}

int main(int argc, char **argv)
{
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_CUDA };
    CHECK(bkCreateContext(&ci, NULL, &ctx));
    CHECK(bkGetQueue(ctx, 0, &queue));
    tracing = getenv("BK_PROBE_TRACE") && atoi(getenv("BK_PROBE_TRACE")) > 0;
    const char *pb = getenv("BK_PROBE_PER_BUFFER");
    if (pb && atoi(pb) > 0)
        per_buffer = atoi(pb);
    const char *ps = getenv("BK_PROBE_PAGE");
    page_size = ps ? atoll(ps) : 0;
    const char *po = getenv("BK_PROBE_PAGE_ORDER");
    pages_in_order = po && strcmp(po, "seq") == 0;
    const char *ds = getenv("BK_PROBE_D");
    const int64_t D = ds ? atoll(ds) : 128;
    static const int64_t shapes[][6] = {
        /* B, H, Hkv, Lq, Lk, causal */
        { 8, 64, 8, 1, 8192, 0 },   { 8, 64, 8, 1, 32768, 0 }, { 1, 64, 8, 1, 131072, 0 },
        { 32, 32, 8, 1, 4096, 0 },  { 8, 64, 8, 4, 32768, 1 }, { 8, 64, 8, 16, 8192, 1 },
        { 8, 32, 32, 1, 8192, 0 },  { 1, 64, 8, 1, 4096, 0 },
    };
    for (int t = 0; t < 2; t++) {
        const BkDataType type = t ? BK_DATA_TYPE_BF16 : BK_DATA_TYPE_F16;
        if (argc >= 6) {
            run(type, atoll(argv[1]), atoll(argv[2]), atoll(argv[3]), atoll(argv[4]),
                atoll(argv[5]), D, argc > 6);
            continue;
        }
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
            run(type, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], shapes[i][4], D,
                shapes[i][5] != 0);
    }
    bkDestroyContext(ctx);
    return 0;
}
