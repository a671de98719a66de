/* SPDX-License-Identifier: Apache-2.0 */
/* What the CUDA backend's 2:4 files share (cuda_sparse24.c: conversions,
 * prepare, the prepared layout; cuda_sparse24_gemm.c: the sparse GEMM). */
#ifndef BK_CUDA_SPARSE24_H
#define BK_CUDA_SPARSE24_H

#include "cuda_internal.h"
#include "sparse24_args.h"

/* The CUDA prepared weight of type, m rows and k columns (see
 * kernels/shared/sparse24_args.h): F16/BF16 tiles (mts x kbs of them) or F32 rows. */
struct bk_cuda_sp24_layout {
    int64_t mts, kbs;             /* F16/BF16: padded rows / 16, padded columns / 32 */
    uint64_t meta_offset;         /* bytes from the weight to its metadata */
    uint64_t size;                /* bytes in all */
};

/* false when the type has no prepared layout or its size overflows. */
BK_HIDDEN bool bk_cuda_sp24_layout(BkDataType type, int64_t m, int64_t k,
                                   struct bk_cuda_sp24_layout *l);
/* "f32", "f16", "bf16", "f64"; NULL for other types. */
BK_HIDDEN const char *bk_cuda_sp24_type_name(BkDataType type);
/* Blocks of block threads for a grid-stride loop over items (at least 1). */
BK_HIDDEN unsigned int bk_cuda_sp24_blocks(BkContext ctx, uint64_t items, unsigned int block);
#endif /* BK_CUDA_SPARSE24_H */
