/* SPDX-License-Identifier: Apache-2.0 */
/* Test matrices and references of the GEMM family: see gemm_ref.h. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_ref.h"

const char *tmat_layout_name(enum tmat_layout layout)
{
    static const char *const names[] = { "row", "col", "row+pad", "col+pad" };
    return layout < TMAT_LAYOUT_COUNT ? names[layout] : "?";
}

enum tmat_layout tmat_random_layout(struct bkt_rng *rng)
{
    return (enum tmat_layout)bkt_rand_int(rng, 0, TMAT_LAYOUT_COUNT - 1);
}

static void init(struct tmat *m, BkDataType type, uint32_t rank, int64_t batch, int64_t rows,
                 int64_t cols, enum tmat_layout layout, struct bkt_rng *rng)
{
    memset(m, 0, sizeof *m);
    m->type = type;
    m->rank = rank;
    m->batch = batch;
    m->rows = rows;
    m->cols = cols;
    m->layout = layout;
    const bool col = layout == TMAT_COL || layout == TMAT_COL_PADDED;
    const bool padded = layout == TMAT_ROW_PADDED || layout == TMAT_COL_PADDED;
    const int64_t pad = padded ? bkt_rand_int(rng, 1, 3) : 0;
    if (col) {
        m->row_stride = 1;
        m->col_stride = (rows > 0 ? rows : 1) + pad;
    } else {
        m->col_stride = 1;
        m->row_stride = (cols > 0 ? cols : 1) + pad;
    }
    const int64_t one = rows > 0 && cols > 0 ? (rows - 1) * m->row_stride +
                                                   (cols - 1) * m->col_stride + 1 : 0;
    /* Packed row-major is described by zero strides: no gap between batches. */
    m->batch_stride = layout == TMAT_ROW ? rows * cols : one + bkt_rand_int(rng, 0, 3);
    m->span = one > 0 && m->batch > 0 ? (m->batch - 1) * m->batch_stride + one : 0;
    m->bytes = ((uint64_t)m->span * bkt_type_size(type) + 3) / 4 * 4;
    if (m->bytes == 0)
        m->bytes = 4;
    m->host = calloc(1, m->bytes);
    if (!m->host)
        tap_bail("out of memory for %llu bytes", (unsigned long long)m->bytes);
}

void tmat_init(struct tmat *m, BkDataType type, int64_t batch, int64_t rows, int64_t cols,
               enum tmat_layout layout, struct bkt_rng *rng)
{
    init(m, type, batch ? 3 : 2, batch ? batch : 1, rows, cols, layout, rng);
}

void tmat_init3(struct tmat *m, BkDataType type, int64_t batch, int64_t rows, int64_t cols,
                enum tmat_layout layout, struct bkt_rng *rng)
{
    init(m, type, 3, batch, rows, cols, layout, rng);
}

void tmat_copy(struct tmat *dst, const struct tmat *src)
{
    *dst = *src;
    memset(&dst->dev, 0, sizeof dst->dev);
    dst->host = malloc(src->bytes);
    if (!dst->host)
        tap_bail("out of memory for %llu bytes", (unsigned long long)src->bytes);
    memcpy(dst->host, src->host, src->bytes);
}

void tmat_free(BkContext ctx, struct tmat *m)
{
    if (m->dev.memory)
        bkt_free(ctx, &m->dev);
    free(m->host);
    memset(m, 0, sizeof *m);
}

void tmat_desc(const struct tmat *m, BkTensorDesc *desc)
{
    memset(desc, 0, sizeof *desc);
    desc->dataType = m->type;
    desc->rank = m->rank;
    const uint32_t r = m->rank - 2;
    if (m->rank == 3)
        desc->extent[0] = m->batch;
    desc->extent[r] = m->rows;
    desc->extent[r + 1] = m->cols;
    if (m->layout == TMAT_ROW)
        return;
    if (m->rank == 3)
        desc->stride[0] = m->batch_stride;
    desc->stride[r] = m->row_stride;
    desc->stride[r + 1] = m->col_stride;
}

int64_t tmat_index(const struct tmat *m, int64_t b, int64_t i, int64_t j)
{
    return (m->rank == 3 ? b * m->batch_stride : 0) + i * m->row_stride + j * m->col_stride;
}

void *tmat_elem(const struct tmat *m, int64_t i, int64_t j)
{
    return (char *)m->host + tmat_index(m, 0, i, j) * (int64_t)bkt_type_size(m->type);
}

double tmat_get(const struct tmat *m, int64_t b, int64_t i, int64_t j)
{
    return bkt_load(m->host, m->type, tmat_index(m, b, i, j));
}

void tmat_set(struct tmat *m, int64_t b, int64_t i, int64_t j, double v)
{
    bkt_store(m->host, m->type, tmat_index(m, b, i, j), v);
}

void tmat_fill_random(struct tmat *m, struct bkt_rng *rng, double lo, double hi)
{
    for (int64_t b = 0; b < m->batch; b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++)
                tmat_set(m, b, i, j, bkt_rand_value(rng, m->type, lo, hi));
}

void tmat_poison(struct tmat *m)
{
    const uint32_t poison = BKT_POISON;
    for (uint64_t i = 0; i < m->bytes; i += 4)
        memcpy((char *)m->host + i, &poison, 4);
}

void tmat_upload(BkContext ctx, struct tmat *m)
{
    if (!m->dev.memory)
        m->dev = bkt_alloc(ctx, m->bytes);
    bkt_upload(ctx, m->dev.address, m->host, m->bytes);
}

void tmat_download(BkContext ctx, struct tmat *m)
{
    bkt_download(ctx, m->host, m->dev.address, m->bytes);
}

long tmat_gap_errors(const struct tmat *m)
{
    const size_t es = bkt_type_size(m->type);
    unsigned char *used = calloc(1, m->bytes);
    if (!used)
        tap_bail("out of memory");
    for (int64_t b = 0; b < m->batch; b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++)
                memset(used + (size_t)tmat_index(m, b, i, j) * es, 1, es);
    const uint32_t poison = BKT_POISON;
    const unsigned char *p = m->host, *pat = (const unsigned char *)&poison;
    long bad = 0;
    for (uint64_t i = 0; i < m->bytes; i++)
        bad += !used[i] && p[i] != pat[i % 4];
    free(used);
    return bad;
}

/* ---- References -------------------------------------------------------- */

long double gemm_ref_activation(BkGemmActivation act, long double x)
{
    switch (act) {
    case BK_GEMM_ACTIVATION_RELU:
        return x > 0 ? x : 0.0L;
    case BK_GEMM_ACTIVATION_GELU_TANH: {
        const long double u = sqrtl(2.0L / acosl(-1.0L)) * (x + 0.044715L * x * x * x);
        return 0.5L * x * (1.0L + tanhl(u));
    }
    default:
        return x;
    }
}

const char *gemm_activation_name(BkGemmActivation act)
{
    switch (act) {
    case BK_GEMM_ACTIVATION_RELU: return "relu";
    case BK_GEMM_ACTIVATION_GELU_TANH: return "gelu_tanh";
    default: return "none";
    }
}

struct bkt_tolerance gemm_tolerance(BkDataType input_type, BkDataType out_type, int64_t k)
{
    (void)out_type;   /* its rounding is the ulp term */
    const double eps = input_type == BK_DATA_TYPE_F64 ? 0x1p-53 : 0x1p-24;
    /* k roundings of the running sum, a few of the epilogue; x2 margin. */
    return (struct bkt_tolerance){ .rel = 0, .abs = 2.0 * (double)(k + 8) * eps, .ulps = 1 };
}

long gemm_check(const struct tmat *out, const long double *ref, const double *scale,
                const double *slack, struct bkt_tolerance tol, const char *label)
{
    long bad = 0;
    for (int64_t b = 0; b < out->batch; b++)
        for (int64_t i = 0; i < out->rows; i++)
            for (int64_t j = 0; j < out->cols; j++) {
                const int64_t e = (b * out->rows + i) * out->cols + j;
                const double got = tmat_get(out, b, i, j);
                /* tol.abs > 0: the slack joins the absolute term. */
                const double extra = slack ? slack[e] / tol.abs : 0;
                if (bkt_close(ref[e], got, out->type, tol, scale[e] + extra))
                    continue;
                if (bad++ < 4)
                    tap_diag("%s: [%lld, %lld, %lld] expected %.10Lg, got %.10g (scale %.3g)",
                             label, (long long)b, (long long)i, (long long)j, ref[e], got,
                             scale[e]);
            }
    const long gaps = tmat_gap_errors(out);
    if (gaps)
        tap_diag("%s: %ld bytes between elements lost the poison", label, gaps);
    return bad + gaps;
}
