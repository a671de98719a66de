/* SPDX-License-Identifier: Apache-2.0 */
/* Dense GEMM on the host: struct bk_gemm_problem -> a job of the blocked
 * engine (host_gemm_engine.c) with the dense packers, run on the BLAS
 * where the build has one (host_blas.c). */
#include "host_blas.h"

#include <stdio.h>

static enum host_gemm_compute compute_of(BkDataType ab_type)
{
    return ab_type == BK_DATA_TYPE_F64 ? HOST_GEMM_F64 : HOST_GEMM_F32;
}

/* The plan's problem as a job; without run arguments (plan creation) its
 * addresses are 0. */
static struct host_gemm_job job_of(BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    const BkDeviceAddress none[BK_GEMM_BINDING_BIAS + 1] = { 0 };
    const BkDeviceAddress *bound = args ? args->binding : none;
    const host_gemm_pack_fn pack = host_gemm_dense_packer(p->ab_type);
    struct host_gemm_job job = {
        .compute = compute_of(p->ab_type),
        .m = p->m, .n = p->n, .k = p->k, .batch = p->batch,
        .a = {
            .pack = pack,
            .type = p->ab_type,
            .base = (const char *)(uintptr_t)bound[BK_GEMM_BINDING_A],
            .rows = p->m,
            .row_stride = p->a.row_stride, .col_stride = p->a.col_stride,
            .batch_stride = p->a.batch_stride,
        },
        /* B^T [n, k]: B's strides swapped. */
        .bt = {
            .pack = pack,
            .type = p->ab_type,
            .base = (const char *)(uintptr_t)bound[BK_GEMM_BINDING_B],
            .rows = p->n,
            .row_stride = p->b.col_stride, .col_stride = p->b.row_stride,
            .batch_stride = p->b.batch_stride,
        },
        .d = host_gemm_output_of(bound[BK_GEMM_BINDING_D], &p->d),
        .bias = p->has_bias ? (const char *)(uintptr_t)bound[BK_GEMM_BINDING_BIAS] : NULL,
        /* beta == 0: C is not read, so a NaN there cannot reach D. */
        .read_c = p->has_c && p->beta != 0,
        .activation = p->activation,
        .alpha = p->alpha,
        .beta = p->beta,
    };
    if (job.read_c)
        job.c = host_gemm_output_of(bound[BK_GEMM_BINDING_C], &p->c);
    return job;
}

static BkResult gemm_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    (void)queue;
    if (p->m == 0 || p->n == 0 || p->batch == 0)
        return BK_SUCCESS;
    const struct host_gemm_job job = job_of(plan, args);
    if (host_blas_takes(&job))
        host_blas_run(&job, (void *)(uintptr_t)args->workspace);
    else
        host_gemm_run(&job, (void *)(uintptr_t)args->workspace, plan->props.workspaceSize);
    return BK_SUCCESS;
}

BkResult bk_host_gemm_select(BkPlan plan)
{
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    if (!host_gemm_dense_packer(p->ab_type) || !host_gemm_row_loader(p->cd_type))
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the host backend has no GEMM for %s",
                        plan->op_name, bk_data_type_name(p->ab_type));
    /* tf32 is allowed, not required: the host computes exact f32. */
    const struct host_gemm_job job = job_of(plan, NULL);
    const bool blas = p->m > 0 && p->n > 0 && p->batch > 0 && host_blas_takes(&job);
    uint64_t ws = blas ? host_blas_workspace_size(&job)
                       : host_gemm_workspace_size(job.compute, p->m, p->n, p->k, p->batch);
    if (ws > plan->props.workspaceSize)
        plan->props.workspaceSize = ws;
    plan->launch = gemm_launch;
    if (p->ab_type == p->cd_type)
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_gemm_%s_%s",
                 host_gemm_type_name(p->ab_type), host_blas_isa(&job));
    else
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_gemm_%s_%s_%s",
                 host_gemm_type_name(p->ab_type), host_gemm_type_name(p->cd_type),
                 host_blas_isa(&job));
    return BK_SUCCESS;
}
