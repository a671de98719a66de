/* bkbench's cuSPARSELt comparison of a 2:4 sparse GEMM case: the dense
 * W of every rotation set, already pruned to libbk's pattern, is pruned
 * (a no-op on a 2:4 W) and compressed by cuSPARSELt once, outside the
 * timing; its algorithm is chosen by cusparseLtMatmulSearch once; then
 * its matmul runs round robin over the sets on bkbench's stream, timed
 * with CUDA events, in rounds alternating with libbk's sparse plan, and
 * its Y of set 0 is compared with libbk's. */
#include "bench_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_plan.h"
#include "bench_random.h"
#include "gemm_op.h"
#include "tool_common.h"

enum { IN_X, IN_Y, IN_W };                /* the order of the slots argument */

/* Rounds of libbk's timing and cuSPARSELt's, alternated (medians of each). */
#define SLT_ROUNDS 3u

/* The least workspace offered to the search, which may pick an algorithm
 * (split-K) that wants more than the default one. */
#define SEARCH_WORKSPACE (64ull << 20)

struct slt_rotation {
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
    struct slt_rotation *r = user;
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
static int slt_prepare(struct bench_device *d, struct slt_rotation *rot,
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
                      struct slt_rotation *rot, const void *ref_y, struct sparse24_result *r)
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

void bench_sparse24_cusparselt(struct bench_device *d, const struct sparse24_case *c,
                               const struct gemm_settings *s, const struct bench_sets *sets,
                               const uint32_t slots[3], const void *ref_y,
                               const struct bench_plan *sparse,
                               const BkDeviceAddress *sparse_bindings,
                               struct sparse24_result *r)
{
    struct slt_rotation rot;
    memset(&rot, 0, sizeof rot);
    rot.sets = sets;
    rot.slots = slots;
    rot.stream = bench_device_stream(d);
    r->slt_status = "failed";
    if (cusparselt_mm_plan(s->slt, c->dtype, c->m, c->n, c->k, &rot.g, rot.err,
                           sizeof rot.err) != 0 ||
        slt_prepare(d, &rot, r) != 0) {
        snprintf(r->slt_message, sizeof r->slt_message, "%s", rot.err);
        goto done;
    }
    r->slt_status = "ok";
    slt_check(d, c, &rot, ref_y, r);
    if (!rot.failed) {
        double *us = calloc(s->bench.repeats, sizeof *us);
        double mine[SLT_ROUNDS], theirs[SLT_ROUNDS];
        if (!us)
            tool_die("out of host memory");
        for (uint32_t round = 0; round < SLT_ROUNDS && !rot.failed; round++) {
            mine[round] = bench_plan_time(d, sparse, sparse_bindings, sets->sets,
                                          BENCH_SUBMIT_REUSABLE, &s->bench);
            bench_device_time_fn(d, slt_run, &rot, s->bench.warmup, s->bench.repeats, us);
            theirs[round] = tool_median(us, s->bench.repeats);
        }
        if (!rot.failed) {
            r->sparse_us = tool_median(mine, SLT_ROUNDS);
            r->slt_us = tool_median(theirs, SLT_ROUNDS);
        }
        free(us);
    }
    if (rot.failed) {
        r->slt_status = "failed";
        r->slt_us = 0.0;
        snprintf(r->slt_message, sizeof r->slt_message, "%s", rot.err);
    }
done:
    bench_device_wait(d);
    if (rot.workspace.size)
        bench_buffer_free(d, &rot.workspace);
    if (rot.compressed.buf)
        bench_sets_free(d, &rot.compressed);
    cusparselt_mm_destroy(rot.g);
}
