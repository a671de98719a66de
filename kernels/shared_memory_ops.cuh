// SPDX-License-Identifier: Apache-2.0
// The shared-memory primitives of the tensor-core kernels (kernels/sparse24_mma.cu,
// the W4A16 and attention kernels): loads, asynchronous 16-byte copies from
// global memory and ldmatrix, each one PTX instruction.
#ifndef BK_SHARED_MEMORY_OPS_CUH
#define BK_SHARED_MEMORY_OPS_CUH

#include <stdint.h>

namespace bk {

static __device__ __forceinline__ uint32_t shared_address(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

// 1, 4, 8 and 16 bytes from a shared-memory address, and 4 and 16 to one.
static __device__ __forceinline__ uint32_t load_shared8(uint32_t address)
{
    uint32_t v;
    asm volatile("ld.shared.u8 %0, [%1];" : "=r"(v) : "r"(address));
    return v;
}

static __device__ __forceinline__ uint32_t load_shared32(uint32_t address)
{
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address));
    return v;
}

static __device__ __forceinline__ uint4 load_shared16(uint32_t address)
{
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(address));
    return v;
}

static __device__ __forceinline__ float2 load_shared_f32x2(uint32_t address)
{
    float2 v;
    asm volatile("ld.shared.v2.f32 {%0,%1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(address));
    return v;
}

static __device__ __forceinline__ float4 load_shared_f32x4(uint32_t address)
{
    const uint4 v = load_shared16(address);
    return make_float4(__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                       __uint_as_float(v.w));
}

static __device__ __forceinline__ void store_shared_f32(uint32_t address, float v)
{
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(address), "f"(v) : "memory");
}

static __device__ __forceinline__ void store_shared16(uint32_t address, uint4 v)
{
    asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(address), "r"(v.x), "r"(v.y),
                 "r"(v.z), "r"(v.w)
                 : "memory");
}

// 16 bytes global -> shared, zero-filled past src_bytes (0 or 16).
static __device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, uint32_t src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(src_bytes));
}

// An L2 policy that marks what it covers to be evicted first: for bytes
// read once (a KV cache's stream), so that they do not push out of the L2
// what is read again soon (the parts a combining kernel reads back).
static __device__ __forceinline__ uint64_t l2_evict_first_policy()
{
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

// The L2's usual policy, for a choice between the two.
static __device__ __forceinline__ uint64_t l2_evict_normal_policy()
{
    uint64_t policy;
    asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

// cp_async16 with an L2 policy (l2_evict_first_policy).
static __device__ __forceinline__ void cp_async16_policy(uint32_t dst, const void *src,
                                                         uint32_t src_bytes, uint64_t policy)
{
    asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst),
                 "l"(src), "r"(src_bytes), "l"(policy));
}

static __device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// An arrival on the shared-memory barrier at bar once every copy this
// thread issued so far has landed; the barrier's count includes it.
static __device__ __forceinline__ void cp_async_arrive_noinc(uint32_t bar)
{
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// Waits until at most N of this thread's copy groups are still in flight.
template <int N> static __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8 x 8 matrices of 16-bit values stored transposed: register i of
// each lane holds its pair of matrix i (row lane / 4, columns 2 (lane % 4)
// and + 1), which lands in column lane / 4 of rows 2 (lane % 4) and + 1;
// lanes 8 i .. 8 i + 7 give the addresses of matrix i's rows as stored.
static __device__ __forceinline__ void stmatrix_x4_trans(uint32_t address, const uint32_t (&r)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 ::"r"(address), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

// Four 8 x 8 matrices of 16-bit pairs stored as they are (r[i]: matrix
// i, a thread's row lane / 4, columns 2 (lane % 4) and + 1): lane 8 i + j
// gives the address of matrix i's row j (16 bytes); ldmatrix_x4 reads
// them back into the same registers.
static __device__ __forceinline__ void stmatrix_x4(uint32_t address, const uint32_t (&r)[4])
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 ::"r"(address), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

static __device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(address));
}

static __device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// Four 8 x 8 matrices of 16-bit pairs (r[i]: matrix i, a thread's row
// lane / 4, columns 2 (lane % 4) and + 1), each stored transposed: lane
// 8 i + j gives the address of matrix i's row j (16 bytes), which gets
// the matrix's column j.
static __device__ __forceinline__ void stmatrix_x4_trans(uint32_t address, uint32_t r0, uint32_t r1,
                                                         uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                     address),
                 "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

} // namespace bk

#endif // BK_SHARED_MEMORY_OPS_CUH
