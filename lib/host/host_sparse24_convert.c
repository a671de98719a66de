/* SPDX-License-Identifier: Apache-2.0 */
/* 2:4 conversions on the host: compress (strict, prune), decompress and
 * validate, between a dense W [m, k] and the interchange format (values
 * [m, k/2], metadata [m, k/8] U16; bk_gemm.h), any strides. Rows are
 * independent and run in parallel; the report's count is a sum and its
 * first bad group a minimum, so it is the same on every run.
 *
 * Elements are copied as bytes (values keep their exact bits, -0 and NaN
 * payloads included); only the choice of what to keep reads them as
 * numbers. */
#include "host_gemm_engine.h"
#include "../half.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Below this many elements a conversion runs on one thread. */
#define PARALLEL_MIN_ELEMENTS (1 << 16)

static double value_f32(const char *p) { float v; memcpy(&v, p, 4); return v; }
static double value_f64(const char *p) { double v; memcpy(&v, p, 8); return v; }
static double value_f16(const char *p) { uint16_t v; memcpy(&v, p, 2); return bk_f16_to_f32(v); }
static double value_bf16(const char *p) { uint16_t v; memcpy(&v, p, 2); return bk_bf16_to_f32(v); }

static double (*const value_of[])(const char *) = {
    [BK_DATA_TYPE_F32] = value_f32,
    [BK_DATA_TYPE_F16] = value_f16,
    [BK_DATA_TYPE_BF16] = value_bf16,
    [BK_DATA_TYPE_F64] = value_f64,
};

/* What a row function needs: the problem, the bound addresses and the
 * element size. */
struct convert {
    const struct bk_sparse24_convert_problem *p;
    char *dense, *values, *meta;
    size_t es;
    double (*value)(const char *);
};

static uint16_t meta_word(const struct convert *cv, int64_t r, int64_t j)
{
    uint16_t w;
    memcpy(&w, host_matrix_at(cv->meta, &cv->p->metadata, r, j, 2), 2);
    return w;
}

/* A metadata byte breaks the rules: bits 4-7 set, or positions not
 * increasing. */
static bool bad_byte(unsigned byte)
{
    return (byte & 0xF0u) || (byte & 3u) >= ((byte >> 2) & 3u);
}

/* x ranks above y when kept by pruning: larger magnitude, NaN above every
 * number (a NaN is kept, so it shows in the result), equal ranks not above
 * (ties go to the lower position). */
static bool ranks_above(double x, double y)
{
    if (isnan(y))
        return false;
    return isnan(x) || fabs(x) > fabs(y);
}

/* The two positions a group keeps, increasing. With fewer than two
 * non-zeros the zeros tie, so the rule itself fills up with the lowest
 * zero positions: [0, 0, 5, 0] keeps positions 0 and 2, [0, 0, 0, 0]
 * positions 0 and 1; a kept zero is stored as it is (0 or -0). */
static unsigned keep_two(const double w[4])
{
    int first = 0;
    for (int q = 1; q < 4; q++)
        if (ranks_above(w[q], w[first]))
            first = q;
    int second = first == 0 ? 1 : 0;
    for (int q = second + 1; q < 4; q++)
        if (q != first && ranks_above(w[q], w[second]))
            second = q;
    const int lo = first < second ? first : second, hi = first < second ? second : first;
    return (unsigned)(lo | hi << 2);
}

/* Each row function handles row r and returns its bad groups, setting
 * *first to the first of them. */
static uint64_t compress_row(const struct convert *cv, int64_t r, int64_t *first, bool strict)
{
    const struct bk_sparse24_convert_problem *p = cv->p;
    uint64_t bad = 0;
    for (int64_t j = 0; j < p->k / 8; j++) {
        unsigned word = 0;
        for (int h = 0; h < 2; h++) {
            const int64_t g = 2 * j + h;
            char *src[4];
            double w[4];
            int nonzeros = 0;
            for (int q = 0; q < 4; q++) {
                src[q] = host_matrix_at(cv->dense, &p->dense, r, 4 * g + q, cv->es);
                w[q] = cv->value(src[q]);
                nonzeros += w[q] != 0;   /* NaN != 0: a NaN is a non-zero */
            }
            if (strict && nonzeros > 2 && bad++ == 0)
                *first = g;
            const unsigned byte = keep_two(w);
            memcpy(host_matrix_at(cv->values, &p->values, r, 2 * g, cv->es), src[byte & 3u],
                   cv->es);
            memcpy(host_matrix_at(cv->values, &p->values, r, 2 * g + 1, cv->es), src[byte >> 2],
                   cv->es);
            word |= byte << (8 * h);
        }
        const uint16_t w16 = (uint16_t)word;
        memcpy(host_matrix_at(cv->meta, &p->metadata, r, j, 2), &w16, 2);
    }
    return bad;
}

static uint64_t strict_row(const struct convert *cv, int64_t r, int64_t *first)
{
    return compress_row(cv, r, first, true);
}

static uint64_t prune_row(const struct convert *cv, int64_t r, int64_t *first)
{
    return compress_row(cv, r, first, false);
}

/* Bad metadata is reported and still followed: each value goes where its
 * position says (bits 0-1 and 2-3; the second wins where they are equal). */
static uint64_t decompress_row(const struct convert *cv, int64_t r, int64_t *first)
{
    const struct bk_sparse24_convert_problem *p = cv->p;
    uint64_t bad = 0;
    for (int64_t j = 0; j < p->k / 8; j++) {
        const unsigned word = meta_word(cv, r, j);
        for (int h = 0; h < 2; h++) {
            const int64_t g = 2 * j + h;
            const unsigned byte = (word >> (8 * h)) & 0xFFu;
            if (bad_byte(byte) && bad++ == 0)
                *first = g;
            for (int q = 0; q < 4; q++)   /* all-zero bits are +0 in every type */
                memset(host_matrix_at(cv->dense, &p->dense, r, 4 * g + q, cv->es), 0, cv->es);
            memcpy(host_matrix_at(cv->dense, &p->dense, r, 4 * g + (byte & 3u), cv->es),
                   host_matrix_at(cv->values, &p->values, r, 2 * g, cv->es), cv->es);
            memcpy(host_matrix_at(cv->dense, &p->dense, r, 4 * g + ((byte >> 2) & 3u), cv->es),
                   host_matrix_at(cv->values, &p->values, r, 2 * g + 1, cv->es), cv->es);
        }
    }
    return bad;
}

static uint64_t validate_row(const struct convert *cv, int64_t r, int64_t *first)
{
    uint64_t bad = 0;
    for (int64_t j = 0; j < cv->p->k / 8; j++) {
        const unsigned word = meta_word(cv, r, j);
        for (int h = 0; h < 2; h++)
            if (bad_byte((word >> (8 * h)) & 0xFFu) && bad++ == 0)
                *first = 2 * j + h;
    }
    return bad;
}

static const struct {
    const char *name;
    uint64_t (*row)(const struct convert *, int64_t, int64_t *);
    BkSparse24Status bad_status;
} conversions[] = {
    [BK_SPARSE24_COMPRESS_STRICT] = { "compress_strict", strict_row,
                                      BK_SPARSE24_STATUS_TOO_MANY_NONZEROS },
    [BK_SPARSE24_COMPRESS_PRUNE] = { "compress_prune", prune_row, BK_SPARSE24_STATUS_OK },
    [BK_SPARSE24_DECOMPRESS] = { "decompress", decompress_row, BK_SPARSE24_STATUS_BAD_METADATA },
    [BK_SPARSE24_VALIDATE] = { "validate", validate_row, BK_SPARSE24_STATUS_BAD_METADATA },
};

static BkResult convert_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_sparse24_convert_problem *p = &plan->problem.sparse24_convert;
    (void)queue;
    const struct convert cv = {
        .p = p,
        .dense = (char *)(uintptr_t)args->binding[BK_SPARSE24_CONVERT_BINDING_DENSE],
        .values = (char *)(uintptr_t)args->binding[BK_SPARSE24_CONVERT_BINDING_VALUES],
        .meta = (char *)(uintptr_t)args->binding[BK_SPARSE24_CONVERT_BINDING_METADATA],
        .es = bk_data_type_size(p->type),
        .value = p->type == BK_DATA_TYPE_UNDEFINED ? NULL : value_of[p->type],
    };
    uint64_t (*const row)(const struct convert *, int64_t, int64_t *) =
        conversions[p->conversion].row;
    const int64_t m = p->m, groups = p->k / 4;
    uint64_t bad = 0, first = UINT64_MAX;   /* first: row * groups + group */
    if (groups > 0) {
#pragma omp parallel for schedule(static) reduction(+ : bad) reduction(min : first) \
    if (m * groups >= PARALLEL_MIN_ELEMENTS / 4)
        for (int64_t r = 0; r < m; r++) {
            int64_t g = 0;
            const uint64_t n = row(&cv, r, &g);
            bad += n;
            if (n && (uint64_t)(r * groups + g) < first)
                first = (uint64_t)(r * groups + g);
        }
    }
    /* An OK report has zeros where the first bad group would be. */
    BkSparse24Report report = { .status = BK_SPARSE24_STATUS_OK };
    if (bad) {
        report.status = (uint32_t)conversions[p->conversion].bad_status;
        report.badGroupCount = bad;
        report.firstBadRow = first / (uint64_t)groups;
        report.firstBadGroup = first % (uint64_t)groups;
    }
    void *out = (void *)(uintptr_t)args->binding[BK_SPARSE24_CONVERT_BINDING_REPORT];
    if (out)
        memcpy(out, &report, sizeof report);
    return BK_SUCCESS;
}

BkResult bk_host_sparse24_convert_select(BkPlan plan)
{
    const struct bk_sparse24_convert_problem *p = &plan->problem.sparse24_convert;
    const bool validate = p->conversion == BK_SPARSE24_VALIDATE;
    if (!validate && ((unsigned)p->type >= sizeof value_of / sizeof value_of[0] ||
                      !value_of[p->type]))
        return bk_error(BK_ERROR_UNSUPPORTED, "%s: the host backend cannot convert %s",
                        plan->op_name, bk_data_type_name(p->type));
    plan->launch = convert_launch;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_sparse24_%s_%s",
             conversions[p->conversion].name, validate ? "u16" : host_gemm_type_name(p->type));
    return BK_SUCCESS;
}
