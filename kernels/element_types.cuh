// SPDX-License-Identifier: Apache-2.0
// What every kernel module shares: each storage type with the type it
// computes in and its raw bits, and the wait for the grid before.
#ifndef BK_ELEMENT_TYPES_CUH
#define BK_ELEMENT_TYPES_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace bk {

// C: the type a storage type computes in (f32 for the half types, as on
// the host); Bits: its raw storage, for copies that keep every bit (NaN
// payloads, -0). Half types round to nearest even on the way out.
// __host__ too: host-side emulations of the 2:4 kernels run this code.
template <typename T> struct Storage;
template <> struct Storage<float> {
    typedef float C;
    typedef uint32_t Bits;
    static __host__ __device__ __forceinline__ float in(float v) { return v; }
    static __host__ __device__ __forceinline__ float out(float v) { return v; }
};
template <> struct Storage<double> {
    typedef double C;
    typedef unsigned long long Bits;
    static __host__ __device__ __forceinline__ double in(double v) { return v; }
    static __host__ __device__ __forceinline__ double out(double v) { return v; }
};
template <> struct Storage<__half> {
    typedef float C;
    typedef uint16_t Bits;
    static __host__ __device__ __forceinline__ float in(__half v) { return __half2float(v); }
    static __host__ __device__ __forceinline__ __half out(float v) { return __float2half_rn(v); }
};
template <> struct Storage<__nv_bfloat16> {
    typedef float C;
    typedef uint16_t Bits;
    static __host__ __device__ __forceinline__ float in(__nv_bfloat16 v)
    {
        return __bfloat162float(v);
    }
    static __host__ __device__ __forceinline__ __nv_bfloat16 out(float v)
    {
        return __float2bfloat16_rn(v);
    }
};

// Launched with programmatic stream serialization (libbk does so on sm_90
// and later), a grid may start while the one before it in the stream still
// runs: wait until that grid has finished and its writes are visible before
// touching memory, then let the next grid begin its launch. Elsewhere both
// are no-ops. The halves apart are for a grid that knows its inputs are
// ready before the grid ahead of it ends (the Hopper attention backward's
// dk/dv kernel).
static __device__ __forceinline__ void grid_dependency_wait_only()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
static __device__ __forceinline__ void grid_dependents_launch()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
static __device__ __forceinline__ void grid_dependency_wait()
{
    grid_dependency_wait_only();
    grid_dependents_launch();
}

} // namespace bk

#endif // BK_ELEMENT_TYPES_CUH
