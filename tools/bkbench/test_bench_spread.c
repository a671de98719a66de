/* SPDX-License-Identifier: Apache-2.0 */
/* TAP test of bkbench's spreads: the median, min and max of random
 * timings against a reference computed here by counting, the widening of
 * round spreads, the "wide" rule, the "-a/+b%" text read back, and the
 * noise counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_spread.h"

static int test_number;
static int failures;

static void ok(int cond, const char *what)
{
    test_number++;
    if (!cond)
        failures++;
    printf("%sok %d - %s\n", cond ? "" : "not ", test_number, what);
}

/* The median by counting: the value with as many below as above (the
 * mean of the two middle ones for an even count). */
static double median_by_count(const double *v, unsigned n)
{
    double lo = 0, hi = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned below = 0, equal = 0;
        for (unsigned j = 0; j < n; j++) {
            below += v[j] < v[i];
            equal += v[j] == v[i];
        }
        /* v[i] fills sorted positions below .. below + equal - 1. */
        if (below <= (n - 1) / 2 && (n - 1) / 2 < below + equal)
            lo = v[i];
        if (below <= n / 2 && n / 2 < below + equal)
            hi = v[i];
    }
    return n % 2 ? lo : 0.5 * (lo + hi);
}

int main(void)
{
    srand(20261202u);
    int all_exact = 1, all_widened = 1, all_wide = 1, all_text = 1;
    for (int trial = 0; trial < 500; trial++) {
        unsigned n = 1 + (unsigned)(rand() % 60);
        double v[64], copy[64], lo = INFINITY, hi = -INFINITY;
        for (unsigned i = 0; i < n; i++) {
            v[i] = copy[i] = 1.0 + 1000.0 * rand() / RAND_MAX;
            lo = fmin(lo, v[i]);
            hi = fmax(hi, v[i]);
        }
        struct bench_spread t;
        bench_spread_of(copy, n, &t);
        all_exact &= t.us == median_by_count(v, n) && t.min_us == lo && t.max_us == hi;

        /* Two rounds: the widened spread covers both. */
        struct bench_spread all = {0, 0, 0}, other = {0, lo * 0.5, hi * 0.75};
        bench_spread_widen(&all, &t);
        bench_spread_widen(&all, &other);
        all_widened &= all.min_us == lo * 0.5 && all.max_us == hi;

        all_wide &= bench_spread_wide(&t) == (hi - lo > BENCH_SPREAD_WIDE * t.us);

        char text[32];
        double minus, plus;
        bench_spread_text(text, sizeof text, 9, &t);
        all_text &= sscanf(text, " -%lf/+%lf%%", &minus, &plus) == 2 &&
                    fabs(minus - 100.0 * (t.us - lo) / t.us) <= 0.5 &&
                    fabs(plus - 100.0 * (hi - t.us) / t.us) <= 0.5;
    }
    ok(all_exact, "median, min and max of random timings are the counted ones");
    ok(all_widened, "round spreads widen to the min of mins and the max of maxes");
    ok(all_wide, "wide is max - min over 10% of the median");
    ok(all_text, "the spread text reads back as the relative min and max");

    struct bench_spread calm = {100, 99, 101}, busy = {100, 60, 180};
    unsigned rows, wide;
    bench_noise_note(&calm);
    bench_noise_note(&busy);
    bench_noise_note(&calm);
    bench_noise_counts(&rows, &wide);
    ok(rows == 3 && wide == 1, "noise counts: 3 rows, 1 wide");

    printf("1..%d\n", test_number);
    return failures ? 1 : 0;
}
