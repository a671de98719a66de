/* SPDX-License-Identifier: Apache-2.0 */
/* Contiguous f16 rows to and from float by F16C's instructions, where the
 * CPU has F16C and AVX2: the bits of host_half_convert.h's functions
 * (checked on every half and on all 2^32 floats), several times faster
 * than their vectorised bit manipulation. The GEMM family's row loads and
 * stores take them (host_gemm_pack.c). */
#ifndef BK_HOST_F16C_H
#define BK_HOST_F16C_H

#include "../bk_internal.h"

#include <stdbool.h>
#include <stdint.h>

/* out[i] = src[i] as float, i < n; false (nothing done) without F16C. */
BK_HIDDEN bool host_f16c_load(const uint16_t *src, int64_t n, float *out);
/* dst[i] = in[i] rounded to f16 (nearest even), i < n; false without F16C. */
BK_HIDDEN bool host_f16c_store(uint16_t *dst, int64_t n, const float *in);

#endif /* BK_HOST_F16C_H */
