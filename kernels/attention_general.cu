// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention on CUDA cores, every type, D and Dv up to 256,
// any block sizes and strides: the correct path behind the tensor-core
// kernels (kernels/attention_mma.cu), and the list-to-mask scatter and the
// backward row sums that both use.
//
// One warp per row. A forward (or dq) warp takes the visible keys 32 at a
// time, one key per lane for the dot products, then spreads the row's
// output columns over the lanes; a dk/dv warp does the same over the
// queries that see its key, for each query head of its kv head in turn,
// so no two warps write one element and the sums are deterministic.
#include "attention_common.cuh"

namespace bk {
namespace attention {

constexpr int WARPS = BK_ATTENTION_GENERAL_WARPS;
constexpr int MAX_COLS = 256;
constexpr int COLS_PER_LANE = MAX_COLS / 32;

static __device__ __forceinline__ float exp_c(float x) { return expf(x); }
static __device__ __forceinline__ double exp_c(double x) { return exp(x); }
static __device__ __forceinline__ float log_c(float x) { return logf(x); }
static __device__ __forceinline__ double log_c(double x) { return log(x); }

template <typename C> static __device__ __forceinline__ C warp_max(C v)
{
    for (int o = 16; o > 0; o /= 2)
        v = fmax(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

template <typename C> static __device__ __forceinline__ C warp_sum(C v)
{
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

// A row of n elements (stride s) into the warp's shared row, as C.
template <typename T, typename C>
static __device__ __forceinline__ void load_row(C *dst, const T *src, int64_t n, int64_t s,
                                                int lane)
{
    for (int64_t c = lane; c < n; c += 32)
        dst[c] = Storage<T>::in(src[c * s]);
    __syncwarp();
}

template <typename T, typename C>
static __device__ __forceinline__ C dot_row(const C *row, const T *src, int64_t n, int64_t s)
{
    C sum = 0;
    for (int64_t c = 0; c < n; c++)
        sum += row[c] * Storage<T>::in(src[c * s]);
    return sum;
}

// Writes acc * factor to the row's n columns (lane + 32 t).
template <typename T, typename C>
static __device__ __forceinline__ void store_row(T *dst, int64_t n, int64_t s,
                                                 const C (&acc)[COLS_PER_LANE], C factor,
                                                 int lane)
{
#pragma unroll
    for (int t = 0; t < COLS_PER_LANE; t++) {
        const int64_t c = lane + 32 * t;
        if (c < n)
            dst[c * s] = Storage<T>::out(acc[t] * factor);
    }
}

template <typename T>
static __device__ __forceinline__ void fill_row(T *dst, int64_t n, int64_t s, float value,
                                                int lane)
{
    for (int64_t c = lane; c < n; c += 32)
        dst[c * s] = Storage<T>::out(value);
}

// acc[t] += w * src[lane + 32 t] for the row's n columns.
template <typename T, typename C>
static __device__ __forceinline__ void axpy_row(C (&acc)[COLS_PER_LANE], C w, const T *src,
                                                int64_t n, int64_t s, int lane)
{
#pragma unroll
    for (int t = 0; t < COLS_PER_LANE; t++) {
        const int64_t c = lane + 32 * t;
        if (c < n)
            acc[t] += w * Storage<T>::in(src[c * s]);
    }
}

// ---- Forward ----------------------------------------------------------------

template <typename T> static __device__ void forward_row(const Args &a)
{
    typedef typename Storage<T>::C C;
    __shared__ C qrow[WARPS][MAX_COLS];
    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t i = (int64_t)blockIdx.x * WARPS + warp, h = blockIdx.y;
    const Seq sq = sequence(a, blockIdx.z);
    const int64_t b = sq.b, r = sq.q0 + i; // r: the tensors' row
    if (r >= sq.q_out)
        return;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    const int64_t pb = sq.pb, ph = pattern_h(a, h);
    T *y = at<T>(a.y, b, h, r);
    C *lse = (a.flags & BK_ATTENTION_HAS_LSE) ? lse_at<C>(a, b, h, r) : nullptr;
    if (sq.bad || pattern_bad(a, pb, ph)) {
        fill_row(y, a.dv_cols, a.y.s[3], quiet_nan(), lane);
        if (lse && lane == 0)
            *lse = quiet_nan();
        return;
    }
    C acc[COLS_PER_LANE] = {};
    C m = -INFINITY, l = 0;
    // Past a PADDED length the row sees no key (y = 0, lse = -inf).
    const int64_t ib = i / a.block_q, kend = i < sq.lq ? key_end(a, sq, i) : 0;
    if (kend > 0)
        load_row(qrow[warp], at<T>(a.q, b, h, r), a.d, a.q.s[3], lane);
    for (int64_t jb = 0; jb * a.block_k < kend; jb++) {
        if (!block_active(a, pb, ph, ib, jb))
            continue;
        const int64_t hi = min(jb * a.block_k + a.block_k, kend);
        for (int64_t j0 = jb * a.block_k; j0 < hi; j0 += 32) {
            const int64_t j = j0 + lane;
            C s = -INFINITY;
            if (j < hi)
                s = dot_row(qrow[warp], at<T>(a.k, b, kvh, sq.k0 + j), a.d, a.k.s[3]) *
                    (C)a.scale;
            const C mc = warp_max(s);
            const C mn = fmax(m, mc);
            const C corr = m == -INFINITY ? (C)0 : exp_c(m - mn);
            const C p = j < hi ? exp_c(s - mn) : (C)0;
            l = l * corr + warp_sum(p);
#pragma unroll
            for (int t = 0; t < COLS_PER_LANE; t++)
                acc[t] *= corr;
            const int n = (int)min((int64_t)32, hi - j0);
            for (int jj = 0; jj < n; jj++)
                axpy_row(acc, __shfl_sync(0xFFFFFFFFu, p, jj),
                         at<T>(a.v, b, kvh, sq.k0 + j0 + jj), a.dv_cols, a.v.s[3], lane);
            m = mn;
        }
    }
    // A row that sees no key: y = 0 and lse = -inf.
    store_row(y, a.dv_cols, a.y.s[3], acc, l > 0 ? (C)1 / l : (C)0, lane);
    if (lse && lane == 0)
        *lse = l > 0 ? m + log_c(l) : (C)-INFINITY;
}

// ---- Backward -----------------------------------------------------------------

// rowsum[b, h, i] = sum over c of dy[i, c] * y[i, c], for
// BK_ATTENTION_ROWSUM_ROWS consecutive rows a warp, their loads all issued
// before the first sum (a CTA of one row a warp spent more time being
// launched than reading; rows one after another, waiting on each load).
template <typename T> static __device__ void rowsum_rows(const Args &a)
{
    typedef typename Storage<T>::C C;
    constexpr int R = BK_ATTENTION_ROWSUM_ROWS;
    static_assert(64 % (WARPS * R) == 0, "a 64-query tile starts at some CTA's first row");
    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t i0 = ((int64_t)blockIdx.x * WARPS + warp) * R, h = blockIdx.y, b = blockIdx.z;
    // The Hopper backward that computes dq with dk and dv: the counters of
    // the 64-query tile starting at this CTA's rows, zeroed for it.
    const int64_t first = (int64_t)blockIdx.x * WARPS * R;
    if (a.dq_count && threadIdx.x < 2 && first % 64 == 0)
        ((uint32_t *)a.dq_count)[dq_chunk(a, b, h, first / 64) + threadIdx.x] = 0;
    // With float atomics: the tile's two chunks of F32 dq sums (32 KiB).
    if ((a.flags & BK_ATTENTION_ZERO_DQ_SUM) && first % 64 == 0) {
        float4 *sums = (float4 *)((float *)a.dq_sum + dq_chunk(a, b, h, first / 64) * (64 * 64));
        for (int i = (int)threadIdx.x; i < 2 * 64 * 64 / 4; i += (int)blockDim.x)
            sums[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    }
    const T *dy = at<T>(a.dy, b, h, i0), *y = at<T>(a.y, b, h, i0);
    C sum[R];
#pragma unroll
    for (int r = 0; r < R; r++)
        sum[r] = 0;
    // Contiguous 8-byte aligned rows of a half type (the common case, and
    // the Hopper backward's): four elements a load.
    const bool packed = sizeof(T) == 2 && a.dy.s[3] == 1 && a.y.s[3] == 1 &&
                        a.dv_cols % 4 == 0 && a.dy.s[2] % 4 == 0 && a.y.s[2] % 4 == 0 &&
                        (((uintptr_t)dy | (uintptr_t)y) & 7u) == 0;
    if (packed) {
        for (int64_t c = 4 * lane; c < a.dv_cols; c += 128) {
            uint2 du[R], yu[R];
#pragma unroll
            for (int r = 0; r < R; r++) {
                du[r] = yu[r] = make_uint2(0u, 0u);
                if (i0 + r < a.lq) {
                    du[r] = *(const uint2 *)(dy + r * a.dy.s[2] + c);
                    yu[r] = *(const uint2 *)(y + r * a.y.s[2] + c);
                }
            }
#pragma unroll
            for (int r = 0; r < R; r++) {
                T dv[4], yv[4];
                memcpy(dv, &du[r], sizeof du[r]);
                memcpy(yv, &yu[r], sizeof yu[r]);
#pragma unroll
                for (int e = 0; e < 4; e++)
                    sum[r] += Storage<T>::in(dv[e]) * Storage<T>::in(yv[e]);
            }
        }
    } else {
        for (int r = 0; r < R && i0 + r < a.lq; r++)
            for (int64_t c = lane; c < a.dv_cols; c += 32)
                sum[r] += Storage<T>::in(dy[r * a.dy.s[2] + c * a.dy.s[3]]) *
                          Storage<T>::in(y[r * a.y.s[2] + c * a.y.s[3]]);
    }
#pragma unroll
    for (int r = 0; r < R; r++) {
        const C total = warp_sum(sum[r]);
        if (lane == 0 && i0 + r < a.lq)
            *rowsum_at<C>(a, b, h, i0 + r) = total;
    }
}

// P and dS of one (query, key) pair; 0 for a pair that is not visible.
template <typename C> struct Grad {
    C p, ds;
};

template <typename T, typename C>
static __device__ __forceinline__ Grad<C> pair_grad(const Args &a, const C *qrow, const C *dyrow,
                                                    const T *k, const T *v, C lse, C rowsum)
{
    const C s = dot_row(qrow, k, a.d, a.k.s[3]) * (C)a.scale;
    const C p = exp_c(s - lse);
    const C dp = dot_row(dyrow, v, a.dv_cols, a.v.s[3]);
    return Grad<C>{ p, p * (dp - rowsum) };
}

// dq[i] = scale * sum over visible j of dS[i, j] k[j].
template <typename T> static __device__ void dq_row(const Args &a)
{
    typedef typename Storage<T>::C C;
    __shared__ C qrow[WARPS][MAX_COLS], dyrow[WARPS][MAX_COLS];
    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t i = (int64_t)blockIdx.x * WARPS + warp, h = blockIdx.y;
    const Seq sq = sequence(a, blockIdx.z);
    const int64_t b = sq.b, r = sq.q0 + i; // r: the tensors' row
    if (r >= sq.q_out)
        return;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    const int64_t pb = sq.pb, ph = pattern_h(a, h);
    T *dq = at<T>(a.dq, b, h, r);
    if (sq.bad || pattern_bad(a, pb, ph)) {
        fill_row(dq, a.d, a.dq.s[3], quiet_nan(), lane);
        return;
    }
    // Past a PADDED length: dq = 0.
    C lse = -INFINITY, rowsum = 0;
    if (i < sq.lq)
        lse = *lse_at<C>(a, b, h, r), rowsum = *rowsum_at<C>(a, b, h, r);
    C acc[COLS_PER_LANE] = {};
    const int64_t kend = lse == -INFINITY ? 0 : key_end(a, sq, i);
    if (kend > 0) {
        load_row(qrow[warp], at<T>(a.q, b, h, r), a.d, a.q.s[3], lane);
        load_row(dyrow[warp], at<T>(a.dy, b, h, r), a.dv_cols, a.dy.s[3], lane);
    }
    const int64_t ib = i / a.block_q;
    for (int64_t jb = 0; jb * a.block_k < kend; jb++) {
        if (!block_active(a, pb, ph, ib, jb))
            continue;
        const int64_t hi = min(jb * a.block_k + a.block_k, kend);
        for (int64_t j0 = jb * a.block_k; j0 < hi; j0 += 32) {
            const int64_t j = j0 + lane;
            Grad<C> g = { 0, 0 };
            if (j < hi)
                g = pair_grad(a, qrow[warp], dyrow[warp], at<T>(a.k, b, kvh, sq.k0 + j),
                              at<T>(a.v, b, kvh, sq.k0 + j), lse, rowsum);
            const int n = (int)min((int64_t)32, hi - j0);
            for (int jj = 0; jj < n; jj++)
                axpy_row(acc, __shfl_sync(0xFFFFFFFFu, g.ds, jj),
                         at<T>(a.k, b, kvh, sq.k0 + j0 + jj), a.d, a.k.s[3], lane);
        }
    }
    store_row(dq, a.d, a.dq.s[3], acc, (C)a.scale, lane);
}

// dk[j] = scale * sum dS[i, j] q[i] and dv[j] = sum P[i, j] dy[i] over the
// queries i of every query head of j's kv head that see key j.
template <typename T> static __device__ void dkv_row(const Args &a)
{
    typedef typename Storage<T>::C C;
    __shared__ C krow[WARPS][MAX_COLS], vrow[WARPS][MAX_COLS];
    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t j = (int64_t)blockIdx.x * WARPS + warp, kvh = blockIdx.y;
    const Seq sq = sequence(a, blockIdx.z);
    const int64_t b = sq.b, rk = sq.k0 + j; // rk: the tensors' key row
    if (rk >= sq.k_out)
        return;
    const int64_t group = a.heads / a.kv_heads, pb = sq.pb;
    T *dk = at<T>(a.dk, b, kvh, rk), *dv = at<T>(a.dv, b, kvh, rk);
    if (sq.bad || group_bad_pb(a, pb, kvh)) {
        fill_row(dk, a.d, a.dk.s[3], quiet_nan(), lane);
        fill_row(dv, a.dv_cols, a.dv.s[3], quiet_nan(), lane);
        return;
    }
    C acc_k[COLS_PER_LANE] = {}, acc_v[COLS_PER_LANE] = {};
    // Past a PADDED length no query sees the key: dk = dv = 0.
    const int64_t first = j < sq.lk ? query_begin(a, sq, j) : sq.lq;
    if (first < sq.lq) {
        load_row(krow[warp], at<T>(a.k, b, kvh, rk), a.d, a.k.s[3], lane);
        load_row(vrow[warp], at<T>(a.v, b, kvh, rk), a.dv_cols, a.v.s[3], lane);
    }
    const int64_t jb = j / a.block_k;
    for (int64_t g = 0; g < group && first < sq.lq; g++) {
        const int64_t h = kvh * group + g, ph = pattern_h(a, h);
        for (int64_t ib = first / a.block_q; ib < a.nbq; ib++) {
            if (!block_active(a, pb, ph, ib, jb))
                continue;
            const int64_t lo = max(ib * a.block_q, first), hi = min(ib * a.block_q + a.block_q,
                                                                     sq.lq);
            for (int64_t i0 = lo; i0 < hi; i0 += 32) {
                const int64_t i = i0 + lane;
                Grad<C> gr = { 0, 0 };
                if (i < hi) {
                    const int64_t r = sq.q0 + i;
                    const C lse = *lse_at<C>(a, b, h, r);
                    if (lse != -INFINITY) {
                        // pair_grad with the roles of the rows swapped.
                        const C s = dot_row(krow[warp], at<T>(a.q, b, h, r), a.d, a.q.s[3]) *
                                    (C)a.scale;
                        const C p = exp_c(s - lse);
                        const C dp = dot_row(vrow[warp], at<T>(a.dy, b, h, r), a.dv_cols,
                                             a.dy.s[3]);
                        gr = Grad<C>{ p, p * (dp - *rowsum_at<C>(a, b, h, r)) };
                    }
                }
                const int n = (int)min((int64_t)32, hi - i0);
                for (int ii = 0; ii < n; ii++) {
                    const int64_t r = sq.q0 + i0 + ii;
                    axpy_row(acc_v, __shfl_sync(0xFFFFFFFFu, gr.p, ii), at<T>(a.dy, b, h, r),
                             a.dv_cols, a.dy.s[3], lane);
                    axpy_row(acc_k, __shfl_sync(0xFFFFFFFFu, gr.ds, ii), at<T>(a.q, b, h, r),
                             a.d, a.q.s[3], lane);
                }
            }
        }
    }
    store_row(dk, a.d, a.dk.s[3], acc_k, (C)a.scale, lane);
    store_row(dv, a.dv_cols, a.dv.s[3], acc_v, (C)1, lane);
}

// ---- PACKED sequences: the rows no good sequence owns -------------------------

// Whether row r of an axis (offsets off, stride) is NaN: a bad sequence
// claims it (the rows between its offsets, whichever order they are in),
// two claim it, or none does (lib/host/host_attention_sequences.c).
static __device__ bool unowned_row(const Args &a, uint64_t off, int64_t stride, int64_t r)
{
    int found = 0;
    for (int64_t s = 0; s < a.seq_count; s++) {
        const int64_t x = seq_entry(off, stride, s), y = seq_entry(off, stride, s + 1);
        if (r < min(x, y) || r >= max(x, y))
            continue;
        if (found++ || packed_bad(a, s))
            return true;
    }
    return !found;
}

template <typename T>
static __device__ __forceinline__ void fill_rows(const View &v, int64_t heads, int64_t r,
                                                 int64_t cols)
{
    const T nan = Storage<T>::out(quiet_nan());
    for (int64_t e = threadIdx.x; e < heads * cols; e += blockDim.x)
        at<T>(v, 0, e / cols, r)[e % cols * v.s[3]] = nan;
}

// Runs after the sequences' kernels and overwrites what they may have
// written there. With good offsets (non-decreasing from 0 to the axis's
// end) every row belongs to exactly one sequence, so each CTA first reads
// every sequence's offsets (four I32 each, from L2) and returns at once
// where all are good; otherwise thread t decides query row and key row
// first + t, and the CTA fills the NaN rows of every head.
template <typename T> static __device__ void sequences_fixup(const Args &a)
{
    typedef typename Storage<T>::C C;
    constexpr int N = BK_ATTENTION_FIXUP_THREADS;
    __shared__ unsigned char nan_q[N], nan_k[N];
    grid_dependency_wait();
    int bad = a.seq_count == 0;
    for (int64_t s = threadIdx.x; s < a.seq_count && !bad; s += N)
        bad = packed_bad(a, s);
    if (!__syncthreads_or(bad))
        return;
    const bool backward = a.flags & BK_ATTENTION_BACKWARD;
    const int64_t first = (int64_t)blockIdx.x * N, r = first + threadIdx.x;
    nan_q[threadIdx.x] = r < a.lq && unowned_row(a, a.seq_q, a.seq_s[0], r);
    nan_k[threadIdx.x] = backward && r < a.lk && unowned_row(a, a.seq_k, a.seq_s[1], r);
    __syncthreads();
    for (int t = 0; t < N; t++) {
        if (nan_q[t] && !backward) {
            fill_rows<T>(a.y, a.heads, first + t, a.dv_cols);
            for (int64_t h = threadIdx.x; (a.flags & BK_ATTENTION_HAS_LSE) && h < a.heads;
                 h += N)
                *lse_at<C>(a, 0, h, first + t) = quiet_nan();
        }
        if (nan_q[t] && backward)
            fill_rows<T>(a.dq, a.heads, first + t, a.d);
        if (nan_k[t]) {
            fill_rows<T>(a.dk, a.kv_heads, first + t, a.d);
            fill_rows<T>(a.dv, a.kv_heads, first + t, a.dv_cols);
        }
    }
}

} // namespace attention
} // namespace bk

using namespace bk::attention;

// The LIST form scattered into a mask [Bp, Hp, nbq, nbk] (the workspace),
// one CTA per pattern head; a count or index out of range marks the head
// bad, and the kernels then write NaN for it.
extern "C" __global__ void __launch_bounds__(BK_ATTENTION_SCATTER_THREADS)
    bk_attention_scatter(const Args a)
{
    bk::grid_dependency_wait();
    const int64_t pb = blockIdx.x / a.pattern_heads, ph = blockIdx.x % a.pattern_heads;
    unsigned char *mask = (unsigned char *)a.mask.base + pb * a.mask.s[0] + ph * a.mask.s[1];
    const int64_t blocks = a.nbq * a.nbk;
    for (int64_t e = threadIdx.x; e < blocks; e += blockDim.x)
        mask[e] = 0;
    __syncthreads();
    int bad = 0;
    for (int64_t ib = threadIdx.x; ib < a.nbq; ib += blockDim.x) {
        const int32_t count = *((const int32_t *)a.counts.base + pb * a.counts.s[0] +
                                ph * a.counts.s[1] + ib * a.counts.s[2]);
        if (count < 0 || count > a.capacity) {
            bad = 1;
            continue;
        }
        const int32_t *idx = (const int32_t *)a.indices.base + pb * a.indices.s[0] +
                             ph * a.indices.s[1] + ib * a.indices.s[2];
        for (int32_t e = 0; e < count; e++) {
            const int32_t jb = idx[e * a.indices.s[3]];
            if (jb < 0 || jb >= a.nbk)
                bad = 1;
            else
                mask[ib * a.nbk + jb] = 1;
        }
    }
    bad = __syncthreads_or(bad);
    if (threadIdx.x == 0)
        ((unsigned char *)a.bad)[blockIdx.x] = (unsigned char)(bad != 0);
}

// What the Hopper forward's choice between its deep and narrow kernels
// (query blocks of 64 rows, D = 128) rests on: over each pair of
// neighbouring query blocks (a deep CTA's two consumers) and key block, U
// counts the blocks either needs and N those each needs (keys past the
// causal limit not counted). A deep CTA loads a tile of the union for
// both (U / 2 tiles), a narrow CTA only its own blocks but alone (no
// second softmax under its GEMMs but its SM's other CTA's); the narrow
// kernel runs where U > 0.8 N (see forward_choice in
// kernels/attention_wgmma.cu). CTA g sums rows (pattern
// head, pair) g, g + CHOICE_CTAS, ... of the first CHOICE_ENTRIES entries
// (choice_rows), and stores its U and N at words 2 g and 2 g + 1 of the
// choice area (every CTA stores both, so the area needs no clearing).
extern "C" __global__ void __launch_bounds__(BK_ATTENTION_CHOICE_THREADS)
    bk_attention_forward_choice(const Args a)
{
    bk::grid_dependency_wait();
    const int64_t pairs = (a.nbq + 1) / 2, nbk = a.nbk;
    const int64_t row_end = choice_rows(a);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int warps = BK_ATTENTION_CHOICE_THREADS / 32;
    uint32_t u = 0, n = 0;
    // A row's mask bytes are read four steps of 32 key blocks at a time,
    // as loads under a predicate rather than behind branches: the kernel
    // is bound by their latency, and the forward waits for it. (The plan
    // launches it for MASK and LIST patterns only: there is a mask.)
    for (int64_t row = blockIdx.x + (int64_t)BK_ATTENTION_CHOICE_CTAS * warp; row < row_end;
         row += (int64_t)BK_ATTENTION_CHOICE_CTAS * warps) {
        const int64_t pair = row % pairs, hp = row / pairs;
        const int64_t pb = hp / a.pattern_heads, ph = hp % a.pattern_heads;
        const int64_t ib0 = 2 * pair, ib1 = ib0 + 1;
        const int64_t end0 = rows_key_end(a, ib0 * a.block_q, a.block_q);
        const int64_t end1 = rows_key_end(a, ib1 * a.block_q, a.block_q);
        const unsigned char *m0 = mask_row(a, pb, ph, ib0), *m1 = mask_row(a, pb, ph, ib1);
#pragma unroll 4
        for (int64_t jb = lane; jb < nbk; jb += 32) {
            const bool in0 = jb * a.block_k < end0, in1 = jb * a.block_k < end1;
            const unsigned char v0 = in0 ? m0[jb * a.mask.s[3]] : 0;
            const unsigned char v1 = in1 ? m1[jb * a.mask.s[3]] : 0;
            u += (v0 | v1) != 0;
            n += (uint32_t)(v0 != 0) + (uint32_t)(v1 != 0);
        }
    }
    __shared__ uint32_t sums[2];
    if (threadIdx.x == 0)
        sums[0] = sums[1] = 0;
    __syncthreads();
    u = __reduce_add_sync(0xFFFFFFFFu, u);
    n = __reduce_add_sync(0xFFFFFFFFu, n);
    if (lane == 0) {
        atomicAdd(&sums[0], u);
        atomicAdd(&sums[1], n);
    }
    __syncthreads();
    if (threadIdx.x < 2)
        ((uint32_t *)a.choice)[2 * blockIdx.x + threadIdx.x] = sums[threadIdx.x];
}

#define BK_ATTENTION_GENERAL(NAME, T)                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_GENERAL_THREADS, 1)                \
        bk_attention_forward_general_##NAME(const Args a)                                        \
    {                                                                                            \
        forward_row<T>(a);                                                                       \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_GENERAL_THREADS, 1)                \
        bk_attention_rowsum_##NAME(const Args a)                                                 \
    {                                                                                            \
        rowsum_rows<T>(a);                                                                        \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_GENERAL_THREADS, 1)                \
        bk_attention_dq_general_##NAME(const Args a)                                             \
    {                                                                                            \
        dq_row<T>(a);                                                                            \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_GENERAL_THREADS, 1)                \
        bk_attention_dkv_general_##NAME(const Args a)                                            \
    {                                                                                            \
        dkv_row<T>(a);                                                                           \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_FIXUP_THREADS)                     \
        bk_attention_sequences_fixup_##NAME(const Args a)                                        \
    {                                                                                            \
        sequences_fixup<T>(a);                                                                   \
    }

BK_ATTENTION_GENERAL(f16, __half)
BK_ATTENTION_GENERAL(bf16, __nv_bfloat16)
BK_ATTENTION_GENERAL(f32, float)
BK_ATTENTION_GENERAL(f64, double)
