/* SPDX-License-Identifier: Apache-2.0 */
/* The parameter block of the attention kernels (kernels/attention_*.cu,
 * nvcc), shared with their launcher (lib/cuda/cuda_attention.c, plain
 * C11). Addresses are device addresses; strides are in elements. */
#ifndef BK_ATTENTION_ARGS_H
#define BK_ATTENTION_ARGS_H

#include <stdint.h>

#include "tensor_map_args.h"

#define BK_ATTENTION_CAUSAL 0x1u
#define BK_ATTENTION_HAS_LSE 0x2u
/* The row sums' kernel zeroes dq_sum (the backward with float atomics). */
#define BK_ATTENTION_ZERO_DQ_SUM 0x4u
/* The tensor-core kernels load and store element by element (strides,
 * row starts or addresses that 16-byte copies cannot take). */
#define BK_ATTENTION_ELEMENTWISE 0x8u

/* The general kernels: one warp per query row (forward, dq) or key row
 * (dk and dv), BK_ATTENTION_GENERAL_WARPS rows per CTA. */
#define BK_ATTENTION_GENERAL_WARPS 4
#define BK_ATTENTION_GENERAL_THREADS (32 * BK_ATTENTION_GENERAL_WARPS)
#define BK_ATTENTION_SCATTER_THREADS 256
/* bk_attention_forward_choice: CHOICE_CTAS CTAs each summing its share of
 * the first CHOICE_ENTRIES (pair of query blocks, key block) entries into
 * a U32 pair (union, needed) of the workspace's choice area. The kernels
 * it chooses between: */
#define BK_ATTENTION_CHOICE_THREADS 1024
#define BK_ATTENTION_CHOICE_CTAS 32
#define BK_ATTENTION_CHOICE_ENTRIES (1 << 20)
/* (SOLO names the solo kernel's kind, which the choice no longer returns
 * since a62ba0e: solo is forced only.) */
enum { BK_ATTENTION_CHOSE_DEEP, BK_ATTENTION_CHOSE_SOLO, BK_ATTENTION_CHOSE_NARROW };
/* The backward's row sums: rows per warp of the general kernels' CTAs. */
#define BK_ATTENTION_ROWSUM_ROWS 8

/* Sequences of their own lengths (bk_attention_args.seq_form). */
#define BK_ATTENTION_SEQ_NONE 0u
#define BK_ATTENTION_SEQ_PADDED 1u
#define BK_ATTENTION_SEQ_PACKED 2u
/* PACKED: the kernel that makes NaN the rows the host makes NaN (those a
 * bad sequence claims or none does), a query row and a key row a thread;
 * it returns at once where every sequence is good. */
#define BK_ATTENTION_FIXUP_THREADS 256
/* The backward (the fix-up kernel writes dq, dk and dv, not y and lse). */
#define BK_ATTENTION_BACKWARD 0x10u

/* The tensor-core kernels: 64 query rows (forward, dq) or key rows (dk,
 * dv) per CTA, 16 per warp, against tiles of 64 keys (or queries). */
#define BK_ATTENTION_MMA_TILE 64
#define BK_ATTENTION_MMA_THREADS 128
/* Head sizes run at a compiled width W, columns D..W - 1 zero in shared
 * memory: the smallest of 32, 64, 96, 128, 160, 192, 256 that holds D (0:
 * none). */
#define BK_ATTENTION_MMA_WIDTH(d)                                                             \
    ((d) < 1 ? 0 : (d) <= 192 ? ((d) + 31) / 32 * 32 : (d) <= 256 ? 256 : 0)
/* A tile of 64 rows of width W in shared memory: rows of W * 2 bytes with
 * their 16-byte chunks swizzled where W is a multiple of 64, else rows of
 * W * 2 + 16 bytes (kernels/attention_mma.cuh, Tile). */
#define BK_ATTENTION_MMA_ROW_BYTES(w) ((w) % 64 == 0 ? (w) * 2 : (w) * 2 + 16)
#define BK_ATTENTION_MMA_TILE_BYTES(w) (BK_ATTENTION_MMA_TILE * BK_ATTENTION_MMA_ROW_BYTES(w))
/* Widths past 128 run in modules of their own (attention_mma_wide,
 * attention_mma_backward_wide), so that the builds overlap; the dk/dv
 * kernel there has two warps per 16 keys, each owning half the columns
 * of dK and dV. */
#define BK_ATTENTION_MMA_WIDE(dk, dv) ((dk) > 128 || (dv) > 128)
#define BK_ATTENTION_MMA_DKV_SPLIT(dk, dv) (BK_ATTENTION_MMA_WIDE(dk, dv) ? 2 : 1)
/* Shared memory: the forward holds Q and two stages of K and V; dq Q, dY
 * and two stages of K and V; dk/dv K, V and two stages of Q, dY and their
 * lse and rowsum. */
#define BK_ATTENTION_MMA_FORWARD_BYTES(dk, dv)                                                \
    (3 * BK_ATTENTION_MMA_TILE_BYTES(dk) + 2 * BK_ATTENTION_MMA_TILE_BYTES(dv))
#define BK_ATTENTION_MMA_DQ_BYTES(dk, dv)                                                     \
    (3 * (BK_ATTENTION_MMA_TILE_BYTES(dk) + BK_ATTENTION_MMA_TILE_BYTES(dv)))
#define BK_ATTENTION_MMA_DKV_BYTES(dk, dv)                                                    \
    (BK_ATTENTION_MMA_DQ_BYTES(dk, dv) + 4 * 4 * BK_ATTENTION_MMA_TILE)

/* The F32 kernels on TF32 tensor cores (kernels/attention_tf32*.cu): the
 * same tiles, widths and walks, F32 in shared memory, rows of W floats
 * and 16 bytes (W + 4 floats: 16-byte chunks an odd number a row for
 * ldmatrix, and words 4 apart mod 32 banks for the column loads of P B).
 * The forward holds Q and one K and one V tile (K's next load runs under
 * the softmax and P V, V's under the next Q K^T); dq Q, dY and two stages
 * of K and V; dk/dv K, V and two stages of Q, dY and their lse and rowsum.
 * Past width 128 the backward's walked operands have one stage, of
 * WALK_ROWS rows (32 at width 256, where four 64-row tiles would not
 * fit), and dk/dv two warps per 16 keys
 * (kernels/attention_tf32_backward_wide.cu). */
#define BK_ATTENTION_TF32_ROW_BYTES(w) ((w) * 4 + 16)
#define BK_ATTENTION_TF32_TILE_BYTES(w) (BK_ATTENTION_MMA_TILE * BK_ATTENTION_TF32_ROW_BYTES(w))
#define BK_ATTENTION_TF32_FORWARD_BYTES(dk, dv)                                               \
    (2 * BK_ATTENTION_TF32_TILE_BYTES(dk) + BK_ATTENTION_TF32_TILE_BYTES(dv))
/* The forward past width 128 (one CTA an SM): 8 warps in two halves,
 * each taking 32 keys of every tile (kernels/attention_tf32.cu). */
#define BK_ATTENTION_TF32_FORWARD_HALVES(dk, dv) (BK_ATTENTION_MMA_WIDE(dk, dv) ? 2 : 1)
#define BK_ATTENTION_TF32_STAGES(dk, dv) (BK_ATTENTION_MMA_WIDE(dk, dv) ? 1 : 2)
#define BK_ATTENTION_TF32_WALK_ROWS(dk, dv) ((dk) > 192 || (dv) > 192 ? 32 : 64)
#define BK_ATTENTION_TF32_DQ_BYTES(dk, dv)                                                    \
    ((BK_ATTENTION_MMA_TILE +                                                                 \
      BK_ATTENTION_TF32_STAGES(dk, dv) * BK_ATTENTION_TF32_WALK_ROWS(dk, dv)) *               \
     (BK_ATTENTION_TF32_ROW_BYTES(dk) + BK_ATTENTION_TF32_ROW_BYTES(dv)))
#define BK_ATTENTION_TF32_DKV_BYTES(dk, dv)                                                   \
    (BK_ATTENTION_TF32_DQ_BYTES(dk, dv) +                                                     \
     BK_ATTENTION_TF32_STAGES(dk, dv) * 2 * 4 * BK_ATTENTION_MMA_TILE)
#define BK_ATTENTION_TF32_DKV_SPLIT(dk, dv) BK_ATTENTION_MMA_DKV_SPLIT(dk, dv)
/* The F32 backward where its shared memory leaves one CTA an SM (widths
 * 96 and up): 8 warps in two halves, each taking half of every tile's
 * queries (dk/dv up to 128; past it dk/dv's pairs split by columns) or
 * keys (dq), summed at the end, so that two warps a scheduler hide the
 * products' latency. */
#define BK_ATTENTION_TF32_DKV_HALVES(dk, dv)                                                  \
    (!BK_ATTENTION_MMA_WIDE(dk, dv) && ((dk) > 64 || (dv) > 64) ? 2 : 1)
#define BK_ATTENTION_TF32_DQ_HALVES(dk, dv) ((dk) > 64 || (dv) > 64 ? 2 : 1)

/* A [batch, heads, rows, cols] operand. */
struct bk_attention_view {
    uint64_t base;
    int64_t s[4];
};

struct bk_attention_args {
    struct bk_attention_view q, k, v, y, dy, dq, dk, dv;
    struct bk_attention_view mask;        /* [Bp, Hp, nbq, nbk]; base 0: every block */
    struct bk_attention_view counts;      /* LIST: [Bp, Hp, nbq] (s[3] unused) */
    struct bk_attention_view indices;     /* LIST: [Bp, Hp, nbq, capacity] */
    uint64_t lse;                         /* [B, H, Lq], lse_s */
    int64_t lse_s[3];
    uint64_t bad;                         /* LIST: U8 [Bp * Hp], nonzero: outputs are NaN */
    uint64_t rowsum;                      /* backward: [B, H, Lq] contiguous, lse's type */
    /* The Hopper backward with dq in the dk/dv kernel (D = 128; in a fixed
     * order: DENSE, not causal; with float atomics: any pattern): F32 sums
     * of dq, a 16 KiB chunk per (batch, head, 64-query tile, 64-column
     * half), and a U32 counter per chunk (fixed order); the row sums'
     * kernel zeroes the counters, or with atomics the sums; 0 elsewhere. */
    uint64_t dq_sum, dq_count;
    /* The Hopper forward's choice between kernels launched in turn
     * (narrow, deep): the workspace's choice area, where
     * bk_attention_forward_choice leaves a U32 pair (U, N) per CTA of it;
     * each kernel sums them and returns at once where it is not the one
     * chosen. 0: no choice, the kernel runs. */
    uint64_t choice;
    int64_t batch, heads, kv_heads, lq, lk, d, dv_cols;
    int64_t block_q, block_k, nbq, nbk;   /* DENSE: one block of Lq x Lk */
    int64_t pattern_batch, pattern_heads, capacity;
    double scale;
    uint32_t flags;
    /* The Hopper forward and dq: 0, a CTA per tile of
     * BK_ATTENTION_WGMMA_ROWS query rows (x: the tile, y: head, z: batch);
     * else persistent, a 1-D grid whose CTA i takes tiles i, i + gridDim.x,
     * ... of the `items` in all (the tile fastest, then head, then batch). */
    uint32_t items;
    /* Sequences of their own lengths (BkAttentionSequencesInfo), grid z
     * over them (kernels/attention_common.cuh, sequence()): seq_form
     * (BK_ATTENTION_SEQ_*); the I32 lengths (PADDED [B], 0: the whole
     * axis) or offsets (PACKED [S + 1]) of queries and keys at seq_q and
     * seq_k, element strides seq_s; seq_count (S; PADDED: B) and the
     * PACKED bounds max_lq, max_lk. */
    uint32_t seq_form;
    uint64_t seq_q, seq_k;
    int64_t seq_s[2];
    int64_t seq_count, max_lq, max_lk;
};

/* The Hopper kernels (kernels/attention_wgmma*.cu, sm_90a): tensor maps of q,
 * k, v and dy (CUtensorMap, 128 bytes each, 64-byte aligned in the parameter
 * space) for the bulk tensor copy engine, then the usual block. A CTA is
 * one producer warpgroup and two consumer warpgroups of 64 query rows. */
#define BK_ATTENTION_WGMMA_THREADS 384
#define BK_ATTENTION_WGMMA_ROWS 128
/* Its shared memory, for head size D (64 or 128), nc consumers of 64 rows
 * and a ring of `stages`: nc Q tiles, the ring of K and V tiles of 128 keys,
 * the word per consumer thread (512 bytes each consumer), the tile records
 * (16 bytes per stage, at least two), the barriers (q_full, q_empty; k_full, v_full,
 * k_empty, v_empty per stage) and 1 KiB to align the swizzled tiles. The
 * plain kernels: two consumers, two stages at D = 128, else three. A ring
 * of one stage keeps two records: its producer reads tile n - 1's, for
 * its V, after writing tile n's. */
#define BK_ATTENTION_WGMMA_STAGES(d) ((d) == 128 ? 2 : 3)
#define BK_ATTENTION_WGMMA_RECORD_SLOTS(stages) ((stages) < 2 ? 2 : (stages))
#define BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(d, keys, nc, stages)                           \
    ((nc) * 64 * (d) * 2 + 2 * (stages) * (keys) * (d) * 2 + (nc) * 512 +                    \
     16 * BK_ATTENTION_WGMMA_RECORD_SLOTS(stages) + 8 * (2 + 4 * (stages)) + 1024)
#define BK_ATTENTION_WGMMA_FORWARD_BYTES(d, nc, stages)                                      \
    BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(d, 128, nc, stages)
#define BK_ATTENTION_WGMMA_SHARED_BYTES(d)                                                   \
    BK_ATTENTION_WGMMA_FORWARD_BYTES(d, 2, BK_ATTENTION_WGMMA_STAGES(d))
/* The forward's kernels for query blocks of 64 rows whose neighbours'
 * patterns differ (the two consumers of a plain CTA would skip each
 * other's key tiles): at D = 64 the solo kernel, one consumer warpgroup of
 * 64 rows, two CTAs an SM (108192 bytes each); at D = 128 the deep kernel,
 * the plain one with a third stage (231584 bytes, of the 232448 a CTA may
 * have), whose producer runs further ahead of the skips. The solo kernel
 * also takes D = 128 (faster than deep where neighbouring query blocks
 * share few key blocks, which the pattern tells at run time), with a ring
 * of one stage (83536 bytes) so that two CTAs fit an SM (forced only since
 * a62ba0e); and so does the narrow kernel, solo with tiles of 64 keys
 * and two stages (83568 bytes): the per-tile costs over half the keys, but
 * no half-empty tile at the end of a walk with an odd number of slots. The
 * pattern chooses between deep and narrow (doc/design/attention.md, "How
 * the forward chooses its kernel"). */
#define BK_ATTENTION_WGMMA_SOLO_THREADS 256
#define BK_ATTENTION_WGMMA_SOLO_ROWS 64
#define BK_ATTENTION_WGMMA_SOLO_STAGES(d) ((d) == 128 ? 1 : 3)
#define BK_ATTENTION_WGMMA_SOLO_SHARED_BYTES(d)                                              \
    BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(d, 128, 1, BK_ATTENTION_WGMMA_SOLO_STAGES(d))
#define BK_ATTENTION_WGMMA_NARROW_KEYS 64
#define BK_ATTENTION_WGMMA_NARROW_STAGES 2
#define BK_ATTENTION_WGMMA_NARROW_SHARED_BYTES                                               \
    BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(128, BK_ATTENTION_WGMMA_NARROW_KEYS, 1,             \
                                          BK_ATTENTION_WGMMA_NARROW_STAGES)
#define BK_ATTENTION_WGMMA_DEEP_STAGES 3
#define BK_ATTENTION_WGMMA_DEEP_SHARED_BYTES(d)                                              \
    BK_ATTENTION_WGMMA_FORWARD_BYTES(d, 2, BK_ATTENTION_WGMMA_DEEP_STAGES)
/* The forward's kernel for DENSE patterns at D = 128: the plain one with
 * tiles of 192 keys (three slots; Q left in shared memory for the scores'
 * registers): a tile's fixed costs (turns, waits, row maxima, rescaling O)
 * over 1.5 times the keys. 231536 bytes, of the 232448 a CTA may have. */
#define BK_ATTENTION_WGMMA_WIDE_KEYS 192
#define BK_ATTENTION_WGMMA_WIDE_SHARED_BYTES(d)                                              \
    BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(d, BK_ATTENTION_WGMMA_WIDE_KEYS, 2,                 \
                                          BK_ATTENTION_WGMMA_STAGES(d))
/* The forward's kernel at widths 192 and 256, every pattern: the plain one
 * with tiles of one 64-key slot (O takes 96 or 128 registers of a consumer,
 * Q stays in shared memory), three stages at 192 and two at 256 (about
 * 199 KiB either way). */
#define BK_ATTENTION_WGMMA_TALL_KEYS 64
#define BK_ATTENTION_WGMMA_TALL_STAGES(d) ((d) == 256 ? 2 : 3)
#define BK_ATTENTION_WGMMA_TALL_SHARED_BYTES(d)                                              \
    BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(d, BK_ATTENTION_WGMMA_TALL_KEYS, 2,                 \
                                          BK_ATTENTION_WGMMA_TALL_STAGES(d))
/* The forward's kernel for DENSE patterns at D = 64: three consumer
 * warpgroups of 64 rows (tiles of 192 rows), so that two softmaxes run
 * under each consumer's GEMMs (at D = 64 a tile's exponentials take the
 * special function unit as long as its GEMMs take the tensor cores). */
#define BK_ATTENTION_WGMMA_TRIO_THREADS 512
#define BK_ATTENTION_WGMMA_TRIO_ROWS 192
#define BK_ATTENTION_WGMMA_TRIO_SHARED_BYTES(d)                                              \
    BK_ATTENTION_WGMMA_FORWARD_BYTES(d, 3, BK_ATTENTION_WGMMA_STAGES(d))
/* The Hopper backward (kernels/attention_wgmma_backward.cu), same threads: dq
 * (128 query rows per CTA) takes Q and dY of both consumers and the
 * forward's ring of K and V tiles; dk/dv (128 keys per CTA) takes K and V
 * of both consumers and a ring of Q and dY tiles of 64 queries with their
 * lse and rowsum (512 bytes); each with its records, barriers and 1 KiB
 * to align the swizzled tiles. */
#define BK_ATTENTION_WGMMA_DQ_SHARED_BYTES(d)                                                \
    (4 * 64 * (d) * 2 + 2 * BK_ATTENTION_WGMMA_STAGES(d) * 128 * (d) * 2 +                   \
     16 * BK_ATTENTION_WGMMA_STAGES(d) + 8 * (2 + 4 * BK_ATTENTION_WGMMA_STAGES(d)) + 1024)
#define BK_ATTENTION_WGMMA_DKV_STAGES 4
#define BK_ATTENTION_WGMMA_DKV_SHARED_BYTES(d)                                               \
    (4 * 64 * (d) * 2 + BK_ATTENTION_WGMMA_DKV_STAGES * (2 * 64 * (d) * 2 + 512 + 16) +       \
     8 * (1 + 2 * BK_ATTENTION_WGMMA_DKV_STAGES) + 1024)
/* The Hopper backward at widths 192 and 256 (the pair kernels of
 * kernels/attention_wgmma_backward_pair.cuh), same threads: a CTA owns 64
 * query rows (dq) or 64 keys (dk/dv), its two consumers sharing them and
 * handing P (and dq's dS) to each other through two 64 x 64 buffers each.
 * dq: Q and dY, a ring of K and V tiles of 64 keys, P and dS, records and
 * barriers (the forward's ring). dk/dv: K and V, a ring of Q and dY tiles
 * of 64 queries with lse and rowsum, P, records and barriers. Rings of two
 * stages at 256, three at 192 (about 225 and 210 KiB at 256). */
#define BK_ATTENTION_WGMMA_PAIR_ROWS 64
#define BK_ATTENTION_WGMMA_PAIR_STAGES(d) ((d) == 256 ? 2 : 3)
#define BK_ATTENTION_WGMMA_PAIR_DQ_SHARED_BYTES(d)                                           \
    (2 * 64 * (d) * 2 + 2 * BK_ATTENTION_WGMMA_PAIR_STAGES(d) * 64 * (d) * 2 +                \
     4 * 64 * 64 * 2 + 16 * BK_ATTENTION_WGMMA_RECORD_SLOTS(BK_ATTENTION_WGMMA_PAIR_STAGES(d)) + \
     8 * (2 + 4 * BK_ATTENTION_WGMMA_PAIR_STAGES(d)) + 1024)
#define BK_ATTENTION_WGMMA_PAIR_DKV_SHARED_BYTES(d)                                          \
    (2 * 64 * (d) * 2 + BK_ATTENTION_WGMMA_PAIR_STAGES(d) * (2 * 64 * (d) * 2 + 512 + 16) +  \
     2 * 64 * 64 * 2 + 8 * (1 + 2 * BK_ATTENTION_WGMMA_PAIR_STAGES(d)) + 1024)
/* The dk/dv kernel that also computes dq (DENSE patterns, not causal, D =
 * 128): a ring of three stages, then the tile's dS (64 x 128, two buffers)
 * and each consumer's F32 half of dq (64 x 64) for the copy engine, from a
 * 1024-byte boundary. */
#define BK_ATTENTION_WGMMA_DKVQ_STAGES 3
/* With float atomics, dQ from the F32 sums: a CTA per (64-query tile,
 * head, batch), a thread per fragment column of each 64-column half. */
#define BK_ATTENTION_DQ_FROM_SUM_THREADS 256
#define BK_ATTENTION_WGMMA_DKVQ_SHARED_BYTES(d)                                              \
    (((4 * 64 * (d) * 2 + BK_ATTENTION_WGMMA_DKVQ_STAGES * (2 * 64 * (d) * 2 + 512 + 16) +    \
       8 * (1 + 2 * BK_ATTENTION_WGMMA_DKVQ_STAGES) + 1023) / 1024 * 1024) +                  \
     2 * 64 * 128 * 2 + 2 * 64 * 64 * 4 + 1024)
struct bk_attention_tma_args {
    BK_TENSOR_MAP_FIELD(map_q);
    BK_TENSOR_MAP_FIELD(map_k);
    BK_TENSOR_MAP_FIELD(map_v);
    BK_TENSOR_MAP_FIELD(map_dy); /* backward only */
    struct bk_attention_args a;
};

/* Attention over a KV cache for few query rows (kernels/attention_decode.cu).
 * The query rows of the heads that share a kv head are packed into the
 * rows of one tile (packed row R = head-in-group * Lq + query), so that K
 * and V are read once for all of them; a unit is 16 RG packed rows of one
 * kv head (b, kvh) and its Lk keys, in steps of DECODE_KEYS(D) keys (8 KiB
 * of K: 32 keys at D = 128, 64 at D = 64). The
 * steps of all units, one after another, are shared out evenly among key
 * streams (stream-K: every stream walks the same number of steps, give
 * or take one, across unit boundaries where it must); a stream is RG warps (a warp takes 16
 * rows), with a ring of STAGES stages of K and V tiles in shared memory,
 * and leaves a part of each unit it walks, divided by its own sum, with
 * its lse in base 2; a second kernel combines each row's parts in a fixed
 * order. A CTA has WARPS warps: 4, or 8 where a stream has 4 or more. */
#define BK_ATTENTION_DECODE_MAX_LQ 16
/* Tuning switches (a build of its own, CPPFLAGS and NVCCFLAGS alike): the
 * bytes of K a step (DECODE_KEYS keys) and the warps of a CTA whose
 * streams are one warp each. */
#ifndef BK_ATTENTION_DECODE_STEP_K_BYTES
#define BK_ATTENTION_DECODE_STEP_K_BYTES 8192
#endif
#ifndef BK_ATTENTION_DECODE_SOLO_WARPS
#define BK_ATTENTION_DECODE_SOLO_WARPS 4
#endif
#define BK_ATTENTION_DECODE_KEYS(d) (BK_ATTENTION_DECODE_STEP_K_BYTES / 2 / (d))
#define BK_ATTENTION_DECODE_MAX_STAGES 8
#define BK_ATTENTION_DECODE_WARPS(rg)                                                           \
    ((rg) >= 4 ? 8 : (rg) == 1 ? BK_ATTENTION_DECODE_SOLO_WARPS : 4)
#define BK_ATTENTION_DECODE_STREAMS(rg) (BK_ATTENTION_DECODE_WARPS(rg) / (rg))
#define BK_ATTENTION_DECODE_STAGE_BYTES(d) (2 * BK_ATTENTION_DECODE_KEYS(d) * (d) * 2)
/* The ring's stages for a CTA's shared-memory budget `ring` (bytes),
 * shared by `streams` key streams: on sm_90 192 KiB, three stages a
 * one-warp stream at D = 128, so that two are in flight while one is used
 * (128 KiB an SM: at 33 GB/s an SM that covers 4 us of latency); on sm_80
 * 128 KiB, two. */
#define BK_ATTENTION_DECODE_RING_SM90 (192 * 1024)
#define BK_ATTENTION_DECODE_RING_SM80 (128 * 1024)
#define BK_ATTENTION_DECODE_STAGES_FIT(d, streams, ring)                                        \
    ((ring) / ((streams) * BK_ATTENTION_DECODE_STAGE_BYTES(d)))
#define BK_ATTENTION_DECODE_STAGES(d, streams, ring)                                            \
    (BK_ATTENTION_DECODE_STAGES_FIT(d, streams, ring) < BK_ATTENTION_DECODE_MAX_STAGES          \
         ? BK_ATTENTION_DECODE_STAGES_FIT(d, streams, ring)                                     \
         : BK_ATTENTION_DECODE_MAX_STAGES)
#define BK_ATTENTION_DECODE_SHARED_BYTES(d, streams, stages)                                    \
    ((streams) * (stages) * BK_ATTENTION_DECODE_STAGE_BYTES(d))
/* Where every stream walks whole units and writes y itself (no parts, no
 * combining kernel), the narrow kernels' CTAs hold two streams: a stream
 * a unit leaves too few CTAs at four. */
#define BK_ATTENTION_DECODE_WHOLE_STREAMS 2
/* The combining kernel: combine_warps warps a query row (1, 2 or 4, for
 * up to 32, 64 or more part slots a unit). */
#define BK_ATTENTION_DECODE_COMBINE_THREADS 128

struct bk_attention_decode_args {
    struct bk_attention_args a;
    /* The parts: F32 o [units, max_parts, 16 RG, Dv] and lse [units,
     * max_parts, 16 RG] (base 2; -inf: no key seen); part slot k of unit u
     * is stream first(u) + k, first(u) the stream that walks step
     * u unit_steps. */
    uint64_t part_o, part_lse;
    uint32_t group;        /* H / Hkv */
    uint32_t rows;         /* packed rows of a kv head: group * Lq */
    uint32_t row_groups;   /* units of a kv head: ceil(rows / (16 RG)) */
    uint32_t max_parts;    /* part slots a unit */
    uint32_t combine_warps; /* the combining kernel's warps a row */
    uint32_t page_shift;   /* log2 page_size where it is a power of two, else 0 */
    int64_t unit_steps;    /* steps of a unit: ceil(Lk / DECODE_KEYS(D)) */
    int64_t streams;       /* streams W that walk: stream i the steps
                            * [i S / W, (i + 1) S / W) of S = units
                            * unit_steps (a step more or less apiece) */
    int64_t units;         /* B * Hkv * row_groups */
    /* Sequences of their own lengths (PADDED): sequence b has the I32 at
     * lengths_q + 4 b lengths_s[0] queries (0: Lq) and at lengths_k + 4 b
     * lengths_s[1] keys (0: Lk); a length out of range makes its outputs
     * NaN. */
    uint64_t lengths_q, lengths_k;
    int64_t lengths_s[2];
    /* A paged cache: key j of sequence b is row j % page_size of page
     * block_table[b, j / page_size] (I32, strides table_s), k and v's
     * views [pages, Hkv, page_size, D]; a page outside 0..pages - 1 among
     * those a sequence uses makes its outputs NaN. 0: K and V are [B, Hkv,
     * Lk, D]. */
    uint64_t block_table;
    int64_t table_s[2], page_size, pages;
    /* The mma.sync split kernel: the first steps of a stream's share it
     * brings into L2 before the wait for the grid before (a contiguous
     * cache of whole rows; 0: none). Last, so that the fields before keep
     * their offsets (the Hopper kernels' registers depend on them). */
    uint32_t prefetch_steps;
};

/* The Hopper decode kernel (kernels/attention_decode_wgmma.cu): the same
 * units, parts and stream-K split, but a CTA is one key stream of NC
 * consumer warpgroups (64 packed rows each, wgmma) and a producer warp
 * whose bulk tensor copies bring steps of KEYS keys (64 or 128; K and V
 * maps of 64 x 64 boxes, 128-byte swizzled, as the forward's) into a ring
 * of the stages 192 KiB hold, or 96 KiB where CTAS = 2 CTAs share an SM
 * (one consumer each: one's softmax runs under the other's products). */
#define BK_ATTENTION_DECODE_WG_RING(ctas) (192 * 1024 / (ctas))
#define BK_ATTENTION_DECODE_WG_STAGE_BYTES(d, keys) (2 * (keys) * (d) * 2)
#define BK_ATTENTION_DECODE_WG_STAGES(d, keys, ctas)                                            \
    (BK_ATTENTION_DECODE_WG_RING(ctas) / BK_ATTENTION_DECODE_WG_STAGE_BYTES(d, keys))
/* The ring, its barriers (k_full, v_full and empty a stage) and the slack
 * that aligns it to 1024 bytes. */
#define BK_ATTENTION_DECODE_WG_SHARED_BYTES(d, keys, ctas)                                      \
    (BK_ATTENTION_DECODE_WG_RING(ctas) + 24 * BK_ATTENTION_DECODE_WG_STAGES(d, keys, ctas) + 1024)
#define BK_ATTENTION_DECODE_WG_THREADS(nc) (128 * (1 + (nc)))

struct bk_attention_decode_tma_args {
    BK_TENSOR_MAP_FIELD(map_k); /* [B, Hkv, Lk, D], boxes of 64 keys x 64 columns */
    BK_TENSOR_MAP_FIELD(map_v);
    struct bk_attention_decode_args d;
};

/* The Hopper forward's kernels as decode kernels (kernels/attention_wgmma.cu,
 * bk_attention_decode_forward_*): the decode units, parts and stream-K
 * split of bk_attention_decode_args, with units of 128 packed rows (two
 * consumers of 64) walked by the forward's producer and consumers in tiles
 * of 128 or 192 keys. Q comes through a
 * map of q [B, H, Lq, D] whose boxes are 64 columns x Lq queries x 64 / Lq
 * heads: 64 packed rows in order (Lq divides 64). map_dy is unused (the
 * forward's walk names it), and a is d's first member, where the walk
 * reads the forward's. */
#define BK_ATTENTION_DECODE_FORWARD_ROWS 128
/* Its kernels by tile keys and stages (cuda_attention_decode.c chooses):
 * D = 128 in tiles of 192 keys with two stages or 128 with three, D = 64
 * in tiles of 192 with three stages or four. */
#define BK_ATTENTION_DECODE_FORWARD_SHARED_BYTES(d, keys, stages)                              \
    BK_ATTENTION_WGMMA_FORWARD_TILE_BYTES(d, keys, 2, stages)
/* How its CTAs share a unit's keys (kernel suffixes none, _whole, _pairs):
 * stream-K with parts for the combining kernel; a CTA a unit; or the two
 * CTAs of a cluster a unit, half of its steps each, merged through
 * distributed shared memory. The last two write y and lse themselves. */
#define BK_ATTENTION_DECODE_SPLIT_PARTS 0
#define BK_ATTENTION_DECODE_SPLIT_WHOLE 1
#define BK_ATTENTION_DECODE_SPLIT_PAIRS 2
struct bk_attention_decode_forward_args {
    BK_TENSOR_MAP_FIELD(map_q);
    BK_TENSOR_MAP_FIELD(map_k);
    BK_TENSOR_MAP_FIELD(map_v);
    BK_TENSOR_MAP_FIELD(map_dy);
    union {                             /* a: d.a, where the forward's walk reads it */
        struct bk_attention_args a;
        struct bk_attention_decode_args d;
    };
};

#endif /* BK_ATTENTION_ARGS_H */
