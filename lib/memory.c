/* SPDX-License-Identifier: Apache-2.0 */
/* Device memory objects, synchronous copies, and the per-context registry
 * of live allocations that lets run-time checks know a binding's size. */
#include "bk_internal.h"

#include <pthread.h>
#include <string.h>

struct registry {
    pthread_mutex_t lock;
    BkMemory *items;      /* sorted by address */
    uint32_t count, capacity;
    struct registry *next; /* in the list of every context's registry */
};

/* Every live context's registry, so that an address inside a BkMemory of
 * another context is caught. Lock order: all_lock, then a registry's. */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct registry *all_registries;

BkResult bk_memory_registry_create(BkContext ctx)
{
    struct registry *reg = bk_alloc(&ctx->alloc, sizeof *reg);
    if (!reg)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreateContext: out of host memory");
    pthread_mutex_init(&reg->lock, NULL);
    ctx->registry = reg;
    pthread_mutex_lock(&all_lock);
    reg->next = all_registries;
    all_registries = reg;
    pthread_mutex_unlock(&all_lock);
    return BK_SUCCESS;
}

void bk_memory_registry_destroy(BkContext ctx)
{
    struct registry *reg = ctx->registry;
    if (!reg)
        return;
    pthread_mutex_lock(&all_lock);
    for (struct registry **at = &all_registries; *at; at = &(*at)->next)
        if (*at == reg) {
            *at = reg->next;
            break;
        }
    pthread_mutex_unlock(&all_lock);
    pthread_mutex_destroy(&reg->lock);
    bk_free(&ctx->alloc, reg->items);
    bk_free(&ctx->alloc, reg);
    ctx->registry = NULL;
}

/* Index of the last allocation starting at or below addr, or -1. */
static int64_t find_floor(const struct registry *reg, BkDeviceAddress addr)
{
    int64_t lo = 0, hi = (int64_t)reg->count - 1, found = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (reg->items[mid]->address <= addr) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

static BkResult registry_add(BkContext ctx, BkMemory mem)
{
    struct registry *reg = ctx->registry;
    BkResult r = BK_SUCCESS;
    pthread_mutex_lock(&reg->lock);
    if (reg->count == reg->capacity) {
        uint32_t cap = reg->capacity ? reg->capacity * 2 : 16;
        BkMemory *items = bk_alloc(&ctx->alloc, sizeof(BkMemory) * cap);
        if (!items) {
            r = bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkAllocateMemory: out of host memory");
            goto out;
        }
        if (reg->count)
            memcpy(items, reg->items, sizeof(BkMemory) * reg->count);
        bk_free(&ctx->alloc, reg->items);
        reg->items = items;
        reg->capacity = cap;
    }
    uint32_t at = (uint32_t)(find_floor(reg, mem->address) + 1);
    memmove(&reg->items[at + 1], &reg->items[at], sizeof(BkMemory) * (reg->count - at));
    reg->items[at] = mem;
    reg->count++;
out:
    pthread_mutex_unlock(&reg->lock);
    return r;
}

static void registry_remove(BkContext ctx, BkMemory mem)
{
    struct registry *reg = ctx->registry;
    pthread_mutex_lock(&reg->lock);
    for (uint32_t i = 0; i < reg->count; i++) {
        if (reg->items[i] == mem) {
            memmove(&reg->items[i], &reg->items[i + 1], sizeof(BkMemory) * (reg->count - i - 1));
            reg->count--;
            break;
        }
    }
    pthread_mutex_unlock(&reg->lock);
}

uint64_t bk_memory_bytes_after(BkContext ctx, BkDeviceAddress addr)
{
    struct registry *reg = ctx->registry;
    uint64_t bytes = 0;
    pthread_mutex_lock(&reg->lock);
    int64_t i = find_floor(reg, addr);
    if (i >= 0) {
        BkMemory m = reg->items[i];
        if (addr - m->address < m->size)
            bytes = m->size - (addr - m->address);
    }
    pthread_mutex_unlock(&reg->lock);
    return bytes;
}

void bk_memory_bytes_after_each(BkContext ctx, uint32_t n, const BkDeviceAddress *addr,
                                uint64_t *bytes)
{
    struct registry *reg = ctx->registry;
    pthread_mutex_lock(&reg->lock);
    for (uint32_t k = 0; k < n; k++) {
        bytes[k] = 0;
        int64_t i = find_floor(reg, addr[k]);
        if (i >= 0) {
            BkMemory m = reg->items[i];
            if (addr[k] - m->address < m->size)
                bytes[k] = m->size - (addr[k] - m->address);
        }
    }
    pthread_mutex_unlock(&reg->lock);
}

bool bk_memory_of_another_context(BkContext ctx, BkDeviceAddress addr)
{
    bool found = false;
    pthread_mutex_lock(&all_lock);
    for (struct registry *reg = all_registries; reg && !found; reg = reg->next) {
        if (reg == ctx->registry)
            continue;
        pthread_mutex_lock(&reg->lock);
        int64_t i = find_floor(reg, addr);
        found = i >= 0 && addr - reg->items[i]->address < reg->items[i]->size;
        pthread_mutex_unlock(&reg->lock);
    }
    pthread_mutex_unlock(&all_lock);
    return found;
}

BkResult bk_memory_check_range(BkContext ctx, const char *fn, const char *name,
                               BkDeviceAddress addr, uint64_t size)
{
    uint64_t room = bk_memory_bytes_after(ctx, addr);
    if (!room && bk_memory_of_another_context(ctx, addr))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: %s = 0x%llx lies in a BkMemory of another context; each context "
                        "works on its own memory", fn, name, (unsigned long long)addr);
    if (room && size > room)
        return bk_error(BK_ERROR_BUFFER_TOO_SMALL,
                        "%s: size = %llu bytes runs past the end of the BkMemory holding %s "
                        "(%llu bytes left)", fn, (unsigned long long)size, name,
                        (unsigned long long)room);
    return BK_SUCCESS;
}

BK_API BkResult bkAllocateMemory(BkContext context, const BkMemoryAllocateInfo *pAllocateInfo,
                                 const BkAllocationCallbacks *pAllocator, BkMemory *pMemory)
{
    if (!pMemory)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkAllocateMemory: pMemory is NULL");
    *pMemory = BK_NULL_HANDLE;
    if (!context)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkAllocateMemory: context is NULL");
    if (!pAllocateInfo)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkAllocateMemory: pAllocateInfo is NULL");
    BkResult r = bk_check_stype(pAllocateInfo, BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                "BkMemoryAllocateInfo");
    if (r != BK_SUCCESS || (r = bk_check_allocator(pAllocator, "bkAllocateMemory")) != BK_SUCCESS)
        return r;
    if (pAllocateInfo->size == 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "BkMemoryAllocateInfo.size = 0 must be positive");
    if (pAllocateInfo->size > (uint64_t)INT64_MAX)
        return bk_error(BK_ERROR_OUT_OF_DEVICE_MEMORY,
                        "BkMemoryAllocateInfo.size = %llu bytes cannot be allocated",
                        (unsigned long long)pAllocateInfo->size);
    if (pAllocateInfo->memoryType != BK_MEMORY_TYPE_DEVICE &&
        pAllocateInfo->memoryType != BK_MEMORY_TYPE_HOST_PINNED)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkMemoryAllocateInfo.memoryType = %d is not a BkMemoryType",
                        (int)pAllocateInfo->memoryType);

    const BkAllocationCallbacks *alloc = pAllocator ? pAllocator : &context->alloc;
    BkMemory mem = bk_alloc(alloc, sizeof *mem);
    if (!mem)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkAllocateMemory: out of host memory");
    mem->ctx = context;
    mem->alloc = *alloc;
    mem->type = pAllocateInfo->memoryType;
    mem->size = pAllocateInfo->size;
    r = context->backend->memory_allocate(context, mem);
    if (r != BK_SUCCESS) {
        bk_free(alloc, mem);
        return r;
    }
    r = registry_add(context, mem);
    if (r != BK_SUCCESS) {
        context->backend->memory_free(context, mem);
        bk_free(alloc, mem);
        return r;
    }
    *pMemory = mem;
    return BK_SUCCESS;
}

BK_API void bkFreeMemory(BkContext context, BkMemory memory)
{
    if (!memory)
        return;
    if (memory->ctx != context) {
        /* Freeing through the wrong context would corrupt its registry:
         * refuse and say so rather than crash. */
        bk_error(BK_ERROR_INVALID_ARGUMENT,
                 "bkFreeMemory: memory was allocated from another context; nothing freed");
        return;
    }
    registry_remove(context, memory);
    context->backend->memory_free(context, memory);
    BkAllocationCallbacks alloc = memory->alloc;
    bk_free(&alloc, memory);
}

BK_API BkResult bkGetMemoryAddress(BkMemory memory, BkDeviceAddress *pAddress)
{
    if (!memory)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetMemoryAddress: memory is NULL");
    if (!pAddress)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetMemoryAddress: pAddress is NULL");
    *pAddress = memory->address;
    return BK_SUCCESS;
}

/* Common checks of the synchronous copies, those of the recorded
 * bkCmdCopyMemory: pointers, neither range wrapping the address space,
 * and the end of the BkMemory the device address lies in, when it lies in
 * one. */
static BkResult check_copy(BkContext ctx, const char *fn, const char *host_name,
                           const void *host, const char *dev_name, BkDeviceAddress dev,
                           uint64_t size)
{
    if (!ctx)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: context is NULL", fn);
    if (size == 0)
        return BK_SUCCESS;
    if (!host)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: %s is NULL", fn, host_name);
    if (!dev)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: %s is 0", fn, dev_name);
    if (dev + size < dev)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: size = %llu wraps the address space from %s = 0x%llx", fn,
                        (unsigned long long)size, dev_name, (unsigned long long)dev);
    if (size > SIZE_MAX || (uintptr_t)host + (size_t)size < (uintptr_t)host)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: size = %llu wraps the address space from %s = %p", fn,
                        (unsigned long long)size, host_name, host);
    return bk_memory_check_range(ctx, fn, dev_name, dev, size);
}

BK_API BkResult bkCopyToDevice(BkContext context, BkDeviceAddress dst, const void *pSrc,
                               uint64_t size)
{
    BkResult r = check_copy(context, "bkCopyToDevice", "pSrc", pSrc, "dst", dst, size);
    if (r != BK_SUCCESS || size == 0)
        return r;
    return context->backend->copy_to_device(context, dst, pSrc, size);
}

BK_API BkResult bkCopyFromDevice(BkContext context, void *pDst, BkDeviceAddress src,
                                 uint64_t size)
{
    BkResult r = check_copy(context, "bkCopyFromDevice", "pDst", pDst, "src", src, size);
    if (r != BK_SUCCESS || size == 0)
        return r;
    return context->backend->copy_from_device(context, pDst, src, size);
}
