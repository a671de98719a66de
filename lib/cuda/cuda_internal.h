/* The CUDA backend's objects and the helpers its files share. */
#ifndef BK_CUDA_INTERNAL_H
#define BK_CUDA_INTERNAL_H

#include "cuda_driver.h"

#include <pthread.h>

/* Streams per context (BkDeviceProperties.queueCount). */
#define BK_CUDA_QUEUE_COUNT 4u

/* Kernel modules, one per ptx/NAME.cu, loaded into a context on first use. */
enum bk_cuda_module_id {
    BK_CUDA_MODULE_GATED_FORWARD,
    BK_CUDA_MODULE_GATED_BACKWARD,
    BK_CUDA_MODULE_COUNT
};

/* BkContext.impl */
struct bk_cuda_context {
    CUdevice device;
    CUcontext primary;                    /* the device's primary context, retained */
    int sm_count;
    bool programmatic;                    /* kernels use programmatic dependent launch */
    pthread_mutex_t lock;                 /* guards module loading and graph capture */
    CUmodule module[BK_CUDA_MODULE_COUNT];
    CUstream capture;                     /* where reusable command buffers are captured */
};

/* The primary context current on the calling thread from enter to leave:
 * pushed only when another one is current, so the common case costs one
 * cuCtxGetCurrent. */
struct bk_cuda_scope {
    bool pushed;
};

static inline BkResult bk_cuda_enter(BkContext ctx, struct bk_cuda_scope *scope)
{
    const struct bk_cuda_context *c = ctx->impl;
    CUcontext current = NULL;
    scope->pushed = false;
    CUresult r = bk_cu.cuCtxGetCurrent(&current);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "cuCtxGetCurrent");
    if (current == c->primary)
        return BK_SUCCESS;
    r = bk_cu.cuCtxPushCurrent(c->primary);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "cuCtxPushCurrent");
    scope->pushed = true;
    return BK_SUCCESS;
}

static inline void bk_cuda_leave(const struct bk_cuda_scope *scope)
{
    if (scope->pushed) {
        CUcontext popped;
        (void)bk_cu.cuCtxPopCurrent(&popped);
    }
}

static inline CUstream bk_cuda_stream(BkQueue queue)
{
    return (CUstream)queue->impl;
}

/* ---- Modules (cuda_module.c) ------------------------------------------ */
/* The kernel called name in module id, loading the module into the context
 * first if needed (BK_ERROR_MODULE_LOAD_FAILED when it is corrupt, missing
 * or has no code for the device). The context must be current. */
BK_HIDDEN BkResult bk_cuda_function(BkContext ctx, enum bk_cuda_module_id id, const char *name,
                                    CUfunction *fn);
BK_HIDDEN void bk_cuda_modules_unload(struct bk_cuda_context *c);

/* ---- Plans -------------------------------------------------------------- */
/* Every CUDA plan's impl begins with this, so that submission can launch any
 * op on any stream: the queue's, or the capture stream of a graph. */
typedef BkResult (*bk_cuda_launch_fn)(CUstream stream, BkPlan plan, const struct bk_run_args *args);

/* Launches fn with one parameter block on stream. Where the device has it,
 * with programmatic stream serialization: the grid may start while the
 * kernel before it in the stream finishes, and libbk's kernels wait for
 * that one with griddepcontrol.wait before touching memory. This shortens
 * the gaps between kernels in graphs, and cuLaunchKernelEx so configured
 * also costs less CPU time than cuLaunchKernel (bench/RESULTS.md). */
static inline CUresult bk_cuda_launch(const struct bk_cuda_context *c, CUfunction fn,
                                      unsigned int grid, unsigned int block, CUstream stream,
                                      void **params)
{
    if (!c->programmatic)
        return bk_cu.cuLaunchKernel(fn, grid, 1, 1, block, 1, 1, 0, stream, params, NULL);
    CUlaunchAttribute attr = { .id = BK_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION };
    attr.value.programmaticStreamSerializationAllowed = 1;
    const CUlaunchConfig config = {
        .gridDimX = grid, .gridDimY = 1, .gridDimZ = 1,
        .blockDimX = block, .blockDimY = 1, .blockDimZ = 1,
        .hStream = stream, .attrs = &attr, .numAttrs = 1,
    };
    return bk_cu.cuLaunchKernelEx(&config, fn, params, NULL);
}
struct bk_cuda_plan {
    bk_cuda_launch_fn launch;
};

/* plan->launch of every CUDA plan: launches on the queue's stream. */
BK_HIDDEN BkResult bk_cuda_launch_on_queue(BkQueue queue, BkPlan plan,
                                           const struct bk_run_args *args);

BK_HIDDEN BkResult bk_cuda_gated_select(BkPlan plan);   /* cuda_gated.c */

/* ---- Submission (cuda_submit.c) --------------------------------------- */
BK_HIDDEN BkResult bk_cuda_submit(BkQueue queue, BkCommandBuffer cmd);
BK_HIDDEN void bk_cuda_command_buffer_reset(BkCommandBuffer cmd);

#endif /* BK_CUDA_INTERNAL_H */
