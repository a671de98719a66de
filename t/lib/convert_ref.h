/* SPDX-License-Identifier: Apache-2.0 */
/* The conversion op's reference model (bk-convert(7)), written apart from
 * libbk's bit arithmetic: values decoded with ldexp, rounded by scaling to
 * an integer quantum and picking the nearer neighbour (ties to the even
 * one), integers by rint. Elements are compared as values: NaN matches
 * NaN, and zeros must have the same sign. */
#ifndef BK_TEST_CONVERT_REF_H
#define BK_TEST_CONVERT_REF_H

#include <stdbool.h>
#include <stdint.h>

#include <bk/bk.h>

/* The types a conversion takes, in a fixed order. */
#define CONVERT_TYPE_COUNT 9
extern const BkDataType convert_types[CONVERT_TYPE_COUNT];
const char *convert_type_name(BkDataType type); /* "f32", ... */

/* Element i of an array of type t, as a double (exact for every type). */
double convert_ref_load(BkDataType t, const void *base, int64_t i);
/* Writes v (already a value of type t) as element i of type t. */
void convert_ref_store(BkDataType t, void *base, int64_t i, double v);
/* v rounded once to type t: nearest, ties to even; overflow to infinity
 * (floats) or saturation (integers, NaN to 0). */
double convert_ref_round(BkDataType t, double v);
/* Whether got (a value of the output type) is want: the same value, the
 * same sign of zero, or both NaN. */
bool convert_ref_same(double got, double want);

/* Independent decoders of the half types' bits. */
double convert_ref_f16(uint16_t bits);
double convert_ref_bf16(uint16_t bits);

#endif /* BK_TEST_CONVERT_REF_H */
