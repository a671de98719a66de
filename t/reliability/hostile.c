/* SPDX-License-Identifier: Apache-2.0 */
/* The cases a hostile run found, one process each (a hang or a crash in
 * one is that case's failure, not the program's): every one must give a
 * negative BkResult whose message names the field, or the right result.
 * - output pNext chains that loop (bkGetPlanProperties,
 *   bkGetContextProperties, bkEnumerateDevices);
 * - empty tensors whose other extents or strides overflow, and products
 *   of valid sizes that overflow (attention blocks, the mask's stride,
 *   the GEMM batch stride);
 * - synchronous copies whose range wraps the address space;
 * - an interleaved written layout that reaches no element twice (2:4
 *   values F32 [2, 4] with strides {3, 2}) runs and writes what the
 *   contiguous layout does;
 * - a host context of deviceIndex 1;
 * - a backward plan without lse, and a binding inside a BkMemory of
 *   another context. */
#include "config.h"

#include "rel_util.h"
#include "../lib/tap.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A watchdog for a case that hangs: generous, it only tells a hang from
 * an answer. */
#define HANG_SECONDS 60

static BkContext ctx;

static BkContext open_host(void)
{
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_HOST };
    BkContext c = BK_NULL_HANDLE;
    if (bkCreateContext(&ci, NULL, &c) != BK_SUCCESS)
        tap_bail("bkCreateContext: %s", bkGetLastErrorMessage());
    return c;
}

/* want_r and a message holding every one of the words (NULL-terminated). */
static bool failed_naming(BkResult r, BkResult want_r, const char *const *words)
{
    if (r != want_r) {
        fprintf(stderr, "got %s (%s), want %s\n", bkResultString(r), bkGetLastErrorMessage(),
                bkResultString(want_r));
        return false;
    }
    for (; *words; words++)
        if (!strstr(bkGetLastErrorMessage(), *words)) {
            fprintf(stderr, "the message does not say \"%s\": %s\n", *words,
                    bkGetLastErrorMessage());
            return false;
        }
    return true;
}
#define NAMING(r, want, ...) failed_naming((r), (want), (const char *const[]){ __VA_ARGS__, NULL })

/* Runs one case in a child process: true when it returned true. */
static void run_case(const char *name, bool (*fn)(void))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        tap_bail("fork failed");
    if (pid == 0) {
        alarm(HANG_SECONDS);
        _exit(fn() ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        tap_diag("%s: killed by signal %d%s", name, WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (it hung)" : "");
    tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", name);
}

/* ---- Output chains -------------------------------------------------------- */

static BkPlan small_plan(void)
{
    BkGatedActivationInfo op = { .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
                                 .kind = BK_GATED_ACTIVATION_SWIGLU };
    op.input = (BkTensorDesc){ .dataType = BK_DATA_TYPE_F32, .rank = 1, .extent = { 8 } };
    op.output = (BkTensorDesc){ .dataType = BK_DATA_TYPE_F32, .rank = 1, .extent = { 4 } };
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &op };
    BkPlan plan = BK_NULL_HANDLE;
    if (bkCreatePlan(ctx, &pi, NULL, &plan) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    return plan;
}

static bool plan_chain_cycle(void)
{
    BkPlan plan = small_plan();
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    BkPlanBindingProperties slots = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    BkBaseOutStructure x = { .sType = (BkStructureType)12345 };
    slots.pNext = &x;
    x.pNext = (BkBaseOutStructure *)&slots;
    props.pNext = &slots;
    bool ok = NAMING(bkGetPlanProperties(plan, &props), BK_ERROR_INVALID_ARGUMENT,
                     "BkPlanProperties.pNext", "cycle");
    props.pNext = &props; /* the head itself */
    ok &= NAMING(bkGetPlanProperties(plan, &props), BK_ERROR_INVALID_ARGUMENT,
                 "BkPlanProperties.pNext");
    /* A long chain that ends is still filled, every struct of it. */
    enum { LONG = 1000 };
    static BkPlanBindingProperties chain[LONG];
    for (int i = 0; i < LONG; i++)
        chain[i] = (BkPlanBindingProperties){ .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES,
                                              .pNext = i + 1 < LONG ? &chain[i + 1] : NULL };
    props.pNext = &chain[0];
    ok &= bkGetPlanProperties(plan, &props) == BK_SUCCESS &&
          chain[LONG - 1].bindingCount == props.bindingCount && props.bindingCount == 2;
    bkDestroyPlan(plan);
    return ok;
}

static bool context_chain_cycle(void)
{
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    BkDeviceModuleProperties m = { .sType = BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES };
    m.pNext = &m;
    props.pNext = &m;
    return NAMING(bkGetContextProperties(ctx, &props), BK_ERROR_INVALID_ARGUMENT,
                  "BkDeviceProperties.pNext", "BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES");
}

static bool enumerate_chain_cycle(void)
{
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    BkDeviceModuleProperties m = { .sType = BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES };
    BkBaseOutStructure x = { .sType = (BkStructureType)777 };
    m.pNext = &x;
    x.pNext = (BkBaseOutStructure *)&props;
    props.pNext = &m;
    uint32_t n = 1;
    return NAMING(bkEnumerateDevices(&n, &props), BK_ERROR_INVALID_ARGUMENT,
                  "pProperties[0].pNext", "cycle");
}

/* ---- Overflow --------------------------------------------------------------- */

static BkTensorDesc t4(BkDataType type, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return (BkTensorDesc){ .dataType = type, .rank = 4, .extent = { a, b, c, d } };
}

static BkResult plan_of(const void *op)
{
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = op };
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkCreatePlan(ctx, &pi, NULL, &plan);
    bkDestroyPlan(plan);
    return r;
}

static BkAttentionInfo mask_forward(int64_t b, int64_t h, int64_t lq, int64_t lk, int64_t d)
{
    const BkDataType f = BK_DATA_TYPE_F16;
    BkAttentionInfo a = { .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .scale = 0.125 };
    a.pattern = (BkAttentionPattern){ .form = BK_ATTENTION_PATTERN_MASK, .blockQ = 16,
                                      .blockK = 16 };
    a.pattern.mask = (BkTensorDesc){ .dataType = BK_DATA_TYPE_U8, .rank = 3, .extent = { 1, 1, 1 } };
    a.q = t4(f, b, h, lq, d);
    a.k = t4(f, b, h, lk, d);
    a.v = t4(f, b, h, lk, d);
    a.y = t4(f, b, h, lq, d);
    return a;
}

static bool empty_attention_huge_lq(void)
{
    BkAttentionInfo a = mask_forward(0, 8, INT64_MAX, 0, 32);
    bool ok = NAMING(plan_of(&a), BK_ERROR_INVALID_ARGUMENT, "BkAttentionInfo.q");
    a.k = a.v = t4(BK_DATA_TYPE_F16, 0, 8, 16, 32); /* Lk != 0 */
    return ok && NAMING(plan_of(&a), BK_ERROR_INVALID_ARGUMENT, "BkAttentionInfo.q");
}

static BkAttentionBackwardInfo backward_of(const BkAttentionInfo *f)
{
    BkAttentionBackwardInfo b = { .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO,
                                  .scale = f->scale, .pattern = f->pattern, .q = f->q, .k = f->k,
                                  .v = f->v, .y = f->y, .dy = f->y, .dq = f->q, .dk = f->k,
                                  .dv = f->v };
    b.lse = (BkTensorDesc){ .dataType = BK_DATA_TYPE_F32, .rank = 3,
                            .extent = { f->q.extent[0], f->q.extent[1], f->q.extent[2] } };
    return b;
}

static bool empty_backward_huge_lk(void)
{
    BkAttentionInfo f = mask_forward(1, 0, 4, INT64_MAX, 32);
    f.pattern = (BkAttentionPattern){ .form = BK_ATTENTION_PATTERN_DENSE };
    BkAttentionBackwardInfo b = backward_of(&f);
    bool ok = NAMING(plan_of(&b), BK_ERROR_INVALID_ARGUMENT, "BkAttentionBackwardInfo.k");
    /* The largest Lk that fits F16 with D = 1: accepted, and the run
     * (nothing to compute: H = 0) returns. */
    f = mask_forward(1, 0, 4, INT64_MAX / 4, 1);
    f.pattern = (BkAttentionPattern){ .form = BK_ATTENTION_PATTERN_DENSE };
    b = backward_of(&f);
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &b };
    BkPlan plan = BK_NULL_HANDLE;
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    BkQueue q;
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    BkDeviceAddress none[12] = { 0 };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 12,
                      .pBindings = none };
    BkResult r;
    if ((r = bkCreatePlan(ctx, &pi, NULL, &plan)) != BK_SUCCESS ||
        (r = bkAllocateCommandBuffer(ctx, NULL, &cmd)) != BK_SUCCESS ||
        (r = bkBeginCommandBuffer(cmd, &bi)) != BK_SUCCESS ||
        (r = bkCmdRun(cmd, plan, &run)) != BK_SUCCESS ||
        (r = bkEndCommandBuffer(cmd)) != BK_SUCCESS || (r = bkGetQueue(ctx, 0, &q)) != BK_SUCCESS ||
        (r = bkQueueSubmit(q, 1, &cmd)) != BK_SUCCESS || (r = bkQueueWaitIdle(q)) != BK_SUCCESS) {
        fprintf(stderr, "empty backward with Lk = INT64_MAX / 4: %s (%s)\n", bkResultString(r),
                bkGetLastErrorMessage());
        ok = false;
    }
    bkFreeCommandBuffer(cmd);
    bkDestroyPlan(plan);
    return ok;
}

static bool empty_gemm_huge_batch_stride(void)
{
    const int64_t big = (int64_t)1 << 40;
    BkTensorDesc m = { .dataType = BK_DATA_TYPE_F32, .rank = 3, .extent = { 0, big, big } };
    BkGemmInfo g = { .sType = BK_STRUCTURE_TYPE_GEMM_INFO, .alpha = 1, .a = m, .b = m, .d = m };
    return NAMING(plan_of(&g), BK_ERROR_INVALID_ARGUMENT, "BkGemmInfo.a");
}

static bool mask_stride_overflow(void)
{
    BkAttentionInfo a = mask_forward(1, 1, 16, 32, 32); /* nbq = 1, nbk = 2 */
    a.pattern.mask.extent[2] = 2;
    a.pattern.mask.stride[0] = a.pattern.mask.stride[1] = 1;
    a.pattern.mask.stride[2] = (int64_t)1 << 62;
    return NAMING(plan_of(&a), BK_ERROR_INVALID_ARGUMENT, "pattern.mask.stride[2]");
}

/* ---- Synchronous copies ------------------------------------------------------ */

static bool copies_wrap(void)
{
    char buf[64] = { 0 };
    const BkDeviceAddress edge = UINT64_MAX - 15;
    bool ok = NAMING(bkCopyFromDevice(ctx, buf, edge, 64), BK_ERROR_INVALID_ARGUMENT, "src",
                     "wraps");
    ok &= NAMING(bkCopyToDevice(ctx, edge, buf, 64), BK_ERROR_INVALID_ARGUMENT, "dst", "wraps");
    /* A host pointer whose range wraps, the device side valid. */
    ok &= NAMING(bkCopyToDevice(ctx, (BkDeviceAddress)(uintptr_t)buf, (void *)(uintptr_t)edge, 64),
                 BK_ERROR_INVALID_ARGUMENT, "pSrc", "wraps");
    return ok;
}

/* ---- An interleaved written layout ------------------------------------------ */

static BkResult compress(const BkTensorDesc *values, float *dense, float *vals, uint16_t *meta)
{
    BkSparse24ConvertInfo ci = { .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO,
                                 .conversion = BK_SPARSE24_COMPRESS_STRICT };
    ci.dense = (BkTensorDesc){ .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 2, 8 } };
    ci.values = *values;
    ci.metadata = (BkTensorDesc){ .dataType = BK_DATA_TYPE_U16, .rank = 2, .extent = { 2, 1 } };
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &ci };
    BkPlan plan = BK_NULL_HANDLE;
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    BkQueue q;
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    static BkSparse24Report report;
    const BkDeviceAddress b[4] = { (uintptr_t)dense, (uintptr_t)vals, (uintptr_t)meta,
                                   (uintptr_t)&report };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 4, .pBindings = b };
    BkResult r;
    if ((r = bkCreatePlan(ctx, &pi, NULL, &plan)) == BK_SUCCESS &&
        (r = bkAllocateCommandBuffer(ctx, NULL, &cmd)) == BK_SUCCESS &&
        (r = bkBeginCommandBuffer(cmd, &bi)) == BK_SUCCESS &&
        (r = bkCmdRun(cmd, plan, &run)) == BK_SUCCESS &&
        (r = bkEndCommandBuffer(cmd)) == BK_SUCCESS && (r = bkGetQueue(ctx, 0, &q)) == BK_SUCCESS &&
        (r = bkQueueSubmit(q, 1, &cmd)) == BK_SUCCESS)
        r = bkQueueWaitIdle(q);
    bkFreeCommandBuffer(cmd);
    bkDestroyPlan(plan);
    return r;
}

static bool interleaved_values(void)
{
    /* Two 2:4 rows: each group of four keeps two nonzeros. */
    float dense[16] = { 1, 0, 2, 0, 0, 3, 0, 4, 0, 5, 6, 0, 7, 0, 0, 8 };
    float flat[8], strided[10];
    uint16_t meta_flat[2], meta_strided[2];
    for (int i = 0; i < 10; i++)
        strided[i] = -99.0f; /* offsets 1 and 8 are never reached */
    BkTensorDesc values = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { 2, 4 } };
    BkResult r = compress(&values, dense, flat, meta_flat);
    if (r != BK_SUCCESS) {
        fprintf(stderr, "contiguous values: %s\n", bkGetLastErrorMessage());
        return false;
    }
    values.stride[0] = 3, values.stride[1] = 2; /* offsets 0 2 4 6 and 3 5 7 9 */
    r = compress(&values, dense, strided, meta_strided);
    if (r != BK_SUCCESS) {
        fprintf(stderr, "values strides {3, 2}: %s (%s)\n", bkResultString(r),
                bkGetLastErrorMessage());
        return false;
    }
    bool ok = meta_flat[0] == meta_strided[0] && meta_flat[1] == meta_strided[1] &&
              strided[1] == -99.0f && strided[8] == -99.0f;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++)
            ok &= strided[3 * i + 2 * j] == flat[4 * i + j];
    /* Strides {2, 1} reach offset 2 from [0, 2] and [1, 0]: refused. */
    values.stride[0] = 2, values.stride[1] = 1;
    return ok && NAMING(compress(&values, dense, strided, meta_strided),
                        BK_ERROR_INVALID_ARGUMENT, "BkSparse24ConvertInfo.values.stride",
                        "[1, 0]", "[0, 2]");
}

/* ---- Codes and messages ----------------------------------------------------- */

static bool host_device_index(void)
{
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_HOST, .deviceIndex = 1 };
    BkContext c = BK_NULL_HANDLE;
    return NAMING(bkCreateContext(&ci, NULL, &c), BK_ERROR_INVALID_ARGUMENT,
                  "BkContextCreateInfo.deviceIndex") && c == BK_NULL_HANDLE;
}

static bool backward_without_lse(void)
{
    BkAttentionInfo f = mask_forward(1, 2, 16, 16, 32);
    f.pattern = (BkAttentionPattern){ .form = BK_ATTENTION_PATTERN_DENSE };
    BkAttentionBackwardInfo b = backward_of(&f);
    b.lse = (BkTensorDesc){ 0 };
    return NAMING(plan_of(&b), BK_ERROR_INVALID_ARGUMENT, "BkAttentionBackwardInfo.lse",
                  "forward");
}

static bool memory_of_another_context(void)
{
    BkContext other = open_host();
    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .size = 4096,
                                .memoryType = BK_MEMORY_TYPE_DEVICE };
    BkMemory mem = BK_NULL_HANDLE;
    BkDeviceAddress at = 0;
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    if (bkAllocateMemory(other, &mi, NULL, &mem) != BK_SUCCESS ||
        bkGetMemoryAddress(mem, &at) != BK_SUCCESS ||
        bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS ||
        bkBeginCommandBuffer(cmd, &bi) != BK_SUCCESS)
        tap_bail("set-up: %s", bkGetLastErrorMessage());
    BkPlan plan = small_plan();
    static float mine[8];
    BkDeviceAddress b[2] = { (uintptr_t)mine, at + 64 };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2, .pBindings = b };
    bool ok = NAMING(bkCmdRun(cmd, plan, &run), BK_ERROR_INVALID_ARGUMENT, "pBindings[1]",
                     "output", "another context");
    ok &= NAMING(bkCmdCopyMemory(cmd, at, (uintptr_t)mine, 16), BK_ERROR_INVALID_ARGUMENT,
                 "dst", "another context");
    ok &= NAMING(bkCopyToDevice(ctx, at, mine, 16), BK_ERROR_INVALID_ARGUMENT, "dst",
                 "another context");
    /* Its own context may use it. */
    ok &= bkCopyToDevice(other, at, mine, 16) == BK_SUCCESS;
    bkDestroyPlan(plan);
    bkFreeCommandBuffer(cmd);
    bkFreeMemory(other, mem);
    bkDestroyContext(other);
    return ok;
}

int main(void)
{
    ctx = open_host();
    static const struct {
        const char *name;
        bool (*fn)(void);
    } cases[] = {
        { "bkGetPlanProperties: a cyclic output chain is refused, a long one filled",
          plan_chain_cycle },
        { "bkGetContextProperties: a module struct chained to itself is refused",
          context_chain_cycle },
        { "bkEnumerateDevices: a chain back to the properties is refused",
          enumerate_chain_cycle },
        { "attention: an empty q with Lq = INT64_MAX is refused naming q", empty_attention_huge_lq },
        { "attention backward: H = 0 and Lk = INT64_MAX refused naming k; a large Lk that fits "
          "runs", empty_backward_huge_lk },
        { "GEMM: empty {0, 2^40, 2^40} operands are refused naming a",
          empty_gemm_huge_batch_stride },
        { "attention: a mask stride whose block row overflows is refused naming it",
          mask_stride_overflow },
        { "synchronous copies whose range wraps are refused", copies_wrap },
        { "2:4 values F32 [2, 4] strides {3, 2} run as the contiguous layout; {2, 1} is refused "
          "naming the indices", interleaved_values },
        { "bkCreateContext: host deviceIndex 1 is INVALID_ARGUMENT", host_device_index },
        { "attention backward without lse says the forward's lse is needed",
          backward_without_lse },
        { "a binding, copy or fill inside another context's BkMemory is refused",
          memory_of_another_context },
    };
    const unsigned n = sizeof cases / sizeof cases[0];
    tap_plan(n);
    for (unsigned i = 0; i < n; i++)
        run_case(cases[i].name, cases[i].fn);
    bkDestroyContext(ctx);
    return tap_done();
}
