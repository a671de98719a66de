/* SPDX-License-Identifier: Apache-2.0 */
/* libbk: explicit, handle-based GPU kernels for ML and HPC. Include this
 * header; it pulls in the core API and every operation. */
#ifndef BK_H
#define BK_H

#include <bk/bk_core.h>
#include <bk/bk_gated_activation.h>
#include <bk/bk_gemm.h>
#include <bk/bk_w4a16.h>
#include <bk/bk_attention.h>
#include <bk/bk_convert.h>

#endif /* BK_H */
