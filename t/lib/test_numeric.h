/* SPDX-License-Identifier: Apache-2.0 */
/* Numeric helpers of the tests: seeded random numbers, f16/bf16
 * conversions, typed element access and tolerance comparison. */
#ifndef BK_TEST_NUMERIC_H
#define BK_TEST_NUMERIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "tap.h"

/* ---- Random numbers ---------------------------------------------------- */
/* The run's seed: BK_TEST_SEED, else from the clock; printed once as a
 * diagnostic so a failing run can be repeated. */
uint64_t bkt_seed(void);
struct bkt_rng { uint64_t state; };
struct bkt_rng bkt_rng_new(uint64_t stream);   /* seeded from bkt_seed() and stream */
uint64_t bkt_rand_u64(struct bkt_rng *rng);
double bkt_rand_uniform(struct bkt_rng *rng, double lo, double hi);
int64_t bkt_rand_int(struct bkt_rng *rng, int64_t lo, int64_t hi); /* inclusive */

/* ---- Element types ------------------------------------------------------ */
size_t bkt_type_size(BkDataType type);
const char *bkt_type_name(BkDataType type);
/* Rounding to nearest even, with subnormals, infinities and NaN. */
uint16_t bkt_f32_to_f16(float value);
float bkt_f16_to_f32(uint16_t bits);
uint16_t bkt_f32_to_bf16(float value);
float bkt_bf16_to_f32(uint16_t bits);
/* v rounded to the nearest value of type (f64 is unchanged). */
double bkt_round_to(BkDataType type, double v);
/* Element i of an array of type, as a double; and the store. */
double bkt_load(const void *base, BkDataType type, int64_t i);
void bkt_store(void *base, BkDataType type, int64_t i, double v);
/* A random value in [lo, hi] that is exactly representable in type. */
double bkt_rand_value(struct bkt_rng *rng, BkDataType type, double lo, double hi);

/* ---- Tolerances ---------------------------------------------------------- */
struct bkt_tolerance {
    double rel;            /* relative to the reference value */
    double abs;            /* absolute floor, multiplied by the caller's scale */
    double ulps;           /* units in the last place of the output type */
};
/* |got - ref| <= max(rel |ref|, ulps ulp_type(ref)) + abs * scale. NaN or
 * infinity in got fails; scale is the size of the terms the value is
 * computed from (where |ref| alone would be too strict near 0). */
bool bkt_close(long double ref, double got, BkDataType type, struct bkt_tolerance tol,
               double scale);
/* One unit in the last place of type at v. */
double bkt_ulp(BkDataType type, double v);

#endif /* BK_TEST_NUMERIC_H */
