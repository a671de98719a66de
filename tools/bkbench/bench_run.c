/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's measurement loop. */
#include "bench_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_plan.h"
#include "bench_progress.h"
#include "tool_common.h"

uint32_t bench_sets_for(uint64_t working_set, const struct bench_settings *s)
{
    /* At least two, so a submit never finds its data left in the cache by
     * the one before. */
    uint64_t sets = working_set ? (s->rotate_bytes + working_set - 1) / working_set : 2;
    if (sets < 2)
        sets = 2;
    if (sets > s->max_sets)
        sets = s->max_sets;
    return (uint32_t)sets;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        tool_die("out of host memory");
    return p;
}

static void begin(BkCommandBuffer cmd)
{
    BkCommandBufferBeginInfo bi = {BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                   BK_COMMAND_BUFFER_USAGE_REUSABLE};
    tool_check(bkBeginCommandBuffer(cmd, &bi), "bkBeginCommandBuffer");
}

double bench_copy_bandwidth(struct bench_device *d, uint64_t bytes,
                            const struct bench_settings *s)
{
    struct bench_buffer src, dst;
    bench_buffer_alloc(d, bytes, &src);
    bench_buffer_alloc(d, bytes, &dst);
    bench_buffer_fill_random(d, &src, BK_DATA_TYPE_F32, 1);

    BkCommandBuffer cmd;
    tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &cmd), "bkAllocateCommandBuffer");
    begin(cmd);
    tool_check(bkCmdCopyMemory(cmd, dst.address, src.address, bytes), "bkCmdCopyMemory");
    tool_check(bkEndCommandBuffer(cmd), "bkEndCommandBuffer");

    double *us = xcalloc(s->repeats, sizeof *us);
    bench_device_time(d, &cmd, 1, s->warmup, s->repeats, us);
    double t = tool_median(us, s->repeats);
    free(us);
    bkFreeCommandBuffer(cmd);
    bench_buffer_free(d, &dst);
    bench_buffer_free(d, &src);
    return 2.0 * (double)bytes / (t * 1e-6) / 1e9;
}

/* The buffers of every set, slot by slot, sized for the largest case. */
struct pool {
    uint32_t sets;
    struct bench_buffer *buf;         /* [sets][BENCH_SLOT_COUNT] */
    BkDataType filled;                /* dtype the inputs now hold */
};

static void pool_open(struct pool *p, struct bench_device *d, const struct bench_case *cases,
                      size_t count, const struct bench_settings *s)
{
    uint64_t size[BENCH_SLOT_COUNT] = {0};
    uint32_t sets = 2;
    for (size_t i = 0; i < count; i++) {
        uint64_t ws = 0;
        for (int k = 0; k < BENCH_SLOT_COUNT; k++) {
            if (cases[i].slot_bytes[k] > size[k])
                size[k] = cases[i].slot_bytes[k];
            ws += cases[i].slot_bytes[k];
        }
        uint32_t n = bench_sets_for(ws, s);
        if (n > sets)
            sets = n;
    }
    p->sets = sets;
    p->filled = BK_DATA_TYPE_UNDEFINED;
    p->buf = xcalloc((size_t)sets * BENCH_SLOT_COUNT, sizeof *p->buf);
    for (uint32_t set = 0; set < sets; set++)
        for (int k = 0; k < BENCH_SLOT_COUNT; k++)
            if (size[k])
                bench_buffer_alloc(d, size[k], &p->buf[set * BENCH_SLOT_COUNT + k]);
}

static void pool_fill_inputs(struct pool *p, struct bench_device *d, BkDataType dtype)
{
    if (p->filled == dtype)
        return;
    for (uint32_t set = 0; set < p->sets; set++)
        for (int k = 0; k < BENCH_SLOT_COUNT; k++) {
            struct bench_buffer *b = &p->buf[set * BENCH_SLOT_COUNT + k];
            if (k != BENCH_SLOT_OUT && b->size)
                bench_buffer_fill_random(d, b, dtype, 1000u * set + (uint64_t)k + 7u);
        }
    p->filled = dtype;
}

static void pool_close(struct pool *p, struct bench_device *d)
{
    for (uint32_t i = 0; i < p->sets * BENCH_SLOT_COUNT; i++)
        if (p->buf[i].size)
            bench_buffer_free(d, &p->buf[i]);
    free(p->buf);
}

static void run_case(struct bench_device *d, struct pool *p, const struct bench_case *c,
                     const struct bench_settings *s, double copy_gb_per_s, struct bench_result *r)
{
    union gated_op_info info;
    struct bench_plan plan;
    memset(r, 0, sizeof *r);
    if (!bench_plan_create(d, bench_case_operation(c, &info), &plan, r->message,
                           sizeof r->message))
        return;
    r->supported = true;
    if (plan.props.bindingCount != c->binding_count)
        tool_die("%s: plan has %u bindings, bkbench expects %u", c->op, plan.props.bindingCount,
                 c->binding_count);
    snprintf(r->kernel, sizeof r->kernel, "%s", plan.props.kernelName);

    uint64_t working_set = 0;
    for (int k = 0; k < BENCH_SLOT_COUNT; k++)
        working_set += c->slot_bytes[k];
    r->sets = bench_sets_for(working_set, s);
    if (r->sets > p->sets)
        r->sets = p->sets;

    pool_fill_inputs(p, d, c->dtype);
    BkDeviceAddress *addr = xcalloc((size_t)r->sets * c->binding_count, sizeof *addr);
    for (uint32_t set = 0; set < r->sets; set++)
        for (uint32_t b = 0; b < c->binding_count; b++)
            addr[set * c->binding_count + b] =
                p->buf[set * BENCH_SLOT_COUNT + c->slot[b]].address;
    r->us = bench_plan_time(d, &plan, addr, r->sets, BENCH_SUBMIT_REUSABLE, s, &r->t);
    bench_noise_note(&r->t);
    free(addr);

    r->gb_per_s = c->bytes / (r->us * 1e-6) / 1e9;
    if (c->flops > 0)
        r->tflop_per_s = c->flops / (r->us * 1e-6) / 1e12;
    else if (copy_gb_per_s > 0)
        r->roofline = r->gb_per_s / copy_gb_per_s;
    bench_plan_destroy(d, &plan);
}

void bench_run_cases(struct bench_device *d, const struct bench_case *cases, size_t count,
                     const struct bench_settings *s, double copy_gb_per_s,
                     struct bench_result *results, bench_row_fn row, void *user)
{
    if (count == 0)
        return;
    struct pool p;
    pool_open(&p, d, cases, count, s);
    for (size_t i = 0; i < count; i++) {
        const struct bench_case *c = &cases[i];
        bench_progress_case(1, "%s %s %s %s", c->op, c->variant, tool_dtype_name(c->dtype),
                            c->shape);
        run_case(d, &p, c, s, copy_gb_per_s, &results[i]);
        bench_progress_done();
        if (row)
            row(&cases[i], &results[i], user);
    }
    pool_close(&p, d);
}
