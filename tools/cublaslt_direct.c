/* SPDX-License-Identifier: Apache-2.0 */
/* cuBLASLt through dlopen: the handful of declarations the tools need,
 * with the values cublasLt.h, cublas_api.h and library_types.h give them. */
#include "cublaslt_direct.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int lt_status;                    /* cublasStatus_t; 0 = CUBLAS_STATUS_SUCCESS */
typedef struct lt_context *lt_handle;     /* cublasLtHandle_t */
typedef struct lt_matmul_desc *lt_desc;   /* cublasLtMatmulDesc_t */
typedef struct lt_layout_st *lt_layout;   /* cublasLtMatrixLayout_t */
typedef struct lt_pref_st *lt_pref;       /* cublasLtMatmulPreference_t */

typedef struct {
    uint64_t data[8];
} lt_algo;                                /* cublasLtMatmulAlgo_t */

typedef struct {
    lt_algo algo;
    size_t workspace_size;
    lt_status state;
    float waves_count;
    int reserved[4];
} lt_heuristic;                           /* cublasLtMatmulHeuristicResult_t */

enum {
    LT_R_32F = 0, LT_R_64F = 1, LT_R_16F = 2, LT_R_16BF = 14,   /* cudaDataType */
    LT_COMPUTE_32F = 68, LT_COMPUTE_64F = 70, LT_COMPUTE_32F_FAST_TF32 = 77,
    LT_OP_N = 0, LT_OP_T = 1,
    LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4,               /* cublasLtMatmulDescAttributes_t */
    LT_PREF_MAX_WORKSPACE_BYTES = 1,                      /* cublasLtMatmulPreferenceAttributes_t */
    LT_ALGO_CONFIG_ID = 0,                                /* cublasLtMatmulAlgoConfigAttributes_t */
};

struct lt_api {
    lt_status (*Create)(lt_handle *handle);
    lt_status (*Destroy)(lt_handle handle);
    size_t (*GetVersion)(void);
    const char *(*GetStatusName)(lt_status status);
    lt_status (*DescCreate)(lt_desc *desc, int compute_type, int scale_type);
    lt_status (*DescDestroy)(lt_desc desc);
    lt_status (*DescSetAttribute)(lt_desc desc, int attr, const void *buf, size_t size);
    lt_status (*LayoutCreate)(lt_layout *layout, int type, uint64_t rows, uint64_t cols,
                              int64_t ld);
    lt_status (*LayoutDestroy)(lt_layout layout);
    lt_status (*PrefCreate)(lt_pref *pref);
    lt_status (*PrefDestroy)(lt_pref pref);
    lt_status (*PrefSetAttribute)(lt_pref pref, int attr, const void *buf, size_t size);
    lt_status (*GetHeuristic)(lt_handle handle, lt_desc desc, lt_layout a, lt_layout b,
                              lt_layout c, lt_layout d, lt_pref pref, int requested,
                              lt_heuristic *results, int *returned);
    lt_status (*AlgoConfigGetAttribute)(const lt_algo *algo, int attr, void *buf, size_t size,
                                        size_t *written);
    lt_status (*Matmul)(lt_handle handle, lt_desc desc, const void *alpha, const void *a,
                        lt_layout adesc, const void *b, lt_layout bdesc, const void *beta,
                        const void *c, lt_layout cdesc, void *d, lt_layout ddesc,
                        const lt_algo *algo, void *workspace, size_t workspace_size,
                        void *stream);
};

static const struct {
    const char *name;
    size_t offset;
} symbols[] = {
    {"cublasLtCreate", offsetof(struct lt_api, Create)},
    {"cublasLtDestroy", offsetof(struct lt_api, Destroy)},
    {"cublasLtGetVersion", offsetof(struct lt_api, GetVersion)},
    {"cublasLtGetStatusName", offsetof(struct lt_api, GetStatusName)},
    {"cublasLtMatmulDescCreate", offsetof(struct lt_api, DescCreate)},
    {"cublasLtMatmulDescDestroy", offsetof(struct lt_api, DescDestroy)},
    {"cublasLtMatmulDescSetAttribute", offsetof(struct lt_api, DescSetAttribute)},
    {"cublasLtMatrixLayoutCreate", offsetof(struct lt_api, LayoutCreate)},
    {"cublasLtMatrixLayoutDestroy", offsetof(struct lt_api, LayoutDestroy)},
    {"cublasLtMatmulPreferenceCreate", offsetof(struct lt_api, PrefCreate)},
    {"cublasLtMatmulPreferenceDestroy", offsetof(struct lt_api, PrefDestroy)},
    {"cublasLtMatmulPreferenceSetAttribute", offsetof(struct lt_api, PrefSetAttribute)},
    {"cublasLtMatmulAlgoGetHeuristic", offsetof(struct lt_api, GetHeuristic)},
    {"cublasLtMatmulAlgoConfigGetAttribute", offsetof(struct lt_api, AlgoConfigGetAttribute)},
    {"cublasLtMatmul", offsetof(struct lt_api, Matmul)},
};

/* Tried in order unless $BK_CUBLASLT_LIBRARY names the one file to load:
 * the same rule as libbk's CUDA backend (lib/cuda/cuda_cublaslt.c), so
 * both use one library. */
#define LIBRARY_ENV "BK_CUBLASLT_LIBRARY"
/* libbk's workspace limit for cuBLASLt's heuristic, and its override. */
#define WORKSPACE_ENV "BK_CUBLASLT_WORKSPACE_LIMIT"
#define DEFAULT_WORKSPACE_LIMIT (32ull << 20)
static const char *const sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12",
                                      "libcublasLt.so"};

struct cublaslt {
    void *lib;
    char library[256];
    struct lt_api api;
    lt_handle handle;                     /* made at the first plan */
};

/* The scalar and matrix types of one input dtype. */
struct lt_types {
    BkDataType dtype;
    int data, compute, compute_tf32, scale;
};

static const struct lt_types types[] = {
    {BK_DATA_TYPE_F16, LT_R_16F, LT_COMPUTE_32F, LT_COMPUTE_32F, LT_R_32F},
    {BK_DATA_TYPE_BF16, LT_R_16BF, LT_COMPUTE_32F, LT_COMPUTE_32F, LT_R_32F},
    {BK_DATA_TYPE_F32, LT_R_32F, LT_COMPUTE_32F, LT_COMPUTE_32F_FAST_TF32, LT_R_32F},
    {BK_DATA_TYPE_F64, LT_R_64F, LT_COMPUTE_64F, LT_COMPUTE_64F, LT_R_64F},
};

struct cublaslt_gemm {
    struct cublaslt *lt;
    lt_desc desc;
    lt_layout a, b, d;                    /* cuBLASLt's A (our B), B (our A) and C = D */
    lt_algo algo;
    int32_t algo_id;
    uint64_t workspace;
    bool f64;                             /* alpha and beta are doubles */
};

static const char *status_name(const struct cublaslt *lt, lt_status s)
{
    const char *n = lt->api.GetStatusName ? lt->api.GetStatusName(s) : NULL;
    return n ? n : "unknown status";
}

static void *open_library(char *path, size_t path_size, char *err, size_t err_size)
{
    const char *env = getenv(LIBRARY_ENV);
    if (env && *env) {
        void *lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            snprintf(err, err_size, "cannot load %s (%s): %s", env, LIBRARY_ENV, dlerror());
        else
            snprintf(path, path_size, "%s", env);
        return lib;
    }
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
        void *lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            snprintf(path, path_size, "%s", sonames[i]);
            return lib;
        }
    }
    snprintf(err, err_size, "cannot load %s, %s or %s (set LD_LIBRARY_PATH or %s)",
             sonames[0], sonames[1], sonames[2], LIBRARY_ENV);
    return NULL;
}

struct cublaslt *cublaslt_open(char *err, size_t err_size)
{
    struct cublaslt *lt = calloc(1, sizeof *lt);
    if (!lt) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    lt->lib = open_library(lt->library, sizeof lt->library, err, err_size);
    if (!lt->lib) {
        free(lt);
        return NULL;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *sym = dlsym(lt->lib, symbols[i].name);
        if (!sym) {
            snprintf(err, err_size, "%s lacks %s", lt->library, symbols[i].name);
            cublaslt_close(lt);
            return NULL;
        }
        /* POSIX guarantees object and function pointers convert. */
        memcpy((char *)&lt->api + symbols[i].offset, &sym, sizeof sym);
    }
    return lt;
}

void cublaslt_close(struct cublaslt *lt)
{
    if (!lt)
        return;
    if (lt->handle)
        lt->api.Destroy(lt->handle);
    /* The library stays loaded: it may have started threads and
     * registered with the CUDA runtime, and unloading buys nothing. */
    free(lt);
}

const char *cublaslt_library(const struct cublaslt *lt)
{
    return lt->library;
}

size_t cublaslt_version(const struct cublaslt *lt)
{
    return lt->api.GetVersion();
}

uint64_t cublaslt_gemm_workspace(const struct cublaslt_gemm *g)
{
    return g->workspace;
}

int cublaslt_gemm_algo_id(const struct cublaslt_gemm *g)
{
    return (int)g->algo_id;
}

uint64_t cublaslt_workspace_limit(void)
{
    const char *s = getenv(WORKSPACE_ENV);
    if (s && *s >= '0' && *s <= '9') {
        char *end = NULL;
        unsigned long long v = strtoull(s, &end, 10);
        if (end && *end == '\0')
            return v;
    }
    return DEFAULT_WORKSPACE_LIMIT;
}

void cublaslt_gemm_destroy(struct cublaslt_gemm *g)
{
    if (!g)
        return;
    const struct lt_api *api = &g->lt->api;
    if (g->d)
        api->LayoutDestroy(g->d);
    if (g->b)
        api->LayoutDestroy(g->b);
    if (g->a)
        api->LayoutDestroy(g->a);
    if (g->desc)
        api->DescDestroy(g->desc);
    free(g);
}

#define LT_CALL(expr, what)                                                                \
    do {                                                                                   \
        lt_status s_ = (expr);                                                             \
        if (s_ != 0) {                                                                     \
            snprintf(err, err_size, "%s failed: %s (%d)", (what), status_name(lt, s_), s_); \
            goto fail;                                                                     \
        }                                                                                  \
    } while (0)

struct cublaslt_gemm *cublaslt_gemm_plan(struct cublaslt *lt, BkDataType dtype, bool tf32,
                                         int64_t m, int64_t n, int64_t k,
                                         uint64_t workspace_limit, char *err, size_t err_size)
{
    const struct lt_types *t = NULL;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].dtype == dtype)
            t = &types[i];
    if (!t || m < 1 || n < 1 || k < 1) {
        snprintf(err, err_size, "cuBLASLt comparison: no such GEMM here (dtype %d, %lldx%lldx%lld)",
                 (int)dtype, (long long)m, (long long)n, (long long)k);
        return NULL;
    }
    struct cublaslt_gemm *g = calloc(1, sizeof *g);
    lt_pref pref = NULL;
    if (!g) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    g->lt = lt;
    g->f64 = dtype == BK_DATA_TYPE_F64;
    const struct lt_api *api = &lt->api;
    if (!lt->handle)
        LT_CALL(api->Create(&lt->handle), "cublasLtCreate");

    /* Column-major D^T[N, M] = op(B)[N, K] @ op(A^T)[K, M]: cuBLASLt's A
     * is our B ([K, N] column-major, ld K, transposed), its B our A ([K,
     * M] column-major, ld K), C and D our D ([N, M], ld N). */
    const int32_t trans_a = LT_OP_T, trans_b = LT_OP_N;
    LT_CALL(api->DescCreate(&g->desc, tf32 ? t->compute_tf32 : t->compute, t->scale),
            "cublasLtMatmulDescCreate");
    LT_CALL(api->DescSetAttribute(g->desc, LT_DESC_TRANSA, &trans_a, sizeof trans_a),
            "cublasLtMatmulDescSetAttribute(TRANSA)");
    LT_CALL(api->DescSetAttribute(g->desc, LT_DESC_TRANSB, &trans_b, sizeof trans_b),
            "cublasLtMatmulDescSetAttribute(TRANSB)");
    LT_CALL(api->LayoutCreate(&g->a, t->data, (uint64_t)k, (uint64_t)n, k),
            "cublasLtMatrixLayoutCreate(A)");
    LT_CALL(api->LayoutCreate(&g->b, t->data, (uint64_t)k, (uint64_t)m, k),
            "cublasLtMatrixLayoutCreate(B)");
    LT_CALL(api->LayoutCreate(&g->d, t->data, (uint64_t)n, (uint64_t)m, n),
            "cublasLtMatrixLayoutCreate(D)");

    LT_CALL(api->PrefCreate(&pref), "cublasLtMatmulPreferenceCreate");
    LT_CALL(api->PrefSetAttribute(pref, LT_PREF_MAX_WORKSPACE_BYTES, &workspace_limit,
                                  sizeof workspace_limit),
            "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
    lt_heuristic best;
    int found = 0;
    memset(&best, 0, sizeof best);
    LT_CALL(api->GetHeuristic(lt->handle, g->desc, g->a, g->b, g->d, g->d, pref, 1, &best,
                              &found),
            "cublasLtMatmulAlgoGetHeuristic");
    if (found < 1 || best.state != 0) {
        snprintf(err, err_size, "cublasLtMatmulAlgoGetHeuristic found no algorithm (%s)",
                 found < 1 ? "none returned" : status_name(lt, best.state));
        goto fail;
    }
    api->PrefDestroy(pref);
    g->algo = best.algo;
    g->workspace = best.workspace_size;
    size_t written = 0;
    g->algo_id = -1;
    (void)api->AlgoConfigGetAttribute(&g->algo, LT_ALGO_CONFIG_ID, &g->algo_id,
                                      sizeof g->algo_id, &written);
    return g;

fail:
    if (pref)
        api->PrefDestroy(pref);
    cublaslt_gemm_destroy(g);
    return NULL;
}

int cublaslt_gemm_run(struct cublaslt_gemm *g, uint64_t d, uint64_t a, uint64_t b,
                      uint64_t workspace, uint64_t workspace_size, void *stream, char *err,
                      size_t err_size)
{
    struct cublaslt *lt = g->lt;
    const float one_f = 1.0f, zero_f = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const void *alpha = g->f64 ? (const void *)&one_d : (const void *)&one_f;
    const void *beta = g->f64 ? (const void *)&zero_d : (const void *)&zero_f;
    /* Integer device addresses to the pointers cuBLASLt takes. */
    void *pa = (void *)(uintptr_t)b, *pb = (void *)(uintptr_t)a, *pd = (void *)(uintptr_t)d;
    void *pw = (void *)(uintptr_t)workspace;
    LT_CALL(lt->api.Matmul(lt->handle, g->desc, alpha, pa, g->a, pb, g->b, beta, pd, g->d, pd,
                           g->d, &g->algo, pw, (size_t)workspace_size, stream),
            "cublasLtMatmul");
    return 0;
fail:
    return -1;
}
