/* SPDX-License-Identifier: Apache-2.0 */
/* Embeds the kernel modules built from kernels/ (kernels/NAME.fatbin, found through
 * the assembler's include path) in libbk's read-only data, as
 * bk_cuda_fatbin_NAME .. bk_cuda_fatbin_NAME_end (lib/cuda/cuda_module.c), one
 * module per row of cuda_modules.h. */
#include "cuda_modules.h"

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

        /* One per row of cuda_modules.h; ";" ends each statement, as the
         * rows expand to one line. */
#define BK_EMBED_FATBIN(id, name, archs) bk_embed_fatbin name;
        BK_CUDA_MODULES(BK_EMBED_FATBIN)

        /* No executable stack. */
        .section .note.GNU-stack, "", %progbits
