/* SPDX-License-Identifier: Apache-2.0 */
/* Every bfloat16 through the dense GEMM's conversions, in and out
 * (gemm_half_values.h): the f32 -> bf16 store after the BLAS or the
 * engine rounds to nearest even as the test's own conversion does, bit
 * for bit. */
#include "gemm_half_values.h"

/* Scales of the output check: products with any bfloat16, exact in f32
 * where they are normal, that land on, between and at ties of bfloat16
 * values (1 + 2^-7 ties where the other mantissa's low bits are 0x40;
 * 1 - 2^-8; 1.5 + 2^-7), in the subnormals (2^-126, and 2^-133, the
 * smallest subnormal, where f32 itself rounds the product, as the test's
 * float multiply does) and past the largest finite (2 and up, to
 * infinity); one negative. */
static const uint16_t bf16_scales[] = { 0x3F81, 0x3F7F, 0x3FC1, 0x0080, 0x0001, 0x4001, 0xBF81 };

int main(void)
{
    static const struct half_type bf16 = {
        BK_DATA_TYPE_BF16, "bf16", bkt_bf16_to_f32, bkt_f32_to_bf16, 0x7F80, 0x007F, bf16_scales,
        (int64_t)(sizeof bf16_scales / sizeof bf16_scales[0]),
    };
    return check_type(&bf16);
}
