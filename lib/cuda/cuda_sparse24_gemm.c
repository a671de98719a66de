/* The 2:4 sparse GEMM on CUDA, Y = act(alpha X @ W^T + beta C + bias):
 * choosing the kernel, tiling and grid at plan creation, and the X loader
 * per run.
 *
 * F16/BF16 run on sparse tensor cores (module sparse24_mma) in one of the
 * tilings of BK_SP24_MMA_TILINGS: 64 x 16 or 32 x 16 for N <= 16, 64 x 32
 * where N <= 64 or the 128 x 128 tiles would not fill the GPU once,
 * 128 x 128 otherwise. X is
 * copied with cp.async when its k stride is 1 and its rows and batches
 * are 16-byte aligned (the base address is checked per run), else
 * through registers (the _strided kernels): the same sums either way.
 * F32 runs on CUDA cores (module sparse24_general) with the host
 * backend's order of operations. For tests that compare the paths, and
 * for tuning, read when a plan is made: BK_CUDA_SPARSE24_KERNEL=general
 * puts F16/BF16 on the CUDA-core kernels too, =strided forces the register
 * loader; BK_CUDA_SPARSE24_TILING=128x128 (64x32, 64x16, 32x16) forces a
 * tiling. */
#include "cuda_sparse24.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct bk_sp24_gemm_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the GEMM parameter block fits struct bk_cuda_kernel_launch");
_Static_assert(BK_GEMM_ACTIVATION_RELU == 1 && BK_GEMM_ACTIVATION_GELU_TANH == 2,
               "the kernels' activation codes (ptx/sparse24_common.cuh)");

struct tiling {
    unsigned int bm, bn, threads, shared_bytes;
};

static const struct tiling mma_tilings[] = {
#define BK_SP24_TILING_ROW(BM, BN, WM, WN, STAGES) \
    { BM, BN, (WM) * (WN) * 32, BK_SP24_MMA_SMEM(BM, BN, STAGES) },
    BK_SP24_MMA_TILINGS(BK_SP24_TILING_ROW)
#undef BK_SP24_TILING_ROW
};
#define TILING_LARGE 0
#define TILING_SMALL 1
#define TILING_DECODE 2        /* 64 x 16 */
#define TILING_DECODE_NARROW 3 /* 32 x 16 */
#define SMALL_N 64  /* N up to this takes the small tiling */
#define DECODE_N 16 /* N up to this, the decode tilings */

static const struct tiling general_tiling = {
    BK_SP24_GENERAL_BM, BK_SP24_GENERAL_BN, BK_SP24_GENERAL_THREADS, 0
};

/* One kernel of a plan with its launch shape and parameters (addresses are
 * filled in per run). */
struct gemm_kernel {
    CUfunction fn;
    unsigned int grid, grid_z, block, shared_bytes;
    char name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_sp24_gemm_args args;
};

struct gemm_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    bool empty;                           /* nothing to compute */
    bool has_async;                       /* async may be used where X's address allows */
    struct gemm_kernel async, fallback;   /* fallback: _strided or general */
};

enum path { PATH_AUTO, PATH_STRIDED, PATH_GENERAL };

static enum path forced_path(void)
{
    const char *s = getenv("BK_CUDA_SPARSE24_KERNEL");
    if (s && strcmp(s, "general") == 0)
        return PATH_GENERAL;
    if (s && strcmp(s, "strided") == 0)
        return PATH_STRIDED;
    return PATH_AUTO;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* The small tiling for decode-like N, and where the large one leaves SMs
 * idle; BK_CUDA_SPARSE24_TILING names one to use instead. */
static const struct tiling *choose_tiling(const struct bk_sparse24_gemm_problem *p, int sm_count)
{
    const char *forced = getenv("BK_CUDA_SPARSE24_TILING");
    for (size_t i = 0; forced && i < sizeof mma_tilings / sizeof mma_tilings[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "%ux%u", mma_tilings[i].bm, mma_tilings[i].bn);
        if (strcmp(forced, name) == 0)
            return &mma_tilings[i];
    }
    const uint64_t large = ceil_div((uint64_t)p->m, mma_tilings[TILING_LARGE].bm) *
                           ceil_div((uint64_t)p->n, mma_tilings[TILING_LARGE].bn) *
                           (uint64_t)p->batch;
    /* N <= 16 reads the weight once per CTA column: 16-wide tiles waste no
     * MMA work, and 32-row ones where 64-row ones would leave fewer than 4
     * CTAs per SM (H100, 2026-11-22: 16-21% faster than 64 x 32 on the
     * Llama-70B shapes at N = 16; bench/RESULTS.md). */
    if (p->n <= DECODE_N) {
        const uint64_t ctas = ceil_div((uint64_t)p->m, mma_tilings[TILING_DECODE].bm) *
                              (uint64_t)p->batch;
        return &mma_tilings[ctas < 4 * (uint64_t)sm_count ? TILING_DECODE_NARROW : TILING_DECODE];
    }
    if (p->n <= SMALL_N || large < (uint64_t)sm_count)
        return &mma_tilings[TILING_SMALL];
    return &mma_tilings[TILING_LARGE];
}

/* X can be copied in 16-byte pieces: unit k stride, row and batch strides
 * of whole 16 bytes (where more than one row or batch is read). */
static bool x_async_fits(const struct bk_sparse24_gemm_problem *p)
{
    const int64_t v = 16 / 2;
    return p->x.col_stride == 1 && (p->n <= 1 || p->x.row_stride % v == 0) &&
           (p->batch <= 1 || p->x.batch_stride % v == 0);
}

static void fill_args(const struct bk_sparse24_gemm_problem *p, const struct bk_cuda_sp24_layout *l,
                      const struct tiling *t, struct bk_sp24_gemm_args *a)
{
    memset(a, 0, sizeof *a);
    a->meta_offset = l->meta_offset;
    a->m = p->m;
    a->n = p->n;
    a->k = p->k;
    a->batch = p->batch;
    a->kbs = l->kbs;
    a->x_rs = p->x.row_stride;
    a->x_cs = p->x.col_stride;
    a->x_bs = p->x.batch_stride;
    if (p->has_c) {
        a->c_rs = p->c.row_stride;
        a->c_cs = p->c.col_stride;
        a->c_bs = p->c.batch_stride;
    }
    a->y_rs = p->y.row_stride;
    a->y_cs = p->y.col_stride;
    a->y_bs = p->y.batch_stride;
    a->alpha = (float)p->alpha;
    a->beta = (float)p->beta;
    a->flags = (p->has_c && p->beta != 0 ? BK_SP24_READ_C : 0u) |
               (p->has_bias ? BK_SP24_BIAS : 0u) |
               (p->y.col_stride != 1 && p->y.row_stride == 1 ? BK_SP24_Y_N_FAST : 0u);
    a->activation = (uint32_t)p->activation;
    a->m_tiles = (uint32_t)ceil_div((uint64_t)p->m, t->bm);
    a->n_tiles = (uint32_t)ceil_div((uint64_t)p->n, t->bn);
}

/* The kernel called name with tiling t: its function, shared memory and
 * grid (tiles along x, batches along z; the kernels loop over the rest). */
static BkResult kernel_init(BkPlan plan, enum bk_cuda_module_id module, const char *name,
                            const struct tiling *t, const struct bk_cuda_sp24_layout *l,
                            struct gemm_kernel *k)
{
    const struct bk_sparse24_gemm_problem *p = &plan->problem.sparse24_gemm;
    snprintf(k->name, sizeof k->name, "%s", name);
    fill_args(p, l, t, &k->args);
    const uint64_t tiles = (uint64_t)k->args.m_tiles * k->args.n_tiles;
    k->grid = (unsigned int)(tiles < INT32_MAX ? tiles : INT32_MAX);
    k->grid_z = (unsigned int)(p->batch < 65535 ? p->batch : 65535);
    k->block = t->threads;
    k->shared_bytes = t->shared_bytes;
    return bk_cuda_find_kernel(plan, module, k->name, &k->fn, k->shared_bytes);
}

static void launch_of(const struct gemm_kernel *k, const struct bk_run_args *run,
                      struct bk_cuda_kernel_launch *launch)
{
    struct bk_sp24_gemm_args a = k->args;
    a.w = run->binding[BK_SPARSE24_GEMM_BINDING_WEIGHT];
    a.x = run->binding[BK_SPARSE24_GEMM_BINDING_X];
    a.c = run->binding[BK_SPARSE24_GEMM_BINDING_C];
    a.y = run->binding[BK_SPARSE24_GEMM_BINDING_Y];
    a.bias = run->binding[BK_SPARSE24_GEMM_BINDING_BIAS];
    bk_cuda_launch_set(launch, k->fn, k->grid, 1, k->grid_z, k->block, k->shared_bytes, k->name, &a,
                        sizeof a);
}

static uint32_t gemm_prepare(BkPlan plan, const struct bk_run_args *run,
                             struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct gemm_plan *g = plan->impl;
    if (g->empty)
        return 0;
    const bool aligned = (run->binding[BK_SPARSE24_GEMM_BINDING_X] & 15u) == 0;
    launch_of(g->has_async && aligned ? &g->async : &g->fallback, run, &launches[0]);
    return 1;
}

BkResult bk_cuda_sparse24_gemm_select(BkPlan plan)
{
    const struct bk_sparse24_gemm_problem *p = &plan->problem.sparse24_gemm;
    const char *type = bk_cuda_sp24_type_name(p->type);
    const char *out = bk_cuda_sp24_type_name(p->out_type);
    struct bk_cuda_sp24_layout l;
    if (!type || p->type == BK_DATA_TYPE_F64 || !out ||
        !bk_cuda_sp24_layout(p->type, p->m, p->k, &l))
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the CUDA backend has no sparse GEMM for %s",
                        plan->op_name, bk_data_type_name(p->type));
    BkResult res;
    struct gemm_plan *g = bk_cuda_plan_new(plan, sizeof *g, gemm_prepare, NULL, &res);
    if (!g)
        return res;
    const struct bk_cuda_context *c = plan->ctx->impl;
    g->empty = p->m == 0 || p->n == 0 || p->batch == 0;
    const enum path forced = forced_path();
    const bool tensor_cores = p->type != BK_DATA_TYPE_F32 && forced != PATH_GENERAL;
    const struct tiling *t = tensor_cores ? choose_tiling(p, c->sm_count) : &general_tiling;
    if (ceil_div((uint64_t)p->m, t->bm) * ceil_div((uint64_t)p->n, t->bn) > UINT32_MAX)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: M = %lld and N = %lld make too many tiles",
                        plan->op_name, (long long)p->m, (long long)p->n);

    char name[BK_MAX_KERNEL_NAME_SIZE];
    if (tensor_cores) {
        snprintf(name, sizeof name, "bk_sp24_mma_%s_%s_%ux%u_strided", type, out, t->bm, t->bn);
        res = kernel_init(plan, BK_CUDA_MODULE_SPARSE24_MMA, name, t, &l, &g->fallback);
        g->has_async = res == BK_SUCCESS && forced == PATH_AUTO && x_async_fits(p);
        if (g->has_async) {
            name[strlen(name) - strlen("_strided")] = '\0';
            res = kernel_init(plan, BK_CUDA_MODULE_SPARSE24_MMA, name, t, &l, &g->async);
        }
    } else {
        snprintf(name, sizeof name, "bk_sp24_general_%s_%s", type, out);
        res = kernel_init(plan, BK_CUDA_MODULE_SPARSE24_GENERAL, name, t, &l, &g->fallback);
    }
    if (res != BK_SUCCESS)
        return res;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s",
             g->has_async ? g->async.name : g->fallback.name);
    return BK_SUCCESS;
}
