/* SPDX-License-Identifier: Apache-2.0 */
/* Type conversion for the host GEMM engine: dense panel packers (strided
 * matrix of a storage type -> panels in the compute type) and the strided
 * row loads and stores of the epilogue. One macro per job, one row per
 * storage type in the tables. */
#include "host_gemm_engine.h"
#include "../half.h"

#include <string.h>

#define IDENTITY(x) (x)

#ifdef _OPENMP
#define SIMD _Pragma("omp simd")
#else
#define SIMD
#endif

/* binary16 <-> float with the bits of bk_f16_to_f32 and bk_f32_to_f16
 * (lib/half.h) but no branches, so that a row of them vectorises: each
 * class of input is computed and the right one kept by masks.
 * t/gemm/gemm_f16_values checks every binary16 input and, for output,
 * each binary16's neighbourhood (ties included); the output function was
 * also compared with bk_f32_to_f16 on all 2^32 floats. */

/* binary16 -> float:
 *   normal:     the exponent rebiased from 15 to 127 (+112 << 23);
 *   subnormal:  m * 2^-24 as (1 + m/1024) * 2^-14 - 2^-14, a difference of
 *               two normal floats, exact (no subnormal arithmetic, so no
 *               flush-to-zero mode can change it);
 *   inf or NaN: the exponent all ones, the mantissa kept. */
static inline float f16_to_f32(uint16_t h)
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
static inline uint16_t f32_to_f16(float f)
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

/* Panel layout in host_gemm_engine.h. The loop order follows the smaller
 * stride, so the source is read along its contiguous direction. */
#define DEFINE_PACK(NAME, T, STORAGE, TO)                                                 \
    static void pack_##NAME(const struct host_gemm_operand *op, int64_t b, int64_t r0,     \
                            int64_t rows, int64_t p0, int64_t kc, int R, void *dst_)       \
    {                                                                                      \
        T *dst = dst_;                                                                     \
        const STORAGE *base = (const STORAGE *)(const void *)op->base + b * op->batch_stride; \
        const int64_t rs = op->row_stride, cs = op->col_stride;                           \
        for (int64_t rb = 0; rb < rows; rb += R) {                                         \
            T *panel = dst + rb * kc;                                                      \
            int64_t live = op->rows - (r0 + rb);                                           \
            const int nr = live <= 0 ? 0 : live < R ? (int)live : R;                       \
            const STORAGE *src = base + (r0 + rb) * rs + p0 * cs;                          \
            if (cs <= rs) {                                                                \
                for (int r = 0; r < nr; r++)                                               \
                    for (int64_t p = 0; p < kc; p++)                                       \
                        panel[p * R + r] = TO(src[r * rs + p * cs]);                       \
            } else {                                                                       \
                for (int64_t p = 0; p < kc; p++)                                           \
                    for (int r = 0; r < nr; r++)                                           \
                        panel[p * R + r] = TO(src[r * rs + p * cs]);                       \
            }                                                                              \
            if (nr < R)                                                                    \
                for (int64_t p = 0; p < kc; p++)                                           \
                    for (int r = nr; r < R; r++)                                           \
                        panel[p * R + r] = 0;                                              \
        }                                                                                  \
    }

/* Strided row segments to and from the compute type; stores round to
 * nearest even (lib/half.h). Contiguous rows have their own loops, which
 * the compiler vectorises (the BLAS path converts whole panels by them). */
#define DEFINE_ROW_IO(NAME, T, STORAGE, TO, FROM)                                          \
    static void load_##NAME(const char *p, int64_t stride, int64_t n, void *out_)          \
    {                                                                                      \
        const STORAGE *src = (const STORAGE *)(const void *)p;                             \
        T *out = out_;                                                                     \
        if (stride == 1) {                                                                 \
            SIMD for (int64_t i = 0; i < n; i++)                                           \
                out[i] = TO(src[i]);                                                       \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = 0; i < n; i++)                                                    \
            out[i] = TO(src[i * stride]);                                                  \
    }                                                                                      \
    static void store_##NAME(char *p, int64_t stride, int64_t n, const void *in_)          \
    {                                                                                      \
        STORAGE *dst = (STORAGE *)(void *)p;                                               \
        const T *in = in_;                                                                 \
        if (stride == 1) {                                                                 \
            SIMD for (int64_t i = 0; i < n; i++)                                           \
                dst[i] = FROM(in[i]);                                                      \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = 0; i < n; i++)                                                    \
            dst[i * stride] = FROM(in[i]);                                                 \
    }

#define DEFINE_TYPE(NAME, T, STORAGE, TO, FROM)                                            \
    DEFINE_PACK(NAME, T, STORAGE, TO)                                                      \
    DEFINE_ROW_IO(NAME, T, STORAGE, TO, FROM)

DEFINE_TYPE(f32, float, float, IDENTITY, IDENTITY)
DEFINE_TYPE(f16, float, uint16_t, f16_to_f32, f32_to_f16)
DEFINE_TYPE(bf16, float, uint16_t, bk_bf16_to_f32, bk_f32_to_bf16)
DEFINE_TYPE(f64, double, double, IDENTITY, IDENTITY)

static const struct {
    const char *name;
    host_gemm_pack_fn pack;
    host_gemm_load_fn load;
    host_gemm_store_fn store;
} types[] = {
#define TYPE_ROW(NAME) { #NAME, pack_##NAME, load_##NAME, store_##NAME }
    [BK_DATA_TYPE_F32] = TYPE_ROW(f32),
    [BK_DATA_TYPE_F16] = TYPE_ROW(f16),
    [BK_DATA_TYPE_BF16] = TYPE_ROW(bf16),
    [BK_DATA_TYPE_F64] = TYPE_ROW(f64),
#undef TYPE_ROW
};

static bool known(BkDataType type)
{
    return (unsigned)type < sizeof types / sizeof types[0] && types[type].pack;
}

host_gemm_pack_fn host_gemm_dense_packer(BkDataType type)
{
    return known(type) ? types[type].pack : NULL;
}

host_gemm_load_fn host_gemm_row_loader(BkDataType type)
{
    return known(type) ? types[type].load : NULL;
}

host_gemm_store_fn host_gemm_row_storer(BkDataType type)
{
    return known(type) ? types[type].store : NULL;
}

const char *host_gemm_type_name(BkDataType type)
{
    return known(type) ? types[type].name : "?";
}
