/* SPDX-License-Identifier: Apache-2.0 */
/* Embeds the kernel modules built from ptx/ (ptx/NAME.fatbin, found through
 * the assembler's include path) in libbk's read-only data, as
 * bk_cuda_fatbin_NAME .. bk_cuda_fatbin_NAME_end (lib/cuda/cuda_module.c). */
        .macro bk_embed_fatbin name
        .section .rodata.bk_cuda_fatbin, "a"
        .balign 64
        .globl bk_cuda_fatbin_\name
        .hidden bk_cuda_fatbin_\name
        .type bk_cuda_fatbin_\name, %object
bk_cuda_fatbin_\name:
        .incbin "\name\().fatbin"
        .globl bk_cuda_fatbin_\name\()_end
        .hidden bk_cuda_fatbin_\name\()_end
bk_cuda_fatbin_\name\()_end:
        .byte 0
        .size bk_cuda_fatbin_\name, . - bk_cuda_fatbin_\name
        .endm

        bk_embed_fatbin gated_forward
        bk_embed_fatbin gated_backward
        bk_embed_fatbin sparse24_convert
        bk_embed_fatbin sparse24_mma
        bk_embed_fatbin sparse24_general
        bk_embed_fatbin sparse24_wgmma
        bk_embed_fatbin gemm_epilogue
        bk_embed_fatbin w4a16_gemm
        bk_embed_fatbin w4a16_convert
        bk_embed_fatbin w4a16_wgmma
        bk_embed_fatbin attention_general
        bk_embed_fatbin attention_mma
        bk_embed_fatbin attention_mma_backward
        bk_embed_fatbin attention_wgmma
        bk_embed_fatbin attention_wgmma_backward
        bk_embed_fatbin attention_decode

        /* No executable stack. */
        .section .note.GNU-stack, "", %progbits
