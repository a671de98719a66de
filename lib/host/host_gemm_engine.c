/* SPDX-License-Identifier: Apache-2.0 */
/* The host's blocked GEMM engine: tasks, packing, micro-kernel calls and
 * the epilogue (see host_gemm_engine.h). */
#include "host_gemm_engine.h"

#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Below this many multiply-adds a problem runs on one thread: waking the
 * team would cost more than it saves. */
#define PARALLEL_MIN_MADDS (1 << 18)

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t round_up(int64_t a, int64_t b)
{
    return (a + b - 1) / b * b;
}

static uint64_t align64(uint64_t bytes)
{
    return (bytes + 63) & ~(uint64_t)63;
}

static int max_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int thread_id(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* How a problem is cut: block sizes clipped to the problem, tasks, and
 * each thread's workspace (A panels, B panels, accumulator block). */
struct shape {
    const struct host_gemm_blocking *bl;
    int64_t mc, nc, kc;
    int64_t tiles_m, tiles_n, tasks;
    uint64_t a_bytes, b_bytes, acc_bytes, per_thread;
};

static bool shape_of(enum host_gemm_compute compute, int64_t m, int64_t n, int64_t k,
                     int64_t batch, struct shape *s)
{
    if (m <= 0 || n <= 0 || batch <= 0)
        return false;
    const struct host_gemm_blocking *bl = host_gemm_blocking(compute);
    s->bl = bl;
    s->mc = min64(bl->mc, round_up(m, bl->mr));
    s->nc = min64(bl->nc, round_up(n, bl->nr));
    s->kc = min64(bl->kc, k);
    s->tiles_m = (m + s->mc - 1) / s->mc;
    s->tiles_n = (n + s->nc - 1) / s->nc;
    s->tasks = batch * s->tiles_m * s->tiles_n;
    s->a_bytes = align64((uint64_t)(s->mc * s->kc) * bl->elem);
    s->b_bytes = align64((uint64_t)(s->nc * s->kc) * bl->elem);
    s->acc_bytes = align64((uint64_t)(s->mc * s->nc) * bl->elem);
    s->per_thread = s->a_bytes + s->b_bytes + s->acc_bytes;
    return true;
}

/* Threads worth using for a problem: no more than its tasks. */
static int64_t useful_threads(const struct shape *s, int64_t m, int64_t n, int64_t k, int64_t batch)
{
    if ((double)m * (double)n * (double)(k > 0 ? k : 1) * (double)batch < PARALLEL_MIN_MADDS)
        return 1;
    return min64(max_threads(), s->tasks);
}

uint64_t host_gemm_workspace_size(enum host_gemm_compute compute, int64_t m, int64_t n, int64_t k,
                                  int64_t batch)
{
    struct shape s;
    if (!shape_of(compute, m, n, k, batch, &s))
        return 0;
    return (uint64_t)useful_threads(&s, m, n, k, batch) * s.per_thread;
}

/* ---- Epilogue: D = act(alpha * acc + beta * C + bias) ------------------- */
#define SQRT_2_OVER_PI 0.79788456080286535587989211986876
#define GELU_TANH_C 0.044715

/* GELU-tanh as x * sigmoid(2u): (1 + tanh u) / 2 == sigmoid(2u), and the
 * sigmoid does not cancel to 0 for u < 0 (the gated activations do the
 * same). exp takes -|t| only: no overflow. RELU keeps NaN. */
#define DEFINE_EPILOGUE(T, S, EXP, FABS)                                                   \
    static void act_##S(BkGemmActivation act, T *v, int64_t n)                             \
    {                                                                                      \
        if (act == BK_GEMM_ACTIVATION_RELU) {                                              \
            for (int64_t j = 0; j < n; j++)                                                \
                v[j] = v[j] < 0 ? (T)0 : v[j];                                             \
        } else if (act == BK_GEMM_ACTIVATION_GELU_TANH) {                                  \
            for (int64_t j = 0; j < n; j++) {                                              \
                const T x = v[j];                                                          \
                const T t = (T)(2 * SQRT_2_OVER_PI) * (x + (T)GELU_TANH_C * x * x * x);     \
                const T e = EXP(-FABS(t));                                                 \
                const T r = (T)1 / ((T)1 + e);                                             \
                v[j] = x * (t >= 0 ? r : e * r);                                           \
            }                                                                              \
        }                                                                                  \
    }                                                                                      \
    static void epilogue_##S(const struct host_gemm_job *job, int64_t b, int64_t i0,       \
                             int64_t j0, int64_t rows, int64_t cols, void *acc_, int64_t ld) \
    {                                                                                      \
        T *acc = acc_;                                                                     \
        const T alpha = (T)job->alpha, beta = (T)job->beta;                                \
        const int64_t es = (int64_t)bk_data_type_size(job->d.type);                        \
        const host_gemm_load_fn load = host_gemm_row_loader(job->d.type);                  \
        const host_gemm_store_fn store = host_gemm_row_storer(job->d.type);                \
        const struct host_gemm_output *c = &job->c, *d = &job->d;                          \
        T bias[HOST_GEMM_MAX_BLOCK], cv[HOST_GEMM_MAX_BLOCK];                              \
        if (job->bias)                                                                     \
            load(job->bias + j0 * es, 1, cols, bias);                                      \
        for (int64_t i = 0; i < rows; i++) {                                               \
            T *v = acc + i * ld;                                                           \
            if (alpha != 1) /* x * 1 is x: no pass for it */                               \
                for (int64_t j = 0; j < cols; j++)                                         \
                    v[j] *= alpha;                                                         \
            if (job->read_c) {                                                             \
                load(c->base + (b * c->batch_stride + (i0 + i) * c->row_stride +           \
                                j0 * c->col_stride) * es,                                  \
                     c->col_stride, cols, cv);                                             \
                for (int64_t j = 0; j < cols; j++)                                         \
                    v[j] += beta * cv[j];                                                  \
            }                                                                              \
            if (job->bias)                                                                 \
                for (int64_t j = 0; j < cols; j++)                                         \
                    v[j] += bias[j];                                                       \
            act_##S(job->activation, v, cols);                                             \
            store(d->base + (b * d->batch_stride + (i0 + i) * d->row_stride +              \
                             j0 * d->col_stride) * es,                                     \
                  d->col_stride, cols, v);                                                 \
        }                                                                                  \
    }

DEFINE_EPILOGUE(float, f, expf, fabsf)
DEFINE_EPILOGUE(double, d, exp, fabs)

typedef void (*epilogue_fn)(const struct host_gemm_job *, int64_t, int64_t, int64_t, int64_t,
                            int64_t, void *, int64_t);
static const epilogue_fn epilogues[HOST_GEMM_COMPUTE_COUNT] = {
    [HOST_GEMM_F32] = epilogue_f,
    [HOST_GEMM_F64] = epilogue_d,
};

void host_gemm_epilogue(const struct host_gemm_job *job, int64_t b, int64_t i0, int64_t j0,
                        int64_t rows, int64_t cols, void *acc, int64_t ld)
{
    epilogues[job->compute](job, b, i0, j0, rows, cols, acc, ld);
}

/* ---- Tasks ---------------------------------------------------------------- */

/* One block of D (batch, block row, block column): every k block packed
 * and multiplied into the accumulator in k order, then the epilogue. */
static void run_task(const struct host_gemm_job *job, const struct shape *s,
                     host_gemm_kernel_fn kernel, int64_t task, char *ws)
{
    const struct host_gemm_blocking *bl = s->bl;
    const int64_t per_batch = s->tiles_m * s->tiles_n;
    const int64_t b = task / per_batch, rest = task % per_batch;
    const int64_t i0 = rest % s->tiles_m * s->mc, j0 = rest / s->tiles_m * s->nc;
    const int64_t rows = min64(s->mc, job->m - i0), cols = min64(s->nc, job->n - j0);
    const int64_t mpad = round_up(rows, bl->mr), npad = round_up(cols, bl->nr);
    const size_t es = bl->elem;
    char *apack = ws, *bpack = ws + s->a_bytes, *acc = bpack + s->b_bytes;
    const int64_t ld = s->nc;

    if (job->k == 0)   /* an empty sum: the product is 0 */
        memset(acc, 0, (size_t)(mpad * ld) * es);
    for (int64_t p0 = 0; p0 < job->k; p0 += s->kc) {
        const int64_t kc = min64(s->kc, job->k - p0);
        job->a.pack(&job->a, b, i0, mpad, p0, kc, bl->mr, apack);
        job->bt.pack(&job->bt, b, j0, npad, p0, kc, bl->nr, bpack);
        /* A B micro-panel stays in L1 while the A panels stream from L2. */
        for (int64_t jr = 0; jr < npad; jr += bl->nr)
            for (int64_t ir = 0; ir < mpad; ir += bl->mr)
                kernel(kc, apack + (size_t)(ir * kc) * es, bpack + (size_t)(jr * kc) * es,
                       acc + (size_t)(ir * ld + jr) * es, ld, p0 == 0);
    }
    epilogues[job->compute](job, b, i0, j0, rows, cols, acc, ld);
}

void host_gemm_run(const struct host_gemm_job *job, void *workspace, uint64_t workspace_size)
{
    struct shape s;
    if (!shape_of(job->compute, job->m, job->n, job->k, job->batch, &s))
        return;
    /* Never more threads than the workspace has buffers for. */
    int64_t threads = min64(useful_threads(&s, job->m, job->n, job->k, job->batch),
                            (int64_t)(workspace_size / s.per_thread));
    if (threads < 1)
        threads = 1;   /* the core checked the workspace: one thread's worth is there */
    const host_gemm_kernel_fn kernel = host_gemm_kernel(job->compute);
    char *ws = workspace;
    const int64_t tasks = s.tasks;
#pragma omp parallel for schedule(static) num_threads((int)threads) if (threads > 1)
    for (int64_t t = 0; t < tasks; t++)
        run_task(job, &s, kernel, t, ws + (size_t)thread_id() * s.per_thread);
}
