/* What the W4A16 plans on CUDA share (cuda_w4a16_convert.c,
 * cuda_w4a16_gemm.c): the kernels' parameter blocks and small helpers
 * for plans whose runs are a fixed list of kernels. */
#ifndef BK_CUDA_W4A16_H
#define BK_CUDA_W4A16_H

#include "cuda_internal.h"
#include "../../ptx/w4a16_args.h"

/* A plan's impl of size bytes (a struct bk_cuda_plan first), zeroed,
 * set on plan->impl and initialised with prepare. NULL and *res set when
 * out of memory. */
BK_HIDDEN void *bk_cuda_w4a16_new_impl(BkPlan plan, size_t size, bk_cuda_prepare_fn prepare,
                                       BkResult *res);
/* The kernel called name in module id (the context is entered here). */
BK_HIDDEN BkResult bk_cuda_w4a16_function(BkPlan plan, enum bk_cuda_module_id id,
                                          const char *name, CUfunction *fn);
/* Fills one launch of a one-dimensional block of threads. */
BK_HIDDEN void bk_cuda_w4a16_launch(struct bk_cuda_kernel_launch *l, CUfunction fn,
                                    const unsigned int grid[3], unsigned int block,
                                    unsigned int shared_bytes, const char *name,
                                    const void *args, size_t size);

#endif
