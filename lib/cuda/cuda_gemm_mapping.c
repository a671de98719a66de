/* SPDX-License-Identifier: Apache-2.0 */
/* How a dense GEMM is laid out for cuBLASLt: each operand as a view in
 * one memory order, A and B swapped or not (cuda_gemm.h says why). */
#include "cuda_gemm.h"

static struct bk_matrix transposed(const struct bk_matrix *x)
{
    struct bk_matrix t = *x;
    t.rows = x->cols;
    t.cols = x->rows;
    t.row_stride = x->col_stride;
    t.col_stride = x->row_stride;
    return t;
}

/* x as stored in memory order `order`, untransposed; false when its
 * strides do not allow it. */
static bool view_direct(const struct bk_matrix *x, int32_t order, struct lt_view *v)
{
    const bool col = order == BK_LT_ORDER_COL;
    const int64_t inner_n = col ? x->rows : x->cols, outer_n = col ? x->cols : x->rows;
    const int64_t inner_s = col ? x->row_stride : x->col_stride;
    const int64_t min_ld = inner_n > 1 ? inner_n : 1;
    if (inner_n > 1 && inner_s != 1)
        return false;
    int64_t ld = col ? x->col_stride : x->row_stride;
    if (outer_n <= 1) /* never stepped over: one that keeps 16-byte steps */
        ld = bk_cuda_gemm_round_up(min_ld, 16 / (int64_t)bk_data_type_size(x->type));
    if (ld < min_ld)
        return false;
    *v = (struct lt_view){
        .rows = (uint64_t)x->rows, .cols = (uint64_t)x->cols,
        .ld = ld, .batch_stride = x->batch_stride, .op = BK_LT_OP_N,
    };
    return true;
}

bool bk_cuda_gemm_steps_aligned16(const struct lt_view *v, size_t esize)
{
    return (uint64_t)v->ld * esize % 16 == 0 && (uint64_t)v->batch_stride * esize % 16 == 0;
}

/* An input as stored or transposed, preferring the one whose steps keep
 * 16-byte alignment (a vector takes either). */
static bool view_input(const struct bk_matrix *x, int32_t order, struct lt_view *v)
{
    const size_t esize = bk_data_type_size(x->type);
    const struct bk_matrix t = transposed(x);
    struct lt_view direct, trans;
    const bool has_direct = view_direct(x, order, &direct);
    const bool has_trans = view_direct(&t, order, &trans);
    trans.op = BK_LT_OP_T;
    if (has_direct && (!has_trans || bk_cuda_gemm_steps_aligned16(&direct, esize) ||
                       !bk_cuda_gemm_steps_aligned16(&trans, esize))) {
        *v = direct;
        return true;
    }
    if (has_trans)
        *v = trans;
    return has_trans;
}

/* The first candidate (swap, order) that C and D fit, for cuBLASLt adding
 * the bias (biased) or not; a and b are the logical A and B (k == 0: the
 * zeroed stand-ins). use_c false: cuBLASLt's C is D. */
static bool find_mapping(const struct bk_gemm_problem *p, const struct bk_matrix *a,
                         const struct bk_matrix *b, bool use_c, bool biased, struct lt_mapping *m)
{
    static const struct {
        bool swap;
        int32_t order;
    } plain[] = { { false, BK_LT_ORDER_COL }, { true, BK_LT_ORDER_COL } },
      with_bias[] = { { true, BK_LT_ORDER_COL }, { true, BK_LT_ORDER_ROW } };
    for (size_t i = 0; i < 2; i++) {
        m->swap = biased ? with_bias[i].swap : plain[i].swap;
        m->order = biased ? with_bias[i].order : plain[i].order;
        const struct bk_matrix d = m->swap ? transposed(&p->d) : p->d;
        const struct bk_matrix c = m->swap ? transposed(&p->c) : p->c;
        const struct bk_matrix la = m->swap ? transposed(b) : *a;
        const struct bk_matrix lb = m->swap ? transposed(a) : *b;
        if (!view_direct(&d, m->order, &m->view[D]))
            continue;
        if (!use_c)
            m->view[C] = m->view[D];
        else if (!view_direct(&c, m->order, &m->view[C]))
            continue;
        if (view_input(&la, m->order, &m->view[A]) && view_input(&lb, m->order, &m->view[B])) {
            if (p->batch == 1) /* never stepped over */
                for (int k = 0; k < OPERANDS; k++)
                    m->view[k].batch_stride = 0;
            return true;
        }
    }
    return false;
}

BkResult bk_cuda_gemm_choose_mapping(BkPlan plan, const struct bk_matrix *a,
                                     const struct bk_matrix *b, bool biased, struct lt_mapping *m,
                                     bool *copy_c)
{
    const struct bk_gemm_problem *p = &plan->problem.gemm;
    const bool use_c = p->has_c && p->beta != 0;
    *copy_c = false;
    if (find_mapping(p, a, b, use_c, biased, m))
        return BK_SUCCESS;
    if (use_c && find_mapping(p, a, b, false, biased, m)) {
        *copy_c = true;
        return BK_SUCCESS;
    }
    /* D, A or B without a unit stride: no order of cuBLASLt fits. */
    return bk_error(BK_ERROR_UNSUPPORTED,
                    "%s: d has strides (%lld, %lld), op(a) (%lld, %lld), op(b) (%lld, %lld): the "
                    "CUDA backend needs a, b and d row- or column-major (a unit stride)",
                    plan->op_name, (long long)p->d.row_stride, (long long)p->d.col_stride,
                    (long long)p->a.row_stride, (long long)p->a.col_stride,
                    (long long)p->b.row_stride, (long long)p->b.col_stride);
}

