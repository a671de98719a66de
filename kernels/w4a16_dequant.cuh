// SPDX-License-Identifier: Apache-2.0
// Marlin-layout int4 words to f16/bf16 pairs, shared by the W4A16 GEMM
// kernels (kernels/w4a16_gemm.cu, kernels/w4a16_wgmma.cu). Dequant<T>::run turns
// one 32-bit word of packed weights into four pairs: the B fragments
// {b0, b1} of an m16n8k16 tile's first 8 columns in r[0..1] and of its
// last 8 in r[2..3] (kernels/shared/w4a16_layout.h), each value q - 8 exactly.
// Shift-and-or into the exponent of a magic number, as Marlin does:
// (q | 0x6400) is 1024 + q in f16 and (q | 0x4300) 128 + q in bf16, so one
// subtraction gives q - 8; the kernels then multiply by the scale, which
// rounds (q - 8) * s once to A's type, as the host reference does.
// Zero points: run_zero subtracts 1024 + z (128 + z) instead, constants a
// kernel makes once per scale row (zero_constants), so q - z costs the
// same instructions; run passes the constants of z = 8 as immediates.
#ifndef BK_W4A16_DEQUANT_CUH
#define BK_W4A16_DEQUANT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace bk {
namespace w4a16 {

static __device__ __forceinline__ uint32_t or_mask(uint32_t w, uint32_t mask, uint32_t ex)
{
    uint32_t r;
    // (w & mask) | ex in one LOP3
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(w), "r"(mask), "r"(ex));
    return r;
}

template <typename T> struct Dequant;

// f16: nibbles 0 and 4 (bits 0-3, 16-19) are rows 2t, 2t+1 of the first
// 8 columns; nibbles 1 and 5 rows 2t+8, 2t+9 (taken in place, x 16, so
// scaled back by 1/16); >> 8 gives the same for the next 8 columns.
template <> struct Dequant<__half> {
    static constexpr bool HAS_FMA_ZERO = true; // run_zero takes z1 and z3
    static __device__ __forceinline__ uint32_t sub(uint32_t x, uint32_t y)
    {
        __half2 r = __hsub2(*reinterpret_cast<__half2 *>(&x), *reinterpret_cast<__half2 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ uint32_t fma(uint32_t x, uint32_t y, uint32_t z)
    {
        __half2 r = __hfma2(*reinterpret_cast<__half2 *>(&x), *reinterpret_cast<__half2 *>(&y),
                            *reinterpret_cast<__half2 *>(&z));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ uint32_t mul(uint32_t x, uint32_t y)
    {
        __half2 r = __hmul2(*reinterpret_cast<__half2 *>(&x), *reinterpret_cast<__half2 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    // z[0], z[1]: 1024 + z and -(64 + z) for the first 8 columns (rows 2t
    // + 8.. come x 16: (1024 + 16 q) / 16 - 64 - z); z[2], z[3] the next 8.
    static __device__ __forceinline__ void run_zero(uint32_t w, uint32_t r[4], uint32_t z0,
                                                    uint32_t z1, uint32_t z2, uint32_t z3)
    {
        const uint32_t ex = 0x64006400u, lo = 0x000f000fu, hi = 0x00f000f0u;
        const uint32_t k1_16 = 0x2c002c00u;
        const uint32_t w8 = w >> 8;
        r[0] = sub(or_mask(w, lo, ex), z0);
        r[1] = fma(or_mask(w, hi, ex), k1_16, z1);
        r[2] = sub(or_mask(w8, lo, ex), z2);
        r[3] = fma(or_mask(w8, hi, ex), k1_16, z3);
    }
    static __device__ __forceinline__ void run(uint32_t w, uint32_t r[4])
    {
        const uint32_t k1032 = 0x64086408u, km72 = 0xd480d480u;
        run_zero(w, r, k1032, km72, k1032, km72);
    }
    // The pair of constants of zero point z (0..15), in both halves.
    static __device__ __forceinline__ void zero_constants(uint32_t z, uint32_t &sub_k,
                                                          uint32_t &fma_k)
    {
        sub_k = (0x6400u + z) * 0x10001u;
        fma_k = (0xd400u + 16u * z) * 0x10001u;
    }
    // Half h (0 low, 1 high) of a pair, in F32.
    static __device__ __forceinline__ float to_float(uint32_t x, int h)
    {
        return __half2float(__ushort_as_half((unsigned short)(h ? x >> 16 : x & 0xffffu)));
    }
    // No raw form: 1024 + q would lose too much of F32's precision to the
    // subtraction of (1024 + z) times the sum of A (bf16's has 8 bits).
    static constexpr bool HAS_RAW = false;
    static __device__ __forceinline__ void raw(uint32_t, uint32_t[4]) {}
    static constexpr uint32_t ONES = 0x3c003c00u;
};

// bf16 has 7 mantissa bits: 128 + 16 q does not fit, so every nibble
// pair is shifted down to bits 0-3 / 16-19 first.
template <> struct Dequant<__nv_bfloat16> {
    static constexpr bool HAS_FMA_ZERO = false;
    static __device__ __forceinline__ uint32_t sub(uint32_t x, uint32_t y)
    {
        __nv_bfloat162 r = __hsub2(*reinterpret_cast<__nv_bfloat162 *>(&x),
                                   *reinterpret_cast<__nv_bfloat162 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ uint32_t mul(uint32_t x, uint32_t y)
    {
        __nv_bfloat162 r = __hmul2(*reinterpret_cast<__nv_bfloat162 *>(&x),
                                   *reinterpret_cast<__nv_bfloat162 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    // z0 (first 8 columns) and z2 (next 8): 128 + z; z1, z3 unused.
    static __device__ __forceinline__ void run_zero(uint32_t w, uint32_t r[4], uint32_t z0,
                                                    uint32_t, uint32_t z2, uint32_t)
    {
        const uint32_t ex = 0x43004300u, lo = 0x000f000fu;
        r[0] = sub(or_mask(w, lo, ex), z0);
        r[1] = sub(or_mask(w >> 4, lo, ex), z0);
        r[2] = sub(or_mask(w >> 8, lo, ex), z2);
        r[3] = sub(or_mask(w >> 12, lo, ex), z2);
    }
    static __device__ __forceinline__ void run(uint32_t w, uint32_t r[4])
    {
        const uint32_t k136 = 0x43084308u;
        run_zero(w, r, k136, 0u, k136, 0u);
    }
    static __device__ __forceinline__ void zero_constants(uint32_t z, uint32_t &sub_k,
                                                          uint32_t &fma_k)
    {
        sub_k = (0x4300u + z) * 0x10001u;
        fma_k = 0u;
    }
    static __device__ __forceinline__ float to_float(uint32_t x, int h)
    {
        return __uint_as_float(h ? x & 0xffff0000u : x << 16);
    }
    // The word's pairs as 128 + q, exact (run's order, no subtraction): a
    // kernel that sums a group's products subtracts (128 + z) times the
    // sum of A's values once (the tiles of 8 rows, kernels/w4a16_gemm.cu).
    static constexpr bool HAS_RAW = true;
    static __device__ __forceinline__ void raw(uint32_t w, uint32_t r[4])
    {
        const uint32_t ex = 0x43004300u, lo = 0x000f000fu;
        r[0] = or_mask(w, lo, ex);
        r[1] = or_mask(w >> 4, lo, ex);
        r[2] = or_mask(w >> 8, lo, ex);
        r[3] = or_mask(w >> 12, lo, ex);
    }
    static constexpr uint32_t ONES = 0x3f803f80u; // 1 in both halves
};

} // namespace w4a16
} // namespace bk

#endif // BK_W4A16_DEQUANT_CUH
