/* SPDX-License-Identifier: Apache-2.0 */
/* bkCmdCopyMemory and bkCmdFillMemory: what they write, and their
 * checks (overlap, size, alignment, the end of a BkMemory). */
#include "config.h"

#include <string.h>

#include "test_util.h"

#define SIZE 1024

static BkContext ctx;
static BkCommandBuffer cmd;

static void start(void)
{
    BkCommandBufferBeginInfo info = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    if (bkBeginCommandBuffer(cmd, &info) != BK_SUCCESS)
        tap_bail("begin: %s", bkGetLastErrorMessage());
}

static bool finish(void)
{
    BkQueue q = bkt_queue(ctx);
    return bkEndCommandBuffer(cmd) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS &&
           bkQueueWaitIdle(q) == BK_SUCCESS;
}

static void test_effects(const struct bkt_buffer *a, const struct bkt_buffer *b,
                         struct bkt_rng *rng)
{
    unsigned char src[SIZE], dst[SIZE], want[SIZE];
    for (int i = 0; i < SIZE; i++)
        src[i] = (unsigned char)bkt_rand_u64(rng);
    memset(want, 0x11, SIZE);
    bkt_upload(ctx, a->address, src, SIZE);
    bkt_upload(ctx, b->address, want, SIZE);

    /* Odd offsets and sizes are fine for copies. */
    start();
    BKT_EXPECT(bkCmdCopyMemory(cmd, b->address + 3, a->address + 101, 333), BK_SUCCESS, NULL,
               "copy 333 bytes between odd offsets");
    BKT_EXPECT(bkCmdFillMemory(cmd, b->address + 512, 64, 0xA1B2C3D4u), BK_SUCCESS, NULL,
               "fill 64 bytes at offset 512");
    BKT_EXPECT(bkCmdCopyMemory(cmd, b->address, a->address, 0), BK_SUCCESS, NULL,
               "a copy of 0 bytes");
    BKT_EXPECT(bkCmdFillMemory(cmd, b->address, 0, 0), BK_SUCCESS, NULL, "a fill of 0 bytes");
    tap_ok(finish(), "submit");
    memcpy(want + 3, src + 101, 333);
    const uint32_t pattern = 0xA1B2C3D4u;
    for (int i = 0; i < 64; i += 4)
        memcpy(want + 512 + i, &pattern, 4);
    bkt_download(ctx, dst, b->address, SIZE);
    tap_ok(memcmp(dst, want, SIZE) == 0, "exactly the copied and filled bytes changed");

    /* Adjacent ranges in one allocation do not overlap. */
    start();
    BKT_EXPECT(bkCmdCopyMemory(cmd, a->address + 512, a->address, 512), BK_SUCCESS, NULL,
               "copy between adjacent halves of one allocation");
    tap_ok(finish(), "submit");
    bkt_download(ctx, dst, a->address, SIZE);
    tap_ok(memcmp(dst + 512, src, 512) == 0 && memcmp(dst, src, 512) == 0,
           "the upper half is a copy of the lower");
}

static void test_errors(const struct bkt_buffer *a, const struct bkt_buffer *b)
{
    start();
    BKT_EXPECT(bkCmdCopyMemory(cmd, a->address + 8, a->address, 16), BK_ERROR_INVALID_ARGUMENT,
               "overlap", "copy with dst overlapping src");
    BKT_EXPECT(bkCmdCopyMemory(cmd, a->address, a->address + 15, 16), BK_ERROR_INVALID_ARGUMENT,
               "overlap", "copy with src overlapping dst by one byte");
    BKT_EXPECT(bkCmdCopyMemory(cmd, a->address, a->address, 4), BK_ERROR_INVALID_ARGUMENT,
               "overlap", "copy onto itself");
    BKT_EXPECT(bkCmdCopyMemory(cmd, 0, a->address, 4), BK_ERROR_INVALID_ARGUMENT, "dst",
               "copy to dst 0");
    BKT_EXPECT(bkCmdCopyMemory(cmd, a->address, 0, 4), BK_ERROR_INVALID_ARGUMENT, "src",
               "copy from src 0");
    /* The other end stays clear of the boundary: allocations may be adjacent. */
    BKT_EXPECT(bkCmdCopyMemory(cmd, b->address + SIZE - 8, a->address + 100, 9),
               BK_ERROR_BUFFER_TOO_SMALL, "dst", "copy past the end of dst's BkMemory");
    BKT_EXPECT(bkCmdCopyMemory(cmd, b->address + 100, a->address + SIZE - 8, 9),
               BK_ERROR_BUFFER_TOO_SMALL, "src", "copy past the end of src's BkMemory");

    BKT_EXPECT(bkCmdFillMemory(cmd, a->address, 6, 0), BK_ERROR_INVALID_ARGUMENT, "size",
               "fill size 6 is not a multiple of 4");
    BKT_EXPECT(bkCmdFillMemory(cmd, a->address + 2, 8, 0), BK_ERROR_MISALIGNED_OPERAND, "dst",
               "fill at a dst that is not 4-byte aligned");
    BKT_EXPECT(bkCmdFillMemory(cmd, a->address + SIZE - 8, 12, 0), BK_ERROR_BUFFER_TOO_SMALL,
               "size", "fill past the end of a BkMemory");
    BKT_EXPECT(bkCmdFillMemory(cmd, 0, 8, 0), BK_ERROR_INVALID_ARGUMENT, "dst", "fill at dst 0");
    BKT_EXPECT(bkCmdFillMemory(BK_NULL_HANDLE, a->address, 8, 0), BK_ERROR_INVALID_ARGUMENT,
               "commandBuffer", "fill with commandBuffer NULL");
    BKT_EXPECT(bkCmdCopyMemory(BK_NULL_HANDLE, a->address, b->address, 8),
               BK_ERROR_INVALID_ARGUMENT, "commandBuffer", "copy with commandBuffer NULL");

    /* None of the failures above was recorded. */
    unsigned char before[SIZE], after[SIZE];
    bkt_download(ctx, before, a->address, SIZE);
    tap_ok(finish(), "submit the buffer the failures left recording");
    bkt_download(ctx, after, a->address, SIZE);
    tap_ok(memcmp(before, after, SIZE) == 0, "nothing ran");
}

int main(void)
{
    ctx = bkt_open_device();
    struct bkt_rng rng = bkt_rng_new(21);
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        tap_bail("bkAllocateCommandBuffer: %s", bkGetLastErrorMessage());
    struct bkt_buffer a = bkt_alloc(ctx, SIZE), b = bkt_alloc(ctx, SIZE);
    test_effects(&a, &b, &rng);
    test_errors(&a, &b);
    bkt_free(ctx, &a);
    bkt_free(ctx, &b);
    bkFreeCommandBuffer(cmd);
    bkDestroyContext(ctx);
    return tap_done();
}
