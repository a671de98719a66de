/* SPDX-License-Identifier: Apache-2.0 */
/* The parameter block of every gated-activation kernel, shared by the
 * kernels (kernels/gated_*.cu, compiled by nvcc) and the launcher
 * (lib/cuda/cuda_gated.c, plain C11), so both agree on the layout.
 *
 * The iteration space is the output shape with its innermost dimension
 * counted in "items": single elements on the strided path, or V-element
 * 16-byte vectors on the vector path (whose innermost stride is then V).
 * Item i is split into per-dimension indices by multiply-high division
 * (struct bk_gated_dim.magic/shift), which is exact for i < 2^63. */
#ifndef BK_GATED_KERNEL_ARGS_H
#define BK_GATED_KERNEL_ARGS_H

#include <stdint.h>

#define BK_GATED_MAX_RANK 8
#define BK_GATED_BLOCK 256 /* threads per block; kernels are built for it */
/* Items per thread per step (loads in flight before the first use): a
 * block covers BK_GATED_BLOCK * BK_GATED_UNROLL(element size, V) items per
 * step. The launcher sizes grids with the same numbers; a module built with
 * others still computes every item (blocks stride over the items). */
#ifndef BK_GATED_UNROLL_VEC
#define BK_GATED_UNROLL_VEC 2       /* 16-byte items of f32, f64 */
#endif
#ifndef BK_GATED_UNROLL_VEC_HALF
#define BK_GATED_UNROLL_VEC_HALF 2  /* 16-byte items of f16, bf16 */
#endif
#define BK_GATED_UNROLL_STRIDED 4   /* single elements */
#define BK_GATED_UNROLL(size, v) \
    ((v) == 1 ? BK_GATED_UNROLL_STRIDED : (size) == 2 ? BK_GATED_UNROLL_VEC_HALF : BK_GATED_UNROLL_VEC)

struct bk_gated_dim {
    uint64_t extent;    /* items along this dimension */
    uint64_t magic;     /* q = (umulhi(n, magic) + n) >> shift == n / extent */
    uint32_t shift;
    uint32_t unused;
    int64_t x_stride;   /* strides in elements */
    int64_t y_stride;   /* forward output y, or backward dy */
    int64_t dx_stride;  /* backward dx; 0 on the forward path */
};

struct bk_gated_args {
    uint64_t x;         /* device address of x = (a | b) */
    uint64_t y;         /* forward: y (written); backward: dy (read) */
    uint64_t dx;        /* backward: dx = (da | db) (written) */
    uint64_t count;     /* items in the iteration space */
    int64_t x_gate;     /* element offset from a to its b twin in x */
    int64_t dx_gate;    /* ... and in dx */
    uint32_t rank;      /* dimensions in use, dim[rank - 1] innermost */
    /* Nonzero for a grid of rows (rank <= 2): blocks along y stride over
     * dim[0], along x over dim[rank - 1]'s items; else a 1-D grid over all
     * the items (count). */
    uint32_t grid_rows;
    struct bk_gated_dim dim[BK_GATED_MAX_RANK];
};

#endif /* BK_GATED_KERNEL_ARGS_H */
