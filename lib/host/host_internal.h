/* SPDX-License-Identifier: Apache-2.0 */
/* The host backend's op implementations, one file per op family. */
#ifndef BK_HOST_INTERNAL_H
#define BK_HOST_INTERNAL_H

#include "../bk_internal.h"

/* Set plan->launch, kernel name and precision for a gated activation. */
BK_HIDDEN BkResult bk_host_gated_select(BkPlan plan);

/* The GEMM family (host_gemm.c, host_sparse24.c): set plan->launch,
 * kernel name and the workspace the run needs. */
BK_HIDDEN BkResult bk_host_gemm_select(BkPlan plan);
BK_HIDDEN BkResult bk_host_sparse24_convert_select(BkPlan plan);
BK_HIDDEN BkResult bk_host_sparse24_prepare_select(BkPlan plan);
BK_HIDDEN BkResult bk_host_sparse24_gemm_select(BkPlan plan);
/* The host's prepared 2:4 weight (struct bk_backend.sparse24_prepared_size). */
BK_HIDDEN uint64_t bk_host_sparse24_prepared_size(BkContext ctx, BkDataType type, int64_t m,
                                                  int64_t k);

/* W4A16 (host_w4a16.c, host_w4a16_gemm.c): set plan->launch and the
 * kernel name; only the GEMM on a BLAS needs a workspace. */
BK_HIDDEN BkResult bk_host_w4a16_convert_select(BkPlan plan);
BK_HIDDEN BkResult bk_host_w4a16_repack_select(BkPlan plan);
BK_HIDDEN BkResult bk_host_w4a16_gemm_select(BkPlan plan);

/* Block-sparse attention, forward and backward (host_attention.c): set
 * plan->launch and the kernel name; the workspace is the core's. */
BK_HIDDEN BkResult bk_host_attention_select(BkPlan plan);

/* Type conversion (host_convert.c): set plan->launch and the kernel name. */
BK_HIDDEN BkResult bk_host_convert_select(BkPlan plan);

#endif
