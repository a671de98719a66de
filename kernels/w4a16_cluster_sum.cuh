// SPDX-License-Identifier: Apache-2.0
// The end of both W4A16 GEMM kernels (kernels/w4a16_gemm.cu, kernels/w4a16_wgmma.cu):
// each CTA of a cluster along y (S of them, splitting K) has left its
// partial tile, rows x TN floats, at `red` in its shared memory; rank q
// adds slice q of the tile over the ranks in rank order (deterministic)
// and stores it to C, columns past N skipped. Without clusters (S = 1,
// or a GPU older than sm_90) the CTA stores its own tile. Every thread of
// the CTA calls it.
#ifndef BK_W4A16_CLUSTER_SUM_CUH
#define BK_W4A16_CLUSTER_SUM_CUH

#include "element_types.cuh"
#include "w4a16_args.h"

// Thread block clusters (and distributed shared memory): sm_90 and later.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#define BK_W4A16_HAS_CLUSTERS 1
#else
#define BK_W4A16_HAS_CLUSTERS 0
#endif

namespace bk {
namespace w4a16 {

template <typename T, int S, int TN>
static __device__ __forceinline__ void store_cluster_sum(const bk_w4a16_gemm_args &p,
                                                         float *red, int64_t rows, int64_t m0,
                                                         int64_t n0)
{
    const int64_t elements = rows * TN;
    int64_t begin = 0, end = elements;
#if BK_W4A16_HAS_CLUSTERS
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    if (S > 1) {
        cluster.sync();
        const unsigned rank = cluster.block_rank();
        begin = elements * rank / S;
        end = elements * (rank + 1) / S;
    } else {
        __syncthreads();
    }
#else
    __syncthreads();
#endif
    T *c = reinterpret_cast<T *>(p.c);
    for (int64_t e = begin + threadIdx.x; e < end; e += blockDim.x) {
        const int64_t r = e / TN, col = e % TN;
        float v = red[e];
#if BK_W4A16_HAS_CLUSTERS
        if (S > 1) {
            v = 0.f;
#pragma unroll
            for (int q = 0; q < S; q++)
                v += cluster.map_shared_rank(red, q)[e];
        }
#endif
        if (n0 + col < p.n)
            c[(m0 + r) * p.c_rs + (n0 + col) * p.c_cs] = Storage<T>::out(v);
    }
#if BK_W4A16_HAS_CLUSTERS
    if (S > 1)
        cluster.sync(); // the other ranks read this CTA's tile until here
#endif
}

} // namespace w4a16
} // namespace bk

#endif // BK_W4A16_CLUSTER_SUM_CUH
