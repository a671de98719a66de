// SPDX-License-Identifier: Apache-2.0
// The half types' forward and backward on contiguous rows, in few
// instructions per element: on an H200 the generic body (gated_common.cuh)
// held the f16 and bf16 forward at 88-97% of the copy bandwidth, bound by
// instruction issue, not by bytes in flight (bench/log/gated.md). What is
// cut here:
// - conversions on whole 32-bit words: a bf16 pair to floats is a shift and
//   a mask, an f16 pair two HADD2.F32, the result pair one F2FP (cvt.rn
//   .bf16x2.f32 / .f16x2.f32);
// - forward, the Fast policy's math (gated_common.cuh) with b Phi(b) as
//   max(b, 0) - |b| Phi(-|b|) without the select of h or 1 - h, and
//   GeGLU-tanh's exponent in three operations; backward, the kinds'
//   gate() as the generic kernel has it;
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

// da = dy gate(b), db = dy a gate'(b) per kind, in float: as the generic
// kernel computes them (gated_common.cuh).
template <class Kind, class M> struct Backward {
    static __device__ __forceinline__ void dx(float a, float b, float dy, float &da, float &db)
    {
        float d, g = Kind::template gate<M>(b, d);
        da = dy * g;
        db = dy * a * d;
    }
};

// The k-th 32-bit word of a 16-byte item (k a constant once unrolled).
static __device__ __forceinline__ uint32_t word(const uint4 &v, int k)
{
    return k == 0 ? v.x : k == 1 ? v.y : k == 2 ? v.z : v.w;
}
static __device__ __forceinline__ void set_word(uint4 &v, int k, uint32_t w)
{
    if (k == 0)
        v.x = w;
    else if (k == 1)
        v.y = w;
    else if (k == 2)
        v.z = w;
    else
        v.w = w;
}

// One 16-byte item, two elements of each 32-bit word at a time: forward
// y from a and b; backward da and db from a, b and dy (in y).
template <class Kind, typename T, bool BWD>
static __device__ __forceinline__ void item(const uint4 &a, const uint4 &b, uint4 &y, uint4 &da,
                                            uint4 &db)
{
    typedef Pair<T> P;
    typedef typename MathFor<T>::M M;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t wa = word(a, k), wb = word(b, k);
        if (BWD) {
            const uint32_t wg = word(y, k);
            float da0, db0, da1, db1;
            Backward<Kind, M>::dx(P::lo(wa), P::lo(wb), P::lo(wg), da0, db0);
            Backward<Kind, M>::dx(P::hi(wa), P::hi(wb), P::hi(wg), da1, db1);
            set_word(da, k, P::pack(da0, da1));
            set_word(db, k, P::pack(db0, db1));
        } else {
            set_word(y, k, P::pack(Forward<Kind, M>::y(P::lo(wa), P::lo(wb)),
                                   Forward<Kind, M>::y(P::hi(wa), P::hi(wb))));
        }
    }
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

// Where a step's items are: a and b in x, y (forward, written) or dy
// (backward, read), da and db in dx (backward).
struct Items {
    const uint4 *a, *b;
    uint4 *y, *da, *db;
};

// The first n of U items, BK_GATED_BLOCK apart (a warp's accesses
// contiguous), all loads issued before the first use. n = U where the
// whole step lies in the row: no checks then.
template <class Kind, typename T, int U, bool L2, bool BWD>
static __device__ __forceinline__ void step(const Items &at, uint64_t c, int n)
{
    uint4 a[U], b[U], y[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (u < n) {
            const uint64_t i = c + u * BK_GATED_BLOCK;
            a[u] = load<L2>(at.a + i);
            b[u] = load<L2>(at.b + i);
            if (BWD)
                y[u] = load<L2>(at.y + i);
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (u < n) {
            const uint64_t i = c + u * BK_GATED_BLOCK;
            uint4 da, db;
            item<Kind, T, BWD>(a[u], b[u], y[u], da, db);
            if (BWD) {
                at.da[i] = da;
                at.db[i] = db;
            } else {
                at.y[i] = y[u];
            }
        }
    }
}

// The grid of rows (gated_kernel_args.h, p.grid_rows): blocks along y
// stride over the rows, along x over a row's 16-byte items.
template <class Kind, typename T, int U, bool L2, bool BWD>
static __device__ __forceinline__ void walk(const bk_gated_args &p)
{
    grid_dependency_wait();
    const bool two = p.rank == 2;
    const uint64_t rows = two ? p.dim[0].extent : 1, items = p.dim[p.rank - 1].extent;
    const int64_t size = (int64_t)sizeof(T);
    const int64_t x_row = two ? p.dim[0].x_stride * size : 0;
    const int64_t y_row = two ? p.dim[0].y_stride * size : 0;
    const int64_t dx_row = BWD && two ? p.dim[0].dx_stride * size : 0;
    const uint64_t first = (uint64_t)blockIdx.x * (BK_GATED_BLOCK * U) + threadIdx.x;
    const uint64_t stride = (uint64_t)gridDim.x * (BK_GATED_BLOCK * U);
    for (uint64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const char *x = reinterpret_cast<const char *>(p.x) + (int64_t)r * x_row;
        char *dx = BWD ? reinterpret_cast<char *>(p.dx) + (int64_t)r * dx_row : nullptr;
        const Items at = {
            reinterpret_cast<const uint4 *>(x),
            reinterpret_cast<const uint4 *>(x + p.x_gate * size),
            reinterpret_cast<uint4 *>(reinterpret_cast<char *>(p.y) + (int64_t)r * y_row),
            reinterpret_cast<uint4 *>(dx),
            reinterpret_cast<uint4 *>(BWD ? dx + p.dx_gate * size : nullptr),
        };
        uint64_t c = first;
        for (; c + (U - 1) * BK_GATED_BLOCK < items; c += stride)
            step<Kind, T, U, L2, BWD>(at, c, U);
        if (c < items)  // the row's last, partial step: at most one a thread
            step<Kind, T, U, L2, BWD>(at, c,
                                      (int)((items - c + BK_GATED_BLOCK - 1) / BK_GATED_BLOCK));
    }
}

}  // namespace packed
}  // namespace bk

// bk_gated_<fwd|bwd>_<kind>_<type>_packed and _packed_l2 (the loads with an
// L2 prefetch), for f16 and bf16: two items a thread per step. Registers
// bounded for 6 blocks an SM forward (40), 4 backward (64; 5 spill): no
// spills, and on sm_90 the same instructions as without the bound.
#define BK_GATED_PACKED_UNROLL 2
#define BK_GATED_PACKED_ENTRY(dir, BWD, blocks, kname, Kind, tname, T, suffix, L2)          \
    extern "C" __global__ void __launch_bounds__(BK_GATED_BLOCK, blocks)                     \
        bk_gated_##dir##_##kname##_##tname##_packed##suffix(                                 \
            const __grid_constant__ bk_gated_args p)                                        \
    {                                                                                        \
        bk::packed::walk<Kind, T, BK_GATED_PACKED_UNROLL, L2, BWD>(p);                       \
    }
#define BK_GATED_PACKED_FORWARD(kname, Kind, tname, T)                      \
    BK_GATED_PACKED_ENTRY(fwd, false, 6, kname, Kind, tname, T, , false)    \
    BK_GATED_PACKED_ENTRY(fwd, false, 6, kname, Kind, tname, T, _l2, true)
#define BK_GATED_PACKED_BACKWARD(kname, Kind, tname, T)                     \
    BK_GATED_PACKED_ENTRY(bwd, true, 4, kname, Kind, tname, T, , false)     \
    BK_GATED_PACKED_ENTRY(bwd, true, 4, kname, Kind, tname, T, _l2, true)

#endif  // BK_GATED_PACKED_CUH
