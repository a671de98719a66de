/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's W4A16 GEMM cases. Per weight (dtype, K, N), outside the
 * timing: a random weight W[K, N] of the dtype is quantized
 * (BK_W4A16_QUANTIZE) into U8 values and scales and packed
 * (BK_W4A16_PACK) into Marlin's layout once, the packed weight and scales
 * are copied into enough rotation sets that their bytes exceed the
 * rotation size (twice the cache), and each set also gets a random dense
 * B[N, K] for the dense comparison; the host keeps the dequantized
 * weight of a few columns. Per case (M): A[M, K] and C[M, N] per set,
 * one run checked against the host's reference, then rounds of the
 * W4A16 plan replayed from reusable command buffers, alternating with
 * the dense GEMM of the same M, N, K, A and C (cuBLASLt called directly
 * where it is loaded, else libbk's dense plan), both rotating over the
 * same sets. Zero-point cases quantize asymmetrically, pack the zero
 * points too and chain a BkW4A16ZeroPointsInfo to every plan. */
#include "bench_w4a16.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_host_blas.h"
#include "bench_plan.h"
#include "bench_random.h"
#include "bench_sets.h"
#include "gemm_op.h"
#include "tool_common.h"

static const BkDataType w4a16_types[] = {BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16};
#define TYPE_COUNT (sizeof w4a16_types / sizeof w4a16_types[0])

/* Weights [K, N] at the GPU scale: Llama-2-7B's fused q/k/v, fused
 * gate/up and down; a square one; Llama-70B's (Llama-2 and 3) fused
 * q/k/v, fused gate/up and down. */
static const struct {
    const char *model, *layer;
    int64_t k, n;
} weights[] = {
    {"llama-2-7b", "qkv", 4096, 12288},
    {"llama-2-7b", "gate-up", 4096, 22016},
    {"llama-2-7b", "down", 11008, 4096},
    {NULL, "square", 8192, 8192},
    {"llama-70b", "qkv", 8192, 10240},
    {"llama-70b", "gate-up", 8192, 57344},
    {"llama-70b", "down", 28672, 8192},
};
#define WEIGHT_COUNT (sizeof weights / sizeof weights[0])

/* The weights (the first ZP_WEIGHTS above: Llama-2-7B's) that also run
 * with zero points, in F16. */
#define ZP_WEIGHTS 3

/* Tokens: decode steps and small batches, never scaled. */
static const int64_t tokens[] = {1, 4, 16, 64, 256};
#define TOKEN_COUNT (sizeof tokens / sizeof tokens[0])

/* Slots of a weight set: the packed weight, its scales, its zero points
 * (0 bytes when symmetric), the dense B. */
enum { W_PACKED, W_SCALES, W_ZEROS, W_DENSE, W_COUNT };
/* Slots of a case's sets: A and C (the dense GEMM's D too). */
enum { IO_A, IO_C, IO_COUNT };
/* The one set of buffers used while quantizing. */
enum { T_WEIGHT, T_QUANTIZED, T_SCALES, T_ZEROS, T_COUNT };

/* Rounds of timings, the W4A16 plan and the dense GEMM alternating;
 * each reports the median of its rounds' medians. */
#define W4A16_ROUNDS 3u
/* Bytes of the quantized weight read back at a time for the reference. */
#define REFERENCE_CHUNK (16ull << 20)

struct w4a16_weight {
    BkDataType dtype;
    int64_t k, n;
    bool zeros;
    bool ok;                              /* false: a conversion was unsupported */
    char message[256];
    uint32_t sets;
    uint64_t bytes[W_COUNT];
    struct bench_sets buf;
    int64_t columns[W4A16_CHECK_COLUMNS];
    float *ref;                           /* [K][W4A16_CHECK_COLUMNS]: dequantized weights */
    char bad_value[160];                  /* a quantized value over 15; "" if none */
};

size_t bench_w4a16_case_count(void)
{
    return (TYPE_COUNT * WEIGHT_COUNT + ZP_WEIGHTS) * TOKEN_COUNT;
}

/* v / div rounded to the nearest multiple of unit, at least unit. */
static int64_t scaled(int64_t v, int64_t div, int64_t unit)
{
    int64_t q = (v + div * unit / 2) / (div * unit);
    return (q > 0 ? q : 1) * unit;
}

size_t bench_w4a16_cases(enum bench_gemm_scale scale, struct w4a16_case *out, size_t max)
{
    static const char *const zp_layers[ZP_WEIGHTS] = {"qkv-zp", "gate-up-zp", "down-zp"};
    const int64_t div = (int64_t)scale;
    size_t n = 0;
    /* Every type and weight, then the zero-point rows (F16, Llama-2-7B). */
    for (size_t t = 0; t <= TYPE_COUNT; t++)
        for (size_t w = 0; w < (t < TYPE_COUNT ? WEIGHT_COUNT : ZP_WEIGHTS); w++)
            for (size_t m = 0; m < TOKEN_COUNT && n < max; m++) {
                const bool zp = t == TYPE_COUNT;
                struct w4a16_case *c = &out[n++];
                *c = (struct w4a16_case){zp ? BK_DATA_TYPE_F16 : w4a16_types[t],
                                         weights[w].model,
                                         zp ? zp_layers[w] : weights[w].layer,
                                         tokens[m], scaled(weights[w].n, div, 64),
                                         scaled(weights[w].k, div, W4A16_GROUP), zp, ""};
                snprintf(c->shape, sizeof c->shape, "%lldx%lldx%lld", (long long)c->m,
                         (long long)c->n, (long long)c->k);
            }
    return n;
}

size_t bench_w4a16_shape_cases(int64_t m, int64_t n, int64_t k, struct w4a16_case *out, size_t max)
{
    size_t count = 0;
    if (k % W4A16_GROUP || n % 64)
        return 0;
    for (size_t t = 0; t < TYPE_COUNT && count < max; t++) {
        struct w4a16_case *c = &out[count++];
        *c = (struct w4a16_case){w4a16_types[t], NULL, "shape", m, n, k, false, ""};
        snprintf(c->shape, sizeof c->shape, "%lldx%lldx%lld", (long long)m, (long long)n,
                 (long long)k);
    }
    return count;
}

double w4a16_case_flops(const struct w4a16_case *c)
{
    return 2.0 * (double)c->m * (double)c->n * (double)c->k;
}

uint64_t w4a16_weight_bytes(int64_t k, int64_t n, bool zeros)
{
    const uint64_t g = (uint64_t)(k / W4A16_GROUP);
    return (uint64_t)k * (uint64_t)n / 2 + g * (uint64_t)n * 2 + (zeros ? g * (uint64_t)n / 2 : 0);
}

/* ---- Op infos ---------------------------------------------------------- */

static uint64_t binding_size(const struct bench_plan *p, uint32_t slot)
{
    return p->bindings.bindings[slot].size;
}

/* ---- The weight ---------------------------------------------------------- */

/* (q - z) * scale rounded to dtype, as the GEMM rounds each weight (z
 * is 8 when symmetric); the weights are normal numbers or 0 (scales are
 * max|w| * 2/15, or the range / 15, of weights of magnitude 0.25 to 2). */
static float dequantize(BkDataType dtype, unsigned q, unsigned z, double scale)
{
    float x = (float)((int)q - (int)z) * (float)scale;
    if (x == 0.0f)
        return 0.0f;
    uint16_t bits = dtype == BK_DATA_TYPE_BF16 ? bench_float_to_bfloat(x) : bench_float_to_half(x);
    return (float)bench_value_at(&bits, 0, dtype);
}

/* The dequantized weight of the checked columns, from the quantized
 * values and scales that QUANTIZE wrote (read back in chunks of rows). */
static void make_reference(struct bench_device *d, struct w4a16_weight *w,
                           const struct bench_sets *tmp)
{
    const int64_t k = w->k, n = w->n, groups = k / W4A16_GROUP;
    for (int j = 0; j < W4A16_CHECK_COLUMNS; j++)
        w->columns[j] = (int64_t)j * (n - 1) / (W4A16_CHECK_COLUMNS - 1);
    void *scales = bench_device_download(d, bench_sets_address(tmp, 0, T_SCALES),
                                         gemm_matrix_bytes(w->dtype, groups, n));
    unsigned char *zeros = w->zeros ? bench_device_download(d, bench_sets_address(tmp, 0, T_ZEROS),
                                                            (uint64_t)groups * (uint64_t)n)
                                    : NULL;
    int64_t chunk = (int64_t)(REFERENCE_CHUNK / (uint64_t)n);
    chunk = chunk < 1 ? 1 : chunk > k ? k : chunk;
    unsigned char *q = malloc((size_t)chunk * (size_t)n);
    w->ref = malloc((size_t)k * W4A16_CHECK_COLUMNS * sizeof *w->ref);
    if (!q || !w->ref)
        tool_die("out of host memory");
    for (int64_t k0 = 0; k0 < k; k0 += chunk) {
        const int64_t rows = k - k0 < chunk ? k - k0 : chunk;
        tool_check(bkCopyFromDevice(d->ctx, q, bench_sets_address(tmp, 0, T_QUANTIZED) +
                                                   (uint64_t)k0 * (uint64_t)n,
                                    (uint64_t)rows * (uint64_t)n),
                   "bkCopyFromDevice (quantized weight)");
        for (int64_t r = 0; r < rows; r++)
            for (int j = 0; j < W4A16_CHECK_COLUMNS; j++) {
                const int64_t row = k0 + r, col = w->columns[j];
                const unsigned v = q[r * n + col];
                if (v > 15 && !w->bad_value[0])
                    snprintf(w->bad_value, sizeof w->bad_value,
                             "BK_W4A16_QUANTIZE wrote %u at [%lld, %lld], not a value 0..15", v,
                             (long long)row, (long long)col);
                const size_t at = (size_t)(row / W4A16_GROUP * n + col);
                const double scale = bench_value_at(scales, at, w->dtype);
                const unsigned z = zeros ? zeros[at] & 15u : 8u;
                w->ref[row * W4A16_CHECK_COLUMNS + j] = dequantize(w->dtype, v & 15u, z, scale);
            }
    }
    free(q);
    free(zeros);
    free(scales);
}

/* Quantizes and packs a random weight into set 0, copies it into the
 * other sets, fills every set's dense B and keeps the reference. */
static void prepare_weight(struct bench_device *d, const struct gemm_settings *s,
                           struct w4a16_weight *w)
{
    BkW4A16ConvertInfo qi, pi;
    BkW4A16ZeroPointsInfo qz, pz;
    struct bench_plan quantize, pack;
    const void *quantize_info =
        w4a16_convert_build(BK_W4A16_QUANTIZE, w->dtype, w->k, w->n, W4A16_GROUP, &qi);
    const void *pack_info =
        w4a16_convert_build(BK_W4A16_PACK, w->dtype, w->k, w->n, W4A16_GROUP, &pi);
    if (w->zeros) {
        qi.pNext = w4a16_zero_points_build(true, false, w->k, w->n, W4A16_GROUP, &qz);
        pi.pNext = w4a16_zero_points_build(true, true, w->k, w->n, W4A16_GROUP, &pz);
    }
    const uint32_t slots = w->zeros ? 7 : 5;
    w->ok = bench_plan_create(d, quantize_info, &quantize, w->message, sizeof w->message);
    if (!w->ok)
        return;
    w->ok = bench_plan_create(d, pack_info, &pack, w->message, sizeof w->message);
    if (!w->ok) {
        bench_plan_destroy(d, &quantize);
        return;
    }
    if (quantize.props.bindingCount != slots || pack.props.bindingCount != slots)
        tool_die("w4a16: conversions with %u and %u bindings, bkbench expects %u",
                 quantize.props.bindingCount, pack.props.bindingCount, slots);

    const uint64_t tmp_bytes[T_COUNT] = {
        binding_size(&quantize, BK_W4A16_CONVERT_BINDING_WEIGHT),
        binding_size(&quantize, BK_W4A16_CONVERT_BINDING_QUANTIZED),
        binding_size(&quantize, BK_W4A16_CONVERT_BINDING_SCALES),
        w->zeros ? binding_size(&quantize, BK_W4A16_CONVERT_BINDING_ZEROS) : 0};
    struct bench_sets tmp;
    bench_sets_alloc(d, &tmp, 1, tmp_bytes, T_COUNT);
    bench_sets_fill(d, &tmp, T_WEIGHT, w->dtype);

    w->bytes[W_PACKED] = binding_size(&pack, BK_W4A16_CONVERT_BINDING_PACKED);
    w->bytes[W_SCALES] = binding_size(&pack, BK_W4A16_CONVERT_BINDING_PACKED_SCALES);
    w->bytes[W_ZEROS] =
        w->zeros ? binding_size(&pack, BK_W4A16_CONVERT_BINDING_PACKED_ZEROS) : 0;
    w->bytes[W_DENSE] = gemm_matrix_bytes(w->dtype, w->n, w->k);
    const uint64_t int4_bytes = w->bytes[W_PACKED] + w->bytes[W_SCALES] + w->bytes[W_ZEROS];
    if (int4_bytes != w4a16_weight_bytes(w->k, w->n, w->zeros))
        tool_die("w4a16: the packed weight of %lldx%lld takes %llu bytes, not %llu",
                 (long long)w->k, (long long)w->n, (unsigned long long)int4_bytes,
                 (unsigned long long)w4a16_weight_bytes(w->k, w->n, w->zeros));
    /* Enough sets that the int4 weights alone exceed the rotation size. */
    w->sets = bench_sets_for(int4_bytes, &s->bench);
    bench_sets_alloc(d, &w->buf, w->sets, w->bytes, W_COUNT);

    BkDeviceAddress qb[7] = {0}, pb[7] = {0};
    qb[BK_W4A16_CONVERT_BINDING_WEIGHT] = bench_sets_address(&tmp, 0, T_WEIGHT);
    qb[BK_W4A16_CONVERT_BINDING_QUANTIZED] = bench_sets_address(&tmp, 0, T_QUANTIZED);
    qb[BK_W4A16_CONVERT_BINDING_SCALES] = bench_sets_address(&tmp, 0, T_SCALES);
    if (w->zeros)
        qb[BK_W4A16_CONVERT_BINDING_ZEROS] = bench_sets_address(&tmp, 0, T_ZEROS);
    bench_plan_run_once(d, &quantize, qb);
    pb[BK_W4A16_CONVERT_BINDING_QUANTIZED] = qb[BK_W4A16_CONVERT_BINDING_QUANTIZED];
    pb[BK_W4A16_CONVERT_BINDING_SCALES] = qb[BK_W4A16_CONVERT_BINDING_SCALES];
    pb[BK_W4A16_CONVERT_BINDING_PACKED] = bench_sets_address(&w->buf, 0, W_PACKED);
    pb[BK_W4A16_CONVERT_BINDING_PACKED_SCALES] = bench_sets_address(&w->buf, 0, W_SCALES);
    if (w->zeros) {
        pb[BK_W4A16_CONVERT_BINDING_ZEROS] = qb[BK_W4A16_CONVERT_BINDING_ZEROS];
        pb[BK_W4A16_CONVERT_BINDING_PACKED_ZEROS] = bench_sets_address(&w->buf, 0, W_ZEROS);
    }
    bench_plan_run_once(d, &pack, pb);
    bench_sets_copy_first(d, &w->buf, 0, W_ZEROS + 1);
    bench_sets_fill(d, &w->buf, W_DENSE, w->dtype);
    make_reference(d, w, &tmp);

    bench_sets_free(d, &tmp);
    bench_plan_destroy(d, &pack);
    bench_plan_destroy(d, &quantize);
}

void bench_w4a16_release(struct bench_device *d, struct w4a16_weight **weight)
{
    struct w4a16_weight *w = *weight;
    if (!w)
        return;
    if (w->buf.buf)
        bench_sets_free(d, &w->buf);
    free(w->ref);
    free(w);
    *weight = NULL;
}

/* The prepared weight of the case: the one kept, or a new one. */
static struct w4a16_weight *weight_for(struct bench_device *d, const struct w4a16_case *c,
                                       const struct gemm_settings *s,
                                       struct w4a16_weight **cache)
{
    struct w4a16_weight *w = *cache;
    if (w && w->dtype == c->dtype && w->k == c->k && w->n == c->n && w->zeros == c->zeros)
        return w;
    bench_w4a16_release(d, cache);
    w = calloc(1, sizeof *w);
    if (!w)
        tool_die("out of host memory");
    w->dtype = c->dtype;
    w->k = c->k;
    w->n = c->n;
    w->zeros = c->zeros;
    prepare_weight(d, s, w);
    *cache = w;
    return w;
}

/* ---- The check ------------------------------------------------------------ */

/* Runs the plan once on set 0 and compares rows 0, M/2 and M-1 of C, at
 * the weight's checked columns, with sums of A times the dequantized
 * weight made on the host in double. */
static void check_result(struct bench_device *d, const struct w4a16_case *c,
                         const struct bench_plan *p, const BkDeviceAddress *bind,
                         const struct bench_sets *io, const struct w4a16_weight *w,
                         struct w4a16_result *r)
{
    const size_t es = tool_dtype_size(c->dtype);
    const int64_t rows[3] = {0, c->m / 2, c->m - 1};
    double diff = 0.0, top = 0.0;
    bench_plan_run_once(d, p, bind);
    for (int i = 0; i < 3; i++) {
        if (i > 0 && rows[i] == rows[i - 1])
            continue;
        const int64_t m = rows[i];
        void *a = bench_device_download(
            d, bench_sets_address(io, 0, IO_A) + (uint64_t)m * (uint64_t)c->k * es,
            (uint64_t)c->k * es);
        void *out = bench_device_download(
            d, bench_sets_address(io, 0, IO_C) + (uint64_t)m * (uint64_t)c->n * es,
            (uint64_t)c->n * es);
        r->check_rows++;
        for (int j = 0; j < W4A16_CHECK_COLUMNS; j++) {
            double ref = 0.0;
            for (int64_t k = 0; k < c->k; k++)
                ref += bench_value_at(a, (size_t)k, c->dtype) *
                       (double)w->ref[k * W4A16_CHECK_COLUMNS + j];
            const double got = bench_value_at(out, (size_t)w->columns[j], c->dtype);
            const double e = fabs(got - ref);
            if (isnan(e))
                diff = INFINITY;
            else if (e > diff)
                diff = e;
            if (fabs(ref) > top)
                top = fabs(ref);
        }
        free(out);
        free(a);
    }
    r->max_rel_err = top > 0 ? diff / top : diff;
    if (w->bad_value[0]) {
        r->check_failed = true;
        snprintf(r->message, sizeof r->message, "%s", w->bad_value);
    } else if (!(r->max_rel_err <= W4A16_CHECK_LIMIT)) {
        r->check_failed = true;
        snprintf(r->message, sizeof r->message,
                 "C differs from the host's dequantized reference by %.3g of max |C| (allowed "
                 "%.3g) on %u rows x %d columns",
                 r->max_rel_err, W4A16_CHECK_LIMIT, r->check_rows, W4A16_CHECK_COLUMNS);
    }
}

/* ---- The dense GEMM ---------------------------------------------------------- */

/* The dense GEMM of a case: cuBLASLt direct or libbk's plan. */
struct dense {
    bool ready;                           /* something to time */
    bool lt;
    struct lt_rotation rot;
    struct bench_buffer ws;               /* cuBLASLt's workspace */
    struct bench_plan plan;               /* libbk's */
    BkDeviceAddress *bind;
};

static void dense_setup(struct bench_device *d, const struct w4a16_case *c,
                        const struct gemm_settings *s, const struct bench_sets *io,
                        const struct w4a16_weight *w, struct dense *dn, struct w4a16_result *r)
{
    memset(dn, 0, sizeof *dn);
    dn->lt = s->lt != NULL;
    if (dn->lt) {
        struct lt_rotation *rot = &dn->rot;
        rot->d_sets = rot->a_sets = io;
        rot->b_sets = &w->buf;
        rot->d_slot = IO_C;
        rot->a_slot = IO_A;
        rot->b_slot = W_DENSE;
        rot->stream = bench_device_stream(d);
        rot->g = cublaslt_gemm_plan(s->lt, c->dtype, false, c->m, c->n, c->k,
                                    s->lt_workspace_limit, rot->err, sizeof rot->err);
        if (!rot->g) {
            r->dense_status = "failed";
            snprintf(r->dense_message, sizeof r->dense_message, "%s", rot->err);
            return;
        }
        r->dense_workspace = cublaslt_gemm_workspace(rot->g);
        r->dense_algo = cublaslt_gemm_algo_id(rot->g);
        if (r->dense_workspace) {
            bench_buffer_alloc(d, r->dense_workspace, &dn->ws);
            rot->workspace = dn->ws.address;
            rot->workspace_size = dn->ws.size;
        }
        r->dense_status = "ok";
        dn->ready = true;
        return;
    }
    struct gemm_op_desc desc = {c->dtype, false, c->m, c->n, c->k};
    BkGemmInfo info;
    if (!bench_plan_create(d, gemm_op_build(&desc, &info), &dn->plan, r->dense_message,
                           sizeof r->dense_message)) {
        r->dense_status = "unsupported";
        return;
    }
    const uint32_t nb = dn->plan.props.bindingCount;
    if (nb != 5)
        tool_die("gemm: %u bindings, bkbench expects 5", nb);
    snprintf(r->dense_kernel, sizeof r->dense_kernel, "%s", dn->plan.props.kernelName);
    r->dense_workspace = dn->plan.props.workspaceSize;
    dn->bind = calloc((size_t)io->sets * nb, sizeof *dn->bind);
    if (!dn->bind)
        tool_die("out of host memory");
    for (uint32_t set = 0; set < io->sets; set++) {
        BkDeviceAddress *b = dn->bind + (size_t)set * nb;
        b[BK_GEMM_BINDING_A] = bench_sets_address(io, set, IO_A);
        b[BK_GEMM_BINDING_B] = bench_sets_address(&w->buf, set, W_DENSE);
        b[BK_GEMM_BINDING_D] = bench_sets_address(io, set, IO_C);
    }
    r->dense_status = "ok";
    dn->ready = true;
}

/* One round's median in microseconds, or a negative number when
 * cuBLASLt failed (rot.err says why). */
static double dense_time(struct bench_device *d, struct dense *dn, uint32_t sets,
                         const struct bench_settings *b)
{
    if (!dn->lt)
        return bench_plan_time(d, &dn->plan, dn->bind, sets, BENCH_SUBMIT_REUSABLE, b, NULL);
    if (dn->rot.failed)
        return -1.0;
    double *us = calloc(b->repeats, sizeof *us);
    if (!us)
        tool_die("out of host memory");
    bench_device_time_fn(d, lt_rotation_run, &dn->rot, b->warmup, b->repeats, us);
    double median = tool_median(us, b->repeats);
    free(us);
    return dn->rot.failed ? -1.0 : median;
}

static void dense_finish(struct bench_device *d, struct dense *dn, struct w4a16_result *r)
{
    if (dn->lt) {
        if (dn->rot.failed) {
            r->dense_status = "failed";
            r->dense_us = 0.0;
            snprintf(r->dense_message, sizeof r->dense_message, "%s", dn->rot.err);
        }
        bench_device_wait(d);
        if (dn->ws.size)
            bench_buffer_free(d, &dn->ws);
        cublaslt_gemm_destroy(dn->rot.g);
    } else if (dn->plan.plan) {
        bench_plan_destroy(d, &dn->plan);
    }
    free(dn->bind);
    memset(dn, 0, sizeof *dn);
}

/* ---- One case ----------------------------------------------------------------- */

void bench_w4a16_run(struct bench_device *d, const struct w4a16_case *c,
                     const struct gemm_settings *s, double copy_gb_per_s,
                     struct w4a16_weight **weight, struct w4a16_result *r)
{
    memset(r, 0, sizeof *r);
    r->max_rel_err = -1.0;
    r->dense_by = s->lt ? "cublasLt" : "libbk";
    r->dense_status = "skipped";
    r->dense_algo = -1;
    r->weight_bytes = w4a16_weight_bytes(c->k, c->n, c->zeros);
    /* bytes / (GB/s) = ns; the copy bandwidth counts bytes read + written,
     * so reading the weight once at it takes this long. */
    if (copy_gb_per_s > 0)
        r->floor_us = (double)r->weight_bytes / copy_gb_per_s * 1e-3;

    BkW4A16GemmInfo info;
    BkW4A16ZeroPointsInfo zp;
    struct bench_plan p;
    const void *gemm_info = w4a16_gemm_build(c->dtype, c->m, c->k, c->n, W4A16_GROUP, &info);
    if (c->zeros)
        info.pNext = w4a16_zero_points_build(false, true, c->k, c->n, W4A16_GROUP, &zp);
    if (!bench_plan_create(d, gemm_info, &p, r->message, sizeof r->message))
        return;
    if (p.props.bindingCount != (c->zeros ? 6u : 5u))
        tool_die("w4a16: %u bindings, bkbench expects %u", p.props.bindingCount,
                 c->zeros ? 6u : 5u);
    const struct w4a16_weight *w = weight_for(d, c, s, weight);
    if (!w->ok) {
        snprintf(r->message, sizeof r->message, "%s", w->message);
        bench_plan_destroy(d, &p);
        return;
    }
    r->supported = true;
    snprintf(r->kernel, sizeof r->kernel, "%s", p.props.kernelName);
    r->workspace = p.props.workspaceSize;
    if (binding_size(&p, BK_W4A16_GEMM_BINDING_PACKED) != w->bytes[W_PACKED] ||
        binding_size(&p, BK_W4A16_GEMM_BINDING_PACKED_SCALES) != w->bytes[W_SCALES])
        tool_die("w4a16: PACK makes %llu + %llu bytes but the GEMM plan reads %llu + %llu",
                 (unsigned long long)w->bytes[W_PACKED], (unsigned long long)w->bytes[W_SCALES],
                 (unsigned long long)binding_size(&p, BK_W4A16_GEMM_BINDING_PACKED),
                 (unsigned long long)binding_size(&p, BK_W4A16_GEMM_BINDING_PACKED_SCALES));

    /* A and C per set, as many sets as the weight has. */
    r->sets = w->sets;
    const uint64_t io_bytes[IO_COUNT] = {binding_size(&p, BK_W4A16_GEMM_BINDING_A),
                                         binding_size(&p, BK_W4A16_GEMM_BINDING_C)};
    struct bench_sets io;
    bench_sets_alloc(d, &io, r->sets, io_bytes, IO_COUNT);
    bench_sets_fill(d, &io, IO_A, c->dtype);
    const uint32_t nb = p.props.bindingCount;
    BkDeviceAddress *bind = calloc((size_t)r->sets * nb, sizeof *bind);
    if (!bind)
        tool_die("out of host memory");
    for (uint32_t set = 0; set < r->sets; set++) {
        BkDeviceAddress *b = bind + (size_t)set * nb;
        b[BK_W4A16_GEMM_BINDING_A] = bench_sets_address(&io, set, IO_A);
        b[BK_W4A16_GEMM_BINDING_PACKED] = bench_sets_address(&w->buf, set, W_PACKED);
        b[BK_W4A16_GEMM_BINDING_PACKED_SCALES] = bench_sets_address(&w->buf, set, W_SCALES);
        b[BK_W4A16_GEMM_BINDING_C] = bench_sets_address(&io, set, IO_C);
        if (c->zeros)
            b[BK_W4A16_GEMM_BINDING_PACKED_ZEROS] = bench_sets_address(&w->buf, set, W_ZEROS);
    }
    check_result(d, c, &p, bind, &io, w, r);

    struct dense dn;
    dense_setup(d, c, s, &io, w, &dn, r);
    struct host_blas_peer blas;
    const bool with_blas = host_blas_peer_open(d, s, c->m, c->n, c->k, &blas);
    double mine[W4A16_ROUNDS], dense[W4A16_ROUNDS], direct[W4A16_ROUNDS];
    uint32_t dense_rounds = 0;
    for (uint32_t round = 0; round < W4A16_ROUNDS; round++) {
        struct bench_spread spread;
        mine[round] =
            bench_plan_time(d, &p, bind, r->sets, BENCH_SUBMIT_REUSABLE, &s->bench, &spread);
        bench_spread_widen(&r->t, &spread);
        if (with_blas)
            direct[round] = host_blas_peer_time(d, &blas, &s->bench);
        if (!dn.ready)
            continue;
        double t = dense_time(d, &dn, r->sets, &s->bench);
        if (t >= 0)
            dense[dense_rounds++] = t;
    }
    r->us = r->t.us = tool_median(mine, W4A16_ROUNDS);
    bench_noise_note(&r->t);
    r->dense_us = dense_rounds ? tool_median(dense, dense_rounds) : 0.0;
    r->blas_us = with_blas ? tool_median(direct, W4A16_ROUNDS) : 0.0;
    host_blas_peer_close(d, &blas);
    dense_finish(d, &dn, r);

    free(bind);
    bench_sets_free(d, &io);
    bench_plan_destroy(d, &p);
}
