/* SPDX-License-Identifier: Apache-2.0 */
/* The libbk fuzz harness: see fuzz_harness.h.
 *
 * The input is read as a stream of choices. Most choices build something
 * valid (a consistent op info from fuzz_ops.c, bindings inside real
 * memory) and a few mutations then break one field, so inputs reach deep
 * into validation and execution instead of stopping at the first check.
 *
 * Properties checked on every call (a broken one is a "violation"):
 * - a failing call returns a negative, known BkResult, sends a message to
 *   the callback, and bkGetLastErrorMessage() holds the same, non-empty;
 * - a failed create leaves BK_NULL_HANDLE in its output;
 * - an accepted plan has tensors whose byte span fits in 64 bits (an
 *   empty one's too, each 0 extent read as 1) and a written tensor that
 *   never reaches one element twice, and the
 *   BkPlanBindingProperties it reports agree with the harness's own spans;
 * - an accepted bkCmdRun/Copy/Fill only touches memory the harness knows
 *   to be large enough, aligned and not overlapping what is written (but
 *   for the one in-place case, GEMM's C == D at one address when both
 *   reach the same elements), and its workspace lies in owned memory, large
 *   enough, aligned and apart from every binding;
 * - submission writes nothing outside what the recorded commands write,
 *   and a rejected submission writes nothing at all;
 * - an output pNext chain that loops is refused (no hang), one that ends
 *   is accepted;
 * - a synchronous copy whose range wraps the address space is refused;
 * - everything allocated through the callbacks is freed, with no foreign
 *   frees and only power-of-two alignments.
 * The harness itself only ever hands libbk addresses inside memory it
 * owns, with truthful sizes, so any crash is libbk's. */
#include "config.h"

#include "fuzz_harness.h"
#include "fuzz_ops.h"
#include "rel_util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Violations ---------------------------------------------------------- */

static unsigned long violations;
static char first_violation[512];

__attribute__((format(printf, 1, 2))) static void violation(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "bk-fuzz: property broken: %s\n", buf);
    if (violations++ == 0)
        snprintf(first_violation, sizeof first_violation, "%s", buf);
#ifdef BK_FUZZ_LIBFUZZER
    abort(); /* libFuzzer saves the input as a crash */
#endif
}

unsigned long bk_fuzz_violations(void)
{
    return violations;
}

const char *bk_fuzz_first_violation(void)
{
    return first_violation;
}

static struct bk_fuzz_stats stats;
_Static_assert(sizeof stats.family_plans / sizeof stats.family_plans[0] == FZ_MAX_FAMILIES,
               "bk_fuzz_stats counts every family");

struct bk_fuzz_stats bk_fuzz_get_stats(void)
{
    return stats;
}

/* ---- Calls and their results -------------------------------------------- */

static unsigned mark;
#define CALL(expr) (mark = rel_message_count(), (expr))

static BkResult checked(BkResult r, const char *what)
{
    if (r < 0) {
        const char *why = rel_check_failure(r, mark);
        if (why)
            violation("%s returned %s: %s (message: \"%s\")", what, bkResultString(r), why,
                      bkGetLastErrorMessage());
    } else if (r != BK_SUCCESS && r != BK_INCOMPLETE) {
        violation("%s returned %d, neither an error nor a success code", what, (int)r);
    }
    return r;
}
#define RUN(what, expr) checked(CALL(expr), what)

/* A void call that must report an error through the callback. */
static void expect_message(const char *what)
{
    if (rel_message_count() == mark || !*bkGetLastErrorMessage())
        violation("%s refused its argument without a message", what);
}

/* ---- Allocators ------------------------------------------------------------ */

static struct rel_alloc counting;
static BkAllocationCallbacks counting_cb, broken_cb;

/* NULL, the counting allocator (sometimes set to fail soon), or callbacks
 * with a NULL function (which every call must refuse). */
static const BkAllocationCallbacks *pick_allocator(struct fz_input *in, bool may_fail)
{
    switch (fz_byte(in) % 8) {
    case 0: case 1: case 2:
        return NULL;
    case 3:
        if (may_fail) {
            long n = 1 + fz_byte(in) % 24;
            rel_alloc_fail_in(&counting, n, fz_one_in(in, 2));
            return &counting_cb;
        }
        return NULL;
    case 4:
        if (may_fail) {
            broken_cb = counting_cb;
            if (fz_byte(in) & 1)
                broken_cb.pfnFree = NULL;
            else
                broken_cb.pfnAllocation = NULL;
            return &broken_cb;
        }
        return &counting_cb;
    default:
        return &counting_cb;
    }
}

static void stop_failing(void)
{
    rel_alloc_fail_in(&counting, 0, false);
}

/* ---- Memory the harness owns -------------------------------------------- */

#define MAX_POOL 3
#define SCRATCH_SIZE 65536u

struct pool {
    BkMemory mem[MAX_POOL];
    BkDeviceAddress addr[MAX_POOL];
    uint64_t size[MAX_POOL];
    unsigned count;
};

/* Host memory libbk does not know of: bound only with a truthful size. */
static _Alignas(256) unsigned char scratch[SCRATCH_SIZE];

/* Bytes from addr to the end of the pool memory or scratch holding it. */
static uint64_t room_at(const struct pool *pool, BkDeviceAddress addr, bool *registered)
{
    *registered = false;
    for (unsigned m = 0; m < pool->count; m++)
        if (addr >= pool->addr[m] && addr - pool->addr[m] < pool->size[m]) {
            *registered = true;
            return pool->size[m] - (addr - pool->addr[m]);
        }
    BkDeviceAddress s = (BkDeviceAddress)(uintptr_t)scratch;
    if (addr >= s && addr - s < SCRATCH_SIZE)
        return SCRATCH_SIZE - (addr - s);
    return 0;
}

/* Byte ranges the recorded commands may write. */
#define MAX_RANGES 64
struct ranges {
    BkDeviceAddress lo[MAX_RANGES];
    uint64_t size[MAX_RANGES];
    unsigned count;
    bool overflowed;
};

static void add_range(struct ranges *w, BkDeviceAddress lo, uint64_t size)
{
    if (w->count == MAX_RANGES) {
        w->overflowed = true;
        return;
    }
    w->lo[w->count] = lo;
    w->size[w->count++] = size;
}

static bool in_ranges(const struct ranges *w, BkDeviceAddress a)
{
    for (unsigned i = 0; i < w->count; i++)
        if (a >= w->lo[i] && a - w->lo[i] < w->size[i])
            return true;
    return w->overflowed;
}

/* A copy of every byte the harness owns, to see what a submission wrote. */
struct snapshot {
    unsigned char *bytes[MAX_POOL + 1];
};

static void take_snapshot(const struct pool *pool, struct snapshot *s)
{
    for (unsigned m = 0; m < pool->count; m++) {
        s->bytes[m] = malloc(pool->size[m]);
        if (s->bytes[m])
            memcpy(s->bytes[m], (void *)(uintptr_t)pool->addr[m], pool->size[m]);
    }
    s->bytes[MAX_POOL] = malloc(SCRATCH_SIZE);
    if (s->bytes[MAX_POOL])
        memcpy(s->bytes[MAX_POOL], scratch, SCRATCH_SIZE);
}

/* Reports the first changed byte outside w (or any change, w == NULL). */
static void compare_snapshot(const struct pool *pool, struct snapshot *s, const struct ranges *w,
                             const char *when)
{
    for (unsigned m = 0; m <= MAX_POOL; m++) {
        if (m < MAX_POOL && m >= pool->count)
            continue;
        const unsigned char *now = m < MAX_POOL ? (const unsigned char *)(uintptr_t)pool->addr[m]
                                                : scratch;
        uint64_t size = m < MAX_POOL ? pool->size[m] : SCRATCH_SIZE;
        if (!s->bytes[m])
            continue;
        for (uint64_t i = 0; i < size; i++) {
            if (i % 64 == 0 && size - i >= 64 && memcmp(now + i, s->bytes[m] + i, 64) == 0) {
                i += 63; /* an unchanged block */
                continue;
            }
            if (now[i] == s->bytes[m][i])
                continue;
            BkDeviceAddress a = (BkDeviceAddress)(uintptr_t)now + i;
            if (!w || !in_ranges(w, a)) {
                violation("%s changed byte %llu of %s %u, which no recorded command writes",
                          when, (unsigned long long)i, m < MAX_POOL ? "pool memory" : "scratch",
                          m);
                break;
            }
        }
        free(s->bytes[m]);
        s->bytes[m] = NULL;
    }
}

/* What an accepted plan's tensors must satisfy, from the harness's own
 * arithmetic. */
static void check_accepted_plan(const struct fz_op_view *v)
{
    for (unsigned i = 0; i < v->count; i++) {
        struct rel_size count, span;
        if (!v->t[i])
            continue;
        if (!rel_tensor_size(v->t[i], &count, &span)) {
            violation("plan accepted with tensor %u invalid (rank %u, type %d)", i,
                      v->t[i]->rank, (int)v->t[i]->dataType);
            continue;
        }
        if (rel_size_above(span, UINT64_MAX) || rel_size_above(count, INT64_MAX))
            violation("plan accepted with tensor %u spanning 2^64 bytes or more", i);
        BkTensorDesc twin = *v->t[i]; /* an empty tensor's non-empty twin */
        for (uint32_t k = 0; k < twin.rank && k < BK_MAX_TENSOR_RANK; k++)
            twin.extent[k] = twin.extent[k] ? twin.extent[k] : 1;
        if (rel_tensor_size(&twin, &count, &span) &&
            (rel_size_above(span, INT64_MAX) || rel_size_above(count, INT64_MAX)))
            violation("plan accepted with tensor %u whose twin (0 extents read as 1) spans "
                      "more than INT64_MAX bytes", i);
        if (v->written[i] && rel_tensor_aliases(v->t[i], 1 << 14) == 1)
            violation("plan accepted with written tensor %u reaching an element twice", i);
    }
}

/* ---- Runs ---------------------------------------------------------------- */

struct run_model {
    unsigned count;
    uint64_t span[FZ_MAX_SLOTS];
    size_t elem[FZ_MAX_SLOTS];        /* the address alignment a binding needs */
    bool written[FZ_MAX_SLOTS];
    int alias[FZ_MAX_SLOTS];          /* the documented in-place partner, or -1 */
    bool same_elements[FZ_MAX_SLOTS]; /* ... and it reaches the same elements */
    uint64_t workspace, workspace_alignment;
    unsigned family;
    bool chained;
};

/* Whether two tensors reach the same elements at the same offsets: one
 * type, the same extents, equal strides wherever an extent exceeds 1. */
static bool same_elements(const BkTensorDesc *a, const BkTensorDesc *b)
{
    struct rel_size ca, sa, cb, sb;
    if (!a || !b || !rel_tensor_size(a, &ca, &sa) || !rel_tensor_size(b, &cb, &sb) ||
        a->dataType != b->dataType || a->rank != b->rank)
        return false;
    for (uint32_t k = 0; k < a->rank; k++)
        if (a->extent[k] != b->extent[k] ||
            (a->extent[k] > 1 && rel_stride(a, k) != rel_stride(b, k)))
            return false;
    return true;
}

/* The model of a run from the harness's view; opaque slots (a prepared
 * weight) take the size and alignment the plan reports in bind. */
static struct run_model model_of(const struct fz_op_view *v, const BkPlanBindingProperties *bind,
                                 const BkPlanProperties *props)
{
    struct run_model m = { .count = v->count };
    for (unsigned i = 0; i < v->count; i++) {
        struct rel_size count, span;
        m.alias[i] = v->alias[i];
        m.written[i] = v->written[i];
        if (v->t[i]) {
            rel_tensor_size(v->t[i], &count, &span);
            m.span[i] = span.value;
            m.elem[i] = rel_type_size(v->t[i]->dataType);
            if (v->align[i] > m.elem[i]) /* a packed W4A16 operand: 16 bytes */
                m.elem[i] = v->align[i];
        } else if (v->opaque[i]) {
            m.span[i] = bind->bindings[i].size;
            m.elem[i] = bind->bindings[i].alignment ? bind->bindings[i].alignment : 1;
        } else {
            m.span[i] = v->bytes[i];
            m.elem[i] = v->align[i] ? v->align[i] : 1;
        }
    }
    for (unsigned i = 0; i < v->count; i++)
        m.same_elements[i] = m.alias[i] >= 0 && same_elements(v->t[i], v->t[m.alias[i]]);
    m.family = (unsigned)fz_family_of(props->operation);
    m.chained = v->chained;
    m.workspace = props->workspaceSize;
    m.workspace_alignment = props->workspaceAlignment ? props->workspaceAlignment : 1;
    return m;
}

/* BkPlanBindingProperties must say what the harness computed: each
 * slot's size, that it is written, a power-of-two alignment the slot's
 * elements need, a name; entries past bindingCount zeroed. */
static void check_binding_properties(const struct fz_op_view *v,
                                     const BkPlanBindingProperties *bind)
{
    if (bind->bindingCount != v->count) {
        violation("BkPlanBindingProperties.bindingCount = %u for %u slots", bind->bindingCount,
                  v->count);
        return;
    }
    for (unsigned i = 0; i < v->count; i++) {
        const BkBindingProperties *b = &bind->bindings[i];
        struct rel_size count, span = { 0, false };
        if (v->t[i])
            rel_tensor_size(v->t[i], &count, &span);
        const uint64_t want = v->t[i] ? span.value : v->bytes[i];
        const bool named = memchr(b->name, '\0', sizeof b->name) && b->name[0];
        if ((!v->opaque[i] && b->size != want) || b->written != (v->written[i] ? 1u : 0u) ||
            !named || !b->alignment || (b->alignment & (b->alignment - 1)) ||
            (v->t[i] && want && b->alignment % rel_type_size(v->t[i]->dataType)) ||
            (v->t[i] && want && b->alignment < v->align[i]) ||
            (v->opaque[i] && b->size > ((uint64_t)1 << 40)))
            violation("BkPlanBindingProperties slot %u: size %llu (harness %llu%s), alignment "
                      "%llu, written %u (harness %d)", i, (unsigned long long)b->size,
                      (unsigned long long)want, v->opaque[i] ? ", opaque" : "",
                      (unsigned long long)b->alignment, b->written, v->written[i]);
    }
    for (unsigned i = v->count; i < BK_MAX_BINDINGS; i++)
        if (bind->bindings[i].size || bind->bindings[i].name[0])
            violation("BkPlanBindingProperties slot %u past bindingCount is not zeroed", i);
}

static BkDeviceAddress pool_address(struct fz_input *in, const struct pool *pool, size_t elem)
{
    unsigned m = fz_byte(in) % pool->count;
    uint64_t off = fz_u16(in) % pool->size[m];
    if (!fz_one_in(in, 8))
        off -= off % (elem ? elem : 1);
    return pool->addr[m] + off;
}

/* Records one bkCmdRun with fuzzed bindings; adds what it may write. */
static void record_run(struct fz_input *in, BkCommandBuffer cmd, BkPlan plan,
                       const struct run_model *model, const struct pool *pool, struct ranges *w)
{
    BkDeviceAddress bind[16] = { 0 };
    uint64_t sizes[16] = { 0 };
    bool need_sizes = false, give_sizes = fz_one_in(in, 4);
    for (unsigned i = 0; i < model->count; i++) {
        uint64_t span = model->span[i];
        size_t elem = model->elem[i];
        switch (fz_byte(in) % 10) {
        case 0: /* 0, or 1: misaligned for every element size but 1 */
            bind[i] = elem > 1 && fz_one_in(in, 2) ? 1 : 0;
            break;
        case 1: case 2: case 3: case 4: case 5: bind[i] = pool_address(in, pool, elem); break;
        case 6: bind[i] = pool->addr[fz_byte(in) % pool->count]; break;
        case 7: { /* scratch, only with a truthful size */
            uint64_t off = fz_u16(in) % SCRATCH_SIZE;
            off -= off % (elem ? elem : 1);
            bind[i] = (BkDeviceAddress)(uintptr_t)scratch + off;
            uint64_t room = SCRATCH_SIZE - off;
            sizes[i] = fz_one_in(in, 2) ? 1 + fz_byte(in) * room / 256 : room;
            need_sizes = true;
            break;
        }
        case 8:
            bind[i] = i ? bind[fz_byte(in) % i] : pool->addr[0];
            /* Case 0's 1 is no memory: a 1-byte slot it would not misalign
             * (attention's mask after an empty q) gets 0 instead. */
            if (bind[i] == 1 && elem == 1)
                bind[i] = 0;
            if (i)
                for (unsigned j = 0; j < i; j++)
                    if (bind[j] == bind[i])
                        sizes[i] = sizes[j];
            break;
        default: { /* just fits at the end of a pool memory (an empty one: its last byte,
                    * never one past the end, which case 8 may copy to a slot that is not) */
            unsigned m = fz_byte(in) % pool->count;
            const uint64_t need = span ? span : 1;
            bind[i] = pool->addr[m] + (need <= pool->size[m] ? pool->size[m] - need : 0);
            break;
        }
        }
        bool registered;
        uint64_t room = room_at(pool, bind[i], &registered);
        if (!registered && room && !sizes[i])
            sizes[i] = room; /* copied scratch address: keep it truthful */
        if (give_sizes && registered && sizes[i] == 0) {
            uint8_t b = fz_byte(in);
            sizes[i] = b < 64 ? 0 : b < 160 ? room : (uint64_t)fz_pick_i64(in);
        }
    }
    BkRunInfo run = {
        .sType = BK_STRUCTURE_TYPE_RUN_INFO,
        .bindingCount = model->count,
        .pBindings = bind,
        .pBindingSizes = (need_sizes || give_sizes) ? sizes : NULL,
    };
    if (fz_one_in(in, 16))
        run.bindingCount = fz_pick_u32(in);
    if (fz_one_in(in, 32))
        run.pBindings = NULL;
    if (fz_one_in(in, 16))
        run.sType = fz_pick_stype(in);
    if (fz_one_in(in, 8))
        run.pNext = fz_pick_chain(in);
    if (model->workspace && !fz_one_in(in, 8)) {
        /* The plan needs one: an aligned one in a pool memory with room. */
        unsigned m = fz_byte(in) % pool->count;
        const uint64_t a = model->workspace_alignment;
        const BkDeviceAddress lo = (pool->addr[m] + a - 1) / a * a;
        const uint64_t room = pool->addr[m] + pool->size[m] - lo;
        if (lo < pool->addr[m] + pool->size[m] && room >= model->workspace) {
            uint64_t slack = (room - model->workspace) / a;
            run.workspace = lo + (slack ? fz_u16(in) % (slack + 1) : 0) * a;
            run.workspaceSize = model->workspace;
        }
    } else if (fz_one_in(in, 4)) {
        run.workspace = pool_address(in, pool, 256);
        bool registered;
        run.workspaceSize = room_at(pool, run.workspace, &registered);
    } else if (fz_one_in(in, 8)) {
        run.workspaceSize = (uint64_t)fz_pick_i64(in);
    }
    const BkRunInfo *prun = fz_one_in(in, 32) ? NULL : &run;
    BkPlan p = fz_one_in(in, 64) ? BK_NULL_HANDLE : plan;

    if (RUN("bkCmdRun", bkCmdRun(cmd, p, prun)) != BK_SUCCESS) {
        stats.runs_rejected++;
        return;
    }
    stats.runs_recorded++;
    stats.family_runs[model->family]++;
    stats.chained_runs += model->chained;
    /* Accepted: every non-empty binding must be sound. */
    for (unsigned i = 0; i < model->count; i++) {
        uint64_t span = model->span[i];
        if (span == 0)
            continue;
        bool registered;
        uint64_t room = room_at(pool, bind[i], &registered);
        uint64_t known = registered ? room : sizes[i];
        if (!bind[i] || bind[i] % model->elem[i] || known < span || room < span)
            violation("bkCmdRun accepted binding %u = 0x%llx for a %llu-byte tensor with %llu "
                      "bytes behind it", i, (unsigned long long)bind[i],
                      (unsigned long long)span, (unsigned long long)room);
        if (!model->written[i])
            continue;
        add_range(w, bind[i], span);
        for (unsigned j = 0; j < model->count; j++) {
            if (j == i || !model->span[j] || bind[i] >= bind[j] + model->span[j] ||
                bind[j] >= bind[i] + span)
                continue;
            if (model->alias[i] == (int)j && model->same_elements[i] && bind[i] == bind[j]) {
                stats.in_place_runs++; /* C == D: each element read where it is written */
                continue;
            }
            violation("bkCmdRun accepted written binding %u overlapping binding %u", i, j);
        }
    }
    if (model->workspace) {
        bool registered;
        const uint64_t room = room_at(pool, run.workspace, &registered);
        if (!registered || room < model->workspace || run.workspaceSize < model->workspace ||
            run.workspace % model->workspace_alignment)
            violation("bkCmdRun accepted workspace 0x%llx of %llu bytes (%llu behind it) for a "
                      "plan that needs %llu", (unsigned long long)run.workspace,
                      (unsigned long long)run.workspaceSize, (unsigned long long)room,
                      (unsigned long long)model->workspace);
        for (unsigned i = 0; i < model->count; i++)
            if (model->span[i] && run.workspace < bind[i] + model->span[i] &&
                bind[i] < run.workspace + model->workspace)
                violation("bkCmdRun accepted a workspace overlapping binding %u", i);
        add_range(w, run.workspace, model->workspace);
    }
}

/* bkCmdCopyMemory or bkCmdFillMemory between pool addresses. */
static void record_transfer(struct fz_input *in, BkCommandBuffer cmd, const struct pool *pool,
                            struct ranges *w)
{
    bool fill = fz_byte(in) & 1;
    BkDeviceAddress dst = fz_one_in(in, 16) ? 0 : pool_address(in, pool, fill ? 4 : 1);
    BkDeviceAddress src = fz_one_in(in, 16) ? 0 : pool_address(in, pool, 1);
    uint64_t size = fz_one_in(in, 8) ? (uint64_t)fz_pick_i64(in) : fz_u16(in) % 8192;
    BkResult r;
    if (fill)
        r = RUN("bkCmdFillMemory", bkCmdFillMemory(cmd, dst, size, fz_u32(in)));
    else
        r = RUN("bkCmdCopyMemory", bkCmdCopyMemory(cmd, dst, src, size));
    if (r != BK_SUCCESS || size == 0)
        return;
    bool reg;
    if (room_at(pool, dst, &reg) < size || !reg || (fill && (dst % 4 || size % 4)))
        violation("%s accepted %llu bytes at dst 0x%llx", fill ? "bkCmdFillMemory" :
                  "bkCmdCopyMemory", (unsigned long long)size, (unsigned long long)dst);
    if (!fill && (room_at(pool, src, &reg) < size || !reg ||
                  (dst < src + size && src < dst + size)))
        violation("bkCmdCopyMemory accepted %llu bytes from src 0x%llx to dst 0x%llx",
                  (unsigned long long)size, (unsigned long long)src, (unsigned long long)dst);
    add_range(w, dst, size);
}

/* ---- One input ---------------------------------------------------------- */

static BkContext open_context(struct fz_input *in)
{
    BkContextCreateInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
        .deviceType = BK_DEVICE_TYPE_HOST,
        .apiVersion = BK_HEADER_VERSION,
    };
    if (fz_one_in(in, 4)) {
        switch (fz_byte(in) % 6) {
        case 0: info.sType = fz_pick_stype(in); break;
        case 1: info.deviceType = (BkDeviceType)fz_pick_u32(in); break;
        case 2: info.deviceIndex = fz_pick_u32(in); break;
        case 3: info.apiVersion = fz_u32(in); break;
        case 4: info.flags = fz_pick_u32(in); break;
        default: info.pNext = fz_pick_chain(in); break;
        }
    }
    const BkAllocationCallbacks *alloc = pick_allocator(in, true);
    BkContext ctx = (BkContext)(uintptr_t)1;
    BkContextCreateInfo *pinfo = fz_one_in(in, 64) ? NULL : &info;
    BkResult r = RUN("bkCreateContext", bkCreateContext(pinfo, alloc, &ctx));
    stop_failing();
    if (r != BK_SUCCESS && ctx != BK_NULL_HANDLE)
        violation("bkCreateContext failed but left a handle");
    if (r == BK_SUCCESS) {
        BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
        if (RUN("bkGetContextProperties", bkGetContextProperties(ctx, &props)) == BK_SUCCESS &&
            props.deviceType == BK_DEVICE_TYPE_HOST)
            return ctx;
        bkDestroyContext(ctx);
    }
    info = (BkContextCreateInfo){ .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                                  .deviceType = BK_DEVICE_TYPE_HOST };
    const BkAllocationCallbacks *cb = fz_one_in(in, 2) ? &counting_cb : NULL;
    if (RUN("bkCreateContext", bkCreateContext(&info, cb, &ctx)) != BK_SUCCESS)
        return BK_NULL_HANDLE;
    return ctx;
}

static void fill_pool(struct fz_input *in, BkContext ctx, struct pool *pool)
{
    pool->count = 0;
    unsigned want = 1 + fz_byte(in) % MAX_POOL;
    for (unsigned m = 0; m < want; m++) {
        BkMemoryAllocateInfo info = {
            .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
            .size = 4 * (1 + (uint64_t)(fz_u16(in) % 8192)),
            .memoryType = BK_MEMORY_TYPE_DEVICE,
        };
        if (fz_one_in(in, 16))
            info.size = (uint64_t)fz_pick_i64(in);
        if (fz_one_in(in, 16))
            info.memoryType = (BkMemoryType)fz_pick_u32(in);
        if (fz_one_in(in, 32))
            info.sType = fz_pick_stype(in);
        /* Large requests go to the counting allocator, which refuses them:
         * the C library (or a sanitizer's) would really try. */
        const BkAllocationCallbacks *alloc = pick_allocator(in, true);
        if (info.size > SCRATCH_SIZE && alloc != &broken_cb)
            alloc = &counting_cb;
        BkMemory mem = (BkMemory)(uintptr_t)1;
        BkResult r = RUN("bkAllocateMemory", bkAllocateMemory(ctx, &info, alloc, &mem));
        stop_failing();
        if (r != BK_SUCCESS) {
            if (mem != BK_NULL_HANDLE)
                violation("bkAllocateMemory failed but left a handle");
            continue;
        }
        BkDeviceAddress addr = 0;
        if (RUN("bkGetMemoryAddress", bkGetMemoryAddress(mem, &addr)) != BK_SUCCESS || !addr) {
            violation("bkGetMemoryAddress gave no address");
            bkFreeMemory(ctx, mem);
            continue;
        }
        if (info.size > SCRATCH_SIZE) { /* keep the pool small: snapshots stay cheap */
            bkFreeMemory(ctx, mem);
            continue;
        }
        /* Varied values for the kernels, from one byte of the input; for
         * one seed in 16, I32 words 0..7 rising in runs (lengths, offsets
         * and page indices mostly in range, which bytes seldom are). */
        uint8_t seed = fz_byte(in);
        uint64_t n = info.size < SCRATCH_SIZE ? info.size : SCRATCH_SIZE;
        for (uint64_t i = 0; i < n; i++)
            scratch[i] = seed % 16 == 15 ? (unsigned char)(i % 4 ? 0 : i / 4 % 8)
                                         : (unsigned char)(i * 131 + seed);
        RUN("bkCopyToDevice", bkCopyToDevice(ctx, addr, scratch, n));
        pool->mem[pool->count] = mem;
        pool->addr[pool->count] = addr;
        pool->size[pool->count++] = info.size;
    }
}

static void free_pool(struct fz_input *in, BkContext ctx, struct pool *pool)
{
    for (unsigned m = 0; m < pool->count; m++) {
        if (fz_one_in(in, 32)) { /* through the wrong context: refused, with a message */
            BkContextCreateInfo info = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                                         .deviceType = BK_DEVICE_TYPE_HOST };
            BkContext other;
            if (RUN("bkCreateContext", bkCreateContext(&info, NULL, &other)) == BK_SUCCESS) {
                mark = rel_message_count();
                bkFreeMemory(other, pool->mem[m]);
                expect_message("bkFreeMemory with another context");
                bkDestroyContext(other);
            }
        }
        bkFreeMemory(ctx, pool->mem[m]);
    }
    pool->count = 0;
}

/* An output chain of up to 4 structs after head (module or binding
 * properties, or an unknown sType), sometimes closed into a cycle back to
 * one of them or to head; true when it loops. */
#define CHAIN_NODES 4
union out_struct {
    BkDeviceModuleProperties module;
    BkPlanBindingProperties binding;
};
static bool output_chain(struct fz_input *in, BkBaseOutStructure *head,
                         union out_struct nodes[CHAIN_NODES])
{
    static const BkStructureType types[] = { BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES,
                                             BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES,
                                             (BkStructureType)4242 };
    const unsigned n = fz_byte(in) % (CHAIN_NODES + 1);
    BkBaseOutStructure *prev = head;
    memset(nodes, 0, sizeof(union out_struct) * CHAIN_NODES);
    for (unsigned i = 0; i < n; i++) {
        BkBaseOutStructure *s = (BkBaseOutStructure *)&nodes[i];
        s->sType = types[fz_byte(in) % 3];
        prev->pNext = s;
        prev = s;
    }
    prev->pNext = NULL;
    if (!fz_one_in(in, 2))
        return false;
    const unsigned back = fz_byte(in) % (n + 1); /* 0: head */
    prev->pNext = back ? (BkBaseOutStructure *)&nodes[back - 1] : head;
    return true;
}

/* A call filling an output chain: a cycle must be refused, naming pNext;
 * an ending chain accepted. */
static void check_chain_result(BkResult r, bool loops, const char *fn)
{
    if (loops && (r != BK_ERROR_INVALID_ARGUMENT || !strstr(bkGetLastErrorMessage(), "pNext")))
        violation("%s accepted a cyclic output chain (%d)", fn, (int)r);
    if (!loops && r < 0)
        violation("%s refused an output chain that ends: %s", fn, bkGetLastErrorMessage());
}

/* Calls that take no plan: device listing, copies, queues. */
static void poke_misc(struct fz_input *in, BkContext ctx, const struct pool *pool)
{
    switch (fz_byte(in) % 10) {
    case 8: { /* output chains */
        union out_struct nodes[CHAIN_NODES];
        BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
        bool loops = output_chain(in, (BkBaseOutStructure *)&props, nodes);
        if (fz_byte(in) & 1) {
            check_chain_result(RUN("bkGetContextProperties", bkGetContextProperties(ctx, &props)),
                               loops, "bkGetContextProperties");
        } else {
            uint32_t count = 1;
            check_chain_result(RUN("bkEnumerateDevices", bkEnumerateDevices(&count, &props)),
                               loops, "bkEnumerateDevices");
        }
        break;
    }
    case 9: { /* synchronous copies at the ends of the address space */
        /* Always a range that wraps: the harness hands libbk no address
         * outside memory it owns. */
        const BkDeviceAddress edge = UINT64_MAX - fz_byte(in);
        const uint64_t size = UINT64_MAX - edge + 1 + fz_u16(in) % 256;
        const bool wraps = edge + size < edge;
        BkResult r = fz_byte(in) & 1
                         ? RUN("bkCopyToDevice", bkCopyToDevice(ctx, edge, scratch, size))
                         : RUN("bkCopyFromDevice", bkCopyFromDevice(ctx, scratch, edge, size));
        if (wraps && r != BK_ERROR_INVALID_ARGUMENT)
            violation("a synchronous copy of %llu bytes at 0x%llx wraps yet gave %d",
                      (unsigned long long)size, (unsigned long long)edge, (int)r);
        break;
    }
    case 0: {
        BkDeviceProperties props[4];
        memset(props, 0, sizeof props);
        for (unsigned i = 0; i < 4; i++)
            props[i].sType =
                fz_one_in(in, 4) ? fz_pick_stype(in) : BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        uint32_t count = fz_byte(in) % 6;
        uint32_t *pcount = fz_one_in(in, 32) ? NULL : &count;
        BkDeviceProperties *pprops = fz_one_in(in, 3) ? NULL : props;
        RUN("bkEnumerateDevices", bkEnumerateDevices(pcount, pprops));
        break;
    }
    case 1: case 2: {
        BkDeviceAddress dev = fz_one_in(in, 16) ? 0 : pool_address(in, pool, 1);
        uint64_t size = fz_one_in(in, 8) ? (uint64_t)fz_pick_i64(in) : fz_u16(in) % 4096;
        bool reg;
        uint64_t room = room_at(pool, dev, &reg);
        bool to_device = fz_byte(in) & 1;
        void *host = fz_one_in(in, 32) ? NULL : scratch;
        BkResult r = to_device ? RUN("bkCopyToDevice", bkCopyToDevice(ctx, dev, host, size))
                               : RUN("bkCopyFromDevice", bkCopyFromDevice(ctx, host, dev, size));
        if (r == BK_SUCCESS && size && (room < size || size > SCRATCH_SIZE))
            violation("a synchronous copy accepted %llu bytes at 0x%llx with %llu behind it",
                      (unsigned long long)size, (unsigned long long)dev, (unsigned long long)room);
        break;
    }
    case 3: {
        BkQueue q = (BkQueue)(uintptr_t)1;
        if (RUN("bkImportQueue", bkImportQueue(ctx, scratch, &q)) == BK_SUCCESS)
            bkDestroyQueue(q);
        else if (q != BK_NULL_HANDLE)
            violation("bkImportQueue failed but left a handle");
        break;
    }
    case 4: {
        BkQueue q;
        if (RUN("bkGetQueue", bkGetQueue(ctx, fz_byte(in) % 4, &q)) == BK_SUCCESS) {
            mark = rel_message_count();
            bkDestroyQueue(q);
            expect_message("bkDestroyQueue of a context's own queue");
            RUN("bkQueueWaitIdle", bkQueueWaitIdle(q));
        }
        break;
    }
    case 5:
        RUN("bkQueueWaitIdle", bkQueueWaitIdle(BK_NULL_HANDLE));
        RUN("bkGetMemoryAddress", bkGetMemoryAddress(BK_NULL_HANDLE, NULL));
        RUN("bkGetContextProperties", bkGetContextProperties(ctx, NULL));
        break;
    default:
        if (!bkResultString((BkResult)fz_pick_u32(in)) || bkGetVersion() != BK_HEADER_VERSION)
            violation("bkResultString or bkGetVersion");
        break;
    }
}

#define MAX_PLANS 4

struct plan_slot {
    BkPlan plan;
    struct run_model model;
};

static unsigned create_plans(struct fz_input *in, BkContext ctx, struct plan_slot *plans)
{
    unsigned n = 0, want = 1 + fz_byte(in) % MAX_PLANS;
    for (unsigned i = 0; i < want; i++) {
        union fz_op_info op;
        unsigned family = fz_build_op(in, &op);
        for (unsigned m = fz_one_in(in, 2) ? 1 + fz_byte(in) % 3 : 0; m > 0; m--)
            fz_mutate_op(in, &op, family);
        BkPlanCreateInfo info = {
            .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO,
            .pOperation = &op,
        };
        if (fz_one_in(in, 32))
            info.sType = fz_pick_stype(in);
        if (fz_one_in(in, 32))
            info.flags = fz_pick_u32(in);
        if (fz_one_in(in, 32))
            info.pOperation = NULL;
        if (fz_one_in(in, 16))
            info.pNext = fz_pick_chain(in);
        BkPlan plan = (BkPlan)(uintptr_t)1;
        const BkAllocationCallbacks *alloc = pick_allocator(in, true);
        BkContext c = fz_one_in(in, 64) ? BK_NULL_HANDLE : ctx;
        const BkPlanCreateInfo *pinfo = fz_one_in(in, 64) ? NULL : &info;
        bool no_out = fz_one_in(in, 64);
        BkResult r = RUN("bkCreatePlan", bkCreatePlan(c, pinfo, alloc, no_out ? NULL : &plan));
        stop_failing();
        if (r != BK_SUCCESS) {
            stats.plans_rejected++;
            if (!no_out && plan != BK_NULL_HANDLE)
                violation("bkCreatePlan failed but left a handle in *pPlan");
            continue;
        }
        stats.plans_created++;
        const int accepted_family = fz_family_of(op.base.sType);
        if (accepted_family >= 0)
            stats.family_plans[accepted_family]++;
        /* The sType decides which struct libbk read. */
        struct fz_op_view view;
        if (!fz_view_op(&op, &view)) {
            violation("bkCreatePlan accepted an info of sType %d", (int)op.base.sType);
            bkDestroyPlan(plan);
            continue;
        }
        check_accepted_plan(&view);
        stats.chained_plans += view.chained;
        /* What the plan says of its slots and workspace (never fuzzed: the
         * run model needs it). */
        BkPlanBindingProperties bind = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
        BkPlanProperties full = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &bind };
        if (RUN("bkGetPlanProperties", bkGetPlanProperties(plan, &full)) != BK_SUCCESS)
            violation("bkGetPlanProperties failed on an accepted plan");
        check_binding_properties(&view, &bind);
        if (fz_one_in(in, 4)) {
            union out_struct nodes[CHAIN_NODES];
            BkPlanProperties chained = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
            bool loops = output_chain(in, (BkBaseOutStructure *)&chained, nodes);
            check_chain_result(RUN("bkGetPlanProperties", bkGetPlanProperties(plan, &chained)),
                               loops, "bkGetPlanProperties");
        }
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        if (fz_one_in(in, 16))
            props.sType = fz_pick_stype(in);
        if (RUN("bkGetPlanProperties", bkGetPlanProperties(plan, &props)) == BK_SUCCESS &&
            (props.bindingCount != view.count || props.operation != op.base.sType ||
             props.backend != BK_DEVICE_TYPE_HOST || !props.kernelName[0] ||
             memchr(props.kernelName, 0, sizeof props.kernelName) == NULL))
            violation("bkGetPlanProperties: bindingCount %u, operation %d, backend %d",
                      props.bindingCount, (int)props.operation, (int)props.backend);
        plans[n].plan = plan;
        plans[n++].model = model_of(&view, &bind, &full);
    }
    return n;
}

/* One command buffer with runs of plan (when not NULL) and transfers,
 * submitted once or twice. */
static void record_and_submit(struct fz_input *in, BkContext ctx, const struct plan_slot *plan,
                              struct pool *pool)
{
    BkCommandBuffer cmd = (BkCommandBuffer)(uintptr_t)1, idle = BK_NULL_HANDLE;
    BkResult r = RUN("bkAllocateCommandBuffer",
                     bkAllocateCommandBuffer(ctx, pick_allocator(in, true), &cmd));
    stop_failing();
    if (r != BK_SUCCESS) {
        if (cmd != BK_NULL_HANDLE)
            violation("bkAllocateCommandBuffer failed but left a handle");
        return;
    }
    if (fz_one_in(in, 8))
        RUN("bkAllocateCommandBuffer", bkAllocateCommandBuffer(ctx, NULL, &idle));

    BkCommandBufferBeginInfo begin = {
        .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .usage = (fz_byte(in) & 1) ? BK_COMMAND_BUFFER_USAGE_REUSABLE
                                   : BK_COMMAND_BUFFER_USAGE_ONE_TIME,
    };
    if (fz_one_in(in, 16))
        begin.usage = (BkCommandBufferUsage)fz_pick_u32(in);
    if (fz_one_in(in, 32))
        begin.sType = fz_pick_stype(in);
    if (fz_one_in(in, 16))
        begin.pNext = fz_pick_chain(in);
    if (!fz_one_in(in, 32))
        RUN("bkBeginCommandBuffer", bkBeginCommandBuffer(cmd, &begin));

    struct ranges w = { .count = 0 };
    unsigned commands = fz_byte(in) % 6;
    for (unsigned c = 0; c < commands; c++) {
        if (plan && fz_byte(in) % 4)
            record_run(in, cmd, plan->plan, &plan->model, pool, &w);
        else
            record_transfer(in, cmd, pool, &w);
    }
    if (!fz_one_in(in, 16))
        RUN("bkEndCommandBuffer", bkEndCommandBuffer(cmd));

    BkQueue queue = BK_NULL_HANDLE;
    uint32_t qi = fz_one_in(in, 16) ? fz_pick_u32(in) : fz_byte(in) % 16;
    if (RUN("bkGetQueue", bkGetQueue(ctx, qi, &queue)) != BK_SUCCESS && queue)
        violation("bkGetQueue failed but left a handle");

    BkCommandBuffer list[3] = { cmd, idle, BK_NULL_HANDLE };
    uint32_t count = idle ? 2 : 1;
    if (fz_one_in(in, 32))
        count = 3;
    unsigned times = (fz_byte(in) & 1) + 1;
    for (unsigned t = 0; t < times; t++) {
        struct snapshot snap;
        take_snapshot(pool, &snap);
        r = RUN("bkQueueSubmit", bkQueueSubmit(queue, count, fz_one_in(in, 64) ? NULL : list));
        stats.submits++;
        compare_snapshot(pool, &snap, r == BK_SUCCESS ? &w : NULL,
                         r == BK_SUCCESS ? "bkQueueSubmit" : "a rejected bkQueueSubmit");
        if (queue)
            RUN("bkQueueWaitIdle", bkQueueWaitIdle(queue));
    }
    bkFreeCommandBuffer(cmd);
    bkFreeCommandBuffer(idle);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool ready;
    if (!ready) {
        counting_cb = rel_alloc_callbacks(&counting);
        counting.max_size = SCRATCH_SIZE;
        rel_capture_messages();
        ready = true;
    }
    struct fz_input in = { data, size };
    stats.inputs++;

    BkContext ctx = open_context(&in);
    if (ctx) {
        struct pool pool;
        fill_pool(&in, ctx, &pool);
        if (pool.count) {
            struct plan_slot plans[MAX_PLANS];
            unsigned nplans = create_plans(&in, ctx, plans);
            for (unsigned i = 0; i < nplans; i++)
                record_and_submit(&in, ctx, &plans[i], &pool);
            if (!nplans)
                record_and_submit(&in, ctx, NULL, &pool);
            poke_misc(&in, ctx, &pool);
            for (unsigned i = 0; i < nplans; i++)
                bkDestroyPlan(plans[i].plan);
        }
        free_pool(&in, ctx, &pool);
        bkDestroyContext(ctx);
    }

    long live = atomic_load(&counting.live);
    if (live != 0)
        violation("%ld allocations through the callbacks were never freed", live);
    if (atomic_load(&counting.bad_frees))
        violation("libbk freed a pointer through pfnFree that pfnAllocation never returned");
    if (atomic_load(&counting.bad_aligns))
        violation("libbk asked pfnAllocation for an alignment that is not a power of two");
    /* Start the next input clean, whatever happened. */
    counting_cb = rel_alloc_callbacks(&counting);
    counting.max_size = SCRATCH_SIZE;
    return 0;
}
