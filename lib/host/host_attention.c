/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention on the host, the reference the GPU is held to
 * (bk_attention.h). Everything is computed in double:
 *
 *   s_ij = scale * sum_d q[i, d] k[j, d] over the keys j query i sees,
 *   m = max s_ij, l = sum exp(s_ij - m),
 *   y[i, c] = (sum exp(s_ij - m) v[j, c]) / l, lse_i = m + log(l),
 *
 * in two passes over the keys (the max, then the sums; scores are
 * recomputed, never stored), y rounded once to its type and lse to F32
 * (F64). A query that sees no key gets y = 0 and lse = -inf. Each query
 * row is one task: results do not depend on the thread count. A list is
 * first scattered into the workspace's mask (the core's layout); a
 * (b, h) whose list broke a rule gets NaN outputs. The backward is in
 * host_attention_backward.c. */
#include "host_attention.h"
#include "../half.h"

#include <stdio.h>
#include <string.h>

/* ---- Element conversions ------------------------------------------------ */

/* v rounded to float by rounding to odd: rounding that to a half type
 * to nearest even is then the correctly rounded double -> half (24 bits
 * hold the half's 11 plus two), which double -> float -> half is not. */
static float f32_round_to_odd(double v)
{
    const float f = (float)v;
    if ((double)f == v || isnan(v))
        return f;
    uint32_t u = bk_f32_bits(f);
    if (fabs((double)f) > fabs(v))
        u--;                             /* toward zero; infinity becomes FLT_MAX */
    return bk_f32_from_bits(u | 1u);
}

void host_attn_load_row(BkDataType type, const char *base, int64_t off, int64_t cs, int64_t n,
                        double *out)
{
    switch (type) {
    case BK_DATA_TYPE_F64: {
        const double *x = (const double *)base + off;
        for (int64_t c = 0; c < n; c++)
            out[c] = x[c * cs];
        break;
    }
    case BK_DATA_TYPE_F32: {
        const float *x = (const float *)base + off;
        for (int64_t c = 0; c < n; c++)
            out[c] = x[c * cs];
        break;
    }
    case BK_DATA_TYPE_F16: {
        const uint16_t *x = (const uint16_t *)base + off;
        for (int64_t c = 0; c < n; c++)
            out[c] = bk_f16_to_f32(x[c * cs]);
        break;
    }
    default: {                           /* BF16 */
        const uint16_t *x = (const uint16_t *)base + off;
        for (int64_t c = 0; c < n; c++)
            out[c] = bk_bf16_to_f32(x[c * cs]);
        break;
    }
    }
}

void host_attn_store_row(BkDataType type, char *base, int64_t off, int64_t cs, int64_t n,
                         const double *in)
{
    switch (type) {
    case BK_DATA_TYPE_F64: {
        double *x = (double *)base + off;
        for (int64_t c = 0; c < n; c++)
            x[c * cs] = in[c];
        break;
    }
    case BK_DATA_TYPE_F32: {
        float *x = (float *)base + off;
        for (int64_t c = 0; c < n; c++)
            x[c * cs] = (float)in[c];
        break;
    }
    case BK_DATA_TYPE_F16: {
        uint16_t *x = (uint16_t *)base + off;
        for (int64_t c = 0; c < n; c++)
            x[c * cs] = bk_f32_to_f16(f32_round_to_odd(in[c]));
        break;
    }
    default: {                           /* BF16 */
        uint16_t *x = (uint16_t *)base + off;
        for (int64_t c = 0; c < n; c++)
            x[c * cs] = bk_f32_to_bf16(f32_round_to_odd(in[c]));
        break;
    }
    }
}

void host_attn_fill_row(BkDataType type, char *base, int64_t off, int64_t cs, int64_t n,
                        double value)
{
    double row[HOST_ATTN_MAX_DIM];
    for (int64_t c = 0; c < n; c++)
        row[c] = value;
    host_attn_store_row(type, base, off, cs, n, row);
}

double host_attn_load(BkDataType type, const char *base, int64_t off)
{
    double v;
    host_attn_load_row(type, base, off, 1, 1, &v);
    return v;
}

void host_attn_store(BkDataType type, char *base, int64_t off, double value)
{
    host_attn_store_row(type, base, off, 1, 1, &value);
}

/* ---- The pattern ---------------------------------------------------------- */

/* The list of pattern entry (pb, ph) scattered into its workspace mask;
 * returns whether it broke a rule (a count outside 0..capacity, an index
 * outside 0..nbk-1). */
static bool scatter_list(const struct bk_attention_problem *p, const int32_t *counts,
                         const int32_t *indices, int64_t pb, int64_t ph, uint8_t *mask)
{
    const int64_t *cs = p->counts_stride, *is = p->indices_stride;
    bool bad = false;
    memset(mask, 0, (size_t)p->mask_stride[1]);
    for (int64_t ib = 0; ib < p->nbq; ib++) {
        const int32_t count = counts[pb * cs[0] + ph * cs[1] + ib * cs[2]];
        if (count < 0 || count > p->capacity) {
            bad = true;
            continue;
        }
        if (count == 0)
            continue; /* indices may be unbound (capacity 0: an empty tensor) */
        const int32_t *list = indices + pb * is[0] + ph * is[1] + ib * is[2];
        for (int32_t e = 0; e < count; e++) {
            const int32_t jb = list[e * is[3]];
            if (jb < 0 || jb >= p->nbk)
                bad = true;
            else
                mask[ib * p->mask_stride[2] + jb * p->mask_stride[3]] = 1;
        }
    }
    return bad;
}

static char *bound(const struct bk_run_args *args, int slot)
{
    return (char *)(uintptr_t)args->binding[slot];
}

void host_attn_begin(struct host_attn *a, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    *a = (struct host_attn){
        .p = p,
        .q = bound(args, BK_ATTENTION_BINDING_Q), .k = bound(args, BK_ATTENTION_BINDING_K),
        .v = bound(args, BK_ATTENTION_BINDING_V), .y = bound(args, BK_ATTENTION_BINDING_Y),
        .lse = bound(args, BK_ATTENTION_BINDING_LSE),
        .group = p->kv_heads ? p->heads / p->kv_heads : 0,
    };
    if (p->has_sequences) {
        const int lq_slot = p->backward ? BK_ATTENTION_BACKWARD_BINDING_LENGTHS_Q
                                        : BK_ATTENTION_BINDING_LENGTHS_Q;
        const int lk_slot = p->backward ? BK_ATTENTION_BACKWARD_BINDING_LENGTHS_K
                                        : BK_ATTENTION_BINDING_LENGTHS_K;
        if (p->has_lengths_q)
            a->lengths_q = (const int32_t *)bound(args, lq_slot);
        if (p->has_lengths_k)
            a->lengths_k = (const int32_t *)bound(args, lk_slot);
    }
    if (p->paged)
        a->block_table = (const int32_t *)bound(args, BK_ATTENTION_BINDING_BLOCK_TABLE);
    if (p->backward) {
        a->dy = bound(args, BK_ATTENTION_BACKWARD_BINDING_DY);
        a->dq = bound(args, BK_ATTENTION_BACKWARD_BINDING_DQ);
        a->dk = bound(args, BK_ATTENTION_BACKWARD_BINDING_DK);
        a->dv = bound(args, BK_ATTENTION_BACKWARD_BINDING_DV);
    }
    /* Without heads or sequences (PACKED may have none) nothing reads the
     * pattern, whose empty tensors may be unbound (the core counts one
     * pattern entry there all the same). */
    if (p->heads == 0 || p->seq_count == 0 || p->form == BK_ATTENTION_PATTERN_DENSE)
        return;
    if (p->form == BK_ATTENTION_PATTERN_MASK) {
        a->mask = (const uint8_t *)bound(args, BK_ATTENTION_BINDING_MASK);
        return;
    }
    /* Each pattern entry writes only its own bytes. */
    uint8_t *ws = (uint8_t *)(uintptr_t)args->workspace;
    const int32_t *counts = (const int32_t *)bound(args, BK_ATTENTION_BINDING_COUNTS);
    const int32_t *indices = (const int32_t *)bound(args, BK_ATTENTION_BINDING_INDICES);
    const int64_t entries = p->pattern_batch * p->pattern_heads;
    HOST_ATTN_PARALLEL_FOR(entries * p->nbq * p->capacity >= HOST_ATTN_PARALLEL_MIN_WORK)
    for (int64_t e = 0; e < entries; e++)
        ws[p->ws_bad + (uint64_t)e] =
            scatter_list(p, counts, indices, e / p->pattern_heads, e % p->pattern_heads,
                         ws + p->ws_mask + (uint64_t)(e * p->mask_stride[1]));
    a->mask = ws + p->ws_mask;
    a->bad = ws + p->ws_bad;
}

/* ---- Forward ---------------------------------------------------------------- */

/* Query row i of head h, batch b (rows of the tensors): its sequence's
 * query there, or y = 0 and lse = -inf past a PADDED length, or NaN. */
static void forward_row(const struct host_attn *a, int64_t b, int64_t h, int64_t i)
{
    const struct bk_attention_problem *p = a->p;
    const int64_t yo = host_attn_row(p->stride.y, b, h, i);
    const int64_t lo = b * p->stride.lse[0] + h * p->stride.lse[1] + i * p->stride.lse[2];
    struct host_attn_seq sq;
    int64_t il;
    const enum host_attn_place place = host_attn_query_place(a, b, i, &sq, &il);
    if (place == HOST_ATTN_NAN || host_attn_bad(a, sq.pb, h)) {
        host_attn_fill_row(p->type, a->y, yo, p->stride.y[3], p->dv, NAN);
        if (p->has_lse)
            host_attn_store(p->lse_type, a->lse, lo, NAN);
        return;
    }
    if (place == HOST_ATTN_PAST_END) { /* sees no key */
        host_attn_fill_row(p->type, a->y, yo, p->stride.y[3], p->dv, 0.0);
        if (p->has_lse)
            host_attn_store(p->lse_type, a->lse, lo, -INFINITY);
        return;
    }
    const struct host_attn_seq *s = &sq;
    const int64_t kvh = h / a->group;
    const uint8_t *pat = host_attn_pattern(a, s->pb, h);
    double q[HOST_ATTN_MAX_DIM], row[HOST_ATTN_MAX_DIM], acc[HOST_ATTN_MAX_DIM];
    host_attn_load_row(p->type, a->q, host_attn_row(p->stride.q, b, h, i), p->stride.q[3], p->d,
                       q);

    /* Pass 1: the max score (NaN scores are not counted, they reach y). */
    double m = -INFINITY;
    int64_t seen = 0, j0, j1;
    struct host_attn_keys keys = host_attn_keys_of(a, s, pat, il);
    while (host_attn_next_keys(&keys, &j0, &j1))
        for (int64_t j = j0; j < j1; j++, seen++) {
            const double score = host_attn_score(a, q, s, kvh, j, row);
            if (score > m)
                m = score;
        }
    if (seen == 0) {
        host_attn_fill_row(p->type, a->y, yo, p->stride.y[3], p->dv, 0.0);
        if (p->has_lse)
            host_attn_store(p->lse_type, a->lse, lo, -INFINITY);
        return;
    }

    /* Pass 2: the sums. */
    double l = 0;
    memset(acc, 0, sizeof acc);
    keys = host_attn_keys_of(a, s, pat, il);
    while (host_attn_next_keys(&keys, &j0, &j1))
        for (int64_t j = j0; j < j1; j++) {
            const double w = exp(host_attn_score(a, q, s, kvh, j, row) - m);
            l += w;
            host_attn_load_row(p->type, a->v, host_attn_key_offset(a, s, p->stride.v, kvh, j),
                               p->stride.v[3], p->dv, row);
            for (int64_t c = 0; c < p->dv; c++)
                acc[c] += w * row[c];
        }
    for (int64_t c = 0; c < p->dv; c++)
        acc[c] /= l;
    host_attn_store_row(p->type, a->y, yo, p->stride.y[3], p->dv, acc);
    if (p->has_lse)
        host_attn_store(p->lse_type, a->lse, lo, m + log(l));
}

static void forward(const struct host_attn *a)
{
    const struct bk_attention_problem *p = a->p;
    struct host_attn_sizes z;
    if (!host_attn_sizes(p, &z)) /* refused at plan selection */
        return;
    const int64_t rows = z.rows;
    const double work = (double)rows * (double)p->lk * (double)(2 * p->d + p->dv);
    HOST_ATTN_PARALLEL_FOR(work >= HOST_ATTN_PARALLEL_MIN_WORK)
    for (int64_t r = 0; r < rows; r++)
        forward_row(a, r / (p->heads * p->lq), r / p->lq % p->heads, r % p->lq);
}

static BkResult attention_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_attention_problem *p = &plan->problem.attention;
    (void)queue;
    /* Nothing to write; the backward's dk and dv are zeros even when no
     * query reads them (H or Lq is 0). */
    if (p->batch == 0 || (!p->backward && (p->heads == 0 || p->lq == 0)))
        return BK_SUCCESS;
    struct host_attn a;
    host_attn_begin(&a, plan, args);
    if (p->backward)
        host_attn_backward(&a);
    else
        forward(&a);
    return BK_SUCCESS;
}

BkResult bk_host_attention_select(BkPlan plan)
{
    static const char *const type_names[] = {
        [BK_DATA_TYPE_F16] = "f16", [BK_DATA_TYPE_BF16] = "bf16",
        [BK_DATA_TYPE_F32] = "f32", [BK_DATA_TYPE_F64] = "f64",
    };
    const struct bk_attention_problem *p = &plan->problem.attention;
    struct host_attn_sizes z;
    if (!host_attn_sizes(p, &z))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.k.extent[2] = %lld (Lk): the host backend's %lld x %lld x "
                        "ceil(Lk / keys per task) key tasks overflow 64 bits", plan->op_name,
                        (long long)p->lk, (long long)p->batch, (long long)p->kv_heads);
    plan->launch = attention_launch;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_attention_%s_%s",
             p->backward ? "backward" : "forward", type_names[p->type]);
    /* Double throughout, one task per row or key block: bit-stable. */
    plan->props.precision = (BkPrecisionGuarantee){
        .computeType = BK_DATA_TYPE_F64,
        .accumulatorType = BK_DATA_TYPE_F64,
        .deterministic = BK_TRUE,
        .bitStable = BK_TRUE,
    };
    return BK_SUCCESS;
}
