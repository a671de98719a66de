/* SPDX-License-Identifier: Apache-2.0 */
/* Queues: bkGetQueue over the device's range, waiting, importing (not on
 * the host), and bkDestroyQueue's rules. */
#include "config.h"

#include <string.h>

#include "test_util.h"

/* Submit a fill of buf on queue q and check it landed. */
static bool fill_on(BkContext ctx, BkQueue q, const struct bkt_buffer *buf, uint32_t pattern)
{
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    bool ok = bkAllocateCommandBuffer(ctx, NULL, &cmd) == BK_SUCCESS &&
              bkBeginCommandBuffer(cmd, &begin) == BK_SUCCESS &&
              bkCmdFillMemory(cmd, buf->address, buf->size, pattern) == BK_SUCCESS &&
              bkEndCommandBuffer(cmd) == BK_SUCCESS && bkQueueSubmit(q, 1, &cmd) == BK_SUCCESS &&
              bkQueueWaitIdle(q) == BK_SUCCESS;
    bkFreeCommandBuffer(cmd);
    uint32_t got[4] = { 0 };
    bkt_download(ctx, got, buf->address, sizeof got);
    return ok && got[0] == pattern && got[3] == pattern;
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    BkDeviceProperties props = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    bkGetContextProperties(ctx, &props);
    const uint32_t n = props.queueCount;
    tap_ok(n >= 1 && n <= 1024, "queueCount %u", n);

    BkQueue queues[1024] = { 0 };
    bool all = true, distinct = true, waits = true;
    for (uint32_t i = 0; i < n && i < 1024; i++) {
        all = all && bkGetQueue(ctx, i, &queues[i]) == BK_SUCCESS && queues[i];
        for (uint32_t j = 0; j < i; j++)
            distinct = distinct && queues[j] != queues[i];
        waits = waits && queues[i] && bkQueueWaitIdle(queues[i]) == BK_SUCCESS;
    }
    tap_ok(all, "bkGetQueue gives every index below queueCount");
    tap_ok(distinct, "... each a different queue");
    tap_ok(waits, "bkQueueWaitIdle on each idle queue");
    BkQueue again = BK_NULL_HANDLE;
    bkGetQueue(ctx, 0, &again);
    tap_ok(again == queues[0], "asking twice gives the same queue");

    BkQueue q = queues[0];
    BKT_EXPECT(bkGetQueue(ctx, n, &q), BK_ERROR_INVALID_ARGUMENT, "queueIndex",
               "queueIndex = queueCount is out of range");
    tap_ok(q == BK_NULL_HANDLE, "... and the handle is NULL");
    BKT_EXPECT(bkGetQueue(ctx, UINT32_MAX, &q), BK_ERROR_INVALID_ARGUMENT, "queueIndex",
               "queueIndex UINT32_MAX");
    BKT_EXPECT(bkGetQueue(ctx, 0, NULL), BK_ERROR_INVALID_ARGUMENT, "pQueue", "pQueue NULL");
    BKT_EXPECT(bkGetQueue(BK_NULL_HANDLE, 0, &q), BK_ERROR_INVALID_ARGUMENT, "context",
               "context NULL");
    BKT_EXPECT(bkQueueWaitIdle(BK_NULL_HANDLE), BK_ERROR_INVALID_ARGUMENT, "queue",
               "bkQueueWaitIdle: queue NULL");

    /* Work goes to whichever queue it is submitted to. */
    struct bkt_buffer buf = bkt_alloc(ctx, 64);
    tap_ok(fill_on(ctx, queues[n - 1], &buf, 0x01020304u), "the last queue runs work");
    tap_ok(fill_on(ctx, queues[0], &buf, 0xA0B0C0D0u), "queue 0 runs work");

    if (bkt_device_type(ctx) == BK_DEVICE_TYPE_HOST) {
        BkQueue imported = queues[0];
        int native = 0;
        BKT_EXPECT(bkImportQueue(ctx, &native, &imported), BK_ERROR_UNSUPPORTED, "bkImportQueue",
                   "bkImportQueue on the host device is unsupported");
        tap_ok(imported == BK_NULL_HANDLE, "... and the handle is NULL");
    } else {
        /* NULL is CUDA's legacy default stream: a stream of every context. */
        BkQueue imported = BK_NULL_HANDLE;
        BKT_EXPECT(bkImportQueue(ctx, NULL, &imported), BK_SUCCESS, NULL,
                   "bkImportQueue of the legacy default stream");
        tap_ok(imported && fill_on(ctx, imported, &buf, 0x11223344u), "the imported queue runs work");
        bkDestroyQueue(imported);
    }
    BKT_EXPECT(bkImportQueue(ctx, NULL, NULL), BK_ERROR_INVALID_ARGUMENT, "pQueue",
               "bkImportQueue: pQueue NULL");
    BKT_EXPECT(bkImportQueue(BK_NULL_HANDLE, NULL, &q), BK_ERROR_INVALID_ARGUMENT, "context",
               "bkImportQueue: context NULL");

    /* The context owns its queues: destroying one is refused. */
    bkDestroyQueue(BK_NULL_HANDLE);
    unsigned before = bkt_message_count();
    bkDestroyQueue(queues[0]);
    tap_ok(bkt_message_count() == before + 1 && strstr(bkGetLastErrorMessage(), "bkDestroyQueue"),
           "bkDestroyQueue on a context's queue is reported: \"%s\"", bkGetLastErrorMessage());
    tap_ok(fill_on(ctx, queues[0], &buf, 0x0F0F0F0Fu), "... and the queue still works");

    bkt_free(ctx, &buf);
    bkDestroyContext(ctx);
    return tap_done();
}
