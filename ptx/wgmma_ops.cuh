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

// D (64 x 64) = A B^T (+ D when accumulate): A 64 x 16 and B 64 x 16, both
// K-major in shared memory.
template <typename T>
__device__ __forceinline__ void mma_ss_n64(float (&d)[8][4], uint64_t da, uint64_t db,
                                           int accumulate);
template <typename T>
__device__ __forceinline__ void mma_ss_n128(float (&d)[16][4], uint64_t da, uint64_t db,
                                            int accumulate);
// D (64 x N) += A B: A 64 x 16 in registers, B 16 x N in shared memory,
// MN-major (_t) or K-major (_k) (N = 64 or 128; 256 K-major).
template <typename T>
__device__ __forceinline__ void mma_rs_n64_t(float (&d)[8][4], const uint32_t (&a)[4],
                                             uint64_t db);
template <typename T>
__device__ __forceinline__ void mma_rs_n128_t(float (&d)[16][4], const uint32_t (&a)[4],
                                              uint64_t db);
template <typename T>
__device__ __forceinline__ void mma_rs_n64_k(float (&d)[8][4], const uint32_t (&a)[4],
                                             uint64_t db);
template <typename T>
__device__ __forceinline__ void mma_rs_n128_k(float (&d)[16][4], const uint32_t (&a)[4],
                                              uint64_t db);
template <typename T>
__device__ __forceinline__ void mma_rs_n256_k(float (&d)[32][4], const uint32_t (&a)[4],
                                              uint64_t db);

// The wrappers above for one type: T and its PTX name (f16, bf16).
#define BK_WGMMA_SPECIALISE(T, PTX)                                                                \
template <> __device__ __forceinline__ void mma_ss_n64<T>(float (&d)[8][4], uint64_t da,           \
                                                                  uint64_t db, int accumulate)     \
{                                                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                      \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " "                     \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,"                                         \
                 "%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"                                \
                 "%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 0, 0;\n}\n"                 \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                     \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                     \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                     \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                     \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                     \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                     \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                     \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])                      \
                 : "l"(da), "l"(db), "r"(accumulate));                                             \
}                                                                                                  \
template <> __device__ __forceinline__ void mma_ss_n128<T>(float (&d)[16][4], uint64_t da,         \
                                                                   uint64_t db, int accumulate)    \
{                                                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                      \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX "." PTX " "                    \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,"                                         \
                 "%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"                                \
                 "%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,"                                \
                 "%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                                \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,"                                \
                 "%60,%61,%62,%63}, %64, %65, p, 1, 1, 0, 0;\n}\n"                                 \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                     \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                     \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                     \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                     \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                     \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                     \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                     \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),                     \
                   "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),                     \
                   "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),                     \
                   "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]),                 \
                   "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),                 \
                   "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),                 \
                   "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),                 \
                   "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),                 \
                   "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])                  \
                 : "l"(da), "l"(db), "r"(accumulate));                                             \
}

// The register-A wrappers for one type, name and B layout (TRANS "1":
// MN-major, "0": K-major).
#define BK_WGMMA_RS_N64(T, PTX, NAME, TRANS)                                                      \
template <> __device__ __forceinline__ void NAME<T>(float (&d)[8][4],                      \
                                                                     const uint32_t (&a)[4],       \
                                                                     uint64_t db)                  \
{                                                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"                                        \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTX "." PTX " "                     \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,"                                         \
                 "%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"                                \
                 "%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, p, 1, 1, " TRANS ";\n}\n"      \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                     \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                     \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                     \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                     \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                     \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                     \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                     \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])                      \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));                           \
}

#define BK_WGMMA_RS_N128(T, PTX, NAME, TRANS)                                                     \
template <> __device__ __forceinline__ void NAME<T>(float (&d)[16][4],                    \
                                                                     const uint32_t (&a)[4],       \
                                                                     uint64_t db)                  \
{                                                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"                                        \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX "." PTX " "                    \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,"                                         \
                 "%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"                                \
                 "%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,"                                \
                 "%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                                \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,"                                \
                 "%60,%61,%62,%63}, {%64,%65,%66,%67}, %68, p, 1, 1, " TRANS ";\n}\n"                      \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                     \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                     \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                     \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                     \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                     \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                     \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                     \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),                     \
                   "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),                     \
                   "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),                     \
                   "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]),                 \
                   "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),                 \
                   "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),                 \
                   "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),                 \
                   "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),                 \
                   "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));                           \
}

#define BK_WGMMA_RS_N256(T, PTX, NAME, TRANS)                                                      \
template <> __device__ __forceinline__ void NAME<T>(float (&d)[32][4], const uint32_t (&a)[4], \
                                                    uint64_t db)                                   \
{                                                                                                  \
    asm volatile("{\n.reg .pred p;\nsetp.eq.u32 p, 1, 1;\n"                                        \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." PTX "." PTX " {"                   \
                 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,"                                          \
                 "%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,"                                \
                 "%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%34,%35,"                                \
                 "%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                                \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,"                                \
                 "%60,%61,%62,%63,%64,%65,%66,%67,%68,%69,%70,%71,"                                \
                 "%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,"                                \
                 "%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"                                \
                 "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,"                        \
                 "%108,%109,%110,%111,%112,%113,%114,%115,%116,%117,%118,%119,"                    \
                 "%120,%121,%122,%123,%124,%125,%126,%127"                                         \
                 "}, {%128,%129,%130,%131}, %132, p, 1, 1, " TRANS ";\n}\n"                        \
                 : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),                     \
                   "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),                     \
                   "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]),                     \
                   "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),                     \
                   "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),                     \
                   "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),                     \
                   "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]),                     \
                   "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),                     \
                   "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]),                     \
                   "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),                     \
                   "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]),                 \
                   "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),                 \
                   "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]),                 \
                   "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),                 \
                   "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]),                 \
                   "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]),                 \
                   "+f"(d[16][0]), "+f"(d[16][1]), "+f"(d[16][2]), "+f"(d[16][3]),                 \
                   "+f"(d[17][0]), "+f"(d[17][1]), "+f"(d[17][2]), "+f"(d[17][3]),                 \
                   "+f"(d[18][0]), "+f"(d[18][1]), "+f"(d[18][2]), "+f"(d[18][3]),                 \
                   "+f"(d[19][0]), "+f"(d[19][1]), "+f"(d[19][2]), "+f"(d[19][3]),                 \
                   "+f"(d[20][0]), "+f"(d[20][1]), "+f"(d[20][2]), "+f"(d[20][3]),                 \
                   "+f"(d[21][0]), "+f"(d[21][1]), "+f"(d[21][2]), "+f"(d[21][3]),                 \
                   "+f"(d[22][0]), "+f"(d[22][1]), "+f"(d[22][2]), "+f"(d[22][3]),                 \
                   "+f"(d[23][0]), "+f"(d[23][1]), "+f"(d[23][2]), "+f"(d[23][3]),                 \
                   "+f"(d[24][0]), "+f"(d[24][1]), "+f"(d[24][2]), "+f"(d[24][3]),                 \
                   "+f"(d[25][0]), "+f"(d[25][1]), "+f"(d[25][2]), "+f"(d[25][3]),                 \
                   "+f"(d[26][0]), "+f"(d[26][1]), "+f"(d[26][2]), "+f"(d[26][3]),                 \
                   "+f"(d[27][0]), "+f"(d[27][1]), "+f"(d[27][2]), "+f"(d[27][3]),                 \
                   "+f"(d[28][0]), "+f"(d[28][1]), "+f"(d[28][2]), "+f"(d[28][3]),                 \
                   "+f"(d[29][0]), "+f"(d[29][1]), "+f"(d[29][2]), "+f"(d[29][3]),                 \
                   "+f"(d[30][0]), "+f"(d[30][1]), "+f"(d[30][2]), "+f"(d[30][3]),                 \
                   "+f"(d[31][0]), "+f"(d[31][1]), "+f"(d[31][2]), "+f"(d[31][3])                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));                           \
}

BK_WGMMA_SPECIALISE(__half, "f16")
BK_WGMMA_SPECIALISE(__nv_bfloat16, "bf16")
BK_WGMMA_RS_N64(__half, "f16", mma_rs_n64_t, "1")
BK_WGMMA_RS_N64(__nv_bfloat16, "bf16", mma_rs_n64_t, "1")
BK_WGMMA_RS_N128(__half, "f16", mma_rs_n128_t, "1")
BK_WGMMA_RS_N128(__nv_bfloat16, "bf16", mma_rs_n128_t, "1")
BK_WGMMA_RS_N64(__half, "f16", mma_rs_n64_k, "0")
BK_WGMMA_RS_N64(__nv_bfloat16, "bf16", mma_rs_n64_k, "0")
BK_WGMMA_RS_N128(__half, "f16", mma_rs_n128_k, "0")
BK_WGMMA_RS_N128(__nv_bfloat16, "bf16", mma_rs_n128_k, "0")
BK_WGMMA_RS_N256(__half, "f16", mma_rs_n256_k, "0")
BK_WGMMA_RS_N256(__nv_bfloat16, "bf16", mma_rs_n256_k, "0")
#undef BK_WGMMA_SPECIALISE
#undef BK_WGMMA_RS_N64
#undef BK_WGMMA_RS_N128
#undef BK_WGMMA_RS_N256

} // namespace hopper
} // namespace bk

#endif // BK_WGMMA_OPS_CUH
