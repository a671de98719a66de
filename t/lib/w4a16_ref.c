/* SPDX-License-Identifier: Apache-2.0 */
/* The tests' model of the W4A16 forms: see w4a16_ref.h. The Marlin
 * packer follows marlin/__init__.py (_get_perms and Layer.pack) step by
 * step: tables from the same loops, the same reshapes as index loops.
 * That code is Copyright (C) Marlin.2024 Elias Frantar
 * (elias.frantar@ist.ac.at), under the Apache License 2.0 as libbk is. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "w4a16_ref.h"

int64_t w4a16_ref_group_rows(int32_t group_size, int64_t k)
{
    return group_size == BK_W4A16_GROUP_PER_CHANNEL ? k : group_size;
}

/* _get_perms: perm over the 1024 values of 4 tiles of 16 x 16 as Layer.pack
 * lays them out (tile-major, then row, then column), then the nibble
 * interleave [0, 2, 4, 6, 1, 3, 5, 7] within each group of 8. */
static void marlin_perm(int perm[1024])
{
    int raw[1024], count = 0;
    for (int i = 0; i < 32; i++) {
        int perm1[8], m = 0;
        const int col = i / 4;
        for (int block = 0; block < 2; block++) {
            const int rows[4] = { 2 * (i % 4), 2 * (i % 4) + 1, 2 * (i % 4 + 4),
                                  2 * (i % 4 + 4) + 1 };
            for (int r = 0; r < 4; r++)
                perm1[m++] = 16 * rows[r] + col + 8 * block;
        }
        for (int j = 0; j < 4; j++)
            for (int p = 0; p < 8; p++)
                raw[count++] = perm1[p] + 256 * j;
    }
    static const int interleave[8] = { 0, 2, 4, 6, 1, 3, 5, 7 };
    for (int r = 0; r < 128; r++)
        for (int c = 0; c < 8; c++)
            perm[8 * r + c] = raw[8 * r + interleave[c]];
}

/* _scale_perm (64 entries) and _scale_perm_single (32). */
static void marlin_scale_perms(int grouped[64], int single[32])
{
    int count = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            grouped[count++] = i + 8 * j;
    static const int offsets[8] = { 0, 1, 8, 9, 16, 17, 24, 25 };
    count = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 8; j++)
            single[count++] = 2 * i + offsets[j];
}

void w4a16_ref_pack(const uint8_t *q, const uint16_t *scales, int64_t k, int64_t n,
                    int32_t group_size, uint32_t *packed, uint16_t *packed_scales)
{
    int perm[1024], scale_perm[64], scale_perm_single[32];
    marlin_perm(perm);
    marlin_scale_perms(scale_perm, scale_perm_single);
    const int64_t len = 16 * n;    /* values of one packed row */
    uint8_t *res = malloc((size_t)len), *shuffled = malloc((size_t)len);
    if (!res || !shuffled)
        tap_bail("out of memory");
    for (int64_t kt = 0; kt < k / 16; kt++) {
        /* w.reshape((k/16, 16, n/16, 16)).permute((0, 2, 1, 3)).reshape((k/16, 16 n)) */
        for (int64_t r = 0; r < 16; r++)
            for (int64_t c = 0; c < n; c++)
                res[c / 16 * 256 + r * 16 + c % 16] = q[(16 * kt + r) * n + c];
        /* res.reshape((-1, 1024))[:, perm] */
        for (int64_t b = 0; b < len / 1024; b++)
            for (int i = 0; i < 1024; i++)
                shuffled[1024 * b + i] = res[1024 * b + perm[i]];
        /* q |= res[:, i::8] << 4 * i */
        for (int64_t w = 0; w < 2 * n; w++) {
            uint32_t word = 0;
            for (int i = 0; i < 8; i++)
                word |= (uint32_t)(shuffled[8 * w + i] & 15u) << (4 * i);
            packed[kt * 2 * n + w] = word;
        }
    }
    free(res);
    free(shuffled);
    /* s.reshape((-1, len(perm)))[:, perm], over the flattened [G, n] */
    const int64_t groups = k / w4a16_ref_group_rows(group_size, k);
    const bool per_channel = group_size == BK_W4A16_GROUP_PER_CHANNEL;
    const int plen = per_channel ? 32 : 64;
    const int *sp = per_channel ? scale_perm_single : scale_perm;
    for (int64_t c = 0; c < groups * n / plen; c++)
        for (int i = 0; i < plen; i++)
            packed_scales[c * plen + i] = scales[c * plen + sp[i]];
}

void w4a16_ref_gptq_pack(const uint8_t *q, int64_t k, int64_t n, uint32_t *qweight)
{
    for (int64_t r = 0; r < k / 8; r++)
        for (int64_t c = 0; c < n; c++) {
            uint32_t word = 0;
            for (int i = 0; i < 8; i++)
                word |= (uint32_t)(q[(8 * r + i) * n + c] & 15u) << (4 * i);
            qweight[r * n + c] = word;
        }
}

void w4a16_ref_gptq_pack_zeros(const uint8_t *z, int64_t groups, int64_t n, uint32_t *qzeros)
{
    for (int64_t g = 0; g < groups; g++)
        for (int64_t c = 0; c < n / 8; c++) {
            uint32_t word = 0;
            for (int i = 0; i < 8; i++)
                word |= (uint32_t)(z[g * n + 8 * c + i] & 15u) << (4 * i);
            qzeros[g * (n / 8) + c] = word;
        }
}

static float half_to_f32(uint16_t bits, BkDataType type)
{
    return type == BK_DATA_TYPE_BF16 ? bkt_bf16_to_f32(bits) : bkt_f16_to_f32(bits);
}

void w4a16_ref_quantize(const float *w, int64_t k, int64_t n, int32_t group_size,
                        BkDataType scale_type, uint8_t *q, uint16_t *scales)
{
    const int64_t rows = w4a16_ref_group_rows(group_size, k);
    for (int64_t g = 0; g < k / rows; g++)
        for (int64_t c = 0; c < n; c++) {
            float amax = 0;
            for (int64_t r = g * rows; r < (g + 1) * rows; r++)
                if (fabsf(w[r * n + c]) > amax)
                    amax = fabsf(w[r * n + c]);
            const float target = amax * 2.0f / 15.0f;
            const uint16_t bits = scale_type == BK_DATA_TYPE_BF16 ? bkt_f32_to_bf16(target)
                                                                  : bkt_f32_to_f16(target);
            scales[g * n + c] = bits;
            const float s = half_to_f32(bits, scale_type);
            for (int64_t r = g * rows; r < (g + 1) * rows; r++) {
                const float x = s == 0 ? NAN : w[r * n + c] / s;
                const float v = isnan(x) ? 8.0f : rintf(x) + 8.0f;
                q[r * n + c] = (uint8_t)(v < 0 ? 0 : v > 15 ? 15 : v);
            }
        }
}

void w4a16_ref_pack_zeros(const uint8_t *z, int64_t k, int64_t n, int32_t group_size,
                          uint32_t *packed_zeros)
{
    int scale_perm[64], scale_perm_single[32];
    marlin_scale_perms(scale_perm, scale_perm_single);
    const int64_t groups = k / w4a16_ref_group_rows(group_size, k);
    const bool per_channel = group_size == BK_W4A16_GROUP_PER_CHANNEL;
    const int plen = per_channel ? 32 : 64;
    const int *sp = per_channel ? scale_perm_single : scale_perm;
    uint8_t *permuted = malloc((size_t)(groups * n));
    if (!permuted)
        tap_bail("out of memory");
    for (int64_t c = 0; c < groups * n / plen; c++)
        for (int i = 0; i < plen; i++)
            permuted[c * plen + i] = z[c * plen + sp[i]];
    for (int64_t w = 0; w < groups * n / 8; w++) {
        uint32_t word = 0;
        for (int i = 0; i < 8; i++)
            word |= (uint32_t)(permuted[8 * w + i] & 15u) << (4 * i);
        packed_zeros[w] = word;
    }
    free(permuted);
}

void w4a16_ref_awq_pack(const uint8_t *q, int64_t rows, int64_t n, uint32_t *packed)
{
    static const int order_map[8] = { 0, 2, 4, 6, 1, 3, 5, 7 };
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < n / 8; c++) {
            uint32_t word = 0;
            for (int i = 0; i < 8; i++)
                word |= (uint32_t)(q[r * n + 8 * c + order_map[i]] & 15u) << (4 * i);
            packed[r * (n / 8) + c] = word;
        }
}

void w4a16_ref_quantize_asym(const float *w, int64_t k, int64_t n, int32_t group_size,
                             BkDataType scale_type, uint8_t *q, uint16_t *scales,
                             uint8_t *zeros)
{
    const int64_t rows = w4a16_ref_group_rows(group_size, k);
    for (int64_t g = 0; g < k / rows; g++)
        for (int64_t c = 0; c < n; c++) {
            float lo = 0, hi = 0;
            for (int64_t r = g * rows; r < (g + 1) * rows; r++) {
                lo = fminf(lo, w[r * n + c]);   /* fminf ignores a NaN */
                hi = fmaxf(hi, w[r * n + c]);
            }
            const float target = (hi - lo) / 15.0f;
            const uint16_t bits = scale_type == BK_DATA_TYPE_BF16 ? bkt_f32_to_bf16(target)
                                                                  : bkt_f32_to_f16(target);
            scales[g * n + c] = bits;
            const float s = half_to_f32(bits, scale_type);
            const bool degenerate = s == 0 || isinf(s);
            const float z = degenerate ? 8.0f : fminf(fmaxf(rintf(-lo / s), 0.0f), 15.0f);
            zeros[g * n + c] = (uint8_t)z;
            for (int64_t r = g * rows; r < (g + 1) * rows; r++) {
                const float x = degenerate ? NAN : w[r * n + c] / s;
                const float v = isnan(x) ? z : rintf(x) + z;
                q[r * n + c] = (uint8_t)(v < 0 ? 0 : v > 15 ? 15 : v);
            }
        }
}

void w4a16_ref_dequant_zp(const uint8_t *q, const uint16_t *scales, const uint8_t *zeros,
                          BkDataType type, int64_t k, int64_t n, int32_t group_size, double *w)
{
    const int64_t rows = w4a16_ref_group_rows(group_size, k);
    for (int64_t r = 0; r < k; r++)
        for (int64_t c = 0; c < n; c++)
            w[r * n + c] = w4a16_ref_weight(q[r * n + c], zeros[r / rows * n + c],
                                            scales[r / rows * n + c], type);
}

void w4a16_ref_dequant_zp_exact(const uint8_t *q, const uint16_t *scales, const uint8_t *zeros,
                                BkDataType type, int64_t k, int64_t n, int32_t group_size,
                                double *w)
{
    const int64_t rows = w4a16_ref_group_rows(group_size, k);
    for (int64_t r = 0; r < k; r++)
        for (int64_t c = 0; c < n; c++)
            w[r * n + c] = (double)(q[r * n + c] - zeros[r / rows * n + c]) *
                           half_to_f32(scales[r / rows * n + c], type);
}

bool w4a16_ref_cuda_exact(int64_t m)
{
    return m <= 8;
}

double w4a16_ref_weight(int q, int zero, uint16_t scale, BkDataType type)
{
    return bkt_round_to(type, (double)(q - zero) * half_to_f32(scale, type));
}

void w4a16_ref_dequant(const uint8_t *q, const uint16_t *scales, BkDataType type, int64_t k,
                       int64_t n, int32_t group_size, double *w)
{
    const int64_t rows = w4a16_ref_group_rows(group_size, k);
    for (int64_t r = 0; r < k; r++)
        for (int64_t c = 0; c < n; c++)
            w[r * n + c] = w4a16_ref_weight(q[r * n + c], 8, scales[r / rows * n + c], type);
}

/* The dot product of a row of a and a column of w in long double where
 * the hardware has it (x87's 64-bit significand, or long double as double);
 * where long double is software (binary128, IBM double-double) in double
 * with the rounding error of each product (fma) and each sum (Neumaier)
 * carried: as accurate, and many times faster under an emulator. */
#if LDBL_MANT_DIG > 64
static long double dot(const double *a, const double *w, const int32_t *perm, int64_t k,
                       int64_t n, double *size)
{
    double sum = 0, carry = 0, mag = 0;
    for (int64_t j = 0; j < k; j++) {
        const double x = a[perm ? perm[j] : j], y = w[j * n];
        const double t = x * y, t_err = fma(x, y, -t), s = sum + t;
        carry += (fabs(sum) >= fabs(t) ? (sum - s) + t : (t - s) + sum) + t_err;
        sum = s;
        mag += fabs(t);
    }
    *size = mag;
    return (long double)sum + carry;
}
#else
static long double dot(const double *a, const double *w, const int32_t *perm, int64_t k,
                       int64_t n, double *size)
{
    long double sum = 0, mag = 0;
    for (int64_t j = 0; j < k; j++) {
        const long double t = (long double)a[perm ? perm[j] : j] * w[j * n];
        sum += t;
        mag += fabsl(t);
    }
    *size = (double)mag;
    return sum;
}
#endif

void w4a16_ref_gemm(const double *a, const double *w, const int32_t *perm, int64_t m, int64_t k,
                    int64_t n, long double *ref, double *size)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t c = 0; c < n; c++)
            ref[i * n + c] = dot(a + i * k, w + c, perm, k, n, &size[i * n + c]);
}

bool w4a16_ref_close(long double ref, double size, double got, BkDataType type, int64_t k)
{
    const struct bkt_tolerance tol = { .rel = 0, .abs = 2.0 * (double)(k + 8) * 0x1p-24,
                                       .ulps = 1 };
    return bkt_close(ref, got, type, tol, size);
}

double w4a16_ref_mean_error_limit(BkDataType type)
{
    return type == BK_DATA_TYPE_BF16 ? 4e-3 : 1e-3;
}

BkTensorDesc w4a16_mat_strided(BkDataType type, int64_t rows, int64_t cols, int64_t s0,
                               int64_t s1)
{
    return (BkTensorDesc){ .dataType = type, .rank = 2, .extent = { rows, cols },
                           .stride = { s0, s1 } };
}

BkTensorDesc w4a16_mat(BkDataType type, int64_t rows, int64_t cols)
{
    return w4a16_mat_strided(type, rows, cols, 0, 0);
}

BkTensorDesc w4a16_vec(BkDataType type, int64_t n)
{
    return (BkTensorDesc){ .dataType = type, .rank = 1, .extent = { n } };
}

const char *w4a16_group_name(int32_t group_size)
{
    static char buf[4][16];
    static int next;
    char *b = buf[next++ % 4];
    if (group_size == BK_W4A16_GROUP_PER_CHANNEL)
        return "per-channel";
    snprintf(b, 16, "group %d", (int)group_size);
    return b;
}
