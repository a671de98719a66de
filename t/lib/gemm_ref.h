/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the GEMM family's tests (t/gemm/gemm.c, t/sparse24/sparse24.c): test
 * matrices in every layout with their host copies and device buffers,
 * random fills, poisoned outputs and their gaps, and the long double
 * reference of the epilogue. Independent of libbk's own code. */
#ifndef BK_TEST_GEMM_REF_H
#define BK_TEST_GEMM_REF_H

#include "test_util.h"

enum tmat_layout {
    TMAT_ROW,              /* row-major, packed (described with all-zero strides) */
    TMAT_COL,              /* column-major, packed: strides {1, rows} */
    TMAT_ROW_PADDED,       /* row-major with a longer leading dimension */
    TMAT_COL_PADDED,
    TMAT_LAYOUT_COUNT
};
const char *tmat_layout_name(enum tmat_layout layout);
struct bkt_rng;
enum tmat_layout tmat_random_layout(struct bkt_rng *rng);

/* A rank-2 ([rows, cols]) or rank-3 ([batch, rows, cols]) test matrix. */
struct tmat {
    BkDataType type;
    uint32_t rank;
    int64_t batch, rows, cols;             /* batch 1 for rank 2 */
    int64_t row_stride, col_stride, batch_stride;
    enum tmat_layout layout;
    int64_t span;                          /* elements from the base to the last + 1 */
    uint64_t bytes;                        /* host and device buffer: span, rounded to 4 */
    void *host;
    struct bkt_buffer dev;
};

/* batch 0 makes a rank-2 matrix; padded layouts and rank 3 get random gaps
 * (rng). The host copy is zeroed; there is no device buffer yet. */
void tmat_init(struct tmat *m, BkDataType type, int64_t batch, int64_t rows, int64_t cols,
               enum tmat_layout layout, struct bkt_rng *rng);
/* Rank 3 whatever batch is (batch 0: an empty batched matrix). */
void tmat_init3(struct tmat *m, BkDataType type, int64_t batch, int64_t rows, int64_t cols,
                enum tmat_layout layout, struct bkt_rng *rng);
/* A copy of src's host buffer and layout, without a device buffer. */
void tmat_copy(struct tmat *dst, const struct tmat *src);
void tmat_free(BkContext ctx, struct tmat *m);
void tmat_desc(const struct tmat *m, BkTensorDesc *desc);
/* Element index of (b, i, j); b is ignored for rank 2 (a shared operand). */
int64_t tmat_index(const struct tmat *m, int64_t b, int64_t i, int64_t j);
/* Element (i, j) of a rank-2 matrix of any type, as bytes. */
void *tmat_elem(const struct tmat *m, int64_t i, int64_t j);
double tmat_get(const struct tmat *m, int64_t b, int64_t i, int64_t j);
void tmat_set(struct tmat *m, int64_t b, int64_t i, int64_t j, double v);
/* Every element random in [lo, hi], exactly representable in the type. */
void tmat_fill_random(struct tmat *m, struct bkt_rng *rng, double lo, double hi);
/* The whole host buffer set to BKT_POISON (gaps included). */
void tmat_poison(struct tmat *m);
/* Allocate the device buffer (once) and copy the host buffer to it. */
void tmat_upload(BkContext ctx, struct tmat *m);
void tmat_download(BkContext ctx, struct tmat *m);
/* Bytes of the host buffer that belong to no element and lost the poison. */
long tmat_gap_errors(const struct tmat *m);

/* ---- References -------------------------------------------------------- */
/* act(x) in long double: RELU max(x, 0), GELU-tanh 0.5 x (1 + tanh(u)). */
long double gemm_ref_activation(BkGemmActivation act, long double x);
const char *gemm_activation_name(BkGemmActivation act);

/* Tolerance of a sum of k products computed in the compute type of
 * input_type (f32, or f64 for f64) and rounded to out_type: k * eps of the
 * compute type times the size of the terms, plus an ulp of the output. */
struct bkt_tolerance gemm_tolerance(BkDataType input_type, BkDataType out_type, int64_t k);

/* Compare out (the downloaded result) with ref and scale, both indexed
 * [b][i][j] over out's shape; print the first few misses under label.
 * Returns how many elements missed plus gap bytes that lost the poison. */
long gemm_check(const struct tmat *out, const long double *ref, const double *scale,
                const double *slack, struct bkt_tolerance tol, const char *label);

#endif /* BK_TEST_GEMM_REF_H */
