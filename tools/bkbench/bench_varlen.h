/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's packed variable-length attention cases ("varlen" and
 * "varlen-c", causal): sequences of their own lengths end to end along the
 * length axis of q, k, v [1, H, L, D] with L their sum, one plan through a
 * PACKED BkAttentionSequencesInfo (offsets, FlashAttention's cu_seqlens)
 * with Lq = Lk for every sequence, the DENSE pattern. The lengths are a
 * fixed list per scale:
 *   GPU    8192, 512, 4096, 2048, 8192, 1024, 6144, 3072, 8192, 512,
 *          4096, 7168, 2048, 1536, 8192, 512: 16 sequences, 65536 tokens;
 *   host   40, 8, 64, 24: 4 sequences, 136 tokens (--quick too).
 * Each sequence is a problem of its own (its causal diagonal, its blocks
 * from its first token), so the blocks and FLOPs are each sequence's
 * own, as attention_active_blocks counts them at the case's block size,
 * summed over the sequences. */
#ifndef BK_TOOL_BENCH_VARLEN_H
#define BK_TOOL_BENCH_VARLEN_H

#include <stdbool.h>
#include <stdint.h>

#include <bk/bk.h>

#include "attention_op.h"
#include "bench_attention.h"

#define VARLEN_MAX_SEQUENCES 16

/* The lengths of a scale's sequences; *count gets how many. */
const int32_t *varlen_lengths(enum attention_scale scale, int32_t *count);
/* Their sum: the length axis of the packed tensors. */
int64_t varlen_tokens(const int32_t *lengths, int32_t count);

/* Sequence s of a varlen case as a problem of its own: B = 1, Lq = Lk =
 * its length, the case's heads, sizes, block and causal flag. */
struct attention_op_desc varlen_sequence_desc(const struct attention_case *c, bool backward,
                                              int32_t s);
/* The row of the packed tensors where sequence s begins. */
int64_t varlen_first_row(const struct attention_case *c, int32_t s);
/* Active and all blocks summed over the sequences and heads. */
void varlen_blocks(const struct attention_case *c, int64_t *active, int64_t *total);
/* The offsets [S + 1]: 0, then each sequence's end (both lengthsQ and
 * lengthsK, Lq = Lk per sequence). */
void varlen_offsets(const struct attention_case *c, int32_t *offsets);
/* The PACKED sequences struct of the case (offsets I32 [S + 1], the
 * longest sequence as both bounds), for chaining to an op info. */
BkAttentionSequencesInfo varlen_sequences_info(const struct attention_case *c);

#endif /* BK_TOOL_BENCH_VARLEN_H */
