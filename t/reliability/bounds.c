/* SPDX-License-Identifier: Apache-2.0 */
/* Overflow and bounds, as properties over random inputs (fixed seeds):
 * - a tensor whose byte span or element count does not fit in 64 bits is
 *   rejected, with a message naming it; one far from the limit is accepted;
 * - a written tensor whose strides reach one element twice is rejected,
 *   naming it; every layout that reaches no element twice, nested
 *   (padded, permuted) or interleaved, is accepted; a read tensor may
 *   overlap itself;
 * - a binding smaller than its tensor, when libbk can know its size
 *   (pBindingSizes, or a BkMemory), is rejected with BUFFER_TOO_SMALL;
 *   one large enough is accepted and the run writes only inside the span;
 * - a written binding whose byte range meets another binding's is
 *   rejected; disjoint ranges are accepted;
 * - an empty tensor (a zero extent) is accepted when its non-empty twin
 *   (each 0 extent read as 1) fits, else rejected naming it: an extent of
 *   0 does not lift the size rules from the others;
 * - addresses and sizes that wrap the 64-bit address space are rejected;
 * - the same size and self-overlap rules for the GEMM family: dense GEMM
 *   with huge shapes and leading dimensions, the 2:4 outputs with random
 *   strides; for the W4A16 family: its GEMM with huge shapes, its plain
 *   outputs (c, quantized) with random strides, and its output bindings
 *   (c, packed, quantized, the repack's report) smaller than they need;
 *   and for the attention family: the forward pass with huge shapes, its
 *   outputs (y, lse, dq, dk, dv) with random strides and smaller bindings
 *   than they need, and the workspace one byte short or exactly its size.
 * The reference arithmetic is the test's own (128-bit, rel_util.c). */
#include "config.h"

#include "rel_util.h"
#include "../lib/tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static BkContext ctx;
static struct rel_rng rng;

static const BkDataType types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                    BK_DATA_TYPE_F64 };

/* bkCreatePlan on op; returns the result and the plan (NULL on failure). */
static BkResult try_plan(const void *op, BkPlan *plan, const char **why)
{
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = op };
    unsigned mark = rel_message_count();
    BkResult r = bkCreatePlan(ctx, &pi, NULL, plan);
    *why = r < 0 ? rel_check_failure(r, mark) : NULL;
    return r;
}

static bool over_limit(const BkTensorDesc *d)
{
    struct rel_size count, span;
    return rel_tensor_size(d, &count, &span) &&
           (rel_size_above(span, UINT64_MAX) || rel_size_above(count, INT64_MAX));
}

/* libbk's own limit is INT64_MAX bytes and elements; the first tensor past
 * it is the one the message must name. */
static bool beyond_int64(const BkTensorDesc *d)
{
    struct rel_size count, span;
    return rel_tensor_size(d, &count, &span) &&
           (rel_size_above(span, INT64_MAX) || rel_size_above(count, INT64_MAX));
}

static bool far_from_limit(const BkTensorDesc *d)
{
    struct rel_size count, span;
    return rel_tensor_size(d, &count, &span) && !rel_size_above(span, (uint64_t)1 << 62);
}

/* A value near a power of two up to 2^max_log, or a small one. */
static int64_t big_extent(unsigned max_log)
{
    switch (rel_below(&rng, 4)) {
    case 0: return 1 + (int64_t)rel_below(&rng, 8);
    case 1: return (int64_t)1 << rel_below(&rng, max_log + 1);
    case 2: return ((int64_t)1 << rel_below(&rng, max_log + 1)) + (int64_t)rel_below(&rng, 3);
    default: return 1 + (int64_t)(rel_next(&rng) >> (64 - max_log));
    }
}

/* The nested rule: dimensions sorted by stride, each stride beyond the
 * furthest offset the smaller ones reach. Such a layout never aliases. */
static bool nested(const BkTensorDesc *d)
{
    uint32_t idx[BK_MAX_TENSOR_RANK], n = 0;
    for (uint32_t k = 0; k < d->rank; k++)
        if (d->extent[k] > 1)
            idx[n++] = k;
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && rel_stride(d, idx[j - 1]) > rel_stride(d, idx[j]); j--) {
            uint32_t t = idx[j];
            idx[j] = idx[j - 1], idx[j - 1] = t;
        }
    int64_t reach = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (rel_stride(d, idx[i]) <= reach)
            return false;
        reach += rel_stride(d, idx[i]) * (d->extent[idx[i]] - 1);
    }
    return true;
}

/* ---- Byte size overflow ------------------------------------------------------ */

static void size_overflow(int cases)
{
    long overflowing = 0, fitting = 0, bad_reject = 0, bad_accept = 0, wrong_field = 0;
    for (int c = 0; c < cases; c++) {
        BkGatedActivationInfo op = { .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
                                     .kind = (BkGatedActivationKind)rel_below(&rng, 5) };
        uint32_t rank = 1 + (uint32_t)rel_below(&rng, BK_MAX_TENSOR_RANK);
        op.splitAxis = (uint32_t)rel_below(&rng, rank);
        BkDataType type = types[rel_below(&rng, 4)];
        bool strided = rel_below(&rng, 2);
        op.input = (BkTensorDesc){ .dataType = type, .rank = rank };
        op.output = op.input;
        for (uint32_t k = 0; k < rank; k++) {
            int64_t e = big_extent(rank > 2 ? 24 : 62);
            if (k == op.splitAxis)
                e = e > INT64_MAX / 2 ? INT64_MAX / 2 : e;
            op.output.extent[k] = e;
            op.input.extent[k] = k == op.splitAxis ? 2 * e : e;
        }
        if (strided) { /* row-major strides, then one dimension stretched */
            for (int t = 0; t < 2; t++) {
                BkTensorDesc *d = t ? &op.output : &op.input;
                int64_t s = 1;
                for (uint32_t k = rank; k-- > 0;) {
                    d->stride[k] = s;
                    s = d->extent[k] && s <= INT64_MAX / d->extent[k] ? s * d->extent[k] : s;
                }
                uint32_t k = (uint32_t)rel_below(&rng, rank);
                int64_t stretch = big_extent(62);
                d->stride[k] = d->stride[k] <= INT64_MAX / stretch ? d->stride[k] * stretch
                                                                    : INT64_MAX;
            }
        }
        BkPlan plan = BK_NULL_HANDLE;
        const char *why;
        BkResult r = try_plan(&op, &plan, &why);
        bool in_over = over_limit(&op.input), out_over = over_limit(&op.output);
        if (in_over || out_over) {
            overflowing++;
            if (r != BK_ERROR_INVALID_ARGUMENT || why) {
                if (bad_accept++ == 0)
                    tap_diag("case %d: %s for a tensor beyond 64 bits (%s)", c, bkResultString(r),
                             bkGetLastErrorMessage());
            } else if (!strstr(bkGetLastErrorMessage(),
                               beyond_int64(&op.input) ? "BkGatedActivationInfo.input"
                                                       : "BkGatedActivationInfo.output")) {
                if (wrong_field++ == 0)
                    tap_diag("case %d: the message does not name the tensor: %s", c,
                             bkGetLastErrorMessage());
            }
        } else if (far_from_limit(&op.input) && far_from_limit(&op.output) &&
                   nested(&op.output)) { /* a stretched output may overlap itself */
            fitting++;
            if (r != BK_SUCCESS && bad_reject++ == 0)
                tap_diag("case %d: a tensor that fits was rejected: %s", c,
                         bkGetLastErrorMessage());
        }
        bkDestroyPlan(plan);
    }
    tap_ok(bad_accept == 0 && wrong_field == 0,
           "size overflow: all %ld tensors beyond 64 bits rejected, naming the tensor",
           overflowing);
    tap_ok(bad_reject == 0 && fitting > cases / 20, "size overflow: all %ld tensors that fit are "
           "accepted", fitting);
}

/* ---- Self-aliasing written tensors ------------------------------------------- */

static void self_alias(int cases)
{
    long aliasing = 0, is_nested = 0, exotic = 0, exotic_rejected = 0, bad_accept = 0,
         bad_reject = 0, wrong_field = 0, read_alias = 0, read_rejected = 0;
    for (int c = 0; c < cases; c++) {
        BkGatedActivationBackwardInfo op = {
            .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO,
            .kind = (BkGatedActivationKind)rel_below(&rng, 5),
        };
        uint32_t rank = 1 + (uint32_t)rel_below(&rng, 4);
        op.splitAxis = (uint32_t)rel_below(&rng, rank);
        op.input = (BkTensorDesc){ .dataType = types[rel_below(&rng, 4)], .rank = rank };
        for (uint32_t k = 0; k < rank; k++)
            op.input.extent[k] = (1 + (int64_t)rel_below(&rng, 5)) * (k == op.splitAxis ? 2 : 1);
        op.gradOutput = op.input;
        op.gradOutput.extent[op.splitAxis] /= 2;
        op.gradInput = op.input;
        /* The written gradInput gets random small strides; so does the read
         * gradOutput, which may overlap itself. */
        for (uint32_t k = 0; k < rank; k++) {
            op.gradInput.stride[k] = 1 + (int64_t)rel_below(&rng, 12);
            op.gradOutput.stride[k] = 1 + (int64_t)rel_below(&rng, 4);
        }
        int aliases = rel_tensor_aliases(&op.gradInput, 1 << 16);
        bool out_nested = nested(&op.gradInput);
        BkPlan plan = BK_NULL_HANDLE;
        const char *why;
        BkResult r = try_plan(&op, &plan, &why);
        if (rel_tensor_aliases(&op.gradOutput, 1 << 16) == 1) {
            read_alias++;
            read_rejected += r != BK_SUCCESS && !aliases && out_nested;
        }
        if (aliases == 1) {
            aliasing++;
            if (r != BK_ERROR_INVALID_ARGUMENT || why) {
                if (bad_accept++ == 0)
                    tap_diag("case %d: %s for a written tensor that aliases", c,
                             bkResultString(r));
            } else if (!strstr(bkGetLastErrorMessage(),
                               "BkGatedActivationBackwardInfo.gradInput")) {
                if (wrong_field++ == 0)
                    tap_diag("case %d: message does not name gradInput: %s", c,
                             bkGetLastErrorMessage());
            }
        } else if (out_nested) {
            is_nested++;
            if (r != BK_SUCCESS && bad_reject++ == 0)
                tap_diag("case %d: a nested layout was rejected: %s", c, bkGetLastErrorMessage());
        } else {
            exotic++;
            if (r != BK_SUCCESS) {
                exotic_rejected++;
                if (why || !strstr(bkGetLastErrorMessage(), "gradInput"))
                    wrong_field++;
            }
        }
        bkDestroyPlan(plan);
    }
    tap_ok(bad_accept == 0 && wrong_field == 0 && aliasing > 0,
           "self-overlap: all %ld written tensors that reach an element twice are rejected, "
           "naming the tensor", aliasing);
    tap_ok(bad_reject == 0 && is_nested > 0,
           "self-overlap: all %ld nested written layouts are accepted", is_nested);
    tap_ok(exotic_rejected == 0 && exotic > 0,
           "self-overlap: all %ld interleaved written layouts that never alias are accepted "
           "(%ld rejected)", exotic, exotic_rejected);
    tap_ok(read_rejected == 0, "self-overlap: read tensors may overlap themselves (%ld cases)",
           read_alias);
}

/* ---- Bindings: sizes and overlap ---------------------------------------------- */

static BkCommandBuffer cmd;

static BkResult record(BkPlan plan, uint32_t n, const BkDeviceAddress *b, const uint64_t *sizes,
                       const char **why)
{
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = n, .pBindings = b,
                      .pBindingSizes = sizes };
    unsigned mark = rel_message_count();
    BkResult r = bkCmdRun(cmd, plan, &run);
    *why = r < 0 ? rel_check_failure(r, mark) : NULL;
    return r;
}

/* ---- The GEMM family: sizes and written outputs ------------------------------ */

/* A [rows, cols] matrix, row- or column-major, its leading dimension
 * stretched sometimes far beyond the extent it steps over. */
static BkTensorDesc big_matrix(BkDataType type, int64_t rows, int64_t cols)
{
    BkTensorDesc d = { .dataType = type, .rank = 2, .extent = { rows, cols } };
    const bool col = rel_below(&rng, 2);
    int64_t lead = col ? rows : cols;
    if (rel_below(&rng, 2)) {
        int64_t stretch = big_extent(62);
        lead = lead <= INT64_MAX / stretch ? lead * stretch : INT64_MAX;
    }
    d.stride[0] = col ? 1 : lead;
    d.stride[1] = col ? lead : 1;
    return d;
}

/* Dense GEMM with huge M, N, K and leading dimensions: a tensor beyond 64
 * bits is rejected naming it (the first of a, b, c, d that is), one that
 * fits is accepted. */
/* What the GEMM-family size overflow cases count. */
struct overflow_tally {
    long overflowing, fitting, bad_reject, bad_accept, wrong_field;
};

/* Makes a plan of op, whose tensors t[0..count) are named names[] in
 * messages: one reaching past 64 bits must be rejected naming the first
 * such tensor; tensors far from the limit must be accepted. what labels
 * the first miss of each kind. */
static void judge_overflow(struct overflow_tally *tally, const char *what, int c, const void *op,
                           const BkTensorDesc *const *t, const char *const *names, int count)
{
    int first_over = -1;
    bool all_far = true;
    for (int i = 0; i < count; i++) {
        if (first_over < 0 && beyond_int64(t[i]))
            first_over = i;
        all_far = all_far && far_from_limit(t[i]);
    }
    BkPlan plan = BK_NULL_HANDLE;
    const char *why;
    BkResult r = try_plan(op, &plan, &why);
    if (first_over >= 0) {
        tally->overflowing++;
        if (r != BK_ERROR_INVALID_ARGUMENT || why) {
            if (tally->bad_accept++ == 0)
                tap_diag("%s case %d: %s for a tensor beyond 64 bits (%s)", what, c,
                         bkResultString(r), bkGetLastErrorMessage());
        } else if (!strstr(bkGetLastErrorMessage(), names[first_over])) {
            if (tally->wrong_field++ == 0)
                tap_diag("%s case %d: the message does not name %s: %s", what, c,
                         names[first_over], bkGetLastErrorMessage());
        }
    } else if (all_far) {
        tally->fitting++;
        if (r != BK_SUCCESS && tally->bad_reject++ == 0)
            tap_diag("%s case %d: tensors that fit were rejected: %s", what, c,
                     bkGetLastErrorMessage());
    }
    bkDestroyPlan(plan);
}

static void gemm_size_overflow(int cases)
{
    struct overflow_tally tally = { 0 };
    static const char *const names[] = { "BkGemmInfo.a", "BkGemmInfo.b", "BkGemmInfo.c",
                                         "BkGemmInfo.d" };
    for (int c = 0; c < cases; c++) {
        const BkDataType type = types[rel_below(&rng, 4)];
        const int64_t m = big_extent(40), n = big_extent(40), k = big_extent(40);
        BkGemmInfo op = { .sType = BK_STRUCTURE_TYPE_GEMM_INFO, .alpha = 1, .beta = 1,
                          .transA = (BkGemmOp)rel_below(&rng, 2),
                          .transB = (BkGemmOp)rel_below(&rng, 2) };
        op.a = big_matrix(type, op.transA ? k : m, op.transA ? m : k);
        op.b = big_matrix(type, op.transB ? n : k, op.transB ? k : n);
        op.d = big_matrix(type, m, n);
        op.c = rel_below(&rng, 2) ? op.d : big_matrix(type, m, n);
        const BkTensorDesc *t[4] = { &op.a, &op.b, &op.c, &op.d };
        judge_overflow(&tally, "gemm", c, &op, t, names, 4);
    }
    tap_ok(tally.bad_accept == 0 && tally.wrong_field == 0,
           "gemm size overflow: all %ld problems with a tensor beyond 64 bits rejected, naming "
           "it", tally.overflowing);
    tap_ok(tally.bad_reject == 0 && tally.fitting > cases / 20, "gemm size overflow: all %ld "
           "problems whose tensors fit are accepted", tally.fitting);
}

/* The 2:4 outputs (sparse GEMM's y, compression's values and metadata)
 * with random small strides: one that reaches an element twice is rejected
 * naming it, a nested one accepted; the read x may overlap itself. */
static void sparse_self_alias(int cases)
{
    long aliasing = 0, accepted_nested = 0, is_nested = 0, bad_accept = 0, bad_reject = 0;
    for (int c = 0; c < cases; c++) {
        const bool gemm = rel_below(&rng, 2);
        const int64_t rows = 1 + (int64_t)rel_below(&rng, 5);
        const int64_t cols = 8 * (1 + (int64_t)rel_below(&rng, 2));
        BkTensorDesc out = { .dataType = BK_DATA_TYPE_F16, .rank = 2,
                             .extent = { rows, gemm ? 1 + (int64_t)rel_below(&rng, 6) : cols / 2 },
                             .stride = { 1 + (int64_t)rel_below(&rng, 8),
                                         1 + (int64_t)rel_below(&rng, 8) } };
        const BkTensorDesc x = { .dataType = BK_DATA_TYPE_F16, .rank = 2,
                                 .extent = { rows, cols },
                                 .stride = { 1 + (int64_t)rel_below(&rng, 3),
                                             1 + (int64_t)rel_below(&rng, 3) } };
        BkSparse24GemmInfo g = { .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO,
                                 .weightType = BK_DATA_TYPE_F16, .m = out.extent[1], .k = cols,
                                 .alpha = 1, .x = x, .y = out };
        BkSparse24ConvertInfo v = {
            .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO,
            .conversion = BK_SPARSE24_COMPRESS_PRUNE, .dense = x, .values = out,
            .metadata = { .dataType = BK_DATA_TYPE_U16, .rank = 2, .extent = { rows, cols / 8 } },
        };
        const char *field = gemm ? "BkSparse24GemmInfo.y" : "BkSparse24ConvertInfo.values";
        const int aliases = rel_tensor_aliases(&out, 1 << 16);
        BkPlan plan = BK_NULL_HANDLE;
        const char *why;
        BkResult r = try_plan(gemm ? (const void *)&g : (const void *)&v, &plan, &why);
        if (aliases == 1) {
            aliasing++;
            if ((r != BK_ERROR_INVALID_ARGUMENT || why ||
                 !strstr(bkGetLastErrorMessage(), field)) && bad_accept++ == 0)
                tap_diag("sparse case %d: %s for an overlapping %s (%s)", c, bkResultString(r),
                         field, bkGetLastErrorMessage());
        } else if (nested(&out)) {
            is_nested++;
            accepted_nested += r == BK_SUCCESS;
            if (r != BK_SUCCESS && bad_reject++ == 0)
                tap_diag("sparse case %d: a nested %s was rejected: %s", c, field,
                         bkGetLastErrorMessage());
        }
        bkDestroyPlan(plan);
    }
    tap_ok(bad_accept == 0 && aliasing > 0, "2:4 outputs reaching an element twice are rejected "
           "naming them (%ld)", aliasing);
    tap_ok(bad_reject == 0 && accepted_nested > 0, "nested 2:4 outputs are accepted, whatever x's "
           "strides (%ld of %ld)", accepted_nested, is_nested);
}

/* Starts recording afresh, whatever state the buffer is in. */
static void begin(void)
{
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    bkEndCommandBuffer(cmd); /* fails, harmlessly, unless it is recording */
    if (bkBeginCommandBuffer(cmd, &bi) != BK_SUCCESS)
        tap_bail("bkBeginCommandBuffer: %s", bkGetLastErrorMessage());
}

/* Submits what was recorded; true when it ran. */
static bool submit(void)
{
    BkQueue q;
    return bkEndCommandBuffer(cmd) == BK_SUCCESS && bkGetQueue(ctx, 0, &q) == BK_SUCCESS &&
           bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS;
}

/* A random forward problem with a padded, permuted output. */
static void random_forward(BkGatedActivationInfo *op)
{
    *op = (BkGatedActivationInfo){ .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
                                   .kind = (BkGatedActivationKind)rel_below(&rng, 5) };
    uint32_t rank = 1 + (uint32_t)rel_below(&rng, 3);
    op->splitAxis = (uint32_t)rel_below(&rng, rank);
    op->input = (BkTensorDesc){ .dataType = types[rel_below(&rng, 4)], .rank = rank };
    for (uint32_t k = 0; k < rank; k++)
        op->input.extent[k] = (1 + (int64_t)rel_below(&rng, 6)) * (k == op->splitAxis ? 2 : 1);
    op->output = op->input;
    op->output.extent[op->splitAxis] /= 2;
    int64_t s = 1 + (int64_t)rel_below(&rng, 2);
    for (uint32_t k = rank; k-- > 0;) {
        op->output.stride[k] = s;
        s *= op->output.extent[k] + (int64_t)rel_below(&rng, 2);
    }
}

#define ARENA 16384

static void binding_sizes(int cases)
{
    static _Alignas(256) unsigned char host[2][ARENA];
    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .size = ARENA };
    BkMemory mem;
    BkDeviceAddress base;
    if (bkAllocateMemory(ctx, &mi, NULL, &mem) != BK_SUCCESS ||
        bkGetMemoryAddress(mem, &base) != BK_SUCCESS)
        tap_bail("bkAllocateMemory: %s", bkGetLastErrorMessage());
    unsigned char *dev = (unsigned char *)(uintptr_t)base;
    long small = 0, enough = 0, bad_small = 0, bad_enough = 0, stray = 0, wrong_field = 0;
    long overlapping = 0, disjoint = 0, bad_overlap = 0, bad_disjoint = 0;
    for (int c = 0; c < cases; c++) {
        BkGatedActivationInfo op;
        random_forward(&op);
        BkPlan plan;
        const char *why;
        if (try_plan(&op, &plan, &why) != BK_SUCCESS)
            tap_bail("case %d: bkCreatePlan: %s", c, bkGetLastErrorMessage());
        struct rel_size cnt, s0, s1;
        rel_tensor_size(&op.input, &cnt, &s0);
        rel_tensor_size(&op.output, &cnt, &s1);
        uint64_t span[2] = { s0.value, s1.value };
        size_t elem = rel_type_size(op.input.dataType);
        unsigned slot = (unsigned)rel_below(&rng, 2); /* the binding under test */
        bool in_memory = rel_below(&rng, 2);
        int64_t delta = (int64_t)rel_below(&rng, 5) - 3; /* elements more (or fewer) than needed */
        int64_t want = (int64_t)span[slot] + delta * (int64_t)elem;
        uint64_t room = want < (int64_t)elem ? elem : (uint64_t)want; /* 0 would mean unknown */
        BkDeviceAddress b[2];
        uint64_t sizes[2] = { 0, 0 };
        /* The other binding: plenty of host memory with its true size. */
        b[1 - slot] = (BkDeviceAddress)(uintptr_t)host[1 - slot];
        sizes[1 - slot] = ARENA;
        if (in_memory) { /* room bytes left before the end of the BkMemory */
            b[slot] = base + ARENA - room;
            memset(dev, 0xA5, ARENA);
        } else {
            b[slot] = (BkDeviceAddress)(uintptr_t)host[slot];
            sizes[slot] = room;
            memset(host[slot], 0xA5, ARENA);
        }
        begin();
        BkResult r = record(plan, 2, b, sizes, &why);
        const char *names[2] = { "(input)", "(output)" };
        if (room < span[slot]) {
            small++;
            if (r != BK_ERROR_BUFFER_TOO_SMALL || why) {
                if (bad_small++ == 0)
                    tap_diag("case %d: %s for a %llu-byte tensor in %llu bytes (%s)", c,
                             bkResultString(r), (unsigned long long)span[slot],
                             (unsigned long long)room, bkGetLastErrorMessage());
            } else if (!strstr(bkGetLastErrorMessage(), names[slot])) {
                if (wrong_field++ == 0)
                    tap_diag("case %d: message does not name the binding: %s", c,
                             bkGetLastErrorMessage());
            }
        } else {
            enough++;
            if (r != BK_SUCCESS || !submit()) {
                if (bad_enough++ == 0)
                    tap_diag("case %d: %s for a %llu-byte tensor in %llu bytes (%s)", c,
                             bkResultString(r), (unsigned long long)span[slot],
                             (unsigned long long)room, bkGetLastErrorMessage());
            } else if (slot == 1) { /* the output: nothing written outside its span */
                const unsigned char *area = in_memory ? dev : host[1];
                size_t lo = in_memory ? (size_t)(ARENA - room) : 0;
                for (size_t i = 0; i < ARENA; i++)
                    if ((i < lo || i >= lo + span[1]) && area[i] != 0xA5) {
                        if (stray++ == 0)
                            tap_diag("case %d: byte %zu outside the output's span changed", c, i);
                        break;
                    }
            }
        }
        /* Overlap: both bindings in one BkMemory at random offsets. */
        begin();
        uint64_t o0 = rel_below(&rng, ARENA - span[0] + 1) / elem * elem;
        uint64_t o1 = rel_below(&rng, ARENA - span[1] + 1) / elem * elem;
        BkDeviceAddress ob[2] = { base + o0, base + o1 };
        r = record(plan, 2, ob, NULL, &why);
        bool meet = o0 < o1 + span[1] && o1 < o0 + span[0];
        if (meet) {
            overlapping++;
            if ((r != BK_ERROR_INVALID_ARGUMENT || why || !strstr(bkGetLastErrorMessage(),
                                                                  "overlaps")) &&
                bad_overlap++ == 0)
                tap_diag("case %d: %s for overlapping bindings (%s)", c, bkResultString(r),
                         bkGetLastErrorMessage());
        } else {
            disjoint++;
            if (r != BK_SUCCESS && bad_disjoint++ == 0)
                tap_diag("case %d: disjoint bindings rejected: %s", c, bkGetLastErrorMessage());
        }
        bkDestroyPlan(plan);
    }
    bkFreeMemory(ctx, mem);
    tap_ok(bad_small == 0 && wrong_field == 0 && small > 0,
           "binding sizes: all %ld bindings smaller than their tensor return BUFFER_TOO_SMALL, "
           "naming the binding", small);
    tap_ok(bad_enough == 0 && stray == 0 && enough > 0,
           "binding sizes: all %ld large enough run and write only inside the output's span",
           enough);
    tap_ok(bad_overlap == 0 && bad_disjoint == 0 && overlapping > 0 && disjoint > 0,
           "overlap: %ld overlapping written ranges rejected, %ld disjoint ones accepted",
           overlapping, disjoint);
}

/* ---- The W4A16 family: sizes, written outputs, bindings ---------------------- */

static const int32_t w4_groups[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL };

static int64_t w4_group_count(int32_t group, int64_t k)
{
    return group == BK_W4A16_GROUP_PER_CHANNEL ? 1 : k / group;
}

static BkTensorDesc w4_contiguous(BkDataType type, int64_t rows, int64_t cols)
{
    return (BkTensorDesc){ .dataType = type, .rank = 2, .extent = { rows, cols } };
}

/* The W4A16 GEMM with huge M, K, N and stretched leading dimensions of a
 * and c: a tensor beyond 64 bits is rejected naming it (the first of a, c,
 * packed, packedScales that is: the order libbk reads them in), one that
 * fits is accepted. */
static void w4a16_size_overflow(int cases)
{
    struct overflow_tally tally = { 0 };
    static const char *const names[] = { "BkW4A16GemmInfo.a", "BkW4A16GemmInfo.c",
                                         "BkW4A16GemmInfo.packed",
                                         "BkW4A16GemmInfo.packedScales" };
    for (int c = 0; c < cases; c++) {
        const BkDataType type = rel_below(&rng, 2) ? BK_DATA_TYPE_F16 : BK_DATA_TYPE_BF16;
        const int32_t group = w4_groups[rel_below(&rng, 4)];
        const int64_t m = big_extent(40), k = 128 * big_extent(36), n = 64 * big_extent(36);
        BkW4A16GemmInfo op = { .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = group };
        op.a = big_matrix(type, m, k);
        op.c = big_matrix(type, m, n);
        op.packed = w4_contiguous(BK_DATA_TYPE_I32, k / 16, 2 * n);
        op.packedScales = w4_contiguous(type, w4_group_count(group, k), n);
        const BkTensorDesc *t[4] = { &op.a, &op.c, &op.packed, &op.packedScales };
        judge_overflow(&tally, "w4a16", c, &op, t, names, 4);
    }
    tap_ok(tally.bad_accept == 0 && tally.wrong_field == 0,
           "w4a16 size overflow: all %ld GEMMs with a tensor beyond 64 bits rejected, naming it",
           tally.overflowing);
    tap_ok(tally.bad_reject == 0 && tally.fitting > cases / 20, "w4a16 size overflow: all %ld "
           "GEMMs whose tensors fit are accepted", tally.fitting);
}

/* The W4A16 plain written outputs (the GEMM's c; QUANTIZE's and UNPACK's
 * quantized) with random small strides: one that reaches an element twice
 * is rejected naming it, a nested one accepted; the GEMM's read a may
 * overlap itself. */
static void w4a16_self_alias(int cases)
{
    long aliasing = 0, accepted_nested = 0, is_nested = 0, bad_accept = 0, bad_reject = 0;
    for (int c = 0; c < cases; c++) {
        const unsigned kind = (unsigned)rel_below(&rng, 3); /* GEMM, QUANTIZE, UNPACK */
        const int64_t k = 32 * (1 + (int64_t)rel_below(&rng, 2)), n = 64;
        const int64_t rows = kind ? k : 1 + (int64_t)rel_below(&rng, 5);
        const BkDataType type = kind ? BK_DATA_TYPE_U8 : BK_DATA_TYPE_F16;
        BkTensorDesc out = { .dataType = type, .rank = 2, .extent = { rows, n },
                             .stride = { 1 + (int64_t)rel_below(&rng, 80),
                                         1 + (int64_t)rel_below(&rng, 8) } };
        BkW4A16GemmInfo g = {
            .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = 32,
            .a = { .dataType = BK_DATA_TYPE_F16, .rank = 2, .extent = { rows, k },
                   .stride = { 1 + (int64_t)rel_below(&rng, 3),
                               1 + (int64_t)rel_below(&rng, 3) } },
            .packed = w4_contiguous(BK_DATA_TYPE_I32, k / 16, 2 * n),
            .packedScales = w4_contiguous(BK_DATA_TYPE_F16, k / 32, n),
            .c = out,
        };
        BkW4A16ConvertInfo v = {
            .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO,
            .conversion = kind == 1 ? BK_W4A16_QUANTIZE : BK_W4A16_UNPACK,
            .groupSize = BK_W4A16_GROUP_PER_CHANNEL,
            .quantized = out,
            .scales = w4_contiguous(BK_DATA_TYPE_BF16, 1, n),
        };
        if (kind == 1)
            v.weight = w4_contiguous(BK_DATA_TYPE_F32, k, n);
        else {
            v.packed = w4_contiguous(BK_DATA_TYPE_I32, k / 16, 2 * n);
            v.packedScales = w4_contiguous(BK_DATA_TYPE_BF16, 1, n);
        }
        const char *field = kind ? "BkW4A16ConvertInfo.quantized" : "BkW4A16GemmInfo.c";
        const int aliases = rel_tensor_aliases(&out, 1 << 16);
        BkPlan plan = BK_NULL_HANDLE;
        const char *why;
        BkResult r = try_plan(kind ? (const void *)&v : (const void *)&g, &plan, &why);
        if (aliases == 1) {
            aliasing++;
            if ((r != BK_ERROR_INVALID_ARGUMENT || why ||
                 !strstr(bkGetLastErrorMessage(), field)) && bad_accept++ == 0)
                tap_diag("w4a16 case %d: %s for an overlapping %s (%s)", c, bkResultString(r),
                         field, bkGetLastErrorMessage());
        } else if (nested(&out)) {
            is_nested++;
            accepted_nested += r == BK_SUCCESS;
            if (r != BK_SUCCESS && bad_reject++ == 0)
                tap_diag("w4a16 case %d: a nested %s was rejected: %s", c, field,
                         bkGetLastErrorMessage());
        }
        bkDestroyPlan(plan);
    }
    tap_ok(bad_accept == 0 && aliasing > 0, "W4A16 outputs reaching an element twice are "
           "rejected naming them (%ld)", aliasing);
    tap_ok(bad_reject == 0 && accepted_nested > 0, "nested W4A16 outputs are accepted, whatever "
           "a's strides (%ld of %ld)", accepted_nested, is_nested);
}

/* W4A16 output bindings (the GEMM's c, PACK's packed, QUANTIZE's
 * quantized, the repack's report) with random room around what they
 * need, at the end of a BkMemory or with pBindingSizes: too small is
 * BUFFER_TOO_SMALL naming the binding; large enough runs and writes
 * nothing outside the output's span. The other bindings get host memory
 * of their own with true sizes. */
#define W4_ARENA 32768
#define W4_SLOTS 8

static BkResult record_ws(BkPlan plan, uint32_t n, const BkDeviceAddress *b,
                          const uint64_t *sizes, BkDeviceAddress ws, uint64_t ws_size,
                          const char **why);

static void w4a16_binding_sizes(int cases)
{
    static _Alignas(256) unsigned char host[W4_SLOTS][W4_ARENA];
    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = W4_ARENA };
    BkMemory mem;
    BkDeviceAddress base;
    if (bkAllocateMemory(ctx, &mi, NULL, &mem) != BK_SUCCESS ||
        bkGetMemoryAddress(mem, &base) != BK_SUCCESS)
        tap_bail("bkAllocateMemory: %s", bkGetLastErrorMessage());
    unsigned char *dev = (unsigned char *)(uintptr_t)base;
    long small = 0, enough = 0, bad_small = 0, bad_enough = 0, stray = 0, wrong_field = 0;
    long per_kind[4] = { 0 };
    for (int c = 0; c < cases; c++) {
        const unsigned kind = (unsigned)rel_below(&rng, 4); /* GEMM, PACK, QUANTIZE, repack */
        const int32_t group = w4_groups[rel_below(&rng, 4)];
        const int64_t k = (group > 0 ? group : 32) * (1 + (int64_t)rel_below(&rng, 2));
        /* N = 64 for the conversions, whose weight is 2 K N bytes. */
        const int64_t n = 64 * (1 + (int64_t)(kind == 0 || kind == 3 ? rel_below(&rng, 2) : 0));
        const int64_t g = w4_group_count(group, k);
        const BkDataType half = rel_below(&rng, 2) ? BK_DATA_TYPE_F16 : BK_DATA_TYPE_BF16;
        const BkTensorDesc packed = w4_contiguous(BK_DATA_TYPE_I32, k / 16, 2 * n);
        const BkTensorDesc packed_scales = w4_contiguous(half, g, n);
        /* A plain output: contiguous, or rows padded by a few elements. */
        const int64_t pad = (int64_t)rel_below(&rng, 3);
        union {
            BkW4A16GemmInfo gemm;
            BkW4A16ConvertInfo convert;
            BkW4A16GptqRepackInfo repack;
        } op;
        memset(&op, 0, sizeof op);
        const BkTensorDesc *t[W4_SLOTS] = { NULL };
        uint32_t count, slot;
        const char *name;
        uint64_t unit;   /* the output's alignment: room changes by whole units */
        if (kind == 0) {
            const int64_t m = 1 + (int64_t)rel_below(&rng, 8);
            op.gemm = (BkW4A16GemmInfo){
                .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = group,
                .a = w4_contiguous(half, m, k), .packed = packed, .packedScales = packed_scales,
                .c = { .dataType = half, .rank = 2, .extent = { m, n },
                       .stride = { pad ? n + pad : 0, pad ? 1 : 0 } },
            };
            t[0] = &op.gemm.a, t[1] = &op.gemm.packed, t[2] = &op.gemm.packedScales;
            t[4] = &op.gemm.c;
            count = 5, slot = 4, name = "(c)", unit = 2;
        } else if (kind == 1 || kind == 2) {
            op.convert = (BkW4A16ConvertInfo){
                .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO,
                .conversion = kind == 1 ? BK_W4A16_PACK : BK_W4A16_QUANTIZE, .groupSize = group,
                .quantized = { .dataType = BK_DATA_TYPE_U8, .rank = 2, .extent = { k, n },
                               .stride = { pad ? n + pad : 0, pad ? 1 : 0 } },
                .scales = w4_contiguous(half, g, n),
            };
            if (kind == 1) {
                op.convert.packed = packed;
                op.convert.packedScales = packed_scales;
            } else {
                op.convert.weight = w4_contiguous(half, k, n);
            }
            t[0] = &op.convert.weight, t[1] = &op.convert.quantized;
            t[2] = &op.convert.scales, t[3] = &op.convert.packed;
            t[4] = &op.convert.packedScales;
            count = 5;
            slot = kind == 1 ? 3 : 1;
            name = kind == 1 ? "(packed)" : "(quantized)";
            unit = kind == 1 ? 16 : 1;
        } else {
            op.repack = (BkW4A16GptqRepackInfo){
                .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO, .groupSize = group,
                .qweight = w4_contiguous(BK_DATA_TYPE_I32, k / 8, n),
                .scales = w4_contiguous(half, g, n),
                .packed = packed, .packedScales = packed_scales,
            };
            t[0] = &op.repack.qweight, t[1] = &op.repack.scales, t[4] = &op.repack.packed;
            t[5] = &op.repack.packedScales;
            count = 8, slot = 7, name = "(report)", unit = 8;
        }
        for (uint32_t i = 0; i < count; i++) /* absent tensors: no binding */
            if (t[i] && t[i]->dataType == BK_DATA_TYPE_UNDEFINED)
                t[i] = NULL;
        BkPlan plan;
        const char *why;
        if (try_plan(&op, &plan, &why) != BK_SUCCESS)
            tap_bail("w4a16 case %d: bkCreatePlan: %s", c, bkGetLastErrorMessage());
        uint64_t span;
        if (t[slot]) {
            struct rel_size cnt, s;
            rel_tensor_size(t[slot], &cnt, &s);
            span = s.value;
        } else {
            span = sizeof(BkW4A16RepackReport);
        }
        const bool in_memory = rel_below(&rng, 2);
        const int64_t delta = (int64_t)rel_below(&rng, 5) - 3; /* units more (or fewer) */
        const int64_t want = (int64_t)span + delta * (int64_t)unit;
        const uint64_t room = want < (int64_t)unit ? unit : (uint64_t)want;
        BkDeviceAddress b[W4_SLOTS] = { 0 };
        uint64_t sizes[W4_SLOTS] = { 0 };
        for (uint32_t i = 0; i < count; i++) {
            if (i == slot || !t[i])
                continue;
            memset(host[i], 0x11, W4_ARENA); /* q = 1, and finite scales */
            b[i] = (BkDeviceAddress)(uintptr_t)host[i];
            sizes[i] = W4_ARENA;
        }
        if (in_memory) { /* room bytes left before the end of the BkMemory */
            b[slot] = base + W4_ARENA - room;
            memset(dev, 0xA5, W4_ARENA);
        } else {
            b[slot] = (BkDeviceAddress)(uintptr_t)host[slot];
            sizes[slot] = room;
            memset(host[slot], 0xA5, W4_ARENA);
        }
        /* The GEMM on a BLAS takes a workspace: exactly its size, on the heap. */
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        if (bkGetPlanProperties(plan, &props) != BK_SUCCESS)
            tap_bail("w4a16 case %d: bkGetPlanProperties: %s", c, bkGetLastErrorMessage());
        void *ws = props.workspaceSize ? aligned_alloc(256, (props.workspaceSize + 255) / 256 * 256)
                                       : NULL;
        if (props.workspaceSize && !ws)
            tap_bail("w4a16 case %d: no memory for a workspace", c);
        begin();
        BkResult r = record_ws(plan, count, b, sizes, (BkDeviceAddress)(uintptr_t)ws,
                               props.workspaceSize, &why);
        if (room < span) {
            small++;
            if (r != BK_ERROR_BUFFER_TOO_SMALL || why) {
                if (bad_small++ == 0)
                    tap_diag("w4a16 case %d: %s for a %llu-byte %s in %llu bytes (%s)", c,
                             bkResultString(r), (unsigned long long)span, name,
                             (unsigned long long)room, bkGetLastErrorMessage());
            } else if (!strstr(bkGetLastErrorMessage(), name)) {
                if (wrong_field++ == 0)
                    tap_diag("w4a16 case %d: message does not name the binding %s: %s", c,
                             name, bkGetLastErrorMessage());
            }
        } else {
            enough++;
            per_kind[kind]++;
            if (r != BK_SUCCESS || !submit()) {
                if (bad_enough++ == 0)
                    tap_diag("w4a16 case %d: %s for a %llu-byte %s in %llu bytes (%s)", c,
                             bkResultString(r), (unsigned long long)span, name,
                             (unsigned long long)room, bkGetLastErrorMessage());
            } else {
                const unsigned char *area = in_memory ? dev : host[slot];
                const size_t lo = in_memory ? (size_t)(W4_ARENA - room) : 0;
                for (size_t i = 0; i < W4_ARENA; i++)
                    if ((i < lo || i >= lo + span) && area[i] != 0xA5) {
                        if (stray++ == 0)
                            tap_diag("w4a16 case %d: byte %zu outside %s's span changed", c, i,
                                     name);
                        break;
                    }
            }
        }
        free(ws);
        bkDestroyPlan(plan);
    }
    bkFreeMemory(ctx, mem);
    tap_ok(bad_small == 0 && wrong_field == 0 && small > 0,
           "w4a16 binding sizes: all %ld output bindings smaller than their tensor return "
           "BUFFER_TOO_SMALL, naming the binding", small);
    tap_ok(bad_enough == 0 && stray == 0 && per_kind[0] && per_kind[1] && per_kind[2] &&
               per_kind[3],
           "w4a16 binding sizes: all %ld large enough (c %ld, packed %ld, quantized %ld, report "
           "%ld) run and write only inside the output's span", enough, per_kind[0], per_kind[1],
           per_kind[2], per_kind[3]);
}

/* ---- The attention family: sizes, written outputs, bindings, workspace ------- */

/* a * b, or INT64_MAX once that would pass it. */
static int64_t sat_mul(int64_t a, int64_t b)
{
    return a && b > INT64_MAX / a ? INT64_MAX : a * b;
}

/* A [B, H, L, D] operand: row-major, or the view of [B, L, H, D] storage;
 * its batch stride stretched sometimes. Nested, so never self-overlapping
 * (a saturated stride puts it beyond 64 bits anyway). */
static BkTensorDesc big_view(BkDataType type, int64_t b, int64_t h, int64_t l, int64_t d)
{
    BkTensorDesc t = { .dataType = type, .rank = 4, .extent = { b, h, l, d } };
    const bool token_major = rel_below(&rng, 2);
    const int inner = token_major ? 1 : 2, outer = token_major ? 2 : 1;
    t.stride[3] = 1;
    t.stride[inner] = d;
    t.stride[outer] = sat_mul(d, t.extent[inner]);
    t.stride[0] = sat_mul(t.stride[outer], t.extent[outer]);
    if (rel_below(&rng, 2))
        t.stride[0] = sat_mul(t.stride[0], big_extent(62));
    return t;
}

/* The forward pass with huge B, H, Lq, Lk (D, Dv up to 256), any of the
 * views above, lse or not, and a MASK of 128 x 128 blocks when its
 * nbq x nbk fits: a tensor beyond 64 bits is rejected naming it (the first
 * of q, k, v, mask, y, lse that is: the order libbk reads them in), one
 * that fits is accepted. */
static void attention_size_overflow(int cases)
{
    struct overflow_tally tally = { 0 };
    static const char *const all_names[] = { "BkAttentionInfo.q", "BkAttentionInfo.k",
                                             "BkAttentionInfo.v", "BkAttentionInfo.pattern.mask",
                                             "BkAttentionInfo.y", "BkAttentionInfo.lse" };
    for (int c = 0; c < cases; c++) {
        const BkDataType type = types[rel_below(&rng, 4)];
        const int64_t b = big_extent(30), hkv = big_extent(20);
        const int64_t h = hkv * (1 + (int64_t)rel_below(&rng, 4));
        const int64_t lq = big_extent(40), lk = big_extent(40);
        const int64_t d = 1 + (int64_t)rel_below(&rng, 256), dv = 1 + (int64_t)rel_below(&rng, 256);
        BkAttentionInfo op = { .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .scale = 0.125 };
        op.q = big_view(type, b, h, lq, d);
        op.k = big_view(type, b, hkv, lk, d);
        op.v = big_view(type, b, hkv, lk, dv);
        op.y = big_view(type, b, h, lq, dv);
        if (rel_below(&rng, 2)) {
            op.lse = (BkTensorDesc){ .dataType = type == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64
                                                                           : BK_DATA_TYPE_F32,
                                     .rank = 3, .extent = { b, h, lq } };
            if (rel_below(&rng, 2)) {
                op.lse.stride[2] = 1;
                op.lse.stride[1] = lq;
                op.lse.stride[0] = sat_mul(sat_mul(lq, h), big_extent(62));
            }
        }
        uint64_t blocks;
        const bool many = __builtin_mul_overflow((uint64_t)((lq + 127) / 128),
                                                 (uint64_t)((lk + 127) / 128), &blocks);
        if (rel_below(&rng, 2) && !many && blocks <= (uint64_t)INT64_MAX) {
            op.pattern = (BkAttentionPattern){
                .form = BK_ATTENTION_PATTERN_MASK, .blockQ = 128, .blockK = 128,
                .mask = { .dataType = BK_DATA_TYPE_U8, .rank = 3,
                          .extent = { 1, rel_below(&rng, 2) ? h : 1, (int64_t)blocks } },
            };
        }
        /* The tensors present, in libbk's order. */
        const BkTensorDesc *all[6] = { &op.q, &op.k, &op.v, &op.pattern.mask, &op.y, &op.lse };
        const BkTensorDesc *t[6];
        const char *names[6];
        int n = 0;
        for (int i = 0; i < 6; i++)
            if (all[i]->dataType != BK_DATA_TYPE_UNDEFINED)
                t[n] = all[i], names[n++] = all_names[i];
        judge_overflow(&tally, "attention", c, &op, t, names, n);
    }
    tap_ok(tally.bad_accept == 0 && tally.wrong_field == 0,
           "attention size overflow: all %ld problems with a tensor beyond 64 bits rejected, "
           "naming it", tally.overflowing);
    tap_ok(tally.bad_reject == 0 && tally.fitting > cases / 20, "attention size overflow: all "
           "%ld problems whose tensors fit are accepted", tally.fitting);
}

/* Small contiguous operands of one type; sets the forward fields (which
 * sit at the same place in the backward info). */
static void attention_operands(BkAttentionInfo *a, BkDataType type, int64_t b, int64_t h,
                               int64_t hkv, int64_t lq, int64_t lk, int64_t d, int64_t dv)
{
    a->scale = 0.5;
    a->q = (BkTensorDesc){ .dataType = type, .rank = 4, .extent = { b, h, lq, d } };
    a->k = (BkTensorDesc){ .dataType = type, .rank = 4, .extent = { b, hkv, lk, d } };
    a->v = (BkTensorDesc){ .dataType = type, .rank = 4, .extent = { b, hkv, lk, dv } };
    a->y = (BkTensorDesc){ .dataType = type, .rank = 4, .extent = { b, h, lq, dv } };
    a->lse = (BkTensorDesc){ .dataType = type == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64
                                                                  : BK_DATA_TYPE_F32,
                             .rank = 3, .extent = { b, h, lq } };
}

static void attention_gradients(BkAttentionBackwardInfo *a)
{
    a->dy = a->y;
    a->dq = a->q;
    a->dk = a->k;
    a->dv = a->v;
}

/* The attention outputs (forward: y, lse; backward: dq, dk, dv) with
 * random small strides, causal or not, GQA or not: one that reaches an
 * element twice is rejected naming it, a nested one accepted; the read q
 * (dy in the backward pass) may overlap itself. */
static void attention_self_alias(int cases)
{
    static const char *const fields[] = { "BkAttentionInfo.y", "BkAttentionInfo.lse",
                                          "BkAttentionBackwardInfo.dq",
                                          "BkAttentionBackwardInfo.dk",
                                          "BkAttentionBackwardInfo.dv" };
    long aliasing = 0, accepted_nested = 0, is_nested = 0, bad_accept = 0, bad_reject = 0;
    long read_alias = 0, read_rejected = 0;
    for (int c = 0; c < cases; c++) {
        const unsigned kind = (unsigned)rel_below(&rng, 5);
        const int64_t b = 1 + (int64_t)rel_below(&rng, 2), hkv = 1 + (int64_t)rel_below(&rng, 2);
        const int64_t h = hkv * (1 + (int64_t)rel_below(&rng, 2));
        const int64_t lq = 1 + (int64_t)rel_below(&rng, 6), lk = 1 + (int64_t)rel_below(&rng, 6);
        const int64_t d = 1 + (int64_t)rel_below(&rng, 4), dv = 1 + (int64_t)rel_below(&rng, 4);
        union {
            BkAttentionInfo fwd;
            BkAttentionBackwardInfo bwd;
        } op;
        memset(&op, 0, sizeof op);
        attention_operands(&op.fwd, types[rel_below(&rng, 4)], b, h, hkv, lq, lk, d, dv);
        op.fwd.flags = rel_below(&rng, 2) ? BK_ATTENTION_CAUSAL_BIT : 0;
        BkTensorDesc *out, *read;
        if (kind < 2) {
            op.fwd.sType = BK_STRUCTURE_TYPE_ATTENTION_INFO;
            out = kind ? &op.fwd.lse : &op.fwd.y;
            read = &op.fwd.q;
        } else {
            attention_gradients(&op.bwd);
            op.bwd.sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO;
            out = kind == 2 ? &op.bwd.dq : kind == 3 ? &op.bwd.dk : &op.bwd.dv;
            read = &op.bwd.dy;
        }
        for (uint32_t k = 0; k < out->rank; k++)
            out->stride[k] = 1 + (int64_t)rel_below(&rng, 12);
        for (uint32_t k = 0; k < read->rank; k++)
            read->stride[k] = 1 + (int64_t)rel_below(&rng, 3);
        const int aliases = rel_tensor_aliases(out, 1 << 16);
        BkPlan plan = BK_NULL_HANDLE;
        const char *why;
        BkResult r = try_plan(&op, &plan, &why);
        if (aliases == 1) {
            aliasing++;
            if ((r != BK_ERROR_INVALID_ARGUMENT || why ||
                 !strstr(bkGetLastErrorMessage(), fields[kind])) && bad_accept++ == 0)
                tap_diag("attention case %d: %s for an overlapping %s (%s)", c,
                         bkResultString(r), fields[kind], bkGetLastErrorMessage());
        } else if (nested(out)) {
            is_nested++;
            accepted_nested += r == BK_SUCCESS;
            if (r != BK_SUCCESS && bad_reject++ == 0)
                tap_diag("attention case %d: a nested %s was rejected: %s", c, fields[kind],
                         bkGetLastErrorMessage());
            if (rel_tensor_aliases(read, 1 << 16) == 1) {
                read_alias++;
                read_rejected += r != BK_SUCCESS;
            }
        }
        bkDestroyPlan(plan);
    }
    tap_ok(bad_accept == 0 && aliasing > 0, "attention outputs reaching an element twice are "
           "rejected naming them (%ld)", aliasing);
    tap_ok(bad_reject == 0 && accepted_nested > 0, "nested attention outputs are accepted (%ld of "
           "%ld)", accepted_nested, is_nested);
    tap_ok(read_rejected == 0 && read_alias > 0, "attention inputs may overlap themselves (%ld "
           "cases)", read_alias);
}

/* Records one run of plan with a workspace. */
static BkResult record_ws(BkPlan plan, uint32_t n, const BkDeviceAddress *b,
                          const uint64_t *sizes, BkDeviceAddress ws, uint64_t ws_size,
                          const char **why)
{
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = n, .pBindings = b,
                      .pBindingSizes = sizes, .workspace = ws, .workspaceSize = ws_size };
    unsigned mark = rel_message_count();
    BkResult r = bkCmdRun(cmd, plan, &run);
    *why = r < 0 ? rel_check_failure(r, mark) : NULL;
    return r;
}

/* Attention output bindings (forward: y, lse; backward: dq, dk, dv) with
 * random room around what they need, at the end of a BkMemory or with
 * pBindingSizes, under DENSE, LIST (forward), MASK and LIST (backward)
 * patterns: too small is BUFFER_TOO_SMALL naming the binding; large
 * enough runs and writes nothing outside the output's span. The slots a
 * pattern does not use are bound to 0; the others get host memory of
 * their own with true sizes (a valid mask or list). A plan with a
 * workspace (LIST, backward) first gets one byte too few of it
 * (WORKSPACE_TOO_SMALL), then exactly its workspaceSize, past which the
 * run writes nothing. */
#define AT_ARENA 16384
#define AT_SLOTS 12

static void attention_binding_sizes(int cases)
{
    static _Alignas(256) unsigned char host[AT_SLOTS][AT_ARENA], ws[AT_ARENA];
    static const char *const names[AT_SLOTS] = { [6] = "(y)", [7] = "(lse)", [9] = "(dq)",
                                                 [10] = "(dk)", [11] = "(dv)" };
    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = AT_ARENA };
    BkMemory mem;
    BkDeviceAddress base;
    if (bkAllocateMemory(ctx, &mi, NULL, &mem) != BK_SUCCESS ||
        bkGetMemoryAddress(mem, &base) != BK_SUCCESS)
        tap_bail("bkAllocateMemory: %s", bkGetLastErrorMessage());
    unsigned char *dev = (unsigned char *)(uintptr_t)base;
    long small = 0, enough = 0, bad_small = 0, bad_enough = 0, stray = 0, wrong_field = 0;
    long per_slot[AT_SLOTS] = { 0 }, ws_short = 0, bad_ws_short = 0, ws_runs[2] = { 0 };
    long ws_stray = 0;
    for (int c = 0; c < cases; c++) {
        const unsigned kind = (unsigned)rel_below(&rng, 4); /* DENSE, LIST; MASK, LIST */
        const bool backward = kind >= 2;
        const int64_t b = 1 + (int64_t)rel_below(&rng, 2), hkv = 1 + (int64_t)rel_below(&rng, 2);
        const int64_t h = hkv * (1 + (int64_t)rel_below(&rng, 2));
        const int64_t lq = 1 + (int64_t)rel_below(&rng, 20), lk = 1 + (int64_t)rel_below(&rng, 20);
        const int64_t d = 1 + (int64_t)rel_below(&rng, 8), dv = 1 + (int64_t)rel_below(&rng, 8);
        const BkDataType type = rel_below(&rng, 2) ? BK_DATA_TYPE_F32 : BK_DATA_TYPE_F16;
        const int32_t block = rel_below(&rng, 2) ? 16 : 4;
        const int64_t nbq = (lq + block - 1) / block, nbk = (lk + block - 1) / block;
        union {
            BkAttentionInfo fwd;
            BkAttentionBackwardInfo bwd;
        } op;
        memset(&op, 0, sizeof op);
        attention_operands(&op.fwd, type, b, h, hkv, lq, lk, d, dv);
        op.fwd.flags = rel_below(&rng, 2) ? BK_ATTENTION_CAUSAL_BIT : 0;
        BkAttentionPattern *pat = &op.fwd.pattern;
        pat->form = kind == 0 ? BK_ATTENTION_PATTERN_DENSE
                  : kind == 2 ? BK_ATTENTION_PATTERN_MASK : BK_ATTENTION_PATTERN_LIST;
        if (kind) {
            pat->blockQ = pat->blockK = block;
            if (kind == 2)
                pat->mask = (BkTensorDesc){ .dataType = BK_DATA_TYPE_U8, .rank = 3,
                                            .extent = { 1, h, nbq * nbk } };
            else {
                pat->counts = (BkTensorDesc){ .dataType = BK_DATA_TYPE_I32, .rank = 3,
                                              .extent = { 1, 1, nbq } };
                pat->indices = (BkTensorDesc){ .dataType = BK_DATA_TYPE_I32, .rank = 4,
                                               .extent = { 1, 1, nbq, 2 } };
            }
        }
        if (backward) {
            attention_gradients(&op.bwd);
            op.bwd.sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO;
        } else {
            op.fwd.sType = BK_STRUCTURE_TYPE_ATTENTION_INFO;
        }
        BkTensorDesc *t[AT_SLOTS] = {
            &op.fwd.q, &op.fwd.k, &op.fwd.v, &pat->mask, &pat->counts, &pat->indices,
            &op.fwd.y, &op.fwd.lse, &op.bwd.dy, &op.bwd.dq, &op.bwd.dk, &op.bwd.dv,
        };
        const uint32_t count = backward ? 12 : 8;
        /* The output under test (y, lse; dq, dk, dv), its rows padded by a
         * few elements. */
        const uint32_t slot = backward ? 9 + (uint32_t)rel_below(&rng, 3)
                                       : 6 + (uint32_t)rel_below(&rng, 2);
        BkTensorDesc *out = t[slot];
        const int64_t pad = (int64_t)rel_below(&rng, 3);
        if (pad) {
            const uint32_t last = out->rank - 1;
            int64_t s = 1;
            for (uint32_t k = out->rank; k-- > 0;) {
                out->stride[k] = s;
                s *= out->extent[k] + (k == last ? pad : 0);
            }
        }
        for (uint32_t i = 0; i < count; i++) /* absent tensors: bound to 0 */
            if (t[i]->dataType == BK_DATA_TYPE_UNDEFINED)
                t[i] = NULL;
        BkPlan plan;
        const char *why;
        if (try_plan(&op, &plan, &why) != BK_SUCCESS)
            tap_bail("attention case %d: bkCreatePlan: %s", c, bkGetLastErrorMessage());
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        if (bkGetPlanProperties(plan, &props) != BK_SUCCESS)
            tap_bail("bkGetPlanProperties: %s", bkGetLastErrorMessage());
        const uint64_t need = props.workspaceSize;
        const uint64_t align = props.workspaceAlignment ? props.workspaceAlignment : 1;
        if ((need != 0) != (kind != 0) || need + align > AT_ARENA)
            tap_bail("attention case %d: a workspace of %llu bytes", c, (unsigned long long)need);
        const BkDeviceAddress wsa = (BkDeviceAddress)(uintptr_t)ws;
        /* Inputs: zeros (finite), an all-active mask, lists of block 0. */
        BkDeviceAddress bind[AT_SLOTS] = { 0 };
        uint64_t sizes[AT_SLOTS] = { 0 };
        for (uint32_t i = 0; i < count; i++) {
            if (!t[i])
                continue;
            memset(host[i], i == 3 ? 1 : 0, AT_ARENA);
            if (i == 4)
                for (int64_t e = 0; e < nbq; e++)
                    memcpy(host[i] + 4 * e, &(int32_t){ 1 }, 4);
            bind[i] = (BkDeviceAddress)(uintptr_t)host[i];
            sizes[i] = AT_ARENA;
        }
        if (need) {
            begin();
            const uint64_t short_by = 1 + rel_below(&rng, need);
            BkResult r = record_ws(plan, count, bind, sizes, wsa, need - short_by, &why);
            ws_short++;
            if ((r != BK_ERROR_WORKSPACE_TOO_SMALL || why) && bad_ws_short++ == 0)
                tap_diag("attention case %d: %s for a workspace %llu bytes short of %llu (%s)",
                         c, bkResultString(r), (unsigned long long)short_by,
                         (unsigned long long)need, bkGetLastErrorMessage());
        }
        struct rel_size cnt, s;
        rel_tensor_size(out, &cnt, &s);
        const uint64_t span = s.value, unit = rel_type_size(out->dataType);
        const bool in_memory = rel_below(&rng, 2);
        const int64_t delta = (int64_t)rel_below(&rng, 5) - 3; /* units more (or fewer) */
        const int64_t want = (int64_t)span + delta * (int64_t)unit;
        const uint64_t room = want < (int64_t)unit ? unit : (uint64_t)want;
        if (in_memory) { /* room bytes left before the end of the BkMemory */
            bind[slot] = base + AT_ARENA - room;
            sizes[slot] = 0;
            memset(dev, 0xA5, AT_ARENA);
        } else {
            sizes[slot] = room;
            memset(host[slot], 0xA5, AT_ARENA);
        }
        memset(ws, 0x5A, AT_ARENA);
        begin();
        BkResult r = record_ws(plan, count, bind, sizes, need ? wsa : 0, need, &why);
        if (room < span) {
            small++;
            if (r != BK_ERROR_BUFFER_TOO_SMALL || why) {
                if (bad_small++ == 0)
                    tap_diag("attention case %d: %s for a %llu-byte %s in %llu bytes (%s)", c,
                             bkResultString(r), (unsigned long long)span, names[slot],
                             (unsigned long long)room, bkGetLastErrorMessage());
            } else if (!strstr(bkGetLastErrorMessage(), names[slot])) {
                if (wrong_field++ == 0)
                    tap_diag("attention case %d: message does not name the binding %s: %s", c,
                             names[slot], bkGetLastErrorMessage());
            }
        } else {
            enough++;
            per_slot[slot]++;
            if (r != BK_SUCCESS || !submit()) {
                if (bad_enough++ == 0)
                    tap_diag("attention case %d: %s for a %llu-byte %s in %llu bytes (%s)", c,
                             bkResultString(r), (unsigned long long)span, names[slot],
                             (unsigned long long)room, bkGetLastErrorMessage());
            } else {
                const unsigned char *area = in_memory ? dev : host[slot];
                const size_t lo = in_memory ? (size_t)(AT_ARENA - room) : 0;
                for (size_t i = 0; i < AT_ARENA; i++)
                    if ((i < lo || i >= lo + span) && area[i] != 0xA5) {
                        if (stray++ == 0)
                            tap_diag("attention case %d: byte %zu outside %s's span changed", c,
                                     i, names[slot]);
                        break;
                    }
                if (need) {
                    ws_runs[backward]++;
                    for (size_t i = need; i < AT_ARENA; i++)
                        if (ws[i] != 0x5A) {
                            if (ws_stray++ == 0)
                                tap_diag("attention case %d: workspace byte %zu of %llu changed",
                                         c, i, (unsigned long long)need);
                            break;
                        }
                }
            }
        }
        bkDestroyPlan(plan);
    }
    bkFreeMemory(ctx, mem);
    tap_ok(bad_small == 0 && wrong_field == 0 && small > 0,
           "attention binding sizes: all %ld output bindings smaller than their tensor return "
           "BUFFER_TOO_SMALL, naming the binding", small);
    tap_ok(bad_enough == 0 && stray == 0 && per_slot[6] && per_slot[7] && per_slot[9] &&
               per_slot[10] && per_slot[11],
           "attention binding sizes: all %ld large enough (y %ld, lse %ld, dq %ld, dk %ld, dv "
           "%ld; unused slots bound to 0) run and write only inside the output's span", enough,
           per_slot[6], per_slot[7], per_slot[9], per_slot[10], per_slot[11]);
    tap_ok(bad_ws_short == 0 && ws_stray == 0 && ws_short > 0 && ws_runs[0] && ws_runs[1],
           "attention workspace: all %ld short ones return WORKSPACE_TOO_SMALL; runs with "
           "workspaceSize bytes (forward LIST %ld, backward %ld) write nothing past them",
           ws_short, ws_runs[0], ws_runs[1]);
}

/* ---- Empty tensors ------------------------------------------------------------ */

/* An empty tensor's twin: each extent of 0 read as 1. */
static BkTensorDesc twin(const BkTensorDesc *d)
{
    BkTensorDesc t = *d;
    for (uint32_t k = 0; k < t.rank; k++)
        t.extent[k] = t.extent[k] ? t.extent[k] : 1;
    return t;
}

/* A zero extent makes an empty tensor, but not a licence for the other
 * extents and strides: the plan is accepted when each tensor's non-empty
 * twin fits 64 bits (and running it, with 0 bindings, does nothing: no
 * arithmetic on the strides either, UBSan builds see it), and rejected
 * naming the first tensor whose twin does not. */
static void empty_tensors(int cases)
{
    long bad = 0, accepted = 0, rejected = 0;
    for (int c = 0; c < cases; c++) {
        BkGatedActivationBackwardInfo op = {
            .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO,
            .kind = (BkGatedActivationKind)rel_below(&rng, 5),
        };
        uint32_t rank = 2 + (uint32_t)rel_below(&rng, BK_MAX_TENSOR_RANK - 1);
        op.splitAxis = (uint32_t)rel_below(&rng, rank);
        op.input = (BkTensorDesc){ .dataType = types[rel_below(&rng, 4)], .rank = rank };
        const unsigned log = rel_below(&rng, 2) ? 62 : 12; /* huge, or likely to fit */
        for (uint32_t k = 0; k < rank; k++)
            op.input.extent[k] = big_extent(log) & ~(int64_t)1; /* even, maybe 0 */
        op.input.extent[(op.splitAxis + 1 + rel_below(&rng, rank - 1)) % rank] = 0;
        op.gradOutput = op.input;
        op.gradOutput.extent[op.splitAxis] /= 2;
        op.gradInput = op.input;
        BkTensorDesc *t[3] = { &op.input, &op.gradOutput, &op.gradInput };
        static const char *const names[3] = { "BkGatedActivationBackwardInfo.input",
                                               "BkGatedActivationBackwardInfo.gradOutput",
                                               "BkGatedActivationBackwardInfo.gradInput" };
        const bool strided = rel_below(&rng, 2);
        for (int i = 0; strided && i < 3; i++)
            for (uint32_t k = 0; k < rank; k++)
                t[i]->stride[k] = rel_below(&rng, 2) ? INT64_MAX / (1 + (int64_t)rel_below(&rng, 4))
                                                     : big_extent(log);
        int first_over = -1;
        for (int i = 0; i < 3 && first_over < 0; i++) {
            BkTensorDesc tw = twin(t[i]);
            if (beyond_int64(&tw))
                first_over = i;
        }
        BkPlan plan = BK_NULL_HANDLE;
        const char *why;
        BkResult r = try_plan(&op, &plan, &why);
        if (first_over >= 0) {
            rejected++;
            if ((r != BK_ERROR_INVALID_ARGUMENT || why ||
                 !strstr(bkGetLastErrorMessage(), names[first_over])) && bad++ == 0)
                tap_diag("case %d: %s, want INVALID_ARGUMENT naming %s (%s)", c,
                         bkResultString(r), names[first_over], bkGetLastErrorMessage());
            bkDestroyPlan(plan);
            continue;
        }
        accepted++;
        BkDeviceAddress b[3] = { 0, 0, 0 };
        begin();
        if (r == BK_SUCCESS)
            r = record(plan, 3, b, NULL, &why);
        if (r != BK_SUCCESS || !submit()) {
            if (bad++ == 0)
                tap_diag("case %d: %s (%s)", c, bkResultString(r), bkGetLastErrorMessage());
        }
        bkDestroyPlan(plan);
    }
    tap_ok(bad == 0 && accepted > 0 && rejected > 0,
           "empty tensors: all %ld whose twin fits are accepted and run, all %ld whose twin does "
           "not are rejected naming the tensor (%d cases)", accepted, rejected, cases);
}

/* ---- Wrapping the address space ------------------------------------------------ */

static void address_wrap(void)
{
    BkGatedActivationInfo op = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, .kind = BK_GATED_ACTIVATION_GLU,
        .splitAxis = 0,
        .input = { BK_DATA_TYPE_F32, 1, { 2048 }, { 0 } },
        .output = { BK_DATA_TYPE_F32, 1, { 1024 }, { 0 } },
    };
    BkPlan plan;
    const char *why;
    if (try_plan(&op, &plan, &why) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    static _Alignas(64) float x[2048];
    BkDeviceAddress top = UINT64_MAX - 4095; /* 4-byte aligned; 4096 bytes left */
    BkDeviceAddress b[2] = { (BkDeviceAddress)(uintptr_t)x, top };
    begin();
    BkResult r = record(plan, 2, b, NULL, &why);
    tap_ok(r == BK_ERROR_INVALID_ARGUMENT && !why && strstr(bkGetLastErrorMessage(), "wrap"),
           "a binding whose tensor runs past 2^64 is rejected (%s: %s)", bkResultString(r),
           bkGetLastErrorMessage());
    bkDestroyPlan(plan);

    unsigned mark = rel_message_count();
    r = bkCmdFillMemory(cmd, top, 8192, 0);
    tap_ok(r < 0 && !rel_check_failure(r, mark), "bkCmdFillMemory past 2^64 is rejected (%s)",
           bkResultString(r));
    mark = rel_message_count();
    r = bkCmdCopyMemory(cmd, top, (BkDeviceAddress)(uintptr_t)x, 8192);
    tap_ok(r < 0 && !rel_check_failure(r, mark), "bkCmdCopyMemory past 2^64 is rejected (%s)",
           bkResultString(r));

    /* Sizes a BkMemory cannot have. */
    struct rel_alloc st;
    BkAllocationCallbacks limited = rel_alloc_callbacks(&st);
    st.max_size = 1 << 20; /* stands for a machine without that much memory */
    const uint64_t huge[] = { UINT64_MAX, (uint64_t)INT64_MAX + 1, (uint64_t)INT64_MAX,
                              UINT64_MAX - 255 };
    long bad = 0;
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                    .size = huge[i] };
        BkMemory m = (BkMemory)(uintptr_t)1;
        mark = rel_message_count();
        r = bkAllocateMemory(ctx, &mi, &limited, &m);
        if (r != BK_ERROR_OUT_OF_DEVICE_MEMORY || rel_check_failure(r, mark) || m) {
            tap_diag("size %llu: %s (%s)", (unsigned long long)huge[i], bkResultString(r),
                     bkGetLastErrorMessage());
            bad++;
            if (r == BK_SUCCESS)
                bkFreeMemory(ctx, m);
        }
    }
    tap_ok(bad == 0 && atomic_load(&st.live) == 0,
           "BkMemoryAllocateInfo.size near 2^64 returns OUT_OF_DEVICE_MEMORY, leaking nothing");
}

int main(void)
{
    rel_capture_messages();
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_HOST };
    if (bkCreateContext(&ci, NULL, &ctx) != BK_SUCCESS ||
        bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        tap_bail("set-up: %s", bkGetLastErrorMessage());
    const char *seed = getenv("BK_TEST_SEED");
    rng.s = seed && *seed ? strtoull(seed, NULL, 0) : 0x626f756e6473ull;
    tap_plan(32);
    tap_diag("seed 0x%llx (BK_TEST_SEED repeats a run)", (unsigned long long)rng.s);
    int scale = rel_slow_run() ? 1 : 8;
    size_overflow(400 * scale);
    self_alias(300 * scale);
    gemm_size_overflow(200 * scale);
    sparse_self_alias(200 * scale);
    binding_sizes(100 * scale);
    w4a16_size_overflow(200 * scale);
    w4a16_self_alias(200 * scale);
    w4a16_binding_sizes(100 * scale);
    attention_size_overflow(200 * scale);
    attention_self_alias(200 * scale);
    attention_binding_sizes(100 * scale);
    empty_tensors(50 * scale);
    address_wrap();
    bkFreeCommandBuffer(cmd);
    bkDestroyContext(ctx);
    return tap_done();
}
