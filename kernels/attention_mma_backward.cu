// SPDX-License-Identifier: Apache-2.0
// The tensor-core attention backward (kernels/attention_mma_backward.cuh)
// at widths up to 128, DK = DV; kernels/attention_mma_backward_wide.cu
// holds the wider ones.
#include "attention_mma_backward.cuh"

BK_ATTENTION_MMA_BACKWARD_TYPES(32, 32)
BK_ATTENTION_MMA_BACKWARD_TYPES(64, 64)
BK_ATTENTION_MMA_BACKWARD_TYPES(96, 96)
BK_ATTENTION_MMA_BACKWARD_TYPES(128, 128)
