/* SPDX-License-Identifier: Apache-2.0 */
/* The spread of a timing: every bkbench row shows the fastest and the
 * slowest run beside the median, and a run whose rows spread wide ends
 * with a warning, as another process busy on the machine makes them. */
#ifndef BK_TOOL_BENCH_SPREAD_H
#define BK_TOOL_BENCH_SPREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Median, min and max of one measurement, microseconds a run. */
struct bench_spread {
    double us, min_us, max_us;
};

/* A spread is wide when max - min exceeds this fraction of the median. */
#define BENCH_SPREAD_WIDE 0.10

/* The median, min and max of us[0..n) (n >= 1; sorts us). */
void bench_spread_of(double *us, uint32_t n, struct bench_spread *t);

/* Medians taken round by round: the spread of all their runs is the min
 * of the mins and the max of the maxes; the median is the caller's. */
void bench_spread_widen(struct bench_spread *all, const struct bench_spread *round);

bool bench_spread_wide(const struct bench_spread *t);

/* " -a/+b%": min and max relative to the median, in a column of width
 * columns (the text tables' "spread"). */
void bench_spread_text(char *buf, size_t size, int width, const struct bench_spread *t);

/* The rows measured so far and how many spread wide. */
void bench_noise_note(const struct bench_spread *t);
void bench_noise_counts(unsigned *rows, unsigned *wide);

/* Prints a warning line to f when some rows spread wide. */
void bench_noise_warn(FILE *f);

#endif /* BK_TOOL_BENCH_SPREAD_H */
