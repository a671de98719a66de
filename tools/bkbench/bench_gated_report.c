/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's gated-activation table, as text rows and as JSON. */
#include <stdio.h>

#include "bench_case.h"
#include "bench_record.h"
#include "bench_run.h"
#include "bench_spread.h"
#include "tool_common.h"

void bench_gated_print_header(void)
{
    printf("\n%-10s %-11s %-5s %-17s %4s %9s %9s %7s %8s %6s\n", "op", "kind", "dtype", "shape",
           "sets", "time(us)", "spread", "GB/s", "TFLOP/s", "roof");
}

void bench_gated_print_row(const struct bench_case *c, const struct bench_result *r, void *user)
{
    (void)user;
    printf("%-10s %-11s %-5s %-17s ", c->op, c->variant, tool_dtype_name(c->dtype), c->shape);
    if (!r->supported) {
        printf("%4s %9s\n", "-", "unsupported");
    } else {
        char spread[32];
        bench_spread_text(spread, sizeof spread, 9, &r->t);
        printf("%4u %9.2f%s %7.1f ", r->sets, r->us, spread, r->gb_per_s);
        if (r->tflop_per_s > 0)
            printf("%8.2f ", r->tflop_per_s);
        else
            printf("%8s ", "-");
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
        const struct bench_result *r = &res[i];
        rec_begin(w);
        rec_str(w, "op", c->op);
        rec_str(w, "kind", c->variant);
        rec_str(w, "dtype", tool_dtype_name(c->dtype));
        rec_ints(w, "shape", (const long long[]){c->extent[0], c->extent[1]}, 2);
        if (c->row_stride)
            rec_ints(w, "inputStrides", (const long long[]){c->row_stride, 1}, 2);
        else
            rec_null(w, "inputStrides");
        rec_whole(w, "bytes", c->bytes);
        rec_str(w, "status", r->supported ? "ok" : "unsupported");
        if (!r->supported) {
            rec_str(w, "message", r->message);
            rec_end(w);
            continue;
        }
        rec_uint(w, "sets", r->sets);
        rec_num(w, "timeUs", r->us, true);
        rec_num(w, "usMin", r->t.min_us, true);
        rec_num(w, "usMax", r->t.max_us, true);
        rec_num(w, "gbPerS", r->gb_per_s, true);
        rec_num(w, "tflopPerS", r->tflop_per_s, r->tflop_per_s > 0);
        rec_num(w, "roofline", r->roofline, r->roofline > 0);
        rec_str(w, "kernel", r->kernel);
        rec_end(w);
    }
    rec_list_end(w);
}
