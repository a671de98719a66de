/* SPDX-License-Identifier: Apache-2.0 */
/* Matrix operands of the GEMM family: a validated rank-2 or rank-3 tensor
 * seen as [rows, cols] (transposed on request), and the BLAS layout rule
 * that cuBLASLt-style GEMMs need. */
#include "bk_internal.h"

#include <stdio.h>

BkResult bk_matrix_from_tensor(const struct bk_tensor *t, const char *name, bool trans,
                               bool blas, struct bk_matrix *out)
{
    if (t->rank != 2 && t->rank != 3)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.rank = %u must be 2 ([rows, cols]) or 3 ([batch, rows, cols])", name,
                        t->rank);
    const uint32_t r = t->rank - 2, c = t->rank - 1; /* the row and column dimensions */
    *out = (struct bk_matrix){
        .type = t->type,
        .rows = t->extent[r], .cols = t->extent[c],
        .row_stride = t->stride[r], .col_stride = t->stride[c],
        .batch_stride = t->rank == 3 ? t->stride[0] : 0,
    };
    if (t->count == 0) { /* no element is reached: any layout will do */
        out->row_stride = out->cols > 0 ? out->cols : 1;
        out->col_stride = 1;
        bool ovf = false; /* cannot: rows x cols fits (bk_tensor_from_desc) */
        out->batch_stride = t->rank == 3 ? bk_mul_i64(out->rows, out->row_stride, &ovf) : 0;
        if (ovf)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s: extent[1] x extent[2] = %lld x %lld (the batch stride) overflows "
                            "64 bits", name, (long long)out->rows, (long long)out->cols);
    }
    if (!blas)
        goto done;
    /* A stride that steps over an extent of 1 is never used: make it the
     * one BLAS expects, so a row or column vector takes either layout. */
    if (out->rows == 1 && out->col_stride != 1)
        out->row_stride = 1;
    if (out->cols == 1 && out->row_stride != 1)
        out->col_stride = 1;
    if (out->rows == 1 && out->cols == 1)
        out->row_stride = out->col_stride = 1;
    if (out->col_stride == 1) {        /* row-major: the row stride is the leading dimension */
        if (out->row_stride < out->cols && out->rows > 1)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.stride[%u] = %lld (the leading dimension of a row-major matrix) "
                            "must be at least extent[%u] = %lld", name, r,
                            (long long)out->row_stride, c, (long long)out->cols);
        if (out->rows == 1 && out->row_stride < out->cols)
            out->row_stride = out->cols;
    } else if (out->row_stride == 1) { /* column-major */
        if (out->cols == 1 && out->col_stride < out->rows)
            out->col_stride = out->rows;
        if (out->col_stride < out->rows)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.stride[%u] = %lld (the leading dimension of a column-major "
                            "matrix) must be at least extent[%u] = %lld", name, c,
                            (long long)out->col_stride, r, (long long)out->rows);
    } else {
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: stride[%u] = %lld or stride[%u] = %lld must be 1 (a row-major or "
                        "column-major matrix)", name, r, (long long)out->row_stride, c,
                        (long long)out->col_stride);
    }
done:
    if (trans) {
        int64_t e = out->rows, s = out->row_stride;
        out->rows = out->cols, out->row_stride = out->col_stride;
        out->cols = e, out->col_stride = s;
    }
    return BK_SUCCESS;
}

BkResult bk_matrix_field(const char *info, const char *field, const BkTensorDesc *desc,
                         struct bk_tensor *t, struct bk_matrix *m)
{
    BkResult r = bk_tensor_field(info, field, desc, 2, t);
    if (r != BK_SUCCESS)
        return r;
    char name[96];
    snprintf(name, sizeof name, "%s.%s", info, field);
    return bk_matrix_from_tensor(t, name, false, false, m);
}

BkResult bk_check_written_field(const char *info, const char *field, const struct bk_tensor *t)
{
    char name[96];
    snprintf(name, sizeof name, "%s.%s", info, field);
    return bk_tensor_check_no_self_overlap(t, name);
}
