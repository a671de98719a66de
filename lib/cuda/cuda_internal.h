/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA backend's objects and the helpers its files share. */
#ifndef BK_CUDA_INTERNAL_H
#define BK_CUDA_INTERNAL_H

#include "cuda_driver.h"
#include "cuda_modules.h"

#include <pthread.h>

/* Streams per context (BkDeviceProperties.queueCount). */
#define BK_CUDA_QUEUE_COUNT 4u

/* Kernel modules, one per row of cuda_modules.h, loaded into a context
 * on first use. */
#define BK_CUDA_MODULE_ENUM(id, name, archs) BK_CUDA_MODULE_##id,
enum bk_cuda_module_id { BK_CUDA_MODULES(BK_CUDA_MODULE_ENUM) BK_CUDA_MODULE_COUNT };
#undef BK_CUDA_MODULE_ENUM

/* BkContext.impl */
struct bk_cuda_context {
    CUdevice device;
    CUcontext primary;                    /* the device's primary context, retained */
    int sm_count;
    unsigned int shared_optin;            /* shared memory a CTA may opt in to, bytes */
    bool programmatic;                    /* kernels use programmatic dependent launch */
    pthread_mutex_t lock;                 /* guards module loading and graph capture */
    CUmodule module[BK_CUDA_MODULE_COUNT];
    CUstream capture;                     /* where reusable command buffers are captured */
    void *cublaslt;                       /* cuBLASLt handle: made by the first GEMM plan */
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
/* Destroys the context's cuBLASLt handle, if any (cuda_cublaslt.c); the
 * context must be current. */
BK_HIDDEN void bk_cuda_cublaslt_destroy(struct bk_cuda_context *c);

/* ---- Plans -------------------------------------------------------------- */
/* One kernel launch of a plan: the function, the grid, the block, dynamic
 * shared memory and the parameter block (the kernel's only parameter). */
#define BK_CUDA_MAX_PARAM_BYTES 2048
#define BK_CUDA_MAX_LAUNCHES 5            /* kernels one run of a plan may launch */
struct bk_cuda_kernel_launch {
    CUfunction fn;
    unsigned int grid, grid_y, grid_z;    /* grid_y, grid_z: 0 reads as 1 */
    unsigned int block;
    unsigned int shared_bytes;            /* dynamic shared memory */
    const char *name;                     /* the kernel's name, for messages */
    size_t param_size;                    /* bytes of params in use */
    _Alignas(16) unsigned char params[BK_CUDA_MAX_PARAM_BYTES];
};
/* Fills in the launches of plan for the run's bindings, in order, and
 * returns how many (0: nothing to do, e.g. an empty problem). */
typedef uint32_t (*bk_cuda_prepare_fn)(BkPlan plan, const struct bk_run_args *args,
                                       struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES]);
/* Enqueues a run on stream by other means than libbk's own kernels (a
 * library such as cuBLASLt); must also work while the stream is being
 * captured. The context is current. */
typedef BkResult (*bk_cuda_enqueue_fn)(BkPlan plan, const struct bk_run_args *args,
                                       CUstream stream, uint32_t cmd_index);

/* An executable graph of one kernel node, replayed by one-time submits of a
 * plan on one stream with one function (cuda_launch.c). */
struct bk_cuda_node_graph {
    CUstream stream;
    CUfunction fn;
    CUgraph graph;                        /* owns node; kept for parameter updates */
    CUgraphNode node;
    CUgraphExec exec;
    unsigned int grid, grid_y, grid_z;    /* the node's launch shape and parameters now */
    unsigned int shared_bytes;
    size_t param_size;
    _Alignas(16) unsigned char params[BK_CUDA_MAX_PARAM_BYTES];
};
#define BK_CUDA_NODE_GRAPHS 5             /* per plan: (stream, kernel) pairs cached */

/* Frees what an op's impl holds beyond struct bk_cuda_plan (library
 * handles); the context is current. */
typedef void (*bk_cuda_release_fn)(BkPlan plan);

/* Every CUDA plan's impl begins with this: exactly one of prepare and
 * enqueue is set; release is optional. */
struct bk_cuda_plan {
    bk_cuda_prepare_fn prepare;
    bk_cuda_enqueue_fn enqueue;
    bk_cuda_release_fn release;
    pthread_mutex_t lock;                 /* guards graphs[] and graphs_off */
    bool lock_ready;
    bool graphs_off;                      /* the driver failed to make one: launch directly */
    uint32_t graph_count;
    struct bk_cuda_node_graph graphs[BK_CUDA_NODE_GRAPHS];
};

/* Sets up base (after the op's own impl was zeroed) and destroys what it
 * holds; the context must be current for the latter. */
BK_HIDDEN BkResult bk_cuda_plan_init(struct bk_cuda_plan *base, bk_cuda_prepare_fn prepare,
                                     bk_cuda_enqueue_fn enqueue);
BK_HIDDEN void bk_cuda_plan_release(struct bk_cuda_plan *base);
/* plan->impl: size zeroed bytes starting with a struct bk_cuda_plan set up
 * with prepare or enqueue; NULL with *res set on failure (plan_destroy
 * frees what was made). */
BK_HIDDEN void *bk_cuda_plan_new(BkPlan plan, size_t size, bk_cuda_prepare_fn prepare,
                                 bk_cuda_enqueue_fn enqueue, BkResult *res);
/* Looks up count kernels of module id by name (names[i] into *fns[i]),
 * making the context current for the lookup. */
BK_HIDDEN BkResult bk_cuda_find_functions(BkPlan plan, enum bk_cuda_module_id id,
                                          const char *const *names, CUfunction *const *fns,
                                          int count);
/* bk_cuda_find_functions for one kernel, then allows it shared_bytes of
 * dynamic shared memory (bk_cuda_set_shared_bytes). */
BK_HIDDEN BkResult bk_cuda_find_kernel(BkPlan plan, enum bk_cuda_module_id id, const char *name,
                                       CUfunction *fn, unsigned int shared_bytes);
/* How many clusters of fn's (compile-time) cluster shape the device holds
 * at once for a grid of the given shape, block threads and dynamic shared
 * memory: the driver's count, which knows how clusters pack into GPCs;
 * 0 where it cannot say. */
BK_HIDDEN int bk_cuda_max_active_clusters(BkPlan plan, CUfunction fn, unsigned int grid,
                                          unsigned int grid_y, unsigned int grid_z,
                                          unsigned int block, unsigned int shared_bytes);
/* How many CTAs of fn, of block threads and shared_bytes of dynamic
 * shared memory, the device holds at once (the driver's count a
 * multiprocessor, times the multiprocessors); 0 where it cannot say. */
BK_HIDDEN uint64_t bk_cuda_max_resident_ctas(BkPlan plan, CUfunction fn, unsigned int block,
                                            unsigned int shared_bytes);
/* Fills a launch of fn with the parameter block args of size bytes. */
BK_HIDDEN void bk_cuda_launch_set(struct bk_cuda_kernel_launch *l, CUfunction fn,
                                  unsigned int grid, unsigned int grid_y, unsigned int grid_z,
                                  unsigned int block, unsigned int shared_bytes, const char *name,
                                  const void *args, size_t size);
/* Fills a launch of a module's workspace-clearing kernel fn (name, see
 * kernels/shared/workspace_clear.h) that zeroes words 32-bit words at words_at. */
BK_HIDDEN void bk_cuda_launch_clear(struct bk_cuda_kernel_launch *l, CUfunction fn,
                                    const char *name, uint64_t words_at, uint64_t words);

/* A fresh tag for the tagged flags of a launch's workspace (never 0; see
 * kernels/split_sum_sync.cuh): drawn for each recorded launch, so that what a
 * workspace held before can stand for a raised flag only by chance. */
BK_HIDDEN uint64_t bk_cuda_launch_tag(void);

/* Tensor maps (cuda_tensor_map.c): whether a tensor of rank dimensions
 * (extent[0] slowest, strides in elements) can be described to the bulk
 * tensor copy engine at all, and the map of one at base, copied in boxes
 * of box_cols x box_rows elements (the two innermost dimensions; 1
 * elsewhere), zeros past the edges. bk_cuda_tensor_map: F16 or BF16,
 * 128-byte swizzled (what wgmma reads); bk_cuda_tensor_map_plain: any
 * 2-, 4- or 8-byte elements copied as bits, rows kept in order (what a
 * kernel reads with ordinary loads). False when the driver refuses. */
BK_HIDDEN bool bk_cuda_tensor_map_fits(BkDataType type, uint32_t rank, const int64_t *extent,
                                       const int64_t *stride);
BK_HIDDEN bool bk_cuda_tensor_map(CUtensorMap *map, BkDataType type, BkDeviceAddress base,
                                  uint32_t rank, const int64_t *extent, const int64_t *stride,
                                  uint32_t box_cols, uint32_t box_rows);
/* The same with boxes box_depth deep along the third innermost axis (rank
 * 3 or more; 1: bk_cuda_tensor_map's). */
BK_HIDDEN bool bk_cuda_tensor_map_box(CUtensorMap *map, BkDataType type, BkDeviceAddress base,
                                      uint32_t rank, const int64_t *extent,
                                      const int64_t *stride, uint32_t box_cols,
                                      uint32_t box_rows, uint32_t box_depth);
BK_HIDDEN bool bk_cuda_tensor_map_plain(CUtensorMap *map, uint32_t element_bytes,
                                        BkDeviceAddress base, uint32_t rank,
                                        const int64_t *extent, const int64_t *stride,
                                        uint32_t box_cols, uint32_t box_rows);

/* Multiplier and shift with n / d == (umulhi(n, magic) + n) >> shift for
 * every n < 2^63 and d >= 1 (lib/cuda/cuda_fastdiv.c). */
BK_HIDDEN void bk_cuda_fastdiv_init(uint64_t d, uint64_t *magic, uint32_t *shift);

/* Allows fn up to bytes of dynamic shared memory (past the 48 KiB default);
 * name is the kernel's, for the message. The context must be current. */
BK_HIDDEN BkResult bk_cuda_set_shared_bytes(CUfunction fn, unsigned int bytes, const char *name);

/* Launches on stream: directly (what a stream capture records), or through
 * the plan's cached one-kernel graph for stream (one-time submits; about
 * half the CPU time of a launch, doc/design/cuda.md). cmd_index names the
 * command in messages. The context must be current. */
BK_HIDDEN BkResult bk_cuda_launch_direct(BkPlan plan, const struct bk_cuda_kernel_launch *launch,
                                         CUstream stream, uint32_t cmd_index);
BK_HIDDEN BkResult bk_cuda_launch_cached(BkPlan plan, const struct bk_cuda_kernel_launch *launch,
                                         CUstream stream, uint32_t cmd_index);

/* Kernel (or library) selection per op family: each sets plan->impl
 * (a struct bk_cuda_plan first), kernelName, and may raise the workspace
 * and adjust the precision guarantee. */
BK_HIDDEN BkResult bk_cuda_gated_select(BkPlan plan);   /* cuda_gated.c */
BK_HIDDEN BkResult bk_cuda_gemm_select(BkPlan plan);    /* cuda_gemm.c (cuBLASLt) */
BK_HIDDEN BkResult bk_cuda_sparse24_convert_select(BkPlan plan); /* cuda_sparse24.c */
BK_HIDDEN BkResult bk_cuda_sparse24_prepare_select(BkPlan plan);
BK_HIDDEN BkResult bk_cuda_sparse24_gemm_select(BkPlan plan);
BK_HIDDEN BkResult bk_cuda_w4a16_convert_select(BkPlan plan); /* cuda_w4a16_convert.c */
BK_HIDDEN BkResult bk_cuda_w4a16_repack_select(BkPlan plan);
BK_HIDDEN BkResult bk_cuda_w4a16_gemm_select(BkPlan plan);    /* cuda_w4a16_gemm.c */
BK_HIDDEN BkResult bk_cuda_attention_select(BkPlan plan);     /* cuda_attention.c */
BK_HIDDEN BkResult bk_cuda_convert_select(BkPlan plan);       /* cuda_convert.c */
/* struct bk_backend.sparse24_prepared_size for CUDA contexts. */
BK_HIDDEN uint64_t bk_cuda_sparse24_prepared_size(BkContext ctx, BkDataType type, int64_t m,
                                                  int64_t k);

/* ---- Submission (cuda_submit.c) --------------------------------------- */
BK_HIDDEN BkResult bk_cuda_submit(BkQueue queue, BkCommandBuffer cmd);
BK_HIDDEN void bk_cuda_command_buffer_reset(BkCommandBuffer cmd);

#endif /* BK_CUDA_INTERNAL_H */
