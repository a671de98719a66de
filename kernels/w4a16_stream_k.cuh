// SPDX-License-Identifier: Apache-2.0
// Stream-K for the W4A16 wgmma kernels (kernels/w4a16_wgmma.cu; the schedule
// and workspace are described in w4a16_args.h): which stages of which
// tiles a CTA takes, the sum of a tile split between CTAs, and C written
// straight from a consumer warp's accumulators.
#ifndef BK_W4A16_STREAM_K_CUH
#define BK_W4A16_STREAM_K_CUH

#include "element_types.cuh"
#include "split_sum_sync.cuh"
#include "shared_memory_ops.cuh"
#include "tma_ops.cuh"
#include "w4a16_args.h"

namespace bk {
namespace w4a16 {

// The planner takes stream-K only where units x CTAs and M fit in 32-bit
// integers (64-bit divisions are calls that take a stack frame). The
// schedule is read from the parameters each time, not kept in registers:
// the consumers of 256-row tiles have none to spare.
template <int TT, int TN> struct StreamK {
    // The most shares of a tile summed by copies into the ring.
    static constexpr int COPIED_SHARES = 4;

    const bk_w4a16_gemm_args &p;

    __device__ explicit StreamK(const bk_w4a16_gemm_args &args) : p(args) {}

    __device__ int units() const { return (int)p.units; }
    __device__ int stages() const { return (int)p.stages; }
    // Unit u's first one of CTA x's share, and the CTA whose share holds u.
    __device__ int begin(int x) const { return (int)((uint32_t)x * p.units / gridDim.x); }
    __device__ int owner(int u) const
    {
        return (int)(((uint32_t)u + 1) * gridDim.x - 1) / units();
    }
    __device__ int m0(int tile) const { return tile % (int)p.tiles_m * TT; }
    __device__ int n0(int tile) const { return tile / (int)p.tiles_m * TN; }
    __device__ bool whole(int c0, int c1) const { return c0 == 0 && c1 == stages(); }

    // The tile of this CTA's share that starts at unit u: its first and end
    // stages, the ring position of the first, and whether it is the last.
    struct Share {
        int tile, c0, c1, ring;
        bool last;
    };
    __device__ Share share(int u) const
    {
        const int end = begin((int)blockIdx.x + 1), stages = this->stages();
        Share s;
        s.tile = u / stages;
        s.c0 = u % stages;
        s.c1 = s.c0 + (end - u) < stages ? s.c0 + (end - u) : stages;
        s.ring = u - begin((int)blockIdx.x);
        s.last = s.c1 - s.c0 == end - u;
        return s;
    }

    // f(u, its Share) for each tile of this CTA's share, in order. Only u
    // lives across f (the consumers' registers are all taken): f may
    // decode it again after its main loop (share_again).
    template <typename F> __device__ void for_each_share(F f) const
    {
        for (int u = begin((int)blockIdx.x); u < begin((int)blockIdx.x + 1);) {
            const Share s = share(u);
            f(u, s);
            u += s.c1 - s.c0;
        }
    }
    // share(u) computed anew, not kept in registers from before.
    __device__ Share share_again(int u) const
    {
        asm volatile("" : "+r"(u));
        return share(u);
    }

    // Consumer warp cw (of the CTA's 4 CW) has in acc its share, from stage
    // c0, of a tile other CTAs share too. Its partial goes to the
    // workspace unless this warp is the last of the tile's to arrive; the
    // last adds every share, in the order of the CTAs, and hands the sums
    // to emit(t, acc[t], acc[t + 1] as float4s) for even t. Where the CTA is done with
    // its ring (idle: buffer, this warp's NT x 512 bytes of it, and bar, its
    // barrier), the other partials come in whole by the copy engine, one
    // after another; else (rare: the share's first tile, the ring busy
    // with the next) by loads of a few registers at a time.
    template <int NT, int CW, typename Emit>
    __device__ void sum_split_tile(float (&acc)[NT][4], int tile, int c0, int cw, int lane,
                                   bool ring_idle, uint32_t buffer, uint32_t bar, Emit emit) const
    {
        const int first = owner(tile * stages());
        const int shares = owner((tile + 1) * stages() - 1) - first + 1;
        const int me = (int)blockIdx.x - first;
        uint32_t *counter =
            reinterpret_cast<uint32_t *>(p.workspace) + 2 * ((int64_t)tile * 4 * CW + cw);
        uint32_t arrived = 0;
        if (lane == 0)
            arrived = atomicAdd(counter, 1u);
        arrived = __shfl_sync(0xffffffffu, arrived, 0);
        // A share from stage 0 is its CTA's last (slot 1), any other its first (0).
        const uint64_t slots = p.workspace + BK_W4A16_SK_COUNTER_BYTES(units() / stages(), CW);
        auto warp_slot = [&](int cta, int which) {
            return reinterpret_cast<float4 *>(slots + (2 * (uint64_t)cta + which) *
                                                          BK_W4A16_SK_SLOT_BYTES(TT, CW)) +
                   (int64_t)cw * NT * 32;
        };
        float4 *mine = warp_slot(blockIdx.x, c0 == 0) + lane;
        if ((int)arrived + 1 < shares) {
            split_sum::write_partial<NT>(acc, mine);
            __syncwarp();
            if (lane == 0)
                split_sum::raise(counter + 1);
            return;
        }
        // The warps that arrived before this one have their partials written
        // soon: they are running.
        if (lane == 0)
            split_sum::wait_for(counter + 1, (uint32_t)shares - 1u);
        __syncwarp();
        if (ring_idle && shares <= COPIED_SHARES) {
            sum_copied<NT>(acc, shares, me, lane, buffer, bar, mine, warp_slot(first, 1),
                           BK_W4A16_SK_SLOT_BYTES(TT, CW) / 16);
#pragma unroll
            for (int t = 0; t < NT; t += 2)
                emit(t, make_float4(acc[t][0], acc[t][1], acc[t][2], acc[t][3]),
                     make_float4(acc[t + 1][0], acc[t + 1][1], acc[t + 1][2], acc[t + 1][3]));
            return;
        }
        // Chunks of the accumulators, each summed over the shares in order.
        constexpr int CH = 4; // NT is 8, 16 or 32
#pragma unroll
        for (int t0 = 0; t0 < NT; t0 += CH) {
            float4 sum[CH];
            for (int j = 0; j < shares; j++) {
                float4 v[CH];
                if (j == me) {
#pragma unroll
                    for (int q = 0; q < CH; q++)
                        v[q] = make_float4(acc[t0 + q][0], acc[t0 + q][1], acc[t0 + q][2],
                                           acc[t0 + q][3]);
                } else {
                    const float4 *theirs = warp_slot(first + j, j == 0) + lane;
#pragma unroll
                    for (int q = 0; q < CH; q++)
                        v[q] = __ldcg(theirs + 32 * (t0 + q));
                }
#pragma unroll
                for (int q = 0; q < CH; q++) {
                    if (j == 0) {
                        sum[q] = v[q];
                    } else {
                        sum[q].x += v[q].x;
                        sum[q].y += v[q].y;
                        sum[q].z += v[q].z;
                        sum[q].w += v[q].w;
                    }
                }
            }
#pragma unroll
            for (int q = 0; q < CH; q += 2)
                emit(t0 + q, sum[q], sum[q + 1]);
        }
    }

    // acc = the shares' partials summed in order, each copied whole into
    // buffer: added to acc where this warp's is the first (acc holds it),
    // else this warp's written out too and acc set to the first. The first
    // share's partial is at first (slot 1 of its CTA), share j's 2 j - 1
    // slots of slot float4s after it (slot 0 of CTA first + j).
    template <int NT>
    static __device__ __forceinline__ void sum_copied(float (&acc)[NT][4], int shares, int me,
                                                      int lane, uint32_t buffer, uint32_t bar,
                                                      float4 *mine, const float4 *first,
                                                      int64_t slot)
    {
        using namespace bk::hopper;
        constexpr uint32_t bytes = NT * 512u;
        if (lane == 0) {
            mbar_init(bar, 1);
            mbar_fence_init();
        }
        if (me != 0) { // read back by the copy engine below
            split_sum::write_partial<NT>(acc, mine);
            __threadfence();
        }
        // The partials, acquired through the generic proxy, are read by the
        // copy engine's.
        fence_proxy_async_global();
        __syncwarp();
        uint32_t parity = 0;
        // Unrolled: acc written in a loop of unknown count costs ptxas copies.
#pragma unroll
        for (int j = 0; j < COPIED_SHARES; j++) {
            if (j >= shares || (j == 0 && me == 0))
                continue;
            if (lane == 0) {
                mbar_expect_tx(bar, bytes);
                bulk_load(buffer, first + (2 * j - (j > 0)) * slot, bytes, bar);
            }
            mbar_wait(bar, parity);
            parity ^= 1u;
#pragma unroll
            for (int t = 0; t < NT; t++) {
                const uint4 v = load_shared16(buffer + 16u * (32u * t + lane));
                if (j == 0) {
                    acc[t][0] = __uint_as_float(v.x);
                    acc[t][1] = __uint_as_float(v.y);
                    acc[t][2] = __uint_as_float(v.z);
                    acc[t][3] = __uint_as_float(v.w);
                } else {
                    acc[t][0] += __uint_as_float(v.x);
                    acc[t][1] += __uint_as_float(v.y);
                    acc[t][2] += __uint_as_float(v.z);
                    acc[t][3] += __uint_as_float(v.w);
                }
            }
            __syncwarp(); // every lane has read the buffer before the next copy
        }
    }
};

// v rounded to T, as its bits.
static __device__ __forceinline__ uint16_t bits_of(__half h)
{
    return __half_as_ushort(h);
}
static __device__ __forceinline__ uint16_t bits_of(__nv_bfloat16 h)
{
    return __bfloat16_as_ushort(h);
}

// Blocks t and t + 1 of a consumer warp's accumulators, v0 and v1 (wgmma's
// D = C^T: columns n .. n + 15 of C by rows m0 .. m0 + 15; lane 4 g + r
// holds of each block rows 2 r, 2 r + 1 of columns g and g + 8 in x, y and
// z, w) to C, rows past M left. Where C allows, they go through the warp's
// 512 bytes of shared memory at staging so that each lane stores 16 bytes
// of one row.
template <typename T>
static __device__ __forceinline__ void store_pair(const bk_w4a16_gemm_args &p, float4 v0,
                                                  float4 v1, uint32_t staging, int64_t m0,
                                                  int64_t n, int lane)
{
    T *c = reinterpret_cast<T *>(p.c);
    const int g = lane / 4, r = lane % 4;
    const float e[8] = { v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w };
    if (m0 >= p.m)
        return;
    if (!(p.flags & BK_W4A16_C_VECTOR)) {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const int64_t m = m0 + 8 * (i / 4) + 2 * r + i % 2;
            if (m < p.m)
                c[m * p.c_rs + (n + g + 8 * (i % 4 / 2)) * p.c_cs] = Storage<T>::out(e[i]);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++)
        asm volatile("st.shared.u16 [%0], %1;" ::"r"(staging + 32u * (8 * (i / 4) + 2 * r + i % 2) +
                                                    2u * (g + 8 * (i % 4 / 2))),
                     "h"(bits_of(Storage<T>::out(e[i])))
                     : "memory");
    __syncwarp();
    const uint4 row = load_shared16(staging + 16u * lane);
    const int64_t m = m0 + lane / 2;
    if (m < p.m)
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(c + m * p.c_rs + n +
                                                                      8 * (lane % 2)),
                     "r"(row.x), "r"(row.y), "r"(row.z), "r"(row.w)
                     : "memory");
    __syncwarp();
}

} // namespace w4a16
} // namespace bk

#endif // BK_W4A16_STREAM_K_CUH
