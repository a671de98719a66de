/* SPDX-License-Identifier: Apache-2.0 */
/* f16 and bf16 to and from float with the bits of lib/half.h but no
 * branches, so that loops of them vectorise: each class of input is
 * computed and the right one kept by masks. The GEMM family's panels,
 * rows, 2:4 decoding and W4A16 tables convert by them.
 * t/gemm/gemm_f16_values and gemm_bf16_values check every 16-bit input
 * and, for output, each value's neighbourhood (ties included); both
 * output functions were also compared with half.h's on all 2^32 floats.
 *
 * HOST_CLONES: where configure found target_clones (x86-64, not under
 * ThreadSanitizer, whose runtime is not up when ifunc resolvers run), a
 * function gets AVX-512, AVX2 and baseline clones picked at load time.
 * clang gives a clone's resolver a global symbol even for a static
 * function: a cloned function's name must be unique in the library (the
 * fuzzer links the sources of several units into one program). */
#ifndef BK_HOST_HALF_CONVERT_H
#define BK_HOST_HALF_CONVERT_H

#include "config.h"
#include "../half.h"

#include <stdint.h>

#if defined(__SANITIZE_THREAD__)
#define HOST_NO_IFUNC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HOST_NO_IFUNC 1
#endif
#endif

#if defined(BK_HAVE_TARGET_CLONES) && defined(__x86_64__) && !defined(HOST_NO_IFUNC)
#if defined(BK_HAVE_TARGET_CLONES_LEVELS)
#define HOST_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOST_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#else
#define HOST_CLONES
#endif

#ifdef _OPENMP
#define HOST_SIMD _Pragma("omp simd")
#else
#define HOST_SIMD
#endif

/* binary16 -> float:
 *   normal:     the exponent rebiased from 15 to 127 (+112 << 23);
 *   subnormal:  m * 2^-24 as (1 + m/1024) * 2^-14 - 2^-14, a difference of
 *               two normal floats, exact (no subnormal arithmetic, so no
 *               flush-to-zero mode can change it);
 *   inf or NaN: the exponent all ones, the mantissa kept. */
static inline float host_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7FFFu;
    const uint32_t normal = (em << 13) + 0x38000000u;
    const uint32_t subnormal = bk_f32_bits(bk_f32_from_bits(0x38800000u | (em << 13)) - 0x1p-14f);
    const uint32_t special = 0x7F800000u | (em << 13);
    const uint32_t is_sub = 0u - (uint32_t)(em < 0x0400u);
    const uint32_t is_special = 0u - (uint32_t)(em >= 0x7C00u);
    return bk_f32_from_bits(sign | (subnormal & is_sub) | (special & is_special) |
                            (normal & ~(is_sub | is_special)));
}

/* float -> binary16, rounding to nearest even:
 *   NaN:        quiet, the mantissa's top bits kept;
 *   >= 65520:   infinity;
 *   below 2^-14 (subnormal or zero): |f| + 0.5 rounds f to a multiple of
 *               2^-24 (the float unit at 0.5), which is the result's
 *               mantissa in the low bits; exact under excess precision too
 *               (a long double sum keeps every bit of an f above 2^-40);
 *   normal:     the exponent rebiased, the dropped 13 bits rounded to even. */
static inline uint16_t host_f32_to_f16(float f)
{
    const uint32_t u = bk_f32_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
    const uint32_t nan = 0x7E00u | ((a >> 13) & 0x3FFu);
    const uint32_t subnormal = bk_f32_bits(bk_f32_from_bits(a) + 0.5f) - 0x3F000000u;
    const uint32_t rebiased = a - 0x38000000u;
    const uint32_t normal = (rebiased + 0xFFFu + ((rebiased >> 13) & 1u)) >> 13;
    const uint32_t is_nan = 0u - (uint32_t)(a > 0x7F800000u);
    const uint32_t is_inf = ~is_nan & (0u - (uint32_t)(a >= 0x477FF000u));
    const uint32_t is_sub = 0u - (uint32_t)(a < 0x38800000u);
    return (uint16_t)(sign | (nan & is_nan) | (0x7C00u & is_inf) | (subnormal & is_sub) |
                      (normal & ~(is_nan | is_inf | is_sub)));
}

/* bfloat16 -> float: the top half of the float's bits. */
static inline float host_bf16_to_f32(uint16_t h)
{
    return bk_f32_from_bits((uint32_t)h << 16);
}

/* float -> bfloat16, rounding to nearest even: the low 16 bits rounded
 * into the top half (a carry out of the mantissa is the next exponent,
 * up to infinity); NaN keeps its top bits with the quiet bit set. */
static inline uint16_t host_f32_to_bf16(float f)
{
    const uint32_t u = bk_f32_bits(f);
    const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet = (u >> 16) | 0x0040u;
    const uint32_t is_nan = 0u - (uint32_t)((u & 0x7FFFFFFFu) > 0x7F800000u);
    return (uint16_t)((quiet & is_nan) | (rounded & ~is_nan));
}

#endif /* BK_HOST_HALF_CONVERT_H */
