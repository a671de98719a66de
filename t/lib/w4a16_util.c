/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers of the W4A16 tests: see w4a16_util.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "w4a16_util.h"

void *w4a16_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        tap_bail("out of memory for %zu bytes", size);
    return p;
}

int64_t w4a16_random_k(struct bkt_rng *rng, int32_t group_size, int64_t most_groups)
{
    if (group_size == BK_W4A16_GROUP_PER_CHANNEL)
        return 16 * bkt_rand_int(rng, 2, 8 * most_groups);
    return group_size * bkt_rand_int(rng, 1, most_groups);
}

uint16_t w4a16_random_half(struct bkt_rng *rng, BkDataType type, double lo, double hi,
                           bool signed_)
{
    double v = bkt_rand_value(rng, type, lo, hi);
    if (signed_ && bkt_rand_int(rng, 0, 1))
        v = -v;
    return type == BK_DATA_TYPE_BF16 ? bkt_f32_to_bf16((float)v) : bkt_f32_to_f16((float)v);
}

void w4a16_random_permutation(struct bkt_rng *rng, int32_t *perm, int64_t k)
{
    for (int64_t i = 0; i < k; i++)
        perm[i] = (int32_t)i;
    for (int64_t i = k - 1; i > 0; i--) {
        const int64_t j = bkt_rand_int(rng, 0, i);
        const int32_t t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
}

void w4a16_blob_init(BkContext ctx, struct w4a16_blob *b, uint64_t bytes)
{
    b->bytes = (bytes + 3) / 4 * 4;
    b->host = w4a16_xmalloc((size_t)b->bytes);
    const uint32_t poison = BKT_POISON;
    for (uint64_t i = 0; i < b->bytes; i += 4)
        memcpy((char *)b->host + i, &poison, 4);
    b->dev = bkt_alloc(ctx, b->bytes);
    bkt_upload(ctx, b->dev.address, b->host, b->bytes);
}

void w4a16_blob_upload(BkContext ctx, struct w4a16_blob *b)
{
    bkt_upload(ctx, b->dev.address, b->host, b->bytes);
}

void w4a16_blob_download(BkContext ctx, struct w4a16_blob *b)
{
    bkt_download(ctx, b->host, b->dev.address, b->bytes);
}

void w4a16_blob_free(BkContext ctx, struct w4a16_blob *b)
{
    if (b->dev.memory)
        bkt_free(ctx, &b->dev);
    free(b->host);
    memset(b, 0, sizeof *b);
}

BkResult w4a16_plan_run(BkContext ctx, const void *info, uint32_t count,
                        const BkDeviceAddress *bindings, const char *label)
{
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, info, &plan);
    if (r == BK_SUCCESS) {
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        r = bkGetPlanProperties(plan, &props);
        if (r == BK_SUCCESS && props.bindingCount != count) {
            tap_diag("%s: the plan has %u bindings, expected %u", label, props.bindingCount,
                     count);
            r = BK_ERROR_INVALID_STATE;
        }
    }
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, count, bindings);
    if (r != BK_SUCCESS)
        tap_diag("%s: %s (%s)", label, bkResultString(r), bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    return r;
}
