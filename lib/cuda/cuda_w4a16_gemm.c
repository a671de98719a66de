/* SPDX-License-Identifier: Apache-2.0 */
/* The W4A16 GEMM on CUDA (modules w4a16_gemm and w4a16_wgmma): the
 * kernels and the split of K chosen at plan creation, the one a run
 * takes (and its tensor maps) per run.
 *
 * Portable kernels: tiles of 8, 16, 32 or 64 rows (the smallest that
 * holds M, 64 above) by 256 columns, the weights through a cp.async ring.
 * On sm_90, tiles up to 32 rows run the Hopper pipeline (a producer warp,
 * weights, scales and A through tensor maps made per run), and taller
 * ones the wgmma kernel (sm_90a: 64, 128 or 256 rows of A by 128
 * columns, or 64 by 256 where N is wide; 128 rows instead of 256 where
 * that fills the device's waves better); a run whose bindings the maps
 * cannot describe (A strided, permuted or misaligned) takes the portable
 * kernel instead. Where the wgmma tiles would leave SMs idle, stream-K:
 * one CTA an SM taking an equal share of all the tiles' stages (a kernel
 * that clears its counters in the workspace first; w4a16_args.h).
 * Small M is bound by streaming the weights, which wants as many CTAs
 * streaming at once as the device holds: where it has thread block
 * clusters (sm_90), K is split over the CTAs of a cluster of up to 8, the
 * most whose clusters all fit on the device at once.
 * Read when a plan is made, for tuning and tests:
 * BK_CUDA_W4A16_SPLITS=1..8 forces the split (an impossible one falls
 * back to 1), BK_CUDA_W4A16_PIPELINE=cp.async the portable kernels,
 * BK_CUDA_W4A16_COLUMNS=128 or 256 the width of the wgmma kernel's tiles
 * of 64 rows, BK_CUDA_W4A16_ROWS=64, 128 or 256 their height,
 * BK_CUDA_W4A16_SCHEDULE=tiles or stream-k the wgmma kernel's schedule,
 * BK_CUDA_W4A16_PREFETCH=0, N or all how many stages of its share a CTA
 * prefetches into L2 before it waits for the kernel before it (else none;
 * kernels/w4a16_prefetch.cuh),
 * BK_CUDA_W4A16_EARLY_RING=1 the Hopper pipeline's producer bringing the
 * ring's first stages of weights and scales before that wait too.
 * Zero points (a BkW4A16ZeroPointsInfo) run the zero-point twins of the
 * portable kernels (bk_w4a16_gemm_zp_*), of the Hopper pipeline
 * (bk_w4a16_gemm_tma_zp_*: its producer warp turns each stage's zero
 * rows into the dequantisation's constants in shared memory; groups of
 * 64 rows and more) and of the wgmma kernel
 * (bk_w4a16_wgmma_zp_*, the same tiles, splits and schedules, a tensor
 * map of packedZeros more), which read packedZeros beside the scales. */
#include "cuda_w4a16.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct bk_w4a16_tma_args) <= BK_CUDA_MAX_PARAM_BYTES &&
                   sizeof(struct bk_w4a16_tma_zp_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the GEMM parameter blocks fit struct bk_cuda_kernel_launch");

/* A kernel the plan may launch, with its parameters but the addresses:
 * the tile (rows of A, columns, k-tiles per stage), its launch and, for
 * the kernels that read through tensor maps, their boxes. */
struct kernel {
    bool on;
    bool maps;                            /* tensor maps of W, the scales and A */
    bool zero_map;                        /* struct bk_w4a16_tma_zp_args: packedZeros too */
    bool stream_k;                        /* the wgmma kernel's stream-K schedule */
    enum bk_cuda_module_id module;
    const char *prefix;                   /* of its name: ..._<type>_<tile>_s<splits> */
    char tile_tag;                        /* 'm' or 't' */
    int tile_m, tile_n, stage_kt, per_sm;
    uint32_t box_srows;                   /* scale rows per stage (0: per channel) */
    CUfunction fn;
    unsigned int grid[3], threads, shared_bytes;
    char name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_w4a16_gemm_args args;
};

enum { K_WGMMA, K_TMA, K_PORTABLE, K_COUNT }; /* in the order a run tries them */

struct gemm_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    bool empty;
    bool a_vector_fits;                   /* A's layout allows 16-byte copies (address: per run) */
    bool zeros;                           /* packedZeros bound: the zp kernels */
    int64_t groups;
    BkDataType type;                      /* of A, C and the scales */
    struct kernel k[K_COUNT];
    CUfunction clear;                     /* stream-K: zeroes the counters */
    uint64_t counter_words;
};

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The cluster sizes the modules have kernels for, smallest first. */
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

/* k's function for splits s, with its shared memory allowed (the wgmma
 * tilings, 't', name their columns too). */
static BkResult find_kernel(BkPlan plan, struct kernel *k, const char *type, int s)
{
    if (k->stream_k)
        snprintf(k->name, sizeof k->name, "%s_%s_t%dx%d_sk", k->prefix, type, k->tile_m,
                 k->tile_n);
    else if (k->tile_tag == 't')
        snprintf(k->name, sizeof k->name, "%s_%s_t%dx%d_s%d", k->prefix, type, k->tile_m,
                 k->tile_n, s);
    else
        snprintf(k->name, sizeof k->name, "%s_%s_%c%d_s%d", k->prefix, type, k->tile_tag,
                 k->tile_m, s);
    return bk_cuda_find_kernel(plan, k->module, k->name, &k->fn, k->shared_bytes);
}

/* Whether every cluster of k's grid with s splits is on the device at
 * once: the driver's count of co-resident clusters (which knows how
 * clusters pack into GPCs), or where it cannot say, CTA slots. */
static bool one_wave(BkPlan plan, const struct kernel *k, int s)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    const int64_t clusters = (int64_t)k->grid[0] * k->grid[2];
    const int fit = bk_cuda_max_active_clusters(plan, k->fn, k->grid[0], (unsigned int)s,
                                                k->grid[2], k->threads, k->shared_bytes);
    if (fit > 0)
        return clusters <= fit;
    return clusters * s <= (int64_t)c->sm_count * k->per_sm;
}

/* Splits of K per tile (a cluster of that many CTAs per tile): the most
 * whose grid is on the device at once, never more than there are stages.
 * More CTAs stream the weights faster until a second wave of clusters
 * waits (measured on the H100, 10615df). Leaves k's function of
 * the choice found. */
static BkResult choose_splits(BkPlan plan, struct kernel *k, const char *type, bool clusters)
{
    const int64_t stages = k->args.stages;
    int s = clusters ? forced_splits() : 1;
    if (s > stages)
        s = 1;
    BkResult res;
    for (int i = SPLIT_CHOICES - 1; i > 0 && !s; i--) {
        const int cand = split_choices[i];
        if (cand > stages)
            continue;
        if ((res = find_kernel(plan, k, type, cand)) != BK_SUCCESS)
            return res;
        if (one_wave(plan, k, cand))
            s = cand;
    }
    if (!s)
        s = 1;
    k->args.splits = (uint32_t)s;
    k->grid[1] = (unsigned int)s;
    return find_kernel(plan, k, type, s);
}

/* The run's tensor maps for k: packed as U64 [K/16, N] in boxes of a
 * stage's k-tiles of the tile's columns, grouped scales as U16 [G, N] in
 * boxes of a stage's scale rows, and A [M, K] (contiguous rows) in boxes
 * of 64 columns of the tile's rows, 128-byte swizzled; with zero points
 * (zero_map), grouped packedZeros as U32 [G, N/8] in boxes of the same
 * rows of the tile's N/8 words. */
static bool zero_map(const struct gemm_plan *g, const struct kernel *k,
                     struct bk_w4a16_tma_zp_args *z)
{
    const struct bk_w4a16_gemm_args *a = &z->t.a;
    const int64_t extent[2] = { g->groups, a->n / 8 }, stride[2] = { a->n / 8, 1 };
    return k->box_srows == 0 ||
           bk_cuda_tensor_map_plain((CUtensorMap *)z->map_z, 4, z->zeros, 2, extent, stride,
                                    (uint32_t)k->tile_n / 8, k->box_srows);
}

static bool tensor_maps(const struct gemm_plan *g, const struct kernel *k,
                        struct bk_w4a16_tma_args *t)
{
    const struct bk_w4a16_gemm_args *a = &t->a;
    const int64_t w_extent[2] = { a->k / 16, a->n }, s_extent[2] = { g->groups, a->n };
    const int64_t stride[2] = { a->n, 1 };
    /* One row's stride is never followed: any the engine takes. */
    const int64_t a_extent[2] = { a->m, a->k };
    const int64_t a_stride[2] = { a->m > 1 ? a->a_rs : (a->k + 7) / 8 * 8, 1 };
    if (!bk_cuda_tensor_map_plain((CUtensorMap *)t->map_w, 8, a->packed, 2, w_extent, stride,
                                  (uint32_t)k->tile_n, (uint32_t)k->stage_kt) ||
        !bk_cuda_tensor_map((CUtensorMap *)t->map_a, g->type, a->a, 2, a_extent, a_stride, 64,
                            (uint32_t)k->tile_m))
        return false;
    return k->box_srows == 0 ||
           bk_cuda_tensor_map_plain((CUtensorMap *)t->map_s, 2, a->scales, 2, s_extent, stride,
                                    (uint32_t)k->tile_n, k->box_srows);
}

static uint32_t gemm_prepare(BkPlan plan, const struct bk_run_args *run,
                             struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct gemm_plan *g = plan->impl;
    if (g->empty)
        return 0;
    const BkDeviceAddress a_base = run->binding[BK_W4A16_GEMM_BINDING_A];
    const bool vector = g->a_vector_fits && (a_base & 15u) == 0;
    for (int i = 0; i < K_COUNT; i++) {
        const struct kernel *k = &g->k[i];
        /* A gathered element by element (strided or permuted) takes the
         * cp.async pipeline. */
        if (!k->on || (k->maps && !vector))
            continue;
        struct bk_w4a16_tma_zp_args z;
        memset(&z, 0, sizeof z);
        struct bk_w4a16_tma_args *t = &z.t;
        struct bk_w4a16_gemm_args *a = &t->a;
        *a = k->args;
        a->a = a_base;
        a->packed = run->binding[BK_W4A16_GEMM_BINDING_PACKED];
        a->scales = run->binding[BK_W4A16_GEMM_BINDING_PACKED_SCALES];
        a->perm = (a->flags & BK_W4A16_HAS_PERM) ? run->binding[BK_W4A16_GEMM_BINDING_PERM] : 0;
        a->c = run->binding[BK_W4A16_GEMM_BINDING_C];
        if (g->zeros)
            a->zeros = run->binding[BK_W4A16_GEMM_BINDING_PACKED_ZEROS];
        if (vector)
            a->flags |= BK_W4A16_A_VECTOR;
        if (a->c_cs == 1 && (a->m <= 1 || a->c_rs % 8 == 0) && a->c % 16 == 0)
            a->flags |= BK_W4A16_C_VECTOR;
        if (k->maps && !tensor_maps(g, k, t))
            continue;
        if (k->zero_map) {
            z.zeros = run->binding[BK_W4A16_GEMM_BINDING_PACKED_ZEROS];
            if (!zero_map(g, k, &z))
                continue;
        }
        uint32_t n = 0;
        if (k->stream_k) {
            a->workspace = run->workspace;
            bk_cuda_launch_clear(&launches[n++], g->clear, "bk_w4a16_sk_clear", run->workspace,
                                 g->counter_words);
        }
        const void *params = k->zero_map ? (const void *)&z
                             : k->maps   ? (const void *)t
                                         : (const void *)a;
        const size_t bytes = k->zero_map ? sizeof z : k->maps ? sizeof *t : sizeof *a;
        bk_cuda_launch_set(&launches[n++], k->fn, k->grid[0], k->grid[1], k->grid[2], k->threads,
                           k->shared_bytes, k->name, params, bytes);
        return n;
    }
    return 0; /* unreachable: the portable kernel is always on */
}

/* Rows of A a wgmma tile takes: the fewest of 64, 128 and 256 that hold
 * M, else 256 (the planner may then take 128), or the height that
 * BK_CUDA_W4A16_ROWS=64, 128 or 256 forces, which also goes to *forced
 * (else 0). */
static int wgmma_rows(const struct bk_w4a16_gemm_problem *p, int *forced)
{
    const char *s = getenv("BK_CUDA_W4A16_ROWS");
    const long v = s ? strtol(s, NULL, 10) : 0;
    *forced = v == 64 || v == 128 || v == 256 ? (int)v : 0;
    if (*forced)
        return *forced;
    return p->m <= 64 ? 64 : p->m <= 128 ? 128 : 256;
}

/* The share of the CTA slots of all the waves k's grid needs that its
 * CTAs fill. */
static double wave_fill(const struct kernel *k, const struct bk_cuda_context *c)
{
    const int64_t ctas = (int64_t)k->grid[0] * k->grid[1] * k->grid[2];
    const int64_t slots = (int64_t)c->sm_count * k->per_sm;
    return (double)ctas / (double)(ceil_div(ctas, slots) * slots);
}

/* Consumer warpgroups of the wgmma kernel for tiles of tt rows: the wide
 * tiles (rows of 64 only) where N has enough of them to fill half the
 * device unsplit; BK_CUDA_W4A16_COLUMNS=128 or 256 forces the width. */
static int wgmma_consumers(const struct bk_w4a16_gemm_problem *p, int tt,
                           const struct bk_cuda_context *c)
{
    const int wide = BK_W4A16_WG_WIDE_CONSUMERS;
    if (tt != 64)
        return 2;
    const char *s = getenv("BK_CUDA_W4A16_COLUMNS");
    const long forced = s ? strtol(s, NULL, 10) : 0;
    if (forced == BK_W4A16_WG_TILE_N(2) || forced == BK_W4A16_WG_TILE_N(wide))
        return (int)forced / 64;
    return 2 * ceil_div(p->shape.n, BK_W4A16_WG_TILE_N(wide)) >= c->sm_count ? wide : 2;
}

/* The weight columns x rows of A x rows of K the busiest SM takes on
 * (its CTAs' products in order; wgmma tiles of one height cost alike per
 * product, bench/log/w4a16.md): the tiled grid of k in waves, or the same
 * tiles in stream-K (one CTA an SM, equal shares of the stages). */
static double tiled_work(const struct kernel *k, const struct bk_cuda_context *c)
{
    const int64_t ctas = (int64_t)k->grid[0] * k->grid[1] * k->grid[2];
    const int64_t slots = (int64_t)c->sm_count * k->per_sm;
    const int64_t stages = ceil_div(k->args.stages, k->args.splits);
    return (double)ceil_div(ctas, slots) * (double)stages * k->stage_kt * k->tile_m * k->tile_n;
}
/* Stream-K's units of k (made by wgmma_init for stream-K): every tile's stages. */
static int64_t stream_k_units(const struct kernel *k)
{
    return ceil_div(k->args.n, k->tile_n) * k->args.tiles_m * k->args.stages;
}
/* Stream-K's fixed costs beyond the tiled grid's (the counters' clearing
 * kernel, the partial tiles written, copied and added) as stages of its
 * tiles, fitted on the H100 (6cf21be): ~3.5 us for tiles of 128
 * rows, ~5 us for 64 (slower stages count fewer), more for 256 (whose
 * partial tiles are twice as large). */
static int stream_k_fixed_stages(const struct kernel *k)
{
    return k->tile_m >= 256 ? 12 : k->tile_m >= 128 ? 5 : 7;
}
static double stream_k_work(const struct kernel *k, const struct bk_cuda_context *c)
{
    const int64_t stages = ceil_div(stream_k_units(k), c->sm_count) + stream_k_fixed_stages(k);
    return (double)stages * k->stage_kt * k->tile_m * k->tile_n;
}

/* BK_CUDA_W4A16_SCHEDULE: 1 stream-k, -1 tiles, 0 the planner's choice. */
static int forced_schedule(void)
{
    const char *s = getenv("BK_CUDA_W4A16_SCHEDULE");
    return !s ? 0 : strcmp(s, "stream-k") == 0 ? 1 : strcmp(s, "tiles") == 0 ? -1 : 0;
}

/* The stages of its share whose weights, scales and zero points a CTA
 * prefetches into L2 before its wait for the kernel before it, for a ring
 * of ring_stages: BK_CUDA_W4A16_PREFETCH=0 (none), 1 to 255, or all (the
 * whole share); else none. With ring_stages - 1 (the stages the pipeline
 * has in flight when it starts) the H200's decode step did not gain and
 * each linear alone lost 3-14% (doc/design/w4a16.md). */
static uint32_t prefetch_stages(int ring_stages)
{
    const char *s = getenv("BK_CUDA_W4A16_PREFETCH");
    if (s && strcmp(s, "all") == 0)
        return BK_W4A16_PREFETCH_MAX;
    char *end = NULL;
    const long v = s ? strtol(s, &end, 10) : -1;
    if (s && end != s && *end == '\0' && v >= 0)
        return v > (long)BK_W4A16_PREFETCH_MAX ? BK_W4A16_PREFETCH_MAX : (uint32_t)v;
    (void)ring_stages;
    return 0;
}

/* BK_CUDA_W4A16_EARLY_RING=1: the Hopper pipeline's producer starts the
 * ring's first stages of weights and scales before its wait for the
 * kernel before it (BK_W4A16_EARLY_RING); else after it. Only for queues
 * where that kernel does not write them (w4a16_args.h), so never by
 * default. */
static bool early_ring(void)
{
    const char *s = getenv("BK_CUDA_W4A16_EARLY_RING");
    return s && strcmp(s, "1") == 0;
}

/* k's tile and launch for the problem, its splits left to choose_splits;
 * ring_stages: the stages of its kernel's ring. */
static void kernel_init(struct kernel *k, const struct bk_w4a16_gemm_problem *p,
                        const struct bk_w4a16_gemm_args *args, int tile_m, int tile_n,
                        int stage_kt, unsigned int threads, unsigned int shared_bytes, int per_sm,
                        int ring_stages)
{
    k->on = true;
    k->tile_m = tile_m;
    k->tile_n = tile_n;
    k->stage_kt = stage_kt;
    k->threads = threads;
    k->shared_bytes = shared_bytes;
    k->per_sm = per_sm;
    k->args = *args;
    k->args.flags |= prefetch_stages(ring_stages) << BK_W4A16_PREFETCH_SHIFT;
    k->args.stages = (uint32_t)ceil_div(p->shape.k, 16 * stage_kt);
    k->grid[0] = (unsigned int)ceil_div(p->shape.n, tile_n);
    k->grid[2] = (unsigned int)(p->m > 0 ? ceil_div(p->m, tile_m) : 1);
}

/* k as the wgmma kernel for tiles of tt rows, its splits chosen; or in
 * stream-K (narrow tiles, a CTA an SM). */
static BkResult wgmma_init(BkPlan plan, struct kernel *k, const struct bk_w4a16_gemm_problem *p,
                           const struct bk_w4a16_gemm_args *a, int tt, const char *type,
                           bool clusters, bool stream_k)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    const int cw = stream_k ? 2 : wgmma_consumers(p, tt, c);
    const int zp = p->has_zeros;
    memset(k, 0, sizeof *k);
    kernel_init(k, p, a, tt, BK_W4A16_WG_TILE_N(cw), BK_W4A16_WG_STAGE_KT(tt),
                BK_W4A16_WG_THREADS(cw), BK_W4A16_WG_SMEM(tt, cw, zp), 1,
                BK_W4A16_WG_STAGES(tt, cw, zp));
    k->maps = true;
    k->zero_map = zp;
    k->module = BK_CUDA_MODULE_W4A16_WGMMA;
    k->prefix = zp ? "bk_w4a16_wgmma_zp" : "bk_w4a16_wgmma";
    k->tile_tag = 't';
    k->box_srows =
        p->shape.per_channel ? 0 : BK_W4A16_WG_SROWS((uint32_t)p->shape.group, (uint32_t)tt);
    if (!stream_k)
        return choose_splits(plan, k, type, clusters);
    k->stream_k = true;
    k->shared_bytes = BK_W4A16_WG_SK_SMEM(tt, cw, zp);
    k->args.tiles_m = k->grid[2];
    k->args.splits = 1;
    k->grid[0] = (unsigned int)c->sm_count;
    k->grid[1] = k->grid[2] = 1;
    return find_kernel(plan, k, type, 0);
}

/* Whether stream-K can take k's tiles: its units times the CTAs and the
 * rows of A in 32-bit integers (the kernel's arithmetic), at least a unit
 * per SM. */
static bool stream_k_fits(const struct kernel *k, const struct bk_cuda_context *c)
{
    const int64_t units = stream_k_units(k);
    return units * c->sm_count < INT32_MAX && units >= c->sm_count && k->args.m < INT32_MAX / 2;
}

/* Whether each CTA's share is at least half a tile, so that at most three
 * CTAs share one: more make more partial tiles than the balance pays for
 * (11008 x 4096 at M = 256, 6cf21be). */
static bool stream_k_shares_few(const struct kernel *k, const struct bk_cuda_context *c)
{
    return 2 * ceil_div(stream_k_units(k), c->sm_count) >= k->args.stages;
}

/* Stream-K in place of the tiled wgmma kernel k where its busiest SM,
 * fixed costs included, works less than the tiled grid's, or where
 * BK_CUDA_W4A16_SCHEDULE asks; the plan's workspace then holds its
 * counters and partial tiles. */
static BkResult consider_stream_k(BkPlan plan, struct gemm_plan *g, struct kernel *k,
                                  const struct bk_w4a16_gemm_problem *p,
                                  const struct bk_w4a16_gemm_args *a, const char *type,
                                  bool clusters)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    const int forced = forced_schedule();
    int forced_rows;
    const int rows = wgmma_rows(p, &forced_rows);
    struct kernel sk, half;
    BkResult res;
    if (forced < 0 || (res = wgmma_init(plan, &sk, p, a, rows, type, clusters, true)) != BK_SUCCESS)
        return forced < 0 ? BK_SUCCESS : res;
    double work = stream_k_work(&sk, c);
    /* Above 128 rows, tiles of 128 rows too (each reads its weights again,
     * ~5% a stage, but their partial tiles are half the size and fewer CTAs
     * share a tile: 4096 x 22016 at M = 256, 74cd082). */
    if (rows == 256 && !forced_rows) {
        if ((res = wgmma_init(plan, &half, p, a, 128, type, clusters, true)) != BK_SUCCESS)
            return res;
        const double half_work = 1.05 * stream_k_work(&half, c);
        if (stream_k_fits(&half, c) && stream_k_shares_few(&half, c) &&
            (half_work < work || !stream_k_shares_few(&sk, c))) {
            sk = half;
            work = half_work;
        }
    }
    if (!stream_k_fits(&sk, c) ||
        (forced == 0 && (!stream_k_shares_few(&sk, c) || work >= tiled_work(k, c))))
        return BK_SUCCESS;
    sk.args.units = (uint32_t)stream_k_units(&sk);
    const char *const names[] = { "bk_w4a16_sk_clear" };
    CUfunction *const fns[] = { &g->clear };
    if ((res = bk_cuda_find_functions(plan, BK_CUDA_MODULE_W4A16_WGMMA, names, fns, 1)) !=
        BK_SUCCESS)
        return res;
    const int64_t tiles = stream_k_units(&sk) / sk.args.stages;
    g->counter_words = BK_W4A16_SK_COUNTERS(tiles, sk.tile_n / 64);
    plan->props.workspaceSize =
        BK_W4A16_SK_WORKSPACE(tiles, sk.grid[0], sk.tile_m, sk.tile_n / 64);
    *k = sk;
    return BK_SUCCESS;
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
    if (ceil_div(p->m, tm) > 65535)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "BkW4A16GemmInfo.a.extent[0] = %lld: the CUDA kernels take M up to %lld",
                        (long long)p->m, (long long)(65535 * tm));
    const BkDeviceProperties *dev = &plan->ctx->props;
    const bool clusters = dev->computeCapabilityMajor >= 9;
    const bool sm90a = dev->computeCapabilityMajor == 9 && dev->computeCapabilityMinor == 0;
    const char *pipeline = getenv("BK_CUDA_W4A16_PIPELINE");
    const bool portable_only = pipeline && strcmp(pipeline, "cp.async") == 0;

    struct bk_w4a16_gemm_args a;
    memset(&a, 0, sizeof a);
    a.m = p->m;
    a.n = p->shape.n;
    a.k = p->shape.k;
    a.a_rs = p->a.row_stride;
    a.a_cs = p->a.col_stride;
    a.c_rs = p->c.row_stride;
    a.c_cs = p->c.col_stride;
    a.group = (int32_t)p->shape.group;
    a.flags = (p->shape.per_channel ? BK_W4A16_PER_CHANNEL : 0u) |
              (p->has_perm ? BK_W4A16_HAS_PERM : 0u);
    /* 16-byte pieces of A: unit k stride, whole 16-byte row steps. */
    g->a_vector_fits = !p->has_perm && p->a.col_stride == 1 &&
                       (p->m <= 1 || p->a.row_stride % 8 == 0);
    g->empty = p->m == 0;
    g->groups = p->shape.groups;
    g->type = p->shape.scale_type;
    g->zeros = p->has_zeros;

    /* The kernels' rings are sized for the architecture they were built
     * for; a newer one runs the sm_90 code (from PTX). */
    const int cc = dev->computeCapabilityMajor * 10 + dev->computeCapabilityMinor;
    struct kernel *k = &g->k[K_PORTABLE];
    const int ring_cc = cc >= 90 ? 90 : cc;
    kernel_init(k, p, &a, tm, BK_W4A16_TILE_N, BK_W4A16_STAGE_KT, BK_W4A16_THREADS,
                BK_W4A16_SMEM(tm, ring_cc), BK_W4A16_CTAS_PER_SM(tm),
                BK_W4A16_STAGES(tm, ring_cc));
    k->module = BK_CUDA_MODULE_W4A16_GEMM;
    k->prefix = p->has_zeros ? "bk_w4a16_gemm_zp" : "bk_w4a16_gemm";
    k->tile_tag = 'm';
    if ((res = choose_splits(plan, k, type, clusters)) != BK_SUCCESS)
        return res;
    const struct kernel *chosen = k;

    /* The Hopper pipeline's stages hold the constants of two zero rows
     * at most: zero points in groups of 32 take the portable kernels. */
    const bool tma_zeros_fit = !p->has_zeros || p->shape.per_channel ||
                               BK_W4A16_STAGE_K / p->shape.group <= BK_W4A16_TMA_Z_ROWS;
    if (clusters && tm <= 32 && !portable_only && tma_zeros_fit) {
        k = &g->k[K_TMA];
        kernel_init(k, p, &a, tm, BK_W4A16_TILE_N, BK_W4A16_STAGE_KT, BK_W4A16_TMA_THREADS(tm),
                    BK_W4A16_TMA_SMEM(tm, p->has_zeros), BK_W4A16_TMA_CTAS_PER_SM(tm),
                    BK_W4A16_TMA_STAGES(tm));
        k->maps = true;
        if (early_ring())
            k->args.flags |= BK_W4A16_EARLY_RING;
        k->module = BK_CUDA_MODULE_W4A16_GEMM;
        k->prefix = p->has_zeros ? "bk_w4a16_gemm_tma_zp" : "bk_w4a16_gemm_tma";
        k->tile_tag = 'm';
        k->box_srows = p->shape.per_channel ? 0 : BK_W4A16_STAGE_K / (uint32_t)p->shape.group;
        if ((res = choose_splits(plan, k, type, clusters)) != BK_SUCCESS)
            return res;
        chosen = k;
    }
    if (sm90a && tm > 32 && !portable_only) {
        int forced;
        const int tt = wgmma_rows(p, &forced);
        k = &g->k[K_WGMMA];
        if ((res = wgmma_init(plan, k, p, &a, tt, type, clusters, false)) != BK_SUCCESS)
            return res;
        /* Tiles of 256 rows leave SMs idle where N has few column tiles:
         * 128-row tiles (twice the CTAs, each reading its weights again,
         * ~10% slower where both fill the device alike) where they fill
         * its waves at least 1.2 times as well (74cd082). */
        if (!forced && tt == 256) {
            struct kernel half;
            if ((res = wgmma_init(plan, &half, p, &a, 128, type, clusters, false)) != BK_SUCCESS)
                return res;
            const struct bk_cuda_context *c = plan->ctx->impl;
            if (wave_fill(&half, c) >= 1.2 * wave_fill(k, c))
                *k = half;
        }
        if ((res = consider_stream_k(plan, g, k, p, &a, type, clusters)) != BK_SUCCESS)
            return res;
        chosen = k;
    }
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s", chosen->name);
    return BK_SUCCESS;
}
