/* SPDX-License-Identifier: Apache-2.0 */
/* Queues: the context's own, imported native ones, one-call runs and
 * waiting. */
#include "bk_internal.h"

BK_API BkResult bkGetQueue(BkContext context, uint32_t queueIndex, BkQueue *pQueue)
{
    if (!pQueue)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetQueue: pQueue is NULL");
    *pQueue = BK_NULL_HANDLE;
    if (!context)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetQueue: context is NULL");
    if (queueIndex >= context->queue_count)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "bkGetQueue: queueIndex = %u must be less than the device's queueCount %u",
                        queueIndex, context->queue_count);
    *pQueue = context->queues[queueIndex];
    return BK_SUCCESS;
}

BK_API BkResult bkImportQueue(BkContext context, void *pNativeQueue, BkQueue *pQueue)
{
    if (!pQueue)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkImportQueue: pQueue is NULL");
    *pQueue = BK_NULL_HANDLE;
    if (!context)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkImportQueue: context is NULL");
    if (!context->backend->queue_import)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "bkImportQueue: the %s device has no native queues to import",
                        context->backend->name);
    BkQueue q = bk_alloc(&context->alloc, sizeof *q);
    if (!q)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkImportQueue: out of host memory");
    q->ctx = context;
    q->index = UINT32_MAX;
    q->imported = true;
    BkResult r = context->backend->queue_import(q, pNativeQueue);
    if (r != BK_SUCCESS) {
        bk_free(&context->alloc, q);
        return r;
    }
    *pQueue = q;
    return BK_SUCCESS;
}

BK_API void bkDestroyQueue(BkQueue queue)
{
    if (!queue)
        return;
    if (!queue->imported) {
        bk_error(BK_ERROR_INVALID_ARGUMENT,
                 "bkDestroyQueue: queue %u belongs to its context (from bkGetQueue); only "
                 "imported queues are destroyed", queue->index);
        return;
    }
    BkContext ctx = queue->ctx;
    ctx->backend->queue_destroy(queue);
    bk_free(&ctx->alloc, queue);
}

BK_API BkResult bkQueueWaitIdle(BkQueue queue)
{
    if (!queue)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkQueueWaitIdle: queue is NULL");
    return queue->ctx->backend->queue_wait_idle(queue);
}

/* One run through the path of a one-time bkQueueSubmit, with a command
 * buffer of one command on the stack: nothing is allocated, so the call
 * cannot fail for memory, and the backend sees what it always sees. */
BK_API BkResult bkQueueRun(BkQueue queue, BkPlan plan, const BkRunInfo *pRunInfo)
{
    if (!queue)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkQueueRun: queue is NULL");
    BkContext ctx = queue->ctx;
    struct bk_command c;
    BkResult r = bk_plan_run_command(ctx, plan, pRunInfo, "bkQueueRun", "queue", &c);
    if (r != BK_SUCCESS)
        return r;
    struct BkCommandBuffer_T cmd = {
        .ctx = ctx,
        .alloc = ctx->alloc,
        .state = BK_CMDBUF_EXECUTABLE,
        .usage = BK_COMMAND_BUFFER_USAGE_ONE_TIME,
        .cmds = &c,
        .count = 1,
        .capacity = 1,
    };
    r = ctx->backend->submit(queue, &cmd);
    if (cmd.impl)
        ctx->backend->command_buffer_reset(&cmd);
    return r;
}
