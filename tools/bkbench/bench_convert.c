/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's conversion cases (BkConvertInfo, bk-convert(7)): a
 * [rows, 4096] tensor converted f32 -> bf16, bf16 -> f32, f32 -> f16 and
 * f16 -> f32, and f32 -> bf16 once more from a view into a wider
 * [rows, 8192] buffer (row stride 8192), the strided case. rows makes an
 * f32 tensor of --size-mib. Memory-bound: rated against the copy
 * bandwidth as the gated cases are, its bytes the input read once and the
 * output written once. */
#include <stdio.h>

#include "bench_case.h"
#include "bench_record.h"
#include "bench_run.h"
#include "tool_common.h"

#define CONVERT_COLUMNS 4096

static const struct {
    BkDataType from, to;
    int64_t row_factor;               /* row stride = row_factor * 4096, 0 = contiguous */
} kinds[] = {
    {BK_DATA_TYPE_F32, BK_DATA_TYPE_BF16, 0}, {BK_DATA_TYPE_BF16, BK_DATA_TYPE_F32, 0},
    {BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, 0},  {BK_DATA_TYPE_F16, BK_DATA_TYPE_F32, 0},
    {BK_DATA_TYPE_F32, BK_DATA_TYPE_BF16, 2},
};
#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

size_t bench_convert_case_count(void)
{
    return KIND_COUNT;
}

static void fill_case(struct bench_case *c, BkDataType from, BkDataType to, int64_t rows,
                      int64_t row_factor)
{
    const int64_t cols = CONVERT_COLUMNS, rs = row_factor * cols;
    const uint64_t in_es = tool_dtype_size(from), out_es = tool_dtype_size(to);
    *c = (struct bench_case){0};
    c->op = "convert";
    c->variant = tool_dtype_name(to);       /* the output type; dtype is the input's */
    c->dtype = from;
    c->extent[0] = rows;
    c->extent[1] = cols;
    c->row_stride = rs;
    if (rs)
        snprintf(c->shape, sizeof c->shape, "%lldx%lld rs=%lld", (long long)rows,
                 (long long)cols, (long long)rs);
    else
        snprintf(c->shape, sizeof c->shape, "%lldx%lld", (long long)rows, (long long)cols);
    c->convert = (BkConvertInfo){
        .sType = BK_STRUCTURE_TYPE_CONVERT_INFO,
        .input = {from, 2, .extent = {rows, cols}, .stride = {rs, rs ? 1 : 0}},
        .output = {to, 2, .extent = {rows, cols}},
    };
    c->binding_count = 2;
    c->slot[BK_CONVERT_BINDING_INPUT] = BENCH_SLOT_IN0;
    c->slot[BK_CONVERT_BINDING_OUTPUT] = BENCH_SLOT_OUT;
    c->slot_bytes[BENCH_SLOT_IN0] = (uint64_t)((rows - 1) * (rs ? rs : cols) + cols) * in_es;
    c->slot_bytes[BENCH_SLOT_OUT] = (uint64_t)(rows * cols) * out_es;
    c->bytes = (double)(rows * cols) * (double)(in_es + out_es);
}

size_t bench_convert_cases(uint64_t size_bytes, struct bench_case *out, size_t max)
{
    const int64_t rows = (int64_t)(size_bytes / (CONVERT_COLUMNS * 4u));
    if (rows < 1)
        tool_die("--size-mib: %.3f MiB holds no row of %d f32 values", size_bytes / 1048576.0,
                 CONVERT_COLUMNS);
    size_t n = 0;
    for (size_t k = 0; k < KIND_COUNT && n < max; k++)
        fill_case(&out[n++], kinds[k].from, kinds[k].to, rows, kinds[k].row_factor);
    return n;
}

/* ---- Text and records ------------------------------------------------------ */

void bench_convert_print_header(void)
{
    printf("\nconversion (BkConvertInfo): input read once + output written once, over the time;\n"
           "roof: of the copy bandwidth\n");
    printf("%-8s %-5s %-5s %-17s %4s %9s %9s %7s %6s %s\n", "op", "from", "to", "shape", "sets",
           "time(us)", "spread", "GB/s", "roof", "kernel");
}

void bench_convert_print_row(const struct bench_case *c, const struct bench_result *r,
                             void *user)
{
    (void)user;
    char columns[96];
    bench_case_columns(columns, sizeof columns, r);
    char line[160];
    int n = snprintf(line, sizeof line, "%-8s %-5s %-5s %-17s %s", c->op,
                     tool_dtype_name(c->dtype), c->variant, c->shape, columns);
    if (n < 0)
        return;
    if (!r->supported) {
        printf("%s\n", line);
    } else {
        int m = snprintf(line + n, sizeof line - (size_t)n, " %5.1f%%", 100.0 * r->roofline);
        /* The kernel name, cut to 100 columns (JSON has it whole). */
        int room = 100 - (n + (m > 0 ? m : 0)) - 1;
        printf("%s %.*s\n", line, room > 0 ? room : 0, r->kernel);
    }
    fflush(stdout);
}

void bench_convert_records(struct rec *w, const struct bench_case *cases,
                           const struct bench_result *res, size_t n)
{
    rec_list_begin(w, "convert");
    for (size_t i = 0; i < n; i++) {
        const struct bench_case *c = &cases[i];
        rec_begin(w);
        rec_str(w, "op", c->op);
        rec_str(w, "from", tool_dtype_name(c->dtype));
        rec_str(w, "to", c->variant);
        rec_str(w, "dtype", tool_dtype_name(c->dtype));
        bench_case_record_fields(w, c, &res[i], false);
    }
    rec_list_end(w);
}
