/* SPDX-License-Identifier: Apache-2.0 */
/* Type conversion for the host GEMM engine: dense panel packers (strided
 * matrix of a storage type -> panels in the compute type) and the strided
 * row loads and stores of the epilogue. One macro per job, one row per
 * storage type in the tables. */
#include "host_gemm_engine.h"
#include "host_f16c.h"
#include "host_half_convert.h"

#include <string.h>

#define IDENTITY(x) (x)

/* The half types convert by host_half_convert.h's branch-free functions. */
/* Panel layout in host_gemm_engine.h. The loop order follows the smaller
 * stride, so the source is read along its contiguous direction. */
#define DEFINE_PACK(NAME, T, STORAGE, TO)                                                 \
    static void pack_##NAME(const struct host_gemm_operand *op, int64_t b, int64_t r0,     \
                            int64_t rows, int64_t p0, int64_t kc, int R, void *dst_)       \
    {                                                                                      \
        T *dst = dst_;                                                                     \
        const STORAGE *base = (const STORAGE *)(const void *)op->base + b * op->batch_stride; \
        const int64_t rs = op->row_stride, cs = op->col_stride;                           \
        for (int64_t rb = 0; rb < rows; rb += R) {                                         \
            T *panel = dst + rb * kc;                                                      \
            int64_t live = op->rows - (r0 + rb);                                           \
            const int nr = live <= 0 ? 0 : live < R ? (int)live : R;                       \
            const STORAGE *src = base + (r0 + rb) * rs + p0 * cs;                          \
            if (cs <= rs) {                                                                \
                for (int r = 0; r < nr; r++)                                               \
                    for (int64_t p = 0; p < kc; p++)                                       \
                        panel[p * R + r] = TO(src[r * rs + p * cs]);                       \
            } else {                                                                       \
                for (int64_t p = 0; p < kc; p++)                                           \
                    for (int r = 0; r < nr; r++)                                           \
                        panel[p * R + r] = TO(src[r * rs + p * cs]);                       \
            }                                                                              \
            if (nr < R)                                                                    \
                for (int64_t p = 0; p < kc; p++)                                           \
                    for (int r = nr; r < R; r++)                                           \
                        panel[p * R + r] = 0;                                              \
        }                                                                                  \
    }

/* Strided row segments to and from the compute type; stores round to
 * nearest even (lib/half.h). Contiguous rows have their own loops, which
 * the compiler vectorises, in clones for the wider vector units (the BLAS
 * path converts whole panels and its output by them); f16's take F16C
 * first where the CPU has it (LOAD_FAST and STORE_FAST: true when done). */
#define DEFINE_ROW_IO(NAME, T, STORAGE, TO, FROM, LOAD_FAST, STORE_FAST)                   \
    HOST_CLONES static void row_load_##NAME(const char *p, int64_t stride, int64_t n,      \
                                            void *out_)                                    \
    {                                                                                      \
        const STORAGE *src = (const STORAGE *)(const void *)p;                             \
        T *out = out_;                                                                     \
        if (stride == 1) {                                                                 \
            if (LOAD_FAST(src, n, out))                                                    \
                return;                                                                    \
            HOST_SIMD for (int64_t i = 0; i < n; i++)                                           \
                out[i] = TO(src[i]);                                                       \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = 0; i < n; i++)                                                    \
            out[i] = TO(src[i * stride]);                                                  \
    }                                                                                      \
    HOST_CLONES static void row_store_##NAME(char *p, int64_t stride, int64_t n,           \
                                             const void *in_)                              \
    {                                                                                      \
        STORAGE *dst = (STORAGE *)(void *)p;                                               \
        const T *in = in_;                                                                 \
        if (stride == 1) {                                                                 \
            if (STORE_FAST(dst, n, in))                                                    \
                return;                                                                    \
            HOST_SIMD for (int64_t i = 0; i < n; i++)                                           \
                dst[i] = FROM(in[i]);                                                      \
            return;                                                                        \
        }                                                                                  \
        for (int64_t i = 0; i < n; i++)                                                    \
            dst[i * stride] = FROM(in[i]);                                                 \
    }

#define DEFINE_TYPE(NAME, T, STORAGE, TO, FROM, LOAD_FAST, STORE_FAST)                     \
    DEFINE_PACK(NAME, T, STORAGE, TO)                                                      \
    DEFINE_ROW_IO(NAME, T, STORAGE, TO, FROM, LOAD_FAST, STORE_FAST)

#define NO_FAST(row, n, other) ((void)(row), (void)(n), (void)(other), false)

DEFINE_TYPE(f32, float, float, IDENTITY, IDENTITY, NO_FAST, NO_FAST)
DEFINE_TYPE(f16, float, uint16_t, host_f16_to_f32, host_f32_to_f16, host_f16c_load,
            host_f16c_store)
DEFINE_TYPE(bf16, float, uint16_t, host_bf16_to_f32, host_f32_to_bf16, NO_FAST, NO_FAST)
DEFINE_TYPE(f64, double, double, IDENTITY, IDENTITY, NO_FAST, NO_FAST)

static const struct {
    const char *name;
    host_gemm_pack_fn pack;
    host_gemm_load_fn load;
    host_gemm_store_fn store;
} types[] = {
#define TYPE_ROW(NAME) { #NAME, pack_##NAME, row_load_##NAME, row_store_##NAME }
    [BK_DATA_TYPE_F32] = TYPE_ROW(f32),
    [BK_DATA_TYPE_F16] = TYPE_ROW(f16),
    [BK_DATA_TYPE_BF16] = TYPE_ROW(bf16),
    [BK_DATA_TYPE_F64] = TYPE_ROW(f64),
#undef TYPE_ROW
};

static bool known(BkDataType type)
{
    return (unsigned)type < sizeof types / sizeof types[0] && types[type].pack;
}

host_gemm_pack_fn host_gemm_dense_packer(BkDataType type)
{
    return known(type) ? types[type].pack : NULL;
}

host_gemm_load_fn host_gemm_row_loader(BkDataType type)
{
    return known(type) ? types[type].load : NULL;
}

host_gemm_store_fn host_gemm_row_storer(BkDataType type)
{
    return known(type) ? types[type].store : NULL;
}

const char *host_gemm_type_name(BkDataType type)
{
    return known(type) ? types[type].name : "?";
}
