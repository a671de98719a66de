/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activations on CUDA: choosing the kernel and launch shape for a
 * plan, and its parameter block for each run. Kernels are found by name in
 * the gated_forward and gated_backward modules:
 * bk_gated_<fwd|bwd>_<kind>_<type>_<path>.
 *
 * The vector path moves 16 bytes per access (V = 16 / element size); it
 * needs unit innermost strides, an innermost extent, outer strides and
 * gate offsets that are multiples of V, and 16-byte aligned addresses,
 * which are only known at launch: a plan that qualifies keeps the strided
 * kernel too and falls back to it for addresses that are not aligned. */
#include "cuda_internal.h"
#include "gated_kernel_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gated_kernel {
    CUfunction fn;
    unsigned int grid, grid_y;
    char name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_gated_args args;            /* addresses are filled in at launch */
};

struct cuda_gated_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    bool backward;
    bool has_vec;
    struct gated_kernel vec, strided;
};

static const char *const kind_names[] = {
    [BK_GATED_ACTIVATION_GLU] = "glu",
    [BK_GATED_ACTIVATION_REGLU] = "reglu",
    [BK_GATED_ACTIVATION_SWIGLU] = "swiglu",
    [BK_GATED_ACTIVATION_GEGLU] = "geglu",
    [BK_GATED_ACTIVATION_GEGLU_TANH] = "geglu_tanh",
};

static const struct {
    const char *name;
    unsigned int size;
} type_info[] = {
    [BK_DATA_TYPE_F32] = { "f32", 4 },
    [BK_DATA_TYPE_F16] = { "f16", 2 },
    [BK_DATA_TYPE_BF16] = { "bf16", 2 },
    [BK_DATA_TYPE_F64] = { "f64", 8 },
};

/* Fills the kernel parameters for items of v elements (v = 1: strided). */
static void fill_args(const struct bk_gated_problem *p, unsigned int v, struct bk_gated_args *a)
{
    memset(a, 0, sizeof *a);
    const uint32_t inner = p->rank - 1;
    uint64_t count = 1;
    a->rank = p->rank;
    for (uint32_t k = 0; k < p->rank; k++) {
        struct bk_gated_dim *d = &a->dim[k];
        int64_t scale = k == inner ? (int64_t)v : 1;
        d->extent = (uint64_t)(p->extent[k] / scale);
        bk_cuda_fastdiv_init(d->extent ? d->extent : 1, &d->magic, &d->shift);
        d->x_stride = p->x_stride[k] * scale;
        d->y_stride = p->y_stride[k] * scale;
        d->dx_stride = p->backward ? p->dx_stride[k] * scale : 0;
        count *= d->extent;
    }
    a->count = count;
    a->x_gate = p->x_gate_offset;
    a->dx_gate = p->backward ? p->dx_gate_offset : 0;
}

static bool vector_path_fits(const struct bk_gated_problem *p, int64_t v)
{
    const uint32_t inner = p->rank - 1;
    if (p->count == 0 || p->extent[inner] % v != 0)
        return false;
    if (p->x_stride[inner] != 1 || p->y_stride[inner] != 1 ||
        (p->backward && p->dx_stride[inner] != 1))
        return false;
    if (p->x_gate_offset % v != 0 || (p->backward && p->dx_gate_offset % v != 0))
        return false;
    for (uint32_t k = 0; k < inner; k++)
        if (p->x_stride[k] % v != 0 || p->y_stride[k] % v != 0 ||
            (p->backward && p->dx_stride[k] % v != 0))
            return false;
    return true;
}

/* Bytes a second the device's memory moves per SM (double data rate: two
 * transfers of the bus a memory clock), 0 where it does not say. */
static double bytes_per_sm(const struct bk_cuda_context *c)
{
    int mem_khz = 0, bus_bits = 0;
    if (bk_cu.cuDeviceGetAttribute(&mem_khz, BK_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
                                   c->device) != BK_CUDA_SUCCESS ||
        bk_cu.cuDeviceGetAttribute(&bus_bits, BK_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
                                   c->device) != BK_CUDA_SUCCESS || c->sm_count < 1)
        return 0;
    return 2.0 * 1e3 * mem_khz * (bus_bits / 8.0) / c->sm_count;
}

/* Devices whose memory moves FAST_BYTES_PER_SM or more a second per SM
 * (H200: 37 GB/s; H100 SXM: 25 GB/s) take the choices measured on the
 * H200 below, the others those measured on the H100. */
#define FAST_BYTES_PER_SM 30e9

/* The grid is this many "waves" of the blocks that fit on the device at
 * once, and blocks stride over the items (or, at most two dimensions,
 * over rows and a row's items: kernel_init). On an H100, 8 waves moved
 * 4-6% more bytes per second than 1 on most kernels; on an H200 a grid
 * of 32 waves (on bkbench's shapes, a block for each block's worth of
 * items: none strides) moved 1-2% more than 8 on the packed half-type
 * forward and f32 (bench/log/gated.md). BK_CUDA_GATED_WAVES overrides
 * it, for tuning with bkbench. */
static unsigned int grid_waves(const struct bk_cuda_context *c)
{
    const char *s = getenv("BK_CUDA_GATED_WAVES");
    long w = s ? strtol(s, NULL, 10) : 0;
    if (w >= 1 && w <= 1024)
        return (unsigned int)w;
    return bytes_per_sm(c) >= FAST_BYTES_PER_SM ? 32u : 8u;
}

/* The half types on contiguous rows: the generic vector kernels ("vec")
 * or the packed ones (kernels/gated_packed.cuh: fewer instructions per
 * element; "packed_l2" loads with an L2 prefetch hint). On an H200 the
 * generic forward is bound by instruction issue (bench/log/gated.md); on
 * an H100, with a third less bandwidth per SM, it reached 95-97% of the
 * copy. So the packed kernels are the default on the fast devices above,
 * the generic ones elsewhere. BK_CUDA_GATED_HALF=vec|packed|packed_l2
 * overrides it, for tuning with bkbench. */
static const char *const half_paths[] = { "vec", "packed", "packed_l2" };
static const char *half_path(const struct bk_cuda_context *c)
{
    const char *s = getenv("BK_CUDA_GATED_HALF");
    for (size_t i = 0; s && i < sizeof half_paths / sizeof half_paths[0]; i++)
        if (strcmp(s, half_paths[i]) == 0)
            return half_paths[i];
    return bytes_per_sm(c) >= FAST_BYTES_PER_SM ? half_paths[1] : half_paths[0];
}

static BkResult kernel_init(BkPlan plan, const char *path, unsigned int v, struct gated_kernel *k)
{
    const struct bk_gated_problem *p = &plan->problem.gated;
    const struct bk_cuda_context *c = plan->ctx->impl;
    snprintf(k->name, sizeof k->name, "bk_gated_%s_%s_%s_%s", p->backward ? "bwd" : "fwd",
             kind_names[p->kind], type_info[p->type].name, path);
    BkResult res = bk_cuda_function(plan->ctx,
                                    p->backward ? BK_CUDA_MODULE_GATED_BACKWARD
                                                : BK_CUDA_MODULE_GATED_FORWARD,
                                    k->name, &k->fn);
    if (res != BK_SUCCESS)
        return res;
    fill_args(p, v, &k->args);

    int per_sm = 0;
    CUresult r = bk_cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k->fn,
                                                                   BK_GATED_BLOCK, 0);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "cuOccupancyMaxActiveBlocksPerMultiprocessor(%s)",
                             k->name);
    if (per_sm < 1)
        per_sm = 1;
    const uint64_t per_block =
        (uint64_t)BK_GATED_BLOCK * BK_GATED_UNROLL(type_info[p->type].size, v);
    uint64_t need = (k->args.count + per_block - 1) / per_block;
    uint64_t most = (uint64_t)per_sm * (uint64_t)c->sm_count * grid_waves(c);
    uint64_t grid = need < most ? need : most;
    k->grid = (unsigned int)(grid ? grid : 1);
    k->grid_y = 1;
    /* At most two dimensions: a grid of rows (gated_kernel_args.h), as
     * many blocks in all. */
    if (p->rank <= 2 && k->args.count > 0) {
        const struct bk_gated_dim *item = &k->args.dim[p->rank - 1];
        const uint64_t rows = p->rank == 2 ? k->args.dim[0].extent : 1;
        uint64_t across = (item->extent + per_block - 1) / per_block;
        across = across < most ? across : most;
        uint64_t down = most / across;
        down = down < rows ? down : rows;
        down = down < 65535 ? down : 65535;
        k->grid = (unsigned int)across;
        k->grid_y = (unsigned int)(down ? down : 1);
        k->args.grid_rows = 1;
    }
    return BK_SUCCESS;
}

_Static_assert(sizeof(struct bk_gated_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the gated parameter block must fit struct bk_cuda_kernel_launch");

static uint32_t gated_prepare(BkPlan plan, const struct bk_run_args *run,
                              struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct cuda_gated_plan *g = plan->impl;
    const struct gated_kernel *k = &g->strided;
    if (k->args.count == 0)
        return 0;
    BkDeviceAddress x = run->binding[0], y = run->binding[1];
    BkDeviceAddress dx = g->backward ? run->binding[2] : 0;
    if (g->has_vec && ((x | y | dx) & 15u) == 0)
        k = &g->vec;
    struct bk_gated_args args = k->args;
    args.x = x;
    args.y = y;
    args.dx = dx;
    struct bk_cuda_kernel_launch *launch = &launches[0];
    memcpy(launch->params, &args, sizeof args);
    launch->param_size = sizeof args;
    launch->fn = k->fn;
    launch->grid = k->grid;
    launch->grid_y = k->grid_y;
    launch->grid_z = 1;
    launch->shared_bytes = 0;
    launch->block = BK_GATED_BLOCK;
    launch->name = k->name;
    return 1;
}

BkResult bk_cuda_gated_select(BkPlan plan)
{
    const struct bk_gated_problem *p = &plan->problem.gated;
    if ((size_t)p->kind >= sizeof kind_names / sizeof kind_names[0] || !kind_names[p->kind] ||
        (size_t)p->type >= sizeof type_info / sizeof type_info[0] || !type_info[p->type].name)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: kind %d with dataType %s has no CUDA kernel",
                        plan->op_name, (int)p->kind, bk_data_type_name(p->type));

    BkResult res;
    struct cuda_gated_plan *g = bk_cuda_plan_new(plan, sizeof *g, gated_prepare, NULL, &res);
    if (!g)
        return res;
    g->backward = p->backward;

    struct bk_cuda_scope scope;
    res = bk_cuda_enter(plan->ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    const unsigned int v = 16 / type_info[p->type].size;
    res = kernel_init(plan, "strided", 1, &g->strided);
    if (res == BK_SUCCESS && vector_path_fits(p, v)) {
        /* The packed kernels walk a grid of rows only (kernel_init). */
        const bool half = p->type == BK_DATA_TYPE_F16 || p->type == BK_DATA_TYPE_BF16;
        const char *path = half && p->rank <= 2 ? half_path(plan->ctx->impl) : "vec";
        res = kernel_init(plan, path, v, &g->vec);
        g->has_vec = res == BK_SUCCESS;
    }
    bk_cuda_leave(&scope);
    if (res != BK_SUCCESS)
        return res;

    const struct gated_kernel *shown = g->has_vec ? &g->vec : &g->strided;
    memcpy(plan->props.kernelName, shown->name, sizeof plan->props.kernelName);
    return BK_SUCCESS;
}
