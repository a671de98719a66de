/* SPDX-License-Identifier: Apache-2.0 */
/* Command buffers: allocation, the state machine (initial, recording,
 * executable), one-time versus reusable replay (a one-time buffer twice
 * in one submit is rejected), begin resetting, and
 * submission checks. */
#include "config.h"

#include <string.h>

#include "test_util.h"

#define WORDS 64

static BkContext ctx;
static BkQueue queue;
static struct bkt_buffer A, B, C, D;

static BkResult begin(BkCommandBuffer cmd, BkCommandBufferUsage usage)
{
    BkCommandBufferBeginInfo info = {
        .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .usage = usage,
    };
    return bkBeginCommandBuffer(cmd, &info);
}

static BkCommandBuffer new_buffer(void)
{
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        tap_bail("bkAllocateCommandBuffer: %s", bkGetLastErrorMessage());
    return cmd;
}

static void set_words(const struct bkt_buffer *buf, uint32_t value)
{
    uint32_t w[WORDS];
    for (int i = 0; i < WORDS; i++)
        w[i] = value + (uint32_t)i;
    bkt_upload(ctx, buf->address, w, sizeof w);
}

/* True when every word of buf is value + i (step 1) or value (step 0). */
static bool has_words(const struct bkt_buffer *buf, uint32_t value, uint32_t step)
{
    uint32_t w[WORDS];
    bkt_download(ctx, w, buf->address, sizeof w);
    for (int i = 0; i < WORDS; i++)
        if (w[i] != value + step * (uint32_t)i)
            return false;
    return true;
}

static void test_allocation(void)
{
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    BKT_EXPECT(bkAllocateCommandBuffer(ctx, NULL, NULL), BK_ERROR_INVALID_ARGUMENT,
               "pCommandBuffer", "pCommandBuffer NULL");
    BKT_EXPECT(bkAllocateCommandBuffer(BK_NULL_HANDLE, NULL, &cmd), BK_ERROR_INVALID_ARGUMENT,
               "context", "context NULL");
    struct bkt_alloc_stats stats;
    BkAllocationCallbacks cb = bkt_counting_allocator(&stats);
    cb.pfnAllocation = NULL;
    BKT_EXPECT(bkAllocateCommandBuffer(ctx, &cb, &cmd), BK_ERROR_INVALID_ARGUMENT, "pfnAllocation",
               "an allocator without pfnAllocation");
    cb = bkt_counting_allocator(&stats);
    BKT_EXPECT(bkAllocateCommandBuffer(ctx, &cb, &cmd), BK_SUCCESS, NULL,
               "allocate with an allocator");
    /* Recording many commands grows the buffer through the allocator. */
    begin(cmd, BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    for (int i = 0; i < 100; i++)
        bkCmdFillMemory(cmd, C.address, 4, (uint32_t)i);
    bkEndCommandBuffer(cmd);
    tap_ok(stats.allocations >= 2, "the allocator is used for the buffer and its commands (%ld)",
           stats.allocations);
    bkFreeCommandBuffer(cmd);
    tap_ok(bkt_alloc_live(&stats) == 0 && stats.unknown_frees == 0,
           "bkFreeCommandBuffer returns it all");
    cb = bkt_counting_allocator(&stats);
    stats.fail_from = 0;
    BKT_EXPECT(bkAllocateCommandBuffer(ctx, &cb, &cmd), BK_ERROR_OUT_OF_HOST_MEMORY,
               "bkAllocateCommandBuffer", "a failing allocator");
    bkFreeCommandBuffer(BK_NULL_HANDLE);
    tap_ok(true, "bkFreeCommandBuffer accepts BK_NULL_HANDLE");
}

static void test_states(void)
{
    BkCommandBuffer cmd = new_buffer();
    BkCommandBufferBeginInfo info = { .sType = BK_STRUCTURE_TYPE_RUN_INFO };
    BKT_EXPECT(bkBeginCommandBuffer(cmd, &info), BK_ERROR_INVALID_ARGUMENT,
               "BkCommandBufferBeginInfo.sType", "begin with a wrong sType");
    BKT_EXPECT(bkBeginCommandBuffer(cmd, NULL), BK_ERROR_INVALID_ARGUMENT, "pBeginInfo",
               "begin with pBeginInfo NULL");
    BKT_EXPECT(begin(cmd, (BkCommandBufferUsage)5), BK_ERROR_INVALID_ARGUMENT, "usage",
               "begin with usage 5");
    BKT_EXPECT(begin(BK_NULL_HANDLE, BK_COMMAND_BUFFER_USAGE_ONE_TIME), BK_ERROR_INVALID_ARGUMENT,
               "commandBuffer", "begin with commandBuffer NULL");

    /* Initial: nothing but begin. */
    BKT_EXPECT(bkEndCommandBuffer(cmd), BK_ERROR_INVALID_STATE, "bkEndCommandBuffer",
               "end a buffer that is not recording");
    BKT_EXPECT(bkCmdFillMemory(cmd, C.address, 16, 1), BK_ERROR_INVALID_STATE, "bkCmdFillMemory",
               "record into a buffer that is not recording");
    BKT_EXPECT(bkQueueSubmit(queue, 1, &cmd), BK_ERROR_INVALID_STATE, "pCommandBuffers[0]",
               "submit a buffer never recorded");

    /* Recording: record and end, not submit or begin. */
    BKT_EXPECT(begin(cmd, BK_COMMAND_BUFFER_USAGE_ONE_TIME), BK_SUCCESS, NULL, "begin");
    BKT_EXPECT(begin(cmd, BK_COMMAND_BUFFER_USAGE_ONE_TIME), BK_ERROR_INVALID_STATE,
               "bkBeginCommandBuffer", "begin a buffer that is recording");
    BKT_EXPECT(bkQueueSubmit(queue, 1, &cmd), BK_ERROR_INVALID_STATE, "pCommandBuffers[0]",
               "submit a buffer that is still recording");

    /* A failed command records nothing and leaves the buffer recording. */
    set_words(&C, 100);
    BKT_EXPECT(bkCmdFillMemory(cmd, C.address, 6, 7), BK_ERROR_INVALID_ARGUMENT, "size",
               "a failing command");
    BKT_EXPECT(bkEndCommandBuffer(cmd), BK_SUCCESS, NULL, "the buffer is still recording");
    BKT_EXPECT(bkQueueSubmit(queue, 1, &cmd), BK_SUCCESS, NULL, "submit it");
    bkQueueWaitIdle(queue);
    tap_ok(has_words(&C, 100, 1), "the failed command was not recorded");

    /* One-time: back to initial after submit. */
    BKT_EXPECT(bkQueueSubmit(queue, 1, &cmd), BK_ERROR_INVALID_STATE, "pCommandBuffers[0]",
               "a one-time buffer cannot be submitted twice");
    BKT_EXPECT(bkEndCommandBuffer(cmd), BK_ERROR_INVALID_STATE, "bkEndCommandBuffer",
               "... it is initial again");
    BKT_EXPECT(begin(cmd, BK_COMMAND_BUFFER_USAGE_ONE_TIME), BK_SUCCESS, NULL,
               "... and can be begun again");
    bkCmdFillMemory(cmd, C.address, WORDS * 4, 0xCAFEu);
    bkEndCommandBuffer(cmd);
    BKT_EXPECT(bkQueueSubmit(queue, 1, &cmd), BK_SUCCESS, NULL, "submit the new recording");
    bkQueueWaitIdle(queue);
    tap_ok(has_words(&C, 0xCAFEu, 0), "it ran");
    bkFreeCommandBuffer(cmd);
}

/* A reusable buffer records "copy A->B, fill C" once and replays it. */
static void test_reusable(void)
{
    BkCommandBuffer cmd = new_buffer();
    begin(cmd, BK_COMMAND_BUFFER_USAGE_REUSABLE);
    BKT_EXPECT(bkCmdCopyMemory(cmd, B.address, A.address, WORDS * 4), BK_SUCCESS, NULL,
               "record copy A->B");
    BKT_EXPECT(bkCmdFillMemory(cmd, C.address, WORDS * 4, 0xF00Du), BK_SUCCESS, NULL,
               "record fill C");
    BKT_EXPECT(bkEndCommandBuffer(cmd), BK_SUCCESS, NULL, "end");
    for (uint32_t round = 1; round <= 3; round++) {
        set_words(&A, 1000 * round);
        set_words(&B, 0);
        set_words(&C, 0);
        BKT_EXPECT(bkQueueSubmit(queue, 1, &cmd), BK_SUCCESS, NULL, "replay %u", round);
        bkQueueWaitIdle(queue);
        tap_ok(has_words(&B, 1000 * round, 1) && has_words(&C, 0xF00Du, 0),
               "replay %u copied A's new contents and filled C", round);
    }

    /* Begin on an executable buffer resets it. */
    set_words(&C, 5);
    set_words(&D, 6);
    BKT_EXPECT(begin(cmd, BK_COMMAND_BUFFER_USAGE_REUSABLE), BK_SUCCESS, NULL,
               "begin an executable buffer again");
    bkCmdFillMemory(cmd, D.address, WORDS * 4, 0xD00Du);
    bkEndCommandBuffer(cmd);
    bkQueueSubmit(queue, 1, &cmd);
    bkQueueWaitIdle(queue);
    tap_ok(has_words(&D, 0xD00Du, 0) && has_words(&C, 5, 1),
           "begin dropped the old commands; only the new one ran");
    bkFreeCommandBuffer(cmd);
}

static void test_submit(void)
{
    BkCommandBuffer one = new_buffer(), two = new_buffer();
    set_words(&C, 0);
    set_words(&D, 0);
    begin(one, BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    bkCmdFillMemory(one, C.address, WORDS * 4, 77u);
    bkEndCommandBuffer(one);
    begin(two, BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    bkCmdCopyMemory(two, D.address, C.address, WORDS * 4);
    bkEndCommandBuffer(two);
    BkCommandBuffer both[2] = { one, two };
    BKT_EXPECT(bkQueueSubmit(queue, 2, both), BK_SUCCESS, NULL, "submit two buffers at once");
    bkQueueWaitIdle(queue);
    tap_ok(has_words(&D, 77u, 0), "they ran in order (the copy saw the fill)");

    begin(one, BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    bkEndCommandBuffer(one);
    BkCommandBuffer with_null[2] = { one, BK_NULL_HANDLE };
    BKT_EXPECT(bkQueueSubmit(queue, 2, with_null), BK_ERROR_INVALID_ARGUMENT, "pCommandBuffers[1]",
               "a NULL command buffer in the list");
    BKT_EXPECT(bkQueueSubmit(queue, 1, NULL), BK_ERROR_INVALID_ARGUMENT, "pCommandBuffers",
               "pCommandBuffers NULL");
    BKT_EXPECT(bkQueueSubmit(BK_NULL_HANDLE, 1, both), BK_ERROR_INVALID_ARGUMENT, "queue",
               "queue NULL");
    BKT_EXPECT(bkQueueSubmit(queue, 0, NULL), BK_SUCCESS, NULL, "submitting nothing is fine");

    /* A one-time buffer twice in one submit: rejected before anything
     * runs (the reusable buffer first in the list does not run either),
     * and the one-time buffer stays executable. */
    BkCommandBuffer reusable = new_buffer();
    begin(reusable, BK_COMMAND_BUFFER_USAGE_REUSABLE);
    bkCmdFillMemory(reusable, D.address, WORDS * 4, 5u);
    bkEndCommandBuffer(reusable);
    set_words(&C, 0);
    set_words(&D, 0);
    begin(one, BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    bkCmdFillMemory(one, C.address, WORDS * 4, 9u);
    bkEndCommandBuffer(one);
    BkCommandBuffer twice[3] = { reusable, one, one };
    BKT_EXPECT(bkQueueSubmit(queue, 3, twice), BK_ERROR_INVALID_STATE, "pCommandBuffers[2]",
               "a one-time buffer twice in one submit");
    bkQueueWaitIdle(queue);
    tap_ok(has_words(&C, 0, 1) && has_words(&D, 0, 1), "... nothing of that submit ran");
    BkCommandBuffer reused[2] = { reusable, reusable };
    BKT_EXPECT(bkQueueSubmit(queue, 2, reused), BK_SUCCESS, NULL,
               "a reusable buffer twice in one submit is fine");
    BKT_EXPECT(bkQueueSubmit(queue, 1, &one), BK_SUCCESS, NULL,
               "... and the one-time buffer still runs once");
    bkQueueWaitIdle(queue);
    tap_ok(has_words(&C, 9u, 0) && has_words(&D, 5u, 0), "... both ran");
    bkFreeCommandBuffer(reusable);

    /* A buffer of one context cannot go to another's queue. */
    BkContext other = bkt_open_host();
    BkCommandBuffer foreign = BK_NULL_HANDLE;
    bkAllocateCommandBuffer(other, NULL, &foreign);
    begin(foreign, BK_COMMAND_BUFFER_USAGE_ONE_TIME);
    bkEndCommandBuffer(foreign);
    BKT_EXPECT(bkQueueSubmit(queue, 1, &foreign), BK_ERROR_INVALID_ARGUMENT, "pCommandBuffers[0]",
               "a command buffer from another context");
    bkFreeCommandBuffer(foreign);
    bkDestroyContext(other);
    bkFreeCommandBuffer(one);
    bkFreeCommandBuffer(two);
}

int main(void)
{
    ctx = bkt_open_device();
    queue = bkt_queue(ctx);
    A = bkt_alloc(ctx, WORDS * 4);
    B = bkt_alloc(ctx, WORDS * 4);
    C = bkt_alloc(ctx, WORDS * 4);
    D = bkt_alloc(ctx, WORDS * 4);
    test_allocation();
    test_states();
    test_reusable();
    test_submit();
    bkt_free(ctx, &A);
    bkt_free(ctx, &B);
    bkt_free(ctx, &C);
    bkt_free(ctx, &D);
    bkDestroyContext(ctx);
    return tap_done();
}
