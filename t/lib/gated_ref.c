/* SPDX-License-Identifier: Apache-2.0 */
/* Closed forms of the gated activations and their derivatives, in long
 * double from <math.h>, independent of libbk's own code. */
#include "config.h"

#include <math.h>

#include "gated_case.h"

const BkGatedActivationKind gated_kinds[GATED_KIND_COUNT] = {
    BK_GATED_ACTIVATION_GLU, BK_GATED_ACTIVATION_REGLU, BK_GATED_ACTIVATION_SWIGLU,
    BK_GATED_ACTIVATION_GEGLU, BK_GATED_ACTIVATION_GEGLU_TANH,
};

const BkDataType gated_types[GATED_TYPE_COUNT] = {
    BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16, BK_DATA_TYPE_F64,
};

const char *gated_kind_name(BkGatedActivationKind kind)
{
    switch (kind) {
    case BK_GATED_ACTIVATION_GLU: return "GLU";
    case BK_GATED_ACTIVATION_REGLU: return "ReGLU";
    case BK_GATED_ACTIVATION_SWIGLU: return "SwiGLU";
    case BK_GATED_ACTIVATION_GEGLU: return "GeGLU";
    case BK_GATED_ACTIVATION_GEGLU_TANH: return "GeGLU-tanh";
    default: return "unknown";
    }
}

static long double sigmoid(long double b)
{
    return 1.0L / (1.0L + expl(-b));
}

/* Phi, the standard normal CDF, through erfc so it keeps its relative
 * accuracy in the far left tail. */
static long double normal_cdf(long double b)
{
    return 0.5L * erfcl(-b / sqrtl(2.0L));
}

static long double normal_pdf(long double b)
{
    return expl(-0.5L * b * b) / sqrtl(2.0L * acosl(-1.0L));
}

/* gelu_tanh(b) = 0.5 b (1 + tanh(u)), u = sqrt(2/pi) (b + 0.044715 b^3). */
static const long double tanh_k = 0.044715L;

static long double tanh_u(long double b)
{
    return sqrtl(2.0L / acosl(-1.0L)) * (b + tanh_k * b * b * b);
}

/* (1 + tanh(u)) / 2, without the cancellation of 1 + tanhl(u) for u < 0. */
static long double half_one_plus_tanh(long double u)
{
    return u >= 0 ? 0.5L * (1.0L + tanhl(u)) : 1.0L / (1.0L + expl(-2.0L * u));
}

long double gated_ref_gate(BkGatedActivationKind kind, long double b)
{
    switch (kind) {
    case BK_GATED_ACTIVATION_GLU: return sigmoid(b);
    case BK_GATED_ACTIVATION_REGLU: return b > 0 ? b : 0.0L;
    case BK_GATED_ACTIVATION_SWIGLU: return b * sigmoid(b);
    case BK_GATED_ACTIVATION_GEGLU: return b * normal_cdf(b);
    case BK_GATED_ACTIVATION_GEGLU_TANH: return b * half_one_plus_tanh(tanh_u(b));
    default: return NAN;
    }
}

long double gated_ref_gate_deriv(BkGatedActivationKind kind, long double b)
{
    switch (kind) {
    case BK_GATED_ACTIVATION_GLU: {
        long double s = sigmoid(b);
        return s * (1.0L - s);
    }
    case BK_GATED_ACTIVATION_REGLU:
        return b > 0 ? 1.0L : 0.0L;   /* 0 at the kink, as documented */
    case BK_GATED_ACTIVATION_SWIGLU: {
        long double s = sigmoid(b);
        return s + b * s * (1.0L - s);
    }
    case BK_GATED_ACTIVATION_GEGLU:
        return normal_cdf(b) + b * normal_pdf(b);
    case BK_GATED_ACTIVATION_GEGLU_TANH: {
        /* (1 - t^2) / 2 = 2 h (1 - h) with h = (1 + t) / 2 */
        long double h = half_one_plus_tanh(tanh_u(b));
        long double du = sqrtl(2.0L / acosl(-1.0L)) * (1.0L + 3.0L * tanh_k * b * b);
        return h + 2.0L * b * h * (1.0L - h) * du;
    }
    default:
        return NAN;
    }
}

long double gated_ref_forward(BkGatedActivationKind kind, long double a, long double b)
{
    return a * gated_ref_gate(kind, b);
}

void gated_ref_backward(BkGatedActivationKind kind, long double a, long double b,
                        long double dy, long double *da, long double *db)
{
    *da = dy * gated_ref_gate(kind, b);
    *db = dy * a * gated_ref_gate_deriv(kind, b);
}
