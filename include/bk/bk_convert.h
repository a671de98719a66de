/* SPDX-License-Identifier: Apache-2.0 */
/* Type conversion: copy a tensor into another of another data type (or
 * the same), any strides. See bk-convert(7). */
#ifndef BK_CONVERT_H
#define BK_CONVERT_H

#include <bk/bk_core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* output = input converted element by element. Both have the same rank
 * (1..8) and extents and any positive strides (or all zero: row-major
 * contiguous). Types: F32, F64, F16, BF16, I32, U32, U16, I8 and U8, in
 * any pair. Every input value is exact in F64; it is rounded once to the
 * nearest value of the output type, ties to even. Floating-point outputs
 * keep infinities and NaN (a NaN stays a NaN) and overflow to infinity;
 * integer outputs saturate to their range and take 0 for NaN. The same
 * type in and out copies the bits. The output may not overlap the input.
 * Binding slots: 0 = input, 1 = output. */
typedef struct BkConvertInfo {
    BkStructureType sType;              /* BK_STRUCTURE_TYPE_CONVERT_INFO */
    const void *pNext;
    uint32_t flags;                     /* reserved, 0 */
    uint32_t reserved;                  /* 0 */
    BkTensorDesc input;
    BkTensorDesc output;                /* input's rank and extents, written */
} BkConvertInfo;

enum {
    BK_CONVERT_BINDING_INPUT = 0,
    BK_CONVERT_BINDING_OUTPUT = 1
};

#ifdef __cplusplus
}
#endif
#endif /* BK_CONVERT_H */
