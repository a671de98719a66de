/* Launch cost: what libbk adds per plan on the CPU, measured on tiny
 * tensors so that the kernels themselves cost next to nothing. */
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

struct launch_result {
    int64_t extent[2];                /* the tiny input */
    BkDataType dtype;
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

void bench_launch_costs(struct bench_device *d, const struct launch_settings *s,
                        struct launch_result *r);

#endif /* BK_TOOL_BENCH_LAUNCH_H */
