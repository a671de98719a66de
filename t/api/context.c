/* SPDX-License-Identifier: Apache-2.0 */
/* Contexts: creation and its checks, properties, AUTO, and host
 * allocation callbacks (used, balanced, and failing cleanly). */
#include "config.h"

#include <string.h>

#include "test_util.h"

static BkContextCreateInfo info_for(BkDeviceType type)
{
    BkContextCreateInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
        .deviceType = type,
        .apiVersion = BK_HEADER_VERSION,
    };
    return info;
}

static void test_create_errors(BkDeviceType type)
{
    BkContext ctx = BK_NULL_HANDLE;
    BkContextCreateInfo info = info_for(type);

    BKT_EXPECT(bkCreateContext(&info, NULL, NULL), BK_ERROR_INVALID_ARGUMENT, "pContext",
               "pContext NULL");
    BKT_EXPECT(bkCreateContext(NULL, NULL, &ctx), BK_ERROR_INVALID_ARGUMENT, "pCreateInfo",
               "pCreateInfo NULL");
    tap_ok(ctx == BK_NULL_HANDLE, "a failed create leaves the handle NULL");

    info.sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_ERROR_INVALID_ARGUMENT,
               "BkContextCreateInfo.sType", "wrong sType");

    info = info_for((BkDeviceType)7);
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_ERROR_INVALID_ARGUMENT, "deviceType",
               "deviceType 7 is not a device type");

    info = info_for(BK_DEVICE_TYPE_HOST);
    info.deviceIndex = 1;
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_ERROR_INVALID_ARGUMENT,
               "deviceIndex = 1 must be 0", "host deviceIndex 1 is an invalid argument");
    if (type == BK_DEVICE_TYPE_CUDA) {
        info = info_for(type);
        info.deviceIndex = 4096;
        BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_ERROR_NO_DEVICE, "deviceIndex",
                   "CUDA deviceIndex 4096 does not exist");
    }

    info = info_for(type);
    info.apiVersion = BK_MAKE_VERSION(BK_VERSION_MAJOR + 1, 0, 0);
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_ERROR_INCOMPATIBLE_VERSION, "apiVersion",
               "apiVersion with a newer major");

    info = info_for(type);
    info.flags = 1;
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_ERROR_INVALID_ARGUMENT, "flags",
               "reserved flags must be 0");

    struct bkt_alloc_stats stats;
    BkAllocationCallbacks cb = bkt_counting_allocator(&stats);
    cb.pfnAllocation = NULL;
    info = info_for(type);
    BKT_EXPECT(bkCreateContext(&info, &cb, &ctx), BK_ERROR_INVALID_ARGUMENT, "pfnAllocation",
               "an allocator without pfnAllocation");
    cb = bkt_counting_allocator(&stats);
    cb.pfnFree = NULL;
    BKT_EXPECT(bkCreateContext(&info, &cb, &ctx), BK_ERROR_INVALID_ARGUMENT, "pfnFree",
               "an allocator without pfnFree");
}

static void test_properties(BkDeviceType type)
{
    BkContext ctx = BK_NULL_HANDLE;
    BkContextCreateInfo info = info_for(type);
    info.apiVersion = 0;   /* 0 means "any" */
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_SUCCESS, NULL,
               "create a %s context with apiVersion 0", bkt_device_name(type));
    if (!ctx)
        tap_bail("no context");

    BkDeviceProperties props;
    memset(&props, 0, sizeof props);
    props.sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    BKT_EXPECT(bkGetContextProperties(ctx, &props), BK_SUCCESS, NULL, "bkGetContextProperties");
    tap_ok(props.deviceType == type && props.queueCount >= 1 && props.name[0] != '\0',
           "properties: type %s, %u queues, \"%.40s\"", bkt_device_name(props.deviceType),
           props.queueCount, props.name);

    /* The context's properties are the enumerated ones. */
    BkDeviceProperties list[64];
    uint32_t n = 64;
    for (uint32_t i = 0; i < n; i++)
        list[i] = (BkDeviceProperties){ .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkEnumerateDevices(&n, list);
    bool found = false;
    for (uint32_t i = 0; i < n; i++)
        found = found || (list[i].deviceType == props.deviceType &&
                          list[i].deviceIndex == props.deviceIndex &&
                          strcmp(list[i].name, props.name) == 0 &&
                          list[i].queueCount == props.queueCount);
    tap_ok(found, "the properties match those bkEnumerateDevices lists");

    /* The architectures libbk carries for the device, behind an output
     * struct libbk does not know (which it must pass over). */
    BkDeviceModuleProperties mod;
    memset(&mod, 0xA5, sizeof mod);
    mod.sType = BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    mod.pNext = NULL;
    BkBaseInStructure unknown = { .sType = (BkStructureType)0x4343,
                                  .pNext = (const BkBaseInStructure *)&mod };
    props.pNext = &unknown;
    BKT_EXPECT(bkGetContextProperties(ctx, &props), BK_SUCCESS, NULL,
               "bkGetContextProperties with an unknown struct, then BkDeviceModuleProperties");
    tap_ok(props.pNext == &unknown && unknown.sType == (BkStructureType)0x4343 &&
               unknown.pNext == (const BkBaseInStructure *)&mod && mod.pNext == NULL,
           "... the chain is kept as it was");
    bool arch_ok = true;
    for (uint32_t i = 0; i < BK_MAX_MODULE_ARCHITECTURES; i++) {
        if (i < mod.binaryArchitectureCount)
            arch_ok = arch_ok && mod.binaryArchitectures[i] >= 50 &&
                      mod.binaryArchitectures[i] <= 200;
        if (i < mod.ptxArchitectureCount)
            arch_ok = arch_ok && mod.ptxArchitectures[i] >= 50 && mod.ptxArchitectures[i] <= 200;
    }
    if (type == BK_DEVICE_TYPE_HOST)
        tap_ok(mod.binaryArchitectureCount == 0 && mod.ptxArchitectureCount == 0,
               "the host lists no GPU architectures");
    else
        tap_ok(mod.binaryArchitectureCount + mod.ptxArchitectureCount > 0 &&
                   mod.binaryArchitectureCount <= BK_MAX_MODULE_ARCHITECTURES &&
                   mod.ptxArchitectureCount <= BK_MAX_MODULE_ARCHITECTURES && arch_ok,
               "%s lists %u cubin and %u PTX architectures, all within sm_50..sm_200",
               bkt_device_name(type), mod.binaryArchitectureCount, mod.ptxArchitectureCount);
    tap_is_int(mod.deviceSupported, BK_TRUE, "the %s device can run libbk's code",
               bkt_device_name(type));
    props.pNext = NULL;

    props.sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES;
    BKT_EXPECT(bkGetContextProperties(ctx, &props), BK_ERROR_INVALID_ARGUMENT,
               "BkDeviceProperties.sType", "properties with a wrong sType");
    BKT_EXPECT(bkGetContextProperties(ctx, NULL), BK_ERROR_INVALID_ARGUMENT, "pProperties",
               "pProperties NULL");
    BKT_EXPECT(bkGetContextProperties(BK_NULL_HANDLE, &props), BK_ERROR_INVALID_ARGUMENT,
               "context", "context NULL");
    bkDestroyContext(ctx);
    bkDestroyContext(BK_NULL_HANDLE);
    tap_ok(true, "bkDestroyContext accepts BK_NULL_HANDLE");
}

static void test_pnext_and_auto(void)
{
    BkContext ctx = BK_NULL_HANDLE;
    BkBaseInStructure ext = { .sType = (BkStructureType)0x5151, .pNext = NULL };
    BkContextCreateInfo info = info_for(BK_DEVICE_TYPE_HOST);
    info.pNext = &ext;
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_SUCCESS, NULL,
               "an unknown struct in pNext is skipped");
    bkDestroyContext(ctx);

    info = info_for(BK_DEVICE_TYPE_AUTO);
    ctx = BK_NULL_HANDLE;
    unsigned messages = bkt_message_count();
    BKT_EXPECT(bkCreateContext(&info, NULL, &ctx), BK_SUCCESS, NULL, "BK_DEVICE_TYPE_AUTO opens");
    /* Backends AUTO tries and passes over are no error of the call. */
    tap_ok(bkt_message_count() == messages, "... without reporting an error (%u messages)",
           bkt_message_count() - messages);
    uint32_t n = 0;
    bkEnumerateDevices(&n, NULL);
    if (ctx) {
        BkDeviceType got = bkt_device_type(ctx);
        tap_ok(got == (n > 1 ? BK_DEVICE_TYPE_CUDA : BK_DEVICE_TYPE_HOST),
               "AUTO picks %s with %u devices listed", bkt_device_name(got), n);
    } else {
        tap_ok(false, "AUTO gave no context");
    }
    bkDestroyContext(ctx);

    if (n == 1) {   /* no CUDA device listed: asking for one must fail */
        info = info_for(BK_DEVICE_TYPE_CUDA);
        bkt_expect_begin();
        BkResult r = bkCreateContext(&info, NULL, &ctx);
        tap_ok(r < 0 && ctx == BK_NULL_HANDLE && bkGetLastErrorMessage()[0],
               "CUDA without a device fails (%s: %s)", bkResultString(r), bkGetLastErrorMessage());
    } else {
        tap_skip(1, "a CUDA device is listed");
    }
}

/* Every host allocation goes through the callbacks, and all come back. */
static void test_allocator(BkDeviceType type)
{
    struct bkt_alloc_stats stats;
    BkAllocationCallbacks cb = bkt_counting_allocator(&stats);
    BkContextCreateInfo info = info_for(type);
    BkContext ctx = BK_NULL_HANDLE;
    BKT_EXPECT(bkCreateContext(&info, &cb, &ctx), BK_SUCCESS, NULL, "create with an allocator");
    tap_ok(stats.allocations > 0, "the allocator is used (%ld allocations)", stats.allocations);
    /* Objects made without their own allocator use the context's. */
    long before = stats.allocations;
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    bkAllocateCommandBuffer(ctx, NULL, &cmd);
    tap_ok(stats.allocations > before, "a command buffer uses the context's allocator");
    bkFreeCommandBuffer(cmd);
    bkDestroyContext(ctx);
    tap_ok(bkt_alloc_live(&stats) == 0 && stats.unknown_frees == 0,
           "destroy frees all of it (%ld live, %ld unknown frees)", bkt_alloc_live(&stats),
           stats.unknown_frees);
    tap_ok(stats.bad_alignment == 0, "every alignment asked for is a power of two");

    /* Fail the k-th allocation for every k until creation succeeds: each
     * failure is BK_ERROR_OUT_OF_HOST_MEMORY and leaks nothing. */
    long needed = stats.calls;
    bool all_oom = true, none_leaked = true, handle_null = true;
    for (long k = 0; k < needed; k++) {
        cb = bkt_counting_allocator(&stats);
        stats.fail_from = k;
        ctx = BK_NULL_HANDLE;
        BkResult r = bkCreateContext(&info, &cb, &ctx);
        if (r == BK_SUCCESS) {   /* an allocation libbk could do without */
            bkDestroyContext(ctx);
            continue;
        }
        all_oom = all_oom && r == BK_ERROR_OUT_OF_HOST_MEMORY;
        none_leaked = none_leaked && bkt_alloc_live(&stats) == 0;
        handle_null = handle_null && ctx == BK_NULL_HANDLE;
        if (r != BK_ERROR_OUT_OF_HOST_MEMORY)
            tap_diag("failing allocation %ld: %s (%s)", k, bkResultString(r),
                     bkGetLastErrorMessage());
    }
    tap_ok(all_oom, "a failing allocator gives BK_ERROR_OUT_OF_HOST_MEMORY (%ld points)", needed);
    tap_ok(none_leaked, "... and nothing is leaked");
    tap_ok(handle_null, "... and the handle stays NULL");
    cb = bkt_counting_allocator(&stats);
    stats.fail_from = 0;
    BKT_EXPECT(bkCreateContext(&info, &cb, &ctx), BK_ERROR_OUT_OF_HOST_MEMORY, "bkCreateContext",
               "an allocator that always fails");
}

int main(void)
{
    BkContext dut = bkt_open_device();   /* skips when the asked device is missing */
    BkDeviceType type = bkt_device_type(dut);
    bkDestroyContext(dut);

    test_create_errors(type);
    test_properties(type);
    test_pnext_and_auto();
    test_allocator(type);
    return tap_done();
}
