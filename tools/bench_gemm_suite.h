/* The GEMM part of a bkbench run: which GEMM-family cases run, cuBLASLt
 * for the comparison, the runs, and their text and JSON output. */
#ifndef BK_TOOL_BENCH_GEMM_SUITE_H
#define BK_TOOL_BENCH_GEMM_SUITE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench_gemm.h"

/* Whether to run a case: sparse (a sparse24 case) or dense (gemm). */
typedef bool (*gemm_filter_fn)(bool sparse, BkDataType dtype, const void *user);

struct gemm_suite {
    struct gemm_settings s;
    struct gemm_case *gemm;
    struct gemm_result *gemm_res;
    size_t ngemm;
    struct sparse24_case *sparse;
    struct sparse24_result *sparse_res;
    size_t nsparse;
    char lt_message[256];                 /* why cuBLASLt is not compared */
    char slt_message[256];                /* why cuSPARSELt is not compared */
    bool slt_report;                      /* a CUDA device without cuSPARSELt: say so */
    const char *peak_model;               /* NULL: unknown device */
};

/* Chooses the cases and, on a CUDA device, loads cuBLASLt for the dense
 * cases and cuSPARSELt for the sparse ones. */
void gemm_suite_open(struct gemm_suite *g, struct bench_device *d, const struct bench_settings *b,
                     enum bench_gemm_scale scale, gemm_filter_fn keep, const void *user);
size_t gemm_suite_count(const struct gemm_suite *g);
/* Runs every case; text rows as they finish unless json. */
void gemm_suite_run(struct gemm_suite *g, struct bench_device *d, bool json);
/* Writes each unsupported case and each failed cuBLASLt comparison to
 * stderr; returns the number of unsupported cases. */
size_t gemm_suite_report_failures(const struct gemm_suite *g);
/* The JSON members "cublasLt", "cusparseLt", "gemm" and "sparse24", each line indented
 * as a member of the top-level object, without a trailing comma. */
void gemm_suite_print_json(const struct gemm_suite *g);
void gemm_suite_close(struct gemm_suite *g);

#endif /* BK_TOOL_BENCH_GEMM_SUITE_H */
