// SPDX-License-Identifier: Apache-2.0
// The tensor-core attention forward (kernels/attention_mma_forward.cuh) at
// widths up to 128, DK = DV; kernels/attention_mma_wide.cu holds the
// wider ones.
#include "attention_mma_forward.cuh"

BK_ATTENTION_MMA_FORWARD_TYPES(32, 32)
BK_ATTENTION_MMA_FORWARD_TYPES(64, 64)
BK_ATTENTION_MMA_FORWARD_TYPES(96, 96)
BK_ATTENTION_MMA_FORWARD_TYPES(128, 128)
