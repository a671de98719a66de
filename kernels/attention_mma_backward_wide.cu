// SPDX-License-Identifier: Apache-2.0
// The tensor-core attention backward (kernels/attention_mma_backward.cuh)
// at widths past 128: DK = DV of 160, 192 and 256, and DK = 192 with DV =
// 128. A module of its own, so that its build overlaps that of
// kernels/attention_mma_backward.cu.
#include "attention_mma_backward.cuh"

BK_ATTENTION_MMA_BACKWARD_TYPES(160, 160)
BK_ATTENTION_MMA_BACKWARD_TYPES(192, 192)
BK_ATTENTION_MMA_BACKWARD_TYPES(256, 256)
BK_ATTENTION_MMA_BACKWARD_TYPES(192, 128)
