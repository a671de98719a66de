// SPDX-License-Identifier: Apache-2.0
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

// Tagged flags, for a workspace that nobody clears: a run's writer sets
// its flag to the run's tag (a 64-bit value the host draws afresh for each
// recorded launch, never 0) with release semantics once its partial sums
// are written; the one reader waits until the flag holds that tag
// (acquire), reads the sums and sets the flag back to 0. After a whole run
// every flag it raised is 0 again, so a replay of the same launch (same
// tag) never sees one of its own flags raised early; a flag left by
// anything else matches only if it happens to hold the tag (one chance in
// 2^64).
static __device__ __forceinline__ void raise_tag(uint64_t *flag, uint64_t tag)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(flag), "l"(tag) : "memory");
}
static __device__ __forceinline__ void wait_tag(const uint64_t *flag, uint64_t tag)
{
    for (;;) {
        uint64_t v;
        asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(flag) : "memory");
        if (v == tag)
            return;
        __nanosleep(64);
    }
}
static __device__ __forceinline__ void lower_tag(uint64_t *flag)
{
    asm volatile("st.relaxed.gpu.global.u64 [%0], 0;" ::"l"(flag) : "memory");
}

// A warp's partial sums handed over under a tagged flag (lane: the
// caller's lane), and taken over by the warp that adds them.
template <int NT>
static __device__ __forceinline__ void hand_over(const float (&acc)[NT][4], float4 *mine,
                                                 uint64_t *flag, uint64_t tag, int lane)
{
    write_partial<NT>(acc, mine);
    __syncwarp();
    if (lane == 0)
        raise_tag(flag, tag);
}
template <int NT>
static __device__ __forceinline__ void take_over(float (&acc)[NT][4], const float4 *theirs,
                                                 uint64_t *flag, uint64_t tag, int lane)
{
    if (lane == 0)
        wait_tag(flag, tag);
    __syncwarp();
    add_partial<NT>(acc, theirs);
    if (lane == 0)
        lower_tag(flag);
}

} // namespace split_sum
} // namespace bk

#endif // BK_SPLIT_SUM_SYNC_CUH
