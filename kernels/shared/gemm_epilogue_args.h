/* SPDX-License-Identifier: Apache-2.0 */
/* The parameter block of the dense GEMM's epilogue kernels (module
 * gemm_epilogue, kernels/gemm_epilogue.cu), shared with their launcher
 * (lib/cuda/cuda_gemm.c, plain C11), so both agree. They finish what
 * cuBLASLt cannot do for some layouts:
 *   copy:     dst = src elementwise (C into D, when C's order differs from
 *             D's; the two never overlap then), bit for bit;
 *   bias_act: dst = act(dst + bias) in place (a column-major D with a
 *             bias, where cuBLASLt has no algorithm), in f32 (f64 for f64).
 * Both walk [batch, outer, inner], inner being D's unit-stride dimension,
 * so that consecutive threads touch consecutive elements of D. Strides are
 * in elements, any (a C shared by the batch has batch stride 0). */
#ifndef BK_GEMM_EPILOGUE_ARGS_H
#define BK_GEMM_EPILOGUE_ARGS_H

#include <stdint.h>

#define BK_GEMM_EPI_BLOCK 256
#define BK_GEMM_EPI_RELU 1u          /* BkGemmActivation (the launcher checks) */
#define BK_GEMM_EPI_GELU_TANH 2u

struct bk_gemm_epi_args {
    uint64_t dst, src, bias;        /* src: copy only; bias: 0 for none */
    uint64_t count;                 /* batch * outer * inner */
    int64_t inner, outer;           /* extents: inner * outer elements per batch */
    int64_t dst_is, dst_os, dst_bs; /* strides along inner, outer, batch */
    int64_t src_is, src_os, src_bs;
    int64_t bias_is, bias_os;       /* bias[n]: (1, 0) when inner is n, else (0, 1) */
    uint32_t activation;            /* bias_act: BkGemmActivation */
    uint32_t unused;
};

#endif /* BK_GEMM_EPILOGUE_ARGS_H */
