// SPDX-License-Identifier: Apache-2.0
// Gated activations on CUDA: the math (one functor per kind), loads and
// stores per data type, and the kernel body shared by the forward and
// backward modules. Formulas and evaluation order follow the host backend
// (lib/host/host_gated_activation.c): f32, f16 and bf16 compute in float,
// f64 in double, and half types round to nearest even on the way out. f32
// and f64 use the accurate library functions (expf, erfcf); f16 and
// bf16 faster ones that keep float's accuracy to well under their own
// (struct Fast below).
#ifndef BK_GATED_COMMON_CUH
#define BK_GATED_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "element_types.cuh"
#include "gated_kernel_args.h"

namespace bk {

#define BK_SQRT_2_OVER_PI 0.79788456080286535587989211986876
#define BK_INV_SQRT_2 0.70710678118654752440084436210485
#define BK_INV_SQRT_2PI 0.39894228040143267793994605993438
#define BK_GELU_TANH_C 0.044715
#define BK_LOG2E 1.4426950408889634074

// ---- Library functions: the math policies ------------------------------
// Accurate: the library's expf and erfcf (and double versions), and a
// correctly rounded reciprocal (1/y rounded once, as a division would be,
// at a fraction of its cost); used for f32 and f64. Fast: the ex2 and rcp
// approximations (2 and 1 ulp of float), used for f16 and bf16, whose
// results keep 11 or 8 bits: there the kernels do twice the math per byte,
// and on an H100 the accurate exp and division held GLU, SwiGLU and GeGLU
// (backward) at 84-91% of copy bandwidth, against 91-94% with these
// (doc/design/gated.md). Their flush-to-zero forms skip the range checks of
// __expf and __fdividef (3 and 4 instructions): they differ only where a
// result leaves float's normal range, within what t/gated/gated_exhaustive.c
// allows (2^-126 (1 + |b|)). BK_GATED_FAST_HALF_MATH=0 turns Fast off.
struct Accurate {
    static __device__ __forceinline__ float exp(float x) { return expf(x); }
    static __device__ __forceinline__ double exp(double x) { return ::exp(x); }
    static __device__ __forceinline__ float rcp(float y) { return __frcp_rn(y); }
    static __device__ __forceinline__ double rcp(double y) { return __drcp_rn(y); }
    // Overflow-free logistic function: exp of a non-positive argument only,
    // without a branch.
    template <typename C> static __device__ __forceinline__ C sigmoid(C x)
    {
        C e = exp(-fabs(x));
        C r = rcp(C(1) + e);
        return x >= C(0) ? r : e * r;
    }
    // The normal distribution function, as the host backend computes it:
    // erfc(-b / sqrt 2) / 2, as 1 + erf(b / sqrt 2) cancels to 0 for b < -5.4.
    static __device__ __forceinline__ float phi(float b)
    {
        return 0.5f * erfcf(b * float(-BK_INV_SQRT_2));
    }
    static __device__ __forceinline__ double phi(double b)
    {
        return 0.5 * ::erfc(b * -BK_INV_SQRT_2);
    }
};
struct Fast : Accurate {
    static __device__ __forceinline__ float ex2(float x)
    {
        float r;
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
        return r;
    }
    static __device__ __forceinline__ float exp(float x)
    {
        return ex2(x * float(BK_LOG2E));
    }
    static __device__ __forceinline__ float rcp(float y)
    {
        float r;
        asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(y));
        return r;
    }
    // 1 / (1 + e^-x) as it stands, in 4 instructions: past x = -87, where
    // the logistic function leaves float's normal range, e^-x overflows to
    // +inf (or its reciprocal flushes) and s is 0.
    static __device__ __forceinline__ float sigmoid(float x) { return rcp(1.0f + exp(-x)); }
    static __device__ __forceinline__ float phi_left(float b);  // below
    static __device__ __forceinline__ float phi(float b);
};
#ifndef BK_GATED_FAST_HALF_MATH
#define BK_GATED_FAST_HALF_MATH 1
#endif
// Phi(b) for the half types in about 12 instructions, against about 25 for
// 0.5 (1 + erff(b / sqrt 2)) (which held GeGLU forward on bf16 at 92% of copy
// bandwidth, doc/design/gated.md) and more for erfcf. phi_left(b) is
// h = Phi(-|b|) = erfc(|b| / sqrt 2) / 2 = t 2^(Q(t) - log2(e) b^2 / 2),
// t = 1 / (1 + P |b|), with Q a degree-7 polynomial fitted for libbk
// (minimax in the relative error of h, 1.5e-6). With the approximate
// reciprocal and ex2, h keeps a relative error below 1e-5 down to the
// smallest normal float (b = -13.2; ex2 flushes below it); b * b is exact
// for half-type inputs. Phi(b) = h for b < 0, 1 - h otherwise.
// t/gated_exhaustive checks every f16 and bf16 b. BK_GATED_FAST_PHI=0 uses
// the accurate form instead, for comparison.
#ifndef BK_GATED_FAST_PHI
#define BK_GATED_FAST_PHI 1
#endif
#define BK_PHI_P 0.366f
__device__ __forceinline__ float Fast::phi_left(float b)
{
    const float t = rcp(fmaf(BK_PHI_P, fabsf(b), 1.0f));
    float q = -2.583124638e-01f;
    q = fmaf(q, t, 9.779635072e-01f);
    q = fmaf(q, t, -1.171493173e+00f);
    q = fmaf(q, t, 2.387024462e-01f);
    q = fmaf(q, t, 9.748854674e-03f);
    q = fmaf(q, t, 5.368717909e-01f);
    q = fmaf(q, t, 1.442350626e+00f);
    q = fmaf(q, t, -2.775830269e+00f);
    return t * ex2(fmaf(b * b, -0.72134752044448170368f, q));
}
__device__ __forceinline__ float Fast::phi(float b)
{
    if (!BK_GATED_FAST_PHI)
        return Accurate::phi(b);
    const float h = phi_left(b);
    return b < 0.0f ? h : 1.0f - h;
}

template <typename T> struct MathFor { typedef Accurate M; };
#if BK_GATED_FAST_HALF_MATH
template <> struct MathFor<__half> { typedef Fast M; };
template <> struct MathFor<__nv_bfloat16> { typedef Fast M; };
#endif

// The logistic function of the policy.
template <class M, typename C> static __device__ __forceinline__ C sigmoid(C x)
{
    return M::sigmoid(x);
}

// ---- The kinds: gate(b) and, through d, gate'(b) -----------------------
// The forward kernels discard d, and the compiler drops its computation.
struct Glu {
    template <class M, typename C> static __device__ __forceinline__ C gate(C b, C &d)
    {
        C s = sigmoid<M>(b);
        d = s * (C(1) - s);
        return s;
    }
};
struct Reglu {  // the derivative at b = 0 is taken as 0
    template <class M, typename C> static __device__ __forceinline__ C gate(C b, C &d)
    {
        d = b > C(0) ? C(1) : C(0);
        return b > C(0) ? b : C(0);
    }
};
struct Swiglu {
    template <class M, typename C> static __device__ __forceinline__ C gate(C b, C &d)
    {
        C s = sigmoid<M>(b);
        d = s * (C(1) + b * (C(1) - s));
        return b * s;
    }
};
struct Geglu {  // b Phi(b)
    template <class M, typename C> static __device__ __forceinline__ C gate(C b, C &d)
    {
        C cdf = M::phi(b);
        C pdf = C(BK_INV_SQRT_2PI) * M::exp(C(-0.5) * b * b);
        d = cdf + b * pdf;
        return b * cdf;
    }
};
// 0.5 b (1 + tanh(u)), u = sqrt(2/pi) (b + 0.044715 b^3), as b sigmoid(2u),
// which does not cancel for u < 0; w = 0 where s or 1 - s underflowed (du
// may be infinite there).
struct GegluTanh {
    template <class M, typename C> static __device__ __forceinline__ C gate(C b, C &d)
    {
        C u = C(BK_SQRT_2_OVER_PI) * (b + C(BK_GELU_TANH_C) * b * b * b);
        C s = sigmoid<M>(C(2) * u);
        C w = s * (C(1) - s);
        C du = C(BK_SQRT_2_OVER_PI) * (C(1) + C(3 * BK_GELU_TANH_C) * b * b);
        d = s + (w == C(0) ? C(0) : C(2) * b * w * du);
        return b * s;
    }
};

// ---- Loads and stores of V consecutive elements as one access ----------
template <int BYTES> struct Raw;
template <> struct Raw<16> { typedef uint4 type; };
template <> struct Raw<8> { typedef uint2 type; };
template <> struct Raw<4> { typedef unsigned int type; };
template <> struct Raw<2> { typedef unsigned short type; };

// BK_GATED_STREAMING 1: loads and stores marked streaming (evict first),
// as every byte is touched once. Off: on an H100 it gained nothing
// (doc/design/gated.md); kept for tuning on other GPUs.
#ifndef BK_GATED_STREAMING
#define BK_GATED_STREAMING 0
#endif

template <typename T, int V>
static __device__ __forceinline__ void load(const T *p, typename Storage<T>::C (&out)[V])
{
    typedef typename Raw<sizeof(T) * V>::type R;
    union { R raw; T e[V]; } u;
#if BK_GATED_STREAMING
    u.raw = __ldcs(reinterpret_cast<const R *>(p));
#else
    u.raw = *reinterpret_cast<const R *>(p);
#endif
#pragma unroll
    for (int j = 0; j < V; j++)
        out[j] = Storage<T>::in(u.e[j]);
}

template <typename T, int V>
static __device__ __forceinline__ void store(T *p, const typename Storage<T>::C (&in)[V])
{
    typedef typename Raw<sizeof(T) * V>::type R;
    union { R raw; T e[V]; } u;
#pragma unroll
    for (int j = 0; j < V; j++)
        u.e[j] = Storage<T>::out(in[j]);
#if BK_GATED_STREAMING
    __stcs(reinterpret_cast<R *>(p), u.raw);
#else
    *reinterpret_cast<R *>(p) = u.raw;
#endif
}

// ---- Index arithmetic ---------------------------------------------------
static __device__ __forceinline__ uint64_t fastdiv(uint64_t n, uint64_t magic, uint32_t shift)
{
    return (__umul64hi(n, magic) + n) >> shift;
}

// Element offsets of item i in x (its a half), y/dy and dx.
template <bool BWD>
static __device__ __forceinline__ void offsets(const bk_gated_args &p, uint64_t i, int64_t &xo,
                                               int64_t &yo, int64_t &dxo)
{
    xo = yo = dxo = 0;
    for (int d = (int)p.rank - 1; d > 0; d--) {
        const bk_gated_dim &dim = p.dim[d];
        uint64_t q = fastdiv(i, dim.magic, dim.shift);
        int64_t r = (int64_t)(i - q * dim.extent);
        xo += r * dim.x_stride;
        yo += r * dim.y_stride;
        if (BWD)
            dxo += r * dim.dx_stride;
        i = q;
    }
    xo += (int64_t)i * p.dim[0].x_stride;
    yo += (int64_t)i * p.dim[0].y_stride;
    if (BWD)
        dxo += (int64_t)i * p.dim[0].dx_stride;
}

// ---- The kernel body ----------------------------------------------------
// Each thread takes U items of V elements per step, BK_GATED_BLOCK apart so
// that a warp's accesses are contiguous, issuing every load of the step
// before the first use. The items of a step are found by one of two walks
// (step_items): blocks striding over the flat items, each item's offsets
// by fast division per dimension; or, for tensors of at most two
// dimensions (p.grid_rows), blocks along y striding over the rows and
// along x over a row's items, which needs no division (for the half
// types the division was a third of the instructions per item).
template <class Kind, typename T, int V, bool BWD>
static __device__ __forceinline__ void step_items(const bk_gated_args &p, const int64_t (&xo)[
                                                      BK_GATED_UNROLL(sizeof(T), V)],
                                                  const int64_t (&yo)[BK_GATED_UNROLL(sizeof(T), V)],
                                                  const int64_t (&dxo)[BK_GATED_UNROLL(sizeof(T), V)],
                                                  const bool (&in)[BK_GATED_UNROLL(sizeof(T), V)])
{
    typedef typename Storage<T>::C C;
    typedef typename MathFor<T>::M M;
    constexpr int U = BK_GATED_UNROLL(sizeof(T), V);
    const T *x = reinterpret_cast<const T *>(p.x);
    T *y = reinterpret_cast<T *>(p.y);
    T *dx = reinterpret_cast<T *>(p.dx);
    C a[U][V], b[U][V], g[U][V];
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (in[u]) {
            load<T, V>(x + xo[u], a[u]);
            load<T, V>(x + xo[u] + p.x_gate, b[u]);
            if (BWD)
                load<T, V>(y + yo[u], g[u]);  // dy
        }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (!in[u])
            continue;
        if (BWD) {
            C da[V], db[V];
#pragma unroll
            for (int j = 0; j < V; j++) {
                C d, gate = Kind::template gate<M>(b[u][j], d);
                da[j] = g[u][j] * gate;
                db[j] = g[u][j] * a[u][j] * d;
            }
            store<T, V>(dx + dxo[u], da);
            store<T, V>(dx + dxo[u] + p.dx_gate, db);
        } else {
            C out[V];
#pragma unroll
            for (int j = 0; j < V; j++) {
                C d;
                out[j] = a[u][j] * Kind::template gate<M>(b[u][j], d);
            }
            store<T, V>(y + yo[u], out);
        }
    }
}

template <class Kind, typename T, int V, bool BWD>
static __device__ __forceinline__ void gated(const bk_gated_args &p)
{
    constexpr int U = BK_GATED_UNROLL(sizeof(T), V);
    const uint64_t step = (uint64_t)BK_GATED_BLOCK * U;
    grid_dependency_wait();
    int64_t xo[U], yo[U], dxo[U];
    bool in[U];
    if (p.grid_rows) {
        const bool two = p.rank == 2;
        const bk_gated_dim &row = p.dim[0], &item = p.dim[p.rank - 1];
        const uint64_t rows = two ? row.extent : 1, items = item.extent;
        for (uint64_t r = blockIdx.y; r < rows; r += gridDim.y) {
            const int64_t xr = two ? (int64_t)r * row.x_stride : 0;
            const int64_t yr = two ? (int64_t)r * row.y_stride : 0;
            const int64_t dxr = BWD && two ? (int64_t)r * row.dx_stride : 0;
            for (uint64_t c0 = (uint64_t)blockIdx.x * step; c0 < items;
                 c0 += (uint64_t)gridDim.x * step) {
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const uint64_t c = c0 + threadIdx.x + (uint64_t)u * BK_GATED_BLOCK;
                    in[u] = c < items;
                    xo[u] = xr + (int64_t)c * item.x_stride;
                    yo[u] = yr + (int64_t)c * item.y_stride;
                    dxo[u] = BWD ? dxr + (int64_t)c * item.dx_stride : 0;
                }
                step_items<Kind, T, V, BWD>(p, xo, yo, dxo, in);
            }
        }
        return;
    }
    for (uint64_t base = (uint64_t)blockIdx.x * step; base < p.count;
         base += (uint64_t)gridDim.x * step) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const uint64_t i = base + threadIdx.x + (uint64_t)u * BK_GATED_BLOCK;
            in[u] = i < p.count;
            xo[u] = yo[u] = dxo[u] = 0;
            if (in[u])
                offsets<BWD>(p, i, xo[u], yo[u], dxo[u]);
        }
        step_items<Kind, T, V, BWD>(p, xo, yo, dxo, in);
    }
}

}  // namespace bk

// ---- Entry points: one per (direction, kind, type, path) -----------------
// Named bk_gated_<fwd|bwd>_<kind>_<type>_<vec|strided>, the names the
// launcher (lib/cuda/cuda_gated.c) builds. The vector path moves 16 bytes
// per access; the strided path one element.
#define BK_GATED_ENTRY(dir, BWD, kname, Kind, tname, T)                                   \
    extern "C" __global__ void __launch_bounds__(BK_GATED_BLOCK)                          \
        bk_gated_##dir##_##kname##_##tname##_vec(const __grid_constant__ bk_gated_args p) \
    {                                                                                     \
        bk::gated<Kind, T, 16 / sizeof(T), BWD>(p);                                       \
    }                                                                                     \
    extern "C" __global__ void __launch_bounds__(BK_GATED_BLOCK)                          \
        bk_gated_##dir##_##kname##_##tname##_strided(const __grid_constant__ bk_gated_args p) \
    {                                                                                     \
        bk::gated<Kind, T, 1, BWD>(p);                                                    \
    }

// X(kname, Kind, tname, T) for every kind and data type.
#define BK_GATED_KINDS(X, tname, T)        \
    X(glu, bk::Glu, tname, T)              \
    X(reglu, bk::Reglu, tname, T)          \
    X(swiglu, bk::Swiglu, tname, T)        \
    X(geglu, bk::Geglu, tname, T)          \
    X(geglu_tanh, bk::GegluTanh, tname, T)
#define BK_GATED_FOR_EACH(X)               \
    BK_GATED_KINDS(X, f32, float)          \
    BK_GATED_KINDS(X, f16, __half)         \
    BK_GATED_KINDS(X, bf16, __nv_bfloat16) \
    BK_GATED_KINDS(X, f64, double)

#endif  // BK_GATED_COMMON_CUH
