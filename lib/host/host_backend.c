/* SPDX-License-Identifier: Apache-2.0 */
/* The host device: memory is host memory, queues execute command buffers
 * in C, in order, before bkQueueSubmit returns. */
#include "host_internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HOST_QUEUE_COUNT 16u
#define HOST_MEMORY_ALIGNMENT 256u

static void host_properties(BkDeviceProperties *p)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    p->deviceType = BK_DEVICE_TYPE_HOST;
    p->deviceIndex = 0;
    snprintf(p->name, sizeof p->name, "host (%ld CPUs, C backend)", cpus > 0 ? cpus : 1);
    p->computeCapabilityMajor = p->computeCapabilityMinor = 0;
    p->multiprocessorCount = cpus > 0 ? (uint32_t)cpus : 1;
    p->queueCount = HOST_QUEUE_COUNT;
    p->totalMemory = pages > 0 && page_size > 0 ? (uint64_t)pages * (uint64_t)page_size : 0;
    p->driverVersion = p->runtimeVersion = 0;
}

static BkResult host_enumerate(uint32_t *count, BkDeviceProperties *props)
{
    if (props && *count >= 1)
        host_properties(&props[0]);
    *count = 1;
    return BK_SUCCESS;
}

static BkResult host_context_create(BkContext ctx, uint32_t device_index)
{
    if (device_index != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkContextCreateInfo.deviceIndex = %u must be 0: there is one host device",
                        device_index);
    host_properties(&ctx->props);
    ctx->queue_count = HOST_QUEUE_COUNT;
    return BK_SUCCESS;
}

static void host_context_destroy(BkContext ctx)
{
    (void)ctx;
}

static BkResult host_memory_allocate(BkContext ctx, BkMemory mem)
{
    if (mem->size > SIZE_MAX - HOST_MEMORY_ALIGNMENT)
        return bk_error(BK_ERROR_OUT_OF_DEVICE_MEMORY,
                        "bkAllocateMemory: BkMemoryAllocateInfo.size = %llu bytes do not fit in "
                        "host memory",
                        (unsigned long long)mem->size);
    void *p = bk_alloc_aligned(&mem->alloc, (size_t)mem->size, HOST_MEMORY_ALIGNMENT);
    (void)ctx;
    /* The host device's memory is host memory: running out of it is running
     * out of device memory for this device. */
    if (!p)
        return bk_error(BK_ERROR_OUT_OF_DEVICE_MEMORY,
                        "bkAllocateMemory: BkMemoryAllocateInfo.size = %llu bytes could not be "
                        "allocated in host memory",
                        (unsigned long long)mem->size);
    mem->impl = p;
    mem->address = (BkDeviceAddress)(uintptr_t)p;
    return BK_SUCCESS;
}

static void host_memory_free(BkContext ctx, BkMemory mem)
{
    (void)ctx;
    bk_free(&mem->alloc, mem->impl);
}

static BkResult host_copy_to_device(BkContext ctx, BkDeviceAddress dst, const void *src,
                                    uint64_t size)
{
    (void)ctx;
    memmove((void *)(uintptr_t)dst, src, (size_t)size);
    return BK_SUCCESS;
}

static BkResult host_copy_from_device(BkContext ctx, void *dst, BkDeviceAddress src,
                                      uint64_t size)
{
    (void)ctx;
    memmove(dst, (const void *)(uintptr_t)src, (size_t)size);
    return BK_SUCCESS;
}

static BkResult host_queue_create(BkQueue queue)
{
    (void)queue;
    return BK_SUCCESS;
}

static void host_queue_destroy(BkQueue queue)
{
    (void)queue;
}

static BkResult host_queue_wait_idle(BkQueue queue)
{
    (void)queue; /* work is done by the time bkQueueSubmit returns */
    return BK_SUCCESS;
}

static void fill32(BkDeviceAddress dst, uint64_t size, uint32_t pattern)
{
    unsigned char *p = (unsigned char *)(uintptr_t)dst;
    for (uint64_t i = 0; i < size; i += 4)
        memcpy(p + i, &pattern, 4);
}

static BkResult host_submit(BkQueue queue, BkCommandBuffer cmd)
{
    for (uint32_t i = 0; i < cmd->count; i++) {
        const struct bk_command *c = &cmd->cmds[i];
        BkResult r = BK_SUCCESS;
        switch (c->type) {
        case BK_CMD_RUN:
            r = c->u.run.plan->launch(queue, c->u.run.plan, &c->u.run.args);
            break;
        case BK_CMD_COPY:
            memcpy((void *)(uintptr_t)c->u.copy.dst, (const void *)(uintptr_t)c->u.copy.src,
                   (size_t)c->u.copy.size);
            break;
        case BK_CMD_FILL:
            fill32(c->u.fill.dst, c->u.fill.size, c->u.fill.pattern);
            break;
        }
        if (r != BK_SUCCESS)
            return r;
    }
    return BK_SUCCESS;
}

static void host_command_buffer_reset(BkCommandBuffer cmd)
{
    cmd->impl = NULL;
}

/* Kernel selection per op, the op registry's host column. */
BK_OP_SELECT_TABLE(host_select, BK_OP_HOST_SELECT);

static BkResult host_plan_select(BkPlan plan)
{
    if (!host_select[plan->op])
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: not implemented on the host backend",
                        plan->op_name);
    return host_select[plan->op](plan);
}

/* A host plan's own state, if any (the gated tables), is one block from
 * the plan's allocator. */
static void host_plan_destroy(BkPlan plan)
{
    bk_free(&plan->alloc, plan->impl);
    plan->impl = NULL;
}

const struct bk_backend bk_host_backend = {
    .type = BK_DEVICE_TYPE_HOST,
    .name = "host",
    .enumerate = host_enumerate,
    .context_create = host_context_create,
    .context_destroy = host_context_destroy,
    .memory_allocate = host_memory_allocate,
    .memory_free = host_memory_free,
    .copy_to_device = host_copy_to_device,
    .copy_from_device = host_copy_from_device,
    .queue_create = host_queue_create,
    .queue_import = NULL,
    .queue_destroy = host_queue_destroy,
    .queue_wait_idle = host_queue_wait_idle,
    .submit = host_submit,
    .command_buffer_reset = host_command_buffer_reset,
    .plan_select = host_plan_select,
    .plan_destroy = host_plan_destroy,
    .sparse24_prepared_size = bk_host_sparse24_prepared_size,
};
