// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention backward for F32 on tensor cores (3xTF32 on
// mma.sync m16n8k8: kernels/attention_tf32.cuh), any D and Dv from 1 to
// 128 at the compiled widths of BK_ATTENTION_MMA_WIDTH, blocks that are
// multiples of 64; the row sums rowsum(dy * y) come from
// kernels/attention_general.cu's kernel, launched first.
//
// The templates of the F16 and BF16 kernels
// (kernels/attention_mma_backward.cuh) on F32 tiles (TileOps<float>),
// each product three TF32 ones: dk/dv owns 64 keys of a (batch, kv
// head) and walks the query tiles that see them (S^T = K Q^T, P^T, dP^T
// = V dY^T, dS^T, dV += P^T dY, dK += dS^T Q); dq owns 64 queries and
// walks their key tiles (S, P, dP = dY V^T, dS, dQ += dS K). Both hold
// their operands' next tiles in a second stage (six tiles: 198 KiB at
// width 128); kernels/attention_tf32_backward_wide.cu holds the wider
// ones.
#include "attention_tf32.cuh"
#include "attention_mma_backward.cuh"

// One warp a 16 keys (dK and dV of 16 x 128 F32 fit in registers); at
// widths 96 and 128 two halves of 4 warps (BK_ATTENTION_TF32_DQ_HALVES,
// BK_ATTENTION_TF32_DKV_HALVES: the same there).
#define BK_ATTENTION_TF32_BACKWARD(DK, DV)                                                       \
    static_assert(!BK_ATTENTION_MMA_WIDE(DK, DV), "widths up to 128");                           \
    static_assert(BK_ATTENTION_TF32_DQ_HALVES(DK, DV) == BK_ATTENTION_TF32_DKV_HALVES(DK, DV),   \
                  "one count of halves for both kernels");                                       \
    BK_ATTENTION_MMA_BACKWARD(f32, float, DK, DV, 1, BK_ATTENTION_TF32_DQ_HALVES(DK, DV))

BK_ATTENTION_TF32_BACKWARD(32, 32)
BK_ATTENTION_TF32_BACKWARD(64, 64)
BK_ATTENTION_TF32_BACKWARD(96, 96)
BK_ATTENTION_TF32_BACKWARD(128, 128)
