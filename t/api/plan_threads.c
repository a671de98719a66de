/* SPDX-License-Identifier: Apache-2.0 */
/* Plans are immutable and may be used from many threads at once: each
 * thread records and submits the same plans on its own command buffer and
 * queue, and every thread's results equal a single-threaded run bit for
 * bit. (Command buffers and queues need external synchronization, so
 * each thread has its own.) */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gated_case.h"

#define THREADS 4
#define ROUNDS 8

static BkContext ctx;
static BkPlan plan;
static struct gated_case gcase;
static struct gated_data reference;

struct worker {
    uint32_t queue_index;
    bool ok;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    BkQueue queue = BK_NULL_HANDLE;
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    struct bkt_buffer x = bkt_alloc(ctx, reference.bytes[GATED_X]);
    struct bkt_buffer y = bkt_alloc(ctx, reference.bytes[GATED_Y]);
    void *out = malloc(reference.bytes[GATED_Y]);
    w->ok = out && bkGetQueue(ctx, w->queue_index, &queue) == BK_SUCCESS &&
            bkAllocateCommandBuffer(ctx, NULL, &cmd) == BK_SUCCESS &&
            bkCopyToDevice(ctx, x.address, reference.host[GATED_X],
                           reference.bytes[GATED_X]) == BK_SUCCESS;
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    BkRunInfo run = {
        .sType = BK_STRUCTURE_TYPE_RUN_INFO,
        .bindingCount = 2,
        .pBindings = (BkDeviceAddress[2]){ x.address, y.address },
    };
    for (int r = 0; w->ok && r < ROUNDS; r++) {
        w->ok = bkBeginCommandBuffer(cmd, &begin) == BK_SUCCESS &&
                bkCmdFillMemory(cmd, y.address, y.size, BKT_POISON) == BK_SUCCESS &&
                bkCmdRun(cmd, plan, &run) == BK_SUCCESS && bkEndCommandBuffer(cmd) == BK_SUCCESS &&
                bkQueueSubmit(queue, 1, &cmd) == BK_SUCCESS &&
                bkQueueWaitIdle(queue) == BK_SUCCESS &&
                bkCopyFromDevice(ctx, out, y.address, y.size) == BK_SUCCESS &&
                memcmp(out, reference.host[GATED_Y], reference.bytes[GATED_Y]) == 0;
    }
    free(out);
    bkFreeCommandBuffer(cmd);
    bkt_free(ctx, &x);
    bkt_free(ctx, &y);
    return NULL;
}

int main(void)
{
    ctx = bkt_open_device();
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkGetContextProperties(ctx, &props);
    struct bkt_rng rng = bkt_rng_new(505);
    struct gated_shape shape = {
        .rank = 3, .split = 2, .half = { 16, 9, 129 },
        .layout = { GATED_PADDED, GATED_TRANSPOSED, GATED_CONTIGUOUS },
    };
    gated_case_init(&gcase, BK_GATED_ACTIVATION_SWIGLU, BK_DATA_TYPE_BF16, false, &shape, &rng);
    gated_data_alloc(&gcase, &reference);
    gated_data_randomize(&gcase, &reference, &rng, false);
    tap_ok(gated_case_run(ctx, &gcase, &reference) == BK_SUCCESS &&
               gated_check_reference(&gcase, &reference,
                                     gated_reference_tolerance(gcase.type)) == 0,
           "single-threaded run: %s", gcase.label);

    union gated_info info;
    gated_case_info(&gcase, &info);
    if (bkt_create_plan(ctx, &info, &plan) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (struct worker){ .queue_index = (uint32_t)i % props.queueCount };
        if (pthread_create(&threads[i], NULL, work, &workers[i]) != 0)
            tap_bail("pthread_create failed");
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        tap_ok(workers[i].ok, "thread %d: %d runs of the shared plan on queue %u match", i,
               ROUNDS, workers[i].queue_index);
    }
    bkDestroyPlan(plan);
    gated_data_free(&reference);
    bkDestroyContext(ctx);
    return tap_done();
}
