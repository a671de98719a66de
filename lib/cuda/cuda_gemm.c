/* SPDX-License-Identifier: Apache-2.0 */
/* Dense GEMM on CUDA through cuBLASLt (loaded by cuda_cublaslt.c on the
 * first GEMM plan).
 *
 * Mapping: see cuda_gemm.h.
 *
 * What cuBLASLt cannot do, kernels of module gemm_epilogue
 * (kernels/gemm_epilogue.cu) do around it; wherever the mapping above works,
 * the plan is that one cuBLASLt call and nothing else.
 *  - C not stored in D's order (cuBLASLt cannot transpose C): C is first
 *    copied into D, and cuBLASLt runs in place with D as its C.
 *  - An epilogue with no cuBLASLt algorithm (a column-major D with a bias
 *    needs row-order layouts, for which cuBLASLt 12/13 has none on H100):
 *    cuBLASLt computes alpha A B + beta C into D in D's own order with the
 *    DEFAULT epilogue, then a kernel applies act(D + bias) in place. A
 *    half-type D is then rounded once more than on the direct path (the
 *    sum before the bias): the plan still promises F32 accumulation only.
 * Both may combine (copy, cuBLASLt, bias and activation: three launches).
 *
 * Alignment. cuBLASLt's heuristics assume 256-byte aligned operands unless
 * told otherwise; libbk's run-time checks promise only element alignment.
 * A plan keeps a general algorithm (element alignment) and, when every
 * leading dimension and batch stride is a multiple of 16 bytes, a fast one
 * for 16-byte aligned addresses; each run picks by the bound addresses.
 * A fixed algorithm gives the same bits run to run (cuBLASLt with a
 * caller-owned workspace), so results are deterministic for given inputs
 * at addresses of the same class (all 16-byte aligned or not); the two
 * algorithms may round differently.
 *
 * k == 0 is run as k == 1 with zeroed A and B placed at the front of the
 * workspace, so that D = act(beta C + bias) comes from the same epilogue
 * (cuBLASLt's, or the split one above). */
#include "cuda_gemm.h"

#include "gemm_epilogue_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(BK_GEMM_EPI_RELU == (unsigned)BK_GEMM_ACTIVATION_RELU &&
                   BK_GEMM_EPI_GELU_TANH == (unsigned)BK_GEMM_ACTIVATION_GELU_TANH,
               "the epilogue kernels' copy of BkGemmActivation");
_Static_assert(sizeof(struct bk_gemm_epi_args) <= BK_CUDA_MAX_PARAM_BYTES,
               "the epilogue parameter block fits struct bk_cuda_kernel_launch");

struct lt_choice {
    bool found;
    bk_lt_algo algo;
    uint64_t workspace;
    int32_t id;
};

struct cuda_gemm_plan {
    struct bk_cuda_plan base;             /* first: see struct bk_cuda_plan */
    const struct bk_cublaslt *lt;         /* NULL until loaded: then no cuBLASLt object exists */
    bk_lt_handle handle;                  /* the context's */
    bk_lt_matmul_desc desc;
    bk_lt_layout layout[OPERANDS];
    bk_lt_pref pref;                      /* only while the plan is made */
    pthread_mutex_t bias_lock;            /* guards the descriptor's bias pointer */
    bool bias_lock_ready;
    bool empty, swap, use_c, has_fast;
    bool has_bias;                        /* cuBLASLt adds the bias (its epilogue) */
    BkGemmActivation lt_activation;       /* what cuBLASLt's epilogue applies */
    bool copy_c;                          /* C is copied into D first: cuBLASLt's C is D */
    bool split;                           /* bias and activation by bias_act after cuBLASLt */
    CUfunction copy_fn, epi_fn;           /* the gemm_epilogue kernels of copy_c and split */
    unsigned int epi_grid;                /* blocks of either */
    char copy_name[32], epi_name[32];
    struct bk_gemm_epi_args copy_args, epi_args; /* addresses filled in per run */
    uint64_t zero_bytes;                  /* k == 0: zeroed A, then B, from the workspace */
    uint64_t zero_b_offset;
    uint64_t lt_workspace;                /* bytes for cuBLASLt, after the zeros */
    union {
        float f;
        double d;
    } alpha, beta;                        /* of the scale type: host pointer mode */
    struct lt_choice fast, general;
};

static const struct {
    BkDataType type;
    int lt_type;
    const char *name;
} types[] = {
    { BK_DATA_TYPE_F32, BK_LT_R_32F, "f32" },
    { BK_DATA_TYPE_F16, BK_LT_R_16F, "f16" },
    { BK_DATA_TYPE_BF16, BK_LT_R_16BF, "bf16" },
    { BK_DATA_TYPE_F64, BK_LT_R_64F, "f64" },
};

static int lt_type(BkDataType t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].type == t)
            return types[i].lt_type;
    return -1;
}

static const char *type_name(BkDataType t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].type == t)
            return types[i].name;
    return "?";
}

/* [activation][has bias]: cuBLASLt's GELU is the tanh form. */
static const struct {
    uint32_t epilogue;
    const char *name;
} epilogues[3][2] = {
    [BK_GEMM_ACTIVATION_NONE] = { { BK_LT_EPILOGUE_DEFAULT, "DEFAULT" },
                                  { BK_LT_EPILOGUE_BIAS, "BIAS" } },
    [BK_GEMM_ACTIVATION_RELU] = { { BK_LT_EPILOGUE_RELU, "RELU" },
                                  { BK_LT_EPILOGUE_RELU_BIAS, "RELU_BIAS" } },
    [BK_GEMM_ACTIVATION_GELU_TANH] = { { BK_LT_EPILOGUE_GELU, "GELU" },
                                       { BK_LT_EPILOGUE_GELU_BIAS, "GELU_BIAS" } },
};

static BkResult lt_check(bk_lt_status s, const char *who, const char *call)
{
    return s == BK_LT_STATUS_SUCCESS ? BK_SUCCESS : bk_lt_error(s, BK_SUCCESS, "%s: %s", who, call);
}

static BkResult set_desc(BkPlan plan, int attr, const void *value, size_t size, const char *name)
{
    const struct cuda_gemm_plan *g = plan->impl;
    return lt_check(g->lt->cublasLtMatmulDescSetAttribute(g->desc, attr, value, size),
                    plan->op_name, name);
}

static BkResult set_pref(BkPlan plan, int attr, const void *value, size_t size, const char *name)
{
    const struct cuda_gemm_plan *g = plan->impl;
    return lt_check(g->lt->cublasLtMatmulPreferenceSetAttribute(g->pref, attr, value, size),
                    plan->op_name, name);
}

static BkResult make_layouts(BkPlan plan, const struct lt_mapping *m)
{
    struct cuda_gemm_plan *g = plan->impl;
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    static const char *const names[OPERANDS] = { "A", "B", "C", "D" };
    const int32_t batch = (int32_t)p->batch;
    char call[96];
    for (int i = 0; i < OPERANDS; i++) {
        const struct lt_view *v = &m->view[i];
        const int type = lt_type(i < C ? p->ab_type : p->cd_type);
        const struct {
            int attr;
            const void *value;
            size_t size;
            const char *name;
        } attrs[] = {
            { BK_LT_LAYOUT_ORDER, &m->order, sizeof m->order, "ORDER" },
            { BK_LT_LAYOUT_BATCH_COUNT, &batch, sizeof batch, "BATCH_COUNT" },
            { BK_LT_LAYOUT_STRIDED_BATCH_OFFSET, &v->batch_stride, sizeof v->batch_stride,
              "STRIDED_BATCH_OFFSET" },
        };
        snprintf(call, sizeof call, "cublasLtMatrixLayoutCreate (cuBLASLt's %s)", names[i]);
        BkResult res = lt_check(g->lt->cublasLtMatrixLayoutCreate(&g->layout[i], type, v->rows,
                                                                   v->cols, v->ld),
                                plan->op_name, call);
        for (size_t k = 0; res == BK_SUCCESS && k < sizeof attrs / sizeof attrs[0]; k++) {
            snprintf(call, sizeof call, "cublasLtMatrixLayoutSetAttribute(%s) (cuBLASLt's %s)",
                     attrs[k].name, names[i]);
            res = lt_check(g->lt->cublasLtMatrixLayoutSetAttribute(g->layout[i], attrs[k].attr,
                                                                    attrs[k].value, attrs[k].size),
                           plan->op_name, call);
        }
        if (res != BK_SUCCESS)
            return res;
    }
    return BK_SUCCESS;
}

/* Split-K that sums partial products in the output type would round the
 * sums of an F16 or BF16 D to that type, against the plan's promise of F32
 * sums: only compute-type reductions (or none) are taken then. Every
 * cuBLASLt reduction scheme is ordered (in place behind counters, or a
 * separate pass), so none breaks determinism for a fixed algorithm. */
static bool sums_in_compute_type(const struct bk_cublaslt *lt, const bk_lt_algo *algo)
{
    int32_t splits = 1;
    uint32_t scheme = 0;
    size_t written = 0;
    if (lt->cublasLtMatmulAlgoConfigGetAttribute(algo, BK_LT_ALGO_CONFIG_SPLITK_NUM, &splits,
                                                 sizeof splits, &written) != BK_LT_STATUS_SUCCESS ||
        lt->cublasLtMatmulAlgoConfigGetAttribute(algo, BK_LT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme,
                                                 sizeof scheme, &written) != BK_LT_STATUS_SUCCESS)
        return false;
    return splits <= 1 || scheme == BK_LT_REDUCTION_COMPUTE_TYPE;
}

/* The best algorithm for operands aligned to align bytes (A, B, C, D and
 * the bias, which is D's type); not found is no error here. *status keeps
 * why nothing was found, for the caller's message. */
static BkResult heuristic(BkPlan plan, const uint32_t align[OPERANDS], struct lt_choice *out,
                          bk_lt_status *status)
{
    struct cuda_gemm_plan *g = plan->impl;
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    const bool narrow = p->cd_type == BK_DATA_TYPE_F16 || p->cd_type == BK_DATA_TYPE_BF16;
    BkResult res = BK_SUCCESS;
    out->found = false;
    for (int i = 0; i < OPERANDS && res == BK_SUCCESS; i++)
        res = set_pref(plan, BK_LT_PREF_MIN_ALIGNMENT_A_BYTES + i, &align[i], sizeof align[i],
                       "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
    if (res == BK_SUCCESS && g->has_bias) {
        /* Not dereferenced by the heuristic, which reads its alignment. */
        const void *bias = (const void *)(uintptr_t)align[D];
        res = set_desc(plan, BK_LT_DESC_BIAS_POINTER, &bias, sizeof bias,
                       "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
    }
    /* The best acceptable of the heuristic's first 8; for narrow outputs
     * when none is, those of a search restricted to compute-type
     * reductions (which the mask alone might not give: whether it keeps
     * the algorithms without split-K is not documented). */
    static const uint32_t masks[] = { BK_LT_REDUCTION_MASK, BK_LT_REDUCTION_COMPUTE_TYPE };
    for (size_t pass = 0; pass < (narrow ? 2u : 1u) && res == BK_SUCCESS && !out->found; pass++) {
        res = set_pref(plan, BK_LT_PREF_REDUCTION_SCHEME_MASK, &masks[pass], sizeof masks[pass],
                       "cublasLtMatmulPreferenceSetAttribute(REDUCTION_SCHEME_MASK)");
        if (res != BK_SUCCESS)
            break;
        bk_lt_heuristic results[8];
        int count = 0;
        memset(results, 0, sizeof results);
        bk_lt_status s = g->lt->cublasLtMatmulAlgoGetHeuristic(
            g->handle, g->desc, g->layout[A], g->layout[B], g->layout[C], g->layout[D], g->pref,
            (int)(sizeof results / sizeof results[0]), results, &count);
        if (s != BK_LT_STATUS_SUCCESS) {
            /* No algorithm for this combination: not found. */
            *status = s;
            BkResult mapped = bk_lt_result(s);
            if (mapped != BK_ERROR_UNSUPPORTED && mapped != BK_ERROR_INVALID_ARGUMENT)
                res = bk_lt_error(s, BK_SUCCESS, "%s: cublasLtMatmulAlgoGetHeuristic",
                                  plan->op_name);
            continue;
        }
        for (int i = 0; i < count && !out->found; i++) {
            if (results[i].state != BK_LT_STATUS_SUCCESS ||
                (narrow && !sums_in_compute_type(g->lt, &results[i].algo)))
                continue;
            out->found = true;
            out->algo = results[i].algo;
            out->workspace = results[i].workspace_size;
            size_t written = 0;
            out->id = -1;
            (void)g->lt->cublasLtMatmulAlgoConfigGetAttribute(&results[i].algo,
                                                              BK_LT_ALGO_CONFIG_ID, &out->id,
                                                              sizeof out->id, &written);
        }
        if (!out->found)
            *status = BK_LT_STATUS_NOT_SUPPORTED;
    }
    return res;
}

static uint64_t workspace_limit(void)
{
    const char *s = getenv("BK_CUBLASLT_WORKSPACE_LIMIT");
    if (s && *s >= '0' && *s <= '9') {
        char *end = NULL;
        unsigned long long v = strtoull(s, &end, 10);
        if (end && *end == '\0')
            return v;
    }
    return 32u << 20;
}

/* Descriptors, layouts and both algorithms for cuBLASLt's epilogue
 * (g->lt_activation, g->has_bias); the context is current. *no_algorithm:
 * failed only because the heuristic found none. */
static BkResult build(BkPlan plan, const struct lt_mapping *m, bool *no_algorithm)
{
    struct cuda_gemm_plan *g = plan->impl;
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    const struct bk_cublaslt *lt = g->lt;
    const char *who = plan->op_name;
    BkResult res = bk_cublaslt_handle(plan->ctx, lt, &g->handle);
    if (res != BK_SUCCESS)
        return res;

    const bool f64 = p->ab_type == BK_DATA_TYPE_F64;
    const int compute = f64 ? BK_LT_COMPUTE_64F
                            : p->tf32 ? BK_LT_COMPUTE_32F_FAST_TF32 : BK_LT_COMPUTE_32F;
    if ((res = lt_check(lt->cublasLtMatmulDescCreate(&g->desc, compute,
                                                     f64 ? BK_LT_R_64F : BK_LT_R_32F),
                        who, "cublasLtMatmulDescCreate")) != BK_SUCCESS)
        return res;
    const int32_t trans_a = m->view[A].op, trans_b = m->view[B].op;
    const uint32_t epilogue = epilogues[g->lt_activation][g->has_bias].epilogue;
    const int32_t bias_type = lt_type(p->cd_type);
    if ((res = set_desc(plan, BK_LT_DESC_TRANSA, &trans_a, sizeof trans_a,
                        "cublasLtMatmulDescSetAttribute(TRANSA)")) != BK_SUCCESS ||
        (res = set_desc(plan, BK_LT_DESC_TRANSB, &trans_b, sizeof trans_b,
                        "cublasLtMatmulDescSetAttribute(TRANSB)")) != BK_SUCCESS ||
        (res = set_desc(plan, BK_LT_DESC_EPILOGUE, &epilogue, sizeof epilogue,
                        "cublasLtMatmulDescSetAttribute(EPILOGUE)")) != BK_SUCCESS ||
        (g->has_bias &&
         (res = set_desc(plan, BK_LT_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type,
                         "cublasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)")) != BK_SUCCESS) ||
        (res = make_layouts(plan, m)) != BK_SUCCESS)
        return res;

    const uint64_t limit = workspace_limit();
    if ((res = lt_check(lt->cublasLtMatmulPreferenceCreate(&g->pref), who,
                        "cublasLtMatmulPreferenceCreate")) != BK_SUCCESS ||
        (res = set_pref(plan, BK_LT_PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit,
                        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)")) != BK_SUCCESS)
        return res;

    const uint32_t ab = (uint32_t)bk_data_type_size(p->ab_type);
    const uint32_t cd = (uint32_t)bk_data_type_size(p->cd_type);
    const uint32_t general[OPERANDS] = { ab, ab, cd, cd }, fast[OPERANDS] = { 16, 16, 16, 16 };
    bk_lt_status why = BK_LT_STATUS_NOT_SUPPORTED;
    bool steps16 = true;
    for (int i = 0; i < OPERANDS; i++)
        steps16 = steps16 && bk_cuda_gemm_steps_aligned16(&m->view[i], i < C ? ab : cd);
    if ((res = heuristic(plan, general, &g->general, &why)) != BK_SUCCESS ||
        (steps16 && (res = heuristic(plan, fast, &g->fast, &why)) != BK_SUCCESS))
        return res;
    (void)lt->cublasLtMatmulPreferenceDestroy(g->pref);
    g->pref = NULL;

    *no_algorithm = !g->general.found && !g->fast.found;
    if (*no_algorithm)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s: cuBLASLt %zu.%zu has no algorithm for %s x %s -> %s, %s%s, epilogue "
                        "%s, m = %lld, n = %lld, k = %lld, batch = %lld on %s "
                        "(cublasLtMatmulAlgoGetHeuristic: %s)",
                        who, lt->version / 10000, lt->version / 100 % 100, type_name(p->ab_type),
                        type_name(p->ab_type), type_name(p->cd_type),
                        m->order == BK_LT_ORDER_ROW ? "row-order layouts (column-major d with a bias)"
                                                    : "column-order layouts",
                        p->tf32 ? ", TF32" : "", epilogues[g->lt_activation][g->has_bias].name,
                        (long long)p->m, (long long)p->n, (long long)p->k, (long long)p->batch,
                        plan->ctx->props.name, bk_lt_status_name(why));
    if (!g->general.found) {
        /* Only 16-byte aligned operands run: the run-time checks say so. */
        static const uint32_t slots[] = { BK_GEMM_BINDING_A, BK_GEMM_BINDING_B, BK_GEMM_BINDING_C,
                                          BK_GEMM_BINDING_D, BK_GEMM_BINDING_BIAS };
        for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++)
            if (plan->slot[slots[i]].span && plan->slot[slots[i]].alignment < 16)
                plan->slot[slots[i]].alignment = 16;
        g->general = g->fast;
    }
    g->has_fast = g->fast.found;
    g->lt_workspace = g->general.workspace;
    if (g->has_fast && g->fast.workspace > g->lt_workspace)
        g->lt_workspace = g->fast.workspace;
    return BK_SUCCESS;
}

/* The failure of a run: while the stream is being captured nothing runs,
 * so a failed launch then broke a capture rule and lost no device. */
static BkResult run_error(bk_lt_status s, CUstream stream, uint32_t cmd_index, const char *call)
{
    int capture = BK_CU_STREAM_CAPTURE_STATUS_NONE;
    BkResult forced = BK_SUCCESS;
    if (bk_lt_result(s) == BK_ERROR_DEVICE_LOST &&
        bk_cu.cuStreamIsCapturing(stream, &capture) == BK_CUDA_SUCCESS &&
        capture != BK_CU_STREAM_CAPTURE_STATUS_NONE)
        forced = BK_ERROR_INVALID_STATE;
    return bk_lt_error(s, forced, "bkQueueSubmit: command %u, %s", cmd_index, call);
}

/* Launches a gemm_epilogue kernel with a (this run's addresses filled in):
 * through the plan's cached graph for one-time submits, directly into a
 * stream being captured (bk_cuda_launch_cached checks). */
static BkResult launch_epilogue(BkPlan plan, CUfunction fn, const char *name, unsigned int grid,
                                const struct bk_gemm_epi_args *a, CUstream stream,
                                uint32_t cmd_index)
{
    struct bk_cuda_kernel_launch l;
    l.fn = fn;
    l.grid = grid;
    l.grid_y = l.grid_z = 1;
    l.block = BK_GEMM_EPI_BLOCK;
    l.shared_bytes = 0;
    l.name = name;
    l.param_size = sizeof *a;
    memcpy(l.params, a, sizeof *a);
    return bk_cuda_launch_cached(plan, &l, stream, cmd_index);
}

static BkResult gemm_enqueue(BkPlan plan, const struct bk_run_args *args, CUstream stream,
                             uint32_t cmd_index)
{
    struct cuda_gemm_plan *g = plan->impl;
    if (g->empty)
        return BK_SUCCESS;
    BkDeviceAddress addr[OPERANDS] = {
        [A] = args->binding[BK_GEMM_BINDING_A],
        [B] = args->binding[BK_GEMM_BINDING_B],
        [D] = args->binding[BK_GEMM_BINDING_D],
    };
    addr[C] = g->use_c && !g->copy_c ? args->binding[BK_GEMM_BINDING_C] : addr[D];
    if (g->copy_c) {
        struct bk_gemm_epi_args copy = g->copy_args;
        copy.dst = addr[D];
        copy.src = args->binding[BK_GEMM_BINDING_C];
        BkResult res = launch_epilogue(plan, g->copy_fn, g->copy_name, g->epi_grid, &copy, stream,
                                       cmd_index);
        if (res != BK_SUCCESS)
            return res;
    }
    const BkDeviceAddress bias = g->has_bias ? args->binding[BK_GEMM_BINDING_BIAS] : 0;
    BkDeviceAddress ws = args->workspace;
    if (g->zero_bytes) {
        CUresult r = bk_cu.cuMemsetD32Async((CUdeviceptr)ws, 0, (size_t)(g->zero_bytes / 4), stream);
        if (r != BK_CUDA_SUCCESS)
            return bk_cuda_error(r, BK_SUCCESS,
                                 "bkQueueSubmit: command %u, zeroing the k = 0 operands in the "
                                 "workspace: cuMemsetD32Async", cmd_index);
        addr[A] = ws;
        addr[B] = ws + g->zero_b_offset;
        ws += g->zero_bytes;
    }
    const bool fast = g->has_fast && ((addr[A] | addr[B] | addr[C] | addr[D] | bias) & 15u) == 0;
    const struct lt_choice *algo = fast ? &g->fast : &g->general;
    const void *lt_a = (const void *)(uintptr_t)(g->swap ? addr[B] : addr[A]);
    const void *lt_b = (const void *)(uintptr_t)(g->swap ? addr[A] : addr[B]);
    /* Exactly the plan's workspace, not the caller's (maybe larger) one: a
     * run does not depend on how much the caller happened to bind. */
    void *workspace = g->lt_workspace ? (void *)(uintptr_t)ws : NULL;
    const void *bias_ptr = (const void *)(uintptr_t)bias;

    /* The bias pointer lives in the shared descriptor: setting it and the
     * call that reads it are one critical section per plan. A mutex costs
     * tens of ns uncontended, against a descriptor made per run (an
     * allocation and a dozen attribute calls); plans without a bias take
     * no lock, the descriptor then being read only. */
    bk_lt_status s = BK_LT_STATUS_SUCCESS;
    const char *call = "cublasLtMatmul";
    if (g->has_bias) {
        pthread_mutex_lock(&g->bias_lock);
        s = g->lt->cublasLtMatmulDescSetAttribute(g->desc, BK_LT_DESC_BIAS_POINTER, &bias_ptr,
                                                  sizeof bias_ptr);
        if (s != BK_LT_STATUS_SUCCESS)
            call = "cublasLtMatmulDescSetAttribute(BIAS_POINTER)";
    }
    if (s == BK_LT_STATUS_SUCCESS)
        s = g->lt->cublasLtMatmul(g->handle, g->desc, &g->alpha, lt_a, g->layout[A], lt_b,
                                  g->layout[B], &g->beta, (const void *)(uintptr_t)addr[C],
                                  g->layout[C], (void *)(uintptr_t)addr[D], g->layout[D],
                                  &algo->algo, workspace, (size_t)g->lt_workspace, stream);
    if (g->has_bias)
        pthread_mutex_unlock(&g->bias_lock);
    if (s != BK_LT_STATUS_SUCCESS)
        return run_error(s, stream, cmd_index, call);
    if (g->split) {
        struct bk_gemm_epi_args epi = g->epi_args;
        epi.dst = addr[D];
        epi.bias = plan->problem.gemm.has_bias ? args->binding[BK_GEMM_BINDING_BIAS] : 0;
        return launch_epilogue(plan, g->epi_fn, g->epi_name, g->epi_grid, &epi, stream,
                               cmd_index);
    }
    return BK_SUCCESS;
}

/* Destroys the cuBLASLt objects of build; copes with a build given up
 * halfway: whatever is NULL was never made. */
static void destroy_lt_objects(struct cuda_gemm_plan *g)
{
    const struct bk_cublaslt *lt = g->lt;
    if (!lt)
        return;
    if (g->pref)
        (void)lt->cublasLtMatmulPreferenceDestroy(g->pref);
    for (int i = 0; i < OPERANDS; i++)
        if (g->layout[i])
            (void)lt->cublasLtMatrixLayoutDestroy(g->layout[i]);
    if (g->desc)
        (void)lt->cublasLtMatmulDescDestroy(g->desc);
    g->pref = NULL;
    memset(g->layout, 0, sizeof g->layout);
    g->desc = NULL;
}

static void gemm_release(BkPlan plan)
{
    struct cuda_gemm_plan *g = plan->impl;
    destroy_lt_objects(g);
    if (g->bias_lock_ready)
        pthread_mutex_destroy(&g->bias_lock);
    g->bias_lock_ready = false;
}

static void set_kernel_name(BkPlan plan, const struct lt_mapping *m)
{
    const struct cuda_gemm_plan *g = plan->impl;
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    char types_part[10], algos[24]; /* sized so that the whole name fits */
    if (p->ab_type == p->cd_type)
        snprintf(types_part, sizeof types_part, "%s", p->tf32 ? "tf32" : type_name(p->ab_type));
    else
        snprintf(types_part, sizeof types_part, "%s_%s", type_name(p->ab_type),
                 type_name(p->cd_type));
    if (g->has_fast && g->fast.id != g->general.id)
        snprintf(algos, sizeof algos, "algo%d_%d", (int)g->fast.id, (int)g->general.id);
    else
        snprintf(algos, sizeof algos, "algo%d", (int)g->general.id);
    /* The steps in the order they run. */
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "%scublaslt_%s_%c%c%s_%s%s",
             g->copy_c ? "copy+" : "", types_part, m->view[A].op == BK_LT_OP_T ? 't' : 'n',
             m->view[B].op == BK_LT_OP_T ? 't' : 'n', m->order == BK_LT_ORDER_ROW ? "_row" : "",
             algos, !g->split ? "" : p->has_bias ? "+bias_act" : "+act");
}

/* Walks D with its unit-stride dimension innermost: n when D's column
 * stride is 1 (and it has columns to step over), else m. */
static bool n_is_inner(const struct bk_matrix *d)
{
    if (d->cols > 1 && d->col_stride == 1)
        return true;
    if (d->rows > 1 && d->row_stride == 1)
        return false;
    return d->cols >= d->rows;
}

/* The launch shapes and fixed arguments of the gemm_epilogue kernels the
 * plan needs, and the kernels themselves; the context is current. */
static BkResult setup_epilogue_kernels(BkPlan plan)
{
    struct cuda_gemm_plan *g = plan->impl;
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    const struct bk_cuda_context *c = plan->ctx->impl;
    const bool n_inner = n_is_inner(&p->d);
    const bool batched = p->batch > 1;
    struct bk_gemm_epi_args a;
    memset(&a, 0, sizeof a);
    a.count = (uint64_t)p->batch * (uint64_t)p->m * (uint64_t)p->n;
    a.inner = n_inner ? p->n : p->m;
    a.outer = n_inner ? p->m : p->n;
    a.dst_is = n_inner ? p->d.col_stride : p->d.row_stride;
    a.dst_os = n_inner ? p->d.row_stride : p->d.col_stride;
    a.dst_bs = batched ? p->d.batch_stride : 0;
    /* Enough blocks to fill the device at full occupancy (8 blocks of 256
     * threads per SM); the grid-stride loop takes the rest. */
    const uint64_t most = (uint64_t)(c->sm_count > 0 ? c->sm_count : 1) * 8;
    const uint64_t need = (a.count + BK_GEMM_EPI_BLOCK - 1) / BK_GEMM_EPI_BLOCK;
    g->epi_grid = (unsigned int)(need < most ? need : most);

    BkResult res = BK_SUCCESS;
    if (g->copy_c) {
        g->copy_args = a;
        g->copy_args.src_is = n_inner ? p->c.col_stride : p->c.row_stride;
        g->copy_args.src_os = n_inner ? p->c.row_stride : p->c.col_stride;
        g->copy_args.src_bs = batched ? p->c.batch_stride : 0;
        snprintf(g->copy_name, sizeof g->copy_name, "bk_gemm_copy_b%zu",
                 8 * bk_data_type_size(p->cd_type));
        res = bk_cuda_function(plan->ctx, BK_CUDA_MODULE_GEMM_EPILOGUE, g->copy_name, &g->copy_fn);
    }
    if (res == BK_SUCCESS && g->split) {
        g->epi_args = a;
        g->epi_args.bias_is = n_inner ? 1 : 0;
        g->epi_args.bias_os = n_inner ? 0 : 1;
        g->epi_args.activation = (uint32_t)p->activation;
        snprintf(g->epi_name, sizeof g->epi_name, "bk_gemm_bias_act_%s", type_name(p->cd_type));
        res = bk_cuda_function(plan->ctx, BK_CUDA_MODULE_GEMM_EPILOGUE, g->epi_name, &g->epi_fn);
    }
    return res;
}

/* cuBLASLt's part of the plan: the direct mapping, else (no algorithm for
 * its epilogue) without bias and activation, which bias_act then applies.
 * The context is current. */
static BkResult build_plan(BkPlan plan, const struct bk_matrix *a, const struct bk_matrix *b,
                           struct lt_mapping *m)
{
    struct cuda_gemm_plan *g = plan->impl;
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    g->has_bias = p->has_bias;
    g->lt_activation = p->activation;
    /* cuBLASLt's GELU epilogue on F64 is accurate to about 1e-10 only
     * (H100, CUDA 13.0): F64 GELU goes to libbk's kernel, in F64. */
    const bool f64_gelu =
        p->cd_type == BK_DATA_TYPE_F64 && p->activation == BK_GEMM_ACTIVATION_GELU_TANH;
    BkResult res = BK_ERROR_UNSUPPORTED;
    bool no_algorithm = true;
    if (!f64_gelu) {
        bk_error_tentative_begin();
        if ((res = bk_cuda_gemm_choose_mapping(plan, a, b, g->has_bias, m, &g->copy_c)) == BK_SUCCESS)
            res = build(plan, m, &no_algorithm);
        const bool fall_back = res == BK_ERROR_UNSUPPORTED && no_algorithm &&
                               (p->has_bias || p->activation != BK_GEMM_ACTIVATION_NONE);
        /* A try that gives way to the split path is no error of the call. */
        bk_error_tentative_end(res, fall_back);
        if (!fall_back)
            return res;
    }
    destroy_lt_objects(g);
    memset(&g->fast, 0, sizeof g->fast);
    memset(&g->general, 0, sizeof g->general);
    g->has_bias = false;
    g->lt_activation = BK_GEMM_ACTIVATION_NONE;
    g->split = true;
    if ((res = bk_cuda_gemm_choose_mapping(plan, a, b, false, m, &g->copy_c)) != BK_SUCCESS)
        return res;
    return build(plan, m, &no_algorithm);
}

BkResult bk_cuda_gemm_select(BkPlan plan)
{
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    if (lt_type(p->ab_type) < 0 || lt_type(p->cd_type) < 0 ||
        (unsigned)p->activation > BK_GEMM_ACTIVATION_GELU_TANH)
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: %s -> %s has no CUDA GEMM", plan->op_name,
                        bk_data_type_name(p->ab_type), bk_data_type_name(p->cd_type));
    BkResult res;
    struct cuda_gemm_plan *g = bk_cuda_plan_new(plan, sizeof *g, NULL, gemm_enqueue, &res);
    if (!g)
        return res;
    g->base.release = gemm_release;
    if (p->tf32)
        plan->props.precision.computeType = BK_DATA_TYPE_TF32;
    if (p->m == 0 || p->n == 0 || p->batch == 0) {
        g->empty = true; /* nothing to run: no need for cuBLASLt */
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "cublaslt_empty");
        return BK_SUCCESS;
    }
    if (p->m > INT32_MAX || p->n > INT32_MAX || p->k > INT32_MAX || p->batch > INT32_MAX)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s: m = %lld, n = %lld, k = %lld, batch = %lld: cuBLASLt takes "
                        "dimensions up to 2^31 - 1", plan->op_name, (long long)p->m,
                        (long long)p->n, (long long)p->k, (long long)p->batch);

    g->use_c = p->has_c && p->beta != 0;
    if (p->ab_type == BK_DATA_TYPE_F64) {
        g->alpha.d = p->alpha;
        g->beta.d = g->use_c ? p->beta : 0;
    } else {
        g->alpha.f = (float)p->alpha;
        g->beta.f = g->use_c ? (float)p->beta : 0;
    }
    struct bk_matrix a = p->a, b = p->b;
    if (p->k == 0) {
        /* A [m, 1] and B [1, n] of zeros, 256-byte aligned in the workspace. */
        const int64_t esize = (int64_t)bk_data_type_size(p->ab_type);
        a = (struct bk_matrix){ .type = p->ab_type, .rows = p->m, .cols = 1, .row_stride = 1,
                                .col_stride = bk_cuda_gemm_round_up(p->m, 16 / esize) };
        b = (struct bk_matrix){ .type = p->ab_type, .rows = 1, .cols = p->n,
                                .row_stride = bk_cuda_gemm_round_up(p->n, 16 / esize),
                                .col_stride = 1 };
        g->zero_b_offset = (uint64_t)bk_cuda_gemm_round_up(p->m * esize, 256);
        g->zero_bytes = g->zero_b_offset + (uint64_t)bk_cuda_gemm_round_up(p->n * esize, 256);
    }
    /* Layouts that no plan takes fail before cuBLASLt is loaded. */
    struct lt_mapping m;
    if ((res = bk_cuda_gemm_choose_mapping(plan, &a, &b, p->has_bias, &m, &g->copy_c)) != BK_SUCCESS)
        return res;
    if (p->has_bias) {
        if (pthread_mutex_init(&g->bias_lock, NULL) != 0)
            return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreatePlan: pthread_mutex_init failed");
        g->bias_lock_ready = true;
    }

    g->lt = bk_cublaslt(plan->op_name, &res);
    if (!g->lt)
        return res;
    struct bk_cuda_scope scope;
    if ((res = bk_cuda_enter(plan->ctx, &scope)) != BK_SUCCESS)
        return res;
    res = build_plan(plan, &a, &b, &m);
    if (res == BK_SUCCESS && (g->copy_c || g->split))
        res = setup_epilogue_kernels(plan);
    bk_cuda_leave(&scope);
    if (res != BK_SUCCESS)
        return res;
    g->swap = m.swap;
    plan->props.workspaceSize = g->zero_bytes + g->lt_workspace;
    set_kernel_name(plan, &m);
    return BK_SUCCESS;
}
