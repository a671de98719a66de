/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's packed variable-length attention cases: the lengths, each
 * sequence's own problem and the PACKED sequences struct. */
#include "bench_varlen.h"

#include <string.h>

/* A fixed list rather than a draw, so that the man page and
 * bench/attention-peers.py can write it out: lengths of 512 to 8192 that
 * sum to 65536, the long ones spread through the batch. */
static const int32_t gpu_lengths[] = {8192, 512,  4096, 2048, 8192, 1024, 6144, 3072,
                                      8192, 512,  4096, 7168, 2048, 1536, 8192, 512};
/* Lengths that are not whole blocks, one shorter than a block. */
static const int32_t host_lengths[] = {40, 8, 64, 24};

#define COUNT(a) ((int32_t)(sizeof a / sizeof a[0]))

const int32_t *varlen_lengths(enum attention_scale scale, int32_t *count)
{
    if (scale == ATTENTION_SCALE_GPU) {
        *count = COUNT(gpu_lengths);
        return gpu_lengths;
    }
    *count = COUNT(host_lengths);
    return host_lengths;
}

int64_t varlen_tokens(const int32_t *lengths, int32_t count)
{
    int64_t sum = 0;
    for (int32_t s = 0; s < count; s++)
        sum += lengths[s];
    return sum;
}

struct attention_op_desc varlen_sequence_desc(const struct attention_case *c, bool backward,
                                              int32_t s)
{
    const int64_t len = c->lengths[s];
    return (struct attention_op_desc){backward, c->dtype, 1, c->heads, c->heads, len, len,
                                      c->d, c->dv, c->block, c->block, c->form, c->causal,
                                      1, 1, 0};
}

int64_t varlen_first_row(const struct attention_case *c, int32_t s)
{
    return varlen_tokens(c->lengths, s);
}

void varlen_blocks(const struct attention_case *c, int64_t *active, int64_t *total)
{
    *active = *total = 0;
    for (int32_t s = 0; s < c->sequences; s++) {
        const struct attention_op_desc sd = varlen_sequence_desc(c, false, s);
        *active += attention_active_blocks(&sd, NULL);
        *total += sd.heads * attention_nbq(&sd) * attention_nbk(&sd);
    }
}

void varlen_offsets(const struct attention_case *c, int32_t *offsets)
{
    offsets[0] = 0;
    for (int32_t s = 0; s < c->sequences; s++)
        offsets[s + 1] = offsets[s] + c->lengths[s];
}

BkAttentionSequencesInfo varlen_sequences_info(const struct attention_case *c)
{
    int32_t longest = 0;
    for (int32_t s = 0; s < c->sequences; s++)
        longest = c->lengths[s] > longest ? c->lengths[s] : longest;
    BkAttentionSequencesInfo seq;
    memset(&seq, 0, sizeof seq);
    seq.sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO;
    seq.form = BK_ATTENTION_SEQUENCES_PACKED;
    seq.lengthsQ.dataType = BK_DATA_TYPE_I32;
    seq.lengthsQ.rank = 1;
    seq.lengthsQ.extent[0] = c->sequences + 1;
    seq.lengthsK = seq.lengthsQ;
    seq.maxLengthQ = seq.maxLengthK = longest;
    return seq;
}

_Static_assert(COUNT(gpu_lengths) <= VARLEN_MAX_SEQUENCES &&
                   COUNT(host_lengths) <= VARLEN_MAX_SEQUENCES,
               "VARLEN_MAX_SEQUENCES bounds the lists");
