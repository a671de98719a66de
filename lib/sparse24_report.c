/* SPDX-License-Identifier: Apache-2.0 */
/* bkCheckSparse24Report: a conversion plan's report as a BkResult and a
 * message that says where the weight breaks the 2:4 rules. */
#include "bk_internal.h"

BK_API BkResult bkCheckSparse24Report(const BkSparse24Report *pReport)
{
    if (!pReport)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkCheckSparse24Report: pReport is NULL");
    const BkSparse24Report *r = pReport;
    const unsigned long long row = (unsigned long long)r->firstBadRow;
    const unsigned long long group = (unsigned long long)r->firstBadGroup;
    const unsigned long long count = (unsigned long long)r->badGroupCount;
    switch (r->status) {
    case BK_SPARSE24_STATUS_OK:
        return BK_SUCCESS;
    case BK_SPARSE24_STATUS_TOO_MANY_NONZEROS:
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkSparse24Report: the weight is not 2:4 sparse: row %llu, group %llu "
                        "(columns %llu..%llu) has more than 2 non-zeros (%llu such group%s); "
                        "prune it (BK_SPARSE24_COMPRESS_PRUNE) or fix the weight",
                        row, group, 4 * group, 4 * group + 3, count, count == 1 ? "" : "s");
    case BK_SPARSE24_STATUS_BAD_METADATA:
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkSparse24Report: corrupt metadata: row %llu, group %llu (columns "
                        "%llu..%llu) does not hold two increasing positions in bits 0-3 with "
                        "bits 4-7 zero (%llu such group%s)",
                        row, group, 4 * group, 4 * group + 3, count, count == 1 ? "" : "s");
    default:
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkSparse24Report.status = %u is not a BkSparse24Status", r->status);
    }
}
