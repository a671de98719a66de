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
