/* SPDX-License-Identifier: Apache-2.0 */
/* Contiguous f16 rows by F16C (see host_f16c.h). vcvtps2ph with an
 * explicit round-to-nearest-even gives host_f32_to_f16's bits on every
 * float (NaN quiet with its top bits, overflow to infinity, subnormals
 * exact, the MXCSR's modes ignored). vcvtph2ps gives host_f16_to_f32's
 * except that it quiets a signalling NaN: those lanes are rebuilt from
 * the bits (exponent all ones, the mantissa kept), so that a row copied
 * through float keeps its bits as before. */
#include "config.h"

#include "host_f16c.h"
#include "host_half_convert.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>

/* 0: not asked yet, 1: no, 2: F16C and AVX2 (AVX2 for the integer lanes
 * of the NaN fix-up). */
static atomic_int have;

static bool have_f16c(void)
{
    int h = atomic_load_explicit(&have, memory_order_relaxed);
    if (h == 0) {
        unsigned eax, ebx, ecx, edx;
        __builtin_cpu_init();
        const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
        h = f16c && __builtin_cpu_supports("avx2") ? 2 : 1;
        atomic_store_explicit(&have, h, memory_order_relaxed);
    }
    return h == 2;
}

__attribute__((target("avx2,f16c"))) static void load_f16c(const uint16_t *src, int64_t n,
                                                            float *out)
{
    const __m256i em_mask = _mm256_set1_epi32(0x7FFF), inf = _mm256_set1_epi32(0x7C00);
    const __m256i exponent = _mm256_set1_epi32(0x7F800000);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)(src + i));
        const __m256i w = _mm256_cvtepu16_epi32(h), em = _mm256_and_si256(w, em_mask);
        const __m256i nan = _mm256_cmpgt_epi32(em, inf);
        const __m256i bits = _mm256_or_si256(_mm256_slli_epi32(_mm256_xor_si256(w, em), 16),
                                             _mm256_or_si256(exponent, _mm256_slli_epi32(em, 13)));
        _mm256_storeu_ps(out + i, _mm256_blendv_ps(_mm256_cvtph_ps(h), _mm256_castsi256_ps(bits),
                                                   _mm256_castsi256_ps(nan)));
    }
    for (; i < n; i++)
        out[i] = host_f16_to_f32(src[i]);
}

__attribute__((target("avx2,f16c"))) static void store_f16c(uint16_t *dst, int64_t n,
                                                             const float *in)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128((__m128i *)(void *)(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; i++)
        dst[i] = host_f32_to_f16(in[i]);
}

bool host_f16c_load(const uint16_t *src, int64_t n, float *out)
{
    if (!have_f16c())
        return false;
    load_f16c(src, n, out);
    return true;
}

bool host_f16c_store(uint16_t *dst, int64_t n, const float *in)
{
    if (!have_f16c())
        return false;
    store_f16c(dst, n, in);
    return true;
}

#else /* not x86-64: the callers' own loops */

bool host_f16c_load(const uint16_t *src, int64_t n, float *out)
{
    (void)src, (void)n, (void)out;
    return false;
}

bool host_f16c_store(uint16_t *dst, int64_t n, const float *in)
{
    (void)dst, (void)n, (void)in;
    return false;
}

#endif
