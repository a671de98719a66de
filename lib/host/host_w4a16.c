/* SPDX-License-Identifier: Apache-2.0 */
/* W4A16 conversions and the GPTQ repack on the host (bk_w4a16.h):
 * quantize a weight into 4-bit values and scales, pack them into Marlin's
 * layout (kernels/shared/w4a16_layout.h) and back, and repack a GPTQ checkpoint after
 * checking it. Scales are moved as bits; only quantizing computes. */
#include "host_w4a16.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Below this many weight elements a conversion runs on one thread. */
#define PARALLEL_MIN_ELEMENTS (1 << 16)
/* Quantizing walks a group in chunks of this many columns. */
#define CHUNK 64

/* The bound tensors of a conversion. */
struct convert {
    const struct bk_w4a16_convert_problem *p;
    char *weight, *quantized, *scales;
    uint32_t *packed;
    uint16_t *packed_scales;
    char *zeros;                          /* plain zero points, NULL when symmetric */
    uint32_t *packed_zeros;               /* NULL when symmetric or QUANTIZE */
    host_gemm_load_fn load;               /* QUANTIZE: a row of weight as float */
    struct host_w4a16_half half;
};

/* ---- Quantize ----------------------------------------------------------- */

/* x rounded to the nearest integer, ties to even, whatever the FPU's
 * rounding mode; |x| <= 16. */
static float nearest_even(float x)
{
    float f = floorf(x);
    const float d = x - f;
    if (d > 0.5f || (d == 0.5f && fmodf(f, 2.0f) != 0.0f))
        f += 1.0f;
    return f;
}

/* q = clamp(nearest-even(w / s) + z, 0, 15), the division in float; z
 * where s is 0 and where w / s is NaN (a NaN weight, or an infinite one
 * under an infinite scale). z is 8 when symmetric. */
static uint8_t quantize_one(float w, float s, unsigned z)
{
    if (s == 0.0f)
        return (uint8_t)z;
    float x = w / s;
    if (isnan(x))
        return (uint8_t)z;
    x = x < -32.0f ? -32.0f : x > 32.0f ? 32.0f : x;
    const float q = nearest_even(x) + (float)z;
    return (uint8_t)(q < 0.0f ? 0.0f : q > 15.0f ? 15.0f : q);
}

/* The asymmetric zero point of a group whose range is lo .. hi (lo <= 0
 * <= hi) under scale s: clamp(nearest-even(-lo / s), 0, 15); 8 where s is
 * 0 or infinite (then every q is 8 too). */
static unsigned zero_point(float lo, float s)
{
    if (s == 0.0f || isinf(s))
        return 8;
    const float z = nearest_even(-lo / s);
    return (unsigned)(z < 0.0f ? 0.0f : z > 15.0f ? 15.0f : z);
}

/* Group g, columns n0 .. n0 + CHUNK - 1 (fewer at the end). NaN weights
 * do not count in max|w| and quantize to 8. An infinite weight makes the
 * scale infinite (so does max|w| * 2 past FLT_MAX, or a scale past the
 * scale type's range), and then the group's column quantizes to 8. */
static void quantize_chunk(const struct convert *cv, int64_t g, int64_t n0)
{
    const struct bk_w4a16_convert_problem *p = cv->p;
    const int64_t k0 = g * p->shape.group, k1 = k0 + p->shape.group;
    const int cols = (int)(p->shape.n - n0 < CHUNK ? p->shape.n - n0 : CHUNK);
    const size_t es = bk_data_type_size(p->weight.type);
    float amax[CHUNK] = { 0 }, lo[CHUNK] = { 0 }, hi[CHUNK] = { 0 }, scale[CHUNK], w[CHUNK];
    unsigned zero[CHUNK];
    for (int64_t k = k0; k < k1; k++) {
        cv->load(host_matrix_at(cv->weight, &p->weight, k, n0, es), p->weight.col_stride, cols, w);
        for (int j = 0; j < cols; j++) {  /* comparisons are false for NaN */
            if (fabsf(w[j]) > amax[j])
                amax[j] = fabsf(w[j]);
            if (w[j] < lo[j])
                lo[j] = w[j];
            if (w[j] > hi[j])
                hi[j] = w[j];
        }
    }
    for (int j = 0; j < cols; j++) {
        /* The formulas, in float, that the CUDA kernel uses too:
         * scale = round_to_scale_type(amax * 2.0f / 15.0f), or when
         * asymmetric round_to_scale_type((hi - lo) / 15.0f). */
        const float raw = cv->zeros ? (hi[j] - lo[j]) / 15.0f : amax[j] * 2.0f / 15.0f;
        const uint16_t bits = cv->half.from_f32(raw);
        scale[j] = cv->half.to_f32(bits);
        memcpy(host_matrix_at(cv->scales, &p->scales, g, n0 + j, 2), &bits, 2);
        zero[j] = cv->zeros ? zero_point(lo[j], scale[j]) : 8;
        if (cv->zeros)
            *(uint8_t *)host_matrix_at(cv->zeros, &p->zeros, g, n0 + j, 1) = (uint8_t)zero[j];
    }
    for (int64_t k = k0; k < k1; k++) {
        cv->load(host_matrix_at(cv->weight, &p->weight, k, n0, es), p->weight.col_stride, cols, w);
        for (int j = 0; j < cols; j++)
            *(uint8_t *)host_matrix_at(cv->quantized, &p->quantized, k, n0 + j, 1) =
                quantize_one(w[j], scale[j], zero[j]);
    }
}

static void quantize(const struct convert *cv)
{
    const struct bk_w4a16_shape *s = &cv->p->shape;
    const int64_t chunks = (s->n + CHUNK - 1) / CHUNK, tasks = s->groups * chunks;
#pragma omp parallel for schedule(static) if (s->k * s->n >= PARALLEL_MIN_ELEMENTS)
    for (int64_t t = 0; t < tasks; t++)
        quantize_chunk(cv, t / chunks, t % chunks * CHUNK);
}

/* ---- Pack and unpack ------------------------------------------------------ */

/* The 4-bit value (k, n) of a plain or GPTQ source. */
typedef unsigned (*nibble_fn)(const void *source, int64_t k, int64_t n);

/* Packed row kt (weight rows 16 kt .. 16 kt + 15, 2n words) from a source;
 * only the low 4 bits of each value are kept. */
static void pack_row(uint32_t *packed, int64_t kt, int64_t n, nibble_fn q, const void *source)
{
    uint32_t *row = packed + kt * 2 * n;
    memset(row, 0, (size_t)(2 * n) * sizeof *row);
    for (int64_t k = 16 * kt; k < 16 * kt + 16; k++)
        for (int64_t j = 0; j < n; j++)
            row[bk_w4a16_word(k, j)] |= (q(source, k, j) & 15u) << (4 * bk_w4a16_nibble(k, j));
}

static void pack_rows(uint32_t *packed, const struct bk_w4a16_shape *s, nibble_fn q,
                      const void *source)
{
#pragma omp parallel for schedule(static) if (s->k * s->n >= PARALLEL_MIN_ELEMENTS)
    for (int64_t kt = 0; kt < s->k / 16; kt++)
        pack_row(packed, kt, s->n, q, source);
}

/* Scales [groups, n], strided, into packedScales' column order. */
static void pack_scales(uint16_t *dst, const char *scales, const struct bk_matrix *m,
                        const struct bk_w4a16_shape *s)
{
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t j = 0; j < s->n; j++)
            memcpy(dst + g * s->n + bk_w4a16_scale_position(j, s->per_channel),
                   host_matrix_at((char *)scales, m, g, j, 2), 2);
}

/* The zero point of (g, n) of a plain or checkpoint source. */
typedef unsigned (*zero_fn)(const void *source, int64_t g, int64_t n);

/* packedZeros [groups, n/8] from a source; only the low 4 bits are kept. */
static void pack_zeros(uint32_t *dst, const struct bk_w4a16_shape *s, zero_fn z,
                       const void *source)
{
    memset(dst, 0, (size_t)(s->groups * (s->n / 8)) * sizeof *dst);
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t j = 0; j < s->n; j++)
            dst[g * (s->n / 8) + bk_w4a16_zero_word(j, s->per_channel)] |=
                (z(source, g, j) & 15u) << (4 * bk_w4a16_zero_nibble(j, s->per_channel));
}

static unsigned plain_zero(const void *source, int64_t g, int64_t n)
{
    const struct convert *cv = source;
    return *(const uint8_t *)host_matrix_at(cv->zeros, &cv->p->zeros, g, n, 1);
}

static unsigned quantized_nibble(const void *source, int64_t k, int64_t n)
{
    const struct convert *cv = source;
    return *(const uint8_t *)host_matrix_at(cv->quantized, &cv->p->quantized, k, n, 1);
}

static void pack(const struct convert *cv)
{
    pack_rows(cv->packed, &cv->p->shape, quantized_nibble, cv);
    pack_scales(cv->packed_scales, cv->scales, &cv->p->scales, &cv->p->shape);
    if (cv->packed_zeros)
        pack_zeros(cv->packed_zeros, &cv->p->shape, plain_zero, cv);
}

static void unpack(const struct convert *cv)
{
    const struct bk_w4a16_convert_problem *p = cv->p;
    const struct bk_w4a16_shape *s = &p->shape;
#pragma omp parallel for schedule(static) if (s->k * s->n >= PARALLEL_MIN_ELEMENTS)
    for (int64_t k = 0; k < s->k; k++) {
        const uint32_t *row = cv->packed + k / 16 * 2 * s->n;
        for (int64_t j = 0; j < s->n; j++)
            *(uint8_t *)host_matrix_at(cv->quantized, &p->quantized, k, j, 1) =
                (uint8_t)((row[bk_w4a16_word(k, j)] >> (4 * bk_w4a16_nibble(k, j))) & 15u);
    }
    for (int64_t g = 0; g < s->groups; g++)
        for (int64_t j = 0; j < s->n; j++)
            memcpy(host_matrix_at(cv->scales, &p->scales, g, j, 2),
                   cv->packed_scales + g * s->n + bk_w4a16_scale_position(j, s->per_channel), 2);
    for (int64_t g = 0; cv->packed_zeros && g < s->groups; g++)
        for (int64_t j = 0; j < s->n; j++)
            *(uint8_t *)host_matrix_at(cv->zeros, &p->zeros, g, j, 1) =
                (uint8_t)((cv->packed_zeros[g * (s->n / 8) + bk_w4a16_zero_word(j, s->per_channel)] >>
                           (4 * bk_w4a16_zero_nibble(j, s->per_channel))) & 15u);
}

static const struct {
    const char *name;
    void (*run)(const struct convert *);
} conversions[] = {
    [BK_W4A16_QUANTIZE] = { "quantize", quantize },
    [BK_W4A16_PACK] = { "pack", pack },
    [BK_W4A16_UNPACK] = { "unpack", unpack },
};

static BkResult convert_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_w4a16_convert_problem *p = &plan->problem.w4a16_convert;
    (void)queue;
    const struct convert cv = {
        .p = p,
        .weight = (char *)(uintptr_t)args->binding[BK_W4A16_CONVERT_BINDING_WEIGHT],
        .quantized = (char *)(uintptr_t)args->binding[BK_W4A16_CONVERT_BINDING_QUANTIZED],
        .scales = (char *)(uintptr_t)args->binding[BK_W4A16_CONVERT_BINDING_SCALES],
        .packed = (uint32_t *)(uintptr_t)args->binding[BK_W4A16_CONVERT_BINDING_PACKED],
        .packed_scales =
            (uint16_t *)(uintptr_t)args->binding[BK_W4A16_CONVERT_BINDING_PACKED_SCALES],
        .zeros = p->has_zeros
                     ? (char *)(uintptr_t)args->binding[BK_W4A16_CONVERT_BINDING_ZEROS] : NULL,
        .packed_zeros = p->has_zeros && p->conversion != BK_W4A16_QUANTIZE
                            ? (uint32_t *)(uintptr_t)
                                  args->binding[BK_W4A16_CONVERT_BINDING_PACKED_ZEROS]
                            : NULL,
        .load = p->conversion == BK_W4A16_QUANTIZE ? host_gemm_row_loader(p->weight.type) : NULL,
        .half = host_w4a16_half(p->shape.scale_type),
    };
    conversions[p->conversion].run(&cv);
    return BK_SUCCESS;
}

BkResult bk_host_w4a16_convert_select(BkPlan plan)
{
    const struct bk_w4a16_convert_problem *p = &plan->problem.w4a16_convert;
    const char *scale = host_gemm_type_name(p->shape.scale_type);
    plan->launch = convert_launch;
    const char *zp = p->has_zeros ? "_zp" : "";
    if (p->conversion == BK_W4A16_QUANTIZE)
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName,
                 "host_w4a16_quantize%s_%s_%s", zp, host_gemm_type_name(p->weight.type), scale);
    else
        snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_w4a16_%s%s_%s",
                 conversions[p->conversion].name, zp, scale);
    return BK_SUCCESS;
}

/* ---- GPTQ repack ----------------------------------------------------------- */

struct repack {
    const struct bk_w4a16_repack_problem *p;
    char *qweight, *scales, *qzeros;
    const int32_t *g_idx;          /* NULL without gIdx */
    uint32_t *packed;
    uint16_t *packed_scales;
    int32_t *perm;                 /* NULL when not bound */
    uint32_t *packed_zeros;        /* NULL without a BkW4A16ZeroPointsInfo */
};

/* Nibble i of the I32 word (r, c): GPTQ's order, bits 4 i .. 4 i + 3. */
static unsigned gptq_nibble(char *base, const struct bk_matrix *m, int64_t r, int64_t c, int i)
{
    uint32_t w;
    memcpy(&w, host_matrix_at(base, m, r, c, 4), 4);
    return (w >> (4 * i)) & 15u;
}

/* Packed row k holds the checkpoint's row perm[k] (k without gIdx):
 * GPTQ's packs 8 rows a word, AWQ's 8 columns in its order. */
static unsigned qweight_nibble(const void *source, int64_t k, int64_t n)
{
    const struct repack *rp = source;
    const int64_t row = rp->g_idx ? rp->perm[k] : k;
    if (rp->p->format == BK_W4A16_CHECKPOINT_AWQ)
        return gptq_nibble(rp->qweight, &rp->p->qweight, row, n / 8,
                           bk_w4a16_awq_nibble((int)(n % 8)));
    return gptq_nibble(rp->qweight, &rp->p->qweight, row / 8, n, (int)(row % 8));
}

/* The zero point of group g, column n: the stored nibble (in the
 * format's column order) plus 1 for BK_W4A16_GPTQ_ZEROS_MINUS_ONE, modulo
 * 16; 8 without qzeros. */
static unsigned checkpoint_zero(const void *source, int64_t g, int64_t n)
{
    const struct repack *rp = source;
    const struct bk_w4a16_repack_problem *p = rp->p;
    if (p->qzeros.type == BK_DATA_TYPE_UNDEFINED)
        return 8;
    const int c = (int)(n % 8);
    const int nib = p->format == BK_W4A16_CHECKPOINT_AWQ ? bk_w4a16_awq_nibble(c) : c;
    const unsigned offset = p->zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? 1 : 0;
    return (gptq_nibble(rp->qzeros, &p->qzeros, g, n / 8, nib) + offset) & 15u;
}

/* Records one broken rule at (row, column); the first one is kept. */
static void report_bad(BkW4A16RepackReport *rep, uint64_t row, uint64_t column)
{
    if (rep->badCount++ == 0) {
        rep->firstBadRow = row;
        rep->firstBadColumn = column;
    }
}

/* gIdx[k] outside 0..G-1: firstBadColumn is the value sign-extended. */
static void check_group_index(const struct repack *rp, BkW4A16RepackReport *rep)
{
    for (int64_t k = 0; k < rp->p->shape.k; k++)
        if (rp->g_idx[k] < 0 || rp->g_idx[k] >= rp->p->shape.groups)
            report_bad(rep, (uint64_t)k, (uint64_t)(int64_t)rp->g_idx[k]);
    if (rep->badCount)
        rep->status = BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX;
}

/* Groups of other than `group` rows; count has a counter per group. */
static void check_group_sizes(const struct repack *rp, uint64_t *count, BkW4A16RepackReport *rep)
{
    const struct bk_w4a16_shape *s = &rp->p->shape;
    memset(count, 0, (size_t)s->groups * sizeof *count);
    for (int64_t k = 0; k < s->k; k++)
        count[rp->g_idx[k]]++;
    for (int64_t g = 0; g < s->groups; g++)
        if (count[g] != (uint64_t)s->group)
            report_bad(rep, (uint64_t)g, count[g]);
    if (rep->badCount)
        rep->status = BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS;
}

/* Zero points other than 8, in row-major (group, column) order. */
static void check_zeros(const struct repack *rp, BkW4A16RepackReport *rep)
{
    const struct bk_w4a16_repack_problem *p = rp->p;
    if (p->qzeros.type == BK_DATA_TYPE_UNDEFINED || rp->packed_zeros)
        return;
    const unsigned offset = p->zeros == BK_W4A16_GPTQ_ZEROS_MINUS_ONE ? 1 : 0;
    for (int64_t g = 0; g < p->shape.groups; g++)
        for (int64_t n = 0; n < p->shape.n; n++)
            if (gptq_nibble(rp->qzeros, &p->qzeros, g, n / 8, (int)(n % 8)) + offset != 8)
                report_bad(rep, (uint64_t)g, (uint64_t)n);
    if (rep->badCount)
        rep->status = BK_W4A16_REPACK_STATUS_ASYMMETRIC;
}

/* perm = the rows sorted by group, stable: a counting sort in which group
 * g starts at row g * group, as every group has `group` rows. */
static void sort_rows(const struct repack *rp, uint64_t *cursor)
{
    const struct bk_w4a16_shape *s = &rp->p->shape;
    for (int64_t g = 0; g < s->groups; g++)
        cursor[g] = (uint64_t)(g * s->group);
    for (int64_t k = 0; k < s->k; k++)
        rp->perm[cursor[rp->g_idx[k]]++] = (int32_t)k;
}

/* The checks run in the order of the statuses, each only when the ones
 * before passed; a report that is not OK leaves packed, packedScales and
 * perm holding anything, and identityPermutation 0. The group counters
 * live in packed (K N / 8 words, N >= 64: room for the K / group
 * counters), which is written after them. */
static BkResult repack_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_w4a16_repack_problem *p = &plan->problem.w4a16_repack;
    (void)queue;
    const struct repack rp = {
        .p = p,
        .qweight = (char *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_QWEIGHT],
        .scales = (char *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_SCALES],
        .qzeros = (char *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_QZEROS],
        .g_idx = p->has_g_idx
                     ? (const int32_t *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_G_IDX]
                     : NULL,
        .packed = (uint32_t *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_PACKED],
        .packed_scales =
            (uint16_t *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_PACKED_SCALES],
        .perm = p->has_perm ? (int32_t *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_PERM]
                            : NULL,
        .packed_zeros =
            p->has_zeros
                ? (uint32_t *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_PACKED_ZEROS]
                : NULL,
    };
    uint64_t *counters = (uint64_t *)(void *)rp.packed;
    BkW4A16RepackReport rep = { .status = BK_W4A16_REPACK_STATUS_OK };
    if (rp.g_idx) {
        check_group_index(&rp, &rep);
        if (rep.status == BK_W4A16_REPACK_STATUS_OK)
            check_group_sizes(&rp, counters, &rep);
    }
    if (rep.status == BK_W4A16_REPACK_STATUS_OK)
        check_zeros(&rp, &rep);
    if (rep.status == BK_W4A16_REPACK_STATUS_OK) {
        rep.identityPermutation = BK_TRUE;
        if (rp.g_idx)
            sort_rows(&rp, counters);
        for (int64_t k = 0; rp.perm && k < p->shape.k; k++) {
            if (!rp.g_idx)
                rp.perm[k] = (int32_t)k;
            if (rp.perm[k] != k)
                rep.identityPermutation = BK_FALSE;
        }
        pack_rows(rp.packed, &p->shape, qweight_nibble, &rp);
        pack_scales(rp.packed_scales, rp.scales, &p->scales, &p->shape);
        if (rp.packed_zeros)
            pack_zeros(rp.packed_zeros, &p->shape, checkpoint_zero, &rp);
    }
    memcpy((void *)(uintptr_t)args->binding[BK_W4A16_REPACK_BINDING_REPORT], &rep, sizeof rep);
    return BK_SUCCESS;
}

BkResult bk_host_w4a16_repack_select(BkPlan plan)
{
    const struct bk_w4a16_repack_problem *p = &plan->problem.w4a16_repack;
    plan->launch = repack_launch;
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_w4a16_%s_repack%s_%s",
             p->format == BK_W4A16_CHECKPOINT_AWQ ? "awq" : "gptq", p->has_zeros ? "_zp" : "",
             host_gemm_type_name(p->shape.scale_type));
    return BK_SUCCESS;
}
