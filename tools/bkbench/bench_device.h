/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's device: a libbk context, the queue work is timed on and the
 * timer that fits the device (CUDA events on CUDA, the monotonic clock
 * around submit on the host). */
#ifndef BK_TOOL_BENCH_DEVICE_H
#define BK_TOOL_BENCH_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

#include <bk/bk.h>

struct cuda_timing;

struct bench_device {
    BkContext ctx;
    BkDeviceProperties props;
    BkQueue queue;
    bool imported_queue;          /* ours to destroy */
    struct cuda_timing *timing;   /* NULL on the host device */
    uint32_t max_repeats;         /* most timed submits per measurement */
    uint64_t cache_bytes;         /* L2 on a GPU, last-level cache on the host */
};

/* A device allocation. */
struct bench_buffer {
    BkMemory memory;
    BkDeviceAddress address;
    uint64_t size;
};

/* Opens the device (type AUTO, HOST or CUDA and its index); exits with a
 * message on failure. max_repeats bounds bench_device_time's repeats. */
void bench_device_open(struct bench_device *d, BkDeviceType type, uint32_t index,
                       uint32_t max_repeats);
void bench_device_close(struct bench_device *d);
bool bench_device_is_cuda(const struct bench_device *d);

/* Submits cmds[0], cmds[1], ... round robin, 'warmup' times untimed, then
 * 'repeats' times timed; us[i] gets the time of the i-th timed submit in
 * microseconds. On CUDA the submits are queued back to back between
 * events, so the times are GPU times without launch gaps once the queue
 * runs ahead. */
void bench_device_time(struct bench_device *d, const BkCommandBuffer *cmds, uint32_t ncmds,
                       uint32_t warmup, uint32_t repeats, double *us);
/* The same for any work: enqueue(user, i) queues the i-th run (i counts
 * warm-up and timed runs together) on the device's queue, or on its
 * CUstream (bench_device_stream) for work that is not libbk's. */
typedef void (*bench_enqueue_fn)(void *user, uint32_t i);
void bench_device_time_fn(struct bench_device *d, bench_enqueue_fn enqueue, void *user,
                          uint32_t warmup, uint32_t repeats, double *us);
/* The CUstream the device's queue wraps (NULL on the host), made the
 * current thread's in its primary context for libraries that use the
 * current context, such as cuBLASLt. */
void *bench_device_stream(struct bench_device *d);
void bench_device_wait(struct bench_device *d);
/* A one-time command buffer begun on d's context; finish ends it, submits
 * it, waits for the queue and frees it. */
BkCommandBuffer bench_one_time_begin(struct bench_device *d);
void bench_one_time_finish(struct bench_device *d, BkCommandBuffer cmd);

/* A malloc'd host copy of bytes at src, once the queue is idle. */
void *bench_device_download(struct bench_device *d, BkDeviceAddress src, uint64_t bytes);
void bench_buffer_alloc(struct bench_device *d, uint64_t size, struct bench_buffer *b);
void bench_buffer_free(struct bench_device *d, struct bench_buffer *b);
/* Fills the buffer with random non-zero values of dtype (magnitudes in
 * [0.25, 2], either sign), so no timing ever runs on zeros. */
void bench_buffer_fill_random(struct bench_device *d, const struct bench_buffer *b,
                              BkDataType dtype, uint64_t seed);

#endif /* BK_TOOL_BENCH_DEVICE_H */
