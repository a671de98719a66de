/* SPDX-License-Identifier: Apache-2.0 */
/* The slice of the CUDA driver API that libbk uses, declared here so that
 * libbk builds without the toolkit's headers, and the table of entry points
 * that lib/cuda/cuda_driver.c fills at run time from libcuda.so.1 through
 * cuGetProcAddress. Every entry point is requested with the ABI of CUDA
 * 12.0 (BK_CUDA_API_VERSION), so "cuMemAlloc" resolves to cuMemAlloc_v2,
 * "cuStreamBeginCapture" to the variant taking a capture mode, and so on;
 * the signatures below are those variants. */
#ifndef BK_CUDA_DRIVER_H
#define BK_CUDA_DRIVER_H

#include "../bk_internal.h"

#include <stddef.h>
#include <stdint.h>

#define BK_CUDA_API_VERSION 12000

typedef int CUresult;                 /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct CUgraphNode_st *CUgraphNode;
/* A tensor map for the bulk tensor copy engine (sm_90): opaque, 128 bytes. */
typedef struct CUtensorMap_st {
    _Alignas(64) unsigned long long opaque[16];
} CUtensorMap;

enum {
    BK_CUDA_SUCCESS = 0,
    BK_CUDA_ERROR_INVALID_VALUE = 1,
    BK_CUDA_ERROR_OUT_OF_MEMORY = 2,
    BK_CUDA_ERROR_NOT_INITIALIZED = 3,
    BK_CUDA_ERROR_DEINITIALIZED = 4,
    BK_CUDA_ERROR_STUB_LIBRARY = 34,
    BK_CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    BK_CUDA_ERROR_NO_DEVICE = 100,
    BK_CUDA_ERROR_INVALID_DEVICE = 101,
    BK_CUDA_ERROR_INVALID_IMAGE = 200,
    BK_CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    BK_CUDA_ERROR_INVALID_PTX = 218,
    BK_CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
    BK_CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    BK_CUDA_ERROR_JIT_COMPILATION_DISABLED = 223,
    BK_CUDA_ERROR_INVALID_SOURCE = 300,
    BK_CUDA_ERROR_FILE_NOT_FOUND = 301,
    BK_CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
    BK_CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
    BK_CUDA_ERROR_INVALID_HANDLE = 400,
    BK_CUDA_ERROR_NOT_FOUND = 500,
    BK_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    BK_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    BK_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,   /* first of the capture errors */
    BK_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,  /* last of them */
};

/* cuLaunchKernelEx's configuration (CUlaunchConfig, CUlaunchAttribute). */
typedef struct CUlaunchAttribute_st {
    int id;
    char pad[4];
    union {
        char pad[64];
        int programmaticStreamSerializationAllowed;
        unsigned long long align;         /* the union is 8-byte aligned */
    } value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig_st {
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned int numAttrs;
} CUlaunchConfig;

/* A kernel node's parameters (CUDA_KERNEL_NODE_PARAMS_v2 of CUDA 12.0; kern
 * and ctx stay NULL, func names the kernel). */
typedef struct CUDA_KERNEL_NODE_PARAMS_st {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void **kernelParams;
    void **extra;
    void *kern;
    CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS;

enum {
    BK_CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
    BK_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    BK_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,      /* kHz */
    BK_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37, /* bits */
    BK_CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
    BK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    BK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    BK_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
    BK_CU_STREAM_DEFAULT = 0,             /* orders with the legacy default stream */
    BK_CU_STREAM_NON_BLOCKING = 1,
    BK_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
    BK_CU_STREAM_CAPTURE_STATUS_NONE = 0,
    BK_CU_MEMHOSTALLOC_PORTABLE = 0x01,
    BK_CU_MEMHOSTALLOC_DEVICEMAP = 0x02,
    BK_CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
    BK_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    BK_CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
    BK_CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
    BK_CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
    BK_CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
    BK_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
    BK_CU_TENSOR_MAP_SWIZZLE_NONE = 0,
    BK_CU_TENSOR_MAP_SWIZZLE_128B = 3,
    BK_CU_TENSOR_MAP_L2_PROMOTION_128B = 2,
    BK_CU_TENSOR_MAP_L2_PROMOTION_256B = 3,
};

/* X(name, parameter list): every entry point libbk calls. */
#define BK_CUDA_DRIVER_FUNCTIONS(X)                                                          \
    X(cuInit, (unsigned int flags))                                                          \
    X(cuDriverGetVersion, (int *version))                                                    \
    X(cuGetErrorName, (CUresult error, const char **name))                                   \
    X(cuGetErrorString, (CUresult error, const char **text))                                 \
    X(cuDeviceGetCount, (int *count))                                                        \
    X(cuDeviceGet, (CUdevice *device, int ordinal))                                          \
    X(cuDeviceGetName, (char *name, int len, CUdevice dev))                                  \
    X(cuDeviceGetAttribute, (int *value, int attrib, CUdevice dev))                          \
    X(cuDeviceTotalMem, (size_t *bytes, CUdevice dev))                                       \
    X(cuDevicePrimaryCtxRetain, (CUcontext *pctx, CUdevice dev))                             \
    X(cuDevicePrimaryCtxRelease, (CUdevice dev))                                             \
    X(cuCtxGetCurrent, (CUcontext *pctx))                                                    \
    X(cuCtxPushCurrent, (CUcontext ctx))                                                     \
    X(cuCtxPopCurrent, (CUcontext *pctx))                                                    \
    X(cuMemAlloc, (CUdeviceptr *dptr, size_t bytes))                                         \
    X(cuMemFree, (CUdeviceptr dptr))                                                         \
    X(cuMemHostAlloc, (void **pp, size_t bytes, unsigned int flags))                         \
    X(cuMemFreeHost, (void *p))                                                              \
    X(cuMemHostGetDevicePointer, (CUdeviceptr *dptr, void *p, unsigned int flags))           \
    X(cuMemcpyHtoD, (CUdeviceptr dst, const void *src, size_t bytes))                        \
    X(cuMemcpyDtoH, (void *dst, CUdeviceptr src, size_t bytes))                              \
    X(cuMemcpyAsync, (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream))      \
    X(cuMemsetD32Async, (CUdeviceptr dst, unsigned int value, size_t count, CUstream stream)) \
    X(cuStreamCreate, (CUstream *stream, unsigned int flags))                                \
    X(cuStreamDestroy, (CUstream stream))                                                    \
    X(cuStreamSynchronize, (CUstream stream))                                                \
    X(cuStreamGetCtx, (CUstream stream, CUcontext *pctx))                                    \
    X(cuStreamBeginCapture, (CUstream stream, int mode))                                     \
    X(cuStreamEndCapture, (CUstream stream, CUgraph *graph))                                 \
    X(cuStreamIsCapturing, (CUstream stream, int *status))                                   \
    X(cuGraphCreate, (CUgraph *graph, unsigned int flags))                                   \
    X(cuGraphAddKernelNode, (CUgraphNode *node, CUgraph graph, const CUgraphNode *deps,      \
                             size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *params))           \
    X(cuGraphExecKernelNodeSetParams,                                                        \
      (CUgraphExec exec, CUgraphNode node, const CUDA_KERNEL_NODE_PARAMS *params))           \
    X(cuGraphInstantiateWithFlags, (CUgraphExec *exec, CUgraph graph, unsigned long long flags)) \
    X(cuGraphLaunch, (CUgraphExec exec, CUstream stream))                                    \
    X(cuGraphExecDestroy, (CUgraphExec exec))                                                \
    X(cuGraphDestroy, (CUgraph graph))                                                       \
    X(cuModuleLoadData, (CUmodule *module, const void *image))                               \
    X(cuModuleUnload, (CUmodule module))                                                     \
    X(cuModuleGetFunction, (CUfunction *fn, CUmodule module, const char *name))              \
    X(cuFuncSetAttribute, (CUfunction fn, int attrib, int value))                            \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor,                                           \
      (int *blocks, CUfunction fn, int block_size, size_t dynamic_smem))                     \
    X(cuOccupancyMaxActiveClusters, (int *clusters, CUfunction fn, const CUlaunchConfig *config)) \
    X(cuLaunchKernel, (CUfunction fn, unsigned int gx, unsigned int gy, unsigned int gz,     \
                       unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem, \
                       CUstream stream, void **params, void **extra))                        \
    X(cuLaunchKernelEx,                                                                      \
      (const CUlaunchConfig *config, CUfunction fn, void **params, void **extra))            \
    X(cuTensorMapEncodeTiled,                                                                \
      (CUtensorMap *map, int type, unsigned int rank, void *address, const uint64_t *dims,   \
       const uint64_t *strides, const unsigned int *box, const unsigned int *element_strides, \
       int interleave, int swizzle, int l2_promotion, int oob_fill))

#define BK_CUDA_DECLARE_POINTER(name, params) CUresult (*name) params;
struct bk_cuda_driver {
    BK_CUDA_DRIVER_FUNCTIONS(BK_CUDA_DECLARE_POINTER)
    int version;                      /* cuDriverGetVersion: 1000 * major + 10 * minor */
};
#undef BK_CUDA_DECLARE_POINTER

/* Opens the driver once per process (thread-safe) and returns its table,
 * or NULL with why in *result (BK_ERROR_DRIVER_NOT_FOUND, or
 * BK_ERROR_NO_DEVICE when cuInit finds no usable GPU), also recorded as the
 * calling thread's error message when report is true. The library libcuda.so.1 can be
 * replaced with the environment variable BK_CUDA_DRIVER (a file name or
 * path for dlopen), which tests use to simulate a machine without one. */
BK_HIDDEN const struct bk_cuda_driver *bk_cuda_driver(BkResult *result, bool report);

/* The BkResult for a failed driver call: out of memory, no device, module
 * load failed, invalid argument, or device lost for launch failures and
 * sticky errors. */
BK_HIDDEN BkResult bk_cuda_result(CUresult r);
/* Records "<what>: CUDA_ERROR_NAME (description)" and returns the mapped
 * result (or forced, when forced is not BK_SUCCESS). */
BK_HIDDEN BkResult bk_cuda_error(CUresult r, BkResult forced, const char *what, ...)
    __attribute__((format(printf, 3, 4)));

/* The driver table after a successful bk_cuda_driver() (contexts exist only
 * then), for the hot paths. */
BK_HIDDEN extern struct bk_cuda_driver bk_cu;

/* BK_SUCCESS when r is CUDA_SUCCESS, else the recorded error; what names
 * the call for the message. */
static inline BkResult bk_cu_check(CUresult r, const char *what)
{
    return r == BK_CUDA_SUCCESS ? BK_SUCCESS : bk_cuda_error(r, BK_SUCCESS, "%s", what);
}

#endif /* BK_CUDA_DRIVER_H */
