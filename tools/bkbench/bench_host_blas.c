/* SPDX-License-Identifier: Apache-2.0 */
/* The host BLAS beside the host 2:4 and W4A16 cases (bench_host_blas.h). */
#include "bench_host_blas.h"

#include <stdlib.h>
#include <string.h>

#include "bench_run.h"
#include "gemm_op.h"
#include "tool_common.h"

enum { SLOT_A, SLOT_B, SLOT_D, SLOT_COUNT };

bool host_blas_peer_open(struct bench_device *d, const struct gemm_settings *s, int64_t m,
                         int64_t n, int64_t k, struct host_blas_peer *p)
{
    memset(p, 0, sizeof *p);
    if (!s->host_blas)
        return false;
    const uint64_t bytes[SLOT_COUNT] = {gemm_matrix_bytes(BK_DATA_TYPE_F32, m, k),
                                        gemm_matrix_bytes(BK_DATA_TYPE_F32, n, k),
                                        gemm_matrix_bytes(BK_DATA_TYPE_F32, m, n)};
    const uint32_t sets = bench_sets_for(bytes[SLOT_A] + bytes[SLOT_B] + bytes[SLOT_D], &s->bench);
    bench_sets_alloc(d, &p->sets, sets, bytes, SLOT_COUNT);
    bench_sets_fill(d, &p->sets, SLOT_A, BK_DATA_TYPE_F32);
    bench_sets_fill(d, &p->sets, SLOT_B, BK_DATA_TYPE_F32);
    p->rot = (struct lt_rotation){.host_blas = true, .dtype = BK_DATA_TYPE_F32,
                                  .m = m, .n = n, .k = k,
                                  .d_sets = &p->sets, .a_sets = &p->sets, .b_sets = &p->sets,
                                  .d_slot = SLOT_D, .a_slot = SLOT_A, .b_slot = SLOT_B};
    p->open = true;
    return true;
}

double host_blas_peer_time(struct bench_device *d, struct host_blas_peer *p,
                           const struct bench_settings *b)
{
    double *us = calloc(b->repeats, sizeof *us);
    if (!us)
        tool_die("out of host memory");
    bench_device_time_fn(d, lt_rotation_run, &p->rot, b->warmup, b->repeats, us);
    const double median = tool_median(us, b->repeats);
    free(us);
    return median;
}

void host_blas_peer_close(struct bench_device *d, struct host_blas_peer *p)
{
    if (p->open)
        bench_sets_free(d, &p->sets);
    memset(p, 0, sizeof *p);
}
