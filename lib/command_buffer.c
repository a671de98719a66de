/* SPDX-License-Identifier: Apache-2.0 */
/* Command buffers: recording, the state machine, copies and fills, and
 * submission to a queue. bkCmdRun is in plan.c. */
#include "bk_internal.h"

#include <string.h>

BkResult bk_command_buffer_check_recording(BkCommandBuffer cmd, const char *fn)
{
    if (!cmd)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: commandBuffer is NULL", fn);
    if (cmd->state != BK_CMDBUF_RECORDING)
        return bk_error(BK_ERROR_INVALID_STATE,
                        "%s: the command buffer is not recording (call bkBeginCommandBuffer first)",
                        fn);
    return BK_SUCCESS;
}

/* Space for one more command; the caller fills it in and commits it by
 * incrementing cmd->count once every check passed. */
static struct bk_command *next_slot(BkCommandBuffer cmd, const char *fn)
{
    if (cmd->count == cmd->capacity) {
        uint32_t cap = cmd->capacity ? cmd->capacity * 2 : 8;
        struct bk_command *cmds = bk_alloc(&cmd->alloc, sizeof *cmds * cap);
        if (!cmds) {
            bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
            return NULL;
        }
        if (cmd->count)
            memcpy(cmds, cmd->cmds, sizeof *cmds * cmd->count);
        bk_free(&cmd->alloc, cmd->cmds);
        cmd->cmds = cmds;
        cmd->capacity = cap;
    }
    return &cmd->cmds[cmd->count];
}

BkResult bk_command_buffer_append(BkCommandBuffer cmd, const struct bk_command *c, const char *fn)
{
    struct bk_command *slot = next_slot(cmd, fn);
    if (!slot)
        return BK_ERROR_OUT_OF_HOST_MEMORY;
    *slot = *c;
    cmd->count++;
    return BK_SUCCESS;
}

BK_API BkResult bkAllocateCommandBuffer(BkContext context, const BkAllocationCallbacks *pAllocator,
                                        BkCommandBuffer *pCommandBuffer)
{
    if (!pCommandBuffer)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkAllocateCommandBuffer: pCommandBuffer is NULL");
    *pCommandBuffer = BK_NULL_HANDLE;
    if (!context)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkAllocateCommandBuffer: context is NULL");
    BkResult r = bk_check_allocator(pAllocator, "bkAllocateCommandBuffer");
    if (r != BK_SUCCESS)
        return r;
    const BkAllocationCallbacks *alloc = pAllocator ? pAllocator : &context->alloc;
    BkCommandBuffer cmd = bk_alloc(alloc, sizeof *cmd);
    if (!cmd)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkAllocateCommandBuffer: out of host memory");
    cmd->ctx = context;
    cmd->alloc = *alloc;
    cmd->state = BK_CMDBUF_INITIAL;
    *pCommandBuffer = cmd;
    return BK_SUCCESS;
}

static void reset(BkCommandBuffer cmd)
{
    if (cmd->impl)
        cmd->ctx->backend->command_buffer_reset(cmd);
    cmd->count = 0;
    cmd->state = BK_CMDBUF_INITIAL;
}

BK_API void bkFreeCommandBuffer(BkCommandBuffer commandBuffer)
{
    if (!commandBuffer)
        return;
    reset(commandBuffer);
    BkAllocationCallbacks alloc = commandBuffer->alloc;
    bk_free(&alloc, commandBuffer->cmds);
    bk_free(&alloc, commandBuffer);
}

BK_API BkResult bkBeginCommandBuffer(BkCommandBuffer commandBuffer,
                                     const BkCommandBufferBeginInfo *pBeginInfo)
{
    if (!commandBuffer)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkBeginCommandBuffer: commandBuffer is NULL");
    if (!pBeginInfo)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkBeginCommandBuffer: pBeginInfo is NULL");
    BkResult r = bk_check_stype(pBeginInfo, BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                "BkCommandBufferBeginInfo");
    if (r != BK_SUCCESS)
        return r;
    if (pBeginInfo->usage != BK_COMMAND_BUFFER_USAGE_ONE_TIME &&
        pBeginInfo->usage != BK_COMMAND_BUFFER_USAGE_REUSABLE)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkCommandBufferBeginInfo.usage = %d is not a BkCommandBufferUsage",
                        (int)pBeginInfo->usage);
    if (commandBuffer->state == BK_CMDBUF_RECORDING)
        return bk_error(BK_ERROR_INVALID_STATE,
                        "bkBeginCommandBuffer: the command buffer is already recording");
    reset(commandBuffer);
    commandBuffer->usage = pBeginInfo->usage;
    commandBuffer->state = BK_CMDBUF_RECORDING;
    return BK_SUCCESS;
}

BK_API BkResult bkEndCommandBuffer(BkCommandBuffer commandBuffer)
{
    BkResult r = bk_command_buffer_check_recording(commandBuffer, "bkEndCommandBuffer");
    if (r != BK_SUCCESS)
        return r;
    commandBuffer->state = BK_CMDBUF_EXECUTABLE;
    return BK_SUCCESS;
}

BK_API BkResult bkQueueSubmit(BkQueue queue, uint32_t commandBufferCount,
                              const BkCommandBuffer *pCommandBuffers)
{
    if (!queue)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkQueueSubmit: queue is NULL");
    if (commandBufferCount == 0)
        return BK_SUCCESS;
    if (!pCommandBuffers)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkQueueSubmit: pCommandBuffers is NULL");
    /* Check all before running any, so a bad entry submits nothing. */
    for (uint32_t i = 0; i < commandBufferCount; i++) {
        BkCommandBuffer cmd = pCommandBuffers[i];
        if (!cmd)
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkQueueSubmit: pCommandBuffers[%u] is NULL",
                            i);
        if (cmd->ctx != queue->ctx)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "bkQueueSubmit: pCommandBuffers[%u] belongs to another context than "
                            "queue", i);
        if (cmd->state != BK_CMDBUF_EXECUTABLE)
            return bk_error(BK_ERROR_INVALID_STATE,
                            "bkQueueSubmit: pCommandBuffers[%u] is not executable (%s)", i,
                            cmd->state == BK_CMDBUF_RECORDING
                                ? "still recording: call bkEndCommandBuffer"
                                : "not recorded, or a one-time buffer already submitted");
        /* A one-time buffer runs once per recording, also within one submit. */
        if (cmd->usage == BK_COMMAND_BUFFER_USAGE_ONE_TIME)
            for (uint32_t j = 0; j < i; j++)
                if (pCommandBuffers[j] == cmd)
                    return bk_error(BK_ERROR_INVALID_STATE,
                                    "bkQueueSubmit: pCommandBuffers[%u] is the one-time buffer "
                                    "already at pCommandBuffers[%u]: it runs once per recording",
                                    i, j);
    }
    for (uint32_t i = 0; i < commandBufferCount; i++) {
        BkCommandBuffer cmd = pCommandBuffers[i];
        BkResult r = queue->ctx->backend->submit(queue, cmd);
        if (cmd->usage == BK_COMMAND_BUFFER_USAGE_ONE_TIME)
            reset(cmd);
        if (r != BK_SUCCESS)
            return r;
    }
    return BK_SUCCESS;
}

BK_API BkResult bkCmdCopyMemory(BkCommandBuffer commandBuffer, BkDeviceAddress dst,
                                BkDeviceAddress src, uint64_t size)
{
    static const char fn[] = "bkCmdCopyMemory";
    BkResult r = bk_command_buffer_check_recording(commandBuffer, fn);
    if (r != BK_SUCCESS || size == 0)
        return r;
    if (!dst || !src)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: %s is 0", fn, dst ? "src" : "dst");
    if (dst + size < dst || src + size < src)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: size = %llu wraps the address space", fn,
                        (unsigned long long)size);
    if (bk_ranges_overlap(dst, size, src, size))
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: the dst and src ranges overlap", fn);
    if ((r = bk_memory_check_range(commandBuffer->ctx, fn, "dst", dst, size)) != BK_SUCCESS ||
        (r = bk_memory_check_range(commandBuffer->ctx, fn, "src", src, size)) != BK_SUCCESS)
        return r;
    struct bk_command c = { .type = BK_CMD_COPY };
    c.u.copy.dst = dst;
    c.u.copy.src = src;
    c.u.copy.size = size;
    return bk_command_buffer_append(commandBuffer, &c, fn);
}

BK_API BkResult bkCmdFillMemory(BkCommandBuffer commandBuffer, BkDeviceAddress dst,
                                uint64_t size, uint32_t pattern)
{
    static const char fn[] = "bkCmdFillMemory";
    BkResult r = bk_command_buffer_check_recording(commandBuffer, fn);
    if (r != BK_SUCCESS || size == 0)
        return r;
    if (!dst)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: dst is 0", fn);
    if (size % 4)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: size = %llu must be a multiple of 4", fn,
                        (unsigned long long)size);
    if (dst % 4)
        return bk_error(BK_ERROR_MISALIGNED_OPERAND, "%s: dst = 0x%llx must be 4-byte aligned", fn,
                        (unsigned long long)dst);
    if (dst + size < dst)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: size = %llu wraps the address space", fn,
                        (unsigned long long)size);
    if ((r = bk_memory_check_range(commandBuffer->ctx, fn, "dst", dst, size)) != BK_SUCCESS)
        return r;
    struct bk_command c = { .type = BK_CMD_FILL };
    c.u.fill.dst = dst;
    c.u.fill.size = size;
    c.u.fill.pattern = pattern;
    return bk_command_buffer_append(commandBuffer, &c, fn);
}
