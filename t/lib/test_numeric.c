/* SPDX-License-Identifier: Apache-2.0 */
/* Numeric helpers of the tests: see test_numeric.h. */
#include "config.h"

#include "test_numeric.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- Random numbers ------------------------------------------------------ */

uint64_t bkt_seed(void)
{
    static bool have;
    static uint64_t seed;
    if (!have) {
        const char *env = getenv("BK_TEST_SEED");
        if (env && *env)
            seed = strtoull(env, NULL, 0);
        else
            seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        have = true;
        tap_diag("seed %llu (BK_TEST_SEED=%llu repeats this run)", (unsigned long long)seed,
                 (unsigned long long)seed);
    }
    return seed;
}

/* splitmix64: small, fast, and good enough for test data. */
uint64_t bkt_rand_u64(struct bkt_rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct bkt_rng bkt_rng_new(uint64_t stream)
{
    struct bkt_rng rng = { bkt_seed() ^ (stream * 0xD1B54A32D192ED03ull) };
    bkt_rand_u64(&rng);
    return rng;
}

double bkt_rand_uniform(struct bkt_rng *rng, double lo, double hi)
{
    double u = (double)(bkt_rand_u64(rng) >> 11) * 0x1p-53;
    return lo + (hi - lo) * u;
}

int64_t bkt_rand_int(struct bkt_rng *rng, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    return lo + (int64_t)(span ? bkt_rand_u64(rng) % span : bkt_rand_u64(rng));
}

/* ---- Element types --------------------------------------------------------- */

size_t bkt_type_size(BkDataType type)
{
    switch (type) {
    case BK_DATA_TYPE_F64: return 8;
    case BK_DATA_TYPE_F32: case BK_DATA_TYPE_I32: case BK_DATA_TYPE_U32: return 4;
    case BK_DATA_TYPE_F16: case BK_DATA_TYPE_BF16: case BK_DATA_TYPE_U16: return 2;
    case BK_DATA_TYPE_U8: case BK_DATA_TYPE_I8: return 1;
    default: return 0;
    }
}

const char *bkt_type_name(BkDataType type)
{
    switch (type) {
    case BK_DATA_TYPE_F64: return "f64";
    case BK_DATA_TYPE_F32: return "f32";
    case BK_DATA_TYPE_F16: return "f16";
    case BK_DATA_TYPE_BF16: return "bf16";
    case BK_DATA_TYPE_I32: return "i32";
    default: return "other";
    }
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

uint16_t bkt_f32_to_f16(float value)
{
    uint32_t x = float_bits(value);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t mag = x & 0x7FFFFFFFu;
    if (mag > 0x7F800000u)                       /* NaN: keep it quiet */
        return sign | 0x7E00u | (uint16_t)((mag >> 13) & 0x3FFu);
    if (mag >= 0x477FF000u)                      /* >= 65520 rounds to infinity */
        return sign | 0x7C00u;
    if (mag < 0x38800000u) {                     /* below 2^-14: subnormal or 0 */
        /* Scaling by 2^24 is exact; nearbyint rounds half to even. */
        return sign | (uint16_t)nearbyintf(bits_float(mag) * 0x1p24f);
    }
    uint32_t h = ((mag >> 23) - 112u) << 10 | ((mag >> 13) & 0x3FFu);
    uint32_t rest = mag & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++;                                     /* a carry moves into the exponent */
    return sign | (uint16_t)h;
}

float bkt_f16_to_f32(uint16_t bits)
{
    uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
    uint32_t exp = (bits >> 10) & 0x1Fu, mant = bits & 0x3FFu;
    if (exp == 0) {
        float v = (float)mant * 0x1p-24f;
        return sign ? -v : v;
    }
    if (exp == 31)
        return bits_float(sign | 0x7F800000u | mant << 13);
    return bits_float(sign | (exp + 112u) << 23 | mant << 13);
}

uint16_t bkt_f32_to_bf16(float value)
{
    uint32_t x = float_bits(value);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

float bkt_bf16_to_f32(uint16_t bits)
{
    return bits_float((uint32_t)bits << 16);
}

double bkt_round_to(BkDataType type, double v)
{
    switch (type) {
    case BK_DATA_TYPE_F32: return (float)v;
    case BK_DATA_TYPE_F16: return bkt_f16_to_f32(bkt_f32_to_f16((float)v));
    case BK_DATA_TYPE_BF16: return bkt_bf16_to_f32(bkt_f32_to_bf16((float)v));
    default: return v;
    }
}

double bkt_load(const void *base, BkDataType type, int64_t i)
{
    switch (type) {
    case BK_DATA_TYPE_F64: return ((const double *)base)[i];
    case BK_DATA_TYPE_F32: return ((const float *)base)[i];
    case BK_DATA_TYPE_F16: return bkt_f16_to_f32(((const uint16_t *)base)[i]);
    case BK_DATA_TYPE_BF16: return bkt_bf16_to_f32(((const uint16_t *)base)[i]);
    default: tap_bail("bkt_load: type %d", (int)type);
    }
}

void bkt_store(void *base, BkDataType type, int64_t i, double v)
{
    switch (type) {
    case BK_DATA_TYPE_F64: ((double *)base)[i] = v; break;
    case BK_DATA_TYPE_F32: ((float *)base)[i] = (float)v; break;
    case BK_DATA_TYPE_F16: ((uint16_t *)base)[i] = bkt_f32_to_f16((float)v); break;
    case BK_DATA_TYPE_BF16: ((uint16_t *)base)[i] = bkt_f32_to_bf16((float)v); break;
    default: tap_bail("bkt_store: type %d", (int)type);
    }
}

double bkt_rand_value(struct bkt_rng *rng, BkDataType type, double lo, double hi)
{
    return bkt_round_to(type, bkt_rand_uniform(rng, lo, hi));
}

/* ---- Tolerances ------------------------------------------------------------ */

double bkt_ulp(BkDataType type, double v)
{
    int e = -100000;               /* 0: the smallest exponent */
    if (v != 0 && isfinite(v))
        frexp(v, &e);              /* |v| in [2^(e-1), 2^e) */
    int min_e, digits;             /* smallest normal exponent + 1, significand bits */
    switch (type) {
    case BK_DATA_TYPE_F32: min_e = -125; digits = 24; break;
    case BK_DATA_TYPE_F16: min_e = -13; digits = 11; break;
    case BK_DATA_TYPE_BF16: min_e = -125; digits = 8; break;
    default: min_e = -1021; digits = 53; break;
    }
    return ldexp(1.0, (e > min_e ? e : min_e) - digits);
}

bool bkt_close(long double ref, double got, BkDataType type, struct bkt_tolerance tol,
               double scale)
{
    if (!isfinite(got))
        return false;
    long double diff = fabsl((long double)got - ref);
    double r = tol.rel * (double)fabsl(ref);
    double u = tol.ulps * bkt_ulp(type, (double)ref);
    return diff <= (r > u ? r : u) + tol.abs * scale;
}
