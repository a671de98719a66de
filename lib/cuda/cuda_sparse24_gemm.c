/* SPDX-License-Identifier: Apache-2.0 */
/* The 2:4 sparse GEMM on CUDA, Y = act(alpha X @ W^T + beta C + bias):
 * choosing the kernel, tiling and grid at plan creation, and the X loader
 * per run.
 *
 * F16/BF16 run on sparse tensor cores. On compute capability 9.0 and N
 * above 64, the Hopper kernels (module sparse24_wgmma: wgmma.sp, X and W
 * by tensor maps made per run) in tiles of 128 x 256, or 128 x 128 where
 * those would not fill the GPU once; a run whose X or W the maps cannot
 * describe (X strided or misaligned) takes the sm_80 kernel below. Where
 * the m tiles pair up, clusters of two CTAs along m share X's tiles. On
 * 9.0 and N <= 16 the Hopper decode kernels (same module, same maps; 128 x
 * 16 tiles, K split over a cluster of S CTAs where M has too few tiles to
 * fill the GPU evenly; elsewhere stream-K, a CTA an SM taking equal runs
 * of the (tile, k step) units). Elsewhere (module sparse24_mma) one of the
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
 * loader, =mma the sm_80 kernels on Hopper; BK_CUDA_SPARSE24_TILING=128x128
 * (64x32, 64x16, 32x16, 32x16_deep; wg128x256, wg128x128 for the Hopper kernels;
 * decode for the Hopper decode kernels at any N) forces a tiling;
 * BK_CUDA_SPARSE24_DECODE_SPLIT=S (1, 2, 3, 4 or 8) the decode kernels'
 * split of K over a cluster (instead of the rule's choice; 0 stream-K), and
 * BK_CUDA_SPARSE24_DECODE_CTAS=G stream-K's grid (at most two CTAs an SM);
 * BK_CUDA_SPARSE24_CLUSTER=1 keeps the Hopper kernels'
 * CTAs from pairing up in clusters; BK_CUDA_SPARSE24_SCHEDULE=tiles keeps
 * them from splitting the last round's tiles along K (stream-K),
 * =stream-k has them split wherever the tiles allow. */
#include "cuda_sparse24.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct bk_sp24_gemm_args) <= BK_CUDA_MAX_PARAM_BYTES &&
                   sizeof(struct bk_sp24_wgmma_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the GEMM parameter block fits struct bk_cuda_kernel_launch");
_Static_assert(BK_GEMM_ACTIVATION_RELU == 1 && BK_GEMM_ACTIVATION_GELU_TANH == 2,
               "the kernels' activation codes (kernels/sparse24_common.cuh)");

struct tiling {
    unsigned int bm, bn, threads, shared_bytes;
    const char *tag;                      /* ends the kernel's name ("" or "_deep") */
};

static const struct tiling mma_tilings[] = {
#define BK_SP24_TILING_ROW(BM, BN, WM, WN, STAGES, TAG) \
    { BM, BN, (WM) * (WN) * 32, BK_SP24_MMA_SMEM(BM, BN, STAGES), #TAG },
    BK_SP24_MMA_TILINGS(BK_SP24_TILING_ROW)
#undef BK_SP24_TILING_ROW
};
#define TILING_LARGE 0
#define TILING_SMALL 1
#define TILING_DECODE 2        /* 64 x 16 */
#define TILING_DECODE_NARROW 3 /* 32 x 16 */
#define TILING_DECODE_DEEP 4   /* 32 x 16, 12 stages */
#define SMALL_N 64  /* N up to this takes the small tiling */
#define DECODE_N 16 /* N up to this, the decode tilings */

static const struct tiling wgmma_tilings[] = {
#define BK_SP24_WG_TILING_ROW(BN, STAGES) \
    { BK_SP24_WG_BM, BN, BK_SP24_WG_THREADS, BK_SP24_WG_SMEM(BN, STAGES), "" },
    BK_SP24_WG_TILINGS(BK_SP24_WG_TILING_ROW)
#undef BK_SP24_WG_TILING_ROW
};
#define WG_WIDE 0   /* 128 x 256 */
#define WG_NARROW 1 /* 128 x 128 */

static const struct tiling general_tiling = {
    BK_SP24_GENERAL_BM, BK_SP24_GENERAL_BN, BK_SP24_GENERAL_THREADS, 0, ""
};

/* One kernel of a plan with its launch shape and parameters (addresses are
 * filled in per run). */
struct gemm_kernel {
    CUfunction fn;
    unsigned int grid, grid_z, block, shared_bytes;
    unsigned int block_n;                 /* the tile's n */
    char name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_sp24_gemm_args args;
};

struct gemm_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    bool empty;                           /* nothing to compute */
    bool has_wgmma;                       /* Hopper kernel where the run's maps can be made */
    bool decode;                          /* ... and it is a decode kernel */
    bool has_async;                       /* async may be used where X's address allows */
    struct gemm_kernel wgmma, async, fallback; /* fallback: _strided or general */
    int64_t mts, kbs;                     /* the prepared weight's tiles (wgmma's maps) */
    unsigned int cluster;                 /* wgmma: CTAs along m sharing X's tiles */
};

enum path { PATH_AUTO, PATH_MMA, PATH_STRIDED, PATH_GENERAL };

static enum path forced_path(void)
{
    const char *s = getenv("BK_CUDA_SPARSE24_KERNEL");
    if (s && strcmp(s, "general") == 0)
        return PATH_GENERAL;
    if (s && strcmp(s, "strided") == 0)
        return PATH_STRIDED;
    if (s && strcmp(s, "mma") == 0)
        return PATH_MMA;
    return PATH_AUTO;
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

/* The small tiling for decode-like N, and where the large one leaves SMs
 * idle; BK_CUDA_SPARSE24_TILING names one to use instead. */
static const struct tiling *choose_tiling(const struct bk_sparse24_gemm_problem *p, int sm_count,
                                          bool hopper)
{
    const char *forced = getenv("BK_CUDA_SPARSE24_TILING");
    for (size_t i = 0; forced && i < sizeof mma_tilings / sizeof mma_tilings[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "%ux%u%s", mma_tilings[i].bm, mma_tilings[i].bn,
                 mma_tilings[i].tag);
        if (strcmp(forced, name) == 0)
            return &mma_tilings[i];
    }
    const uint64_t large = ceil_div((uint64_t)p->m, mma_tilings[TILING_LARGE].bm) *
                           ceil_div((uint64_t)p->n, mma_tilings[TILING_LARGE].bn) *
                           (uint64_t)p->batch;
    /* N <= 16 reads the weight once per CTA column: 16-wide tiles waste no
     * MMA work, and 32-row ones where 64-row ones would leave fewer than 4
     * CTAs per SM (H100, 2026-11-22: 16-21% faster than 64 x 32 on the
     * Llama-70B shapes at N = 16; 4edf3d5); those with the deeper
     * ring where each SM holds at most two of them, which then stream too
     * little of the weight at once (H100, 2026-11-24: 7-9% faster at
     * M = 8192, 8% slower at 2.4 CTAs an SM; measured on Hopper only). */
    if (p->n <= DECODE_N) {
        const uint64_t ctas = ceil_div((uint64_t)p->m, mma_tilings[TILING_DECODE].bm) *
                              (uint64_t)p->batch;
        if (ctas >= 4 * (uint64_t)sm_count)
            return &mma_tilings[TILING_DECODE];
        const uint64_t narrow = ceil_div((uint64_t)p->m, mma_tilings[TILING_DECODE_NARROW].bm) *
                                (uint64_t)p->batch;
        return &mma_tilings[hopper && narrow <= 2 * (uint64_t)sm_count ? TILING_DECODE_DEEP
                                                                        : TILING_DECODE_NARROW];
    }
    if (p->n <= SMALL_N || large < (uint64_t)sm_count)
        return &mma_tilings[TILING_SMALL];
    return &mma_tilings[TILING_LARGE];
}

/* The Hopper tiling for the problem, NULL for none: N above SMALL_N on
 * compute capability 9.0 (sm_90a code), 128 x 256 tiles where they fill
 * the GPU at least once, else 128 x 128; BK_CUDA_SPARSE24_TILING names
 * one (wg128x256, wg128x128) or an sm_80 tiling (then none). */
static const struct tiling *choose_wgmma_tiling(const struct bk_sparse24_gemm_problem *p,
                                                const BkDeviceProperties *dev)
{
    if (dev->computeCapabilityMajor != 9 || dev->computeCapabilityMinor != 0)
        return NULL;
    const char *forced = getenv("BK_CUDA_SPARSE24_TILING");
    if (forced) {
        for (size_t i = 0; i < sizeof wgmma_tilings / sizeof wgmma_tilings[0]; i++) {
            char name[32];
            snprintf(name, sizeof name, "wg%ux%u", wgmma_tilings[i].bm, wgmma_tilings[i].bn);
            if (strcmp(forced, name) == 0)
                return &wgmma_tilings[i];
        }
        return NULL;
    }
    if (p->n <= SMALL_N)
        return NULL;
    const uint64_t wide = ceil_div((uint64_t)p->m, BK_SP24_WG_BM) *
                          ceil_div((uint64_t)p->n, wgmma_tilings[WG_WIDE].bn) * (uint64_t)p->batch;
    return &wgmma_tilings[wide >= dev->multiprocessorCount ? WG_WIDE : WG_NARROW];
}

static const struct tiling decode_tiling = {
    BK_SP24_WG_BM, BK_SP24_DECODE_BN, BK_SP24_DECODE_THREADS, BK_SP24_DECODE_SMEM, ""
};
static const unsigned int decode_splits[] = {
#define BK_SP24_DECODE_SPLIT_ROW(S) S,
    BK_SP24_DECODE_SPLITS(BK_SP24_DECODE_SPLIT_ROW)
#undef BK_SP24_DECODE_SPLIT_ROW
};

/* Whether the plan takes a Hopper decode kernel: compute capability 9.0,
 * N <= 16 (any N with BK_CUDA_SPARSE24_TILING=decode; none with another
 * tiling named). */
static bool takes_decode(const struct bk_sparse24_gemm_problem *p, const BkDeviceProperties *dev)
{
    if (dev->computeCapabilityMajor != 9 || dev->computeCapabilityMinor != 0)
        return false;
    const char *forced = getenv("BK_CUDA_SPARSE24_TILING");
    if (forced)
        return strcmp(forced, "decode") == 0;
    return p->n <= DECODE_N;
}

/* The decode kernels' split of K over a cluster of S CTAs: where the m
 * tiles times S (1 or 2) make between 7/8 of the SMs and all of them,
 * each CTA with at least 4 k steps, the CTAs' equal halves beat
 * stream-K's uneven pieces (H200, N = 16: M = 8192 at K = 8192 and 28672,
 * split 2 24.3 / 66.6 us, stream-K 25.2 / 68.0; M = 10240, 80 tiles,
 * split 1 31.4, stream-K 30.1; M = 57344 139.0 and 130.7). Clusters of
 * more pack badly into the GPCs (a split of 3 of 80 tiles ran 10%
 * slower than none). BK_CUDA_SPARSE24_DECODE_SPLIT names one of
 * decode_splits, or 0 for stream-K. Returns 0 for stream-K. */
static unsigned int decode_split(uint64_t m_tiles, uint64_t batch, int64_t ksteps, int sm_count)
{
    const char *forced = getenv("BK_CUDA_SPARSE24_DECODE_SPLIT");
    const size_t count = sizeof decode_splits / sizeof decode_splits[0];
    if (forced && strcmp(forced, "0") == 0)
        return 0;
    for (size_t i = 0; forced && i < count; i++)
        if (strtol(forced, NULL, 10) == (long)decode_splits[i])
            return decode_splits[i];
    const uint64_t sms = (uint64_t)sm_count, tiles = m_tiles * batch;
    for (unsigned int s = 2; s >= 1; s--)
        if (batch <= 65535 && tiles * s <= sms && 8 * tiles * s >= 7 * sms &&
            (uint64_t)ksteps >= 4 * s)
            return s;
    return 0;
}

/* A stream-K decode grid whose runs line up with the T tiles, where one
 * keeps at least 7/10 of the SMs busy: q T CTAs (each 1/q of a tile, q as
 * large as fits), else T q / (q - 1) (each (q - 1)/q of a tile: every
 * tile in exactly two pieces, q as small as fits); 0 where none does.
 * Runs that end at odd places split some tiles in three, whose head then
 * waits for a CTA whose whole run lies inside the tile: H200 probe, N =
 * 16, us, the SMs' 132 CTAs / aligned: T = 80 (K 8192) 28.7 / 28.2 (120),
 * T = 96 (K 4096) 19.6 / 19.2 (96), T = 32 (K 4096) 10.4 / 9.7 (128);
 * T = 448 and 172 have no aligned grid (128 and 129 there: level). */
static uint64_t aligned_decode_ctas(uint64_t tiles, uint64_t sms)
{
    if (tiles == 0 || tiles > sms)
        return 0;
    const uint64_t least = (7 * sms + 9) / 10;
    if (sms / tiles * tiles >= least)
        return sms / tiles * tiles;
    for (uint64_t q = 2; tiles * q / (q - 1) >= least; q++)
        if (tiles * q % (q - 1) == 0 && tiles * q / (q - 1) <= sms)
            return tiles * q / (q - 1);
    return 0;
}

/* Stream-K decode's grid: a CTA an SM (aligned with the tiles where it can
 * be, aligned_decode_ctas), each with at least DECODE_MIN_STEPS units (a
 * CTA streams its share at ~50 GB/s, so every SM has to take part for the
 * memory's speed; a second CTA on an SM shares its intake: H200,
 * 995d549); BK_CUDA_SPARSE24_DECODE_CTAS names another, up to
 * the two an SM that the GPU holds at once (a head waits for CTAs after
 * it: all have to be resident). */
#define DECODE_MIN_STEPS 8
static unsigned int decode_ctas(uint64_t tiles, uint64_t ksteps, int sm_count)
{
    const char *env = getenv("BK_CUDA_SPARSE24_DECODE_CTAS");
    const long forced = env ? strtol(env, NULL, 10) : 0;
    const uint64_t units = tiles * ksteps, aligned = aligned_decode_ctas(tiles, (uint64_t)sm_count);
    uint64_t ctas = aligned ? aligned : (uint64_t)sm_count;
    if (ctas > units / DECODE_MIN_STEPS)
        ctas = units / DECODE_MIN_STEPS;
    if (forced > 0)
        ctas = (uint64_t)forced < 2 * (uint64_t)sm_count ? (uint64_t)forced
                                                          : 2 * (uint64_t)sm_count;
    if (ctas > units)
        ctas = units;
    return ctas < 1 ? 1u : (unsigned int)ctas;
}

/* The Hopper kernels are persistent: as many clusters of `cluster` CTAs as
 * the device holds at once (the driver's count, which knows how clusters
 * pack into GPCs; where it cannot say, the SMs), never more than there
 * are tiles, all in x. */
static void persistent_grid(BkPlan plan, struct gemm_kernel *k, unsigned int cluster)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    const uint64_t tiles = (uint64_t)k->args.m_tiles / cluster * k->args.n_tiles *
                           (uint64_t)k->args.batch;
    const int fit = bk_cuda_max_active_clusters(
        plan, k->fn, (unsigned int)(tiles < 65536 ? tiles : 65536) * cluster, 1, 1, k->block,
        k->shared_bytes);
    uint64_t clusters = fit > 0 ? (uint64_t)fit : (uint64_t)c->sm_count / cluster;
    if (clusters < 1)
        clusters = 1;
    if (clusters > tiles)
        clusters = tiles;
    k->grid = (unsigned int)(clusters * cluster);
    k->grid_z = 1;
}

/* Stream-K's costs in k steps of a 128 x 256 tile (~0.5 us each on the
 * H100): a partial tile through the L2 (128 KiB a CTA, ~1.2 us) that a
 * head reads per piece, and a margin for the pieces' other fixed costs. */
#define SK_PARTIAL_STEPS 3
#define SK_MARGIN_STEPS 4

/* Whether the Hopper kernel splits the last round's tiles into pieces
 * along K (the schedule in sparse24_args.h), and if so its dp_tiles and
 * sk_split: the count of pieces s (2 or more, at most C / r, at most the k
 * steps) for which the last round's k steps plus the partial tiles that a
 * head reads, ceil(steps / s) + SK_PARTIAL_STEPS s, are fewest, where that
 * beats the whole tiles' steps by SK_MARGIN_STEPS; forced, the most pieces
 * (the tests' hardest case). */
static bool stream_k_schedule(const struct gemm_kernel *k, unsigned int cluster, int64_t ksteps,
                              struct bk_sp24_gemm_args *a)
{
    const uint64_t tiles = (uint64_t)k->args.m_tiles / cluster * k->args.n_tiles *
                           (uint64_t)k->args.batch;
    const uint64_t clusters = k->grid / cluster, steps = (uint64_t)ksteps;
    const uint64_t left = tiles % clusters;
    a->dp_tiles = (uint32_t)tiles;
    a->sk_split = 0;
    const char *forced = getenv("BK_CUDA_SPARSE24_SCHEDULE");
    if ((forced && strcmp(forced, "tiles") == 0) || left == 0 || 2 * left > clusters ||
        steps < 2)
        return false;
    const uint64_t most = clusters / left < steps ? clusters / left : steps;
    uint64_t best = most, best_cost = 0;
    if (!(forced && strcmp(forced, "stream-k") == 0)) {
        for (uint64_t s = 2; s <= most; s++) {
            const uint64_t cost = ceil_div(steps, s) + SK_PARTIAL_STEPS * s;
            if (s == 2 || cost < best_cost) {
                best = s;
                best_cost = cost;
            }
        }
        if (best_cost + SK_MARGIN_STEPS > steps)
            return false;
    }
    a->dp_tiles = (uint32_t)(tiles - left);
    a->sk_split = (uint32_t)best;
    return true;
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
    k->block_n = t->bn;
    k->shared_bytes = t->shared_bytes;
    return bk_cuda_find_kernel(plan, module, k->name, &k->fn, k->shared_bytes);
}

/* k's parameters with the run's addresses. */
static void run_args(const struct gemm_kernel *k, const struct bk_run_args *run,
                     struct bk_sp24_gemm_args *a)
{
    *a = k->args;
    a->w = run->binding[BK_SPARSE24_GEMM_BINDING_WEIGHT];
    a->x = run->binding[BK_SPARSE24_GEMM_BINDING_X];
    a->c = run->binding[BK_SPARSE24_GEMM_BINDING_C];
    a->y = run->binding[BK_SPARSE24_GEMM_BINDING_Y];
    a->bias = run->binding[BK_SPARSE24_GEMM_BINDING_BIAS];
}

static void launch_of(const struct gemm_kernel *k, const struct bk_run_args *run,
                      struct bk_cuda_kernel_launch *launch)
{
    struct bk_sp24_gemm_args a;
    run_args(k, run, &a);
    bk_cuda_launch_set(launch, k->fn, k->grid, 1, k->grid_z, k->block, k->shared_bytes, k->name, &a,
                        sizeof a);
}

/* The strides of a [batch][N][cols] map (unit innermost) of an operand with
 * row and batch strides rs and bs: those never followed (one row, one
 * batch) take a value the engine accepts. */
static void map_strides(const struct bk_sparse24_gemm_problem *p, int64_t cols, int64_t rs,
                        int64_t bs, int64_t stride[3])
{
    stride[1] = p->n > 1 ? rs : (cols + 7) / 8 * 8;
    stride[0] = p->batch > 1 ? bs : stride[1] * p->n;
    stride[2] = 1;
}

/* The run's tensor maps for the Hopper kernel: X [batch][N][K] in boxes
 * of 64 x BN, 128-byte swizzled; the prepared values and metadata as rows
 * of U64, one per tile row's k step (bk_sp24_step_row), in boxes of 8
 * rows (a 128-row block's k step, contiguous). false when X or W is
 * misaligned or the rows outnumber the copy engine's coordinates. */
static bool wgmma_maps(const struct gemm_plan *g, const struct bk_sparse24_gemm_problem *p,
                       struct bk_sp24_wgmma_args *t)
{
    const struct bk_sp24_gemm_args *a = &t->a;
    const int64_t x_extent[3] = { p->batch, p->n, p->k };
    int64_t x_stride[3];
    map_strides(p, p->k, p->x.row_stride, p->x.batch_stride, x_stride);
    const int64_t rows = g->mts * (g->kbs / 2);
    const int64_t w_cols = 2 * BK_SP24_TILE_BYTES / 8, e_cols = 2 * BK_SP24_META_BYTES / 8;
    const int64_t w_extent[2] = { rows, w_cols }, w_stride[2] = { w_cols, 1 };
    const int64_t e_extent[2] = { rows, e_cols }, e_stride[2] = { e_cols, 1 };
    return rows <= INT32_MAX &&
           bk_cuda_tensor_map((CUtensorMap *)t->map_x, p->type, a->x, 3, x_extent, x_stride, 64,
                              g->wgmma.block_n / g->cluster) &&
           bk_cuda_tensor_map_plain((CUtensorMap *)t->map_w, 8, a->w, 2, w_extent, w_stride,
                                    (uint32_t)w_cols, BK_SP24_BLOCK_TILE_ROWS) &&
           bk_cuda_tensor_map_plain((CUtensorMap *)t->map_e, 8, a->w + a->meta_offset, 2,
                                    e_extent, e_stride, (uint32_t)e_cols, BK_SP24_BLOCK_TILE_ROWS);
}

/* The run's map of Y for the Hopper epilogue's stores by the copy engine,
 * where it can take them: F16/BF16 Y with unit m stride and nothing but
 * alpha to apply, [batch][N][M] in boxes of 64 x BK_SP24_WG_Y_BOX_N,
 * 128-byte swizzled; false leaves the epilogue's own stores. */
static bool y_map(const struct bk_sparse24_gemm_problem *p, struct bk_sp24_wgmma_args *t)
{
    const struct bk_sp24_gemm_args *a = &t->a;
    if ((a->flags & (BK_SP24_READ_C | BK_SP24_BIAS)) || a->activation != 0 || p->y.col_stride != 1)
        return false;
    const int64_t extent[3] = { p->batch, p->n, p->m };
    int64_t stride[3];
    map_strides(p, p->m, p->y.row_stride, p->y.batch_stride, stride);
    return bk_cuda_tensor_map((CUtensorMap *)t->map_y, p->out_type, a->y, 3, extent, stride, 64,
                              BK_SP24_WG_Y_BOX_N);
}

static uint32_t gemm_prepare(BkPlan plan, const struct bk_run_args *run,
                             struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct gemm_plan *g = plan->impl;
    if (g->empty)
        return 0;
    if (g->has_wgmma) {
        struct bk_sp24_wgmma_args t;
        memset(&t, 0, sizeof t);
        const struct gemm_kernel *k = &g->wgmma;
        run_args(k, run, &t.a);
        if (wgmma_maps(g, &plan->problem.sparse24_gemm, &t)) {
            if (!g->decode && y_map(&plan->problem.sparse24_gemm, &t))
                t.a.flags |= BK_SP24_Y_MAP;
            if (plan->props.workspaceSize > 0) {  /* stream-K: tagged flags */
                t.a.workspace = run->workspace;
                t.a.sk_tag = bk_cuda_launch_tag();
            }
            bk_cuda_launch_set(&launches[0], k->fn, k->grid, 1, k->grid_z, k->block,
                               k->shared_bytes, k->name, &t, sizeof t);
            return 1;
        }
    }
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
    const BkDeviceProperties *dev = &plan->ctx->props;
    const bool hopper = dev->computeCapabilityMajor == 9;
    const struct tiling *t = tensor_cores ? choose_tiling(p, c->sm_count, hopper) : &general_tiling;
    if (ceil_div((uint64_t)p->m, t->bm) * ceil_div((uint64_t)p->n, t->bn) > UINT32_MAX)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: M = %lld and N = %lld make too many tiles",
                        plan->op_name, (long long)p->m, (long long)p->n);

    char name[BK_MAX_KERNEL_NAME_SIZE];
    /* The Hopper kernel (persistent: persistent_grid), X with unit k
     * stride and 16-byte rows; the sm_80 kernel stays the fallback for
     * runs whose addresses the maps cannot take. */
    const bool mappable = tensor_cores && forced == PATH_AUTO && x_async_fits(p);
    const struct tiling *wt = mappable ? choose_wgmma_tiling(p, dev) : NULL;
    if (mappable && takes_decode(p, dev)) {
        /* The decode kernel: stream-K, a grid of decode_ctas in x; or
         * forced, a grid of m tiles times the split of K (the CTAs of a
         * cluster), batches along z, n tiles looping in the CTA. */
        const uint64_t m_tiles = ceil_div((uint64_t)p->m, decode_tiling.bm);
        const uint64_t tiles = m_tiles * ceil_div((uint64_t)p->n, decode_tiling.bn) *
                               (uint64_t)p->batch;
        const unsigned int split = decode_split(m_tiles, (uint64_t)p->batch, l.kbs / 2,
                                                c->sm_count);
        if (split ? m_tiles * split > INT32_MAX : tiles > UINT32_MAX)
            return bk_error(BK_ERROR_UNSUPPORTED, "%s: M = %lld makes too many tiles",
                            plan->op_name, (long long)p->m);
        if (split)
            snprintf(name, sizeof name, "bk_sp24_decode_%s_%s_%ux%u_s%u", type, out,
                     decode_tiling.bm, decode_tiling.bn, split);
        else
            snprintf(name, sizeof name, "bk_sp24_decode_%s_%s_%ux%u_sk", type, out,
                     decode_tiling.bm, decode_tiling.bn);
        if ((res = kernel_init(plan, BK_CUDA_MODULE_SPARSE24_WGMMA, name, &decode_tiling, &l,
                               &g->wgmma)) != BK_SUCCESS)
            return res;
        if (split) {
            g->wgmma.grid = (unsigned int)(m_tiles * split);
        } else {
            g->wgmma.grid = decode_ctas(tiles, (uint64_t)(l.kbs / 2), c->sm_count);
            g->wgmma.grid_z = 1;
            plan->props.workspaceSize = BK_SP24_SK_WORKSPACE(g->wgmma.grid, decode_tiling.bn);
        }
        g->cluster = 1;  /* (along m: X's boxes are the whole tile's 16 rows) */
        g->has_wgmma = g->decode = true;
        g->mts = l.mts;
        g->kbs = l.kbs;
    } else if (wt && ceil_div((uint64_t)p->m, wt->bm) * ceil_div((uint64_t)p->n, wt->bn) *
                             (uint64_t)p->batch <= INT32_MAX) {
        /* Pairs of CTAs along m share X's tiles (one load multicast to
         * both) where the m tiles pair up. */
        const char *single = getenv("BK_CUDA_SPARSE24_CLUSTER");
        const unsigned int m_tiles = (unsigned int)ceil_div((uint64_t)p->m, wt->bm);
        g->cluster = m_tiles % 2 == 0 && !(single && strcmp(single, "1") == 0) ? 2 : 1;
        snprintf(name, sizeof name, "bk_sp24_wgmma_%s_%s_%ux%u_c%u", type, out, wt->bm, wt->bn,
                 g->cluster);
        if ((res = kernel_init(plan, BK_CUDA_MODULE_SPARSE24_WGMMA, name, wt, &l, &g->wgmma)) !=
            BK_SUCCESS)
            return res;
        persistent_grid(plan, &g->wgmma, g->cluster);
        g->has_wgmma = true;
        g->mts = l.mts;
        g->kbs = l.kbs;
        if (stream_k_schedule(&g->wgmma, g->cluster, l.kbs / 2, &g->wgmma.args)) {
            plan->props.workspaceSize = BK_SP24_SK_WORKSPACE(g->wgmma.grid, wt->bn);
        }
    }
    if (tensor_cores) {
        snprintf(name, sizeof name, "bk_sp24_mma_%s_%s_%ux%u%s_strided", type, out, t->bm, t->bn,
                 t->tag);
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
             g->has_wgmma ? g->wgmma.name : g->has_async ? g->async.name : g->fallback.name);
    return BK_SUCCESS;
}
