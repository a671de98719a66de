/* SPDX-License-Identifier: Apache-2.0 */
/* Rotation sets for bkbench's GEMM cases: 'sets' copies of a few operand
 * buffers ("slots"), so that consecutive runs touch different memory. */
#ifndef BK_TOOL_BENCH_SETS_H
#define BK_TOOL_BENCH_SETS_H

#include <stdint.h>

#include <bk/bk.h>

#include "bench_device.h"

#define BENCH_SETS_MAX_SLOTS 12u /* the decode step: four linears of three slots */

struct bench_sets {
    uint32_t sets, slots;
    struct bench_buffer *buf;             /* [sets][slots]; size 0 for an empty slot */
};

/* Allocates slot_bytes[k] bytes for slot k of every set (0: none). */
void bench_sets_alloc(struct bench_device *d, struct bench_sets *b, uint32_t sets,
                      const uint64_t *slot_bytes, uint32_t slots);
/* Fills slot k of every set with random values of dtype, a seed per set. */
void bench_sets_fill(struct bench_device *d, const struct bench_sets *b, uint32_t slot,
                     BkDataType dtype);
/* Copies slots [first, first + count) of set 0 into every other set (a
 * device copy) and waits for it: sets that hold the same values at other
 * addresses. */
void bench_sets_copy_first(struct bench_device *d, const struct bench_sets *b, uint32_t first,
                           uint32_t count);
/* The address of slot k of set, 0 for an empty slot. */
BkDeviceAddress bench_sets_address(const struct bench_sets *b, uint32_t set, uint32_t slot);
void bench_sets_free(struct bench_device *d, struct bench_sets *b);

#endif /* BK_TOOL_BENCH_SETS_H */
