/* SPDX-License-Identifier: Apache-2.0 */
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
#include "checked.h"

#include "op_registry.h"

#define BK_HIDDEN __attribute__((visibility("hidden")))

/* ---- Errors (lib/error.c) -------------------------------------------- */
/* Records a message for the calling thread, sends it to the message
 * callback and returns result, so callers write: return bk_error(...). */
BK_HIDDEN BkResult bk_error(BkResult result, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A try that may be abandoned for another way (a fallback): between begin
 * and end, errors are recorded but not sent to the message callback; end
 * with discard restores the message from before begin (the try's failure
 * is no error of the call), else sends a failing result's message on. */
BK_HIDDEN void bk_error_tentative_begin(void);
BK_HIDDEN BkResult bk_error_tentative_end(BkResult result, bool discard);
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
/* An output chain (the pNext of a struct a call fills) must end: a cycle
 * gets BK_ERROR_INVALID_ARGUMENT naming what and the struct that closes
 * it. Call before any walk of the chain. */
BK_HIDDEN BkResult bk_check_output_chain(const void *head, const char *what);

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
/* bk_tensor_from_desc for the field info.field (the name in messages),
 * which must have the given rank. */
BK_HIDDEN BkResult bk_tensor_field(const char *info, const char *field, const BkTensorDesc *desc,
                                   uint32_t rank, struct bk_tensor *t);
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
/* lib/plan.c: bkCmdRun's checks and its command, shared with bkQueueRun. */
BK_HIDDEN BkResult bk_plan_run_command(BkContext ctx, BkPlan plan, const BkRunInfo *pRunInfo,
                                       const char *fn, const char *owner, struct bk_command *c);

/* ---- Operations ------------------------------------------------------- */
/* One per row of the op registry (op_registry.h). */
#define BK_OP_ENUM(op, stype, info, init, host, cuda) BK_OP_##op,
enum bk_op { BK_OPS(BK_OP_ENUM) BK_OP_COUNT };
#undef BK_OP_ENUM

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

/* A matrix operand of the GEMM family, normalised: element (i, j) of
 * batch b sits at base + b * batch_stride + i * row_stride + j * col_stride
 * (elements). Transposes are folded into the strides, so a backend sees
 * the logical operand (op(A), not A). batch_stride 0: shared by every
 * batch. For dense GEMM operands one of row_stride, col_stride is 1 and
 * the other at least the extent it steps over (a BLAS layout). */
struct bk_matrix {
    BkDataType type;
    int64_t rows, cols;
    int64_t row_stride, col_stride, batch_stride;
};

/* D = act(alpha * A @ B + beta * C + bias), A [m, k], B [k, n], C and D
 * [m, n], bias [n] (contiguous). An empty problem (m, n or batch 0) does
 * nothing; k == 0 is a product of zeros. */
struct bk_gemm_problem {
    BkDataType ab_type;                    /* A and B */
    BkDataType cd_type;                    /* C, D and bias */
    int64_t m, n, k, batch;
    struct bk_matrix a, b, c, d;
    bool has_c, has_bias, tf32;
    BkGemmActivation activation;
    double alpha, beta;
};

/* A conversion between dense [m, k] and the 2:4 interchange format
 * (values [m, k/2], metadata [m, k/8] U16); unused operands (validate)
 * have type UNDEFINED. */
struct bk_sparse24_convert_problem {
    BkSparse24Conversion conversion;
    BkDataType type;                       /* dense and values */
    int64_t m, k;
    struct bk_matrix dense, values, metadata;
};

/* The interchange format -> the backend's prepared weight. */
struct bk_sparse24_prepare_problem {
    BkDataType type;
    int64_t m, k;
    struct bk_matrix values, metadata;
};

/* Y = act(alpha * X @ W^T + beta * C + bias): W [m, k] prepared, X [n, k],
 * C and Y [n, m], bias [m]. The prepared weight's layout and size belong
 * to the backend (bk_backend.sparse24_prepared_size). */
struct bk_sparse24_gemm_problem {
    BkDataType type;                       /* W and X */
    BkDataType out_type;                   /* C, Y and bias */
    int64_t m, n, k, batch;
    struct bk_matrix x, c, y;
    bool has_c, has_bias;
    BkGemmActivation activation;
    double alpha, beta;
};

/* W4A16 (lib/w4a16.c, bk_w4a16.h). A weight [k, n] in groups of
 * `group` rows (k when per channel), `groups` = k / group scale rows.
 * Plain and GPTQ operands are bk_matrix (element strides, any positive);
 * packed [k/16, 2n] I32, packedScales [groups, n], gIdx and perm [k] are
 * contiguous. Absent operands have type UNDEFINED. */
struct bk_w4a16_shape {
    int64_t k, n, group, groups;
    bool per_channel;
    BkDataType scale_type;                 /* F16 or BF16 */
};

/* has_zeros: a BkW4A16ZeroPointsInfo is chained (asymmetric weights):
 * plain zeros U8 [groups, n] (conversions), packedZeros I32 [groups, n/8]
 * contiguous (conversions other than QUANTIZE, the repack, the GEMM). */
struct bk_w4a16_convert_problem {
    BkW4A16Conversion conversion;
    struct bk_w4a16_shape shape;
    struct bk_matrix weight;               /* QUANTIZE's input [k, n], else type UNDEFINED */
    struct bk_matrix quantized;            /* [k, n] U8 */
    struct bk_matrix scales;               /* [groups, n] */
    bool has_zeros;
    struct bk_matrix zeros;                /* [groups, n] U8 when has_zeros */
};

struct bk_w4a16_repack_problem {
    BkW4A16GptqZeros zeros;
    struct bk_w4a16_shape shape;
    struct bk_matrix qweight;              /* [k/8, n] I32 */
    struct bk_matrix scales;               /* [groups, n] */
    struct bk_matrix qzeros;               /* [groups, n/8] I32, or type UNDEFINED */
    bool has_g_idx, has_perm;
    bool has_zeros;                        /* packedZeros written, any zero point taken */
    BkW4A16CheckpointFormat format;        /* AWQ: qweight [k, n/8], AWQ's column order */
};

/* C = A @ dequant(packed): A [m, k], C [m, n], both shape.scale_type. */
struct bk_w4a16_gemm_problem {
    struct bk_w4a16_shape shape;
    int64_t m;
    struct bk_matrix a, c;
    bool has_perm;
    bool has_zeros;                        /* packedZeros bound */
};

/* Block-sparse attention (lib/attention.c, bk_attention.h). Operands are
 * 4-D views [batch, heads, rows, cols] with element strides (lse and the
 * pattern's counts 3-D, the mask [Bp, Hp, nbq, nbk] once split). The
 * pattern of batch b and head h is entry (b % pattern_batch, h %
 * pattern_heads): pattern_batch is 1 or batch, pattern_heads 1 or heads.
 *
 * Workspace, laid out by the core so that every backend agrees:
 *   [ws_mask, +Bp*Hp*nbq*nbk)  LIST only: the list scattered into a U8
 *                              mask [Bp, Hp, nbq, nbk] (contiguous);
 *   [ws_bad, +Bp*Hp)           LIST only: U8, nonzero where the (b, h)
 *                              list broke a rule (outputs become NaN);
 *   [ws_rowsum, +B*H*Lq)       backward only: rowsum(dy * y), lse_type;
 *   [ws_choice, +256)          forward MASK or LIST only: scratch for what
 *                              a backend decides from the pattern at run
 *                              time (the CUDA backend: which kernel runs).
 * After the list is scattered, a backend reads the mask through
 * mask_stride (the user's mask, or the workspace's). */
struct bk_attention_problem {
    BkDataType type;                       /* q, k, v, y, dy, dq, dk, dv */
    BkDataType lse_type;                   /* F32, or F64 for F64 */
    bool backward, causal, allow_atomics, has_lse;
    BkAttentionPatternForm form;
    int64_t batch, heads, kv_heads, lq, lk, d, dv;
    double scale;
    int64_t block_q, block_k, nbq, nbk;    /* blocks: 0 for DENSE */
    int64_t pattern_batch, pattern_heads, capacity;
    int64_t mask_stride[4];                /* [Bp, Hp, nbq, nbk] (MASK: the user's) */
    int64_t counts_stride[3], indices_stride[4];
    struct {                               /* element strides of each operand */
        int64_t q[4], k[4], v[4], y[4], dy[4], dq[4], dk[4], dv[4], lse[3];
    } stride;
    uint64_t ws_mask, ws_bad, ws_rowsum, ws_choice, ws_size;
    /* Sequences of their own lengths (BkAttentionSequencesInfo chained):
     * each is a problem of its own (its own causal diagonal and pattern
     * blocks). PADDED: sequence b is batch b, lengths I32 [B] (absent:
     * the whole axis). PACKED: batch is 1, sequence s is rows
     * off[s] .. off[s + 1] - 1 of the length axis, offsets I32 [S + 1];
     * the pattern's extent[0] (pattern_batch) is 1 or S and nbq, nbk
     * count max_len_q, max_len_k. Lengths are read when the plan runs. */
    bool has_sequences;
    BkAttentionSequenceForm seq_form;      /* PADDED or PACKED */
    bool has_lengths_q, has_lengths_k;     /* bound (slots 8, 9 / 12, 13) */
    int64_t seq_count;                     /* S: PACKED sequences; else batch */
    int64_t max_len_q, max_len_k;          /* PACKED: maxLengthQ, maxLengthK; else lq, lk */
    int64_t lengths_q_stride, lengths_k_stride; /* element strides of lengthsQ, lengthsK */
    /* Paged KV cache (BkAttentionPagedKvInfo, forward only, with PADDED
     * lengthsK): k, v are pools [pages, Hkv, page_size, D] read through
     * stride.k, stride.v; key j of batch b is row j % page_size of page
     * blockTable[b, j / page_size]; lk = max_pages * page_size. */
    bool paged;
    int64_t page_size, pages, max_pages;
    int64_t block_table_stride[2];         /* [B, max_pages] */
};

/* Type conversion (lib/convert.c, bk_convert.h), normalised like the
 * gated activations: unit dimensions dropped, contiguous neighbours
 * merged. Strides in elements. */
struct bk_convert_problem {
    BkDataType in_type, out_type;
    uint32_t rank;                         /* >= 1 */
    int64_t extent[BK_MAX_TENSOR_RANK];
    int64_t in_stride[BK_MAX_TENSOR_RANK];
    int64_t out_stride[BK_MAX_TENSOR_RANK];
    int64_t count;                         /* elements */
};

/* What the generic run-time checks need to know of each binding slot. */
struct bk_slot {
    const char *name;             /* "input", "gradOutput", ... */
    uint64_t span;                /* bytes the op touches from the address */
    uint32_t alignment;           /* required address alignment in bytes */
    bool written;
    /* A written slot may be bound at exactly the address of slot
     * alias_of (same span; the family checked the layouts are equal): the
     * documented in-place cases, such as GEMM's C == D. -1: never. */
    int8_t alias_of;
};

typedef BkResult (*bk_launch_fn)(BkQueue queue, BkPlan plan, const struct bk_run_args *args);

struct BkPlan_T {
    BkContext ctx;
    BkAllocationCallbacks alloc;
    enum bk_op op;                         /* these two set by bkCreatePlan (op_registry.h) */
    const char *op_name;                   /* for messages: "BkGatedActivationInfo" */
    BkPlanProperties props;                /* filled by core + backend select */
    struct bk_slot slot[BK_MAX_BINDINGS];  /* props.bindingCount of them */
    union {
        struct bk_gated_problem gated;
        struct bk_gemm_problem gemm;
        struct bk_sparse24_convert_problem sparse24_convert;
        struct bk_sparse24_prepare_problem sparse24_prepare;
        struct bk_sparse24_gemm_problem sparse24_gemm;
        struct bk_w4a16_convert_problem w4a16_convert;
        struct bk_w4a16_repack_problem w4a16_repack;
        struct bk_w4a16_gemm_problem w4a16_gemm;
        struct bk_attention_problem attention;
        struct bk_convert_problem convert;
    } problem;
    bk_launch_fn launch;                   /* set by plan_select where used */
    void *impl;                            /* backend per-plan state */
};

/* The usual guarantee of a float op (lib/plan.c): f32 and the half types
 * compute and sum in F32, F64 in F64, deterministic and bit-stable, no
 * workspace; what a backend starts from and may change (TF32, its
 * workspace). */
BK_HIDDEN void bk_plan_set_float_precision(BkPlan plan, BkDataType input);

/* Op families: validate an info struct into plan->problem, slots and
 * bindingCount (lib/gated_activation.c, ...). */
BK_HIDDEN BkResult bk_gated_activation_init(BkPlan plan, const void *info);
BK_HIDDEN BkResult bk_gemm_init(BkPlan plan, const void *info);            /* lib/gemm.c */
BK_HIDDEN BkResult bk_sparse24_convert_init(BkPlan plan, const void *info); /* lib/sparse24.c */
BK_HIDDEN BkResult bk_sparse24_prepare_init(BkPlan plan, const void *info);
BK_HIDDEN BkResult bk_sparse24_gemm_init(BkPlan plan, const void *info);
BK_HIDDEN BkResult bk_w4a16_convert_init(BkPlan plan, const void *info);  /* lib/w4a16.c */
BK_HIDDEN BkResult bk_w4a16_repack_init(BkPlan plan, const void *info);
BK_HIDDEN BkResult bk_w4a16_gemm_init(BkPlan plan, const void *info);
BK_HIDDEN BkResult bk_attention_init(BkPlan plan, const void *info);     /* lib/attention.c */
BK_HIDDEN BkResult bk_convert_init(BkPlan plan, const void *info);       /* lib/convert.c */

/* Shared by the GEMM family's validation (lib/matrix.c): a rank 2 or 3
 * tensor as a matrix [rows, cols], transposed when trans; blas: one of the
 * two strides must be 1 and the other cover the extent it steps over.
 * name is the field path for messages. */
BK_HIDDEN BkResult bk_matrix_from_tensor(const struct bk_tensor *t, const char *name, bool trans,
                                         bool blas, struct bk_matrix *out);
/* A rank-2 operand with any positive strides, named info.field in messages
 * (lib/matrix.c). */
BK_HIDDEN BkResult bk_matrix_field(const char *info, const char *field, const BkTensorDesc *desc,
                                   struct bk_tensor *t, struct bk_matrix *m);
/* bk_tensor_check_no_self_overlap with the message naming info.field. */
BK_HIDDEN BkResult bk_check_written_field(const char *info, const char *field,
                                          const struct bk_tensor *t);
/* Fills binding slot i (lib/plan.c); align 0 reads as 1. */
BK_HIDDEN void bk_plan_set_slot(BkPlan plan, uint32_t i, const char *name, uint64_t span,
                                uint32_t align, bool written);
/* Checks the GEMM family's plans share (lib/gemm.c); info names the
 * struct in messages. */
BK_HIDDEN bool bk_gemm_input_type(BkDataType t); /* F32, F16, BF16, F64 */
/* out must be in's type, or F32 when in is F16 or BF16. */
BK_HIDDEN BkResult bk_gemm_check_output_type(const char *info, const char *field, BkDataType out,
                                             const char *in_field, BkDataType in);
BK_HIDDEN BkResult bk_gemm_check_scalars(const char *info, BkGemmActivation act, double alpha,
                                         double beta, bool has_c);
/* A contiguous vector of length elements of out_type. */
BK_HIDDEN BkResult bk_gemm_check_bias(const char *info, const BkTensorDesc *desc, int64_t length,
                                      const char *length_name, BkDataType out_type,
                                      struct bk_tensor *t);
/* A rank-3 operand's batch equals the output's; rank 3 needs a rank-3 output. */
BK_HIDDEN BkResult bk_gemm_check_batch(const char *info, const char *field,
                                       const struct bk_tensor *t, const struct bk_tensor *out,
                                       const char *out_field);
/* Slots 0..count-1 from the tensors (absent ones: span 0); slot written
 * is the output. */
BK_HIDDEN void bk_gemm_set_slots(BkPlan plan, const char *const *names, const struct bk_tensor *t,
                                 const bool *present, uint32_t count, uint32_t written);
/* Lets the output slot be bound at C's address when their layouts agree. */
BK_HIDDEN void bk_gemm_slot_alias(BkPlan plan, uint32_t out_slot, const struct bk_matrix *out,
                                  uint32_t c_slot, const struct bk_matrix *c, bool has_c);

/* Whether a tensor desc was left out: dataType UNDEFINED. */
static inline bool bk_desc_absent(const BkTensorDesc *d)
{
    return d->dataType == BK_DATA_TYPE_UNDEFINED;
}
/* A tensor that user (a conversion, a pattern form) does not read must be
 * absent, so that one meant for another use is caught rather than ignored
 * (lib/tensor.c); field is the path after info ("pattern.mask"). */
BK_HIDDEN BkResult bk_check_absent_field(const char *info, const char *field,
                                         const BkTensorDesc *desc, const char *user);

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
    /* Bytes of a prepared 2:4 weight of type, m rows and k columns on
     * this context's device (the prepared slot of the prepare and sparse
     * GEMM plans); 0 when the backend cannot prepare that weight. */
    uint64_t (*sparse24_prepared_size)(BkContext ctx, BkDataType type, int64_t m, int64_t k);
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
/* The same for addr[0..n), into bytes[0..n), under one lock of the registry. */
BK_HIDDEN void bk_memory_bytes_after_each(BkContext ctx, uint32_t n, const BkDeviceAddress *addr,
                                          uint64_t *bytes);
/* BK_ERROR_BUFFER_TOO_SMALL when [addr, addr+size) starts inside a BkMemory
 * of ctx and runs past its end, BK_ERROR_INVALID_ARGUMENT when addr lies in
 * a BkMemory of another context; fn and name make the message. */
BK_HIDDEN BkResult bk_memory_check_range(BkContext ctx, const char *fn, const char *name,
                                         BkDeviceAddress addr, uint64_t size);
/* Whether addr lies in a live BkMemory of a context other than ctx (one
 * lock of every other context's registry: call when addr is in none of
 * ctx's). */
BK_HIDDEN bool bk_memory_of_another_context(BkContext ctx, BkDeviceAddress addr);
BK_HIDDEN BkResult bk_memory_registry_create(BkContext ctx);
BK_HIDDEN void bk_memory_registry_destroy(BkContext ctx);

#endif /* BK_INTERNAL_H */
