/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA attention forward for few query rows over a long KV cache:
 * kernels/attention_decode.cu's split kernel, then its combining kernel. See
 * cuda_attention_decode.h. */
#include "cuda_attention_decode.h"
#include "../checked.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct bk_attention_decode_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the decode parameter block fits struct bk_cuda_kernel_launch");

/* A stream walks at least this many steps of BK_ATTENTION_DECODE_KEYS(D)
 * keys (its Q load, ring start and part store cost about that much). */
#define MIN_STEPS_PER_STREAM 4
/* The combining kernel's rows a CTA: a warp each. */
#define COMBINE_ROWS (BK_ATTENTION_DECODE_COMBINE_THREADS / 32)

static bool decode_off(void)
{
    const char *s = getenv("BK_CUDA_ATTENTION_DECODE");
    return s && strcmp(s, "off") == 0;
}

/* The ring's bytes a CTA on this device: sm_90 and sm_100 allow 227 KiB of
 * shared memory a CTA, sm_80 163 KiB; the others (99 KiB) take the other
 * kernels. */
static unsigned int ring_bytes(const BkDeviceProperties *dev)
{
    if (dev->computeCapabilityMajor == 9 || dev->computeCapabilityMajor == 10)
        return BK_ATTENTION_DECODE_RING_SM90;
    if (dev->computeCapabilityMajor == 8 && dev->computeCapabilityMinor == 0)
        return BK_ATTENTION_DECODE_RING_SM80;
    return 0;
}

static const char *type_name(BkDataType t)
{
    return t == BK_DATA_TYPE_F16 ? "f16" : "bf16";
}

BkResult bk_cuda_attention_decode_plan(BkPlan plan, bool fast, const struct bk_attention_args *a,
                                       struct attention_decode_plan *dp)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    const struct bk_cuda_context *c = plan->ctx->impl;
    const BkDeviceProperties *dev = &plan->ctx->props;
    memset(dp, 0, sizeof *dp);
    const unsigned int ring = ring_bytes(dev);
    if (!fast || p->backward || p->form != BK_ATTENTION_PATTERN_DENSE || !ring ||
        p->d != p->dv || (p->d != 64 && p->d != 128) ||
        p->lq > BK_ATTENTION_DECODE_MAX_LQ || p->lq < 1 || decode_off() ||
        (p->has_sequences && p->seq_form != BK_ATTENTION_SEQUENCES_PADDED))
        return BK_SUCCESS;
    const uint64_t group = (uint64_t)(p->heads / p->kv_heads), rows = group * (uint64_t)p->lq;
    const unsigned int rg = rows <= 16 ? 1 : rows <= 32 ? 2 : rows <= 64 ? 4 : 8;
    const uint64_t row_groups = (rows + 16 * rg - 1) / (16 * rg);
    const uint64_t streams = BK_ATTENTION_DECODE_STREAMS(rg);
    const uint64_t total = (uint64_t)p->batch * (uint64_t)p->heads * (uint64_t)p->lq;
    const uint64_t combine_ctas = (total + COMBINE_ROWS - 1) / COMBINE_ROWS;
    if (combine_ctas > INT32_MAX)
        return BK_SUCCESS;
    /* Stream-K: the units' steps end to end, an equal share a stream, one
     * CTA an SM (its ring takes the SM's shared memory). */
    const uint64_t keys = BK_ATTENTION_DECODE_KEYS((uint64_t)p->d);
    const uint64_t unit_steps = ((uint64_t)p->lk + keys - 1) / keys;
    const uint64_t units = (uint64_t)p->batch * (uint64_t)p->kv_heads * row_groups;
    const uint64_t sms = c->sm_count > 0 ? (uint64_t)c->sm_count : 1;
    bool ovf = false;
    const uint64_t all = bk_mul_u64(units, unit_steps, &ovf);
    if (ovf)
        return BK_SUCCESS;
    uint64_t want = (all + MIN_STEPS_PER_STREAM - 1) / MIN_STEPS_PER_STREAM;
    want = want < 1 ? 1 : want > sms * streams ? sms * streams : want;
    const uint64_t stream_steps = all ? (all + want - 1) / want : 1;
    const uint64_t walking = all ? (all + stream_steps - 1) / stream_steps : 1;
    const uint64_t ctas = (walking + streams - 1) / streams;
    uint64_t max_parts = unit_steps ? (unit_steps + stream_steps - 1) / stream_steps + 1 : 1;
    if (max_parts > walking)
        max_parts = walking;

    /* The parts past the core's workspace: F32 o and lse a row a slot. */
    const uint64_t at = bk_align_up_u64(plan->props.workspaceSize, 256, &ovf);
    const uint64_t cells = bk_mul_u64(bk_mul_u64(units, max_parts, &ovf), (uint64_t)16 * rg, &ovf);
    const uint64_t bytes = bk_mul_u64(bk_mul_u64(cells, (uint64_t)p->dv + 1, &ovf), 4, &ovf);
    const uint64_t end = bk_add_u64(at, bytes, &ovf);
    if (ovf || end > (uint64_t)INT64_MAX)
        return BK_SUCCESS;

    dp->problem = p;
    dp->rg = rg;
    dp->ctas = (unsigned int)ctas;
    dp->threads = 32 * BK_ATTENTION_DECODE_WARPS(rg);
    const unsigned int stages = BK_ATTENTION_DECODE_STAGES((unsigned int)p->d, rg, ring);
    dp->shared_bytes = BK_ATTENTION_DECODE_SHARED_BYTES((unsigned int)p->d, rg, stages);
    dp->ws_parts = at;
    dp->args.a = *a;
    dp->args.group = (uint32_t)group;
    dp->args.rows = (uint32_t)rows;
    dp->args.row_groups = (uint32_t)row_groups;
    dp->args.max_parts = (uint32_t)max_parts;
    dp->args.unit_steps = (int64_t)unit_steps;
    dp->args.stream_steps = (int64_t)stream_steps;
    dp->args.units = (int64_t)units;
    dp->args.lengths_s[0] = p->lengths_q_stride;
    dp->args.lengths_s[1] = p->lengths_k_stride;
    if (p->paged) {
        dp->args.table_s[0] = p->block_table_stride[0];
        dp->args.table_s[1] = p->block_table_stride[1];
        dp->args.page_size = p->page_size;
        dp->args.pages = p->pages;
    }
    snprintf(dp->split_name, sizeof dp->split_name, "bk_attention_decode_%s_d%d_r%u_s%u",
             type_name(p->type), (int)p->d, rg, stages);
    snprintf(dp->combine_name, sizeof dp->combine_name, "bk_attention_decode_combine_%s_d%d_r%u",
             type_name(p->type), (int)p->d, rg);
    BkResult res = bk_cuda_find_kernel(plan, BK_CUDA_MODULE_ATTENTION_DECODE, dp->split_name,
                                       &dp->split, dp->shared_bytes);
    if (res == BK_SUCCESS)
        res = bk_cuda_find_kernel(plan, BK_CUDA_MODULE_ATTENTION_DECODE, dp->combine_name,
                                  &dp->combine, 0);
    if (res != BK_SUCCESS)
        return res;
    plan->props.workspaceSize = end;
    dp->on = true;
    return BK_SUCCESS;
}

uint32_t bk_cuda_attention_decode_launches(const struct attention_decode_plan *dp,
                                           const struct bk_attention_args *a,
                                           const struct bk_run_args *run,
                                           struct bk_cuda_kernel_launch *launches)
{
    const struct bk_attention_problem *p = dp->problem;
    const BkDeviceAddress workspace = run->workspace;
    struct bk_attention_decode_args d = dp->args;
    d.a = *a;
    d.lengths_q = p->has_lengths_q ? run->binding[BK_ATTENTION_BINDING_LENGTHS_Q] : 0;
    d.lengths_k = p->has_lengths_k ? run->binding[BK_ATTENTION_BINDING_LENGTHS_K] : 0;
    d.block_table = p->paged ? run->binding[BK_ATTENTION_BINDING_BLOCK_TABLE] : 0;
    const uint64_t total = (uint64_t)a->batch * (uint64_t)a->heads * (uint64_t)a->lq;
    const uint64_t cells = (uint64_t)d.units * d.max_parts * 16 * dp->rg;
    d.part_o = workspace + dp->ws_parts;
    d.part_lse = d.part_o + cells * (uint64_t)a->dv_cols * 4;
    bk_cuda_launch_set(&launches[0], dp->split, dp->ctas, 1, 1, dp->threads, dp->shared_bytes,
                       dp->split_name, &d, sizeof d);
    bk_cuda_launch_set(&launches[1], dp->combine,
                       (unsigned int)((total + COMBINE_ROWS - 1) / COMBINE_ROWS), 1, 1,
                       BK_ATTENTION_DECODE_COMBINE_THREADS, 0, dp->combine_name, &d, sizeof d);
    return 2;
}
