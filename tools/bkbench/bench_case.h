/* SPDX-License-Identifier: Apache-2.0 */
/* One benchmark case of bkbench: an op, its shape and dtype, which pool
 * buffer each binding uses, and the bytes and flops it must move. */
#ifndef BK_TOOL_BENCH_CASE_H
#define BK_TOOL_BENCH_CASE_H

#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "gated_op.h"

/* Buffers of one rotation set. Inputs are filled with random values of
 * the case's dtype; OUT is only written. */
enum bench_slot { BENCH_SLOT_IN0, BENCH_SLOT_IN1, BENCH_SLOT_OUT, BENCH_SLOT_COUNT };

#define BENCH_MAX_BINDINGS 4u

struct bench_case {
    const char *op;                   /* "gated-fwd" */
    const char *variant;              /* "swiglu" */
    BkDataType dtype;
    char shape[32];                   /* "16384x8192", "16384x8192 rs=12288" */
    int64_t extent[2];                /* the input's logical shape */
    int64_t row_stride;               /* 0 when contiguous */
    struct gated_op_desc gated;       /* what the plan is made from */
    uint32_t binding_count;
    enum bench_slot slot[BENCH_MAX_BINDINGS];
    uint64_t slot_bytes[BENCH_SLOT_COUNT];  /* bytes each slot must hold, 0 = unused */
    double bytes;                     /* inputs read once + outputs written once */
    double flops;                     /* 0: a memory-bound op, rated in GB/s */
    BkConvertInfo convert;            /* a conversion case when its sType is set */
};

/* Appends the gated-activation cases for input tensors of size_bytes:
 * every dtype x shape x (forward, backward) x kind, dtype outermost.
 * Returns how many it wrote (at most max), or exits if size_bytes is too
 * small for one row. */
size_t bench_gated_cases(uint64_t size_bytes, struct bench_case *out, size_t max);
/* The number of cases bench_gated_cases makes. */
size_t bench_gated_case_count(void);

/* Appends the conversion cases (bench_convert.c), at most max. */
size_t bench_convert_cases(uint64_t size_bytes, struct bench_case *out, size_t max);
size_t bench_convert_case_count(void);

/* The op info for bkCreatePlan; storage must outlive its use. */
const void *bench_case_operation(const struct bench_case *c, union gated_op_info *storage);

#endif /* BK_TOOL_BENCH_CASE_H */
