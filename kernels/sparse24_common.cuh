// SPDX-License-Identifier: Apache-2.0
// What the 2:4 sparse kernels share: element types and their compute type,
// the wait for the previous grid, and the GEMM epilogue.
#ifndef BK_SPARSE24_COMMON_CUH
#define BK_SPARSE24_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <string.h>

#include "element_types.cuh"
#include "shared_memory_ops.cuh"
#include "sparse24_args.h"

// Device functions that host-side checks also run: the per-item code of
// the conversions always; with BK_SP24_EMULATION defined (a host program
// that emulates the PTX primitives, kernels/sparse24_mma.cu) the GEMM's too.
#define BK_SP24_HD __host__ __device__ __forceinline__
#ifdef BK_SP24_EMULATION
#define BK_SP24_DEV static __host__ __device__ inline
#else
#define BK_SP24_DEV static __device__ __forceinline__
#endif

namespace bk_sp24 {

// ---- Element types: libbk's storage traits (element_types.cuh) --------------
template <typename T> using Elem = bk::Storage<T>;

using bk::grid_dependency_wait;

// ---- GEMM epilogue ------------------------------------------------------------
// act(alpha * acc + beta * c + bias) in f32, each operation rounded on its
// own (no contraction into fused multiply-adds), in the host backend's order.
// Single roundings (no contraction into fused multiply-adds).
BK_SP24_DEV float mul_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
BK_SP24_DEV float add_rn(float a, float b)
{
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
BK_SP24_DEV float rcp_rn(float a)
{
#ifdef __CUDA_ARCH__
    return __frcp_rn(a);
#else
    return 1.0f / a;
#endif
}

#define BK_SP24_SQRT_2_OVER_PI 0.79788456080286535587989211986876
#define BK_SP24_GELU_C 0.044715f

BK_SP24_DEV float activate(float x, uint32_t activation)
{
    if (activation == 1)  // RELU, keeping NaN
        return x < 0.0f ? 0.0f : x;
    if (activation == 2) {  // GELU_TANH as x sigmoid(2 u): no cancellation for u < 0
        const float cube = mul_rn(mul_rn(mul_rn(BK_SP24_GELU_C, x), x), x);
        const float t = mul_rn((float)(2.0 * BK_SP24_SQRT_2_OVER_PI), add_rn(x, cube));
        const float e = expf(-fabsf(t));
        const float r = rcp_rn(add_rn(1.0f, e));
        return mul_rn(x, t >= 0.0f ? r : mul_rn(e, r));
    }
    return x;
}

// The value of Y[b, n, m] from the product acc of (n, m).
template <typename O>
BK_SP24_DEV float output_value(const bk_sp24_gemm_args &p, int64_t b, int64_t n, int64_t m,
                               float acc)
{
    float v = mul_rn(p.alpha, acc);
    if (p.flags & BK_SP24_READ_C) {
        const O *c = reinterpret_cast<const O *>(p.c) + b * p.c_bs + n * p.c_rs + m * p.c_cs;
        v = add_rn(v, mul_rn(p.beta, Elem<O>::in(*c)));
    }
    if (p.flags & BK_SP24_BIAS)
        v = add_rn(v, Elem<O>::in(reinterpret_cast<const O *>(p.bias)[m]));
    return activate(v, p.activation);
}

template <typename O>
BK_SP24_DEV void store_output(const bk_sp24_gemm_args &p, int64_t b, int64_t n, int64_t m,
                              float acc)
{
    O *y = reinterpret_cast<O *>(p.y) + b * p.y_bs + n * p.y_rs + m * p.y_cs;
    *y = Elem<O>::out(output_value<O>(p, b, n, m, acc));
}

// Sixteen bytes at y (global, 16-byte aligned) in one store: spelled out,
// as nvcc splits a uint4 store through a cast pointer into four.
BK_SP24_DEV void store16(void *y, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
#ifdef __CUDA_ARCH__
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(y), "r"(a), "r"(b), "r"(c),
                 "r"(d)
                 : "memory");
#else
    const uint32_t w[4] = { a, b, c, d };
    memcpy(y, w, sizeof w);
#endif
}

BK_SP24_DEV uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

// Eight outputs as 16 bytes (2-byte types) or 32 (f32) at y, 16-byte aligned.
BK_SP24_DEV void store8(float *y, const float (&v)[8])
{
    store16(y, float_bits(v[0]), float_bits(v[1]), float_bits(v[2]), float_bits(v[3]));
    store16(y + 4, float_bits(v[4]), float_bits(v[5]), float_bits(v[6]), float_bits(v[7]));
}
// Two values rounded to the 16-bit O in one word, lo in the low half.
template <typename O> BK_SP24_DEV uint32_t pack2(float lo, float hi)
{
    const O l = Elem<O>::out(lo), h = Elem<O>::out(hi);
    return (uint32_t)*reinterpret_cast<const uint16_t *>(&l) |
           (uint32_t)*reinterpret_cast<const uint16_t *>(&h) << 16;
}
template <typename O> BK_SP24_DEV void store8(O *y, const float (&v)[8])
{
    store16(y, pack2<O>(v[0], v[1]), pack2<O>(v[2], v[3]), pack2<O>(v[4], v[5]),
            pack2<O>(v[6], v[7]));
}

// A BM x BN tile of f32 products in shared memory (out[n * pitch + m],
// tile-local) to Y, threads consecutive ones along Y's unit-stride
// dimension (BK_SP24_Y_N_FAST: n, else m) so that a warp's stores are
// contiguous; thread tid of threads.
template <typename O, int BM, int BN>
BK_SP24_DEV void store_tile(const bk_sp24_gemm_args &p, int64_t b, int64_t m0, int64_t n0,
                            const float *out, int pitch, uint32_t tid, uint32_t threads)
{
    const bool n_fast = p.flags & BK_SP24_Y_N_FAST;
    for (int idx = (int)tid; idx < BM * BN; idx += (int)threads) {
        const int ml = n_fast ? idx / BN : idx % BM;
        const int nl = n_fast ? idx % BN : idx / BM;
        if (m0 + ml < p.m && n0 + nl < p.n)
            store_output<O>(p, b, n0 + nl, m0 + ml, out[nl * pitch + ml]);
    }
}

// store_tile where Y's m stride is 1 (the usual [N, M] row-major Y): each
// thread finishes runs of 8 consecutive m and stores a run with one or two
// 16-byte stores where it is whole and aligned. BM % 8 == 0; pitch % 4 == 0.
template <typename O, int BM, int BN>
BK_SP24_DEV void store_tile_runs(const bk_sp24_gemm_args &p, int64_t b, int64_t m0, int64_t n0,
                                 const float *out, int pitch, uint32_t tid, uint32_t threads)
{
    constexpr int RUNS = BM / 8;  // per n
    // Only alpha to apply (no C, bias or activation): the usual case, run
    // without output_value's per-element tests, which cost more than the
    // stores (an epilogue of ~10 us a 128 x 256 tile on the H100).
    const bool plain = !(p.flags & (BK_SP24_READ_C | BK_SP24_BIAS)) && p.activation == 0;
    for (int idx = (int)tid; idx < BN * RUNS; idx += (int)threads) {
        const int nl = idx / RUNS, ml = idx % RUNS * 8;
        const int64_t n = n0 + nl, m = m0 + ml;
        if (n >= p.n || m >= p.m)
            continue;
        const float4 lo = *reinterpret_cast<const float4 *>(out + nl * pitch + ml);
        const float4 hi = *reinterpret_cast<const float4 *>(out + nl * pitch + ml + 4);
        float v[8] = { lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w };
        O *y = reinterpret_cast<O *>(p.y) + b * p.y_bs + n * p.y_rs + m;
        if (m + 8 <= p.m && (reinterpret_cast<uintptr_t>(y) & 15) == 0) {
            if (plain) {
#pragma unroll
                for (int e = 0; e < 8; e++)
                    v[e] = mul_rn(p.alpha, v[e]);
            } else {
#pragma unroll
                for (int e = 0; e < 8; e++)
                    v[e] = output_value<O>(p, b, n, m + e, v[e]);
            }
            store8(y, v);
        } else {
            for (int e = 0; e < 8 && m + e < p.m; e++)
                y[e] = Elem<O>::out(output_value<O>(p, b, n, m + e, v[e]));
        }
    }
}

// Tile t of the grid (t < m_tiles * n_tiles) as (m tile, n tile): groups of
// 8 m tiles walk n tile by tile, so the CTAs running together share both
// weight and X tiles in L2.
BK_SP24_DEV void tile_coords(uint32_t m_tiles, uint32_t n_tiles, uint32_t t, uint32_t &mt,
                             uint32_t &nt)
{
    const uint32_t group = 8;
    const uint32_t per_group = group * n_tiles;
    const uint32_t first = t / per_group * group;
    const uint32_t size = m_tiles - first < group ? m_tiles - first : group;
    const uint32_t r = t % per_group;
    mt = first + r % size;
    nt = r / size;
}
BK_SP24_DEV void tile_coords(const bk_sp24_gemm_args &p, uint32_t t, uint32_t &mt, uint32_t &nt)
{
    tile_coords(p.m_tiles, p.n_tiles, t, mt, nt);
}

// ---- The sparse tensor-core instruction (the sm_80 and decode kernels) --------
// A host program that defines BK_SP24_EMULATION brings its own.
#ifndef BK_SP24_EMULATION
// d += A (16 x 32, 2:4 sparse: a and metadata e, selector 0) B (32 x 8: b).
template <typename T> struct SparseMma;
#define BK_SP24_MMA(T, PTX_TYPE)                                                              \
    template <> struct SparseMma<T> {                                                         \
        static __device__ __forceinline__ void run(float (&d)[4], const uint4 &a,            \
                                                   const uint32_t (&b)[4], uint32_t e)        \
        {                                                                                     \
            asm("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32." PTX_TYPE        \
                "." PTX_TYPE ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, "  \
                "{%0, %1, %2, %3}, %12, 0x0;\n"                                               \
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                              \
                : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b[0]), "r"(b[1]), "r"(b[2]),    \
                  "r"(b[3]), "r"(e));                                                         \
        }                                                                                     \
    };
BK_SP24_MMA(__half, "f16")
BK_SP24_MMA(__nv_bfloat16, "bf16")

// The A fragment of tile kk (0, 1) of the prepared values' 1 KiB unit at
// shared address unit (sparse24_args.h), by one ldmatrix.x4.
static __device__ __forceinline__ uint4 load_a_fragment(uint32_t unit, uint32_t kk, uint32_t lane)
{
    uint32_t r[4];
    bk::ldmatrix_x4(r, unit + bk_sp24_frag_row(lane, kk));
    return make_uint4(r[0], r[1], r[2], r[3]);
}

// ---- Stream-K's workspace (sparse24_args.h) ----------------------------------
// Consumer warp w's tagged flag of CTA cta, and the first float4 of that
// CTA's slot of partial sums (slot_bytes a CTA): the decode and wgmma
// kernels' shared layout.
static __device__ __forceinline__ uint64_t *sk_flag(const bk_sp24_gemm_args &p, uint32_t cta,
                                                    int w)
{
    return reinterpret_cast<uint64_t *>(p.workspace) + cta * BK_SP24_SK_WARPS + w;
}
static __device__ __forceinline__ float4 *sk_slot(const bk_sp24_gemm_args &p, uint32_t cta,
                                                  uint64_t slot_bytes)
{
    return reinterpret_cast<float4 *>(p.workspace + BK_SP24_SK_FLAG_BYTES(gridDim.x) +
                                      cta * slot_bytes);
}
#endif  // BK_SP24_EMULATION

}  // namespace bk_sp24

#endif  // BK_SPARSE24_COMMON_CUH
