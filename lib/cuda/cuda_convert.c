/* SPDX-License-Identifier: Apache-2.0 */
/* Type conversion on CUDA: choosing the kernel and launch shape for a
 * plan, and its parameter block for each run. Kernels are found by name
 * in the convert module: bk_convert_<in>_<out>_<vec|strided> for pairs of
 * F32, F16, BF16 and F64, bk_convert_any_strided for pairs with an
 * integer type.
 *
 * The vector path moves V elements per access (V = 16 bytes / the larger
 * element size); it needs unit innermost strides, an innermost extent and
 * outer strides that are multiples of V, and addresses aligned to V
 * elements of each type, which are only known at launch: a plan that
 * qualifies keeps the strided kernel too and falls back to it. */
#include "cuda_internal.h"
#include "convert_args.h"

#include <stdio.h>
#include <string.h>

struct convert_kernel {
    CUfunction fn;
    unsigned int grid;
    char name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_convert_args args;          /* addresses are filled in at launch */
};

struct cuda_convert_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    bool has_vec;
    unsigned int in_align, out_align;     /* the vector path's, in bytes */
    struct convert_kernel vec, strided;
};

/* The types with kernels of their own pairs (the rest: the generic one). */
static const struct {
    const char *name;
    unsigned int size;
    bool paired;
} type_info[] = {
    [BK_DATA_TYPE_F32] = { "f32", 4, true },  [BK_DATA_TYPE_F16] = { "f16", 2, true },
    [BK_DATA_TYPE_BF16] = { "bf16", 2, true }, [BK_DATA_TYPE_F64] = { "f64", 8, true },
    [BK_DATA_TYPE_I32] = { "i32", 4, false }, [BK_DATA_TYPE_U32] = { "u32", 4, false },
    [BK_DATA_TYPE_U16] = { "u16", 2, false }, [BK_DATA_TYPE_I8] = { "i8", 1, false },
    [BK_DATA_TYPE_U8] = { "u8", 1, false },
};

/* Fills the kernel parameters for items of v elements (v = 1: strided). */
static void fill_args(const struct bk_convert_problem *p, unsigned int v,
                      struct bk_convert_args *a)
{
    memset(a, 0, sizeof *a);
    const uint32_t inner = p->rank - 1;
    uint64_t count = 1;
    a->rank = p->rank;
    a->in_type = (uint32_t)p->in_type;
    a->out_type = (uint32_t)p->out_type;
    for (uint32_t k = 0; k < p->rank; k++) {
        struct bk_convert_dim *d = &a->dim[k];
        const int64_t scale = k == inner ? (int64_t)v : 1;
        d->extent = (uint64_t)(p->extent[k] / scale);
        bk_cuda_fastdiv_init(d->extent ? d->extent : 1, &d->magic, &d->shift);
        d->in_stride = p->in_stride[k] * scale;
        d->out_stride = p->out_stride[k] * scale;
        count *= d->extent;
    }
    a->count = count;
}

static bool vector_path_fits(const struct bk_convert_problem *p, int64_t v)
{
    const uint32_t inner = p->rank - 1;
    if (p->count == 0 || p->extent[inner] % v != 0 || p->in_stride[inner] != 1 ||
        p->out_stride[inner] != 1)
        return false;
    for (uint32_t k = 0; k < inner; k++)
        if (p->in_stride[k] % v != 0 || p->out_stride[k] % v != 0)
            return false;
    return true;
}

/* The grid is 8 waves of the blocks that fit on the device at once, as
 * the gated activations' (bench/log/gated.md); blocks stride over the
 * items. */
#define GRID_WAVES 8u

static BkResult kernel_init(BkPlan plan, const char *name, unsigned int v, unsigned int unroll,
                            struct convert_kernel *k)
{
    const struct bk_cuda_context *c = plan->ctx->impl;
    snprintf(k->name, sizeof k->name, "%s", name);
    BkResult res = bk_cuda_function(plan->ctx, BK_CUDA_MODULE_CONVERT, k->name, &k->fn);
    if (res != BK_SUCCESS)
        return res;
    fill_args(&plan->problem.convert, v, &k->args);

    int per_sm = 0;
    CUresult r = bk_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->fn,
                                                                   BK_CONVERT_BLOCK, 0);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "cuOccupancyMaxActiveBlocksPerMultiprocessor(%s)",
                             k->name);
    if (per_sm < 1)
        per_sm = 1;
    const uint64_t per_block = (uint64_t)BK_CONVERT_BLOCK * unroll;
    const uint64_t need = (k->args.count + per_block - 1) / per_block;
    const uint64_t most = (uint64_t)per_sm * (uint64_t)c->sm_count * GRID_WAVES;
    const uint64_t grid = need < most ? need : most;
    k->grid = (unsigned int)(grid ? grid : 1);
    return BK_SUCCESS;
}

_Static_assert(sizeof(struct bk_convert_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the convert parameter block must fit struct bk_cuda_kernel_launch");

static uint32_t convert_prepare(BkPlan plan, const struct bk_run_args *run,
                                struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct cuda_convert_plan *g = plan->impl;
    const struct convert_kernel *k = &g->strided;
    if (k->args.count == 0)
        return 0;
    const BkDeviceAddress in = run->binding[BK_CONVERT_BINDING_INPUT];
    const BkDeviceAddress out = run->binding[BK_CONVERT_BINDING_OUTPUT];
    if (g->has_vec && in % g->in_align == 0 && out % g->out_align == 0)
        k = &g->vec;
    struct bk_convert_args args = k->args;
    args.in = in;
    args.out = out;
    struct bk_cuda_kernel_launch *launch = &launches[0];
    memcpy(launch->params, &args, sizeof args);
    launch->param_size = sizeof args;
    launch->fn = k->fn;
    launch->grid = k->grid;
    launch->grid_y = launch->grid_z = 1;
    launch->shared_bytes = 0;
    launch->block = BK_CONVERT_BLOCK;
    launch->name = k->name;
    return 1;
}

BkResult bk_cuda_convert_select(BkPlan plan)
{
    const struct bk_convert_problem *p = &plan->problem.convert;
    const size_t types = sizeof type_info / sizeof type_info[0];
    if ((size_t)p->in_type >= types || !type_info[p->in_type].name ||
        (size_t)p->out_type >= types || !type_info[p->out_type].name)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: %s to %s has no CUDA kernel", plan->op_name,
                        bk_data_type_name(p->in_type), bk_data_type_name(p->out_type));
    const bool paired = type_info[p->in_type].paired && type_info[p->out_type].paired;

    BkResult res;
    struct cuda_convert_plan *g = bk_cuda_plan_new(plan, sizeof *g, convert_prepare, NULL, &res);
    if (!g)
        return res;

    struct bk_cuda_scope scope;
    res = bk_cuda_enter(plan->ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    const unsigned int is = type_info[p->in_type].size, os = type_info[p->out_type].size;
    const unsigned int v = 16 / (is > os ? is : os);
    char name[BK_MAX_KERNEL_NAME_SIZE];
    if (paired) {
        snprintf(name, sizeof name, "bk_convert_%s_%s_strided", type_info[p->in_type].name,
                 type_info[p->out_type].name);
        res = kernel_init(plan, name, 1, BK_CONVERT_UNROLL, &g->strided);
        if (res == BK_SUCCESS && vector_path_fits(p, v)) {
            snprintf(name, sizeof name, "bk_convert_%s_%s_vec", type_info[p->in_type].name,
                     type_info[p->out_type].name);
            res = kernel_init(plan, name, v, BK_CONVERT_UNROLL, &g->vec);
            g->has_vec = res == BK_SUCCESS;
            g->in_align = v * is;
            g->out_align = v * os;
        }
    } else {
        res = kernel_init(plan, "bk_convert_any_strided", 1, 1, &g->strided);
    }
    bk_cuda_leave(&scope);
    if (res != BK_SUCCESS)
        return res;

    const struct convert_kernel *shown = g->has_vec ? &g->vec : &g->strided;
    memcpy(plan->props.kernelName, shown->name, sizeof plan->props.kernelName);
    return BK_SUCCESS;
}
