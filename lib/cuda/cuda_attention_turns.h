/* SPDX-License-Identifier: Apache-2.0 */
/* How evenly the Hopper kernels' persistent CTAs share the query tiles of
 * a causal problem (doc/design/attention.md, "Persistent CTAs and a CTA a
 * tile"). Plain arithmetic: no CUDA. */
#ifndef BK_CUDA_ATTENTION_TURNS_H
#define BK_CUDA_ATTENTION_TURNS_H

#include <stdbool.h>
#include <stdint.h>

/* The busiest CTA's work over the mean, in thousandths (1000: even),
 * where `ctas` persistent CTAs take the batch x heads x ceil(lq / rows)
 * query tiles in QueryTiles::next's turns (kernels/attention_wgmma_walk.cuh:
 * tile x of a head first, CTA c taking item c of the even rounds of `ctas`
 * items and ctas - 1 - c of the odd ones), a tile costing the keys its
 * last row sees under a causal bound aligned bottom-right plus a fixed
 * BK_ATTENTION_TURN_FIXED_KEYS. Problems of more than
 * BK_ATTENTION_TURNS_COUNTED tiles count as even. */
int64_t bk_attention_turns_spread(int64_t batch, int64_t heads, int64_t lq, int64_t lk,
                                  int64_t rows, int64_t ctas);

/* A tile's cost beyond its keys (its Q load, the last tile's drain and
 * store), in keys: about two 128-key tiles' time. */
#define BK_ATTENTION_TURN_FIXED_KEYS 256
#define BK_ATTENTION_TURNS_COUNTED (INT64_C(1) << 22)

/* Whether the persistent turns leave the busiest CTA
 * BK_ATTENTION_TURNS_UNEVEN thousandths of the mean or more: the grid of
 * a CTA a tile, which the block scheduler hands to SMs as they free, is
 * then faster (H100, bf16 causal D = 64 L = 8192 on tiles of 192 rows:
 * 1220, 436 TFLOP/s persistent against 489 a CTA a tile; L = 512 to 1024
 * at 1031 to 1067 and D = 128 L = 8192 at 1031 run faster persistent). */
#define BK_ATTENTION_TURNS_UNEVEN 1080
bool bk_attention_turns_uneven(int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t rows,
                               int64_t ctas);

#endif
