// SPDX-License-Identifier: Apache-2.0
// The half types' forward on contiguous rows, in few instructions per
// element: on an H200 the generic body (gated_common.cuh) held f16 and
// bf16 at 88-97% of the copy bandwidth, bound by instruction issue, not
// by bytes in flight (bench/log/gated.md). What is cut here:
// - conversions on whole 32-bit words: a bf16 pair to floats is a shift and
//   a mask, an f16 pair two HADD2.F32, the result pair one F2FP (cvt.rn
//   .bf16x2.f32 / .f16x2.f32);
// - the Fast policy's math (gated_common.cuh), b Phi(b) as
//   max(b, 0) - |b| Phi(-|b|) without the select of h or 1 - h, and
//   GeGLU-tanh's exponent in three operations;
// - items found by pointers into the row, U per thread per step at fixed
//   distances, and bounds checked once per step where a step fits.
#ifndef BK_GATED_PACKED_CUH
#define BK_GATED_PACKED_CUH

#include "gated_common.cuh"

namespace bk {
namespace packed {

// Two 16-bit values in one 32-bit word (the lower one first in memory)
// to floats and back, rounding to nearest even.
template <typename T> struct Pair;
template <> struct Pair<__nv_bfloat16> {
    static __device__ __forceinline__ float lo(uint32_t w) { return __uint_as_float(w << 16); }
    static __device__ __forceinline__ float hi(uint32_t w)
    {
        return __uint_as_float(w & 0xffff0000u);
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        uint32_t w;
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
        return w;
    }
};
template <> struct Pair<__half> {
    static __device__ __forceinline__ float lo(uint32_t w)
    {
        return __half2float(__ushort_as_half((unsigned short)(w & 0xffffu)));
    }
    static __device__ __forceinline__ float hi(uint32_t w)
    {
        return __half2float(__ushort_as_half((unsigned short)(w >> 16)));
    }
    static __device__ __forceinline__ uint32_t pack(float lo, float hi)
    {
        uint32_t w;
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
        return w;
    }
};

// The forward value a * gate(b) per kind, in float: the kinds' gate()
// (gated_common.cuh), and for the Fast policy the same functions in fewer
// instructions.
template <class Kind, class M> struct Forward {
    static __device__ __forceinline__ float y(float a, float b)
    {
        float d;
        return a * Kind::template gate<M>(b, d);
    }
};
template <> struct Forward<Glu, Fast> {
    static __device__ __forceinline__ float y(float a, float b) { return a * Fast::sigmoid(b); }
};
template <> struct Forward<Reglu, Fast> {  // max(b, 0) of a NaN b is 0, as b > 0 ? b : 0
    static __device__ __forceinline__ float y(float a, float b) { return a * fmaxf(b, 0.0f); }
};
template <> struct Forward<Swiglu, Fast> {
    static __device__ __forceinline__ float y(float a, float b)
    {
        return a * (b * Fast::sigmoid(b));
    }
};
// b Phi(b) = max(b, 0) - |b| h with h = Phi(-|b|): b h for b < 0,
// b (1 - h) otherwise, in one rounding. |b| is capped at 2^64 (where h is
// 0) so that b = +inf gives +inf, not inf * 0.
template <> struct Forward<Geglu, Fast> {
    static __device__ __forceinline__ float y(float a, float b)
    {
        if (!BK_GATED_FAST_PHI)
            return a * (b * Fast::phi(b));
        const float h = Fast::phi_left(b);
        return a * fmaf(-fminf(fabsf(b), 0x1p64f), h, fmaxf(b, 0.0f));
    }
};
// b sigmoid(2u), 2u = 2 sqrt(2/pi) (b + 0.044715 b^3), with the exponent
// -2u log2(e) as b (c1 + c3 b^2).
template <> struct Forward<GegluTanh, Fast> {
    static __device__ __forceinline__ float y(float a, float b)
    {
        const float c1 = (float)(-2.0 * BK_SQRT_2_OVER_PI * BK_LOG2E);
        const float c3 = (float)(-2.0 * BK_SQRT_2_OVER_PI * BK_LOG2E * BK_GELU_TANH_C);
        return a * (b * Fast::rcp(1.0f + Fast::ex2(b * fmaf(c3, b * b, c1))));
    }
};

// y for the two elements of each 32-bit word of a 16-byte item.
template <class Kind, typename T>
static __device__ __forceinline__ uint4 item(const uint4 &a, const uint4 &b)
{
    typedef Pair<T> P;
    typedef Forward<Kind, typename MathFor<T>::M> F;
    uint4 y;
    y.x = P::pack(F::y(P::lo(a.x), P::lo(b.x)), F::y(P::hi(a.x), P::hi(b.x)));
    y.y = P::pack(F::y(P::lo(a.y), P::lo(b.y)), F::y(P::hi(a.y), P::hi(b.y)));
    y.z = P::pack(F::y(P::lo(a.z), P::lo(b.z)), F::y(P::hi(a.z), P::hi(b.z)));
    y.w = P::pack(F::y(P::lo(a.w), P::lo(b.w)), F::y(P::hi(a.w), P::hi(b.w)));
    return y;
}

// A 16-byte load: plain, or with L2 (L2 true) the non-coherent path with
// a 256-byte L2 prefetch and no L1 allocation, for every byte is read once.
template <bool L2> static __device__ __forceinline__ uint4 load(const uint4 *p)
{
    if (!L2)
        return *p;
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// The first n of U items, BK_GATED_BLOCK apart (a warp's accesses
// contiguous), all loads issued before the first use. n = U where the
// whole step lies in the row: no checks then.
template <class Kind, typename T, int U, bool L2>
static __device__ __forceinline__ void step(const uint4 *xa, const uint4 *xb, uint4 *y, int n)
{
    uint4 a[U], b[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (u < n) {
            a[u] = load<L2>(xa + u * BK_GATED_BLOCK);
            b[u] = load<L2>(xb + u * BK_GATED_BLOCK);
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++)
        if (u < n)
            y[u * BK_GATED_BLOCK] = item<Kind, T>(a[u], b[u]);
}

// The grid of rows (gated_kernel_args.h, p.grid_rows): blocks along y
// stride over the rows, along x over a row's 16-byte items.
template <class Kind, typename T, int U, bool L2>
static __device__ __forceinline__ void forward(const bk_gated_args &p)
{
    grid_dependency_wait();
    const bool two = p.rank == 2;
    const uint64_t rows = two ? p.dim[0].extent : 1, items = p.dim[p.rank - 1].extent;
    const int64_t x_row = two ? p.dim[0].x_stride * (int64_t)sizeof(T) : 0;
    const int64_t y_row = two ? p.dim[0].y_stride * (int64_t)sizeof(T) : 0;
    const int64_t gate = p.x_gate * (int64_t)sizeof(T);
    const uint64_t first = (uint64_t)blockIdx.x * (BK_GATED_BLOCK * U) + threadIdx.x;
    const uint64_t stride = (uint64_t)gridDim.x * (BK_GATED_BLOCK * U);
    for (uint64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const char *x = reinterpret_cast<const char *>(p.x) + (int64_t)r * x_row;
        const uint4 *xa = reinterpret_cast<const uint4 *>(x);
        const uint4 *xb = reinterpret_cast<const uint4 *>(x + gate);
        uint4 *y = reinterpret_cast<uint4 *>(reinterpret_cast<char *>(p.y) + (int64_t)r * y_row);
        uint64_t c = first;
        for (; c + (U - 1) * BK_GATED_BLOCK < items; c += stride)
            step<Kind, T, U, L2>(xa + c, xb + c, y + c, U);
        if (c < items)  // the row's last, partial step: at most one a thread
            step<Kind, T, U, L2>(xa + c, xb + c, y + c,
                             (int)((items - c + BK_GATED_BLOCK - 1) / BK_GATED_BLOCK));
    }
}

}  // namespace packed
}  // namespace bk

// bk_gated_fwd_<kind>_<type>_packed and _packed_l2 (the loads with an L2
// prefetch), for f16 and bf16: two items a thread per step, at most 40
// registers (6 blocks an SM; no spills, the same instructions as without
// the bound on sm_90).
#define BK_GATED_PACKED_UNROLL 2
#define BK_GATED_PACKED_MIN_BLOCKS 6
#define BK_GATED_PACKED_ENTRY(kname, Kind, tname, T, suffix, L2)                                  \
    extern "C" __global__ void __launch_bounds__(BK_GATED_BLOCK, BK_GATED_PACKED_MIN_BLOCKS)      \
        bk_gated_fwd_##kname##_##tname##_packed##suffix(const __grid_constant__ bk_gated_args p) \
    {                                                                                             \
        bk::packed::forward<Kind, T, BK_GATED_PACKED_UNROLL, L2>(p);                              \
    }
#define BK_GATED_PACKED_ENTRIES(kname, Kind, tname, T)    \
    BK_GATED_PACKED_ENTRY(kname, Kind, tname, T, , false) \
    BK_GATED_PACKED_ENTRY(kname, Kind, tname, T, _l2, true)

#endif  // BK_GATED_PACKED_CUH
