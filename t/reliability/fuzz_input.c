/* SPDX-License-Identifier: Apache-2.0 */
/* Value pickers of the fuzz harness: see fuzz_input.h. */
#include "config.h"

#include "fuzz_input.h"

#include <string.h>

static const int64_t interesting[] = {
    0, 1, -1, 2, 3, 4, 7, 8, -2, 255, 256, 4096, 65536, 1 << 20,
    INT64_MAX, INT64_MIN, INT64_MAX / 2, INT64_MAX / 4 + 1, INT64_MAX / 8,
    (int64_t)1 << 31, (int64_t)1 << 32, ((int64_t)1 << 32) + 1, (int64_t)1 << 61,
    (int64_t)1 << 62, ((int64_t)1 << 62) + 1, 3037000500, 4294967295, INT32_MAX,
};
#define N_INTERESTING (sizeof interesting / sizeof interesting[0])

int64_t fz_pick_i64(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    if (b < 2 * N_INTERESTING)
        return interesting[b % N_INTERESTING];
    if (b < 240)
        return (int64_t)(b % 17) - 1;
    return (int64_t)fz_u64(in);
}

uint32_t fz_pick_u32(struct fz_input *in)
{
    static const uint32_t values[] = { 0, 1, 2, 7, 8, 9, 100, 101, 102, 0x7FFFFFFF, 0x80000000u,
                                       0xFFFFFFFFu };
    const unsigned n = sizeof values / sizeof values[0];
    uint8_t b = fz_byte(in);
    if (b < 2 * n)
        return values[b % n];
    return b < 200 ? b % 12u : fz_u32(in);
}

BkStructureType fz_pick_stype(struct fz_input *in)
{
    return (BkStructureType)fz_pick_u32(in);
}

static unsigned char chain_nodes[4][512];

const void *fz_pick_chain(struct fz_input *in)
{
    memset(chain_nodes, 0, sizeof chain_nodes);
    unsigned n = 1 + fz_byte(in) % 4;
    for (unsigned i = 0; i < n; i++) {
        BkBaseInStructure *node = (BkBaseInStructure *)chain_nodes[i];
        node->sType = fz_pick_stype(in);
        node->pNext = i + 1 < n ? (const BkBaseInStructure *)chain_nodes[i + 1] : NULL;
    }
    return chain_nodes[0];
}
