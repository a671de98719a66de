/* SPDX-License-Identifier: Apache-2.0 */
/* The conversion op's rounding (bk-convert(7)): every input value is
 * exact in F64 and is rounded once to the output type, to nearest with
 * ties to even. Integer arithmetic on the bits, so the result does not
 * depend on the FPU's precision or rounding mode (x87 included). Both
 * backends include it: lib/host/host_convert.c and kernels/convert.cu. */
#ifndef BK_CONVERT_ROUND_H
#define BK_CONVERT_ROUND_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define BK_CONVERT_FN static __host__ __device__ __forceinline__
#else
#define BK_CONVERT_FN static inline
#endif

/* The bits of F64 value u rounded to nearest even in a binary format of
 * `man` stored mantissa bits, `ebits` exponent bits and bias 2^(ebits-1)-1:
 * subnormals kept, overflow to infinity, a NaN a quiet NaN with the top
 * of its payload. */
BK_CONVERT_FN uint32_t bk_round_f64_bits(uint64_t u, unsigned man, unsigned ebits)
{
    const uint32_t sign = (uint32_t)(u >> 63) << (man + ebits);
    const uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
    const uint32_t inf = ((1u << ebits) - 1u) << man;
    if (a > 0x7FF0000000000000ull)
        return sign | inf | (1u << (man - 1)) | (uint32_t)((a & 0xFFFFFFFFFFFFFull) >> (52 - man));
    if (a == 0x7FF0000000000000ull)
        return sign | inf;
    const int bias = (1 << (ebits - 1)) - 1;
    int e = (int)(a >> 52);
    uint64_t m = a & 0xFFFFFFFFFFFFFull;
    if (e == 0)
        e = 1; /* an F64 subnormal: far below every output's subnormals */
    else
        m |= 1ull << 52;
    const int te = e - 1023 + bias; /* the output's biased exponent, if normal */
    const int shift = 52 - (int)man + (te >= 1 ? 0 : 1 - te);
    if (shift > 54) /* below half the smallest subnormal */
        return sign;
    uint64_t q = m >> shift;
    const uint64_t rem = m & ((1ull << shift) - 1u), half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
        q++;
    /* A normal's q holds the implicit bit, which carries into the exponent
     * field; a subnormal's q (te < 1) is the field itself. */
    const uint64_t bits = ((uint64_t)(te >= 1 ? te - 1 : 0) << man) + q;
    return sign | (bits >= inf ? inf : (uint32_t)bits);
}

BK_CONVERT_FN uint64_t bk_f64_bits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return u;
}

/* F32 bits widened to F64 bits, exactly: a NaN keeps its sign and payload
 * bit for bit (a conversion of the value would set the quiet bit on some
 * machines). */
BK_CONVERT_FN uint64_t bk_convert_f32_bits_to_f64_bits(uint32_t u)
{
    const uint64_t sign = (uint64_t)(u >> 31) << 63;
    const uint32_t a = u & 0x7FFFFFFFu;
    if (a > 0x7F800000u)
        return sign | 0x7FF0000000000000ull | ((uint64_t)(a & 0x7FFFFFu) << 29);
    float f;
    memcpy(&f, &u, sizeof f);
    const double d = (double)f;
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    return b;
}

BK_CONVERT_FN float bk_convert_f64_to_f32(double d)
{
    uint32_t b = bk_round_f64_bits(bk_f64_bits(d), 23, 8);
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

BK_CONVERT_FN uint16_t bk_convert_f64_to_f16(double d)
{
    return (uint16_t)bk_round_f64_bits(bk_f64_bits(d), 10, 5);
}

BK_CONVERT_FN uint16_t bk_convert_f64_to_bf16(double d)
{
    return (uint16_t)bk_round_f64_bits(bk_f64_bits(d), 7, 8);
}

/* d rounded to nearest even and saturated to [lo, hi] (integers exact in
 * F64); NaN gives 0. */
BK_CONVERT_FN double bk_convert_f64_to_integer(double d, double lo, double hi)
{
    if (d != d)
        return 0;
    if (d <= lo)
        return lo;
    if (d >= hi)
        return hi;
    double r = floor(d);
    const double f = d - r; /* exact: |d| < 2^53 */
    if (f > 0.5 || (f == 0.5 && fmod(r, 2.0) != 0))
        r += 1;
    return r;
}

#endif /* BK_CONVERT_ROUND_H */
