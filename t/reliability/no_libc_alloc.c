/* SPDX-License-Identifier: Apache-2.0 */
/* libbk never calls the C allocator when allocation callbacks are given.
 *
 * This program links libbk's own objects (not the shared library) with
 * -Wl,--wrap for every C allocation function, so each call libbk's code
 * makes to malloc, free and friends lands in a __wrap_ function here and
 * is counted; calls the C library makes internally are not (they are not
 * libbk's). A first check with NULL callbacks proves the counting works. */
#include "config.h"

#include "rel_util.h"
#include "../lib/tap.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>

/* ---- The wrapped C allocator ---------------------------------------------- */

static long calls;            /* allocator calls while counting */
static const char *first_call;
static bool counting;

static void note(const char *fn)
{
    if (!counting)
        return;
    if (calls++ == 0)
        first_call = fn;
}

#define WRAP_PROTO(ret, name, params) ret __real_##name params; ret __wrap_##name params;
WRAP_PROTO(void *, malloc, (size_t n))
WRAP_PROTO(void *, calloc, (size_t n, size_t m))
WRAP_PROTO(void *, realloc, (void *p, size_t n))
WRAP_PROTO(void *, reallocarray, (void *p, size_t n, size_t m))
WRAP_PROTO(void, free, (void *p))
WRAP_PROTO(void *, aligned_alloc, (size_t a, size_t n))
WRAP_PROTO(int, posix_memalign, (void **p, size_t a, size_t n))
WRAP_PROTO(void *, memalign, (size_t a, size_t n))
WRAP_PROTO(char *, strdup, (const char *s))
WRAP_PROTO(char *, strndup, (const char *s, size_t n))

void *__wrap_malloc(size_t n) { note("malloc"); return __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t m) { note("calloc"); return __real_calloc(n, m); }
void *__wrap_realloc(void *p, size_t n) { note("realloc"); return __real_realloc(p, n); }
void *__wrap_reallocarray(void *p, size_t n, size_t m)
{
    note("reallocarray");
    return __real_reallocarray(p, n, m);
}
void __wrap_free(void *p) { if (p) note("free"); __real_free(p); }
void *__wrap_aligned_alloc(size_t a, size_t n)
{
    note("aligned_alloc");
    return __real_aligned_alloc(a, n);
}
int __wrap_posix_memalign(void **p, size_t a, size_t n)
{
    note("posix_memalign");
    return __real_posix_memalign(p, a, n);
}
void *__wrap_memalign(size_t a, size_t n) { note("memalign"); return __real_memalign(a, n); }
char *__wrap_strdup(const char *s) { note("strdup"); return __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { note("strndup"); return __real_strndup(s, n); }

/* The counting callbacks get their memory around the wrap. */
static void *system_malloc(size_t n) { return __real_malloc(n); }
static void system_free(void *p) { __real_free(p); }

/* ---- A whole life cycle ------------------------------------------------------ */

static const BkGatedActivationInfo fwd = {
    .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, .kind = BK_GATED_ACTIVATION_GEGLU_TANH,
    .splitAxis = 0,
    .input = { BK_DATA_TYPE_BF16, 3, { 4, 3, 5 }, { 0 } },
    .output = { BK_DATA_TYPE_BF16, 3, { 2, 3, 5 }, { 0 } },
};
static const BkGatedActivationBackwardInfo bwd = {
    .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, .kind = BK_GATED_ACTIVATION_REGLU,
    .splitAxis = 1,
    .input = { BK_DATA_TYPE_F16, 2, { 3, 8 }, { 0 } },
    .gradOutput = { BK_DATA_TYPE_F16, 2, { 3, 4 }, { 0 } },
    .gradInput = { BK_DATA_TYPE_F16, 2, { 3, 8 }, { 0 } },
};

/* Every constructor, recording with growth, submission, error paths and
 * destruction; child objects get 'child' (callbacks or NULL). Returns the
 * number of steps that failed. */
static int life_cycle(const BkAllocationCallbacks *ctx_alloc, const BkAllocationCallbacks *child)
{
    int bad = 0;
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_HOST };
    BkContext ctx;
    if (bkCreateContext(&ci, ctx_alloc, &ctx) != BK_SUCCESS)
        return 1;
    BkMemory mem[20];
    BkDeviceAddress addr[20];
    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .size = 4096 };
    static const unsigned char zeros[4096];
    for (int i = 0; i < 20; i++) /* more than the registry's first capacity */
        bad += bkAllocateMemory(ctx, &mi, child, &mem[i]) != BK_SUCCESS ||
               bkGetMemoryAddress(mem[i], &addr[i]) != BK_SUCCESS ||
               bkCopyToDevice(ctx, addr[i], zeros, sizeof zeros) != BK_SUCCESS;

    BkPlan pf, pb;
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &fwd };
    bad += bkCreatePlan(ctx, &pi, child, &pf) != BK_SUCCESS;
    pi.pOperation = &bwd;
    bad += bkCreatePlan(ctx, &pi, child, &pb) != BK_SUCCESS;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    bad += bkGetPlanProperties(pf, &props) != BK_SUCCESS;

    BkCommandBuffer cmd;
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .usage = BK_COMMAND_BUFFER_USAGE_REUSABLE };
    bad += bkAllocateCommandBuffer(ctx, child, &cmd) != BK_SUCCESS;
    bad += bkBeginCommandBuffer(cmd, &bi) != BK_SUCCESS;
    for (int i = 0; i < 40; i++) {
        BkDeviceAddress bf[2] = { addr[0], addr[1] }, bb[3] = { addr[2], addr[3], addr[4] };
        BkRunInfo rf = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2, .pBindings = bf };
        BkRunInfo rb = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 3, .pBindings = bb };
        bad += bkCmdRun(cmd, i % 2 ? pf : pb, i % 2 ? &rf : &rb) != BK_SUCCESS;
        bad += bkCmdFillMemory(cmd, addr[5], 256, 0x3f800000u) != BK_SUCCESS;
        bad += bkCmdCopyMemory(cmd, addr[6], addr[5], 256) != BK_SUCCESS;
    }
    bad += bkEndCommandBuffer(cmd) != BK_SUCCESS;
    BkQueue q;
    bad += bkGetQueue(ctx, 3, &q) != BK_SUCCESS;
    bad += bkQueueSubmit(q, 1, &cmd) != BK_SUCCESS;
    bad += bkQueueSubmit(q, 1, &cmd) != BK_SUCCESS;
    bad += bkQueueWaitIdle(q) != BK_SUCCESS;

    /* Failing calls record messages: that must not allocate either. */
    BkRunInfo wrong = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 7 };
    bad += bkCmdRun(cmd, pf, &wrong) != BK_ERROR_INVALID_STATE;
    bad += bkGetQueue(ctx, 1000, &q) != BK_ERROR_INVALID_ARGUMENT;
    uint32_t count = 0;
    bad += bkEnumerateDevices(&count, NULL) != BK_SUCCESS || count < 1;
    bad += bkImportQueue(ctx, &q, &q) >= 0;

    bkFreeCommandBuffer(cmd);
    bkDestroyPlan(pf);
    bkDestroyPlan(pb);
    for (int i = 0; i < 20; i++)
        bkFreeMemory(ctx, mem[i]);
    bkDestroyContext(ctx);
    return bad;
}

int main(void)
{
    struct rel_alloc stats;
    rel_alloc_set_system(system_malloc, system_free);
    BkAllocationCallbacks cb = rel_alloc_callbacks(&stats);
    tap_plan(4);

    counting = true;
    int bad = life_cycle(NULL, NULL);
    counting = false;
    tap_ok(bad == 0 && calls > 0, "without callbacks libbk's calls to the C allocator are "
           "counted (%ld calls; the wrapping works)", calls);

    calls = 0, first_call = NULL;
    counting = true;
    bad = life_cycle(&cb, &cb);
    counting = false;
    tap_ok(bad == 0, "life cycle with callbacks everywhere (%d steps failed)", bad);
    if (!tap_ok(calls == 0, "with callbacks everywhere libbk makes no C allocator call (%ld)",
                calls))
        tap_diag("first call: %s", first_call);

    calls = 0, first_call = NULL;
    counting = true;
    bad = life_cycle(&cb, NULL);
    counting = false;
    if (!tap_ok(bad == 0 && calls == 0, "with callbacks on the context only (children NULL: the "
                "context's callbacks) no C allocator call (%ld; %d steps failed)", calls, bad))
        tap_diag("first call: %s", first_call ? first_call : "none");
    return tap_done();
}
