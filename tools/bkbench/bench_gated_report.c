/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's gated-activation table, as text rows and as JSON. */
#include <stdio.h>

#include "bench_case.h"
#include "bench_record.h"
#include "bench_run.h"
#include "tool_common.h"

void bench_gated_print_header(void)
{
    printf("\n%-10s %-11s %-5s %-17s %4s %9s %9s %7s %8s %6s\n", "op", "kind", "dtype", "shape",
           "sets", "time(us)", "spread", "GB/s", "TFLOP/s", "roof");
}

void bench_gated_print_row(const struct bench_case *c, const struct bench_result *r, void *user)
{
    (void)user;
    char columns[96];
    bench_case_columns(columns, sizeof columns, r);
    printf("%-10s %-11s %-5s %-17s %s", c->op, c->variant, tool_dtype_name(c->dtype), c->shape,
           columns);
    if (!r->supported) {
        printf("\n");
    } else {
        if (r->tflop_per_s > 0)
            printf(" %8.2f ", r->tflop_per_s);
        else
            printf(" %8s ", "-");
        if (r->roofline > 0)
            printf("%5.1f%%\n", 100.0 * r->roofline);
        else
            printf("%6s\n", "-");
    }
    fflush(stdout);
}

void bench_gated_records(struct rec *w, const struct bench_case *cases,
                         const struct bench_result *res, size_t n)
{
    rec_list_begin(w, "results");
    for (size_t i = 0; i < n; i++) {
        const struct bench_case *c = &cases[i];
        rec_begin(w);
        rec_str(w, "op", c->op);
        rec_str(w, "kind", c->variant);
        rec_str(w, "dtype", tool_dtype_name(c->dtype));
        bench_case_record_fields(w, c, &res[i], true);
    }
    rec_list_end(w);
}
