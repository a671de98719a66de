/* Internal objects of libbk and the seam between the core and a backend.
 *
 * The core (the .c files in lib/) validates every call and every op info, normalises
 * problems into backend-neutral structs and keeps the generic run-time
 * checks; a backend (lib/host/, lib/cuda/) only allocates, copies, and
 * selects and launches kernels through struct bk_backend. Adding a
 * backend never touches op validation. */
#ifndef BK_INTERNAL_H
#define BK_INTERNAL_H

#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#define BK_HIDDEN __attribute__((visibility("hidden")))
#define BK_MAX_BINDINGS 8u

/* ---- Errors (lib/error.c) -------------------------------------------- */
/* Records a message for the calling thread, sends it to the message
 * callback and returns result, so callers write: return bk_error(...). */
BK_HIDDEN BkResult bk_error(BkResult result, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
BK_HIDDEN const char *bk_data_type_name(BkDataType type);
BK_HIDDEN size_t bk_data_type_size(BkDataType type); /* 0 for unknown */

/* ---- Host allocation (lib/alloc.c) ------------------------------------ */
/* An allocator with NULL callbacks uses the C library. Allocations are
 * zeroed. */
BK_HIDDEN BkResult bk_check_allocator(const BkAllocationCallbacks *cb, const char *who);
BK_HIDDEN void *bk_alloc(const BkAllocationCallbacks *cb, size_t size);
BK_HIDDEN void bk_free(const BkAllocationCallbacks *cb, void *p);
/* Not zeroed, any power-of-two alignment: for large buffers (host device
 * memory). Free with bk_free. */
BK_HIDDEN void *bk_alloc_aligned(const BkAllocationCallbacks *cb, size_t size, size_t alignment);
BK_HIDDEN BkAllocationCallbacks bk_allocator_copy(const BkAllocationCallbacks *cb);

/* ---- pNext / sType helpers (lib/structs.c) ---------------------------- */
BK_HIDDEN BkResult bk_check_stype(const void *s, BkStructureType want, const char *what);

/* Whether byte ranges [a, a+an) and [b, b+bn) share a byte. */
static inline bool bk_ranges_overlap(BkDeviceAddress a, uint64_t an, BkDeviceAddress b, uint64_t bn)
{
    return an && bn && a < b + bn && b < a + an;
}

/* ---- Tensors (lib/tensor.c) ------------------------------------------- */
/* A validated tensor: explicit strides and its byte span from the base. */
struct bk_tensor {
    BkDataType type;
    uint32_t rank;
    int64_t extent[BK_MAX_TENSOR_RANK];
    int64_t stride[BK_MAX_TENSOR_RANK];
    int64_t count;     /* number of elements */
    uint64_t span;     /* bytes from the base address to one past the last element; 0 if empty */
};

/* Checks rank, extents, strides (all zero = row-major contiguous, else all
 * positive) and that the byte span fits in 64 bits; name is the field path
 * used in messages ("BkGatedActivationInfo.input"). */
BK_HIDDEN BkResult bk_tensor_from_desc(const BkTensorDesc *desc, const char *name,
                                       struct bk_tensor *out);
/* For tensors that are written: no two indices may reach one element. */
BK_HIDDEN BkResult bk_tensor_check_no_self_overlap(const struct bk_tensor *t, const char *name);

/* ---- Objects ---------------------------------------------------------- */
struct bk_backend;

struct BkContext_T {
    const struct bk_backend *backend;
    BkAllocationCallbacks alloc;
    BkDeviceProperties props;
    uint32_t queue_count;
    BkQueue *queues;              /* the context's own queues, queue_count of them */
    void *impl;                   /* backend state */
    bool backend_ready;           /* context_create succeeded: call context_destroy */
    void *registry;               /* lib/memory.c: live BkMemory, for bound checks */
};

struct BkQueue_T {
    BkContext ctx;
    uint32_t index;
    bool imported;
    void *impl;                   /* backend state (a CUstream on CUDA) */
};

struct BkMemory_T {
    BkContext ctx;
    BkAllocationCallbacks alloc;
    BkMemoryType type;
    uint64_t size;
    BkDeviceAddress address;
    void *impl;
};

enum bk_command_type { BK_CMD_RUN, BK_CMD_COPY, BK_CMD_FILL };

struct bk_run_args {
    BkDeviceAddress binding[BK_MAX_BINDINGS];
    BkDeviceAddress workspace;
    uint64_t workspace_size;
};

struct bk_command {
    enum bk_command_type type;
    union {
        struct { BkPlan plan; struct bk_run_args args; } run;
        struct { BkDeviceAddress dst, src; uint64_t size; } copy;
        struct { BkDeviceAddress dst; uint64_t size; uint32_t pattern; } fill;
    } u;
};

enum bk_command_buffer_state {
    BK_CMDBUF_INITIAL,            /* allocated, or a one-time buffer after submit */
    BK_CMDBUF_RECORDING,
    BK_CMDBUF_EXECUTABLE
};

struct BkCommandBuffer_T {
    BkContext ctx;
    BkAllocationCallbacks alloc;
    enum bk_command_buffer_state state;
    BkCommandBufferUsage usage;
    struct bk_command *cmds;
    uint32_t count, capacity;
    void *impl;                   /* backend cache (a CUDA graph for a reusable one) */
};

/* lib/command_buffer.c: shared with bkCmdRun in lib/plan.c. */
BK_HIDDEN BkResult bk_command_buffer_check_recording(BkCommandBuffer cmd, const char *fn);
BK_HIDDEN BkResult bk_command_buffer_append(BkCommandBuffer cmd, const struct bk_command *c,
                                            const char *fn);

/* ---- Operations ------------------------------------------------------- */
enum bk_op { BK_OP_GATED_FORWARD, BK_OP_GATED_BACKWARD, BK_OP_COUNT };

/* Gated activation, normalised: the iteration space is the half-size
 * (output) shape, coalesced; the split axis is folded into gate offsets,
 * so element i of a sits at x + off(i) and its b twin at x + off(i) +
 * x_gate_offset. Strides in elements. */
struct bk_gated_problem {
    BkGatedActivationKind kind;
    BkDataType type;
    bool backward;
    uint32_t rank;                         /* >= 1 */
    int64_t extent[BK_MAX_TENSOR_RANK];
    int64_t x_stride[BK_MAX_TENSOR_RANK];  /* input x */
    int64_t y_stride[BK_MAX_TENSOR_RANK];  /* forward output y, or backward dy */
    int64_t dx_stride[BK_MAX_TENSOR_RANK]; /* backward dx */
    int64_t x_gate_offset;
    int64_t dx_gate_offset;
    int64_t count;                         /* elements of the iteration space */
};

/* What the generic run-time checks need to know of each binding slot. */
struct bk_slot {
    const char *name;             /* "input", "gradOutput", ... */
    uint64_t span;                /* bytes the op touches from the address */
    uint32_t alignment;           /* required address alignment in bytes */
    bool written;
};

typedef BkResult (*bk_launch_fn)(BkQueue queue, BkPlan plan, const struct bk_run_args *args);

struct BkPlan_T {
    BkContext ctx;
    BkAllocationCallbacks alloc;
    enum bk_op op;
    const char *op_name;                   /* for messages: "BkGatedActivationInfo" */
    BkPlanProperties props;                /* filled by core + backend select */
    struct bk_slot slot[BK_MAX_BINDINGS];  /* props.bindingCount of them */
    union {
        struct bk_gated_problem gated;
    } problem;
    bk_launch_fn launch;                   /* set by plan_select where used */
    void *impl;                            /* backend per-plan state */
};

/* Op families: validate an info struct into plan->problem, slots and
 * bindingCount (lib/gated_activation.c, ...). */
BK_HIDDEN BkResult bk_gated_activation_init(BkPlan plan, const void *info);

/* ---- Backends --------------------------------------------------------- */
struct bk_backend {
    BkDeviceType type;
    const char *name;
    /* Count devices; fill props[0..*count) when props is not NULL. A backend
     * that cannot run at all reports 0 and returns why (driver not found). */
    BkResult (*enumerate)(uint32_t *count, BkDeviceProperties *props);
    /* Set ctx->props, ctx->queue_count and ctx->impl for device index. */
    BkResult (*context_create)(BkContext ctx, uint32_t device_index);
    void (*context_destroy)(BkContext ctx);
    /* mem->type and mem->size are set; set mem->address and mem->impl. */
    BkResult (*memory_allocate)(BkContext ctx, BkMemory mem);
    void (*memory_free)(BkContext ctx, BkMemory mem);
    BkResult (*copy_to_device)(BkContext ctx, BkDeviceAddress dst, const void *src, uint64_t size);
    BkResult (*copy_from_device)(BkContext ctx, void *dst, BkDeviceAddress src, uint64_t size);
    BkResult (*queue_create)(BkQueue queue);                 /* queue->index set */
    BkResult (*queue_import)(BkQueue queue, void *native);
    void (*queue_destroy)(BkQueue queue);
    BkResult (*queue_wait_idle)(BkQueue queue);
    /* Execute (host) or enqueue (device) an executable command buffer. */
    BkResult (*submit)(BkQueue queue, BkCommandBuffer cmd);
    /* Drop what submit cached in cmd->impl (begin again, free). */
    void (*command_buffer_reset)(BkCommandBuffer cmd);
    /* Choose a kernel for plan->op and plan->problem: set plan->impl,
     * props.kernelName and, where the backend's submit calls it (host),
     * plan->launch (the op family has set precision and workspace; a
     * backend may raise the workspace). */
    BkResult (*plan_select)(BkPlan plan);
    void (*plan_destroy)(BkPlan plan);
    /* Architectures of the embedded GPU code, space-separated ("80 86 89
     * 90"); NULL or "" when the backend runs no GPU code. */
    const char *binary_architectures;
    const char *ptx_architectures;
};

BK_HIDDEN extern const struct bk_backend bk_host_backend;
#ifdef BK_HAVE_CUDA
BK_HIDDEN extern const struct bk_backend bk_cuda_backend;
#endif


/* ---- Memory registry (lib/memory.c) ----------------------------------- */
/* Bytes of the BkMemory holding addr from addr to its end, or 0 when addr
 * lies in no allocation of ctx. */
BK_HIDDEN uint64_t bk_memory_bytes_after(BkContext ctx, BkDeviceAddress addr);
/* BK_ERROR_BUFFER_TOO_SMALL when [addr, addr+size) starts inside a BkMemory
 * of ctx and runs past its end; fn and name make the message. */
BK_HIDDEN BkResult bk_memory_check_range(BkContext ctx, const char *fn, const char *name,
                                         BkDeviceAddress addr, uint64_t size);
BK_HIDDEN BkResult bk_memory_registry_create(BkContext ctx);
BK_HIDDEN void bk_memory_registry_destroy(BkContext ctx);

#endif /* BK_INTERNAL_H */
