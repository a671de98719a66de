/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA backend's kernel modules: one row per kernels/NAME.cu. The module
 * enum (cuda_internal.h), the embedded fatbins (cuda_fatbins.S), the
 * table that finds them (cuda_module.c) and the build's list of modules
 * and their architectures (lib/cuda/configure.m4 reads the rows for
 * kernels/local.mk) are all made from it.
 *
 *   X(ID, NAME, ARCHS)
 *
 * ID     enum bk_cuda_module_id's BK_CUDA_MODULE_<ID>
 * NAME   the source kernels/NAME.cu, the fatbin NAME.fatbin, the symbols
 *        bk_cuda_fatbin_NAME and bk_cuda_fatbin_NAME_end
 * ARCHS  configured: cubins for $(BK_CUDA_ARCHS) (but sm_86 and sm_89 for
 *        the modules kernels/local.mk names large-shared) and the newest
 *        PTX of $(BK_CUDA_PTX_ARCHS); sm_90a: Hopper's own instructions (wgmma,
 *        TMA), an sm_90a cubin and PTX only, so plans check the device
 *        before they pick a kernel of it
 *
 * One row a line, in this form: configure reads them with sed. Plain
 * macros only: the assembler includes this file too. */
#ifndef BK_CUDA_MODULES_H
#define BK_CUDA_MODULES_H

#define BK_CUDA_MODULES(X)                                                                     \
    X(GATED_FORWARD, gated_forward, configured)                                                \
    X(GATED_BACKWARD, gated_backward, configured)                                              \
    X(SPARSE24_CONVERT, sparse24_convert, configured)     /* conversions, report, prepare */   \
    X(SPARSE24_MMA, sparse24_mma, configured)             /* GEMM on sparse tensor cores */    \
    X(SPARSE24_GENERAL, sparse24_general, configured)     /* GEMM on CUDA cores */             \
    X(GEMM_EPILOGUE, gemm_epilogue, configured)           /* C -> D copies, bias, activation */ \
    X(W4A16_GEMM, w4a16_gemm, configured)                 /* int4 x f16/bf16, Marlin layout */ \
    X(W4A16_CONVERT, w4a16_convert, configured)           /* quantize, pack, unpack, repack */ \
    X(SPARSE24_WGMMA, sparse24_wgmma, sm_90a)             /* 2:4 GEMM on Hopper */             \
    X(W4A16_WGMMA, w4a16_wgmma, sm_90a)                   /* int4 GEMM's taller tiles */       \
    X(ATTENTION_GENERAL, attention_general, configured)   /* CUDA cores, scatter, row sums */  \
    X(ATTENTION_MMA, attention_mma, configured)           /* forward on tensor cores */        \
    X(ATTENTION_MMA_WIDE, attention_mma_wide, configured) /* its widths past 128 */            \
    X(ATTENTION_MMA_BACKWARD, attention_mma_backward, configured)                              \
    X(ATTENTION_MMA_BACKWARD_WIDE, attention_mma_backward_wide, configured)                    \
    X(ATTENTION_TF32, attention_tf32, configured)         /* F32 forward, 3xTF32 */         \
    X(ATTENTION_TF32_BACKWARD, attention_tf32_backward, configured)                            \
    X(ATTENTION_TF32_BACKWARD_WIDE, attention_tf32_backward_wide, configured)                  \
    X(ATTENTION_WGMMA, attention_wgmma, sm_90a)                                                \
    X(ATTENTION_WGMMA_BACKWARD, attention_wgmma_backward, sm_90a)                              \
    X(ATTENTION_DECODE, attention_decode, configured)     /* few query rows, split keys */   \
    X(ATTENTION_DECODE_WGMMA, attention_decode_wgmma, sm_90a) /* the same on Hopper */       \
    X(CONVERT, convert, configured)                       /* type conversion */

#endif /* BK_CUDA_MODULES_H */
