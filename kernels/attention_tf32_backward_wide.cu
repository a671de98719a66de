// SPDX-License-Identifier: Apache-2.0
// The F32 attention backward on tensor cores (3xTF32:
// kernels/attention_tf32.cuh) at widths 160, 192 and 256 (DK = DV, and
// DK = 192 with DV = 128): D and Dv from 129 to 256. As at the narrower
// widths (kernels/attention_tf32_backward.cu), dk/dv owns 64 keys and
// walks the query tiles that see them, dq owns 64 queries and walks their
// key tiles, each the only writer of its outputs; but two stages of the
// walked tiles would not fit (196 KiB a tile pair at width 192), so each
// walked operand has one tile of ROWS rows (BK_ATTENTION_TF32_WALK_ROWS:
// 64, and at width 256 32, each 64-row tile of the walk taken in two
// steps), refilled as soon as every warp is done with it, in the order the
// next step needs them:
// - dq: dP = dY V^T first, then V's next tile loads under S = Q K^T, P,
//   dS and dQ += dS K; K's next tile under the next dP;
// - dk/dv: dP^T = V dY^T, P^T = exp(K Q^T - lse), dS^T, dV += P^T dY,
//   then dY's next tile (and its lse and rowsum) loads under dK += dS^T Q;
//   Q's next tile under the next dP^T.
// dk/dv has 8 warps, two per 16 keys, each owning half of the columns of
// dK and dV (16 x 128 F32 each at most); both compute the 16 keys' P^T and
// dS^T in full, as the F16 and BF16 kernels past width 128 do.
#include "attention_tf32.cuh"
#include "attention_mma_backward.cuh"

namespace bk {
namespace attention {

template <int DK, int DV, bool SEQ> static __device__ void dkv_tile_f32_wide(const Args &a)
{
    constexpr int SPLIT = BK_ATTENTION_TF32_DKV_SPLIT(DK, DV), NTHREADS = THREADS * SPLIT;
    constexpr int ROWS = BK_ATTENTION_TF32_WALK_ROWS(DK, DV), STEPS = TILE / ROWS;
    constexpr int CK = DK / SPLIT, CV = DV / SPLIT, NT = ROWS / 8;
    constexpr int TK = FTile<DK>::BYTES, TV = FTile<DV>::BYTES;
    constexpr int WK = ROWS * FTile<DK>::ROW_FLOATS * 4, WV = ROWS * FTile<DV>::ROW_FLOATS * 4;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t k_s = smem, v_s = smem + TK, q_s = v_s + TV, dy_s = q_s + WK;
    float *lse = (float *)(smem_bytes + TK + TV + WK + WV), *rowsum = lse + TILE;
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk_cols = (int)a.d, dv_cols = (int)a.dv_cols;

    grid_dependency_wait();
    const int lane = threadIdx.x % 32, q4 = lane % 4;
    const int warp = (int)(threadIdx.x / 32) % 4, part = (int)(threadIdx.x / 32) / 4;
    const int k0 = (int)blockIdx.x * TILE, kvh = blockIdx.y;
    const Seq sq = grid_sequence<SEQ>(a, blockIdx.z);
    const int b = (int)sq.b, q0s = (int)sq.q0, k0s = (int)sq.k0, pb = (int)sq.pb;
    const int lq = (int)sq.lq, lk = (int)sq.lk, k_out = (int)sq.k_out;
    if (k0s + k0 >= k_out)
        return;
    const int group = (int)(a.heads / a.kv_heads);
    const int jb = k0 / (int)a.block_k;
    const bool bad = sq.bad || group_bad_pb(a, pb, kvh);
    const int first = (int)query_begin(a, sq, k0);
    const int krow_a = k0 + warp * 16 + lane / 4, krow_b = krow_a + 8;
    const int meet_a = krow_a < lk ? (int)query_begin(a, sq, krow_a) : lq;
    const int meet_b = krow_b < lk ? (int)query_begin(a, sq, krow_b) : lq;
    const bool ragged = k0 + TILE > lk;

    float dk[CK / 8][4], dv[CV / 8][4];
    zero(dk);
    zero(dv);
    // Step s of query tile t of query head slot g: queries t 64 + s ROWS ..
    int g = 0, t = first / TILE, s = 0;
    bool more = !bad && k0 < lk && first < lq &&
                next_query_tile(a, pb, lq, kvh, group, jb, first, g, t);
    // Copy groups, in order: {K, V, dY(t)}, {Q(t)}, then per step
    // {dY(next)}, {Q(next)}; lse and rowsum are stored by the threads.
    if (more) {
        load_tile<float, DK, NTHREADS>(k_s, a.k, b, kvh, k0s + k0, k0s + lk, dk_cols, vec);
        load_tile<float, DV, NTHREADS>(v_s, a.v, b, kvh, k0s + k0, k0s + lk, dv_cols, vec);
        load_tile<float, DV, NTHREADS, ROWS>(dy_s, a.dy, b, kvh * group + g, q0s + t * TILE,
                                             q0s + lq, dv_cols, vec);
        load_row_stats(a, lse, rowsum, b, q0s, lq, kvh * group + g, t * TILE);
    }
    cp_async_commit();
    if (more)
        load_tile<float, DK, NTHREADS, ROWS>(q_s, a.q, b, kvh * group + g, q0s + t * TILE,
                                             q0s + lq, dk_cols, vec);
    cp_async_commit();
    const float sl2 = (float)a.scale * LOG2E;
    while (more) {
        int ng = g, nt = t, ns = s + 1;
        bool next = true;
        if (ns == STEPS) {
            ns = 0, nt = t + 1;
            next = next_query_tile(a, pb, lq, kvh, group, jb, first, ng, nt);
        }
        const int q0 = t * TILE + s * ROWS, nq0 = nt * TILE + ns * ROWS;
        const bool diagonal = ragged || ((a.flags & BK_ATTENTION_CAUSAL) &&
                                         q0 < k0 + TILE - 1 - (lk - lq));
        cp_async_wait<1>(); // dY(t) and its row statistics
        __syncthreads();
        // dP^T = V dY^T for 16 keys x ROWS queries.
        float ds[NT][4];
        zero(ds);
        mma_abt_f32<DV, NT>(ds, v_s, warp * 16, dy_s, 0, lane);
        cp_async_wait<0>(); // Q(t)
        __syncthreads();
        // P^T = exp(S^T - lse), S^T = K Q^T.
        float p[NT][4];
        zero(p);
        mma_abt_f32<DK, NT>(p, k_s, warp * 16, q_s, 0, lane);
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int col = n * 8 + 2 * q4 + (e & 1);
                float v = exp2f(p[n][e] * sl2 - lse[col]);
                if (diagonal && q0 + col < (e < 2 ? meet_a : meet_b))
                    v = 0.f;
                p[n][e] = v;
                // dS^T = P^T (dP^T - rowsum); 0 where P is (a NaN row sum
                // of a row two PACKED sequences claim adds nothing).
                ds[n][e] = v == 0.f ? 0.f : v * (ds[n][e] - rowsum[col]);
            }
        }
        mma_pb_f32<DV, NT, CV>(dv, p, dy_s, 0, part * CV, lane);
        __syncthreads(); // every warp is done with dY(t) and the statistics
        if (next) {
            const int h = kvh * group + ng;
            load_tile<float, DV, NTHREADS, ROWS>(dy_s, a.dy, b, h, q0s + nq0, q0s + lq, dv_cols,
                                                 vec);
            load_row_stats(a, lse, rowsum, b, q0s, lq, h, nq0);
        }
        cp_async_commit();
        mma_pb_f32<DK, NT, CK>(dk, ds, q_s, 0, part * CK, lane);
        __syncthreads(); // every warp is done with Q(t)
        if (next)
            load_tile<float, DK, NTHREADS, ROWS>(q_s, a.q, b, kvh * group + ng, q0s + nq0,
                                                 q0s + lq, dk_cols, vec);
        cp_async_commit();
        more = next;
        g = ng;
        t = nt;
        s = ns;
    }
    cp_async_wait<0>();
    const float nan = quiet_nan();
    const float fk = bad ? nan : (float)a.scale, fv = bad ? nan : 1.f;
    store_cols<float, CK>(a.dk, b, kvh, k0s + k0 + warp * 16, k_out, dk, part * CK, dk_cols, fk, fk,
                          lane, vec);
    store_cols<float, CV>(a.dv, b, kvh, k0s + k0 + warp * 16, k_out, dv, part * CV, dv_cols, fv, fv,
                          lane, vec);
}

// dq in two halves of 4 warps (BK_ATTENTION_TF32_DQ_HALVES), each taking
// half of every step's keys, summed at the end (halves_sum).
template <int DK, int DV, bool SEQ> static __device__ void dq_tile_f32_wide(const Args &a)
{
    constexpr int ROWS = BK_ATTENTION_TF32_WALK_ROWS(DK, DV), STEPS = TILE / ROWS;
    constexpr int HALVES = BK_ATTENTION_TF32_DQ_HALVES(DK, DV), NTHREADS = THREADS * HALVES;
    constexpr int NT = ROWS / 8 / HALVES; // n-tiles of a half's keys
    constexpr int TK = FTile<DK>::BYTES, TV = FTile<DV>::BYTES;
    constexpr int WK = ROWS * FTile<DK>::ROW_FLOATS * 4;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t q_s = smem, dy_s = smem + TK, k_s = dy_s + TV, v_s = k_s + WK;
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk_cols = (int)a.d, dv_cols = (int)a.dv_cols;

    grid_dependency_wait();
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32, q4 = lane % 4;
    const int kh = (int)(threadIdx.x / THREADS) * (ROWS / HALVES); // this half's first key
    const int64_t r0 = (int64_t)blockIdx.x * TILE, h = blockIdx.y;
    const Seq sq = grid_sequence<SEQ>(a, blockIdx.z);
    const int b = (int)sq.b, q0s = (int)sq.q0, k0s = (int)sq.k0;
    const int lq = (int)sq.lq, lk = (int)sq.lk, q_out = (int)sq.q_out;
    if (q0s + r0 >= q_out)
        return;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    const int64_t pb = sq.pb, ph = pattern_h(a, h), ib = r0 / a.block_q;
    // Keys and rows fit in int: the plan takes this path for Lq, Lk < 2^31.
    const int end = (int)rows_key_end(a, sq, r0, TILE);
    const bool bad = sq.bad || pattern_bad(a, pb, ph);
    const int row_a = (int)r0 + warp * 16 + lane / 4, row_b = row_a + 8;
    float lse2[2], rsum[2];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int i = half ? row_b : row_a;
        const float2 st = i < lq ? backward_row_stats(a, b, h, q0s + i)
                                 : make_float2(INFINITY, 0.f);
        lse2[half] = st.x;
        rsum[half] = st.y;
    }
    const int end_a = (int)key_end(a, sq, row_a), end_b = (int)key_end(a, sq, row_b);

    float dq[DK / 8][4];
    zero(dq);
    // Copy groups, in order: {Q, dY, V(t)}, {K(t)}, then per step
    // {V(next)}, {K(next)}. Step s of key tile t: keys t 64 + s ROWS ..
    int t = bad ? -1 : (int)next_key_tile(a, pb, ph, ib, 0, end), s = 0;
    if (t >= 0) {
        load_tile<float, DK, NTHREADS>(q_s, a.q, b, h, q0s + r0, q0s + lq, dk_cols, vec);
        load_tile<float, DV, NTHREADS>(dy_s, a.dy, b, h, q0s + r0, q0s + lq, dv_cols, vec);
        load_tile<float, DV, NTHREADS, ROWS>(v_s, a.v, b, kvh, k0s + t * TILE, k0s + lk, dv_cols,
                                             vec);
    }
    cp_async_commit();
    if (t >= 0)
        load_tile<float, DK, NTHREADS, ROWS>(k_s, a.k, b, kvh, k0s + t * TILE, k0s + lk, dk_cols,
                                             vec);
    cp_async_commit();
    const float sl2 = (float)a.scale * LOG2E;
    while (t >= 0) {
        int next = t, ns = s + 1;
        if (ns == STEPS)
            ns = 0, next = (int)next_key_tile(a, pb, ph, ib, t + 1, end);
        const int k0 = t * TILE + s * ROWS, nk0 = next * TILE + ns * ROWS;
        const bool edge = k0 + ROWS > key_end(a, sq, r0);
        cp_async_wait<1>(); // V(t) (and Q, dY)
        __syncthreads();
        // dP = dY V^T for 16 rows x ROWS keys.
        float ds[NT][4];
        zero(ds);
        mma_abt_f32<DV, NT>(ds, dy_s, warp * 16, v_s, kh, lane);
        __syncthreads(); // every warp is done with V(t)
        if (next >= 0)
            load_tile<float, DV, NTHREADS, ROWS>(v_s, a.v, b, kvh, k0s + nk0, k0s + lk, dv_cols,
                                                 vec);
        cp_async_commit();
        cp_async_wait<1>(); // K(t)
        __syncthreads();
        float p[NT][4];
        zero(p);
        mma_abt_f32<DK, NT>(p, q_s, warp * 16, k_s, kh, lane);
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int half = e / 2;
                float v = exp2f(p[n][e] * sl2 - lse2[half]);
                if (edge && k0 + kh + n * 8 + 2 * q4 + (e & 1) >= (half ? end_b : end_a))
                    v = 0.f;
                ds[n][e] = v * (ds[n][e] - rsum[half]);
            }
        }
        mma_pb_f32<DK, NT, DK>(dq, ds, k_s, kh, 0, lane);
        __syncthreads(); // every warp is done with K(t)
        if (next >= 0)
            load_tile<float, DK, NTHREADS, ROWS>(k_s, a.k, b, kvh, k0s + nk0, k0s + lk, dk_cols,
                                                 vec);
        cp_async_commit();
        t = next;
        s = ns;
    }
    cp_async_wait<0>();
    if (HALVES > 1 && !halves_sum(smem, dq))
        return;
    const float f = bad ? quiet_nan() : (float)a.scale;
    store_cols<float, DK>(a.dq, b, h, q0s + r0 + warp * 16, q_out, dq, 0, dk_cols, f, f, lane, vec);
}

} // namespace attention
} // namespace bk

// The F32 backward kernels at widths DK, DV past 128 (the names of the
// narrower ones); _seq: for plans with sequences of their own lengths.
#define BK_ATTENTION_TF32_BACKWARD_WIDE_KERNELS(DK, DV, SEQ, TAG)                                \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS *                    \
                                                     BK_ATTENTION_TF32_DKV_SPLIT(DK, DV),      \
                                                 1)                                            \
        bk_attention_dkv_mma##TAG##_f32_d##DK##_v##DV(const bk::attention::Args a)               \
    {                                                                                            \
        bk::attention::dkv_tile_f32_wide<DK, DV, SEQ>(a);                                        \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(                                                \
        BK_ATTENTION_MMA_THREADS * BK_ATTENTION_TF32_DQ_HALVES(DK, DV), 1)                       \
        bk_attention_dq_mma##TAG##_f32_d##DK##_v##DV(const bk::attention::Args a)                \
    {                                                                                            \
        bk::attention::dq_tile_f32_wide<DK, DV, SEQ>(a);                                         \
    }
#define BK_ATTENTION_TF32_BACKWARD_WIDE(DK, DV)                                                  \
    BK_ATTENTION_TF32_BACKWARD_WIDE_KERNELS(DK, DV, false, )                                     \
    BK_ATTENTION_TF32_BACKWARD_WIDE_KERNELS(DK, DV, true, _seq)

BK_ATTENTION_TF32_BACKWARD_WIDE(160, 160)
BK_ATTENTION_TF32_BACKWARD_WIDE(192, 192)
BK_ATTENTION_TF32_BACKWARD_WIDE(256, 256)
BK_ATTENTION_TF32_BACKWARD_WIDE(192, 128)
