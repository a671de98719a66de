/* SPDX-License-Identifier: Apache-2.0 */
/* W4A16 weight utilities on CUDA (module w4a16_convert): quantize, pack,
 * unpack, and the GPTQ repack's four launches with its report
 * (kernels/w4a16_convert.cu says what each kernel does). */
#include "cuda_w4a16.h"
#include "../checked.h"

#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(struct bk_w4a16_convert_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the conversion parameter block fits struct bk_cuda_kernel_launch");
_Static_assert(BK_W4A16_REPACK_STATUS_ASYMMETRIC == 1 &&
                   BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX == 2 &&
                   BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS == 3,
               "the kernels' status codes (kernels/w4a16_convert.cu)");

#define MAX_KERNELS 5

struct convert_kernel {
    CUfunction fn;
    unsigned int grid;
    unsigned int block;
    const char *name;
};

struct convert_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    uint32_t count;                       /* kernels per run */
    struct convert_kernel kernel[MAX_KERNELS];
    struct bk_w4a16_convert_args args;    /* addresses filled in per run */
};

static struct bk_w4a16_matrix matrix_of(const struct bk_matrix *m)
{
    return (struct bk_w4a16_matrix){ .rs = m->row_stride, .cs = m->col_stride };
}

static void shape_args(const struct bk_w4a16_shape *s, struct bk_w4a16_convert_args *a)
{
    a->k = s->k;
    a->n = s->n;
    a->group = s->group;
    a->groups = s->groups;
    a->per_channel = s->per_channel;
    a->scale_bf16 = s->scale_type == BK_DATA_TYPE_BF16;
}

static unsigned int blocks_for(int64_t threads)
{
    const int64_t b = (threads + BK_W4A16_CONVERT_THREADS - 1) / BK_W4A16_CONVERT_THREADS;
    return (unsigned int)(b > 0 ? b : 1);
}

static BkResult add_kernel(BkPlan plan, struct convert_plan *cp, const char *name,
                           unsigned int grid, unsigned int block)
{
    struct convert_kernel *k = &cp->kernel[cp->count++];
    k->name = name;
    k->grid = grid;
    k->block = block;
    const char *const names[] = { name };
    CUfunction *const fns[] = { &k->fn };
    return bk_cuda_find_functions(plan, BK_CUDA_MODULE_W4A16_CONVERT, names, fns, 1);
}

static uint32_t convert_prepare(BkPlan plan, const struct bk_run_args *run,
                                struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct convert_plan *cp = plan->impl;
    struct bk_w4a16_convert_args a = cp->args;
    if (plan->op == BK_OP_W4A16_CONVERT) {
        a.weight.base = run->binding[BK_W4A16_CONVERT_BINDING_WEIGHT];
        a.quantized.base = run->binding[BK_W4A16_CONVERT_BINDING_QUANTIZED];
        a.scales.base = run->binding[BK_W4A16_CONVERT_BINDING_SCALES];
        a.packed = run->binding[BK_W4A16_CONVERT_BINDING_PACKED];
        a.packed_scales = run->binding[BK_W4A16_CONVERT_BINDING_PACKED_SCALES];
        const struct bk_w4a16_convert_problem *p = &plan->problem.w4a16_convert;
        if (p->has_zeros) {
            a.zeros.base = run->binding[BK_W4A16_CONVERT_BINDING_ZEROS];
            if (p->conversion != BK_W4A16_QUANTIZE)
                a.packed_zeros = run->binding[BK_W4A16_CONVERT_BINDING_PACKED_ZEROS];
        }
    } else {
        const struct bk_w4a16_repack_problem *p = &plan->problem.w4a16_repack;
        a.qweight.base = run->binding[BK_W4A16_REPACK_BINDING_QWEIGHT];
        a.scales.base = run->binding[BK_W4A16_REPACK_BINDING_SCALES];
        a.qzeros.base = p->qzeros.type != BK_DATA_TYPE_UNDEFINED
                            ? run->binding[BK_W4A16_REPACK_BINDING_QZEROS] : 0;
        a.g_idx = p->has_g_idx ? run->binding[BK_W4A16_REPACK_BINDING_G_IDX] : 0;
        a.packed = run->binding[BK_W4A16_REPACK_BINDING_PACKED];
        a.packed_scales = run->binding[BK_W4A16_REPACK_BINDING_PACKED_SCALES];
        a.perm = p->has_perm ? run->binding[BK_W4A16_REPACK_BINDING_PERM] : 0;
        a.report = run->binding[BK_W4A16_REPACK_BINDING_REPORT];
        if (p->has_zeros)
            a.packed_zeros = run->binding[BK_W4A16_REPACK_BINDING_PACKED_ZEROS];
    }
    for (uint32_t i = 0; i < cp->count; i++)
        bk_cuda_launch_set(&launches[i], cp->kernel[i].fn, cp->kernel[i].grid, 1, 1,
                           cp->kernel[i].block, 0, cp->kernel[i].name, &a, sizeof a);
    return cp->count;
}

static const char *quantize_kernel(BkDataType t)
{
    switch (t) {
    case BK_DATA_TYPE_F32: return "bk_w4a16_quantize_f32";
    case BK_DATA_TYPE_F16: return "bk_w4a16_quantize_f16";
    case BK_DATA_TYPE_BF16: return "bk_w4a16_quantize_bf16";
    default: return NULL;
    }
}

BkResult bk_cuda_w4a16_convert_select(BkPlan plan)
{
    const struct bk_w4a16_convert_problem *p = &plan->problem.w4a16_convert;
    BkResult res;
    struct convert_plan *cp = bk_cuda_plan_new(plan, sizeof *cp, convert_prepare, NULL, &res);
    if (!cp)
        return res;
    struct bk_w4a16_convert_args *a = &cp->args;
    shape_args(&p->shape, a);
    a->weight = matrix_of(&p->weight);
    a->quantized = matrix_of(&p->quantized);
    a->scales = matrix_of(&p->scales);
    a->zeros = matrix_of(&p->zeros);
    a->weight_type = (uint32_t)p->weight.type;
    bool ovf = false;
    const int64_t words = bk_mul_i64(p->shape.k / 16 * 2, p->shape.n, &ovf);
    const int64_t scales = bk_mul_i64(p->shape.groups, p->shape.n, &ovf);
    if (ovf)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the packed words or scales of k = %lld, "
                        "n = %lld overflow 64 bits", plan->op_name, (long long)p->shape.k,
                        (long long)p->shape.n);
    const char *name;
    unsigned int grid;
    if (p->conversion == BK_W4A16_QUANTIZE) {
        name = quantize_kernel(p->weight.type);
        grid = blocks_for(scales);
    } else {
        name = p->conversion == BK_W4A16_PACK ? "bk_w4a16_pack" : "bk_w4a16_unpack";
        grid = blocks_for(words > scales ? words : scales);
    }
    if (!name)
        return bk_error(BK_ERROR_UNSUPPORTED, "BkW4A16ConvertInfo: the CUDA backend cannot "
                        "quantize %s weights", bk_data_type_name(p->weight.type));
    if ((res = add_kernel(plan, cp, name, grid, BK_W4A16_CONVERT_THREADS)) != BK_SUCCESS)
        return res;
    /* The kernels see zero points by their addresses (0 when symmetric). */
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s", name);
    return BK_SUCCESS;
}

BkResult bk_cuda_w4a16_repack_select(BkPlan plan)
{
    const struct bk_w4a16_repack_problem *p = &plan->problem.w4a16_repack;
    BkResult res;
    struct convert_plan *cp = bk_cuda_plan_new(plan, sizeof *cp, convert_prepare, NULL, &res);
    if (!cp)
        return res;
    struct bk_w4a16_convert_args *a = &cp->args;
    shape_args(&p->shape, a);
    a->qweight = matrix_of(&p->qweight);
    a->scales = matrix_of(&p->scales);
    a->qzeros = matrix_of(&p->qzeros);
    a->zero_offset = p->zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? 1u : 0u;
    a->awq = p->format == BK_W4A16_CHECKPOINT_AWQ;
    bool ovf = false;
    const int64_t words = bk_mul_i64(p->shape.k / 16 * 2, p->shape.n, &ovf);
    const int64_t scales = bk_mul_i64(p->shape.groups, p->shape.n, &ovf);
    if (ovf)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the packed words or scales of k = %lld, "
                        "n = %lld overflow 64 bits", plan->op_name, (long long)p->shape.k,
                        (long long)p->shape.n);
    const unsigned int perm_grid =
        p->has_g_idx ? (unsigned int)p->shape.groups : blocks_for(p->shape.k);
    if ((res = add_kernel(plan, cp, "bk_w4a16_repack_init", 1, BK_W4A16_CONVERT_THREADS)) !=
            BK_SUCCESS ||
        (res = add_kernel(plan, cp, "bk_w4a16_repack_perm", perm_grid,
                          BK_W4A16_CONVERT_THREADS)) != BK_SUCCESS ||
        (res = add_kernel(plan, cp, "bk_w4a16_repack", blocks_for(words > scales ? words : scales),
                          BK_W4A16_CONVERT_THREADS)) != BK_SUCCESS ||
        (p->has_zeros &&
         (res = add_kernel(plan, cp, "bk_w4a16_repack_zeros", blocks_for(scales / 8),
                           BK_W4A16_CONVERT_THREADS)) != BK_SUCCESS) ||
        (res = add_kernel(plan, cp, "bk_w4a16_repack_finalize", 1, 32)) != BK_SUCCESS)
        return res;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "bk_w4a16_repack%s",
             p->has_zeros ? "_zeros" : "");
    return BK_SUCCESS;
}
