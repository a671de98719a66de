/* SPDX-License-Identifier: Apache-2.0 */
/* Plans: creation through the op-family table, properties, and bkCmdRun
 * with the run-time checks every op shares (binding count, null, alignment,
 * size, overlap, workspace). */
#include "bk_internal.h"

#include <stdio.h>
#include <string.h>

/* bkCreatePlan's half of the op registry: each op's info name and core
 * validation, indexed by enum bk_op. */
#define OP_FAMILY(op, stype, info, init, host, cuda) [BK_OP_##op] = { info, init },
static const struct {
    const char *info;
    BkResult (*init)(BkPlan plan, const void *info);
} op_families[] = { BK_OPS(OP_FAMILY) };
#undef OP_FAMILY
_Static_assert(sizeof op_families / sizeof op_families[0] == BK_OP_COUNT,
               "op_families must have a row for every op of BK_OPS");

/* The op whose info struct has sType stype, or BK_OP_COUNT. A switch, so
 * that two rows of the registry with one sType do not compile. */
static enum bk_op op_of_stype(BkStructureType stype)
{
#define OP_CASE(op, stype, info, init, host, cuda) case stype: return BK_OP_##op;
    switch (stype) {
        BK_OPS(OP_CASE)
    default:
        return BK_OP_COUNT;
    }
#undef OP_CASE
}

static void plan_free(BkPlan plan)
{
    if (plan->impl)
        plan->ctx->backend->plan_destroy(plan);
    BkAllocationCallbacks alloc = plan->alloc;
    bk_free(&alloc, plan);
}

void bk_plan_set_float_precision(BkPlan plan, BkDataType input)
{
    BkDataType compute = input == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    plan->props.precision = (BkPrecisionGuarantee){
        .computeType = compute,
        .accumulatorType = compute,
        .deterministic = BK_TRUE,
        .bitStable = BK_TRUE,
    };
    plan->props.workspaceSize = 0;
}

void bk_plan_set_slot(BkPlan plan, uint32_t i, const char *name, uint64_t span, uint32_t align,
                      bool written)
{
    plan->slot[i].name = name;
    plan->slot[i].span = span;
    plan->slot[i].alignment = align ? align : 1;
    plan->slot[i].written = written;
}

BK_API BkResult bkCreatePlan(BkContext context, const BkPlanCreateInfo *pCreateInfo,
                             const BkAllocationCallbacks *pAllocator, BkPlan *pPlan)
{
    if (!pPlan)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkCreatePlan: pPlan is NULL");
    *pPlan = BK_NULL_HANDLE;
    if (!context)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkCreatePlan: context is NULL");
    if (!pCreateInfo)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkCreatePlan: pCreateInfo is NULL");
    BkResult r = bk_check_stype(pCreateInfo, BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, "BkPlanCreateInfo");
    if (r != BK_SUCCESS || (r = bk_check_allocator(pAllocator, "bkCreatePlan")) != BK_SUCCESS)
        return r;
    if (pCreateInfo->flags != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "BkPlanCreateInfo.flags = 0x%x must be 0",
                        pCreateInfo->flags);
    if (!pCreateInfo->pOperation)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "BkPlanCreateInfo.pOperation is NULL");

    BkStructureType stype = ((const BkBaseInStructure *)pCreateInfo->pOperation)->sType;
    enum bk_op op = op_of_stype(stype);
    if (op == BK_OP_COUNT)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkPlanCreateInfo.pOperation->sType = %d is not an operation info "
                        "structure type", (int)stype);

    const BkAllocationCallbacks *alloc = pAllocator ? pAllocator : &context->alloc;
    BkPlan plan = bk_alloc(alloc, sizeof *plan);
    if (!plan)
        return bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreatePlan: out of host memory");
    plan->ctx = context;
    plan->alloc = *alloc;
    plan->props.sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES;
    plan->props.operation = stype;
    plan->op = op;
    plan->op_name = op_families[op].info;
    plan->props.backend = context->props.deviceType;
    plan->props.workspaceAlignment = 256;
    for (uint32_t i = 0; i < BK_MAX_BINDINGS; i++)
        plan->slot[i].alias_of = -1;

    r = op_families[op].init(plan, pCreateInfo->pOperation);
    if (r == BK_SUCCESS)
        r = context->backend->plan_select(plan);
    if (r != BK_SUCCESS) {
        plan_free(plan);
        return r;
    }
    *pPlan = plan;
    return BK_SUCCESS;
}

BK_API void bkDestroyPlan(BkPlan plan)
{
    if (plan)
        plan_free(plan);
}

BK_API BkResult bkGetPlanProperties(BkPlan plan, BkPlanProperties *pProperties)
{
    if (!plan)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetPlanProperties: plan is NULL");
    if (!pProperties)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkGetPlanProperties: pProperties is NULL");
    BkResult r = bk_check_stype(pProperties, BK_STRUCTURE_TYPE_PLAN_PROPERTIES, "BkPlanProperties");
    if (r != BK_SUCCESS || (r = bk_check_output_chain(pProperties, "BkPlanProperties")))
        return r;
    void *next = pProperties->pNext;
    *pProperties = plan->props;
    pProperties->pNext = next;
    /* Output structs this function knows in the chain; others are skipped. */
    for (BkBaseOutStructure *s = next; s; s = s->pNext) {
        if (s->sType != BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES)
            continue;
        BkPlanBindingProperties *b = (BkPlanBindingProperties *)s;
        b->bindingCount = plan->props.bindingCount;
        b->reserved = 0;
        memset(b->bindings, 0, sizeof b->bindings);
        for (uint32_t i = 0; i < plan->props.bindingCount; i++) {
            const struct bk_slot *slot = &plan->slot[i];
            snprintf(b->bindings[i].name, sizeof b->bindings[i].name, "%s", slot->name);
            b->bindings[i].size = slot->span;
            b->bindings[i].alignment = slot->alignment;
            b->bindings[i].written = slot->written ? BK_TRUE : BK_FALSE;
        }
    }
    return BK_SUCCESS;
}

/* The checks every op shares, from the plan's slot table. */
static BkResult check_bindings(BkPlan plan, const BkRunInfo *run)
{
    const uint32_t n = plan->props.bindingCount;
    if (run->bindingCount != n)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkRunInfo.bindingCount = %u must equal the plan's bindingCount %u (%s)",
                        run->bindingCount, n, plan->op_name);
    if (n && !run->pBindings)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.pBindings is NULL");
    /* Room left in the BkMemory under each binding (0: in none), looked up
     * under one lock of the registry rather than one per binding. */
    uint64_t rooms[BK_MAX_BINDINGS];
    bk_memory_bytes_after_each(plan->ctx, n, run->pBindings, rooms);
    for (uint32_t i = 0; i < n; i++) {
        const struct bk_slot *s = &plan->slot[i];
        BkDeviceAddress a = run->pBindings[i];
        if (s->span == 0)
            continue;
        if (!a)
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.pBindings[%u] (%s) is 0", i,
                            s->name);
        if (a % s->alignment)
            return bk_error(BK_ERROR_MISALIGNED_OPERAND,
                            "BkRunInfo.pBindings[%u] (%s) = 0x%llx must be aligned to %u bytes",
                            i, s->name, (unsigned long long)a, s->alignment);
        if (a + s->span < a)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "BkRunInfo.pBindings[%u] (%s) = 0x%llx: the tensor's %llu bytes wrap "
                            "the address space", i, s->name, (unsigned long long)a,
                            (unsigned long long)s->span);
        uint64_t given = run->pBindingSizes ? run->pBindingSizes[i] : 0;
        if (given && given < s->span)
            return bk_error(BK_ERROR_BUFFER_TOO_SMALL,
                            "BkRunInfo.pBindingSizes[%u] (%s) = %llu bytes is smaller than the "
                            "%llu bytes the tensor spans", i, s->name,
                            (unsigned long long)given, (unsigned long long)s->span);
        uint64_t room = rooms[i];
        if (!room && bk_memory_of_another_context(plan->ctx, a))
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "BkRunInfo.pBindings[%u] (%s) = 0x%llx lies in a BkMemory of another "
                            "context; a plan runs on memory of its own context", i, s->name,
                            (unsigned long long)a);
        if (room && room < s->span)
            return bk_error(BK_ERROR_BUFFER_TOO_SMALL,
                            "BkRunInfo.pBindings[%u] (%s): the tensor spans %llu bytes but its "
                            "BkMemory has %llu bytes from that address", i, s->name,
                            (unsigned long long)s->span, (unsigned long long)room);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!plan->slot[i].written)
            continue;
        for (uint32_t j = 0; j < n; j++) {
            if (j == i || (plan->slot[i].alias_of == (int8_t)j &&
                           run->pBindings[i] == run->pBindings[j]))
                continue;
            if (bk_ranges_overlap(run->pBindings[i], plan->slot[i].span, run->pBindings[j],
                                  plan->slot[j].span))
                return bk_error(BK_ERROR_INVALID_ARGUMENT,
                                "BkRunInfo.pBindings[%u] (%s) overlaps pBindings[%u] (%s); "
                                "%s cannot run in place", i, plan->slot[i].name, j,
                                plan->slot[j].name, plan->op_name);
        }
    }
    uint64_t need = plan->props.workspaceSize;
    if (need) {
        if (run->workspaceSize < need)
            return bk_error(BK_ERROR_WORKSPACE_TOO_SMALL,
                            "BkRunInfo.workspaceSize = %llu is smaller than the plan's "
                            "workspaceSize %llu", (unsigned long long)run->workspaceSize,
                            (unsigned long long)need);
        if (!run->workspace)
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.workspace is 0");
        if (run->workspace + need < run->workspace)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "BkRunInfo.workspace = 0x%llx: the plan's %llu bytes wrap the address "
                            "space", (unsigned long long)run->workspace,
                            (unsigned long long)need);
        const uint64_t room = bk_memory_bytes_after(plan->ctx, run->workspace);
        if (!room && bk_memory_of_another_context(plan->ctx, run->workspace))
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "BkRunInfo.workspace = 0x%llx lies in a BkMemory of another context; "
                            "a plan runs on memory of its own context",
                            (unsigned long long)run->workspace);
        if (room && room < need)
            return bk_error(BK_ERROR_WORKSPACE_TOO_SMALL,
                            "BkRunInfo.workspace: the plan needs %llu bytes but its BkMemory has "
                            "%llu bytes from that address", (unsigned long long)need,
                            (unsigned long long)room);
        if (run->workspace % plan->props.workspaceAlignment)
            return bk_error(BK_ERROR_MISALIGNED_OPERAND,
                            "BkRunInfo.workspace = 0x%llx must be aligned to %llu bytes",
                            (unsigned long long)run->workspace,
                            (unsigned long long)plan->props.workspaceAlignment);
        for (uint32_t i = 0; i < n; i++)
            if (bk_ranges_overlap(run->workspace, need, run->pBindings[i], plan->slot[i].span))
                return bk_error(BK_ERROR_INVALID_ARGUMENT,
                                "BkRunInfo.workspace overlaps pBindings[%u] (%s)", i,
                                plan->slot[i].name);
    }
    return BK_SUCCESS;
}

/* The checks bkCmdRun and bkQueueRun share, in the order they report
 * them, and the command they record: fn names the call, owner the handle
 * whose context the plan must share ("commandBuffer", "queue"). */
BkResult bk_plan_run_command(BkContext ctx, BkPlan plan, const BkRunInfo *pRunInfo,
                             const char *fn, const char *owner, struct bk_command *c)
{
    BkResult r;
    if (!plan)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: plan is NULL", fn);
    if (!pRunInfo)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: pRunInfo is NULL", fn);
    if ((r = bk_check_stype(pRunInfo, BK_STRUCTURE_TYPE_RUN_INFO, "BkRunInfo")) != BK_SUCCESS)
        return r;
    if (plan->ctx != ctx)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s: plan belongs to another context than %s",
                        fn, owner);
    if ((r = check_bindings(plan, pRunInfo)) != BK_SUCCESS)
        return r;

    *c = (struct bk_command){ .type = BK_CMD_RUN };
    c->u.run.plan = plan;
    for (uint32_t i = 0; i < plan->props.bindingCount; i++)
        c->u.run.args.binding[i] = pRunInfo->pBindings[i];
    c->u.run.args.workspace = pRunInfo->workspace;
    c->u.run.args.workspace_size = pRunInfo->workspaceSize;
    return BK_SUCCESS;
}

BK_API BkResult bkCmdRun(BkCommandBuffer commandBuffer, BkPlan plan, const BkRunInfo *pRunInfo)
{
    BkResult r = bk_command_buffer_check_recording(commandBuffer, "bkCmdRun");
    if (r != BK_SUCCESS)
        return r;
    struct bk_command c;
    r = bk_plan_run_command(commandBuffer->ctx, plan, pRunInfo, "bkCmdRun", "commandBuffer", &c);
    if (r != BK_SUCCESS)
        return r;
    return bk_command_buffer_append(commandBuffer, &c, "bkCmdRun");
}
