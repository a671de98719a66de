/* SPDX-License-Identifier: Apache-2.0 */
/* How evenly persistent CTAs share a causal problem's query tiles: see
 * cuda_attention_turns.h. */
#include "cuda_attention_turns.h"

#include <stdlib.h>

/* The keys the last row of query tile x sees: rows x * rows .. , key j
 * seen by row r where j <= r + lk - lq. */
static int64_t tile_keys(int64_t x, int64_t rows, int64_t lq, int64_t lk)
{
    const int64_t last = (x + 1) * rows < lq ? (x + 1) * rows : lq;
    const int64_t keys = last + lk - lq;
    return keys < 0 ? 0 : keys > lk ? lk : keys;
}

int64_t bk_attention_turns_spread(int64_t batch, int64_t heads, int64_t lq, int64_t lk,
                                  int64_t rows, int64_t ctas)
{
    if (batch <= 0 || heads <= 0 || lq <= 0 || rows <= 0 || ctas <= 1)
        return 1000;
    const int64_t tiles = (lq + rows - 1) / rows;
    if (tiles > BK_ATTENTION_TURNS_COUNTED / batch / heads)
        return 1000;
    const int64_t items = batch * heads * tiles;
    int64_t *load = calloc((size_t)ctas, sizeof *load);
    if (!load)
        return 1000;
    int64_t sum = 0, max = 0;
    for (int64_t i = 0; i < items; i++) {
        const int64_t round = i / ctas, at = i % ctas;
        const int64_t c = round % 2 ? ctas - 1 - at : at;
        const int64_t cost = tile_keys(i % tiles, rows, lq, lk) + BK_ATTENTION_TURN_FIXED_KEYS;
        load[c] += cost;
        sum += cost;
    }
    for (int64_t c = 0; c < ctas; c++)
        max = load[c] > max ? load[c] : max;
    free(load);
    /* the mean over the CTAs that have work: a grid of fewer tiles than
     * CTAs launches only those */
    const int64_t busy = items < ctas ? items : ctas;
    return sum > 0 ? (int64_t)((double)max * (double)busy / (double)sum * 1000.0 + 0.5) : 1000;
}

bool bk_attention_turns_uneven(int64_t batch, int64_t heads, int64_t lq, int64_t lk, int64_t rows,
                               int64_t ctas)
{
    return bk_attention_turns_spread(batch, heads, lq, lk, rows, ctas) >=
           BK_ATTENTION_TURNS_UNEVEN;
}
