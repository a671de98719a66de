/* SPDX-License-Identifier: Apache-2.0 */
/* Plans: bkCreatePlan's checks, bkGetPlanProperties for every data type
 * and direction, allocators, and destroy. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "test_util.h"

static BkContext ctx;

static BkGatedActivationInfo forward_info(BkDataType type)
{
    BkGatedActivationInfo info = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
        .kind = BK_GATED_ACTIVATION_SWIGLU,
        .splitAxis = 1,
        .input = { .dataType = type, .rank = 2, .extent = { 3, 8 } },
        .output = { .dataType = type, .rank = 2, .extent = { 3, 4 } },
    };
    return info;
}

static BkGatedActivationBackwardInfo backward_info(BkDataType type)
{
    BkGatedActivationBackwardInfo info = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO,
        .kind = BK_GATED_ACTIVATION_GEGLU,
        .splitAxis = 0,
        .input = { .dataType = type, .rank = 2, .extent = { 6, 5 } },
        .gradOutput = { .dataType = type, .rank = 2, .extent = { 3, 5 } },
        .gradInput = { .dataType = type, .rank = 2, .extent = { 6, 5 } },
    };
    return info;
}

static void test_create_errors(void)
{
    BkGatedActivationInfo op = forward_info(BK_DATA_TYPE_F32);
    BkPlanCreateInfo info = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &op };
    BkPlan plan = BK_NULL_HANDLE;

    BKT_EXPECT(bkCreatePlan(ctx, &info, NULL, NULL), BK_ERROR_INVALID_ARGUMENT, "pPlan",
               "pPlan NULL");
    BKT_EXPECT(bkCreatePlan(ctx, NULL, NULL, &plan), BK_ERROR_INVALID_ARGUMENT, "pCreateInfo",
               "pCreateInfo NULL");
    BKT_EXPECT(bkCreatePlan(BK_NULL_HANDLE, &info, NULL, &plan), BK_ERROR_INVALID_ARGUMENT,
               "context", "context NULL");
    info.sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO;
    BKT_EXPECT(bkCreatePlan(ctx, &info, NULL, &plan), BK_ERROR_INVALID_ARGUMENT,
               "BkPlanCreateInfo.sType", "wrong sType on BkPlanCreateInfo");
    info.sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO;
    info.flags = 4;
    BKT_EXPECT(bkCreatePlan(ctx, &info, NULL, &plan), BK_ERROR_INVALID_ARGUMENT, "flags",
               "reserved flags must be 0");
    info.flags = 0;
    info.pOperation = NULL;
    BKT_EXPECT(bkCreatePlan(ctx, &info, NULL, &plan), BK_ERROR_INVALID_ARGUMENT, "pOperation",
               "pOperation NULL");

    /* pOperation is told apart by its sType: an unknown or a non-op one is refused. */
    op.sType = (BkStructureType)999;
    info.pOperation = &op;
    BKT_EXPECT(bkCreatePlan(ctx, &info, NULL, &plan), BK_ERROR_INVALID_ARGUMENT, "pOperation",
               "an unknown op sType in pOperation");
    BkRunInfo not_an_op = { .sType = BK_STRUCTURE_TYPE_RUN_INFO };
    info.pOperation = &not_an_op;
    BKT_EXPECT(bkCreatePlan(ctx, &info, NULL, &plan), BK_ERROR_INVALID_ARGUMENT, "pOperation",
               "a struct that is no op (BkRunInfo) in pOperation");
    tap_ok(plan == BK_NULL_HANDLE, "failed creates leave the handle NULL");

    /* Unknown structs chained to the create info or the op are skipped. */
    BkBaseInStructure ext = { .sType = (BkStructureType)0x7777 };
    op = forward_info(BK_DATA_TYPE_F32);
    op.pNext = &ext;
    info.pOperation = &op;
    info.pNext = &ext;
    BKT_EXPECT(bkCreatePlan(ctx, &info, NULL, &plan), BK_SUCCESS, NULL,
               "unknown pNext structs are skipped");
    bkDestroyPlan(plan);
    bkDestroyPlan(BK_NULL_HANDLE);
    tap_ok(true, "bkDestroyPlan accepts BK_NULL_HANDLE");
}

static void check_properties(BkPlan plan, const char *what, BkStructureType op, uint32_t bindings,
                             BkDataType type)
{
    BkPlanProperties props;
    memset(&props, 0xEE, sizeof props);
    props.sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES;
    props.pNext = NULL;
    if (!tap_ok(bkGetPlanProperties(plan, &props) == BK_SUCCESS, "%s: bkGetPlanProperties", what))
        return;
    BkDataType compute = type == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    bool ok = props.sType == BK_STRUCTURE_TYPE_PLAN_PROPERTIES && props.pNext == NULL &&
              props.operation == op && props.bindingCount == bindings &&
              props.workspaceSize == 0 && props.backend == bkt_device_type(ctx) &&
              memchr(props.kernelName, '\0', BK_MAX_KERNEL_NAME_SIZE) &&
              props.kernelName[0] != '\0' && props.precision.computeType == compute &&
              props.precision.accumulatorType == compute && props.precision.deterministic &&
              props.precision.bitStable;
    tap_ok(ok, "%s: operation, %u bindings, no workspace, backend, kernel \"%.64s\", computes "
           "in %s, deterministic", what, bindings, ok ? props.kernelName : "?",
           bkt_type_name(compute));
    if (!ok)
        tap_diag("operation %d bindingCount %u workspaceSize %llu backend %d computeType %d "
                 "accumulatorType %d deterministic %u bitStable %u",
                 (int)props.operation, props.bindingCount,
                 (unsigned long long)props.workspaceSize, (int)props.backend,
                 (int)props.precision.computeType, (int)props.precision.accumulatorType,
                 props.precision.deterministic, props.precision.bitStable);
}

static void test_properties(void)
{
    const BkDataType types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                 BK_DATA_TYPE_F64 };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char what[64];
        BkPlan plan = BK_NULL_HANDLE;
        BkGatedActivationInfo f = forward_info(types[i]);
        snprintf(what, sizeof what, "forward %s", bkt_type_name(types[i]));
        BKT_EXPECT(bkt_create_plan(ctx, &f, &plan), BK_SUCCESS, NULL, "%s: create", what);
        check_properties(plan, what, BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, 2, types[i]);
        bkDestroyPlan(plan);

        plan = BK_NULL_HANDLE;
        BkGatedActivationBackwardInfo b = backward_info(types[i]);
        snprintf(what, sizeof what, "backward %s", bkt_type_name(types[i]));
        BKT_EXPECT(bkt_create_plan(ctx, &b, &plan), BK_SUCCESS, NULL, "%s: create", what);
        check_properties(plan, what, BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, 3,
                         types[i]);
        bkDestroyPlan(plan);
    }

    BkPlan plan = BK_NULL_HANDLE;
    BkGatedActivationInfo f = forward_info(BK_DATA_TYPE_F32);
    bkt_create_plan(ctx, &f, &plan);
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    BKT_EXPECT(bkGetPlanProperties(plan, &props), BK_ERROR_INVALID_ARGUMENT,
               "BkPlanProperties.sType", "properties with a wrong sType");
    BKT_EXPECT(bkGetPlanProperties(plan, NULL), BK_ERROR_INVALID_ARGUMENT, "pProperties",
               "pProperties NULL");
    props.sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES;
    BKT_EXPECT(bkGetPlanProperties(BK_NULL_HANDLE, &props), BK_ERROR_INVALID_ARGUMENT, "plan",
               "plan NULL");
    bkDestroyPlan(plan);
}

/* BkPlanBindingProperties chained to BkPlanProperties: each slot's name,
 * byte span, alignment (the element size) and whether the op writes it,
 * wherever it sits in the chain; other structs in the chain are left alone. */
static bool binding_is(const BkBindingProperties *b, const char *name, uint64_t size,
                       uint64_t alignment, bool written)
{
    bool ok = memchr(b->name, '\0', sizeof b->name) && strcmp(b->name, name) == 0 &&
              b->size == size && b->alignment == alignment &&
              b->written == (written ? BK_TRUE : BK_FALSE) && b->reserved == 0;
    if (!ok)
        tap_diag("slot \"%.32s\": size %llu, alignment %llu, written %u, reserved %u; expected "
                 "\"%s\", %llu, %llu, %u", memchr(b->name, '\0', sizeof b->name) ? b->name : "?",
                 (unsigned long long)b->size, (unsigned long long)b->alignment, b->written,
                 b->reserved, name, (unsigned long long)size, (unsigned long long)alignment,
                 written ? 1u : 0u);
    return ok;
}

static bool zero_past(const BkPlanBindingProperties *b, uint32_t count)
{
    const unsigned char *p = (const unsigned char *)&b->bindings[count];
    const unsigned char *end = (const unsigned char *)&b->bindings[BK_MAX_BINDINGS];
    for (; p < end; p++)
        if (*p)
            return false;
    return true;
}

static void test_binding_properties(void)
{
    BkPlan fwd = BK_NULL_HANDLE, bwd = BK_NULL_HANDLE, padded = BK_NULL_HANDLE;
    BkGatedActivationInfo f = forward_info(BK_DATA_TYPE_F32);        /* {3, 8} -> {3, 4} */
    BkGatedActivationBackwardInfo b = backward_info(BK_DATA_TYPE_F64); /* {6, 5}, {3, 5} */
    BkGatedActivationInfo p = forward_info(BK_DATA_TYPE_F16);
    p.input.stride[0] = 10, p.input.stride[1] = 1;                     /* rows padded to 10 */
    p.output.stride[0] = 1, p.output.stride[1] = 3;                    /* column-major */
    if (bkt_create_plan(ctx, &f, &fwd) != BK_SUCCESS ||
        bkt_create_plan(ctx, &b, &bwd) != BK_SUCCESS ||
        bkt_create_plan(ctx, &p, &padded) != BK_SUCCESS)
        tap_bail("bkCreatePlan: %s", bkGetLastErrorMessage());

    BkPlanBindingProperties bind;
    memset(&bind, 0xEE, sizeof bind);
    bind.sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES;
    bind.pNext = NULL;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &bind };
    bool ok = bkGetPlanProperties(fwd, &props) == BK_SUCCESS && props.pNext == &bind &&
              bind.sType == BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES && bind.pNext == NULL &&
              bind.bindingCount == 2 && bind.reserved == 0;
    ok = ok && binding_is(&bind.bindings[0], "input", 3 * 8 * 4, 4, false) &&
         binding_is(&bind.bindings[1], "output", 3 * 4 * 4, 4, true) && zero_past(&bind, 2);
    tap_ok(ok, "forward f32: slots input (96 bytes, read) and output (48, written), the rest 0");

    /* Behind an unknown struct, and followed by a second one. */
    BkPlanBindingProperties second;
    memset(&second, 0xEE, sizeof second);
    second.sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES;
    second.pNext = NULL;
    unsigned char unknown_bytes[64];
    memset(unknown_bytes, 0xAB, sizeof unknown_bytes);
    BkBaseOutStructure *unknown = (BkBaseOutStructure *)unknown_bytes;
    unknown->sType = (BkStructureType)0x4343;
    unknown->pNext = (BkBaseOutStructure *)&bind;
    memset(&bind, 0xEE, sizeof bind);
    bind.sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES;
    bind.pNext = &second;
    props = (BkPlanProperties){ .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = unknown };
    ok = bkGetPlanProperties(bwd, &props) == BK_SUCCESS && props.pNext == unknown &&
         props.bindingCount == 3 && bind.bindingCount == 3 && second.bindingCount == 3 &&
         bind.pNext == &second && second.pNext == NULL;
    for (int k = 0; ok && k < 2; k++) {
        const BkPlanBindingProperties *x = k ? &second : &bind;
        ok = binding_is(&x->bindings[0], "input", 6 * 5 * 8, 8, false) &&
             binding_is(&x->bindings[1], "gradOutput", 3 * 5 * 8, 8, false) &&
             binding_is(&x->bindings[2], "gradInput", 6 * 5 * 8, 8, true) && zero_past(x, 3);
    }
    bool untouched = unknown->sType == (BkStructureType)0x4343 &&
                     unknown->pNext == (BkBaseOutStructure *)&bind;
    for (size_t i = sizeof *unknown; i < sizeof unknown_bytes; i++)
        untouched = untouched && unknown_bytes[i] == 0xAB;
    tap_ok(ok && untouched, "backward f64: both BkPlanBindingProperties in a chain after an "
           "unknown struct are filled (input, gradOutput, gradInput written); the unknown one is "
           "left alone");

    /* Strided tensors: the size is the span from the first to the last element. */
    memset(&bind, 0xEE, sizeof bind);
    bind.sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES;
    bind.pNext = NULL;
    props = (BkPlanProperties){ .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &bind };
    ok = bkGetPlanProperties(padded, &props) == BK_SUCCESS &&
         binding_is(&bind.bindings[0], "input", (2 * 10 + 7 + 1) * 2, 2, false) &&
         binding_is(&bind.bindings[1], "output", (2 * 1 + 3 * 3 + 1) * 2, 2, true);
    tap_ok(ok, "forward f16, padded input and column-major output: sizes are the spans (56 and "
           "24 bytes)");

    /* A struct with the wrong sType is unknown: skipped, not filled. */
    memset(&bind, 0xEE, sizeof bind);
    bind.sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES;
    bind.pNext = NULL;
    props = (BkPlanProperties){ .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &bind };
    ok = bkGetPlanProperties(fwd, &props) == BK_SUCCESS && bind.bindingCount == 0xEEEEEEEEu &&
         bind.bindings[0].size == 0xEEEEEEEEEEEEEEEEull;
    tap_ok(ok, "a chained struct of another sType is not written");
    bkDestroyPlan(fwd);
    bkDestroyPlan(bwd);
    bkDestroyPlan(padded);
}

static void test_allocator(void)
{
    struct bkt_alloc_stats stats;
    BkAllocationCallbacks cb = bkt_counting_allocator(&stats);
    BkGatedActivationInfo f = forward_info(BK_DATA_TYPE_BF16);
    BkPlanCreateInfo info = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &f };
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkCreatePlan(ctx, &info, &cb, &plan), BK_SUCCESS, NULL, "create with an allocator");
    tap_ok(stats.allocations > 0, "the allocator is used (%ld)", stats.allocations);
    bkDestroyPlan(plan);
    tap_ok(bkt_alloc_live(&stats) == 0 && stats.unknown_frees == 0,
           "bkDestroyPlan returns it all");

    long needed = stats.calls;
    bool all_oom = true, none_leaked = true;
    for (long k = 0; k < needed; k++) {
        cb = bkt_counting_allocator(&stats);
        stats.fail_from = k;
        plan = BK_NULL_HANDLE;
        BkResult r = bkCreatePlan(ctx, &info, &cb, &plan);
        if (r == BK_SUCCESS) {
            bkDestroyPlan(plan);
            continue;
        }
        all_oom = all_oom && r == BK_ERROR_OUT_OF_HOST_MEMORY && plan == BK_NULL_HANDLE;
        none_leaked = none_leaked && bkt_alloc_live(&stats) == 0;
    }
    tap_ok(all_oom, "a failing allocator gives BK_ERROR_OUT_OF_HOST_MEMORY (%ld points)", needed);
    tap_ok(none_leaked, "... and leaks nothing");
    cb.pfnFree = NULL;
    BKT_EXPECT(bkCreatePlan(ctx, &info, &cb, &plan), BK_ERROR_INVALID_ARGUMENT, "pfnFree",
               "an allocator without pfnFree");
}

int main(void)
{
    ctx = bkt_open_device();
    test_create_errors();
    test_properties();
    test_binding_properties();
    test_allocator();
    bkDestroyContext(ctx);
    return tap_done();
}
