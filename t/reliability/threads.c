/* SPDX-License-Identifier: Apache-2.0 */
/* Thread safety: many threads share one context, its plans and read-only
 * memory; each has its own command buffers and its own queue (bkGetQueue
 * index = thread number). Meant to run under ThreadSanitizer (configure
 * --enable-sanitizers=thread) or helgrind as well as plainly.
 *
 * What it shows, for bk(7):
 * - one context may be used from many threads at once: bkGetQueue,
 *   bkAllocateMemory/bkFreeMemory, bkAllocateCommandBuffer/bkFreeCommandBuffer,
 *   bkCreatePlan/bkDestroyPlan, bkCopyToDevice/bkCopyFromDevice;
 * - a plan may be used by many threads at once (bkCmdRun, bkGetPlanProperties)
 *   and gives the same bits as when used alone: gated activations, and a
 *   dense GEMM with a workspace of each thread's own;
 * - command buffers and queues are not shared: one thread each, here;
 * - bkEnumerateDevices and bkCreateContext/bkDestroyContext of separate
 *   contexts may run concurrently;
 * - the last error message is per thread: threads failing differently at
 *   the same time each read their own;
 * - the message callback runs on the failing thread, before the call
 *   returns, with that thread's message; bkSetMessageCallback may be called
 *   while other threads fail, and every call then sees a callback together
 *   with the user data it was set with (never a mix of two settings). */
#include "config.h"

#include "rel_util.h"
#include "../lib/tap.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16

static BkContext ctx;
static BkPlan fwd_plan, bwd_plan, gemm_plan;
static BkDeviceAddress x_addr, bx_addr, dy_addr;      /* shared inputs */
static BkDeviceAddress ga_addr, gb_addr, gc_addr, gbias_addr;
static uint64_t gemm_workspace;
static float ref_gd[32 * 24];
static float ref_y[64 * 64];
static double ref_dx[32 * 16];
static int iterations;
static unsigned nthreads;
static pthread_barrier_t barrier;

static atomic_long mismatches, call_failures, wrong_messages, callback_mixups,
    callback_off_thread, callback_calls, swaps;
static atomic_bool workers_done;
static struct rel_alloc stats;
static BkAllocationCallbacks cb;

static const BkGatedActivationInfo fwd_info = {
    .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, .kind = BK_GATED_ACTIVATION_SWIGLU,
    .splitAxis = 1,
    .input = { BK_DATA_TYPE_F32, 2, { 64, 128 }, { 0 } },
    .output = { BK_DATA_TYPE_F32, 2, { 64, 64 }, { 0 } },
};
static const BkGatedActivationBackwardInfo bwd_info = {
    .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, .kind = BK_GATED_ACTIVATION_GEGLU,
    .splitAxis = 0,
    .input = { BK_DATA_TYPE_F64, 2, { 32, 16 }, { 0 } },
    .gradOutput = { BK_DATA_TYPE_F64, 2, { 16, 16 }, { 0 } },
    .gradInput = { BK_DATA_TYPE_F64, 2, { 32, 16 }, { 0 } },
};

/* D [32, 24] = gelu(A [32, 40] @ B^T (B [24, 40]) / 2 + 2 C + bias). */
static const BkGemmInfo gemm_info = {
    .sType = BK_STRUCTURE_TYPE_GEMM_INFO, .transB = BK_GEMM_OP_T,
    .activation = BK_GEMM_ACTIVATION_GELU_TANH, .alpha = 0.5, .beta = 2.0,
    .a = { BK_DATA_TYPE_F32, 2, { 32, 40 }, { 0 } },
    .b = { BK_DATA_TYPE_F32, 2, { 24, 40 }, { 0 } },
    .c = { BK_DATA_TYPE_F32, 2, { 32, 24 }, { 0 } },
    .d = { BK_DATA_TYPE_F32, 2, { 32, 24 }, { 0 } },
    .bias = { BK_DATA_TYPE_F32, 1, { 24 }, { 0 } },
};

/* ---- Message callbacks ------------------------------------------------------ */

/* Two settings of the callback; each must always arrive with its own
 * user data. The last message is kept per thread to compare. */
static int tag_a, tag_b;
static _Thread_local char seen[512];
static _Thread_local unsigned seen_count;

static void on_message(BkResult r, const char *msg, void *user, void *expect)
{
    (void)r;
    atomic_fetch_add(&callback_calls, 1);
    if (user != expect)
        atomic_fetch_add(&callback_mixups, 1);
    /* On the failing thread, before the call returns: its own message. */
    if (strcmp(msg, bkGetLastErrorMessage()) != 0)
        atomic_fetch_add(&callback_off_thread, 1);
    snprintf(seen, sizeof seen, "%s", msg);
    seen_count++;
}

static void callback_a(BkResult r, const char *msg, void *user)
{
    on_message(r, msg, user, &tag_a);
}

static void callback_b(BkResult r, const char *msg, void *user)
{
    on_message(r, msg, user, &tag_b);
}

static void *toggler(void *arg)
{
    (void)arg;
    for (long i = 0; !atomic_load(&workers_done); i++) {
        if (i % 2)
            bkSetMessageCallback(callback_a, &tag_a);
        else
            bkSetMessageCallback(callback_b, &tag_b);
        atomic_fetch_add(&swaps, 1);
        sched_yield(); /* let the workers fail in between */
    }
    bkSetMessageCallback(callback_a, &tag_a);
    return NULL;
}

/* ---- Work ----------------------------------------------------------------- */

static BkMemory alloc_mem(uint64_t size, BkDeviceAddress *addr)
{
    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .size = size };
    BkMemory m = BK_NULL_HANDLE;
    if (bkAllocateMemory(ctx, &mi, NULL, &m) != BK_SUCCESS ||
        bkGetMemoryAddress(m, addr) != BK_SUCCESS) {
        atomic_fetch_add(&call_failures, 1);
        return BK_NULL_HANDLE;
    }
    return m;
}

/* Records forward, backward, the GEMM (into gd, with workspace ws) and a
 * fill into cmd and submits it on q. */
static bool run_all(BkCommandBuffer cmd, BkQueue q, BkPlan fwd, BkDeviceAddress y,
                    BkDeviceAddress dx, BkDeviceAddress gd, BkDeviceAddress ws,
                    BkDeviceAddress fill, uint32_t pattern, bool reusable)
{
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .usage = reusable ? BK_COMMAND_BUFFER_USAGE_REUSABLE
                                                      : BK_COMMAND_BUFFER_USAGE_ONE_TIME };
    BkDeviceAddress bf[2] = { x_addr, y }, bb[3] = { bx_addr, dy_addr, dx };
    BkRunInfo rf = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2, .pBindings = bf };
    BkRunInfo rb = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 3, .pBindings = bb };
    BkDeviceAddress bg[5] = { ga_addr, gb_addr, gc_addr, gd, gbias_addr };
    BkRunInfo rg = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 5, .pBindings = bg,
                     .workspace = ws, .workspaceSize = gemm_workspace };
    return bkBeginCommandBuffer(cmd, &bi) == BK_SUCCESS && bkCmdRun(cmd, fwd, &rf) == BK_SUCCESS &&
           bkCmdRun(cmd, bwd_plan, &rb) == BK_SUCCESS &&
           bkCmdRun(cmd, gemm_plan, &rg) == BK_SUCCESS &&
           bkCmdFillMemory(cmd, fill, 1024, pattern) == BK_SUCCESS &&
           bkEndCommandBuffer(cmd) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS &&
           (!reusable || bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS) &&
           bkQueueWaitIdle(q) == BK_SUCCESS;
}

/* Fails two different ways with a number only this thread uses, waits for
 * every thread to have failed too, then reads its own message back. */
static void own_messages(unsigned id, int iter)
{
    char want[64];
    BkQueue q;
    unsigned index = 1000 + id * 100 + (unsigned)iter % 100;
    unsigned before = seen_count;
    if (bkGetQueue(ctx, index, &q) != BK_ERROR_INVALID_ARGUMENT)
        atomic_fetch_add(&call_failures, 1);
    pthread_barrier_wait(&barrier);
    snprintf(want, sizeof want, "queueIndex = %u", index);
    if (!strstr(bkGetLastErrorMessage(), want) || seen_count == before || !strstr(seen, want))
        atomic_fetch_add(&wrong_messages, 1);

    BkGatedActivationInfo bad = fwd_info;
    bad.splitAxis = 10 + id;
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &bad };
    BkPlan p;
    if (bkCreatePlan(ctx, &pi, &cb, &p) != BK_ERROR_INVALID_ARGUMENT)
        atomic_fetch_add(&call_failures, 1);
    pthread_barrier_wait(&barrier);
    snprintf(want, sizeof want, "splitAxis = %u", 10 + id);
    if (!strstr(bkGetLastErrorMessage(), want) || !strstr(seen, want))
        atomic_fetch_add(&wrong_messages, 1);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    BkQueue q;
    BkCommandBuffer cmd[2];
    BkDeviceAddress y, dx, fill, gd, ws = 0;
    BkMemory my = alloc_mem(sizeof ref_y, &y), mdx = alloc_mem(sizeof ref_dx, &dx);
    BkMemory mfill = alloc_mem(1024, &fill), mgd = alloc_mem(sizeof ref_gd, &gd);
    BkMemory mws = gemm_workspace ? alloc_mem(gemm_workspace, &ws) : BK_NULL_HANDLE;
    if (bkGetQueue(ctx, id, &q) != BK_SUCCESS ||
        bkAllocateCommandBuffer(ctx, NULL, &cmd[0]) != BK_SUCCESS ||
        bkAllocateCommandBuffer(ctx, &cb, &cmd[1]) != BK_SUCCESS || !my || !mdx || !mfill ||
        !mgd || (gemm_workspace && !mws)) {
        atomic_fetch_add(&call_failures, 1);
        pthread_barrier_wait(&barrier); /* keep the others' barriers matched */
        for (int i = 0; i < iterations; i++) {
            pthread_barrier_wait(&barrier);
            pthread_barrier_wait(&barrier);
        }
        return NULL;
    }
    pthread_barrier_wait(&barrier); /* start together */
    static float got_y[MAX_THREADS][64 * 64];
    static double got_dx[MAX_THREADS][32 * 16];
    static uint32_t got_fill[MAX_THREADS][256];
    static float got_gd[MAX_THREADS][32 * 24];
    for (int i = 0; i < iterations; i++) {
        /* A private plan and memory each time, made while others do too. */
        BkPlan own = BK_NULL_HANDLE;
        BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO,
                                .pOperation = &fwd_info };
        bool use_own = i % 3 == 1 && bkCreatePlan(ctx, &pi, i % 2 ? &cb : NULL, &own) == BK_SUCCESS;
        BkDeviceAddress tmp;
        BkMemory mtmp = alloc_mem(4096 + 64 * id, &tmp);

        uint32_t pattern = id * 1000u + (uint32_t)i;
        if (!run_all(cmd[i % 2], q, use_own ? own : fwd_plan, y, dx, gd, ws, fill, pattern,
                     i % 2))
            atomic_fetch_add(&call_failures, 1);
        if (bkCopyFromDevice(ctx, got_gd[id], gd, sizeof ref_gd) != BK_SUCCESS ||
            memcmp(got_gd[id], ref_gd, sizeof ref_gd))
            atomic_fetch_add(&mismatches, 1);
        if (bkCopyFromDevice(ctx, got_y[id], y, sizeof ref_y) != BK_SUCCESS ||
            bkCopyFromDevice(ctx, got_dx[id], dx, sizeof ref_dx) != BK_SUCCESS ||
            bkCopyFromDevice(ctx, got_fill[id], fill, 1024) != BK_SUCCESS)
            atomic_fetch_add(&call_failures, 1);
        if (memcmp(got_y[id], ref_y, sizeof ref_y) || memcmp(got_dx[id], ref_dx, sizeof ref_dx))
            atomic_fetch_add(&mismatches, 1);
        for (int k = 0; k < 256; k++)
            if (got_fill[id][k] != pattern) {
                atomic_fetch_add(&mismatches, 1);
                break;
            }

        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        if (bkGetPlanProperties(bwd_plan, &props) != BK_SUCCESS || props.bindingCount != 3)
            atomic_fetch_add(&call_failures, 1);
        uint32_t count = 0;
        if (bkEnumerateDevices(&count, NULL) != BK_SUCCESS || count < 1)
            atomic_fetch_add(&call_failures, 1);
        if (i % 4 == 0) { /* a context of its own, made and dropped */
            BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                                       .deviceType = BK_DEVICE_TYPE_HOST };
            BkContext other;
            if (bkCreateContext(&ci, &cb, &other) != BK_SUCCESS)
                atomic_fetch_add(&call_failures, 1);
            else
                bkDestroyContext(other);
        }
        own_messages(id, i);
        bkFreeMemory(ctx, mtmp);
        bkDestroyPlan(own);
    }
    bkFreeCommandBuffer(cmd[0]);
    bkFreeCommandBuffer(cmd[1]);
    bkFreeMemory(ctx, my);
    bkFreeMemory(ctx, mdx);
    bkFreeMemory(ctx, mfill);
    bkFreeMemory(ctx, mgd);
    bkFreeMemory(ctx, mws);
    return NULL;
}

/* ---- Set-up ------------------------------------------------------------------- */

static BkPlan make_plan(const void *info)
{
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = info };
    BkPlan p;
    if (bkCreatePlan(ctx, &pi, NULL, &p) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    return p;
}

static BkDeviceAddress upload(const void *data, uint64_t size, BkMemory *mem)
{
    BkDeviceAddress a;
    *mem = alloc_mem(size, &a);
    if (!*mem || bkCopyToDevice(ctx, a, data, size) != BK_SUCCESS)
        tap_bail("upload: %s", bkGetLastErrorMessage());
    return a;
}

int main(void)
{
    cb = rel_alloc_callbacks(&stats);
    bkSetMessageCallback(callback_a, &tag_a);
    /* The device under test (BK_TEST_DEVICE, as in the rest of the suite):
     * on CUDA every thread then submits to its own stream. */
    const char *dev = getenv("BK_TEST_DEVICE");
    BkDeviceType type = BK_DEVICE_TYPE_HOST;
    if (dev && !strcmp(dev, "cuda"))
        type = BK_DEVICE_TYPE_CUDA;
    else if (dev && !strcmp(dev, "auto"))
        type = BK_DEVICE_TYPE_AUTO;
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = type };
    if (bkCreateContext(&ci, &cb, &ctx) != BK_SUCCESS) {
        const char *req = getenv("BK_TEST_REQUIRE_GPU");
        if (type == BK_DEVICE_TYPE_CUDA && !(req && !strcmp(req, "1"))) {
            printf("1..0 # SKIP no CUDA device: %s\n", bkGetLastErrorMessage());
            return 0;
        }
        tap_bail("bkCreateContext: %s", bkGetLastErrorMessage());
    }
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    if (bkGetContextProperties(ctx, &props) != BK_SUCCESS)
        tap_bail("bkGetContextProperties: %s", bkGetLastErrorMessage());
    nthreads = props.queueCount < MAX_THREADS ? props.queueCount : MAX_THREADS;
    iterations = rel_slow_run() ? 6 : 40;
    tap_plan(7);
    tap_diag("%u threads (one per queue), %d iterations each", nthreads, iterations);

    static float x[64 * 128];
    static double bx[32 * 16], dy[16 * 16];
    struct rel_rng g = { 7 };
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++)
        x[i] = (float)((double)rel_below(&g, 2001) / 250.0 - 4.0);
    for (size_t i = 0; i < sizeof bx / sizeof bx[0]; i++)
        bx[i] = (double)rel_below(&g, 2001) / 250.0 - 4.0;
    for (size_t i = 0; i < sizeof dy / sizeof dy[0]; i++)
        dy[i] = (double)rel_below(&g, 2001) / 500.0 - 2.0;
    BkMemory mx, mbx, mdy, my, mdx, mfill;
    x_addr = upload(x, sizeof x, &mx);
    bx_addr = upload(bx, sizeof bx, &mbx);
    dy_addr = upload(dy, sizeof dy, &mdy);
    fwd_plan = make_plan(&fwd_info);
    bwd_plan = make_plan(&bwd_info);
    static float ga[32 * 40], gb[24 * 40], gc[32 * 24], gbias[24];
    for (size_t i = 0; i < sizeof ga / sizeof ga[0]; i++)
        ga[i] = (float)((double)rel_below(&g, 2001) / 1000.0 - 1.0);
    for (size_t i = 0; i < sizeof gb / sizeof gb[0]; i++)
        gb[i] = (float)((double)rel_below(&g, 2001) / 1000.0 - 1.0);
    for (size_t i = 0; i < sizeof gc / sizeof gc[0]; i++)
        gc[i] = (float)((double)rel_below(&g, 2001) / 1000.0 - 1.0);
    for (size_t i = 0; i < sizeof gbias / sizeof gbias[0]; i++)
        gbias[i] = (float)((double)rel_below(&g, 2001) / 1000.0 - 1.0);
    BkMemory mga, mgb, mgc, mgbias, mgd, mws = BK_NULL_HANDLE;
    ga_addr = upload(ga, sizeof ga, &mga);
    gb_addr = upload(gb, sizeof gb, &mgb);
    gc_addr = upload(gc, sizeof gc, &mgc);
    gbias_addr = upload(gbias, sizeof gbias, &mgbias);
    gemm_plan = make_plan(&gemm_info);
    BkPlanProperties gp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    if (bkGetPlanProperties(gemm_plan, &gp) != BK_SUCCESS)
        tap_bail("bkGetPlanProperties: %s", bkGetLastErrorMessage());
    gemm_workspace = gp.workspaceSize;

    /* The reference: the same work done by one thread alone. */
    BkDeviceAddress y, dx, fill, gd, ws = 0;
    my = alloc_mem(sizeof ref_y, &y);
    mdx = alloc_mem(sizeof ref_dx, &dx);
    mfill = alloc_mem(1024, &fill);
    mgd = alloc_mem(sizeof ref_gd, &gd);
    if (gemm_workspace)
        mws = alloc_mem(gemm_workspace, &ws);
    BkCommandBuffer cmd;
    BkQueue q0;
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS ||
        bkGetQueue(ctx, 0, &q0) != BK_SUCCESS ||
        !run_all(cmd, q0, fwd_plan, y, dx, gd, ws, fill, 0, false) ||
        bkCopyFromDevice(ctx, ref_gd, gd, sizeof ref_gd) != BK_SUCCESS ||
        bkCopyFromDevice(ctx, ref_y, y, sizeof ref_y) != BK_SUCCESS ||
        bkCopyFromDevice(ctx, ref_dx, dx, sizeof ref_dx) != BK_SUCCESS)
        tap_bail("reference run: %s", bkGetLastErrorMessage());
    bkFreeCommandBuffer(cmd);
    bkFreeMemory(ctx, my);
    bkFreeMemory(ctx, mdx);
    bkFreeMemory(ctx, mfill);
    bkFreeMemory(ctx, mgd);
    bkFreeMemory(ctx, mws);

    pthread_barrier_init(&barrier, NULL, nthreads);
    pthread_t th[MAX_THREADS], tog;
    if (pthread_create(&tog, NULL, toggler, NULL) != 0)
        tap_bail("pthread_create failed");
    for (unsigned t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0)
            tap_bail("pthread_create failed");
    for (unsigned t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    atomic_store(&workers_done, true);
    pthread_join(tog, NULL);
    pthread_barrier_destroy(&barrier);

    long expected_messages = 2L * nthreads * iterations;
    tap_is_int(atomic_load(&call_failures), 0, "every concurrent call that should work worked");
    tap_is_int(atomic_load(&mismatches), 0,
               "shared plans give every thread the single-thread result, bit for bit");
    tap_is_int(atomic_load(&wrong_messages), 0,
               "threads failing at once each read their own message (%ld failures)",
               expected_messages);
    tap_ok(atomic_load(&callback_calls) >= expected_messages,
           "the callback saw every failure (%ld calls for %ld failures) while it was swapped "
           "%ld times", atomic_load(&callback_calls), expected_messages, atomic_load(&swaps));
    tap_is_int(atomic_load(&callback_mixups), 0,
               "the callback always came with the user data it was set with");
    tap_is_int(atomic_load(&callback_off_thread), 0,
               "the callback ran on the failing thread with that thread's message");

    bkDestroyPlan(fwd_plan);
    bkDestroyPlan(bwd_plan);
    bkDestroyPlan(gemm_plan);
    bkFreeMemory(ctx, mga);
    bkFreeMemory(ctx, mgb);
    bkFreeMemory(ctx, mgc);
    bkFreeMemory(ctx, mgbias);
    bkFreeMemory(ctx, mx);
    bkFreeMemory(ctx, mbx);
    bkFreeMemory(ctx, mdy);
    bkDestroyContext(ctx);
    bkSetMessageCallback(NULL, NULL);
    tap_ok(atomic_load(&stats.live) == 0 && atomic_load(&stats.bad_frees) == 0,
           "every allocation made through the shared callbacks was freed (%ld live)",
           atomic_load(&stats.live));
    return tap_done();
}
