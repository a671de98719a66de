/* SPDX-License-Identifier: Apache-2.0 */
/* The libbk fuzz harness (fuzz_harness.c). One input drives a whole life
 * cycle on the host device: context, memory, plans for every op from a
 * fuzzed info struct, command buffers with fuzzed run infos, submission,
 * and destruction. It is built two ways: with libFuzzer (clang
 * -fsanitize=fuzzer, BK_FUZZ_LIBFUZZER defined: a broken property aborts)
 * and with the replay driver fuzz_replay.c (any C compiler: broken
 * properties are counted and reported as TAP). */
#ifndef BK_FUZZ_HARNESS_H
#define BK_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Properties broken so far, and the first one's description. */
unsigned long bk_fuzz_violations(void);
const char *bk_fuzz_first_violation(void);

/* What the inputs reached, for the driver's summary. */
struct bk_fuzz_stats {
    unsigned long inputs, plans_created, plans_rejected, runs_recorded, runs_rejected,
        submits, other_rejected;
    /* By op family (fuzz_ops.h, FZ_MAX_FAMILIES): plans made, runs recorded. */
    unsigned long family_plans[12], family_runs[12];
    unsigned long in_place_runs;      /* accepted runs with C == D at one address */
    /* Attention plans made and runs recorded with a BkAttentionSequencesInfo
     * or BkAttentionPagedKvInfo chained. */
    unsigned long chained_plans, chained_runs;
};
struct bk_fuzz_stats bk_fuzz_get_stats(void);

#endif /* BK_FUZZ_HARNESS_H */
