/* SPDX-License-Identifier: Apache-2.0 */
/* The decode kernels' traces (kernels/decode_trace.cuh, modules built with
 * -DBK_DECODE_TRACE and loaded through BK_CUDA_MODULE_DIR): eight words a
 * CTA (or a stream), word i the global timer (ns) at point i of its run, 0
 * where it did not pass it, word 7 its SM. For each point, the spread over the CTAs
 * (lowest, median, highest, us after t0), and for two points the time
 * between them (median and highest). */
#ifndef BK_PROBE_DECODE_TRACE_H
#define BK_PROBE_DECODE_TRACE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline int trace_cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The CTAs with a record: those whose word 0 is set, from the first. */
static inline int trace_ctas(const uint64_t *t, int max)
{
    int n = 0;
    while (n < max && t[8 * n] != 0)
        n++;
    return n;
}

static inline uint64_t trace_first(const uint64_t *t, int n)
{
    uint64_t f = ~0ull;
    for (int i = 0; i < n; i++)
        if (t[8 * i] && t[8 * i] < f)
            f = t[8 * i];
    return f;
}

/* The spread of the m values in v (ns; sorted here): lowest, median,
 * highest, in us. Frees v. */
static inline void trace_spread(const char *label, uint64_t *v, int m)
{
    if (m) {
        qsort(v, (size_t)m, sizeof *v, trace_cmp_u64);
        printf("  %-22s n %4d  min %7.2f  med %7.2f  max %7.2f us\n", label, m, v[0] * 1e-3,
               v[m / 2] * 1e-3, v[m - 1] * 1e-3);
    }
    free(v);
}

/* Point w's spread over the n CTAs, us after t0. */
static inline void trace_point(const char *label, const uint64_t *t, int n, int w, uint64_t t0)
{
    uint64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (t[8 * i + w])
            v[m++] = t[8 * i + w] - t0;
    trace_spread(label, v, m);
}

/* From point w0 to point w1 in each CTA. */
static inline void trace_between(const char *label, const uint64_t *t, int n, int w0, int w1)
{
    uint64_t *v = malloc(sizeof *v * (size_t)(n ? n : 1));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (t[8 * i + w0] && t[8 * i + w1] >= t[8 * i + w0])
            v[m++] = t[8 * i + w1] - t[8 * i + w0];
    trace_spread(label, v, m);
}

/* CTAs an SM: how many SMs ran 1, 2, 3 or more of the n CTAs. */
static inline void trace_sms(const uint64_t *t, int n)
{
    int count[1024] = { 0 }, hist[4] = { 0 };
    for (int i = 0; i < n; i++)
        count[t[8 * i + 7] & 1023]++;
    for (int s = 0; s < 1024; s++)
        if (count[s])
            hist[count[s] > 3 ? 3 : count[s]]++;
    printf("  SMs with 1 / 2 / 3+ CTAs: %d / %d / %d\n", hist[1], hist[2], hist[3]);
}

#endif
