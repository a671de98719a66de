/* SPDX-License-Identifier: Apache-2.0 */
/* Checked size arithmetic: every product, sum, ceiling division and
 * stride that plan creation or a backend computes from user extents goes
 * through these, so that a huge extent becomes an error naming the field
 * rather than signed overflow (undefined) or a wrapped size.
 *
 * Each function takes a sticky flag: on overflow it sets *overflow and
 * returns 0, so a chain of steps is written plainly and checked once:
 *
 *     bool ovf = false;
 *     int64_t n = bk_mul_i64(bk_ceil_div_i64(lq, bq, &ovf), nbk, &ovf);
 *     if (ovf) return bk_error(..., "field ... overflows 64 bits");
 */
#ifndef BK_CHECKED_H
#define BK_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

static inline int64_t bk_mul_i64(int64_t a, int64_t b, bool *overflow)
{
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *overflow = true;
        return 0;
    }
    return r;
}

static inline int64_t bk_add_i64(int64_t a, int64_t b, bool *overflow)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *overflow = true;
        return 0;
    }
    return r;
}

/* ceil(a / b) for a >= 0 and b > 0 (anything else is an overflow): never
 * forms a + b - 1, which overflows for a near INT64_MAX. */
static inline int64_t bk_ceil_div_i64(int64_t a, int64_t b, bool *overflow)
{
    if (a < 0 || b <= 0) {
        *overflow = true;
        return 0;
    }
    return a / b + (a % b != 0);
}

static inline uint64_t bk_mul_u64(uint64_t a, uint64_t b, bool *overflow)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        *overflow = true;
        return 0;
    }
    return r;
}

static inline uint64_t bk_add_u64(uint64_t a, uint64_t b, bool *overflow)
{
    uint64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
        *overflow = true;
        return 0;
    }
    return r;
}

/* a rounded up to a multiple of the power of two align. */
static inline uint64_t bk_align_up_u64(uint64_t a, uint64_t align, bool *overflow)
{
    if (a > UINT64_MAX - (align - 1)) {
        *overflow = true;
        return 0;
    }
    return (a + align - 1) & ~(align - 1);
}

/* A non-negative int64 as a byte count or index (a negative one is an
 * overflow: it can only come from a missed check). */
static inline uint64_t bk_u64_of_i64(int64_t a, bool *overflow)
{
    if (a < 0) {
        *overflow = true;
        return 0;
    }
    return (uint64_t)a;
}

/* The product of n non-negative extents, checked. */
static inline int64_t bk_product_i64(const int64_t *v, uint32_t n, bool *overflow)
{
    int64_t r = 1;
    for (uint32_t i = 0; i < n; i++)
        r = bk_mul_i64(r, v[i], overflow);
    return r;
}

#endif /* BK_CHECKED_H */
