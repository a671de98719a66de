/* The vectorised chunk functions of the host's gated activations
 * (host_gated_simd.c). Each works on BK_GATED_CHUNK contiguous elements,
 * read and written in place (the caller pads short chunks); the operands
 * are aligned to their element size, and outputs do not overlap inputs. */
#ifndef BK_HOST_GATED_SIMD_H
#define BK_HOST_GATED_SIMD_H

#include "../bk_internal.h"

#define BK_GATED_CHUNK 256
#define BK_GATED_SIMD_KINDS 5   /* GLU, ReGLU, SwiGLU, GeGLU, GeGLU-tanh, in enum order */

typedef void (*bk_gated_simd_fn)(const float *restrict a, const float *restrict b,
                                 const float *restrict dy, float *restrict o1,
                                 float *restrict o2);
struct bk_gated_simd_kind {
    bk_gated_simd_fn fwd, bwd;
};
BK_HIDDEN extern const struct bk_gated_simd_kind bk_gated_simd_kinds[BK_GATED_SIMD_KINDS];

/* Picks the f16 conversions for this CPU; call before the first chunk. */
BK_HIDDEN void bk_gated_simd_init(void);
BK_HIDDEN void bk_gated_load_f16(const uint16_t *restrict src, float *restrict out);
BK_HIDDEN void bk_gated_store_f16(uint16_t *restrict dst, const float *restrict in);
BK_HIDDEN void bk_gated_load_bf16(const uint16_t *restrict src, float *restrict out);
BK_HIDDEN void bk_gated_store_bf16(uint16_t *restrict dst, const float *restrict in);

#endif /* BK_HOST_GATED_SIMD_H */
