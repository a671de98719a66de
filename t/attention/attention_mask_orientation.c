/* SPDX-License-Identifier: Apache-2.0 */
/* The MASK pattern's orientation, as bk-attention(7) states it: byte
 * mask[i * nbk + j] switches query block i onto key block j (query block
 * major, the nbq x nbk block matrix stored row by row). Independent of
 * the reference model: with q = 0 every active key gets the same weight,
 * and every key of block j carries the value c[j], so a query of block i
 * gets the mean of c[j] over its active key blocks. A lower-triangular
 * mask must give those means row by row, and not the means of its
 * transpose (what a column-major reading would give). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "test_util.h"

enum { BLOCK = 2, NB = 3, L = BLOCK * NB };

/* The block matrix, query block i in row i: not symmetric. */
static const uint8_t block_mask[NB][NB] = {
    { 1, 0, 0 },
    { 1, 1, 0 },
    { 0, 1, 1 },
};
static const float block_value[NB] = { 1.0f, 10.0f, 100.0f };

/* The mean of block_value over the key blocks query block i sees, read
 * query block major (transposed = false) or key block major. */
static float expected(int i, bool transposed)
{
    float sum = 0.0f;
    int active = 0;
    for (int j = 0; j < NB; j++) {
        if (transposed ? block_mask[j][i] : block_mask[i][j]) {
            sum += block_value[j];
            active++;
        }
    }
    return sum / (float)active;
}

static bool near(float got, float want)
{
    return fabsf(got - want) <= 1e-5f * fabsf(want);
}

int main(void)
{
    BkContext ctx = bkt_open_device();
    tap_plan(2 * NB + 1);

    float q[L] = { 0 }, k[L], v[L], y[L], lse[L];
    for (int t = 0; t < L; t++) {
        k[t] = (float)(t + 1);      /* any keys: q = 0 ignores them */
        v[t] = block_value[t / BLOCK];
    }
    struct bkt_buffer bq = bkt_alloc(ctx, sizeof q), bk = bkt_alloc(ctx, sizeof k),
                      bv = bkt_alloc(ctx, sizeof v), bm = bkt_alloc(ctx, sizeof block_mask),
                      by = bkt_alloc(ctx, sizeof y), bl = bkt_alloc(ctx, sizeof lse);
    bkt_upload(ctx, bq.address, q, sizeof q);
    bkt_upload(ctx, bk.address, k, sizeof k);
    bkt_upload(ctx, bv.address, v, sizeof v);
    bkt_upload(ctx, bm.address, block_mask, sizeof block_mask);

    const BkDataType f32 = BK_DATA_TYPE_F32;
    const BkAttentionInfo info = {
        .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO,
        .scale = 1.0,
        .pattern = {
            .form = BK_ATTENTION_PATTERN_MASK,
            .blockQ = BLOCK,
            .blockK = BLOCK,
            .mask = { BK_DATA_TYPE_U8, 3, .extent = { 1, 1, NB * NB } },
        },
        .q = { f32, 4, .extent = { 1, 1, L, 1 } },
        .k = { f32, 4, .extent = { 1, 1, L, 1 } },
        .v = { f32, 4, .extent = { 1, 1, L, 1 } },
        .y = { f32, 4, .extent = { 1, 1, L, 1 } },
        .lse = { f32, 3, .extent = { 1, 1, L } },
    };
    const BkDeviceAddress bindings[8] = {
        [BK_ATTENTION_BINDING_Q] = bq.address,     [BK_ATTENTION_BINDING_K] = bk.address,
        [BK_ATTENTION_BINDING_V] = bv.address,     [BK_ATTENTION_BINDING_MASK] = bm.address,
        [BK_ATTENTION_BINDING_Y] = by.address,     [BK_ATTENTION_BINDING_LSE] = bl.address,
    };
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, &info, &plan);
    if (r == BK_SUCCESS)
        r = bkt_run(ctx, plan, 8, bindings);
    if (!tap_ok(r == BK_SUCCESS, "the forward with a %dx%d block mask runs", NB, NB))
        tap_diag("%s: %s", bkResultString(r), bkGetLastErrorMessage());
    bkt_download(ctx, y, by.address, sizeof y);

    for (int i = 0; i < NB; i++) {
        /* Both queries of the block must agree; report the first. */
        float got = y[i * BLOCK];
        bool same = y[i * BLOCK + 1] == got;
        if (!tap_ok(same && near(got, expected(i, false)),
                    "query block %d: the mean over mask row %d", i, i))
            tap_diag("y = %g and %g, want %g", (double)got, (double)y[i * BLOCK + 1],
                     (double)expected(i, false));
        tap_ok(!near(got, expected(i, true)), "query block %d: not the mean over mask column %d",
               i, i);
    }

    bkDestroyPlan(plan);
    struct bkt_buffer *all[] = { &bq, &bk, &bv, &bm, &by, &bl };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        bkt_free(ctx, all[i]);
    bkDestroyContext(ctx);
    return tap_done();
}
