/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench: the GEMM-family cases of one run. */
#include "bench_gemm_suite.h"
#include "blas_direct.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_progress.h"
#include "bench_record.h"
#include "device_peak.h"
#include "tool_common.h"

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        tool_die("out of host memory");
    return p;
}

/* The shapes of --shape in a list, "MxNxK,..." (NULL: none): the next
 * one that reads as three positive extents, false at the end. */
static bool next_shape(const char **list, int64_t *m, int64_t *n, int64_t *k, char *str,
                       size_t size)
{
    for (const char *p = *list; p && *p; p = *list) {
        const char *end = strchr(p, ',');
        *list = end ? end + 1 : NULL;
        long long a, b, c;
        int used = 0;
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        snprintf(str, size, "%.*s", (int)len, p);
        if (sscanf(str, "%lldx%lldx%lld%n", &a, &b, &c, &used) == 3 && (size_t)used == len &&
            a > 0 && b > 0 && c > 0) {
            *m = a, *n = b, *k = c;
            return true;
        }
    }
    return false;
}

static size_t shape_count(const char *shapes)
{
    size_t count = 0;
    int64_t m, n, k;
    char str[64];
    while (next_shape(&shapes, &m, &n, &k, str, sizeof str))
        count++;
    return count;
}

/* Each family's standard cases, then for each shape of --shape that none
 * of them has, cases of that shape (bench_gemm_shape_cases and the like);
 * those keep lets through. A macro: the families' cases differ in type. */
#define CHOOSE_CASES(FAMILY, CASES, COUNT, TOTAL, MAKE, MAKE_SHAPE)                        \
    do {                                                                                   \
        const size_t total = (TOTAL) + extra * GEMM_SHAPE_CASES;                           \
        g->CASES = xcalloc(total, sizeof *g->CASES);                                       \
        size_t made = MAKE;                                                                \
        const size_t standard = made;                                                      \
        const char *list = shapes;                                                         \
        int64_t m, n, k;                                                                   \
        char str[64];                                                                      \
        while (next_shape(&list, &m, &n, &k, str, sizeof str)) {                           \
            bool known = false;                                                            \
            for (size_t i = 0; i < standard; i++)                                          \
                known |= strcmp(g->CASES[i].shape, str) == 0;                              \
            if (!known)                                                                    \
                made += MAKE_SHAPE(m, n, k, g->CASES + made, total - made);                \
        }                                                                                  \
        for (size_t i = 0; i < made; i++)                                                  \
            if (keep(FAMILY, g->CASES[i].dtype, g->CASES[i].shape, user))                  \
                g->CASES[g->COUNT++] = g->CASES[i];                                        \
    } while (0)

void gemm_suite_open(struct gemm_suite *g, struct bench_device *d, const struct bench_settings *b,
                     enum bench_gemm_scale scale, const char *shapes, gemm_filter_fn keep,
                     const void *user)
{
    memset(g, 0, sizeof *g);
    g->s.bench = *b;
    g->s.scale = scale;
    g->s.lt_workspace_limit = cublaslt_workspace_limit();
    g->peak_model = device_peak_model(&d->props);
    const size_t extra = shape_count(shapes);

    CHOOSE_CASES(GEMM_FAMILY_DENSE, gemm, ngemm, bench_gemm_case_count(),
                 bench_gemm_cases(scale, g->gemm, total), bench_gemm_shape_cases);
    g->gemm_res = xcalloc(g->ngemm, sizeof *g->gemm_res);
    CHOOSE_CASES(GEMM_FAMILY_SPARSE24, sparse, nsparse, bench_sparse24_case_count(),
                 bench_sparse24_cases(scale, g->sparse, total), bench_sparse24_shape_cases);
    g->sparse_res = xcalloc(g->nsparse, sizeof *g->sparse_res);
    CHOOSE_CASES(GEMM_FAMILY_W4A16, w4a16, nw4a16, bench_w4a16_case_count(),
                 bench_w4a16_cases(scale, g->w4a16, total), bench_w4a16_shape_cases);
    g->w4a16_res = xcalloc(g->nw4a16, sizeof *g->w4a16_res);

    /* cuBLASLt runs only on a GPU, and only for the dense and W4A16
     * cases. */
    g->s.lt_message = g->lt_message;
    g->s.lt_name = "cuBLASLt";
    if (!bench_device_is_cuda(d)) {
        /* On the host the dense cases' comparison is the BLAS libbk's host
         * GEMMs run on, called directly. */
        g->s.lt_status = "skipped";
        g->s.host_blas = blas_direct_available(g->lt_message, sizeof g->lt_message);
        if (g->s.host_blas)
            g->s.lt_name = "BLAS";
        else
            snprintf(g->lt_message, sizeof g->lt_message, "not a CUDA device, no host BLAS");
    } else if (g->ngemm + g->nw4a16 == 0) {
        g->s.lt_status = "skipped";
        snprintf(g->lt_message, sizeof g->lt_message, "no dense GEMM or W4A16 case selected");
    } else if (!(g->s.lt = cublaslt_open(g->lt_message, sizeof g->lt_message))) {
        g->s.lt_status = "unavailable";
    } else {
        g->s.lt_status = "ok";
    }

    /* cuSPARSELt likewise, for the sparse cases. */
    g->s.slt_message = g->slt_message;
    if (!bench_device_is_cuda(d))
        snprintf(g->slt_message, sizeof g->slt_message, "not a CUDA device");
    else if (g->nsparse == 0)
        snprintf(g->slt_message, sizeof g->slt_message, "no sparse24 case selected");
    else if (!(g->s.slt = cusparselt_open(g->slt_message, sizeof g->slt_message)))
        g->slt_report = true;
}

size_t gemm_suite_count(const struct gemm_suite *g)
{
    return g->ngemm + g->nsparse + g->nw4a16;
}

/* "libcusparseLt.so.0 801", or "unavailable (why)". */
static void slt_description(const struct gemm_suite *g, char *out, size_t size)
{
    if (g->s.slt)
        snprintf(out, size, "%s %d", cusparselt_library(g->s.slt), cusparselt_version(g->s.slt));
    else
        snprintf(out, size, "unavailable (%s)", g->slt_message);
}

/* What times the W4A16 cases' dense GEMM. */
static void w4a16_dense_description(const struct gemm_suite *g, char *out, size_t size)
{
    if (g->s.lt)
        snprintf(out, size, "cuBLASLt called directly (%s %zu)", cublaslt_library(g->s.lt),
                 cublaslt_version(g->s.lt));
    else
        snprintf(out, size, "libbk's BkGemmInfo plan (cuBLASLt %s: %s)", g->s.lt_status,
                 g->lt_message);
}

static const char *gemm_dtype(const struct gemm_case *c)
{
    return c->tf32 ? "tf32" : tool_dtype_name(c->dtype);
}

void gemm_suite_run(struct gemm_suite *g, struct bench_device *d, double copy_gb_per_s,
                    bool json)
{
    if (g->ngemm && !json) {
        char lt[320];
        if (g->s.lt)
            snprintf(lt, sizeof lt, "%s %zu", cublaslt_library(g->s.lt),
                     cublaslt_version(g->s.lt));
        else if (g->s.host_blas)
            snprintf(lt, sizeof lt, "%s", g->lt_message);
        else
            snprintf(lt, sizeof lt, "%s (%s)", g->s.lt_status, g->lt_message);
        bench_gemm_print_header(&g->s, g->peak_model, lt);
    }
    for (size_t i = 0; i < g->ngemm; i++) {
        bench_progress_case(1, "gemm %s %s", gemm_dtype(&g->gemm[i]), g->gemm[i].shape);
        bench_gemm_run(d, &g->gemm[i], &g->s, &g->gemm_res[i]);
        bench_progress_done();
        if (!json)
            bench_gemm_print_row(&g->gemm[i], &g->gemm_res[i]);
    }
    if (g->nsparse && !json) {
        char slt[320];
        slt_description(g, slt, sizeof slt);
        bench_sparse24_print_header(slt);
    }
    for (size_t i = 0; i < g->nsparse; i++) {
        const struct sparse24_case *c = &g->sparse[i];
        bench_progress_case(1, "sparse24 %s %s %s", tool_dtype_name(c->dtype), c->layer,
                            c->shape);
        bench_sparse24_run(d, c, &g->s, &g->sparse_res[i]);
        bench_progress_done();
        if (!json)
            bench_sparse24_print_row(&g->sparse[i], &g->sparse_res[i]);
    }
    if (g->nsparse && g->s.slt && !json)
        bench_sparse24_print_slt(g->sparse, g->sparse_res, g->nsparse);
    if (g->nw4a16 && !json) {
        char dense[320];
        w4a16_dense_description(g, dense, sizeof dense);
        bench_w4a16_print_header(&g->s, copy_gb_per_s, dense);
    }
    /* One weight is prepared for the cases of each dtype, K and N. */
    struct w4a16_weight *weight = NULL;
    for (size_t i = 0; i < g->nw4a16; i++) {
        const struct w4a16_case *c = &g->w4a16[i];
        bench_progress_case(1, "w4a16 %s %s %s", tool_dtype_name(c->dtype), c->layer, c->shape);
        bench_w4a16_run(d, c, &g->s, copy_gb_per_s, &weight, &g->w4a16_res[i]);
        bench_progress_done();
        if (!json)
            bench_w4a16_print_row(&g->w4a16[i], &g->w4a16_res[i]);
    }
    bench_w4a16_release(d, &weight);
    if (g->s.host_blas && g->nsparse + g->nw4a16 && !json)
        bench_host_blas_print(g->sparse, g->sparse_res, g->nsparse, g->w4a16, g->w4a16_res,
                              g->nw4a16);
}

size_t gemm_suite_report_failures(const struct gemm_suite *g)
{
    size_t unsupported = 0;
    for (size_t i = 0; i < g->ngemm; i++) {
        const struct gemm_case *c = &g->gemm[i];
        const struct gemm_result *r = &g->gemm_res[i];
        if (!r->supported) {
            unsupported++;
            fprintf(stderr, "bkbench: gemm %s %s: unsupported: %s\n", gemm_dtype(c), c->shape,
                    r->message);
        } else if (strcmp(r->lt_status, "failed") == 0 || strcmp(r->lt_status, "mismatch") == 0) {
            fprintf(stderr, "bkbench: gemm %s %s: cuBLASLt comparison %s: %s\n", gemm_dtype(c),
                    c->shape, r->lt_status, r->lt_message);
        }
    }
    for (size_t i = 0; i < g->nsparse; i++) {
        const struct sparse24_case *c = &g->sparse[i];
        const struct sparse24_result *r = &g->sparse_res[i];
        if (r->supported && (strcmp(r->slt_status, "failed") == 0 ||
                             strcmp(r->slt_status, "mismatch") == 0))
            fprintf(stderr, "bkbench: sparse24 %s %s %s: cuSPARSELt comparison %s: %s\n",
                    tool_dtype_name(c->dtype), c->layer, c->shape, r->slt_status,
                    r->slt_message);
        if (r->supported)
            continue;
        unsupported++;
        fprintf(stderr, "bkbench: sparse24 %s %s %s: unsupported: %s\n",
                tool_dtype_name(c->dtype), c->layer, c->shape, g->sparse_res[i].message);
    }
    for (size_t i = 0; i < g->nw4a16; i++) {
        const struct w4a16_case *c = &g->w4a16[i];
        const struct w4a16_result *r = &g->w4a16_res[i];
        const char *what = !r->supported ? "unsupported" : r->check_failed ? "wrong result" : NULL;
        if (what) {
            unsupported++;
            fprintf(stderr, "bkbench: w4a16 %s %s %s: %s: %s\n", tool_dtype_name(c->dtype),
                    c->layer, c->shape, what, r->message);
        }
        if (r->supported && (strcmp(r->dense_status, "failed") == 0 ||
                             strcmp(r->dense_status, "unsupported") == 0))
            fprintf(stderr, "bkbench: w4a16 %s %s %s: dense GEMM (%s) %s: %s\n",
                    tool_dtype_name(c->dtype), c->layer, c->shape, r->dense_by, r->dense_status,
                    r->dense_message);
    }
    if ((g->ngemm || g->nw4a16) && strcmp(g->s.lt_status, "unavailable") == 0)
        fprintf(stderr, "bkbench: no cuBLASLt comparison: %s\n", g->lt_message);
    if (g->slt_report)
        fprintf(stderr, "bkbench: no cuSPARSELt comparison: %s\n", g->slt_message);
    return unsupported;
}

void gemm_suite_print_json(const struct gemm_suite *g)
{
    printf("  \"cublasLt\": {\"status\": \"%s\", \"library\": ", g->s.lt_status);
    if (g->s.lt) {
        tool_json_string(stdout, cublaslt_library(g->s.lt));
        printf(", \"version\": %zu, \"message\": \"\"", cublaslt_version(g->s.lt));
    } else {
        printf("null, \"version\": null, \"message\": ");
        tool_json_string(stdout, g->lt_message);
    }
    printf(", \"workspaceLimit\": %llu},\n", (unsigned long long)g->s.lt_workspace_limit);
    printf("  \"cusparseLt\": {\"status\": \"%s\", \"library\": ",
           g->s.slt ? "ok" : "unavailable");
    if (g->s.slt) {
        tool_json_string(stdout, cusparselt_library(g->s.slt));
        printf(", \"version\": %d, \"message\": \"\"},\n", cusparselt_version(g->s.slt));
    } else {
        printf("null, \"version\": null, \"message\": ");
        tool_json_string(stdout, g->slt_message);
        printf("},\n");
    }
    printf("  \"gemmScale\": %d, \"peakModel\": ", (int)g->s.scale);
    if (g->peak_model)
        tool_json_string(stdout, g->peak_model);
    else
        printf("null");
    struct rec w = rec_json(stdout);
    printf(",\n  \"gemm\": ");
    bench_gemm_records(&w, g->gemm, g->gemm_res, g->ngemm);
    printf(",\n  \"sparse24\": ");
    bench_sparse24_records(&w, g->sparse, g->sparse_res, g->nsparse);
    printf(",\n  \"w4a16\": ");
    bench_w4a16_records(&w, g->w4a16, g->w4a16_res, g->nw4a16);
}

void gemm_suite_records(struct rec *w, const struct gemm_suite *g)
{
    bench_gemm_records(w, g->gemm, g->gemm_res, g->ngemm);
    bench_sparse24_records(w, g->sparse, g->sparse_res, g->nsparse);
    bench_w4a16_records(w, g->w4a16, g->w4a16_res, g->nw4a16);
}

void gemm_suite_close(struct gemm_suite *g)
{
    cublaslt_close(g->s.lt);
    cusparselt_close(g->s.slt);
    free(g->w4a16_res);
    free(g->w4a16);
    free(g->sparse_res);
    free(g->sparse);
    free(g->gemm_res);
    free(g->gemm);
    memset(g, 0, sizeof *g);
}
