/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA attention forward for few query rows over a long KV cache
 * (kernels/attention_decode.cu): whether a plan takes it, its kernels, grid
 * and workspace, and the two launches of a run. */
#ifndef BK_CUDA_ATTENTION_DECODE_H
#define BK_CUDA_ATTENTION_DECODE_H

#include "cuda_internal.h"
#include "attention_args.h"

struct attention_decode_plan {
    bool on;
    const struct bk_attention_problem *problem; /* the plan's */
    unsigned int rg;            /* warps a key stream */
    unsigned int ctas;          /* of the split kernel: at most one an SM */
    unsigned int threads, shared_bytes;
    uint64_t ws_parts;          /* the parts' offset in the workspace */
    CUfunction split, combine;
    char split_name[BK_MAX_KERNEL_NAME_SIZE], combine_name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_attention_decode_args args; /* all but the addresses */
};

/* Whether the forward plan of p takes the decode kernels (f16 or bf16,
 * D = Dv = 64 or 128, DENSE, Lq <= BK_ATTENTION_DECODE_MAX_LQ, PADDED
 * sequence lengths and paged caches too, rows in whole 16-byte steps:
 * `fast` says the rest; sm_80, sm_90 and sm_100), and if so, its kernels, grid
 * and workspace (placed past the core's, which *workspace_size grows to
 * cover). BK_CUDA_ATTENTION_DECODE=off, read when a plan is made, turns
 * it off (for tests and tuning). */
BK_HIDDEN BkResult bk_cuda_attention_decode_plan(BkPlan plan, bool fast,
                                                 const struct bk_attention_args *a,
                                                 struct attention_decode_plan *dp);

/* The launches of a run (q, k, v, y and lse bound in a; the lengths and
 * the block table in run's bindings): the split kernel and the combining
 * one. Returns how many (2). */
BK_HIDDEN uint32_t bk_cuda_attention_decode_launches(const struct attention_decode_plan *dp,
                                                     const struct bk_attention_args *a,
                                                     const struct bk_run_args *run,
                                                     struct bk_cuda_kernel_launch *launches);

#endif /* BK_CUDA_ATTENTION_DECODE_H */
