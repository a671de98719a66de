/* SPDX-License-Identifier: Apache-2.0 */
/* Tensor descriptor validation: rank, extents, strides, byte span, and the
 * no-self-overlap rule for written tensors. */
#include "bk_internal.h"

#include <stdio.h>

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
    bool all_zero = true;
    for (uint32_t i = 0; i < desc->rank; i++) {
        if (desc->extent[i] < 0)
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.extent[%u] = %lld must not be negative",
                            name, i, (long long)desc->extent[i]);
        if (desc->stride[i] != 0)
            all_zero = false;
    }

    /* Row-major contiguous strides when all are zero; the products cannot
     * overflow unless the element count does, which is checked below. */
    int64_t count = 1;
    bool count_overflow = false;
    for (uint32_t k = desc->rank; k-- > 0;) {
        out->extent[k] = desc->extent[k];
        if (all_zero) {
            out->stride[k] = count;
        } else if (desc->stride[k] < 1) {
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.stride[%u] = %lld must be positive (or all strides 0 for "
                            "row-major contiguous)", name, k, (long long)desc->stride[k]);
        } else {
            out->stride[k] = desc->stride[k];
        }
        if (__builtin_mul_overflow(count, desc->extent[k], &count))
            count_overflow = true;
    }
    for (uint32_t k = desc->rank; k < BK_MAX_TENSOR_RANK; k++)
        out->extent[k] = 1, out->stride[k] = 0;

    for (uint32_t k = 0; k < desc->rank; k++)
        if (desc->extent[k] == 0) {
            out->count = 0;
            out->span = 0;
            return BK_SUCCESS;
        }
    if (count_overflow)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: the element count of the extents overflows 64 bits", name);

    /* span = (1 + sum (extent-1)*stride) * element size, all checked. */
    uint64_t last = 0, term;
    for (uint32_t k = 0; k < desc->rank; k++) {
        if (__builtin_mul_overflow((uint64_t)(out->extent[k] - 1), (uint64_t)out->stride[k], &term) ||
            __builtin_add_overflow(last, term, &last))
            goto too_big;
    }
    if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, elem, &out->span) ||
        out->span > (uint64_t)INT64_MAX)
        goto too_big;
    out->count = count;
    return BK_SUCCESS;
too_big:
    return bk_error(BK_ERROR_INVALID_ARGUMENT,
                    "%s: the extents and strides span more bytes than 64 bits can address", name);
}

/* Sort dimensions of extent > 1 by stride; the tensor never reaches one
 * element twice when each stride exceeds the furthest offset reachable
 * with the smaller ones. That is exact for the usual layouts (padded,
 * permuted) and rejects only exotic interleavings that could be valid. */
BkResult bk_tensor_check_no_self_overlap(const struct bk_tensor *t, const char *name)
{
    if (t->count == 0)
        return BK_SUCCESS;
    uint32_t dims[BK_MAX_TENSOR_RANK], n = 0;
    for (uint32_t k = 0; k < t->rank; k++) {
        if (t->extent[k] <= 1)
            continue;
        uint32_t j = n++;
        while (j > 0 && t->stride[dims[j - 1]] > t->stride[k]) {
            dims[j] = dims[j - 1];
            j--;
        }
        dims[j] = k;
    }
    int64_t reach = 0; /* furthest element offset reachable with dims[0..i) */
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = dims[i];
        if (t->stride[k] <= reach)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.stride[%u] = %lld makes the tensor overlap itself (it is "
                            "written, so no two indices may reach one element)",
                            name, k, (long long)t->stride[k]);
        reach += t->stride[k] * (t->extent[k] - 1);
    }
    return BK_SUCCESS;
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
