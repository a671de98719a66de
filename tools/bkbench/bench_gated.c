/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's gated-activation cases: [tokens, 2*hidden] split on the last
 * axis, for hidden 4096 and 8192, plus the input as a view into a wider
 * [tokens, 3*hidden] buffer (as when gate and up projections share a
 * fused matmul output), the strided case. */
#include <stdio.h>

#include "bench_case.h"
#include "tool_common.h"

struct gated_shape {
    int64_t hidden;
    int64_t row_factor;               /* row stride = row_factor * hidden, 0 = contiguous */
};

static const struct gated_shape shapes[] = {{4096, 0}, {8192, 0}, {4096, 3}};
#define SHAPE_COUNT (sizeof shapes / sizeof shapes[0])

size_t bench_gated_case_count(void)
{
    return GATED_DTYPE_COUNT * SHAPE_COUNT * 2 * GATED_KIND_COUNT;
}

static void fill_case(struct bench_case *c, bool backward, BkGatedActivationKind kind,
                      BkDataType dtype, const struct gated_shape *s, uint64_t size_bytes)
{
    uint64_t es = tool_dtype_size(dtype);
    int64_t tokens = (int64_t)(size_bytes / (2u * (uint64_t)s->hidden * es));
    if (tokens < 1)
        tool_die("--size-mib: %.3f MiB holds no row of %lld %s values", size_bytes / 1048576.0,
                 (long long)(2 * s->hidden), tool_dtype_name(dtype));
    int64_t rs = s->row_factor * s->hidden;
    int64_t x_row = rs ? rs : 2 * s->hidden;
    uint64_t x_bytes = (uint64_t)((tokens - 1) * x_row + 2 * s->hidden) * es;  /* span */
    uint64_t half = (uint64_t)(tokens * s->hidden) * es;                        /* y, dy */

    *c = (struct bench_case){0};
    c->op = gated_op_name(backward);
    c->variant = tool_kind_name(kind);
    c->dtype = dtype;
    c->extent[0] = tokens;
    c->extent[1] = 2 * s->hidden;
    c->row_stride = rs;
    if (rs)
        snprintf(c->shape, sizeof c->shape, "%lldx%lld rs=%lld", (long long)tokens,
                 (long long)(2 * s->hidden), (long long)rs);
    else
        snprintf(c->shape, sizeof c->shape, "%lldx%lld", (long long)tokens,
                 (long long)(2 * s->hidden));
    c->gated = (struct gated_op_desc){backward, kind, dtype, tokens, s->hidden, rs};

    if (backward) {
        /* x (slot IN0), dy (IN1) -> dx (OUT, with x's layout) */
        c->binding_count = 3;
        c->slot[BK_GATED_ACTIVATION_BACKWARD_BINDING_INPUT] = BENCH_SLOT_IN0;
        c->slot[BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_OUTPUT] = BENCH_SLOT_IN1;
        c->slot[BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_INPUT] = BENCH_SLOT_OUT;
        c->slot_bytes[BENCH_SLOT_IN0] = x_bytes;
        c->slot_bytes[BENCH_SLOT_IN1] = half;
        c->slot_bytes[BENCH_SLOT_OUT] = x_bytes;
        c->bytes = 5.0 * (double)half;   /* read x (2) + dy (1), write dx (2) */
    } else {
        c->binding_count = 2;
        c->slot[BK_GATED_ACTIVATION_BINDING_INPUT] = BENCH_SLOT_IN0;
        c->slot[BK_GATED_ACTIVATION_BINDING_OUTPUT] = BENCH_SLOT_OUT;
        c->slot_bytes[BENCH_SLOT_IN0] = x_bytes;
        c->slot_bytes[BENCH_SLOT_OUT] = half;
        c->bytes = 3.0 * (double)half;   /* read x (2), write y (1) */
    }
    c->flops = 0.0;
}

size_t bench_gated_cases(uint64_t size_bytes, struct bench_case *out, size_t max)
{
    size_t n = 0;
    for (uint32_t t = 0; t < GATED_DTYPE_COUNT; t++)
        for (size_t s = 0; s < SHAPE_COUNT; s++)
            for (int backward = 0; backward < 2; backward++)
                for (uint32_t k = 0; k < GATED_KIND_COUNT && n < max; k++)
                    fill_case(&out[n++], backward, gated_kinds[k], gated_dtypes[t], &shapes[s],
                              size_bytes);
    return n;
}

const void *bench_case_operation(const struct bench_case *c, union gated_op_info *storage)
{
    if (c->convert.sType == BK_STRUCTURE_TYPE_CONVERT_INFO)
        return &c->convert;
    return gated_op_build(&c->gated, storage);
}
