/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA attention forward for few query rows over a long KV cache: a
 * split kernel (kernels/attention_decode.cu's, or on Hopper
 * kernels/attention_decode_wgmma.cu's), then the combining kernel. See
 * cuda_attention_decode.h. */
#include "cuda_attention_decode.h"
#include "../checked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct bk_attention_decode_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the decode parameter block fits struct bk_cuda_kernel_launch");
_Static_assert(sizeof(struct bk_attention_decode_tma_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the Hopper decode parameter block fits struct bk_cuda_kernel_launch");
_Static_assert(sizeof(struct bk_attention_decode_forward_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the forward decode parameter block fits struct bk_cuda_kernel_launch");

/* A stream walks at least this many steps of BK_ATTENTION_DECODE_KEYS(D)
 * keys (its Q load, ring start and part store cost about that much). */
#define MIN_STEPS_PER_STREAM 4
/* The steps a stream of the mma.sync split kernel brings into L2 before
 * the wait for the grid before (prefetch_share in
 * kernels/attention_decode.cu); BK_CUDA_ATTENTION_DECODE_PREFETCH=N
 * names another count (0: none), for tuning. */
#define PREFETCH_STEPS 2
/* The combining kernel's warps a CTA. */
#define COMBINE_WARPS (BK_ATTENTION_DECODE_COMBINE_THREADS / 32)

/* BK_CUDA_ATTENTION_DECODE: off, mma (the mma.sync kernels only), mma16
 * (those with rows as the tiles' 16, never the narrow ones), wgmma (the
 * Hopper decode kernel wherever it runs), forward (the forward's CTA
 * wherever it runs), whole (the narrow kernels walking whole units
 * wherever they run); else the default choice. */
enum decode_mode {
    MODE_AUTO,
    MODE_OFF,
    MODE_MMA,
    MODE_MMA16,
    MODE_WGMMA,
    MODE_FORWARD,
    MODE_WHOLE
};

static enum decode_mode decode_mode(void)
{
    const char *s = getenv("BK_CUDA_ATTENTION_DECODE");
    if (!s)
        return MODE_AUTO;
    return strcmp(s, "off") == 0     ? MODE_OFF
           : strcmp(s, "mma") == 0   ? MODE_MMA
           : strcmp(s, "mma16") == 0 ? MODE_MMA16
           : strcmp(s, "wgmma") == 0   ? MODE_WGMMA
           : strcmp(s, "forward") == 0 ? MODE_FORWARD
           : strcmp(s, "whole") == 0   ? MODE_WHOLE
                                       : MODE_AUTO;
}

/* The ring's bytes a CTA on this device: sm_90 and sm_100 allow 227 KiB of
 * shared memory a CTA, sm_80 163 KiB; the others (99 KiB) take the other
 * kernels. */
static unsigned int ring_bytes(const BkDeviceProperties *dev)
{
    if (dev->computeCapabilityMajor == 9 || dev->computeCapabilityMajor == 10)
        return BK_ATTENTION_DECODE_RING_SM90;
    if (dev->computeCapabilityMajor == 8 && dev->computeCapabilityMinor == 0)
        return BK_ATTENTION_DECODE_RING_SM80;
    return 0;
}

static const char *type_name(BkDataType t)
{
    return t == BK_DATA_TYPE_F16 ? "f16" : "bf16";
}

/* BK_CUDA_ATTENTION_DECODE_PREFETCH's count, 0 to 64, else PREFETCH_STEPS. */
static uint32_t prefetch_steps(void)
{
    const char *s = getenv("BK_CUDA_ATTENTION_DECODE_PREFETCH");
    if (!s || !*s)
        return PREFETCH_STEPS;
    const long n = strtol(s, NULL, 10);
    return n < 0 ? 0 : n > 64 ? 64 : (uint32_t)n;
}

/* The decode units of unit_rows packed rows: a row group of each kv head. */
static uint64_t decode_units(const struct bk_attention_problem *p, uint64_t unit_rows)
{
    const uint64_t rows = (uint64_t)(p->heads / p->kv_heads) * (uint64_t)p->lq;
    return (uint64_t)p->batch * (uint64_t)p->kv_heads * ((rows + unit_rows - 1) / unit_rows);
}

/* Stream-K for units of unit_rows packed rows and steps of `keys` keys,
 * `streams` key streams a CTA and at most `resident` CTAs at once (one or
 * two an SM): the units' steps end to end, an equal share a stream; or,
 * where per_unit is 1 or 2, that many streams a unit exactly, which then
 * leave no parts. Fills k's grid and arguments and the bytes of its parts
 * (F32 o and lse a row a slot); false where a count overflows. */
static bool split_work(const struct bk_attention_problem *p, uint64_t resident, uint64_t keys,
                       uint64_t unit_rows, uint64_t streams, unsigned int per_unit,
                       struct attention_decode_kernels *k, uint64_t *part_bytes)
{
    const uint64_t group = (uint64_t)(p->heads / p->kv_heads), rows = group * (uint64_t)p->lq;
    const uint64_t row_groups = (rows + unit_rows - 1) / unit_rows;
    const uint64_t unit_steps = ((uint64_t)p->lk + keys - 1) / keys;
    const uint64_t units = decode_units(p, unit_rows);
    bool ovf = false;
    const uint64_t all = bk_mul_u64(units, unit_steps, &ovf);
    if (ovf)
        return false;
    /* Streams walk all / walking steps, or one more (see stream_start in
     * kernels/attention_decode.cuh): every resident stream walks, where a
     * share rounded up left streams idle (D = 64, B8 Lk8192: 512 of 528). */
    uint64_t walking = (all + MIN_STEPS_PER_STREAM - 1) / MIN_STEPS_PER_STREAM;
    walking = walking < 1 ? 1 : walking > resident * streams ? resident * streams : walking;
    if (per_unit) /* stream i: steps [i unit_steps, (i + 1) unit_steps) / per_unit */
        walking = bk_mul_u64(units, per_unit, &ovf);
    const uint64_t least = all ? all / walking : 1; /* the fewest steps a stream walks */
    uint64_t max_parts = unit_steps ? (unit_steps + least - 1) / least + 1 : 1;
    if (max_parts > walking)
        max_parts = walking;
    const uint64_t cells = bk_mul_u64(bk_mul_u64(units, max_parts, &ovf), unit_rows, &ovf);
    *part_bytes = bk_mul_u64(bk_mul_u64(cells, (uint64_t)p->dv + 1, &ovf), 4, &ovf);
    if (ovf || *part_bytes > (uint64_t)INT64_MAX)
        return false;
    if (per_unit)
        *part_bytes = 0; /* the streams of a unit write y themselves */
    k->unit_rows = (unsigned int)unit_rows;
    k->ctas = (unsigned int)((walking + streams - 1) / streams);
    k->args.group = (uint32_t)group;
    k->args.rows = (uint32_t)rows;
    k->args.row_groups = (uint32_t)row_groups;
    k->args.max_parts = (uint32_t)max_parts;
    /* A warp takes 32 parts in one trip: more warps a row for more. */
    k->args.combine_warps = max_parts <= 32 ? 1 : max_parts <= 64 ? 2 : COMBINE_WARPS;
    /* A stream of few steps starts its ring at once: there the prefetch
     * only delays its first copies (H100, bf16 D64 B1 H64/8 Lk4096, four
     * steps a stream: 14.6 us against 13.6). */
    const uint32_t ahead = prefetch_steps();
    k->args.prefetch_steps = least >= 3 * (uint64_t)ahead ? ahead : 0;
    k->args.unit_steps = (int64_t)unit_steps;
    k->args.streams = (int64_t)walking;
    k->args.units = (int64_t)units;
    return true;
}

/* The combining kernel of units of 16 RG rows, from the module of the
 * mma.sync kernels: _few (four parts in flight, few registers) where a
 * row has at most 8 part slots and the rows are 2048 or more, else all of
 * a chunk's 32 in flight (kernels/attention_decode.cu, combine). */
static BkResult find_combine(BkPlan plan, const struct bk_attention_problem *p, unsigned int rg,
                             struct attention_decode_kernels *k)
{
    const uint64_t rows = (uint64_t)p->batch * (uint64_t)p->heads * (uint64_t)p->lq;
    const bool few = k->args.max_parts <= 8 && rows >= 2048;
    snprintf(k->combine_name, sizeof k->combine_name, "bk_attention_decode_combine_%s_d%d_r%u%s",
             type_name(p->type), (int)p->d, rg, few ? "_few" : "");
    return bk_cuda_find_kernel(plan, BK_CUDA_MODULE_ATTENTION_DECODE, k->combine_name,
                               &k->combine, 0);
}

/* A set's split kernel (k's name and shared memory, from `module`) and
 * its combining kernel of units of 16 RG rows; the set is on where both
 * are found. */
static BkResult find_kernels(BkPlan plan, enum bk_cuda_module_id module,
                             const struct bk_attention_problem *p, unsigned int rg,
                             struct attention_decode_kernels *k)
{
    BkResult res = bk_cuda_find_kernel(plan, module, k->split_name, &k->split, k->shared_bytes);
    if (res == BK_SUCCESS)
        res = find_combine(plan, p, rg, k);
    k->on = res == BK_SUCCESS;
    return res;
}

/* Whether each stream of the narrow kernels walks whole units (two
 * streams a CTA, no parts, no combining kernel): where the units fill the
 * SMs' streams in whole waves to 90% or more (B32 H32/8 on 132 SMs: 256
 * of 264), and the split's parts and second launch cost more than its
 * balance wins. A unit needs a step, so that its stream writes y. A
 * paged cache keeps stream-K: two streams an SM walking pages are bound
 * by the latency of the walk (H200, bf16 B32 H32/8 Lk4096 page16: D128
 * 292.4 us whole against 148.9 stream-K, D64 160.7 against 86.6). */
static bool whole_units(const struct bk_attention_problem *p, enum decode_mode mode, uint64_t sms)
{
    const uint64_t units = (uint64_t)p->batch * (uint64_t)p->kv_heads;
    const uint64_t resident = sms * BK_ATTENTION_DECODE_WHOLE_STREAMS;
    if (p->lk < 1 || units > UINT32_MAX)
        return false;
    if (mode == MODE_WHOLE)
        return true;
    if (p->paged)
        return false;
    const uint64_t waves = (units + resident - 1) / resident;
    return units * 10 >= waves * resident * 9;
}

/* The mma.sync kernels: a warp takes 16 packed rows, a key stream RG warps
 * (1, 2, 4, 8 for up to 16, 32, 64, 128 rows), steps of 8 KiB of K. Up to
 * 8 rows take the narrow kernels (keys as the tiles' rows, the packed rows
 * as their 8 columns: half the products and exponentials of a 16-row
 * tile), with RG = 1's grid, ring and parts. */
static BkResult plan_mma(BkPlan plan, enum decode_mode mode, unsigned int ring, uint64_t sms,
                         struct attention_decode_kernels *k, uint64_t *part_bytes)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const uint64_t rows = (uint64_t)(p->heads / p->kv_heads) * (uint64_t)p->lq;
    const unsigned int rg = rows <= 16 ? 1 : rows <= 32 ? 2 : rows <= 64 ? 4 : 8;
    const bool narrow = rows <= 8 && mode != MODE_MMA16;
    k->direct = narrow && whole_units(p, mode, sms);
    const unsigned int streams = k->direct ? BK_ATTENTION_DECODE_WHOLE_STREAMS
                                           : BK_ATTENTION_DECODE_STREAMS(rg);
    if (!split_work(p, sms, BK_ATTENTION_DECODE_KEYS((uint64_t)p->d), 16u * rg, streams,
                    k->direct ? 1 : 0, k, part_bytes))
        return BK_SUCCESS;
    k->threads = 32 * rg * streams;
    const unsigned int stages = BK_ATTENTION_DECODE_STAGES((unsigned int)p->d, streams, ring);
    k->shared_bytes = BK_ATTENTION_DECODE_SHARED_BYTES((unsigned int)p->d, streams, stages);
    if (k->direct)
        snprintf(k->split_name, sizeof k->split_name, "bk_attention_decode_%s_d%d_n8_w2_s%u",
                 type_name(p->type), (int)p->d, stages);
    else if (narrow)
        snprintf(k->split_name, sizeof k->split_name, "bk_attention_decode_%s_d%d_n8_s%u",
                 type_name(p->type), (int)p->d, stages);
    else
        snprintf(k->split_name, sizeof k->split_name, "bk_attention_decode_%s_d%d_r%u_s%u",
                 type_name(p->type), (int)p->d, rg, stages);
    return find_kernels(plan, BK_CUDA_MODULE_ATTENTION_DECODE, p, rg, k);
}

/* K's (and V's) extents as the Hopper maps see them: the cache [B, Hkv,
 * Lk, D], or a paged pool [pages, Hkv, page, D]. */
static void kv_extent(const struct bk_attention_problem *p, int64_t kv[4])
{
    kv[0] = p->paged ? p->pages : p->batch;
    kv[1] = p->kv_heads;
    kv[2] = p->paged ? p->page_size : p->lk;
    kv[3] = p->d;
}

/* K and V of a's as tensor maps (the forward's boxes of 64 keys x 64
 * columns; a paged pool's of min(page, 64) rows, a page's piece of a
 * 64-key slot each), into map_k and map_v: both Hopper sets' parameters. */
static bool kv_maps(const struct bk_attention_problem *p, const struct bk_attention_args *a,
                    void *map_k, void *map_v)
{
    int64_t kv[4];
    kv_extent(p, kv);
    const uint32_t rows = p->paged && p->page_size < 64 ? (uint32_t)p->page_size : 64;
    return bk_cuda_tensor_map((CUtensorMap *)map_k, p->type, a->k.base, 4, kv, p->stride.k, 64,
                              rows) &&
           bk_cuda_tensor_map((CUtensorMap *)map_v, p->type, a->v.base, 4, kv, p->stride.v, 64,
                              rows);
}

/* The Hopper kernel's steps: 128 keys (D = 64 with 64-key steps of 16 KiB
 * held a stream to 75-80% of the copy bandwidth; two consumers taking
 * turns at D = 64, Lq = 16 of 8 heads: 71.7 us against 83.6 with 64), but
 * 64 at D = 128 with two CTAs an SM (three 32 KiB steps in 96 KiB). */
static unsigned int wgmma_keys(unsigned int d, unsigned int ctas)
{
    return ctas == 2 && d == 128 ? 64 : 128;
}

/* The Hopper kernel's CTAs an SM for nc consumers: two of one consumer
 * each, so that one's softmax runs under the other's products (the one
 * consumer of a CTA alone waits on its own), unless
 * BK_CUDA_ATTENTION_DECODE_CTAS=1. Two consumers of a CTA need the
 * registers of the whole SM. */
static unsigned int wgmma_ctas(unsigned int nc)
{
    const char *s = getenv("BK_CUDA_ATTENTION_DECODE_CTAS");
    return nc == 1 && !(s && strcmp(s, "1") == 0) ? 2 : 1;
}

/* Whether the block table's entries sit below 2^31 elements from its
 * start (the forward's producer indexes it in 32 bits). */
static bool table_fits_i32(const struct bk_attention_problem *p)
{
    const int64_t last = (p->batch - 1) * p->block_table_stride[0] +
                         (p->max_pages - 1) * p->block_table_stride[1];
    return p->block_table_stride[0] >= 0 && p->block_table_stride[1] >= 0 && last < INT32_MAX;
}

/* What both Hopper sets need: sm_90 exactly (sm_90a code), and a cache
 * that tensor maps describe, with keys (and `slack` past them, a last
 * tile's) that the maps' 32-bit coordinates reach; a paged pool only
 * where `paged` (the forward's CTA), of pages of a power of two (a 64-key
 * slot is then whole pieces of pages), a page count the coordinates
 * reach past its end (the zeros of an empty slot or a bad page) and a
 * table the producer's 32-bit indices reach. */
static bool hopper_cache(const struct bk_attention_problem *p, const BkDeviceProperties *dev,
                         int64_t slack, bool paged)
{
    int64_t kv[4];
    kv_extent(p, kv);
    const bool pool = !p->paged || (paged && (p->page_size & (p->page_size - 1)) == 0 &&
                                    p->pages < INT32_MAX && table_fits_i32(p));
    return dev->computeCapabilityMajor == 9 && dev->computeCapabilityMinor == 0 && pool &&
           p->lk <= INT32_MAX - slack && p->batch <= INT32_MAX &&
           bk_cuda_tensor_map_fits(p->type, 4, kv, p->stride.k) &&
           bk_cuda_tensor_map_fits(p->type, 4, kv, p->stride.v);
}

/* The Hopper kernel: sm_90 exactly (sm_90a code), a contiguous cache that
 * tensor maps describe, lengths the maps' 32-bit coordinates reach; 64
 * packed rows a consumer warpgroup, one consumer for up to 64 rows, two
 * past that; a CTA a key stream. Where the mode leaves the choice, it
 * takes more than 32 packed rows: with fewer, the mma.sync kernel's
 * 16-row tiles waste less, and it ran level or faster (H200, bf16:
 * doc/design/attention.md). */
static BkResult plan_wgmma(BkPlan plan, enum decode_mode mode, uint64_t sms,
                           struct attention_decode_kernels *k, uint64_t *part_bytes)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const BkDeviceProperties *dev = &plan->ctx->props;
    const uint64_t rows = (uint64_t)(p->heads / p->kv_heads) * (uint64_t)p->lq;
    if (mode == MODE_MMA || mode == MODE_MMA16 || mode == MODE_WHOLE || mode == MODE_FORWARD ||
        (mode == MODE_AUTO && rows <= 32) || !hopper_cache(p, dev, 128, false))
        return BK_SUCCESS;
    const unsigned int nc = rows <= 64 ? 1 : 2, ctas = wgmma_ctas(nc);
    const unsigned int keys = wgmma_keys((unsigned int)p->d, ctas);
    if (!split_work(p, sms * ctas, keys, 64u * nc, 1, 0, k, part_bytes))
        return BK_SUCCESS;
    k->threads = BK_ATTENTION_DECODE_WG_THREADS(nc);
    k->shared_bytes = BK_ATTENTION_DECODE_WG_SHARED_BYTES((unsigned int)p->d, keys, ctas);
    snprintf(k->split_name, sizeof k->split_name, "bk_attention_decode_wgmma_%s_d%d_c%u_k%u%s",
             type_name(p->type), (int)p->d, nc, keys, ctas == 2 ? "_p2" : "");
    return find_kernels(plan, BK_CUDA_MODULE_ATTENTION_DECODE_WGMMA, p, 4 * nc, k);
}

/* The packed rows past which the plan, where the mode leaves the choice,
 * takes the forward's CTA. At D = 128 its two 64-row consumers beat both
 * other sets from 32 rows: the Hopper kernel of 64 rows at Lq8 (135.4 us
 * against 142.7) and the mma.sync kernels on pages (Lq4 page64 255.8
 * against 281.0). At D = 64 the kernel of 64 rows keeps a contiguous
 * cache up to 64 rows (Lq8 78.5 against 82.4); pages, which it does not
 * read, go past 32 (Lq8 page64 85.6 against 101.8 on mma.sync, Lq4 174.4
 * against 163.1). Pages under 64 keys stay on mma.sync: the slot's
 * pieces of 16 or 32 rows cost the copies more than the tiles win (Lq4
 * page32 354.6 against 293.2, page16 592.5 against 298.9; D = 64 Lq8
 * page16 174.2 against 116.8). H200, bf16 B8 H64/8, causal. */
static uint64_t forward_past_rows(const struct bk_attention_problem *p)
{
    if (p->paged && p->page_size < 64)
        return UINT64_MAX;
    return p->d == 128 ? 16 : p->paged ? 32 : 64;
}

/* The forward's CTA's tiles: keys a tile and the ring's stages. At D =
 * 128, units of more than 64 packed rows (both consumers busy) take tiles
 * of 128 keys in three stages, the others 192 in two: H100, bf16 B8
 * H64/8, causal, 128 / 192 keys, same call: Lq16 Lk8192 108.9 / 112.0 us,
 * Lq8 Lk16384 192.6 / 191.2, Lq4 Lk32768 367.4 / 365.3. At D = 64, 192
 * keys in three stages (four: Lq16 66.0 against 63.8).
 * BK_CUDA_ATTENTION_DECODE_TILE ("128s3", "192s2", "192s3" or "192s4")
 * names one of those built, for tuning. */
struct forward_tile {
    unsigned int d, keys, stages;
};
static const struct forward_tile forward_tiles[] = {
    { 128, 192, 2 },
    { 128, 128, 3 },
    { 64, 192, 3 },
    { 64, 192, 4 },
};

static struct forward_tile forward_tile(unsigned int d, uint64_t rows)
{
    const char *s = getenv("BK_CUDA_ATTENTION_DECODE_TILE");
    unsigned int keys = 0, stages = 0;
    const bool named = s && sscanf(s, "%us%u", &keys, &stages) == 2;
    for (size_t i = 0; i < sizeof forward_tiles / sizeof forward_tiles[0]; i++)
        if (forward_tiles[i].d == d && named && forward_tiles[i].keys == keys &&
            forward_tiles[i].stages == stages)
            return forward_tiles[i];
    return forward_tiles[d == 128 ? (rows > 64 ? 1 : 0) : 2];
}

/* How the forward's CTAs share the units' keys (BK_ATTENTION_DECODE_SPLIT_*):
 * where units of more than 64 packed rows (both consumers busy), one CTA a
 * unit or two, fill the SMs to 90% or more (B8 H64/8 Lq16 on 132 SMs: 64
 * units, 128 CTAs), the CTAs of a unit write y themselves (a pair merging
 * through distributed shared memory): no parts and no second kernel.
 * H100, bf16 B8 H64/8 Lq16 Lk8192 causal, pairs / parts: D128 103.0 /
 * 106.2 us, D64 58.2 / 64.1. With 64 rows or fewer a unit's merge saves
 * less than the clusters cost (Lq8 Lk16384 187.0 / 185.6). Elsewhere
 * stream-K with parts. BK_CUDA_ATTENTION_DECODE_SPLIT ("parts", "whole"
 * or "pairs") names one, wherever it runs (tests). */
static unsigned int forward_split(uint64_t rows, uint64_t units, uint64_t sms, bool *named)
{
    static const char *const names[] = { "parts", "whole", "pairs" };
    const char *s = getenv("BK_CUDA_ATTENTION_DECODE_SPLIT");
    *named = s != NULL;
    for (unsigned int i = 0; s && i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    for (unsigned int per = 1; rows > 64 && per <= BK_ATTENTION_DECODE_SPLIT_PAIRS; per++)
        if (units * per <= sms && units * per * 10 >= sms * 9)
            return per;
    return BK_ATTENTION_DECODE_SPLIT_PARTS;
}

/* split_work for the forward's CTA (a stream a CTA, units of 128 rows,
 * steps of the tile's keys), whose steps DecodeTiles counts in 32 bits. */
static bool forward_work(const struct bk_attention_problem *p, uint64_t ctas,
                         const struct forward_tile *tile, unsigned int per_unit,
                         struct attention_decode_kernels *k, uint64_t *part_bytes)
{
    return split_work(p, ctas, tile->keys, BK_ATTENTION_DECODE_FORWARD_ROWS, 1, per_unit, k,
                      part_bytes) &&
           (uint64_t)k->args.units * (uint64_t)k->args.unit_steps <= UINT32_MAX;
}

/* The forward's CTA's kernels of `tile` (bk_attention_decode_forward_*,
 * the split's suffix after the tiling) and their combining kernel, into
 * k. */
static BkResult forward_kernels(BkPlan plan, const struct forward_tile *tile,
                                const char *suffix, struct attention_decode_kernels *k)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    k->threads = BK_ATTENTION_WGMMA_THREADS;
    k->shared_bytes = BK_ATTENTION_DECODE_FORWARD_SHARED_BYTES(tile->d, tile->keys, tile->stages);
    snprintf(k->split_name, sizeof k->split_name, "bk_attention_decode_forward_%s_d%d_k%u_s%u%s",
             type_name(p->type), (int)p->d, tile->keys, tile->stages, suffix);
    return find_kernels(plan, BK_CUDA_MODULE_ATTENTION_WGMMA, p,
                        BK_ATTENTION_DECODE_FORWARD_ROWS / 16, k);
}

/* The forward's CTA with `split` CTAs of each of the units writing y
 * (WHOLE or PAIRS), where every CTA has a step and, for pairs, the device
 * holds `clusters` at once; k->on where it runs. */
static BkResult plan_forward_direct(BkPlan plan, unsigned int split, uint64_t units,
                                    uint64_t clusters, const struct forward_tile *tile,
                                    struct attention_decode_kernels *k, uint64_t *part_bytes)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const uint64_t unit_steps = ((uint64_t)p->lk + tile->keys - 1) / tile->keys;
    if (unit_steps < split || units > UINT32_MAX / 2 ||
        !forward_work(p, units * split, tile, split, k, part_bytes))
        return BK_SUCCESS;
    const BkResult res = forward_kernels(
        plan, tile, split == BK_ATTENTION_DECODE_SPLIT_PAIRS ? "_pairs" : "_whole", k);
    if (res != BK_SUCCESS || split != BK_ATTENTION_DECODE_SPLIT_PAIRS)
        return res;
    const int fit = bk_cuda_max_active_clusters(plan, k->split, k->ctas, 1, 1, k->threads,
                                                k->shared_bytes);
    k->on = (uint64_t)fit >= clusters;
    return BK_SUCCESS;
}

/* The Hopper decode kernel on the forward's CTA: units of 128 packed rows
 * (two consumers of 64) in tiles of forward_tile() (at D = 64 tiles of
 * 128 keys ran 62.2 us against 60.9 with 192, bf16 B8 H64/8 Lq16
 * Lk8192), a CTA an SM; Q through a map whose boxes span 64 / Lq heads (Lq
 * divides 64), so sm_90 exactly, a cache and q that tensor maps describe,
 * a paged pool of pages of a power of two (forward_maps). */
static BkResult plan_forward(BkPlan plan, enum decode_mode mode, uint64_t sms,
                             struct attention_decode_kernels *k, uint64_t *part_bytes)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const BkDeviceProperties *dev = &plan->ctx->props;
    const uint64_t rows = (uint64_t)(p->heads / p->kv_heads) * (uint64_t)p->lq;
    const int64_t q[4] = { p->batch, p->heads, p->lq, p->d };
    if ((mode != MODE_AUTO && mode != MODE_FORWARD) ||
        (mode == MODE_AUTO && rows <= forward_past_rows(p)) ||
        64 % p->lq != 0 || !hopper_cache(p, dev, 256, true) ||
        p->heads > INT32_MAX ||
        !bk_cuda_tensor_map_fits(p->type, 4, q, p->stride.q))
        return BK_SUCCESS;
    const struct forward_tile tile = forward_tile((unsigned int)p->d, rows);
    const uint64_t units = decode_units(p, BK_ATTENTION_DECODE_FORWARD_ROWS);
    bool named;
    const unsigned int split = forward_split(rows, units, sms, &named);
    if (split != BK_ATTENTION_DECODE_SPLIT_PARTS) {
        /* Every cluster at once, or one where the split was named. */
        const BkResult res =
            plan_forward_direct(plan, split, units, named ? 1 : units, &tile, k, part_bytes);
        if (res != BK_SUCCESS || k->on) {
            k->direct = k->on;
            return res;
        }
        memset(k, 0, sizeof *k);
    }
    /* Where whole splits of every unit fill the SMs to 90% or more (44
     * units, three streams each: 132), as many streams: no stream then
     * crosses from one unit into the next (bf16 D128 B8 H64/8 Lq16 Lk8192,
     * two a unit: 100.2 us against 105.3 with 132 streams crossing). */
    const uint64_t splits = units && units <= sms ? sms / units : 0;
    const uint64_t ctas = splits && units * splits * 10 >= sms * 9 ? units * splits : sms;
    if (!forward_work(p, ctas, &tile, BK_ATTENTION_DECODE_SPLIT_PARTS, k, part_bytes))
        return BK_SUCCESS;
    return forward_kernels(plan, &tile, "", k);
}

/* q as a tensor map of boxes of 64 packed rows (Lq queries of 64 / Lq
 * heads), and K and V's (kv_maps). */
static bool forward_maps(const struct bk_attention_problem *p,
                         struct bk_attention_decode_forward_args *f)
{
    const int64_t q[4] = { p->batch, p->heads, p->lq, p->d };
    return bk_cuda_tensor_map_box((CUtensorMap *)f->map_q, p->type, f->d.a.q.base, 4, q,
                                  p->stride.q, 64, (uint32_t)p->lq, (uint32_t)(64 / p->lq)) &&
           kv_maps(p, &f->d.a, f->map_k, f->map_v);
}

/* The fields of a run's arguments that both sets of kernels share. */
static void set_common(const struct bk_attention_problem *p, const struct bk_attention_args *a,
                       struct attention_decode_kernels *k)
{
    k->args.a = *a;
    k->args.lengths_s[0] = p->lengths_q_stride;
    k->args.lengths_s[1] = p->lengths_k_stride;
    if (p->paged) {
        k->args.table_s[0] = p->block_table_stride[0];
        k->args.table_s[1] = p->block_table_stride[1];
        k->args.page_size = p->page_size;
        k->args.pages = p->pages;
        /* Pages are 16 to 256 keys: a shift of 0 names no power of two. */
        for (uint32_t s = 4; s <= 8; s++)
            if (p->page_size == (int64_t)1 << s)
                k->args.page_shift = s;
    }
}

BkResult bk_cuda_attention_decode_plan(BkPlan plan, bool fast, const struct bk_attention_args *a,
                                       struct attention_decode_plan *dp)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const struct bk_cuda_context *c = plan->ctx->impl;
    const BkDeviceProperties *dev = &plan->ctx->props;
    memset(dp, 0, sizeof *dp);
    const unsigned int ring = ring_bytes(dev);
    const enum decode_mode mode = decode_mode();
    if (!fast || p->backward || p->form != BK_ATTENTION_PATTERN_DENSE || !ring ||
        p->d != p->dv || (p->d != 64 && p->d != 128) ||
        p->lq > BK_ATTENTION_DECODE_MAX_LQ || p->lq < 1 || mode == MODE_OFF ||
        (p->has_sequences && p->seq_form != BK_ATTENTION_SEQUENCES_PADDED))
        return BK_SUCCESS;
    const uint64_t total = (uint64_t)p->batch * (uint64_t)p->heads * (uint64_t)p->lq;
    if (total > INT32_MAX)
        return BK_SUCCESS;
    const uint64_t sms = c->sm_count > 0 ? (uint64_t)c->sm_count : 1;
    uint64_t mma_bytes = 0, wgmma_bytes = 0, forward_bytes = 0;
    BkResult res = plan_mma(plan, mode, ring, sms, &dp->mma, &mma_bytes);
    if (res == BK_SUCCESS)
        res = plan_wgmma(plan, mode, sms, &dp->wgmma, &wgmma_bytes);
    if (res == BK_SUCCESS)
        res = plan_forward(plan, mode, sms, &dp->forward, &forward_bytes);
    if (res != BK_SUCCESS)
        return res;
    if (!dp->mma.on)
        return BK_SUCCESS;
    set_common(p, a, &dp->mma);
    set_common(p, a, &dp->wgmma);
    set_common(p, a, &dp->forward);
    if (forward_bytes > wgmma_bytes)
        wgmma_bytes = forward_bytes;

    /* The parts past the core's workspace: room for either set's. */
    bool ovf = false;
    const uint64_t at = bk_align_up_u64(plan->props.workspaceSize, 256, &ovf);
    const uint64_t end = bk_add_u64(at, mma_bytes > wgmma_bytes ? mma_bytes : wgmma_bytes, &ovf);
    if (ovf || end > (uint64_t)INT64_MAX)
        return BK_SUCCESS;
    dp->problem = p;
    dp->ws_parts = at;
    plan->props.workspaceSize = end;
    dp->on = true;
    return BK_SUCCESS;
}

const char *bk_cuda_attention_decode_name(const struct attention_decode_plan *dp)
{
    return dp->forward.on ? dp->forward.split_name
           : dp->wgmma.on ? dp->wgmma.split_name
                          : dp->mma.split_name;
}

uint32_t bk_cuda_attention_decode_launches(const struct attention_decode_plan *dp,
                                           const struct bk_attention_args *a,
                                           const struct bk_run_args *run,
                                           struct bk_cuda_kernel_launch *launches)
{
    const struct bk_attention_problem *p = dp->problem;
    /* The Hopper kernels' arguments: their tensor maps, then the rest. */
    struct bk_attention_decode_tma_args t;
    struct bk_attention_decode_forward_args f;
    const struct attention_decode_kernels *k = &dp->mma;
    if (dp->forward.on) {
        memset(&f, 0, sizeof f);
        f.d = dp->forward.args;
        f.d.a = *a;
        if (forward_maps(p, &f))
            k = &dp->forward;
    }
    if (k == &dp->mma && dp->wgmma.on) {
        memset(&t, 0, sizeof t);
        t.d = dp->wgmma.args;
        t.d.a = *a;
        if (kv_maps(p, &t.d.a, t.map_k, t.map_v))
            k = &dp->wgmma;
    }
    struct bk_attention_decode_args d = k->args;
    d.a = *a;
    d.lengths_q = p->has_lengths_q ? run->binding[BK_ATTENTION_BINDING_LENGTHS_Q] : 0;
    d.lengths_k = p->has_lengths_k ? run->binding[BK_ATTENTION_BINDING_LENGTHS_K] : 0;
    d.block_table = p->paged ? run->binding[BK_ATTENTION_BINDING_BLOCK_TABLE] : 0;
    const uint64_t total = (uint64_t)a->batch * (uint64_t)a->heads * (uint64_t)a->lq;
    const uint64_t cells = (uint64_t)d.units * d.max_parts * k->unit_rows;
    d.part_o = run->workspace + dp->ws_parts;
    d.part_lse = d.part_o + cells * (uint64_t)a->dv_cols * 4;
    uint32_t n = 0;
    if (k == &dp->forward) {
        f.d = d;
        bk_cuda_launch_set(&launches[n++], k->split, k->ctas, 1, 1, k->threads, k->shared_bytes,
                           k->split_name, &f, sizeof f);
    } else if (k == &dp->wgmma) {
        t.d = d;
        bk_cuda_launch_set(&launches[n++], k->split, k->ctas, 1, 1, k->threads, k->shared_bytes,
                           k->split_name, &t, sizeof t);
    } else {
        bk_cuda_launch_set(&launches[n++], k->split, k->ctas, 1, 1, k->threads, k->shared_bytes,
                           k->split_name, &d, sizeof d);
    }
    if (k->direct)
        return n; /* the split kernel wrote y */
    const uint64_t combine_warps = total * d.combine_warps;
    bk_cuda_launch_set(&launches[n++], k->combine,
                       (unsigned int)((combine_warps + COMBINE_WARPS - 1) / COMBINE_WARPS), 1, 1,
                       BK_ATTENTION_DECODE_COMBINE_THREADS, 0, k->combine_name, &d, sizeof d);
    return n;
}
