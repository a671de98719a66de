/* The W4A16 GEMM on CUDA (module w4a16_gemm, ptx/w4a16_gemm.cu): the
 * tiling and the split of K chosen at plan creation, the A loader per run.
 *
 * Tiles are 8, 16, 32 or 64 rows (the smallest that holds M, 64 above)
 * by 256 columns.
 * Small M is bound by streaming the weights, which wants as many CTAs
 * streaming at once as the device holds: where it has thread block
 * clusters (sm_90), K is split over the CTAs of a cluster of up to 8, the
 * most whose clusters all fit on the device at once. On sm_90 tiles of
 * up to 32 rows run the Hopper pipeline (a producer warp, the weights and
 * scales through tensor maps made per run); a run whose bindings the maps
 * cannot describe takes the cp.async pipeline instead. Read when a plan is made, for tuning and tests:
 * BK_CUDA_W4A16_SPLITS=1..8 forces the split (an impossible one
 * falls back to 1), BK_CUDA_W4A16_PIPELINE=cp.async the portable pipeline. */
#include "cuda_w4a16.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct bk_w4a16_tma_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the GEMM parameter blocks fit struct bk_cuda_kernel_launch");

struct gemm_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    bool empty;
    bool a_vector_fits;                   /* A's layout allows cp.async (address: per run) */
    bool tma;                             /* the Hopper pipeline, where a run's maps encode */
    int64_t groups, srows;                /* scale rows, and per stage (0: per channel) */
    int64_t tile_m;
    BkDataType type;                      /* of A, C and the scales */
    CUfunction fn, fn_tma;
    unsigned int grid[3];
    unsigned int shared_bytes, shared_bytes_tma, threads_tma;
    char name[BK_MAX_KERNEL_NAME_SIZE], name_tma[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_w4a16_gemm_args args;
};

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The cluster sizes the module has kernels for, smallest first. */
static const int split_choices[] = { 1, 2, 3, 4, 5, 6, 7, 8 };
#define SPLIT_CHOICES (int)(sizeof split_choices / sizeof split_choices[0])

static int forced_splits(void)
{
    const char *s = getenv("BK_CUDA_W4A16_SPLITS");
    const long v = s ? strtol(s, NULL, 10) : 0;
    for (int i = 0; i < SPLIT_CHOICES; i++)
        if (v == split_choices[i])
            return (int)v;
    return 0;
}

/* The kernel for splits s, with its shared memory allowed. */
static BkResult find_kernel(BkPlan plan, struct gemm_plan *g, const char *type, int tm, int s)
{
    snprintf(g->name, sizeof g->name, "bk_w4a16_gemm_%s_m%d_s%d", type, tm, s);
    snprintf(g->name_tma, sizeof g->name_tma, "bk_w4a16_gemm_tma_%s_m%d_s%d", type, tm, s);
    const char *const names[] = { g->name, g->name_tma };
    CUfunction *const fns[] = { &g->fn, &g->fn_tma };
    BkResult res = bk_cuda_find_functions(plan, BK_CUDA_MODULE_W4A16_GEMM, names, fns,
                                          g->tma ? 2 : 1);
    if (res != BK_SUCCESS)
        return res;
    struct bk_cuda_scope scope;
    if ((res = bk_cuda_enter(plan->ctx, &scope)) != BK_SUCCESS)
        return res;
    res = bk_cuda_set_shared_bytes(g->fn, g->shared_bytes, g->name);
    if (res == BK_SUCCESS && g->tma)
        res = bk_cuda_set_shared_bytes(g->fn_tma, g->shared_bytes_tma, g->name_tma);
    bk_cuda_leave(&scope);
    return res;
}

/* Whether every cluster of the grid with the kernel just found is on the
 * device at once: the driver's count of co-resident clusters (which knows
 * how clusters pack into GPCs), or where it cannot say, CTA slots. */
static bool one_wave(BkPlan plan, const struct gemm_plan *g, int64_t clusters, int s,
                     int per_sm)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    const CUlaunchConfig config = {
        .gridDimX = g->grid[0], .gridDimY = (unsigned int)s, .gridDimZ = g->grid[2],
        .blockDimX = g->tma ? g->threads_tma : BK_W4A16_THREADS, .blockDimY = 1, .blockDimZ = 1,
        .sharedMemBytes = g->tma ? g->shared_bytes_tma : g->shared_bytes,
    };
    int fit = 0;
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(plan->ctx, &scope) == BK_SUCCESS) {
        if (bk_cu.cuOccupancyMaxActiveClusters(&fit, g->tma ? g->fn_tma : g->fn, &config) !=
            BK_CUDA_SUCCESS)
            fit = 0;
        bk_cuda_leave(&scope);
    }
    if (fit > 0)
        return clusters <= fit;
    return clusters * s <= (int64_t)c->sm_count * per_sm;
}

/* Splits of K per tile (a cluster of that many CTAs per tile): the most
 * whose grid is on the device at once, never more than there are stages.
 * More CTAs stream the weights faster until a second wave of clusters
 * waits (measured on the H100, bench/RESULTS.md). Leaves the kernel of
 * the choice found. */
static BkResult choose_splits(BkPlan plan, struct gemm_plan *g, const char *type, int tm,
                              bool clusters, int64_t tiles, int64_t stages, int per_sm)
{
    int s = clusters ? forced_splits() : 1;
    if (s > stages)
        s = 1;
    BkResult res;
    for (int i = SPLIT_CHOICES - 1; i > 0 && !s; i--) {
        const int cand = split_choices[i];
        if (cand > stages)
            continue;
        if ((res = find_kernel(plan, g, type, tm, cand)) != BK_SUCCESS)
            return res;
        if (one_wave(plan, g, tiles, cand, per_sm))
            s = cand;
    }
    if (!s)
        s = 1;
    g->args.splits = (uint32_t)s;
    g->grid[1] = (unsigned int)s;
    return find_kernel(plan, g, type, tm, s);
}

/* The run's tensor maps: packed as U64 [K/16, N] in boxes of a stage's
 * k-tiles of the tile's columns, grouped scales as U16 [G, N] in boxes of
 * a stage's scale rows, and A [M, K] (contiguous rows) in boxes of 64
 * columns of the tile's rows, 128-byte swizzled. */
static bool tensor_maps(const struct gemm_plan *g, struct bk_w4a16_tma_args *t)
{
    const struct bk_w4a16_gemm_args *a = &t->a;
    const int64_t w_extent[2] = { a->k / 16, a->n }, s_extent[2] = { g->groups, a->n };
    const int64_t stride[2] = { a->n, 1 };
    /* One row's stride is never followed: any the engine takes. */
    const int64_t a_extent[2] = { a->m, a->k };
    const int64_t a_stride[2] = { a->m > 1 ? a->a_rs : (a->k + 7) / 8 * 8, 1 };
    if (!bk_cuda_tensor_map_plain((CUtensorMap *)t->map_w, 8, a->packed, 2, w_extent, stride,
                                  BK_W4A16_TILE_N, BK_W4A16_STAGE_KT) ||
        !bk_cuda_tensor_map((CUtensorMap *)t->map_a, g->type, a->a, 2, a_extent, a_stride, 64,
                            (uint32_t)g->tile_m))
        return false;
    return g->srows == 0 ||
           bk_cuda_tensor_map_plain((CUtensorMap *)t->map_s, 2, a->scales, 2, s_extent, stride,
                                    BK_W4A16_TILE_N, (uint32_t)g->srows);
}

static uint32_t gemm_prepare(BkPlan plan, const struct bk_run_args *run,
                             struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct gemm_plan *g = plan->impl;
    if (g->empty)
        return 0;
    struct bk_w4a16_tma_args t;
    memset(&t, 0, sizeof t);
    struct bk_w4a16_gemm_args a = g->args;
    a.a = run->binding[BK_W4A16_GEMM_BINDING_A];
    a.packed = run->binding[BK_W4A16_GEMM_BINDING_PACKED];
    a.scales = run->binding[BK_W4A16_GEMM_BINDING_PACKED_SCALES];
    a.perm = (a.flags & BK_W4A16_HAS_PERM) ? run->binding[BK_W4A16_GEMM_BINDING_PERM] : 0;
    a.c = run->binding[BK_W4A16_GEMM_BINDING_C];
    if (g->a_vector_fits && (a.a & 15u) == 0)
        a.flags |= BK_W4A16_A_VECTOR;
    t.a = a;
    /* A gathered element by element (strided or permuted) takes the
     * cp.async pipeline. */
    if (g->tma && (a.flags & BK_W4A16_A_VECTOR) && tensor_maps(g, &t)) {
        bk_cuda_launch_set(&launches[0], g->fn_tma, g->grid[0], g->grid[1], g->grid[2],
                           g->threads_tma, g->shared_bytes_tma, g->name_tma, &t, sizeof t);
        return 1;
    }
    bk_cuda_launch_set(&launches[0], g->fn, g->grid[0], g->grid[1], g->grid[2], BK_W4A16_THREADS,
                       g->shared_bytes, g->name, &a, sizeof a);
    return 1;
}

BkResult bk_cuda_w4a16_gemm_select(BkPlan plan)
{
    const struct bk_w4a16_gemm_problem *p = &plan->problem.w4a16_gemm;
    BkResult res;
    struct gemm_plan *g = bk_cuda_plan_new(plan, sizeof *g, gemm_prepare, NULL, &res);
    if (!g)
        return res;
    const char *type = p->shape.scale_type == BK_DATA_TYPE_BF16 ? "bf16" : "f16";
    const int tm = p->m <= 8 ? 8 : p->m <= 16 ? 16 : p->m <= 32 ? 32 : 64;
    const int64_t tile_m = tm;
    const int64_t m_tiles = ceil_div(p->m, tile_m);
    const int64_t n_tiles = ceil_div(p->shape.n, BK_W4A16_TILE_N);
    const int64_t stages = ceil_div(p->shape.k, BK_W4A16_STAGE_K);
    if (m_tiles > 65535)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "BkW4A16GemmInfo.a.extent[0] = %lld: the CUDA kernels take M up to %lld",
                        (long long)p->m, (long long)(65535 * tile_m));
    const bool clusters = plan->ctx->props.computeCapabilityMajor >= 9;
    const char *pipeline = getenv("BK_CUDA_W4A16_PIPELINE");
    g->tma = clusters && tm <= 32 && !(pipeline && strcmp(pipeline, "cp.async") == 0);

    struct bk_w4a16_gemm_args *a = &g->args;
    memset(a, 0, sizeof *a);
    a->m = p->m;
    a->n = p->shape.n;
    a->k = p->shape.k;
    a->a_rs = p->a.row_stride;
    a->a_cs = p->a.col_stride;
    a->c_rs = p->c.row_stride;
    a->c_cs = p->c.col_stride;
    a->group = (int32_t)p->shape.group;
    a->flags = (p->shape.per_channel ? BK_W4A16_PER_CHANNEL : 0u) |
               (p->has_perm ? BK_W4A16_HAS_PERM : 0u);
    a->stages = (uint32_t)stages;
    /* 16-byte pieces of A: unit k stride, whole 16-byte row steps. */
    g->a_vector_fits = !p->has_perm && p->a.col_stride == 1 &&
                       (p->m <= 1 || p->a.row_stride % 8 == 0);
    g->empty = p->m == 0;
    g->grid[0] = (unsigned int)n_tiles;
    g->grid[2] = (unsigned int)(m_tiles > 0 ? m_tiles : 1);
    /* The kernels' rings are sized for the architecture they were built
     * for; a newer one runs the sm_90 code (from PTX). */
    const int cc = plan->ctx->props.computeCapabilityMajor * 10 +
                   plan->ctx->props.computeCapabilityMinor;
    g->shared_bytes = BK_W4A16_SMEM(tm, cc >= 90 ? 90 : cc);
    g->shared_bytes_tma = BK_W4A16_TMA_SMEM(tm);
    g->threads_tma = BK_W4A16_TMA_THREADS(tm);
    g->groups = p->shape.groups;
    g->tile_m = tm;
    g->type = p->shape.scale_type;
    g->srows = p->shape.per_channel ? 0 : BK_W4A16_STAGE_K / p->shape.group;
    if ((res = choose_splits(plan, g, type, tm, clusters, m_tiles * n_tiles, stages,
                             g->tma ? BK_W4A16_TMA_CTAS_PER_SM(tm) : BK_W4A16_CTAS_PER_SM(tm))) !=
        BK_SUCCESS)
        return res;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s",
             g->tma ? g->name_tma : g->name);
    return BK_SUCCESS;
}
