/* SPDX-License-Identifier: Apache-2.0 */
/* The conversion op's reference model: see convert_ref.h. */
#include "config.h"

#include "convert_ref.h"

#include <math.h>
#include <string.h>

const BkDataType convert_types[CONVERT_TYPE_COUNT] = {
    BK_DATA_TYPE_F32, BK_DATA_TYPE_F64, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16, BK_DATA_TYPE_I32,
    BK_DATA_TYPE_U32, BK_DATA_TYPE_U16, BK_DATA_TYPE_I8,  BK_DATA_TYPE_U8,
};

/* Each type's format: floats by precision (significand bits with the
 * implicit one), smallest normal exponent and largest finite value;
 * integers by range. */
static const struct {
    const char *name;
    bool is_float;
    int precision, emin;
    double max, lo, hi;
} fmt[] = {
    [BK_DATA_TYPE_F32] = { "f32", true, 24, -126, 0x1.fffffep127, 0, 0 },
    [BK_DATA_TYPE_F64] = { "f64", true, 53, -1022, 0x1.fffffffffffffp1023, 0, 0 },
    [BK_DATA_TYPE_F16] = { "f16", true, 11, -14, 65504.0, 0, 0 },
    [BK_DATA_TYPE_BF16] = { "bf16", true, 8, -126, 0x1.fep127, 0, 0 },
    [BK_DATA_TYPE_I32] = { "i32", false, 0, 0, 0, -2147483648.0, 2147483647.0 },
    [BK_DATA_TYPE_U32] = { "u32", false, 0, 0, 0, 0, 4294967295.0 },
    [BK_DATA_TYPE_U16] = { "u16", false, 0, 0, 0, 0, 65535.0 },
    [BK_DATA_TYPE_I8] = { "i8", false, 0, 0, 0, -128.0, 127.0 },
    [BK_DATA_TYPE_U8] = { "u8", false, 0, 0, 0, 0, 255.0 },
};

const char *convert_type_name(BkDataType type)
{
    return fmt[type].name;
}

double convert_ref_f16(uint16_t bits)
{
    const int e = (bits >> 10) & 0x1F, m = bits & 0x3FF;
    const double s = bits & 0x8000 ? -1.0 : 1.0;
    if (e == 31)
        return m ? NAN : s * INFINITY;
    return s * (e ? ldexp(1024 + m, e - 25) : ldexp(m, -24));
}

double convert_ref_bf16(uint16_t bits)
{
    const int e = (bits >> 7) & 0xFF, m = bits & 0x7F;
    const double s = bits & 0x8000 ? -1.0 : 1.0;
    if (e == 255)
        return m ? NAN : s * INFINITY;
    return s * (e ? ldexp(128 + m, e - 134) : ldexp(m, -133));
}

double convert_ref_load(BkDataType t, const void *base, int64_t i)
{
    const char *p = base;
    switch (t) {
    case BK_DATA_TYPE_F32: { float v; memcpy(&v, p + 4 * i, 4); return v; }
    case BK_DATA_TYPE_F64: { double v; memcpy(&v, p + 8 * i, 8); return v; }
    case BK_DATA_TYPE_F16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return convert_ref_f16(v); }
    case BK_DATA_TYPE_BF16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return convert_ref_bf16(v); }
    case BK_DATA_TYPE_I32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case BK_DATA_TYPE_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case BK_DATA_TYPE_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case BK_DATA_TYPE_I8: { int8_t v; memcpy(&v, p + i, 1); return v; }
    default: { uint8_t v; memcpy(&v, p + i, 1); return v; }
    }
}

/* The bits of a half-type value v (a value of the type) by search: the
 * reference stores through the decoders, so it needs no encoder of its own. */
static uint16_t half_bits(double (*decode)(uint16_t), double v)
{
    if (isnan(v))
        return decode == convert_ref_f16 ? 0x7E00 : 0x7FC0;
    const uint16_t sign = signbit(v) ? 0x8000 : 0;
    uint16_t lo = 0, hi = decode == convert_ref_f16 ? 0x7C00 : 0x7F80; /* +infinity */
    const double a = fabs(v);
    while (lo < hi) { /* non-negative bits are ordered as their values */
        const uint16_t mid = (uint16_t)(lo + (hi - lo) / 2);
        if (decode(mid) < a)
            lo = (uint16_t)(mid + 1);
        else
            hi = mid;
    }
    return (uint16_t)(sign | lo);
}

void convert_ref_store(BkDataType t, void *base, int64_t i, double v)
{
    char *p = base;
    switch (t) {
    case BK_DATA_TYPE_F32: { float f = (float)v; memcpy(p + 4 * i, &f, 4); break; }
    case BK_DATA_TYPE_F64: memcpy(p + 8 * i, &v, 8); break;
    case BK_DATA_TYPE_F16: { uint16_t h = half_bits(convert_ref_f16, v); memcpy(p + 2 * i, &h, 2); break; }
    case BK_DATA_TYPE_BF16: { uint16_t h = half_bits(convert_ref_bf16, v); memcpy(p + 2 * i, &h, 2); break; }
    case BK_DATA_TYPE_I32: { int32_t x = (int32_t)v; memcpy(p + 4 * i, &x, 4); break; }
    case BK_DATA_TYPE_U32: { uint32_t x = (uint32_t)v; memcpy(p + 4 * i, &x, 4); break; }
    case BK_DATA_TYPE_U16: { uint16_t x = (uint16_t)v; memcpy(p + 2 * i, &x, 2); break; }
    case BK_DATA_TYPE_I8: { int8_t x = (int8_t)v; memcpy(p + i, &x, 1); break; }
    default: { uint8_t x = (uint8_t)v; memcpy(p + i, &x, 1); break; }
    }
}

double convert_ref_round(BkDataType t, double v)
{
    if (!fmt[t].is_float) {
        if (isnan(v))
            return 0;
        /* + 0.0: an integer has no negative zero */
        return v <= fmt[t].lo ? fmt[t].lo : v >= fmt[t].hi ? fmt[t].hi : rint(v) + 0.0;
    }
    if (isnan(v) || isinf(v) || v == 0)
        return v;
    /* The quantum at v: its leading bit's exponent, not below emin, less
     * the bits after it. r = v / q is exact (a power of two). */
    int e;
    frexp(v, &e); /* |v| = f 2^e, f in [0.5, 1) */
    const int lead = e - 1 < fmt[t].emin ? fmt[t].emin : e - 1;
    const int qexp = lead - (fmt[t].precision - 1);
    const double r = ldexp(v, -qexp);
    double n = floor(r);
    const double frac = r - n;
    if (frac > 0.5 || (frac == 0.5 && fmod(n, 2.0) != 0))
        n += 1;
    double out = ldexp(n, qexp);
    if (fabs(out) > fmt[t].max)
        out = copysign(INFINITY, v);
    if (out == 0)
        out = copysign(0.0, v);
    return out;
}

bool convert_ref_same(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    return got == want && signbit(got) == signbit(want);
}
