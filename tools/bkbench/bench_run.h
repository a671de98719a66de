/* SPDX-License-Identifier: Apache-2.0 */
/* Runs bkbench's measurements: the copy bandwidth that is the roofline,
 * and the op cases, rotating buffer sets so that the working set of the
 * timed submits is larger than the cache. */
#ifndef BK_TOOL_BENCH_RUN_H
#define BK_TOOL_BENCH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_case.h"
#include "bench_device.h"
#include "bench_spread.h"

struct bench_settings {
    uint32_t warmup;
    uint32_t repeats;
    uint64_t rotate_bytes;            /* data touched between two uses of one set */
    uint32_t max_sets;
};

struct bench_result {
    bool supported;                   /* false: bkCreatePlan said unsupported */
    uint32_t sets;                    /* buffer sets rotated through */
    double us;                        /* median time of one run */
    struct bench_spread t;            /* its median, min and max */
    double gb_per_s;
    double tflop_per_s;               /* 0 for memory-bound ops */
    double roofline;                  /* of the copy bandwidth; 0 if not rated */
    char kernel[BK_MAX_KERNEL_NAME_SIZE];
    char message[256];                /* why it is unsupported */
};

/* Device-to-device bkCmdCopyMemory of 'bytes', bytes read + written per
 * second, in GB/s. */
double bench_copy_bandwidth(struct bench_device *d, uint64_t bytes,
                            const struct bench_settings *s);

typedef void (*bench_row_fn)(const struct bench_case *c, const struct bench_result *r,
                             void *user);

/* Runs every case; results[i] gets case i's result and row() is called
 * after each. copy_gb_per_s rates memory-bound ops. Exits on libbk errors
 * other than an unsupported plan. */
void bench_run_cases(struct bench_device *d, const struct bench_case *cases, size_t count,
                     const struct bench_settings *s, double copy_gb_per_s,
                     struct bench_result *results, bench_row_fn row, void *user);

/* What the gated and conversion tables share (bench_case_report.c): the
 * columns of a row after its names (sets, time, spread and GB/s, or
 * "- unsupported") as text, returning its length as snprintf does; and
 * the fields of a record after its names (shape, input strides, bytes,
 * status, then the message, or the times, GB/s, TFLOP/s when with_tflops,
 * roof and kernel), closing the record. */
struct rec;
int bench_case_columns(char *buf, size_t size, const struct bench_result *r);
void bench_case_record_fields(struct rec *w, const struct bench_case *c,
                              const struct bench_result *r, bool with_tflops);

/* The gated table (bench_gated_report.c): its header, a row (a
 * bench_row_fn) and the records of "results". */
void bench_gated_print_header(void);
void bench_gated_print_row(const struct bench_case *c, const struct bench_result *r, void *user);
void bench_gated_records(struct rec *w, const struct bench_case *cases,
                         const struct bench_result *res, size_t n);

/* The conversion table (bench_convert.c): its header, a row and the
 * records of "convert". */
void bench_convert_print_header(void);
void bench_convert_print_row(const struct bench_case *c, const struct bench_result *r,
                             void *user);
void bench_convert_records(struct rec *w, const struct bench_case *cases,
                           const struct bench_result *res, size_t n);

/* The number of sets for a case of this working set. */
uint32_t bench_sets_for(uint64_t working_set, const struct bench_settings *s);

#endif /* BK_TOOL_BENCH_RUN_H */
