/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench: operand buffers in rotation sets. */
#include "bench_sets.h"

#include <stdlib.h>
#include <string.h>

#include "tool_common.h"

void bench_sets_alloc(struct bench_device *d, struct bench_sets *b, uint32_t sets,
                      const uint64_t *slot_bytes, uint32_t slots)
{
    if (slots > BENCH_SETS_MAX_SLOTS)
        tool_die("internal: %u slots, at most %u", slots, BENCH_SETS_MAX_SLOTS);
    b->sets = sets;
    b->slots = slots;
    b->buf = calloc((size_t)sets * slots, sizeof *b->buf);
    if (!b->buf)
        tool_die("out of host memory");
    for (uint32_t set = 0; set < sets; set++)
        for (uint32_t k = 0; k < slots; k++)
            if (slot_bytes[k])
                bench_buffer_alloc(d, slot_bytes[k], &b->buf[set * slots + k]);
}

void bench_sets_fill(struct bench_device *d, const struct bench_sets *b, uint32_t slot,
                     BkDataType dtype)
{
    for (uint32_t set = 0; set < b->sets; set++) {
        const struct bench_buffer *buf = &b->buf[set * b->slots + slot];
        if (buf->size)
            bench_buffer_fill_random(d, buf, dtype, 1000u * set + slot + 11u);
    }
}

void bench_sets_copy_first(struct bench_device *d, const struct bench_sets *b, uint32_t first,
                           uint32_t count)
{
    if (b->sets < 2)
        return;
    BkCommandBuffer cmd = bench_one_time_begin(d);
    for (uint32_t set = 1; set < b->sets; set++)
        for (uint32_t slot = first; slot < first + count; slot++)
            if (b->buf[slot].size)
                tool_check(bkCmdCopyMemory(cmd, bench_sets_address(b, set, slot),
                                           bench_sets_address(b, 0, slot), b->buf[slot].size),
                           "bkCmdCopyMemory");
    bench_one_time_finish(d, cmd);
}

BkDeviceAddress bench_sets_address(const struct bench_sets *b, uint32_t set, uint32_t slot)
{
    return b->buf[set * b->slots + slot].address;
}

void bench_sets_free(struct bench_device *d, struct bench_sets *b)
{
    for (uint32_t i = 0; i < b->sets * b->slots; i++)
        if (b->buf[i].size)
            bench_buffer_free(d, &b->buf[i]);
    free(b->buf);
    memset(b, 0, sizeof *b);
}
