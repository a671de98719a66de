// SPDX-License-Identifier: Apache-2.0
// Hopper's warpgroup MMA (wgmma, sm_90a) and the shared-memory matrix
// descriptors it reads, for the kernels that use it. A warpgroup is 4
// consecutive warps starting at a warp index divisible by 4; the
// accumulator fragment of m64nNk16 gives warp w rows 16 w .. 16 w + 15 in
// the layout of mma.sync's m16n8 tiles, N / 8 of them side by side, and a
// register A operand is mma.sync's m16n8k16 A fragment.
//
// Operands in shared memory use the 128-byte swizzle (what the bulk tensor
// copy engine writes with CU_TENSOR_MAP_SWIZZLE_128B): rows of 64 16-bit
// elements, 8-row atoms of 1024 bytes aligned to 1024, chunk c of row r
// at chunk c ^ (r % 8).
#ifndef BK_WGMMA_OPS_CUH
#define BK_WGMMA_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace bk {
namespace hopper {

// A descriptor of a 128-byte swizzled operand at shared address addr.
// K-major (the 16-bit elements along K contiguous): sbo is the distance
// between 8-row groups (1024), lbo unused. MN-major (transposed): lbo is
// the distance between 64-element column blocks, sbo between 8-row groups
// along K.
static __device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | (uint64_t)((lbo >> 4) & 0x3FFFu) << 16 |
           (uint64_t)((sbo >> 4) & 0x3FFFu) << 32 | (uint64_t)1 << 62;
}

// A descriptor of an operand without swizzle at shared address addr: 8 x
// 16-byte core matrices of 128 contiguous bytes each, lbo the distance
// between core matrices along K, sbo between 8-row groups (K-major).
static __device__ __forceinline__ uint64_t smem_desc_plain(uint32_t addr, uint32_t lbo,
                                                           uint32_t sbo)
{
    return (uint64_t)((addr & 0x3FFFFu) >> 4) | (uint64_t)((lbo >> 4) & 0x3FFFu) << 16 |
           (uint64_t)((sbo >> 4) & 0x3FFFu) << 32;
}

// The descriptor of the operand `bytes` (a multiple of 16) past the one
// desc describes: one add to the start address field instead of a new
// descriptor (shared memory ends below 256 KiB, so the field cannot carry).
static __device__ __forceinline__ uint64_t smem_desc_add(uint64_t desc, uint32_t bytes)
{
    return (desc & 0xFFFFFFFF00000000ull) | (uint32_t)((uint32_t)desc + (bytes >> 4));
}

// x, known to ptxas as the same in every lane of the warp (a broadcast
// from lane 0). Shared addresses and warpgroup indices derived from
// threadIdx look per-lane to ptxas, so every wgmma descriptor made from
// them was built in ordinary registers and moved to uniform ones (R2UR)
// before each instruction; made from such a value they stay uniform.
template <typename V> static __device__ __forceinline__ V warp_uniform(V x)
{
    return __shfl_sync(0xFFFFFFFFu, x, 0);
}

// Warpgroup register reallocation (setmaxnreg, every thread of the
// warpgroup): shrink to N registers a thread, giving the rest to the CTA's
// pool, or grow to N from it. Warp-specialised kernels move registers from
// a producer that needs few to consumers that hold the accumulators.
template <int N> static __device__ __forceinline__ void registers_shrink_to()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N) : "memory");
}
template <int N> static __device__ __forceinline__ void registers_grow_to()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N) : "memory");
}

// Orders register writes before wgmma reads them (accumulators, A).
static __device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

static __device__ __forceinline__ void wgmma_commit()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most N committed groups of this warp are in flight.
template <int N> static __device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving reads or writes of registers that an
// in-flight wgmma uses across the wait (call right after wgmma_wait on
// its accumulators and its register A operand).
template <int N> static __device__ __forceinline__ void fence_operand(float (&x)[N][4])
{
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            asm volatile("" : "+f"(x[i][j])::"memory");
}
template <int N> static __device__ __forceinline__ void fence_operand(uint32_t (&x)[N][4])
{
#pragma unroll
    for (int i = 0; i < N; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            asm volatile("" : "+r"(x[i][j])::"memory");
}

// D (64 x N) = A B^T (+ D when accumulate): A 64 x 16 and B N x 16, both
// K-major in shared memory (N = 64, 128 or 192); _t: D = A B with B
// 16 x 64 MN-major.
#define BK_WGMMA_SS_DECLARE(NAME, N)                                                           \
    template <typename T>                                                                      \
    __device__ __forceinline__ void NAME(float (&d)[N / 8][4], uint64_t da, uint64_t db,        \
                                         int accumulate);
BK_WGMMA_SS_DECLARE(mma_ss_n64, 64)
BK_WGMMA_SS_DECLARE(mma_ss_n128, 128)
BK_WGMMA_SS_DECLARE(mma_ss_n192, 192)
BK_WGMMA_SS_DECLARE(mma_ss_n64_t, 64)
// D (64 x N) = A B (+ D when accumulate; without the flag, D += A B): A
// 64 x 16 in registers, B 16 x N in shared memory, MN-major (_t) or
// K-major (_k) (N = 64 or 128; 192 MN-major; 256 both).
#define BK_WGMMA_RS_DECLARE(NAME, N)                                                           \
    template <typename T>                                                                      \
    __device__ __forceinline__ void NAME(float (&d)[N / 8][4], const uint32_t (&a)[4],          \
                                         uint64_t db, int accumulate);                         \
    template <typename T>                                                                      \
    __device__ __forceinline__ void NAME(float (&d)[N / 8][4], const uint32_t (&a)[4],          \
                                         uint64_t db);
BK_WGMMA_RS_DECLARE(mma_rs_n64_t, 64)
BK_WGMMA_RS_DECLARE(mma_rs_n128_t, 128)
BK_WGMMA_RS_DECLARE(mma_rs_n192_t, 192)
BK_WGMMA_RS_DECLARE(mma_rs_n256_t, 256)
BK_WGMMA_RS_DECLARE(mma_rs_n64_k, 64)
BK_WGMMA_RS_DECLARE(mma_rs_n128_k, 128)
BK_WGMMA_RS_DECLARE(mma_rs_n256_k, 256)
// D (64 x N) += A B with A 2:4 sparse (wgmma.sp, k32): A's kept values
// (64 x 16) in registers as mma.sp's m16n8k32 A fragment, e the thread's
// metadata word (sparsity selector 0: lanes 4 g and 4 g + 1 of each warp
// supply it), B 32 x N K-major in shared memory (N = 128, 160, 192 or
// 256).
template <typename T>
__device__ __forceinline__ void mma_sp_rs_n128_k(float (&d)[16][4], const uint32_t (&a)[4],
                                                 uint64_t db, uint32_t e);
template <typename T>
__device__ __forceinline__ void mma_sp_rs_n160_k(float (&d)[20][4], const uint32_t (&a)[4],
                                                 uint64_t db, uint32_t e);
template <typename T>
__device__ __forceinline__ void mma_sp_rs_n192_k(float (&d)[24][4], const uint32_t (&a)[4],
                                                 uint64_t db, uint32_t e);
template <typename T>
__device__ __forceinline__ void mma_sp_rs_n256_k(float (&d)[32][4], const uint32_t (&a)[4],
                                                 uint64_t db, uint32_t e);
// The same with A's kept values in shared memory (descriptor da).
template <typename T>
__device__ __forceinline__ void mma_sp_ss_n128_k(float (&d)[16][4], uint64_t da, uint64_t db,
                                                 uint32_t e);
template <typename T>
__device__ __forceinline__ void mma_sp_ss_n256_k(float (&d)[32][4], uint64_t da, uint64_t db,
                                                 uint32_t e);

// The wrappers above, from one shape of each. An m64nNk16 instruction has
// N / 2 accumulators per thread, d[N / 8][4], operands %0 .. %(N / 2 - 1);
// BK_WGMMA_REGS_N names them in the instruction, BK_WGMMA_D_N binds them,
// and the operands after them are numbered from N / 2 (the _TAIL strings).
#define BK_WGMMA_D(i) "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])
#define BK_WGMMA_D8(i)                                                                         \
    BK_WGMMA_D(i), BK_WGMMA_D(i + 1), BK_WGMMA_D(i + 2), BK_WGMMA_D(i + 3), BK_WGMMA_D(i + 4), \
        BK_WGMMA_D(i + 5), BK_WGMMA_D(i + 6), BK_WGMMA_D(i + 7)
#define BK_WGMMA_D_64 BK_WGMMA_D8(0)
#define BK_WGMMA_D_128 BK_WGMMA_D8(0), BK_WGMMA_D8(8)
#define BK_WGMMA_D_160 BK_WGMMA_D8(0), BK_WGMMA_D8(8), BK_WGMMA_D(16), BK_WGMMA_D(17), \
    BK_WGMMA_D(18), BK_WGMMA_D(19)
#define BK_WGMMA_D_192 BK_WGMMA_D8(0), BK_WGMMA_D8(8), BK_WGMMA_D8(16)
#define BK_WGMMA_D_256 BK_WGMMA_D8(0), BK_WGMMA_D8(8), BK_WGMMA_D8(16), BK_WGMMA_D8(24)
/* The accumulator operands %0 .. %(N / 2 - 1), each list the one before and more. */
#define BK_WGMMA_REGS_64 \
    "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11," \
    "%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23," \
    "%24,%25,%26,%27,%28,%29,%30,%31"
#define BK_WGMMA_REGS_128 \
    BK_WGMMA_REGS_64 "," \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43," \
    "%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55," \
    "%56,%57,%58,%59,%60,%61,%62,%63"
#define BK_WGMMA_REGS_160 \
    BK_WGMMA_REGS_128 "," \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75," \
    "%76,%77,%78,%79"
#define BK_WGMMA_REGS_192 \
    BK_WGMMA_REGS_128 "," \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75," \
    "%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87," \
    "%88,%89,%90,%91,%92,%93,%94,%95"
#define BK_WGMMA_REGS_256 \
    BK_WGMMA_REGS_192 "," \
    "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107," \
    "%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119," \
    "%120,%121,%122,%123,%124,%125,%126,%127"
/* Shared A and B: da, db, then the accumulate flag. */
#define BK_WGMMA_SS_TAIL_64 "%32, %33", "%34"
#define BK_WGMMA_SS_TAIL_128 "%64, %65", "%66"
#define BK_WGMMA_SS_TAIL_192 "%96, %97", "%98"
/* Register A (four registers), then B's descriptor; then the accumulate
 * flag. */
#define BK_WGMMA_RS_TAIL_64 "{%32,%33,%34,%35}, %36"
#define BK_WGMMA_RS_TAIL_128 "{%64,%65,%66,%67}, %68"
#define BK_WGMMA_RS_TAIL_192 "{%96,%97,%98,%99}, %100"
#define BK_WGMMA_RS_TAIL_256 "{%128,%129,%130,%131}, %132"
#define BK_WGMMA_RS_FLAG_64 "%37"
#define BK_WGMMA_RS_FLAG_128 "%69"
#define BK_WGMMA_RS_FLAG_192 "%101"
#define BK_WGMMA_RS_FLAG_256 "%133"
/* Sparse: register A, B's descriptor, the metadata word. */
#define BK_WGMMA_SP_TAIL_128 "{%64,%65,%66,%67}, %68, %69"
#define BK_WGMMA_SP_TAIL_160 "{%80,%81,%82,%83}, %84, %85"
#define BK_WGMMA_SP_TAIL_192 "{%96,%97,%98,%99}, %100, %101"
#define BK_WGMMA_SP_TAIL_256 "{%128,%129,%130,%131}, %132, %133"
#define BK_WGMMA_SPSS_TAIL_128 "%64, %65, %66"
#define BK_WGMMA_SPSS_TAIL_256 "%128, %129, %130"
#define BK_WGMMA_FIRST(a, b) a
#define BK_WGMMA_SECOND(a, b) b
#define BK_WGMMA_CALL(m, args) m args

/* D = A B^T (+ D when accumulate), both K-major in shared memory (TRANS
 * "1": B MN-major, D = A B). */
#define BK_WGMMA_SS(T, PTX, NAME, N, TRANS)                                                    \
    template <>                                                                                \
    __device__ __forceinline__ void NAME<T>(float (&d)[N / 8][4], uint64_t da, uint64_t db,     \
                                            int accumulate)                                    \
    {                                                                                          \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, "                                       \
                     BK_WGMMA_CALL(BK_WGMMA_SECOND, (BK_WGMMA_SS_TAIL_##N)) ", 0;\n"          \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {"        \
                     BK_WGMMA_REGS_##N "}, "                                                   \
                     BK_WGMMA_CALL(BK_WGMMA_FIRST, (BK_WGMMA_SS_TAIL_##N))                     \
                     ", p, 1, 1, 0, " TRANS ";\n}\n"                                           \
                     : BK_WGMMA_D_##N                                                          \
                     : "l"(da), "l"(db), "r"(accumulate));                                     \
    }

/* D = A B (+ D when accumulate), A in registers, B in shared memory (TRANS
 * "1": MN-major, "0": K-major); the overload without the flag accumulates. */
#define BK_WGMMA_RS(T, PTX, NAME, N, TRANS)                                                    \
    template <>                                                                                \
    __device__ __forceinline__ void NAME<T>(float (&d)[N / 8][4], const uint32_t (&a)[4],       \
                                            uint64_t db, int accumulate)                       \
    {                                                                                          \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " BK_WGMMA_RS_FLAG_##N ", 0;\n"         \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX "." PTX " {"        \
                     BK_WGMMA_REGS_##N "}, " BK_WGMMA_RS_TAIL_##N ", p, 1, 1, " TRANS ";\n}\n" \
                     : BK_WGMMA_D_##N                                                          \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate)); \
    }                                                                                          \
    template <>                                                                                \
    __device__ __forceinline__ void NAME<T>(float (&d)[N / 8][4], const uint32_t (&a)[4],       \
                                            uint64_t db)                                       \
    {                                                                                          \
        NAME<T>(d, a, db, 1);                                                                  \
    }

/* D += A B, A 2:4 sparse in registers with its metadata word e (selector
 * 0), B K-major in shared memory. */
#define BK_WGMMA_SP(T, PTX, N)                                                                 \
    template <>                                                                                \
    __device__ __forceinline__ void mma_sp_rs_n##N##_k<T>(float (&d)[N / 8][4],                 \
                                                          const uint32_t (&a)[4], uint64_t db,  \
                                                          uint32_t e)                          \
    {                                                                                          \
        asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"                                 \
                     "wgmma.mma_async.sp.sync.aligned.m64n" #N "k32.f32." PTX "." PTX " {"     \
                     BK_WGMMA_REGS_##N "}, " BK_WGMMA_SP_TAIL_##N ", 0, p, 1, 1, 0;\n}\n"      \
                     : BK_WGMMA_D_##N                                                          \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(e));           \
    }

/* D += A B, A 2:4 sparse in shared memory (its kept values, 64 x 16, K-major,
 * at descriptor da) with its metadata word e (selector 0), B K-major. */
#define BK_WGMMA_SP_SS(T, PTX, N)                                                              \
    template <>                                                                                \
    __device__ __forceinline__ void mma_sp_ss_n##N##_k<T>(float (&d)[N / 8][4], uint64_t da,    \
                                                          uint64_t db, uint32_t e)             \
    {                                                                                          \
        asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"                                 \
                     "wgmma.mma_async.sp.sync.aligned.m64n" #N "k32.f32." PTX "." PTX " {"     \
                     BK_WGMMA_REGS_##N "}, " BK_WGMMA_SPSS_TAIL_##N ", 0, p, 1, 1, 0, 0;\n}\n"  \
                     : BK_WGMMA_D_##N                                                          \
                     : "l"(da), "l"(db), "r"(e));                                              \
    }

#define BK_WGMMA_TYPE(T, PTX)                                                                  \
    BK_WGMMA_SS(T, PTX, mma_ss_n64, 64, "0")                                                   \
    BK_WGMMA_SS(T, PTX, mma_ss_n128, 128, "0")                                                 \
    BK_WGMMA_SS(T, PTX, mma_ss_n192, 192, "0")                                                 \
    BK_WGMMA_SS(T, PTX, mma_ss_n64_t, 64, "1")                                                 \
    BK_WGMMA_RS(T, PTX, mma_rs_n64_t, 64, "1")                                                 \
    BK_WGMMA_RS(T, PTX, mma_rs_n128_t, 128, "1")                                               \
    BK_WGMMA_RS(T, PTX, mma_rs_n192_t, 192, "1")                                               \
    BK_WGMMA_RS(T, PTX, mma_rs_n256_t, 256, "1")                                               \
    BK_WGMMA_RS(T, PTX, mma_rs_n64_k, 64, "0")                                                 \
    BK_WGMMA_RS(T, PTX, mma_rs_n128_k, 128, "0")                                               \
    BK_WGMMA_RS(T, PTX, mma_rs_n256_k, 256, "0")                                               \
    BK_WGMMA_SP(T, PTX, 128)                                                                   \
    BK_WGMMA_SP(T, PTX, 160)                                                                   \
    BK_WGMMA_SP(T, PTX, 192)                                                                   \
    BK_WGMMA_SP(T, PTX, 256)                                                                   \
    BK_WGMMA_SP_SS(T, PTX, 128)                                                                \
    BK_WGMMA_SP_SS(T, PTX, 256)

BK_WGMMA_TYPE(__half, "f16")
BK_WGMMA_TYPE(__nv_bfloat16, "bf16")

} // namespace hopper
} // namespace bk

#endif // BK_WGMMA_OPS_CUH
