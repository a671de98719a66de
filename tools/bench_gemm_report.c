/* bkbench's GEMM tables, as text rows and as JSON. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bench_gemm.h"
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
    printf("1x: one-time buffers, re: reusable buffers (%u runs after %u warm-up), "
           "Lt: cuBLASLt direct\n", s->bench.repeats, s->bench.warmup);
    printf("peak: of %s; cuBLASLt: %.60s\n", peak_model ? peak_model : "an unknown device (n/a)",
           lt);
    printf("%-8s %-5s %-17s %4s %8s %8s %8s %7s %7s %7s\n", "op", "dtype", "shape(MxNxK)", "sets",
           "1x TF/s", "re TF/s", "Lt TF/s", "1x/Lt", "re/Lt", "peak");
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
    add_tflops(&l, tflops(flops, r->lt_us), lt);
    add_percent(&l, r->lt_us / r->one_time_us, lt);
    add_percent(&l, r->lt_us / r->reusable_us, lt);
    add_percent(&l, re / r->peak_tflops, r->peak_tflops > 0);
    emit(&l);
}

void bench_sparse24_print_header(const char *slt)
{
    printf("\n2:4 sparse GEMM Y[N,M] = X[N,K] @ W[M,K]^T beside libbk's dense GEMM, "
           "reusable buffers;\n");
    printf("TFLOP/s = 2MNK / median time for both (dense-equivalent); speedup: dense time / "
           "sparse time\n");
    printf("cuSPARSELt: %.80s\n", slt);
    printf("%-8s %-5s %-7s %-15s %4s %8s %8s %7s %s\n", "op", "dtype", "layer",
           "shape(NxMxK)", "sets", "dense", "sparse", "speedup", "sparse kernel");
}

/* A table of its own, after the sparse rows: the rows above keep their
 * columns, and its status and message need the room a kernel name has. */
void bench_sparse24_print_slt(const struct sparse24_case *c, const struct sparse24_result *r,
                              size_t n)
{
    printf("\n2:4 sparse GEMM, libbk beside cuSPARSELt on the same pruned W (same sets, same X);"
           "\nTFLOP/s dense-equivalent; bk/SLt: cuSPARSELt time / libbk sparse time\n");
    printf("%-10s %-5s %-7s %-15s %8s %8s %7s %s\n", "op", "dtype", "layer", "shape(NxMxK)",
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
    add(&l, " %6.2fx", r->dense_us / r->sparse_us);
    /* The kernel name, cut to the text width (JSON has it whole). */
    int room = TEXT_WIDTH - (int)l.len - 1;
    add(&l, " %.*s", room > 0 ? room : 0, r->kernel);
    emit(&l);
}

/* ---- JSON ---------------------------------------------------------------- */

static void json_number(const char *key, double v, bool valid)
{
    if (valid)
        printf(", \"%s\": %.6g", key, v);
    else
        printf(", \"%s\": null", key);
}

static void json_string(const char *key, const char *v)
{
    printf(", \"%s\": ", key);
    tool_json_string(stdout, v ? v : "");
}

void bench_gemm_print_json(const struct gemm_case *c, const struct gemm_result *r, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++, c++, r++) {
        double flops = gemm_case_flops(c);
        printf("%s\n    {\"op\": \"gemm\", \"dtype\": \"%s\", \"tf32\": %s, \"m\": %lld, "
               "\"n\": %lld, \"k\": %lld, \"transA\": \"N\", \"transB\": \"T\", "
               "\"flops\": %.0f",
               i ? "," : "", tool_dtype_name(c->dtype), c->tf32 ? "true" : "false",
               (long long)c->m, (long long)c->n, (long long)c->k, flops);
        printf(", \"status\": \"%s\"", r->supported ? "ok" : "unsupported");
        if (!r->supported) {
            json_string("message", r->message);
            printf("}");
            continue;
        }
        json_string("kernel", r->kernel);
        printf(", \"workspaceBytes\": %llu, \"sets\": %u", (unsigned long long)r->workspace,
               r->sets);
        json_number("oneTimeUs", r->one_time_us, true);
        json_number("oneTimeTflopPerS", tflops(flops, r->one_time_us), true);
        json_number("reusableUs", r->reusable_us, true);
        json_number("reusableTflopPerS", tflops(flops, r->reusable_us), true);
        bool lt = r->lt_us > 0;
        printf(", \"cublasLt\": {\"status\": \"%s\"", r->lt_status);
        json_string("message", r->lt_message);
        json_number("us", r->lt_us, lt);
        json_number("tflopPerS", tflops(flops, r->lt_us), lt);
        printf(", \"workspaceBytes\": %llu, \"algo\": %d", (unsigned long long)r->lt_workspace,
               lt ? r->lt_algo : -1);
        json_number("maxRelDiff", r->lt_max_rel_diff, r->lt_max_rel_diff >= 0);
        printf("}");
        /* libbk's speed over cuBLASLt's: time ratio Lt / libbk. */
        json_number("oneTimeVsCublasLt", r->lt_us / r->one_time_us, lt);
        json_number("reusableVsCublasLt", r->lt_us / r->reusable_us, lt);
        json_number("peakTflopPerS", r->peak_tflops, r->peak_tflops > 0);
        json_number("peakFraction", tflops(flops, r->reusable_us) / r->peak_tflops,
                    r->peak_tflops > 0);
        printf("}");
    }
    printf("\n  ]");
}

void bench_sparse24_print_json(const struct sparse24_case *c, const struct sparse24_result *r,
                               size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++, c++, r++) {
        double flops = sparse24_case_flops(c);
        printf("%s\n    {\"op\": \"sparse24-gemm\", \"dtype\": \"%s\", \"layer\": \"%s\", "
               "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"denseFlops\": %.0f",
               i ? "," : "", tool_dtype_name(c->dtype), c->layer, (long long)c->m,
               (long long)c->n, (long long)c->k, flops);
        printf(", \"status\": \"%s\"", r->supported ? "ok" : "unsupported");
        if (!r->supported) {
            json_string("message", r->message);
            printf("}");
            continue;
        }
        json_string("kernel", r->kernel);
        json_string("denseKernel", r->dense_kernel);
        printf(", \"preparedBytes\": %llu, \"sets\": %u", (unsigned long long)r->prepared_bytes,
               r->sets);
        json_number("sparseUs", r->sparse_us, true);
        json_number("sparseTflopPerS", tflops(flops, r->sparse_us), true);
        json_number("denseUs", r->dense_us, true);
        json_number("denseTflopPerS", tflops(flops, r->dense_us), true);
        json_number("speedup", r->dense_us / r->sparse_us, true);
        bool slt = r->slt_us > 0;
        printf(", \"cusparseLt\": {\"status\": \"%s\"", r->slt_status ? r->slt_status : "");
        json_string("message", r->slt_message);
        json_number("us", r->slt_us, slt);
        json_number("tflopPerS", tflops(flops, r->slt_us), slt);
        printf(", \"compressedBytes\": %llu, \"workspaceBytes\": %llu",
               (unsigned long long)r->slt_compressed_bytes, (unsigned long long)r->slt_workspace);
        json_number("maxRelDiff", r->slt_max_rel_diff, r->slt_max_rel_diff >= 0);
        printf("}");
        /* libbk's sparse speed over cuSPARSELt's: time ratio SLt / libbk. */
        json_number("sparseVsCusparseLt", r->slt_us / r->sparse_us, slt);
        json_number("peakTflopPerS", r->peak_tflops, r->peak_tflops > 0);
        json_number("sparsePeakFraction", tflops(flops, r->sparse_us) / r->peak_tflops,
                    r->peak_tflops > 0);
        json_number("densePeakFraction", tflops(flops, r->dense_us) / r->peak_tflops,
                    r->peak_tflops > 0);
        printf("}");
    }
    printf("\n  ]");
}
