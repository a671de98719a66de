// The device-wide hand-over of a tile split along K between CTAs (the
// stream-K schedules of the W4A16 kernels and the 2:4 Hopper kernel): a
// CTA's partial sums written past the L1 (st.global.cg), a counter raised
// with release semantics once they are, and the CTA that adds them up
// waiting on the counter with acquire semantics before it reads them.
// A group's stores are ordered before its raise by the group's barrier
// (__syncwarp, bar.sync), as CUTLASS's semaphores do, not by a fence per
// thread: release is cumulative over what the barrier made visible to
// the raising thread.
#ifndef BK_SPLIT_SUM_SYNC_CUH
#define BK_SPLIT_SUM_SYNC_CUH

#include <stdint.h>

namespace bk {
namespace split_sum {

// A warp's accumulators (NT blocks of four floats a lane) to its slot, at
// mine: this lane's first float4, the next block 32 float4s on.
template <int NT>
static __device__ __forceinline__ void write_partial(const float (&acc)[NT][4], float4 *mine)
{
#pragma unroll
    for (int t = 0; t < NT; t++)
        __stcg(mine + 32 * t, make_float4(acc[t][0], acc[t][1], acc[t][2], acc[t][3]));
}

// acc += a partial that write_partial<NT> wrote (theirs: this lane's first
// float4), read past the L1.
template <int NT>
static __device__ __forceinline__ void add_partial(float (&acc)[NT][4], const float4 *theirs)
{
#pragma unroll
    for (int t = 0; t < NT; t++) {
        const float4 v = __ldcg(theirs + 32 * t);
        acc[t][0] += v.x;
        acc[t][1] += v.y;
        acc[t][2] += v.z;
        acc[t][3] += v.w;
    }
}

// counter += 1, after every write this thread has seen (release, GPU scope).
static __device__ __forceinline__ void raise(uint32_t *counter)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
}

// Waits until counter >= target (acquire, GPU scope): the writes before
// each raise it counts are then visible to this thread.
static __device__ __forceinline__ void wait_for(const uint32_t *counter, uint32_t target)
{
    for (;;) {
        uint32_t v;
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(counter) : "memory");
        if (v >= target)
            return;
        __nanosleep(64);
    }
}

} // namespace split_sum
} // namespace bk

#endif // BK_SPLIT_SUM_SYNC_CUH
