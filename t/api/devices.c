/* SPDX-License-Identifier: Apache-2.0 */
/* bkEnumerateDevices: the two-call idiom, BK_INCOMPLETE, sType checks,
 * and what the host device reports. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define MAX_DEVICES 64

static void init_props(BkDeviceProperties *p, uint32_t n)
{
    memset(p, 0xA5, sizeof *p * n);   /* garbage libbk must overwrite */
    for (uint32_t i = 0; i < n; i++) {
        p[i].sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        p[i].pNext = NULL;
    }
}

static bool name_ok(const char *name)
{
    return memchr(name, '\0', BK_MAX_NAME_SIZE) && name[0] != '\0';
}

static void init_module(BkDeviceModuleProperties *m)
{
    memset(m, 0xA5, sizeof *m);   /* garbage libbk must overwrite */
    m->sType = BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    m->pNext = NULL;
}

/* Counts within the array, every listed architecture a plausible sm_XY,
 * and the entries past the counts zeroed. */
static bool module_lists_ok(const BkDeviceModuleProperties *m)
{
    if (m->binaryArchitectureCount > BK_MAX_MODULE_ARCHITECTURES ||
        m->ptxArchitectureCount > BK_MAX_MODULE_ARCHITECTURES)
        return false;
    for (uint32_t i = 0; i < BK_MAX_MODULE_ARCHITECTURES; i++) {
        uint32_t b = m->binaryArchitectures[i], p = m->ptxArchitectures[i];
        if (i < m->binaryArchitectureCount ? b < 50 || b > 200 : b != 0)
            return false;
        if (i < m->ptxArchitectureCount ? p < 50 || p > 200 : p != 0)
            return false;
    }
    return true;
}

/* BkDeviceModuleProperties chained to the enumerated properties. */
static void test_module_properties(uint32_t count)
{
    BkDeviceProperties props[MAX_DEVICES];
    BkDeviceModuleProperties mods[MAX_DEVICES];
    init_props(props, count);
    for (uint32_t i = 0; i < count; i++) {
        init_module(&mods[i]);
        props[i].pNext = &mods[i];
    }
    uint32_t n = count;
    BKT_EXPECT(bkEnumerateDevices(&n, props), BK_SUCCESS, NULL,
               "enumerate with a BkDeviceModuleProperties on each device");
    const BkDeviceModuleProperties *host = &mods[0];
    tap_ok(props[0].pNext == host && host->sType == BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES &&
               host->pNext == NULL,
           "... its sType and pNext are kept");
    tap_ok(host->binaryArchitectureCount == 0 && host->ptxArchitectureCount == 0 &&
               module_lists_ok(host),
           "the host device lists no GPU architectures (%u binary, %u PTX)",
           host->binaryArchitectureCount, host->ptxArchitectureCount);
    tap_is_int(host->deviceSupported, BK_TRUE, "the host device is supported");

    /* Every listed CUDA device reports the architectures libbk was built
     * with; whether the GPU can run them is checked only on the device
     * under test (BK_TEST_DEVICE=cuda), as another GPU may be too old. */
    if (count > 1) {
        bool lists_ok = true, all_supported = true;
        for (uint32_t i = 1; i < count; i++) {
            const BkDeviceModuleProperties *m = &mods[i];
            lists_ok = lists_ok && m->binaryArchitectureCount + m->ptxArchitectureCount > 0 &&
                       module_lists_ok(m);
            all_supported = all_supported && m->deviceSupported == BK_TRUE;
            tap_diag("cuda:%u sm_%u%u: %u cubins, %u PTX, deviceSupported %u", i - 1,
                     props[i].computeCapabilityMajor, props[i].computeCapabilityMinor,
                     m->binaryArchitectureCount, m->ptxArchitectureCount, m->deviceSupported);
        }
        tap_ok(lists_ok, "each CUDA device lists architectures, all within sm_50..sm_200");
        const char *want = getenv("BK_TEST_DEVICE");
        if (want && strcmp(want, "cuda") == 0)
            tap_ok(all_supported, "BK_TEST_DEVICE=cuda: every CUDA device is supported");
        else
            tap_skip(1, "BK_TEST_DEVICE is not cuda");
    } else {
        tap_skip(2, "no CUDA device listed");
    }

    /* An output struct libbk does not know, first in the chain, is passed
     * over: the module struct after it is still filled. */
    BkBaseInStructure unknown = { .sType = (BkStructureType)0x4242, .pNext = NULL };
    init_props(props, count);
    init_module(&mods[0]);
    unknown.pNext = (const BkBaseInStructure *)&mods[0];
    props[0].pNext = &unknown;
    n = count;
    BKT_EXPECT(bkEnumerateDevices(&n, props), BK_SUCCESS, NULL,
               "an unknown struct first in the output chain");
    tap_ok(unknown.sType == (BkStructureType)0x4242 &&
               unknown.pNext == (const BkBaseInStructure *)&mods[0],
           "... is left alone");
    tap_ok(mods[0].binaryArchitectureCount == 0 && mods[0].ptxArchitectureCount == 0 &&
               mods[0].deviceSupported == BK_TRUE,
           "... and the module struct after it is filled");
}

int main(void)
{
    bkt_capture_messages();
    uint32_t count = 0;
    BKT_EXPECT(bkEnumerateDevices(&count, NULL), BK_SUCCESS, NULL, "count query");
    tap_ok(count >= 1 && count <= MAX_DEVICES, "at least the host device (%u)", count);
    if (count < 1 || count > MAX_DEVICES)
        tap_bail("cannot go on with %u devices", count);

    BkDeviceProperties props[MAX_DEVICES + 1];
    init_props(props, count + 1);
    uint32_t n = count + 1;
    BKT_EXPECT(bkEnumerateDevices(&n, props), BK_SUCCESS, NULL, "fill an array larger than needed");
    tap_is_int(n, count, "the count is set to the number written");
    tap_ok(props[count].deviceType == (BkDeviceType)0xA5A5A5A5,
           "the entry past the devices is left alone");

    const BkDeviceProperties *host = &props[0];
    tap_ok(host->sType == BK_STRUCTURE_TYPE_DEVICE_PROPERTIES && host->pNext == NULL,
           "sType and pNext are kept");
    tap_ok(host->deviceType == BK_DEVICE_TYPE_HOST && host->deviceIndex == 0,
           "the host device comes first");
    tap_ok(name_ok(host->name), "the host device has a name: \"%.40s\"", host->name);
    tap_is_int(host->queueCount, 16, "the host device has 16 queues");
    tap_ok(host->computeCapabilityMajor == 0 && host->driverVersion == 0 &&
               host->runtimeVersion == 0,
           "the host reports no compute capability or CUDA versions");
    tap_ok(host->multiprocessorCount >= 1 && host->totalMemory > 0,
           "the host reports processors (%u) and memory (%llu)", host->multiprocessorCount,
           (unsigned long long)host->totalMemory);

    bool cuda_ok = true;
    for (uint32_t i = 1; i < count; i++) {
        const BkDeviceProperties *p = &props[i];
        cuda_ok = cuda_ok && p->deviceType == BK_DEVICE_TYPE_CUDA && p->deviceIndex == i - 1 &&
                  name_ok(p->name) && p->computeCapabilityMajor >= 5 && p->queueCount >= 1 &&
                  p->totalMemory > 0 && p->driverVersion > 0;
    }
    tap_ok(cuda_ok, "the %u other devices are CUDA devices numbered from 0", count - 1);

    /* Too small an array: BK_INCOMPLETE with what fits. */
    init_props(props, count + 1);
    n = 0;
    BKT_EXPECT(bkEnumerateDevices(&n, props), count > 0 ? BK_INCOMPLETE : BK_SUCCESS, NULL,
               "a zero-sized array gives BK_INCOMPLETE");
    tap_is_int(n, 0, "... and a count of 0");
    tap_ok(props[0].deviceType == (BkDeviceType)0xA5A5A5A5, "... and writes nothing");
    if (count > 1) {
        init_props(props, count + 1);
        n = count - 1;
        BKT_EXPECT(bkEnumerateDevices(&n, props), BK_INCOMPLETE, NULL,
                   "one entry too few gives BK_INCOMPLETE");
        tap_ok(n == count - 1 && props[0].deviceType == BK_DEVICE_TYPE_HOST &&
                   props[count - 1].deviceType == (BkDeviceType)0xA5A5A5A5,
               "... with the first %u entries written", count - 1);
    } else {
        tap_skip(2, "only one device");
    }

    /* Output structs must carry their sType. */
    init_props(props, count);
    props[0].sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO;
    n = count;
    BKT_EXPECT(bkEnumerateDevices(&n, props), BK_ERROR_INVALID_ARGUMENT, "pProperties[0].sType",
               "a wrong sType in pProperties[0] is refused");
    init_props(props, count);
    props[count - 1].sType = BK_STRUCTURE_TYPE_UNDEFINED;
    n = count;
    char needle[32];
    snprintf(needle, sizeof needle, "pProperties[%u].sType", count - 1);
    BKT_EXPECT(bkEnumerateDevices(&n, props), BK_ERROR_INVALID_ARGUMENT, needle,
               "a wrong sType in the last entry is refused");

    /* An unknown struct in pNext is kept, not touched. */
    BkBaseInStructure ext = { .sType = (BkStructureType)0x12345, .pNext = NULL };
    init_props(props, count);
    props[0].pNext = &ext;
    n = count;
    BKT_EXPECT(bkEnumerateDevices(&n, props), BK_SUCCESS, NULL, "an unknown pNext is skipped");
    tap_ok(props[0].pNext == &ext && ext.sType == (BkStructureType)0x12345,
           "... and pNext is kept");

    test_module_properties(count);

    BKT_EXPECT(bkEnumerateDevices(NULL, NULL), BK_ERROR_INVALID_ARGUMENT, "pDeviceCount",
               "pDeviceCount NULL is refused");
    return tap_done();
}
