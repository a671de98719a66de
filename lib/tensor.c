/* SPDX-License-Identifier: Apache-2.0 */
/* Tensor descriptor validation: rank, extents, strides, byte span, and the
 * no-self-overlap rule for written tensors. */
#include "bk_internal.h"

#include <stdio.h>
#include <string.h>

/* The size rules hold for every tensor, empty or not: the element count
 * and the byte span are computed with each extent of 0 read as 1, so an
 * empty tensor's other extents and strides are as bounded as a non-empty
 * one's and no later product of them can overflow (bk(7), Tensors). */
BkResult bk_tensor_from_desc(const BkTensorDesc *desc, const char *name, struct bk_tensor *out)
{
    size_t elem = bk_data_type_size(desc->dataType);
    if (elem == 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.dataType = %d is not a BkDataType a tensor can have", name,
                        (int)desc->dataType);
    if (desc->rank < 1 || desc->rank > BK_MAX_TENSOR_RANK)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.rank = %u must be in 1..%u", name,
                        desc->rank, BK_MAX_TENSOR_RANK);

    out->type = desc->dataType;
    out->rank = desc->rank;
    bool all_zero = true, empty = false;
    for (uint32_t i = 0; i < desc->rank; i++) {
        if (desc->extent[i] < 0)
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.extent[%u] = %lld must not be negative",
                            name, i, (long long)desc->extent[i]);
        if (desc->stride[i] != 0)
            all_zero = false;
        empty |= desc->extent[i] == 0;
    }

    /* Row-major contiguous strides when all are zero (an empty tensor's
     * outer ones are 0: it reaches no element). count: the element count
     * with zero extents read as 1. */
    int64_t count = 1, contiguous = 1;
    bool overflow = false;
    for (uint32_t k = desc->rank; k-- > 0;) {
        out->extent[k] = desc->extent[k];
        if (all_zero) {
            out->stride[k] = contiguous;
        } else if (desc->stride[k] < 1) {
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.stride[%u] = %lld must be positive (or all strides 0 for "
                            "row-major contiguous)", name, k, (long long)desc->stride[k]);
        } else {
            out->stride[k] = desc->stride[k];
        }
        count = bk_mul_i64(count, desc->extent[k] ? desc->extent[k] : 1, &overflow);
        if (overflow)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.extent[%u] = %lld: the element count of the extents overflows "
                            "64 bits%s", name, k, (long long)desc->extent[k],
                            empty ? " (an extent of 0 does not lift the limit on the others)"
                                  : "");
        contiguous *= desc->extent[k]; /* at most count: cannot overflow */
    }
    for (uint32_t k = desc->rank; k < BK_MAX_TENSOR_RANK; k++)
        out->extent[k] = 1, out->stride[k] = 0;

    /* span = (1 + sum (extent-1)*stride) * element size, all checked; the
     * strides of an empty contiguous tensor are those of its non-empty
     * twin (count's), so the products stay within count. */
    uint64_t last = 0, twin = 1;
    for (uint32_t k = desc->rank; k-- > 0;) {
        const int64_t e = desc->extent[k] ? desc->extent[k] : 1;
        const uint64_t s = all_zero ? twin : (uint64_t)out->stride[k];
        last = bk_add_u64(last, bk_mul_u64((uint64_t)(e - 1), s, &overflow), &overflow);
        twin *= (uint64_t)e; /* at most count */
    }
    uint64_t span = bk_mul_u64(bk_add_u64(last, 1, &overflow), elem, &overflow);
    if (overflow || span > (uint64_t)INT64_MAX)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: the extents and strides span more bytes than 64 bits can "
                        "address%s", name,
                        empty ? " (an extent of 0 does not lift the limit on the others)" : "");
    out->count = empty ? 0 : count;
    out->span = empty ? 0 : span;
    return BK_SUCCESS;
}

/* Whether a written tensor reaches one element twice, decided exactly:
 * indices x != y reach one element when their difference d = x - y
 * (|d[k]| < extent[k]) has sum d[k] * stride[k] = 0. A depth-first search
 * over d, largest stride first, keeps only the values of d[k] that the
 * smaller strides can still cancel (their reach), and takes the first
 * nonzero d[k] positive (d and -d are one pair). A nested layout (each
 * stride beyond the reach of the smaller ones: padded, permuted) leaves
 * one path; an interleaved one such as strides {3, 2} over [2, 4] a few.
 * Layouts the search cannot settle within OVERLAP_STEPS are refused with
 * a message saying so (bk(7), Tensors). */
#define OVERLAP_STEPS 100000

#ifdef __SIZEOF_INT128__
__extension__ typedef __int128 wide_t;
#define WIDE_OK(reach) ((void)(reach), true)
#else
typedef int64_t wide_t; /* |R - T| <= 2 * reach must fit */
#define WIDE_OK(reach) ((reach) <= INT64_MAX / 2)
#endif

enum overlap { OVERLAP_NONE, OVERLAP_FOUND, OVERLAP_UNKNOWN };

struct overlap_search {
    uint32_t n;                          /* dims of extent > 1 */
    uint32_t dim[BK_MAX_TENSOR_RANK];    /* by decreasing stride */
    int64_t stride[BK_MAX_TENSOR_RANK], max_d[BK_MAX_TENSOR_RANK];
    int64_t reach_after[BK_MAX_TENSOR_RANK]; /* sum over smaller strides of (extent-1)*stride */
    int64_t d[BK_MAX_TENSOR_RANK];
    long steps;
};

static wide_t floor_div(wide_t a, wide_t b) /* b > 0 */
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static enum overlap search(struct overlap_search *s, uint32_t i, wide_t target, bool nonzero)
{
    if (++s->steps > OVERLAP_STEPS)
        return OVERLAP_UNKNOWN;
    if (i == s->n)
        return target == 0 && nonzero ? OVERLAP_FOUND : OVERLAP_NONE;
    const wide_t reach = s->reach_after[i], st = s->stride[i];
    wide_t lo = -floor_div(reach + target, st), hi = floor_div(reach - target, st);
    if (lo < -s->max_d[i])
        lo = -s->max_d[i];
    if (hi > s->max_d[i])
        hi = s->max_d[i];
    if (!nonzero && lo < 0)
        lo = 0;
    for (wide_t v = lo; v <= hi; v++) {
        s->d[i] = (int64_t)v;
        enum overlap o = search(s, i + 1, target + v * st, nonzero || v != 0);
        if (o != OVERLAP_NONE)
            return o;
    }
    return OVERLAP_NONE;
}

/* "[i0, i1, ...]" for messages. */
static void format_index(char *buf, size_t size, const int64_t *idx, uint32_t rank)
{
    size_t at = 0;
    for (uint32_t k = 0; k < rank && at < size; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", k ? ", " : "[", (long long)idx[k]);
    if (at < size)
        snprintf(buf + at, size - at, "]");
}

BkResult bk_tensor_check_no_self_overlap(const struct bk_tensor *t, const char *name)
{
    if (t->count == 0)
        return BK_SUCCESS;
    struct overlap_search s = { .n = 0 };
    for (uint32_t k = 0; k < t->rank; k++) {
        if (t->extent[k] <= 1)
            continue;
        uint32_t j = s.n++;
        while (j > 0 && t->stride[s.dim[j - 1]] < t->stride[k]) {
            s.dim[j] = s.dim[j - 1];
            j--;
        }
        s.dim[j] = k;
    }
    /* Offsets stay below span / element size, so these sums fit. */
    int64_t reach = 0;
    bool nested = true;
    for (uint32_t i = s.n; i-- > 0;) {
        const uint32_t k = s.dim[i];
        s.stride[i] = t->stride[k];
        s.max_d[i] = t->extent[k] - 1;
        s.reach_after[i] = reach;
        nested &= t->stride[k] > reach;
        reach += t->stride[k] * (t->extent[k] - 1);
    }
    if (nested)
        return BK_SUCCESS;
    enum overlap o = WIDE_OK(reach) ? search(&s, 0, 0, false) : OVERLAP_UNKNOWN;
    if (o == OVERLAP_NONE)
        return BK_SUCCESS;
    if (o == OVERLAP_UNKNOWN)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.stride: the layout interleaves its dimensions too finely for libbk "
                        "to show within %d steps that no two indices reach one element (it is "
                        "written); refused, as bk(7) says", name, OVERLAP_STEPS);
    int64_t x[BK_MAX_TENSOR_RANK] = { 0 }, y[BK_MAX_TENSOR_RANK] = { 0 };
    for (uint32_t i = 0; i < s.n; i++) {
        x[s.dim[i]] = s.d[i] > 0 ? s.d[i] : 0;
        y[s.dim[i]] = s.d[i] < 0 ? -s.d[i] : 0;
    }
    char xs[192], ys[192];
    format_index(xs, sizeof xs, x, t->rank);
    format_index(ys, sizeof ys, y, t->rank);
    uint32_t top = 0; /* the largest stride the pair differs along */
    while (s.d[top] == 0)
        top++;
    return bk_error(BK_ERROR_INVALID_ARGUMENT,
                    "%s.stride[%u] = %lld makes indices %s and %s reach one element: the "
                    "tensor overlaps itself (it is written, so no two indices may reach one "
                    "element)", name, s.dim[top], (long long)s.stride[top], xs, ys);
}

BkResult bk_tensor_field(const char *info, const char *field, const BkTensorDesc *desc,
                         uint32_t rank, struct bk_tensor *t)
{
    char name[96];
    snprintf(name, sizeof name, "%s.%s", info, field);
    BkResult r = bk_tensor_from_desc(desc, name, t);
    if (r != BK_SUCCESS)
        return r;
    if (t->rank != rank)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.rank = %u must be %u", name, t->rank, rank);
    return BK_SUCCESS;
}

BkResult bk_check_absent_field(const char *info, const char *field, const BkTensorDesc *desc,
                               const char *user)
{
    if (bk_desc_absent(desc))
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT,
                    "%s.%s.dataType = %s: the tensor must be left zeroed (dataType UNDEFINED) "
                    "for %s, which does not use it", info, field,
                    bk_data_type_name(desc->dataType), user);
}
