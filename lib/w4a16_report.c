/* SPDX-License-Identifier: Apache-2.0 */
/* bkCheckW4A16RepackReport: a GPTQ repack's report as a BkResult and a
 * message that says where the checkpoint breaks the rules. */
#include "bk_internal.h"

BK_API BkResult bkCheckW4A16RepackReport(const BkW4A16RepackReport *pReport)
{
    if (!pReport)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "bkCheckW4A16RepackReport: pReport is NULL");
    const BkW4A16RepackReport *r = pReport;
    const unsigned long long row = (unsigned long long)r->firstBadRow;
    const unsigned long long count = (unsigned long long)r->badCount;
    switch (r->status) {
    case BK_W4A16_REPACK_STATUS_OK:
        return BK_SUCCESS;
    case BK_W4A16_REPACK_STATUS_ASYMMETRIC:
        /* The report has room for where, not for the value found. */
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "BkW4A16RepackReport: asymmetric zero points are not supported: group "
                        "%llu, column %llu has a zero point other than 8 (%llu such entr%s; the "
                        "report records where, not the value found). The zero point is the "
                        "qzeros nibble, plus 1 with BK_W4A16_GPTQ_ZEROS_MINUS_ONE: if the "
                        "checkpoint is AutoGPTQ's legacy form, which stores zero point - 1 (7), "
                        "repack with BK_W4A16_GPTQ_ZEROS_MINUS_ONE",
                        row, (unsigned long long)r->firstBadColumn, count,
                        count == 1 ? "y" : "ies");
    case BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX:
        /* firstBadColumn holds the I32 value sign-extended. */
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkW4A16RepackReport: gIdx[%llu] = %lld is not a group index in 0..G-1 "
                        "(%llu such row%s)", row, (long long)(int64_t)r->firstBadColumn, count,
                        count == 1 ? "" : "s");
    case BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS:
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkW4A16RepackReport: group %llu of gIdx has %llu rows, but every group "
                        "must have groupSize rows (%llu such group%s)",
                        row, (unsigned long long)r->firstBadColumn, count, count == 1 ? "" : "s");
    default:
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "BkW4A16RepackReport.status = %u is not a BkW4A16RepackStatus",
                        r->status);
    }
}
