// SPDX-License-Identifier: Apache-2.0
// Module gated_backward: da = dy * gate(b), db = dy * a * gate'(b) for every
// kind and data type, and the half types' packed kernels for contiguous
// rows.
#include "gated_packed.cuh"

#define BK_BACKWARD(kname, Kind, tname, T) BK_GATED_ENTRY(bwd, true, kname, Kind, tname, T)
BK_GATED_FOR_EACH(BK_BACKWARD)
BK_GATED_KINDS(BK_GATED_PACKED_BACKWARD, f16, __half)
BK_GATED_KINDS(BK_GATED_PACKED_BACKWARD, bf16, __nv_bfloat16)
