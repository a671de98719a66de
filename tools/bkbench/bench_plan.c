/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench: one plan, run and timed. */
#include "bench_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool_common.h"

BkResult bench_plan_try_create(struct bench_device *d, const void *operation,
                               struct bench_plan *p, char *msg, size_t msg_size)
{
    memset(p, 0, sizeof *p);
    BkPlanCreateInfo ci = {BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, NULL, operation, 0};
    BkResult r = bkCreatePlan(d->ctx, &ci, NULL, &p->plan);
    if (r < 0) {
        const char *m = bkGetLastErrorMessage();
        snprintf(msg, msg_size, "%s", m ? m : "");
        p->plan = BK_NULL_HANDLE;
        return r;
    }
    p->props.sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES;
    p->props.pNext = &p->bindings;
    p->bindings.sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES;
    tool_check(bkGetPlanProperties(p->plan, &p->props), "bkGetPlanProperties");
    p->props.pNext = NULL;
    if (p->props.workspaceSize) {
        uint64_t align = p->props.workspaceAlignment ? p->props.workspaceAlignment : 1;
        bench_buffer_alloc(d, p->props.workspaceSize + align, &p->workspace);
        p->workspace_address = (p->workspace.address + align - 1) / align * align;
    }
    return BK_SUCCESS;
}

bool bench_plan_create(struct bench_device *d, const void *operation, struct bench_plan *p,
                       char *msg, size_t msg_size)
{
    BkResult r = bench_plan_try_create(d, operation, p, msg, msg_size);
    if (r == BK_ERROR_UNSUPPORTED)
        return false;
    if (r < 0)
        tool_die("bkCreatePlan: %s: %s", bkResultString(r), *msg ? msg : "(no message)");
    return true;
}

void bench_plan_destroy(struct bench_device *d, struct bench_plan *p)
{
    if (p->workspace.size)
        bench_buffer_free(d, &p->workspace);
    bkDestroyPlan(p->plan);
    memset(p, 0, sizeof *p);
}

static void cmd_run(BkCommandBuffer cmd, const struct bench_plan *p,
                    const BkDeviceAddress *bindings)
{
    BkRunInfo ri = {BK_STRUCTURE_TYPE_RUN_INFO, NULL, p->props.bindingCount, bindings, NULL,
                    p->workspace_address, p->props.workspaceSize};
    tool_check(bkCmdRun(cmd, p->plan, &ri), "bkCmdRun");
}

static void record(BkCommandBuffer cmd, const struct bench_plan *p,
                   const BkDeviceAddress *bindings, BkCommandBufferUsage usage)
{
    BkCommandBufferBeginInfo bi = {BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, usage};
    tool_check(bkBeginCommandBuffer(cmd, &bi), "bkBeginCommandBuffer");
    cmd_run(cmd, p, bindings);
    tool_check(bkEndCommandBuffer(cmd), "bkEndCommandBuffer");
}

void bench_plan_run_once(struct bench_device *d, const struct bench_plan *p,
                         const BkDeviceAddress *bindings)
{
    BkCommandBuffer cmd = bench_one_time_begin(d);
    cmd_run(cmd, p, bindings);
    bench_one_time_finish(d, cmd);
}

/* What one enqueue of a one-time run needs. */
struct one_time {
    struct bench_device *d;
    const struct bench_plan *p;
    const BkDeviceAddress *bindings;
    uint32_t sets;
    BkCommandBuffer cmd;
};

static void one_time_run(void *user, uint32_t i)
{
    struct one_time *o = user;
    record(o->cmd, o->p, o->bindings + (size_t)(i % o->sets) * o->p->props.bindingCount,
           BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    tool_check(bkQueueSubmit(o->d->queue, 1, &o->cmd), "bkQueueSubmit");
}

double bench_plan_time(struct bench_device *d, const struct bench_plan *p,
                       const BkDeviceAddress *bindings, uint32_t sets,
                       enum bench_submit_mode mode, const struct bench_settings *s,
                       struct bench_spread *t)
{
    double *us = calloc(s->repeats, sizeof *us);
    BkCommandBuffer *cmds = calloc(sets, sizeof *cmds);
    if (!us || !cmds)
        tool_die("out of host memory");
    if (mode == BENCH_SUBMIT_ONE_TIME) {
        /* A one-time buffer may be begun again once submitted. */
        struct one_time o = {d, p, bindings, sets, BK_NULL_HANDLE};
        tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &o.cmd), "bkAllocateCommandBuffer");
        bench_device_time_fn(d, one_time_run, &o, s->warmup, s->repeats, us);
        bkFreeCommandBuffer(o.cmd);
    } else {
        for (uint32_t set = 0; set < sets; set++) {
            tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &cmds[set]),
                       "bkAllocateCommandBuffer");
            record(cmds[set], p, bindings + (size_t)set * p->props.bindingCount,
                   BK_COMMAND_BUFFER_USAGE_REUSABLE);
        }
        bench_device_time(d, cmds, sets, s->warmup, s->repeats, us);
        for (uint32_t set = 0; set < sets; set++)
            bkFreeCommandBuffer(cmds[set]);
    }
    struct bench_spread spread;
    bench_spread_of(us, s->repeats, &spread);
    if (t)
        *t = spread;
    free(cmds);
    free(us);
    return spread.us;
}

/* One-time runs of the plan and other's runs, alternating run by run. */
struct paired {
    struct one_time o;
    bench_enqueue_fn other;
    void *other_user;
};

static void paired_run(void *user, uint32_t i)
{
    struct paired *pr = user;
    if (i % 2 == 0)
        one_time_run(&pr->o, i / 2);
    else
        pr->other(pr->other_user, i / 2);
}

void bench_plan_time_paired(struct bench_device *d, const struct bench_plan *p,
                            const BkDeviceAddress *bindings, uint32_t sets,
                            bench_enqueue_fn other, void *other_user,
                            const struct bench_settings *s, double *plan_us, double *other_us)
{
    const uint32_t n = s->repeats;
    double *us = calloc(2 * (size_t)n, sizeof *us), *half = calloc(n, sizeof *half);
    if (!us || !half)
        tool_die("out of host memory");
    struct paired pr = {{d, p, bindings, sets, BK_NULL_HANDLE}, other, other_user};
    tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &pr.o.cmd), "bkAllocateCommandBuffer");
    bench_device_time_fn(d, paired_run, &pr, 2 * s->warmup, 2 * n, us);
    bkFreeCommandBuffer(pr.o.cmd);
    for (int which = 0; which < 2; which++) {
        for (uint32_t i = 0; i < n; i++)
            half[i] = us[2 * i + (uint32_t)which];
        *(which ? other_us : plan_us) = tool_median(half, n);
    }
    free(half);
    free(us);
}
