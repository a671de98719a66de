/* SPDX-License-Identifier: Apache-2.0 */
/* IEEE binary16 and bfloat16 conversions to and from float, rounding to
 * nearest even, with NaN and infinity preserved. Portable C: no _Float16. */
#ifndef BK_HALF_H
#define BK_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t bk_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float bk_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float bk_bf16_to_f32(uint16_t h)
{
    return bk_f32_from_bits((uint32_t)h << 16);
}

static inline uint16_t bk_f32_to_bf16(float f)
{
    uint32_t u = bk_f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)        /* NaN: keep it quiet and a NaN */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7FFFu + ((u >> 16) & 1u);             /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static inline float bk_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1Fu, man = h & 0x3FFu;
    if (exp == 0x1F)                             /* inf or NaN */
        return bk_f32_from_bits(sign | 0x7F800000u | (man << 13));
    if (exp == 0) {
        if (man == 0)
            return bk_f32_from_bits(sign);
        /* subnormal: value = man * 2^-24, exact in float */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return bk_f32_from_bits(sign | ((exp + 112u) << 23) | (man << 13));
}

static inline uint16_t bk_f32_to_f16(float f)
{
    uint32_t u = bk_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)                         /* NaN */
        return (uint16_t)(sign | 0x7E00u | ((a >> 13) & 0x3FFu));
    if (a >= 0x477FF000u)                        /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7C00u);
    if (a < 0x38800000u) {                       /* below 2^-14: subnormal or zero */
        if (a < 0x33000000u)                     /* below half the smallest subnormal */
            return sign;
        uint32_t man = (a & 0x7FFFFFu) | 0x800000u;
        uint32_t shift = 126u - (a >> 23);       /* 14..24 */
        uint32_t q = man >> shift, rem = man & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = a - 0x38000000u;                /* rebias exponent 127 -> 15 */
    r += 0xFFFu + ((r >> 13) & 1u);              /* round to nearest even */
    return (uint16_t)(sign | (r >> 13));
}

#endif /* BK_HALF_H */
