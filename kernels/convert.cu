// SPDX-License-Identifier: Apache-2.0
// Module convert: type conversion (bk-convert(7)), the rules of the host
// backend (lib/host/host_convert.c) bit for bit. Pairs of F32, F16, BF16
// and F64 have a kernel each, on two paths: vec moves V elements per
// access (V = 16 bytes / the larger element size) where both tensors are
// contiguous innermost, strided one element. Pairs with an integer type
// share one strided kernel that switches on the types at run time (the
// switch is uniform across the grid). Values widen exactly (NaN payloads
// kept) and round once, to nearest even.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "convert_args.h"
#include "convert_round.h"
#include "element_types.cuh"

namespace bk {

// The BkDataType values of the generic kernel's switch (bk_core.h).
enum { F32 = 1, F16 = 2, BF16 = 3, F64 = 4, I32 = 5, U16 = 6, U8 = 7, I8 = 8, U32 = 9 };

// ---- Widening, exact --------------------------------------------------
static __device__ __forceinline__ float to_float(float v) { return v; }
static __device__ __forceinline__ float to_float(__half v)
{
    const uint32_t h = __half_as_ushort(v);
    if ((h & 0x7C00u) == 0x7C00u)  // infinity or NaN, payload kept
        return __uint_as_float(((h & 0x8000u) << 16) | 0x7F800000u | ((h & 0x3FFu) << 13));
    return __half2float(v);
}
static __device__ __forceinline__ float to_float(__nv_bfloat16 v)
{
    return __uint_as_float((uint32_t)__bfloat16_as_ushort(v) << 16);
}

static __device__ __forceinline__ double float_to_double(float f)
{
    return __longlong_as_double((long long)bk_convert_f32_bits_to_f64_bits(__float_as_uint(f)));
}
template <typename T> static __device__ __forceinline__ double to_double(T v)
{
    return float_to_double(to_float(v));
}
template <> __device__ __forceinline__ double to_double<double>(double v) { return v; }

// ---- Rounding, once ---------------------------------------------------
template <typename T> static __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x)
{
    const uint32_t u = __float_as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)  // NaN: quiet, the top of its payload
        return __ushort_as_half((unsigned short)(((u >> 16) & 0x8000u) | 0x7E00u |
                                                 ((u >> 13) & 0x3FFu)));
    return __float2half_rn(x);
}
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x)
{
    const uint32_t u = __float_as_uint(x);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return __ushort_as_bfloat16((unsigned short)((u >> 16) | 0x40u));
    return __float2bfloat16_rn(x);
}

template <typename T> static __device__ __forceinline__ T from_double(double d);
template <> __device__ __forceinline__ double from_double<double>(double d) { return d; }
template <> __device__ __forceinline__ float from_double<float>(double d)
{
    return __uint_as_float(bk_round_f64_bits((uint64_t)__double_as_longlong(d), 23, 8));
}
template <> __device__ __forceinline__ __half from_double<__half>(double d)
{
    return __ushort_as_half(bk_convert_f64_to_f16(d));
}
template <> __device__ __forceinline__ __nv_bfloat16 from_double<__nv_bfloat16>(double d)
{
    return __ushort_as_bfloat16(bk_convert_f64_to_bf16(d));
}

// One element: through float where both types are exact there, else
// through double; the same type copies the bits.
template <typename I, typename O> struct Convert {
    static __device__ __forceinline__ O op(I v) { return from_double<O>(to_double(v)); }
};
#define BK_CONVERT_VIA_FLOAT(I, O) \
    template <> struct Convert<I, O> { \
        static __device__ __forceinline__ O op(I v) { return from_float<O>(to_float(v)); } \
    };
BK_CONVERT_VIA_FLOAT(float, __half)
BK_CONVERT_VIA_FLOAT(float, __nv_bfloat16)
BK_CONVERT_VIA_FLOAT(__half, float)
BK_CONVERT_VIA_FLOAT(__half, __nv_bfloat16)
BK_CONVERT_VIA_FLOAT(__nv_bfloat16, float)
BK_CONVERT_VIA_FLOAT(__nv_bfloat16, __half)
template <typename T> struct Convert<T, T> {
    static __device__ __forceinline__ T op(T v) { return v; }  // a register copy: bits kept
};

// ---- Index arithmetic -------------------------------------------------
static __device__ __forceinline__ uint64_t fastdiv(uint64_t n, uint64_t magic, uint32_t shift)
{
    return (__umul64hi(n, magic) + n) >> shift;
}

// Element offsets of item i in the input and the output.
static __device__ __forceinline__ void offsets(const bk_convert_args &p, uint64_t i, int64_t &io,
                                               int64_t &oo)
{
    io = oo = 0;
    for (int d = (int)p.rank - 1; d > 0; d--) {
        const bk_convert_dim &dim = p.dim[d];
        const uint64_t q = fastdiv(i, dim.magic, dim.shift);
        const int64_t r = (int64_t)(i - q * dim.extent);
        io += r * dim.in_stride;
        oo += r * dim.out_stride;
        i = q;
    }
    io += (int64_t)i * p.dim[0].in_stride;
    oo += (int64_t)i * p.dim[0].out_stride;
}

template <int BYTES> struct Raw;
template <> struct Raw<16> { typedef uint4 type; };
template <> struct Raw<8> { typedef uint2 type; };
template <> struct Raw<4> { typedef unsigned int type; };
template <> struct Raw<2> { typedef unsigned short type; };
template <> struct Raw<1> { typedef unsigned char type; };

// ---- The kernel bodies ------------------------------------------------
// Each thread takes U items per step, BK_CONVERT_BLOCK apart so that a
// warp's accesses are contiguous, loading all before the first store;
// blocks stride over the items.
template <typename I, typename O, int V>
static __device__ __forceinline__ void convert(const bk_convert_args &p)
{
    constexpr int U = BK_CONVERT_UNROLL;
    typedef typename Raw<sizeof(I) * V>::type RI;
    typedef typename Raw<sizeof(O) * V>::type RO;
    const I *in = reinterpret_cast<const I *>(p.in);
    O *out = reinterpret_cast<O *>(p.out);
    const uint64_t step = (uint64_t)BK_CONVERT_BLOCK * U;
    grid_dependency_wait();
    for (uint64_t base = (uint64_t)blockIdx.x * step; base < p.count;
         base += (uint64_t)gridDim.x * step) {
        union { RI raw; I e[V]; } a[U];
        int64_t oo[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint64_t i = base + threadIdx.x + (uint64_t)u * BK_CONVERT_BLOCK;
            if (i < p.count) {
                int64_t io;
                offsets(p, i, io, oo[u]);
                a[u].raw = *reinterpret_cast<const RI *>(in + io);
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint64_t i = base + threadIdx.x + (uint64_t)u * BK_CONVERT_BLOCK;
            if (i >= p.count)
                continue;
            union { RO raw; O e[V]; } b;
#pragma unroll
            for (int j = 0; j < V; j++)
                b.e[j] = Convert<I, O>::op(a[u].e[j]);
            *reinterpret_cast<RO *>(out + oo[u]) = b.raw;
        }
    }
}

// The integer pairs: one element through double, types read at run time.
static __device__ __forceinline__ double load_any(const char *p, uint32_t type)
{
    switch (type) {
    case F32: return to_double(*reinterpret_cast<const float *>(p));
    case F16: return to_double(*reinterpret_cast<const __half *>(p));
    case BF16: return to_double(*reinterpret_cast<const __nv_bfloat16 *>(p));
    case F64: return *reinterpret_cast<const double *>(p);
    case I32: return (double)*reinterpret_cast<const int32_t *>(p);
    case U32: return (double)*reinterpret_cast<const uint32_t *>(p);
    case U16: return (double)*reinterpret_cast<const uint16_t *>(p);
    case I8: return (double)*reinterpret_cast<const int8_t *>(p);
    default: return (double)*reinterpret_cast<const uint8_t *>(p);
    }
}

static __device__ __forceinline__ void store_any(char *p, uint32_t type, double d)
{
    switch (type) {
    case F32: *reinterpret_cast<float *>(p) = from_double<float>(d); break;
    case F16: *reinterpret_cast<__half *>(p) = from_double<__half>(d); break;
    case BF16: *reinterpret_cast<__nv_bfloat16 *>(p) = from_double<__nv_bfloat16>(d); break;
    case F64: *reinterpret_cast<double *>(p) = d; break;
    case I32:
        *reinterpret_cast<int32_t *>(p) =
            (int32_t)bk_convert_f64_to_integer(d, -2147483648.0, 2147483647.0);
        break;
    case U32:
        *reinterpret_cast<uint32_t *>(p) = (uint32_t)bk_convert_f64_to_integer(d, 0.0, 4294967295.0);
        break;
    case U16: *reinterpret_cast<uint16_t *>(p) = (uint16_t)bk_convert_f64_to_integer(d, 0.0, 65535.0); break;
    case I8: *reinterpret_cast<int8_t *>(p) = (int8_t)bk_convert_f64_to_integer(d, -128.0, 127.0); break;
    default: *reinterpret_cast<uint8_t *>(p) = (uint8_t)bk_convert_f64_to_integer(d, 0.0, 255.0); break;
    }
}

static __device__ __forceinline__ uint32_t type_size(uint32_t type)
{
    return type == F64 ? 8 : type == F32 || type == I32 || type == U32 ? 4
           : type == I8 || type == U8 ? 1 : 2;
}

static __device__ __forceinline__ void convert_any(const bk_convert_args &p)
{
    const char *in = reinterpret_cast<const char *>(p.in);
    char *out = reinterpret_cast<char *>(p.out);
    const int64_t ies = type_size(p.in_type), oes = type_size(p.out_type);
    grid_dependency_wait();
    for (uint64_t i = (uint64_t)blockIdx.x * BK_CONVERT_BLOCK + threadIdx.x; i < p.count;
         i += (uint64_t)gridDim.x * BK_CONVERT_BLOCK) {
        int64_t io, oo;
        offsets(p, i, io, oo);
        store_any(out + oo * oes, p.out_type, load_any(in + io * ies, p.in_type));
    }
}

}  // namespace bk

// ---- Entry points ----------------------------------------------------
// bk_convert_<in>_<out>_<vec|strided>, the names the launcher
// (lib/cuda/cuda_convert.c) builds, and bk_convert_any_strided.
#define BK_CONVERT_MAX(a, b) ((a) > (b) ? (a) : (b))
#define BK_CONVERT_ENTRY(iname, I, oname, O)                                                  \
    extern "C" __global__ void __launch_bounds__(BK_CONVERT_BLOCK)                            \
        bk_convert_##iname##_##oname##_vec(const __grid_constant__ bk_convert_args p)         \
    {                                                                                         \
        bk::convert<I, O, 16 / BK_CONVERT_MAX(sizeof(I), sizeof(O))>(p);                      \
    }                                                                                         \
    extern "C" __global__ void __launch_bounds__(BK_CONVERT_BLOCK)                            \
        bk_convert_##iname##_##oname##_strided(const __grid_constant__ bk_convert_args p)     \
    {                                                                                         \
        bk::convert<I, O, 1>(p);                                                              \
    }
#define BK_CONVERT_TO(X, iname, I) \
    X(iname, I, f32, float)        \
    X(iname, I, f16, __half)       \
    X(iname, I, bf16, __nv_bfloat16) \
    X(iname, I, f64, double)
BK_CONVERT_TO(BK_CONVERT_ENTRY, f32, float)
BK_CONVERT_TO(BK_CONVERT_ENTRY, f16, __half)
BK_CONVERT_TO(BK_CONVERT_ENTRY, bf16, __nv_bfloat16)
BK_CONVERT_TO(BK_CONVERT_ENTRY, f64, double)

extern "C" __global__ void __launch_bounds__(BK_CONVERT_BLOCK)
    bk_convert_any_strided(const __grid_constant__ bk_convert_args p)
{
    bk::convert_any(p);
}
