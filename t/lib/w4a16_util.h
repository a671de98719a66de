/* SPDX-License-Identifier: Apache-2.0 */
/* What the W4A16 tests (t/w4a16/w4a16.c, t/w4a16/w4a16_zero_points.c)
 * share beside the reference model (w4a16_ref.h): random shapes, scales
 * and permutations, device buffers with a host copy, and planning and
 * running an op. */
#ifndef BK_TEST_W4A16_UTIL_H
#define BK_TEST_W4A16_UTIL_H

#include "test_util.h"

/* malloc that bails out (set-up, not what a test checks); size 0 is 1. */
void *w4a16_xmalloc(size_t size);

/* A K for group_size: whole groups (1 to most_groups of them; per channel
 * 32 to 128 most_groups rows), a multiple of 16. */
int64_t w4a16_random_k(struct bkt_rng *rng, int32_t group_size, int64_t most_groups);
/* A random nonzero value of type (F16, BF16) in [lo, hi], as bits; when
 * signed_, negated half of the time (one more draw). */
uint16_t w4a16_random_half(struct bkt_rng *rng, BkDataType type, double lo, double hi,
                           bool signed_);
/* perm [k]: a random permutation of 0 .. k - 1. */
void w4a16_random_permutation(struct bkt_rng *rng, int32_t *perm, int64_t k);

/* A device buffer with a host copy, for the contiguous operands. */
struct w4a16_blob {
    void *host;
    uint64_t bytes;
    struct bkt_buffer dev;
};
/* bytes rounded up to 4, poisoned (BKT_POISON) on both sides until
 * written. */
void w4a16_blob_init(BkContext ctx, struct w4a16_blob *b, uint64_t bytes);
void w4a16_blob_upload(BkContext ctx, struct w4a16_blob *b);
void w4a16_blob_download(BkContext ctx, struct w4a16_blob *b);
void w4a16_blob_free(BkContext ctx, struct w4a16_blob *b);

/* Plans the op of info, checks that the plan takes count bindings and
 * runs it on them; the first failure, with a diagnostic naming label. */
BkResult w4a16_plan_run(BkContext ctx, const void *info, uint32_t count,
                        const BkDeviceAddress *bindings, const char *label);

#endif /* BK_TEST_W4A16_UTIL_H */
