/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's block-sparse attention cases. Buffers (q, k, v, dy in one
 * rotation, y, lse, dq, dk, dv in another, as many sets of each) are
 * sized from the plans' BkPlanBindingProperties and kept while the next
 * cases have the same sizes; every set holds the same random inputs at
 * other addresses, so that one forward run makes the y and lse of all of
 * them. The pattern is made per case and bound, one copy for every set.
 * Each result is checked after its timed runs, on set 0, so that no run
 * is spent on the check alone (the host's reference is slow). */
#include "bench_attention.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_plan.h"
#include "bench_progress.h"
#include "bench_random.h"
#include "bench_sets.h"
#include "bench_varlen.h"
#include "tool_common.h"

static const BkDataType attention_types[] = {BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16};
#define TYPE_COUNT (sizeof attention_types / sizeof attention_types[0])
static const int64_t head_dims[] = {64, 128};
#define HEAD_DIM_COUNT (sizeof head_dims / sizeof head_dims[0])
#define BLOCK_COUNT 2u

/* The patterns of each shape and block; 10% once more as a LIST. */
static const struct {
    const char *name;
    struct attention_pattern_desc pat;    /* window: set from L */
    BkAttentionPatternForm form;
    bool causal;
} patterns[] = {
    {"full", {ATTENTION_PATTERN_FULL, 100, 0}, BK_ATTENTION_PATTERN_DENSE, false},
    {"50%", {ATTENTION_PATTERN_RANDOM, 50, 0}, BK_ATTENTION_PATTERN_MASK, false},
    {"25%", {ATTENTION_PATTERN_RANDOM, 25, 0}, BK_ATTENTION_PATTERN_MASK, false},
    {"10%", {ATTENTION_PATTERN_RANDOM, 10, 0}, BK_ATTENTION_PATTERN_MASK, false},
    {"10%", {ATTENTION_PATTERN_RANDOM, 10, 0}, BK_ATTENTION_PATTERN_LIST, false},
    {"window", {ATTENTION_PATTERN_WINDOW, 0, 0}, BK_ATTENTION_PATTERN_MASK, true},
};
#define PATTERN_COUNT (sizeof patterns / sizeof patterns[0])

/* The sizes of a scale: batch, sequence, H * D and the two blocks. */
static const struct {
    int64_t batch, l, width;
    int32_t blocks[BLOCK_COUNT];
} scales[] = {
    [ATTENTION_SCALE_GPU] = {2, 8192, 2048, {64, 128}},
    [ATTENTION_SCALE_HOST] = {1, 128, 128, {16, 32}},
    [ATTENTION_SCALE_QUICK] = {1, 64, 128, {16, 32}},
};
/* The window is an eighth of the sequence: 1024 tokens at L = 8192. */
#define WINDOW_DIVISOR 8

/* The head-size sweep: the head sizes of the models people run (Phi's 80
 * and 96, Gemma's 256, the query-key size 192 of multi-head latent
 * attention with its Dv = 128), dense and 25% with blocks of 128, at a
 * shorter L so that the sweep stays short; H * D = 2048 as above. */
static const struct {
    int64_t d, dv;
} sweep_heads[] = {
    {32, 32}, {64, 64}, {80, 80}, {96, 96}, {128, 128}, {160, 160}, {192, 192}, {256, 256},
    {192, 128},
};
#define SWEEP_COUNT (sizeof sweep_heads / sizeof sweep_heads[0])
static const size_t sweep_patterns[] = {0, 2};  /* full, 25% */
#define SWEEP_PATTERN_COUNT (sizeof sweep_patterns / sizeof sweep_patterns[0])
static const struct {
    int64_t batch, l, width;
    int32_t block;
} sweep_scales[] = {
    [ATTENTION_SCALE_GPU] = {2, 4096, 2048, 128},
    [ATTENTION_SCALE_HOST] = {1, 64, 256, 32},
    [ATTENTION_SCALE_QUICK] = {1, 32, 256, 16},
};

/* The packed variable-length cases of each type and head size and the
 * dense causal case they compare with (the non-causal one is "full"):
 * dense, with the larger block of the scale. */
static const struct {
    const char *name;
    bool causal, packed;
} varlen_patterns[] = {
    {"causal", true, false},
    {"varlen", false, true},
    {"varlen-c", true, true},
};
#define VARLEN_PATTERN_COUNT (sizeof varlen_patterns / sizeof varlen_patterns[0])

/* The training shapes: many short sequences, as models train on them,
 * dense and causal, with H * D as the scale's. On the GPU B x L = 16k
 * tokens at L = 512 and 1024 (B x H >= 256 at D = 128) with blocks of
 * 128: 4 and 8 query blocks a sequence, which the host and --quick keep
 * with blocks of 16. */
static const struct {
    const char *name;
    bool causal;
} train_patterns[] = {
    {"full", false},
    {"causal", true},
};
#define TRAIN_PATTERN_COUNT (sizeof train_patterns / sizeof train_patterns[0])
#define TRAIN_SHAPE_COUNT 2u
static const struct {
    int64_t width;
    int32_t block;
    struct {
        int64_t batch, l;
    } shapes[TRAIN_SHAPE_COUNT];
} train_scales[] = {
    [ATTENTION_SCALE_GPU] = {2048, 128, {{32, 512}, {16, 1024}}},
    [ATTENTION_SCALE_HOST] = {128, 16, {{8, 64}, {4, 128}}},
    [ATTENTION_SCALE_QUICK] = {128, 16, {{4, 64}, {2, 128}}},
};

/* F32 (on CUDA the tensor-core kernels' 3xTF32) beside PyTorch SDPA's F32:
 * dense at D = 64, 128 and 256, and causal at D = 128, at the sweep's
 * sizes (B = 2, L = 4096, H = 2048 / D on the GPU). */
static const struct {
    int64_t d;
    bool causal;
} f32_shapes[] = {{64, false}, {128, false}, {256, false}, {128, true}};
#define F32_COUNT (sizeof f32_shapes / sizeof f32_shapes[0])

/* Slots of the input and output rotations. */
enum { IN_Q, IN_K, IN_V, IN_DY, IN_COUNT };
enum { OUT_Y, OUT_LSE, OUT_DQ, OUT_DK, OUT_DV, OUT_COUNT };

struct attention_buffers {
    BkDataType dtype;
    uint64_t in_bytes[IN_COUNT], out_bytes[OUT_COUNT];
    uint32_t sets;
    struct bench_sets in, out;
};

size_t bench_attention_case_count(void)
{
    return TYPE_COUNT * (HEAD_DIM_COUNT * BLOCK_COUNT * PATTERN_COUNT +
                         SWEEP_COUNT * SWEEP_PATTERN_COUNT +
                         HEAD_DIM_COUNT * VARLEN_PATTERN_COUNT +
                         HEAD_DIM_COUNT * TRAIN_SHAPE_COUNT * TRAIN_PATTERN_COUNT) +
           F32_COUNT;
}

static void name_shape(struct attention_case *c)
{
    if (c->dv == c->d)
        snprintf(c->shape, sizeof c->shape, "%lldx%lldx%lldx%lld", (long long)c->batch,
                 (long long)c->heads, (long long)c->l, (long long)c->d);
    else
        snprintf(c->shape, sizeof c->shape, "%lldx%lldx%lldx%lld/%lld", (long long)c->batch,
                 (long long)c->heads, (long long)c->l, (long long)c->d, (long long)c->dv);
}

/* The sweep's cases of one type (see sweep_heads). */
static size_t sweep_cases(enum attention_scale scale, BkDataType dtype, struct attention_case *out,
                          size_t max)
{
    size_t n = 0;
    for (size_t h = 0; h < SWEEP_COUNT; h++)
        for (size_t i = 0; i < SWEEP_PATTERN_COUNT && n < max; i++) {
            const size_t p = sweep_patterns[i];
            const int64_t d = sweep_heads[h].d;
            struct attention_case *c = &out[n++];
            *c = (struct attention_case){
                dtype, sweep_scales[scale].batch,
                sweep_scales[scale].width / d > 0 ? sweep_scales[scale].width / d : 1,
                sweep_scales[scale].l, d, sweep_heads[h].dv, sweep_scales[scale].block,
                patterns[p].name, patterns[p].pat, patterns[p].form, patterns[p].causal, "",
                NULL, 0, "heads"};
            name_shape(c);
        }
    return n;
}

/* The packed variable-length cases of one type and head size and their
 * dense causal reference (see varlen_patterns). */
static size_t varlen_cases(enum attention_scale scale, BkDataType dtype, int64_t d,
                           struct attention_case *out, size_t max)
{
    int32_t count;
    const int32_t *lengths = varlen_lengths(scale, &count);
    size_t n = 0;
    for (size_t p = 0; p < VARLEN_PATTERN_COUNT && n < max; p++) {
        const bool packed = varlen_patterns[p].packed;
        struct attention_case *c = &out[n++];
        *c = (struct attention_case){
            dtype, packed ? 1 : scales[scale].batch, scales[scale].width / d,
            packed ? varlen_tokens(lengths, count) : scales[scale].l, d, d,
            scales[scale].blocks[BLOCK_COUNT - 1], varlen_patterns[p].name,
            patterns[0].pat, BK_ATTENTION_PATTERN_DENSE, varlen_patterns[p].causal, "",
            packed ? lengths : NULL, packed ? count : 0, "varlen"};
        name_shape(c);
    }
    return n;
}

/* The training shapes' cases of one type and head size (see
 * train_scales): dense, each shape full and causal. */
static size_t train_cases(enum attention_scale scale, BkDataType dtype, int64_t d,
                          struct attention_case *out, size_t max)
{
    size_t n = 0;
    for (size_t s = 0; s < TRAIN_SHAPE_COUNT; s++)
        for (size_t p = 0; p < TRAIN_PATTERN_COUNT && n < max; p++) {
            struct attention_case *c = &out[n++];
            *c = (struct attention_case){
                dtype, train_scales[scale].shapes[s].batch, train_scales[scale].width / d,
                train_scales[scale].shapes[s].l, d, d, train_scales[scale].block,
                train_patterns[p].name, patterns[0].pat, BK_ATTENTION_PATTERN_DENSE,
                train_patterns[p].causal, "", NULL, 0, "train"};
            name_shape(c);
        }
    return n;
}

/* The F32 cases (see f32_shapes): dense, "full" or "causal". */
static size_t f32_cases(enum attention_scale scale, struct attention_case *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < F32_COUNT && n < max; i++) {
        const int64_t d = f32_shapes[i].d, width = sweep_scales[scale].width;
        struct attention_case *c = &out[n++];
        *c = (struct attention_case){
            BK_DATA_TYPE_F32, sweep_scales[scale].batch, width / d > 0 ? width / d : 1,
            sweep_scales[scale].l, d, d, sweep_scales[scale].block,
            f32_shapes[i].causal ? "causal" : "full", patterns[0].pat,
            BK_ATTENTION_PATTERN_DENSE, f32_shapes[i].causal, "", NULL, 0, "f32"};
        name_shape(c);
    }
    return n;
}

size_t bench_attention_cases(enum attention_scale scale, struct attention_case *out, size_t max)
{
    size_t n = 0;
    for (size_t t = 0; t < TYPE_COUNT; t++)
        for (size_t h = 0; h < HEAD_DIM_COUNT; h++)
            for (size_t b = 0; b < BLOCK_COUNT; b++)
                for (size_t p = 0; p < PATTERN_COUNT && n < max; p++) {
                    struct attention_case *c = &out[n++];
                    *c = (struct attention_case){
                        attention_types[t], scales[scale].batch,
                        scales[scale].width / head_dims[h], scales[scale].l, head_dims[h],
                        head_dims[h], scales[scale].blocks[b], patterns[p].name,
                        patterns[p].pat, patterns[p].form, patterns[p].causal, "", NULL,
                        0, "main"};
                    if (c->pat.kind == ATTENTION_PATTERN_WINDOW)
                        c->pat.window = c->l / WINDOW_DIVISOR;
                    name_shape(c);
                }
    for (size_t t = 0; t < TYPE_COUNT && n < max; t++)
        n += sweep_cases(scale, attention_types[t], out + n, max - n);
    for (size_t t = 0; t < TYPE_COUNT; t++)
        for (size_t h = 0; h < HEAD_DIM_COUNT && n < max; h++)
            n += varlen_cases(scale, attention_types[t], head_dims[h], out + n, max - n);
    for (size_t t = 0; t < TYPE_COUNT; t++)
        for (size_t h = 0; h < HEAD_DIM_COUNT && n < max; h++)
            n += train_cases(scale, attention_types[t], head_dims[h], out + n, max - n);
    if (n < max)
        n += f32_cases(scale, out + n, max - n);
    return n;
}

struct attention_op_desc attention_case_desc(const struct attention_case *c, bool backward,
                                             int64_t capacity)
{
    /* Random patterns differ per head (shared by the batch); the window is
     * one pattern for all. */
    const bool per_head = c->pat.kind == ATTENTION_PATTERN_RANDOM;
    return (struct attention_op_desc){backward, c->dtype, c->batch, c->heads, c->heads, c->l,
                                      c->l, c->d, c->dv, c->block, c->block, c->form, c->causal,
                                      1, per_head ? c->heads : 1, capacity};
}

static uint64_t binding_size(const struct bench_plan *p, uint32_t slot)
{
    return p->bindings.bindings[slot].size;
}

/* ---- Buffers -------------------------------------------------------------- */

void bench_attention_release(struct bench_device *d, struct attention_buffers **buffers)
{
    struct attention_buffers *b = *buffers;
    if (!b)
        return;
    bench_sets_free(d, &b->in);
    bench_sets_free(d, &b->out);
    free(b);
    *buffers = NULL;
}

/* The buffers for the plans (bwd may be NULL): the ones kept when their
 * sizes fit, else new ones with random inputs, the same in every set. */
static struct attention_buffers *buffers_for(struct bench_device *d, BkDataType dtype,
                                             const struct bench_plan *fwd,
                                             const struct bench_plan *bwd,
                                             const struct bench_settings *s,
                                             struct attention_buffers **cache)
{
    uint64_t in[IN_COUNT] = {binding_size(fwd, BK_ATTENTION_BINDING_Q),
                             binding_size(fwd, BK_ATTENTION_BINDING_K),
                             binding_size(fwd, BK_ATTENTION_BINDING_V), 0};
    uint64_t out[OUT_COUNT] = {binding_size(fwd, BK_ATTENTION_BINDING_Y),
                               binding_size(fwd, BK_ATTENTION_BINDING_LSE), 0, 0, 0};
    if (bwd) {
        in[IN_DY] = binding_size(bwd, BK_ATTENTION_BACKWARD_BINDING_DY);
        out[OUT_DQ] = binding_size(bwd, BK_ATTENTION_BACKWARD_BINDING_DQ);
        out[OUT_DK] = binding_size(bwd, BK_ATTENTION_BACKWARD_BINDING_DK);
        out[OUT_DV] = binding_size(bwd, BK_ATTENTION_BACKWARD_BINDING_DV);
    }
    struct attention_buffers *b = *cache;
    if (b && b->dtype == dtype && memcmp(b->in_bytes, in, sizeof in) == 0 &&
        memcmp(b->out_bytes, out, sizeof out) == 0)
        return b;
    bench_attention_release(d, cache);
    b = calloc(1, sizeof *b);
    if (!b)
        tool_die("out of host memory");
    b->dtype = dtype;
    memcpy(b->in_bytes, in, sizeof in);
    memcpy(b->out_bytes, out, sizeof out);
    uint64_t working_set = 0;
    for (int k = 0; k < IN_COUNT; k++)
        working_set += in[k];
    for (int k = 0; k < OUT_COUNT; k++)
        working_set += out[k];
    b->sets = bench_sets_for(working_set, s);
    bench_sets_alloc(d, &b->in, b->sets, in, IN_COUNT);
    bench_sets_alloc(d, &b->out, b->sets, out, OUT_COUNT);
    for (uint32_t k = 0; k < IN_COUNT; k++)
        if (in[k])
            bench_buffer_fill_random(d, &b->in.buf[k], dtype, 11u + k);
    bench_sets_copy_first(d, &b->in, 0, IN_COUNT);
    *cache = b;
    return b;
}

/* ---- The pattern ---------------------------------------------------------- */

/* The pattern on the host and, for MASK and LIST, on the device; a
 * varlen case's sequences. */
struct pattern {
    uint8_t *mask;                        /* NULL for full */
    struct bench_buffer buf[3];           /* mask, counts, indices (as the slots) */
    BkAttentionSequencesInfo seq;         /* varlen: chained to both infos */
    struct bench_buffer offsets;          /* varlen: I32 [S + 1], lengthsQ and lengthsK */
};

static void make_pattern(const struct attention_case *c, struct attention_op_desc *fd,
                         struct attention_op_desc *bd, struct pattern *p,
                         struct attention_pattern_info *pi)
{
    memset(p, 0, sizeof *p);
    memset(pi, 0, sizeof *pi);
    if (c->sequences) {
        /* Dense: each sequence's own blocks, no pattern tensor. */
        p->seq = varlen_sequences_info(c);
        varlen_blocks(c, &pi->active_blocks, &pi->total_blocks);
        return;
    }
    pi->total_blocks = c->batch * c->heads * attention_nbq(fd) * attention_nbk(fd);
    if (c->form != BK_ATTENTION_PATTERN_DENSE) {
        /* The mask's shape: MASK's, the same for a LIST. */
        struct attention_op_desc md = *fd;
        md.form = BK_ATTENTION_PATTERN_MASK;
        const uint64_t bytes = attention_mask_bytes(&md);
        p->mask = malloc(bytes);
        if (!p->mask)
            tool_die("out of host memory");
        attention_pattern_mask(&md, &c->pat, p->mask);
        pi->hash = attention_mask_hash(p->mask, bytes);
        if (c->form == BK_ATTENTION_PATTERN_LIST)
            pi->capacity = fd->capacity = bd->capacity = attention_mask_capacity(&md, p->mask);
    }
    pi->active_blocks = attention_active_blocks(fd, p->mask);
}

static void upload(struct bench_device *d, uint64_t size, const void *data,
                   struct bench_buffer *b)
{
    bench_buffer_alloc(d, size, b);
    tool_check(bkCopyToDevice(d->ctx, b->address, data, size), "bkCopyToDevice (pattern)");
}

/* The pattern's tensors for the slots the plan gives them. */
static void upload_pattern(struct bench_device *d, const struct attention_op_desc *fd,
                           const struct bench_plan *plan, struct pattern *p)
{
    if (fd->form == BK_ATTENTION_PATTERN_MASK) {
        const uint64_t bytes = attention_mask_bytes(fd);
        if (binding_size(plan, BK_ATTENTION_BINDING_MASK) != bytes)
            tool_die("attention: the plan binds a mask of %llu bytes, bkbench made %llu",
                     (unsigned long long)binding_size(plan, BK_ATTENTION_BINDING_MASK),
                     (unsigned long long)bytes);
        upload(d, bytes, p->mask, &p->buf[0]);
    } else if (fd->form == BK_ATTENTION_PATTERN_LIST) {
        const uint64_t rows = (uint64_t)fd->pattern_batch * (uint64_t)fd->pattern_heads *
                              (uint64_t)attention_nbq(fd);
        const uint64_t cb = rows * 4, ib = rows * (uint64_t)fd->capacity * 4;
        if (binding_size(plan, BK_ATTENTION_BINDING_COUNTS) != cb ||
            binding_size(plan, BK_ATTENTION_BINDING_INDICES) != ib)
            tool_die("attention: the plan binds a list of %llu + %llu bytes, bkbench made "
                     "%llu + %llu",
                     (unsigned long long)binding_size(plan, BK_ATTENTION_BINDING_COUNTS),
                     (unsigned long long)binding_size(plan, BK_ATTENTION_BINDING_INDICES),
                     (unsigned long long)cb, (unsigned long long)ib);
        int32_t *counts = malloc(cb), *indices = malloc(ib);
        if (!counts || !indices)
            tool_die("out of host memory");
        attention_mask_to_list(fd, p->mask, counts, indices);
        upload(d, cb, counts, &p->buf[1]);
        upload(d, ib, indices, &p->buf[2]);
        free(indices);
        free(counts);
    }
    bench_device_wait(d);
}

/* A varlen case's offsets, bound to both lengths slots of both plans. */
static void upload_offsets(struct bench_device *d, const struct attention_case *c,
                           const struct bench_plan *plan, struct pattern *p)
{
    const uint64_t bytes = ((uint64_t)c->sequences + 1) * sizeof(int32_t);
    if (binding_size(plan, BK_ATTENTION_BINDING_LENGTHS_Q) != bytes ||
        binding_size(plan, BK_ATTENTION_BINDING_LENGTHS_K) != bytes)
        tool_die("attention: the plan binds offsets of %llu and %llu bytes, bkbench made %llu",
                 (unsigned long long)binding_size(plan, BK_ATTENTION_BINDING_LENGTHS_Q),
                 (unsigned long long)binding_size(plan, BK_ATTENTION_BINDING_LENGTHS_K),
                 (unsigned long long)bytes);
    int32_t offsets[VARLEN_MAX_SEQUENCES + 1];
    varlen_offsets(c, offsets);
    upload(d, bytes, offsets, &p->offsets);
    bench_device_wait(d);
}

static void free_pattern(struct bench_device *d, struct pattern *p)
{
    for (int k = 0; k < 3; k++)
        if (p->buf[k].size)
            bench_buffer_free(d, &p->buf[k]);
    if (p->offsets.size)
        bench_buffer_free(d, &p->offsets);
    free(p->mask);
    memset(p, 0, sizeof *p);
}

/* ---- The check -------------------------------------------------------------- */

/* How far a result may be from the reference, over its largest value:
 * a few roundings of the type (P and dS go through it in the kernels). */
double bench_attention_check_limit(BkDataType dtype, bool backward)
{
    if (dtype == BK_DATA_TYPE_F64)
        return 1e-9;
    if (dtype == BK_DATA_TYPE_F32)
        return 1e-3;
    return backward ? 5e-2 : 2e-2;
}

/* Where the checked problem lies in the bound tensors: batch entry b,
 * rows row0 .. row0 + Lq - 1 (and the same of the keys: Lq = Lk in every
 * case) of a length axis of l rows; a packed sequence's rows, or a whole
 * batch entry's (row0 = 0, l = L). */
struct place {
    int64_t b, row0, l;
};

/* Rows row0 .. row0 + rows - 1 of one head of a [B, heads, l, cols]
 * operand in set 0, as doubles. */
static double *download_head(struct bench_device *d, BkDeviceAddress base, BkDataType dtype,
                             const struct place *pl, int64_t heads, int64_t h, int64_t rows,
                             int64_t cols)
{
    const size_t es = tool_dtype_size(dtype), n = (size_t)rows * (size_t)cols;
    const uint64_t at = (((uint64_t)pl->b * (uint64_t)heads + (uint64_t)h) * (uint64_t)pl->l +
                         (uint64_t)pl->row0) * (uint64_t)cols * es;
    void *raw = bench_device_download(d, base + at, n * es);
    double *out = malloc(n * sizeof *out);
    if (!out)
        tool_die("out of host memory");
    for (size_t i = 0; i < n; i++)
        out[i] = bench_value_at(raw, i, dtype);
    free(raw);
    return out;
}

static double dot(const double *x, const double *y, int64_t n)
{
    double s = 0.0;
    for (int64_t i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

/* What the check reads of one (batch, head): q, y, dy and lse of the
 * query head, k and v of its kv head. */
struct head {
    double *q, *k, *v, *y, *dy, *lse;
};

static void load_head(struct bench_device *d, const struct attention_op_desc *o,
                      const struct attention_buffers *bufs, const struct place *pl, int64_t h,
                      bool backward, struct head *hd)
{
    const int64_t kvh = h / (o->heads / o->kv_heads);
    const BkDataType lse_type = o->dtype == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64
                                                             : BK_DATA_TYPE_F32;
    memset(hd, 0, sizeof *hd);
    hd->q = download_head(d, bench_sets_address(&bufs->in, 0, IN_Q), o->dtype, pl, o->heads, h,
                          o->lq, o->d);
    hd->k = download_head(d, bench_sets_address(&bufs->in, 0, IN_K), o->dtype, pl, o->kv_heads,
                          kvh, o->lk, o->d);
    hd->v = download_head(d, bench_sets_address(&bufs->in, 0, IN_V), o->dtype, pl, o->kv_heads,
                          kvh, o->lk, o->dv);
    hd->y = download_head(d, bench_sets_address(&bufs->out, 0, OUT_Y), o->dtype, pl, o->heads, h,
                          o->lq, o->dv);
    hd->lse = download_head(d, bench_sets_address(&bufs->out, 0, OUT_LSE), lse_type, pl, o->heads,
                            h, o->lq, 1);
    if (backward)
        hd->dy = download_head(d, bench_sets_address(&bufs->in, 0, IN_DY), o->dtype, pl,
                               o->heads, h, o->lq, o->dv);
}

static void free_head(struct head *hd)
{
    free(hd->q);
    free(hd->k);
    free(hd->v);
    free(hd->y);
    free(hd->dy);
    free(hd->lse);
}

/* Scaled scores of query i against every key, -inf where it sees none;
 * returns their maximum. */
static double scores(const struct attention_op_desc *o, const uint8_t *mask, int64_t b,
                     int64_t h, int64_t i, const struct head *hd, double *s)
{
    const double scale = 1.0 / sqrt((double)o->d);
    double m = -INFINITY;
    for (int64_t j = 0; j < o->lk; j++) {
        s[j] = attention_visible(o, mask, b, h, i, j)
                   ? scale * dot(hd->q + i * o->d, hd->k + j * o->d, o->d)
                   : -INFINITY;
        if (s[j] > m)
            m = s[j];
    }
    return m;
}

/* Running max |got - ref| and max |ref| of one output. */
struct err {
    double diff, top;
};

static void compare(struct err *e, double got, double ref)
{
    const double x = fabs(got - ref);
    if (!(x <= e->diff))                  /* NaN counts as the largest */
        e->diff = isnan(x) ? INFINITY : x;
    if (fabs(ref) > e->top)
        e->top = fabs(ref);
}

static double relative(const struct err *e)
{
    return e->top > 0 ? e->diff / e->top : e->diff;
}

/* The rows checked: 0, n/2 and n-1. */
static void check_rows(int64_t n, int64_t rows[ATTENTION_CHECK_ROWS])
{
    rows[0] = 0;
    rows[1] = n / 2;
    rows[2] = n - 1;
}

/* y and lse of the checked rows of the last head of problem o at pl
 * (batch entry pl->b of o, the last one) from q, k and v. */
static double check_forward(struct bench_device *d, const struct attention_op_desc *o,
                            const uint8_t *mask, const struct attention_buffers *bufs,
                            const struct place *pl)
{
    const int64_t b = pl->b, h = o->heads - 1;
    struct head hd;
    load_head(d, o, bufs, pl, h, false, &hd);
    double *s = malloc((size_t)o->lk * sizeof *s), *y = malloc((size_t)o->dv * sizeof *y);
    if (!s || !y)
        tool_die("out of host memory");
    struct err ey = {0, 0}, el = {0, 0};
    int64_t rows[ATTENTION_CHECK_ROWS];
    check_rows(o->lq, rows);
    for (int r = 0; r < ATTENTION_CHECK_ROWS; r++) {
        const int64_t i = rows[r];
        const double m = scores(o, mask, b, h, i, &hd, s);
        double l = 0.0;
        memset(y, 0, (size_t)o->dv * sizeof *y);
        for (int64_t j = 0; m > -INFINITY && j < o->lk; j++) {
            const double p = exp(s[j] - m);
            l += p;
            for (int64_t c = 0; c < o->dv; c++)
                y[c] += p * hd.v[j * o->dv + c];
        }
        for (int64_t c = 0; c < o->dv; c++)
            compare(&ey, hd.y[i * o->dv + c], l > 0 ? y[c] / l : 0.0);
        /* A row that sees no key has lse -inf; only finite ones compare. */
        const double lse = m > -INFINITY ? m + log(l) : -INFINITY;
        if (lse > -INFINITY || hd.lse[i] > -INFINITY)
            compare(&el, hd.lse[i], lse);
    }
    free(y);
    free(s);
    free_head(&hd);
    /* lse is a log: measured against at least 1. */
    if (el.top < 1)
        el.top = 1;
    const double ry = relative(&ey), rl = relative(&el);
    return ry > rl ? ry : rl;
}

/* dq of the checked query rows and dk, dv of the checked key rows of the
 * last head of problem o at pl, from the forward's y and lse that the
 * backward read. */
static double check_backward(struct bench_device *d, const struct attention_op_desc *o,
                             const uint8_t *mask, const struct attention_buffers *bufs,
                             const struct place *pl)
{
    const double scale = 1.0 / sqrt((double)o->d);
    const int64_t b = pl->b, h = o->heads - 1, group = o->heads / o->kv_heads;
    const int64_t kvh = h / group;
    const BkDataType t = o->dtype;
    double *dq = download_head(d, bench_sets_address(&bufs->out, 0, OUT_DQ), t, pl, o->heads,
                               h, o->lq, o->d);
    double *dk = download_head(d, bench_sets_address(&bufs->out, 0, OUT_DK), t, pl,
                               o->kv_heads, kvh, o->lk, o->d);
    double *dv = download_head(d, bench_sets_address(&bufs->out, 0, OUT_DV), t, pl,
                               o->kv_heads, kvh, o->lk, o->dv);
    double *s = malloc((size_t)o->lk * sizeof *s);
    double *acc = malloc((size_t)(o->d + o->dv) * sizeof *acc);
    if (!s || !acc)
        tool_die("out of host memory");
    struct err eq = {0, 0}, ek = {0, 0}, ev = {0, 0};
    int64_t qrows[ATTENTION_CHECK_ROWS], krows[ATTENTION_CHECK_ROWS];
    check_rows(o->lq, qrows);
    check_rows(o->lk, krows);

    /* dq_i = scale sum_j P_ij (dy_i . v_j - dy_i . y_i) k_j */
    struct head hd;
    load_head(d, o, bufs, pl, h, true, &hd);
    for (int r = 0; r < ATTENTION_CHECK_ROWS; r++) {
        const int64_t i = qrows[r];
        scores(o, mask, b, h, i, &hd, s);
        const double di = dot(hd.dy + i * o->dv, hd.y + i * o->dv, o->dv);
        memset(acc, 0, (size_t)o->d * sizeof *acc);
        for (int64_t j = 0; j < o->lk; j++) {
            if (s[j] == -INFINITY)
                continue;
            const double p = exp(s[j] - hd.lse[i]);
            const double ds = p * (dot(hd.dy + i * o->dv, hd.v + j * o->dv, o->dv) - di);
            for (int64_t c = 0; c < o->d; c++)
                acc[c] += scale * ds * hd.k[j * o->d + c];
        }
        for (int64_t c = 0; c < o->d; c++)
            compare(&eq, dq[i * o->d + c], acc[c]);
    }
    free_head(&hd);

    /* dv_j = sum_i P_ij dy_i, dk_j = scale sum_i dS_ij q_i over the query
     * heads of the kv head. */
    double *dkv = calloc((size_t)ATTENTION_CHECK_ROWS * (size_t)(o->d + o->dv), sizeof *dkv);
    if (!dkv)
        tool_die("out of host memory");
    for (int64_t hh = kvh * group; hh < (kvh + 1) * group; hh++) {
        load_head(d, o, bufs, pl, hh, true, &hd);
        for (int64_t i = 0; i < o->lq; i++) {
            const double di = dot(hd.dy + i * o->dv, hd.y + i * o->dv, o->dv);
            for (int r = 0; r < ATTENTION_CHECK_ROWS; r++) {
                const int64_t j = krows[r];
                if (!attention_visible(o, mask, b, hh, i, j))
                    continue;
                const double p =
                    exp(scale * dot(hd.q + i * o->d, hd.k + j * o->d, o->d) - hd.lse[i]);
                const double ds = p * (dot(hd.dy + i * o->dv, hd.v + j * o->dv, o->dv) - di);
                double *row = dkv + (size_t)r * (size_t)(o->d + o->dv);
                for (int64_t c = 0; c < o->d; c++)
                    row[c] += scale * ds * hd.q[i * o->d + c];
                for (int64_t c = 0; c < o->dv; c++)
                    row[o->d + c] += p * hd.dy[i * o->dv + c];
            }
        }
        free_head(&hd);
    }
    for (int r = 0; r < ATTENTION_CHECK_ROWS; r++) {
        const int64_t j = krows[r];
        const double *row = dkv + (size_t)r * (size_t)(o->d + o->dv);
        for (int64_t c = 0; c < o->d; c++)
            compare(&ek, dk[j * o->d + c], row[c]);
        for (int64_t c = 0; c < o->dv; c++)
            compare(&ev, dv[j * o->dv + c], row[o->d + c]);
    }
    free(dkv);
    free(acc);
    free(s);
    free(dv);
    free(dk);
    free(dq);
    double worst = relative(&eq);
    if (relative(&ek) > worst || isnan(relative(&ek)))
        worst = relative(&ek);
    if (relative(&ev) > worst || isnan(relative(&ev)))
        worst = relative(&ev);
    return worst;
}

/* The worse of two errors, NaN the worst. */
static double worse(double a, double b)
{
    return isnan(a) || a > b ? a : b;
}

/* The check of one direction: the last batch entry, or for varlen the
 * first and the last sequence, each a problem of its own (its causal
 * diagonal, its rows of the packed tensors). */
static double check(struct bench_device *d, const struct attention_case *c,
                    const struct attention_op_desc *o, const uint8_t *mask,
                    const struct attention_buffers *bufs)
{
    if (!c->sequences) {
        const struct place pl = {o->batch - 1, 0, o->lq};
        return o->backward ? check_backward(d, o, mask, bufs, &pl)
                           : check_forward(d, o, mask, bufs, &pl);
    }
    const int32_t which[ATTENTION_CHECK_SEQUENCES] = {0, c->sequences - 1};
    double err = 0.0;
    for (int k = 0; k < ATTENTION_CHECK_SEQUENCES; k++) {
        const struct attention_op_desc so = varlen_sequence_desc(c, o->backward, which[k]);
        const struct place pl = {0, varlen_first_row(c, which[k]), c->l};
        err = worse(err, o->backward ? check_backward(d, &so, NULL, bufs, &pl)
                                     : check_forward(d, &so, NULL, bufs, &pl));
    }
    return err;
}

int bench_attention_check_rows(const struct attention_case *c)
{
    return c->sequences ? ATTENTION_CHECK_SEQUENCES * ATTENTION_CHECK_ROWS
                        : ATTENTION_CHECK_ROWS;
}

static void judge(struct attention_result *r, const struct attention_case *c, double err,
                  bool backward)
{
    const BkDataType dtype = c->dtype;
    r->max_rel_err = err;
    const double limit = bench_attention_check_limit(dtype, backward);
    if (err <= limit)
        return;
    r->check_failed = true;
    snprintf(r->message, sizeof r->message,
             "%s differ%s from the host's reference by %.3g of the largest value (allowed "
             "%.3g) on %d rows of the last head of %s",
             backward ? "dq, dk or dv" : "y or lse", backward ? "" : "s", err, limit,
             bench_attention_check_rows(c),
             c->sequences ? "the first and the last sequence" : "the last batch entry");
}

/* ---- One case --------------------------------------------------------------- */

/* The bindings a plan of the case takes: the info's own (8, backward
 * 12), then with sequences the chained slots (lengthsQ, lengthsK and the
 * forward's unused block table). */
static uint32_t binding_count(const struct attention_case *c, bool backward)
{
    if (!c->sequences)
        return backward ? 12 : 8;
    return backward ? BK_ATTENTION_BACKWARD_BINDING_LENGTHS_K + 1
                    : BK_ATTENTION_BINDING_BLOCK_TABLE + 1;
}

/* Bindings of every set, binding_count a set. */
static BkDeviceAddress *bind_sets(const struct attention_case *c,
                                  const struct attention_buffers *bufs, const struct pattern *p,
                                  bool backward)
{
    const uint32_t nb = binding_count(c, backward);
    BkDeviceAddress *bind = calloc((size_t)bufs->sets * nb, sizeof *bind);
    if (!bind)
        tool_die("out of host memory");
    for (uint32_t set = 0; set < bufs->sets; set++) {
        BkDeviceAddress *a = bind + (size_t)set * nb;
        /* The forward's slots 0..7 are the backward's too. */
        a[BK_ATTENTION_BINDING_Q] = bench_sets_address(&bufs->in, set, IN_Q);
        a[BK_ATTENTION_BINDING_K] = bench_sets_address(&bufs->in, set, IN_K);
        a[BK_ATTENTION_BINDING_V] = bench_sets_address(&bufs->in, set, IN_V);
        a[BK_ATTENTION_BINDING_MASK] = p->buf[0].address;
        a[BK_ATTENTION_BINDING_COUNTS] = p->buf[1].address;
        a[BK_ATTENTION_BINDING_INDICES] = p->buf[2].address;
        a[BK_ATTENTION_BINDING_Y] = bench_sets_address(&bufs->out, set, OUT_Y);
        a[BK_ATTENTION_BINDING_LSE] = bench_sets_address(&bufs->out, set, OUT_LSE);
        if (c->sequences) {
            /* Lq = Lk per sequence: one offsets tensor for both. */
            a[backward ? BK_ATTENTION_BACKWARD_BINDING_LENGTHS_Q
                       : BK_ATTENTION_BINDING_LENGTHS_Q] = p->offsets.address;
            a[backward ? BK_ATTENTION_BACKWARD_BINDING_LENGTHS_K
                       : BK_ATTENTION_BINDING_LENGTHS_K] = p->offsets.address;
        }
        if (!backward)
            continue;
        a[BK_ATTENTION_BACKWARD_BINDING_DY] = bench_sets_address(&bufs->in, set, IN_DY);
        a[BK_ATTENTION_BACKWARD_BINDING_DQ] = bench_sets_address(&bufs->out, set, OUT_DQ);
        a[BK_ATTENTION_BACKWARD_BINDING_DK] = bench_sets_address(&bufs->out, set, OUT_DK);
        a[BK_ATTENTION_BACKWARD_BINDING_DV] = bench_sets_address(&bufs->out, set, OUT_DV);
    }
    return bind;
}

/* The plan, or false with why in r (an error named before its message). */
static bool make_plan(struct bench_device *d, const void *info, struct bench_plan *p,
                      struct attention_result *r)
{
    char msg[200];
    const BkResult res = bench_plan_try_create(d, info, p, msg, sizeof msg);
    if (res == BK_SUCCESS)
        return true;
    r->failed = res != BK_ERROR_UNSUPPORTED;
    if (r->failed)
        snprintf(r->message, sizeof r->message, "%s: %s", bkResultString(res), msg);
    else
        snprintf(r->message, sizeof r->message, "%s", msg);
    return false;
}

static void plan_facts(const struct bench_plan *p, uint32_t sets, struct attention_result *r)
{
    r->supported = true;
    snprintf(r->kernel, sizeof r->kernel, "%s", p->props.kernelName);
    r->workspace = p->props.workspaceSize;
    r->sets = sets;
}

void bench_attention_run(struct bench_device *d, const struct attention_case *c,
                         const struct bench_settings *s, struct attention_buffers **buffers,
                         struct attention_pattern_info *pi, struct attention_result *fwd,
                         struct attention_result *bwd)
{
    const bool time_fwd = fwd->ran, time_bwd = bwd->ran;
    memset(fwd, 0, sizeof *fwd);
    memset(bwd, 0, sizeof *bwd);
    fwd->ran = time_fwd;
    bwd->ran = time_bwd;
    fwd->max_rel_err = bwd->max_rel_err = -1.0;

    struct attention_op_desc fd = attention_case_desc(c, false, 0);
    struct attention_op_desc bd = attention_case_desc(c, true, 0);
    struct pattern pat;
    make_pattern(c, &fd, &bd, &pat, pi);
    fwd->flops = attention_flops(&fd, pi->active_blocks);
    bwd->flops = attention_flops(&bd, pi->active_blocks);

    /* The forward plan always: the backward reads its y and lse. */
    union attention_op_info fi, bi;
    struct bench_plan fp, bp;
    attention_op_build(&fd, &fi);
    attention_op_build(&bd, &bi);
    if (c->sequences)
        fi.fwd.pNext = bi.bwd.pNext = &pat.seq;
    if (!make_plan(d, &fi.fwd, &fp, fwd)) {
        bwd->failed = fwd->failed;
        snprintf(bwd->message, sizeof bwd->message, "no forward plan for y and lse: %.200s",
                 fwd->message);
        free_pattern(d, &pat);
        return;
    }
    bool backward = time_bwd && make_plan(d, &bi.bwd, &bp, bwd);
    if (fp.props.bindingCount != binding_count(c, false) ||
        (backward && bp.props.bindingCount != binding_count(c, true)))
        tool_die("attention: plans with %u and %u bindings, bkbench expects %u and %u",
                 fp.props.bindingCount,
                 backward ? bp.props.bindingCount : binding_count(c, true),
                 binding_count(c, false), binding_count(c, true));

    struct attention_buffers *bufs = buffers_for(d, c->dtype, &fp, backward ? &bp : NULL, s,
                                                 buffers);
    upload_pattern(d, &fd, &fp, &pat);
    if (c->sequences)
        upload_offsets(d, c, &fp, &pat);
    BkDeviceAddress *fb = bind_sets(c, bufs, &pat, false);
    /* Run 0 of a timing uses set 0, the set checked. */
    if (time_fwd) {
        plan_facts(&fp, bufs->sets, fwd);
        fwd->us = bench_plan_time(d, &fp, fb, bufs->sets, BENCH_SUBMIT_REUSABLE, s, &fwd->t);
        bench_noise_note(&fwd->t);
    } else {
        bench_plan_run_once(d, &fp, fb);
    }
    /* Set 0's y and lse are every set's: the inputs are the same. */
    bench_sets_copy_first(d, &bufs->out, OUT_Y, 2);
    if (time_fwd)
        judge(fwd, c, check(d, c, &fd, pat.mask, bufs), false);
    if (backward) {
        BkDeviceAddress *bb = bind_sets(c, bufs, &pat, true);
        plan_facts(&bp, bufs->sets, bwd);
        bwd->us = bench_plan_time(d, &bp, bb, bufs->sets, BENCH_SUBMIT_REUSABLE, s, &bwd->t);
        bench_noise_note(&bwd->t);
        judge(bwd, c, check(d, c, &bd, pat.mask, bufs), true);
        free(bb);
        bench_plan_destroy(d, &bp);
    }
    free(fb);
    bench_plan_destroy(d, &fp);
    free_pattern(d, &pat);
}

/* ---- The suite -------------------------------------------------------------- */

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        tool_die("out of host memory");
    return p;
}

void attention_suite_open(struct attention_suite *a, enum attention_scale scale,
                          const struct bench_settings *s, attention_filter_fn keep,
                          const void *user)
{
    memset(a, 0, sizeof *a);
    a->s = *s;
    const size_t total = bench_attention_case_count();
    a->cases = xcalloc(total, sizeof *a->cases);
    a->pattern = xcalloc(total, sizeof *a->pattern);
    a->fwd = xcalloc(total, sizeof *a->fwd);
    a->bwd = xcalloc(total, sizeof *a->bwd);
    const size_t made = bench_attention_cases(scale, a->cases, total);
    for (size_t i = 0; i < made; i++) {
        const bool f = keep(&a->cases[i], false, user);
        const bool b = keep(&a->cases[i], true, user);
        if (!f && !b)
            continue;
        a->fwd[a->n].ran = f;
        a->bwd[a->n].ran = b;
        a->cases[a->n++] = a->cases[i];
    }
}

void attention_suite_run(struct attention_suite *a, struct bench_device *d, bool json)
{
    if (a->n && !json)
        bench_attention_print_header(&a->s);
    /* Buffers are kept across the cases of one dtype and shape. */
    struct attention_buffers *buffers = NULL;
    for (size_t i = 0; i < a->n; i++) {
        const struct attention_case *c = &a->cases[i];
        const bool fwd = a->fwd[i].ran, bwd = a->bwd[i].ran;
        bench_progress_case((size_t)fwd + bwd, "%s %s %s blk %d %s %s",
                            fwd && bwd ? "attention" : attention_op_name(bwd),
                            tool_dtype_name(c->dtype), c->shape, (int)c->block, c->pattern,
                            attention_form_name(c->form));
        bench_attention_run(d, c, &a->s, &buffers, &a->pattern[i], &a->fwd[i], &a->bwd[i]);
        bench_progress_done();
        if (!json)
            bench_attention_print_rows(&a->cases[i], &a->pattern[i], &a->fwd[i], &a->bwd[i]);
    }
    bench_attention_release(d, &buffers);
}

size_t attention_suite_report_failures(const struct attention_suite *a)
{
    size_t failed = 0;
    for (size_t i = 0; i < a->n; i++)
        for (int dir = 0; dir < 2; dir++) {
            const struct attention_case *c = &a->cases[i];
            const struct attention_result *r = dir ? &a->bwd[i] : &a->fwd[i];
            const char *what = r->failed         ? "plan failed"
                               : !r->supported   ? "unsupported"
                               : r->check_failed ? "wrong result"
                                                 : NULL;
            if (!r->ran || !what)
                continue;
            failed++;
            fprintf(stderr, "bkbench: %s %s %s block %d %s (%s): %s: %s\n",
                    attention_op_name(dir != 0), tool_dtype_name(c->dtype), c->shape,
                    (int)c->block, c->pattern, attention_form_name(c->form), what, r->message);
        }
    return failed;
}

void attention_suite_close(struct attention_suite *a)
{
    free(a->bwd);
    free(a->fwd);
    free(a->pattern);
    free(a->cases);
    memset(a, 0, sizeof *a);
}
