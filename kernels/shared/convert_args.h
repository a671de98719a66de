/* SPDX-License-Identifier: Apache-2.0 */
/* The parameter block of the conversion kernels, shared by the kernels
 * (kernels/convert.cu, compiled by nvcc) and the launcher
 * (lib/cuda/cuda_convert.c, plain C11), so both agree on the layout.
 *
 * The iteration space is the normalised shape with its innermost
 * dimension counted in "items": single elements on the strided path, or
 * V-element vectors on the vector path (V = 16 bytes / the larger element
 * size; both innermost strides are then V). Item i is split into
 * per-dimension indices by multiply-high division (magic/shift), exact
 * for i < 2^63. */
#ifndef BK_CONVERT_ARGS_H
#define BK_CONVERT_ARGS_H

#include <stdint.h>

#define BK_CONVERT_MAX_RANK 8
#define BK_CONVERT_BLOCK 256 /* threads per block; kernels are built for it */
#define BK_CONVERT_UNROLL 4  /* items per thread per step, loads before stores */

/* Type codes of the strided kernel's run-time switch: BkDataType values. */
struct bk_convert_dim {
    uint64_t extent;     /* items along this dimension */
    uint64_t magic;      /* q = (umulhi(n, magic) + n) >> shift == n / extent */
    uint32_t shift;
    uint32_t unused;
    int64_t in_stride;   /* strides in elements */
    int64_t out_stride;
};

struct bk_convert_args {
    uint64_t in;         /* device address of the input */
    uint64_t out;        /* device address of the output (written) */
    uint64_t count;      /* items in the iteration space */
    uint32_t rank;       /* dimensions in use, dim[rank - 1] innermost */
    uint32_t in_type;    /* BkDataType: read by the generic kernel only */
    uint32_t out_type;
    uint32_t unused;
    struct bk_convert_dim dim[BK_CONVERT_MAX_RANK];
};

#endif /* BK_CONVERT_ARGS_H */
