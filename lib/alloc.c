/* SPDX-License-Identifier: Apache-2.0 */
/* Host allocations through the caller's BkAllocationCallbacks, or the C
 * library when none are given. */
#include "bk_internal.h"

#include <stdlib.h>
#include <string.h>

/* Alignment for every internal object: enough for any scalar type. */
#define BK_HOST_ALIGNMENT 64u

BkResult bk_check_allocator(const BkAllocationCallbacks *cb, const char *who)
{
    if (cb && (!cb->pfnAllocation || !cb->pfnFree))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: pAllocator->%s is NULL; give both pfnAllocation and pfnFree, "
                        "or pass pAllocator = NULL", who,
                        cb->pfnAllocation ? "pfnFree" : "pfnAllocation");
    return BK_SUCCESS;
}

BkAllocationCallbacks bk_allocator_copy(const BkAllocationCallbacks *cb)
{
    BkAllocationCallbacks none = { 0 };
    return cb ? *cb : none;
}

void *bk_alloc_aligned(const BkAllocationCallbacks *cb, size_t size, size_t alignment)
{
    if (size == 0)
        size = 1;
    if (cb && cb->pfnAllocation)
        return cb->pfnAllocation(cb->pUserData, size, alignment);
    /* aligned_alloc wants a multiple of the alignment. */
    size_t rounded = (size + alignment - 1) / alignment * alignment;
    return rounded < size ? NULL : aligned_alloc(alignment, rounded);
}

void *bk_alloc(const BkAllocationCallbacks *cb, size_t size)
{
    void *p = bk_alloc_aligned(cb, size, BK_HOST_ALIGNMENT);
    if (p)
        memset(p, 0, size);
    return p;
}

void bk_free(const BkAllocationCallbacks *cb, void *p)
{
    if (!p)
        return;
    if (cb && cb->pfnFree)
        cb->pfnFree(cb->pUserData, p);
    else
        free(p);
}
