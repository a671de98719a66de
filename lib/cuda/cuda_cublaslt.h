/* SPDX-License-Identifier: Apache-2.0 */
/* The slice of cuBLASLt that the CUDA GEMM uses, declared here so that
 * libbk builds without the toolkit's headers, and the table of entry points
 * that cuda_cublaslt.c fills at run time from libcublasLt.so.* with dlsym,
 * when the first GEMM plan is created. Values and layouts were checked
 * against cublasLt.h, cublas_api.h and library_types.h of cuBLAS 13.1; they
 * are the same in 12.x (cuBLASLt keeps them ABI stable). */
#ifndef BK_CUDA_CUBLASLT_H
#define BK_CUDA_CUBLASLT_H

#include "cuda_internal.h"

typedef int bk_lt_status;                          /* cublasStatus_t */
typedef struct bk_lt_context_st *bk_lt_handle;     /* cublasLtHandle_t */
typedef struct bk_lt_matmul_desc_st *bk_lt_matmul_desc; /* cublasLtMatmulDesc_t */
typedef struct bk_lt_layout_st *bk_lt_layout;      /* cublasLtMatrixLayout_t */
typedef struct bk_lt_pref_st *bk_lt_pref;          /* cublasLtMatmulPreference_t */

/* cublasLtMatmulAlgo_t: semi-opaque, copied by value. */
typedef struct bk_lt_algo {
    uint64_t data[8];
} bk_lt_algo;

/* cublasLtMatmulHeuristicResult_t */
typedef struct bk_lt_heuristic {
    bk_lt_algo algo;
    size_t workspace_size;
    bk_lt_status state;
    float waves_count;
    int reserved[4];
} bk_lt_heuristic;

enum {
    /* cublasStatus_t */
    BK_LT_STATUS_SUCCESS = 0,
    BK_LT_STATUS_NOT_INITIALIZED = 1,
    BK_LT_STATUS_ALLOC_FAILED = 3,
    BK_LT_STATUS_INVALID_VALUE = 7,
    BK_LT_STATUS_ARCH_MISMATCH = 8,
    BK_LT_STATUS_MAPPING_ERROR = 11,
    BK_LT_STATUS_EXECUTION_FAILED = 13,
    BK_LT_STATUS_INTERNAL_ERROR = 14,
    BK_LT_STATUS_NOT_SUPPORTED = 15,
    BK_LT_STATUS_LICENSE_ERROR = 16,
    /* cudaDataType */
    BK_LT_R_32F = 0,
    BK_LT_R_64F = 1,
    BK_LT_R_16F = 2,
    BK_LT_R_16BF = 14,
    /* cublasComputeType_t */
    BK_LT_COMPUTE_32F = 68,
    BK_LT_COMPUTE_64F = 70,
    BK_LT_COMPUTE_32F_FAST_TF32 = 77,
    /* cublasOperation_t */
    BK_LT_OP_N = 0,
    BK_LT_OP_T = 1,
    /* cublasLtOrder_t */
    BK_LT_ORDER_COL = 0,
    BK_LT_ORDER_ROW = 1,
    /* cublasLtMatrixLayoutAttribute_t (type of the value) */
    BK_LT_LAYOUT_ORDER = 1,                 /* int32_t */
    BK_LT_LAYOUT_BATCH_COUNT = 5,           /* int32_t */
    BK_LT_LAYOUT_STRIDED_BATCH_OFFSET = 6,  /* int64_t, elements */
    /* cublasLtMatmulDescAttributes_t */
    BK_LT_DESC_TRANSA = 3,                  /* int32_t */
    BK_LT_DESC_TRANSB = 4,                  /* int32_t */
    BK_LT_DESC_EPILOGUE = 7,                /* uint32_t */
    BK_LT_DESC_BIAS_POINTER = 8,            /* const void * */
    BK_LT_DESC_BIAS_DATA_TYPE = 26,         /* int32_t */
    /* cublasLtEpilogue_t */
    BK_LT_EPILOGUE_DEFAULT = 1,
    BK_LT_EPILOGUE_RELU = 2,
    BK_LT_EPILOGUE_BIAS = 4,
    BK_LT_EPILOGUE_RELU_BIAS = 6,
    BK_LT_EPILOGUE_GELU = 32,
    BK_LT_EPILOGUE_GELU_BIAS = 36,
    /* cublasLtMatmulPreferenceAttributes_t */
    BK_LT_PREF_MAX_WORKSPACE_BYTES = 1,     /* uint64_t */
    BK_LT_PREF_REDUCTION_SCHEME_MASK = 3,   /* uint32_t */
    BK_LT_PREF_MIN_ALIGNMENT_A_BYTES = 5,   /* uint32_t; B, C, D follow */
    /* cublasLtReductionScheme_t */
    BK_LT_REDUCTION_INPLACE = 1,
    BK_LT_REDUCTION_COMPUTE_TYPE = 2,
    BK_LT_REDUCTION_OUTPUT_TYPE = 4,
    BK_LT_REDUCTION_MASK = 7,
    /* cublasLtMatmulAlgoConfigAttributes_t */
    BK_LT_ALGO_CONFIG_ID = 0,               /* int32_t */
    BK_LT_ALGO_CONFIG_SPLITK_NUM = 2,       /* int32_t */
    BK_LT_ALGO_CONFIG_REDUCTION_SCHEME = 3, /* uint32_t */
};

/* X(return type, name, parameter list): every entry point libbk calls.
 * Enum parameters are int in the C ABI. */
#define BK_CUBLASLT_FUNCTIONS(X)                                                             \
    X(bk_lt_status, cublasLtCreate, (bk_lt_handle *handle))                                   \
    X(bk_lt_status, cublasLtDestroy, (bk_lt_handle handle))                                   \
    X(size_t, cublasLtGetVersion, (void))                                                     \
    X(size_t, cublasLtGetCudartVersion, (void))                                               \
    X(bk_lt_status, cublasLtMatmulDescCreate,                                                 \
      (bk_lt_matmul_desc *desc, int compute_type, int scale_type))                            \
    X(bk_lt_status, cublasLtMatmulDescDestroy, (bk_lt_matmul_desc desc))                      \
    X(bk_lt_status, cublasLtMatmulDescSetAttribute,                                           \
      (bk_lt_matmul_desc desc, int attr, const void *buf, size_t size))                      \
    X(bk_lt_status, cublasLtMatrixLayoutCreate,                                               \
      (bk_lt_layout *layout, int type, uint64_t rows, uint64_t cols, int64_t ld))             \
    X(bk_lt_status, cublasLtMatrixLayoutDestroy, (bk_lt_layout layout))                       \
    X(bk_lt_status, cublasLtMatrixLayoutSetAttribute,                                         \
      (bk_lt_layout layout, int attr, const void *buf, size_t size))                         \
    X(bk_lt_status, cublasLtMatmulPreferenceCreate, (bk_lt_pref *pref))                       \
    X(bk_lt_status, cublasLtMatmulPreferenceDestroy, (bk_lt_pref pref))                       \
    X(bk_lt_status, cublasLtMatmulPreferenceSetAttribute,                                     \
      (bk_lt_pref pref, int attr, const void *buf, size_t size))                             \
    X(bk_lt_status, cublasLtMatmulAlgoGetHeuristic,                                           \
      (bk_lt_handle handle, bk_lt_matmul_desc desc, bk_lt_layout a, bk_lt_layout b,          \
       bk_lt_layout c, bk_lt_layout d, bk_lt_pref pref, int requested,                       \
       bk_lt_heuristic *results, int *returned))                                              \
    X(bk_lt_status, cublasLtMatmulAlgoConfigGetAttribute,                                     \
      (const bk_lt_algo *algo, int attr, void *buf, size_t size, size_t *written))           \
    X(bk_lt_status, cublasLtMatmul,                                                           \
      (bk_lt_handle handle, bk_lt_matmul_desc desc, const void *alpha, const void *a,        \
       bk_lt_layout a_layout, const void *b, bk_lt_layout b_layout, const void *beta,        \
       const void *c, bk_lt_layout c_layout, void *d, bk_lt_layout d_layout,                 \
       const bk_lt_algo *algo, void *workspace, size_t workspace_size, CUstream stream))

#define BK_CUBLASLT_DECLARE_POINTER(ret, name, params) ret (*name) params;
struct bk_cublaslt {
    BK_CUBLASLT_FUNCTIONS(BK_CUBLASLT_DECLARE_POINTER)
    size_t version;                       /* cublasLtGetVersion: 10000 major + 100 minor + patch */
};
#undef BK_CUBLASLT_DECLARE_POINTER

/* Opens cuBLASLt once per process (thread-safe) and returns its table, or
 * NULL with BK_ERROR_UNSUPPORTED recorded as "<who>: dense GEMM on CUDA
 * needs cuBLASLt: ..." (which libraries were tried and why each failed).
 * $BK_CUBLASLT_LIBRARY, when set, is the only library tried. The driver
 * must be loaded (a context exists). */
BK_HIDDEN const struct bk_cublaslt *bk_cublaslt(const char *who, BkResult *result);

/* "CUBLAS_STATUS_NOT_SUPPORTED", ... */
BK_HIDDEN const char *bk_lt_status_name(bk_lt_status s);
/* The BkResult for a failed cuBLASLt call (BK_ERROR_DEVICE_LOST for failed
 * launches and internal errors, as for the driver). */
BK_HIDDEN BkResult bk_lt_result(bk_lt_status s);
/* Records "<what>: CUBLAS_STATUS_..." and returns the mapped result (or
 * forced, when forced is not BK_SUCCESS). */
BK_HIDDEN BkResult bk_lt_error(bk_lt_status s, BkResult forced, const char *what, ...)
    __attribute__((format(printf, 3, 4)));

/* The context's cuBLASLt handle, created on first use under the context's
 * lock; the context must be current. Destroyed by bk_cuda_cublaslt_destroy. */
BK_HIDDEN BkResult bk_cublaslt_handle(BkContext ctx, const struct bk_cublaslt *lt,
                                      bk_lt_handle *handle);

#endif /* BK_CUDA_CUBLASLT_H */
