/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's spreads and the busy-machine warning. */
#include "bench_spread.h"

#include "tool_common.h"

static unsigned noted_rows, noted_wide;

void bench_spread_of(double *us, uint32_t n, struct bench_spread *t)
{
    t->us = tool_median(us, n);           /* sorts */
    t->min_us = us[0];
    t->max_us = us[n - 1];
}

void bench_spread_widen(struct bench_spread *all, const struct bench_spread *round)
{
    if (round->min_us < all->min_us || all->min_us <= 0)
        all->min_us = round->min_us;
    if (round->max_us > all->max_us)
        all->max_us = round->max_us;
}

bool bench_spread_wide(const struct bench_spread *t)
{
    return t->us > 0 && t->max_us - t->min_us > BENCH_SPREAD_WIDE * t->us;
}

void bench_spread_text(char *buf, size_t size, int width, const struct bench_spread *t)
{
    char s[32];
    if (t->us > 0)
        snprintf(s, sizeof s, "-%.0f/+%.0f%%", 100.0 * (t->us - t->min_us) / t->us,
                 100.0 * (t->max_us - t->us) / t->us);
    else
        snprintf(s, sizeof s, "-");
    snprintf(buf, size, " %*s", width, s);
}

void bench_noise_note(const struct bench_spread *t)
{
    noted_rows++;
    noted_wide += bench_spread_wide(t);
}

void bench_noise_counts(unsigned *rows, unsigned *wide)
{
    *rows = noted_rows;
    *wide = noted_wide;
}

void bench_noise_warn(FILE *f)
{
    if (noted_wide == 0)
        return;
    fprintf(f, "\nbkbench: warning: %u of %u rows spread wide (max - min over %.0f%% of the "
               "median):\nthe machine may be busy; rerun with nothing else running, or with "
               "more --repeats\n", noted_wide, noted_rows, 100.0 * BENCH_SPREAD_WIDE);
}
