/* SPDX-License-Identifier: Apache-2.0 */
/* Division by a run-time constant in the kernels as a multiply and a
 * shift (the gated and conversion kernels' index arithmetic). */
#include "cuda_internal.h"

/* floor(hi * 2^64 / d) for hi < d, by shift and subtract. */
static uint64_t div_shifted(uint64_t hi, uint64_t d)
{
    uint64_t q = 0, r = hi;
    for (int i = 0; i < 64; i++) {
        uint64_t carry = r >> 63;
        r <<= 1;
        q <<= 1;
        if (carry || r >= d) {
            r -= d;
            q |= 1;
        }
    }
    return q;
}

/* Granlund and Montgomery's round-up method with l = ceil(log2 d); the
 * sum in the kernels cannot overflow as umulhi(n, magic) < n. */
void bk_cuda_fastdiv_init(uint64_t d, uint64_t *magic, uint32_t *shift)
{
    uint32_t l = 0;
    while (l < 63 && ((uint64_t)1 << l) < d)
        l++;
    *magic = div_shifted(((uint64_t)1 << l) - d, d) + 1;
    *shift = l;
}
