/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's attention-decode cases. Per case: the plan, q, k, v, y and
 * lse in as many sets as take the working set past the rotation size
 * (every set holds set 0's random inputs at other addresses), a reusable
 * command buffer per set replayed round robin, then the check of set
 * 0's y and lse (run 0 of the timing used set 0). */
#include "bench_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_plan.h"
#include "bench_progress.h"
#include "bench_random.h"
#include "bench_sets.h"
#include "tool_common.h"

static const BkDataType decode_types[] = {BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16};
#define TYPE_COUNT (sizeof decode_types / sizeof decode_types[0])
static const int64_t head_dims[] = {128, 64};
#define HEAD_DIM_COUNT (sizeof head_dims / sizeof head_dims[0])

struct decode_shape {
    int64_t batch, heads, kv_heads, lq, lk;
    bool causal;
    int32_t page;                         /* 0: contiguous */
    bool by_token;                        /* the pool [pages, page, Hkv, D] (" NHD") */
    int64_t d;                            /* 0: each of head_dims */
};

/* The GPU's: the shapes decoders run (Llama-70B-like GQA 64/8 and 32/8,
 * MHA 32/32, speculative Lq 2, 4, 8 and 16 causal), each at D = 128 and
 * 64 but those of a head size of their own. */
static const struct decode_shape gpu_shapes[] = {
    {8, 64, 8, 1, 8192, false, 0, false, 0},    {8, 64, 8, 1, 32768, false, 0, false, 0},
    {1, 64, 8, 1, 131072, false, 0, false, 0},  {32, 32, 8, 1, 4096, false, 0, false, 0},
    {8, 64, 8, 4, 32768, true, 0, false, 0},    {8, 64, 8, 16, 8192, true, 0, false, 0},
    {8, 32, 32, 1, 8192, false, 0, false, 0},   {1, 64, 8, 1, 4096, false, 0, false, 0},
    {8, 64, 8, 2, 32768, true, 0, false, 0},    {8, 64, 8, 8, 16384, true, 0, false, 0},
    {1, 64, 8, 1, 32768, false, 0, false, 0}, /* a decode step's batch of one (--op decode-step) */
    /* Paged caches of vLLM's (16), FlashInfer's and FlashAttention's page sizes */
    {8, 64, 8, 1, 32768, false, 16, false, 0},  {8, 64, 8, 1, 32768, false, 64, false, 0},
    {8, 64, 8, 1, 32768, false, 256, false, 0}, {32, 32, 8, 1, 4096, false, 16, false, 0},
    {8, 64, 8, 4, 32768, true, 64, false, 0},   {8, 64, 8, 8, 16384, true, 64, false, 0},
    {8, 64, 8, 16, 8192, true, 64, false, 0},
    /* ... and stored token by token, as vLLM and FlashAttention store them */
    {8, 64, 8, 1, 32768, false, 16, true, 0},   {32, 32, 8, 1, 4096, false, 16, true, 0},
    {8, 64, 8, 4, 32768, true, 64, true, 0},
    /* Other head sizes: Gemma-2's 256 (16 heads over 8), Phi-3's 96 (32, ungrouped) */
    {8, 16, 8, 1, 8192, false, 0, false, 256}, {8, 32, 32, 1, 4096, false, 0, false, 96},
};
/* The host's: the same kinds of shape, seconds with the check. */
static const struct decode_shape host_shapes[] = {
    {2, 8, 2, 1, 512, false, 0, false, 0},   {1, 8, 2, 4, 256, true, 0, false, 0},
    {1, 8, 2, 16, 256, true, 0, false, 0},   {2, 4, 4, 1, 256, false, 0, false, 0},
    {2, 8, 2, 1, 512, false, 16, false, 0},  {1, 8, 2, 4, 256, true, 64, false, 0},
    {2, 8, 2, 1, 512, false, 16, true, 0},   {1, 4, 2, 1, 256, false, 0, false, 256},
    {2, 4, 4, 1, 256, false, 0, false, 96},
};
static const struct decode_shape quick_shapes[] = {
    {1, 4, 2, 1, 128, false, 0, false, 0},
    {1, 4, 2, 4, 64, true, 0, false, 0},
    {1, 4, 2, 1, 128, false, 32, false, 0},
};
#define COUNT(a) (sizeof a / sizeof a[0])
#define MAX_SHAPES COUNT(gpu_shapes)

static const struct {
    const struct decode_shape *shapes;
    size_t n;
} scales[] = {
    [ATTENTION_SCALE_GPU] = {gpu_shapes, COUNT(gpu_shapes)},
    [ATTENTION_SCALE_HOST] = {host_shapes, COUNT(host_shapes)},
    [ATTENTION_SCALE_QUICK] = {quick_shapes, COUNT(quick_shapes)},
};

/* Slots of the input and output rotations. */
enum { IN_Q, IN_K, IN_V, IN_COUNT };
enum { OUT_Y, OUT_LSE, OUT_COUNT };

/* ---- Timing ------------------------------------------------------------------ */

void bench_spread_time(struct bench_device *d, const BkCommandBuffer *cmds, uint32_t ncmds,
                       const struct bench_settings *s, struct bench_spread *t)
{
    double *us = calloc(s->repeats, sizeof *us);
    if (!us)
        tool_die("out of host memory");
    bench_device_time(d, cmds, ncmds, s->warmup, s->repeats, us);
    bench_spread_of(us, s->repeats, t);
    bench_noise_note(t);
    free(us);
}

/* ---- Cases ------------------------------------------------------------------- */

size_t bench_decode_case_count(void)
{
    return TYPE_COUNT * HEAD_DIM_COUNT * MAX_SHAPES;
}

size_t bench_decode_cases(enum attention_scale scale, struct decode_case *out, size_t max)
{
    size_t n = 0;
    for (size_t t = 0; t < TYPE_COUNT; t++)
        for (size_t h = 0; h < HEAD_DIM_COUNT; h++)
            for (size_t k = 0; k < scales[scale].n && n < max; k++) {
                const struct decode_shape *sh = &scales[scale].shapes[k];
                if (sh->d && h > 0) /* a shape of its own head size: once */
                    continue;
                struct decode_case *c = &out[n++];
                *c = (struct decode_case){decode_types[t], sh->d ? sh->d : head_dims[h],
                                          sh->batch,   sh->heads, sh->kv_heads, sh->lq,
                                          sh->lk,      sh->causal, sh->page,   sh->by_token,
                                          ""};
                char page[24] = "";
                if (c->page)
                    snprintf(page, sizeof page, " page%d%s", (int)c->page,
                             c->by_token ? " NHD" : "");
                snprintf(c->name, sizeof c->name, "%s D%lld B%lld H%lld/%lld Lq%lld Lk%lld%s%s",
                         tool_dtype_name(c->dtype), (long long)c->d, (long long)c->batch,
                         (long long)c->heads, (long long)c->kv_heads, (long long)c->lq,
                         (long long)c->lk, c->causal ? " causal" : "", page);
            }
    return n;
}

static struct attention_op_desc case_desc(const struct decode_case *c)
{
    return (struct attention_op_desc){false, c->dtype, c->batch, c->heads, c->kv_heads,
                                      c->lq, c->lk, c->d, c->d, 0, 0,
                                      BK_ATTENTION_PATTERN_DENSE, c->causal, 1, 1, 0};
}

/* ---- Paged caches -------------------------------------------------------------- */

/* A paged case's pool: every sequence's ceil(Lk / page) pages, shuffled
 * over the pool (Fisher-Yates from splitmix64 with a fixed seed), the
 * table [B, pages a sequence] and the lengths [B] (all Lk) on the device. */
struct paged_cache {
    int64_t per_seq, pages;
    int32_t *table;                       /* host copy */
    struct bench_buffer table_buf, lengths_buf;
    BkAttentionSequencesInfo seq;
    BkAttentionPagedKvInfo paged;
};

static void upload_i32(struct bench_device *d, const int32_t *data, int64_t n,
                       struct bench_buffer *b)
{
    const uint64_t bytes = (uint64_t)n * sizeof *data;
    bench_buffer_alloc(d, bytes, b);
    tool_check(bkCopyToDevice(d->ctx, b->address, data, bytes), "bkCopyToDevice (pages)");
}

/* Chains the paged description to the forward info f: k and v become the
 * pool [pages, Hkv, page, D], stored so or (by_token) as [pages, page,
 * Hkv, D], the same view with permuted strides. */
static void paged_open(struct bench_device *d, const struct decode_case *c, BkAttentionInfo *f,
                       struct paged_cache *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->per_seq = (c->lk + c->page - 1) / c->page;
    pc->pages = c->batch * pc->per_seq;
    pc->table = malloc((size_t)pc->pages * sizeof *pc->table);
    int32_t *lengths = malloc((size_t)c->batch * sizeof *lengths);
    if (!pc->table || !lengths)
        tool_die("out of host memory");
    for (int64_t i = 0; i < pc->pages; i++)
        pc->table[i] = (int32_t)i;
    uint64_t state = 0x9A6E5EEDull;
    for (int64_t i = pc->pages - 1; i > 0; i--) {
        const int64_t j = (int64_t)(attention_splitmix64(&state) % (uint64_t)(i + 1));
        const int32_t t = pc->table[i];
        pc->table[i] = pc->table[j];
        pc->table[j] = t;
    }
    for (int64_t b = 0; b < c->batch; b++)
        lengths[b] = (int32_t)c->lk;
    upload_i32(d, pc->table, pc->pages, &pc->table_buf);
    upload_i32(d, lengths, c->batch, &pc->lengths_buf);
    free(lengths);
    BkTensorDesc kv = f->k;
    kv.extent[0] = pc->pages;
    kv.extent[2] = c->page;
    if (c->by_token) {
        kv.stride[3] = 1;
        kv.stride[1] = c->d;
        kv.stride[2] = c->kv_heads * c->d;
        kv.stride[0] = c->page * kv.stride[2];
    }
    f->k = f->v = kv;
    pc->seq.sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO;
    pc->seq.form = BK_ATTENTION_SEQUENCES_PADDED;
    pc->seq.lengthsK.dataType = BK_DATA_TYPE_I32;
    pc->seq.lengthsK.rank = 1;
    pc->seq.lengthsK.extent[0] = c->batch;
    pc->paged.sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO;
    pc->paged.pNext = &pc->seq;
    pc->paged.blockTable.dataType = BK_DATA_TYPE_I32;
    pc->paged.blockTable.rank = 2;
    pc->paged.blockTable.extent[0] = c->batch;
    pc->paged.blockTable.extent[1] = pc->per_seq;
    f->pNext = &pc->paged;
}

static void paged_close(struct bench_device *d, struct paged_cache *pc)
{
    free(pc->table);
    bench_buffer_free(d, &pc->table_buf);
    bench_buffer_free(d, &pc->lengths_buf);
}

/* ---- The check --------------------------------------------------------------- */

/* One [rows, cols] slice of a [B, heads, rows, cols] operand, as doubles. */
static double *download_head(struct bench_device *d, BkDeviceAddress base, BkDataType dtype,
                             int64_t b, int64_t heads, int64_t h, int64_t rows, int64_t cols)
{
    const size_t es = tool_dtype_size(dtype), n = (size_t)rows * (size_t)cols;
    const uint64_t at = ((uint64_t)b * (uint64_t)heads + (uint64_t)h) * n * es;
    void *raw = bench_device_download(d, base + at, n * es);
    double *out = malloc(n * sizeof *out);
    if (!out)
        tool_die("out of host memory");
    for (size_t i = 0; i < n; i++)
        out[i] = bench_value_at(raw, i, dtype);
    free(raw);
    return out;
}

static void compare(double *diff, double *top, double got, double ref)
{
    const double x = fabs(got - ref);
    if (!(x <= *diff))                    /* NaN counts as the largest */
        *diff = isnan(x) ? INFINITY : x;
    if (fabs(ref) > *top)
        *top = fabs(ref);
}

/* Rows 0..Lk-1 of kv head kvh of sequence b of a paged pool, as doubles:
 * each page's rows from where the table puts them. */
static double *download_paged(struct bench_device *d, BkDeviceAddress base, BkDataType dtype,
                              const struct decode_case *c, const struct paged_cache *pc,
                              int64_t b, int64_t kvh)
{
    double *out = malloc((size_t)c->lk * (size_t)c->d * sizeof *out);
    if (!out)
        tool_die("out of host memory");
    for (int64_t p = 0; p < pc->per_seq; p++) {
        const int64_t rows = c->lk - p * c->page < c->page ? c->lk - p * c->page : c->page;
        const int64_t page = pc->table[b * pc->per_seq + p];
        if (!c->by_token) {
            double *part = download_head(d, base, dtype, page, c->kv_heads, kvh, c->page, c->d);
            memcpy(out + p * c->page * c->d, part, (size_t)(rows * c->d) * sizeof *out);
            free(part);
            continue;
        }
        /* The page [page, Hkv, D] whole, then kv head kvh's rows of it. */
        double *part = download_head(d, base, dtype, page, 1, 0, c->page, c->kv_heads * c->d);
        for (int64_t r = 0; r < rows; r++)
            memcpy(out + (p * c->page + r) * c->d, part + (r * c->kv_heads + kvh) * c->d,
                   (size_t)c->d * sizeof *out);
        free(part);
    }
    return out;
}

/* max |result - reference| / max |reference| of y and lse (lse against
 * at least 1: it is a log) over every query row of the last batch and
 * head, from set 0. */
static double check(struct bench_device *d, const struct decode_case *c,
                    const struct paged_cache *pc, const struct bench_sets *in,
                    const struct bench_sets *out)
{
    const int64_t b = c->batch - 1, h = c->heads - 1, kvh = h / (c->heads / c->kv_heads);
    const BkDataType t = c->dtype;
    double *q = download_head(d, bench_sets_address(in, 0, IN_Q), t, b, c->heads, h, c->lq, c->d);
    const BkDeviceAddress ka = bench_sets_address(in, 0, IN_K), va = bench_sets_address(in, 0, IN_V);
    double *k = c->page ? download_paged(d, ka, t, c, pc, b, kvh)
                        : download_head(d, ka, t, b, c->kv_heads, kvh, c->lk, c->d);
    double *v = c->page ? download_paged(d, va, t, c, pc, b, kvh)
                        : download_head(d, va, t, b, c->kv_heads, kvh, c->lk, c->d);
    double *y = download_head(d, bench_sets_address(out, 0, OUT_Y), t, b, c->heads, h, c->lq,
                              c->d);
    double *lse = download_head(d, bench_sets_address(out, 0, OUT_LSE), BK_DATA_TYPE_F32, b,
                                c->heads, h, c->lq, 1);
    double *s = malloc((size_t)c->lk * sizeof *s), *acc = malloc((size_t)c->d * sizeof *acc);
    if (!s || !acc)
        tool_die("out of host memory");
    const double scale = 1.0 / sqrt((double)c->d);
    double dy = 0, ty = 0, dl = 0, tl = 1;
    for (int64_t i = 0; i < c->lq; i++) {
        /* Causal: query i sees keys j <= i + (Lk - Lq), bottom-right. */
        const int64_t seen = c->causal ? i + (c->lk - c->lq) + 1 : c->lk;
        double m = -INFINITY, l = 0;
        for (int64_t j = 0; j < seen; j++) {
            double x = 0;
            for (int64_t e = 0; e < c->d; e++)
                x += q[i * c->d + e] * k[j * c->d + e];
            s[j] = scale * x;
            m = s[j] > m ? s[j] : m;
        }
        memset(acc, 0, (size_t)c->d * sizeof *acc);
        for (int64_t j = 0; j < seen; j++) {
            const double p = exp(s[j] - m);
            l += p;
            for (int64_t e = 0; e < c->d; e++)
                acc[e] += p * v[j * c->d + e];
        }
        for (int64_t e = 0; e < c->d; e++)
            compare(&dy, &ty, y[i * c->d + e], acc[e] / l);
        compare(&dl, &tl, lse[i], m + log(l));
    }
    free(acc);
    free(s);
    free(lse);
    free(y);
    free(v);
    free(k);
    free(q);
    const double ry = ty > 0 ? dy / ty : dy, rl = dl / tl;
    return isnan(ry) || ry > rl ? ry : rl;
}

/* ---- One case ------------------------------------------------------------------ */

static uint64_t binding_size(const struct bench_plan *p, uint32_t slot)
{
    return p->bindings.bindings[slot].size;
}

void bench_decode_run(struct bench_device *d, const struct decode_case *c,
                      const struct bench_settings *s, double copy_gb_per_s,
                      struct decode_result *r)
{
    memset(r, 0, sizeof *r);
    r->max_rel_err = -1.0;
    const size_t es = tool_dtype_size(c->dtype);
    r->kv_bytes = 2 * (uint64_t)c->batch * (uint64_t)c->kv_heads * (uint64_t)c->lk *
                  (uint64_t)c->d * es;

    struct attention_op_desc desc = case_desc(c);
    union attention_op_info info;
    struct bench_plan p;
    char msg[200];
    const void *op = attention_op_build(&desc, &info);
    struct paged_cache pc;
    memset(&pc, 0, sizeof pc);
    if (c->page)
        paged_open(d, c, &info.fwd, &pc);
    const BkResult res = bench_plan_try_create(d, op, &p, msg, sizeof msg);
    if (res != BK_SUCCESS) {
        r->failed = res != BK_ERROR_UNSUPPORTED;
        snprintf(r->message, sizeof r->message, "%s%s%s", r->failed ? bkResultString(res) : "",
                 r->failed ? ": " : "", msg);
        if (c->page)
            paged_close(d, &pc);
        return;
    }
    const uint32_t bindings = c->page ? BK_ATTENTION_BINDING_BLOCK_TABLE + 1 : 8;
    if (p.props.bindingCount != bindings)
        tool_die("attention: a plan with %u bindings, bkbench expects %u", p.props.bindingCount,
                 bindings);
    r->supported = true;
    snprintf(r->kernel, sizeof r->kernel, "%s", p.props.kernelName);
    r->workspace = p.props.workspaceSize;

    const uint64_t in_bytes[IN_COUNT] = {binding_size(&p, BK_ATTENTION_BINDING_Q),
                                         binding_size(&p, BK_ATTENTION_BINDING_K),
                                         binding_size(&p, BK_ATTENTION_BINDING_V)};
    const uint64_t out_bytes[OUT_COUNT] = {binding_size(&p, BK_ATTENTION_BINDING_Y),
                                           binding_size(&p, BK_ATTENTION_BINDING_LSE)};
    r->sets = bench_sets_for(in_bytes[0] + in_bytes[1] + in_bytes[2] + out_bytes[0] +
                                 out_bytes[1], s);
    struct bench_sets in, out;
    bench_sets_alloc(d, &in, r->sets, in_bytes, IN_COUNT);
    bench_sets_alloc(d, &out, r->sets, out_bytes, OUT_COUNT);
    for (uint32_t k = 0; k < IN_COUNT; k++)
        bench_buffer_fill_random(d, &in.buf[k], c->dtype, 31u + k);
    bench_sets_copy_first(d, &in, 0, IN_COUNT);

    BkCommandBuffer *cmds = calloc(r->sets, sizeof *cmds);
    if (!cmds)
        tool_die("out of host memory");
    for (uint32_t set = 0; set < r->sets; set++) {
        BkDeviceAddress a[BK_ATTENTION_BINDING_BLOCK_TABLE + 1] = {0};
        if (c->page) {
            a[BK_ATTENTION_BINDING_LENGTHS_K] = pc.lengths_buf.address;
            a[BK_ATTENTION_BINDING_BLOCK_TABLE] = pc.table_buf.address;
        }
        a[BK_ATTENTION_BINDING_Q] = bench_sets_address(&in, set, IN_Q);
        a[BK_ATTENTION_BINDING_K] = bench_sets_address(&in, set, IN_K);
        a[BK_ATTENTION_BINDING_V] = bench_sets_address(&in, set, IN_V);
        a[BK_ATTENTION_BINDING_Y] = bench_sets_address(&out, set, OUT_Y);
        a[BK_ATTENTION_BINDING_LSE] = bench_sets_address(&out, set, OUT_LSE);
        tool_check(bkAllocateCommandBuffer(d->ctx, NULL, &cmds[set]), "bkAllocateCommandBuffer");
        BkCommandBufferBeginInfo bi = {BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                       BK_COMMAND_BUFFER_USAGE_REUSABLE};
        BkRunInfo ri = {BK_STRUCTURE_TYPE_RUN_INFO, NULL, bindings, a, NULL,
                        p.workspace_address, p.props.workspaceSize};
        tool_check(bkBeginCommandBuffer(cmds[set], &bi), "bkBeginCommandBuffer");
        tool_check(bkCmdRun(cmds[set], p.plan, &ri), "bkCmdRun");
        tool_check(bkEndCommandBuffer(cmds[set]), "bkEndCommandBuffer");
    }
    bench_spread_time(d, cmds, r->sets, s, &r->t);
    for (uint32_t set = 0; set < r->sets; set++)
        bkFreeCommandBuffer(cmds[set]);
    free(cmds);
    r->gb_per_s = (double)r->kv_bytes / (r->t.us * 1e-6) / 1e9;
    r->roofline = copy_gb_per_s > 0 ? r->gb_per_s / copy_gb_per_s : 0.0;

    r->max_rel_err = check(d, c, &pc, &in, &out);
    const double limit = bench_attention_check_limit(c->dtype, false);
    if (!(r->max_rel_err <= limit)) {
        r->check_failed = true;
        snprintf(r->message, sizeof r->message,
                 "y or lse differs from the host's reference by %.3g of the largest value "
                 "(allowed %.3g) on the %lld query rows of the last batch and head",
                 r->max_rel_err, limit, (long long)c->lq);
    }
    bench_sets_free(d, &out);
    bench_sets_free(d, &in);
    bench_plan_destroy(d, &p);
    if (c->page)
        paged_close(d, &pc);
}

/* ---- The suite ------------------------------------------------------------------ */

void decode_suite_open(struct decode_suite *a, enum attention_scale scale,
                       const struct bench_settings *s, decode_filter_fn keep, const void *user)
{
    memset(a, 0, sizeof *a);
    a->s = *s;
    const size_t total = bench_decode_case_count();
    a->cases = calloc(total, sizeof *a->cases);
    a->res = calloc(total, sizeof *a->res);
    if (!a->cases || !a->res)
        tool_die("out of host memory");
    const size_t made = bench_decode_cases(scale, a->cases, total);
    for (size_t i = 0; i < made; i++)
        if (keep(&a->cases[i], user))
            a->cases[a->n++] = a->cases[i];
}

void decode_suite_run(struct decode_suite *a, struct bench_device *d, double copy_gb_per_s,
                      bool json)
{
    if (a->n && !json)
        bench_decode_print_header(&a->s, copy_gb_per_s);
    for (size_t i = 0; i < a->n; i++) {
        bench_progress_case(1, "attention-decode %s", a->cases[i].name);
        bench_decode_run(d, &a->cases[i], &a->s, copy_gb_per_s, &a->res[i]);
        bench_progress_done();
        if (!json)
            bench_decode_print_row(&a->cases[i], &a->res[i]);
    }
}

size_t decode_suite_report_failures(const struct decode_suite *a)
{
    size_t failed = 0;
    for (size_t i = 0; i < a->n; i++) {
        const struct decode_result *r = &a->res[i];
        const char *what = r->failed         ? "plan failed"
                           : !r->supported   ? "unsupported"
                           : r->check_failed ? "wrong result"
                                             : NULL;
        if (!what)
            continue;
        failed++;
        fprintf(stderr, "bkbench: attention-decode %s: %s: %s\n", a->cases[i].name, what,
                r->message);
    }
    return failed;
}

void decode_suite_close(struct decode_suite *a)
{
    free(a->res);
    free(a->cases);
    memset(a, 0, sizeof *a);
}
