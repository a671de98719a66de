// SPDX-License-Identifier: Apache-2.0
// The W4A16 GEMM kernels' L2 prefetch before the wait for the grid before
// (kernels/w4a16_gemm.cu, kernels/w4a16_wgmma.cu). Launched with
// programmatic dependent launch, a CTA may start while the kernel before
// it drains. The GEMM only reads its weights, scales and zero points, and
// L2 is the point of coherence: a line prefetched into it before
// griddepcontrol.wait is still updated by any write of the kernel before
// (in a decode step none writes them), so the pipeline reads after the
// wait what it would have read anyway, with the weights' stream already
// under way. A and C wait as before.
//
// How many of its stages a CTA prefetches is BK_W4A16_PREFETCH_STAGES of
// the flags (w4a16_args.h), set at plan time. One bulk prefetch
// (cp.async.bulk.prefetch.L2, sm_90) a row of the tile's columns: a
// k-tile row of the weights (8 bytes a column), a scale row (2 bytes a
// column), a row of packedZeros (half a byte a column), the rows spread
// over the warps taking part. The bulk prefetch takes its operands from
// uniform registers: a warp's lanes issue the same row (ptxas loops over
// the distinct addresses of a warp's lanes, so one a lane would be issued
// one after another). Below sm_90 there is no programmatic launch (the
// wait is a no-op) and nothing is compiled.
#ifndef BK_W4A16_PREFETCH_CUH
#define BK_W4A16_PREFETCH_CUH

#include <stdint.h>

#include "w4a16_args.h"

namespace bk {
namespace w4a16 {

// The rows of stages [c0, c1) (SK rows of K each, cut at K) of the tile of
// TN columns at n0, cut at N; zeros: the address of packedZeros, or 0
// without zero points. Warp `warp` of the `warps` taking part issues
// every warps-th row from its warp-th; every lane of the warp calls it.
// Groups are 32, 64 or 128 rows (shifts, no 64-bit division: that is a
// call with a stack frame); per channel the one scale row.
template <int SK, int TN>
static __device__ __forceinline__ void prefetch_stages(const bk_w4a16_gemm_args &p,
                                                       uint64_t zeros, int64_t n0, int64_t c0,
                                                       int64_t c1, int warp, int warps)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Known to ptxas as the same in every lane (a broadcast), so that the
    // rows' addresses are made in uniform registers.
    warp = __shfl_sync(0xffffffffu, warp, 0);
    const int64_t k0 = c0 * SK, k1 = c1 * SK < p.k ? c1 * SK : p.k;
    if (k0 >= k1)
        return;
    const int64_t cols = p.n - n0 < TN ? p.n - n0 : TN;
    const bool per_channel = p.flags & BK_W4A16_PER_CHANNEL;
    const int shift = __ffs(p.group) - 1;
    const int w_rows = (int)((k1 - k0) >> 4);
    const int64_t g0 = per_channel ? 0 : k0 >> shift;
    const int s_rows = per_channel ? 1 : (int)(((k1 - 1) >> shift) - g0 + 1);
    const int z_rows = zeros ? s_rows : 0;
    const char *const w = reinterpret_cast<const char *>(p.packed) + 8 * ((k0 >> 4) * p.n + n0);
    const char *const s = reinterpret_cast<const char *>(p.scales) + 2 * (g0 * p.n + n0);
    const char *const z = reinterpret_cast<const char *>(zeros) + (g0 * p.n + n0) / 2;
    for (int i = warp; i < w_rows + s_rows + z_rows; i += warps) {
        const char *at;
        uint32_t bytes;
        if (i < w_rows) {
            at = w + 8 * i * p.n;
            bytes = 8u * (uint32_t)cols;
        } else if (i < w_rows + s_rows) {
            at = s + 2 * (i - w_rows) * p.n;
            bytes = 2u * (uint32_t)cols;
        } else {
            at = z + (i - w_rows - s_rows) * p.n / 2;
            bytes = (uint32_t)cols / 2u;
        }
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(at), "r"(bytes));
    }
#else
    (void)p, (void)zeros, (void)n0, (void)c0, (void)c1, (void)warp, (void)warps;
#endif
}

} // namespace w4a16
} // namespace bk

#endif // BK_W4A16_PREFETCH_CUH
