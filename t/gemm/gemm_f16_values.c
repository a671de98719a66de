/* SPDX-License-Identifier: Apache-2.0 */
/* Every binary16 through the dense GEMM's conversions, in and out
 * (gemm_half_values.h). */
#include "gemm_half_values.h"

/* Scales of the output check: exact f32 products with any binary16 that
 * land on, between and at ties of binary16 values (1 + 2^-10 ties where
 * the other mantissa's low bits are 0x200), in the subnormals (2^-10 and
 * below) and past the largest finite (2 and up). */
static const uint16_t f16_scales[] = { 0x3C01, 0x3BFF, 0x3E01, 0x1401, 0x0C00, 0x4001, 0xBC01 };

int main(void)
{
    static const struct half_type f16 = {
        BK_DATA_TYPE_F16, "f16", bkt_f16_to_f32, bkt_f32_to_f16, 0x7C00, 0x03FF, f16_scales,
        (int64_t)(sizeof f16_scales / sizeof f16_scales[0]),
    };
    return check_type(&f16);
}
