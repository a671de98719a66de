/* SPDX-License-Identifier: Apache-2.0 */
/* Memory: allocation and its checks, addresses, synchronous copies (round
 * trip, offsets, past the end), pinned memory, and allocators. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static BkMemoryAllocateInfo alloc_info(uint64_t size, BkMemoryType type)
{
    BkMemoryAllocateInfo info = {
        .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .size = size,
        .memoryType = type,
    };
    return info;
}

static void test_allocate_errors(BkContext ctx)
{
    BkMemory mem = BK_NULL_HANDLE;
    BkMemoryAllocateInfo info = alloc_info(0, BK_MEMORY_TYPE_DEVICE);
    BKT_EXPECT(bkAllocateMemory(ctx, &info, NULL, &mem), BK_ERROR_INVALID_ARGUMENT, "size",
               "size 0 is refused");
    tap_ok(mem == BK_NULL_HANDLE, "... and the handle is NULL");

    info = alloc_info(64, BK_MEMORY_TYPE_DEVICE);
    info.sType = BK_STRUCTURE_TYPE_RUN_INFO;
    BKT_EXPECT(bkAllocateMemory(ctx, &info, NULL, &mem), BK_ERROR_INVALID_ARGUMENT,
               "BkMemoryAllocateInfo.sType", "wrong sType");
    info = alloc_info(64, (BkMemoryType)9);
    BKT_EXPECT(bkAllocateMemory(ctx, &info, NULL, &mem), BK_ERROR_INVALID_ARGUMENT, "memoryType",
               "memoryType 9 is not a memory type");
    info = alloc_info(64, BK_MEMORY_TYPE_DEVICE);
    BKT_EXPECT(bkAllocateMemory(ctx, NULL, NULL, &mem), BK_ERROR_INVALID_ARGUMENT,
               "pAllocateInfo", "pAllocateInfo NULL");
    BKT_EXPECT(bkAllocateMemory(ctx, &info, NULL, NULL), BK_ERROR_INVALID_ARGUMENT, "pMemory",
               "pMemory NULL");
    BKT_EXPECT(bkAllocateMemory(BK_NULL_HANDLE, &info, NULL, &mem), BK_ERROR_INVALID_ARGUMENT,
               "context", "context NULL");

    info = alloc_info(UINT64_C(1) << 62, BK_MEMORY_TYPE_DEVICE);
    bkt_expect_begin();
    BkResult r = bkAllocateMemory(ctx, &info, NULL, &mem);
    tap_ok((r == BK_ERROR_OUT_OF_DEVICE_MEMORY || r == BK_ERROR_OUT_OF_HOST_MEMORY) &&
               mem == BK_NULL_HANDLE && strstr(bkGetLastErrorMessage(), "bkAllocateMemory"),
           "2^62 bytes is out of memory (%s: %s)", bkResultString(r), bkGetLastErrorMessage());

    BKT_EXPECT(bkGetMemoryAddress(BK_NULL_HANDLE, &(BkDeviceAddress){ 0 }),
               BK_ERROR_INVALID_ARGUMENT, "memory", "bkGetMemoryAddress: memory NULL");
    bkFreeMemory(ctx, BK_NULL_HANDLE);
    tap_ok(true, "bkFreeMemory accepts BK_NULL_HANDLE");
}

static void test_round_trip(BkContext ctx, BkMemoryType type, struct bkt_rng *rng)
{
    const uint64_t size = 4099;   /* odd on purpose */
    BkMemory mem = BK_NULL_HANDLE;
    BkMemoryAllocateInfo info = alloc_info(size, type);
    const char *what = type == BK_MEMORY_TYPE_DEVICE ? "device" : "pinned";
    BKT_EXPECT(bkAllocateMemory(ctx, &info, NULL, &mem), BK_SUCCESS, NULL, "allocate %s memory",
               what);
    if (!mem) {
        tap_skip(6, "no memory");
        return;
    }
    BkDeviceAddress addr = 0;
    BKT_EXPECT(bkGetMemoryAddress(mem, &addr), BK_SUCCESS, NULL, "bkGetMemoryAddress");
    tap_ok(addr != 0 && addr % 256 == 0, "the %s address 0x%llx is 256-byte aligned", what,
           (unsigned long long)addr);
    BKT_EXPECT(bkGetMemoryAddress(mem, NULL), BK_ERROR_INVALID_ARGUMENT, "pAddress",
               "pAddress NULL");

    unsigned char *src = malloc(size), *dst = malloc(size);
    for (uint64_t i = 0; i < size; i++)
        src[i] = (unsigned char)bkt_rand_u64(rng);
    memset(dst, 0, size);
    bool ok = bkCopyToDevice(ctx, addr, src, size) == BK_SUCCESS &&
              bkCopyFromDevice(ctx, dst, addr, size) == BK_SUCCESS;
    tap_ok(ok && memcmp(src, dst, size) == 0, "%llu bytes round-trip through %s memory",
           (unsigned long long)size, what);

    /* A copy at an offset touches only its bytes. */
    unsigned char patch[13];
    memset(patch, 0x5A, sizeof patch);
    ok = bkCopyToDevice(ctx, addr + 1001, patch, sizeof patch) == BK_SUCCESS &&
         bkCopyFromDevice(ctx, dst, addr, size) == BK_SUCCESS;
    memcpy(src + 1001, patch, sizeof patch);
    tap_ok(ok && memcmp(src, dst, size) == 0, "a copy at an odd offset changes only its bytes");
    ok = bkCopyFromDevice(ctx, dst, addr + size - 7, 7) == BK_SUCCESS;
    tap_ok(ok && memcmp(dst, src + size - 7, 7) == 0, "the last 7 bytes read back");
    free(src);
    free(dst);
    bkFreeMemory(ctx, mem);
}

static void test_copy_errors(BkContext ctx)
{
    struct bkt_buffer buf = bkt_alloc(ctx, 256);
    unsigned char host[512] = { 0 };
    BKT_EXPECT(bkCopyToDevice(ctx, buf.address + 200, host, 57), BK_ERROR_BUFFER_TOO_SMALL,
               "size", "bkCopyToDevice past the end of a BkMemory");
    BKT_EXPECT(bkCopyFromDevice(ctx, host, buf.address, 257), BK_ERROR_BUFFER_TOO_SMALL, "size",
               "bkCopyFromDevice past the end of a BkMemory");
    BKT_EXPECT(bkCopyToDevice(ctx, buf.address + 200, host, 56), BK_SUCCESS, NULL,
               "a copy that ends exactly at the end");
    BKT_EXPECT(bkCopyToDevice(ctx, buf.address, NULL, 4), BK_ERROR_INVALID_ARGUMENT, "pSrc",
               "pSrc NULL");
    BKT_EXPECT(bkCopyFromDevice(ctx, NULL, buf.address, 4), BK_ERROR_INVALID_ARGUMENT, "pDst",
               "pDst NULL");
    BKT_EXPECT(bkCopyToDevice(ctx, 0, host, 4), BK_ERROR_INVALID_ARGUMENT, "dst", "dst 0");
    BKT_EXPECT(bkCopyFromDevice(ctx, host, 0, 4), BK_ERROR_INVALID_ARGUMENT, "src", "src 0");
    BKT_EXPECT(bkCopyToDevice(BK_NULL_HANDLE, buf.address, host, 4), BK_ERROR_INVALID_ARGUMENT,
               "context", "bkCopyToDevice: context NULL");
    BKT_EXPECT(bkCopyFromDevice(BK_NULL_HANDLE, host, buf.address, 4), BK_ERROR_INVALID_ARGUMENT,
               "context", "bkCopyFromDevice: context NULL");
    BKT_EXPECT(bkCopyToDevice(ctx, buf.address, host, 0), BK_SUCCESS, NULL,
               "a copy of 0 bytes does nothing");
    bkt_free(ctx, &buf);
}

/* A BkMemory from one context freed through another is refused. */
static void test_free_other_context(BkContext ctx)
{
    BkContext other = bkt_open_host();
    struct bkt_buffer buf = bkt_alloc(ctx, 64);
    unsigned before = bkt_message_count();
    bkFreeMemory(other, buf.memory);
    tap_ok(bkt_message_count() == before + 1 && strstr(bkGetLastErrorMessage(), "context"),
           "bkFreeMemory through another context reports it: \"%s\"", bkGetLastErrorMessage());
    unsigned char byte = 7;
    tap_ok(bkCopyToDevice(ctx, buf.address, &byte, 1) == BK_SUCCESS,
           "... and leaves the memory alive");
    bkt_free(ctx, &buf);
    bkDestroyContext(other);
}

static void test_allocator(BkContext ctx)
{
    struct bkt_alloc_stats stats;
    BkAllocationCallbacks cb = bkt_counting_allocator(&stats);
    BkMemoryAllocateInfo info = alloc_info(1024, BK_MEMORY_TYPE_DEVICE);
    BkMemory mem = BK_NULL_HANDLE;
    BKT_EXPECT(bkAllocateMemory(ctx, &info, &cb, &mem), BK_SUCCESS, NULL,
               "allocate with an allocator");
    tap_ok(stats.allocations > 0, "the allocator is used (%ld)", stats.allocations);
    bkFreeMemory(ctx, mem);
    tap_ok(bkt_alloc_live(&stats) == 0 && stats.unknown_frees == 0,
           "bkFreeMemory returns it all to the allocator");

    cb = bkt_counting_allocator(&stats);
    stats.fail_from = 0;
    BKT_EXPECT(bkAllocateMemory(ctx, &info, &cb, &mem), BK_ERROR_OUT_OF_HOST_MEMORY,
               "bkAllocateMemory", "a failing allocator");
    tap_ok(bkt_alloc_live(&stats) == 0 && mem == BK_NULL_HANDLE, "... leaks nothing");
    cb.pfnFree = NULL;
    BKT_EXPECT(bkAllocateMemory(ctx, &info, &cb, &mem), BK_ERROR_INVALID_ARGUMENT, "pfnFree",
               "an allocator without pfnFree");
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(11);
    test_allocate_errors(ctx);
    test_round_trip(ctx, BK_MEMORY_TYPE_DEVICE, &rng);
    test_round_trip(ctx, BK_MEMORY_TYPE_HOST_PINNED, &rng);
    test_copy_errors(ctx);
    test_free_other_context(ctx);
    test_allocator(ctx);
    bkDestroyContext(ctx);
    return tap_done();
}
