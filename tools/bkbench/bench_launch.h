/* SPDX-License-Identifier: Apache-2.0 */
/* Launch cost: what libbk adds per plan on the CPU, measured on tiny
 * tensors so that the kernels themselves cost little, and on a minimal one
 * so that they cost next to nothing on the host too. */
#ifndef BK_TOOL_BENCH_LAUNCH_H
#define BK_TOOL_BENCH_LAUNCH_H

#include <stdint.h>

#include "bench_device.h"

#define BENCH_LAUNCH_PLANS 100u

struct launch_settings {
    uint32_t one_time_iterations;     /* record + submit samples */
    uint32_t replay_batches;          /* samples of the reusable buffer */
    uint32_t replays_per_batch;
};

/* The costs for one input shape. */
struct launch_shape_costs {
    int64_t extent[2];                /* the input, [tokens, 2 x hidden] */
    /* (a) median CPU time of begin + bkCmdRun + end + bkQueueSubmit of a
     * one-time command buffer holding one plan, its output binding
     * alternating between two buffers; and with the same bindings each
     * time (a backend may keep what it prepared for those). */
    double one_time_us;
    double one_time_same_us;
    /* (b) a reusable command buffer of BENCH_LAUNCH_PLANS plans replayed:
     * median over batches of wall time (submits and the wait for them)
     * per replay, divided by the plan count. */
    double replay_us_per_plan;
};

/* Two shapes: LAUNCH_TINY (4 x 256: next to nothing on a GPU, ~1-3 us of
 * arithmetic on a host core) and LAUNCH_MINIMAL (1 x 32: libbk's own work
 * alone on either device). */
enum { LAUNCH_TINY, LAUNCH_MINIMAL, LAUNCH_SHAPES };

struct launch_result {
    BkDataType dtype;
    struct launch_shape_costs shape[LAUNCH_SHAPES];
};

void bench_launch_costs(struct bench_device *d, const struct launch_settings *s,
                        struct launch_result *r);

#endif /* BK_TOOL_BENCH_LAUNCH_H */
