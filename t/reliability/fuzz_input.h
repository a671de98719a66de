/* SPDX-License-Identifier: Apache-2.0 */
/* Reading a fuzz input as a stream of choices (fuzz_harness.c and the op
 * generators of fuzz_ops.c). Once the input is used up every read gives
 * 0, which always means the plain, valid choice. */
#ifndef BK_FUZZ_INPUT_H
#define BK_FUZZ_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

struct fz_input {
    const uint8_t *p;
    size_t n;
};

static inline uint8_t fz_byte(struct fz_input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static inline uint32_t fz_u16(struct fz_input *in)
{
    uint32_t lo = fz_byte(in);
    return lo | (uint32_t)fz_byte(in) << 8;
}

static inline uint32_t fz_u32(struct fz_input *in)
{
    uint32_t lo = fz_u16(in);
    return lo | fz_u16(in) << 16;
}

static inline uint64_t fz_u64(struct fz_input *in)
{
    uint64_t lo = fz_u32(in);
    return lo | (uint64_t)fz_u32(in) << 32;
}

/* True with probability about 1/n; never once the input is used up. */
static inline bool fz_one_in(struct fz_input *in, unsigned n)
{
    return in->n && fz_byte(in) % n == n - 1;
}

/* Values that break things: limits, powers of two and their neighbours,
 * small ones, or any. */
int64_t fz_pick_i64(struct fz_input *in);
uint32_t fz_pick_u32(struct fz_input *in);
/* A structure type: a known one, a neighbour, or any 32-bit value. */
BkStructureType fz_pick_stype(struct fz_input *in);
/* A pNext chain of up to four structs of random types. Each node is much
 * larger than any libbk struct, so libbk reading one as a known type
 * stays inside it; unknown ones must be skipped. The nodes are reused by
 * the next call. */
const void *fz_pick_chain(struct fz_input *in);

#endif /* BK_FUZZ_INPUT_H */
