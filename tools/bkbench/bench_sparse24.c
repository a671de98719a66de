/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's 2:4 sparse GEMM cases: a random weight pruned to 2:4 and
 * prepared once per rotation set, outside the timing, then the sparse
 * plan and libbk's dense plan of the same shape on the same X and the
 * same pruned weight (decompressed over the dense one), each replayed
 * from reusable command buffers, in rounds alternating with cuSPARSELt's
 * where it loads (bench_sparse24_slt.c). */
#include "bench_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_host_blas.h"
#include "bench_plan.h"
#include "bench_sets.h"
#include "device_peak.h"
#include "gemm_op.h"
#include "tool_common.h"

static const BkDataType sparse_types[] = {BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16};
#define TYPE_COUNT (sizeof sparse_types / sizeof sparse_types[0])

/* Weights [M, K] at the GPU scale: a square one, and Llama-70B's linear
 * layers (fused q/k/v, attention output, fused gate/up, down). */
static const struct {
    const char *layer;
    int64_t m, k;
} weights[] = {
    {"square", 8192, 8192},
    {"qkv", 10240, 8192},
    {"o", 8192, 8192},
    {"gate-up", 57344, 8192},
    {"down", 8192, 28672},
};
#define WEIGHT_COUNT (sizeof weights / sizeof weights[0])

/* Tokens: a prefill batch (scaled with the shapes) and a decode step of
 * 16 (never scaled). The square weight runs once, with N = M. */
static const int64_t prefill_tokens = 2048, decode_tokens = 16;

/* Per set: the input, the output, the dense weight and the prepared one. */
enum { SLOT_X, SLOT_Y, SLOT_W, SLOT_PREPARED, SLOT_COUNT };
/* Shared, used only while preparing: values, metadata, report. */
enum { TMP_VALUES, TMP_METADATA, TMP_REPORT, TMP_COUNT };

size_t bench_sparse24_case_count(void)
{
    return TYPE_COUNT * (1 + 2 * (WEIGHT_COUNT - 1));
}

static void add_case(struct sparse24_case *c, BkDataType dtype, const char *layer, int64_t m,
                     int64_t n, int64_t k)
{
    *c = (struct sparse24_case){dtype, layer, m, n, k, ""};
    snprintf(c->shape, sizeof c->shape, "%lldx%lldx%lld", (long long)n, (long long)m,
             (long long)k);
}

size_t bench_sparse24_cases(enum bench_gemm_scale scale, struct sparse24_case *out, size_t max)
{
    const int64_t div = (int64_t)scale;
    size_t n = 0;
    for (size_t t = 0; t < TYPE_COUNT; t++)
        for (size_t w = 0; w < WEIGHT_COUNT; w++) {
            int64_t m = weights[w].m / div, k = weights[w].k / div;
            if (w == 0) {
                if (n < max)
                    add_case(&out[n++], sparse_types[t], weights[w].layer, m, m, k);
                continue;
            }
            if (n < max)
                add_case(&out[n++], sparse_types[t], weights[w].layer, m, prefill_tokens / div,
                         k);
            if (n < max)
                add_case(&out[n++], sparse_types[t], weights[w].layer, m, decode_tokens, k);
        }
    return n;
}

size_t bench_sparse24_shape_cases(int64_t m, int64_t n, int64_t k, struct sparse24_case *out,
                                  size_t max)
{
    size_t count = 0;
    for (size_t t = 0; t < TYPE_COUNT && count < max; t++)
        add_case(&out[count++], sparse_types[t], "shape", n, m, k);
    return count;
}

double sparse24_case_flops(const struct sparse24_case *c)
{
    return 2.0 * (double)c->m * (double)c->n * (double)c->k;
}

/* The plans of one case. */
struct sparse_plans {
    struct bench_plan convert, decompress, prepare, sparse, dense;
};

static bool make_plans(struct bench_device *d, const struct sparse24_case *c,
                       struct sparse_plans *p, struct sparse24_result *r)
{
    BkSparse24ConvertInfo ci;
    BkSparse24PrepareInfo pi;
    BkSparse24GemmInfo gi;
    BkGemmInfo di;
    struct gemm_op_desc dense = {c->dtype, false, c->n, c->m, c->k};
    memset(p, 0, sizeof *p);
    /* Each is tried only when the one before it was made. */
    bool ok = bench_plan_create(d, sparse24_convert_build(BK_SPARSE24_COMPRESS_PRUNE, c->dtype,
                                                          c->m, c->k, &ci),
                                &p->convert, r->message, sizeof r->message) &&
              bench_plan_create(d, sparse24_convert_build(BK_SPARSE24_DECOMPRESS, c->dtype, c->m,
                                                          c->k, &ci),
                                &p->decompress, r->message, sizeof r->message) &&
              bench_plan_create(d, sparse24_prepare_build(c->dtype, c->m, c->k, &pi),
                                &p->prepare, r->message, sizeof r->message) &&
              bench_plan_create(d, sparse24_gemm_build(c->dtype, c->m, c->k, c->n, &gi),
                                &p->sparse, r->message, sizeof r->message) &&
              bench_plan_create(d, gemm_op_build(&dense, &di), &p->dense, r->message,
                                sizeof r->message);
    return ok;
}

static void destroy_plans(struct bench_device *d, struct sparse_plans *p)
{
    struct bench_plan *all[] = {&p->dense, &p->sparse, &p->prepare, &p->decompress, &p->convert};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]->plan)
            bench_plan_destroy(d, all[i]);
}

/* Prunes set's dense W into values and metadata, checks the report,
 * prepares them into set's prepared weight, and decompresses them over W:
 * the dense plan (and cuSPARSELt) then multiply by the same pruned weight
 * as the sparse plan. */
static void prepare_weight(struct bench_device *d, const struct sparse_plans *p,
                           const struct bench_sets *sets, uint32_t set,
                           const struct bench_sets *tmp)
{
    BkDeviceAddress conv[4], prep[3];
    conv[BK_SPARSE24_CONVERT_BINDING_DENSE] = bench_sets_address(sets, set, SLOT_W);
    conv[BK_SPARSE24_CONVERT_BINDING_VALUES] = bench_sets_address(tmp, 0, TMP_VALUES);
    conv[BK_SPARSE24_CONVERT_BINDING_METADATA] = bench_sets_address(tmp, 0, TMP_METADATA);
    conv[BK_SPARSE24_CONVERT_BINDING_REPORT] = bench_sets_address(tmp, 0, TMP_REPORT);
    bench_plan_run_once(d, &p->convert, conv);

    BkSparse24Report report;
    tool_check(bkCopyFromDevice(d->ctx, &report, conv[BK_SPARSE24_CONVERT_BINDING_REPORT],
                                sizeof report), "bkCopyFromDevice (report)");
    tool_check(bkCheckSparse24Report(&report), "pruning the weight to 2:4");

    prep[BK_SPARSE24_PREPARE_BINDING_VALUES] = conv[BK_SPARSE24_CONVERT_BINDING_VALUES];
    prep[BK_SPARSE24_PREPARE_BINDING_METADATA] = conv[BK_SPARSE24_CONVERT_BINDING_METADATA];
    prep[BK_SPARSE24_PREPARE_BINDING_PREPARED] = bench_sets_address(sets, set, SLOT_PREPARED);
    bench_plan_run_once(d, &p->prepare, prep);
    bench_plan_run_once(d, &p->decompress, conv);
    tool_check(bkCopyFromDevice(d->ctx, &report, conv[BK_SPARSE24_CONVERT_BINDING_REPORT],
                                sizeof report), "bkCopyFromDevice (report)");
    tool_check(bkCheckSparse24Report(&report), "decompressing the pruned weight");
}

/* cuSPARSELt beside the case where it loads, on the sets' pruned W: libbk's
 * sparse Y of set 0 is its reference. NULL where it does not run (r says
 * why). */
static struct bench_slt *open_cusparselt(struct bench_device *d, const struct sparse24_case *c,
                                         const struct gemm_settings *s,
                                         const struct sparse_plans *p,
                                         const struct bench_sets *sets,
                                         const BkDeviceAddress *sparse_bindings,
                                         struct sparse24_result *r)
{
    static const uint32_t slots[3] = {SLOT_X, SLOT_Y, SLOT_W};
    if (!s->slt) {
        r->slt_status = "unavailable";
        snprintf(r->slt_message, sizeof r->slt_message, "%s", s->slt_message ? s->slt_message : "");
        return NULL;
    }
    const uint64_t bytes = gemm_matrix_bytes(c->dtype, c->n, c->m);
    void *ref = malloc(bytes);
    if (!ref)
        tool_die("out of host memory");
    bench_plan_run_once(d, &p->sparse, sparse_bindings);
    tool_check(bkCopyFromDevice(d->ctx, ref, bench_sets_address(sets, 0, SLOT_Y), bytes),
               "bkCopyFromDevice (Y)");
    struct bench_slt *slt = bench_sparse24_slt_open(d, c, s, sets, slots, ref, r);
    free(ref);
    return slt;
}

/* Rounds of libbk's dense and sparse plans and of cuSPARSELt (where it
 * runs; on the host, the BLAS), alternated so that all three see the GPU
 * in the same state: its clocks move with its power draw and temperature
 * over a long run (the host's load moves too). Each figure is the median
 * of its rounds' medians. */
#define SPARSE24_ROUNDS 3u

static void time_rounds(struct bench_device *d, const struct gemm_settings *s,
                        const struct sparse_plans *p, uint32_t sets, const BkDeviceAddress *sb,
                        const BkDeviceAddress *db, struct bench_slt *slt,
                        struct host_blas_peer *blas, struct sparse24_result *r)
{
    double dense[SPARSE24_ROUNDS], sparse[SPARSE24_ROUNDS], theirs[SPARSE24_ROUNDS];
    double direct[SPARSE24_ROUNDS];
    uint32_t timed = 0;  /* cuSPARSELt's rounds */
    for (uint32_t round = 0; round < SPARSE24_ROUNDS; round++) {
        struct bench_spread t;
        dense[round] =
            bench_plan_time(d, &p->dense, db, sets, BENCH_SUBMIT_REUSABLE, &s->bench, NULL);
        sparse[round] =
            bench_plan_time(d, &p->sparse, sb, sets, BENCH_SUBMIT_REUSABLE, &s->bench, &t);
        bench_spread_widen(&r->sparse_t, &t);
        if (slt && timed == round && (theirs[round] = bench_sparse24_slt_time(d, slt, s, r)) > 0)
            timed++;
        if (blas->open)
            direct[round] = host_blas_peer_time(d, blas, &s->bench);
    }
    r->dense_us = tool_median(dense, SPARSE24_ROUNDS);
    r->sparse_us = r->sparse_t.us = tool_median(sparse, SPARSE24_ROUNDS);
    bench_noise_note(&r->sparse_t);
    r->slt_us = timed == SPARSE24_ROUNDS ? tool_median(theirs, SPARSE24_ROUNDS) : 0.0;
    r->blas_us = blas->open ? tool_median(direct, SPARSE24_ROUNDS) : 0.0;
}

static uint64_t binding_size(const struct bench_plan *p, uint32_t slot)
{
    return p->bindings.bindings[slot].size;
}

void bench_sparse24_run(struct bench_device *d, const struct sparse24_case *c,
                        const struct gemm_settings *s, struct sparse24_result *r)
{
    memset(r, 0, sizeof *r);
    r->slt_status = "unavailable";
    r->slt_max_rel_diff = -1.0;
    r->peak_tflops = device_peak_tflops(&d->props, c->dtype, false);
    struct sparse_plans p;
    if (!make_plans(d, c, &p, r)) {
        destroy_plans(d, &p);
        return;
    }
    r->supported = true;
    snprintf(r->kernel, sizeof r->kernel, "%s", p.sparse.props.kernelName);
    snprintf(r->dense_kernel, sizeof r->dense_kernel, "%s", p.dense.props.kernelName);
    r->prepared_bytes = binding_size(&p.prepare, BK_SPARSE24_PREPARE_BINDING_PREPARED);
    if (binding_size(&p.sparse, BK_SPARSE24_GEMM_BINDING_WEIGHT) != r->prepared_bytes)
        tool_die("sparse24: the prepare plan makes %llu bytes but the GEMM plan reads %llu",
                 (unsigned long long)r->prepared_bytes,
                 (unsigned long long)binding_size(&p.sparse, BK_SPARSE24_GEMM_BINDING_WEIGHT));

    uint64_t bytes[SLOT_COUNT] = {gemm_matrix_bytes(c->dtype, c->n, c->k),
                                  gemm_matrix_bytes(c->dtype, c->n, c->m),
                                  gemm_matrix_bytes(c->dtype, c->m, c->k), r->prepared_bytes};
    uint64_t tmp_bytes[TMP_COUNT] = {
        binding_size(&p.convert, BK_SPARSE24_CONVERT_BINDING_VALUES),
        binding_size(&p.convert, BK_SPARSE24_CONVERT_BINDING_METADATA),
        binding_size(&p.convert, BK_SPARSE24_CONVERT_BINDING_REPORT)};
    /* Sets for the sparse run's (smaller) working set: both runs then
     * rotate through more than the cache. */
    r->sets = bench_sets_for(bytes[SLOT_X] + bytes[SLOT_Y] + bytes[SLOT_PREPARED], &s->bench);
    struct bench_sets sets, tmp;
    bench_sets_alloc(d, &sets, r->sets, bytes, SLOT_COUNT);
    bench_sets_alloc(d, &tmp, 1, tmp_bytes, TMP_COUNT);
    bench_sets_fill(d, &sets, SLOT_X, c->dtype);
    bench_sets_fill(d, &sets, SLOT_W, c->dtype);
    for (uint32_t set = 0; set < r->sets; set++)
        prepare_weight(d, &p, &sets, set, &tmp);

    /* Sparse: weight, x, c, y, bias. Dense: a = x, b = w, c, d = y, bias. */
    const uint32_t nb = 5;
    if (p.sparse.props.bindingCount != nb || p.dense.props.bindingCount != nb)
        tool_die("sparse24: %u and %u bindings, bkbench expects %u",
                 p.sparse.props.bindingCount, p.dense.props.bindingCount, nb);
    BkDeviceAddress *sb = calloc((size_t)r->sets * nb, sizeof *sb);
    BkDeviceAddress *db = calloc((size_t)r->sets * nb, sizeof *db);
    if (!sb || !db)
        tool_die("out of host memory");
    for (uint32_t set = 0; set < r->sets; set++) {
        BkDeviceAddress *a = sb + (size_t)set * nb, *b = db + (size_t)set * nb;
        a[BK_SPARSE24_GEMM_BINDING_WEIGHT] = bench_sets_address(&sets, set, SLOT_PREPARED);
        a[BK_SPARSE24_GEMM_BINDING_X] = bench_sets_address(&sets, set, SLOT_X);
        a[BK_SPARSE24_GEMM_BINDING_Y] = bench_sets_address(&sets, set, SLOT_Y);
        b[BK_GEMM_BINDING_A] = bench_sets_address(&sets, set, SLOT_X);
        b[BK_GEMM_BINDING_B] = bench_sets_address(&sets, set, SLOT_W);
        b[BK_GEMM_BINDING_D] = bench_sets_address(&sets, set, SLOT_Y);
    }
    bench_sets_free(d, &tmp);
    struct bench_slt *slt = open_cusparselt(d, c, s, &p, &sets, sb, r);
    /* Tokens x outputs x inputs: M = n, N = m. */
    struct host_blas_peer blas;
    host_blas_peer_open(d, s, c->n, c->m, c->k, &blas);
    time_rounds(d, s, &p, r->sets, sb, db, slt, &blas, r);
    host_blas_peer_close(d, &blas);
    bench_sparse24_slt_close(d, slt);

    free(db);
    free(sb);
    bench_sets_free(d, &sets);
    destroy_plans(d, &p);
}
