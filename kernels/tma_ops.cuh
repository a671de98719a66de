// SPDX-License-Identifier: Apache-2.0
// The bulk tensor copy engine (TMA, sm_90) and the shared-memory barriers
// its copies complete on, for the kernels that use it.
#ifndef BK_TMA_OPS_CUH
#define BK_TMA_OPS_CUH

#include <stdint.h>

namespace bk {
namespace hopper {

// A place in a ring of stages: the stage and the parity of its barriers'
// phase for the current pass over the ring.
struct RingPos {
    uint32_t s = 0, phase = 0;
    __device__ void advance(int stages)
    {
        if (++s == (uint32_t)stages) {
            s = 0;
            phase ^= 1u;
        }
    }
};

static __device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// Makes initialised barriers visible to the copy engine and other threads
// (then __syncthreads).
static __device__ __forceinline__ void mbar_fence_init()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces bytes the copies will complete on bar.
static __device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(bytes)
                 : "memory");
}

static __device__ __forceinline__ void mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Waits until the barrier's phase of the given parity has completed (with
// the try_wait's SEMANTICS: "" acquires at CTA scope).
#define BK_MBAR_WAIT_LOOP(SEMANTICS)                                                              \
    "{\n.reg .pred done;\nWAIT_%=:\n"                                                             \
    "mbarrier.try_wait.parity" SEMANTICS ".shared::cta.b64 done, [%0], %1;\n"                     \
    "@!done bra WAIT_%=;\n}\n"
static __device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity)
{
    asm volatile(BK_MBAR_WAIT_LOOP("")::"r"(bar), "r"(parity) : "memory");
}

// A box of a 2-D tensor map (coordinates innermost first) into shared
// memory at dst, completing its bytes on bar.
static __device__ __forceinline__ void tma_load_2d(uint32_t dst, const void *map, int c0, int c1,
                                                   uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

// tma_load_2d with an L2 policy (shared_memory_ops.cuh's
// l2_evict_first_policy, say).
static __device__ __forceinline__ void tma_load_2d_policy(uint32_t dst, const void *map, int c0,
                                                          int c1, uint32_t bar, uint64_t policy)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(bar), "l"(policy)
                 : "memory");
}

// bytes (a multiple of 16, both addresses 16-byte aligned) of global
// memory at src into shared memory at dst, completing on bar.
static __device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes,
                                                 uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)src), "r"(bytes), "r"(bar)
                 : "memory");
}

// This thread's global-memory writes made visible to the copy engine's
// reads (before a barrier and the copy that reads them).
static __device__ __forceinline__ void fence_proxy_async_global()
{
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// A box of a 3-D tensor map (coordinates innermost first) into shared
// memory at dst, completing its bytes on bar.
static __device__ __forceinline__ void tma_load_3d(uint32_t dst, const void *map, int c0, int c1,
                                                   int c2, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
                 : "memory");
}

// The same box multicast to the CTAs of the cluster in cta_mask (bit r:
// rank r), at dst in each and completing on the barrier at bar in each.
static __device__ __forceinline__ void tma_load_3d_multicast(uint32_t dst, const void *map,
                                                             int c0, int c1, int c2, uint32_t bar,
                                                             uint16_t cta_mask)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar),
                 "h"(cta_mask)
                 : "memory");
}

// Thread block clusters: this CTA's rank, a barrier of every thread of
// the cluster (release/acquire: shared-memory writes before it are seen
// after it), and an arrival on the barrier at bar in CTA rank's shared
// memory (this CTA's own included).
static __device__ __forceinline__ uint32_t cluster_rank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// The cluster barrier's two halves, for a thread with work between them
// (arrive releases what it did before; wait acquires what the others did
// before their arrivals), and the whole barrier.
static __device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
static __device__ __forceinline__ void cluster_sync()
{
    cluster_arrive();
    cluster_wait();
}

static __device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank)
{
    asm volatile("{\n.reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
                 "r"(rank)
                 : "memory");
}

// Point to point through distributed shared memory: addr's place in CTA
// rank's shared memory; 16 bytes stored there, completing on the barrier
// at remote_bar there (its bytes announced by that CTA); an arrival there
// that releases this thread's accesses before it to the cluster; and a
// wait on a barrier of this CTA that acquires what the other CTA's
// arrivals released.
static __device__ __forceinline__ uint32_t cluster_address(uint32_t addr, uint32_t rank)
{
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
    return remote;
}
static __device__ __forceinline__ void store_cluster_v4(uint32_t remote, float4 v,
                                                        uint32_t remote_bar)
{
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, "
                 "%4}, [%5];\n" ::"r"(remote),
                 "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(remote_bar)
                 : "memory");
}
static __device__ __forceinline__ void mbar_arrive_release_cluster(uint32_t remote)
{
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote)
                 : "memory");
}
static __device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, uint32_t parity)
{
    asm volatile(BK_MBAR_WAIT_LOOP(".acquire.cluster")::"r"(bar), "r"(parity) : "memory");
}

// The float at addr in CTA rank's shared memory (distributed shared
// memory; addr is this CTA's address of the same variable). Volatile with
// a memory clobber: never moved across the cluster barrier that makes the
// value ready.
static __device__ __forceinline__ float load_cluster_f32(uint32_t addr, uint32_t rank)
{
    float v;
    asm volatile("{\n.reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %1, %2;\n"
                 "ld.shared::cluster.f32 %0, [remote];\n}\n"
                 : "=f"(v)
                 : "r"(addr), "r"(rank)
                 : "memory");
    return v;
}

// A box of a 4-D tensor map (coordinates innermost first) into shared
// memory at dst, completing its bytes on bar.
static __device__ __forceinline__ void tma_load_4d(uint32_t dst, const void *map, int c0, int c1,
                                                   int c2, int c3, uint32_t bar)
{
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes "
                 "[%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
                 "l"((uint64_t)(uintptr_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
                 : "memory");
}

// Shared-memory writes of this thread made visible to the copy engine
// (before a barrier and the store that reads them).
static __device__ __forceinline__ void fence_proxy_async_shared()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// The box at src (shared memory) to a 3-D tensor map's box at (c0, c1,
// c2), innermost first; the engine clips what lies past the tensor. One
// bulk group per commit_stores.
static __device__ __forceinline__ void tma_store_3d(const void *map, uint32_t src, int c0, int c1,
                                                    int c2)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
                 ::"l"((uint64_t)(uintptr_t)map), "r"(src), "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
// bytes (a multiple of 16, both addresses 16-byte aligned) of shared
// memory at src to global memory at dst, or added to the F32 values there
// (the add done in the L2, one operation per element): one bulk group per
// commit_stores, as the tensor stores.
static __device__ __forceinline__ void bulk_store(void *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst),
                 "r"(src), "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void bulk_add_f32(float *dst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n"
                 ::"l"(dst), "r"(src), "r"(bytes)
                 : "memory");
}
static __device__ __forceinline__ void commit_stores()
{
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// This thread's store groups but the newest N have read their shared memory.
template <int N> static __device__ __forceinline__ void wait_stores_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Every store group of this thread is done.
static __device__ __forceinline__ void wait_stores_done()
{
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

} // namespace hopper
} // namespace bk

#endif // BK_TMA_OPS_CUH
