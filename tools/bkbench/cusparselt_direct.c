/* SPDX-License-Identifier: Apache-2.0 */
/* cuSPARSELt through dlopen: the handful of declarations bkbench needs,
 * with the values cusparseLt.h (0.6.3, 0.7.1, 0.8.1), cusparse.h and
 * library_types.h give them. */
#include "cusparselt_direct.h"

#include <dlfcn.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int slt_status;                   /* cusparseStatus_t; 0 = CUSPARSE_STATUS_SUCCESS */

/* The header's handle and descriptors are caller-owned opaque structs of
 * a fixed size that changed between releases: 13072 bytes in 0.6, 1024
 * in 0.7, 512 aligned to 16 in 0.8. One size no smaller than any of them
 * serves all (the library writes only its own). */
#define SLT_OPAQUE_BYTES 16384
typedef struct {
    alignas(16) uint8_t data[SLT_OPAQUE_BYTES];
} slt_opaque;
typedef slt_opaque slt_handle;            /* cusparseLtHandle_t */
typedef slt_opaque slt_mat;               /* cusparseLtMatDescriptor_t */
typedef slt_opaque slt_desc;              /* cusparseLtMatmulDescriptor_t */
typedef slt_opaque slt_alg;               /* cusparseLtMatmulAlgSelection_t */
typedef slt_opaque slt_plan;              /* cusparseLtMatmulPlan_t */

enum {
    SLT_R_16F = 2, SLT_R_16BF = 14,                       /* cudaDataType */
    SLT_ORDER_COL = 1,                                    /* cusparseOrder_t */
    SLT_OP_N = 0, SLT_OP_T = 1,                           /* cusparseOperation_t */
    SLT_SPARSITY_50_PERCENT = 0,                          /* cusparseLtSparsity_t */
    SLT_COMPUTE_32F = 2,                                  /* cusparseComputeType (0.6 on) */
    SLT_ALG_DEFAULT = 0,                                  /* cusparseLtMatmulAlg_t */
    SLT_PRUNE_STRIP = 1,                                  /* cusparseLtPruneAlg_t */
    SLT_MAJOR_VERSION = 0, SLT_MINOR_VERSION = 1, SLT_PATCH_LEVEL = 2, /* libraryPropertyType */
};

struct slt_api {
    slt_status (*Init)(slt_handle *handle);
    slt_status (*Destroy)(const slt_handle *handle);
    slt_status (*GetProperty)(int property, int *value);
    slt_status (*DenseInit)(const slt_handle *handle, slt_mat *mat, int64_t rows, int64_t cols,
                            int64_t ld, uint32_t alignment, int value_type, int order);
    slt_status (*StructuredInit)(const slt_handle *handle, slt_mat *mat, int64_t rows,
                                 int64_t cols, int64_t ld, uint32_t alignment, int value_type,
                                 int order, int sparsity);
    slt_status (*MatDestroy)(const slt_mat *mat);
    slt_status (*DescInit)(const slt_handle *handle, slt_desc *desc, int op_a, int op_b,
                           const slt_mat *a, const slt_mat *b, const slt_mat *c,
                           const slt_mat *d, int compute_type);
    slt_status (*AlgInit)(const slt_handle *handle, slt_alg *alg, const slt_desc *desc,
                          int which);
    slt_status (*GetWorkspace)(const slt_handle *handle, const slt_plan *plan, size_t *bytes);
    slt_status (*PlanInit)(const slt_handle *handle, slt_plan *plan, const slt_desc *desc,
                           const slt_alg *alg);
    slt_status (*PlanDestroy)(const slt_plan *plan);
    slt_status (*Matmul)(const slt_handle *handle, const slt_plan *plan, const void *alpha,
                         const void *a, const void *b, const void *beta, const void *c, void *d,
                         void *workspace, void **streams, int32_t stream_count);
    slt_status (*Search)(const slt_handle *handle, slt_plan *plan, const void *alpha,
                         const void *a, const void *b, const void *beta, const void *c, void *d,
                         void *workspace, void **streams, int32_t stream_count);
    slt_status (*Prune)(const slt_handle *handle, const slt_desc *desc, const void *in,
                        void *out, int prune_alg, void *stream);
    slt_status (*CompressedSize)(const slt_handle *handle, const slt_plan *plan,
                                 size_t *compressed, size_t *scratch);
    slt_status (*Compress)(const slt_handle *handle, const slt_plan *plan, const void *dense,
                           void *compressed, void *scratch, void *stream);
    /* Not in every release: looked up, not required. */
    const char *(*GetErrorName)(slt_status status);
    slt_status (*AlgDestroy)(const slt_alg *alg);
};

static const struct {
    const char *name;
    size_t offset;
    int optional;
} symbols[] = {
    {"cusparseLtInit", offsetof(struct slt_api, Init), 0},
    {"cusparseLtDestroy", offsetof(struct slt_api, Destroy), 0},
    {"cusparseLtGetProperty", offsetof(struct slt_api, GetProperty), 0},
    {"cusparseLtDenseDescriptorInit", offsetof(struct slt_api, DenseInit), 0},
    {"cusparseLtStructuredDescriptorInit", offsetof(struct slt_api, StructuredInit), 0},
    {"cusparseLtMatDescriptorDestroy", offsetof(struct slt_api, MatDestroy), 0},
    {"cusparseLtMatmulDescriptorInit", offsetof(struct slt_api, DescInit), 0},
    {"cusparseLtMatmulAlgSelectionInit", offsetof(struct slt_api, AlgInit), 0},
    {"cusparseLtMatmulGetWorkspace", offsetof(struct slt_api, GetWorkspace), 0},
    {"cusparseLtMatmulPlanInit", offsetof(struct slt_api, PlanInit), 0},
    {"cusparseLtMatmulPlanDestroy", offsetof(struct slt_api, PlanDestroy), 0},
    {"cusparseLtMatmul", offsetof(struct slt_api, Matmul), 0},
    {"cusparseLtMatmulSearch", offsetof(struct slt_api, Search), 0},
    {"cusparseLtSpMMAPrune", offsetof(struct slt_api, Prune), 0},
    {"cusparseLtSpMMACompressedSize", offsetof(struct slt_api, CompressedSize), 0},
    {"cusparseLtSpMMACompress", offsetof(struct slt_api, Compress), 0},
    {"cusparseLtGetErrorName", offsetof(struct slt_api, GetErrorName), 1},
    {"cusparseLtMatmulAlgSelectionDestroy", offsetof(struct slt_api, AlgDestroy), 1},
};

#define LIBRARY_ENV "BK_CUSPARSELT_LIBRARY"
#define SONAME "libcusparseLt.so.0"
#define MIN_MINOR 6                       /* 0.6: the compute types and signatures above */

struct cusparselt {
    void *lib;
    char library[256];
    int version;
    struct slt_api api;
    slt_handle handle;
    int handle_ready;                     /* cusparseLtInit done (at the first plan) */
};

struct cusparselt_mm {
    struct cusparselt *lt;
    slt_mat a, b, c;                      /* W (structured), X, Y (C = D) */
    slt_desc desc;
    slt_alg alg;
    slt_plan plan;
    int made_a, made_b, made_c, made_alg, made_plan;
};

/* cusparseStatus_t names, for releases without cusparseLtGetErrorName. */
static const char *const status_names[] = {
    "CUSPARSE_STATUS_SUCCESS", "CUSPARSE_STATUS_NOT_INITIALIZED",
    "CUSPARSE_STATUS_ALLOC_FAILED", "CUSPARSE_STATUS_INVALID_VALUE",
    "CUSPARSE_STATUS_ARCH_MISMATCH", "CUSPARSE_STATUS_MAPPING_ERROR",
    "CUSPARSE_STATUS_EXECUTION_FAILED", "CUSPARSE_STATUS_INTERNAL_ERROR",
    "CUSPARSE_STATUS_MATRIX_TYPE_NOT_SUPPORTED", "CUSPARSE_STATUS_ZERO_PIVOT",
    "CUSPARSE_STATUS_NOT_SUPPORTED", "CUSPARSE_STATUS_INSUFFICIENT_RESOURCES",
};

static const char *status_name(const struct cusparselt *lt, slt_status s)
{
    const char *n = lt->api.GetErrorName ? lt->api.GetErrorName(s) : NULL;
    if (n)
        return n;
    if (s >= 0 && (size_t)s < sizeof status_names / sizeof status_names[0])
        return status_names[s];
    return "unknown status";
}

#define SLT_CALL(lt, expr, what)                                                             \
    do {                                                                                     \
        slt_status s_ = (expr);                                                              \
        if (s_ != 0) {                                                                       \
            snprintf(err, err_size, "%s failed: %s (%d)", (what), status_name((lt), s_), s_); \
            return -1;                                                                       \
        }                                                                                    \
    } while (0)

static void *open_library(char *path, size_t path_size, char *err, size_t err_size)
{
    const char *env = getenv(LIBRARY_ENV);
    const char *name = env && *env ? env : SONAME;
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        snprintf(err, err_size, "cannot load %s%s: %s", name,
                 env && *env ? " (" LIBRARY_ENV ")" : " (set LD_LIBRARY_PATH or " LIBRARY_ENV ")",
                 dlerror());
    else
        snprintf(path, path_size, "%s", name);
    return lib;
}

static int load(struct cusparselt *lt, char *err, size_t err_size)
{
    lt->lib = open_library(lt->library, sizeof lt->library, err, err_size);
    if (!lt->lib)
        return -1;
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *sym = dlsym(lt->lib, symbols[i].name);
        if (!sym && symbols[i].optional)
            continue;
        if (!sym) {
            snprintf(err, err_size, "%s lacks %s", lt->library, symbols[i].name);
            return -1;
        }
        /* POSIX guarantees object and function pointers convert. */
        memcpy((char *)&lt->api + symbols[i].offset, &sym, sizeof sym);
    }
    int major = -1, minor = -1, patch = -1;
    SLT_CALL(lt, lt->api.GetProperty(SLT_MAJOR_VERSION, &major), "cusparseLtGetProperty");
    SLT_CALL(lt, lt->api.GetProperty(SLT_MINOR_VERSION, &minor), "cusparseLtGetProperty");
    SLT_CALL(lt, lt->api.GetProperty(SLT_PATCH_LEVEL, &patch), "cusparseLtGetProperty");
    lt->version = major * 1000 + minor * 100 + patch;
    if (major != 0 || minor < MIN_MINOR) {
        snprintf(err, err_size, "%s is version %d.%d.%d; bkbench knows 0.%d to 0.x", lt->library,
                 major, minor, patch, MIN_MINOR);
        return -1;
    }
    return 0;
}

struct cusparselt *cusparselt_open(char *err, size_t err_size)
{
    struct cusparselt *lt = calloc(1, sizeof *lt);
    if (!lt) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    if (load(lt, err, err_size) != 0) {
        /* The library stays loaded, as in cusparselt_close. */
        free(lt);
        return NULL;
    }
    return lt;
}

void cusparselt_close(struct cusparselt *lt)
{
    if (!lt)
        return;
    if (lt->handle_ready)
        lt->api.Destroy(&lt->handle);
    /* The library stays loaded: it may have started threads and
     * registered with the CUDA runtime, and unloading buys nothing. */
    free(lt);
}

const char *cusparselt_library(const struct cusparselt *lt)
{
    return lt->library;
}

int cusparselt_version(const struct cusparselt *lt)
{
    return lt->version;
}

void cusparselt_mm_destroy(struct cusparselt_mm *g)
{
    if (!g)
        return;
    const struct slt_api *api = &g->lt->api;
    if (g->made_plan)
        api->PlanDestroy(&g->plan);
    if (g->made_alg && api->AlgDestroy)
        api->AlgDestroy(&g->alg);
    if (g->made_c)
        api->MatDestroy(&g->c);
    if (g->made_b)
        api->MatDestroy(&g->b);
    if (g->made_a)
        api->MatDestroy(&g->a);
    free(g);
}

/* The descriptors and plan; the layout is the header comment's. */
static int describe(struct cusparselt_mm *g, int type, int64_t m, int64_t n, int64_t k,
                    char *err, size_t err_size)
{
    struct cusparselt *lt = g->lt;
    const struct slt_api *api = &lt->api;
    const slt_handle *h = &lt->handle;
    const uint32_t alignment = 16;
    SLT_CALL(lt, api->StructuredInit(h, &g->a, k, m, k, alignment, type, SLT_ORDER_COL,
                                     SLT_SPARSITY_50_PERCENT),
             "cusparseLtStructuredDescriptorInit(W)");
    g->made_a = 1;
    SLT_CALL(lt, api->DenseInit(h, &g->b, k, n, k, alignment, type, SLT_ORDER_COL),
             "cusparseLtDenseDescriptorInit(X)");
    g->made_b = 1;
    SLT_CALL(lt, api->DenseInit(h, &g->c, m, n, m, alignment, type, SLT_ORDER_COL),
             "cusparseLtDenseDescriptorInit(Y)");
    g->made_c = 1;
    SLT_CALL(lt, api->DescInit(h, &g->desc, SLT_OP_T, SLT_OP_N, &g->a, &g->b, &g->c, &g->c,
                               SLT_COMPUTE_32F),
             "cusparseLtMatmulDescriptorInit");
    SLT_CALL(lt, api->AlgInit(h, &g->alg, &g->desc, SLT_ALG_DEFAULT),
             "cusparseLtMatmulAlgSelectionInit");
    g->made_alg = 1;
    SLT_CALL(lt, api->PlanInit(h, &g->plan, &g->desc, &g->alg), "cusparseLtMatmulPlanInit");
    g->made_plan = 1;
    return 0;
}

int cusparselt_mm_plan(struct cusparselt *lt, BkDataType dtype, int64_t m, int64_t n, int64_t k,
                       struct cusparselt_mm **out, char *err, size_t err_size)
{
    *out = NULL;
    int type = dtype == BK_DATA_TYPE_F16 ? SLT_R_16F : dtype == BK_DATA_TYPE_BF16 ? SLT_R_16BF : -1;
    if (type < 0 || m < 1 || n < 1 || k < 1) {
        snprintf(err, err_size, "cuSPARSELt comparison: no such GEMM here (dtype %d)", (int)dtype);
        return -1;
    }
    if (!lt->handle_ready) {
        SLT_CALL(lt, lt->api.Init(&lt->handle), "cusparseLtInit");
        lt->handle_ready = 1;
    }
    struct cusparselt_mm *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(err, err_size, "out of host memory");
        return -1;
    }
    g->lt = lt;
    if (describe(g, type, m, n, k, err, err_size) != 0) {
        cusparselt_mm_destroy(g);
        return -1;
    }
    *out = g;
    return 0;
}

int cusparselt_mm_compressed_size(struct cusparselt_mm *g, uint64_t *compressed,
                                  uint64_t *scratch, char *err, size_t err_size)
{
    size_t c = 0, s = 0;
    SLT_CALL(g->lt, g->lt->api.CompressedSize(&g->lt->handle, &g->plan, &c, &s),
             "cusparseLtSpMMACompressedSize");
    *compressed = c;
    *scratch = s;
    return 0;
}

/* Integer device addresses to the pointers cuSPARSELt takes. */
static void *ptr(uint64_t address)
{
    return (void *)(uintptr_t)address;
}

int cusparselt_mm_compress(struct cusparselt_mm *g, uint64_t w, uint64_t compressed,
                           uint64_t scratch, void *stream, char *err, size_t err_size)
{
    const struct slt_api *api = &g->lt->api;
    SLT_CALL(g->lt, api->Prune(&g->lt->handle, &g->desc, ptr(w), ptr(w), SLT_PRUNE_STRIP, stream),
             "cusparseLtSpMMAPrune");
    SLT_CALL(g->lt, api->Compress(&g->lt->handle, &g->plan, ptr(w), ptr(compressed),
                                  ptr(scratch), stream),
             "cusparseLtSpMMACompress");
    return 0;
}

int cusparselt_mm_workspace(struct cusparselt_mm *g, uint64_t *bytes, char *err,
                            size_t err_size)
{
    size_t b = 0;
    SLT_CALL(g->lt, g->lt->api.GetWorkspace(&g->lt->handle, &g->plan, &b),
             "cusparseLtMatmulGetWorkspace");
    *bytes = b;
    return 0;
}

static const float one = 1.0f, zero = 0.0f;

int cusparselt_mm_search(struct cusparselt_mm *g, uint64_t y, uint64_t x, uint64_t compressed,
                         uint64_t workspace, void *stream, char *err, size_t err_size)
{
    void *streams[1] = {stream};
    SLT_CALL(g->lt, g->lt->api.Search(&g->lt->handle, &g->plan, &one, ptr(compressed), ptr(x),
                                      &zero, ptr(y), ptr(y), ptr(workspace), streams, 1),
             "cusparseLtMatmulSearch");
    return 0;
}

int cusparselt_mm_run(struct cusparselt_mm *g, uint64_t y, uint64_t x, uint64_t compressed,
                      uint64_t workspace, void *stream, char *err, size_t err_size)
{
    void *streams[1] = {stream};
    SLT_CALL(g->lt, g->lt->api.Matmul(&g->lt->handle, &g->plan, &one, ptr(compressed), ptr(x),
                                      &zero, ptr(y), ptr(y), ptr(workspace), streams, 1),
             "cusparseLtMatmul");
    return 0;
}
