/* SPDX-License-Identifier: Apache-2.0 */
/* 2:4 sparse weights on CUDA: conversions between a dense W and the
 * interchange format (with their report), prepare, and the prepared
 * layout's size. Kernels: module sparse24_convert (kernels/sparse24_convert.cu),
 * which follows the host backend's semantics exactly.
 *
 * A conversion plan launches three kernels per run: report_init, the
 * conversion (absent for an empty weight), report_finalize; see
 * kernels/sparse24_convert.cu for how the report is built between them. */
#include "cuda_sparse24.h"
#include "../checked.h"

#include <stdio.h>
#include <string.h>

_Static_assert(BK_SP24_CONVERSION_STRICT == (unsigned)BK_SPARSE24_COMPRESS_STRICT,
               "the kernels' copy of BkSparse24Conversion");
_Static_assert(BK_SP24_STATUS_TOO_MANY_NONZEROS == (unsigned)BK_SPARSE24_STATUS_TOO_MANY_NONZEROS &&
                   BK_SP24_STATUS_BAD_METADATA == (unsigned)BK_SPARSE24_STATUS_BAD_METADATA,
               "the kernels' copy of BkSparse24Status");
_Static_assert(sizeof(struct bk_sp24_convert_args) <= BK_CUDA_MAX_PARAM_BYTES &&
                   sizeof(struct bk_sp24_prepare_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "parameter blocks fit struct bk_cuda_kernel_launch");

/* ---- Shared helpers ------------------------------------------------------- */

const char *bk_cuda_sp24_type_name(BkDataType type)
{
    switch (type) {
    case BK_DATA_TYPE_F32: return "f32";
    case BK_DATA_TYPE_F16: return "f16";
    case BK_DATA_TYPE_BF16: return "bf16";
    case BK_DATA_TYPE_F64: return "f64";
    default: return NULL;
    }
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
    return (v + to - 1) / to * to;
}

bool bk_cuda_sp24_layout(BkDataType type, int64_t m, int64_t k, struct bk_cuda_sp24_layout *l)
{
    memset(l, 0, sizeof *l);
    if (m < 0 || k < 0 || k % 8 || m > INT64_MAX / 2 || k > INT64_MAX / 2)
        return false;
    uint64_t values, meta;
    switch (type) {
    case BK_DATA_TYPE_F16:
    case BK_DATA_TYPE_BF16: {
        /* Tiles of 16 x 32 over W padded to whole CTA tiles. */
        l->mts = (int64_t)(round_up((uint64_t)m, BK_SP24_PAD_M) / 16);
        l->kbs = (int64_t)(round_up((uint64_t)k, BK_SP24_PAD_K) / 32);
        uint64_t tiles;
        if (__builtin_mul_overflow((uint64_t)l->mts, (uint64_t)l->kbs, &tiles) ||
            __builtin_mul_overflow(tiles, (uint64_t)BK_SP24_TILE_BYTES, &values) ||
            __builtin_mul_overflow(tiles, (uint64_t)BK_SP24_META_BYTES, &meta))
            return false;
        l->meta_offset = values;
        break;
    }
    case BK_DATA_TYPE_F32:
        /* The interchange format packed, as the host backend keeps it. */
        if (__builtin_mul_overflow((uint64_t)m, (uint64_t)(k / 2) * 4, &values) ||
            __builtin_mul_overflow((uint64_t)m, (uint64_t)(k / 8) * 2, &meta))
            return false;
        l->meta_offset = round_up(values, 16);
        break;
    default:
        return false;
    }
    return !__builtin_add_overflow(l->meta_offset, meta, &l->size) && l->size <= INT64_MAX;
}

uint64_t bk_cuda_sparse24_prepared_size(BkContext ctx, BkDataType type, int64_t m, int64_t k)
{
    struct bk_cuda_sp24_layout l;
    (void)ctx; /* the same layout on every sm_80+ device, for now */
    return bk_cuda_sp24_layout(type, m, k, &l) ? l.size : 0;
}

/* Enough blocks to fill the device several times over; a grid-stride loop
 * takes the rest. */
#define BLOCKS_PER_SM 16u
unsigned int bk_cuda_sp24_blocks(BkContext ctx, uint64_t items, unsigned int block)
{
    const struct bk_cuda_context *c = ctx->impl;
    const uint64_t most = (uint64_t)(c->sm_count > 0 ? c->sm_count : 1) * BLOCKS_PER_SM;
    const uint64_t need = (items + block - 1) / block;
    return (unsigned int)(need < 1 ? 1 : need < most ? need : most);
}

/* ---- Conversions ------------------------------------------------------------ */

static const char *const conversion_names[] = {
    [BK_SPARSE24_COMPRESS_STRICT] = "compress_strict",
    [BK_SPARSE24_COMPRESS_PRUNE] = "compress_prune",
    [BK_SPARSE24_DECOMPRESS] = "decompress",
    [BK_SPARSE24_VALIDATE] = "validate",
};

#define REPORT_INIT "bk_sp24_report_init"
#define REPORT_FINALIZE "bk_sp24_report_finalize"

struct convert_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    CUfunction init, convert, finalize;
    unsigned int grid;                    /* of the conversion; 0: an empty weight */
    char name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_sp24_convert_args args;     /* addresses are filled in per run */
};

static uint32_t convert_prepare(BkPlan plan, const struct bk_run_args *run,
                                struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct convert_plan *cp = plan->impl;
    struct bk_sp24_convert_args a = cp->args;
    a.dense = run->binding[BK_SPARSE24_CONVERT_BINDING_DENSE];
    a.values = run->binding[BK_SPARSE24_CONVERT_BINDING_VALUES];
    a.metadata = run->binding[BK_SPARSE24_CONVERT_BINDING_METADATA];
    a.report = run->binding[BK_SPARSE24_CONVERT_BINDING_REPORT];
    uint32_t n = 0;
    bk_cuda_launch_set(&launches[n++], cp->init, 1, 1, 1, 32, 0, REPORT_INIT, &a, sizeof a);
    if (cp->grid)
        bk_cuda_launch_set(&launches[n++], cp->convert, cp->grid, 1, 1, BK_SP24_CONVERT_BLOCK, 0,
                            cp->name, &a, sizeof a);
    bk_cuda_launch_set(&launches[n++], cp->finalize, 1, 1, 1, 32, 0, REPORT_FINALIZE, &a, sizeof a);
    return n;
}

BkResult bk_cuda_sparse24_convert_select(BkPlan plan)
{
    const struct bk_sparse24_convert_problem *p = &plan->problem.sparse24_convert;
    const bool validate = p->conversion == BK_SPARSE24_VALIDATE;
    const char *type = bk_cuda_sp24_type_name(p->type);
    if ((unsigned)p->conversion >= sizeof conversion_names / sizeof conversion_names[0] ||
        (!validate && !type))
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the CUDA backend cannot convert %s",
                        plan->op_name, bk_data_type_name(p->type));
    BkResult res;
    struct convert_plan *cp = bk_cuda_plan_new(plan, sizeof *cp, convert_prepare, NULL, &res);
    if (!cp)
        return res;
    if (validate)
        snprintf(cp->name, sizeof cp->name, "bk_sp24_validate");
    else
        snprintf(cp->name, sizeof cp->name, "bk_sp24_%s_%s", conversion_names[p->conversion],
                 type);

    struct bk_sp24_convert_args *a = &cp->args;
    a->dense_rs = validate ? 0 : p->dense.row_stride;
    a->dense_cs = validate ? 0 : p->dense.col_stride;
    a->values_rs = validate ? 0 : p->values.row_stride;
    a->values_cs = validate ? 0 : p->values.col_stride;
    a->meta_rs = p->metadata.row_stride;
    a->meta_cs = p->metadata.col_stride;
    a->m = p->m;
    a->groups = p->k / 4;
    a->conversion = (uint32_t)p->conversion;
    bool ovf = false;
    const uint64_t items = bk_mul_u64((uint64_t)p->m, (uint64_t)(p->k / 8), &ovf);
    if (ovf)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: m x k / 8 = %lld x %lld overflows 64 bits",
                        plan->op_name, (long long)p->m, (long long)(p->k / 8));
    cp->grid = items ? bk_cuda_sp24_blocks(plan->ctx, items, BK_SP24_CONVERT_BLOCK) : 0;

    const char *const names[] = { REPORT_INIT, cp->name, REPORT_FINALIZE };
    CUfunction *const fns[] = { &cp->init, &cp->convert, &cp->finalize };
    res = bk_cuda_find_functions(plan, BK_CUDA_MODULE_SPARSE24_CONVERT, names, fns, 3);
    if (res != BK_SUCCESS)
        return res;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s", cp->name);
    return BK_SUCCESS;
}

/* ---- Prepare ------------------------------------------------------------------ */

struct prepare_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    CUfunction fn;
    unsigned int grid;                    /* 0: an empty weight */
    char name[BK_MAX_KERNEL_NAME_SIZE];
    struct bk_sp24_prepare_args args;
};

static uint32_t prepare_prepare(BkPlan plan, const struct bk_run_args *run,
                                struct bk_cuda_kernel_launch launches[BK_CUDA_MAX_LAUNCHES])
{
    const struct prepare_plan *pp = plan->impl;
    if (!pp->grid)
        return 0;
    struct bk_sp24_prepare_args a = pp->args;
    a.values = run->binding[BK_SPARSE24_PREPARE_BINDING_VALUES];
    a.metadata = run->binding[BK_SPARSE24_PREPARE_BINDING_METADATA];
    a.prepared = run->binding[BK_SPARSE24_PREPARE_BINDING_PREPARED];
    bk_cuda_launch_set(&launches[0], pp->fn, pp->grid, 1, 1, BK_SP24_CONVERT_BLOCK, 0, pp->name,
                        &a, sizeof a);
    return 1;
}

BkResult bk_cuda_sparse24_prepare_select(BkPlan plan)
{
    const struct bk_sparse24_prepare_problem *p = &plan->problem.sparse24_prepare;
    struct bk_cuda_sp24_layout l;
    if (!bk_cuda_sp24_layout(p->type, p->m, p->k, &l))
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the CUDA backend cannot prepare a %s weight",
                        plan->op_name, bk_data_type_name(p->type));
    BkResult res;
    struct prepare_plan *pp = bk_cuda_plan_new(plan, sizeof *pp, prepare_prepare, NULL, &res);
    if (!pp)
        return res;
    const bool tiles = p->type != BK_DATA_TYPE_F32;
    snprintf(pp->name, sizeof pp->name, "bk_sp24_prepare_%s", tiles ? "tiles" : "f32");
    struct bk_sp24_prepare_args *a = &pp->args;
    a->values_rs = p->values.row_stride;
    a->values_cs = p->values.col_stride;
    a->meta_rs = p->metadata.row_stride;
    a->meta_cs = p->metadata.col_stride;
    a->m = p->m;
    a->k = p->k;
    a->mts = l.mts;
    a->kbs = l.kbs;
    a->meta_offset = l.meta_offset;
    /* Threads: a lane of each tile, or a metadata element of each row plus
     * 4 bytes of the gap before the metadata. */
    bool ovf = false;
    const uint64_t elements = bk_mul_u64((uint64_t)p->m, (uint64_t)(p->k / 8), &ovf);
    const uint64_t items =
        p->m == 0 || p->k == 0 ? 0
        : tiles ? bk_mul_u64(bk_mul_u64((uint64_t)l.mts, (uint64_t)l.kbs, &ovf), 32, &ovf)
                : bk_add_u64(elements,
                             (l.meta_offset - bk_mul_u64(elements, 16, &ovf)) / 4, &ovf);
    if (ovf)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the prepared weight's threads for m = %lld, "
                        "k = %lld overflow 64 bits", plan->op_name, (long long)p->m,
                        (long long)p->k);
    pp->grid = items ? bk_cuda_sp24_blocks(plan->ctx, items, BK_SP24_CONVERT_BLOCK) : 0;

    const char *const names[] = { pp->name };
    CUfunction *const fns[] = { &pp->fn };
    res = bk_cuda_find_functions(plan, BK_CUDA_MODULE_SPARSE24_CONVERT, names, fns, 1);
    if (res != BK_SUCCESS)
        return res;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%s", pp->name);
    return BK_SUCCESS;
}
