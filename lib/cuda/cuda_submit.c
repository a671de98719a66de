/* SPDX-License-Identifier: Apache-2.0 */
/* Submission: a one-time command buffer is enqueued command by command on
 * the queue's stream (kernels through each plan's one-kernel graphs, see
 * cuda_launch.c); a reusable one is captured once into a CUDA graph (on the
 * context's capture stream) and the graph is replayed on the queue's
 * stream at each submit, about one launch for the whole buffer. */
#include "cuda_internal.h"

struct cuda_graph {
    CUgraphExec exec;
};

/* Enqueues one run of plan: its library call, or its kernels in order. */
static BkResult run(BkPlan plan, const struct bk_run_args *args, CUstream stream, bool capturing,
                    uint32_t cmd_index)
{
    const struct bk_cuda_plan *p = plan->impl;
    if (p->enqueue)
        return p->enqueue(plan, args, stream, cmd_index);
    struct bk_cuda_kernel_launch launch[BK_CUDA_MAX_LAUNCHES];
    const uint32_t count = p->prepare(plan, args, launch);
    for (uint32_t k = 0; k < count; k++) {
        BkResult res = capturing ? bk_cuda_launch_direct(plan, &launch[k], stream, cmd_index)
                                 : bk_cuda_launch_cached(plan, &launch[k], stream, cmd_index);
        if (res != BK_SUCCESS)
            return res;
    }
    return BK_SUCCESS;
}

/* Enqueues the commands of cmd on stream, in order; capturing: into a
 * graph being captured, where kernels are launched directly. */
static BkResult enqueue(CUstream stream, BkCommandBuffer cmd, bool capturing)
{
    for (uint32_t i = 0; i < cmd->count; i++) {
        const struct bk_command *c = &cmd->cmds[i];
        CUresult r;
        switch (c->type) {
        case BK_CMD_RUN: {
            BkResult res = run(c->u.run.plan, &c->u.run.args, stream, capturing, i);
            if (res != BK_SUCCESS)
                return res;
            break;
        }
        case BK_CMD_COPY:
            r = bk_cu.cuMemcpyAsync((CUdeviceptr)c->u.copy.dst, (CUdeviceptr)c->u.copy.src,
                                    (size_t)c->u.copy.size, stream);
            if (r != BK_CUDA_SUCCESS)
                return bk_cuda_error(r, BK_SUCCESS,
                                     "bkQueueSubmit: command %u, a copy of %llu bytes from 0x%llx "
                                     "to 0x%llx: cuMemcpyAsync", i,
                                     (unsigned long long)c->u.copy.size,
                                     (unsigned long long)c->u.copy.src,
                                     (unsigned long long)c->u.copy.dst);
            break;
        case BK_CMD_FILL:
            r = bk_cu.cuMemsetD32Async((CUdeviceptr)c->u.fill.dst, c->u.fill.pattern,
                                       (size_t)(c->u.fill.size / 4), stream);
            if (r != BK_CUDA_SUCCESS)
                return bk_cuda_error(r, BK_SUCCESS,
                                     "bkQueueSubmit: command %u, a fill of %llu bytes at 0x%llx: "
                                     "cuMemsetD32Async", i, (unsigned long long)c->u.fill.size,
                                     (unsigned long long)c->u.fill.dst);
            break;
        }
    }
    return BK_SUCCESS;
}

/* Records cmd into a graph and instantiates it. One capture at a time per
 * context, as they share the capture stream. */
static BkResult build_graph(BkCommandBuffer cmd, CUgraphExec *exec)
{
    struct bk_cuda_context *c = cmd->ctx->impl;
    CUgraph graph = NULL;
    pthread_mutex_lock(&c->lock);
    CUresult r = bk_cu.cuStreamBeginCapture(c->capture, BK_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    if (r != BK_CUDA_SUCCESS) {
        pthread_mutex_unlock(&c->lock);
        return bk_cuda_error(r, BK_SUCCESS, "bkQueueSubmit: cuStreamBeginCapture");
    }
    BkResult res = enqueue(c->capture, cmd, true);
    r = bk_cu.cuStreamEndCapture(c->capture, &graph);
    pthread_mutex_unlock(&c->lock);
    if (res == BK_SUCCESS && r != BK_CUDA_SUCCESS)
        res = bk_cuda_error(r, BK_SUCCESS, "bkQueueSubmit: cuStreamEndCapture");
    if (res == BK_SUCCESS) {
        r = bk_cu.cuGraphInstantiateWithFlags(exec, graph, 0);
        if (r != BK_CUDA_SUCCESS)
            res = bk_cuda_error(r, BK_SUCCESS, "bkQueueSubmit: cuGraphInstantiateWithFlags");
    }
    if (graph)
        (void)bk_cu.cuGraphDestroy(graph);
    return res;
}

BkResult bk_cuda_submit(BkQueue queue, BkCommandBuffer cmd)
{
    if (cmd->count == 0)
        return BK_SUCCESS;
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(queue->ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    CUstream stream = bk_cuda_stream(queue);
    if (cmd->usage == BK_COMMAND_BUFFER_USAGE_REUSABLE) {
        struct cuda_graph *g = cmd->impl;
        if (!g) {
            g = bk_alloc(&cmd->alloc, sizeof *g);
            if (!g)
                res = bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkQueueSubmit: out of host memory");
            else if ((res = build_graph(cmd, &g->exec)) != BK_SUCCESS)
                bk_free(&cmd->alloc, g);
            else
                cmd->impl = g;
        }
        if (res == BK_SUCCESS) {
            CUresult r = bk_cu.cuGraphLaunch(g->exec, stream);
            if (r != BK_CUDA_SUCCESS)
                res = bk_cuda_error(r, BK_SUCCESS, "bkQueueSubmit: cuGraphLaunch");
        }
    } else {
        res = enqueue(stream, cmd, false);
    }
    bk_cuda_leave(&scope);
    return res;
}

void bk_cuda_command_buffer_reset(BkCommandBuffer cmd)
{
    struct cuda_graph *g = cmd->impl;
    if (!g)
        return;
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(cmd->ctx, &scope) == BK_SUCCESS) {
        (void)bk_cu.cuGraphExecDestroy(g->exec);
        bk_cuda_leave(&scope);
    }
    bk_free(&cmd->alloc, g);
    cmd->impl = NULL;
}
