/* SPDX-License-Identifier: Apache-2.0 */
/* The CUDA plan's estimate of how evenly persistent CTAs share a causal
 * problem's query tiles (lib/cuda/cuda_attention_turns.c), against each
 * CTA's items walked the way the kernels walk them: from blockIdx.x,
 * QueryTiles::next's step (kernels/attention_wgmma_walk.cuh), while below
 * the item count. Every item must be walked by exactly one CTA, and the
 * busiest CTA's keys over the mean must be the estimate's. Then the two
 * problems whose measured choice the threshold encodes. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>

#include "../../lib/cuda/cuda_attention_turns.h"
#include "tap.h"

/* QueryTiles::next for CTA c of n. */
static int64_t next_item(int64_t i, int64_t c, int64_t n)
{
    return i + (i % n == c ? 2 * (n - c) - 1 : 2 * c + 1);
}

static int64_t keys_of(int64_t x, int64_t rows, int64_t lq, int64_t lk)
{
    int64_t last = (x + 1) * rows;
    if (last > lq)
        last = lq;
    int64_t keys = last + lk - lq;
    return keys < 0 ? 0 : keys > lk ? lk : keys;
}

static void check(int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t rows,
                  int64_t ctas)
{
    const int64_t tiles = (lq + rows - 1) / rows, items = batch * heads * tiles;
    unsigned char *seen = calloc((size_t)items, 1);
    if (!seen)
        tap_bail("out of memory");
    int64_t sum = 0, max = 0;
    bool once = true;
    for (int64_t c = 0; c < ctas; c++) {
        int64_t load = 0;
        for (int64_t i = c; i < items; i = next_item(i, c, ctas)) {
            once = once && !seen[i];
            seen[i] = 1;
            load += keys_of(i % tiles, rows, lq, lk) + BK_ATTENTION_TURN_FIXED_KEYS;
        }
        sum += load;
        max = load > max ? load : max;
    }
    for (int64_t i = 0; i < items; i++)
        once = once && seen[i];
    free(seen);
    const int64_t busy = items < ctas ? items : ctas;
    const int64_t want = (int64_t)((double)max * (double)busy / (double)sum * 1000.0 + 0.5);
    tap_ok(once, "B%lld H%lld Lq%lld rows %lld on %lld CTAs: every tile walked once",
           (long long)batch, (long long)heads, (long long)lq, (long long)rows, (long long)ctas);
    tap_is_int(bk_attention_turns_spread(batch, heads, lq, lk, rows, ctas), want,
               "B%lld H%lld Lq%lld Lk%lld rows %lld on %lld CTAs: busiest over mean",
               (long long)batch, (long long)heads, (long long)lq, (long long)lk, (long long)rows,
               (long long)ctas);
}

int main(void)
{
    static const int64_t cases[][6] = {
        { 2, 32, 8192, 8192, 192, 132 }, { 2, 16, 8192, 8192, 128, 132 },
        { 32, 32, 512, 512, 192, 132 },  { 16, 16, 1024, 1024, 128, 132 },
        { 3, 5, 1000, 1500, 64, 7 },     { 1, 1, 100, 100, 128, 132 },
        { 4, 7, 777, 300, 128, 13 },     { 2, 3, 4096, 4096, 128, 264 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(cases[i][0], cases[i][1], cases[i][2], cases[i][3], cases[i][4], cases[i][5]);
    /* H100, bf16 causal, 132 SMs: D = 64 on the trio kernel's 192 rows ran
     * faster a CTA a tile, D = 128 on 128 rows persistent. */
    tap_ok(bk_attention_turns_uneven(2, 32, 8192, 8192, 192, 132),
           "B2 H32 L8192 on 192 rows: a CTA a tile");
    tap_ok(!bk_attention_turns_uneven(2, 16, 8192, 8192, 128, 132),
           "B2 H16 L8192 on 128 rows: persistent");
    tap_ok(!bk_attention_turns_uneven(32, 32, 512, 512, 192, 132),
           "B32 H32 L512 on 192 rows: persistent");
    return tap_done();
}
