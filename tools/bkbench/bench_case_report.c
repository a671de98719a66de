/* SPDX-License-Identifier: Apache-2.0 */
/* What the memory-bound tables, gated (bench_gated_report.c) and
 * conversion (bench_convert.c), print alike: a row's timing columns and
 * a record's fields after the names that differ. */
#include <stdio.h>

#include "bench_case.h"
#include "bench_record.h"
#include "bench_run.h"
#include "bench_spread.h"

int bench_case_columns(char *buf, size_t size, const struct bench_result *r)
{
    if (!r->supported)
        return snprintf(buf, size, "%4s %9s", "-", "unsupported");
    char spread[32];
    bench_spread_text(spread, sizeof spread, 9, &r->t);
    return snprintf(buf, size, "%4u %9.2f%s %7.1f", r->sets, r->us, spread, r->gb_per_s);
}

void bench_case_record_fields(struct rec *w, const struct bench_case *c,
                              const struct bench_result *r, bool with_tflops)
{
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
        return;
    }
    rec_uint(w, "sets", r->sets);
    rec_num(w, "timeUs", r->us, true);
    rec_num(w, "usMin", r->t.min_us, true);
    rec_num(w, "usMax", r->t.max_us, true);
    rec_num(w, "gbPerS", r->gb_per_s, true);
    if (with_tflops)
        rec_num(w, "tflopPerS", r->tflop_per_s, r->tflop_per_s > 0);
    rec_num(w, "roofline", r->roofline, r->roofline > 0);
    rec_str(w, "kernel", r->kernel);
    rec_end(w);
}
