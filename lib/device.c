/* SPDX-License-Identifier: Apache-2.0 */
/* Devices and contexts: the backend table, enumeration, and the context
 * object that ties a device to its queues and allocator. */
#include "bk_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BK_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Enumeration order: the host device first, then each CUDA device. */
static const struct bk_backend *const backends[] = {
    &bk_host_backend,
#ifdef BK_HAVE_CUDA
    &bk_cuda_backend,
#endif
};

static const struct bk_backend *backend_of(BkDeviceType type)
{
    for (size_t i = 0; i < BK_ARRAY_SIZE(backends); i++)
        if (backends[i]->type == type)
            return backends[i];
    return NULL;
}

/* "80 86 89 90" -> {80, 86, 89, 90}; returns the count kept. */
static uint32_t parse_architectures(const char *list, uint32_t *out)
{
    uint32_t n = 0;
    while (list && *list && n < BK_MAX_MODULE_ARCHITECTURES) {
        char *end;
        unsigned long v = strtoul(list, &end, 10);
        if (end == list) {
            list++;
            continue;
        }
        out[n++] = (uint32_t)v;
        list = end;
    }
    return n;
}

/* Fill every BkDeviceModuleProperties chained to props (output structs of
 * other types are left alone). */
static void fill_output_chain(BkDeviceProperties *props)
{
    const struct bk_backend *backend = backend_of(props->deviceType);
    const uint32_t cc = props->computeCapabilityMajor * 10 + props->computeCapabilityMinor;
    for (BkBaseInStructure *s = props->pNext; s; s = (BkBaseInStructure *)s->pNext) {
        if (s->sType != BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES)
            continue;
        BkDeviceModuleProperties *m = (BkDeviceModuleProperties *)s;
        memset(m->binaryArchitectures, 0, sizeof m->binaryArchitectures);
        memset(m->ptxArchitectures, 0, sizeof m->ptxArchitectures);
        m->binaryArchitectureCount =
            parse_architectures(backend->binary_architectures, m->binaryArchitectures);
        m->ptxArchitectureCount = parse_architectures(backend->ptx_architectures, m->ptxArchitectures);
        /* Host code always runs; a cubin runs on its major at its minor or
         * later; PTX is compiled for its architecture or any later one. */
        bool ok = m->binaryArchitectureCount + m->ptxArchitectureCount == 0;
        for (uint32_t i = 0; i < m->binaryArchitectureCount; i++)
            ok |= m->binaryArchitectures[i] / 10 == cc / 10 && m->binaryArchitectures[i] <= cc;
        for (uint32_t i = 0; i < m->ptxArchitectureCount; i++)
            ok |= m->ptxArchitectures[i] <= cc;
        m->deviceSupported = ok ? BK_TRUE : BK_FALSE;
    }
}

BK_API BkResult bkEnumerateDevices(uint32_t *pDeviceCount, BkDeviceProperties *pProperties)
{
    if (!pDeviceCount)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkEnumerateDevices: pDeviceCount is NULL");

    /* Gather every device first so the count is right whatever the caller's
     * array holds; a backend that cannot run (no driver) lists nothing. */
    BkDeviceProperties all[64];
    uint32_t total = 0;
    for (size_t b = 0; b < BK_ARRAY_SIZE(backends); b++) {
        uint32_t n = 0;
        if (backends[b]->enumerate(&n, NULL) != BK_SUCCESS || n == 0)
            continue;
        if (n > BK_ARRAY_SIZE(all) - total)
            n = (uint32_t)(BK_ARRAY_SIZE(all) - total);
        for (uint32_t i = 0; i < n; i++) {
            memset(&all[total + i], 0, sizeof all[0]);
            all[total + i].sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        }
        if (backends[b]->enumerate(&n, &all[total]) == BK_SUCCESS)
            total += n;
    }

    if (!pProperties) {
        *pDeviceCount = total;
        return BK_SUCCESS;
    }
    uint32_t n = *pDeviceCount < total ? *pDeviceCount : total;
    for (uint32_t i = 0; i < n; i++) {
        if (pProperties[i].sType != BK_STRUCTURE_TYPE_DEVICE_PROPERTIES)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "bkEnumerateDevices: pProperties[%u].sType = %d must be "
                            "BK_STRUCTURE_TYPE_DEVICE_PROPERTIES (%d)",
                            i, (int)pProperties[i].sType, (int)BK_STRUCTURE_TYPE_DEVICE_PROPERTIES);
        char what[48];
        snprintf(what, sizeof what, "bkEnumerateDevices: pProperties[%u]", i);
        BkResult r = bk_check_output_chain(&pProperties[i], what);
        if (r != BK_SUCCESS)
            return r;
    }
    for (uint32_t i = 0; i < n; i++) {
        void *next = pProperties[i].pNext;
        pProperties[i] = all[i];
        pProperties[i].pNext = next;
        fill_output_chain(&pProperties[i]);
    }
    *pDeviceCount = n;
    return n < total ? BK_INCOMPLETE : BK_SUCCESS;
}

static void context_free(BkContext ctx)
{
    BkAllocationCallbacks alloc = ctx->alloc;
    if (ctx->queues) {
        for (uint32_t i = 0; i < ctx->queue_count; i++) {
            if (ctx->queues[i]) {
                ctx->backend->queue_destroy(ctx->queues[i]);
                bk_free(&alloc, ctx->queues[i]);
            }
        }
        bk_free(&alloc, ctx->queues);
    }
    bk_memory_registry_destroy(ctx);
    if (ctx->backend_ready)
        ctx->backend->context_destroy(ctx);
    bk_free(&alloc, ctx);
}

static BkResult context_open(const struct bk_backend *backend, uint32_t index,
                             const BkAllocationCallbacks *pAllocator, BkContext *pContext)
{
    BkContext ctx = bk_alloc(pAllocator, sizeof *ctx);
    if (!ctx)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreateContext: out of host memory");
    ctx->backend = backend;
    ctx->alloc = bk_allocator_copy(pAllocator);
    ctx->props.sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;

    BkResult r = bk_memory_registry_create(ctx);
    if (r == BK_SUCCESS)
        r = backend->context_create(ctx, index);
    if (r != BK_SUCCESS) {
        context_free(ctx);
        return r;
    }
    ctx->backend_ready = true;

    ctx->queues = bk_alloc(&ctx->alloc, sizeof(BkQueue) * ctx->queue_count);
    if (!ctx->queues)
        r = bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreateContext: out of host memory");
    for (uint32_t i = 0; r == BK_SUCCESS && i < ctx->queue_count; i++) {
        BkQueue q = bk_alloc(&ctx->alloc, sizeof *q);
        if (!q) {
            r = bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreateContext: out of host memory");
            break;
        }
        q->ctx = ctx;
        q->index = i;
        r = backend->queue_create(q);
        if (r != BK_SUCCESS) {
            bk_free(&ctx->alloc, q);
            break;
        }
        ctx->queues[i] = q;
    }
    if (r != BK_SUCCESS) {
        context_free(ctx);
        return r;
    }
    *pContext = ctx;
    return BK_SUCCESS;
}

BK_API BkResult bkCreateContext(const BkContextCreateInfo *pCreateInfo,
                                const BkAllocationCallbacks *pAllocator, BkContext *pContext)
{
    if (!pContext)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkCreateContext: pContext is NULL");
    *pContext = BK_NULL_HANDLE;
    if (!pCreateInfo)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkCreateContext: pCreateInfo is NULL");
    BkResult r = bk_check_stype(pCreateInfo, BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                                "BkContextCreateInfo");
    if (r != BK_SUCCESS)
        return r;
    if ((r = bk_check_allocator(pAllocator, "bkCreateContext")) != BK_SUCCESS)
        return r;
    if (BK_VERSION_GET_MAJOR(pCreateInfo->apiVersion) > BK_VERSION_MAJOR)
        return bk_error(BK_ERROR_INCOMPATIBLE_VERSION,
                        "BkContextCreateInfo.apiVersion = %u.%u.%u: this libbk is %u.%u.%u and "
                        "serves major versions up to %u",
                        BK_VERSION_GET_MAJOR(pCreateInfo->apiVersion),
                        BK_VERSION_GET_MINOR(pCreateInfo->apiVersion),
                        BK_VERSION_GET_PATCH(pCreateInfo->apiVersion), BK_VERSION_MAJOR,
                        BK_VERSION_MINOR, BK_VERSION_PATCH, BK_VERSION_MAJOR);
    if (pCreateInfo->flags != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkContextCreateInfo.flags = 0x%x must be 0", pCreateInfo->flags);

    switch (pCreateInfo->deviceType) {
    case BK_DEVICE_TYPE_HOST:
    case BK_DEVICE_TYPE_CUDA: {
        const struct bk_backend *backend = backend_of(pCreateInfo->deviceType);
        if (!backend)
            return bk_error(BK_ERROR_UNSUPPORTED,
                            "BkContextCreateInfo.deviceType = BK_DEVICE_TYPE_CUDA: this libbk "
                            "was built without the CUDA backend");
        return context_open(backend, pCreateInfo->deviceIndex, pAllocator, pContext);
    }
    case BK_DEVICE_TYPE_AUTO: {
        /* The first device that opens, of the most capable backend first;
         * the host always opens. deviceIndex is ignored. */
        for (size_t b = BK_ARRAY_SIZE(backends); b-- > 0;) {
            uint32_t n = 0;
            if (backends[b]->enumerate(&n, NULL) != BK_SUCCESS)
                continue;
            for (uint32_t i = 0; i < n; i++) {
                r = context_open(backends[b], i, pAllocator, pContext);
                if (r == BK_SUCCESS || r == BK_ERROR_OUT_OF_HOST_MEMORY)
                    return r;
            }
        }
        return bk_error(BK_ERROR_NO_DEVICE, "bkCreateContext: no device could be opened");
    }
    default:
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkContextCreateInfo.deviceType = %d is not a BkDeviceType",
                        (int)pCreateInfo->deviceType);
    }
}

BK_API void bkDestroyContext(BkContext context)
{
    if (context)
        context_free(context);
}

BK_API BkResult bkGetContextProperties(BkContext context, BkDeviceProperties *pProperties)
{
    if (!context)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetContextProperties: context is NULL");
    if (!pProperties)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetContextProperties: pProperties is NULL");
    BkResult r = bk_check_stype(pProperties, BK_STRUCTURE_TYPE_DEVICE_PROPERTIES,
                                "BkDeviceProperties");
    if (r != BK_SUCCESS || (r = bk_check_output_chain(pProperties, "BkDeviceProperties")))
        return r;
    void *next = pProperties->pNext;
    *pProperties = context->props;
    pProperties->pNext = next;
    fill_output_chain(pProperties);
    return BK_SUCCESS;
}
