/* SPDX-License-Identifier: Apache-2.0 */
/* The W4A16 GEMM on the host, C[M, N] = A[M, K] @ dequant(B)[K, N]
 * (bk_w4a16.h), the reference the GPU is held to:
 *
 *   W[k, n] = round_to_type((q[k, n] - z) * scale[k / group, n]), the
 *             product in float, rounded to A's type; z = 8, or the
 *             group's zero point of column n when packedZeros is bound;
 *   C[m, n] = round_to_type(sum over k = 0.. of A[m, perm[k]] * W[k, n]),
 *             the sum in float, in k order (no fused multiply-add).
 *
 * Each task takes a block of rows of A and one block of 64 columns (one
 * Marlin block of packed words): it walks K by the 16 rows of a packed
 * row, dequantizing through a 16-entry table per column that is rebuilt
 * when the group changes. Results do not depend on the thread count.
 * perm is trusted to be a permutation; an index outside 0..K-1 reads 0
 * (never out of bounds). No workspace.
 *
 * Where the build has a BLAS the sums of enough rows (blas_min_m, by N)
 * are sgemm's instead (below), in its order, with a workspace for the
 * converted panels and the accumulator. */
#include "host_w4a16.h"
#include "host_blas.h"
#include "host_half_convert.h"

#include <stdio.h>
#include <string.h>

#define BLOCK_M 32
#define PANEL_N 64
#define TILE_K 16
/* Columns of A gathered through perm at a time, then converted. */
#define GATHER_CHUNK 256
/* Below this many multiply-adds the GEMM runs on one thread. */
#define PARALLEL_MIN_WORK (1 << 20)
/* The fewest rows of A (tokens) the BLAS path takes where the build has
 * one; fewer (decode steps) stay with the fused loop below. The BLAS path
 * writes W as f32 panels of N x HOST_BLAS_PANEL_K on the submitting thread
 * and reads them back; the fused loop decodes a tile at a time on every
 * thread. Both timed on one thread over M = 1 to 64 (doc/design/host.md):
 * - decoding by rows (w4a16_decode_tile), the BLAS path's cost a weight grows as
 *   a panel outgrows the caches (1.2 ns at N = 512, 1.7 at 4096, 2.7 at
 *   12288) where the fused loop's stays near 1.1-1.3 ns; they cross at
 *   M = 2-4 for N = 512 and 1024, 5-6 for 1536 and 4096, 7 for 12288: the
 *   rule ceil(log2(N / 64)), one row more each time N doubles, between
 *   BLAS_MIN_M_LOW and BLAS_MIN_M_HIGH;
 * - decoding by columns (AVX-512), 0.4-1.1 ns a weight, below the fused
 *   loop's at every N and M measured; one row stays fused
 *   (BLAS_MIN_M_COLUMNS), where the fused loop spreads its decoding over
 *   the threads and the BLAS path does not. */
#define BLAS_MIN_M_LOW 2
#define BLAS_MIN_M_HIGH 8
#define BLAS_MIN_M_COLUMNS 2

struct gemm {
    const struct bk_w4a16_gemm_problem *p;
    char *a, *c;
    const uint32_t *packed;
    const uint16_t *scales;        /* packedScales */
    const int32_t *perm;           /* NULL when not bound */
    const uint32_t *zeros;         /* packedZeros, NULL when symmetric */
    bool bf16;                     /* A, C and the scales are bf16, else f16 */
    host_gemm_load_fn load_row;    /* rows of that type to f32 and back */
    host_gemm_store_fn store_row;
};

/* table[q][j]: the weight of value q in column n0 + j of group g: the
 * products in float, then rounded to the type and back a whole table at
 * a time by the GEMM's row store and load (vectorised, lib/half.h's bits). */
static void group_table(const struct gemm *gm, int64_t g, int64_t n0, float table[16][PANEL_N])
{
    const struct bk_w4a16_shape *s = &gm->p->shape;
    float scale[PANEL_N], zero[PANEL_N];
    uint16_t bits[16 * PANEL_N];
    for (int j = 0; j < PANEL_N; j++) {
        const uint16_t h = gm->scales[g * s->n + bk_w4a16_scale_position(n0 + j, s->per_channel)];
        scale[j] = gm->bf16 ? host_bf16_to_f32(h) : host_f16_to_f32(h);
        zero[j] = gm->zeros ? (float)((gm->zeros[g * (s->n / 8) +
                                                 bk_w4a16_zero_word(n0 + j, s->per_channel)] >>
                                       (4 * bk_w4a16_zero_nibble(n0 + j, s->per_channel))) &
                                      15u)
                            : 8.0f;
    }
    for (int q = 0; q < 16; q++)
        for (int j = 0; j < PANEL_N; j++)
            table[q][j] = ((float)q - zero[j]) * scale[j];
    gm->store_row((char *)bits, 1, 16 * PANEL_N, table);
    gm->load_row((const char *)bits, 1, 16 * PANEL_N, table);
}

/* Rows m0 .. m0 + rows - 1 of A (rows <= BLOCK_M) as float, columns k0 ..
 * k0 + TILE_K - 1 of the product (through perm). */
static void load_a(const struct gemm *gm, int64_t m0, int rows, int64_t k0,
                   float a[BLOCK_M][TILE_K])
{
    const struct bk_w4a16_gemm_problem *p = gm->p;
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < TILE_K; k++) {
            const int64_t col = gm->perm ? gm->perm[k0 + k] : k0 + k;
            uint16_t bits = 0;
            if (col >= 0 && col < p->shape.k)
                memcpy(&bits, host_matrix_at(gm->a, &p->a, m0 + r, col, 2), 2);
            a[r][k] = gm->bf16 ? host_bf16_to_f32(bits) : host_f16_to_f32(bits);
        }
}

/* One tile of 16 rows by 64 columns through its group's table: value
 * (k, j) is in word bk_w4a16_word(k, j) of the block, nibble
 * bk_w4a16_nibble(k, j), written out for a row so that the loop over the
 * columns vectorises (a gather of words and one of table entries a lane,
 * in the clones that have them). */
HOST_CLONES static void w4a16_decode_tile(const uint32_t *restrict block,
                                          const float table[16][PANEL_N],
                                          float tile[TILE_K][PANEL_N])
{
    for (int k = 0; k < TILE_K; k++) {
        const int row_word = 4 * ((k % 8) / 2), row_shift = 4 * (4 * (k % 2) + (k % 16) / 8);
        HOST_SIMD for (int j = 0; j < PANEL_N; j++) {
            const int word = 16 * (j % 8) + j / 16 + row_word;
            const int shift = row_shift + 8 * ((j % 16) / 8);
            tile[k][j] = table[(block[word] >> shift) & 15u][j];
        }
    }
}

/* acc[r] += a[r][k] * w[k] for each row, k in order: each element's sum
 * in k order, its products not fused into the additions (ISO C mode, no
 * contraction), so every clone gives the same bits. */
HOST_CLONES static void w4a16_accumulate_tile(int rows, const float a[BLOCK_M][TILE_K],
                                              const float w[TILE_K][PANEL_N],
                                              float acc[BLOCK_M][PANEL_N])
{
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < TILE_K; k++) {
            const float av = a[r][k];
            HOST_SIMD for (int j = 0; j < PANEL_N; j++)
                acc[r][j] += av * w[k][j];
        }
}

static void gemm_task(const struct gemm *gm, int64_t m0, int rows, int64_t n0)
{
    const struct bk_w4a16_gemm_problem *p = gm->p;
    const int64_t n = p->shape.n;
    float acc[BLOCK_M][PANEL_N], w[TILE_K][PANEL_N], a[BLOCK_M][TILE_K], table[16][PANEL_N];
    int64_t table_group = -1;
    memset(acc, 0, sizeof acc);
    for (int64_t k0 = 0; k0 < p->shape.k; k0 += TILE_K) {
        const int64_t g = k0 / p->shape.group;   /* a group holds whole tiles */
        if (g != table_group) {
            group_table(gm, g, n0, table);
            table_group = g;
        }
        w4a16_decode_tile(gm->packed + k0 / 16 * 2 * n + n0 / PANEL_N * 128, table, w);
        load_a(gm, m0, rows, k0, a);
        w4a16_accumulate_tile(rows, a, w, acc);
    }
    for (int r = 0; r < rows; r++)
        for (int j = 0; j < PANEL_N; j++) {
            const uint16_t bits =
                gm->bf16 ? host_f32_to_bf16(acc[r][j]) : host_f32_to_f16(acc[r][j]);
            memcpy(host_matrix_at(gm->c, &p->c, m0 + r, n0 + j, 2), &bits, 2);
        }
}

/* ---- On the BLAS (host_blas.c) -------------------------------------------------
 * The same products, summed by sgemm: A's panels gathered through perm
 * and W's dequantized (weights rounded to A's type as above) into f32,
 * HOST_BLAS_PANEL_K rows of K at a time (whole tiles of 16, so a group's
 * table is rebuilt where a tile enters a new group), and the engine's
 * epilogue rounds C. */

/* Columns [p0, p0 + kc) of rows [r0, r0 + rows) of A as f32, row-major:
 * a row converted by the GEMM's row loader, from A itself or, through
 * perm, from its gathered bits. */
static struct host_blas_panel fill_a(const struct host_gemm_operand *op, int64_t b, int64_t r0,
                                     int64_t rows, int64_t p0, int64_t kc, void *dst_)
{
    const struct gemm *gm = op->ctx;
    const struct bk_w4a16_gemm_problem *p = gm->p;
    const host_gemm_load_fn load = host_gemm_row_loader(p->shape.scale_type);
    float *dst = dst_;
    uint16_t bits[GATHER_CHUNK];
    (void)b;
    for (int64_t r = 0; r < rows; r++) {
        if (!gm->perm) {
            if (r + HOST_BLAS_PREFETCH_ROWS < rows && p->a.col_stride == 1)
                host_blas_prefetch(host_matrix_at(gm->a, &p->a, r0 + r + HOST_BLAS_PREFETCH_ROWS,
                                                  p0, 2),
                                   2 * kc);
            load(host_matrix_at(gm->a, &p->a, r0 + r, p0, 2), p->a.col_stride, kc, dst + r * kc);
            continue;
        }
        for (int64_t q0 = 0; q0 < kc; q0 += GATHER_CHUNK) {
            const int64_t len = kc - q0 < GATHER_CHUNK ? kc - q0 : GATHER_CHUNK;
            for (int64_t q = 0; q < len; q++) {
                const int64_t col = gm->perm[p0 + q0 + q];
                bits[q] = 0;
                if (col >= 0 && col < p->shape.k)
                    memcpy(&bits[q], host_matrix_at(gm->a, &p->a, r0 + r, col, 2), 2);
            }
            load((const char *)bits, 1, len, dst + r * kc + q0);
        }
    }
    return (struct host_blas_panel){ .p = dst, .ld = kc, .row_major = true };
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX512_COLUMNS 1
#include <immintrin.h>

/* A tile's 64 columns of 16 rows each through its group's table,
 * transposed (table_t[j][q]: a column's 16 weights, one register): column
 * j of a tile is 16 consecutive floats of W^T, written at dst + j * ld.
 * Its values are in the 16 words 16 (j % 8) .. + 15 of the block, row k
 * in word 4 ((k % 8) / 2) + j / 16 of them, nibble 4 (k % 2) +
 * 2 ((j % 16) / 8) + k / 8 (w4a16_layout.h): a permutation of the words
 * into the rows' lanes, a shift a lane, and the table by a permutation
 * too. */
__attribute__((target("avx512f"))) static void
decode_columns_avx512(const uint32_t *block, const float table_t[PANEL_N][16], float *dst,
                      int64_t ld)
{
    const __m512i row_word = _mm512_set_epi32(12, 12, 8, 8, 4, 4, 0, 0, 12, 12, 8, 8, 4, 4, 0, 0);
    const __m512i row_shift =
        _mm512_set_epi32(20, 4, 20, 4, 20, 4, 20, 4, 16, 0, 16, 0, 16, 0, 16, 0);
    const __m512i fifteen = _mm512_set1_epi32(15);
    for (int r = 0; r < 8; r++) {
        const __m512i words = _mm512_loadu_si512((const void *)(block + 16 * r));
        for (int c = 0; c < 4; c++) {
            const __m512i lanes =
                _mm512_permutexvar_epi32(_mm512_add_epi32(row_word, _mm512_set1_epi32(c)), words);
            for (int h = 0; h < 2; h++) {
                const int j = 16 * c + 8 * h + r;
                const __m512i shift = _mm512_add_epi32(row_shift, _mm512_set1_epi32(8 * h));
                const __m512i q = _mm512_and_si512(_mm512_srlv_epi32(lanes, shift), fifteen);
                _mm512_storeu_ps(dst + j * ld,
                                 _mm512_permutexvar_ps(q, _mm512_loadu_ps(table_t[j])));
            }
        }
    }
}

static bool have_avx512(void)
{
    return __builtin_cpu_supports("avx512f");
}
#else
#define HAVE_AVX512_COLUMNS 0
#endif

/* Rows [p0, p0 + kc) of W [K, N], columns [r0, r0 + rows) (whole blocks
 * of PANEL_N), as f32. With AVX-512, W^T = B^T row-major, a tile's
 * columns decoded by decode_columns_avx512; else W row-major (B^T
 * column-major), tiles decoded by w4a16_decode_tile into a buffer copied out a
 * row at a time (in place, rows a power-of-two stride apart would share
 * cache sets). */
static struct host_blas_panel fill_w(const struct host_gemm_operand *op, int64_t b, int64_t r0,
                                     int64_t rows, int64_t p0, int64_t kc, void *dst_)
{
    const struct gemm *gm = op->ctx;
    const struct bk_w4a16_gemm_problem *p = gm->p;
    const int64_t n = p->shape.n;
    float *dst = dst_;
    float table[16][PANEL_N], tile[TILE_K][PANEL_N];
    (void)b;
#if HAVE_AVX512_COLUMNS
    if (have_avx512()) {
        float table_t[PANEL_N][16];
        for (int64_t n0 = r0; n0 < r0 + rows; n0 += PANEL_N) {
            int64_t table_group = -1;
            for (int64_t k0 = p0; k0 < p0 + kc; k0 += TILE_K) {
                const int64_t g = k0 / p->shape.group;
                if (g != table_group) {
                    group_table(gm, g, n0, table);
                    for (int j = 0; j < PANEL_N; j++)
                        for (int q = 0; q < 16; q++)
                            table_t[j][q] = table[q][j];
                    table_group = g;
                }
                decode_columns_avx512(gm->packed + k0 / 16 * 2 * n + n0 / PANEL_N * 128,
                                      table_t, dst + (n0 - r0) * kc + (k0 - p0), kc);
            }
        }
        return (struct host_blas_panel){ .p = dst, .ld = kc, .row_major = true };
    }
#endif
    for (int64_t n0 = r0; n0 < r0 + rows; n0 += PANEL_N) {
        int64_t table_group = -1;
        for (int64_t k0 = p0; k0 < p0 + kc; k0 += TILE_K) {
            const int64_t g = k0 / p->shape.group;
            if (g != table_group) {
                group_table(gm, g, n0, table);
                table_group = g;
            }
            w4a16_decode_tile(gm->packed + k0 / 16 * 2 * n + n0 / PANEL_N * 128, table, tile);
            for (int k = 0; k < TILE_K; k++)
                memcpy(dst + (k0 - p0 + k) * rows + (n0 - r0), tile[k], sizeof tile[k]);
        }
    }
    return (struct host_blas_panel){ .p = dst, .ld = rows, .row_major = false };
}

/* The problem as a job of the BLAS path; gm NULL at plan creation. */
static struct host_gemm_job blas_job(const struct bk_w4a16_gemm_problem *p, const struct gemm *gm)
{
    return (struct host_gemm_job){
        .compute = HOST_GEMM_F32,
        .m = p->m, .n = p->shape.n, .k = p->shape.k, .batch = 1,
        .a = { .fill = fill_a, .type = p->shape.scale_type, .rows = p->m, .ctx = gm },
        .bt = { .fill = fill_w, .type = p->shape.scale_type, .rows = p->shape.n, .ctx = gm },
        .d = host_gemm_output_of(gm ? (BkDeviceAddress)(uintptr_t)gm->c : 0, &p->c),
        .activation = BK_GEMM_ACTIVATION_NONE,
        .alpha = 1,
    };
}

/* BLAS_MIN_M_COLUMNS where the weight decodes by columns, else
 * ceil(log2(n / 64)) between BLAS_MIN_M_LOW and BLAS_MIN_M_HIGH (above). */
static int64_t blas_min_m(int64_t n)
{
#if HAVE_AVX512_COLUMNS
    if (have_avx512())
        return BLAS_MIN_M_COLUMNS;
#endif
    int64_t rows = 0;
    while (rows < BLAS_MIN_M_HIGH && ((int64_t)PANEL_N << rows) < n)
        rows++;
    return rows < BLAS_MIN_M_LOW ? BLAS_MIN_M_LOW : rows;
}

/* Whether the BLAS sums the problem: rows enough for its N, and a job it
 * takes. Of the shape and the CPU alone, so plan creation and the run
 * agree. */
static bool blas_serves(const struct bk_w4a16_gemm_problem *p, const struct host_gemm_job *job)
{
    return p->m >= blas_min_m(p->shape.n) && host_blas_takes(job);
}

static BkResult gemm_launch(BkQueue queue, BkPlan plan, const struct bk_run_args *args)
{
    const struct bk_w4a16_gemm_problem *p = &plan->problem.w4a16_gemm;
    (void)queue;
    if (p->m == 0)
        return BK_SUCCESS;
    const struct gemm gm = {
        .p = p,
        .a = (char *)(uintptr_t)args->binding[BK_W4A16_GEMM_BINDING_A],
        .c = (char *)(uintptr_t)args->binding[BK_W4A16_GEMM_BINDING_C],
        .packed = (const uint32_t *)(uintptr_t)args->binding[BK_W4A16_GEMM_BINDING_PACKED],
        .scales = (const uint16_t *)(uintptr_t)args->binding[BK_W4A16_GEMM_BINDING_PACKED_SCALES],
        .perm = p->has_perm ? (const int32_t *)(uintptr_t)args->binding[BK_W4A16_GEMM_BINDING_PERM]
                            : NULL,
        .zeros = p->has_zeros
                     ? (const uint32_t *)(uintptr_t)
                           args->binding[BK_W4A16_GEMM_BINDING_PACKED_ZEROS]
                     : NULL,
        .bf16 = p->shape.scale_type == BK_DATA_TYPE_BF16,
        .load_row = host_gemm_row_loader(p->shape.scale_type),
        .store_row = host_gemm_row_storer(p->shape.scale_type),
    };
    const struct host_gemm_job job = blas_job(p, &gm);
    if (blas_serves(p, &job)) {
        host_blas_run(&job, (void *)(uintptr_t)args->workspace);
        return BK_SUCCESS;
    }
    const int64_t blocks = (p->m + BLOCK_M - 1) / BLOCK_M, panels = p->shape.n / PANEL_N;
    const double work = (double)p->m * (double)p->shape.n * (double)p->shape.k;
#pragma omp parallel for schedule(static) if (work >= PARALLEL_MIN_WORK)
    for (int64_t t = 0; t < blocks * panels; t++) {
        const int64_t m0 = t % blocks * BLOCK_M;
        gemm_task(&gm, m0, (int)(p->m - m0 < BLOCK_M ? p->m - m0 : BLOCK_M),
                  t / blocks * PANEL_N);
    }
    return BK_SUCCESS;
}

BkResult bk_host_w4a16_gemm_select(BkPlan plan)
{
    const struct bk_w4a16_gemm_problem *p = &plan->problem.w4a16_gemm;
    plan->launch = gemm_launch;
    const struct host_gemm_job job = blas_job(p, NULL);
    if (p->m > 0 && blas_serves(p, &job))
        plan->props.workspaceSize = host_blas_workspace_size(&job);
    snprintf(plan->props.kernelName, sizeof plan->props.kernelName, "host_w4a16_gemm%s_%s",
             p->has_zeros ? "_zp" : "", host_gemm_type_name(p->shape.scale_type));
    return BK_SUCCESS;
}
