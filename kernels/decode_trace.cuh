// SPDX-License-Identifier: Apache-2.0
// A development variant of the decode kernels (W4A16 tiles of 8 rows,
// attention's split and combining kernels): compiled with
// -DBK_DECODE_TRACE, a CTA writes the global timer at the points of its
// run into eight words of a trace (bench/probes/w4a16-probe.c and
// attention-decode-probe.c place the trace and print it with
// bench/probes/decode_trace.h). Without the macro every call is empty.
#ifndef BK_DECODE_TRACE_CUH
#define BK_DECODE_TRACE_CUH

#include <stdint.h>

namespace bk {

// The global timer and the SM (0 without BK_DECODE_TRACE: no code).
static __device__ __forceinline__ uint64_t trace_clock()
{
    uint64_t g = 0;
#ifdef BK_DECODE_TRACE
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
#endif
    return g;
}

static __device__ __forceinline__ uint32_t trace_sm()
{
    uint32_t s = 0;
#ifdef BK_DECODE_TRACE
    asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
#endif
    return s;
}

// Word i of record r of the trace at `base` (0: none) := v; records of
// eight words, one a CTA or one a stream.
static __device__ __forceinline__ void trace_set(uint64_t base, uint64_t r, int i, uint64_t v)
{
#ifdef BK_DECODE_TRACE
    if (base)
        reinterpret_cast<uint64_t *>(base)[8 * r + i] = v;
#else
    (void)base;
    (void)r;
    (void)i;
    (void)v;
#endif
}

// Word i of the CTA's record := the global timer (word 7: the SM).
static __device__ __forceinline__ void trace_mark(uint64_t base, int i)
{
    const uint64_t cta =
        blockIdx.x + (uint64_t)gridDim.x * (blockIdx.y + (uint64_t)gridDim.y * blockIdx.z);
    trace_set(base, cta, i, trace_clock());
    trace_set(base, cta, 7, trace_sm());
}

} // namespace bk

#endif // BK_DECODE_TRACE_CUH
