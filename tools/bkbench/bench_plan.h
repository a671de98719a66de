/* SPDX-License-Identifier: Apache-2.0 */
/* One libbk plan under bkbench's timer: made from an op info, with its
 * workspace and the size of every binding (BkPlanBindingProperties), run
 * once or timed over rotating sets of bindings, as one-time command
 * buffers recorded at each submit or as reusable ones replayed. */
#ifndef BK_TOOL_BENCH_PLAN_H
#define BK_TOOL_BENCH_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "bench_device.h"
#include "bench_spread.h"
#include "bench_run.h"

struct bench_plan {
    BkPlan plan;
    BkPlanProperties props;
    BkPlanBindingProperties bindings;     /* bindings.bindings[slot].size: bytes to bind */
    struct bench_buffer workspace;        /* allocated when props.workspaceSize > 0 */
    BkDeviceAddress workspace_address;    /* aligned as the plan asks */
};

/* Makes the plan. Returns false and copies libbk's message into msg when
 * the backend does not support it; exits on any other error. */
bool bench_plan_create(struct bench_device *d, const void *operation, struct bench_plan *p,
                       char *msg, size_t msg_size);
/* The same, but any error of bkCreatePlan is returned (its message in
 * msg) instead of exiting: for op families whose backends are young. */
BkResult bench_plan_try_create(struct bench_device *d, const void *operation,
                               struct bench_plan *p, char *msg, size_t msg_size);
void bench_plan_destroy(struct bench_device *d, struct bench_plan *p);

/* Runs the plan once with these bindings (props.bindingCount of them) and
 * waits for it. */
void bench_plan_run_once(struct bench_device *d, const struct bench_plan *p,
                         const BkDeviceAddress *bindings);

/* The median time of one run in microseconds; run i uses the bindings of
 * set i % sets, at bindings[set * props.bindingCount]. t, when not NULL,
 * receives the median, min and max. */
enum bench_submit_mode {
    BENCH_SUBMIT_ONE_TIME,                /* begin + bkCmdRun + end + submit per run */
    BENCH_SUBMIT_REUSABLE,                /* one reusable buffer per set, replayed */
};
double bench_plan_time(struct bench_device *d, const struct bench_plan *p,
                       const BkDeviceAddress *bindings, uint32_t sets,
                       enum bench_submit_mode mode, const struct bench_settings *s,
                       struct bench_spread *t);

/* One-time submits of p and other(other_user, i), alternating run by run
 * so that clock drift reaches both alike; the medians of each. */
void bench_plan_time_paired(struct bench_device *d, const struct bench_plan *p,
                            const BkDeviceAddress *bindings, uint32_t sets,
                            bench_enqueue_fn other, void *other_user,
                            const struct bench_settings *s, double *plan_us, double *other_us);

#endif /* BK_TOOL_BENCH_PLAN_H */
