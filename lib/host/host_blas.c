/* SPDX-License-Identifier: Apache-2.0 */
/* The host GEMM family on a CBLAS (see host_blas.h). */
#include "config.h"

#include "host_blas.h"

#include <limits.h>
#include <string.h>

#ifdef BK_HAVE_BLAS
#include <cblas.h>

/* The accumulator of a block of rows stays under this many bytes. */
#define ACC_BYTES ((int64_t)32 << 20)

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

static int64_t abs64(int64_t a)
{
    return a < 0 ? -a : a;
}

static uint64_t align64(uint64_t bytes)
{
    return (bytes + 63) & ~(uint64_t)63;
}

static bool fits_int(int64_t v)
{
    return v >= 0 && v <= INT_MAX;
}

static BkDataType compute_type(const struct host_gemm_job *job)
{
    return job->compute == HOST_GEMM_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
}

static size_t compute_size(const struct host_gemm_job *job)
{
    return job->compute == HOST_GEMM_F64 ? sizeof(double) : sizeof(float);
}

/* How a BLAS reads a strided [rows, cols] matrix as it is: row-major
 * (unit column stride, rows ld >= cols apart), column-major, or not at
 * all (ld 0). A single row or column has no stride between them. */
static struct host_blas_panel blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs)
{
    const int64_t one_row = max64(cols, 1), one_col = max64(rows, 1);
    if ((cs == 1 || cols <= 1) && (rows <= 1 || rs >= one_row))
        return (struct host_blas_panel){ .ld = rows <= 1 ? one_row : rs, .row_major = true };
    if ((rs == 1 || rows <= 1) && (cols <= 1 || cs >= one_col))
        return (struct host_blas_panel){ .ld = cols <= 1 ? one_col : cs, .row_major = false };
    return (struct host_blas_panel){ .ld = 0 };
}

/* An operand the BLAS reads in place: dense, of the compute type, in a
 * layout it takes. */
static bool operand_direct(const struct host_gemm_job *job, const struct host_gemm_operand *op)
{
    if (op->fill || op->type != compute_type(job))
        return false;
    const struct host_blas_panel l = blas_layout(op->rows, job->k, op->row_stride, op->col_stride);
    return l.ld > 0 && fits_int(l.ld);
}

static struct host_blas_panel output_layout(const struct host_gemm_job *job)
{
    return blas_layout(job->m, job->n, job->d.row_stride, job->d.col_stride);
}

/* D is the BLAS's output: of the compute type, in a layout it takes. */
static bool output_direct(const struct host_gemm_job *job)
{
    const struct host_blas_panel l = output_layout(job);
    return job->d.type == compute_type(job) && l.ld > 0 && fits_int(l.ld);
}

/* How a job is cut: rows of D per block (all of them when D is the
 * BLAS's output), the k panel, and the workspace: converted panels of
 * the left and right operands and the accumulator. */
struct plan {
    bool a_direct, b_direct, d_direct;
    int64_t mb, kp;
    uint64_t a_bytes, b_bytes, acc_bytes;
};

static void plan_of(const struct host_gemm_job *job, struct plan *pl)
{
    const int64_t es = (int64_t)compute_size(job);
    pl->a_direct = operand_direct(job, &job->a);
    pl->b_direct = operand_direct(job, &job->bt);
    pl->d_direct = output_direct(job);
    pl->kp = pl->a_direct && pl->b_direct ? job->k : min64(job->k, HOST_BLAS_PANEL_K);
    pl->mb = pl->d_direct ? job->m : max64(1, min64(job->m, ACC_BYTES / (job->n * es)));
    pl->a_bytes = pl->a_direct ? 0 : align64((uint64_t)(pl->mb * pl->kp * es));
    pl->b_bytes = pl->b_direct ? 0 : align64((uint64_t)(job->n * pl->kp * es));
    pl->acc_bytes = pl->d_direct ? 0 : align64((uint64_t)(pl->mb * job->n * es));
}

bool host_blas_takes(const struct host_gemm_job *job)
{
    /* alpha 0 and k 0 stay with the engine: a BLAS then skips the product,
     * where libbk computes 0 * (A @ B) (NaN for an infinite input). */
    if (job->alpha == 0 || job->k <= 0 || job->m <= 0 || job->n <= 0)
        return false;
    if (!fits_int(job->m) || !fits_int(job->n) || !fits_int(job->k))
        return false;
    /* A panel of the widest operand must be addressable by int ld. */
    const int64_t es = (int64_t)compute_size(job);
    if (job->n > INT64_MAX / HOST_BLAS_PANEL_K / es || job->m > INT64_MAX / HOST_BLAS_PANEL_K / es)
        return false;
    return true;
}

uint64_t host_blas_workspace_size(const struct host_gemm_job *job)
{
    struct plan pl;
    plan_of(job, &pl);
    return pl.a_bytes + pl.b_bytes + pl.acc_bytes;
}

const char *host_blas_isa(const struct host_gemm_job *job)
{
    return host_blas_takes(job) ? "blas" : host_gemm_isa();
}

/* ---- Panels ------------------------------------------------------------ */

/* Rows [r0, r0 + rows) and columns [p0, p0 + kc) of a dense operand in the
 * compute type: the matrix itself where the BLAS reads it, else converted
 * to dst along the source's contiguous direction. */
static struct host_blas_panel dense_panel(const struct host_gemm_job *job,
                                          const struct host_gemm_operand *op, bool direct,
                                          int64_t b, int64_t r0, int64_t rows, int64_t p0,
                                          int64_t kc, void *dst)
{
    const int64_t rs = op->row_stride, cs = op->col_stride;
    const size_t es = bk_data_type_size(op->type);
    const char *src = op->base + (b * op->batch_stride + r0 * rs + p0 * cs) * (int64_t)es;
    if (direct) {
        struct host_blas_panel l = blas_layout(op->rows, job->k, rs, cs);
        l.p = src;
        return l;
    }
    const host_gemm_load_fn load = host_gemm_row_loader(op->type);
    const size_t ces = compute_size(job);
    char *out = dst;
    if (abs64(cs) <= abs64(rs)) {
        for (int64_t r = 0; r < rows; r++) {
            if (cs == 1 && r + HOST_BLAS_PREFETCH_ROWS < rows)
                host_blas_prefetch(src + (r + HOST_BLAS_PREFETCH_ROWS) * rs * (int64_t)es,
                                   kc * (int64_t)es);
            load(src + r * rs * (int64_t)es, cs, kc, out + (size_t)(r * kc) * ces);
        }
        return (struct host_blas_panel){ .p = dst, .ld = kc, .row_major = true };
    }
    for (int64_t p = 0; p < kc; p++)
        load(src + p * cs * (int64_t)es, rs, rows, out + (size_t)(p * rows) * ces);
    return (struct host_blas_panel){ .p = dst, .ld = rows, .row_major = false };
}

static struct host_blas_panel panel(const struct host_gemm_job *job,
                                    const struct host_gemm_operand *op, bool direct, int64_t b,
                                    int64_t r0, int64_t rows, int64_t p0, int64_t kc, void *dst)
{
    if (op->fill)
        return op->fill(op, b, r0, rows, p0, kc, dst);
    return dense_panel(job, op, direct, b, r0, rows, p0, kc, dst);
}

/* out [rows, n] (row-major, ldc) = alpha * left [rows, kc] @ right^T +
 * beta * out, right given as [n, kc]. */
static void blas_gemm(const struct host_gemm_job *job, int64_t rows, int64_t n, int64_t kc,
                      double alpha, struct host_blas_panel left, struct host_blas_panel right,
                      double beta, void *out, int64_t ldc)
{
    const enum CBLAS_TRANSPOSE ta = left.row_major ? CblasNoTrans : CblasTrans;
    const enum CBLAS_TRANSPOSE tb = right.row_major ? CblasTrans : CblasNoTrans;
    if (job->compute == HOST_GEMM_F64)
        cblas_dgemm(CblasRowMajor, ta, tb, (int)rows, (int)n, (int)kc, alpha, left.p,
                    (int)left.ld, right.p, (int)right.ld, beta, out, (int)ldc);
    else
        cblas_sgemm(CblasRowMajor, ta, tb, (int)rows, (int)n, (int)kc, (float)alpha, left.p,
                    (int)left.ld, right.p, (int)right.ld, (float)beta, out, (int)ldc);
}

/* ---- D as the BLAS's output ------------------------------------------- */

static char *output_at(const struct host_gemm_output *o, int64_t b, int64_t i, int64_t j)
{
    return o->base +
           (b * o->batch_stride + i * o->row_stride + j * o->col_stride) *
               (int64_t)bk_data_type_size(o->type);
}

/* D = C, batch b (C and D of one type), unless C is D. */
static void copy_c(const struct host_gemm_job *job, int64_t b)
{
    const struct host_gemm_output *c = &job->c, *d = &job->d;
    if (c->base == d->base && c->row_stride == d->row_stride &&
        c->col_stride == d->col_stride && c->batch_stride == d->batch_stride)
        return;
    const host_gemm_load_fn load = host_gemm_row_loader(c->type);
    const host_gemm_store_fn store = host_gemm_row_storer(d->type);
    double row[HOST_GEMM_MAX_BLOCK];
    for (int64_t i = 0; i < job->m; i++)
        for (int64_t j0 = 0; j0 < job->n; j0 += HOST_GEMM_MAX_BLOCK) {
            const int64_t cols = min64(HOST_GEMM_MAX_BLOCK, job->n - j0);
            load(output_at(c, b, i, j0), c->col_stride, cols, row);
            store(output_at(d, b, i, j0), d->col_stride, cols, row);
        }
}

/* Bias and activation on D in place, through the engine's epilogue. */
static void finish_d(const struct host_gemm_job *job, int64_t b)
{
    if (!job->bias && job->activation == BK_GEMM_ACTIVATION_NONE)
        return;
    struct host_gemm_job fix = *job;
    fix.alpha = 1;
    fix.read_c = false;
    const host_gemm_load_fn load = host_gemm_row_loader(job->d.type);
    double row[HOST_GEMM_MAX_BLOCK];
    for (int64_t i = 0; i < job->m; i++)
        for (int64_t j0 = 0; j0 < job->n; j0 += HOST_GEMM_MAX_BLOCK) {
            const int64_t cols = min64(HOST_GEMM_MAX_BLOCK, job->n - j0);
            load(output_at(&job->d, b, i, j0), job->d.col_stride, cols, row);
            host_gemm_epilogue(&fix, b, i, j0, 1, cols, row, HOST_GEMM_MAX_BLOCK);
        }
}

/* One batch with D as the output: column-major D is the transposed
 * problem, D^T = B^T @ A^T, in row-major. k in panels where an operand is
 * converted: the later ones add to D. */
static void run_direct(const struct host_gemm_job *job, const struct plan *pl, int64_t b,
                       char *ws)
{
    const struct host_blas_panel dl = output_layout(job);
    const bool swap = !dl.row_major;
    const struct host_gemm_operand *left = swap ? &job->bt : &job->a;
    const struct host_gemm_operand *right = swap ? &job->a : &job->bt;
    const bool left_direct = swap ? pl->b_direct : pl->a_direct;
    const bool right_direct = swap ? pl->a_direct : pl->b_direct;
    const int64_t rows = swap ? job->n : job->m, cols = swap ? job->m : job->n;
    /* No workspace where both operands are read in place: ws may be NULL. */
    char *left_buf = ws, *right_buf = ws ? ws + (swap ? pl->b_bytes : pl->a_bytes) : NULL;
    if (job->read_c)
        copy_c(job, b);
    char *out = output_at(&job->d, b, 0, 0);
    for (int64_t p0 = 0; p0 < job->k; p0 += pl->kp) {
        const int64_t kc = min64(pl->kp, job->k - p0);
        const struct host_blas_panel lp = panel(job, left, left_direct, b, 0, rows, p0, kc,
                                                left_buf);
        const struct host_blas_panel rp = panel(job, right, right_direct, b, 0, cols, p0, kc,
                                                right_buf);
        const double beta = p0 > 0 ? 1 : job->read_c ? job->beta : 0;
        blas_gemm(job, rows, cols, kc, job->alpha, lp, rp, beta, out, dl.ld);
    }
    finish_d(job, b);
}

/* One batch through the accumulator: blocks of rows, k in panels, then
 * the engine's epilogue. */
static void run_accumulated(const struct host_gemm_job *job, const struct plan *pl, int64_t b,
                            char *ws)
{
    char *a_buf = ws, *b_buf = ws ? ws + pl->a_bytes : NULL;
    char *acc = b_buf ? b_buf + pl->b_bytes : NULL;
    const size_t es = compute_size(job);
    for (int64_t i0 = 0; i0 < job->m; i0 += pl->mb) {
        const int64_t rows = min64(pl->mb, job->m - i0);
        for (int64_t p0 = 0; p0 < job->k; p0 += pl->kp) {
            const int64_t kc = min64(pl->kp, job->k - p0);
            const struct host_blas_panel lp = panel(job, &job->a, pl->a_direct, b, i0, rows, p0,
                                                    kc, a_buf);
            const struct host_blas_panel rp = panel(job, &job->bt, pl->b_direct, b, 0, job->n,
                                                    p0, kc, b_buf);
            blas_gemm(job, rows, job->n, kc, 1, lp, rp, p0 > 0 ? 1 : 0, acc, job->n);
        }
        for (int64_t j0 = 0; j0 < job->n; j0 += HOST_GEMM_MAX_BLOCK)
            host_gemm_epilogue(job, b, i0, j0, rows, min64(HOST_GEMM_MAX_BLOCK, job->n - j0),
                               acc + (size_t)j0 * es, job->n);
    }
}

void host_blas_run(const struct host_gemm_job *job, void *workspace)
{
    struct plan pl;
    plan_of(job, &pl);
    for (int64_t b = 0; b < job->batch; b++) {
        if (pl.d_direct)
            run_direct(job, &pl, b, workspace);
        else
            run_accumulated(job, &pl, b, workspace);
    }
}

#else /* !BK_HAVE_BLAS: the engine serves every job */

bool host_blas_takes(const struct host_gemm_job *job)
{
    (void)job;
    return false;
}

uint64_t host_blas_workspace_size(const struct host_gemm_job *job)
{
    (void)job;
    return 0;
}

void host_blas_run(const struct host_gemm_job *job, void *workspace)
{
    (void)job;
    (void)workspace;
}

const char *host_blas_isa(const struct host_gemm_job *job)
{
    (void)job;
    return host_gemm_isa();
}

#endif
