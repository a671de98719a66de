/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations on the host. Rows of the normalised problem are
 * processed in chunks: load both halves into a compute-type buffer, apply
 * the kind's array function, store. Loads/stores are tables per data type
 * and the math is one table per kind, generated once for float (f32, f16,
 * bf16) and once for double (f64). That is the baseline path; where the
 * inner dimension is contiguous, f32, f16 and bf16 take the vectorised
 * chunk functions of host_gated_simd.c instead, unless BK_HOST_SIMD=0. */
#include "host_internal.h"
#include "host_gated_simd.h"
#include "../half.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define CHUNK BK_GATED_CHUNK

/* ---- The math, for compute type T with suffix S ----------------------- */
#define SQRT_2_OVER_PI 0.79788456080286535587989211986876
#define INV_SQRT_2 0.70710678118654752440084436210485
#define INV_SQRT_2PI 0.39894228040143267793994605993438
#define GELU_TANH_C 0.044715

/* gate_<kind>(b, &d) returns gate(b) and sets d = gate'(b). */
#define DEFINE_GATES(T, S, EXP, ERFC, FABS)                                          \
    /* exp of a non-positive argument only (no overflow), and no branch to           \
     * mispredict on random signs; the CUDA kernels use the same form. */            \
    static inline T sigmoid_##S(T x)                                                 \
    {                                                                                \
        T e = EXP(-FABS(x));                                                         \
        T r = (T)1 / ((T)1 + e);                                                     \
        return x >= 0 ? r : e * r;                                                   \
    }                                                                                \
    static inline T gate_glu_##S(T b, T *d)                                          \
    {                                                                                \
        T s = sigmoid_##S(b);                                                        \
        *d = s * ((T)1 - s);                                                         \
        return s;                                                                    \
    }                                                                                \
    static inline T gate_reglu_##S(T b, T *d)                                        \
    {                                                                                \
        *d = b > 0 ? (T)1 : (T)0;                                                    \
        return b > 0 ? b : (T)0;                                                     \
    }                                                                                \
    static inline T gate_swiglu_##S(T b, T *d)                                       \
    {                                                                                \
        T s = sigmoid_##S(b);                                                        \
        *d = s * ((T)1 + b * ((T)1 - s));                                            \
        return b * s;                                                                \
    }                                                                                \
    /* Phi(b) as erfc(-b / sqrt 2) / 2: 1 + erf(b / sqrt 2) cancels to 0             \
     * below b = -5.4 (f32), where Phi(b) is still 3e-8. */                          \
    static inline T gate_geglu_##S(T b, T *d)                                        \
    {                                                                                \
        T cdf = (T)0.5 * ERFC(b * (T)-INV_SQRT_2);                                   \
        T pdf = (T)INV_SQRT_2PI * EXP((T)-0.5 * b * b);                              \
        *d = cdf + b * pdf;                                                          \
        return b * cdf;                                                              \
    }                                                                                \
    /* (1 + tanh(u)) / 2 as sigmoid(2u), which does not cancel for u < 0;            \
     * w = 0 where s or 1 - s underflowed, and du may be infinite. */                \
    static inline T gate_geglu_tanh_##S(T b, T *d)                                   \
    {                                                                                \
        T u = (T)SQRT_2_OVER_PI * (b + (T)GELU_TANH_C * b * b * b);                  \
        T s = sigmoid_##S((T)2 * u);                                                 \
        T w = s * ((T)1 - s);                                                        \
        T du = (T)SQRT_2_OVER_PI * ((T)1 + (T)(3 * GELU_TANH_C) * b * b);            \
        *d = s + (w == 0 ? (T)0 : (T)2 * b * w * du);                                \
        return b * s;                                                                \
    }

/* Array functions of one kind: forward y = a*g(b); backward da = dy*g(b),
 * db = dy*a*g'(b). */
#define DEFINE_KIND(T, S, KIND)                                                      \
    static void fwd_##KIND##_##S(const T *a, const T *b, const T *dy, T *y, T *unused, \
                                 int n)                                              \
    {                                                                                \
        (void)dy, (void)unused;                                                      \
        for (int i = 0; i < n; i++) {                                                \
            T d;                                                                     \
            y[i] = a[i] * gate_##KIND##_##S(b[i], &d);                               \
        }                                                                            \
    }                                                                                \
    static void bwd_##KIND##_##S(const T *a, const T *b, const T *dy, T *da, T *db,   \
                                 int n)                                              \
    {                                                                                \
        for (int i = 0; i < n; i++) {                                                \
            T d, g = gate_##KIND##_##S(b[i], &d);                                    \
            da[i] = dy[i] * g;                                                       \
            db[i] = dy[i] * a[i] * d;                                                \
        }                                                                            \
    }

#define DEFINE_ALL_KINDS(T, S)                                                       \
    DEFINE_KIND(T, S, glu)                                                           \
    DEFINE_KIND(T, S, reglu)                                                         \
    DEFINE_KIND(T, S, swiglu)                                                        \
    DEFINE_KIND(T, S, geglu)                                                         \
    DEFINE_KIND(T, S, geglu_tanh)

DEFINE_GATES(float, f, expf, erfcf, fabsf)
DEFINE_GATES(double, d, exp, erfc, fabs)
DEFINE_ALL_KINDS(float, f)
DEFINE_ALL_KINDS(double, d)

typedef void (*math_f)(const float *, const float *, const float *, float *, float *, int);
typedef void (*math_d)(const double *, const double *, const double *, double *, double *, int);

static const struct {
    const char *name;
    math_f fwd_f, bwd_f;
    math_d fwd_d, bwd_d;
} kinds[] = {
#define KIND_ROW(KIND) { #KIND, fwd_##KIND##_f, bwd_##KIND##_f, fwd_##KIND##_d, bwd_##KIND##_d }
    [BK_GATED_ACTIVATION_GLU] = KIND_ROW(glu),
    [BK_GATED_ACTIVATION_REGLU] = KIND_ROW(reglu),
    [BK_GATED_ACTIVATION_SWIGLU] = KIND_ROW(swiglu),
    [BK_GATED_ACTIVATION_GEGLU] = KIND_ROW(geglu),
    [BK_GATED_ACTIVATION_GEGLU_TANH] = KIND_ROW(geglu_tanh),
#undef KIND_ROW
};

/* ---- Loads and stores, strided, per data type ------------------------- */
#define DEFINE_IO(T, S, STORAGE, NAME, TO, FROM)                                     \
    static void load_##NAME(const char *p, int64_t stride, int n, T *out)            \
    {                                                                                \
        for (int i = 0; i < n; i++) {                                                \
            STORAGE v;                                                               \
            memcpy(&v, p + (int64_t)i * stride * (int64_t)sizeof v, sizeof v);       \
            out[i] = TO(v);                                                          \
        }                                                                            \
    }                                                                                \
    static void store_##NAME(char *p, int64_t stride, int n, const T *in)            \
    {                                                                                \
        for (int i = 0; i < n; i++) {                                                \
            STORAGE v = FROM(in[i]);                                                 \
            memcpy(p + (int64_t)i * stride * (int64_t)sizeof v, &v, sizeof v);       \
        }                                                                            \
    }
#define IDENTITY(x) (x)
DEFINE_IO(float, f, float, f32, IDENTITY, IDENTITY)
DEFINE_IO(float, f, uint16_t, f16, bk_f16_to_f32, bk_f32_to_f16)
DEFINE_IO(float, f, uint16_t, bf16, bk_bf16_to_f32, bk_f32_to_bf16)
DEFINE_IO(double, d, double, f64, IDENTITY, IDENTITY)

static const struct {
    const char *name;
    size_t size;
    void (*load_f)(const char *, int64_t, int, float *);
    void (*store_f)(char *, int64_t, int, const float *);
    void (*load_d)(const char *, int64_t, int, double *);
    void (*store_d)(char *, int64_t, int, const double *);
} types[] = {
    [BK_DATA_TYPE_F32] = { "f32", 4, load_f32, store_f32, NULL, NULL },
    [BK_DATA_TYPE_F16] = { "f16", 2, load_f16, store_f16, NULL, NULL },
    [BK_DATA_TYPE_BF16] = { "bf16", 2, load_bf16, store_bf16, NULL, NULL },
    [BK_DATA_TYPE_F64] = { "f64", 8, NULL, NULL, load_f64, store_f64 },
};

/* ---- The row loop, once per compute type ------------------------------ */
/* Element offsets of row r's first element in x, y (or dy) and dx. */
static void row_offsets(const struct bk_gated_problem *p, int64_t row, int64_t *xo, int64_t *yo,
                        int64_t *dxo)
{
    *xo = *yo = *dxo = 0;
    for (int k = (int)p->rank - 2; k >= 0; k--) {
        int64_t i = row % p->extent[k];
        row /= p->extent[k];
        *xo += i * p->x_stride[k];
        *yo += i * p->y_stride[k];
        *dxo += i * p->dx_stride[k];
    }
}

/* ---- The vectorised path ---------------------------------------------- */
/* 1 where the vectorised path may run, read from BK_HOST_SIMD once (0
 * forces the baseline, for testing); -1 before the first plan. */
static atomic_int simd_enabled = -1;

static void read_simd_setting(void)
{
    if (atomic_load_explicit(&simd_enabled, memory_order_relaxed) < 0) {
        const char *v = getenv("BK_HOST_SIMD");
        bk_gated_simd_init();
        atomic_store_explicit(&simd_enabled, !(v && strcmp(v, "0") == 0),
                              memory_order_relaxed);
    }
}

/* Elements the chunk functions compute for a chunk of n: whole steps. */
static int chunk_steps(int n)
{
    return (n + BK_GATED_STEP - 1) / BK_GATED_STEP * BK_GATED_STEP;
}

/* The compute-type chunk of n elements at p: in place for f32 where n is
 * whole steps, else in buf, padded with zeros to whole steps (a half type
 * converted a whole chunk at a time: a short one through a zero-padded
 * copy). */
static const float *load_chunk(BkDataType type, const char *p, int n, float *buf)
{
    const int steps = chunk_steps(n);
    if (type == BK_DATA_TYPE_F32) {
        if (n == steps)
            return (const float *)(const void *)p;
        memcpy(buf, p, (size_t)n * sizeof *buf);
        memset(buf + n, 0, (size_t)(steps - n) * sizeof *buf);
        return buf;
    }
    uint16_t tmp[CHUNK];
    const uint16_t *h = (const uint16_t *)(const void *)p;
    if (n < CHUNK) {
        memcpy(tmp, p, (size_t)n * sizeof tmp[0]);
        memset(tmp + n, 0, (size_t)(CHUNK - n) * sizeof tmp[0]);
        h = tmp;
    }
    if (type == BK_DATA_TYPE_F16)
        bk_gated_load_f16(h, buf);
    else
        bk_gated_load_bf16(h, buf);
    return buf;
}

/* Where the chunk's results go: in place where load_chunk reads f32 in
 * place, else buf. */
static float *out_chunk(BkDataType type, char *p, int n, float *buf)
{
    return type == BK_DATA_TYPE_F32 && n == chunk_steps(n) ? (float *)(void *)p : buf;
}

/* Stores the results in buf to p, unless out_chunk put them there. A
 * short chunk of a half type converts the whole buffer (the conversions
 * work on whole chunks), its tail past the computed steps zeroed first. */
static void store_chunk(BkDataType type, char *p, int n, float *buf)
{
    if ((char *)buf == p)
        return;
    if (type == BK_DATA_TYPE_F32) {
        memcpy(p, buf, (size_t)n * sizeof *buf);
        return;
    }
    uint16_t tmp[CHUNK];
    uint16_t *h = n == CHUNK ? (uint16_t *)(void *)p : tmp;
    if (n < CHUNK)
        memset(buf + chunk_steps(n), 0, (size_t)(CHUNK - chunk_steps(n)) * sizeof *buf);
    if (type == BK_DATA_TYPE_F16)
        bk_gated_store_f16(h, buf);
    else
        bk_gated_store_bf16(h, buf);
    if (n < CHUNK)
        memcpy(p, tmp, (size_t)n * sizeof tmp[0]);
}

/* A full chunk of a half type by the plan's table (plan->impl, see
 * make_tables), or ReGLU's in one pass; false where neither runs. */
static bool half_chunk_fast(const struct bk_gated_problem *p, const float *table, const char *xa,
                        char *yp, char *da, int n)
{
    const int64_t es = 2;
    const uint16_t *a = (const uint16_t *)(const void *)xa;
    const uint16_t *b = (const uint16_t *)(const void *)(xa + p->x_gate_offset * es);
    /* ReGLU needs no table: one pass where the CPU has AVX2 and F16C. */
    const bool half = p->type == BK_DATA_TYPE_F16 || p->type == BK_DATA_TYPE_BF16;
    if (p->kind == BK_GATED_ACTIVATION_REGLU && half && n == CHUNK)
        return bk_gated_reglu_half(p->type, p->backward, a, b,
                                   (const uint16_t *)(const void *)yp,
                                   (uint16_t *)(void *)(p->backward ? da : yp),
                                   p->backward ? (uint16_t *)(void *)(da + p->dx_gate_offset * es)
                                               : NULL);
    if (!table || n != CHUNK)
        return false;
    const bk_gated_table_fn fn = bk_gated_table_fns[p->type == BK_DATA_TYPE_BF16][p->backward];
    if (p->backward)
        fn(a, b, (const uint16_t *)(const void *)yp, (uint16_t *)(void *)da,
           (uint16_t *)(void *)(da + p->dx_gate_offset * es), table, NULL);
    else
        fn(a, b, NULL, (uint16_t *)(void *)yp, NULL, table, NULL);
    return true;
}

/* Rows [begin, end) of a problem of f32, f16 or bf16 whose inner dimension
 * is contiguous in every operand. */
static void rows_simd(const struct bk_gated_problem *p, const struct bk_run_args *args,
                      const float *table, int64_t begin, int64_t end)
{
    const int64_t es = (int64_t)types[p->type].size;
    const BkDataType t = p->type;
    const char *x = (const char *)(uintptr_t)args->binding[0];
    char *y = (char *)(uintptr_t)args->binding[1];
    char *dx = p->backward ? (char *)(uintptr_t)args->binding[2] : NULL;
    const int64_t inner = p->extent[p->rank - 1];
    const bk_gated_simd_fn fn = p->backward ? bk_gated_simd_kinds[p->kind].bwd
                                            : bk_gated_simd_kinds[p->kind].fwd;
    _Alignas(64) float a[CHUNK], b[CHUNK], dy[CHUNK], o1[CHUNK], o2[CHUNK];
    for (int64_t row = begin; row < end; row++) {
        int64_t xo, yo, dxo;
        row_offsets(p, row, &xo, &yo, &dxo);
        for (int64_t j = 0; j < inner; j += CHUNK) {
            int n = (int)(inner - j < CHUNK ? inner - j : CHUNK);
            const char *xa = x + (xo + j) * es;
            char *yp = y + (yo + j) * es;
            if (half_chunk_fast(p, table, xa, yp, p->backward ? dx + (dxo + j) * es : NULL, n))
                continue;
            const float *pa = load_chunk(t, xa, n, a);
            const float *pb = load_chunk(t, xa + p->x_gate_offset * es, n, b);
            if (p->backward) {
                const float *pdy = load_chunk(t, yp, n, dy);
                char *da = dx + (dxo + j) * es, *db = da + p->dx_gate_offset * es;
                float *po1 = out_chunk(t, da, n, o1), *po2 = out_chunk(t, db, n, o2);
                fn(pa, pb, pdy, po1, po2, chunk_steps(n));
                store_chunk(t, da, n, po1);
                store_chunk(t, db, n, po2);
            } else {
                float *po1 = out_chunk(t, yp, n, o1);
                fn(pa, pb, NULL, po1, o2, chunk_steps(n));
                store_chunk(t, yp, n, po1);
            }
        }
    }
}

/* Whether p takes the vectorised path. */
static bool use_simd(const struct bk_gated_problem *p)
{
    const int last = (int)p->rank - 1;
    return p->type != BK_DATA_TYPE_F64 && p->x_stride[last] == 1 && p->y_stride[last] == 1 &&
           (!p->backward || p->dx_stride[last] == 1) &&
           atomic_load_explicit(&simd_enabled, memory_order_relaxed) == 1;
}

/* Runs below this many output elements stay on the calling thread: even an
 * `omp parallel ... if (false)` region costs libgomp a team set-up (about
 * half a microsecond), more than a small run's work. */
#define PARALLEL_MIN_ELEMENTS 65536

#define DEFINE_RUN(T, S)                                                             \
    /* Rows [begin, end) of the problem. */                                         \
    static void rows_##S(const struct bk_gated_problem *p, const struct bk_run_args *args, \
                         const float *table, int64_t begin, int64_t end)             \
    {                                                                                \
        if (use_simd(p)) {                                                           \
            rows_simd(p, args, table, begin, end);                                   \
            return;                                                                  \
        }                                                                            \
        const size_t es = types[p->type].size;                                       \
        const char *x = (const char *)(uintptr_t)args->binding[0];                   \
        char *y = (char *)(uintptr_t)args->binding[1];                               \
        char *dx = p->backward ? (char *)(uintptr_t)args->binding[2] : NULL;         \
        const int last = (int)p->rank - 1;                                           \
        const int64_t inner = p->extent[last];                                       \
        const int64_t xs = p->x_stride[last], ys = p->y_stride[last];                \
        const int64_t dxs = p->dx_stride[last];                                      \
        const math_##S fn = p->backward ? kinds[p->kind].bwd_##S : kinds[p->kind].fwd_##S; \
        void (*const load)(const char *, int64_t, int, T *) = types[p->type].load_##S; \
        void (*const store)(char *, int64_t, int, const T *) = types[p->type].store_##S; \
        for (int64_t row = begin; row < end; row++) {                                \
            T a[CHUNK], b[CHUNK], dy[CHUNK], o1[CHUNK], o2[CHUNK];                    \
            int64_t xo, yo, dxo;                                                     \
            row_offsets(p, row, &xo, &yo, &dxo);                                     \
            for (int64_t j = 0; j < inner; j += CHUNK) {                             \
                int n = (int)(inner - j < CHUNK ? inner - j : CHUNK);                \
                const char *xa = x + (xo + j * xs) * (int64_t)es;                    \
                load(xa, xs, n, a);                                                  \
                load(xa + p->x_gate_offset * (int64_t)es, xs, n, b);                 \
                char *yp = y + (yo + j * ys) * (int64_t)es;                          \
                if (p->backward) {                                                   \
                    load(yp, ys, n, dy);                                             \
                    fn(a, b, dy, o1, o2, n);                                         \
                    char *da = dx + (dxo + j * dxs) * (int64_t)es;                   \
                    store(da, dxs, n, o1);                                           \
                    store(da + p->dx_gate_offset * (int64_t)es, dxs, n, o2);         \
                } else {                                                             \
                    fn(a, b, NULL, o1, NULL, n);                                     \
                    store(yp, ys, n, o1);                                            \
                }                                                                    \
            }                                                                        \
        }                                                                            \
    }                                                                                \
    static void run_##S(const struct bk_gated_problem *p, const struct bk_run_args *args, \
                        const float *table)                                          \
    {                                                                                \
        const int64_t inner = p->extent[p->rank - 1], rows = p->count / inner;       \
        if (p->count < PARALLEL_MIN_ELEMENTS) {                                      \
            rows_##S(p, args, table, 0, rows);                                       \
            return;                                                                  \
        }                                                                            \
        /* Blocks of whole rows, about CHUNK elements each, shared out statically. */ \
        const int64_t per = inner >= CHUNK ? 1 : CHUNK / inner;                      \
        const int64_t blocks = (rows + per - 1) / per;                               \
        _Pragma("omp parallel for schedule(static)")                                 \
        for (int64_t blk = 0; blk < blocks; blk++) {                                 \
            const int64_t stop = (blk + 1) * per;                                    \
            rows_##S(p, args, table, blk * per, stop < rows ? stop : rows);          \
        }                                                                            \
    }
DEFINE_RUN(float, f)
DEFINE_RUN(double, d)

static BkResult gated_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_gated_problem *p = &plan->problem.gated;
    (void)queue;
    if (p->count == 0)
        return BK_SUCCESS;
    if (p->type == BK_DATA_TYPE_F64)
        run_d(p, args, NULL);
    else
        run_f(p, args, plan->impl);
    return BK_SUCCESS;
}

/* Half types with a transcendental gate, vectorised, and enough elements
 * that the table (65536 chunk-function evaluations, 256 or 512 KiB) pays:
 * it replaces the polynomials by one gather per output. Without memory for
 * it the plan computes instead (the same bits). */
static void make_tables(BkPlan plan)
{
    const struct bk_gated_problem *p = &plan->problem.gated;
    if ((p->type != BK_DATA_TYPE_F16 && p->type != BK_DATA_TYPE_BF16) || !use_simd(p) ||
        p->kind == BK_GATED_ACTIVATION_REGLU || p->count < PARALLEL_MIN_ELEMENTS)
        return;
    /* forward: gate(b); backward: gate(b) and gate'(b) side by side */
    const size_t size = (p->backward ? 2 : 1) * BK_GATED_TABLE_SIZE * sizeof(float);
    float *table = bk_alloc(&plan->alloc, size);
    if (!table)
        return;
    bk_gated_table_fill((int)p->kind, p->backward, p->type, table);
    plan->impl = table;
}

BkResult bk_host_gated_select(BkPlan plan)
{
    const struct bk_gated_problem *p = &plan->problem.gated;
    plan->launch = gated_launch;
    read_simd_setting();
    make_tables(plan);
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_gated_%s_%s_%s",
             kinds[p->kind].name, p->backward ? "bwd" : "fwd", types[p->type].name);
    return BK_SUCCESS;
}
