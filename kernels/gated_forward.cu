// SPDX-License-Identifier: Apache-2.0
// Module gated_forward: y = a * gate(b) for every kind and data type.
#include "gated_common.cuh"

#define BK_FORWARD(kname, Kind, tname, T) BK_GATED_ENTRY(fwd, false, kname, Kind, tname, T)
BK_GATED_FOR_EACH(BK_FORWARD)
