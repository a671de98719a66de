/* SPDX-License-Identifier: Apache-2.0 */
/* Fault injection: every public constructor, and the runs of the GEMM,
 * W4A16 and attention families' plans (command buffer, workspace,
 * recording, submission), with BkAllocationCallbacks that fail the n-th
 * allocation (alone, or with every one after it), for n = 1, 2, ... until
 * the call succeeds. Each failure must return BK_ERROR_OUT_OF_HOST_MEMORY
 * (BK_ERROR_OUT_OF_DEVICE_MEMORY when the failed request was the host
 * device's memory itself) with a message, leave no allocation behind and
 * no handle in the output; after that the same call works and the object
 * is usable. bkQueueRun allocates nothing: it must run with every
 * allocation failing and ask for none. */
#include "config.h"

#include "rel_util.h"
#include "../lib/tap.h"

#include <stdio.h>
#include <string.h>

#define MEMORY_SIZE 12344u   /* unusual, so its request is recognised */

static struct rel_alloc stats;
static BkAllocationCallbacks cb;

/* ---- The loop ------------------------------------------------------------ */

/* One attempt at the constructor under test; undo destroys what it made. */
struct subject {
    const char *name;
    BkResult (*attempt)(void *state);
    void (*undo)(void *state);
    bool (*use)(void *state);          /* checks the made object works */
    void *state;
};

static void inject(const struct subject *s, bool and_after)
{
    const char *mode = and_after ? "and every later one" : "alone";
    long n, wrong_code = 0, leaked = 0, silent = 0, swallowed = 0, bad = 0;
    BkResult last = BK_SUCCESS;
    for (n = 1; n < 10000; n++) {
        long live = atomic_load(&stats.live), failed = atomic_load(&stats.failed);
        rel_alloc_fail_in(&stats, n, and_after);
        unsigned mark = rel_message_count();
        BkResult r = s->attempt(s->state);
        rel_alloc_fail_in(&stats, 0, false);
        if (atomic_load(&stats.failed) == failed) {
            last = r; /* allocation n was never asked for: the call ran free */
            break;
        }
        if (r == BK_SUCCESS) {
            swallowed++;
            s->undo(s->state);
            continue;
        }
        BkResult want = atomic_load(&stats.last_failed_size) == MEMORY_SIZE
                            ? BK_ERROR_OUT_OF_DEVICE_MEMORY : BK_ERROR_OUT_OF_HOST_MEMORY;
        if (r != want && wrong_code++ == 0)
            tap_diag("%s, allocation %ld failing: %s, expected %s (%s)", s->name, n,
                     bkResultString(r), bkResultString(want), bkGetLastErrorMessage());
        if (rel_check_failure(r, mark) && silent++ == 0)
            tap_diag("%s, allocation %ld failing: %s", s->name, n, rel_check_failure(r, mark));
        if (atomic_load(&stats.live) != live && leaked++ == 0)
            tap_diag("%s, allocation %ld failing: %ld allocations left behind", s->name, n,
                     atomic_load(&stats.live) - live);
    }
    bad = atomic_load(&stats.bad_frees) + atomic_load(&stats.bad_aligns);
    tap_ok(last == BK_SUCCESS && n > 1, "%s: succeeds once %ld allocations pass (%s)", s->name,
           n - 1, bkResultString(last));
    tap_ok(wrong_code == 0 && silent == 0, "%s: each of %ld failures (%s) returns out of memory "
           "with a message", s->name, n - 1, mode);
    tap_ok(leaked == 0 && swallowed == 0 && bad == 0,
           "%s: no failure leaks (%ld) or is ignored (%ld); frees and alignments valid (%ld)",
           s->name, leaked, swallowed, bad);
    if (last == BK_SUCCESS) {
        tap_ok(!s->use || s->use(s->state), "%s: the object made after the failures works",
               s->name);
        s->undo(s->state);
    } else {
        tap_skip(1, "%s never succeeded", s->name);
    }
}

/* ---- Subjects ----------------------------------------------------------- */

static const BkContextCreateInfo host_info = {
    .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, .deviceType = BK_DEVICE_TYPE_HOST,
    .apiVersion = BK_HEADER_VERSION,
};
static const BkContextCreateInfo auto_info = {
    .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, .deviceType = BK_DEVICE_TYPE_AUTO,
};

struct ctx_state {
    const BkContextCreateInfo *info;
    BkContext ctx;
};

static BkResult ctx_attempt(void *p)
{
    struct ctx_state *s = p;
    s->ctx = (BkContext)(uintptr_t)1;
    BkResult r = bkCreateContext(s->info, &cb, &s->ctx);
    if (r != BK_SUCCESS && s->ctx != BK_NULL_HANDLE)
        tap_diag("bkCreateContext failed but left a handle");
    return r;
}

static void ctx_undo(void *p)
{
    bkDestroyContext(((struct ctx_state *)p)->ctx);
}

static bool ctx_use(void *p)
{
    struct ctx_state *s = p;
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    BkQueue q = BK_NULL_HANDLE;
    return bkGetContextProperties(s->ctx, &props) == BK_SUCCESS && props.queueCount > 0 &&
           bkGetQueue(s->ctx, props.queueCount - 1, &q) == BK_SUCCESS && q &&
           bkQueueWaitIdle(q) == BK_SUCCESS;
}

/* Objects made from a context that also uses the counting callbacks, so
 * its own growth (the memory registry) is injected too. */
struct obj_state {
    BkContext ctx;
    const BkAllocationCallbacks *alloc;   /* for the object: &cb or NULL (the context's) */
    BkMemory mem;
    BkCommandBuffer cmd;
    BkPlan plan;
    const void *op;
};

static BkResult mem_attempt(void *p)
{
    struct obj_state *s = p;
    BkMemoryAllocateInfo info = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                  .size = MEMORY_SIZE, .memoryType = BK_MEMORY_TYPE_DEVICE };
    s->mem = (BkMemory)(uintptr_t)1;
    BkResult r = bkAllocateMemory(s->ctx, &info, s->alloc, &s->mem);
    if (r != BK_SUCCESS && s->mem != BK_NULL_HANDLE)
        tap_diag("bkAllocateMemory failed but left a handle");
    return r;
}

static void mem_undo(void *p)
{
    struct obj_state *s = p;
    bkFreeMemory(s->ctx, s->mem);
}

static bool mem_use(void *p)
{
    struct obj_state *s = p;
    BkDeviceAddress a = 0;
    unsigned char in[MEMORY_SIZE], out[MEMORY_SIZE];
    for (unsigned i = 0; i < MEMORY_SIZE; i++)
        in[i] = (unsigned char)(i * 7);
    return bkGetMemoryAddress(s->mem, &a) == BK_SUCCESS &&
           bkCopyToDevice(s->ctx, a, in, MEMORY_SIZE) == BK_SUCCESS &&
           bkCopyFromDevice(s->ctx, out, a, MEMORY_SIZE) == BK_SUCCESS &&
           memcmp(in, out, MEMORY_SIZE) == 0;
}

static BkResult cmd_attempt(void *p)
{
    struct obj_state *s = p;
    s->cmd = (BkCommandBuffer)(uintptr_t)1;
    BkResult r = bkAllocateCommandBuffer(s->ctx, s->alloc, &s->cmd);
    if (r != BK_SUCCESS && s->cmd != BK_NULL_HANDLE)
        tap_diag("bkAllocateCommandBuffer failed but left a handle");
    return r;
}

static void cmd_undo(void *p)
{
    bkFreeCommandBuffer(((struct obj_state *)p)->cmd);
}

static BkResult plan_attempt(void *p)
{
    struct obj_state *s = p;
    BkPlanCreateInfo info = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = s->op };
    s->plan = (BkPlan)(uintptr_t)1;
    BkResult r = bkCreatePlan(s->ctx, &info, s->alloc, &s->plan);
    if (r != BK_SUCCESS && s->plan != BK_NULL_HANDLE)
        tap_diag("bkCreatePlan failed but left a handle");
    return r;
}

static void plan_undo(void *p)
{
    bkDestroyPlan(((struct obj_state *)p)->plan);
}

/* The plans: SwiGLU forward on [4, 16] -> [4, 8], and its backward. */
static const BkGatedActivationInfo fwd_info = {
    .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, .kind = BK_GATED_ACTIVATION_SWIGLU,
    .splitAxis = 1,
    .input = { BK_DATA_TYPE_F32, 2, { 4, 16 }, { 0 } },
    .output = { BK_DATA_TYPE_F32, 2, { 4, 8 }, { 0 } },
};
static const BkGatedActivationBackwardInfo bwd_info = {
    .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, .kind = BK_GATED_ACTIVATION_GEGLU,
    .splitAxis = 0,
    .input = { BK_DATA_TYPE_F64, 2, { 6, 3 }, { 0 } },
    .gradOutput = { BK_DATA_TYPE_F64, 2, { 3, 3 }, { 0 } },
    .gradInput = { BK_DATA_TYPE_F64, 2, { 6, 3 }, { 0 } },
};

/* The GEMM family: D [8, 6] = relu(A [8, 16] @ B [16, 6] + C / 2 + bias),
 * f32; a 2:4 pruning of W [4, 16] f16; preparing it; and the sparse GEMM
 * Y [3, 4] = X [3, 16] @ W^T + bias. */
static const BkGemmInfo gemm_info = {
    .sType = BK_STRUCTURE_TYPE_GEMM_INFO, .activation = BK_GEMM_ACTIVATION_RELU,
    .alpha = 1.0, .beta = 0.5,
    .a = { BK_DATA_TYPE_F32, 2, { 8, 16 }, { 0 } },
    .b = { BK_DATA_TYPE_F32, 2, { 16, 6 }, { 1, 16 } },
    .c = { BK_DATA_TYPE_F32, 2, { 8, 6 }, { 0 } },
    .d = { BK_DATA_TYPE_F32, 2, { 8, 6 }, { 0 } },
    .bias = { BK_DATA_TYPE_F32, 1, { 6 }, { 0 } },
};
static const BkSparse24ConvertInfo prune_info = {
    .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO, .conversion = BK_SPARSE24_COMPRESS_PRUNE,
    .dense = { BK_DATA_TYPE_F16, 2, { 4, 16 }, { 0 } },
    .values = { BK_DATA_TYPE_F16, 2, { 4, 8 }, { 0 } },
    .metadata = { BK_DATA_TYPE_U16, 2, { 4, 2 }, { 0 } },
};
static const BkSparse24PrepareInfo prepare_info = {
    .sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO,
    .values = { BK_DATA_TYPE_F16, 2, { 4, 8 }, { 0 } },
    .metadata = { BK_DATA_TYPE_U16, 2, { 4, 2 }, { 0 } },
};
static const BkSparse24GemmInfo sgemm_info = {
    .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, .weightType = BK_DATA_TYPE_F16,
    .m = 4, .k = 16, .alpha = 1.0,
    .x = { BK_DATA_TYPE_F16, 2, { 3, 16 }, { 0 } },
    .y = { BK_DATA_TYPE_F32, 2, { 3, 4 }, { 0 } },
    .bias = { BK_DATA_TYPE_F32, 1, { 4 }, { 0 } },
};

/* The W4A16 family: packing a quantized weight [32, 64] (every q = 9,
 * scale 1, per channel); repacking an act-order GPTQ checkpoint [64, 64]
 * (g_idx[k] = k % 2 in groups of 32, AutoGPTQ's zero points 7 + 1 = 8,
 * every q = 9) with its perm; and the GEMM C [5, 64] = A [5, 32] @ W with
 * every weight (9 - 8) * 1 = 1 and a reversing perm, so that C[m, n] is
 * the sum of A's row m, exactly. */
static const BkW4A16ConvertInfo w4pack_info = {
    .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, .conversion = BK_W4A16_PACK,
    .groupSize = BK_W4A16_GROUP_PER_CHANNEL,
    .quantized = { BK_DATA_TYPE_U8, 2, { 32, 64 }, { 0 } },
    .scales = { BK_DATA_TYPE_F16, 2, { 1, 64 }, { 0 } },
    .packed = { BK_DATA_TYPE_I32, 2, { 2, 128 }, { 0 } },
    .packedScales = { BK_DATA_TYPE_F16, 2, { 1, 64 }, { 0 } },
};
static const BkW4A16GptqRepackInfo w4repack_info = {
    .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO, .zeros = BK_W4A16_GPTQ_ZEROS_MINUS_ONE,
    .groupSize = 32,
    .qweight = { BK_DATA_TYPE_I32, 2, { 8, 64 }, { 0 } },
    .scales = { BK_DATA_TYPE_BF16, 2, { 2, 64 }, { 0 } },
    .qzeros = { BK_DATA_TYPE_I32, 2, { 2, 8 }, { 0 } },
    .gIdx = { BK_DATA_TYPE_I32, 1, { 64 }, { 0 } },
    .packed = { BK_DATA_TYPE_I32, 2, { 4, 128 }, { 0 } },
    .packedScales = { BK_DATA_TYPE_BF16, 2, { 2, 64 }, { 0 } },
    .perm = { BK_DATA_TYPE_I32, 1, { 64 }, { 0 } },
};
static const BkW4A16GemmInfo w4gemm_info = {
    .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = 32,
    .a = { BK_DATA_TYPE_F16, 2, { 5, 32 }, { 40, 1 } },
    .packed = { BK_DATA_TYPE_I32, 2, { 2, 128 }, { 0 } },
    .packedScales = { BK_DATA_TYPE_F16, 2, { 1, 64 }, { 0 } },
    .perm = { BK_DATA_TYPE_I32, 1, { 32 }, { 0 } },
    .c = { BK_DATA_TYPE_F16, 2, { 5, 64 }, { 0 } },
};
/* The same GEMM with zero points 7 (BkW4A16ZeroPointsInfo): every weight
 * (9 - 7) * 1 = 2, so C[m, n] is twice the sum of A's row m. */
static const BkW4A16ZeroPointsInfo w4gemm_zeros = {
    .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO,
    .packedZeros = { BK_DATA_TYPE_I32, 2, { 1, 8 }, { 0 } },
};
static const BkW4A16GemmInfo w4gemm_zp_info = {
    .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .pNext = &w4gemm_zeros, .groupSize = 32,
    .a = { BK_DATA_TYPE_F16, 2, { 5, 32 }, { 40, 1 } },
    .packed = { BK_DATA_TYPE_I32, 2, { 2, 128 }, { 0 } },
    .packedScales = { BK_DATA_TYPE_F16, 2, { 1, 64 }, { 0 } },
    .perm = { BK_DATA_TYPE_I32, 1, { 32 }, { 0 } },
    .c = { BK_DATA_TYPE_F16, 2, { 5, 64 }, { 0 } },
};

/* The attention family. The forward pass (F16): B = 2, H = 4 query heads
 * on Hkv = 2 kv heads, Lq = 24 queries of D = 16, Lk = 40 keys with Dv = 8,
 * causal (query i sees keys up to i + 16), q the view of [B, Lq, H, D]
 * storage, lse, and a LIST of 16 x 16 blocks shared by the batches (lists
 * unordered, with repeats, one empty, junk past each count), which the
 * workspace holds as a mask. The backward pass (F64): B = 1, H = 2 on one
 * kv head, Lq = 12, Lk = 20, D = 8, Dv = 4, causal (keys up to i + 8), a
 * MASK of 4 x 4 blocks per head, k stored transposed (D-major). With
 * q = 0 every score is 0, so a query's weights are 1 / n over the n keys
 * it sees: with v the same for every key of a kv head, y is that row of v
 * and lse = log(n) exactly; fed those, the backward pass has dq = dk = 0
 * exactly and dv[j] = sum over the queries i that see key j of
 * dy[i] exp(-lse[i]). */
enum { AF_B = 2, AF_H = 4, AF_HKV = 2, AF_LQ = 24, AF_LK = 40, AF_D = 16, AF_DV = 8, AF_CAP = 3 };
enum { AB_H = 2, AB_LQ = 12, AB_LK = 20, AB_D = 8, AB_DV = 4, AB_NBQ = 3, AB_NBK = 5 };
static const BkAttentionInfo attn_info = {
    .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .flags = BK_ATTENTION_CAUSAL_BIT, .scale = 0.25,
    .pattern = { .form = BK_ATTENTION_PATTERN_LIST, .blockQ = 16, .blockK = 16,
                 .counts = { BK_DATA_TYPE_I32, 3, { 1, AF_H, 2 }, { 0 } },
                 .indices = { BK_DATA_TYPE_I32, 4, { 1, AF_H, 2, AF_CAP }, { 0 } } },
    .q = { BK_DATA_TYPE_F16, 4, { AF_B, AF_H, AF_LQ, AF_D },
           { AF_LQ * AF_H * AF_D, AF_D, AF_H * AF_D, 1 } },
    .k = { BK_DATA_TYPE_F16, 4, { AF_B, AF_HKV, AF_LK, AF_D }, { 0 } },
    .v = { BK_DATA_TYPE_F16, 4, { AF_B, AF_HKV, AF_LK, AF_DV }, { 0 } },
    .y = { BK_DATA_TYPE_F16, 4, { AF_B, AF_H, AF_LQ, AF_DV }, { 0 } },
    .lse = { BK_DATA_TYPE_F32, 3, { AF_B, AF_H, AF_LQ }, { 0 } },
};
static const BkAttentionBackwardInfo attn_bwd_info = {
    .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO,
    .flags = BK_ATTENTION_CAUSAL_BIT | BK_ATTENTION_ALLOW_ATOMICS_BIT, .scale = 0.5,
    .pattern = { .form = BK_ATTENTION_PATTERN_MASK, .blockQ = 4, .blockK = 4,
                 .mask = { BK_DATA_TYPE_U8, 3, { 1, AB_H, AB_NBQ * AB_NBK }, { 0 } } },
    .q = { BK_DATA_TYPE_F64, 4, { 1, AB_H, AB_LQ, AB_D }, { 0 } },
    .k = { BK_DATA_TYPE_F64, 4, { 1, 1, AB_LK, AB_D }, { AB_LK * AB_D, AB_LK * AB_D, 1, AB_LK } },
    .v = { BK_DATA_TYPE_F64, 4, { 1, 1, AB_LK, AB_DV }, { 0 } },
    .y = { BK_DATA_TYPE_F64, 4, { 1, AB_H, AB_LQ, AB_DV }, { 0 } },
    .lse = { BK_DATA_TYPE_F64, 3, { 1, AB_H, AB_LQ }, { 0 } },
    .dy = { BK_DATA_TYPE_F64, 4, { 1, AB_H, AB_LQ, AB_DV }, { 0 } },
    .dq = { BK_DATA_TYPE_F64, 4, { 1, AB_H, AB_LQ, AB_D }, { 0 } },
    .dk = { BK_DATA_TYPE_F64, 4, { 1, 1, AB_LK, AB_D }, { 0 } },
    .dv = { BK_DATA_TYPE_F64, 4, { 1, 1, AB_LK, AB_DV }, { 0 } },
};
/* The paged forward pass (F32), chained to PADDED lengths: B = 2, H = 2
 * query heads on one kv head, Lq = 3 queries of D = 8, a pool of 3 pages
 * of 16 keys with Dv = 4, 2 pages a sequence (Lk = 32), causal.
 * Sequence 0 uses 3 queries and 20 keys on pages 2 then 0; sequence 1
 * one query and 7 keys on page 1 (its second entry, never read, out of
 * range). With q = 0 each query's weights are 1 / n over the n keys it
 * sees (j <= i + lengthsK - lengthsQ): with v the page's number, y is the
 * mean page of those keys and lse = log(n); rows past lengthsQ get y = 0
 * and lse = -inf. */
enum { AP_B = 2, AP_H = 2, AP_LQ = 3, AP_D = 8, AP_DV = 4, AP_PAGES = 3, AP_PAGE = 16,
       AP_MAXP = 2 };
static const BkAttentionPagedKvInfo attn_paged_kv = {
    .sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO,
    .blockTable = { BK_DATA_TYPE_I32, 2, { AP_B, AP_MAXP }, { 0 } },
};
static const BkAttentionSequencesInfo attn_paged_seqs = {
    .sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO, .pNext = &attn_paged_kv,
    .form = BK_ATTENTION_SEQUENCES_PADDED,
    .lengthsQ = { BK_DATA_TYPE_I32, 1, { AP_B }, { 0 } },
    .lengthsK = { BK_DATA_TYPE_I32, 1, { AP_B }, { 0 } },
};
static const BkAttentionInfo attn_paged_info = {
    .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .pNext = &attn_paged_seqs,
    .flags = BK_ATTENTION_CAUSAL_BIT, .scale = 0.5,
    .q = { BK_DATA_TYPE_F32, 4, { AP_B, AP_H, AP_LQ, AP_D }, { 0 } },
    .k = { BK_DATA_TYPE_F32, 4, { AP_PAGES, 1, AP_PAGE, AP_D }, { 0 } },
    .v = { BK_DATA_TYPE_F32, 4, { AP_PAGES, 1, AP_PAGE, AP_DV }, { 0 } },
    .y = { BK_DATA_TYPE_F32, 4, { AP_B, AP_H, AP_LQ, AP_DV }, { 0 } },
    .lse = { BK_DATA_TYPE_F32, 3, { AP_B, AP_H, AP_LQ }, { 0 } },
};
static const int32_t ap_len_q[AP_B] = { 3, 1 }, ap_len_k[AP_B] = { 20, 7 };
static const int32_t ap_table[AP_B][AP_MAXP] = { { 2, 0 }, { 1, 99 } };
/* The forward pass's lists: [head][query block], entries past the count
 * out of range (never read). */
static const int32_t af_count[AF_H][2] = { { 1, 3 }, { 0, 1 }, { 2, 3 }, { 1, 2 } };
static const int32_t af_list[AF_H][2][AF_CAP] = {
    { { 0, 99, 99 }, { 2, 0, 2 } }, { { 99, 99, 99 }, { 1, -1, 99 } },
    { { 1, 0, 99 }, { 0, 1, 2 } },  { { 2, 99, 99 }, { 1, 1, 99 } },
};

/* Records one run of plan (bindings b, a fresh workspace when the plan has
 * one) into a one-time buffer made with alloc, submits it to queue 0 and
 * waits. The workspace is MEMORY_SIZE bytes, so that a failure of its
 * allocation is recognised as the device's memory. */
static BkResult run_plan(BkContext ctx, const BkAllocationCallbacks *alloc, BkPlan plan,
                         uint32_t count, const BkDeviceAddress *b)
{
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    BkResult r = bkGetPlanProperties(plan, &props);
    if (r != BK_SUCCESS)
        return r;
    if (props.workspaceSize > MEMORY_SIZE) {
        tap_diag("a workspace of %llu bytes does not fit the test's %u",
                 (unsigned long long)props.workspaceSize, MEMORY_SIZE);
        return BK_ERROR_WORKSPACE_TOO_SMALL;
    }
    BkMemory ws = BK_NULL_HANDLE;
    BkDeviceAddress ws_addr = 0;
    if (props.workspaceSize) {
        BkMemoryAllocateInfo info = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                      .size = MEMORY_SIZE };
        if ((r = bkAllocateMemory(ctx, &info, alloc, &ws)) != BK_SUCCESS)
            return r;
        bkGetMemoryAddress(ws, &ws_addr);
    }
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    BkQueue q;
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = count, .pBindings = b,
                      .workspace = ws_addr, .workspaceSize = ws ? MEMORY_SIZE : 0 };
    if ((r = bkAllocateCommandBuffer(ctx, alloc, &cmd)) == BK_SUCCESS &&
        (r = bkBeginCommandBuffer(cmd, &begin)) == BK_SUCCESS &&
        (r = bkCmdRun(cmd, plan, &run)) == BK_SUCCESS &&
        (r = bkEndCommandBuffer(cmd)) == BK_SUCCESS && (r = bkGetQueue(ctx, 0, &q)) == BK_SUCCESS &&
        (r = bkQueueSubmit(q, 1, &cmd)) == BK_SUCCESS)
        r = bkQueueWaitIdle(q);
    bkFreeCommandBuffer(cmd);
    bkFreeMemory(ctx, ws);
    return r;
}

/* Host data of the GEMM-family runs. */
static float ga[8 * 16], gb[16 * 6], gc[8 * 6], gbias[6], gd[8 * 6];
static uint16_t w16[4 * 16], v16[4 * 8], x16[3 * 16];
static uint16_t meta[4 * 2];
static _Alignas(256) unsigned char prepared[4096];
static float sy[3 * 4], sbias[4];
static BkSparse24Report report;
/* Of the W4A16 runs (packed and packedScales 16-byte aligned). */
static uint8_t w4q[32 * 64];
static uint16_t w4scales[2 * 64], w4a[5 * 40], w4c[5 * 64];
static uint32_t w4qweight[8 * 64], w4qzeros[2 * 8];
static int32_t w4g_idx[64], w4perm[64];
static _Alignas(16) uint32_t w4packed[4 * 128];
static _Alignas(16) uint16_t w4packed_scales[2 * 64];
static _Alignas(16) uint32_t w4zeros[8];
static BkW4A16RepackReport w4report;
/* Of the attention runs. */
static uint16_t afq[AF_B * AF_H * AF_LQ * AF_D], afk[AF_B * AF_HKV * AF_LK * AF_D];
static uint16_t afv[AF_B * AF_HKV * AF_LK * AF_DV], afy[AF_B * AF_H * AF_LQ * AF_DV];
static float aflse[AF_B * AF_H * AF_LQ];
static int32_t afcounts[AF_H * 2], afindices[AF_H * 2 * AF_CAP];
static uint8_t abmask[AB_H * AB_NBQ * AB_NBK];
static double abq[AB_H * AB_LQ * AB_D], abk[AB_LK * AB_D], abv[AB_LK * AB_DV];
static double aby[AB_H * AB_LQ * AB_DV], ablse[AB_H * AB_LQ], abdy[AB_H * AB_LQ * AB_DV];
static double abdq[AB_H * AB_LQ * AB_D], abdk[AB_LK * AB_D], abdv[AB_LK * AB_DV];

/* Of the paged run. */
static float apq[AP_B * AP_H * AP_LQ * AP_D], apk[AP_PAGES * AP_PAGE * AP_D];
static float apv[AP_PAGES * AP_PAGE * AP_DV], apy[AP_B * AP_H * AP_LQ * AP_DV];
static float aplse[AP_B * AP_H * AP_LQ];
static int32_t aplq[AP_B], aplk[AP_B], aptable[AP_B * AP_MAXP];

static BkDeviceAddress at(const void *p)
{
    return (BkDeviceAddress)(uintptr_t)p;
}

/* Runs the GEMM plan and checks D exactly (small integers). */
static bool run_gemm(BkContext ctx, BkPlan plan, const BkAllocationCallbacks *alloc,
                     BkResult *result)
{
    for (int i = 0; i < 8 * 16; i++)
        ga[i] = (float)(i % 5 - 2);
    for (int i = 0; i < 16 * 6; i++)
        gb[i] = (float)(i % 3 - 1);   /* column-major: gb[j * 16 + p] */
    for (int i = 0; i < 8 * 6; i++)
        gc[i] = (float)(2 * (i % 4));
    for (int j = 0; j < 6; j++)
        gbias[j] = (float)(j - 3);
    memset(gd, 0xFF, sizeof gd);
    const BkDeviceAddress b[5] = { at(ga), at(gb), at(gc), at(gd), at(gbias) };
    *result = run_plan(ctx, alloc, plan, 5, b);
    bool ok = *result == BK_SUCCESS;
    for (int i = 0; ok && i < 8; i++)
        for (int j = 0; j < 6; j++) {
            float v = 0.5f * gc[i * 6 + j] + gbias[j];
            for (int p = 0; p < 16; p++)
                v += ga[i * 16 + p] * gb[j * 16 + p];
            ok = ok && gd[i * 6 + j] == (v > 0 ? v : 0);
        }
    return ok;
}

/* Runs the pruning, the preparation or the sparse GEMM (of the weight the
 * last preparation left): the report must be OK, the sparse GEMM's y
 * finite and positive. */
static bool run_sparse(BkContext ctx, BkPlan plan, const void *op,
                       const BkAllocationCallbacks *alloc, BkResult *result)
{
    for (int i = 0; i < 4 * 16; i++)
        w16[i] = (uint16_t)(0x3C00 + (i % 7) * 0x40);   /* 1.0 .. 1.375: all non-zero */
    for (int i = 0; i < 3 * 16; i++)
        x16[i] = (uint16_t)(0x3800 + (i % 3) * 0x100);
    for (int i = 0; i < 4 * 8; i++)
        v16[i] = 0x3C00;
    for (int i = 0; i < 4 * 2; i++)
        meta[i] = 0x0E04;
    if (op == (const void *)&prune_info) {
        memset(&report, 0xFF, sizeof report);
        *result = run_plan(ctx, alloc, plan, 4,
                           (BkDeviceAddress[4]){ at(w16), at(v16), at(meta), at(&report) });
        return *result == BK_SUCCESS && report.status == BK_SPARSE24_STATUS_OK;
    }
    if (op == (const void *)&prepare_info) {
        *result = run_plan(ctx, alloc, plan, 3,
                           (BkDeviceAddress[3]){ at(v16), at(meta), at(prepared) });
        return *result == BK_SUCCESS;
    }
    /* The sparse GEMM, on the weight a prepare run left in prepared. */
    for (int j = 0; j < 4; j++)
        sbias[j] = (float)j;
    memset(sy, 0xFF, sizeof sy);
    *result = run_plan(ctx, alloc, plan, 5,
                       (BkDeviceAddress[5]){ at(prepared), at(x16), 0, at(sy), at(sbias) });
    bool ok = *result == BK_SUCCESS;
    for (int i = 0; ok && i < 12; i++)
        ok = sy[i] == sy[i] && sy[i] > 0;
    return ok;
}

/* An F16 value (normal or zero) as float; NaN for the others. */
static float f16_value(uint16_t h)
{
    const uint32_t e = (h >> 10) & 31u, m = h & 1023u;
    if (e == 0 && m == 0)
        return h & 0x8000 ? -0.0f : 0.0f;
    if (e == 0 || e == 31)
        return __builtin_nanf("");
    const uint32_t bits = (uint32_t)(h & 0x8000) << 16 | (e + 112) << 23 | m << 13;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Whether the n doubles at p are all +0 or -0. */
static bool all_zero(const double *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != 0)
            return false;
    return true;
}

/* Whether the n words at p all hold value. */
static bool all_words(const uint32_t *p, size_t n, uint32_t value)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != value)
            return false;
    return true;
}

static bool all_halves(const uint16_t *p, size_t n, uint16_t value)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != value)
            return false;
    return true;
}

/* Runs the W4A16 pack, repack or GEMM of the infos above and checks the
 * result exactly: every packed word 0x99999999 (all values 9, whatever the
 * tile order), the scales moved, the repack's report OK with the rows
 * sorted by group into perm, C the row sums of A. */
static bool run_w4a16(BkContext ctx, BkPlan plan, const void *op,
                      const BkAllocationCallbacks *alloc, BkResult *result)
{
    memset(w4packed, 0, sizeof w4packed);
    memset(w4packed_scales, 0, sizeof w4packed_scales);
    if (op == (const void *)&w4pack_info) {
        memset(w4q, 9, sizeof w4q);
        for (int j = 0; j < 64; j++)
            w4scales[j] = 0x3C00; /* 1.0 */
        *result = run_plan(ctx, alloc, plan, 5,
                           (BkDeviceAddress[5]){ 0, at(w4q), at(w4scales), at(w4packed),
                                                 at(w4packed_scales) });
        return *result == BK_SUCCESS && all_words(w4packed, 2 * 128, 0x99999999u) &&
               all_halves(w4packed_scales, 64, 0x3C00);
    }
    if (op == (const void *)&w4repack_info) {
        for (int i = 0; i < 8 * 64; i++)
            w4qweight[i] = 0x99999999u;
        for (int i = 0; i < 2 * 8; i++)
            w4qzeros[i] = 0x77777777u; /* zero point - 1 */
        for (int i = 0; i < 2 * 64; i++)
            w4scales[i] = 0x3F80;      /* BF16 1.0 */
        for (int k = 0; k < 64; k++)
            w4g_idx[k] = k % 2;
        memset(w4perm, 0xFF, sizeof w4perm);
        memset(&w4report, 0xFF, sizeof w4report);
        *result = run_plan(ctx, alloc, plan, 8,
                           (BkDeviceAddress[8]){ at(w4qweight), at(w4scales), at(w4qzeros),
                                                 at(w4g_idx), at(w4packed), at(w4packed_scales),
                                                 at(w4perm), at(&w4report) });
        bool ok = *result == BK_SUCCESS && w4report.status == BK_W4A16_REPACK_STATUS_OK &&
                  w4report.badCount == 0 && !w4report.identityPermutation &&
                  bkCheckW4A16RepackReport(&w4report) == BK_SUCCESS &&
                  all_words(w4packed, 4 * 128, 0x99999999u) &&
                  all_halves(w4packed_scales, 2 * 64, 0x3F80);
        for (int k = 0; ok && k < 64; k++) /* the even rows (group 0), then the odd ones */
            ok = w4perm[k] == (k < 32 ? 2 * k : 2 * (k - 32) + 1);
        return ok;
    }
    /* The GEMM: a strided A (leading dimension 40) of small integers. */
    static const uint16_t small[4] = { 0xBC00, 0x0000, 0x3C00, 0x4000 }; /* -1, 0, 1, 2 */
    for (int i = 0; i < 5 * 40; i++)   /* row sums 16, 0, 16, -32, 16 */
        w4a[i] = small[i % 40 * (1 + i / 40) % 4];
    for (int i = 0; i < 2 * 128; i++)
        w4packed[i] = 0x99999999u;
    for (int j = 0; j < 64; j++)
        w4packed_scales[j] = 0x3C00;
    for (int k = 0; k < 32; k++)
        w4perm[k] = 31 - k;
    memset(w4c, 0xFF, sizeof w4c);
    const bool zp = op == (const void *)&w4gemm_zp_info;
    for (int i = 0; i < 8; i++)
        w4zeros[i] = 0x77777777u;
    *result = run_plan(ctx, alloc, plan, zp ? 6 : 5,
                       (BkDeviceAddress[6]){ at(w4a), at(w4packed), at(w4packed_scales),
                                             at(w4perm), at(w4c), at(w4zeros) });
    bool ok = *result == BK_SUCCESS;
    for (int m = 0; ok && m < 5; m++) {
        float want = 0;
        for (int k = 0; k < 32; k++)
            want += (zp ? 2 : 1) * f16_value(w4a[m * 40 + k]);
        for (int n = 0; ok && n < 64; n++)
            ok = f16_value(w4c[m * 64 + n]) == want;
    }
    return ok;
}

static bool is_w4a16(const void *op)
{
    return op == (const void *)&w4pack_info || op == (const void *)&w4repack_info ||
           op == (const void *)&w4gemm_info || op == (const void *)&w4gemm_zp_info;
}

/* The F16 of 0 <= n < 2048, exactly. */
static uint16_t f16_int(int n)
{
    int e = 0;
    while (n >> (e + 1))
        e++;
    return n ? (uint16_t)((e + 15) << 10 | (((unsigned)n << 10 >> e) & 1023u)) : 0;
}

/* Whether query i of head h sees key j: in the forward pass, through the
 * lists; in the backward pass, the blocks (ib + jb) even of head 0 and
 * every block but those of query block 1 of head 1. Both causal. */
static bool af_sees(int h, int i, int j)
{
    if (j > i + (AF_LK - AF_LQ))
        return false;
    for (int e = 0; e < af_count[h][i / 16]; e++)
        if (af_list[h][i / 16][e] == j / 16)
            return true;
    return false;
}

static bool ab_active(int h, int ib, int jb)
{
    return h == 0 ? (ib + jb) % 2 == 0 : ib != 1;
}

static bool ab_sees(int h, int i, int j)
{
    return j <= i + (AB_LK - AB_LQ) && ab_active(h, i / 4, j / 4);
}

/* Runs the attention forward or backward pass of the infos above and
 * checks the results: y and lse exactly, dq and dk exactly 0, dv to a
 * few ulps (a sum of exponentials). */
static bool run_attention_paged(BkContext ctx, BkPlan plan, const BkAllocationCallbacks *alloc,
                                BkResult *result)
{
    memset(apq, 0, sizeof apq);
    for (size_t i = 0; i < sizeof apk / sizeof apk[0]; i++)
        apk[i] = (float)(i % 5) - 2;
    for (size_t i = 0; i < sizeof apv / sizeof apv[0]; i++)
        apv[i] = (float)(i / (AP_PAGE * AP_DV)); /* the page's number */
    memcpy(aplq, ap_len_q, sizeof aplq);
    memcpy(aplk, ap_len_k, sizeof aplk);
    memcpy(aptable, ap_table, sizeof aptable);
    memset(apy, 0xFF, sizeof apy);
    memset(aplse, 0xFF, sizeof aplse);
    *result = run_plan(ctx, alloc, plan, 11,
                       (BkDeviceAddress[11]){ at(apq), at(apk), at(apv), 0, 0, 0, at(apy),
                                              at(aplse), at(aplq), at(aplk), at(aptable) });
    bool ok = *result == BK_SUCCESS;
    for (int b = 0; ok && b < AP_B; b++)
        for (int h = 0; ok && h < AP_H; h++)
            for (int i = 0; ok && i < AP_LQ; i++) {
                const int row = (b * AP_H + h) * AP_LQ + i;
                int n = i < ap_len_q[b] ? i + ap_len_k[b] - ap_len_q[b] + 1 : 0;
                double pages = 0;
                for (int j = 0; j < n; j++)
                    pages += ap_table[b][j / AP_PAGE];
                ok = aplse[row] == (n ? (float)__builtin_log(n) : -__builtin_inff());
                for (int c = 0; ok && c < AP_DV; c++)
                    ok = __builtin_fabs(apy[row * AP_DV + c] - (n ? pages / n : 0)) <= 1e-6;
            }
    return ok;
}

static bool run_attention(BkContext ctx, BkPlan plan, const void *op,
                          const BkAllocationCallbacks *alloc, BkResult *result)
{
    if (op == (const void *)&attn_paged_info)
        return run_attention_paged(ctx, plan, alloc, result);
    if (op == (const void *)&attn_info) {
        memset(afq, 0, sizeof afq);
        for (size_t i = 0; i < sizeof afk / sizeof afk[0]; i++)
            afk[i] = f16_int((int)(i % 13));
        for (int b = 0; b < AF_B; b++)        /* v[b, g, j, c] = (2 b + g) 8 + c */
            for (int g = 0; g < AF_HKV; g++)
                for (int j = 0; j < AF_LK; j++)
                    for (int c = 0; c < AF_DV; c++)
                        afv[((b * AF_HKV + g) * AF_LK + j) * AF_DV + c] =
                            f16_int((2 * b + g) * 8 + c);
        memcpy(afcounts, af_count, sizeof afcounts);
        memcpy(afindices, af_list, sizeof afindices);
        memset(afy, 0xFF, sizeof afy);
        memset(aflse, 0xFF, sizeof aflse);
        *result = run_plan(ctx, alloc, plan, 8,
                           (BkDeviceAddress[8]){ at(afq), at(afk), at(afv), 0, at(afcounts),
                                                 at(afindices), at(afy), at(aflse) });
        bool ok = *result == BK_SUCCESS;
        for (int b = 0; ok && b < AF_B; b++)
            for (int h = 0; ok && h < AF_H; h++)
                for (int i = 0; ok && i < AF_LQ; i++) {
                    int n = 0;
                    for (int j = 0; j < AF_LK; j++)
                        n += af_sees(h, i, j);
                    const int row = (b * AF_H + h) * AF_LQ + i;
                    ok = aflse[row] == (n ? (float)__builtin_log(n) : -__builtin_inff());
                    for (int c = 0; ok && c < AF_DV; c++)
                        ok = f16_value(afy[row * AF_DV + c]) ==
                             (float)(n ? (2 * b + h / 2) * 8 + c : 0);
                }
        return ok;
    }
    /* The backward pass, fed what the forward pass gives for q = 0. */
    memset(abq, 0, sizeof abq);
    for (int i = 0; i < AB_LK * AB_D; i++)
        abk[i] = (double)(i % 7) - 3;
    for (int i = 0; i < AB_LK * AB_DV; i++)
        abv[i] = (double)(i % AB_DV + 1);
    for (int h = 0; h < AB_H; h++)
        for (int ib = 0; ib < AB_NBQ; ib++)
            for (int jb = 0; jb < AB_NBK; jb++)
                abmask[(h * AB_NBQ + ib) * AB_NBK + jb] = ab_active(h, ib, jb) ? 7 : 0;
    for (int r = 0; r < AB_H * AB_LQ; r++) {
        int n = 0;
        for (int j = 0; j < AB_LK; j++)
            n += ab_sees(r / AB_LQ, r % AB_LQ, j);
        ablse[r] = n ? __builtin_log(n) : -__builtin_inf();
        for (int c = 0; c < AB_DV; c++) {
            aby[r * AB_DV + c] = n ? c + 1 : 0;
            abdy[r * AB_DV + c] = (double)((r * 3 + c) % 5) - 2;
        }
    }
    memset(abdq, 0xFF, sizeof abdq);
    memset(abdk, 0xFF, sizeof abdk);
    memset(abdv, 0xFF, sizeof abdv);
    *result = run_plan(ctx, alloc, plan, 12,
                       (BkDeviceAddress[12]){ at(abq), at(abk), at(abv), at(abmask), 0, 0,
                                              at(aby), at(ablse), at(abdy), at(abdq), at(abdk),
                                              at(abdv) });
    bool ok = *result == BK_SUCCESS && all_zero(abdq, AB_H * AB_LQ * AB_D) &&
              all_zero(abdk, AB_LK * AB_D);
    for (int j = 0; ok && j < AB_LK; j++)
        for (int c = 0; ok && c < AB_DV; c++) {
            double want = 0;
            for (int r = 0; r < AB_H * AB_LQ; r++)
                if (ab_sees(r / AB_LQ, r % AB_LQ, j))
                    want += __builtin_exp(-ablse[r]) * abdy[r * AB_DV + c];
            ok = __builtin_fabs(abdv[j * AB_DV + c] - want) <= 1e-13 * (1 + __builtin_fabs(want));
        }
    return ok;
}

static bool is_attention(const void *op)
{
    return op == (const void *)&attn_info || op == (const void *)&attn_bwd_info ||
           op == (const void *)&attn_paged_info;
}

/* Runs s->plan (the forward one) once and checks y = a * silu(b) roughly. */
static bool run_forward(BkContext ctx, BkPlan plan)
{
    float x[64], y[32];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(i % 7) - 3.0f;
    memset(y, 0xFF, sizeof y);
    BkDeviceAddress b[2] = { (BkDeviceAddress)(uintptr_t)x, (BkDeviceAddress)(uintptr_t)y };
    uint64_t sizes[2] = { sizeof x, sizeof y };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2, .pBindings = b,
                      .pBindingSizes = sizes };
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    BkCommandBuffer cmd;
    BkQueue q;
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        return false;
    bool ok = bkBeginCommandBuffer(cmd, &begin) == BK_SUCCESS &&
              bkCmdRun(cmd, plan, &run) == BK_SUCCESS && bkEndCommandBuffer(cmd) == BK_SUCCESS &&
              bkGetQueue(ctx, 0, &q) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS;
    bkFreeCommandBuffer(cmd);
    for (int r = 0; ok && r < 4; r++)
        for (int j = 0; j < 8; j++) {
            float a = x[r * 16 + j], g = x[r * 16 + 8 + j];
            float want = a * g / (1.0f + __builtin_expf(-g));
            ok = __builtin_fabsf(y[r * 8 + j] - want) <= 1e-5f * (1.0f + __builtin_fabsf(want));
        }
    return ok;
}

/* The conversion: F32 [4, 8] to BF16 [8, 4] strided (a transpose). */
static const BkConvertInfo convert_info = {
    .sType = BK_STRUCTURE_TYPE_CONVERT_INFO,
    .input = { BK_DATA_TYPE_F32, 2, { 4, 8 }, { 0 } },
    .output = { BK_DATA_TYPE_BF16, 2, { 4, 8 }, { 1, 4 } },
};

static bool run_convert(BkContext ctx, BkPlan plan)
{
    float x[32];
    uint16_t y[32];
    for (int i = 0; i < 32; i++)
        x[i] = (float)i - 0.5f; /* exact in BF16 */
    memset(y, 0xFF, sizeof y);
    BkDeviceAddress b[2] = { (BkDeviceAddress)(uintptr_t)x, (BkDeviceAddress)(uintptr_t)y };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2, .pBindings = b };
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    BkCommandBuffer cmd;
    BkQueue q;
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        return false;
    bool ok = bkBeginCommandBuffer(cmd, &begin) == BK_SUCCESS &&
              bkCmdRun(cmd, plan, &run) == BK_SUCCESS && bkEndCommandBuffer(cmd) == BK_SUCCESS &&
              bkGetQueue(ctx, 0, &q) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS &&
              bkQueueWaitIdle(q) == BK_SUCCESS;
    bkFreeCommandBuffer(cmd);
    for (int i = 0; ok && i < 4; i++)
        for (int j = 0; j < 8; j++) {
            uint32_t bits;
            memcpy(&bits, &x[i * 8 + j], 4);
            ok = y[j * 4 + i] == (uint16_t)(bits >> 16);
        }
    return ok;
}

static bool plan_use(void *p)
{
    struct obj_state *s = p;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    BkResult r;
    if (bkGetPlanProperties(s->plan, &props) != BK_SUCCESS)
        return false;
    if (s->op == (const void *)&fwd_info)
        return run_forward(s->ctx, s->plan);
    if (s->op == (const void *)&gemm_info)
        return run_gemm(s->ctx, s->plan, NULL, &r);
    if (s->op == (const void *)&convert_info)
        return run_convert(s->ctx, s->plan);
    if (s->op == (const void *)&prune_info || s->op == (const void *)&prepare_info)
        return run_sparse(s->ctx, s->plan, s->op, NULL, &r);
    if (is_w4a16(s->op))
        return run_w4a16(s->ctx, s->plan, s->op, NULL, &r);
    if (is_attention(s->op))
        return run_attention(s->ctx, s->plan, s->op, NULL, &r);
    if (s->op == (const void *)&sgemm_info) {
        /* The weight: prepared by a plan of its own. */
        BkPlan prep = BK_NULL_HANDLE;
        BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO,
                                .pOperation = &prepare_info };
        bool ok = bkCreatePlan(s->ctx, &pi, NULL, &prep) == BK_SUCCESS &&
                  run_sparse(s->ctx, prep, &prepare_info, NULL, &r) &&
                  run_sparse(s->ctx, s->plan, &sgemm_info, NULL, &r);
        bkDestroyPlan(prep);
        return ok;
    }
    return props.bindingCount == 3;
}

/* Running a plan with the counting callbacks for its command buffer and
 * workspace: subjects of the injection too. */
struct run_state {
    BkContext ctx;
    BkPlan plan, prep;
    const void *op;
};

static BkResult run_attempt(void *p)
{
    struct run_state *s = p;
    BkResult r = BK_SUCCESS;
    if (s->op == (const void *)&gemm_info)
        run_gemm(s->ctx, s->plan, &cb, &r);
    else if (is_w4a16(s->op))
        run_w4a16(s->ctx, s->plan, s->op, &cb, &r);
    else if (is_attention(s->op))
        run_attention(s->ctx, s->plan, s->op, &cb, &r);
    else
        run_sparse(s->ctx, s->plan, s->op, &cb, &r);
    return r;
}

static void run_undo(void *p)
{
    (void)p; /* a run leaves nothing behind */
}

static bool run_use(void *p)
{
    struct run_state *s = p;
    BkResult r;
    if (s->op == (const void *)&gemm_info)
        return run_gemm(s->ctx, s->plan, NULL, &r);
    if (s->op == (const void *)&convert_info)
        return run_convert(s->ctx, s->plan);
    if (is_w4a16(s->op))
        return run_w4a16(s->ctx, s->plan, s->op, NULL, &r);
    if (is_attention(s->op))
        return run_attention(s->ctx, s->plan, s->op, NULL, &r);
    return run_sparse(s->ctx, s->plan, s->op, NULL, &r);
}

/* ---- Recording growth ------------------------------------------------------ */

/* Records 40 commands into a buffer whose callbacks fail the next
 * allocation of each; a failed record must leave the buffer recording with
 * what it had, and the retry must work. The buffer then runs. */
static void recording_growth(BkContext ctx, BkPlan plan, int kind)
{
    static const char *const names[] = { "bkCmdRun", "bkCmdFillMemory", "bkCmdCopyMemory" };
    enum { N = 40 };
    static float x[64], y[32], src[N], dst[N];
    BkCommandBuffer cmd;
    if (bkAllocateCommandBuffer(ctx, &cb, &cmd) != BK_SUCCESS)
        tap_bail("bkAllocateCommandBuffer: %s", bkGetLastErrorMessage());
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    BkDeviceAddress b[2] = { (BkDeviceAddress)(uintptr_t)x, (BkDeviceAddress)(uintptr_t)y };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2, .pBindings = b };
    long failures = 0, wrong = 0, leaked = 0, retry_failed = 0;
    for (int i = 0; i < N; i++)
        src[i] = (float)i + 1.0f;
    memset(dst, 0, sizeof dst);
    bool begun = bkBeginCommandBuffer(cmd, &begin) == BK_SUCCESS;
    for (int i = 0; begun && i < N; i++) {
        for (int attempt = 0; attempt < 2; attempt++) {
            long live = atomic_load(&stats.live), failed = atomic_load(&stats.failed);
            if (attempt == 0)
                rel_alloc_fail_in(&stats, 1, false);
            unsigned mark = rel_message_count();
            BkDeviceAddress d = (BkDeviceAddress)(uintptr_t)&dst[i];
            BkDeviceAddress s = (BkDeviceAddress)(uintptr_t)&src[i];
            BkResult r = kind == 0 ? bkCmdRun(cmd, plan, &run)
                       : kind == 1 ? bkCmdFillMemory(cmd, d, 4, (uint32_t)i)
                                   : bkCmdCopyMemory(cmd, d, s, 4);
            rel_alloc_fail_in(&stats, 0, false);
            if (atomic_load(&stats.failed) == failed) {
                if (r != BK_SUCCESS)
                    retry_failed++;
                break;
            }
            failures++;
            if (attempt == 1 || r != BK_ERROR_OUT_OF_HOST_MEMORY || rel_check_failure(r, mark))
                wrong++;
            if (atomic_load(&stats.live) != live)
                leaked++;
        }
    }
    BkQueue q;
    bool ran = begun && bkEndCommandBuffer(cmd) == BK_SUCCESS &&
               bkGetQueue(ctx, 1, &q) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS;
    for (int i = 0; ran && kind && i < N; i++) {
        float want = kind == 1 ? 0.0f : src[i];
        uint32_t bits = (uint32_t)i;
        if (kind == 1)
            memcpy(&want, &bits, 4);
        ran = memcmp(&dst[i], &want, 4) == 0;
    }
    bkFreeCommandBuffer(cmd);
    tap_ok(failures > 0 && wrong == 0 && leaked == 0,
           "%s: %ld failed growths of a recording buffer return out of memory with a message "
           "and leak nothing (%ld wrong, %ld leaked)", names[kind], failures, wrong, leaked);
    tap_ok(ran && retry_failed == 0, "%s: after each failure the buffer keeps recording; all %d "
           "commands run", names[kind], N);
}

/* bkQueueRun submits a command buffer of its own on the stack: with every
 * allocation failing from the call on, it runs, asks for nothing, and the
 * output is the op's. */
static void queue_run_allocates_nothing(BkContext ctx, BkPlan plan)
{
    float x[64], y[32];
    for (int i = 0; i < 64; i++)
        x[i] = (float)(i % 7) - 3.0f;
    memset(y, 0xFF, sizeof y);
    BkDeviceAddress b[2] = { (BkDeviceAddress)(uintptr_t)x, (BkDeviceAddress)(uintptr_t)y };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2, .pBindings = b };
    BkQueue q;
    if (bkGetQueue(ctx, 0, &q) != BK_SUCCESS)
        tap_bail("bkGetQueue: %s", bkGetLastErrorMessage());
    long calls = atomic_load(&stats.calls);
    rel_alloc_fail_in(&stats, 1, true);
    BkResult r = bkQueueRun(q, plan, &run);
    if (r == BK_SUCCESS)
        r = bkQueueWaitIdle(q);
    rel_alloc_fail_in(&stats, 0, false);
    calls = atomic_load(&stats.calls) - calls;
    tap_ok(r == BK_SUCCESS && calls == 0,
           "bkQueueRun: runs with every allocation failing and asks for none (%s, %ld asked)",
           bkResultString(r), calls);
    bool ok = true;
    for (int row = 0; row < 4; row++)
        for (int j = 0; j < 8; j++) {
            float a = x[row * 16 + j], g = x[row * 16 + 8 + j];
            float want = a * g / (1.0f + __builtin_expf(-g));
            ok = ok && __builtin_fabsf(y[row * 8 + j] - want) <=
                           1e-5f * (1.0f + __builtin_fabsf(want));
        }
    tap_ok(ok, "bkQueueRun: the output under failing allocations is the op's");
}

int main(void)
{
    cb = rel_alloc_callbacks(&stats);
    rel_capture_messages();

    for (int after = 0; after < 2; after++) {
        struct ctx_state cs = { &host_info, NULL };
        inject(&(struct subject){ "bkCreateContext(HOST)", ctx_attempt, ctx_undo, ctx_use, &cs },
               after);
        cs.info = &auto_info;
        inject(&(struct subject){ "bkCreateContext(AUTO)", ctx_attempt, ctx_undo, ctx_use, &cs },
               after);
    }

    /* With callbacks given to the object, and with NULL (the context's);
     * a fresh context each time, so its memory registry starts empty. */
    BkContext ctx;
    for (int own = 0; own < 2; own++) {
        for (int after = 0; after < 2; after++) {
            if (bkCreateContext(&host_info, &cb, &ctx) != BK_SUCCESS)
                tap_bail("bkCreateContext: %s", bkGetLastErrorMessage());
            struct obj_state s = { .ctx = ctx, .alloc = own ? &cb : NULL };
            const char *who = own ? "own callbacks" : "the context's callbacks";
            char name[128];
            /* The 17th memory makes the registry grow. */
            BkMemory keep[20];
            for (int k = 0; k < 20; k++) {
                snprintf(name, sizeof name, "bkAllocateMemory no. %d, %s", k + 1, who);
                struct subject sub = { name, mem_attempt, mem_undo, mem_use, &s };
                if (k == 0 || k == 16)
                    inject(&sub, after);
                if (mem_attempt(&s) != BK_SUCCESS)
                    tap_bail("bkAllocateMemory: %s", bkGetLastErrorMessage());
                keep[k] = s.mem;
            }
            for (int k = 0; k < 20; k++)
                bkFreeMemory(ctx, keep[k]);

            snprintf(name, sizeof name, "bkAllocateCommandBuffer, %s", who);
            inject(&(struct subject){ name, cmd_attempt, cmd_undo, NULL, &s }, after);
            s.op = &fwd_info;
            snprintf(name, sizeof name, "bkCreatePlan(forward), %s", who);
            inject(&(struct subject){ name, plan_attempt, plan_undo, plan_use, &s }, after);
            s.op = &bwd_info;
            snprintf(name, sizeof name, "bkCreatePlan(backward), %s", who);
            inject(&(struct subject){ name, plan_attempt, plan_undo, plan_use, &s }, after);
            const struct { const void *op; const char *name; } family[] = {
                { &gemm_info, "gemm" }, { &prune_info, "2:4 prune" },
                { &prepare_info, "2:4 prepare" }, { &sgemm_info, "2:4 gemm" },
                { &w4pack_info, "w4a16 pack" }, { &w4repack_info, "w4a16 repack" },
                { &w4gemm_info, "w4a16 gemm" },
                { &w4gemm_zp_info, "w4a16 gemm, zero points" }, { &attn_info, "attention" },
                { &attn_bwd_info, "attention backward" },
                { &attn_paged_info, "attention, paged" }, { &convert_info, "convert" },
            };
            for (size_t f = 0; f < sizeof family / sizeof family[0]; f++) {
                s.op = family[f].op;
                snprintf(name, sizeof name, "bkCreatePlan(%s), %s", family[f].name, who);
                inject(&(struct subject){ name, plan_attempt, plan_undo, plan_use, &s }, after);
            }
            bkDestroyContext(ctx);
        }
    }
    if (bkCreateContext(&host_info, &cb, &ctx) != BK_SUCCESS)
        tap_bail("bkCreateContext: %s", bkGetLastErrorMessage());

    BkPlan plan;
    BkPlanCreateInfo pinfo = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO,
                               .pOperation = &fwd_info };
    if (bkCreatePlan(ctx, &pinfo, NULL, &plan) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    for (int kind = 0; kind < 3; kind++)
        recording_growth(ctx, plan, kind);
    queue_run_allocates_nothing(ctx, plan);
    bkDestroyPlan(plan);

    /* Runs of the GEMM, W4A16 and attention families: command buffer,
     * recording, workspace and submission with allocations failing. */
    const struct { const void *op; const char *name; } runs[] = {
        { &gemm_info, "run gemm" }, { &prune_info, "run 2:4 prune" },
        { &prepare_info, "run 2:4 prepare" }, { &sgemm_info, "run 2:4 gemm" },
        { &w4pack_info, "run w4a16 pack" }, { &w4repack_info, "run w4a16 repack" },
        { &w4gemm_info, "run w4a16 gemm" },
        { &w4gemm_zp_info, "run w4a16 gemm, zero points" }, { &attn_info, "run attention" },
        { &attn_bwd_info, "run attention backward" },
        { &attn_paged_info, "run attention, paged" },
    };
    for (size_t f = 0; f < sizeof runs / sizeof runs[0]; f++) {
        struct run_state rs = { .ctx = ctx, .op = runs[f].op };
        pinfo.pOperation = runs[f].op;
        if (bkCreatePlan(ctx, &pinfo, NULL, &rs.plan) != BK_SUCCESS) {
            tap_skip(4, "%s: no plan (%s)", runs[f].name, bkGetLastErrorMessage());
            continue;
        }
        if (runs[f].op == (const void *)&sgemm_info) {
            /* The weight it reads, prepared once. */
            BkResult r;
            BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO,
                                    .pOperation = &prepare_info };
            if (bkCreatePlan(ctx, &pi, NULL, &rs.prep) != BK_SUCCESS ||
                !run_sparse(ctx, rs.prep, &prepare_info, NULL, &r))
                tap_bail("preparing the weight: %s", bkGetLastErrorMessage());
        }
        /* Once first: what the context keeps for good (its memory registry)
         * is then made, and not mistaken for a leak of a failed run. */
        if (!run_use(&rs))
            tap_diag("%s: the first run failed: %s", runs[f].name, bkGetLastErrorMessage());
        for (int after = 0; after < 2; after++)
            inject(&(struct subject){ runs[f].name, run_attempt, run_undo, run_use, &rs },
                   after);
        bkDestroyPlan(rs.plan);
        bkDestroyPlan(rs.prep);
    }

    /* Only devices with native queues (CUDA streams) can import one. */
    BkQueue q = (BkQueue)(uintptr_t)1;
    BkResult r = bkImportQueue(ctx, &q, &q);
    if (r == BK_ERROR_UNSUPPORTED && q == BK_NULL_HANDLE)
        tap_skip(1, "bkImportQueue: the host device has no native queues");
    else
        tap_ok(false, "bkImportQueue on the host device returned %s, not BK_ERROR_UNSUPPORTED",
               bkResultString(r));

    bkDestroyContext(ctx);
    tap_is_int(atomic_load(&stats.live), 0, "every allocation through the callbacks was freed");
    tap_is_int(atomic_load(&stats.bad_frees) + atomic_load(&stats.bad_aligns), 0,
               "no foreign pointer freed and every alignment a power of two");
    return tap_done();
}
