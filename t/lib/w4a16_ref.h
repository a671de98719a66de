/* SPDX-License-Identifier: Apache-2.0 */
/* An independent model of the W4A16 forms for the tests (t/w4a16/w4a16.c,
 * t/gpu/gpu_w4a16.c): Marlin's packer written the way its Python packer
 * builds the layout (permutation tables from its loops, not libbk's index
 * arithmetic), GPTQ's packing of qweight and qzeros, the quantization
 * rule, the dequantized weight and a long double product, and the
 * tolerances. Arrays are plain row-major host arrays; scales are the raw
 * bits of F16 or BF16 values. group_size is 32, 64, 128 or
 * BK_W4A16_GROUP_PER_CHANNEL, as in the info structs. */
#ifndef BK_TEST_W4A16_REF_H
#define BK_TEST_W4A16_REF_H

#include "test_util.h"

/* Rows per group: group_size, or k per channel. */
int64_t w4a16_ref_group_rows(int32_t group_size, int64_t k);

/* Marlin's packer: q [k][n] (values 0..15) and scales [G][n] -> packed
 * [k/16][2n] words and packed_scales [G][n]; k % 16 == 0, n % 64 == 0. */
void w4a16_ref_pack(const uint8_t *q, const uint16_t *scales, int64_t k, int64_t n,
                    int32_t group_size, uint32_t *packed, uint16_t *packed_scales);

/* GPTQ's packing: qweight [k/8][n] from q [k][n], word (r, c) holding
 * q[8r + i][c] in bits 4i..4i+3; qzeros [groups][n/8] from z [groups][n]
 * the same way along the columns. */
void w4a16_ref_gptq_pack(const uint8_t *q, int64_t k, int64_t n, uint32_t *qweight);
void w4a16_ref_gptq_pack_zeros(const uint8_t *z, int64_t groups, int64_t n, uint32_t *qzeros);

/* The quantization rule of BK_W4A16_QUANTIZE on w [k][n] (float values):
 * per group and column, scale = round_to_type(max|w| * 2.0f / 15.0f)
 * in float (NaN not counted), q = clamp(nearest-even(w / scale) + 8, 0,
 * 15) with the division in float, 8 where the scale is 0 or the
 * quotient NaN. */
void w4a16_ref_quantize(const float *w, int64_t k, int64_t n, int32_t group_size,
                        BkDataType scale_type, uint8_t *q, uint16_t *scales);

/* ---- Zero points (asymmetric weights) -------------------------------- */
/* packedZeros [groups][n/8] from z [groups][n]: the zeros permuted as
 * Marlin's packer permutes scales (its tables), then eight consecutive
 * ones a word, the first in the low bits. */
void w4a16_ref_pack_zeros(const uint8_t *z, int64_t k, int64_t n, int32_t group_size,
                          uint32_t *packed_zeros);
/* AWQ's packing (AutoAWQ's order map 0, 2, 4, 6, 1, 3, 5, 7: nibble i
 * holds column 8c + map[i]): qweight [k][n/8] from q [k][n], and qzeros
 * [groups][n/8] from z [groups][n]. */
void w4a16_ref_awq_pack(const uint8_t *q, int64_t rows, int64_t n, uint32_t *packed);
/* Asymmetric quantization, as GPTQ's quantizer with sym=False finds its
 * grid: per group and column lo = min(0, min w), hi = max(0, max w),
 * scale = round_to_type((hi - lo) / 15) in float, zero =
 * clamp(rint(-lo / scale), 0, 15), q = clamp(rint(w / scale) + zero, 0,
 * 15); zero = q = 8 where the scale is 0 or infinite. */
void w4a16_ref_quantize_asym(const float *w, int64_t k, int64_t n, int32_t group_size,
                             BkDataType scale_type, uint8_t *q, uint16_t *scales,
                             uint8_t *zeros);
/* The plain form with zero points dequantized: w [k][n] = (q - zeros[g][n])
 * * scales[g][n] rounded to type. */
void w4a16_ref_dequant_zp(const uint8_t *q, const uint16_t *scales, const uint8_t *zeros,
                          BkDataType type, int64_t k, int64_t n, int32_t group_size, double *w);

/* The same, each weight (q - zeros[g][n]) * scales[g][n] exactly: what the
 * CUDA tiles of 8 rows compute (each group's sum scaled once in F32). */
void w4a16_ref_dequant_zp_exact(const uint8_t *q, const uint16_t *scales, const uint8_t *zeros,
                                BkDataType type, int64_t k, int64_t n, int32_t group_size,
                                double *w);
/* Whether the CUDA backend's GEMM of m rows takes its weights exactly
 * (the tiles of 8 rows) rather than rounded to A's type. */
bool w4a16_ref_cuda_exact(int64_t m);

/* One weight: (q - zero) * scale rounded to type (F16 or BF16). */
double w4a16_ref_weight(int q, int zero, uint16_t scale, BkDataType type);
/* The plain form dequantized: w [k][n] = (q - 8) * scales[k / group][n]
 * rounded to type. */
void w4a16_ref_dequant(const uint8_t *q, const uint16_t *scales, BkDataType type, int64_t k,
                       int64_t n, int32_t group_size, double *w);

/* ref [m][n] = sum over j of a[i][perm[j]] * w[j][n] (perm NULL: j), in
 * long double or as accurately (w4a16_ref.c), and size [m][n] = the sum of
 * the terms' magnitudes. */
void w4a16_ref_gemm(const double *a, const double *w, const int32_t *perm, int64_t m, int64_t k,
                    int64_t n, long double *ref, double *size);

/* The GEMM's result c (of type) for ref: one ulp of the type (C is
 * rounded once) plus k roundings of a float sum of terms of total size. */
bool w4a16_ref_close(long double ref, double size, double got, BkDataType type, int64_t k);
/* The bound on mean |C - ref| / mean |ref| (Marlin's metric): 1e-3 for
 * F16; 4e-3 for BF16, whose rounding of C alone averages about 1.4e-3. */
double w4a16_ref_mean_error_limit(BkDataType type);

/* ---- Helpers of the W4A16 tests ---------------------------------------- */
/* A rank-2 [rows, cols] tensor with strides (s0, s1) (0, 0: contiguous). */
BkTensorDesc w4a16_mat_strided(BkDataType type, int64_t rows, int64_t cols, int64_t s0,
                               int64_t s1);
BkTensorDesc w4a16_mat(BkDataType type, int64_t rows, int64_t cols);
BkTensorDesc w4a16_vec(BkDataType type, int64_t n);
/* "per-channel" or "group 128", for test names (four in use at once). */
const char *w4a16_group_name(int32_t group_size);

#endif /* BK_TEST_W4A16_REF_H */
