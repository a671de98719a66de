/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's attention table, as text rows and as JSON. */
#include <stdio.h>
#include <string.h>

#include "bench_attention.h"
#include "bench_record.h"
#include "bench_spread.h"
#include "bench_varlen.h"
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
           "Hkv = H, Dv = D (shape BxHxLxD/Dv where not), blocks blk x blk;\n"
           "reusable buffers (%u runs after %u warm-up)\n",
           s->repeats, s->warmup);
    printf("TFLOP/s over the active blocks: forward 2*blk*blk*(D+Dv) each, backward 2.5x; "
           "a block the\ncausal diagonal cuts (window, causal) counts whole; active: "
           "active / all blocks\n");
    printf("varlen: packed sequences of their own lengths, L their sum, B = 1 (-c: causal);\n"
           "blocks and TFLOP/s are each sequence's own (compare with full and causal, B x 8192)"
           "\n");
    printf("full and causal at training shapes too: many short sequences (B x L = 16384 on a "
           "GPU)\n");
    printf("%-13s %-5s %-17s %3s %-8s %-5s %6s %4s %7s %9s %6s %s\n", "op", "dtype",
           "shape(BxHxLxD)", "blk", "pattern", "form", "active", "sets", "us", "spread", "TF/s",
           "kernel");
}

static void print_row(const struct attention_case *c, const struct attention_pattern_info *pi,
                      bool backward, const struct attention_result *r)
{
    char line[160];
    int n = snprintf(line, sizeof line, "%-13s %-5s %-17s %3d %-8s %-5s %5.1f%%",
                     attention_op_name(backward), tool_dtype_name(c->dtype), c->shape,
                     (int)c->block, c->pattern, attention_form_name(c->form), 100.0 * density(pi));
    if (n < 0)
        return;
    if (!r->supported) {
        printf("%s %4s %8s\n", line, "-", r->failed ? "failed" : "unsupported");
    } else {
        const double tf = tflops(r->flops, r->us);
        char spread[32];
        bench_spread_text(spread, sizeof spread, 9, &r->t);
        int m = snprintf(line + n, sizeof line - (size_t)n, " %4u %7.*f%s %6.*f", r->sets,
                         r->us < 10000 ? 1 : 0, r->us, spread, tf >= 100 ? 1 : tf >= 1 ? 2 : 4,
                         tf);
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

static void record(struct rec *w, const struct attention_case *c,
                   const struct attention_pattern_info *pi, bool backward,
                   const struct attention_result *r)
{
    rec_begin(w);
    rec_str(w, "op", attention_op_name(backward));
    rec_str(w, "dtype", tool_dtype_name(c->dtype));
    rec_ints(w, "shape", (const long long[]){c->batch, c->heads, c->l, c->d}, 4);
    rec_int(w, "batch", c->batch);
    rec_int(w, "heads", c->heads);
    rec_int(w, "kvHeads", c->heads);
    rec_int(w, "lq", c->l);
    rec_int(w, "lk", c->l);
    rec_int(w, "d", c->d);
    rec_int(w, "dv", c->dv);
    rec_int(w, "blockQ", c->block);
    rec_int(w, "blockK", c->block);
    rec_str(w, "pattern", c->pattern);
    rec_str(w, "set", c->set);
    rec_str(w, "form", attention_form_name(c->form));
    rec_bool(w, "causal", c->causal);
    if (c->pat.kind == ATTENTION_PATTERN_WINDOW)
        rec_int(w, "window", c->pat.window);
    else
        rec_null(w, "window");
    rec_int(w, "activeBlocks", pi->active_blocks);
    rec_int(w, "totalBlocks", pi->total_blocks);
    rec_num(w, "density", density(pi), true);
    if (pi->hash) {
        char hash[24];
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)pi->hash);
        rec_str(w, "patternHash", hash);
    } else {
        rec_null(w, "patternHash");
    }
    if (c->form == BK_ATTENTION_PATTERN_LIST)
        rec_int(w, "capacity", pi->capacity);
    if (c->sequences) {
        long long lengths[VARLEN_MAX_SEQUENCES];
        for (int32_t s = 0; s < c->sequences; s++)
            lengths[s] = c->lengths[s];
        rec_int(w, "sequences", c->sequences);
        rec_str(w, "seqForm", "packed");
        rec_ints(w, "seqLengths", lengths, (size_t)c->sequences);
    }
    rec_whole(w, "flops", r->flops);
    rec_str(w, "status",
            r->failed         ? "failed"
            : !r->supported   ? "unsupported"
            : r->check_failed ? "mismatch"
                              : "ok");
    if (!r->supported || r->check_failed)
        rec_str(w, "message", r->message);
    if (!r->supported) {
        rec_end(w);
        return;
    }
    rec_str(w, "kernel", r->kernel);
    rec_uint(w, "workspaceBytes", r->workspace);
    rec_uint(w, "sets", r->sets);
    rec_num(w, "us", r->us, true);
    rec_num(w, "usMin", r->t.min_us, true);
    rec_num(w, "usMax", r->t.max_us, true);
    rec_num(w, "tflopPerS", tflops(r->flops, r->us), true);
    rec_object_begin(w, "check");
    rec_int(w, "rows", bench_attention_check_rows(c));
    rec_num(w, "maxRelErr", r->max_rel_err, r->max_rel_err >= 0);
    rec_num(w, "limit", bench_attention_check_limit(c->dtype, backward), true);
    rec_object_end(w);
    rec_end(w);
}

void bench_attention_records(struct rec *w, const struct attention_case *c,
                             const struct attention_pattern_info *pi,
                             const struct attention_result *fwd,
                             const struct attention_result *bwd, size_t n)
{
    rec_list_begin(w, "attention");
    for (size_t i = 0; i < n; i++) {
        for (int dir = 0; dir < 2; dir++) {
            const struct attention_result *r = dir ? &bwd[i] : &fwd[i];
            if (r->ran)
                record(w, &c[i], &pi[i], dir != 0, r);
        }
    }
    rec_list_end(w);
}
