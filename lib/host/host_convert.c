/* SPDX-License-Identifier: Apache-2.0 */
/* Type conversion on the host. Rows of the normalised problem go through
 * a buffer of CHUNK elements: a strided load widens them exactly, a
 * strided store rounds them once (kernels/shared/convert_round.h). Pairs of F32, F16
 * and BF16 widen to float (every value of each is exact there) and round
 * with lib/half.h, the same bits as through F64 at a fraction of the
 * work; every other pair goes through double. The same type in and out
 * copies the bits. */
#include "host_internal.h"
#include "convert_round.h"
#include "../half.h"

#include <stdio.h>
#include <string.h>

#define CHUNK 256

/* ---- Loads and stores, strided, per data type ------------------------- */
#define DEFINE_LOAD(T, S, STORAGE, NAME, TO)                                         \
    static void load_##NAME##_##S(const char *p, int64_t stride, int n, T *out)      \
    {                                                                                \
        for (int i = 0; i < n; i++) {                                                \
            STORAGE v;                                                               \
            memcpy(&v, p + (int64_t)i * stride * (int64_t)sizeof v, sizeof v);       \
            out[i] = (T)TO(v);                                                       \
        }                                                                            \
    }
#define DEFINE_STORE(T, S, STORAGE, NAME, FROM)                                      \
    static void store_##NAME##_##S(char *p, int64_t stride, int n, const T *in)      \
    {                                                                                \
        for (int i = 0; i < n; i++) {                                                \
            STORAGE v = (STORAGE)FROM(in[i]);                                        \
            memcpy(p + (int64_t)i * stride * (int64_t)sizeof v, &v, sizeof v);       \
        }                                                                            \
    }
#define IDENTITY(x) (x)
#define TO_I32(x) bk_convert_f64_to_integer((x), -2147483648.0, 2147483647.0)
#define TO_U32(x) bk_convert_f64_to_integer((x), 0.0, 4294967295.0)
#define TO_U16(x) bk_convert_f64_to_integer((x), 0.0, 65535.0)
#define TO_I8(x) bk_convert_f64_to_integer((x), -128.0, 127.0)
#define TO_U8(x) bk_convert_f64_to_integer((x), 0.0, 255.0)

/* float: the F32, F16 and BF16 pairs */
DEFINE_LOAD(float, f, float, f32, IDENTITY)
DEFINE_LOAD(float, f, uint16_t, f16, bk_f16_to_f32)
DEFINE_LOAD(float, f, uint16_t, bf16, bk_bf16_to_f32)
DEFINE_STORE(float, f, float, f32, IDENTITY)
DEFINE_STORE(float, f, uint16_t, f16, bk_f32_to_f16)
DEFINE_STORE(float, f, uint16_t, bf16, bk_f32_to_bf16)
/* double: everything else; the float types widen by their bits, so a NaN
 * keeps its payload as on the device */
static inline double widen(float f)
{
    const uint64_t b = bk_convert_f32_bits_to_f64_bits(bk_f32_bits(f));
    double d;
    memcpy(&d, &b, sizeof d);
    return d;
}
#define WIDEN_F16(h) widen(bk_f16_to_f32(h))
#define WIDEN_BF16(h) widen(bk_bf16_to_f32(h))
DEFINE_LOAD(double, d, float, f32, widen)
DEFINE_LOAD(double, d, uint16_t, f16, WIDEN_F16)
DEFINE_LOAD(double, d, uint16_t, bf16, WIDEN_BF16)
DEFINE_LOAD(double, d, double, f64, IDENTITY)
DEFINE_LOAD(double, d, int32_t, i32, IDENTITY)
DEFINE_LOAD(double, d, uint32_t, u32, IDENTITY)
DEFINE_LOAD(double, d, uint16_t, u16, IDENTITY)
DEFINE_LOAD(double, d, int8_t, i8, IDENTITY)
DEFINE_LOAD(double, d, uint8_t, u8, IDENTITY)
DEFINE_STORE(double, d, float, f32, bk_convert_f64_to_f32)
DEFINE_STORE(double, d, uint16_t, f16, bk_convert_f64_to_f16)
DEFINE_STORE(double, d, uint16_t, bf16, bk_convert_f64_to_bf16)
DEFINE_STORE(double, d, double, f64, IDENTITY)
DEFINE_STORE(double, d, int32_t, i32, TO_I32)
DEFINE_STORE(double, d, uint32_t, u32, TO_U32)
DEFINE_STORE(double, d, uint16_t, u16, TO_U16)
DEFINE_STORE(double, d, int8_t, i8, TO_I8)
DEFINE_STORE(double, d, uint8_t, u8, TO_U8)

typedef void (*load_f_fn)(const char *, int64_t, int, float *);
typedef void (*store_f_fn)(char *, int64_t, int, const float *);
typedef void (*load_d_fn)(const char *, int64_t, int, double *);
typedef void (*store_d_fn)(char *, int64_t, int, const double *);

static const struct {
    const char *name;
    size_t size;
    load_f_fn load_f;      /* NULL: not exact in float */
    store_f_fn store_f;
    load_d_fn load_d;
    store_d_fn store_d;
} types[] = {
#define ROW(T, NAME, SIZE) [BK_DATA_TYPE_##T] = { #NAME, SIZE, NULL, NULL, load_##NAME##_d, store_##NAME##_d }
#define ROW_F(T, NAME, SIZE) \
    [BK_DATA_TYPE_##T] = { #NAME, SIZE, load_##NAME##_f, store_##NAME##_f, load_##NAME##_d, store_##NAME##_d }
    ROW_F(F32, f32, 4), ROW_F(F16, f16, 2), ROW_F(BF16, bf16, 2), ROW(F64, f64, 8),
    ROW(I32, i32, 4), ROW(U32, u32, 4), ROW(U16, u16, 2), ROW(I8, i8, 1), ROW(U8, u8, 1),
#undef ROW
#undef ROW_F
};

/* ---- The row loop ----------------------------------------------------- */
/* Element offsets of row r's first element in the input and the output. */
static void row_offsets(const struct bk_convert_problem *p, int64_t row, int64_t *io, int64_t *oo)
{
    *io = *oo = 0;
    for (int k = (int)p->rank - 2; k >= 0; k--) {
        const int64_t i = row % p->extent[k];
        row /= p->extent[k];
        *io += i * p->in_stride[k];
        *oo += i * p->out_stride[k];
    }
}

/* n elements of size es from in (stride is) to out (stride os), bits kept. */
static void copy_bits(const char *in, int64_t is, char *out, int64_t os, int64_t n, size_t es)
{
    if (is == 1 && os == 1) {
        memcpy(out, in, (size_t)n * es);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        memcpy(out + i * os * (int64_t)es, in + i * is * (int64_t)es, es);
}

static void rows(const struct bk_convert_problem *p, const struct bk_run_args *args,
                 int64_t begin, int64_t end)
{
    const size_t ies = types[p->in_type].size, oes = types[p->out_type].size;
    const char *in = (const char *)(uintptr_t)args->binding[BK_CONVERT_BINDING_INPUT];
    char *out = (char *)(uintptr_t)args->binding[BK_CONVERT_BINDING_OUTPUT];
    const int last = (int)p->rank - 1;
    const int64_t inner = p->extent[last], is = p->in_stride[last], os = p->out_stride[last];
    const load_f_fn lf = types[p->in_type].load_f;
    const store_f_fn sf = types[p->out_type].store_f;
    const bool via_float = lf && sf;
    for (int64_t row = begin; row < end; row++) {
        int64_t io, oo;
        row_offsets(p, row, &io, &oo);
        const char *ip = in + io * (int64_t)ies;
        char *op = out + oo * (int64_t)oes;
        if (p->in_type == p->out_type) {
            copy_bits(ip, is, op, os, inner, ies);
            continue;
        }
        for (int64_t j = 0; j < inner; j += CHUNK) {
            const int n = (int)(inner - j < CHUNK ? inner - j : CHUNK);
            const char *a = ip + j * is * (int64_t)ies;
            char *b = op + j * os * (int64_t)oes;
            if (via_float) {
                float buf[CHUNK];
                lf(a, is, n, buf);
                sf(b, os, n, buf);
            } else {
                double buf[CHUNK];
                types[p->in_type].load_d(a, is, n, buf);
                types[p->out_type].store_d(b, os, n, buf);
            }
        }
    }
}

/* Runs below this many elements stay on the calling thread (an OpenMP
 * team costs more than a small run's work). */
#define PARALLEL_MIN_ELEMENTS 65536

static BkResult convert_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_convert_problem *p = &plan->problem.convert;
    (void)queue;
    if (p->count == 0)
        return BK_SUCCESS;
    const int64_t inner = p->extent[p->rank - 1], nrows = p->count / inner;
    if (p->count < PARALLEL_MIN_ELEMENTS) {
        rows(p, args, 0, nrows);
        return BK_SUCCESS;
    }
    /* Blocks of whole rows, about CHUNK elements or more each. */
    const int64_t per = inner >= CHUNK ? 1 : CHUNK / inner;
    const int64_t blocks = (nrows + per - 1) / per;
#pragma omp parallel for schedule(static)
    for (int64_t blk = 0; blk < blocks; blk++) {
        const int64_t stop = (blk + 1) * per;
        rows(p, args, blk * per, stop < nrows ? stop : nrows);
    }
    return BK_SUCCESS;
}

BkResult bk_host_convert_select(BkPlan plan)
{
    const struct bk_convert_problem *p = &plan->problem.convert;
    plan->launch = convert_launch;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_convert_%s_%s",
             types[p->in_type].name, types[p->out_type].name);
    return BK_SUCCESS;
}
