/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's decode-step cases: one Llama-3-70B decoder layer as a decode
 * step runs it, from libbk's ops only, in the order a step runs them:
 *   qkv      W4A16 [M, hidden] -> [M, (H + 2 Hkv) D]   (8192 -> 10240)
 *   attention over the KV cache, H 64, Hkv 8, D 128, Lq 1, Lk = KV
 *   o        W4A16 [M, H D] -> [M, hidden]             (8192 -> 8192)
 *   gate-up  W4A16 [M, hidden] -> [M, 2 ffn]           (8192 -> 57344)
 *   swiglu   the gated activation forward, [M, 2 ffn] -> [M, ffn]
 *   down     W4A16 [M, ffn] -> [M, hidden]             (28672 -> 8192)
 * bf16, int4 weights in groups of 128, batch M = 1, 8, 16, 32 and 64 with
 * KV lengths 4096 and 32768 (the host runs a small model of the same form).
 * Norms, rotary embedding and the residual adds are left out: they move
 * a few rows.
 *
 * The six plans are recorded in one reusable command buffer a layer,
 * each layer with its own weights and KV cache (enough layers that
 * their bytes exceed the rotation size, as the W4A16 cases rotate their
 * weights), the activations shared; the layers' buffers are replayed
 * back to back. The four linears are also timed back to back without
 * the rest (a decode sequence of W4A16 GEMMs, each kernel starting while
 * the one before drains), and each op alone over the same layers, so
 * that the results say where the time goes. The floor of the step (and
 * of each op) is its bytes read once (int4 weights, group-128 scales, K
 * and V; the activations for swiglu) at the copy bandwidth measured in
 * the same run. The ops' results are not checked here: their own
 * families (w4a16, attention-decode, gated) check them. */
#ifndef BK_TOOL_BENCH_STEP_H
#define BK_TOOL_BENCH_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "bench_attention.h"
#include "bench_decode.h"
#include "bench_device.h"
#include "bench_run.h"

enum step_op { STEP_QKV, STEP_ATTENTION, STEP_O, STEP_GATE_UP, STEP_SWIGLU, STEP_DOWN, STEP_OPS };

/* "qkv", "attention", "o", "gate-up", "swiglu", "down". */
const char *step_op_name(enum step_op op);
/* The JSON member of an op: "qkv", "attention", "o", "gateUp", "swiglu", "down". */
const char *step_op_key(enum step_op op);

struct step_case {
    BkDataType dtype;
    int64_t hidden, heads, kv_heads, d, ffn; /* the model */
    int64_t m, kv;                           /* batch rows, KV cache length */
    bool zeros;                              /* the linears' weights with zero points */
    char name[48];                           /* "bf16 M8 KV4096", "bf16 M8 KV4096 zp" */
};

struct step_op_result {
    char kernel[BK_MAX_KERNEL_NAME_SIZE];
    int64_t k, n;                         /* the linears' weight; 0 for the others */
    uint64_t bytes;                       /* what its floor reads */
    double floor_us;
    struct bench_spread t;                /* timed alone */
};

struct step_result {
    bool supported;                       /* false: a plan was unsupported (message) */
    char message[256];
    uint32_t sets;                        /* layers rotated through */
    uint64_t weight_bytes, kv_bytes;      /* the floor's bytes: int4 + scales, K + V */
    double floor_us;                      /* weight + KV bytes at the copy bandwidth; 0: unknown */
    struct bench_spread t;                /* the whole step */
    double linears_floor_us;              /* weight bytes at the copy bandwidth; 0: unknown */
    struct bench_spread linears;          /* the four W4A16 linears back to back */
    struct step_op_result op[STEP_OPS];
};

size_t bench_step_case_count(void);
size_t bench_step_cases(enum attention_scale scale, struct step_case *out, size_t max);

void bench_step_run(struct bench_device *d, const struct step_case *c,
                    const struct bench_settings *s, double copy_gb_per_s, struct step_result *r);

typedef bool (*step_filter_fn)(const struct step_case *c, const void *user);

struct step_suite {
    struct bench_settings s;
    struct step_case *cases;
    struct step_result *res;
    size_t n;
};

void step_suite_open(struct step_suite *a, enum attention_scale scale,
                     const struct bench_settings *s, step_filter_fn keep, const void *user);
void step_suite_run(struct step_suite *a, struct bench_device *d, double copy_gb_per_s,
                    bool json);
/* Writes each case without a plan to stderr; returns how many. */
size_t step_suite_report_failures(const struct step_suite *a);
void step_suite_close(struct step_suite *a);

/* Text and JSON (bench_step_report.c). */
void bench_step_print_header(const struct bench_settings *s, double copy_gb_per_s);
void bench_step_print_rows(const struct step_case *c, const struct step_result *r);
struct rec;
/* The records of "decodeStep". */
void bench_step_records(struct rec *w, const struct step_suite *a);

#endif /* BK_TOOL_BENCH_STEP_H */
