// SPDX-License-Identifier: Apache-2.0
// The dense GEMM's epilogue kernels (see gemm_epilogue_args.h): a strided
// copy of C into D, and D = act(D + bias) in place. bias_act follows the
// host backend's epilogue (lib/host/host_gemm_engine.c) operation by
// operation: f32, f16 and bf16 compute in float, f64 in double, each
// operation rounded on its own (no contraction into fused multiply-adds),
// half types rounded to nearest even on the way out.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

#include "element_types.cuh"
#include "gemm_epilogue_args.h"

namespace {

using bk::grid_dependency_wait;

template <typename T> using Elem = bk::Storage<T>;

// Single roundings, as the host computes.
__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float rcp(float a) { return __frcp_rn(a); }
__device__ __forceinline__ double rcp(double a) { return __drcp_rn(a); }
__device__ __forceinline__ float exp_of(float a) { return expf(a); }
__device__ __forceinline__ double exp_of(double a) { return ::exp(a); }

#define BK_EPI_SQRT_2_OVER_PI 0.79788456080286535587989211986876
#define BK_EPI_GELU_TANH_C 0.044715

// RELU keeps NaN; GELU-tanh as x sigmoid(2u), which does not cancel to 0
// for u < 0, with exp of a non-positive argument only (the host's form).
template <typename C> __device__ __forceinline__ C activate(C x, uint32_t activation)
{
    if (activation == BK_GEMM_EPI_RELU)
        return x < C(0) ? C(0) : x;
    if (activation == BK_GEMM_EPI_GELU_TANH) {
        const C cube = mul(mul(mul(C(BK_EPI_GELU_TANH_C), x), x), x);
        const C t = mul(C(2 * BK_EPI_SQRT_2_OVER_PI), add(x, cube));
        const C e = exp_of(-fabs(t));
        const C r = rcp(add(C(1), e));
        return mul(x, t >= C(0) ? r : mul(e, r));
    }
    return x;
}

// Element i of the walk as (batch, outer, inner); I is the index type:
// 32-bit division is several times cheaper, and most problems fit it.
template <typename I>
__device__ __forceinline__ void coords(const bk_gemm_epi_args &p, I i, int64_t &b, int64_t &o,
                                       int64_t &j)
{
    const I inner = (I)p.inner, outer = (I)p.outer;
    const I r = i / inner;
    j = (int64_t)(i - r * inner);
    o = (int64_t)(r % outer);
    b = (int64_t)(r / outer);
}

template <typename T, typename I> __device__ __forceinline__ void copy_body(const bk_gemm_epi_args &p)
{
    T *dst = reinterpret_cast<T *>(p.dst);
    const T *src = reinterpret_cast<const T *>(p.src);
    for (I i = (I)blockIdx.x * BK_GEMM_EPI_BLOCK + threadIdx.x; i < (I)p.count;
         i += (I)gridDim.x * BK_GEMM_EPI_BLOCK) {
        int64_t b, o, j;
        coords<I>(p, i, b, o, j);
        dst[b * p.dst_bs + o * p.dst_os + j * p.dst_is] = src[b * p.src_bs + o * p.src_os + j * p.src_is];
    }
}

template <typename T, typename I>
__device__ __forceinline__ void bias_act_body(const bk_gemm_epi_args &p)
{
    typedef typename Elem<T>::C C;
    T *dst = reinterpret_cast<T *>(p.dst);
    const T *bias = reinterpret_cast<const T *>(p.bias);
    for (I i = (I)blockIdx.x * BK_GEMM_EPI_BLOCK + threadIdx.x; i < (I)p.count;
         i += (I)gridDim.x * BK_GEMM_EPI_BLOCK) {
        int64_t b, o, j;
        coords<I>(p, i, b, o, j);
        T *d = dst + b * p.dst_bs + o * p.dst_os + j * p.dst_is;
        C v = Elem<T>::in(*d);
        if (bias)
            v = add(v, Elem<T>::in(bias[o * p.bias_os + j * p.bias_is]));
        *d = Elem<T>::out(activate(v, p.activation));
    }
}

}  // namespace

// Copies move bits: one kernel per element size.
#define BK_EPI_COPY(NAME, T)                                                   \
    extern "C" __global__ void __launch_bounds__(BK_GEMM_EPI_BLOCK)            \
        NAME(const bk_gemm_epi_args p)                                         \
    {                                                                          \
        grid_dependency_wait();                                                \
        if (p.count <= 0xffffffffu)                                            \
            copy_body<T, uint32_t>(p);                                         \
        else                                                                   \
            copy_body<T, uint64_t>(p);                                         \
    }
BK_EPI_COPY(bk_gemm_copy_b16, uint16_t)
BK_EPI_COPY(bk_gemm_copy_b32, uint32_t)
BK_EPI_COPY(bk_gemm_copy_b64, uint64_t)

#define BK_EPI_BIAS_ACT(NAME, T)                                               \
    extern "C" __global__ void __launch_bounds__(BK_GEMM_EPI_BLOCK)            \
        NAME(const bk_gemm_epi_args p)                                         \
    {                                                                          \
        grid_dependency_wait();                                                \
        if (p.count <= 0xffffffffu)                                            \
            bias_act_body<T, uint32_t>(p);                                     \
        else                                                                   \
            bias_act_body<T, uint64_t>(p);                                     \
    }
BK_EPI_BIAS_ACT(bk_gemm_bias_act_f32, float)
BK_EPI_BIAS_ACT(bk_gemm_bias_act_f16, __half)
BK_EPI_BIAS_ACT(bk_gemm_bias_act_bf16, __nv_bfloat16)
BK_EPI_BIAS_ACT(bk_gemm_bias_act_f64, double)
