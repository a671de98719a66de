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
    static __device__ __forceinline__ void run(uint32_t w, uint32_t r[4])
    {
        const uint32_t ex = 0x64006400u, lo = 0x000f000fu, hi = 0x00f000f0u;
        const uint32_t k1032 = 0x64086408u, k1_16 = 0x2c002c00u, km72 = 0xd480d480u;
        const uint32_t w8 = w >> 8;
        r[0] = sub(or_mask(w, lo, ex), k1032);
        r[1] = fma(or_mask(w, hi, ex), k1_16, km72);
        r[2] = sub(or_mask(w8, lo, ex), k1032);
        r[3] = fma(or_mask(w8, hi, ex), k1_16, km72);
    }
};

// bf16 has 7 mantissa bits: 128 + 16 q does not fit, so every nibble
// pair is shifted down to bits 0-3 / 16-19 first.
template <> struct Dequant<__nv_bfloat16> {
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
    static __device__ __forceinline__ void run(uint32_t w, uint32_t r[4])
    {
        const uint32_t ex = 0x43004300u, lo = 0x000f000fu, k136 = 0x43084308u;
        r[0] = sub(or_mask(w, lo, ex), k136);
        r[1] = sub(or_mask(w >> 4, lo, ex), k136);
        r[2] = sub(or_mask(w >> 8, lo, ex), k136);
        r[3] = sub(or_mask(w >> 12, lo, ex), k136);
    }
};

} // namespace w4a16
} // namespace bk

#endif // BK_W4A16_DEQUANT_CUH
