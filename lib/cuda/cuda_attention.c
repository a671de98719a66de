/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention on CUDA (modules attention_general,
 * attention_mma, attention_mma_backward, attention_tf32*, and on sm_90
 * attention_wgmma and attention_wgmma_backward): the kernels chosen at
 * plan creation, the launches of a run.
 *
 * A run is up to four launches in one stream, each waiting for the one
 * before: the LIST form scattered into the workspace mask; then the
 * forward kernel, or backward's row sums, dq and dk/dv kernels. These run
 * on tensor cores (kernels/attention_mma*.cu) for F16 and BF16, and
 * (kernels/attention_tf32*.cu, 3xTF32) for F32, any D and
 * Dv from 1 to 256 (at the compiled widths of BK_ATTENTION_MMA_WIDTH),
 * blocks that are multiples of 64 (or DENSE), lengths below 2^31, where
 * the device lets a CTA have the kernel's shared memory: by 16-byte copies
 * where every stride but the unit column one is a whole number of 16-byte
 * steps and every tensor address of the run is 16-byte aligned, element by
 * element otherwise. On sm_90 the wgmma kernels (kernels/attention_wgmma*.cu)
 * take D and Dv up to 128 in 8-column steps (at width 64 or 128,
 * wgmma_width()) where the 16-byte copies would and the tensors make
 * tensor maps. Every other case takes the general kernels. */
#include "cuda_attention_decode.h"
#include "cuda_attention_turns.h"
#include "../checked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct bk_attention_tma_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the attention parameter blocks fit struct bk_cuda_kernel_launch");

#define MMA_TILE BK_ATTENTION_MMA_TILE
#define GENERAL_ROWS BK_ATTENTION_GENERAL_WARPS

enum {
    K_SCATTER, K_GENERAL, K_FAST, K_ROWSUM, K_DQ, K_DKV, K_DQ_FAST, K_DKV_FAST, K_WGMMA,
    K_DQ_WGMMA, K_DKV_WGMMA, K_CHOICE, K_DKVQ_WGMMA, K_DKVQ_ATOMIC_WGMMA,
    K_DQ_FROM_SUM, K_WGMMA_NARROW, K_FIXUP, K_COUNT
};

/* The kernels a plan may take, fastest last; BK_CUDA_ATTENTION_PATH
 * (general, mma, wgmma), read when a plan is made, caps the choice (for
 * tests and tuning). */
enum path { PATH_GENERAL, PATH_MMA, PATH_WGMMA };

struct attention_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    bool list, fast, wgmma;
    /* The tensor-core kernels' widths (BK_ATTENTION_MMA_WIDTH) and whether
     * every stride allows 16-byte copies (rows_vectorised). */
    int width_k, width_v;
    /* The Hopper kernels' width (wgmma_width()), where they take the plan. */
    int wgmma_width;
    bool vectorised;
    /* The Hopper backward as the row sums and one kernel for dk, dv and dq
     * (fused_backward()), with its workspace past the core's; or the row
     * sums, such a kernel adding dQ shares with float atomics as they come,
     * and dQ from their sums (atomic_backward()). */
    bool fused, atomic;
    /* The Hopper backward on the pair kernels (widths 192 and 256). */
    bool pair;
    uint64_t ws_dq_sum, ws_dq_count;
    const struct forward_kernel *forward; /* the Hopper forward's kernel (forward_kernel()) */
    /* Whether the pattern chooses at run time between `forward` (deep) and
     * the narrow kernel (K_CHOICE, then K_WGMMA and K_WGMMA_NARROW). */
    bool chooses;
    /* row_ctas() of `forward` and of the narrow kernel; 0: a CTA a tile */
    unsigned int row_ctas, narrow_row_ctas;
    unsigned int fast_shared_bytes[K_COUNT];
    CUfunction fn[K_COUNT];
    char name[K_COUNT][BK_MAX_KERNEL_NAME_SIZE];
    struct bk_attention_args args;
    /* The forward of few query rows: cuda_attention_decode.h. */
    struct attention_decode_plan decode;
};

/* Whether the Hopper backward at width `width` takes the pair kernels,
 * whose CTAs own 64 keys or query rows that both consumers share: past
 * 128, where the 128-row kernels' accumulators do not fit a consumer's
 * registers (at 64 and 128 the pair ran 0.57-0.71x of them:
 * doc/design/attention.md). */
static bool pair_width(int width)
{
    return width > 128;
}

/* The rows (queries of dq, keys of dk/dv) a CTA of the Hopper backward at
 * width `width` owns: 128, or 64 on the pair kernels. */
static int64_t backward_rows(int width)
{
    return pair_width(width) ? BK_ATTENTION_WGMMA_PAIR_ROWS : BK_ATTENTION_WGMMA_ROWS;
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

static int64_t round_up(int64_t a, int64_t b)
{
    return ceil_div(a, b) * b;
}

static struct bk_attention_view view(const int64_t *s, int rank)
{
    struct bk_attention_view v = { 0 };
    for (int i = 0; i < rank; i++)
        v.s[i] = s[i];
    return v;
}

static const char *type_suffix(BkDataType t)
{
    switch (t) {
    case BK_DATA_TYPE_F16: return "f16";
    case BK_DATA_TYPE_BF16: return "bf16";
    case BK_DATA_TYPE_F32: return "f32";
    default: return "f64";
    }
}

/* Unit column strides and rows in whole 16-byte steps (`step` elements:
 * 8 of F16 or BF16, 4 of F32). */
static bool rows_vectorised(const int64_t *s, int64_t step)
{
    return s[3] == 1 && s[0] % step == 0 && s[1] % step == 0 && s[2] % step == 0;
}

static enum path path_cap(void)
{
    const char *s = getenv("BK_CUDA_ATTENTION_PATH");
    if (s && !strcmp(s, "general"))
        return PATH_GENERAL;
    if (s && !strcmp(s, "mma"))
        return PATH_MMA;
    return PATH_WGMMA;
}

/* The persistent grid of the Hopper kernels that own tiles of `rows`
 * query rows (the forward, dq): one CTA an SM (it takes one: its shared
 * memory), each running on from one tile to the next while the last one's
 * outputs are stored (a CTA's start and end cost about three tiles' time,
 * which sparse rows of few tiles felt most). A CTA a tile instead where
 * the tiles' work differs in ways fixed turns cannot share out: PACKED
 * sequences (whose lengths the plan does not know; persistent, the
 * turns also spread a long sequence's tiles over every head at once,
 * past the L2), and causal DENSE problems whose turns leave a CTA 8% over
 * the mean (cuda_attention_turns.h). BK_CUDA_ATTENTION_CTAS, read when a
 * plan is made, caps the CTAs (tests make CTAs take many tiles with it);
 * 0 gives the grid of a CTA a tile. */
static unsigned int row_ctas(const struct bk_cuda_context *c, unsigned int per_sm,
                             const struct bk_attention_problem *p, int64_t rows)
{
    const unsigned int sms = (c->sm_count > 0 ? (unsigned int)c->sm_count : 1u) * per_sm;
    const char *s = getenv("BK_CUDA_ATTENTION_CTAS");
    if (!s || !*s) {
        if (p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED)
            return 0;
        if (p->causal && p->form == BK_ATTENTION_PATTERN_DENSE && !p->has_sequences &&
            bk_attention_turns_uneven(p->batch, p->heads, p->lq, p->lk, rows, sms))
            return 0;
        return sms;
    }
    char *end;
    const unsigned long v = strtoul(s, &end, 10);
    return *end ? sms : v < sms ? (unsigned int)v : sms;
}

/* The Hopper forward's kernels: the plain one (two consumer warpgroups of
 * 64 rows); for query blocks of 64 rows whose neighbours' patterns differ
 * (MASK or LIST), where a plain CTA's consumers would skip each other's
 * key tiles (each skip costs nearly a tile's time: doc/design/attention.md), the
 * solo kernel at D = 64 (one consumer, two CTAs an SM, tiles of 64 rows)
 * and the deep one at D = 128 (a third ring stage: narrow, one consumer
 * with tiles of one 64-key slot, two CTAs an SM, wins where neighbouring
 * blocks share few key blocks, which is run-time data, see
 * forward_kernel; but a LIST's capacity bounds every row's, so a LIST of
 * capacity at most nbk / 8 takes narrow at D = 128: one consumer on 64-key
 * tiles ran there +4% at 12.5%, +10% at 10%, +30% at 5% over deep (H100,
 * de97223); for DENSE patterns at D = 64, the trio kernel (three
 * consumers, tiles of 192 rows: at D = 64 a softmax takes as long as the
 * GEMMs, and two run under each one's); for DENSE patterns at D = 128,
 * the wide kernel (the plain one with tiles of 192 keys: a tile's fixed
 * costs over 1.5 times the keys); each where rows see enough keys on
 * average (mean_row_keys), else plain. A trio CTA's consumers would span
 * two query blocks of a pattern, and a wide CTA's tiles mix key blocks,
 * hence DENSE only. */
struct forward_kernel {
    const char *tag;     /* BK_CUDA_ATTENTION_FORWARD's value */
    const char *pattern; /* its name, of the type suffix and width */
    unsigned int threads, rows, per_sm;
    /* Shared memory at widths 64, 128, 192 and 256 (wgmma_width()); 0
     * where the kernel does not take the width. */
    unsigned int shared_bytes[4];
    bool dense_only; /* reads no pattern: DENSE only, even where forced */
};
static const struct forward_kernel forward_kernels[] = {
    { "plain", "bk_attention_forward_wgmma_%s_d%d", BK_ATTENTION_WGMMA_THREADS,
      BK_ATTENTION_WGMMA_ROWS, 1,
      { BK_ATTENTION_WGMMA_SHARED_BYTES(64), BK_ATTENTION_WGMMA_SHARED_BYTES(128), 0, 0 }, false },
    { "solo", "bk_attention_forward_wgmma_solo_%s_d%d", BK_ATTENTION_WGMMA_SOLO_THREADS,
      BK_ATTENTION_WGMMA_SOLO_ROWS, 2,
      { BK_ATTENTION_WGMMA_SOLO_SHARED_BYTES(64), BK_ATTENTION_WGMMA_SOLO_SHARED_BYTES(128), 0,
        0 },
      false },
    { "narrow", "bk_attention_forward_wgmma_narrow_%s_d%d", BK_ATTENTION_WGMMA_SOLO_THREADS,
      BK_ATTENTION_WGMMA_SOLO_ROWS, 2, { 0, BK_ATTENTION_WGMMA_NARROW_SHARED_BYTES, 0, 0 }, false },
    { "deep", "bk_attention_forward_wgmma_deep_%s_d%d", BK_ATTENTION_WGMMA_THREADS,
      BK_ATTENTION_WGMMA_ROWS, 1, { 0, BK_ATTENTION_WGMMA_DEEP_SHARED_BYTES(128), 0, 0 }, false },
    { "trio", "bk_attention_forward_wgmma_trio_%s_d%d", BK_ATTENTION_WGMMA_TRIO_THREADS,
      BK_ATTENTION_WGMMA_TRIO_ROWS, 1, { BK_ATTENTION_WGMMA_TRIO_SHARED_BYTES(64), 0, 0, 0 },
      false },
    { "wide", "bk_attention_forward_wgmma_wide_%s_d%d", BK_ATTENTION_WGMMA_THREADS,
      BK_ATTENTION_WGMMA_ROWS, 1, { 0, BK_ATTENTION_WGMMA_WIDE_SHARED_BYTES(128), 0, 0 }, true },
    { "tall", "bk_attention_forward_wgmma_tall_%s_d%d", BK_ATTENTION_WGMMA_THREADS,
      BK_ATTENTION_WGMMA_ROWS, 1,
      { 0, 0, BK_ATTENTION_WGMMA_TALL_SHARED_BYTES(192), BK_ATTENTION_WGMMA_TALL_SHARED_BYTES(256) },
      false },
};
enum {
    FORWARD_PLAIN,
    FORWARD_SOLO,
    FORWARD_NARROW,
    FORWARD_DEEP,
    FORWARD_TRIO,
    FORWARD_WIDE,
    FORWARD_TALL
};

/* The shared memory of forward kernel f at a width wgmma_width() gives (0:
 * f does not take it). */
static unsigned int forward_shared_bytes(const struct forward_kernel *f, int width)
{
    return f->shared_bytes[width / 64 - 1];
}

/* The keys a query row sees on average: Lk (with sequences, the
 * longest's), and causal about half of Lq fewer (the diagonal aligned
 * bottom-right). */
static int64_t mean_row_keys(const struct bk_attention_problem *p)
{
    const int64_t lq = p->has_sequences ? p->max_len_q : p->lq;
    const int64_t lk = p->has_sequences ? p->max_len_k : p->lk;
    if (!p->causal)
        return lk;
    return lq <= lk ? lk - lq / 2 : lk / 2;
}

/* Below these mean keys a row the DENSE forward takes the plain kernel
 * rather than trio (D = 64) or wide (D = 128): few key tiles a query tile
 * leave the two turns that start and end each tile (its first S and its
 * last P V alone) a large share, more with three consumers or 192-key
 * tiles, whose last tile is partly padding (512 keys: 3 x 192). H100,
 * bf16, same call, TFLOP/s plain against trio: B32 L512 318 / 310,
 * causal 253 / 216, B16 L1024 375 / 374, causal 323 / 272; B2 L8192
 * 449 / 525, causal 441 / 489; against wide: B32 L512 444 / 403, causal
 * 356 / 317, B16 L1024 553 / 507, causal 463 / 434, B2 L4096 671 / 667,
 * L8192 659 / 678, causal 670 / 681. */
#define BK_ATTENTION_TRIO_KEYS 1024
#define BK_ATTENTION_WIDE_KEYS 2048

/* The forward kernel for p: as above, or the one BK_CUDA_ATTENTION_FORWARD
 * names (plain, solo, narrow, deep, trio, wide or tall; read when a plan is
 * made, for tests and tuning) where it takes p's width (and the wide one a
 * DENSE pattern); widths 192 and 256 take the tall kernel. Where the default is deep, *chooses: the pattern may
 * choose the narrow kernel instead at run time. A pattern whose
 * neighbouring query blocks share few key blocks (U > 0.8 N:
 * bk_attention_forward_choice) makes a deep CTA load a tile for one
 * consumer and skip it in the other; narrow, two CTAs an SM each walking
 * its own block, then wins (random blocks, U / N = 1 - density / 2: at
 * 25% +6-7%, at 10% +14-15%; deep ahead by 2-4% at 50%, U / N = 0.75).
 * Solo (128-key tiles) ran level with narrow or behind it everywhere once
 * both kept uniform descriptors, and takes no part (H200, a62ba0e;
 * doc/design/attention.md, "How the forward chooses its kernel"). */
static const struct forward_kernel *forward_kernel(const struct bk_attention_problem *p,
                                                   int width, bool *chooses)
{
    *chooses = false;
    const char *s = getenv("BK_CUDA_ATTENTION_FORWARD");
    const int n = (int)(sizeof forward_kernels / sizeof forward_kernels[0]);
    for (int i = 0; s && i < n; i++) {
        const struct forward_kernel *f = &forward_kernels[i];
        if (!strcmp(s, f->tag) && forward_shared_bytes(f, width) &&
            (!f->dense_only || p->form == BK_ATTENTION_PATTERN_DENSE))
            return f;
    }
    int k = FORWARD_PLAIN;
    if (width > 128)
        k = FORWARD_TALL;
    else if (p->form == BK_ATTENTION_PATTERN_DENSE)
        k = mean_row_keys(p) < (width == 64 ? BK_ATTENTION_TRIO_KEYS : BK_ATTENTION_WIDE_KEYS)
                ? FORWARD_PLAIN
            : width == 64 ? FORWARD_TRIO
                          : FORWARD_WIDE;
    else if (p->form != BK_ATTENTION_PATTERN_DENSE && p->block_q == 64)
        k = width == 64 ? FORWARD_SOLO
            : p->form == BK_ATTENTION_PATTERN_LIST && p->capacity * 8 <= p->nbk ? FORWARD_NARROW
                                                                                 : FORWARD_DEEP;
    *chooses = k == FORWARD_DEEP;
    return &forward_kernels[k];
}

/* The compiled widths of D and Dv: each its own where the pair is
 * instantiated (DK = DV, or 192 and 128), else both the larger. */
static void mma_widths(const struct bk_attention_problem *p, int *wk, int *wv)
{
    *wk = BK_ATTENTION_MMA_WIDTH((int)p->d);
    *wv = BK_ATTENTION_MMA_WIDTH((int)p->dv);
    if (*wk != *wv && !(*wk == 192 && *wv == 128))
        *wk = *wv = *wk > *wv ? *wk : *wv;
}

/* The shared memory of the tensor-core kernels at widths wk, wv: those
 * of F16 and BF16, or F32's (3xTF32, kernels/attention_tf32*.cu). */
static unsigned int mma_shared_bytes(BkDataType t, int k, int wk, int wv)
{
    if (t == BK_DATA_TYPE_F32)
        return k == K_FAST      ? BK_ATTENTION_TF32_FORWARD_BYTES(wk, wv)
               : k == K_DQ_FAST ? BK_ATTENTION_TF32_DQ_BYTES(wk, wv)
                                : BK_ATTENTION_TF32_DKV_BYTES(wk, wv);
    return k == K_FAST      ? BK_ATTENTION_MMA_FORWARD_BYTES(wk, wv)
           : k == K_DQ_FAST ? BK_ATTENTION_MMA_DQ_BYTES(wk, wv)
                            : BK_ATTENTION_MMA_DKV_BYTES(wk, wv);
}

/* Whether the tensor-core kernels take p on this device: F16 or BF16, D
 * and Dv up to 256, blocks of whole tiles, and shared memory the device
 * lets a CTA have (the widest, 256, needs more than sm_86 and sm_89
 * allow, and its backward more than sm_80's 163 KiB); F32 likewise on
 * TF32 tensor cores (3xTF32). */
static bool fast_path(BkPlan plan)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const struct bk_cuda_context *c = plan->ctx->impl;
    if (p->type != BK_DATA_TYPE_F16 && p->type != BK_DATA_TYPE_BF16 &&
        p->type != BK_DATA_TYPE_F32)
        return false;
    /* 32-bit key arithmetic in the kernels, a tile past the last key included. */
    if (p->lq > INT32_MAX - 256 || p->lk > INT32_MAX - 256)
        return false;
    if (p->d < 1 || p->d > 256 || p->dv < 1 || p->dv > 256)
        return false;
    if (p->form != BK_ATTENTION_PATTERN_DENSE &&
        (p->block_q % MMA_TILE != 0 || p->block_k % MMA_TILE != 0))
        return false;
    int wk, wv;
    mma_widths(p, &wk, &wv);
    const int ks[] = { K_FAST, K_DQ_FAST, K_DKV_FAST };
    for (int i = p->backward ? 1 : 0; i < (p->backward ? 3 : 1); i++)
        if (mma_shared_bytes(p->type, ks[i], wk, wv) > c->shared_optin)
            return false;
    return true;
}

/* Whether every stride of p lets the tensor-core kernels copy rows in
 * 16-byte pieces (their addresses checked at each run). */
static bool strides_vectorised(const struct bk_attention_problem *p)
{
    const int64_t n = p->type == BK_DATA_TYPE_F32 ? 4 : 8;
    if (p->backward)
        return rows_vectorised(p->stride.q, n) && rows_vectorised(p->stride.k, n) &&
               rows_vectorised(p->stride.v, n) && rows_vectorised(p->stride.dy, n) &&
               rows_vectorised(p->stride.dq, n) && rows_vectorised(p->stride.dk, n) &&
               rows_vectorised(p->stride.dv, n);
    return rows_vectorised(p->stride.q, n) && rows_vectorised(p->stride.k, n) &&
           rows_vectorised(p->stride.v, n) && rows_vectorised(p->stride.y, n);
}

/* The head width the Hopper kernels take for p: D and Dv padded together
 * to 64, 128, 192 or 256 (the tensor maps zero-fill the columns past D
 * and Dv, the stores skip them), for D and Dv in whole 16-byte steps; 0
 * where they take none. */
static int wgmma_width(const struct bk_attention_problem *p)
{
    const int64_t m = p->d > p->dv ? p->d : p->dv;
    if (p->d % 8 || p->dv % 8 || m > 256)
        return 0;
    return (int)round_up(m, 64);
}

/* The Hopper kernels: F16 and BF16 on sm_90 exactly (sm_90a code), D and
 * Dv up to 256 in 8-column steps (wgmma_width()), strides of 16-byte
 * steps, and q, k, v (and dy) describable as tensor maps. */
static bool wgmma_path(BkPlan plan)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const BkDeviceProperties *d = &plan->ctx->props;
    if (p->type == BK_DATA_TYPE_F32)
        return false;
    if (d->computeCapabilityMajor != 9 || d->computeCapabilityMinor != 0)
        return false;
    if (!wgmma_width(p) || !strides_vectorised(p))
        return false;
    const int64_t q[4] = { p->batch, p->heads, p->lq, p->d };
    const int64_t kv[4] = { p->batch, p->kv_heads, p->lk, p->d };
    const int64_t v[4] = { p->batch, p->kv_heads, p->lk, p->dv };
    const int64_t y[4] = { p->batch, p->heads, p->lq, p->dv };
    return bk_cuda_tensor_map_fits(p->type, 4, q, p->stride.q) &&
           bk_cuda_tensor_map_fits(p->type, 4, kv, p->stride.k) &&
           bk_cuda_tensor_map_fits(p->type, 4, v, p->stride.v) &&
           (!p->backward || bk_cuda_tensor_map_fits(p->type, 4, y, p->stride.dy));
}

/* The tensor maps of a run (false when the driver refuses one): boxes of
 * 64 x 64, one 128-byte swizzled column block of 64 rows (the kernel
 * gathers two key slots into each 128-key tile). The maps' rows are D
 * (q, k) or Dv (v, dy) long: the engine fills a box's columns past them
 * with zeros, which is how a kernel of width 64 or 128 takes any D and Dv
 * up to it (wgmma_width()). */
static bool tensor_maps(const struct bk_attention_problem *p, struct bk_attention_tma_args *t)
{
    const int64_t q[4] = { p->batch, p->heads, p->lq, p->d };
    const int64_t kv[4] = { p->batch, p->kv_heads, p->lk, p->d };
    const int64_t v[4] = { p->batch, p->kv_heads, p->lk, p->dv };
    const int64_t y[4] = { p->batch, p->heads, p->lq, p->dv };
    return bk_cuda_tensor_map((CUtensorMap *)t->map_q, p->type, t->a.q.base, 4, q, p->stride.q,
                              64, 64) &&
           bk_cuda_tensor_map((CUtensorMap *)t->map_k, p->type, t->a.k.base, 4, kv, p->stride.k,
                              64, 64) &&
           bk_cuda_tensor_map((CUtensorMap *)t->map_v, p->type, t->a.v.base, 4, v, p->stride.v,
                              64, 64) &&
           (!p->backward || bk_cuda_tensor_map((CUtensorMap *)t->map_dy, p->type, t->a.dy.base,
                                               4, y, p->stride.dy, 64, 64));
}

/* Whether every tensor the fast kernels read or write is 16-byte aligned. */
static bool aligned16(const struct bk_attention_args *a, bool backward)
{
    uint64_t any = a->q.base | a->k.base | a->v.base;
    any |= backward ? a->dy.base | a->dq.base | a->dk.base | a->dv.base : a->y.base;
    return (any & 15u) == 0;
}

/* The forward kernel behind kernel slot k (K_WGMMA, K_WGMMA_NARROW),
 * else NULL. */
static const struct forward_kernel *forward_of(const struct attention_plan *ap, int k)
{
    return k == K_WGMMA          ? ap->forward
           : k == K_WGMMA_NARROW ? &forward_kernels[FORWARD_NARROW]
                                 : NULL;
}

static void launch(struct bk_cuda_kernel_launch *l, const struct attention_plan *ap, int k,
                   unsigned int grid, unsigned int gy, unsigned int gz, unsigned int threads,
                   const struct bk_attention_args *a)
{
    bk_cuda_launch_set(l, ap->fn[k], grid, gy, gz, threads, ap->fast_shared_bytes[k], ap->name[k],
                       a, sizeof *a);
}

/* A Hopper kernel: its tensor maps and the usual block (t). */
static void launch_wgmma(struct bk_cuda_kernel_launch *l, const struct attention_plan *ap, int k,
                         unsigned int grid, unsigned int gy, unsigned int gz,
                         const struct bk_attention_tma_args *t)
{
    const struct forward_kernel *fk = forward_of(ap, k);
    bk_cuda_launch_set(l, ap->fn[k], grid, gy, gz, fk ? fk->threads : BK_ATTENTION_WGMMA_THREADS,
                       ap->fast_shared_bytes[k], ap->name[k], t, sizeof *t);
}

/* A Hopper kernel that owns tiles of query rows (the forward, dq):
 * persistent, tile i of B * H * ceil(Lq / rows) on CTA i mod CTAs (see
 * row_ctas; rows 128, or the forward kernel's), or a CTA a tile. PACKED
 * sequences take Lq / rows + S tiles along the axis instead, sequence s
 * those from off[s] / rows + s (QueryTiles::place in
 * kernels/attention_wgmma_walk.cuh: no sequence's tiles meet the next's,
 * and at most one a sequence is left over). */
static void launch_rows_wgmma(struct bk_cuda_kernel_launch *l, const struct attention_plan *ap,
                              int k, const struct bk_attention_problem *p,
                              struct bk_attention_tma_args *t)
{
    const struct forward_kernel *fk = forward_of(ap, k);
    const int64_t rows = fk ? fk->rows : backward_rows(ap->wgmma_width);
    const unsigned int ctas = k == K_WGMMA ? ap->row_ctas : ap->narrow_row_ctas;
    bool ovf = false;
    const bool packed = p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED;
    const uint64_t tiles_x =
        packed ? (uint64_t)(p->lq / rows + p->seq_count) : (uint64_t)ceil_div(p->lq, rows);
    const uint64_t items =
        bk_mul_u64(bk_mul_u64(tiles_x, (uint64_t)p->heads, &ovf), (uint64_t)p->batch, &ovf);
    if (ctas > 0 && !ovf && items <= INT32_MAX) {
        t->a.items = (uint32_t)items;
        launch_wgmma(l, ap, k, items < ctas ? (unsigned int)items : ctas, 1, 1, t);
    } else {
        t->a.items = 0;
        launch_wgmma(l, ap, k, (unsigned int)tiles_x, (unsigned int)p->heads,
                     (unsigned int)p->batch, t);
    }
}

/* PACKED: the rows no good sequence owns made NaN, after the other
 * kernels (it returns at once where every sequence is good): a CTA per
 * BK_ATTENTION_FIXUP_THREADS rows of the query axis (and, backward, of
 * the key axis). */
static uint32_t fixup_launch(struct bk_cuda_kernel_launch *l, const struct attention_plan *ap,
                             const struct bk_attention_problem *p,
                             const struct bk_attention_args *a)
{
    struct bk_attention_args f = *a;
    int64_t rows = p->heads > 0 ? p->lq : 0;
    if (p->backward) {
        f.flags |= BK_ATTENTION_BACKWARD;
        if (p->kv_heads > 0 && p->lk > rows)
            rows = p->lk;
    }
    if (rows == 0)
        return 0;
    launch(l, ap, K_FIXUP, (unsigned int)ceil_div(rows, BK_ATTENTION_FIXUP_THREADS), 1, 1,
           BK_ATTENTION_FIXUP_THREADS, &f);
    return 1;
}

/* The Hopper dk/dv kernel's key tiles of `rows` keys (backward_rows) of
 * a PACKED plan: the more of its slots (Lk / rows + S) and the rectangle
 * it falls back to where the key offsets run back (S x ceil(maxLengthK /
 * rows), as packed_fallback in kernels/attention_wgmma_walk.cuh), which
 * only the device tells apart. At most 65535 x 2^38: no overflow
 * (check_grid). */
static int64_t packed_key_tiles(const struct bk_attention_problem *p, int64_t rows)
{
    const int64_t slots = p->lk / rows + p->seq_count;
    const int64_t rect = p->seq_count * ceil_div(p->max_len_k > 0 ? p->max_len_k : 1, rows);
    return slots > rect ? slots : rect;
}

static uint32_t attention_prepare(BkPlan plan, const struct bk_run_args *run,
                                  struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct attention_plan *ap = plan->impl;
    const struct bk_attention_problem *p = &plan->problem.attention;
    struct bk_attention_args a = ap->args;
    const BkDeviceAddress *bind = run->binding;
    a.q.base = bind[BK_ATTENTION_BINDING_Q];
    a.k.base = bind[BK_ATTENTION_BINDING_K];
    a.v.base = bind[BK_ATTENTION_BINDING_V];
    a.y.base = bind[BK_ATTENTION_BINDING_Y];
    a.lse = p->has_lse ? bind[BK_ATTENTION_BINDING_LSE] : 0;
    if (p->form == BK_ATTENTION_PATTERN_MASK)
        a.mask.base = bind[BK_ATTENTION_BINDING_MASK];
    if (ap->list) {
        a.counts.base = bind[BK_ATTENTION_BINDING_COUNTS];
        a.indices.base = bind[BK_ATTENTION_BINDING_INDICES];
        a.mask.base = run->workspace + p->ws_mask;
        a.bad = run->workspace + p->ws_bad;
    }
    if (p->backward) {
        a.dy.base = bind[BK_ATTENTION_BACKWARD_BINDING_DY];
        a.dq.base = bind[BK_ATTENTION_BACKWARD_BINDING_DQ];
        a.dk.base = bind[BK_ATTENTION_BACKWARD_BINDING_DK];
        a.dv.base = bind[BK_ATTENTION_BACKWARD_BINDING_DV];
        a.rowsum = run->workspace + p->ws_rowsum;
    }
    if (p->has_lengths_q)
        a.seq_q = bind[p->backward ? BK_ATTENTION_BACKWARD_BINDING_LENGTHS_Q
                                   : BK_ATTENTION_BINDING_LENGTHS_Q];
    if (p->has_lengths_k)
        a.seq_k = bind[p->backward ? BK_ATTENTION_BACKWARD_BINDING_LENGTHS_K
                                   : BK_ATTENTION_BINDING_LENGTHS_K];

    const bool queries = p->batch > 0 && p->heads > 0 && p->lq > 0;
    const bool keys = p->batch > 0 && p->kv_heads > 0 && p->lk > 0;
    /* The tensor-core kernels copy 16 bytes at a time where they can,
     * else element by element; the others need the 16-byte copies. */
    const bool fast = ap->fast && ap->vectorised && aligned16(&a, p->backward);
    if (ap->fast && !fast)
        a.flags |= BK_ATTENTION_ELEMENTWISE;
    /* The list is scattered where a sequence reads it: without one
     * (PACKED may have none) its empty tensors may be unbound. */
    const bool scatter = ap->list && queries && p->seq_count > 0;
    if (!scatter) /* no list was scattered: no head is bad */
        a.bad = 0;
    /* Grid z over the sequences (B, or S where PACKED), x over the
     * longest one's rows (Lq, Lk, or the PACKED bounds). */
    const unsigned int gb = (unsigned int)p->seq_count, gh = (unsigned int)p->heads;
    const unsigned int gkv = (unsigned int)p->kv_heads;
    const unsigned int rows = (unsigned int)ceil_div(p->max_len_q, GENERAL_ROWS);
    const unsigned int key_rows = (unsigned int)ceil_div(p->max_len_k, GENERAL_ROWS);
    const unsigned int tiles = (unsigned int)ceil_div(p->max_len_q, MMA_TILE);
    const unsigned int key_tiles = (unsigned int)ceil_div(p->max_len_k, MMA_TILE);
    const bool seqs = p->seq_count > 0; /* PACKED may have none */
    const bool packed = p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED;
    const unsigned int mt = BK_ATTENTION_MMA_THREADS, gt = BK_ATTENTION_GENERAL_THREADS;
    /* The F32 kernels' halves of 4 warps (kernels/attention_tf32.cu,
     * kernels/attention_mma_backward.cuh, kernels/attention_tf32_backward_wide.cu):
     * the forward's, dq's and dk/dv's. */
    const bool f32 = p->type == BK_DATA_TYPE_F32;
    const int wk = ap->width_k, wv = ap->width_v;
    const unsigned int fwd_halves = f32 ? BK_ATTENTION_TF32_FORWARD_HALVES(wk, wv) : 1u;
    const unsigned int dq_halves = f32 ? BK_ATTENTION_TF32_DQ_HALVES(wk, wv) : 1u;
    const unsigned int dkv_halves = f32 ? BK_ATTENTION_TF32_DKV_HALVES(wk, wv) : 1u;
    uint32_t n = 0;
    /* The Hopper kernels when the driver makes the run's tensor maps. */
    struct bk_attention_tma_args t;
    memset(&t, 0, sizeof t);
    t.a = a;
    const bool wgmma = fast && ap->wgmma && queries && keys && seqs && tensor_maps(p, &t);
    if (scatter)
        launch(&launches[n++], ap, K_SCATTER, (unsigned int)(p->pattern_batch * p->pattern_heads),
               1, 1, BK_ATTENTION_SCATTER_THREADS, &a);
    if (!p->backward) {
        if (!queries)
            return 0;
        if (ap->decode.on && fast)
            return n + bk_cuda_attention_decode_launches(&ap->decode, &a, run, &launches[n]);
        /* Query blocks of 64 rows: a CTA's two consumers own neighbouring
         * query blocks and walk the union of their key blocks, each
         * computing only the slots it needs (the walk pairs slots by the
         * consumers that need them). A split mode, both consumers on one
         * block taking alternate tiles and merging at the end, lost to it
         * everywhere once the walk paired slots (H100, 2026-11-24, bf16,
         * TFLOP/s over active blocks at 10%, split/union: independent
         * random blocks D64 163/196, D128 255/304; blocks shared by
         * neighbours D64 176/217, D128 269/317-331) and was removed. */
        if (wgmma && ap->chooses) {
            /* The pattern chooses: its sums, then both kernels (see
             * forward_kernel), the one not chosen ending at once (it still
             * starts after the one before and ends before the one after).
             * Narrow first: 0.3-1% faster than deep first on the probe's
             * patterns, whichever was chosen (H200, a62ba0e). */
            t.a.choice = a.choice = run->workspace + p->ws_choice;
            launch(&launches[n++], ap, K_CHOICE, BK_ATTENTION_CHOICE_CTAS, 1, 1,
                   BK_ATTENTION_CHOICE_THREADS, &a);
            launch_rows_wgmma(&launches[n++], ap, K_WGMMA_NARROW, p, &t);
            launch_rows_wgmma(&launches[n++], ap, K_WGMMA, p, &t);
        } else if (wgmma)
            launch_rows_wgmma(&launches[n++], ap, K_WGMMA, p, &t);
        else if (ap->fast && seqs)
            launch(&launches[n++], ap, K_FAST, tiles, gh, gb, mt * fwd_halves, &a);
        else if (seqs)
            launch(&launches[n++], ap, K_GENERAL, rows, gh, gb, gt, &a);
        if (packed)
            n += fixup_launch(&launches[n], ap, p, &a);
        return n;
    }
    /* The dk/dv CTAs: 128 keys each, of every batch entry; PACKED, over
     * the one entry, the more of Lk / 128 + S key tiles (sequence s those
     * from koff[s] / 128 + s) and the rectangle S x ceil(maxLengthK /
     * 128) the kernel falls back to where the key offsets run back
     * (key_tile_place): only the device sees the offsets. */
    const unsigned int wgmma_keys =
        packed ? (unsigned int)packed_key_tiles(p, backward_rows(ap->wgmma_width))
               : (unsigned int)ceil_div(p->lk, backward_rows(ap->wgmma_width));
    const unsigned int wgmma_kz = packed ? 1u : gb;
    if (wgmma && ap->fused) { /* the row sums' kernel zeroes the counters */
        a.dq_sum = t.a.dq_sum = run->workspace + ap->ws_dq_sum;
        a.dq_count = t.a.dq_count = run->workspace + ap->ws_dq_count;
    }
    if (wgmma && ap->atomic) { /* the row sums' kernel zeroes the sums */
        a.dq_sum = t.a.dq_sum = run->workspace + ap->ws_dq_sum;
        a.flags |= BK_ATTENTION_ZERO_DQ_SUM;
    }
    if (queries) {
        /* Row sums are a row's own: every row of the tensors (z over
         * their batch, not the sequences: a PACKED batch is one). */
        launch(&launches[n++], ap, K_ROWSUM,
               (unsigned int)ceil_div(p->lq, GENERAL_ROWS * BK_ATTENTION_ROWSUM_ROWS), gh,
               (unsigned int)p->batch, gt, &a);
        if (wgmma && ap->fused) {
            launch_wgmma(&launches[n++], ap, K_DKVQ_WGMMA, wgmma_keys, gkv, gb, &t);
            return n;
        }
        if (wgmma && ap->atomic) {
            launch_wgmma(&launches[n++], ap, K_DKVQ_ATOMIC_WGMMA, wgmma_keys, gkv, gb, &t);
            bk_cuda_launch_set(&launches[n++], ap->fn[K_DQ_FROM_SUM],
                               (unsigned int)ceil_div(p->lq, 64), gh, gb,
                               BK_ATTENTION_DQ_FROM_SUM_THREADS, 0, ap->name[K_DQ_FROM_SUM], &t,
                               sizeof t);
            return n;
        }
        if (wgmma)
            launch_rows_wgmma(&launches[n++], ap, K_DQ_WGMMA, p, &t);
        else if (ap->fast && seqs)
            launch(&launches[n++], ap, K_DQ_FAST, tiles, gh, gb, mt * dq_halves, &a);
        else if (seqs)
            launch(&launches[n++], ap, K_DQ, rows, gh, gb, gt, &a);
    }
    /* With no query, dk and dv are still written: zeros. The Hopper dk/dv
     * kernel must come right after dq (wgmma implies queries): it starts
     * before dq ends, trusting dq to have waited for what it reads. */
    if (wgmma)
        launch_wgmma(&launches[n++], ap, K_DKV_WGMMA, wgmma_keys, gkv, wgmma_kz, &t);
    else if (keys && seqs && ap->fast)
        launch(&launches[n++], ap, K_DKV_FAST, key_tiles, gkv, gb,
               mt * dkv_halves *
                   (f32 ? BK_ATTENTION_TF32_DKV_SPLIT(wk, wv) : BK_ATTENTION_MMA_DKV_SPLIT(wk, wv)),
               &a);
    else if (keys && seqs)
        launch(&launches[n++], ap, K_DKV, key_rows, gkv, gb, gt, &a);
    if (packed && (queries || keys))
        n += fixup_launch(&launches[n], ap, p, &a);
    return n;
}

/* Whether BK_CUDA_ATTENTION_BACKWARD, read when a plan is made, names
 * this Hopper backward kernel choice ("two", "fused", "atomic"). */
static bool backward_override(const char *kind)
{
    const char *s = getenv("BK_CUDA_ATTENTION_BACKWARD");
    return s && strcmp(s, kind) == 0;
}

/* Whether the Hopper backward of p, at wgmma width `width`, takes the
 * kernel that computes dq with dk and dv (5 GEMMs a tile instead of the
 * two kernels' 7, its dQ shares summed in a fixed order through the
 * workspace: see DenseOrder and CausalOrder in
 * kernels/attention_wgmma_backward.cu): every DENSE plan at widths 64 and
 * 128 (D and Dv up to 128, the columns past them zeros as on the two
 * kernels; at width 64 the consumers compute a tile's dQ by turns),
 * causal or not. It beat the two kernels at every head size (H100, bf16,
 * B2 L4096 H x D 2048, 2026-12-07, TFLOP/s against the two kernels':
 * D32 203.6 / 194.0, D64 400.3 / 363.8, D80 333.7 / 301.1, D96 378.7 /
 * 344.6, D128 512.3 / 475.0). BK_CUDA_ATTENTION_BACKWARD "two", read when
 * the plan is made, keeps the dq and dk/dv kernels (tests and tuning). */
static bool fused_backward(const struct bk_attention_problem *p, int width)
{
    if (!p->backward || p->form != BK_ATTENTION_PATTERN_DENSE || backward_override("two"))
        return false;
    return width == 64 || width == 128;
}

/* Whether the Hopper backward of p takes the kernel that computes dq with
 * dk and dv and adds its dQ shares with float atomics (the copy engine's
 * reductions in the L2), then dQ from their F32 sums: D = Dv = 128, any
 * pattern, causal too; not deterministic (a query tile's shares meet in the
 * order the key CTAs reach it), so only where the plan sets
 * BK_ATTENTION_ALLOW_ATOMICS_BIT. Not the default even then: on an H200
 * (82a20dd, bench/log/attention.md) it ran 5-8% slower than the two
 * deterministic kernels with blocks of 128 and 39-49% slower with blocks
 * of 64, and DENSE it gains 2-6% over the fixed order of the fused kernel
 * (H100, 2026-12-07), so it runs only where BK_CUDA_ATTENTION_BACKWARD is
 * "atomic" when the plan is made (for tests and tuning). */
static bool atomic_backward(const struct bk_attention_problem *p)
{
    return backward_override("atomic") && p->backward && p->allow_atomics && p->d == 128 &&
           p->dv == 128;
}

/* The fused (or atomic) backward's workspace past the core's: the F32 dq
 * sums (16 KiB per 64-query tile and 64-column half) and their counters;
 * false where it would not fit 64 bits. */
static bool fused_workspace(BkPlan plan, struct attention_plan *ap)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    uint64_t chunks, sum_bytes, end;
    if (__builtin_mul_overflow((uint64_t)p->batch * (uint64_t)p->heads,
                               (uint64_t)ceil_div(p->lq, 64) * 2, &chunks) ||
        __builtin_mul_overflow(chunks, (uint64_t)64 * 64 * 4, &sum_bytes))
        return false;
    ap->ws_dq_sum = (p->ws_size + 255) & ~(uint64_t)255;
    if (__builtin_add_overflow(ap->ws_dq_sum, sum_bytes, &ap->ws_dq_count) ||
        __builtin_add_overflow(ap->ws_dq_count, chunks * 4, &end) || end > (uint64_t)INT64_MAX)
        return false;
    plan->props.workspaceSize = end;
    return true;
}

/* Whether the fused backward's order runs on this device. In DenseOrder
 * key CTA j hands a tile over after CTA j + 1 of its kv head (mod their
 * count), which starts after it: every key CTA of a kv head must be
 * resident at once, else the first ones wait for CTAs that cannot start
 * (a hang, where ceil(Lk / 128) passes the CTAs the device holds: Lk past
 * 16896 on 132 SMs). Such a plan keeps the dq and dk/dv kernels. The
 * causal order waits only for CTAs that started before the waiter
 * (CausalOrder's grid runs from the last keys). */
static bool dense_order_fits(BkPlan plan, const struct attention_plan *ap)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    if (p->causal)
        return true;
    const uint64_t key_ctas = (uint64_t)ceil_div(p->lk, backward_rows(ap->wgmma_width));
    return key_ctas <= bk_cuda_max_resident_ctas(plan, ap->fn[K_DKVQ_WGMMA],
                                                 BK_ATTENTION_WGMMA_THREADS,
                                                 ap->fast_shared_bytes[K_DKVQ_WGMMA]);
}

/* The grid: rows / 4 CTAs along x, heads along y, batches (sequences)
 * along z. */
static BkResult check_grid(const struct bk_attention_problem *p, const char *info)
{
    if (p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED && p->seq_count > 65535)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "BkAttentionSequencesInfo.lengthsQ.extent[0] = %lld: the CUDA kernels "
                        "take up to 65535 PACKED sequences", (long long)p->seq_count + 1);
    if (p->batch > 65535)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.q.extent[0] = %lld: the CUDA kernels take B up to 65535", info,
                        (long long)p->batch);
    if (p->heads > 65535)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.q.extent[1] = %lld: the CUDA kernels take H up to 65535", info,
                        (long long)p->heads);
    if (ceil_div(p->lq, GENERAL_ROWS) > INT32_MAX || ceil_div(p->lk, GENERAL_ROWS) > INT32_MAX)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s: Lq = %lld, Lk = %lld: the CUDA kernels take lengths up to %lld",
                        info, (long long)p->lq, (long long)p->lk,
                        (long long)INT32_MAX * GENERAL_ROWS);
    if (p->pattern_batch * p->pattern_heads > INT32_MAX)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s.pattern: too many pattern heads", info);
    return BK_SUCCESS;
}

static void fill_args(const struct bk_attention_problem *p, struct bk_attention_args *a)
{
    memset(a, 0, sizeof *a);
    a->q = view(p->stride.q, 4);
    a->k = view(p->stride.k, 4);
    a->v = view(p->stride.v, 4);
    a->y = view(p->stride.y, 4);
    a->dy = view(p->stride.dy, 4);
    a->dq = view(p->stride.dq, 4);
    a->dk = view(p->stride.dk, 4);
    a->dv = view(p->stride.dv, 4);
    a->mask = view(p->mask_stride, 4);
    a->counts = view(p->counts_stride, 3);
    a->indices = view(p->indices_stride, 4);
    for (int i = 0; i < 3; i++)
        a->lse_s[i] = p->stride.lse[i];
    a->batch = p->batch;
    a->heads = p->heads;
    a->kv_heads = p->kv_heads;
    a->lq = p->lq;
    a->lk = p->lk;
    a->d = p->d;
    a->dv_cols = p->dv;
    a->pattern_batch = p->pattern_batch;
    a->pattern_heads = p->pattern_heads;
    a->capacity = p->capacity;
    a->scale = p->scale;
    a->flags = (p->causal ? BK_ATTENTION_CAUSAL : 0u) | (p->has_lse ? BK_ATTENTION_HAS_LSE : 0u);
    /* Grid z over the sequences (kernels/attention_common.cuh, sequence()). */
    a->seq_form = !p->has_sequences                             ? BK_ATTENTION_SEQ_NONE
                  : p->seq_form == BK_ATTENTION_SEQUENCES_PACKED ? BK_ATTENTION_SEQ_PACKED
                                                                 : BK_ATTENTION_SEQ_PADDED;
    a->seq_s[0] = p->lengths_q_stride;
    a->seq_s[1] = p->lengths_k_stride;
    a->seq_count = p->seq_count;
    a->max_lq = p->max_len_q;
    a->max_lk = p->max_len_k;
    if (p->form == BK_ATTENTION_PATTERN_DENSE) {
        /* One block over everything, in whole tiles of every fast kernel. */
        a->block_q = round_up(p->lq > 0 ? p->lq : 1, 128);
        a->block_k = round_up(p->lk > 0 ? p->lk : 1, 128);
        a->nbq = a->nbk = 1;
    } else {
        a->block_q = p->block_q;
        a->block_k = p->block_k;
        a->nbq = p->nbq;
        a->nbk = p->nbk;
    }
}

/* The tensor-core kernels of the plan (named by their widths), with their
 * shared memory (BK_ATTENTION_MMA_*_BYTES). */
static BkResult find_fast(BkPlan plan, struct attention_plan *ap, const char *ts)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const int d = ap->wgmma_width, width_k = ap->width_k, width_v = ap->width_v;
    /* Plans with sequences of their own lengths take the kernels compiled
     * for them (_seq: kernels/attention_mma_forward.cuh), the others
     * theirs, untouched by what sequences need. */
    static const char *const mma_pattern[K_COUNT] = {
        [K_FAST] = "bk_attention_forward_mma%s_%s_d%d_v%d",
        [K_DQ_FAST] = "bk_attention_dq_mma%s_%s_d%d_v%d",
        [K_DKV_FAST] = "bk_attention_dkv_mma%s_%s_d%d_v%d",
    };
    const char *seq = p->has_sequences ? "_seq" : "";
    int ks[6], count = p->backward ? 2 : 1;
    ks[0] = p->backward ? K_DQ_FAST : K_FAST, ks[1] = K_DKV_FAST;
    for (int i = 0; i < count; i++) {
        snprintf(ap->name[ks[i]], sizeof ap->name[0], mma_pattern[ks[i]], seq, ts, width_k,
                 width_v);
        ap->fast_shared_bytes[ks[i]] = mma_shared_bytes(p->type, ks[i], width_k, width_v);
    }
    const int mma_count = count;
    if (ap->wgmma) {
        /* The Hopper kernels of the plan: the forward (forward_kernels), or
         * dq and dk/dv. */
        static const int wf[] = { K_WGMMA, K_WGMMA_NARROW },
                         wb[] = { K_DQ_WGMMA, K_DKV_WGMMA, K_DKVQ_WGMMA },
                         wa[] = { K_DQ_WGMMA, K_DKV_WGMMA, K_DKVQ_ATOMIC_WGMMA, K_DQ_FROM_SUM };
        static const char *const wpattern[K_COUNT] = {
            [K_DQ_WGMMA] = "bk_attention_dq_wgmma%s_%s_d%d",
            [K_DKV_WGMMA] = "bk_attention_dkv_wgmma%s_%s_d%d",
            [K_DKVQ_WGMMA] = "bk_attention_dkvq_wgmma_%s_d%d",
            [K_DKVQ_ATOMIC_WGMMA] = "bk_attention_dkvq_atomic_wgmma_%s_d%d",
            [K_DQ_FROM_SUM] = "bk_attention_dq_from_sum_%s",
        };
        /* Their shared memory at widths 64, 128, 192 and 256 (0: none);
         * the pair kernels' (192 and 256) in the second table. */
        static const unsigned int wshared[K_COUNT][4] = {
            [K_DQ_WGMMA] = { BK_ATTENTION_WGMMA_DQ_SHARED_BYTES(64),
                             BK_ATTENTION_WGMMA_DQ_SHARED_BYTES(128), 0, 0 },
            [K_DKV_WGMMA] = { BK_ATTENTION_WGMMA_DKV_SHARED_BYTES(64),
                              BK_ATTENTION_WGMMA_DKV_SHARED_BYTES(128), 0, 0 },
            [K_DKVQ_WGMMA] = { BK_ATTENTION_WGMMA_DKVQ_SHARED_BYTES(64),
                               BK_ATTENTION_WGMMA_DKVQ_SHARED_BYTES(128), 0, 0 },
            [K_DKVQ_ATOMIC_WGMMA] = { 0, BK_ATTENTION_WGMMA_DKVQ_SHARED_BYTES(128), 0, 0 },
        };
        static const unsigned int pair_shared[K_COUNT][4] = {
            [K_DQ_WGMMA] = { 0, 0, BK_ATTENTION_WGMMA_PAIR_DQ_SHARED_BYTES(192),
                             BK_ATTENTION_WGMMA_PAIR_DQ_SHARED_BYTES(256) },
            [K_DKV_WGMMA] = { 0, 0, BK_ATTENTION_WGMMA_PAIR_DKV_SHARED_BYTES(192),
                              BK_ATTENTION_WGMMA_PAIR_DKV_SHARED_BYTES(256) },
        };
        const int *wk = !p->backward ? wf : ap->atomic ? wa : wb;
        const int wcount =
            !p->backward ? (ap->chooses ? 2 : 1) : ap->atomic ? 4 : ap->fused ? 3 : 2;
        const char *wname[4];
        CUfunction *wfn[4];
        for (int i = 0; i < wcount; i++) {
            const int k = wk[i];
            const struct forward_kernel *fk = forward_of(ap, k);
            if (fk)
                snprintf(ap->name[k], sizeof ap->name[0], fk->pattern, ts, d);
            else if (k == K_DQ_WGMMA || k == K_DKV_WGMMA)
                snprintf(ap->name[k], sizeof ap->name[0], wpattern[k], ap->pair ? "_pair" : "",
                         ts, d);
            else
                snprintf(ap->name[k], sizeof ap->name[0], wpattern[k], ts, d);
            if (p->has_sequences) /* the twin for sequences */
                strncat(ap->name[k], "_seq", sizeof ap->name[0] - strlen(ap->name[k]) - 1);
            ap->fast_shared_bytes[k] =
                fk        ? forward_shared_bytes(fk, d)
                : ap->pair ? pair_shared[k][d / 64 - 1]
                           : wshared[k][d / 64 - 1];
            wname[i] = ap->name[k], wfn[i] = &ap->fn[k];
            ks[count++] = k;
        }
        BkResult res = bk_cuda_find_functions(plan, p->backward
                                                        ? BK_CUDA_MODULE_ATTENTION_WGMMA_BACKWARD
                                                        : BK_CUDA_MODULE_ATTENTION_WGMMA,
                                              wname, wfn, wcount);
        if (res != BK_SUCCESS)
            return res;
    }
    const char *names[2];
    CUfunction *fns[2];
    for (int i = 0; i < mma_count; i++)
        names[i] = ap->name[ks[i]], fns[i] = &ap->fn[ks[i]];
    /* By type (F16 and BF16, or F32 on TF32 tensor cores), direction and
     * width (the wide ones past 128; F32's forward has one module). */
    static const enum bk_cuda_module_id mma_module[2][2][2] = {
        { { BK_CUDA_MODULE_ATTENTION_MMA, BK_CUDA_MODULE_ATTENTION_MMA_WIDE },
          { BK_CUDA_MODULE_ATTENTION_MMA_BACKWARD, BK_CUDA_MODULE_ATTENTION_MMA_BACKWARD_WIDE } },
        { { BK_CUDA_MODULE_ATTENTION_TF32, BK_CUDA_MODULE_ATTENTION_TF32 },
          { BK_CUDA_MODULE_ATTENTION_TF32_BACKWARD,
            BK_CUDA_MODULE_ATTENTION_TF32_BACKWARD_WIDE } },
    };
    const int f32 = p->type == BK_DATA_TYPE_F32, wide = BK_ATTENTION_MMA_WIDE(width_k, width_v);
    BkResult res =
        bk_cuda_find_functions(plan, mma_module[f32][p->backward][wide], names, fns, mma_count);
    if (res != BK_SUCCESS)
        return res;
    struct bk_cuda_scope scope;
    if ((res = bk_cuda_enter(plan->ctx, &scope)) != BK_SUCCESS)
        return res;
    for (int i = 0; i < count && res == BK_SUCCESS; i++)
        res = bk_cuda_set_shared_bytes(ap->fn[ks[i]], ap->fast_shared_bytes[ks[i]],
                                       ap->name[ks[i]]);
    bk_cuda_leave(&scope);
    return res;
}

/* A backward with sequences takes the Hopper dq and dk/dv kernels' _seq
 * twins, PADDED or PACKED, but for a PACKED one whose dk/dv grid
 * (packed_key_tiles, the fallback's rectangle where the key offsets run
 * back) would pass the grid's 2^31 - 1 CTAs along x: that one keeps the
 * mma.sync kernels. Figures: doc/design/attention.md. */
static bool sequences_backward(const struct bk_attention_problem *p)
{
    return p->backward && p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED &&
           packed_key_tiles(p, backward_rows(wgmma_width(p))) > INT32_MAX;
}

BkResult bk_cuda_attention_select(BkPlan plan)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    BkResult res;
    if ((res = check_grid(p, plan->op_name)) != BK_SUCCESS)
        return res;
    struct attention_plan *ap = bk_cuda_plan_new(plan, sizeof *ap, attention_prepare, NULL, &res);
    if (!ap)
        return res;
    fill_args(p, &ap->args);
    ap->list = p->form == BK_ATTENTION_PATTERN_LIST;
    const enum path cap = path_cap();
    ap->fast = cap >= PATH_MMA && fast_path(plan);
    if (ap->fast)
        mma_widths(p, &ap->width_k, &ap->width_v);
    ap->vectorised = strides_vectorised(p);
    /* Sequences of their own lengths run on the Hopper kernels' _seq
     * twins (tiles placed by QueryTiles::place and key_tile_place); the
     * fused and atomic backward kernels (DenseOrder and the dQ sums
     * numbered by whole batch entries) take none, so a plan with sequences
     * keeps the dq and dk/dv kernels. */
    ap->wgmma = ap->fast && cap >= PATH_WGMMA && wgmma_path(plan) && !sequences_backward(p);
    ap->wgmma_width = ap->wgmma ? wgmma_width(p) : 0;
    ap->forward = &forward_kernels[0];
    ap->chooses = false;
    if (!p->backward && ap->wgmma)
        ap->forward = forward_kernel(p, ap->wgmma_width, &ap->chooses);
    const uint64_t core_workspace = plan->props.workspaceSize;
    ap->atomic =
        ap->wgmma && !p->has_sequences && atomic_backward(p) && fused_workspace(plan, ap);
    ap->fused = !ap->atomic && ap->wgmma && !p->has_sequences &&
                fused_backward(p, ap->wgmma_width) &&
                fused_workspace(plan, ap);
    ap->pair = ap->wgmma && p->backward && pair_width(ap->wgmma_width);
    if (ap->atomic) /* the sums' order follows the CTAs' pace */
        plan->props.precision.deterministic = plan->props.precision.bitStable = BK_FALSE;
    ap->row_ctas = row_ctas(plan->ctx->impl, ap->forward->per_sm, p,
                            p->backward ? backward_rows(ap->wgmma_width) : ap->forward->rows);
    ap->narrow_row_ctas = ap->chooses ? row_ctas(plan->ctx->impl,
                                                 forward_kernels[FORWARD_NARROW].per_sm, p,
                                                 forward_kernels[FORWARD_NARROW].rows)
                                      : 0;
    const char *ts = type_suffix(p->type);
    /* The general module's kernels of this plan, then the fast one. */
    static const int forward[] = { K_SCATTER, K_GENERAL, K_CHOICE };
    static const int backward[] = { K_SCATTER, K_ROWSUM, K_DQ, K_DKV };
    static const char *const patterns[K_COUNT] = {
        [K_SCATTER] = "bk_attention_scatter", [K_GENERAL] = "bk_attention_forward_general_%s",
        [K_ROWSUM] = "bk_attention_rowsum_%s", [K_DQ] = "bk_attention_dq_general_%s",
        [K_DKV] = "bk_attention_dkv_general_%s", [K_CHOICE] = "bk_attention_forward_choice",
        [K_FIXUP] = "bk_attention_sequences_fixup_%s",
    };
    const int *wanted = p->backward ? backward : forward;
    const int wanted_count = p->backward ? 4 : ap->chooses ? 3 : 2;
    const char *names[K_COUNT];
    CUfunction *fns[K_COUNT];
    int count = 0;
    for (int i = ap->list ? 0 : 1; i < wanted_count; i++) {
        const int k = wanted[i];
        snprintf(ap->name[k], sizeof ap->name[k], patterns[k], ts);
        names[count] = ap->name[k];
        fns[count++] = &ap->fn[k];
    }
    const bool packed = p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED;
    if (packed) {
        snprintf(ap->name[K_FIXUP], sizeof ap->name[K_FIXUP], patterns[K_FIXUP], ts);
        names[count] = ap->name[K_FIXUP];
        fns[count++] = &ap->fn[K_FIXUP];
    }
    if ((res = bk_cuda_find_functions(plan, BK_CUDA_MODULE_ATTENTION_GENERAL, names, fns,
                                      count)) != BK_SUCCESS)
        return res;
    if (ap->fast && (res = find_fast(plan, ap, ts)) != BK_SUCCESS)
        return res;
    if (ap->fused && !dense_order_fits(plan, ap)) {
        ap->fused = false; /* dq and dk/dv, which find_fast found too */
        plan->props.workspaceSize = core_workspace;
    }
    /* The decode kernels: F16 and BF16, D = Dv = 64 or 128, 16-byte copies. */
    const bool decode = ap->fast && ap->vectorised && p->type != BK_DATA_TYPE_F32 &&
                        p->d == p->dv && (p->d == 64 || p->d == 128);
    if ((res = bk_cuda_attention_decode_plan(plan, decode, &ap->args, &ap->decode)) !=
        BK_SUCCESS)
        return res;
    /* Paged caches: the decode kernels only, which read q, k, v and y in
     * 16-byte pieces (a run's bindings are held to it, as no other kernel
     * could take the run). Sequences of their own lengths run on every
     * kernel but the fused and atomic backward (see above). */
    if (p->paged) {
        if (!ap->decode.on)
            return bk_error(BK_ERROR_UNSUPPORTED,
                            "%s.pNext: BkAttentionPagedKvInfo runs on the CUDA backend for the "
                            "forward with Lq <= %d, F16 or BF16, D = Dv = 64 or 128, a DENSE "
                            "pattern and 16-byte strides (sm_80, sm_90, sm_100), not yet for "
                            "this plan", plan->op_name, BK_ATTENTION_DECODE_MAX_LQ);
        static const uint32_t sixteen[] = { BK_ATTENTION_BINDING_Q, BK_ATTENTION_BINDING_K,
                                            BK_ATTENTION_BINDING_V, BK_ATTENTION_BINDING_Y };
        for (size_t i = 0; i < sizeof sixteen / sizeof sixteen[0]; i++)
            plan->slot[sixteen[i]].alignment = 16;
    }
    /* The tensor-core kernels' names carry their widths (_dDK_vDV), the
     * Hopper ones theirs; a plan with sequences _padded or _packed. */
    char widths[16] = ""; /* widths are 32..256: three digits each */
    if (ap->wgmma)
        snprintf(widths, sizeof widths, "_d%u", (unsigned int)ap->wgmma_width % 1000u);
    else if (ap->fast)
        snprintf(widths, sizeof widths, "_d%u_v%u", (unsigned int)ap->width_k % 1000u,
                 (unsigned int)ap->width_v % 1000u);
    const char *seq_tag = !p->has_sequences ? "" : packed ? "_packed" : "_padded";
    if (p->backward)
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName,
                 "bk_attention_backward_%s_%s%s%s",
                 ap->atomic  ? "wgmma_atomic"
                 : ap->fused ? "wgmma_fused"
                 : ap->pair  ? "wgmma_pair"
                 : ap->wgmma ? "wgmma"
                 : ap->fast  ? "mma"
                             : "general",
                 ts, widths, seq_tag);
    else if (ap->decode.on)
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s",
                 bk_cuda_attention_decode_name(&ap->decode));
    else if (ap->chooses) /* deep's name, its kind named both ways */
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName,
                 "bk_attention_forward_wgmma_deep_or_narrow_%s_d%d%s", ts, ap->wgmma_width,
                 seq_tag);
    else
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s%s",
                 ap->name[ap->wgmma ? K_WGMMA : ap->fast ? K_FAST : K_GENERAL], seq_tag);
    return BK_SUCCESS;
}
