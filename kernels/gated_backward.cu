// SPDX-License-Identifier: Apache-2.0
// Module gated_backward: da = dy * gate(b), db = dy * a * gate'(b) for every
// kind and data type.
#include "gated_common.cuh"

#define BK_BACKWARD(kname, Kind, tname, T) BK_GATED_ENTRY(bwd, true, kname, Kind, tname, T)
BK_GATED_FOR_EACH(BK_BACKWARD)
