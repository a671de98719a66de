/* SPDX-License-Identifier: Apache-2.0 */
/* Random non-zero values for bkbench's inputs. */
#include "bench_random.h"

#include <math.h>
#include <string.h>

/* xorshift64*: fast and good enough for test data. */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* A value with |v| in [0.25, 2] and a random sign. */
static double next_value(uint64_t *s)
{
    uint64_t r = next_u64(s);
    double u = (double)(r >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
    double v = 0.25 + 1.75 * u;
    return (r & 1) ? -v : v;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

uint16_t bench_float_to_bfloat(float f)
{
    uint32_t u = float_bits(f);
    u += 0x7FFFu + ((u >> 16) & 1u);  /* round to nearest even */
    return (uint16_t)(u >> 16);
}

uint16_t bench_float_to_half(float f)
{
    uint32_t u = float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    int32_t exp = (int32_t)((u >> 23) & 0xFFu) - 127 + 15;
    uint32_t mant = u & 0x7FFFFFu;
    /* 13 mantissa bits drop; round to nearest even. A carry out of the
     * mantissa correctly bumps the exponent. */
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;
    return (uint16_t)(sign | h);
}

void bench_random_values(void *dst, size_t count, BkDataType dtype, uint64_t *state)
{
    unsigned char *p = dst;
    for (size_t i = 0; i < count; i++) {
        double v = next_value(state);
        switch (dtype) {
        case BK_DATA_TYPE_F64:
            memcpy(p + 8 * i, &v, 8);
            break;
        case BK_DATA_TYPE_F32: {
            float f = (float)v;
            memcpy(p + 4 * i, &f, 4);
            break;
        }
        case BK_DATA_TYPE_F16: {
            uint16_t h = bench_float_to_half((float)v);
            memcpy(p + 2 * i, &h, 2);
            break;
        }
        case BK_DATA_TYPE_BF16: {
            uint16_t h = bench_float_to_bfloat((float)v);
            memcpy(p + 2 * i, &h, 2);
            break;
        }
        default:
            p[i] = (unsigned char)(next_u64(state) | 1u);
            break;
        }
    }
}

double bench_value_at(const void *data, size_t i, BkDataType dtype)
{
    const unsigned char *p = data;
    switch (dtype) {
    case BK_DATA_TYPE_F64: {
        double v;
        memcpy(&v, p + 8 * i, 8);
        return v;
    }
    case BK_DATA_TYPE_F32: {
        float f;
        memcpy(&f, p + 4 * i, 4);
        return f;
    }
    case BK_DATA_TYPE_BF16: {
        uint16_t b;
        memcpy(&b, p + 2 * i, 2);
        uint32_t u = (uint32_t)b << 16;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    case BK_DATA_TYPE_F16: {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        int e = (h >> 10) & 0x1F, m = h & 0x3FF;
        double v = e == 0x1F ? (m ? NAN : INFINITY)
                   : e      ? ldexp(1.0 + m / 1024.0, e - 15)
                            : ldexp(m / 1024.0, -14);
        return (h & 0x8000) ? -v : v;
    }
    default:
        return 0.0;
    }
}

double bench_max_rel_diff(const void *x, const void *y, size_t count, BkDataType dtype)
{
    double diff = 0.0, top = 0.0;
    for (size_t i = 0; i < count; i++) {
        double a = bench_value_at(x, i, dtype), b = bench_value_at(y, i, dtype);
        double e = a > b ? a - b : b - a;
        if (!(e <= diff))       /* NaN counts as the largest */
            diff = e;
        if ((a > 0 ? a : -a) > top)
            top = a > 0 ? a : -a;
    }
    return top > 0 ? diff / top : diff;
}
