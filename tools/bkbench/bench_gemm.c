/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's dense GEMM cases: libbk's plan, submitted as one-time and as
 * reusable command buffers, beside cuBLASLt called directly with the same
 * layouts and workspace limit as libbk and the heuristic's first
 * algorithm (libbk may pass over it: see its kernelName). */
#include "bench_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_plan.h"
#include "bench_random.h"
#include "bench_sets.h"
#include "blas_direct.h"
#include "device_peak.h"
#include "gemm_op.h"
#include "tool_common.h"

/* Input types: F16 and BF16 (F32 sums), F32 on TF32 tensor cores, F64. */
static const struct {
    BkDataType dtype;
    bool tf32;
} gemm_types[] = {
    {BK_DATA_TYPE_F16, false},
    {BK_DATA_TYPE_BF16, false},
    {BK_DATA_TYPE_F32, true},
    {BK_DATA_TYPE_F64, false},
};
#define TYPE_COUNT (sizeof gemm_types / sizeof gemm_types[0])

/* M = N = K, at the GPU scale; the host scale adds the largest (2048^3
 * on the host), the GPU scale leaves it out. */
static const int64_t gemm_sizes[] = {4096, 8192, 16384};
#define SIZE_COUNT (sizeof gemm_sizes / sizeof gemm_sizes[0])
#define HOST_ONLY_SIZE 16384

enum { SLOT_A, SLOT_B, SLOT_D, SLOT_COUNT };

/* How far libbk's and cuBLASLt's D may differ, over max |D|: a few units
 * in the last place of D's type (both sum in F32, or F64, in different
 * orders and split-K schemes). */
double gemm_agreement(BkDataType dtype)
{
    switch (dtype) {
    case BK_DATA_TYPE_F16: return 0x1p-8;
    case BK_DATA_TYPE_BF16: return 0x1p-5;
    case BK_DATA_TYPE_F32: return 0x1p-12;
    default: return 1e-12;
    }
}

size_t bench_gemm_case_count(void)
{
    return TYPE_COUNT * SIZE_COUNT;
}

size_t bench_gemm_cases(enum bench_gemm_scale scale, struct gemm_case *out, size_t max)
{
    size_t n = 0;
    for (size_t t = 0; t < TYPE_COUNT; t++)
        for (size_t s = 0; s < SIZE_COUNT && n < max; s++) {
            if (gemm_sizes[s] == HOST_ONLY_SIZE && scale != BENCH_GEMM_HOST)
                continue;
            struct gemm_case *c = &out[n++];
            int64_t size = gemm_sizes[s] / (int64_t)scale;
            *c = (struct gemm_case){gemm_types[t].dtype, gemm_types[t].tf32, size, size, size,
                                    ""};
            snprintf(c->shape, sizeof c->shape, "%lldx%lldx%lld", (long long)c->m,
                     (long long)c->n, (long long)c->k);
        }
    return n;
}

size_t bench_gemm_shape_cases(int64_t m, int64_t n, int64_t k, struct gemm_case *out, size_t max)
{
    size_t count = 0;
    for (size_t t = 0; t < TYPE_COUNT && count < max; t++) {
        struct gemm_case *c = &out[count++];
        *c = (struct gemm_case){gemm_types[t].dtype, gemm_types[t].tf32, m, n, k, ""};
        snprintf(c->shape, sizeof c->shape, "%lldx%lldx%lld", (long long)m, (long long)n,
                 (long long)k);
    }
    return count;
}

double gemm_case_flops(const struct gemm_case *c)
{
    return 2.0 * (double)c->m * (double)c->n * (double)c->k;
}

void lt_rotation_run(void *user, uint32_t i)
{
    struct lt_rotation *r = user;
    uint32_t set = i % r->d_sets->sets;
    if (r->failed)
        return;
    if (r->host_blas) {
        blas_direct_gemm(r->dtype, r->m, r->n, r->k,
                         (void *)(uintptr_t)bench_sets_address(r->d_sets, set, r->d_slot),
                         (const void *)(uintptr_t)bench_sets_address(r->a_sets, set, r->a_slot),
                         (const void *)(uintptr_t)bench_sets_address(r->b_sets, set, r->b_slot));
        return;
    }
    if (cublaslt_gemm_run(r->g, bench_sets_address(r->d_sets, set, r->d_slot),
                          bench_sets_address(r->a_sets, set, r->a_slot),
                          bench_sets_address(r->b_sets, set, r->b_slot), r->workspace,
                          r->workspace_size, r->stream, r->err, sizeof r->err) != 0)
        r->failed = true;
}

/* Runs libbk's plan and cuBLASLt once each on set 0 and compares their D:
 * the comparison is only worth its name when both compute the same. */
static void check_agreement(struct bench_device *d, const struct gemm_case *c,
                            const struct bench_plan *p, const BkDeviceAddress *bind,
                            struct lt_rotation *rot, struct gemm_result *r)
{
    const BkDeviceAddress dst = bench_sets_address(rot->d_sets, 0, SLOT_D);
    const uint64_t bytes = gemm_matrix_bytes(c->dtype, c->m, c->n);
    bench_plan_run_once(d, p, bind);
    void *mine = bench_device_download(d, dst, bytes);
    lt_rotation_run(rot, 0);
    void *theirs = bench_device_download(d, dst, bytes);
    if (rot->failed) {
        r->lt_status = "failed";
        r->lt_us = 0.0;
        snprintf(r->lt_message, sizeof r->lt_message, "%s", rot->err);
    } else {
        r->lt_max_rel_diff =
            bench_max_rel_diff(mine, theirs, (size_t)(c->m * c->n), c->dtype);
        if (!(r->lt_max_rel_diff <= gemm_agreement(c->dtype))) {
            r->lt_status = "mismatch";
            snprintf(r->lt_message, sizeof r->lt_message,
                     "%s's D differs from libbk's by %.3g of max |D| (allowed %.3g)",
                     rot->host_blas ? "the BLAS" : "cuBLASLt", r->lt_max_rel_diff,
                     gemm_agreement(c->dtype));
        }
    }
    free(theirs);
    free(mine);
}

/* cuBLASLt's plan for the case, with its workspace; false (and r says
 * why) when there is none to time. */
static bool lt_setup(struct bench_device *d, const struct gemm_case *c,
                     const struct gemm_settings *s, const struct bench_sets *sets,
                     struct lt_rotation *rot, struct bench_buffer *ws, struct gemm_result *r)
{
    *rot = (struct lt_rotation){.d_sets = sets, .a_sets = sets, .b_sets = sets,
                                .d_slot = SLOT_D, .a_slot = SLOT_A, .b_slot = SLOT_B};
    memset(ws, 0, sizeof *ws);
    /* tf32 on the host is f32 (libbk's host GEMM computes f32 for it). */
    if (s->host_blas && blas_direct_takes(c->dtype)) {
        rot->host_blas = true;
        rot->dtype = c->dtype, rot->m = c->m, rot->n = c->n, rot->k = c->k;
        snprintf(r->lt_message, sizeof r->lt_message, "%s", s->lt_message);
        return true;
    }
    if (!s->lt) {
        if (s->host_blas) {
            r->lt_status = "skipped";
            snprintf(r->lt_message, sizeof r->lt_message, "the BLAS has no %s GEMM",
                     tool_dtype_name(c->dtype));
            return false;
        }
        r->lt_status = s->lt_status;
        snprintf(r->lt_message, sizeof r->lt_message, "%s", s->lt_message ? s->lt_message : "");
        return false;
    }
    rot->stream = bench_device_stream(d);
    rot->g = cublaslt_gemm_plan(s->lt, c->dtype, c->tf32, c->m, c->n, c->k,
                                s->lt_workspace_limit, rot->err, sizeof rot->err);
    if (!rot->g) {
        r->lt_status = "failed";
        snprintf(r->lt_message, sizeof r->lt_message, "%s", rot->err);
        return false;
    }
    r->lt_workspace = cublaslt_gemm_workspace(rot->g);
    r->lt_algo = cublaslt_gemm_algo_id(rot->g);
    if (r->lt_workspace) {
        bench_buffer_alloc(d, r->lt_workspace, ws);
        rot->workspace = ws->address;
        rot->workspace_size = ws->size;
    }
    return true;
}

static void lt_finish(struct bench_device *d, const struct gemm_case *c,
                      const struct bench_plan *p, const BkDeviceAddress *bind,
                      struct lt_rotation *rot, struct bench_buffer *ws, struct gemm_result *r)
{
    if (rot->failed) {
        r->lt_status = "failed";
        r->lt_us = 0.0;
        snprintf(r->lt_message, sizeof r->lt_message, "%s", rot->err);
    } else {
        r->lt_status = "ok";
        check_agreement(d, c, p, bind, rot, r);
    }
    if (ws->size)
        bench_buffer_free(d, ws);
    if (rot->g)
        cublaslt_gemm_destroy(rot->g);
}

/* Rounds of timings: reusable replays, then libbk's one-time submits and
 * cuBLASLt alternating run by run, so that clock and temperature drift
 * reach both alike; each reports the median of its rounds' medians. */
#define GEMM_ROUNDS 5u

void bench_gemm_run(struct bench_device *d, const struct gemm_case *c,
                    const struct gemm_settings *s, struct gemm_result *r)
{
    memset(r, 0, sizeof *r);
    r->lt_status = "skipped";
    r->lt_max_rel_diff = -1.0;
    r->peak_tflops = device_peak_tflops(&d->props, c->dtype, c->tf32);

    struct gemm_op_desc desc = {c->dtype, c->tf32, c->m, c->n, c->k};
    BkGemmInfo info;
    struct bench_plan p;
    if (!bench_plan_create(d, gemm_op_build(&desc, &info), &p, r->message, sizeof r->message))
        return;
    r->supported = true;
    r->workspace = p.props.workspaceSize;
    snprintf(r->kernel, sizeof r->kernel, "%s", p.props.kernelName);

    uint64_t bytes[SLOT_COUNT] = {gemm_matrix_bytes(c->dtype, c->m, c->k),
                                  gemm_matrix_bytes(c->dtype, c->n, c->k),
                                  gemm_matrix_bytes(c->dtype, c->m, c->n)};
    r->sets = bench_sets_for(bytes[SLOT_A] + bytes[SLOT_B] + bytes[SLOT_D], &s->bench);
    struct bench_sets sets;
    bench_sets_alloc(d, &sets, r->sets, bytes, SLOT_COUNT);
    bench_sets_fill(d, &sets, SLOT_A, c->dtype);
    bench_sets_fill(d, &sets, SLOT_B, c->dtype);

    /* Slots a, b, c (none), d, bias (none) of each set. */
    BkDeviceAddress *bind = calloc((size_t)r->sets * p.props.bindingCount, sizeof *bind);
    if (!bind || p.props.bindingCount != 5)
        tool_die("gemm: %u bindings, bkbench expects 5", p.props.bindingCount);
    for (uint32_t set = 0; set < r->sets; set++) {
        BkDeviceAddress *b = bind + (size_t)set * p.props.bindingCount;
        b[BK_GEMM_BINDING_A] = bench_sets_address(&sets, set, SLOT_A);
        b[BK_GEMM_BINDING_B] = bench_sets_address(&sets, set, SLOT_B);
        b[BK_GEMM_BINDING_D] = bench_sets_address(&sets, set, SLOT_D);
    }
    struct lt_rotation rot;
    struct bench_buffer ws;
    const bool lt = lt_setup(d, c, s, &sets, &rot, &ws, r);
    double one_time[GEMM_ROUNDS], reusable[GEMM_ROUNDS], direct[GEMM_ROUNDS];
    uint32_t lt_rounds = 0;
    for (uint32_t round = 0; round < GEMM_ROUNDS; round++) {
        struct bench_spread t;
        reusable[round] =
            bench_plan_time(d, &p, bind, r->sets, BENCH_SUBMIT_REUSABLE, &s->bench, &t);
        bench_spread_widen(&r->reusable_t, &t);
        if (!lt || rot.failed) {
            one_time[round] =
                bench_plan_time(d, &p, bind, r->sets, BENCH_SUBMIT_ONE_TIME, &s->bench, NULL);
            continue;
        }
        bench_plan_time_paired(d, &p, bind, r->sets, lt_rotation_run, &rot, &s->bench,
                               &one_time[round], &direct[lt_rounds]);
        if (!rot.failed)
            lt_rounds++;
    }
    r->one_time_us = tool_median(one_time, GEMM_ROUNDS);
    r->reusable_us = r->reusable_t.us = tool_median(reusable, GEMM_ROUNDS);
    bench_noise_note(&r->reusable_t);
    if (lt) {
        r->lt_us = lt_rounds ? tool_median(direct, lt_rounds) : 0.0;
        lt_finish(d, c, &p, bind, &rot, &ws, r);
    }

    free(bind);
    bench_sets_free(d, &sets);
    bench_plan_destroy(d, &p);
}
