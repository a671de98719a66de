/* SPDX-License-Identifier: Apache-2.0 */
/* The parameter blocks of the 2:4 sparse kernels and the layout of a
 * prepared weight on CUDA, shared by the kernels (kernels/sparse24_*.cu, nvcc)
 * and the launchers (lib/cuda/cuda_sparse24*.c, plain C11), so both agree.
 *
 * Prepared F16/BF16 weight (the tensor-core layout). M is padded to
 * BK_SP24_PAD_M rows and K to BK_SP24_PAD_K columns; the padded W is cut
 * into tiles of 16 rows x 32 columns (mt = row / 16, kb = column / 32;
 * kbs = padded K / 32 tiles per tile row), each with a slot
 * (bk_sp24_tile_slot): stage-major, the 16 tiles of 8 tile rows by a k
 * step of 64 columns contiguous (tile rows in order, each its two tiles),
 * then the next k step of the same 128 rows, so that a 128-row CTA's k
 * step is one run of 8 KiB of values and 1 KiB of metadata (the layout
 * before, tile rows whole in turn, gave a k step as 8 runs of 1 KiB 64 k
 * steps apart; measured on the H200 2026-11-28, f16 N = 16, the decode
 * kernels 3-5% faster on qkv and o, 2% on gate-up, down and N = 2048
 * unchanged);
 *   values   a tile row's two tiles of a k step (slots 2 u and 2 u + 1)
 *            together at u * 1 KiB: its 16 rows of 32 kept values (the
 *            two kept of each group of 4 columns, in column order) as
 *            8 x 8 core matrices of 128 contiguous bytes (8 rows of 16),
 *            row half h (rows 8 h .. 8 h + 7) and 8 kept values c8 at
 *            (4 h + c8) * 128 (bk_sp24_unit_offset). That is wgmma's
 *            shared-memory operand without swizzle, K-major (core
 *            matrices 128 bytes apart along k, 512 along m: a warpgroup's
 *            64 rows of a k32 block are one descriptor), and ldmatrix.x4
 *            of four of its core matrices gives mma.sp.m16n8k32's A
 *            fragment (bk_sp24_frag_row);
 *   metadata at meta_offset + slot * 64 bytes: 16 words, word
 *            2 g + s (s = 0, 1) the metadata register of lane 4 g + s for
 *            sparsity selector 0: bits 4 i .. 4 i + 3 the position pair of
 *            chunk 4 s + i of row g, bits 16 + 4 i .. the same of row g + 8
 *            (first position in the low 2 bits, as in the interchange format).
 * Padding rows hold zeros with positions (0, 1); so do padding columns.
 * Prepared F32 weight (the general kernel only): the interchange format,
 * contiguous: values [M, K/2] at 0, metadata [M, K/8] U16 at meta_offset
 * (16-byte aligned). */
#ifndef BK_SPARSE24_ARGS_H
#define BK_SPARSE24_ARGS_H

#include <stdint.h>

#include "tensor_map_args.h"

#if defined(__CUDACC__)
#define BK_SP24_FN static __host__ __device__ __forceinline__
#else
#define BK_SP24_FN static inline
#endif

/* ---- Prepared layout ---------------------------------------------------- */
#define BK_SP24_PAD_M 128           /* rows: the largest CTA tile in m */
#define BK_SP24_PAD_K 64            /* columns: the CTA tile in k */
#define BK_SP24_TILE_BYTES 512      /* values of a 16 x 32 tile */
#define BK_SP24_META_BYTES 64       /* metadata of a 16 x 32 tile */
#define BK_SP24_PAD_NIBBLE 0x4u     /* positions (0, 1): valid, for padding */

#define BK_SP24_BLOCK_TILE_ROWS 8     /* tile rows of a stage-major block */
#define BK_SP24_STEP_TILES 16         /* tiles of a block's k step */

/* The slot of tile (mt, kb) in the prepared weight (kbs even). */
BK_SP24_FN int64_t bk_sp24_tile_slot(int64_t mt, int64_t kb, int64_t kbs)
{
    return ((mt / BK_SP24_BLOCK_TILE_ROWS) * (kbs / 2) + kb / 2) * BK_SP24_STEP_TILES +
           (mt % BK_SP24_BLOCK_TILE_ROWS) * 2 + kb % 2;
}

/* The prepared weight seen as rows of a tile row's k step (1 KiB of
 * values, 128 bytes of metadata), as the copy engine reads it: the first
 * of the BK_SP24_BLOCK_TILE_ROWS rows of k step ks of the 128-row block at
 * row m0. */
BK_SP24_FN int64_t bk_sp24_step_row(int64_t m0, int64_t ks, int64_t kbs)
{
    return (m0 / (16 * BK_SP24_BLOCK_TILE_ROWS) * (kbs / 2) + ks) * BK_SP24_BLOCK_TILE_ROWS;
}

/* Byte offset, within a tile row's 1 KiB of values of a k step, of row rl
 * (0..15), kept value cc (0..31: tile kb % 2 holds 16 kb % 2 .. + 15):
 * core matrices BK_SP24_CORE_K_BYTES apart along k, BK_SP24_CORE_M_BYTES
 * along m (the Hopper kernels' descriptors). */
#define BK_SP24_CORE_K_BYTES 128
#define BK_SP24_CORE_M_BYTES 512
BK_SP24_FN uint32_t bk_sp24_unit_offset(uint32_t rl, uint32_t cc)
{
    return ((rl / 8) * (BK_SP24_CORE_M_BYTES / BK_SP24_CORE_K_BYTES) + cc / 8) *
               BK_SP24_CORE_K_BYTES +
           (rl % 8) * 16 + (cc % 8) * 2;
}

/* The 16-byte row that lane gives ldmatrix.x4 for the A fragment of
 * mma.sp.m16n8k32 (PTX ISA 9.7.14.6.2.2) of tile kk (0, 1) of a unit:
 * register q of a lane (g = lane / 4, t = lane % 4) holds the two kept
 * values of row g + 8 (q % 2), 4-column group t + 4 (q / 2), which is
 * matrix q's row g, values 2 t and 2 t + 1, where matrix q is the core
 * matrix of rows 8 (q % 2) .. and kept values 16 kk + 8 (q / 2) ..; lane
 * supplies row lane % 8 of matrix lane / 8. */
BK_SP24_FN uint32_t bk_sp24_frag_row(uint32_t lane, uint32_t kk)
{
    const uint32_t q = lane / 8;
    return bk_sp24_unit_offset(8 * (q % 2) + lane % 8, 16 * kk + 8 * (q / 2));
}

/* Element (2-byte units) of the first kept value of (row r, group g) in
 * the values region; the second follows it (a unit's 1 KiB is
 * BK_SP24_TILE_BYTES elements). */
BK_SP24_FN uint64_t bk_sp24_value_index(int64_t r, int64_t g, int64_t kbs)
{
    const int64_t kb = g / 8, unit = bk_sp24_tile_slot(r / 16, kb, kbs) / 2;
    const uint32_t kept = (uint32_t)(16 * (kb % 2) + 2 * (g % 8));
    const uint32_t rl = (uint32_t)(r % 16);
    return (uint64_t)(unit * BK_SP24_TILE_BYTES + bk_sp24_unit_offset(rl, kept) / 2);
}

/* Byte offset, within the metadata region, of the word holding (r, g),
 * and the shift of its nibble in that word. */
BK_SP24_FN uint64_t bk_sp24_meta_word(int64_t r, int64_t g, int64_t kbs, uint32_t *shift)
{
    const int64_t rl = r % 16, c = g % 8;
    *shift = (uint32_t)(16 * (rl / 8) + 4 * (c % 4));
    const int64_t tile = bk_sp24_tile_slot(r / 16, g / 8, kbs);
    return (uint64_t)(tile * BK_SP24_META_BYTES + ((rl % 8) * 2 + c / 4) * 4);
}

/* Word of a tile's metadata that lane reads in the kernel: lanes 4 g and
 * 4 g + 1 their own; lanes 4 g + 2 and 4 g + 3 (unused with selector 0)
 * repeat them, so the load is one conflict-free access. */
BK_SP24_FN uint32_t bk_sp24_meta_lane_word(uint32_t lane)
{
    return (lane >> 2) * 2 + (lane & 1);
}

/* The tensor-core kernels keep a [rows][64] tile of X (2-byte elements,
 * 128-byte rows) in shared memory with its 16-byte chunks swizzled, so
 * that ldmatrix of 8 rows at one chunk is free of bank conflicts: byte
 * offset of chunk c (0..7) of row r. */
BK_SP24_FN uint32_t bk_sp24_x_chunk(uint32_t r, uint32_t c)
{
    return r * 128 + ((c ^ (r & 7)) << 4);
}

/* ---- Parameter blocks ----------------------------------------------------- */
/* Conversions: one thread per metadata element (two groups, 8 columns).
 * Strides in elements. The values of BkSparse24Conversion and
 * BkSparse24Status the kernels need (bk_gemm.h; the launcher checks them). */
#define BK_SP24_CONVERT_BLOCK 256
#define BK_SP24_CONVERSION_STRICT 0u
#define BK_SP24_STATUS_TOO_MANY_NONZEROS 1u
#define BK_SP24_STATUS_BAD_METADATA 2u
struct bk_sp24_convert_args {
    uint64_t dense, values, metadata, report;
    int64_t dense_rs, dense_cs;
    int64_t values_rs, values_cs;
    int64_t meta_rs, meta_cs;
    int64_t m;
    int64_t groups;                 /* per row: K / 4 */
    uint32_t conversion;            /* BkSparse24Conversion */
    uint32_t unused;
};

/* Prepare: one thread per (tile, lane) for F16/BF16, per metadata element
 * for F32. */
struct bk_sp24_prepare_args {
    uint64_t values, metadata, prepared;
    int64_t values_rs, values_cs;
    int64_t meta_rs, meta_cs;
    int64_t m, k;
    int64_t mts, kbs;               /* padded tiles: rows / 16, columns / 32 */
    uint64_t meta_offset;           /* bytes from prepared to its metadata */
};

/* The tensor-core kernels' CTA tilings, X(BM, BN, WM, WN, STAGES, TAG): a
 * BM (m) x BN (n) tile of Y, WM x WN warps, STAGES-deep pipeline of 64-wide
 * k steps, TAG ending the name of a second depth of one tile; its dynamic
 * shared memory in bytes (X tile, W value tiles, W metadata tiles per
 * stage). 128 x 128: 75 KiB, within the 99 KiB of sm_86/sm_89. 64 x 32:
 * for small N, more CTAs along m; 64 x 16 and 32 x 16: for N <= 16
 * (decode), where the weight is read once; 32 x 16 _deep (52 KiB) for
 * decode where an SM holds about two CTAs, which then need more of the
 * weight in flight each. */
#define BK_SP24_MMA_TILINGS(X) \
    X(128, 128, 2, 4, 3, )     \
    X(64, 32, 4, 1, 4, )       \
    X(64, 16, 4, 1, 6, )       \
    X(32, 16, 2, 1, 6, )       \
    X(32, 16, 2, 1, 12, _deep)
#define BK_SP24_MMA_SMEM(BM, BN, STAGES) \
    ((STAGES) * ((BN) * 128 + ((BM) / 16) * 2 * (BK_SP24_TILE_BYTES + BK_SP24_META_BYTES)))

/* The general (CUDA-core) kernels: a 64 x 64 tile of Y per CTA of 256
 * threads, 32-wide k steps. */
#define BK_SP24_GENERAL_BM 64
#define BK_SP24_GENERAL_BN 64
#define BK_SP24_GENERAL_THREADS 256

/* Sparse GEMM: Y[b, n, m] = act(alpha X[b, n, :] . W[m, :] + beta C + bias[m]). */
#define BK_SP24_READ_C 1u           /* C is read (there is one and beta != 0) */
#define BK_SP24_BIAS 2u
#define BK_SP24_Y_N_FAST 4u         /* Y's n stride is 1: store along n */
#define BK_SP24_Y_MAP 8u            /* Hopper: Y through map_y (no C, bias or activation) */
struct bk_sp24_gemm_args {
    uint64_t w, x, c, y, bias;
    uint64_t meta_offset;           /* bytes from w to its metadata */
    int64_t m, n, k, batch;
    int64_t kbs;                    /* F16/BF16: padded K / 32 */
    int64_t x_rs, x_cs, x_bs;
    int64_t c_rs, c_cs, c_bs;
    int64_t y_rs, y_cs, y_bs;
    float alpha, beta;
    uint32_t flags;                 /* BK_SP24_READ_C, ... */
    uint32_t activation;            /* BkGemmActivation */
    uint32_t m_tiles, n_tiles;      /* CTA tiles along m and n */
    /* The Hopper kernels' schedule (below): cluster tiles taken whole, and
     * the pieces each of the rest is split into (0: none). */
    uint32_t dp_tiles, sk_split;
    uint64_t workspace;             /* stream-K: flags, then partial tiles */
    uint64_t sk_tag;                /* stream-K: this launch's flag tag (never 0) */
};

/* The Hopper kernels (sm_90a, module sparse24_wgmma): a persistent CTA
 * computes 128 (m) x BN (n) tiles of Y with wgmma.sp, X and the prepared W brought
 * by the bulk tensor copy engine into a STAGES-deep ring of 64-wide k
 * steps, X[BN][64] 128-byte swizzled, then W's 8 tile rows of 2 value
 * tiles (1 KiB each), then their metadata (128 bytes each). A producer
 * warpgroup and two consumer warpgroups (m rows 0-63, 64-127). Tilings
 * X(BN, STAGES); the shared memory includes 1 KiB of slack to align the
 * ring and a full and an empty barrier per stage. */
#define BK_SP24_WG_BM 128
#define BK_SP24_WG_THREADS 384
#define BK_SP24_WG_TILINGS(X) \
    X(256, 4)                 \
    X(128, 7)
#define BK_SP24_WG_X_BYTES(BN) ((BN) * 128)
#define BK_SP24_WG_W_BYTES ((BK_SP24_WG_BM / 16) * 2 * BK_SP24_TILE_BYTES)
#define BK_SP24_WG_E_BYTES ((BK_SP24_WG_BM / 16) * 2 * BK_SP24_META_BYTES)
#define BK_SP24_WG_STAGE_BYTES(BN) (BK_SP24_WG_X_BYTES(BN) + BK_SP24_WG_W_BYTES + BK_SP24_WG_E_BYTES)
/* The epilogue's own staging buffer (the producer fills the ring for the
 * next tile meanwhile): PASS_N rows of n by the tile's m, f32, padded. */
#define BK_SP24_WG_PASS_N 64
#define BK_SP24_WG_OUT_PITCH (BK_SP24_WG_BM + 4)
#define BK_SP24_WG_STAGING_BYTES (BK_SP24_WG_PASS_N * BK_SP24_WG_OUT_PITCH * 4)
#define BK_SP24_WG_SMEM(BN, STAGES) \
    ((STAGES) * BK_SP24_WG_STAGE_BYTES(BN) + BK_SP24_WG_STAGING_BYTES + 1024 + 16 * (STAGES))

/* The Hopper decode kernels (sm_90a, module sparse24_wgmma) for N <= 16
 * rows of X, where the weight is read once and the time is the memory's:
 * a CTA computes 128 (m) x 16 (n) tiles of Y with mma.sp m16n8k32 from
 * stages (X[16][64] as the wgmma kernels' swizzled box, then 8 tile rows of
 * W's values and metadata by plain bulk copies) that the copy engine brings
 * into a ring deep enough to keep the memory busy (two CTAs fit an SM); one
 * producer warp and four consumer warps of two tile rows each. Either
 * stream-K (the _sk kernels: a grid of at most what the GPU holds at once
 * takes equal runs of the (tile, k step) units, partial tiles through the
 * workspace as the wgmma kernels' below) or K split over the S CTAs of a
 * cluster (grid x: m tiles times S), which add their partial tiles through
 * distributed shared memory in rank order: the same bits on every run
 * either way.
 * BK_SP24_DECODE_SPLITS(X) lists the S compiled. */
#define BK_SP24_DECODE_BN 16
#define BK_SP24_DECODE_THREADS 160
#define BK_SP24_DECODE_STAGES 9
#define BK_SP24_DECODE_STAGE_BYTES \
    (BK_SP24_WG_X_BYTES(BK_SP24_DECODE_BN) + BK_SP24_WG_W_BYTES + BK_SP24_WG_E_BYTES)
#define BK_SP24_DECODE_OUT_PITCH (BK_SP24_WG_BM + 4)
#define BK_SP24_DECODE_STAGING_BYTES (BK_SP24_DECODE_BN * BK_SP24_DECODE_OUT_PITCH * 4)
#define BK_SP24_DECODE_SMEM                                                  \
    (BK_SP24_DECODE_STAGES * BK_SP24_DECODE_STAGE_BYTES +                   \
     BK_SP24_DECODE_STAGING_BYTES + 1024 + 16 * BK_SP24_DECODE_STAGES)
#define BK_SP24_DECODE_SPLITS(X) X(1) X(2) X(3) X(4) X(8)

/* Its parameters: the GEMM's, and tensor maps made per run of X (rank 3:
 * [batch][N][K], boxes of 64 x BN, swizzled), of the prepared values (U64
 * [mts][kbs * 64], boxes of 128 x 8) and metadata (U64 [mts][kbs * 8],
 * boxes of 16 x 8), and where the run allows (BK_SP24_Y_MAP: Y F16 or BF16
 * with unit m stride, only alpha to apply) of Y ([batch][N][M], boxes of
 * 64 x BK_SP24_WG_Y_BOX_N, swizzled), which the epilogue then stores from
 * shared memory by the copy engine. */
#define BK_SP24_WG_Y_BOX_N 64

/* The Hopper kernels' schedule. A cluster tile is CL CTA tiles along m
 * (t in tile_coords' order); the C clusters take the first dp_tiles of the
 * T tiles whole, in turns (t = c, c + C, ...). Where few tiles are left
 * for the last round (r = T mod C, at most C / 2), it would leave most
 * clusters idle: then dp_tiles is T - r and each of the r tiles is split
 * along K into sk_split = s equal pieces (stream-K), piece j of tile i
 * cluster i s + j's, so that the last round takes 1 / s of a tile's time.
 * The pieces start at the same s k steps in every tile, so that clusters
 * at work together read the same slices of X and W, as in the whole rounds
 * (shares of a tile's k steps that drift from cluster to cluster ran
 * 14-30% slower on the H100's Llama shapes: DRAM-bound). Each consumer warp
 * of a piece other than a tile's first (its head) writes its accumulators
 * (in the order of its registers) to its CTA's slot in the workspace and
 * raises its flag; the same warp of the head's CTA waits for each flag in
 * the order of the pieces, adds the partials to its sums in that order
 * (the same bits on every run) and stores Y. Only a head waits, on pieces
 * that wait on nothing, and every cluster is resident (the grid is what
 * the device holds at once). Workspace: a 64-bit flag per consumer warp of
 * each CTA, tagged (split_sum_sync.cuh: raised to the launch's sk_tag, set
 * back to 0 by the head that read the partial, so the workspace may hold
 * anything before a run and is never cleared: a clearing kernel before
 * each run cost ~1.1 us, 4% of a decode on the H200), then a slot of BM x
 * BN floats per CTA. */
#define BK_SP24_SK_WARPS 8          /* consumer warps of a CTA */
#define BK_SP24_SK_FLAG_BYTES(ctas) \
    ((8u * (uint64_t)(ctas) * BK_SP24_SK_WARPS + 255u) / 256u * 256u)
#define BK_SP24_SK_SLOT_BYTES(bn) (4u * (uint64_t)BK_SP24_WG_BM * (bn))
#define BK_SP24_SK_WORKSPACE(ctas, bn) \
    (BK_SP24_SK_FLAG_BYTES(ctas) + (uint64_t)(ctas) * BK_SP24_SK_SLOT_BYTES(bn))
struct bk_sp24_wgmma_args {
    BK_TENSOR_MAP_FIELD(map_x);
    BK_TENSOR_MAP_FIELD(map_w);
    BK_TENSOR_MAP_FIELD(map_e);
    BK_TENSOR_MAP_FIELD(map_y);
    struct bk_sp24_gemm_args a;
};

#endif /* BK_SPARSE24_ARGS_H */
