/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's decode-step cases. Per case, outside the timing: the six
 * plans; each linear's random weight quantized (BK_W4A16_QUANTIZE) and
 * packed (BK_W4A16_PACK) once into layer 0, then copied into the other
 * layers with a random KV cache; random activations. Then the step's
 * buffers (one a layer) are timed, then each op's alone. The zero-point
 * cases ("zp") quantize asymmetrically, pack the zero points too and
 * chain a BkW4A16ZeroPointsInfo to the conversions and the linears. */
#include "bench_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention_op.h"
#include "bench_plan.h"
#include "bench_progress.h"
#include "bench_sets.h"
#include "gated_op.h"
#include "gemm_op.h"
#include "tool_common.h"

#define GROUP 128                         /* rows of a weight per scale */
#define MAX_BINDINGS 8u                   /* the attention plan's, the most of the six */

static const struct {
    const char *name, *key;
} op_names[STEP_OPS] = {
    [STEP_QKV] = {"qkv", "qkv"},       [STEP_ATTENTION] = {"attention", "attention"},
    [STEP_O] = {"o", "o"},             [STEP_GATE_UP] = {"gate-up", "gateUp"},
    [STEP_SWIGLU] = {"swiglu", "swiglu"}, [STEP_DOWN] = {"down", "down"},
};

const char *step_op_name(enum step_op op)
{
    return op_names[op].name;
}

const char *step_op_key(enum step_op op)
{
    return op_names[op].key;
}

/* The model of a scale and its batches and KV lengths. */
static const struct {
    int64_t hidden, heads, kv_heads, d, ffn;
    int64_t m[5], kv[2];                  /* 0: none */
} scales[] = {
    /* Llama-3-70B */
    [ATTENTION_SCALE_GPU] = {8192, 64, 8, 128, 28672, {1, 8, 16, 32, 64}, {4096, 32768}},
    [ATTENTION_SCALE_HOST] = {512, 8, 2, 64, 1024, {1, 8, 0, 0, 0}, {256, 1024}},
    [ATTENTION_SCALE_QUICK] = {256, 4, 2, 64, 512, {1, 4, 0, 0, 0}, {64, 0}},
};
#define M_COUNT 5u
#define KV_COUNT 2u

size_t bench_step_case_count(void)
{
    return M_COUNT * (KV_COUNT + 1);
}

/* Each batch at each KV length, then with zero points at the first KV
 * length (the shorter cache, where the linears weigh most). */
size_t bench_step_cases(enum attention_scale scale, struct step_case *out, size_t max)
{
    size_t n = 0;
    for (unsigned k = 0; k <= KV_COUNT; k++)
        for (unsigned i = 0; i < M_COUNT && n < max; i++) {
            const bool zeros = k == KV_COUNT;
            const int64_t kv = scales[scale].kv[zeros ? 0 : k];
            if (!scales[scale].m[i] || !kv)
                continue;
            struct step_case *c = &out[n++];
            *c = (struct step_case){BK_DATA_TYPE_BF16, scales[scale].hidden, scales[scale].heads,
                                    scales[scale].kv_heads, scales[scale].d, scales[scale].ffn,
                                    scales[scale].m[i], kv, zeros, ""};
            snprintf(c->name, sizeof c->name, "%s M%lld KV%lld%s", tool_dtype_name(c->dtype),
                     (long long)c->m, (long long)c->kv, zeros ? " zp" : "");
        }
    return n;
}

/* ---- Buffers --------------------------------------------------------------------- */

/* A layer's weights: the packed weight, scales and zero points (0 bytes
 * when symmetric) of each linear, slots W_SLOTS i + W_*. */
static const enum step_op linears[] = {STEP_QKV, STEP_O, STEP_GATE_UP, STEP_DOWN};
#define LINEAR_COUNT (sizeof linears / sizeof linears[0])
enum { W_PACKED, W_SCALES, W_ZEROS, W_SLOTS };
/* A layer's KV cache. */
enum { KV_K, KV_V, KV_COUNT_SLOTS };
/* The activations, shared by the layers. */
enum { ACT_X, ACT_QKV, ACT_Y, ACT_LSE, ACT_O, ACT_GU, ACT_H, ACT_OUT, ACT_COUNT };

/* The weight [K, N] of a linear. */
static void linear_shape(const struct step_case *c, enum step_op op, int64_t *k, int64_t *n)
{
    switch (op) {
    case STEP_QKV: *k = c->hidden, *n = (c->heads + 2 * c->kv_heads) * c->d; break;
    case STEP_O: *k = c->heads * c->d, *n = c->hidden; break;
    case STEP_GATE_UP: *k = c->hidden, *n = 2 * c->ffn; break;
    case STEP_DOWN: *k = c->ffn, *n = c->hidden; break;
    default: *k = *n = 0; break;
    }
}

/* Each op's input and output activation slots (attention: q and y). */
static const struct {
    int in, out;
} flow[STEP_OPS] = {
    [STEP_QKV] = {ACT_X, ACT_QKV},    [STEP_ATTENTION] = {ACT_QKV, ACT_Y},
    [STEP_O] = {ACT_Y, ACT_O},        [STEP_GATE_UP] = {ACT_O, ACT_GU},
    [STEP_SWIGLU] = {ACT_GU, ACT_H},  [STEP_DOWN] = {ACT_H, ACT_OUT},
};

static uint64_t binding_size(const struct bench_plan *p, uint32_t slot)
{
    return p->bindings.bindings[slot].size;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

struct step_buffers {
    struct bench_sets weights, kv, act;
    bool zeros;                           /* the weights' W_ZEROS slots are bound */
};

/* Quantizes and packs a random weight of linear i into layer 0. */
static void pack_weight(struct bench_device *d, const struct step_case *c, int64_t k, int64_t n,
                        const struct bench_sets *w, uint32_t i)
{
    BkW4A16ConvertInfo qi, pi;
    BkW4A16ZeroPointsInfo qz, pz;
    struct bench_plan quantize, pack;
    char msg[256];
    const void *quantize_info =
        w4a16_convert_build(BK_W4A16_QUANTIZE, c->dtype, k, n, GROUP, &qi);
    const void *pack_info = w4a16_convert_build(BK_W4A16_PACK, c->dtype, k, n, GROUP, &pi);
    if (c->zeros) {
        qi.pNext = w4a16_zero_points_build(true, false, k, n, GROUP, &qz);
        pi.pNext = w4a16_zero_points_build(true, true, k, n, GROUP, &pz);
    }
    if (!bench_plan_create(d, quantize_info, &quantize, msg, sizeof msg) ||
        !bench_plan_create(d, pack_info, &pack, msg, sizeof msg))
        tool_die("decode-step: the W4A16 plan exists but its conversion does not: %s", msg);
    enum { T_WEIGHT, T_QUANTIZED, T_SCALES, T_ZEROS, T_COUNT };
    const uint64_t tmp_bytes[T_COUNT] = {
        binding_size(&quantize, BK_W4A16_CONVERT_BINDING_WEIGHT),
        binding_size(&quantize, BK_W4A16_CONVERT_BINDING_QUANTIZED),
        binding_size(&quantize, BK_W4A16_CONVERT_BINDING_SCALES),
        c->zeros ? binding_size(&quantize, BK_W4A16_CONVERT_BINDING_ZEROS) : 0};
    struct bench_sets tmp;
    bench_sets_alloc(d, &tmp, 1, tmp_bytes, T_COUNT);
    bench_sets_fill(d, &tmp, T_WEIGHT, c->dtype);
    BkDeviceAddress qb[7] = {0};
    qb[BK_W4A16_CONVERT_BINDING_WEIGHT] = bench_sets_address(&tmp, 0, T_WEIGHT);
    qb[BK_W4A16_CONVERT_BINDING_QUANTIZED] = bench_sets_address(&tmp, 0, T_QUANTIZED);
    qb[BK_W4A16_CONVERT_BINDING_SCALES] = bench_sets_address(&tmp, 0, T_SCALES);
    if (c->zeros)
        qb[BK_W4A16_CONVERT_BINDING_ZEROS] = bench_sets_address(&tmp, 0, T_ZEROS);
    bench_plan_run_once(d, &quantize, qb);
    BkDeviceAddress pb[7] = {0};
    pb[BK_W4A16_CONVERT_BINDING_QUANTIZED] = qb[BK_W4A16_CONVERT_BINDING_QUANTIZED];
    pb[BK_W4A16_CONVERT_BINDING_SCALES] = qb[BK_W4A16_CONVERT_BINDING_SCALES];
    pb[BK_W4A16_CONVERT_BINDING_PACKED] = bench_sets_address(w, 0, W_SLOTS * i + W_PACKED);
    pb[BK_W4A16_CONVERT_BINDING_PACKED_SCALES] = bench_sets_address(w, 0, W_SLOTS * i + W_SCALES);
    if (c->zeros) {
        pb[BK_W4A16_CONVERT_BINDING_ZEROS] = qb[BK_W4A16_CONVERT_BINDING_ZEROS];
        pb[BK_W4A16_CONVERT_BINDING_PACKED_ZEROS] =
            bench_sets_address(w, 0, W_SLOTS * i + W_ZEROS);
    }
    bench_plan_run_once(d, &pack, pb);
    bench_sets_free(d, &tmp);
    bench_plan_destroy(d, &pack);
    bench_plan_destroy(d, &quantize);
}

/* ---- Plans ------------------------------------------------------------------------- */

/* The six plans, or false with the first unsupported one's message. */
static bool make_plans(struct bench_device *d, const struct step_case *c,
                       struct bench_plan p[STEP_OPS], struct step_result *r)
{
    char msg[200];
    for (int op = 0; op < STEP_OPS; op++) {
        BkW4A16GemmInfo wi;
        BkW4A16ZeroPointsInfo zi;
        union attention_op_info ai;
        union gated_op_info gi;
        const void *info;
        if (op == STEP_ATTENTION) {
            struct attention_op_desc a = {false, c->dtype, c->m, c->heads, c->kv_heads, 1, c->kv,
                                          c->d, c->d, 0, 0, BK_ATTENTION_PATTERN_DENSE, false,
                                          1, 1, 0};
            info = attention_op_build(&a, &ai);
        } else if (op == STEP_SWIGLU) {
            struct gated_op_desc g = {false, BK_GATED_ACTIVATION_SWIGLU, c->dtype, c->m, c->ffn,
                                      0};
            info = gated_op_build(&g, &gi);
        } else {
            linear_shape(c, (enum step_op)op, &r->op[op].k, &r->op[op].n);
            info = w4a16_gemm_build(c->dtype, c->m, r->op[op].k, r->op[op].n, GROUP, &wi);
            if (c->zeros)
                wi.pNext =
                    w4a16_zero_points_build(false, true, r->op[op].k, r->op[op].n, GROUP, &zi);
        }
        if (!bench_plan_create(d, info, &p[op], msg, sizeof msg)) {
            snprintf(r->message, sizeof r->message, "%s: %s", step_op_name((enum step_op)op),
                     msg);
            while (op-- > 0)
                bench_plan_destroy(d, &p[op]);
            return false;
        }
        if (p[op].props.bindingCount > MAX_BINDINGS)
            tool_die("decode-step: %s has %u bindings, bkbench expects at most %u",
                     step_op_name((enum step_op)op), p[op].props.bindingCount, MAX_BINDINGS);
        snprintf(r->op[op].kernel, sizeof r->op[op].kernel, "%s", p[op].props.kernelName);
    }
    return true;
}

/* The bindings of op in layer set. */
static void bind(const struct step_buffers *b, enum step_op op, uint32_t set,
                 BkDeviceAddress a[MAX_BINDINGS])
{
    memset(a, 0, MAX_BINDINGS * sizeof *a);
    const BkDeviceAddress in = bench_sets_address(&b->act, 0, (uint32_t)flow[op].in);
    const BkDeviceAddress out = bench_sets_address(&b->act, 0, (uint32_t)flow[op].out);
    if (op == STEP_ATTENTION) {
        /* q: the first H D columns' bytes of the qkv output, as a
         * contiguous [M, H, 1, D] (the read is what the step pays). */
        a[BK_ATTENTION_BINDING_Q] = in;
        a[BK_ATTENTION_BINDING_K] = bench_sets_address(&b->kv, set, KV_K);
        a[BK_ATTENTION_BINDING_V] = bench_sets_address(&b->kv, set, KV_V);
        a[BK_ATTENTION_BINDING_Y] = out;
        a[BK_ATTENTION_BINDING_LSE] = bench_sets_address(&b->act, 0, ACT_LSE);
    } else if (op == STEP_SWIGLU) {
        a[BK_GATED_ACTIVATION_BINDING_INPUT] = in;
        a[BK_GATED_ACTIVATION_BINDING_OUTPUT] = out;
    } else {
        uint32_t i = 0;
        while (linears[i] != op)
            i++;
        a[BK_W4A16_GEMM_BINDING_A] = in;
        a[BK_W4A16_GEMM_BINDING_PACKED] = bench_sets_address(&b->weights, set, W_SLOTS * i);
        a[BK_W4A16_GEMM_BINDING_PACKED_SCALES] =
            bench_sets_address(&b->weights, set, W_SLOTS * i + W_SCALES);
        if (b->zeros)
            a[BK_W4A16_GEMM_BINDING_PACKED_ZEROS] =
                bench_sets_address(&b->weights, set, W_SLOTS * i + W_ZEROS);
        a[BK_W4A16_GEMM_BINDING_C] = out;
    }
}

/* One reusable command buffer a layer holding the n ops of ops, in order. */
static void record(struct bench_device *d, const struct bench_plan p[STEP_OPS],
                   const struct step_buffers *b, uint32_t sets, const enum step_op *ops, int n,
                   BkCommandBuffer *cmds)
{
    for (uint32_t set = 0; set < sets; set++) {
        tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &cmds[set]), "bkAllocateCommandBuffer");
        BkCommandBufferBeginInfo bi = {BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                       BK_COMMAND_BUFFER_USAGE_REUSABLE};
        tool_check(bkBeginCommandBuffer(cmds[set], &bi), "bkBeginCommandBuffer");
        for (int i = 0; i < n; i++) {
            const enum step_op op = ops[i];
            BkDeviceAddress a[MAX_BINDINGS];
            bind(b, op, set, a);
            BkRunInfo ri = {BK_STRUCTURE_TYPE_RUN_INFO, NULL, p[op].props.bindingCount, a, NULL,
                            p[op].workspace_address, p[op].props.workspaceSize};
            tool_check(bkCmdRun(cmds[set], p[op].plan, &ri), "bkCmdRun");
        }
        tool_check(bkEndCommandBuffer(cmds[set]), "bkEndCommandBuffer");
    }
}

static void time_ops(struct bench_device *d, const struct bench_plan p[STEP_OPS],
                     const struct step_buffers *b, uint32_t sets, const enum step_op *ops, int n,
                     const struct bench_settings *s, struct bench_spread *t)
{
    BkCommandBuffer *cmds = calloc(sets, sizeof *cmds);
    if (!cmds)
        tool_die("out of host memory");
    record(d, p, b, sets, ops, n, cmds);
    bench_spread_time(d, cmds, sets, s, t);
    for (uint32_t set = 0; set < sets; set++)
        bkFreeCommandBuffer(cmds[set]);
    free(cmds);
}

/* ---- One case ------------------------------------------------------------------------ */

void bench_step_run(struct bench_device *d, const struct step_case *c,
                    const struct bench_settings *s, double copy_gb_per_s, struct step_result *r)
{
    memset(r, 0, sizeof *r);
    struct bench_plan p[STEP_OPS];
    if (!make_plans(d, c, p, r))
        return;
    r->supported = true;

    /* Bytes: each op's floor and the layers' buffers. */
    uint64_t wbytes[W_SLOTS * LINEAR_COUNT], kv_bytes[KV_COUNT_SLOTS], act[ACT_COUNT] = {0};
    for (uint32_t i = 0; i < LINEAR_COUNT; i++) {
        const struct bench_plan *q = &p[linears[i]];
        uint64_t *wb = &wbytes[W_SLOTS * i];
        wb[W_PACKED] = binding_size(q, BK_W4A16_GEMM_BINDING_PACKED);
        wb[W_SCALES] = binding_size(q, BK_W4A16_GEMM_BINDING_PACKED_SCALES);
        wb[W_ZEROS] = c->zeros ? binding_size(q, BK_W4A16_GEMM_BINDING_PACKED_ZEROS) : 0;
        r->op[linears[i]].bytes = wb[W_PACKED] + wb[W_SCALES] + wb[W_ZEROS];
        r->weight_bytes += r->op[linears[i]].bytes;
    }
    kv_bytes[KV_K] = binding_size(&p[STEP_ATTENTION], BK_ATTENTION_BINDING_K);
    kv_bytes[KV_V] = binding_size(&p[STEP_ATTENTION], BK_ATTENTION_BINDING_V);
    r->kv_bytes = r->op[STEP_ATTENTION].bytes = kv_bytes[KV_K] + kv_bytes[KV_V];
    r->op[STEP_SWIGLU].bytes = binding_size(&p[STEP_SWIGLU], BK_GATED_ACTIVATION_BINDING_INPUT) +
                               binding_size(&p[STEP_SWIGLU], BK_GATED_ACTIVATION_BINDING_OUTPUT);
    for (int op = 0; op < STEP_OPS; op++) {
        uint32_t in = 0, out = 0;
        if (op == STEP_ATTENTION) {
            in = BK_ATTENTION_BINDING_Q, out = BK_ATTENTION_BINDING_Y;
            act[ACT_LSE] = binding_size(&p[op], BK_ATTENTION_BINDING_LSE);
        } else if (op == STEP_SWIGLU) {
            in = BK_GATED_ACTIVATION_BINDING_INPUT, out = BK_GATED_ACTIVATION_BINDING_OUTPUT;
        } else {
            in = BK_W4A16_GEMM_BINDING_A, out = BK_W4A16_GEMM_BINDING_C;
        }
        act[flow[op].in] = max_u64(act[flow[op].in], binding_size(&p[op], in));
        act[flow[op].out] = max_u64(act[flow[op].out], binding_size(&p[op], out));
        /* bytes / (GB/s) = ns; the copy bandwidth counts bytes read +
         * written, so reading these once at it takes this long. */
        if (copy_gb_per_s > 0)
            r->op[op].floor_us = (double)r->op[op].bytes / copy_gb_per_s * 1e-3;
    }
    if (copy_gb_per_s > 0) {
        r->floor_us = (double)(r->weight_bytes + r->kv_bytes) / copy_gb_per_s * 1e-3;
        r->linears_floor_us = (double)r->weight_bytes / copy_gb_per_s * 1e-3;
    }

    /* Enough layers that their weights and caches exceed the rotation size. */
    r->sets = bench_sets_for(r->weight_bytes + r->kv_bytes, s);
    struct step_buffers b;
    b.zeros = c->zeros;
    bench_sets_alloc(d, &b.weights, r->sets, wbytes, W_SLOTS * LINEAR_COUNT);
    bench_sets_alloc(d, &b.kv, r->sets, kv_bytes, KV_COUNT_SLOTS);
    bench_sets_alloc(d, &b.act, 1, act, ACT_COUNT);
    for (uint32_t i = 0; i < LINEAR_COUNT; i++)
        pack_weight(d, c, r->op[linears[i]].k, r->op[linears[i]].n, &b.weights, i);
    bench_sets_copy_first(d, &b.weights, 0, W_SLOTS * LINEAR_COUNT);
    bench_sets_fill(d, &b.kv, KV_K, c->dtype);
    bench_sets_fill(d, &b.kv, KV_V, c->dtype);
    for (uint32_t k = 0; k < ACT_COUNT; k++)
        bench_sets_fill(d, &b.act, k, k == ACT_LSE ? BK_DATA_TYPE_F32 : c->dtype);

    static const enum step_op step[STEP_OPS] = {STEP_QKV, STEP_ATTENTION, STEP_O,
                                                 STEP_GATE_UP, STEP_SWIGLU, STEP_DOWN};
    time_ops(d, p, &b, r->sets, step, STEP_OPS, s, &r->t);
    time_ops(d, p, &b, r->sets, linears, (int)LINEAR_COUNT, s, &r->linears);
    for (int op = 0; op < STEP_OPS; op++)
        time_ops(d, p, &b, r->sets, &step[op], 1, s, &r->op[op].t);

    bench_sets_free(d, &b.act);
    bench_sets_free(d, &b.kv);
    bench_sets_free(d, &b.weights);
    for (int op = 0; op < STEP_OPS; op++)
        bench_plan_destroy(d, &p[op]);
}

/* ---- The suite ----------------------------------------------------------------------- */

void step_suite_open(struct step_suite *a, enum attention_scale scale,
                     const struct bench_settings *s, step_filter_fn keep, const void *user)
{
    memset(a, 0, sizeof *a);
    a->s = *s;
    const size_t total = bench_step_case_count();
    a->cases = calloc(total, sizeof *a->cases);
    a->res = calloc(total, sizeof *a->res);
    if (!a->cases || !a->res)
        tool_die("out of host memory");
    const size_t made = bench_step_cases(scale, a->cases, total);
    for (size_t i = 0; i < made; i++)
        if (keep(&a->cases[i], user))
            a->cases[a->n++] = a->cases[i];
}

void step_suite_run(struct step_suite *a, struct bench_device *d, double copy_gb_per_s,
                    bool json)
{
    if (a->n && !json)
        bench_step_print_header(&a->s, copy_gb_per_s);
    for (size_t i = 0; i < a->n; i++) {
        bench_progress_case(1, "decode-step %s", a->cases[i].name);
        bench_step_run(d, &a->cases[i], &a->s, copy_gb_per_s, &a->res[i]);
        bench_progress_done();
        if (!json)
            bench_step_print_rows(&a->cases[i], &a->res[i]);
    }
}

size_t step_suite_report_failures(const struct step_suite *a)
{
    size_t failed = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (a->res[i].supported)
            continue;
        failed++;
        fprintf(stderr, "bkbench: decode-step %s: unsupported: %s\n", a->cases[i].name,
                a->res[i].message);
    }
    return failed;
}

void step_suite_close(struct step_suite *a)
{
    free(a->res);
    free(a->cases);
    memset(a, 0, sizeof *a);
}
