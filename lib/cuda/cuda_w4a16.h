/* SPDX-License-Identifier: Apache-2.0 */
/* What the W4A16 plans on CUDA share (cuda_w4a16_convert.c,
 * cuda_w4a16_gemm.c): the kernels' parameter blocks. */
#ifndef BK_CUDA_W4A16_H
#define BK_CUDA_W4A16_H

#include "cuda_internal.h"
#include "w4a16_args.h"

#endif
