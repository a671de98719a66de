/* SPDX-License-Identifier: Apache-2.0 */
/* Checks shared by every entry point that takes a struct. */
#include "bk_internal.h"

static const char *const stype_names[] = {
    [BK_STRUCTURE_TYPE_UNDEFINED] = "BK_STRUCTURE_TYPE_UNDEFINED",
    [BK_STRUCTURE_TYPE_DEVICE_PROPERTIES] = "BK_STRUCTURE_TYPE_DEVICE_PROPERTIES",
    [BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO] = "BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO",
    [BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO] = "BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO",
    [BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO] = "BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO",
    [BK_STRUCTURE_TYPE_PLAN_CREATE_INFO] = "BK_STRUCTURE_TYPE_PLAN_CREATE_INFO",
    [BK_STRUCTURE_TYPE_PLAN_PROPERTIES] = "BK_STRUCTURE_TYPE_PLAN_PROPERTIES",
    [BK_STRUCTURE_TYPE_RUN_INFO] = "BK_STRUCTURE_TYPE_RUN_INFO",
    [BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES] = "BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES",
    [BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES] = "BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES",
};

static const char *stype_name(BkStructureType t)
{
    if ((unsigned)t < sizeof stype_names / sizeof stype_names[0] && stype_names[t])
        return stype_names[t];
    switch (t) {
    case BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO:
        return "BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO";
    case BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO:
        return "BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO";
    default:
        return "an unknown structure type";
    }
}

/* what is the struct's name for messages ("BkContextCreateInfo"). */
BkResult bk_check_stype(const void *s, BkStructureType want, const char *what)
{
    BkStructureType got = ((const BkBaseInStructure *)s)->sType;
    if (got != want)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.sType = %d (%s) must be %s (%d)", what,
                        (int)got, stype_name(got), stype_name(want), (int)want);
    return BK_SUCCESS;
}

/* Floyd's cycle search over the chain from head (head included): a chain
 * that comes back to one of its structs would make every walk of it run
 * forever. Time linear in the chain, no memory; the structs are only
 * read. */
BkResult bk_check_output_chain(const void *head, const char *what)
{
    const BkBaseOutStructure *slow = head, *fast = head;
    while (fast && fast->pNext) {
        slow = slow->pNext;
        fast = fast->pNext->pNext;
        if (slow != fast)
            continue;
        /* A cycle: find where it starts (mu) and the struct that points
         * back to it, counting structs from the head (0). */
        uint64_t mu = 0;
        for (slow = head; slow != fast; slow = slow->pNext, fast = fast->pNext)
            mu++;
        const BkBaseOutStructure *start = slow;
        uint64_t last = mu;
        const BkBaseOutStructure *s = start;
        while (s->pNext != start)
            s = s->pNext, last++;
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pNext chain is a cycle: the pNext of chained struct %llu (sType %d, "
                        "%s) points back to struct %llu (0 is the %s itself)", what,
                        (unsigned long long)last, (int)s->sType, stype_name(s->sType),
                        (unsigned long long)mu, what);
    }
    return BK_SUCCESS;
}
