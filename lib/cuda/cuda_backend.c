/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA backend: devices, contexts (the device's primary context, so
 * libbk shares memory and streams with CUDA runtime programs and PyTorch in
 * the same process), memory, synchronous copies and queues (streams).
 * Submission is in cuda_submit.c, kernels and their launch in cuda_gated.c. */
#include "cuda_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static BkResult device_properties(int ordinal, BkDeviceProperties *p)
{
    CUdevice dev;
    CUresult r = bk_cu.cuDeviceGet(&dev, ordinal);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "cuDeviceGet(%d)", ordinal);
    char name[BK_MAX_NAME_SIZE] = "";
    int major = 0, minor = 0, sms = 0;
    size_t bytes = 0;
    if ((r = bk_cu.cuDeviceGetName(name, (int)sizeof name, dev)) != BK_CUDA_SUCCESS ||
        (r = bk_cu.cuDeviceGetAttribute(&major, BK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        dev)) != BK_CUDA_SUCCESS ||
        (r = bk_cu.cuDeviceGetAttribute(&minor, BK_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                        dev)) != BK_CUDA_SUCCESS ||
        (r = bk_cu.cuDeviceGetAttribute(&sms, BK_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                        dev)) != BK_CUDA_SUCCESS ||
        (r = bk_cu.cuDeviceTotalMem(&bytes, dev)) != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_SUCCESS, "reading the properties of CUDA device %d", ordinal);
    name[sizeof name - 1] = '\0';
    memcpy(p->name, name, sizeof p->name);
    p->deviceType = BK_DEVICE_TYPE_CUDA;
    p->deviceIndex = (uint32_t)ordinal;
    p->computeCapabilityMajor = (uint32_t)major;
    p->computeCapabilityMinor = (uint32_t)minor;
    p->multiprocessorCount = (uint32_t)sms;
    p->queueCount = BK_CUDA_QUEUE_COUNT;
    p->totalMemory = bytes;
    p->driverVersion = (uint32_t)bk_cu.version;
    p->runtimeVersion = BK_CUDA_TOOLKIT_VERSION;
    return BK_SUCCESS;
}

static BkResult cuda_enumerate(uint32_t *count, BkDeviceProperties *props)
{
    BkResult res;
    /* Quiet: listing devices on a machine without a GPU is no error. */
    if (!bk_cuda_driver(&res, false)) {
        *count = 0;
        return res;
    }
    int n = 0;
    CUresult r = bk_cu.cuDeviceGetCount(&n);
    if (r != BK_CUDA_SUCCESS || n < 0) {
        *count = 0;
        return bk_cuda_result(r);
    }
    if (!props) {
        *count = (uint32_t)n;
        return BK_SUCCESS;
    }
    uint32_t fill = *count < (uint32_t)n ? *count : (uint32_t)n;
    for (uint32_t i = 0; i < fill; i++) {
        if ((res = device_properties((int)i, &props[i])) != BK_SUCCESS)
            return res;
    }
    *count = fill;
    return BK_SUCCESS;
}

static void cuda_context_destroy(BkContext ctx)
{
    struct bk_cuda_context *c = ctx->impl;
    if (!c)
        return;
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(ctx, &scope) == BK_SUCCESS) {
        bk_cuda_cublaslt_destroy(c);
        bk_cuda_modules_unload(c);
        if (c->capture)
            (void)bk_cu.cuStreamDestroy(c->capture);
        bk_cuda_leave(&scope);
    }
    (void)bk_cu.cuDevicePrimaryCtxRelease(c->device);
    pthread_mutex_destroy(&c->lock);
    bk_free(&ctx->alloc, c);
    ctx->impl = NULL;
}

static BkResult cuda_context_create(BkContext ctx, uint32_t device_index)
{
    BkResult res;
    if (!bk_cuda_driver(&res, true))
        return res;
    int n = 0;
    CUresult r = bk_cu.cuDeviceGetCount(&n);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_ERROR_NO_DEVICE, "cuDeviceGetCount");
    if (n <= 0)
        return bk_error(BK_ERROR_NO_DEVICE, "BkContextCreateInfo.deviceType = BK_DEVICE_TYPE_CUDA: "
                                            "the CUDA driver sees no device");
    if (device_index >= (uint32_t)n)
        return bk_error(BK_ERROR_NO_DEVICE,
                        "BkContextCreateInfo.deviceIndex = %u: there %s only %d CUDA device%s",
                        device_index, n == 1 ? "is" : "are", n, n == 1 ? "" : "s");
    if ((res = device_properties((int)device_index, &ctx->props)) != BK_SUCCESS)
        return res;
    if (ctx->props.computeCapabilityMajor < 8)
        return bk_error(BK_ERROR_NO_DEVICE,
                        "BkContextCreateInfo.deviceIndex = %u: %s has compute capability %u.%u; "
                        "libbk's CUDA kernels need 8.0 or newer",
                        device_index, ctx->props.name, ctx->props.computeCapabilityMajor,
                        ctx->props.computeCapabilityMinor);

    struct bk_cuda_context *c = bk_alloc(&ctx->alloc, sizeof *c);
    if (!c)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreateContext: out of host memory");
    c->sm_count = (int)ctx->props.multiprocessorCount;
    /* Programmatic dependent launch: sm_90 and later; kept as programmatic
     * edges in captured graphs from CUDA 12.3 on. BK_CUDA_PROGRAMMATIC=0
     * turns it off (each kernel then starts after the one before ends): to
     * tell a race between kernels from one within a kernel. */
    const char *pdl = getenv("BK_CUDA_PROGRAMMATIC");
    c->programmatic = ctx->props.computeCapabilityMajor >= 9 && bk_cu.version >= 12030 &&
                      !(pdl && strcmp(pdl, "0") == 0);
    if ((r = bk_cu.cuDeviceGet(&c->device, (int)device_index)) != BK_CUDA_SUCCESS ||
        (r = bk_cu.cuDevicePrimaryCtxRetain(&c->primary, c->device)) != BK_CUDA_SUCCESS) {
        bk_free(&ctx->alloc, c);
        return bk_cuda_error(r, BK_SUCCESS, "retaining the primary context of CUDA device %u",
                             device_index);
    }
    /* Kernels that need more shared memory than this run elsewhere; where
     * the driver cannot tell, the 48 KiB every CTA may have. */
    int optin = 0;
    if (bk_cu.cuDeviceGetAttribute(&optin, BK_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                   c->device) != BK_CUDA_SUCCESS ||
        optin < 48 * 1024)
        optin = 48 * 1024;
    c->shared_optin = (unsigned int)optin;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        (void)bk_cu.cuDevicePrimaryCtxRelease(c->device);
        bk_free(&ctx->alloc, c);
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreateContext: cannot create a mutex");
    }
    ctx->impl = c;

    struct bk_cuda_scope scope;
    if ((res = bk_cuda_enter(ctx, &scope)) == BK_SUCCESS) {
        res = bk_cu_check(bk_cu.cuStreamCreate(&c->capture, BK_CU_STREAM_NON_BLOCKING),
                          "cuStreamCreate (the capture stream)");
        bk_cuda_leave(&scope);
    }
    if (res != BK_SUCCESS) {
        cuda_context_destroy(ctx);
        return res;
    }
    ctx->queue_count = BK_CUDA_QUEUE_COUNT;
    return BK_SUCCESS;
}

static BkResult cuda_memory_allocate(BkContext ctx, BkMemory mem)
{
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    CUresult r;
    if (mem->type == BK_MEMORY_TYPE_HOST_PINNED) {
        void *host = NULL;
        CUdeviceptr dev = 0;
        r = bk_cu.cuMemHostAlloc(&host, (size_t)mem->size,
                                 BK_CU_MEMHOSTALLOC_PORTABLE | BK_CU_MEMHOSTALLOC_DEVICEMAP);
        if (r != BK_CUDA_SUCCESS) {
            res = bk_cuda_error(r, r == BK_CUDA_ERROR_OUT_OF_MEMORY ? BK_ERROR_OUT_OF_HOST_MEMORY
                                                                    : BK_SUCCESS,
                                "bkAllocateMemory: cuMemHostAlloc(%llu bytes of pinned memory)",
                                (unsigned long long)mem->size);
        } else if ((r = bk_cu.cuMemHostGetDevicePointer(&dev, host, 0)) != BK_CUDA_SUCCESS) {
            res = bk_cuda_error(r, BK_SUCCESS, "bkAllocateMemory: cuMemHostGetDevicePointer");
            (void)bk_cu.cuMemFreeHost(host);
        } else {
            mem->impl = host;
            mem->address = dev;
        }
    } else {
        CUdeviceptr dev = 0;
        r = bk_cu.cuMemAlloc(&dev, (size_t)mem->size);
        if (r != BK_CUDA_SUCCESS)
            res = bk_cuda_error(r, BK_SUCCESS, "bkAllocateMemory: cuMemAlloc(%llu bytes)",
                                (unsigned long long)mem->size);
        else
            mem->address = dev;
    }
    bk_cuda_leave(&scope);
    return res;
}

static void cuda_memory_free(BkContext ctx, BkMemory mem)
{
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(ctx, &scope) != BK_SUCCESS)
        return;
    if (mem->type == BK_MEMORY_TYPE_HOST_PINNED)
        (void)bk_cu.cuMemFreeHost(mem->impl);
    else
        (void)bk_cu.cuMemFree((CUdeviceptr)mem->address);
    bk_cuda_leave(&scope);
}

/* Synchronous copies run on the legacy default stream, which orders them
 * after the work already queued on the context's queues (blocking
 * streams). */
static BkResult cuda_copy_to_device(BkContext ctx, BkDeviceAddress dst, const void *src,
                                    uint64_t size)
{
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    CUresult r = bk_cu.cuMemcpyHtoD((CUdeviceptr)dst, src, (size_t)size);
    if (r != BK_CUDA_SUCCESS)
        res = bk_cuda_error(r, BK_SUCCESS, "bkCopyToDevice: cuMemcpyHtoD(dst = 0x%llx, %llu bytes)",
                            (unsigned long long)dst, (unsigned long long)size);
    bk_cuda_leave(&scope);
    return res;
}

static BkResult cuda_copy_from_device(BkContext ctx, void *dst, BkDeviceAddress src, uint64_t size)
{
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    CUresult r = bk_cu.cuMemcpyDtoH(dst, (CUdeviceptr)src, (size_t)size);
    if (r != BK_CUDA_SUCCESS)
        res = bk_cuda_error(r, BK_SUCCESS,
                            "bkCopyFromDevice: cuMemcpyDtoH(src = 0x%llx, %llu bytes)",
                            (unsigned long long)src, (unsigned long long)size);
    bk_cuda_leave(&scope);
    return res;
}

static BkResult cuda_queue_create(BkQueue queue)
{
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(queue->ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    CUstream s = NULL;
    CUresult r = bk_cu.cuStreamCreate(&s, BK_CU_STREAM_DEFAULT);
    if (r != BK_CUDA_SUCCESS)
        res = bk_cuda_error(r, BK_SUCCESS, "cuStreamCreate (queue %u)", queue->index);
    else
        queue->impl = s;
    bk_cuda_leave(&scope);
    return res;
}

static BkResult cuda_queue_import(BkQueue queue, void *native)
{
    const struct bk_cuda_context *c = queue->ctx->impl;
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(queue->ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    /* NULL is the legacy default stream; CU_STREAM_LEGACY and
     * CU_STREAM_PER_THREAD are special handles that also work. */
    CUcontext owner = NULL;
    CUresult r = bk_cu.cuStreamGetCtx((CUstream)native, &owner);
    if (r != BK_CUDA_SUCCESS)
        res = bk_cuda_error(r, BK_ERROR_INVALID_ARGUMENT,
                            "bkImportQueue: pNativeQueue = %p is not a CUstream", native);
    else if (owner != c->primary)
        res = bk_error(BK_ERROR_INVALID_ARGUMENT,
                       "bkImportQueue: pNativeQueue = %p belongs to another CUDA context than the "
                       "primary context of %s (device %u)",
                       native, queue->ctx->props.name, queue->ctx->props.deviceIndex);
    else
        queue->impl = native;
    bk_cuda_leave(&scope);
    return res;
}

static void cuda_queue_destroy(BkQueue queue)
{
    if (queue->imported || !queue->impl)
        return;
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(queue->ctx, &scope) != BK_SUCCESS)
        return;
    (void)bk_cu.cuStreamDestroy(bk_cuda_stream(queue));
    bk_cuda_leave(&scope);
    queue->impl = NULL;
}

static BkResult cuda_queue_wait_idle(BkQueue queue)
{
    struct bk_cuda_scope scope;
    BkResult res = bk_cuda_enter(queue->ctx, &scope);
    if (res != BK_SUCCESS)
        return res;
    CUresult r = bk_cu.cuStreamSynchronize(bk_cuda_stream(queue));
    if (r != BK_CUDA_SUCCESS)
        res = bk_cuda_error(r, BK_SUCCESS, "bkQueueWaitIdle: cuStreamSynchronize");
    bk_cuda_leave(&scope);
    return res;
}

/* Kernel selection per op, the op registry's CUDA column. */
BK_OP_SELECT_TABLE(cuda_select, BK_OP_CUDA_SELECT);

static BkResult cuda_plan_select(BkPlan plan)
{
    if (!cuda_select[plan->op])
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: not implemented on the CUDA backend",
                        plan->op_name);
    return cuda_select[plan->op](plan);
}

static void cuda_plan_destroy(BkPlan plan)
{
    struct bk_cuda_plan *base = plan->impl;
    struct bk_cuda_scope scope;
    if (bk_cuda_enter(plan->ctx, &scope) == BK_SUCCESS) {
        if (base->release)
            base->release(plan);
        bk_cuda_plan_release(base);
        bk_cuda_leave(&scope);
    }
    bk_free(&plan->alloc, plan->impl);
    plan->impl = NULL;
}

const struct bk_backend bk_cuda_backend = {
    .type = BK_DEVICE_TYPE_CUDA,
    .name = "cuda",
    .enumerate = cuda_enumerate,
    .context_create = cuda_context_create,
    .context_destroy = cuda_context_destroy,
    .memory_allocate = cuda_memory_allocate,
    .memory_free = cuda_memory_free,
    .copy_to_device = cuda_copy_to_device,
    .copy_from_device = cuda_copy_from_device,
    .queue_create = cuda_queue_create,
    .queue_import = cuda_queue_import,
    .queue_destroy = cuda_queue_destroy,
    .queue_wait_idle = cuda_queue_wait_idle,
    .submit = bk_cuda_submit,
    .command_buffer_reset = bk_cuda_command_buffer_reset,
    .plan_select = cuda_plan_select,
    .plan_destroy = cuda_plan_destroy,
    .sparse24_prepared_size = bk_cuda_sparse24_prepared_size,
    .binary_architectures = BK_CUDA_BINARY_ARCHS,
    .ptx_architectures = BK_CUDA_PTX_ARCHS,
};
