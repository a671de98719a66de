/* SPDX-License-Identifier: Apache-2.0 */
/* Micro-kernels of the host GEMM engine (see host_gemm_engine.h).
 *
 * Written with GCC/Clang vector extensions: plain C loops over an
 * accumulator array end up on the stack at -O2, vector variables stay in
 * registers. One macro makes every variant: the generic one uses 16-byte
 * vectors (SSE2, NEON, ...), the AVX one 32-byte vectors, chosen at run
 * time. The product and the sum are separate roundings (the library is
 * built with ISO C contraction rules: no fused multiply-add), so every
 * variant gives the same bits. */
#include "host_gemm_engine.h"

#include <float.h>
#include <string.h>

#define MR 6
#define NR_F32 16
#define NR_F64 8

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_AVX_VARIANT 1
#define AVX_TARGET __attribute__((target("avx")))
#endif

/* NAME = x, a's element as the multiplier of a vector of b (type V, of
 * T): the scalar itself, or where floats are evaluated in a wider type
 * (FLT_EVAL_METHOD 1 on s390x, 2 on i386's x87, in ISO C mode) the scalar
 * would take that type in a vector expression, which GCC will not narrow:
 * there a vector with it in every lane. */
#if FLT_EVAL_METHOD == 0
#define MULTIPLIER(V, T, NAME, x) const T NAME = (x)
#else
#define MULTIPLIER(V, T, NAME, x)                                                         \
    V NAME;                                                                               \
    for (unsigned lane_ = 0; lane_ < sizeof NAME / sizeof NAME[0]; lane_++)               \
        NAME[lane_] = (x)
#endif

/* c[MR x NR] (+)= a[kc][MR] @ b[kc][NR], NV vectors of VBYTES per row of
 * a column strip, strips of NV * VBYTES / sizeof(T) columns. */
#define DEFINE_KERNEL(NAME, T, NR, VBYTES, ATTR)                                          \
    typedef T NAME##_vec __attribute__((vector_size(VBYTES)));                           \
    ATTR static void NAME(int64_t kc, const void *a_, const void *b_, void *c_, int64_t ldc, \
                          int first)                                                      \
    {                                                                                     \
        enum { VW = VBYTES / sizeof(T), NV = 2, STRIP = VW * NV };                        \
        const T *restrict a = a_;                                                         \
        const T *restrict b = b_;                                                         \
        T *restrict c = c_;                                                               \
        for (int js = 0; js < NR; js += STRIP) {                                          \
            NAME##_vec acc[MR][NV];                                                       \
            _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++)                          \
                _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++) {                    \
                    if (first)                                                            \
                        acc[i][v] = (NAME##_vec){ 0 };                                    \
                    else                                                                  \
                        memcpy(&acc[i][v], c + i * ldc + js + v * VW, sizeof acc[i][v]);  \
                }                                                                         \
            for (int64_t p = 0; p < kc; p++) {                                            \
                NAME##_vec bv[NV];                                                        \
                _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)                      \
                    memcpy(&bv[v], b + p * NR + js + v * VW, sizeof bv[v]);               \
                _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++) {                    \
                    MULTIPLIER(NAME##_vec, T, ai, a[p * MR + i]);                         \
                    _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)                  \
                        acc[i][v] += ai * bv[v];                                          \
                }                                                                         \
            }                                                                             \
            _Pragma("GCC unroll 8") for (int i = 0; i < MR; i++)                          \
                _Pragma("GCC unroll 8") for (int v = 0; v < NV; v++)                      \
                    memcpy(c + i * ldc + js + v * VW, &acc[i][v], sizeof acc[i][v]);      \
        }                                                                                 \
    }

DEFINE_KERNEL(kernel_f32_generic, float, NR_F32, 16, )
DEFINE_KERNEL(kernel_f64_generic, double, NR_F64, 16, )
#ifdef HAVE_AVX_VARIANT
DEFINE_KERNEL(kernel_f32_avx, float, NR_F32, 32, AVX_TARGET)
DEFINE_KERNEL(kernel_f64_avx, double, NR_F64, 32, AVX_TARGET)
#endif

/* Cache blocks: a B micro-panel (kc x nr) stays in L1, the A block (mc x
 * kc) in L2; the accumulator block is mc x nc. kc is a multiple of 8, so
 * no 2:4 group straddles two k blocks. */
#define MC 96
#define NC_F32 256
#define NC_F64 128
#define KC 256
_Static_assert(MC % MR == 0 && NC_F32 % NR_F32 == 0 && NC_F64 % NR_F64 == 0 && KC % 8 == 0,
               "blocks are whole micro-tiles and 2:4 groups");
_Static_assert(MC <= HOST_GEMM_MAX_BLOCK && NC_F32 <= HOST_GEMM_MAX_BLOCK &&
               NC_F64 <= HOST_GEMM_MAX_BLOCK, "the epilogue's row scratch holds a block");
static const struct host_gemm_blocking blockings[HOST_GEMM_COMPUTE_COUNT] = {
    [HOST_GEMM_F32] = { .mr = MR, .nr = NR_F32, .mc = MC, .nc = NC_F32, .kc = KC, .elem = 4 },
    [HOST_GEMM_F64] = { .mr = MR, .nr = NR_F64, .mc = MC, .nc = NC_F64, .kc = KC, .elem = 8 },
};

static const struct {
    const char *isa;
    host_gemm_kernel_fn kernel[HOST_GEMM_COMPUTE_COUNT];
} variants[] = {
#ifdef HAVE_AVX_VARIANT
    { "avx", { kernel_f32_avx, kernel_f64_avx } },
#endif
    { "generic", { kernel_f32_generic, kernel_f64_generic } },
};

static unsigned variant(void)
{
#ifdef HAVE_AVX_VARIANT
    if (__builtin_cpu_supports("avx"))
        return 0;
    return 1;
#else
    return 0;
#endif
}

const struct host_gemm_blocking *host_gemm_blocking(enum host_gemm_compute compute)
{
    return &blockings[compute];
}

host_gemm_kernel_fn host_gemm_kernel(enum host_gemm_compute compute)
{
    return variants[variant()].kernel[compute];
}

const char *host_gemm_isa(void)
{
    return variants[variant()].isa;
}
