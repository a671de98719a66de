/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's cuSPARSELt comparison of a 2:4 sparse GEMM case: the dense
 * W of every rotation set, already pruned to libbk's pattern, is pruned
 * (a no-op on a 2:4 W) and compressed by cuSPARSELt once, outside the
 * timing; its algorithm is chosen by cusparseLtMatmulSearch once; then
 * its matmul runs round robin over the sets on bkbench's stream, timed
 * with CUDA events a round at a time (bench_sparse24.c alternates the
 * rounds with libbk's), and its Y of set 0 is compared with libbk's. */
#include "bench_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_plan.h"
#include "bench_random.h"
#include "gemm_op.h"
#include "tool_common.h"

enum { IN_X, IN_Y, IN_W };                /* the order of the slots argument */

/* The least workspace offered to the search, which may pick an algorithm
 * (split-K) that wants more than the default one. */
#define SEARCH_WORKSPACE (64ull << 20)

struct bench_slt {
    struct cusparselt_mm *g;
    const struct bench_sets *sets;        /* libbk's: X, Y */
    const uint32_t *slots;
    struct bench_sets compressed;         /* one compressed W per set */
    struct bench_buffer workspace;
    void *stream;
    int failed;
    char err[256];
};

static void slt_run(void *user, uint32_t i)
{
    struct bench_slt *r = user;
    uint32_t set = i % r->sets->sets;
    if (r->failed)
        return;
    if (cusparselt_mm_run(r->g, bench_sets_address(r->sets, set, r->slots[IN_Y]),
                          bench_sets_address(r->sets, set, r->slots[IN_X]),
                          bench_sets_address(&r->compressed, set, 0), r->workspace.address,
                          r->stream, r->err, sizeof r->err) != 0)
        r->failed = 1;
}

/* Compresses every set's W, searches, and sizes the workspace; -1 with
 * rot->err on a cuSPARSELt error. */
static int slt_prepare(struct bench_device *d, struct bench_slt *rot,
                       struct sparse24_result *r)
{
    uint64_t size = 0, scratch_size = 0, ws = 0;
    if (cusparselt_mm_compressed_size(rot->g, &size, &scratch_size, rot->err,
                                      sizeof rot->err) != 0)
        return -1;
    r->slt_compressed_bytes = size;
    bench_sets_alloc(d, &rot->compressed, rot->sets->sets, &size, 1);
    struct bench_buffer scratch = {0};
    if (scratch_size)
        bench_buffer_alloc(d, scratch_size, &scratch);
    int rc = 0;
    for (uint32_t set = 0; set < rot->sets->sets && rc == 0; set++)
        rc = cusparselt_mm_compress(rot->g, bench_sets_address(rot->sets, set, rot->slots[IN_W]),
                                    bench_sets_address(&rot->compressed, set, 0),
                                    scratch.address, rot->stream, rot->err, sizeof rot->err);
    bench_device_wait(d);
    if (scratch_size)
        bench_buffer_free(d, &scratch);
    if (rc != 0 || cusparselt_mm_workspace(rot->g, &ws, rot->err, sizeof rot->err) != 0)
        return -1;
    bench_buffer_alloc(d, ws > SEARCH_WORKSPACE ? ws : SEARCH_WORKSPACE, &rot->workspace);
    rc = cusparselt_mm_search(rot->g, bench_sets_address(rot->sets, 0, rot->slots[IN_Y]),
                              bench_sets_address(rot->sets, 0, rot->slots[IN_X]),
                              bench_sets_address(&rot->compressed, 0, 0), rot->workspace.address,
                              rot->stream, rot->err, sizeof rot->err);
    bench_device_wait(d);
    if (rc != 0 || cusparselt_mm_workspace(rot->g, &ws, rot->err, sizeof rot->err) != 0)
        return -1;
    r->slt_workspace = ws;
    if (ws > rot->workspace.size) {
        bench_buffer_free(d, &rot->workspace);
        bench_buffer_alloc(d, ws, &rot->workspace);
    }
    return 0;
}

/* Runs cuSPARSELt once on set 0 and compares its Y with libbk's. */
static void slt_check(struct bench_device *d, const struct sparse24_case *c,
                      struct bench_slt *rot, const void *ref_y, struct sparse24_result *r)
{
    const uint64_t bytes = gemm_matrix_bytes(c->dtype, c->n, c->m);
    slt_run(rot, 0);
    void *theirs = bench_device_download(d, bench_sets_address(rot->sets, 0, rot->slots[IN_Y]), bytes);
    if (!rot->failed) {
        r->slt_max_rel_diff =
            bench_max_rel_diff(ref_y, theirs, (size_t)(c->m * c->n), c->dtype);
        if (!(r->slt_max_rel_diff <= gemm_agreement(c->dtype))) {
            r->slt_status = "mismatch";
            snprintf(r->slt_message, sizeof r->slt_message,
                     "cuSPARSELt's Y differs from libbk's sparse Y by %.3g of max |Y| "
                     "(allowed %.3g)",
                     r->slt_max_rel_diff, gemm_agreement(c->dtype));
        }
    }
    free(theirs);
}

/* r says that cuSPARSELt failed, and why (rot->err). */
static void slt_failed(const struct bench_slt *rot, struct sparse24_result *r)
{
    r->slt_status = "failed";
    snprintf(r->slt_message, sizeof r->slt_message, "%s", rot->err);
}

struct bench_slt *bench_sparse24_slt_open(struct bench_device *d, const struct sparse24_case *c,
                                          const struct gemm_settings *s,
                                          const struct bench_sets *sets, const uint32_t slots[3],
                                          const void *ref_y, struct sparse24_result *r)
{
    struct bench_slt *rot = calloc(1, sizeof *rot);
    if (!rot)
        tool_die("out of host memory");
    rot->sets = sets;
    rot->slots = slots;
    rot->stream = bench_device_stream(d);
    r->slt_status = "ok";
    if (cusparselt_mm_plan(s->slt, c->dtype, c->m, c->n, c->k, &rot->g, rot->err,
                           sizeof rot->err) == 0 &&
        slt_prepare(d, rot, r) == 0) {
        slt_check(d, c, rot, ref_y, r);  /* may say "mismatch": still timed */
        if (!rot->failed)
            return rot;
    }
    slt_failed(rot, r);
    bench_sparse24_slt_close(d, rot);
    return NULL;
}

double bench_sparse24_slt_time(struct bench_device *d, struct bench_slt *rot,
                               const struct gemm_settings *s, struct sparse24_result *r)
{
    double *us = calloc(s->bench.repeats, sizeof *us);
    if (!us)
        tool_die("out of host memory");
    bench_device_time_fn(d, slt_run, rot, s->bench.warmup, s->bench.repeats, us);
    const double median = rot->failed ? 0.0 : tool_median(us, s->bench.repeats);
    free(us);
    if (rot->failed)
        slt_failed(rot, r);
    return median;
}

void bench_sparse24_slt_close(struct bench_device *d, struct bench_slt *rot)
{
    if (!rot)
        return;
    bench_device_wait(d);
    if (rot->workspace.size)
        bench_buffer_free(d, &rot->workspace);
    if (rot->compressed.buf)
        bench_sets_free(d, &rot->compressed);
    if (rot->g)
        cusparselt_mm_destroy(rot->g);
    free(rot);
}
