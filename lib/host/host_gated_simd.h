/* SPDX-License-Identifier: Apache-2.0 */
/* The vectorised chunk functions of the host's gated activations
 * (host_gated_simd.c). Each works on n contiguous elements, n a multiple
 * of BK_GATED_STEP up to BK_GATED_CHUNK (the caller pads a short chunk to
 * the next step, so a small run computes no more than it needs), read and
 * written in place; the operands are aligned to their element size, and
 * outputs do not overlap inputs. */
#ifndef BK_HOST_GATED_SIMD_H
#define BK_HOST_GATED_SIMD_H

#include "../bk_internal.h"

#define BK_GATED_CHUNK 256
#define BK_GATED_STEP 16        /* an AVX-512 vector of floats */
#define BK_GATED_SIMD_KINDS 5   /* GLU, ReGLU, SwiGLU, GeGLU, GeGLU-tanh, in enum order */

typedef void (*bk_gated_simd_fn)(const float *restrict a, const float *restrict b,
                                 const float *restrict dy, float *restrict o1,
                                 float *restrict o2, int n);
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

/* F16 and BF16 by table: the gate of every 16-bit input (and, for the
 * backward, its derivative) as the chunk functions above compute it, so
 * that looking it up gives the same bits. Forward: table[b] = gate(b);
 * backward: table[2 b] = gate(b), table[2 b + 1] = gate'(b) (one cache
 * line holds both). A table chunk function reads and writes the 16-bit
 * operands in place: forward y = a * gate(b); backward da = dy * gate(b),
 * db = dy * a * gate'(b). */
#define BK_GATED_TABLE_SIZE 65536
typedef void (*bk_gated_table_fn)(const uint16_t *restrict a, const uint16_t *restrict b,
                                  const uint16_t *restrict dy, uint16_t *restrict o1,
                                  uint16_t *restrict o2, const float *restrict table,
                                  const float *restrict unused);
/* [0: f16, 1: bf16][0: forward, 1: backward] */
BK_HIDDEN extern const bk_gated_table_fn bk_gated_table_fns[2][2];
/* ReGLU on a chunk of f16 or bf16 in one pass (forward o1 = y; backward
 * o1 = da, o2 = db), the same bits as the chunk path; false (nothing done)
 * where the CPU lacks AVX2 and F16C. */
BK_HIDDEN bool bk_gated_reglu_half(BkDataType type, bool backward, const uint16_t *restrict a,
                                   const uint16_t *restrict b, const uint16_t *restrict dy,
                                   uint16_t *restrict o1, uint16_t *restrict o2);
/* Fills table (BK_GATED_TABLE_SIZE floats, twice that for the backward)
 * for kind and a 16-bit type. */
BK_HIDDEN void bk_gated_table_fill(int kind, bool backward, BkDataType type, float *table);

#endif /* BK_HOST_GATED_SIMD_H */
