/* SPDX-License-Identifier: Apache-2.0 */
/* Launching a plan's kernel: directly with cuLaunchKernelEx (what stream
 * capture records into the graphs of reusable command buffers), or through
 * a small executable graph of that one kernel that the plan keeps per
 * stream (one-time submits). On the H100s of bench/log/platform.md, updating
 * the node's parameters and cuGraphLaunch took 0.2-0.4 + 1.2-1.9 us of CPU
 * time where cuLaunchKernelEx took 2.5 to 3.1 us. cuGraphLaunch orders a
 * launch after earlier launches of the same executable graph, hence one
 * graph per stream: a plan used on several queues does not serialize them. */
#include "cuda_internal.h"

#include "workspace_clear.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

BkResult bk_cuda_plan_init(struct bk_cuda_plan *base, bk_cuda_prepare_fn prepare,
                           bk_cuda_enqueue_fn enqueue)
{
    base->prepare = prepare;
    base->enqueue = enqueue;
    if (pthread_mutex_init(&base->lock, NULL) != 0)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreatePlan: pthread_mutex_init failed");
    base->lock_ready = true;
    return BK_SUCCESS;
}

void *bk_cuda_plan_new(BkPlan plan, size_t size, bk_cuda_prepare_fn prepare,
                       bk_cuda_enqueue_fn enqueue, BkResult *res)
{
    struct bk_cuda_plan *base = bk_alloc(&plan->alloc, size);
    if (!base) {
        *res = bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreatePlan: out of host memory");
        return NULL;
    }
    memset(base, 0, size);
    plan->impl = base; /* released by plan_destroy, also when select fails */
    *res = bk_cuda_plan_init(base, prepare, enqueue);
    return *res == BK_SUCCESS ? base : NULL;
}

BkResult bk_cuda_find_functions(BkPlan plan, enum bk_cuda_module_id id, const char *const *names,
                                CUfunction *const *fns, int count)
{
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(plan->ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    for (int i = 0; i < count && res == BK_SUCCESS; i++)
        res = bk_cuda_function(plan->ctx, id, names[i], fns[i]);
    bk_cuda_leave(&scope);
    return res;
}

void bk_cuda_launch_set(struct bk_cuda_kernel_launch *l, CUfunction fn, unsigned int grid,
                        unsigned int grid_y, unsigned int grid_z, unsigned int block,
                        unsigned int shared_bytes, const char *name, const void *args, size_t size)
{
    l->fn = fn;
    l->grid = grid;
    l->grid_y = grid_y;
    l->grid_z = grid_z;
    l->block = block;
    l->shared_bytes = shared_bytes;
    l->name = name;
    l->param_size = size;
    memcpy(l->params, args, size);
}

void bk_cuda_launch_clear(struct bk_cuda_kernel_launch *l, CUfunction fn, const char *name,
                          uint64_t words_at, uint64_t words)
{
    const struct bk_workspace_clear_args a = { words_at, words };
    const uint64_t blocks = (words + BK_WORKSPACE_CLEAR_THREADS - 1) / BK_WORKSPACE_CLEAR_THREADS;
    bk_cuda_launch_set(l, fn,
                       (unsigned int)(blocks == 0 ? 1
                                      : blocks < BK_WORKSPACE_CLEAR_MAX_BLOCKS
                                          ? blocks
                                          : BK_WORKSPACE_CLEAR_MAX_BLOCKS),
                       1, 1, BK_WORKSPACE_CLEAR_THREADS, 0, name, &a, sizeof a);
}

uint64_t bk_cuda_launch_tag(void)
{
    static atomic_uint_least32_t count;
    const uint64_t n = atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    /* splitmix64 of the count, offset by where the library was loaded */
    uint64_t z = (uint64_t)(uintptr_t)&count + (n << 32) + n + 0x9E3779B97F4A7C15u;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return z ? z : 1;
}

void bk_cuda_plan_release(struct bk_cuda_plan *base)
{
    for (uint32_t i = 0; i < base->graph_count; i++) {
        (void)bk_cu.cuGraphExecDestroy(base->graphs[i].exec);
        (void)bk_cu.cuGraphDestroy(base->graphs[i].graph);
    }
    base->graph_count = 0;
    if (base->lock_ready)
        pthread_mutex_destroy(&base->lock);
    base->lock_ready = false;
}

/* Where the device has it, with programmatic stream serialization: the grid
 * may start while the kernel before it in the stream finishes, and libbk's
 * kernels wait for that one with griddepcontrol.wait before touching
 * memory. This shortens the gaps between kernels in graphs, and
 * cuLaunchKernelEx so configured also costs less CPU time than
 * cuLaunchKernel. */
/* A grid dimension left 0 is 1. */
static unsigned int dim(unsigned int d)
{
    return d ? d : 1;
}

BkResult bk_cuda_set_shared_bytes(CUfunction fn, unsigned int bytes, const char *name)
{
    if (bytes <= 48u * 1024u)
        return BK_SUCCESS;
    CUresult r = bk_cu.cuFuncSetAttribute(fn, BK_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          (int)bytes);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "cuFuncSetAttribute(%s, %u bytes of shared memory)",
                             name, bytes);
    return BK_SUCCESS;
}

BkResult bk_cuda_find_kernel(BkPlan plan, enum bk_cuda_module_id id, const char *name,
                             CUfunction *fn, unsigned int shared_bytes)
{
    const char *const names[] = { name };
    CUfunction *const fns[] = { fn };
    BkResult res = bk_cuda_find_functions(plan, id, names, fns, 1);
    if (res != BK_SUCCESS || shared_bytes <= 48u * 1024u)
        return res;
    struct bk_cuda_scope scope;
    if ((res = bk_cuda_enter(plan->ctx, &scope)) != BK_SUCCESS)
        return res;
    res = bk_cuda_set_shared_bytes(*fn, shared_bytes, name);
    bk_cuda_leave(&scope);
    return res;
}

int bk_cuda_max_active_clusters(BkPlan plan, CUfunction fn, unsigned int grid,
                                unsigned int grid_y, unsigned int grid_z, unsigned int block,
                                unsigned int shared_bytes)
{
    const CUlaunchConfig config = {
        .gridDimX = grid, .gridDimY = grid_y, .gridDimZ = grid_z,
        .blockDimX = block, .blockDimY = 1, .blockDimZ = 1,
        .sharedMemBytes = shared_bytes,
    };
    int fit = 0;
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(plan->ctx, &scope) == BK_SUCCESS) {
        if (bk_cu.cuOccupancyMaxActiveClusters(&fit, fn, &config) != BK_CUDA_SUCCESS)
            fit = 0;
        bk_cuda_leave(&scope);
    }
    return fit > 0 ? fit : 0;
}

uint64_t bk_cuda_max_resident_ctas(BkPlan plan, CUfunction fn, unsigned int block,
                                   unsigned int shared_bytes)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    int per_sm = 0;
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(plan->ctx, &scope) == BK_SUCCESS) {
        if (bk_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fn, (int)block,
                                                               shared_bytes) != BK_CUDA_SUCCESS)
            per_sm = 0;
        bk_cuda_leave(&scope);
    }
    return per_sm > 0 && c->sm_count > 0 ? (uint64_t)per_sm * (uint64_t)c->sm_count : 0;
}

BkResult bk_cuda_launch_direct(BkPlan plan, const struct bk_cuda_kernel_launch *launch,
                               CUstream stream, uint32_t cmd_index)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    void *params[] = { (void *)launch->params };
    CUresult r;
    if (!c->programmatic) {
        r = bk_cu.cuLaunchKernel(launch->fn, launch->grid, dim(launch->grid_y),
                                 dim(launch->grid_z), launch->block, 1, 1, launch->shared_bytes,
                                 stream, params, NULL);
    } else {
        CUlaunchAttribute attr = { .id = BK_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION };
        attr.value.programmaticStreamSerializationAllowed = 1;
        const CUlaunchConfig config = {
            .gridDimX = launch->grid, .gridDimY = dim(launch->grid_y),
            .gridDimZ = dim(launch->grid_z), .blockDimX = launch->block, .blockDimY = 1,
            .blockDimZ = 1, .sharedMemBytes = launch->shared_bytes, .hStream = stream,
            .attrs = &attr, .numAttrs = 1,
        };
        r = bk_cu.cuLaunchKernelEx(&config, launch->fn, params, NULL);
    }
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "bkQueueSubmit: command %u, launching %s (%u blocks)",
                             cmd_index, launch->name, launch->grid);
    return BK_SUCCESS;
}

static void node_params(const struct bk_cuda_kernel_launch *launch, void **params,
                        CUDA_KERNEL_NODE_PARAMS *p)
{
    memset(p, 0, sizeof *p);
    p->func = launch->fn;
    p->gridDimX = launch->grid;
    p->gridDimY = dim(launch->grid_y);
    p->gridDimZ = dim(launch->grid_z);
    p->blockDimX = launch->block;
    p->blockDimY = p->blockDimZ = 1;
    p->sharedMemBytes = launch->shared_bytes;
    p->kernelParams = params;
}

/* Records what the node of g now launches. */
static void remember(struct bk_cuda_node_graph *g, const struct bk_cuda_kernel_launch *launch)
{
    g->grid = launch->grid;
    g->grid_y = launch->grid_y;
    g->grid_z = launch->grid_z;
    g->shared_bytes = launch->shared_bytes;
    g->param_size = launch->param_size;
    memcpy(g->params, launch->params, launch->param_size);
}

/* The plan's graph for (stream, fn), made on first use; NULL when all
 * BK_CUDA_NODE_GRAPHS are taken or the driver could not make one (the
 * caller then launches directly, and after a failure always will). Called
 * with base->lock held. */
static struct bk_cuda_node_graph *node_graph(struct bk_cuda_plan *base,
                                             const struct bk_cuda_kernel_launch *launch,
                                             CUstream stream)
{
    for (uint32_t i = 0; i < base->graph_count; i++)
        if (base->graphs[i].stream == stream && base->graphs[i].fn == launch->fn)
            return &base->graphs[i];
    if (base->graphs_off || base->graph_count == BK_CUDA_NODE_GRAPHS)
        return NULL;
    struct bk_cuda_node_graph *g = &base->graphs[base->graph_count];
    void *params[] = { (void *)launch->params };
    CUDA_KERNEL_NODE_PARAMS p;
    node_params(launch, params, &p);
    g->stream = stream;
    g->fn = launch->fn;
    base->graphs_off = true;
    if (bk_cu.cuGraphCreate(&g->graph, 0) != BK_CUDA_SUCCESS)
        return NULL;
    if (bk_cu.cuGraphAddKernelNode(&g->node, g->graph, NULL, 0, &p) != BK_CUDA_SUCCESS ||
        bk_cu.cuGraphInstantiateWithFlags(&g->exec, g->graph, 0) != BK_CUDA_SUCCESS) {
        (void)bk_cu.cuGraphDestroy(g->graph);
        return NULL;
    }
    base->graphs_off = false;
    remember(g, launch);
    base->graph_count++;
    return g;
}

BkResult bk_cuda_launch_cached(BkPlan plan, const struct bk_cuda_kernel_launch *launch,
                               CUstream stream, uint32_t cmd_index)
{
    /* Into a stream that the caller is capturing (a CUDA graph of their
     * own), launch as a kernel would be: that is what they record. */
    int capture = BK_CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r = bk_cu.cuStreamIsCapturing(stream, &capture);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "bkQueueSubmit: command %u: cuStreamIsCapturing",
                             cmd_index);
    if (capture != BK_CU_STREAM_CAPTURE_STATUS_NONE)
        return bk_cuda_launch_direct(plan, launch, stream, cmd_index);

    struct bk_cuda_plan *base = plan->impl;
    pthread_mutex_lock(&base->lock);
    struct bk_cuda_node_graph *g = node_graph(base, launch, stream);
    if (!g) {
        pthread_mutex_unlock(&base->lock);
        return bk_cuda_launch_direct(plan, launch, stream, cmd_index);
    }
    /* A loop that runs a plan on the same buffers needs no update. Updates
     * reach later launches only, so one in flight keeps its own. */
    const char *call = "cuGraphExecKernelNodeSetParams";
    if (g->grid != launch->grid || g->grid_y != launch->grid_y || g->grid_z != launch->grid_z ||
        g->shared_bytes != launch->shared_bytes || g->param_size != launch->param_size ||
        memcmp(g->params, launch->params, launch->param_size) != 0) {
        void *params[] = { (void *)launch->params };
        CUDA_KERNEL_NODE_PARAMS p;
        node_params(launch, params, &p);
        r = bk_cu.cuGraphExecKernelNodeSetParams(g->exec, g->node, &p);
        if (r == BK_CUDA_SUCCESS)
            remember(g, launch);
    }
    if (r == BK_CUDA_SUCCESS) {
        call = "cuGraphLaunch";
        r = bk_cu.cuGraphLaunch(g->exec, stream);
    }
    pthread_mutex_unlock(&base->lock);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS,
                             "bkQueueSubmit: command %u, launching %s (%u blocks): %s", cmd_index,
                             launch->name, launch->grid, call);
    return BK_SUCCESS;
}
