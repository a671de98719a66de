/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's GEMM tables (dense, 2:4 sparse, W4A16), as text rows and as
 * JSON. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench_gemm.h"
#include "bench_record.h"
#include "bench_spread.h"
#include "bench_w4a16.h"
#include "tool_common.h"

#define TEXT_WIDTH 100                    /* bkbench's text fits in 100 columns */

static double tflops(double flops, double us)
{
    return us > 0 ? flops / (us * 1e-6) / 1e12 : 0.0;
}

/* The row's dtype: "tf32" for F32 on TF32 tensor cores. */
static const char *gemm_dtype(const struct gemm_case *c)
{
    return c->tf32 ? "tf32" : tool_dtype_name(c->dtype);
}

/* A text row under construction. */
struct line {
    char text[512];
    size_t len;
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct line *l, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(l->text + l->len, sizeof l->text - l->len, fmt, ap);
    va_end(ap);
    if (w > 0)
        l->len += (size_t)w < sizeof l->text - l->len ? (size_t)w : sizeof l->text - l->len - 1;
}

/* Four or five significant digits in 8 columns, from a GPU's hundreds
 * of TFLOP/s to a CPU's hundredths. */
static void add_tflops(struct line *l, double v, bool valid)
{
    if (!valid)
        add(l, " %8s", "-");
    else if (v >= 0.01)
        add(l, " %8.*f", v >= 100 ? 1 : v >= 1 ? 2 : 4, v);
    else
        add(l, " %8.2e", v);
}

static void add_percent(struct line *l, double fraction, bool valid)
{
    if (valid)
        add(l, " %6.1f%%", 100.0 * fraction);
    else
        add(l, " %7s", "n/a");
}

/* min and max of a time beside its median, relative to it. */
static void add_spread(struct line *l, const struct bench_spread *t)
{
    char s[32];
    bench_spread_text(s, sizeof s, 9, t);
    add(l, "%s", s);
}

static void emit(const struct line *l)
{
    printf("%s\n", l->text);
    fflush(stdout);
}

/* ---- Text ---------------------------------------------------------------- */

void bench_gemm_print_header(const struct gemm_settings *s, const char *peak_model,
                             const char *lt)
{
    printf("\ndense GEMM D[M,N] = A[M,K] @ B[N,K]^T, row-major; TFLOP/s = 2MNK / median time\n");
    const char *name = s->lt_name ? s->lt_name : "cuBLASLt";
    printf("shapes M x N x K: M tokens, N output features, K input features\n");
    printf("1x: one-time buffers, re: reusable buffers (%u runs after %u warm-up), "
           "Lt: %s direct\n", s->bench.repeats, s->bench.warmup, name);
    printf("peak: of %s; %s: %.60s\n", peak_model ? peak_model : "an unknown device (n/a)",
           name, lt);
    printf("%-8s %-5s %-17s %4s %8s %8s %9s %8s %7s %7s %7s\n", "op", "dtype", "shape(MxNxK)",
           "sets", "1x TF/s", "re TF/s", "re spread", "Lt TF/s", "1x/Lt", "re/Lt", "peak");
}

void bench_gemm_print_row(const struct gemm_case *c, const struct gemm_result *r)
{
    struct line l = {"", 0};
    add(&l, "%-8s %-5s %-17s", "gemm", gemm_dtype(c), c->shape);
    if (!r->supported) {
        add(&l, " %4s %8s", "-", "unsupported");
        emit(&l);
        return;
    }
    double flops = gemm_case_flops(c);
    double re = tflops(flops, r->reusable_us);
    bool lt = r->lt_us > 0;
    add(&l, " %4u", r->sets);
    add_tflops(&l, tflops(flops, r->one_time_us), true);
    add_tflops(&l, re, true);
    add_spread(&l, &r->reusable_t);
    add_tflops(&l, tflops(flops, r->lt_us), lt);
    add_percent(&l, r->lt_us / r->one_time_us, lt);
    add_percent(&l, r->lt_us / r->reusable_us, lt);
    add_percent(&l, re / r->peak_tflops, r->peak_tflops > 0);
    emit(&l);
}

void bench_sparse24_print_header(const char *slt)
{
    printf("\n2:4 sparse GEMM Y[M,N] = X[M,K] @ W[N,K]^T beside libbk's dense GEMM, "
           "reusable buffers;\n");
    printf("TFLOP/s = 2MNK / median time for both (dense-equivalent); speedup: dense time / "
           "sparse time\n");
    printf("cuSPARSELt: %.80s\n", slt);
    printf("%-8s %-5s %-7s %-15s %4s %8s %8s %9s %7s %s\n", "op", "dtype", "layer",
           "shape(MxNxK)", "sets", "dense", "sparse", "spread", "speedup", "sparse kernel");
}

/* A table of its own, after the sparse rows: the rows above keep their
 * columns, and its status and message need the room a kernel name has. */
void bench_sparse24_print_slt(const struct sparse24_case *c, const struct sparse24_result *r,
                              size_t n)
{
    printf("\n2:4 sparse GEMM, libbk beside cuSPARSELt on the same pruned W (same sets, same X);"
           "\nTFLOP/s dense-equivalent; bk/SLt: cuSPARSELt time / libbk sparse time\n");
    printf("%-10s %-5s %-7s %-15s %8s %8s %7s %s\n", "op", "dtype", "layer", "shape(MxNxK)",
           "sparse", "SLt", "bk/SLt", "status");
    for (size_t i = 0; i < n; i++, c++, r++) {
        if (!r->supported)
            continue;
        struct line l = {"", 0};
        double flops = sparse24_case_flops(c);
        bool timed = r->slt_us > 0;
        add(&l, "%-10s %-5s %-7s %-15s", "cusparselt", tool_dtype_name(c->dtype), c->layer,
            c->shape);
        add_tflops(&l, tflops(flops, r->sparse_us), true);
        add_tflops(&l, tflops(flops, r->slt_us), timed);
        add_percent(&l, r->slt_us / r->sparse_us, timed);
        int room = TEXT_WIDTH - (int)l.len - 1;
        if (r->slt_message[0])
            add(&l, " %.*s: %.*s", room > 0 ? room : 0, r->slt_status,
                room > (int)strlen(r->slt_status) + 2 ? room - (int)strlen(r->slt_status) - 2 : 0,
                r->slt_message);
        else
            add(&l, " %.*s", room > 0 ? room : 0, r->slt_status);
        emit(&l);
    }
}

void bench_sparse24_print_row(const struct sparse24_case *c, const struct sparse24_result *r)
{
    struct line l = {"", 0};
    add(&l, "%-8s %-5s %-7s %-15s", "sparse24", tool_dtype_name(c->dtype), c->layer, c->shape);
    if (!r->supported) {
        add(&l, " %4s %8s", "-", "unsupported");
        emit(&l);
        return;
    }
    double flops = sparse24_case_flops(c);
    add(&l, " %4u", r->sets);
    add_tflops(&l, tflops(flops, r->dense_us), true);
    add_tflops(&l, tflops(flops, r->sparse_us), true);
    add_spread(&l, &r->sparse_t);
    add(&l, " %6.2fx", r->dense_us / r->sparse_us);
    /* The kernel name, cut to the text width (JSON has it whole). */
    int room = TEXT_WIDTH - (int)l.len - 1;
    add(&l, " %.*s", room > 0 ? room : 0, r->kernel);
    emit(&l);
}

/* A time in microseconds in 7 columns: one decimal below 10000. */
static void add_us(struct line *l, double us, bool valid)
{
    if (!valid)
        add(l, " %7s", "-");
    else
        add(l, " %7.*f", us < 10000 ? 1 : 0, us);
}

/* TFLOP/s in 6 columns, from a GPU's hundreds to a CPU's thousandths. */
static void add_tflops6(struct line *l, double v)
{
    if (v >= 0.001)
        add(l, " %6.*f", v >= 100 ? 1 : v >= 10 ? 2 : v >= 1 ? 3 : 4, v);
    else
        add(l, " %6.0e", v);
}

void bench_w4a16_print_header(const struct gemm_settings *s, double copy_gb_per_s,
                              const char *dense)
{
    printf("\nW4A16 GEMM C[M,N] = A[M,K] @ dequant(B)[K,N], int4 B (Marlin layout, groups of %d "
           "rows);\n", W4A16_GROUP);
    printf("reusable buffers (%u runs after %u warm-up); TFLOP/s = 2MNK / median time (us)\n",
           s->bench.repeats, s->bench.warmup);
    printf("floor: int4 B + scales read at the copy bandwidth (%.1f GB/s) over the time\n",
           copy_gb_per_s);
    printf("dense: D[M,N] = A[M,K] @ B[N,K]^T on the same sets; dn/w4: dense time / W4A16 time\n");
    printf("dense GEMM by %.85s\n", dense);
    printf("%-5s %-5s %-7s %-14s %4s %7s %9s %6s %6s %7s %5s %s\n", "op", "dtype", "layer",
           "shape(MxNxK)", "sets", "us", "spread", "TF/s", "floor", "dense", "dn/w4", "kernel");
}

void bench_w4a16_print_row(const struct w4a16_case *c, const struct w4a16_result *r)
{
    struct line l = {"", 0};
    add(&l, "%-5s %-5s %-7s %-14s", "w4a16", tool_dtype_name(c->dtype), c->layer, c->shape);
    if (!r->supported) {
        add(&l, " %4s %7s", "-", "unsupported");
        emit(&l);
        return;
    }
    const bool dense = r->dense_us > 0;
    add(&l, " %4u", r->sets);
    add_us(&l, r->us, true);
    add_spread(&l, &r->t);
    add_tflops6(&l, tflops(w4a16_case_flops(c), r->us));
    if (r->floor_us > 0)
        add(&l, " %5.1f%%", 100.0 * r->floor_us / r->us);
    else
        add(&l, " %6s", "n/a");
    add_us(&l, r->dense_us, dense);
    if (dense)
        add(&l, " %4.2fx", r->dense_us / r->us);
    else
        add(&l, " %5s", "n/a");
    /* The kernel name, cut to the text width (JSON has it whole); a
     * wrong result says so instead. */
    int room = TEXT_WIDTH - (int)l.len - 1;
    add(&l, " %.*s", room > 0 ? room : 0, r->check_failed ? "WRONG RESULT" : r->kernel);
    emit(&l);
}

/* One row of the host table: libbk's TFLOP/s, the BLAS's, and the BLAS's
 * time over libbk's. */
static void print_blas_row(const char *op, BkDataType dtype, const char *layer,
                           const char *shape, double flops, double us, double blas_us)
{
    struct line l = {"", 0};
    add(&l, "%-4s %-8s %-5s %-7s %-15s", "blas", op, tool_dtype_name(dtype), layer, shape);
    add_tflops(&l, tflops(flops, us), true);
    add_tflops(&l, tflops(flops, blas_us), true);
    add_percent(&l, blas_us / us, true);
    emit(&l);
}

void bench_host_blas_print(const struct sparse24_case *sc, const struct sparse24_result *sr,
                           size_t ns, const struct w4a16_case *wc,
                           const struct w4a16_result *wr, size_t nw)
{
    printf("\nhost 2:4 and W4A16 GEMMs beside the BLAS called directly (sgemm, f32 operands of "
           "the\nsame M, N, K, timed in the same rounds); bk/BLAS: BLAS time / libbk time\n");
    printf("%-4s %-8s %-5s %-7s %-15s %8s %8s %7s\n", "op", "of", "dtype", "layer",
           "shape(MxNxK)", "libbk", "BLAS", "bk/BLAS");
    for (size_t i = 0; i < ns; i++)
        if (sr[i].supported && sr[i].blas_us > 0)
            print_blas_row("sparse24", sc[i].dtype, sc[i].layer, sc[i].shape,
                           sparse24_case_flops(&sc[i]), sr[i].sparse_us, sr[i].blas_us);
    for (size_t i = 0; i < nw; i++)
        if (wr[i].supported && wr[i].blas_us > 0)
            print_blas_row("w4a16", wc[i].dtype, wc[i].layer, wc[i].shape,
                           w4a16_case_flops(&wc[i]), wr[i].us, wr[i].blas_us);
}

/* ---- JSON ---------------------------------------------------------------- */

/* A string member that is "" rather than null when there is none. */
static void str(struct rec *w, const char *key, const char *v)
{
    rec_str(w, key, v ? v : "");
}

void bench_gemm_records(struct rec *w, const struct gemm_case *c, const struct gemm_result *r,
                        size_t n)
{
    rec_list_begin(w, "gemm");
    for (size_t i = 0; i < n; i++, c++, r++) {
        double flops = gemm_case_flops(c);
        rec_begin(w);
        rec_str(w, "op", "gemm");
        rec_str(w, "dtype", tool_dtype_name(c->dtype));
        rec_bool(w, "tf32", c->tf32);
        rec_int(w, "m", c->m);
        rec_int(w, "n", c->n);
        rec_int(w, "k", c->k);
        rec_str(w, "shape", c->shape);
        rec_str(w, "transA", "N");
        rec_str(w, "transB", "T");
        rec_whole(w, "flops", flops);
        rec_str(w, "status", r->supported ? "ok" : "unsupported");
        if (!r->supported) {
            str(w, "message", r->message);
            rec_end(w);
            continue;
        }
        str(w, "kernel", r->kernel);
        rec_uint(w, "workspaceBytes", r->workspace);
        rec_uint(w, "sets", r->sets);
        rec_num(w, "oneTimeUs", r->one_time_us, true);
        rec_num(w, "oneTimeTflopPerS", tflops(flops, r->one_time_us), true);
        rec_num(w, "reusableUs", r->reusable_us, true);
        rec_num(w, "reusableUsMin", r->reusable_t.min_us, true);
        rec_num(w, "reusableUsMax", r->reusable_t.max_us, true);
        rec_num(w, "reusableTflopPerS", tflops(flops, r->reusable_us), true);
        bool lt = r->lt_us > 0;
        rec_object_begin(w, "cublasLt");
        str(w, "status", r->lt_status);
        str(w, "message", r->lt_message);
        rec_num(w, "us", r->lt_us, lt);
        rec_num(w, "tflopPerS", tflops(flops, r->lt_us), lt);
        rec_uint(w, "workspaceBytes", r->lt_workspace);
        rec_int(w, "algo", lt ? r->lt_algo : -1);
        rec_num(w, "maxRelDiff", r->lt_max_rel_diff, r->lt_max_rel_diff >= 0);
        rec_object_end(w);
        /* libbk's speed over cuBLASLt's: time ratio Lt / libbk. */
        rec_num(w, "oneTimeVsCublasLt", r->lt_us / r->one_time_us, lt);
        rec_num(w, "reusableVsCublasLt", r->lt_us / r->reusable_us, lt);
        rec_num(w, "peakTflopPerS", r->peak_tflops, r->peak_tflops > 0);
        rec_num(w, "peakFraction", tflops(flops, r->reusable_us) / r->peak_tflops,
                r->peak_tflops > 0);
        rec_end(w);
    }
    rec_list_end(w);
}

void bench_sparse24_records(struct rec *w, const struct sparse24_case *c,
                            const struct sparse24_result *r, size_t n)
{
    rec_list_begin(w, "sparse24");
    for (size_t i = 0; i < n; i++, c++, r++) {
        double flops = sparse24_case_flops(c);
        rec_begin(w);
        rec_str(w, "op", "sparse24-gemm");
        rec_str(w, "dtype", tool_dtype_name(c->dtype));
        rec_str(w, "layer", c->layer);
        rec_int(w, "m", c->m);
        rec_int(w, "n", c->n);
        rec_int(w, "k", c->k);
        rec_str(w, "shape", c->shape);
        rec_whole(w, "denseFlops", flops);
        rec_str(w, "status", r->supported ? "ok" : "unsupported");
        if (!r->supported) {
            str(w, "message", r->message);
            rec_end(w);
            continue;
        }
        str(w, "kernel", r->kernel);
        str(w, "denseKernel", r->dense_kernel);
        rec_uint(w, "preparedBytes", r->prepared_bytes);
        rec_uint(w, "sets", r->sets);
        rec_num(w, "sparseUs", r->sparse_us, true);
        rec_num(w, "sparseUsMin", r->sparse_t.min_us, true);
        rec_num(w, "sparseUsMax", r->sparse_t.max_us, true);
        rec_num(w, "sparseTflopPerS", tflops(flops, r->sparse_us), true);
        rec_num(w, "denseUs", r->dense_us, true);
        rec_num(w, "denseTflopPerS", tflops(flops, r->dense_us), true);
        rec_num(w, "speedup", r->dense_us / r->sparse_us, true);
        bool slt = r->slt_us > 0;
        rec_object_begin(w, "cusparseLt");
        str(w, "status", r->slt_status);
        str(w, "message", r->slt_message);
        rec_num(w, "us", r->slt_us, slt);
        rec_num(w, "tflopPerS", tflops(flops, r->slt_us), slt);
        rec_uint(w, "compressedBytes", r->slt_compressed_bytes);
        rec_uint(w, "workspaceBytes", r->slt_workspace);
        rec_num(w, "maxRelDiff", r->slt_max_rel_diff, r->slt_max_rel_diff >= 0);
        rec_object_end(w);
        /* libbk's sparse speed over cuSPARSELt's: time ratio SLt / libbk. */
        rec_num(w, "sparseVsCusparseLt", r->slt_us / r->sparse_us, slt);
        /* On the host, the BLAS's f32 GEMM of the shape: its time over
         * libbk's sparse time. */
        bool blas = r->blas_us > 0;
        rec_object_begin(w, "blas");
        rec_num(w, "us", r->blas_us, blas);
        rec_num(w, "tflopPerS", tflops(flops, r->blas_us), blas);
        rec_object_end(w);
        rec_num(w, "sparseVsBlas", r->blas_us / r->sparse_us, blas);
        rec_num(w, "peakTflopPerS", r->peak_tflops, r->peak_tflops > 0);
        rec_num(w, "sparsePeakFraction", tflops(flops, r->sparse_us) / r->peak_tflops,
                r->peak_tflops > 0);
        rec_num(w, "densePeakFraction", tflops(flops, r->dense_us) / r->peak_tflops,
                r->peak_tflops > 0);
        rec_end(w);
    }
    rec_list_end(w);
}

void bench_w4a16_records(struct rec *w, const struct w4a16_case *c,
                         const struct w4a16_result *r, size_t n)
{
    rec_list_begin(w, "w4a16");
    for (size_t i = 0; i < n; i++, c++, r++) {
        double flops = w4a16_case_flops(c);
        rec_begin(w);
        rec_str(w, "op", "w4a16");
        rec_str(w, "dtype", tool_dtype_name(c->dtype));
        rec_str(w, "model", c->model);
        rec_str(w, "layer", c->layer);
        rec_int(w, "m", c->m);
        rec_int(w, "n", c->n);
        rec_int(w, "k", c->k);
        rec_str(w, "shape", c->shape);
        rec_int(w, "groupSize", W4A16_GROUP);
        rec_whole(w, "flops", flops);
        rec_uint(w, "weightBytes", r->weight_bytes);
        rec_str(w, "status",
                !r->supported ? "unsupported" : r->check_failed ? "mismatch" : "ok");
        if (!r->supported || r->check_failed)
            str(w, "message", r->message);
        if (!r->supported) {
            rec_end(w);
            continue;
        }
        str(w, "kernel", r->kernel);
        rec_uint(w, "workspaceBytes", r->workspace);
        rec_uint(w, "sets", r->sets);
        rec_num(w, "us", r->us, true);
        rec_num(w, "usMin", r->t.min_us, true);
        rec_num(w, "usMax", r->t.max_us, true);
        rec_num(w, "tflopPerS", tflops(flops, r->us), true);
        rec_num(w, "floorUs", r->floor_us, r->floor_us > 0);
        rec_num(w, "ofFloor", r->floor_us / r->us, r->floor_us > 0);
        rec_object_begin(w, "check");
        rec_uint(w, "rows", r->check_rows);
        rec_int(w, "columns", W4A16_CHECK_COLUMNS);
        rec_num(w, "maxRelErr", r->max_rel_err, r->max_rel_err >= 0);
        rec_num(w, "limit", W4A16_CHECK_LIMIT, true);
        rec_object_end(w);
        bool dense = r->dense_us > 0;
        rec_object_begin(w, "dense");
        str(w, "by", r->dense_by);
        str(w, "status", r->dense_status);
        str(w, "message", r->dense_message);
        str(w, "kernel", r->dense_kernel);
        rec_int(w, "algo", r->dense_algo);
        rec_uint(w, "workspaceBytes", r->dense_workspace);
        rec_num(w, "us", r->dense_us, dense);
        rec_num(w, "tflopPerS", tflops(flops, r->dense_us), dense);
        rec_object_end(w);
        /* The W4A16 GEMM's speed over the dense one's: time ratio. */
        rec_num(w, "denseOverW4a16", r->dense_us / r->us, dense);
        /* On the host, the BLAS's f32 GEMM of the shape: its time over
         * the W4A16 time. */
        bool blas = r->blas_us > 0;
        rec_object_begin(w, "blas");
        rec_num(w, "us", r->blas_us, blas);
        rec_num(w, "tflopPerS", tflops(flops, r->blas_us), blas);
        rec_object_end(w);
        rec_num(w, "vsBlas", r->blas_us / r->us, blas);
        rec_end(w);
    }
    rec_list_end(w);
}
