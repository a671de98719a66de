/* bkbench's gated-activation table, as text rows and as JSON. */
#include <stdio.h>

#include "bench_case.h"
#include "bench_run.h"
#include "tool_common.h"

void bench_gated_print_header(void)
{
    printf("\n%-10s %-11s %-5s %-20s %4s %10s %9s %8s %6s\n", "op", "kind", "dtype", "shape",
           "sets", "time(us)", "GB/s", "TFLOP/s", "roof");
}

void bench_gated_print_row(const struct bench_case *c, const struct bench_result *r, void *user)
{
    (void)user;
    printf("%-10s %-11s %-5s %-20s ", c->op, c->variant, tool_dtype_name(c->dtype), c->shape);
    if (!r->supported) {
        printf("%4s %10s\n", "-", "unsupported");
    } else {
        printf("%4u %10.2f %9.1f ", r->sets, r->us, r->gb_per_s);
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

static void json_number(const char *key, double v, bool valid)
{
    if (valid)
        printf(", \"%s\": %.6g", key, v);
    else
        printf(", \"%s\": null", key);
}

void bench_gated_print_json(const struct bench_case *cases, const struct bench_result *res,
                            size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        const struct bench_case *c = &cases[i];
        const struct bench_result *r = &res[i];
        printf("%s\n    {\"op\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\", "
               "\"shape\": [%lld, %lld], ",
               i ? "," : "", c->op, c->variant, tool_dtype_name(c->dtype),
               (long long)c->extent[0], (long long)c->extent[1]);
        if (c->row_stride)
            printf("\"inputStrides\": [%lld, 1], ", (long long)c->row_stride);
        else
            printf("\"inputStrides\": null, ");
        printf("\"bytes\": %.0f, \"status\": \"%s\"", c->bytes,
               r->supported ? "ok" : "unsupported");
        if (!r->supported) {
            printf(", \"message\": ");
            tool_json_string(stdout, r->message);
            printf("}");
            continue;
        }
        printf(", \"sets\": %u", r->sets);
        json_number("timeUs", r->us, true);
        json_number("gbPerS", r->gb_per_s, true);
        json_number("tflopPerS", r->tflop_per_s, r->tflop_per_s > 0);
        json_number("roofline", r->roofline, r->roofline > 0);
        printf(", \"kernel\": ");
        tool_json_string(stdout, r->kernel);
        printf("}");
    }
    printf("\n  ]");
}
