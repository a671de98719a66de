/* SPDX-License-Identifier: Apache-2.0 */
/* What the host's W4A16 ops share (host_w4a16.c: the conversions and the
 * GPTQ repack; host_w4a16_gemm.c: the GEMM): the 16-bit float type of the
 * scales (and of A and C). */
#ifndef BK_HOST_W4A16_H
#define BK_HOST_W4A16_H

#include "host_gemm_engine.h"
#include "../half.h"
#include "w4a16_layout.h"

/* F16 or BF16 to and from float, rounding to nearest even (lib/half.h). */
struct host_w4a16_half {
    float (*to_f32)(uint16_t);
    uint16_t (*from_f32)(float);
};

static inline struct host_w4a16_half host_w4a16_half(BkDataType type)
{
    if (type == BK_DATA_TYPE_BF16)
        return (struct host_w4a16_half){ bk_bf16_to_f32, bk_f32_to_bf16 };
    return (struct host_w4a16_half){ bk_f16_to_f32, bk_f32_to_f16 };
}

#endif /* BK_HOST_W4A16_H */
