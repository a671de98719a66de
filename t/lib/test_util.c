/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by the libbk tests: see test_util.h. */
#include "config.h"

#include "test_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The device under test ------------------------------------------- */

static BkResult open_context(BkDeviceType type, BkContext *ctx)
{
    BkContextCreateInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
        .deviceType = type,
        .apiVersion = BK_HEADER_VERSION,
    };
    return bkCreateContext(&info, NULL, ctx);
}

static bool gpu_required(void)
{
    const char *v = getenv("BK_TEST_REQUIRE_GPU");
    return v && strcmp(v, "1") == 0;
}

static void announce(BkContext ctx)
{
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    if (bkGetContextProperties(ctx, &props) == BK_SUCCESS)
        tap_diag("device: %s %u (%s)", bkt_device_name(props.deviceType), props.deviceIndex,
                 props.name);
}

BkContext bkt_open_cuda(void)
{
    BkContext ctx = BK_NULL_HANDLE;
    BkResult r = open_context(BK_DEVICE_TYPE_CUDA, &ctx);
    if (r != BK_SUCCESS) {
        if (!gpu_required())
            tap_skip_all("no CUDA device: %s (%s)", bkResultString(r), bkGetLastErrorMessage());
        /* TAP wants a plan before the failure; exit non-zero as well. */
        printf("1..1\nnot ok 1 - open a CUDA context (BK_TEST_REQUIRE_GPU=1)\n");
        printf("# %s: %s\n", bkResultString(r), bkGetLastErrorMessage());
        exit(1);
    }
    bkt_capture_messages();
    announce(ctx);
    return ctx;
}

BkContext bkt_open_host(void)
{
    BkContext ctx = BK_NULL_HANDLE;
    BkResult r = open_context(BK_DEVICE_TYPE_HOST, &ctx);
    if (r != BK_SUCCESS)
        tap_bail("cannot open a host context: %s (%s)", bkResultString(r), bkGetLastErrorMessage());
    bkt_capture_messages();
    announce(ctx);
    return ctx;
}

BkContext bkt_open_device(void)
{
    const char *want = getenv("BK_TEST_DEVICE");
    if (!want || !*want || strcmp(want, "host") == 0)
        return bkt_open_host();
    if (strcmp(want, "cuda") == 0)
        return bkt_open_cuda();
    if (strcmp(want, "auto") == 0) {
        BkContext ctx = BK_NULL_HANDLE;
        BkResult r = open_context(BK_DEVICE_TYPE_AUTO, &ctx);
        if (r != BK_SUCCESS)
            tap_bail("cannot open an auto context: %s (%s)", bkResultString(r),
                     bkGetLastErrorMessage());
        bkt_capture_messages();
        announce(ctx);
        return ctx;
    }
    tap_bail("BK_TEST_DEVICE=%s: expected host, cuda or auto", want);
}

BkDeviceType bkt_device_type(BkContext ctx)
{
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    if (bkGetContextProperties(ctx, &props) != BK_SUCCESS)
        tap_bail("bkGetContextProperties failed: %s", bkGetLastErrorMessage());
    return props.deviceType;
}

const char *bkt_device_name(BkDeviceType type)
{
    switch (type) {
    case BK_DEVICE_TYPE_HOST: return "host";
    case BK_DEVICE_TYPE_CUDA: return "cuda";
    case BK_DEVICE_TYPE_AUTO: return "auto";
    default: return "unknown";
    }
}

bool bkt_emulated(void)
{
    const char *valgrind = getenv("BK_TEST_UNDER_VALGRIND");
    const char *runner = getenv("BK_TEST_RUNNER");
    return (valgrind && *valgrind && strcmp(valgrind, "0") != 0) || (runner && *runner);
}

BkQueue bkt_queue(BkContext ctx)
{
    BkQueue queue = BK_NULL_HANDLE;
    if (bkGetQueue(ctx, 0, &queue) != BK_SUCCESS)
        tap_bail("bkGetQueue(0) failed: %s", bkGetLastErrorMessage());
    return queue;
}

/* ---- Device buffers ---------------------------------------------------- */

struct bkt_buffer bkt_alloc(BkContext ctx, uint64_t size)
{
    struct bkt_buffer buf = { .size = (size + 3) / 4 * 4 };
    if (buf.size == 0)
        buf.size = 4;
    BkMemoryAllocateInfo info = {
        .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .size = buf.size,
        .memoryType = BK_MEMORY_TYPE_DEVICE,
    };
    BkResult r = bkAllocateMemory(ctx, &info, NULL, &buf.memory);
    if (r != BK_SUCCESS)
        tap_bail("bkAllocateMemory(%llu) failed: %s (%s)", (unsigned long long)buf.size,
                 bkResultString(r), bkGetLastErrorMessage());
    if (bkGetMemoryAddress(buf.memory, &buf.address) != BK_SUCCESS || buf.address == 0)
        tap_bail("bkGetMemoryAddress failed: %s", bkGetLastErrorMessage());
    return buf;
}

void bkt_free(BkContext ctx, struct bkt_buffer *buf)
{
    bkFreeMemory(ctx, buf->memory);
    buf->memory = BK_NULL_HANDLE;
    buf->address = 0;
}

void bkt_upload(BkContext ctx, BkDeviceAddress dst, const void *src, uint64_t size)
{
    BkResult r = bkCopyToDevice(ctx, dst, src, size);
    if (r != BK_SUCCESS)
        tap_bail("bkCopyToDevice failed: %s (%s)", bkResultString(r), bkGetLastErrorMessage());
}

void bkt_download(BkContext ctx, void *dst, BkDeviceAddress src, uint64_t size)
{
    BkResult r = bkCopyFromDevice(ctx, dst, src, size);
    if (r != BK_SUCCESS)
        tap_bail("bkCopyFromDevice failed: %s (%s)", bkResultString(r), bkGetLastErrorMessage());
}

/* One command in a command buffer (one-time unless usage says otherwise),
 * submitted 'submits' times (0: once) to queue 'queue_index'. */
struct one_command {
    enum { FILL, RUN } what;
    uint32_t queue_index;
    BkCommandBufferUsage usage;
    uint32_t submits;
    BkDeviceAddress dst;
    uint64_t size;
    uint32_t pattern;
    BkPlan plan;
    uint32_t binding_count;
    const BkDeviceAddress *bindings;
};

static BkResult submit_one(BkContext ctx, const struct one_command *c)
{
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    BkResult r = bkAllocateCommandBuffer(ctx, NULL, &cmd);
    if (r != BK_SUCCESS)
        return r;
    BkCommandBufferBeginInfo begin = {
        .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .usage = c->usage,
    };
    /* A plan that needs a workspace gets a fresh one of its size. */
    BkMemory workspace = BK_NULL_HANDLE;
    BkDeviceAddress workspace_address = 0;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    if (c->what == RUN && bkGetPlanProperties(c->plan, &props) == BK_SUCCESS &&
        props.workspaceSize > 0) {
        BkMemoryAllocateInfo info = {
            .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .size = props.workspaceSize,
        };
        r = bkAllocateMemory(ctx, &info, NULL, &workspace);
        if (r == BK_SUCCESS)
            r = bkGetMemoryAddress(workspace, &workspace_address);
        /* Poisoned: a plan may not rely on a zeroed workspace (its runs
         * after the first, as replays, see what the runs before left). */
        if (r == BK_SUCCESS && props.workspaceSize >= 4)
            r = bkt_fill(ctx, workspace_address, props.workspaceSize / 4 * 4, 0xA5A5A5A5u);
    }
    if (r == BK_SUCCESS)
        r = bkBeginCommandBuffer(cmd, &begin);
    if (r == BK_SUCCESS) {
        if (c->what == FILL) {
            r = bkCmdFillMemory(cmd, c->dst, c->size, c->pattern);
        } else {
            BkRunInfo run = {
                .sType = BK_STRUCTURE_TYPE_RUN_INFO,
                .bindingCount = c->binding_count,
                .pBindings = c->bindings,
                .workspace = workspace_address,
                .workspaceSize = workspace ? props.workspaceSize : 0,
            };
            r = bkCmdRun(cmd, c->plan, &run);
        }
    }
    if (r == BK_SUCCESS)
        r = bkEndCommandBuffer(cmd);
    BkQueue queue = BK_NULL_HANDLE;
    if (r == BK_SUCCESS)
        r = bkGetQueue(ctx, c->queue_index, &queue);
    for (uint32_t i = 0; r == BK_SUCCESS && i < (c->submits ? c->submits : 1); i++)
        r = bkQueueSubmit(queue, 1, &cmd);
    if (r == BK_SUCCESS)
        r = bkQueueWaitIdle(queue);
    bkFreeCommandBuffer(cmd);
    bkFreeMemory(ctx, workspace);
    return r;
}

BkResult bkt_fill(BkContext ctx, BkDeviceAddress dst, uint64_t size, uint32_t pattern)
{
    struct one_command c = { .what = FILL, .dst = dst, .size = size, .pattern = pattern };
    return submit_one(ctx, &c);
}

BkResult bkt_run(BkContext ctx, BkPlan plan, uint32_t bindingCount,
                 const BkDeviceAddress *bindings)
{
    return bkt_run_on(ctx, 0, BK_COMMAND_BUFFER_USAGE_ONE_TIME, 1, plan, bindingCount, bindings);
}

BkResult bkt_run_on(BkContext ctx, uint32_t queueIndex, BkCommandBufferUsage usage,
                    uint32_t submits, BkPlan plan, uint32_t bindingCount,
                    const BkDeviceAddress *bindings)
{
    struct one_command c = {
        .what = RUN, .queue_index = queueIndex, .usage = usage, .submits = submits,
        .plan = plan, .binding_count = bindingCount, .bindings = bindings,
    };
    return submit_one(ctx, &c);
}

BkResult bkt_create_plan(BkContext ctx, const void *opInfo, BkPlan *plan)
{
    BkPlanCreateInfo info = {
        .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO,
        .pOperation = opInfo,
    };
    return bkCreatePlan(ctx, &info, NULL, plan);
}

/* ---- Expected results and messages ------------------------------------ */

static struct {
    unsigned count;
    BkResult result;
    char message[1024];
} captured;

static void capture(BkResult result, const char *message, void *user)
{
    (void)user;
    captured.count++;
    captured.result = result;
    snprintf(captured.message, sizeof captured.message, "%s", message ? message : "(null)");
}

void bkt_capture_messages(void)
{
    bkSetMessageCallback(capture, NULL);
}

unsigned bkt_message_count(void)
{
    return captured.count;
}

static unsigned count_at_begin;

void bkt_expect_begin(void)
{
    bkt_capture_messages();
    count_at_begin = captured.count;
    captured.message[0] = '\0';
}

bool bkt_expect_end(BkResult got, BkResult want, const char *needle, const char *fmt, ...)
{
    const char *last = bkGetLastErrorMessage();
    bool fresh = captured.count != count_at_begin;
    bool ok = got == want;
    if (ok && want < 0)
        ok = fresh && captured.result == got && last && strcmp(captured.message, last) == 0 &&
             (!needle || strstr(last, needle));

    char desc[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(desc, sizeof desc, fmt, ap);
    va_end(ap);
    tap_ok(ok, "%s", desc);
    if (!ok) {
        tap_diag("expected %s, got %s", bkResultString(want), bkResultString(got));
        if (want < 0 && needle)
            tap_diag("message should name \"%s\"", needle);
        tap_diag("bkGetLastErrorMessage: \"%s\"", last ? last : "(null)");
        tap_diag("message callback: %s \"%s\"", fresh ? "called with" : "not called; last was",
                 captured.message);
    }
    return ok;
}

const char *bkt_pick_needle(BkResult r, const char *const *needles)
{
    if (r >= 0 || !needles[0])
        return needles[0];
    for (unsigned i = 0; needles[i]; i++)
        if (!strstr(bkGetLastErrorMessage(), needles[i]))
            return needles[i];
    return needles[0];
}

static long stray_plans; /* failed creates that left a handle */

bool bkt_expect_plan(BkContext ctx, const void *info, BkResult code, const char *what,
                     const char *const *needles)
{
    BkPlan plan = (BkPlan)(uintptr_t)1;
    bkt_expect_begin();
    BkResult r = bkt_create_plan(ctx, info, &plan);
    const char *needle = bkt_pick_needle(r, needles);
    if (r < 0 && plan != BK_NULL_HANDLE) {
        stray_plans++;
        plan = BK_NULL_HANDLE;
    }
    bool ok = bkt_expect_end(r, code, needle, "%s", what);
    bkDestroyPlan(plan);
    return ok;
}

long bkt_stray_plans(void)
{
    return stray_plans;
}

/* ---- Counting host allocator ------------------------------------------- */

static void *counting_alloc(void *user, size_t size, size_t alignment)
{
    struct bkt_alloc_stats *s = user;
    long call = s->calls++;
    if (alignment == 0 || (alignment & (alignment - 1)))
        s->bad_alignment++;
    if (s->fail_from >= 0 && call >= s->fail_from)
        return NULL;
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    void *p = NULL;
    if (posix_memalign(&p, alignment, size ? size : 1) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof s->live / sizeof s->live[0]; i++)
        if (!s->live[i]) {
            s->live[i] = p;
            break;
        }
    s->allocations++;
    return p;
}

static void counting_free(void *user, void *p)
{
    struct bkt_alloc_stats *s = user;
    if (!p)
        return;
    s->frees++;
    for (size_t i = 0; i < sizeof s->live / sizeof s->live[0]; i++)
        if (s->live[i] == p) {
            s->live[i] = NULL;
            free(p);
            return;
        }
    s->unknown_frees++;   /* not ours: leak it rather than corrupt the heap */
}

BkAllocationCallbacks bkt_counting_allocator(struct bkt_alloc_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    stats->fail_from = -1;
    BkAllocationCallbacks cb = {
        .pUserData = stats,
        .pfnAllocation = counting_alloc,
        .pfnFree = counting_free,
    };
    return cb;
}

long bkt_alloc_live(const struct bkt_alloc_stats *stats)
{
    return stats->allocations - stats->frees;
}

bool bkt_plan_allocation_failures_clean(BkContext ctx, const void *op_info, bool *made,
                                        long *points)
{
    struct bkt_alloc_stats st;
    BkAllocationCallbacks cb = bkt_counting_allocator(&st);
    BkPlanCreateInfo info = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = op_info };
    BkPlan plan = BK_NULL_HANDLE;
    *points = 0;
    *made = bkCreatePlan(ctx, &info, &cb, &plan) == BK_SUCCESS;
    if (!*made)
        return false;
    bkDestroyPlan(plan);
    *points = st.calls;
    bool ok = *points > 0 && bkt_alloc_live(&st) == 0;
    for (long k = 0; ok && k < *points; k++) {
        cb = bkt_counting_allocator(&st);
        st.fail_from = k;
        plan = (BkPlan)(uintptr_t)1;
        BkResult r = bkCreatePlan(ctx, &info, &cb, &plan);
        if (r == BK_SUCCESS) {
            bkDestroyPlan(plan);
            ok = false;
            continue;
        }
        ok = r == BK_ERROR_OUT_OF_HOST_MEMORY && plan == BK_NULL_HANDLE &&
             bkt_alloc_live(&st) == 0 && st.unknown_frees == 0 && st.bad_alignment == 0;
    }
    return ok;
}

bool bkt_slots_match(BkPlan plan, const char *what, const struct bkt_slot_want *want,
                     uint32_t count, BkPlanProperties *props)
{
    BkPlanBindingProperties bind = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    *props = (BkPlanProperties){ .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &bind };
    bool ok = bkGetPlanProperties(plan, props) == BK_SUCCESS && bind.bindingCount == count &&
              props->bindingCount == count;
    for (uint32_t i = 0; ok && i < count; i++) {
        const BkBindingProperties *b = &bind.bindings[i];
        if (strcmp(b->name, want[i].name) || b->size != want[i].size ||
            b->alignment != want[i].alignment || b->written != (want[i].written ? 1u : 0u)) {
            tap_diag("%s: slot %u is \"%s\", %llu bytes, aligned to %llu, written %u; expected "
                     "\"%s\", %llu, %u, %d", what, i, b->name, (unsigned long long)b->size,
                     (unsigned long long)b->alignment, b->written, want[i].name,
                     (unsigned long long)want[i].size, want[i].alignment, want[i].written);
            ok = false;
        }
    }
    props->pNext = NULL; /* bind goes out of scope */
    return ok;
}

uint64_t bkt_slot_addresses(const struct bkt_buffer *big, const struct bkt_slot_want *want,
                            uint32_t count, BkDeviceAddress *addr)
{
    uint64_t at = 0;
    for (uint32_t i = 0; i < count; i++) {
        addr[i] = want[i].size ? big->address + at : 0;
        at += (want[i].size + 256 + 255) / 256 * 256;
    }
    return at;
}
