/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's attention-decode table, as text rows and as JSON. */
#include <stdio.h>

#include "bench_decode.h"
#include "bench_record.h"
#include "tool_common.h"

#define MIB (1024.0 * 1024.0)

void bench_decode_print_header(const struct bench_settings *s, double copy_gb_per_s)
{
    printf("\nattention over a KV cache y = softmax(q K^T / sqrt(D)) V, Lq query rows, Hkv kv "
           "heads,\nDv = D, causal bottom-right; reusable buffers (%u runs after %u warm-up). "
           "GB/s: K + V\nbytes over the median; copy: of the copy bandwidth (%.1f GB/s)\n",
           s->repeats, s->warmup, copy_gb_per_s);
    printf("%-38s %9s %9s %9s %8s %7s %6s\n", "attention-decode", "us", "min", "max", "K+V MiB",
           "GB/s", "copy");
}

void bench_decode_print_row(const struct decode_case *c, const struct decode_result *r)
{
    if (!r->supported) {
        printf("%-38s %9s\n", c->name, r->failed ? "failed" : "unsupported");
    } else {
        printf("%-38s %9.1f %9.1f %9.1f %8.1f %7.1f %5.1f%%%s\n", c->name, r->t.us, r->t.min_us,
               r->t.max_us, (double)r->kv_bytes / MIB, r->gb_per_s, 100.0 * r->roofline,
               r->check_failed ? " WRONG" : "");
    }
    fflush(stdout);
}

static void record(struct rec *w, const struct decode_case *c, const struct decode_result *r)
{
    rec_begin(w);
    rec_str(w, "op", "attention-decode");
    rec_str(w, "case", c->name);
    rec_str(w, "dtype", tool_dtype_name(c->dtype));
    rec_int(w, "batch", c->batch);
    rec_int(w, "heads", c->heads);
    rec_int(w, "kvHeads", c->kv_heads);
    rec_int(w, "lq", c->lq);
    rec_int(w, "lk", c->lk);
    rec_int(w, "d", c->d);
    rec_int(w, "dv", c->d);
    rec_bool(w, "causal", c->causal);
    rec_int(w, "pageSize", c->page);
    if (c->page)
        rec_str(w, "pageLayout", c->by_token ? "NHD" : "HND");
    rec_uint(w, "kvBytes", r->kv_bytes);
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
    rec_num(w, "us", r->t.us, true);
    rec_num(w, "usMin", r->t.min_us, true);
    rec_num(w, "usMax", r->t.max_us, true);
    rec_num(w, "gbPerS", r->gb_per_s, true);
    rec_num(w, "roofline", r->roofline, r->roofline > 0);
    rec_object_begin(w, "check");
    rec_int(w, "rows", c->lq);
    rec_num(w, "maxRelErr", r->max_rel_err, r->max_rel_err >= 0);
    rec_num(w, "limit", bench_attention_check_limit(c->dtype, false), true);
    rec_object_end(w);
    rec_end(w);
}

void bench_decode_records(struct rec *w, const struct decode_suite *a)
{
    rec_list_begin(w, "attentionDecode");
    for (size_t i = 0; i < a->n; i++)
        record(w, &a->cases[i], &a->res[i]);
    rec_list_end(w);
}
