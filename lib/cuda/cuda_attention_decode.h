/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA attention forward for few query rows over a long KV cache
 * (kernels/attention_decode.cu): whether a plan takes it, its kernels, grid
 * and workspace, and the two launches of a run. */
#ifndef BK_CUDA_ATTENTION_DECODE_H
#define BK_CUDA_ATTENTION_DECODE_H

#include "cuda_internal.h"
#include "attention_args.h"

/* One set of decode kernels: the split kernel (its grid, threads and
 * shared memory) and the combining one, with the arguments of a run but
 * its addresses. */
struct attention_decode_kernels {
    bool on;
    unsigned int unit_rows;     /* packed rows of a unit: 16 RG, or 64 NC */
    bool direct;                /* streams walk whole units and write y: no combine */
    unsigned int ctas;          /* of the split kernel: at most one an SM */
    unsigned int threads, shared_bytes;
    CUfunction split, combine;
    char split_name[BK_MAX_KERNEL_NAME_SIZE], combine_name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_attention_decode_args args;
};

struct attention_decode_plan {
    bool on;
    const struct bk_attention_problem *problem; /* the plan's */
    uint64_t ws_parts;                /* the parts' offset in the workspace */
    struct attention_decode_kernels mma;   /* kernels/attention_decode.cu */
    /* kernels/attention_decode_wgmma.cu where it takes the plan (sm_90,
     * contiguous caches): a run whose tensor maps the driver refuses
     * takes the mma.sync kernels. */
    struct attention_decode_kernels wgmma;
    /* The forward's CTA as a decode kernel (kernels/attention_wgmma.cu),
     * where it takes the plan: before the others, as wgmma's. */
    struct attention_decode_kernels forward;
};

/* Whether the forward plan of p takes the decode kernels (f16 or bf16,
 * D = Dv = 64 or 128, DENSE, Lq <= BK_ATTENTION_DECODE_MAX_LQ, PADDED
 * sequence lengths and paged caches too, rows in whole 16-byte steps:
 * `fast` says the rest; sm_80, sm_90 and sm_100), and if so, its kernels, grid
 * and workspace (placed past the core's, which *workspace_size grows to
 * cover). BK_CUDA_ATTENTION_DECODE, read when a plan is made: off turns
 * them off, mma keeps the Hopper kernels out, mma16 the narrow kernels of
 * up to 8 packed rows too, wgmma takes the Hopper decode kernel and
 * forward the forward's CTA wherever it runs, whole the narrow kernels'
 * whole units (for tests and tuning). */
BK_HIDDEN BkResult bk_cuda_attention_decode_plan(BkPlan plan, bool fast,
                                                 const struct bk_attention_args *a,
                                                 struct attention_decode_plan *dp);

/* The name of the split kernel a run takes where its maps are made. */
BK_HIDDEN const char *bk_cuda_attention_decode_name(const struct attention_decode_plan *dp);

/* The launches of a run (q, k, v, y and lse bound in a; the lengths and
 * the block table in run's bindings): the split kernel and the combining
 * one, or the split kernel alone where its streams walk whole units.
 * Returns how many (1 or 2). */
BK_HIDDEN uint32_t bk_cuda_attention_decode_launches(const struct attention_decode_plan *dp,
                                                     const struct bk_attention_args *a,
                                                     const struct bk_run_args *run,
                                                     struct bk_cuda_kernel_launch *launches);

#endif /* BK_CUDA_ATTENTION_DECODE_H */
