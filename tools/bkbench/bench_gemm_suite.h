/* SPDX-License-Identifier: Apache-2.0 */
/* The GEMM part of a bkbench run: which GEMM-family cases run (dense,
 * 2:4 sparse, W4A16), cuBLASLt for the comparison, the runs, and their
 * text and JSON output. */
#ifndef BK_TOOL_BENCH_GEMM_SUITE_H
#define BK_TOOL_BENCH_GEMM_SUITE_H

#include <stdbool.h>
#include <stddef.h>

#include "bench_gemm.h"
#include "bench_w4a16.h"

enum gemm_family {
    GEMM_FAMILY_DENSE,                    /* gemm */
    GEMM_FAMILY_SPARSE24,                 /* sparse24 */
    GEMM_FAMILY_W4A16,                    /* w4a16 */
};

/* Whether to run a case of the family, dtype and shape (the tables' string). */
typedef bool (*gemm_filter_fn)(enum gemm_family family, BkDataType dtype, const char *shape,
                               const void *user);

struct gemm_suite {
    struct gemm_settings s;
    struct gemm_case *gemm;
    struct gemm_result *gemm_res;
    size_t ngemm;
    struct sparse24_case *sparse;
    struct sparse24_result *sparse_res;
    size_t nsparse;
    struct w4a16_case *w4a16;
    struct w4a16_result *w4a16_res;
    size_t nw4a16;
    char lt_message[256];                 /* why cuBLASLt is not compared */
    char slt_message[256];                /* why cuSPARSELt is not compared */
    bool slt_report;                      /* a CUDA device without cuSPARSELt: say so */
    const char *peak_model;               /* NULL: unknown device */
};

/* Chooses the cases and, on a CUDA device, loads cuBLASLt for the dense
 * and W4A16 cases and cuSPARSELt for the sparse ones. shapes: --shape's
 * list (NULL: none); each M x N x K in it that a family has no standard
 * case of becomes cases of that family. */
void gemm_suite_open(struct gemm_suite *g, struct bench_device *d, const struct bench_settings *b,
                     enum bench_gemm_scale scale, const char *shapes, gemm_filter_fn keep,
                     const void *user);
size_t gemm_suite_count(const struct gemm_suite *g);
/* Runs every case; text rows as they finish unless json. copy_gb_per_s,
 * the copy bandwidth measured in the run, gives the W4A16 cases' floor. */
void gemm_suite_run(struct gemm_suite *g, struct bench_device *d, double copy_gb_per_s,
                    bool json);
/* Writes each unsupported case, each W4A16 case whose check failed and
 * each failed comparison to stderr; returns the number of unsupported
 * and failed cases. */
size_t gemm_suite_report_failures(const struct gemm_suite *g);
/* The JSON members "cublasLt", "cusparseLt", "gemmScale", "peakModel",
 * "gemm", "sparse24" and "w4a16", each line indented as a member of the
 * top-level object, without a trailing comma. */
void gemm_suite_print_json(const struct gemm_suite *g);
/* The records of "gemm", "sparse24" and "w4a16", in that order. */
struct rec;
void gemm_suite_records(struct rec *w, const struct gemm_suite *g);
void gemm_suite_close(struct gemm_suite *g);

#endif /* BK_TOOL_BENCH_GEMM_SUITE_H */
