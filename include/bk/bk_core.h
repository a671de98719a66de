/* SPDX-License-Identifier: Apache-2.0 */
/* libbk core API: results, structure types, handles, tensors, devices,
 * contexts, memory, queues, command buffers and plans.
 *
 * Conventions (see bk(7)): every input struct begins with sType/pNext;
 * every enum is 32 bits; errors are negative BkResult values and leave a
 * per-thread message readable with bkGetLastErrorMessage(). */
#ifndef BK_CORE_H
#define BK_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BK_BUILDING_LIBRARY) && defined(__GNUC__)
#define BK_API __attribute__((visibility("default")))
#else
#define BK_API
#endif

/* ---- Version ---------------------------------------------------------- */
#define BK_VERSION_MAJOR 0
#define BK_VERSION_MINOR 1
#define BK_VERSION_PATCH 0
#define BK_MAKE_VERSION(major, minor, patch) \
    ((((uint32_t)(major)) << 22) | (((uint32_t)(minor)) << 12) | ((uint32_t)(patch)))
#define BK_VERSION_GET_MAJOR(v) (((uint32_t)(v)) >> 22)
#define BK_VERSION_GET_MINOR(v) ((((uint32_t)(v)) >> 12) & 0x3FFu)
#define BK_VERSION_GET_PATCH(v) (((uint32_t)(v)) & 0xFFFu)
#define BK_HEADER_VERSION BK_MAKE_VERSION(BK_VERSION_MAJOR, BK_VERSION_MINOR, BK_VERSION_PATCH)

#define BK_NULL_HANDLE NULL
#define BK_MAX_TENSOR_RANK 8u
#define BK_MAX_NAME_SIZE 256u
#define BK_MAX_KERNEL_NAME_SIZE 64u
#define BK_MAX_MODULE_ARCHITECTURES 16u
#define BK_MAX_BINDINGS 16u
#define BK_MAX_BINDING_NAME_SIZE 32u
#define BK_TRUE 1u
#define BK_FALSE 0u

typedef uint32_t BkBool32;
/* A device address: a pointer in the device's address space (host memory
 * on the host device, a CUdeviceptr on CUDA). Memory allocated outside
 * libbk (cudaMalloc, CUDA Fortran, OpenACC, PyTorch) can be bound too. */
typedef uint64_t BkDeviceAddress;

/* ---- Handles ---------------------------------------------------------- */
typedef struct BkContext_T *BkContext;
typedef struct BkQueue_T *BkQueue;
typedef struct BkCommandBuffer_T *BkCommandBuffer;
typedef struct BkPlan_T *BkPlan;
typedef struct BkMemory_T *BkMemory;

/* ---- Results ---------------------------------------------------------- */
typedef enum BkResult {
    BK_SUCCESS = 0,
    BK_INCOMPLETE = 1,                      /* two-call idiom: array too small */
    BK_ERROR_INVALID_ARGUMENT = -1,         /* a field breaks a documented rule */
    BK_ERROR_UNSUPPORTED = -2,              /* valid, but not on this build/device */
    BK_ERROR_MISALIGNED_OPERAND = -3,       /* an address breaks an alignment rule */
    BK_ERROR_WORKSPACE_TOO_SMALL = -4,
    BK_ERROR_BUFFER_TOO_SMALL = -5,         /* a binding is smaller than its tensor */
    BK_ERROR_OUT_OF_HOST_MEMORY = -6,
    BK_ERROR_OUT_OF_DEVICE_MEMORY = -7,
    BK_ERROR_DRIVER_NOT_FOUND = -8,
    BK_ERROR_NO_DEVICE = -9,
    BK_ERROR_DEVICE_LOST = -10,
    BK_ERROR_MODULE_LOAD_FAILED = -11,
    BK_ERROR_INCOMPATIBLE_VERSION = -12,
    BK_ERROR_INVALID_STATE = -13,           /* object in the wrong state for the call */
    BK_RESULT_MAX_ENUM = 0x7FFFFFFF
} BkResult;

/* ---- Structure types -------------------------------------------------- */
typedef enum BkStructureType {
    BK_STRUCTURE_TYPE_UNDEFINED = 0,
    BK_STRUCTURE_TYPE_DEVICE_PROPERTIES = 1,
    BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO = 2,
    BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO = 3,
    BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO = 4,
    BK_STRUCTURE_TYPE_PLAN_CREATE_INFO = 5,
    BK_STRUCTURE_TYPE_PLAN_PROPERTIES = 6,
    BK_STRUCTURE_TYPE_RUN_INFO = 7,
    BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES = 8,
    BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES = 9,
    BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO = 100,
    BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO = 101,
    BK_STRUCTURE_TYPE_GEMM_INFO = 200,
    BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO = 201,
    BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO = 202,
    BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO = 203,
    BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO = 300,
    BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO = 301,
    BK_STRUCTURE_TYPE_W4A16_GEMM_INFO = 302,
    BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO = 303,
    BK_STRUCTURE_TYPE_ATTENTION_INFO = 400,
    BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO = 401,
    BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO = 402,
    BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO = 403,
    BK_STRUCTURE_TYPE_CONVERT_INFO = 500,
    BK_STRUCTURE_TYPE_MAX_ENUM = 0x7FFFFFFF
} BkStructureType;

/* Every input struct starts with these two fields; pNext chains extension
 * structs, and a struct in a chain whose sType libbk does not know is
 * skipped. */
typedef struct BkBaseInStructure {
    BkStructureType sType;
    const struct BkBaseInStructure *pNext;
} BkBaseInStructure;

/* The same for structs libbk fills in (properties). */
typedef struct BkBaseOutStructure {
    BkStructureType sType;
    struct BkBaseOutStructure *pNext;
} BkBaseOutStructure;

/* ---- Data types and tensors ------------------------------------------- */
typedef enum BkDataType {
    BK_DATA_TYPE_UNDEFINED = 0,
    BK_DATA_TYPE_F32 = 1,
    BK_DATA_TYPE_F16 = 2,
    BK_DATA_TYPE_BF16 = 3,
    BK_DATA_TYPE_F64 = 4,
    BK_DATA_TYPE_I32 = 5,
    BK_DATA_TYPE_U16 = 6,
    BK_DATA_TYPE_U8 = 7,
    BK_DATA_TYPE_I8 = 8,
    BK_DATA_TYPE_U32 = 9,
    /* Only a BkPrecisionGuarantee.computeType: F32 inputs rounded to a
     * 10-bit mantissa for tensor cores. No tensor has this type. */
    BK_DATA_TYPE_TF32 = 10,
    BK_DATA_TYPE_MAX_ENUM = 0x7FFFFFFF
} BkDataType;

/* A strided view of rank 1..8. extent[0] is the slowest index (row-major
 * index order: a Fortran array x(d, l, h, b) is extent {b, h, l, d}).
 * stride[] is in elements; all-zero strides mean row-major contiguous. */
typedef struct BkTensorDesc {
    BkDataType dataType;
    uint32_t rank;
    int64_t extent[BK_MAX_TENSOR_RANK];
    int64_t stride[BK_MAX_TENSOR_RANK];
} BkTensorDesc;

/* ---- Host allocation callbacks ---------------------------------------- */
typedef void *(*PFN_bkAllocationFunction)(void *pUserData, size_t size, size_t alignment);
typedef void (*PFN_bkFreeFunction)(void *pUserData, void *pMemory);

typedef struct BkAllocationCallbacks {
    void *pUserData;
    PFN_bkAllocationFunction pfnAllocation;  /* must return memory aligned to 'alignment' or NULL */
    PFN_bkFreeFunction pfnFree;
} BkAllocationCallbacks;

/* ---- Errors and messages ---------------------------------------------- */
typedef void (*PFN_bkMessageCallback)(BkResult result, const char *pMessage, void *pUserData);

BK_API uint32_t bkGetVersion(void);
BK_API const char *bkResultString(BkResult result);
BK_API const char *bkGetLastErrorMessage(void);
BK_API void bkSetMessageCallback(PFN_bkMessageCallback pfnCallback, void *pUserData);

/* ---- Devices and contexts --------------------------------------------- */
typedef enum BkDeviceType {
    BK_DEVICE_TYPE_AUTO = 0,   /* the first CUDA device when one works, else the host */
    BK_DEVICE_TYPE_HOST = 1,
    BK_DEVICE_TYPE_CUDA = 2,
    BK_DEVICE_TYPE_MAX_ENUM = 0x7FFFFFFF
} BkDeviceType;

typedef struct BkDeviceProperties {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_DEVICE_PROPERTIES */
    void *pNext;
    BkDeviceType deviceType;
    uint32_t deviceIndex;             /* index among devices of this type */
    char name[BK_MAX_NAME_SIZE];
    uint32_t computeCapabilityMajor;  /* 0 on the host device */
    uint32_t computeCapabilityMinor;
    uint32_t multiprocessorCount;     /* CUDA SMs, or host processors */
    uint32_t queueCount;              /* valid indices for bkGetQueue */
    uint64_t totalMemory;             /* bytes */
    uint32_t driverVersion;           /* CUDA driver version, 0 on the host */
    uint32_t runtimeVersion;          /* CUDA version libbk's modules target, 0 on the host */
} BkDeviceProperties;

/* Chain to BkDeviceProperties.pNext (bkEnumerateDevices,
 * bkGetContextProperties) to learn which GPU code libbk carries for the
 * device's backend. Architectures are 10 * major + minor (90 = sm_90). */
typedef struct BkDeviceModuleProperties {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES */
    void *pNext;
    uint32_t binaryArchitectureCount; /* cubins: run on that major, that minor or later */
    uint32_t binaryArchitectures[BK_MAX_MODULE_ARCHITECTURES];
    uint32_t ptxArchitectureCount;    /* PTX: compiled by the driver for that or later GPUs */
    uint32_t ptxArchitectures[BK_MAX_MODULE_ARCHITECTURES];
    BkBool32 deviceSupported;         /* the device can run libbk's code */
} BkDeviceModuleProperties;

typedef struct BkContextCreateInfo {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO */
    const void *pNext;
    BkDeviceType deviceType;
    uint32_t deviceIndex;
    uint32_t apiVersion;              /* BK_HEADER_VERSION or 0; a newer major fails */
    uint32_t flags;                   /* reserved, 0 */
} BkContextCreateInfo;

BK_API BkResult bkEnumerateDevices(uint32_t *pDeviceCount, BkDeviceProperties *pProperties);
BK_API BkResult bkCreateContext(const BkContextCreateInfo *pCreateInfo,
                                const BkAllocationCallbacks *pAllocator, BkContext *pContext);
BK_API void bkDestroyContext(BkContext context);
BK_API BkResult bkGetContextProperties(BkContext context, BkDeviceProperties *pProperties);

/* ---- Memory ----------------------------------------------------------- */
typedef enum BkMemoryType {
    BK_MEMORY_TYPE_DEVICE = 0,        /* device memory (host memory on the host device) */
    BK_MEMORY_TYPE_HOST_PINNED = 1,   /* page-locked host memory the device can address */
    BK_MEMORY_TYPE_MAX_ENUM = 0x7FFFFFFF
} BkMemoryType;

typedef struct BkMemoryAllocateInfo {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO */
    const void *pNext;
    uint64_t size;                    /* bytes, > 0 */
    BkMemoryType memoryType;
} BkMemoryAllocateInfo;

BK_API BkResult bkAllocateMemory(BkContext context, const BkMemoryAllocateInfo *pAllocateInfo,
                                 const BkAllocationCallbacks *pAllocator, BkMemory *pMemory);
BK_API void bkFreeMemory(BkContext context, BkMemory memory);
BK_API BkResult bkGetMemoryAddress(BkMemory memory, BkDeviceAddress *pAddress);
BK_API BkResult bkCopyToDevice(BkContext context, BkDeviceAddress dst, const void *pSrc,
                               uint64_t size);
BK_API BkResult bkCopyFromDevice(BkContext context, void *pDst, BkDeviceAddress src,
                                 uint64_t size);

/* ---- Queues ----------------------------------------------------------- */
BK_API BkResult bkGetQueue(BkContext context, uint32_t queueIndex, BkQueue *pQueue);
/* Wrap an existing native queue (a CUstream on CUDA) without taking
 * ownership; release the wrapper with bkDestroyQueue. */
BK_API BkResult bkImportQueue(BkContext context, void *pNativeQueue, BkQueue *pQueue);
BK_API void bkDestroyQueue(BkQueue queue);
BK_API BkResult bkQueueWaitIdle(BkQueue queue);

/* ---- Command buffers -------------------------------------------------- */
typedef enum BkCommandBufferUsage {
    BK_COMMAND_BUFFER_USAGE_ONE_TIME = 0,  /* submitted once, then begun again */
    BK_COMMAND_BUFFER_USAGE_REUSABLE = 1,  /* recorded once, replayed at each submit */
    BK_COMMAND_BUFFER_USAGE_MAX_ENUM = 0x7FFFFFFF
} BkCommandBufferUsage;

typedef struct BkCommandBufferBeginInfo {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO */
    const void *pNext;
    BkCommandBufferUsage usage;
} BkCommandBufferBeginInfo;

BK_API BkResult bkAllocateCommandBuffer(BkContext context, const BkAllocationCallbacks *pAllocator,
                                        BkCommandBuffer *pCommandBuffer);
BK_API void bkFreeCommandBuffer(BkCommandBuffer commandBuffer);
BK_API BkResult bkBeginCommandBuffer(BkCommandBuffer commandBuffer,
                                     const BkCommandBufferBeginInfo *pBeginInfo);
BK_API BkResult bkEndCommandBuffer(BkCommandBuffer commandBuffer);
BK_API BkResult bkQueueSubmit(BkQueue queue, uint32_t commandBufferCount,
                              const BkCommandBuffer *pCommandBuffers);
BK_API BkResult bkCmdCopyMemory(BkCommandBuffer commandBuffer, BkDeviceAddress dst,
                                BkDeviceAddress src, uint64_t size);
/* Fills size bytes (a multiple of 4, dst 4-byte aligned) with a 32-bit pattern. */
BK_API BkResult bkCmdFillMemory(BkCommandBuffer commandBuffer, BkDeviceAddress dst,
                                uint64_t size, uint32_t pattern);

/* ---- Plans ------------------------------------------------------------ */
typedef struct BkPlanCreateInfo {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_PLAN_CREATE_INFO */
    const void *pNext;
    const void *pOperation;           /* an op info struct, told apart by its sType */
    uint32_t flags;                   /* reserved, 0 */
} BkPlanCreateInfo;

typedef struct BkPrecisionGuarantee {
    BkDataType computeType;           /* type the arithmetic is done in */
    BkDataType accumulatorType;       /* type sums are kept in (computeType if none) */
    BkBool32 deterministic;           /* same inputs give the same output, run to run */
    BkBool32 bitStable;               /* ... bit for bit on the same device and build */
} BkPrecisionGuarantee;

typedef struct BkPlanProperties {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_PLAN_PROPERTIES */
    void *pNext;
    BkStructureType operation;        /* sType of the op info the plan was made from */
    BkDeviceType backend;
    uint32_t bindingCount;            /* slots of BkRunInfo.pBindings */
    uint64_t workspaceSize;           /* bytes the caller binds at run time */
    uint64_t workspaceAlignment;
    char kernelName[BK_MAX_KERNEL_NAME_SIZE];
    BkPrecisionGuarantee precision;
} BkPlanProperties;

/* Chain to BkPlanProperties.pNext to learn what each binding slot needs:
 * how many bytes from its address the op touches (the size a buffer must
 * have; an opaque output such as a prepared weight is sized only here),
 * its alignment and whether the op writes it. */
typedef struct BkBindingProperties {
    char name[BK_MAX_BINDING_NAME_SIZE]; /* the slot's field name: "input", "d", ... */
    uint64_t size;                    /* bytes; 0 when the plan does not use the slot */
    uint64_t alignment;               /* required address alignment in bytes */
    BkBool32 written;
    uint32_t reserved;
} BkBindingProperties;

typedef struct BkPlanBindingProperties {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES */
    void *pNext;
    uint32_t bindingCount;            /* BkPlanProperties.bindingCount */
    uint32_t reserved;
    BkBindingProperties bindings[BK_MAX_BINDINGS];
} BkPlanBindingProperties;

typedef struct BkRunInfo {
    BkStructureType sType;            /* BK_STRUCTURE_TYPE_RUN_INFO */
    const void *pNext;
    uint32_t bindingCount;            /* must equal BkPlanProperties.bindingCount */
    const BkDeviceAddress *pBindings; /* one address per documented slot */
    const uint64_t *pBindingSizes;    /* optional: bytes behind each address, 0 = unknown */
    BkDeviceAddress workspace;
    uint64_t workspaceSize;
} BkRunInfo;

BK_API BkResult bkCreatePlan(BkContext context, const BkPlanCreateInfo *pCreateInfo,
                             const BkAllocationCallbacks *pAllocator, BkPlan *pPlan);
BK_API void bkDestroyPlan(BkPlan plan);
BK_API BkResult bkGetPlanProperties(BkPlan plan, BkPlanProperties *pProperties);
BK_API BkResult bkCmdRun(BkCommandBuffer commandBuffer, BkPlan plan, const BkRunInfo *pRunInfo);
/* Runs plan on queue in one call: a one-time command buffer of this one
 * run, submitted as by bkQueueSubmit (wait with bkQueueWaitIdle before
 * reading the outputs). Allocates nothing. */
BK_API BkResult bkQueueRun(BkQueue queue, BkPlan plan, const BkRunInfo *pRunInfo);

#ifdef __cplusplus
}
#endif
#endif /* BK_CORE_H */
