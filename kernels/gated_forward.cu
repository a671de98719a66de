// SPDX-License-Identifier: Apache-2.0
// Module gated_forward: y = a * gate(b) for every kind and data type, and
// the half types' packed kernels for contiguous rows.
#include "gated_packed.cuh"

#define BK_FORWARD(kname, Kind, tname, T) BK_GATED_ENTRY(fwd, false, kname, Kind, tname, T)
BK_GATED_FOR_EACH(BK_FORWARD)
BK_GATED_KINDS(BK_GATED_PACKED_FORWARD, f16, __half)
BK_GATED_KINDS(BK_GATED_PACKED_FORWARD, bf16, __nv_bfloat16)
