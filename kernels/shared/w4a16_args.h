/* SPDX-License-Identifier: Apache-2.0 */
/* The parameter blocks of the W4A16 kernels (kernels/w4a16_*.cu, nvcc),
 * shared with their launchers (lib/cuda/cuda_w4a16*.c, plain C11) so both
 * agree. Addresses are device addresses; strides are in elements. */
#ifndef BK_W4A16_ARGS_H
#define BK_W4A16_ARGS_H

#include <stdint.h>

#include "tensor_map_args.h"

/* ---- GEMM (kernels/w4a16_gemm.cu) -------------------------------------------
 * A CTA computes a tile of tm rows (8, 16, 32 or 64) and BK_W4A16_TILE_N
 * columns over its share of K, streaming the weights through a ring of
 * shared-memory stages (cp.async); the CTAs of a cluster (sm_90, splits
 * of 2..8 along grid y) split K and add their partial tiles through
 * distributed shared memory in rank order. Grid: x = column tiles,
 * y = splits, z = row tiles. */
#define BK_W4A16_THREADS 256
#define BK_W4A16_WARPS (BK_W4A16_THREADS / 32)

#define BK_W4A16_A_VECTOR 0x1u    /* A's rows are k-contiguous, 16-byte aligned, no perm */
#define BK_W4A16_PER_CHANNEL 0x2u
#define BK_W4A16_HAS_PERM 0x4u
#define BK_W4A16_C_VECTOR 0x8u    /* C: unit column stride, rows and base 16-byte aligned */
/* Bits 8-15: the stages of its share whose weights, scale rows and zero
 * rows a CTA prefetches into L2 before it waits for the grid before it
 * (programmatic dependent launch, sm_90 and later), while that grid
 * drains: the GEMM only reads them, and a line in L2 is still updated by
 * any write of that grid. 0: none; more than the CTA's share: the whole
 * share. Every kernel of the family (kernels/w4a16_prefetch.cuh). */
#define BK_W4A16_PREFETCH_SHIFT 8
#define BK_W4A16_PREFETCH_MAX 255u
#define BK_W4A16_PREFETCH_STAGES(flags) \
    (((flags) >> BK_W4A16_PREFETCH_SHIFT) & BK_W4A16_PREFETCH_MAX)
/* The Hopper pipeline (tiles up to 32 rows, below): its producer starts
 * the copies of the ring's first stages of weights and scales into
 * shared memory before that wait, A's after it; the prefetch above then
 * takes the stages after the ring's. Unlike the prefetch (L2 is the
 * point of coherence, so a line brought early is still the one a write
 * of the kernel before updates), a copy into shared memory before the
 * wait reads the weights as they are: only right where no kernel before
 * the GEMM in its queue writes them (a pack or repack there would race),
 * so it is a tuning switch, never set by default. */
#define BK_W4A16_EARLY_RING 0x10000u
/* Zero points: the kernels named bk_w4a16_gemm_zp_* (cp.async pipeline)
 * and bk_w4a16_gemm_tma_zp_* (the Hopper pipeline, at a.zeros) read
 * packedZeros I32 [G, N/8] at `zeros` (bk_w4a16.h's layout); the wgmma
 * ones, bk_w4a16_wgmma_zp_*, take struct bk_w4a16_tma_zp_args. */

/* Warps: BK_W4A16_NB 64-column blocks x KG(warps) groups along K, each
 * group taking KW(warps) of a stage's BK_W4A16_STAGE_KT k-tiles (16 rows
 * of K each). A CTA's tile has tm rows: 8 (M <= 8: the weights are the
 * mma's A operand, the rows of A its B operand, one mma per 16 x 16 weight
 * tile), or 16, 32, 64 (m16 fragments of A against the weights as the B
 * operand). A stage holds the k-tiles of the weights (16 KiB), up to 4
 * scale rows (groups of 32 in 128 rows of K) and the A columns of those
 * k-tiles (rows padded by 8 elements against bank conflicts). */
#define BK_W4A16_NB 4
#define BK_W4A16_STAGE_KT 8
#define BK_W4A16_KG(warps) ((warps) / BK_W4A16_NB)
#define BK_W4A16_KW(warps) (BK_W4A16_STAGE_KT / BK_W4A16_KG(warps))
#define BK_W4A16_STAGE_K (16 * BK_W4A16_STAGE_KT)
#define BK_W4A16_TILE_N (64 * BK_W4A16_NB)
#define BK_W4A16_A_PITCH (BK_W4A16_STAGE_K + 8)
#define BK_W4A16_W_STAGE_BYTES (8u * BK_W4A16_STAGE_KT * BK_W4A16_TILE_N)
#define BK_W4A16_S_STAGE_BYTES (2u * (BK_W4A16_STAGE_K / 32) * BK_W4A16_TILE_N)
#define BK_W4A16_A_STAGE_BYTES(tm) (2u * (tm) * BK_W4A16_A_PITCH)
#define BK_W4A16_STAGE_BYTES(tm) \
    (BK_W4A16_W_STAGE_BYTES + BK_W4A16_S_STAGE_BYTES + BK_W4A16_A_STAGE_BYTES(tm))
/* The ring, and after it the partial sums of KG - 1 warp groups, then the
 * CTA's partial tile in their place: whichever is larger. */
#define BK_W4A16_RED_BYTES(tm, warps) \
    (4u * (BK_W4A16_KG(warps) - 1u) * (tm) * BK_W4A16_TILE_N)
#define BK_W4A16_MAX2(a, b) ((a) > (b) ? (a) : (b))
#define BK_W4A16_RING_BYTES(tm, warps, stages) \
    BK_W4A16_MAX2((stages) * BK_W4A16_STAGE_BYTES(tm), BK_W4A16_RED_BYTES(tm, warps))

/* The cp.async pipeline: BK_W4A16_WARPS warps; CTAs per SM and stages in
 * each ring by tile height: up to 16 rows two CTAs per SM of four stages,
 * 32 and 64 rows one of six. Measured on the H100 (doc/design/w4a16.md):
 * a CTA's stages in flight count more than more CTAs per SM (three CTAs of
 * three stages streamed 20% slower; five stages or one CTA of nine, a few
 * percent slower). Where a block may have less shared memory (compute
 * capability cc = 10 major + minor: 8.0 and 8.7 163 KiB, other 8.x 99 KiB,
 * 9.0 227 KiB), the ring has as many stages as fit. */
#define BK_W4A16_CTAS_PER_SM(tm) ((tm) >= 32 ? 1 : 2)
#define BK_W4A16_STAGES_WANTED(tm) ((tm) >= 32 ? 6 : 4)
#define BK_W4A16_BLOCK_SMEM_LIMIT(cc) \
    ((cc) >= 90 ? 232448u : (cc) == 80 || (cc) == 87 ? 166912u : 101376u)
#define BK_W4A16_MIN2(a, b) ((a) < (b) ? (a) : (b))
/* Leaves room for the Hopper pipeline's barriers (16 bytes a stage). */
#define BK_W4A16_STAGES(tm, cc) \
    BK_W4A16_MIN2(BK_W4A16_STAGES_WANTED(tm), \
                  (int)(BK_W4A16_BLOCK_SMEM_LIMIT(cc) / (BK_W4A16_STAGE_BYTES(tm) + 16u)))
#define BK_W4A16_SMEM(tm, cc) \
    BK_W4A16_RING_BYTES(tm, BK_W4A16_WARPS, BK_W4A16_STAGES(tm, cc))

struct bk_w4a16_gemm_args {
    uint64_t a, packed, scales, perm, c;
    int64_t m, n, k;
    int64_t a_rs, a_cs, c_rs, c_cs;
    int32_t group;                /* rows per scale group (k when per channel) */
    uint32_t flags;
    uint32_t stages;              /* ceil(k / BK_W4A16_STAGE_K) */
    uint32_t splits;              /* CTAs per cluster along y (1: no cluster) */
    uint32_t tiles_m;             /* stream-K: row tiles (grid z of the tiled kernels) */
    uint32_t units;               /* stream-K: tiles x stages */
    /* The stream-K kernels' workspace, or the cp.async zp kernels'
     * packedZeros (which have no workspace; the wgmma zp kernels find it
     * in struct bk_w4a16_tma_zp_args): one field keeps the block 128
     * bytes, which the compiler keeps in registers. */
    union {
        uint64_t workspace;       /* stream-K: counters and partial tiles (below) */
        uint64_t zeros;           /* packedZeros */
    };
};

/* The Hopper GEMM kernels (sm_90), tiles up to 32 rows of a contiguous
 * A: consumer warps as above and a producer warp after them that brings
 * each stage by the bulk tensor copy engine. map_w: packed as U64
 * [K/16, N] (a k-tile's 16 rows of a column are 8 bytes), boxes of
 * TILE_N x STAGE_KT; map_s: packedScales as U16 [G, N], boxes of
 * TILE_N x (STAGE_K / group), grouped scales only; map_a: A [M, K], boxes
 * of 64 x tm, 128-byte swizzled (two per stage). Stages are whole KiB
 * (the swizzle's alignment) and complete on shared-memory barriers, a
 * full and an empty one per stage, after the ring; 1 KiB of slack aligns
 * the ring. */
/* The same warps, stages and CTAs per SM as the cp.async pipeline on
 * sm_90 (16 consumer warps measured no faster). */
#define BK_W4A16_TMA_WARPS(tm) BK_W4A16_WARPS
#define BK_W4A16_TMA_STAGES(tm) BK_W4A16_STAGES(tm, 90)
#define BK_W4A16_TMA_CTAS_PER_SM(tm) BK_W4A16_CTAS_PER_SM(tm)
#define BK_W4A16_TMA_THREADS(tm) (32 * BK_W4A16_TMA_WARPS(tm) + 32)
/* With zero points (zp), a stage also holds the dequantisation constants
 * of its zero rows, which the producer warp makes (two rows at most:
 * groups of 64 or 128 rows; groups of 32 take the cp.async pipeline):
 * per row and word t of the tile's N/8 words of packedZeros, four
 * 16-byte chunks, h = 0..3 at 512 h + 16 t (the constants of nibbles
 * 0-3 and 4-7 to subtract, then the same for the FMA), so a consumer
 * lane reads its 16 in four conflict-free loads. They follow A's two
 * 128-byte swizzled boxes. */
#define BK_W4A16_TMA_Z_ROWS 2u
#define BK_W4A16_TMA_Z_ROW_BYTES (4u * 16u * (BK_W4A16_TILE_N / 8u))
#define BK_W4A16_TMA_Z_OFF(tm) \
    (BK_W4A16_W_STAGE_BYTES + BK_W4A16_S_STAGE_BYTES + 2u * 128u * (tm))
#define BK_W4A16_TMA_STAGE_BYTES(tm, zp) \
    ((zp) ? (BK_W4A16_TMA_Z_OFF(tm) + BK_W4A16_TMA_Z_ROWS * BK_W4A16_TMA_Z_ROW_BYTES + 1023u) / \
                1024u * 1024u \
          : (BK_W4A16_STAGE_BYTES(tm) + 1023u) / 1024u * 1024u)
#define BK_W4A16_TMA_RING_BYTES(tm, zp) \
    BK_W4A16_MAX2(BK_W4A16_TMA_STAGES(tm) * BK_W4A16_TMA_STAGE_BYTES(tm, zp), \
                  BK_W4A16_RED_BYTES(tm, BK_W4A16_TMA_WARPS(tm)))
#define BK_W4A16_TMA_SMEM(tm, zp) \
    (1024u + BK_W4A16_TMA_RING_BYTES(tm, zp) + 16u * BK_W4A16_TMA_STAGES(tm))

struct bk_w4a16_tma_args {
    BK_TENSOR_MAP_FIELD(map_w);
    BK_TENSOR_MAP_FIELD(map_s);
    BK_TENSOR_MAP_FIELD(map_a);
    struct bk_w4a16_gemm_args a;
};

/* The Hopper GEMM for tiles of more than 32 rows of a contiguous A
 * (kernels/w4a16_wgmma.cu, sm_90a): C^T = W^T A^T on wgmma, the dequantised
 * weights as its register operand (64 columns of W per consumer
 * warpgroup, cw of them, below) and t rows of A (64, 128 or 256) as its
 * shared-memory operand; a producer warpgroup's first thread brings each stage
 * (WG_STAGE_KT(t) k-tiles: 128 rows of K for tiles of 64 and 128 rows,
 * whose consumers would otherwise spend much of a stage on its fixed
 * costs, 64 for tiles of 256 rows, whose A boxes fill shared memory) by the bulk
 * tensor copy engine with the maps of struct bk_w4a16_tma_args: map_w
 * boxes of WG_TILE_N(cw) x WG_STAGE_KT(t), map_s boxes of WG_TILE_N(cw) x
 * WG_SROWS(group, t) (the stage's scale rows, one when a group spans
 * stages), map_a boxes of 64 x t, 128-byte swizzled, one per 64 rows of
 * K. A stage is A, then the weights, then the scale rows (then with zero
 * points the same rows of packedZeros), in whole KiB;
 * the ring starts on a KiB and its barriers follow it; K is split over
 * clusters as above. */
/* Consumer warpgroups (64 columns each), cw: 2 (tiles of 128 columns), or
 * for tiles of 64 rows also 4 (256 columns: A shared by twice the
 * columns, more warps to hide the consumers' latency), which the plan
 * takes where N has enough such tiles to fill half the device without a
 * split of K (where it needs splits, the narrow tiles win: doc/design/w4a16.md). */
#define BK_W4A16_WG_WIDE_CONSUMERS 4
#define BK_W4A16_WG_THREADS(cw) (128 * (1 + (cw)))
#define BK_W4A16_WG_TILE_N(cw) (64 * (cw))
#define BK_W4A16_WG_STAGE_KT(t) ((t) <= 128 ? 8 : 4)
#define BK_W4A16_WG_STAGE_K(t) (16 * BK_W4A16_WG_STAGE_KT(t))
#define BK_W4A16_WG_SROWS(group, t) \
    ((group) < BK_W4A16_WG_STAGE_K(t) ? BK_W4A16_WG_STAGE_K(t) / (group) : 1)
#define BK_W4A16_WG_A_BYTES(t) (2u * (t) * BK_W4A16_WG_STAGE_K(t))
#define BK_W4A16_WG_W_BYTES(t, cw) (8u * BK_W4A16_WG_STAGE_KT(t) * BK_W4A16_WG_TILE_N(cw))
#define BK_W4A16_WG_S_BYTES(t, cw) (2u * (BK_W4A16_WG_STAGE_K(t) / 32u) * BK_W4A16_WG_TILE_N(cw))
/* zp: the zero-point kernels (bk_w4a16_wgmma_zp_*), whose stages hold
 * after the scale rows as many rows of packedZeros (WG_TILE_N(cw) / 8
 * words each, map_z of struct bk_w4a16_tma_zp_args); 0: none. */
#define BK_W4A16_WG_Z_BYTES(t, cw, zp) \
    ((zp) ? 4u * (BK_W4A16_WG_STAGE_K(t) / 32u) * (BK_W4A16_WG_TILE_N(cw) / 8u) : 0u)
#define BK_W4A16_WG_STAGE_BYTES(t, cw, zp) \
    ((BK_W4A16_WG_A_BYTES(t) + BK_W4A16_WG_W_BYTES(t, cw) + BK_W4A16_WG_S_BYTES(t, cw) + \
      BK_W4A16_WG_Z_BYTES(t, cw, zp) + 1023u) / 1024u * 1024u)
#define BK_W4A16_WG_STAGES(t, cw, zp) \
    BK_W4A16_MIN2(8, (int)(204800u / BK_W4A16_WG_STAGE_BYTES(t, cw, zp)))
#define BK_W4A16_WG_RED_BYTES(t, cw) (4u * (t) * BK_W4A16_WG_TILE_N(cw))
#define BK_W4A16_WG_RING_BYTES(t, cw, zp) \
    BK_W4A16_MAX2(BK_W4A16_WG_STAGES(t, cw, zp) * BK_W4A16_WG_STAGE_BYTES(t, cw, zp), \
                  BK_W4A16_WG_RED_BYTES(t, cw))
#define BK_W4A16_WG_SMEM(t, cw, zp) \
    (1024u + BK_W4A16_WG_RING_BYTES(t, cw, zp) + 16u * BK_W4A16_WG_STAGES(t, cw, zp))

/* Stream-K (the wgmma kernels ..._sk, grid x = one CTA an SM, P of
 * them): the units of work are a tile's stages, tiles in order of rows
 * first (CTAs at work together share weight columns); CTA x takes units
 * [x U / P, (x + 1) U / P) of the U, so every SM streams the same share
 * of the weights whatever the count of tiles. A tile split between CTAs
 * is summed, in the order of the CTAs (deterministic), by the last of its
 * warps to finish its share: per (tile, consumer warp) two counters, the
 * warps that arrived and those whose partial tile is written, cleared
 * before each run by bk_w4a16_sk_clear (workspace_clear.h: the workspace
 * is scratch of any content); then
 * two slots a CTA for its partial tiles (its share's first and last
 * tile), each warp's accumulators in the order of its registers. C is
 * written from the registers through 512 bytes a consumer warp after the
 * ring's barriers, each followed by the warp's barrier for the copies of
 * other CTAs' partials into the ring (once the CTA's share is done and
 * the ring idle). */
#define BK_W4A16_SK_COUNTERS(tiles, cw) ((uint64_t)(tiles) * 4u * (cw) * 2u)
#define BK_W4A16_SK_COUNTER_BYTES(tiles, cw) \
    ((4u * BK_W4A16_SK_COUNTERS(tiles, cw) + 255u) / 256u * 256u)
#define BK_W4A16_SK_SLOT_BYTES(t, cw) (4u * (uint64_t)(t) * BK_W4A16_WG_TILE_N(cw))
#define BK_W4A16_SK_WORKSPACE(tiles, ctas, t, cw) \
    (BK_W4A16_SK_COUNTER_BYTES(tiles, cw) + 2u * (uint64_t)(ctas) * BK_W4A16_SK_SLOT_BYTES(t, cw))
#define BK_W4A16_SK_STAGING_BYTES(cw) (528u * 4u * (cw))
#define BK_W4A16_WG_SK_SMEM(t, cw, zp) (BK_W4A16_WG_SMEM(t, cw, zp) + BK_W4A16_SK_STAGING_BYTES(cw))

/* The parameters of the wgmma kernels with zero points: map_z is
 * packedZeros as U32 [G, N/8] in boxes of WG_TILE_N(cw) / 8 x
 * WG_SROWS(group, t) (grouped only), brought into each stage after its
 * scale rows; zeros its address, from which per-channel zero points are
 * read directly (t.a's `zeros` is the stream-K workspace there). A block
 * of its own, so that the symmetric kernels keep theirs. */
struct bk_w4a16_tma_zp_args {
    struct bk_w4a16_tma_args t;
    BK_TENSOR_MAP_FIELD(map_z);
    uint64_t zeros;
};
/* ---- Conversions (kernels/w4a16_convert.cu) ---------------------------------- */
#define BK_W4A16_CONVERT_THREADS 256

/* A plain or GPTQ matrix operand: address and element strides. */
struct bk_w4a16_matrix {
    uint64_t base;
    int64_t rs, cs;
};

/* With zero points (BkW4A16ZeroPointsInfo): zeros is the plain U8 [G, N]
 * (quantize, pack, unpack; base 0 otherwise) and packed_zeros the I32
 * [G, N/8] (0 when symmetric or quantizing). */
struct bk_w4a16_convert_args {
    struct bk_w4a16_matrix weight, quantized, scales, qweight, qzeros, zeros;
    uint64_t packed, packed_scales, g_idx, perm, report, packed_zeros;
    int64_t k, n, group, groups;
    uint32_t per_channel;
    uint32_t weight_type;         /* BkDataType of weight (quantize) */
    uint32_t scale_bf16;          /* scales are BF16 (else F16) */
    uint32_t zero_offset;         /* GPTQ: added to a stored zero (0 or 1) */
    uint32_t awq;                 /* the repack reads AWQ's qweight [K, N/8] and column order */
    uint32_t pad;
};

#endif /* BK_W4A16_ARGS_H */
