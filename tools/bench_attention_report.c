/* bkbench's attention table, as text rows and as JSON. */
#include <stdio.h>
#include <string.h>

#include "bench_attention.h"
#include "tool_common.h"

#define TEXT_WIDTH 100                    /* bkbench's text fits in 100 columns */

static double tflops(double flops, double us)
{
    return us > 0 ? flops / (us * 1e-6) / 1e12 : 0.0;
}

static double density(const struct attention_pattern_info *pi)
{
    return pi->total_blocks ? (double)pi->active_blocks / (double)pi->total_blocks : 0.0;
}

void bench_attention_print_header(const struct bench_settings *s)
{
    printf("\nblock-sparse attention Y = softmax(Q K^T / sqrt(D) + pattern) V, Lq = Lk = L,\n"
           "Hkv = H, Dv = D, blocks blk x blk; reusable buffers (%u runs after %u warm-up)\n",
           s->repeats, s->warmup);
    printf("TFLOP/s over the active blocks: forward 4*blk*blk*D each, backward 2.5x; "
           "a block the\ncausal diagonal cuts (window) counts whole; active: "
           "active / all blocks\n");
    printf("%-13s %-5s %-14s %3s %-7s %-5s %6s %4s %8s %7s %s\n", "op", "dtype",
           "shape(BxHxLxD)", "blk", "pattern", "form", "active", "sets", "us", "TF/s",
           "kernel");
}

static void print_row(const struct attention_case *c, const struct attention_pattern_info *pi,
                      bool backward, const struct attention_result *r)
{
    char line[160];
    int n = snprintf(line, sizeof line, "%-13s %-5s %-14s %3d %-7s %-5s %5.1f%%",
                     attention_op_name(backward), tool_dtype_name(c->dtype), c->shape,
                     (int)c->block, c->pattern, attention_form_name(c->form), 100.0 * density(pi));
    if (n < 0)
        return;
    if (!r->supported) {
        printf("%s %4s %8s\n", line, "-", r->failed ? "failed" : "unsupported");
    } else {
        const double tf = tflops(r->flops, r->us);
        int m = snprintf(line + n, sizeof line - (size_t)n, " %4u %8.*f %7.*f", r->sets,
                         r->us < 10000 ? 1 : 0, r->us, tf >= 100 ? 1 : tf >= 1 ? 2 : 4, tf);
        /* The kernel name, cut to the text width (JSON has it whole); a
         * wrong result says so instead. */
        int room = TEXT_WIDTH - (n + (m > 0 ? m : 0)) - 1;
        printf("%s %.*s\n", line, room > 0 ? room : 0,
               r->check_failed ? "WRONG RESULT" : r->kernel);
    }
    fflush(stdout);
}

void bench_attention_print_rows(const struct attention_case *c,
                                const struct attention_pattern_info *pi,
                                const struct attention_result *fwd,
                                const struct attention_result *bwd)
{
    if (fwd->ran)
        print_row(c, pi, false, fwd);
    if (bwd->ran)
        print_row(c, pi, true, bwd);
}

static void json_number(const char *key, double v, bool valid)
{
    if (valid)
        printf(", \"%s\": %.6g", key, v);
    else
        printf(", \"%s\": null", key);
}

static void json_object(const struct attention_case *c, const struct attention_pattern_info *pi,
                        bool backward, const struct attention_result *r)
{
    printf("\n    {\"op\": \"%s\", \"dtype\": \"%s\", \"shape\": [%lld, %lld, %lld, %lld], "
           "\"batch\": %lld, \"heads\": %lld, \"kvHeads\": %lld, \"lq\": %lld, \"lk\": %lld, "
           "\"d\": %lld, \"dv\": %lld, \"blockQ\": %d, \"blockK\": %d",
           attention_op_name(backward), tool_dtype_name(c->dtype), (long long)c->batch,
           (long long)c->heads, (long long)c->l, (long long)c->d, (long long)c->batch,
           (long long)c->heads, (long long)c->heads, (long long)c->l, (long long)c->l,
           (long long)c->d, (long long)c->d, (int)c->block, (int)c->block);
    printf(", \"pattern\": \"%s\", \"form\": \"%s\", \"causal\": %s", c->pattern,
           attention_form_name(c->form), c->causal ? "true" : "false");
    if (c->pat.kind == ATTENTION_PATTERN_WINDOW)
        printf(", \"window\": %lld", (long long)c->pat.window);
    else
        printf(", \"window\": null");
    printf(", \"activeBlocks\": %lld, \"totalBlocks\": %lld", (long long)pi->active_blocks,
           (long long)pi->total_blocks);
    json_number("density", density(pi), true);
    if (pi->hash)
        printf(", \"patternHash\": \"%016llx\"", (unsigned long long)pi->hash);
    else
        printf(", \"patternHash\": null");
    if (c->form == BK_ATTENTION_PATTERN_LIST)
        printf(", \"capacity\": %lld", (long long)pi->capacity);
    printf(", \"flops\": %.0f", r->flops);
    printf(", \"status\": \"%s\"",
           r->failed         ? "failed"
           : !r->supported   ? "unsupported"
           : r->check_failed ? "mismatch"
                             : "ok");
    if (!r->supported || r->check_failed) {
        printf(", \"message\": ");
        tool_json_string(stdout, r->message);
    }
    if (!r->supported) {
        printf("}");
        return;
    }
    printf(", \"kernel\": ");
    tool_json_string(stdout, r->kernel);
    printf(", \"workspaceBytes\": %llu, \"sets\": %u", (unsigned long long)r->workspace,
           r->sets);
    json_number("us", r->us, true);
    json_number("tflopPerS", tflops(r->flops, r->us), true);
    printf(", \"check\": {\"rows\": %d", ATTENTION_CHECK_ROWS);
    json_number("maxRelErr", r->max_rel_err, r->max_rel_err >= 0);
    json_number("limit", bench_attention_check_limit(c->dtype, backward), true);
    printf("}}");
}

void bench_attention_print_json(const struct attention_case *c,
                                const struct attention_pattern_info *pi,
                                const struct attention_result *fwd,
                                const struct attention_result *bwd, size_t n)
{
    bool first = true;
    printf("[");
    for (size_t i = 0; i < n; i++) {
        for (int dir = 0; dir < 2; dir++) {
            const struct attention_result *r = dir ? &bwd[i] : &fwd[i];
            if (!r->ran)
                continue;
            printf("%s", first ? "" : ",");
            json_object(&c[i], &pi[i], dir != 0, r);
            first = false;
        }
    }
    printf("\n  ]");
}
