// SPDX-License-Identifier: Apache-2.0
// The warp-level tensor-core instructions the mma.sync kernels share
// (attention, W4A16): m16n8k16 with f32 accumulators, for F16 and BF16;
// and m16n8k8 on TF32 operands (the F32 attention's 3xTF32 products).
// a is the A fragment (rows g, g + 8 and columns 2t.., 2t + 8.. of a 16 x 16
// tile, g = lane / 4, t = lane % 4), b0 and b1 the B fragment of a 16 x 8
// tile, d the 16 x 8 accumulator fragment.
#ifndef BK_MMA_OPS_CUH
#define BK_MMA_OPS_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace bk {

template <typename T> struct Mma;
// One specialisation per element type; the instruction differs only in
// its type suffix (TYPE: f16 or bf16).
#define BK_MMA_M16N8K16(T, TYPE)                                                                 \
    template <> struct Mma<T> {                                                                  \
        static __device__ __forceinline__ void run(float (&d)[4], const uint32_t (&a)[4],       \
                                                   uint32_t b0, uint32_t b1)                     \
        {                                                                                        \
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." #TYPE "." #TYPE ".f32 "       \
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"              \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                        \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));        \
        }                                                                                        \
    };
BK_MMA_M16N8K16(__half, f16)
BK_MMA_M16N8K16(__nv_bfloat16, bf16)
#undef BK_MMA_M16N8K16

// d (16 x 8) += A (16 x 8) B (8 x 8), TF32 operands (F32 bits whose low 13
// mantissa bits the tensor cores ignore), F32 accumulators: a0 (g, t), a1
// (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (k t, n g), b1 (k t +
// 4, n g); d as m16n8k16's.
static __device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4],
                                                        uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

} // namespace bk

#endif // BK_MMA_OPS_CUH
