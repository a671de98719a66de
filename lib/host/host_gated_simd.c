/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations on the host, vectorised: the f32, f16 and bf16 chunk
 * functions of host_gated_activation.c's contiguous path. Every function
 * works on a chunk of contiguous memory with branch-free loops that GCC
 * and clang turn into SIMD (`omp simd` where OpenMP is on); where
 * configure found `target_clones`, x86-64 gets AVX-512, AVX2 and baseline
 * clones picked at load time. The math: exp by Cody-Waite reduction and a
 * degree-6 polynomial (about 1 ulp), scaled in two steps so that results
 * in the subnormal range round once (in one step, unclamped, for a chunk
 * whose gates keep every exponential normal: the same bits); the
 * polynomials by Estrin's scheme, as the chain of dependent operations,
 * not their count, bounds the loops on a core with a small scheduler (Zen
 * 1); Phi(b) = erfc(|b| / sqrt 2) / 2 (or one minus it) by the Chebyshev
 * fit t exp(-z^2 + P(t)), t = 1 / (1 + z / 2) (Numerical Recipes' erfcc,
 * relative error < 1.2e-7), with b^2 / 2 split exactly so that the large
 * exponent loses nothing (the backward shares exp(-z^2) with the density
 * and takes exp(P(t)) from a short fit over P's narrow range). Half types
 * convert by bit manipulation, bit-identical to half.h. For large runs of
 * the half types the plan keeps a table of the gate of every 16-bit input,
 * filled by these same functions: a lookup (scalar loads into vector
 * lanes) instead of the polynomials. */
#include "host_gated_simd.h"
#include "../half.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

/* ThreadSanitizer's runtime is not up yet when the loader runs the clones'
 * ifunc resolvers (the process crashes): no clones under it. */
#if defined(__SANITIZE_THREAD__)
#define BK_NO_IFUNC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BK_NO_IFUNC 1
#endif
#endif

#if defined(BK_HAVE_TARGET_CLONES) && defined(__x86_64__) && !defined(BK_NO_IFUNC)
#if defined(BK_HAVE_TARGET_CLONES_LEVELS)
/* x86-64-v3 has FMA: with contraction on (below) the polynomials fuse. */
#define HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#define HAVE_F16C_PATH 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define HOT
#define HAVE_F16C_PATH 0
#endif
/* ISO C mode (-std=c11) turns off contracting a * b + c into one fused
 * multiply-add; the polynomials here want it back (one rounding fewer, and
 * half the instructions where the clone has FMA). Not on s390x, where GCC
 * 12 fuses the normal-range and general chunk paths' operations
 * differently, so that their bits differ (t/determinism, under qemu). */
#if defined(__clang__)
#pragma clang fp contract(fast)
#elif defined(__GNUC__) && !defined(__s390x__)
#pragma GCC optimize("fp-contract=fast")
#endif

#ifdef _OPENMP
#define SIMD _Pragma("omp simd")
#define SIMD_MAX(m) _Pragma("omp simd reduction(max : m)")
#else
#define SIMD
#define SIMD_MAX(m)
#endif

/* The math below inlined into the chunk loops, whatever its size (a call
 * in a loop body stops it vectorising). */
#if defined(__GNUC__)
#define INLINE static inline __attribute__((always_inline))
#else
#define INLINE static inline
#endif

#define N BK_GATED_CHUNK
#define SQRT_2_OVER_PI 0.79788456080286535587989211986876f
#define INV_SQRT_2 0.70710678118654752440084436210485f
#define INV_SQRT_2PI 0.39894228040143267793994605993438f
#define GELU_TANH_C 0.044715f

/* c ? a : b without a branch, so that the loops vectorise without
 * speculating a floating-point operation. */
INLINE uint32_t sel_u(int c, uint32_t a, uint32_t b)
{
    uint32_t m = 0u - (uint32_t)c;
    return (a & m) | (b & ~m);
}

INLINE float sel_f(int c, float a, float b)
{
    return bk_f32_from_bits(sel_u(c, bk_f32_bits(a), bk_f32_bits(b)));
}

/* exp(x + lo) as the product of three factors, m exp(x + lo) = (m * ps) *
 * s2, x + lo <= 88, |lo| small (has_lo false: lo is 0, and no additions
 * of it); NaN stays NaN. ps carries the polynomial
 * and one power of two (exactly: it stays normal), s2 the other, so that
 * results in float's subnormal range round once. normal (a constant at
 * each call): the caller knows that x + lo >= -80, where m exp(x + lo)
 * stays normal for the m it takes: no clamps, and all the power of two in
 * ps (s2 = 1), which gives the same bits, as scaling by powers of two is
 * exact away from the subnormals. In two steps: vexp_reduce gives the
 * reduced argument r and k (the power of two in its bits), vexp_finish
 * the polynomial and the factors (vexp_scaled: their product with m). */
INLINE void vexp_reduce(float x, bool has_lo, float lo, bool normal, float *r_out, float *k_out)
{
    float xs = has_lo ? x + lo : x;
    if (!normal) {
        xs = sel_f(xs < -104.0f, -104.0f, xs);
        x = sel_f(x < -104.0f - lo, -104.0f - lo, x);
    }
    float k = xs * 1.44269504088896341f + 12582912.0f;     /* round to nearest */
    float n = k - 12582912.0f;
    float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
    if (has_lo)
        r += lo;
    *r_out = r;
    *k_out = k;
}

/* ps and s2 from vexp_reduce's r and k (stored between passes: the same
 * bits, as neither is fused into what follows). */
INLINE void vexp_finish(float r, float k, bool normal, float *ps, float *s2)
{
    /* 1 + r + r^2 q(r), q of degree 5 by Estrin's scheme: its terms in
     * pairs side by side, so that a chunk's loop waits on a chain of three
     * multiply-adds, not five (the exponential's latency is what bounds
     * the loop on a narrow core). */
    float r2 = r * r, r4 = r2 * r2;
    float q01 = 1.6666665459e-1f * r + 5.0000001201e-1f;
    float q23 = 8.3334519073e-3f * r + 4.1665795894e-2f;
    float q45 = 1.9875691500e-4f * r + 1.3981999507e-3f;
    float p = (q45 * r4 + (q23 * r2 + q01)) * r2 + r + 1.0f;
    uint32_t nu = bk_f32_bits(k) - 0x4B400000u;
    if (normal) {
        *ps = p * bk_f32_from_bits((nu + 127u) << 23);
        *s2 = 1.0f;
        return;
    }
    uint32_t n1 = nu >> 1 | (nu & 0x80000000u), n2 = nu - n1;
    *ps = p * bk_f32_from_bits((n1 + 127u) << 23);
    *s2 = bk_f32_from_bits((n2 + 127u) << 23);
}

INLINE float vexp_scaled(float r, float k, float m, bool normal)
{
    float ps, s2;
    vexp_finish(r, k, normal, &ps, &s2);
    return (m * ps) * s2;
}

INLINE float vexp(float x, bool has_lo, float lo, float m, bool normal)
{
    float r, k;
    vexp_reduce(x, has_lo, lo, normal, &r, &k);
    return vexp_scaled(r, k, m, normal);
}

/* exp(q) for q in [-1.2665, 0.001] (the range of vphi's erfc fit): a
 * degree-7 Chebyshev fit about the middle, relative error 9e-9. */
INLINE float vexp_fit_range(float q)
{
    float d = q - -0.6327561f, d2 = d * d, d4 = d2 * d2;
    float e01 = 5.3112594539e-01f * d + 5.3112594299e-01f;
    float e23 = 8.8521014829e-02f * d + 2.6556318811e-01f;
    float e45 = 4.4257524576e-03f * d + 2.2127570023e-02f;
    float e67 = 1.0656378628e-04f * d + 7.4832169001e-04f;
    return (e67 * d2 + e45) * d4 + (e23 * d2 + e01);
}

/* sigmoid(x) from e = exp(-|x|) */
INLINE float sigmoid_of(float x, float e)
{
    float r = 1.0f / (1.0f + e);
    return sel_f(x >= 0.0f, r, e * r);
}

/* exp(-|x|) in two steps (the normal-range passes take them apart). */
INLINE void sigmoid_e_reduce(float x, bool normal, float *r, float *k)
{
    vexp_reduce(-__builtin_fabsf(x), false, 0.0f, normal, r, k);
}
INLINE float sigmoid_e_finish(float r, float k, bool normal)
{
    return vexp_scaled(r, k, 1.0f, normal);
}
INLINE float vsigmoid_e(float x, bool normal)
{
    float r, k;
    sigmoid_e_reduce(x, normal, &r, &k);
    return sigmoid_e_finish(r, k, normal);
}

INLINE float vsigmoid(float x, bool normal)
{
    return sigmoid_of(x, vsigmoid_e(x, normal));
}

/* -b^2 / 2 as hi + lo, hi exact. */
INLINE void half_square(float b, float *hi, float *lo)
{
    float bh = bk_f32_from_bits(bk_f32_bits(b) & 0xFFFFF000u), bl = b - bh;
    *hi = -0.5f * (bh * bh);
    *lo = -0.5f * (bl * (b + bh));
}

/* The erfc fit's t = 1 / (1 + |b| / (2 sqrt 2)) and P(t). */
INLINE float erfc_fit(float b, float *t_out)
{
    float t = 1.0f / (1.0f + (0.5f * INV_SQRT_2) * __builtin_fabsf(b));
    *t_out = t;
    /* Estrin's scheme (see vexp_finish) */
    float t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
    float q01 = 1.00002368f * t + -1.26551223f;
    float q23 = 0.09678418f * t + 0.37409196f;
    float q45 = 0.27886807f * t + -0.18628806f;
    float q67 = 1.48851587f * t + -1.13520398f;
    float q89 = 0.17087277f * t + -0.82215223f;
    return q89 * t8 + ((q67 * t2 + q45) * t4 + (q23 * t2 + q01));
}

/* b for Phi's arithmetic: beyond |b| = 64 Phi is exactly 0 or 1 in f32,
 * and b^2 would overflow (to inf, then NaN in half_square's low part). */
INLINE float phi_arg(float b)
{
    return sel_f(b > 64.0f, 64.0f, sel_f(b < -64.0f, -64.0f, b));
}

/* Phi(b) from h = erfc(|b| / sqrt 2) / 2. */
INLINE float phi_side(float b, float h)
{
    return sel_f(b < 0.0f, h, 1.0f - h);
}

/* Phi(b) alone (the forward): one exponential of -b^2 / 2 + P(t), given
 * the erfc fit's q = P(t) and t for b (b within phi_arg's bounds). */
INLINE float vphi_cdf_fit(float b, float q, float t, bool normal)
{
    float hi, lo;
    half_square(b, &hi, &lo);
    return phi_side(b, vexp(hi, true, lo + q, 0.5f * t, normal));
}

INLINE float vphi_cdf(float b, bool normal)
{
    float t;
    if (!normal)
        b = phi_arg(b);
    float q = erfc_fit(b, &t);
    return vphi_cdf_fit(b, q, t, normal);
}

/* Phi(b) and the density (the backward): one exponential for both,
 * exp(-b^2 / 2) times the fit's exp(P(t)); vphi_of from exp(P(t)), t and
 * the factors of exp(-b^2 / 2) (vexp_finish's ps and s2), vphi_last from
 * the erfc fit's q and t and that exponential's reduced argument r and k. */
INLINE float vphi_of(float b, float eq, float t, float ps, float s2, float *pdf)
{
    float h = ((0.5f * t * eq) * ps) * s2;
    *pdf = (INV_SQRT_2PI * ps) * s2;
    return phi_side(b, h);
}
INLINE float vphi_last(float b, float q, float t, float r, float k, bool normal, float *pdf)
{
    float ps, s2;
    vexp_finish(r, k, normal, &ps, &s2);
    return vphi_of(b, vexp_fit_range(q), t, ps, s2, pdf);
}
INLINE float vphi(float b, bool normal, float *pdf)
{
    float hi, lo, t, r, k;
    if (!normal)
        b = phi_arg(b);
    half_square(b, &hi, &lo);
    float q = erfc_fit(b, &t);
    vexp_reduce(hi, true, lo, normal, &r, &k);
    return vphi_last(b, q, t, r, k, normal, pdf);
}

/* The sigmoid kinds as the sigmoid of x(b) and the gate and derivative
 * from it: gs_KIND(b, sigmoid(x_KIND(b)), &d). */
INLINE float x_glu(float b)
{
    return b;
}
INLINE float gs_glu(float b, float s, float *d)
{
    (void)b;
    *d = s * (1.0f - s);
    return s;
}
INLINE float x_swiglu(float b)
{
    return b;
}
INLINE float gs_swiglu(float b, float s, float *d)
{
    *d = s * (1.0f + b * (1.0f - s));
    return b * s;
}
/* 2 u = b (2 sqrt(2 / pi) + 2 sqrt(2 / pi) c b^2): three dependent
 * operations before the sigmoid, not five */
INLINE float x_geglu_tanh(float b)
{
    return b * ((2.0f * SQRT_2_OVER_PI) + (2.0f * SQRT_2_OVER_PI * GELU_TANH_C) * (b * b));
}
INLINE float gs_geglu_tanh(float b, float s, float *d)
{
    float w = s * (1.0f - s);
    float du = SQRT_2_OVER_PI * (1.0f + (3.0f * GELU_TANH_C) * b * b);
    *d = s + sel_f(w == 0.0f, 0.0f, 2.0f * b * w * du);
    return b * s;
}

/* gate(b), and d = gate'(b), per kind; normal: every exponential of the
 * chunk stays normal (see normal_limit). */
INLINE float g_glu(float b, bool normal, float *d)
{
    return gs_glu(b, vsigmoid(x_glu(b), normal), d);
}
INLINE float g_reglu(float b, bool normal, float *d)
{
    (void)normal;
    *d = sel_f(b > 0.0f, 1.0f, 0.0f);
    return sel_f(b > 0.0f, b, 0.0f);
}
INLINE float g_swiglu(float b, bool normal, float *d)
{
    return gs_swiglu(b, vsigmoid(x_swiglu(b), normal), d);
}
/* GeGLU's gate and derivative from Phi(b) and the density. */
INLINE float geglu_of_phi(float b, float cdf, float pdf, float *d)
{
    *d = cdf + b * pdf;
    return b * cdf;
}
INLINE float g_geglu(float b, bool normal, float *d)
{
    float pdf, cdf = vphi(b, normal, &pdf);
    return geglu_of_phi(b, cdf, pdf, d);
}
/* g_geglu in the normal range from vphi_of's inputs (the backward's last
 * pass). */
INLINE float g_geglu_of(float b, float eq, float t, float ps, float *d)
{
    float pdf, cdf = vphi_of(b, eq, t, ps, 1.0f, &pdf);
    return geglu_of_phi(b, cdf, pdf, d);
}
INLINE float g_geglu_tanh(float b, bool normal, float *d)
{
    return gs_geglu_tanh(b, vsigmoid(x_geglu_tanh(b), normal), d);
}

/* The gate alone, for the forward: the compiler drops the unused
 * derivative, and GeGLU takes Phi by its own cheaper route. */
#define GATE_ONLY(KIND)                                                              \
    INLINE float f_##KIND(float b, bool normal)                                      \
    {                                                                                \
        float d;                                                                     \
        return g_##KIND(b, normal, &d);                                              \
    }
GATE_ONLY(glu)
GATE_ONLY(reglu)
GATE_ONLY(swiglu)
GATE_ONLY(geglu_tanh)
INLINE float f_geglu(float b, bool normal)
{
    return b * vphi_cdf(b, normal);
}
/* b Phi(b) from h = erfc(|b| / sqrt 2) / 2 (the normal-range forward's
 * last pass). A function, as f_geglu: its value rounds to float before
 * a[i] multiplies it (x87 keeps an expression's intermediates in long
 * double, and rounds them where a function returns). */
INLINE float f_geglu_of_h(float b, float h)
{
    return b * phi_side(b, h);
}

/* The largest |b| (as the bits of a float) for which every exponential of
 * a kind's gate and derivative keeps its result normal, with margin:
 * exp(-|b|) (the sigmoid kinds), exp(-2 |u(b)|) with |u| = sqrt(2 / pi)
 * (|b| + 0.044715 |b|^3) (GeGLU-tanh: |b| <= 9 gives 2 |u| <= 70), and
 * exp(-b^2 / 2 + P(t)) times t / 2 >= 0.09 (GeGLU: |b| <= 12, exponent
 * >= -73.3). The chunks whose |b| stay within it (and no NaN: its bits
 * are larger) take the exponentials without their subnormal steps and
 * clamps: the same bits, fewer instructions. ReGLU has none (no check). */
#define NO_EXPONENTIALS UINT32_MAX
static const uint32_t normal_limit[BK_GATED_SIMD_KINDS] = {
    0x42A00000u, /* GLU: 80 */
    NO_EXPONENTIALS, /* ReGLU */
    0x42A00000u, /* SwiGLU: 80 */
    0x41400000u, /* GeGLU: 12 */
    0x41100000u, /* GeGLU-tanh: 9 */
};

/* Whether every |b[i]| of the chunk is at most limit (bits of a float). */
HOT static bool within(const float *restrict b, int n, uint32_t limit)
{
    uint32_t m = 0;
    SIMD_MAX(m) for (int i = 0; i < n; i++) {
        uint32_t v = bk_f32_bits(b[i]) & 0x7FFFFFFFu;
        m = v > m ? v : m;
    }
    return m <= limit;
}

/* Whether a chunk of kind takes its normal-range path (always for ReGLU). */
INLINE bool normal_chunk(const float *restrict b, int n, int kind)
{
    return normal_limit[kind] == NO_EXPONENTIALS || within(b, n, normal_limit[kind]);
}

/* One pass over a chunk of n (NORMAL: a constant): the forward's y, the
 * backward's da and db. */
#define FWD_LOOP(KIND, NORMAL)                                                       \
    SIMD for (int i = 0; i < n; i++)                                                 \
        y[i] = a[i] * f_##KIND(b[i], NORMAL);
#define BWD_LOOP(KIND, NORMAL)                                                       \
    SIMD for (int i = 0; i < n; i++) {                                               \
        float d, g = g_##KIND(b[i], NORMAL, &d);                                     \
        da[i] = dy[i] * g;                                                           \
        db[i] = dy[i] * a[i] * d;                                                    \
    }

/* The sigmoid kinds in the normal range in three passes: the chunk's
 * exponentials' reduced arguments into buffers, then the exponentials,
 * then the rest. Each pass's chain of dependent operations is a fraction
 * of the whole one's, so the core keeps more iterations in flight (the
 * same operations: the same bits). The last pass picks the sigmoid's side
 * by b, not x(b): every kind's x(b) is b times a positive factor, so the
 * sign is the same, and where x rounds to a zero of the other sign e = 1
 * makes both sides 1/2 (the same bits, three operations fewer for
 * GeGLU-tanh). Three passes against two (one thread, a chunk in L1, best
 * of 6 x 200, this Zen 4 pinned): the x86-64-v3 build 9-20% less time per
 * element (GeGLU-tanh forward 0.664 -> 0.531 ns, backward 0.904 -> 0.769;
 * SwiGLU 0.564 -> 0.501, 0.663 -> 0.603; GLU forward 0.550 -> 0.451), the
 * AVX-512 clone GeGLU-tanh 3-5% less, SwiGLU and GLU 3-4% more (where two
 * threads are bound by memory anyway); llvm-mca's znver1 model GeGLU-tanh
 * forward 29.0 -> 24.5 cycles per 8 elements. */
#define SIGMOID_E_PASSES(KIND)                                                       \
    _Alignas(64) float e[N], er[N], ek[N];                                           \
    SIMD for (int i = 0; i < n; i++)                                                 \
        sigmoid_e_reduce(x_##KIND(b[i]), true, &er[i], &ek[i]);                      \
    SIMD for (int i = 0; i < n; i++)                                                 \
        e[i] = sigmoid_e_finish(er[i], ek[i], true);
#define FWD_SIGMOID_PASSES(KIND)                                                     \
    SIGMOID_E_PASSES(KIND)                                                           \
    SIMD for (int i = 0; i < n; i++) {                                               \
        float d;                                                                     \
        y[i] = a[i] * gs_##KIND(b[i], sigmoid_of(b[i], e[i]), &d);                   \
    }
#define BWD_SIGMOID_PASSES(KIND)                                                     \
    SIGMOID_E_PASSES(KIND)                                                           \
    SIMD for (int i = 0; i < n; i++) {                                               \
        float d, g = gs_##KIND(b[i], sigmoid_of(b[i], e[i]), &d);                    \
        da[i] = dy[i] * g;                                                           \
        db[i] = dy[i] * a[i] * d;                                                    \
    }
/* GeGLU's forward likewise: the erfc fit (its division and polynomial),
 * then the exponential's argument reduced, then its polynomial and the
 * rest. Against the two passes it had (the fit, then the rest), the same
 * measure: the x86-64-v3 build 1.281 -> 0.999 ns, the AVX-512 clone 0.867
 * -> 0.764; llvm-mca's znver1 model 49.8 -> 37.5 cycles per 8 elements.
 * The backward likewise (it ran in one pass: in two it had measured no
 * faster on Zen 1): 15-22% less time on the x86-64-v3 code (1.557 -> 1.326
 * ns, 1.336 -> 1.047 in two sittings), 7-14% on the AVX-512 clone; the
 * model 57.4 -> 44.7 cycles.
 * Then (8285e15) four passes each: the fit's pass waits on its
 * division (Zen 1: one 8-wide division each 12 cycles), so -b^2 / 2's
 * split, which needs only b, moved there to fill the multiply-add pipes
 * beside it; and the last pass, which waited on one long chain
 * (the exponential's polynomial, then Phi, then the products), is two:
 * the same operations and bits. The model: forward 37.8 -> 32.0 cycles,
 * backward 44.9 -> 38.7; this Zen 4, the x86-64-v3 build, 0.785 -> 0.751
 * and 1.047 -> 0.973 ns per element (the AVX-512 clone level within this
 * machine's spread; bench/log/gated.md). */
/* The first two: the erfc fit and -b^2 / 2 split (FOLD: the forward adds
 * the fit's P(t) to its low part; the backward keeps q), then exp's
 * argument reduced. */
#define GEGLU_FIT_PASSES(FOLD)                                                       \
    _Alignas(64) float q[N], t[N], h[N], l[N], r[N], k[N];                           \
    SIMD for (int i = 0; i < n; i++) {                                               \
        q[i] = erfc_fit(b[i], &t[i]);                                                \
        half_square(b[i], &h[i], &l[i]);                                             \
        if (FOLD)                                                                    \
            l[i] += q[i];                                                            \
    }                                                                                \
    SIMD for (int i = 0; i < n; i++)                                                 \
        vexp_reduce(h[i], true, l[i], true, &r[i], &k[i]);
#define FWD_GEGLU_PASSES                                                             \
    GEGLU_FIT_PASSES(true)                                                           \
    SIMD for (int i = 0; i < n; i++)                                                 \
        r[i] = vexp_scaled(r[i], k[i], 0.5f * t[i], true);                           \
    SIMD for (int i = 0; i < n; i++)                                                 \
        y[i] = a[i] * f_geglu_of_h(b[i], r[i]);
#define BWD_GEGLU_PASSES                                                             \
    GEGLU_FIT_PASSES(false)                                                          \
    SIMD for (int i = 0; i < n; i++) {                                               \
        float s2;                                                                    \
        vexp_finish(r[i], k[i], true, &r[i], &s2);                                   \
        q[i] = vexp_fit_range(q[i]);                                                 \
    }                                                                                \
    SIMD for (int i = 0; i < n; i++) {                                               \
        float d, g = g_geglu_of(b[i], q[i], t[i], r[i], &d);                         \
        da[i] = dy[i] * g;                                                           \
        db[i] = dy[i] * a[i] * d;                                                    \
    }

/* A kind's chunk functions: FWD_NORMAL and BWD_NORMAL (statements) where
 * the chunk takes its normal-range path, else one general pass. */
#define DEFINE_KIND(KIND, INDEX, FWD_NORMAL, BWD_NORMAL)                             \
    HOT static void fwd_##KIND(const float *restrict a, const float *restrict b,      \
                               const float *restrict dy, float *restrict y,           \
                               float *restrict unused, int n)                         \
    {                                                                                \
        (void)dy, (void)unused;                                                      \
        if (normal_chunk(b, n, INDEX)) {                                             \
            FWD_NORMAL                                                               \
        } else {                                                                     \
            FWD_LOOP(KIND, false)                                                    \
        }                                                                            \
    }                                                                                \
    HOT static void bwd_##KIND(const float *restrict a, const float *restrict b,      \
                               const float *restrict dy, float *restrict da,          \
                               float *restrict db, int n)                             \
    {                                                                                \
        if (normal_chunk(b, n, INDEX)) {                                             \
            BWD_NORMAL                                                               \
        } else {                                                                     \
            BWD_LOOP(KIND, false)                                                    \
        }                                                                            \
    }
DEFINE_KIND(glu, 0, FWD_SIGMOID_PASSES(glu), BWD_SIGMOID_PASSES(glu))
DEFINE_KIND(reglu, 1, FWD_LOOP(reglu, true), BWD_LOOP(reglu, true))
DEFINE_KIND(swiglu, 2, FWD_SIGMOID_PASSES(swiglu), BWD_SIGMOID_PASSES(swiglu))
DEFINE_KIND(geglu, 3, FWD_GEGLU_PASSES, BWD_GEGLU_PASSES)
DEFINE_KIND(geglu_tanh, 4, FWD_SIGMOID_PASSES(geglu_tanh),
            BWD_SIGMOID_PASSES(geglu_tanh))

const struct bk_gated_simd_kind bk_gated_simd_kinds[BK_GATED_SIMD_KINDS] = {
    { fwd_glu, bwd_glu },
    { fwd_reglu, bwd_reglu },
    { fwd_swiglu, bwd_swiglu },
    { fwd_geglu, bwd_geglu },
    { fwd_geglu_tanh, bwd_geglu_tanh },
};

/* ---- Conversions, bit-identical to half.h ---------------------------- */
/* f16 converts with F16C's instructions where the CPU has them and AVX2
 * (set once by bk_gated_simd_init), else by bit manipulation. The two
 * differ only in that F16C quiets a signaling NaN on load, which the math
 * (every output is a product) does anyway. */
#if HAVE_F16C_PATH
static atomic_int have_f16c;

static inline int have_avx2_f16c(void)
{
    return atomic_load_explicit(&have_f16c, memory_order_relaxed);
}

/* 8 f16 in, 8 f16 out (rounding to nearest even). */
__attribute__((target("avx2,f16c"))) static inline __m256 f16x8_in(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
}
__attribute__((target("avx2,f16c"))) static inline void f16x8_out(uint16_t *p, __m256 f)
{
    _mm_storeu_si128((__m128i *)(void *)p, _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("avx2,f16c"))) static void load_f16_f16c(const uint16_t *restrict src,
                                                                float *restrict out)
{
    for (int i = 0; i < N; i += 8)
        _mm256_storeu_ps(out + i, f16x8_in(src + i));
}

__attribute__((target("avx2,f16c"))) static void store_f16_f16c(uint16_t *restrict dst,
                                                                 const float *restrict in)
{
    for (int i = 0; i < N; i += 8)
        f16x8_out(dst + i, _mm256_loadu_ps(in + i));
}
#else
static inline int have_avx2_f16c(void)
{
    return 0;
}
#endif

void bk_gated_simd_init(void)
{
#if HAVE_F16C_PATH
    unsigned eax, ebx, ecx, edx;
    __builtin_cpu_init();
    int f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    atomic_store_explicit(&have_f16c, f16c && __builtin_cpu_supports("avx2"),
                          memory_order_relaxed);
#endif
}

HOT static void load_f16_bits(const uint16_t *restrict src, float *restrict out)
{
    SIMD for (int i = 0; i < N; i++) {
        uint32_t sign = (uint32_t)(src[i] & 0x8000u) << 16, em = src[i] & 0x7FFFu;
        uint32_t r = bk_f32_bits(bk_f32_from_bits(em << 13) * 0x1p112f);
        r = sel_u(em >= 0x7C00u, 0x7F800000u | (em << 13), r);
        out[i] = bk_f32_from_bits(r | sign);
    }
}

HOT static void store_f16_bits(uint16_t *restrict dst, const float *restrict in)
{
    SIMD for (int i = 0; i < N; i++) {
        uint32_t u = bk_f32_bits(in[i]);
        uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7FFFFFFFu;
        uint32_t nan = 0x7E00u | ((a >> 13) & 0x3FFu);
        uint32_t sub = bk_f32_bits(bk_f32_from_bits(a) + 0.5f) - 0x3F000000u;
        uint32_t r = a - 0x38000000u;
        r = (r + 0xFFFu + ((r >> 13) & 1u)) >> 13;
        r = sel_u(a < 0x38800000u, sub, r);
        r = sel_u(a >= 0x477FF000u, 0x7C00u, r);
        r = sel_u(a > 0x7F800000u, nan, r);
        dst[i] = (uint16_t)(sign | r);
    }
}

void bk_gated_load_f16(const uint16_t *restrict src, float *restrict out)
{
#if HAVE_F16C_PATH
    if (have_avx2_f16c()) {
        load_f16_f16c(src, out);
        return;
    }
#endif
    load_f16_bits(src, out);
}

void bk_gated_store_f16(uint16_t *restrict dst, const float *restrict in)
{
#if HAVE_F16C_PATH
    if (have_avx2_f16c()) {
        store_f16_f16c(dst, in);
        return;
    }
#endif
    store_f16_bits(dst, in);
}

static inline uint16_t bf16_out(float f)
{
    uint32_t u = bk_f32_bits(f);
    uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    r = sel_u((u & 0x7FFFFFFFu) > 0x7F800000u, (u >> 16) | 0x0040u, r);
    return (uint16_t)r;
}

HOT static void load_bf16(const uint16_t *restrict src, float *restrict out)
{
    SIMD for (int i = 0; i < N; i++)
        out[i] = bk_bf16_to_f32(src[i]);
}

HOT static void store_bf16(uint16_t *restrict dst, const float *restrict in)
{
    SIMD for (int i = 0; i < N; i++)
        dst[i] = bf16_out(in[i]);
}

/* Not target_clones themselves: clang emits a clone's dispatcher only in
 * the unit that calls it. */
void bk_gated_load_bf16(const uint16_t *restrict src, float *restrict out)
{
    load_bf16(src, out);
}

void bk_gated_store_bf16(uint16_t *restrict dst, const float *restrict in)
{
    store_bf16(dst, in);
}

/* ---- Tables for the half types ----------------------------------------- */
/* The same products as the chunk functions' (y = a * g; da = dy * g,
 * db = (dy * a) * d, each rounded once to f32, then to the type). */
static void fwd_table_bf16_any(const uint16_t *restrict a, const uint16_t *restrict b,
                               uint16_t *restrict y, const float *restrict g)
{
    for (int i = 0; i < N; i++)
        y[i] = bf16_out(bk_bf16_to_f32(a[i]) * g[b[i]]);
}

/* The gate (k 0) or derivative (k 1) of input bits b in a backward table
 * of pairs. The index in 64 bits: GCC 12 on ppc64le vectorizes the 16-bit
 * by 32-bit product of `2 * b[i]` with its lanes out of order (the
 * table's chunk functions gave every element another's value; under
 * qemu, and by the ISA's definitions of the instructions it emits). */
INLINE float pair_entry(const float *restrict gd, uint16_t b, int k)
{
    return gd[(size_t)b * 2 + (size_t)k];
}

static void bwd_table_bf16_any(const uint16_t *restrict a, const uint16_t *restrict b,
                               const uint16_t *restrict dy, uint16_t *restrict da,
                               uint16_t *restrict db, const float *restrict gd)
{
    for (int i = 0; i < N; i++) {
        const float y = bk_bf16_to_f32(dy[i]);
        da[i] = bf16_out(y * pair_entry(gd, b[i], 0));
        db[i] = bf16_out(y * bk_bf16_to_f32(a[i]) * pair_entry(gd, b[i], 1));
    }
}

#if HAVE_F16C_PATH
/* bf16 in 8-wide vectors, rounding as bf16_out: nearest even, NaN quieted. */
__attribute__((target("avx2"))) static inline __m256 bf16x8_in(const uint16_t *p)
{
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* bf16 bits of 8 floats in the low halves of 32-bit lanes. */
__attribute__((target("avx2"))) static inline __m256i bf16x8_bits(__m256 f)
{
    const __m256i u = _mm256_castps_si256(f);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)),
                                                   odd), 16);
    /* NaN is rare: one compare finds it, the fix-up runs only then */
    const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    if (_mm256_movemask_ps(nan)) {
        const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x0040));
        r = _mm256_blendv_epi8(r, quiet, _mm256_castps_si256(nan));
    }
    return r;
}
__attribute__((target("avx2"))) static inline void bf16x8_out(uint16_t *p, __m256 f)
{
    /* 8 x 32-bit (each < 2^16) to 8 x 16-bit */
    const __m256i r = bf16x8_bits(f);
    const __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
    _mm_storeu_si128((__m128i *)(void *)p, _mm_packus_epi32(lo, hi));
}

/* bf16x8_out of f0 and f1 into p[0..15]: one 256-bit pack and store. */
__attribute__((target("avx2"))) static inline void bf16x16_out(uint16_t *p, __m256 f0,
                                                               __m256 f1)
{
    /* packus interleaves the lanes (0-3 of f0, 0-3 of f1, 4-7 of f0, ...): one permute */
    const __m256i packed = _mm256_packus_epi32(bf16x8_bits(f0), bf16x8_bits(f1));
    _mm256_storeu_si256((__m256i *)(void *)p, _mm256_permute4x64_epi64(packed, 0xD8));
}
__attribute__((target("avx2,f16c"))) static inline void f16x16_out(uint16_t *p, __m256 f0,
                                                                    __m256 f1)
{
    f16x8_out(p, f0);
    f16x8_out(p + 8, f1);
}

/* The table's gates of b[0..7], and for the backward its gate and
 * derivative pairs, by scalar loads into the lanes: Zen 1 runs
 * vgatherdps at a third of that speed (doc/design/host.md), and elsewhere
 * the two are close. */
__attribute__((target("avx2"))) static inline __m256 lookup8(const float *g, const uint16_t *b)
{
    const __m128 lo = _mm_set_ps(g[b[3]], g[b[2]], g[b[1]], g[b[0]]);
    const __m128 hi = _mm_set_ps(g[b[7]], g[b[6]], g[b[5]], g[b[4]]);
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

/* {gd[2 b[j]], gd[2 b[j] + 1]} of j, j + 1 as one vector of four */
__attribute__((target("avx2"))) static inline __m128 pairs2(const float *gd, const uint16_t *b)
{
    const __m128i lo = _mm_loadl_epi64((const __m128i *)(const void *)(gd + 2 * b[0]));
    const __m128 p = _mm_castsi128_ps(lo);
    return _mm_loadh_pi(p, (const __m64 *)(const void *)(gd + 2 * b[1]));
}

__attribute__((target("avx2"))) static inline void lookup8_pairs(const float *gd, const uint16_t *b,
                                                                  __m256 *g, __m256 *d)
{
    const __m128 p01 = pairs2(gd, b), p23 = pairs2(gd, b + 2);
    const __m128 p45 = pairs2(gd, b + 4), p67 = pairs2(gd, b + 6);
    *g = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_shuffle_ps(p01, p23, 0x88)),
                              _mm_shuffle_ps(p45, p67, 0x88), 1);
    *d = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_shuffle_ps(p01, p23, 0xDD)),
                              _mm_shuffle_ps(p45, p67, 0xDD), 1);
}

/* The table chunk functions on 8-wide vectors (FAST: f16c, bf16_avx2),
 * the portable ones' operations in their order. */
#define TABLE_AVX2_FNS(FAST, ATTR, IN, OUT16)                                               \
    __attribute__((target(ATTR))) static void fwd_table_##FAST(                             \
        const uint16_t *restrict a, const uint16_t *restrict b, uint16_t *restrict y,       \
        const float *restrict g)                                                            \
    {                                                                                       \
        for (int i = 0; i < N; i += 16)                                                     \
            OUT16(y + i, _mm256_mul_ps(IN(a + i), lookup8(g, b + i)),                       \
                  _mm256_mul_ps(IN(a + i + 8), lookup8(g, b + i + 8)));                     \
    }                                                                                       \
    /* gate and derivative side by side: one 8-byte load for both */                      \
    __attribute__((target(ATTR))) static void bwd_table_##FAST(                             \
        const uint16_t *restrict a, const uint16_t *restrict b, const uint16_t *restrict dy, \
        uint16_t *restrict da, uint16_t *restrict db, const float *restrict gd)             \
    {                                                                                       \
        for (int i = 0; i < N; i += 16) {                                                   \
            __m256 y0 = IN(dy + i), y1 = IN(dy + i + 8), g0, d0, g1, d1;                    \
            lookup8_pairs(gd, b + i, &g0, &d0);                                             \
            lookup8_pairs(gd, b + i + 8, &g1, &d1);                                         \
            OUT16(da + i, _mm256_mul_ps(y0, g0), _mm256_mul_ps(y1, g1));                    \
            OUT16(db + i, _mm256_mul_ps(_mm256_mul_ps(y0, IN(a + i)), d0),                  \
                  _mm256_mul_ps(_mm256_mul_ps(y1, IN(a + i + 8)), d1));                     \
        }                                                                                   \
    }
TABLE_AVX2_FNS(f16c, "avx2,f16c", f16x8_in, f16x16_out)
TABLE_AVX2_FNS(bf16_avx2, "avx2", bf16x8_in, bf16x16_out)
#endif

/* ReGLU on the half types in one pass (no table: max(b, 0) costs less
 * than a gather), the chunk path's operations in its order, so the same
 * bits: forward y = a * g, backward da = dy * g, db = (dy * a) * d, with
 * g = b and d = 1 where b > 0, else +0 and 0 (NaN included). */
#if HAVE_F16C_PATH
__attribute__((target("avx2"))) static inline void reglu_gate(__m256 b, __m256 *g, __m256 *d)
{
    const __m256 pos = _mm256_cmp_ps(b, _mm256_setzero_ps(), _CMP_GT_OQ);
    *g = _mm256_and_ps(b, pos);
    *d = _mm256_and_ps(_mm256_set1_ps(1.0f), pos);
}

#define REGLU_FNS(T, ATTR, IN, OUT)                                                        \
    __attribute__((target(ATTR))) static void fwd_reglu_##T(                               \
        const uint16_t *restrict a, const uint16_t *restrict b, uint16_t *restrict y)      \
    {                                                                                      \
        for (int i = 0; i < N; i += 8) {                                                   \
            __m256 g, d;                                                                   \
            reglu_gate(IN(b + i), &g, &d);                                                 \
            OUT(y + i, _mm256_mul_ps(IN(a + i), g));                                       \
        }                                                                                  \
    }                                                                                      \
    __attribute__((target(ATTR))) static void bwd_reglu_##T(                               \
        const uint16_t *restrict a, const uint16_t *restrict b, const uint16_t *restrict dy, \
        uint16_t *restrict da, uint16_t *restrict db)                                      \
    {                                                                                      \
        for (int i = 0; i < N; i += 8) {                                                   \
            __m256 g, d;                                                                   \
            const __m256 yv = IN(dy + i);                                                  \
            reglu_gate(IN(b + i), &g, &d);                                                 \
            OUT(da + i, _mm256_mul_ps(yv, g));                                             \
            OUT(db + i, _mm256_mul_ps(_mm256_mul_ps(yv, IN(a + i)), d));                   \
        }                                                                                  \
    }

REGLU_FNS(f16, "avx2,f16c", f16x8_in, f16x8_out)
REGLU_FNS(bf16, "avx2", bf16x8_in, bf16x8_out)
#endif

bool bk_gated_reglu_half(BkDataType type, bool backward, const uint16_t *restrict a,
                         const uint16_t *restrict b, const uint16_t *restrict dy,
                         uint16_t *restrict o1, uint16_t *restrict o2)
{
#if HAVE_F16C_PATH
    if (!have_avx2_f16c())
        return false;
    const bool bf16 = type == BK_DATA_TYPE_BF16;
    if (backward)
        (bf16 ? bwd_reglu_bf16 : bwd_reglu_f16)(a, b, dy, o1, o2);
    else
        (bf16 ? fwd_reglu_bf16 : fwd_reglu_f16)(a, b, o1);
    return true;
#else
    (void)type, (void)backward, (void)a, (void)b, (void)dy, (void)o1, (void)o2;
    return false;
#endif
}

/* Without AVX2 and F16C: f16 through chunk buffers with the portable
 * conversions, bf16 element by element. */
static void fwd_table_f16_any(const uint16_t *restrict a, const uint16_t *restrict b,
                              uint16_t *restrict y, const float *restrict g)
{
    _Alignas(64) float fa[N];
    bk_gated_load_f16(a, fa);
    for (int i = 0; i < N; i++)
        fa[i] *= g[b[i]];
    bk_gated_store_f16(y, fa);
}

static void bwd_table_f16_any(const uint16_t *restrict a, const uint16_t *restrict b,
                              const uint16_t *restrict dy, uint16_t *restrict da,
                              uint16_t *restrict db, const float *restrict gd)
{
    _Alignas(64) float fa[N], fy[N], o[N];
    bk_gated_load_f16(a, fa);
    bk_gated_load_f16(dy, fy);
    for (int i = 0; i < N; i++)
        o[i] = fy[i] * pair_entry(gd, b[i], 0);
    bk_gated_store_f16(da, o);
    for (int i = 0; i < N; i++)
        o[i] = fy[i] * fa[i] * pair_entry(gd, b[i], 1);
    bk_gated_store_f16(db, o);
}

#if !HAVE_F16C_PATH
#define fwd_table_f16c fwd_table_f16_any
#define bwd_table_f16c bwd_table_f16_any
#define fwd_table_bf16_avx2 fwd_table_bf16_any
#define bwd_table_bf16_avx2 bwd_table_bf16_any
#endif

/* The table chunk functions of type T: the AVX2 ones (FAST) where the CPU
 * has AVX2 and F16C, else the portable ones. */
#define TABLE_FNS(T, FAST)                                                              \
    static void fwd_table_##T(const uint16_t *restrict a, const uint16_t *restrict b,    \
                              const uint16_t *restrict dy, uint16_t *restrict y,         \
                              uint16_t *restrict unused, const float *restrict g,        \
                              const float *restrict d)                                   \
    {                                                                                   \
        (void)dy, (void)unused, (void)d;                                                \
        if (have_avx2_f16c())                                                           \
            fwd_table_##FAST(a, b, y, g);                                               \
        else                                                                            \
            fwd_table_##T##_any(a, b, y, g);                                            \
    }                                                                                   \
    static void bwd_table_##T(const uint16_t *restrict a, const uint16_t *restrict b,    \
                              const uint16_t *restrict dy, uint16_t *restrict da,        \
                              uint16_t *restrict db, const float *restrict gd,           \
                              const float *restrict unused)                              \
    {                                                                                   \
        (void)unused;                                                                   \
        if (have_avx2_f16c())                                                           \
            bwd_table_##FAST(a, b, dy, da, db, gd);                                     \
        else                                                                            \
            bwd_table_##T##_any(a, b, dy, da, db, gd);                                  \
    }
TABLE_FNS(f16, f16c)
TABLE_FNS(bf16, bf16_avx2)

const bk_gated_table_fn bk_gated_table_fns[2][2] = {
    { fwd_table_f16, bwd_table_f16 },
    { fwd_table_bf16, bwd_table_bf16 },
};

/* Every 16-bit pattern through the kind's chunk function with a = dy = 1
 * (exact: 1 * x = x), so the table holds what the chunk path computes. */
void bk_gated_table_fill(int kind, bool backward, BkDataType type, float *table)
{
    _Alignas(64) float one[N], b[N], o1[N], o2[N];
    uint16_t bits[N];
    for (int i = 0; i < N; i++)
        one[i] = 1.0f;
    const struct bk_gated_simd_kind *k = &bk_gated_simd_kinds[kind];
    for (int base = 0; base < BK_GATED_TABLE_SIZE; base += N) {
        for (int i = 0; i < N; i++)
            bits[i] = (uint16_t)(base + i);
        if (type == BK_DATA_TYPE_F16)
            bk_gated_load_f16(bits, b);
        else
            bk_gated_load_bf16(bits, b);
        if (backward) {
            k->bwd(one, b, one, o1, o2, N);
            for (int i = 0; i < N; i++) {
                table[2 * (base + i)] = o1[i];
                table[2 * (base + i) + 1] = o2[i];
            }
        } else {
            k->fwd(one, b, NULL, o1, NULL, N);
            memcpy(table + base, o1, sizeof o1);
        }
    }
}
