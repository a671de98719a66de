/* SPDX-License-Identifier: Apache-2.0 */
/* TAP test of bkbench's random test values: the f16 and bf16 rounding
 * against exact decodes, and that every value is non-zero and in range. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_random.h"

static int test_number;
static int failures;

static void ok(int cond, const char *what)
{
    test_number++;
    if (!cond)
        failures++;
    printf("%sok %d - %s\n", cond ? "" : "not ", test_number, what);
}

/* Exact decodes, written independently of the encoders. */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return (h & 0x8000) ? -v : v;
}

static double bfloat_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Is h the nearest (ties to even) of its neighbours to x? */
static int nearest_half(float x, uint16_t h)
{
    double d = fabs(half_value(h) - x);
    double up = fabs(half_value((uint16_t)(h + 1)) - x);
    double down = fabs(half_value((uint16_t)(h - 1)) - x);
    if (d > up || d > down)
        return 0;
    if ((d == up || d == down) && (h & 1))
        return 0;
    return 1;
}

int main(void)
{
    printf("1..11\n");
    ok(bench_float_to_half(1.0f) == 0x3C00 && bench_float_to_half(0.25f) == 0x3400 &&
           bench_float_to_half(2.0f) == 0x4000 && bench_float_to_half(-1.5f) == 0xBE00,
       "f16 of exact values");
    ok(bench_float_to_half(1.0f + 0x1p-11f) == 0x3C00 &&
           bench_float_to_half(1.0f + 3 * 0x1p-11f) == 0x3C02 &&
           bench_float_to_half(1.0f + 0x1p-11f + 0x1p-20f) == 0x3C01,
       "f16 rounds to nearest, ties to even");
    ok(bench_float_to_half(2.0f - 0x1p-13f) == 0x4000, "f16 mantissa carry bumps the exponent");
    ok(bench_float_to_bfloat(1.0f) == 0x3F80 && bench_float_to_bfloat(-2.0f) == 0xC000,
       "bf16 of exact values");
    ok(bench_float_to_bfloat(1.0f + 0x1p-8f) == 0x3F80 &&
           bench_float_to_bfloat(1.0f + 3 * 0x1p-8f) == 0x3F82,
       "bf16 rounds to nearest, ties to even");

    int all_nearest = 1;
    for (int i = 0; i <= 100000; i++) {
        float x = 0.25f + 1.75f * (float)i / 100000.0f;
        all_nearest &= nearest_half(x, bench_float_to_half(x));
    }
    ok(all_nearest, "f16 is the nearest value across [0.25, 2]");

    {
        const uint16_t halves[] = {0x3C00, 0xBE00, 0x0001, 0x7BFF, 0x3555};
        const uint16_t bfloats[] = {0x3F80, 0xC000, 0x3F82};
        const float f32 = -3.25f;
        const double f64 = 0.1;
        /* Against f64 itself, not the constant 0.1: where double arithmetic
         * runs in long double (x87), the constant may keep its excess
         * precision. */
        int exact = bench_value_at(&f32, 0, BK_DATA_TYPE_F32) == -3.25 &&
                    bench_value_at(&f64, 0, BK_DATA_TYPE_F64) == f64;
        for (size_t i = 0; i < sizeof halves / sizeof halves[0]; i++)
            exact &= bench_value_at(halves, i, BK_DATA_TYPE_F16) == half_value(halves[i]);
        for (size_t i = 0; i < sizeof bfloats / sizeof bfloats[0]; i++)
            exact &= bench_value_at(bfloats, i, BK_DATA_TYPE_BF16) == bfloat_value(bfloats[i]);
        ok(exact, "bench_value_at decodes f32, f64, f16 (subnormal too) and bf16");
    }

    enum { N = 4096 };
    static const BkDataType types[] = {BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                       BK_DATA_TYPE_F64};
    for (int t = 0; t < 4; t++) {
        unsigned char buf[N * 8];
        uint64_t state = 123;
        bench_random_values(buf, N, types[t], &state);
        int in_range = 1, neg = 0, pos = 0;
        for (int i = 0; i < N; i++) {
            double v;
            uint16_t h;
            float f;
            switch (types[t]) {
            case BK_DATA_TYPE_F64: memcpy(&v, buf + 8 * i, 8); break;
            case BK_DATA_TYPE_F32: memcpy(&f, buf + 4 * i, 4); v = f; break;
            case BK_DATA_TYPE_F16: memcpy(&h, buf + 2 * i, 2); v = half_value(h); break;
            default: memcpy(&h, buf + 2 * i, 2); v = bfloat_value(h); break;
            }
            in_range &= fabs(v) >= 0.25 && fabs(v) <= 2.0;
            neg += v < 0;
            pos += v > 0;
        }
        char what[64];
        snprintf(what, sizeof what, "dtype %d: non-zero, |v| in [0.25, 2], both signs",
                 (int)types[t]);
        ok(in_range && neg > N / 4 && pos > N / 4, what);
    }
    return failures ? 1 : 0;
}
