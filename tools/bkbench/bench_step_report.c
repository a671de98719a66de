/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's decode-step table, as text rows and as JSON. */
#include <stdio.h>

#include "bench_record.h"
#include "bench_step.h"
#include "tool_common.h"

void bench_step_print_header(const struct bench_settings *s, double copy_gb_per_s)
{
    printf("\ndecode step: one decoder layer (W4A16 qkv, attention over the KV cache, W4A16 o,\n"
           "W4A16 gate-up, swiglu, W4A16 down) in one reusable command buffer a layer, layers\n"
           "rotated (%u runs after %u warm-up); then the four linears back to back (linears),\n"
           "then each op alone. floor: int4 weights, scales, K and V (linears: the weights and\n"
           "scales; swiglu: its activations) read once at the copy bandwidth (%.1f GB/s)\n",
           s->repeats, s->warmup, copy_gb_per_s);
    printf("%-22s %-9s %10s %10s %10s %10s %8s\n", "decode-step", "op", "us", "min", "max",
           "floor us", "of floor");
}

static void row(const char *name, const char *what, const struct bench_spread *t, double floor)
{
    printf("%-22s %-9s %10.1f %10.1f %10.1f %10.1f %7.1f%%\n", name, what, t->us, t->min_us,
           t->max_us, floor, t->us > 0 ? 100.0 * floor / t->us : 0.0);
}

void bench_step_print_rows(const struct step_case *c, const struct step_result *r)
{
    if (!r->supported) {
        printf("%-22s %-9s %10s\n", c->name, "step", "unsupported");
    } else {
        row(c->name, "step", &r->t, r->floor_us);
        row(c->name, "linears", &r->linears, r->linears_floor_us);
        for (int op = 0; op < STEP_OPS; op++)
            row(c->name, step_op_name((enum step_op)op), &r->op[op].t, r->op[op].floor_us);
    }
    fflush(stdout);
}

static void record(struct rec *w, const struct step_case *c, const struct step_result *r)
{
    rec_begin(w);
    rec_str(w, "op", "decode-step");
    rec_str(w, "case", c->name);
    rec_str(w, "dtype", tool_dtype_name(c->dtype));
    rec_int(w, "m", c->m);
    rec_int(w, "kv", c->kv);
    rec_int(w, "hidden", c->hidden);
    rec_int(w, "heads", c->heads);
    rec_int(w, "kvHeads", c->kv_heads);
    rec_int(w, "d", c->d);
    rec_int(w, "ffn", c->ffn);
    rec_int(w, "group", 128);
    rec_bool(w, "zeroPoints", c->zeros);
    rec_str(w, "status", r->supported ? "ok" : "unsupported");
    if (!r->supported) {
        rec_str(w, "message", r->message);
        rec_end(w);
        return;
    }
    rec_uint(w, "sets", r->sets);
    rec_num(w, "us", r->t.us, true);
    rec_num(w, "usMin", r->t.min_us, true);
    rec_num(w, "usMax", r->t.max_us, true);
    rec_uint(w, "weightBytes", r->weight_bytes);
    rec_uint(w, "kvBytes", r->kv_bytes);
    rec_num(w, "floorUs", r->floor_us, r->floor_us > 0);
    rec_num(w, "ofFloor", r->t.us > 0 ? r->floor_us / r->t.us : 0, r->floor_us > 0);
    double sum = 0;
    for (int op = 0; op < STEP_OPS; op++)
        sum += r->op[op].t.us;
    rec_num(w, "opsAloneUs", sum, true);
    /* The four linears back to back. */
    rec_object_begin(w, "linears");
    rec_num(w, "us", r->linears.us, true);
    rec_num(w, "usMin", r->linears.min_us, true);
    rec_num(w, "usMax", r->linears.max_us, true);
    rec_num(w, "floorUs", r->linears_floor_us, r->linears_floor_us > 0);
    rec_num(w, "ofFloor", r->linears.us > 0 ? r->linears_floor_us / r->linears.us : 0,
            r->linears_floor_us > 0);
    rec_object_end(w);
    for (int op = 0; op < STEP_OPS; op++) {
        const struct step_op_result *o = &r->op[op];
        rec_object_begin(w, step_op_key((enum step_op)op));
        rec_str(w, "kernel", o->kernel);
        if (o->k) {
            rec_int(w, "k", o->k);
            rec_int(w, "n", o->n);
        }
        rec_uint(w, "bytes", o->bytes);
        rec_num(w, "us", o->t.us, true);
        rec_num(w, "usMin", o->t.min_us, true);
        rec_num(w, "usMax", o->t.max_us, true);
        rec_num(w, "floorUs", o->floor_us, o->floor_us > 0);
        rec_object_end(w);
    }
    rec_end(w);
}

void bench_step_records(struct rec *w, const struct step_suite *a)
{
    rec_list_begin(w, "decodeStep");
    for (size_t i = 0; i < a->n; i++)
        record(w, &a->cases[i], &a->res[i]);
    rec_list_end(w);
}
