/* bkEnumerateDevices: the two-call idiom, BK_INCOMPLETE, sType checks,
 * and what the host device reports. */
#include "config.h"

#include <stdio.h>
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

    BKT_EXPECT(bkEnumerateDevices(NULL, NULL), BK_ERROR_INVALID_ARGUMENT, "pDeviceCount",
               "pDeviceCount NULL is refused");
    return tap_done();
}
