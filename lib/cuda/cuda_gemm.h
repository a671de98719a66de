/* SPDX-License-Identifier: Apache-2.0 */
/* The dense GEMM plan on CUDA, shared by its files: how a GEMM is laid out
 * for cuBLASLt (cuda_gemm_mapping.c) and the plan (cuda_gemm.c).
 *
 * Mapping. cuBLASLt takes no transpose of C and D, and adds its bias along
 * its D's rows (one value per row). libbk's bias is one value per column
 * of D [m, n], so with a bias cuBLASLt computes D^T [n, m] = B^T A^T (A
 * and B swapped); without one it computes D when D is column-major and D^T
 * when D is row-major. All four operands are then described in one memory
 * order: column-major where that D (or D^T) is, otherwise row-major (only a
 * column-major D with a bias needs it); A and B take whatever transpose
 * their strides need. With beta == 0 C is not read, as on the host. */
#ifndef BK_CUDA_GEMM_H
#define BK_CUDA_GEMM_H

#include "cuda_cublaslt.h"

enum { A, B, C, D, OPERANDS };

/* One operand as cuBLASLt sees it: the stored matrix (op(stored) is the
 * logical operand) in the plan's memory order. */
struct lt_view {
    uint64_t rows, cols;
    int64_t ld, batch_stride;
    int32_t op;                           /* BK_LT_OP_N or BK_LT_OP_T */
};

struct lt_mapping {
    bool swap;                            /* cuBLASLt computes D^T = B^T A^T */
    int32_t order;                        /* BK_LT_ORDER_COL or BK_LT_ORDER_ROW */
    struct lt_view view[OPERANDS];        /* cuBLASLt's A, B, C, D */
};

static inline int64_t bk_cuda_gemm_round_up(int64_t x, int64_t step)
{
    return (x + step - 1) / step * step;
}

/* Whether a view's leading dimension and batch stride keep 16-byte steps. */
BK_HIDDEN bool bk_cuda_gemm_steps_aligned16(const struct lt_view *v, size_t esize);

/* The mapping for cuBLASLt with or without the bias (biased): C as it is,
 * else (*copy_c) C copied into D first; a and b are the logical A and B
 * (k == 0: the zeroed stand-ins). BK_ERROR_UNSUPPORTED when A, B or D has
 * no unit stride. */
BK_HIDDEN BkResult bk_cuda_gemm_choose_mapping(BkPlan plan, const struct bk_matrix *a,
                                               const struct bk_matrix *b, bool biased,
                                               struct lt_mapping *m, bool *copy_c);

#endif /* BK_CUDA_GEMM_H */
