/* SPDX-License-Identifier: Apache-2.0 */
/* Random non-zero test values of each floating dtype, made on the host. */
#ifndef BK_TOOL_BENCH_RANDOM_H
#define BK_TOOL_BENCH_RANDOM_H

#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

/* Writes count values of dtype (f32, f16, bf16 or f64) with magnitudes
 * in [0.25, 2] and random signs; other dtypes get count random non-zero
 * bytes. *state is the generator state; any value works. */
void bench_random_values(void *dst, size_t count, BkDataType dtype, uint64_t *state);

/* Round-to-nearest-even conversions, exposed for the test of this file.
 * float_to_half is exact only for normal half values, which is all
 * bench_random_values makes. */
uint16_t bench_float_to_half(float f);
uint16_t bench_float_to_bfloat(float f);

/* Element i of an array of dtype (f32, f16, bf16 or f64) as a double, for
 * comparing results read back from a device; 0 for other dtypes. */
double bench_value_at(const void *data, size_t i, BkDataType dtype);
/* max |x - y| / max |x| over count elements of dtype (NaN counts as the
 * largest difference): how far two results of one product differ. */
double bench_max_rel_diff(const void *x, const void *y, size_t count, BkDataType dtype);

#endif /* BK_TOOL_BENCH_RANDOM_H */
