/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's device: context, timed queue, buffers. */
#define _POSIX_C_SOURCE 200809L

#include "bench_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_random.h"
#include "cuda_timing.h"
#include "tool_common.h"

#define MIB (1024.0 * 1024.0)
#define DEFAULT_HOST_CACHE (32u << 20)
#define DEFAULT_GPU_L2 (50u << 20)     /* H100's L2, when the driver does not say */
#define FILL_CHUNK (4u << 20)          /* bytes of random values made at a time */

/* The host's last-level cache from sysfs, or a typical size. */
static uint64_t host_cache_bytes(void)
{
    uint64_t best = 0;
    for (int index = 0; index < 8; index++) {
        char path[96], text[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(text, sizeof text, f)) {
            char *end;
            unsigned long long v = strtoull(text, &end, 10);
            if (*end == 'K')
                v <<= 10;
            else if (*end == 'M')
                v <<= 20;
            if (v > best)
                best = v;
        }
        fclose(f);
    }
    return best ? best : DEFAULT_HOST_CACHE;
}

static void cuda_die(const char *what, const char *err)
{
    tool_die("%s: %s", what, err);
}

void bench_device_open(struct bench_device *d, BkDeviceType type, uint32_t index,
                       uint32_t max_repeats)
{
    memset(d, 0, sizeof *d);
    d->max_repeats = max_repeats;
    BkContextCreateInfo ci = {BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, NULL, type, index,
                              BK_HEADER_VERSION, 0};
    tool_check(bkCreateContext(&ci, NULL, &d->ctx), "bkCreateContext");
    d->props.sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    tool_check(bkGetContextProperties(d->ctx, &d->props), "bkGetContextProperties");

    if (d->props.deviceType != BK_DEVICE_TYPE_CUDA) {
        tool_check(bkGetQueue(d->ctx, 0, &d->queue), "bkGetQueue");
        d->cache_bytes = host_cache_bytes();
        return;
    }
    /* Our own stream in the primary context libbk uses, so events can be
     * recorded around libbk's work on it. */
    char err[256];
    d->timing = cuda_timing_open((int)d->props.deviceIndex, max_repeats + 1, err, sizeof err);
    if (!d->timing)
        cuda_die("CUDA timing setup", err);
    tool_check(bkImportQueue(d->ctx, cuda_timing_stream(d->timing), &d->queue), "bkImportQueue");
    d->imported_queue = true;
    d->cache_bytes = cuda_timing_l2_bytes(d->timing);
    if (d->cache_bytes == 0)
        d->cache_bytes = DEFAULT_GPU_L2;
}

void bench_device_close(struct bench_device *d)
{
    if (d->queue)
        bench_device_wait(d);
    if (d->imported_queue)
        bkDestroyQueue(d->queue);
    bkDestroyContext(d->ctx);
    cuda_timing_close(d->timing);
    memset(d, 0, sizeof *d);
}

bool bench_device_is_cuda(const struct bench_device *d)
{
    return d->timing != NULL;
}

void bench_device_wait(struct bench_device *d)
{
    tool_check(bkQueueWaitIdle(d->queue), "bkQueueWaitIdle");
}

static void submit(struct bench_device *d, BkCommandBuffer cmd)
{
    tool_check(bkQueueSubmit(d->queue, 1, &cmd), "bkQueueSubmit");
}

static void time_cuda(struct bench_device *d, bench_enqueue_fn enqueue, void *user,
                      uint32_t warmup, uint32_t repeats, double *us)
{
    char err[256];
    for (uint32_t i = 0; i < warmup; i++)
        enqueue(user, i);
    bench_device_wait(d);
    /* event i, work i, event i+1, ...: the host queues everything, then
     * waits once; each interval is one run's GPU time. */
    if (cuda_timing_record(d->timing, 0, err, sizeof err) != 0)
        cuda_die("timing", err);
    for (uint32_t i = 0; i < repeats; i++) {
        enqueue(user, warmup + i);
        if (cuda_timing_record(d->timing, i + 1, err, sizeof err) != 0)
            cuda_die("timing", err);
    }
    if (cuda_timing_wait(d->timing, repeats, err, sizeof err) != 0)
        cuda_die("timing", err);
    for (uint32_t i = 0; i < repeats; i++) {
        double ms;
        if (cuda_timing_elapsed(d->timing, i, i + 1, &ms, err, sizeof err) != 0)
            cuda_die("timing", err);
        us[i] = ms * 1e3;
    }
    bench_device_wait(d);
}

static void time_host(struct bench_device *d, bench_enqueue_fn enqueue, void *user,
                      uint32_t warmup, uint32_t repeats, double *us)
{
    for (uint32_t i = 0; i < warmup; i++) {
        enqueue(user, i);
        bench_device_wait(d);
    }
    for (uint32_t i = 0; i < repeats; i++) {
        double t0 = tool_now_us();
        enqueue(user, warmup + i);
        bench_device_wait(d);   /* returns at once on the host; kept for clarity */
        us[i] = tool_now_us() - t0;
    }
}

void bench_device_time_fn(struct bench_device *d, bench_enqueue_fn enqueue, void *user,
                          uint32_t warmup, uint32_t repeats, double *us)
{
    if (repeats > d->max_repeats)
        tool_die("internal: %u repeats, at most %u", repeats, d->max_repeats);
    if (d->timing)
        time_cuda(d, enqueue, user, warmup, repeats, us);
    else
        time_host(d, enqueue, user, warmup, repeats, us);
}

/* Submits cmds round robin. */
struct cmd_rotation {
    struct bench_device *d;
    const BkCommandBuffer *cmds;
    uint32_t ncmds;
};

static void submit_next(void *user, uint32_t i)
{
    struct cmd_rotation *r = user;
    submit(r->d, r->cmds[i % r->ncmds]);
}

void bench_device_time(struct bench_device *d, const BkCommandBuffer *cmds, uint32_t ncmds,
                       uint32_t warmup, uint32_t repeats, double *us)
{
    struct cmd_rotation r = {d, cmds, ncmds};
    bench_device_time_fn(d, submit_next, &r, warmup, repeats, us);
}

void *bench_device_stream(struct bench_device *d)
{
    char err[256];
    if (!d->timing)
        return NULL;
    if (cuda_timing_make_current(d->timing, err, sizeof err) != 0)
        cuda_die("CUDA context", err);
    return cuda_timing_stream(d->timing);
}

BkCommandBuffer bench_one_time_begin(struct bench_device *d)
{
    BkCommandBuffer cmd;
    BkCommandBufferBeginInfo bi = {BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                   BK_COMMAND_BUFFER_USAGE_ONE_TIME};
    tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &cmd), "bkAllocateCommandBuffer");
    tool_check(bkBeginCommandBuffer(cmd, &bi), "bkBeginCommandBuffer");
    return cmd;
}

void bench_one_time_finish(struct bench_device *d, BkCommandBuffer cmd)
{
    tool_check(bkEndCommandBuffer(cmd), "bkEndCommandBuffer");
    submit(d, cmd);
    bench_device_wait(d);
    bkFreeCommandBuffer(cmd);
}

/* Writes every page of a new buffer once (zeros), so that no timed run
 * pays for the pages' first touch: on the host backend the system maps a
 * page at its first write, and the first case to write a set's outputs
 * (bkbench's first gated row) ran 2-16x slow on a 2-core Xeon VM. */
static void touch(struct bench_device *d, const struct bench_buffer *b)
{
    const uint64_t bytes = b->size & ~(uint64_t)3;  /* the fill's unit; the rest shares a page */
    if (bytes == 0)
        return;
    BkCommandBuffer cmd = bench_one_time_begin(d);
    tool_check(bkCmdFillMemory(cmd, b->address, bytes, 0), "bkCmdFillMemory");
    bench_one_time_finish(d, cmd);
}

void bench_buffer_alloc(struct bench_device *d, uint64_t size, struct bench_buffer *b)
{
    BkMemoryAllocateInfo ai = {BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, size,
                               BK_MEMORY_TYPE_DEVICE};
    memset(b, 0, sizeof *b);
    BkResult r = bkAllocateMemory(d->ctx, &ai, NULL, &b->memory);
    if (r < 0) {
        char what[64];
        snprintf(what, sizeof what, "bkAllocateMemory(%.1f MiB)", (double)size / MIB);
        tool_check(r, what);
    }
    tool_check(bkGetMemoryAddress(b->memory, &b->address), "bkGetMemoryAddress");
    b->size = size;
    touch(d, b);
}

void bench_buffer_free(struct bench_device *d, struct bench_buffer *b)
{
    bkFreeMemory(d->ctx, b->memory);
    memset(b, 0, sizeof *b);
}

void bench_buffer_fill_random(struct bench_device *d, const struct bench_buffer *b,
                              BkDataType dtype, uint64_t seed)
{
    size_t esize = tool_dtype_size(dtype);
    if (esize == 0)
        esize = 1;
    size_t chunk = b->size < FILL_CHUNK ? (size_t)b->size : FILL_CHUNK;
    chunk -= chunk % esize;    /* whole values only */
    if (chunk == 0)
        return;
    unsigned char *host = malloc(chunk);
    if (!host)
        tool_die("out of host memory");
    uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
    bench_random_values(host, chunk / esize, dtype, &state);
    /* The chunk repeats through the buffer: the values only need to be
     * real, non-zero numbers, not unique. */
    for (uint64_t off = 0; off < b->size; off += chunk) {
        uint64_t n = b->size - off < chunk ? b->size - off : chunk;
        tool_check(bkCopyToDevice(d->ctx, b->address + off, host, n), "bkCopyToDevice");
    }
    free(host);
    /* A driver may return from a pageable upload before its DMA lands;
     * make sure no timed kernel on our stream can overtake it. */
    char err[256];
    if (d->timing && cuda_timing_sync_context(d->timing, err, sizeof err) != 0)
        cuda_die("upload", err);
}

void *bench_device_download(struct bench_device *d, BkDeviceAddress src, uint64_t bytes)
{
    void *h = malloc(bytes ? bytes : 1);
    if (!h)
        tool_die("out of host memory");
    bench_device_wait(d);   /* the queue's stream is not one bkCopyFromDevice waits for */
    tool_check(bkCopyFromDevice(d->ctx, h, src, bytes), "bkCopyFromDevice");
    return h;
}
