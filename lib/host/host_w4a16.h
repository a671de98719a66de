/* What the host's W4A16 ops share (host_w4a16.c: the conversions and the
 * GPTQ repack; host_w4a16_gemm.c: the GEMM): the 16-bit float type of the
 * scales (and of A and C), and the addressing of the operands. */
#ifndef BK_HOST_W4A16_H
#define BK_HOST_W4A16_H

#include "host_gemm_engine.h"
#include "../half.h"
#include "../w4a16_layout.h"

/* F16 or BF16 to and from float, rounding to nearest even (lib/half.h). */
struct host_w4a16_half {
    float (*to_f32)(uint16_t);
    uint16_t (*from_f32)(float);
};

static inline struct host_w4a16_half host_w4a16_half(BkDataType type)
{
    if (type == BK_DATA_TYPE_BF16)
        return (struct host_w4a16_half){ bk_bf16_to_f32, bk_f32_to_bf16 };
    return (struct host_w4a16_half){ bk_f16_to_f32, bk_f32_to_f16 };
}

/* Element (i, j) of a strided matrix of es-byte elements. */
static inline char *host_w4a16_at(char *base, const struct bk_matrix *m, int64_t i, int64_t j,
                                  size_t es)
{
    return base + (i * m->row_stride + j * m->col_stride) * (int64_t)es;
}

#endif /* BK_HOST_W4A16_H */
