// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention backward on tensor cores (mma.sync m16n8k16):
// F16 and BF16, D = Dv = 64 or 128, blocks that are multiples of 64, unit
// column strides and 16-byte rows; the row sums rowsum(dy * y) come from
// kernels/attention_general.cu's kernel, launched first.
//
// Two kernels, each the only writer of its outputs, so the result is
// deterministic without atomics:
// - dk/dv: a CTA owns 64 keys of one (batch, kv head), 16 per warp, and
//   walks the 64-query tiles of every query head of its group that see
//   its key block (the pattern read by column), Q and dY through a
//   double-buffered cp.async ring: S^T = K Q^T, P^T = exp(S^T - lse),
//   dP^T = V dY^T, dS^T = P^T (dP^T - rowsum), dV += P^T dY, dK += dS^T Q;
// - dq: a CTA owns 64 queries of one (batch, head), walks the key tiles
//   as the forward does: S = Q K^T, P, dP = dY V^T, dS, dQ += dS K.
// A fragments are read from shared memory at each k-step (holding them in
// registers beside two 16 x 128 F32 accumulators would spill).
#include "attention_mma.cuh"

namespace bk {
namespace attention {

// Queries (dk/dv) or keys (dq) per step of a tile: few enough that the
// accumulators of 16 x DH stay in registers beside P and dS.
constexpr int SUB = 32;
constexpr int NS = SUB / 8; // its n-tiles

// The next query tile at or after tile t (of query head slot g in the
// group) whose query block sees key block jb and whose rows reach
// `first` (the causal start); advances g past exhausted heads. Returns
// false at the end.
static __device__ __forceinline__ bool next_query_tile(const Args &a, int64_t pb, int64_t kvh,
                                                       int group, int64_t jb, int first, int &g,
                                                       int &t)
{
    const int per_block = (int)(a.block_q / TILE), tiles = (int)((a.lq + TILE - 1) / TILE);
    for (; g < group; g++, t = first / TILE) {
        const int64_t ph = pattern_h(a, kvh * group + g);
        for (; t < tiles; t += 32) { // whole warps: 32 tiles per step
            const int mine = t + (int)(threadIdx.x % 32);
            const bool hit = mine < tiles && block_active(a, pb, ph, mine / per_block, jb);
            const unsigned hits = __ballot_sync(0xFFFFFFFFu, hit);
            if (hits) {
                t += __ffs(hits) - 1;
                return true;
            }
        }
    }
    return false;
}

// lse (as +inf where the query sees nothing or lies past Lq, so that P
// is 0) and rowsum of 64 queries into shared memory: threads 0..63 and
// 64..127.
static __device__ __forceinline__ void load_row_stats(const Args &a, float *lse_s, float *sum_s,
                                                      int64_t b, int64_t h, int64_t q0)
{
    const int e = threadIdx.x % TILE;
    const int64_t i = q0 + e;
    if (threadIdx.x < TILE) {
        float l = INFINITY;
        if (i < a.lq) {
            l = lse_base2(*lse_at<const float>(a, b, h, i));
        }
        lse_s[e] = l;
    } else {
        sum_s[e] = i < a.lq ? *((const float *)a.rowsum + (b * a.heads + h) * a.lq + i) : 0.f;
    }
}

template <typename T, int DH> static __device__ void dkv_tile(const Args &a)
{
    constexpr int NT_O = DH / 8, TB = SwizzledTile<DH>::BYTES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t k_s = smem, v_s = smem + TB, q_s = smem + 2 * TB, dy_s = smem + 4 * TB;
    float *stats = (float *)(smem_bytes + 6 * TB); // [2 stages][lse 64, rowsum 64]

    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, q4 = lane % 4;
    // Row and tile numbers fit in int: the plan takes this path for Lq, Lk < 2^31.
    const int k0 = (int)blockIdx.x * TILE, kvh = blockIdx.y, b = blockIdx.z;
    const int group = (int)(a.heads / a.kv_heads), pb = (int)pattern_b(a, b);
    const int jb = k0 / (int)a.block_k;
    const bool bad = group_bad(a, b, kvh);
    // Queries before `first` see none of the tile's keys (causal).
    const int first = (int)query_begin(a, k0);
    const int krow_a = k0 + warp * 16 + lane / 4, krow_b = krow_a + 8;

    float dk[NT_O][4], dv[NT_O][4];
    zero(dk);
    zero(dv);
    int g = 0, t = first / TILE;
    bool more = !bad && next_query_tile(a, pb, kvh, group, jb, first, g, t);
    if (more) {
        load_tile<T, DH>(k_s, a.k, b, kvh, k0, a.lk);
        load_tile<T, DH>(v_s, a.v, b, kvh, k0, a.lk);
        load_tile<T, DH>(q_s, a.q, b, kvh * group + g, t * TILE, a.lq);
        load_tile<T, DH>(dy_s, a.dy, b, kvh * group + g, t * TILE, a.lq);
        load_row_stats(a, stats, stats + TILE, b, kvh * group + g, t * TILE);
    }
    cp_async_commit();
    const float sl2 = (float)a.scale * LOG2E;
    for (int stage = 0; more; stage ^= 1) {
        int ng = g, nt = t + 1;
        const bool next = next_query_tile(a, pb, kvh, group, jb, first, ng, nt);
        if (next) {
            const int h = kvh * group + ng;
            load_tile<T, DH>(q_s + (stage ^ 1) * TB, a.q, b, h, nt * TILE, a.lq);
            load_tile<T, DH>(dy_s + (stage ^ 1) * TB, a.dy, b, h, nt * TILE, a.lq);
            float *st = stats + (stage ^ 1) * 2 * TILE;
            load_row_stats(a, st, st + TILE, b, h, nt * TILE);
        }
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        const uint32_t qs = q_s + stage * TB, dys = dy_s + stage * TB;
        const float *lse = stats + stage * 2 * TILE, *rowsum = lse + TILE;
        const int q0 = t * TILE;

        const bool diagonal = (a.flags & BK_ATTENTION_CAUSAL) &&
                              q0 < query_begin(a, k0 + TILE - 1);
#pragma unroll 1
        for (int c0 = 0; c0 < TILE; c0 += SUB) {
            // P^T = exp(S^T - lse) for 16 keys x SUB queries.
            float p[NS][4];
            zero(p);
            mma_abt<T, DH, NS>(p, [&](int kk, uint32_t (&af)[4]) {
                load_a<DH>(af, k_s, warp * 16, kk, lane);
            }, qs, c0, lane);
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int col = c0 + n * 8 + 2 * q4 + (e & 1);
                    float v = exp2f(p[n][e] * sl2 - lse[col]);
                    if (diagonal && q0 + col < query_begin(a, e < 2 ? krow_a : krow_b))
                        v = 0.f;
                    p[n][e] = v;
                }
            }
            // dP^T = V dY^T, then dS^T = P^T (dP^T - rowsum).
            float ds[NS][4];
            zero(ds);
            mma_abt<T, DH, NS>(ds, [&](int kk, uint32_t (&af)[4]) {
                load_a<DH>(af, v_s, warp * 16, kk, lane);
            }, dys, c0, lane);
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ds[n][e] = p[n][e] * (ds[n][e] - rowsum[c0 + n * 8 + 2 * q4 + (e & 1)]);
            }
            mma_pb<T, DH, NS>(dv, p, dys, c0, lane);
            mma_pb<T, DH, NS>(dk, ds, qs, c0, lane);
        }
        __syncthreads(); // this stage's buffers are refilled two tiles on
        more = next;
        g = ng;
        t = nt;
    }
    cp_async_wait<0>();
    const float nan = quiet_nan();
    store_rows<T, DH>(a.dk, b, kvh, k0 + warp * 16, a.lk, dk, bad ? nan : (float)a.scale,
                      bad ? nan : (float)a.scale, lane);
    store_rows<T, DH>(a.dv, b, kvh, k0 + warp * 16, a.lk, dv, bad ? nan : 1.f, bad ? nan : 1.f,
                      lane);
}

template <typename T, int DH> static __device__ void dq_tile(const Args &a)
{
    constexpr int NT_O = DH / 8, TB = SwizzledTile<DH>::BYTES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t q_s = smem, dy_s = smem + TB, k_s = smem + 2 * TB, v_s = smem + 4 * TB;

    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, q4 = lane % 4;
    const int64_t r0 = (int64_t)blockIdx.x * TILE, h = blockIdx.y, b = blockIdx.z;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    const int64_t pb = pattern_b(a, b), ph = pattern_h(a, h), ib = r0 / a.block_q;
    const int64_t end = key_end(a, min(r0 + TILE, a.lq) - 1);
    const bool bad = pattern_bad(a, pb, ph);
    const int64_t row_a = r0 + warp * 16 + lane / 4, row_b = row_a + 8;
    // This thread's rows: lse in base 2 (+inf: P = 0) and rowsum.
    float lse2[2], rsum[2];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const float2 st = backward_row_stats(a, b, h, half ? row_b : row_a);
        lse2[half] = st.x;
        rsum[half] = st.y;
    }

    float dq[NT_O][4];
    zero(dq);
    int64_t t = bad ? -1 : next_key_tile(a, pb, ph, ib, 0, end);
    if (t >= 0) {
        load_tile<T, DH>(q_s, a.q, b, h, r0, a.lq);
        load_tile<T, DH>(dy_s, a.dy, b, h, r0, a.lq);
        load_tile<T, DH>(k_s, a.k, b, kvh, t * TILE, a.lk);
        load_tile<T, DH>(v_s, a.v, b, kvh, t * TILE, a.lk);
    }
    cp_async_commit();
    const float sl2 = (float)a.scale * LOG2E;
    for (int stage = 0; t >= 0; stage ^= 1) {
        const int64_t next = next_key_tile(a, pb, ph, ib, t + 1, end);
        if (next >= 0) {
            load_tile<T, DH>(k_s + (stage ^ 1) * TB, a.k, b, kvh, next * TILE, a.lk);
            load_tile<T, DH>(v_s + (stage ^ 1) * TB, a.v, b, kvh, next * TILE, a.lk);
        }
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        const uint32_t ks = k_s + stage * TB, vs = v_s + stage * TB;
        const int64_t k0 = t * TILE;

        const bool edge = k0 + TILE > key_end(a, r0);
        const int64_t end_a = key_end(a, row_a), end_b = key_end(a, row_b);
#pragma unroll 1
        for (int c0 = 0; c0 < TILE; c0 += SUB) {
            float p[NS][4];
            zero(p);
            mma_abt<T, DH, NS>(p, [&](int kk, uint32_t (&af)[4]) {
                load_a<DH>(af, q_s, warp * 16, kk, lane);
            }, ks, c0, lane);
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int half = e / 2;
                    float v = exp2f(p[n][e] * sl2 - lse2[half]);
                    if (edge && k0 + c0 + n * 8 + 2 * q4 + (e & 1) >= (half ? end_b : end_a))
                        v = 0.f;
                    p[n][e] = v;
                }
            }
            float ds[NS][4];
            zero(ds);
            mma_abt<T, DH, NS>(ds, [&](int kk, uint32_t (&af)[4]) {
                load_a<DH>(af, dy_s, warp * 16, kk, lane);
            }, vs, c0, lane);
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ds[n][e] = p[n][e] * (ds[n][e] - rsum[e / 2]);
            }
            mma_pb<T, DH, NS>(dq, ds, ks, c0, lane);
        }
        __syncthreads();
        t = next;
    }
    cp_async_wait<0>();
    const float f = bad ? quiet_nan() : (float)a.scale;
    store_rows<T, DH>(a.dq, b, h, r0 + warp * 16, a.lq, dq, f, f, lane);
}

} // namespace attention
} // namespace bk

using namespace bk::attention;

#define BK_ATTENTION_MMA_BACKWARD(NAME, T, DH)                                                   \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS, 1)                  \
        bk_attention_dkv_mma_##NAME##_d##DH(const Args a)                                        \
    {                                                                                            \
        dkv_tile<T, DH>(a);                                                                      \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS, 1)                  \
        bk_attention_dq_mma_##NAME##_d##DH(const Args a)                                         \
    {                                                                                            \
        dq_tile<T, DH>(a);                                                                       \
    }

BK_ATTENTION_MMA_BACKWARD(f16, __half, 64)
BK_ATTENTION_MMA_BACKWARD(f16, __half, 128)
BK_ATTENTION_MMA_BACKWARD(bf16, __nv_bfloat16, 64)
BK_ATTENTION_MMA_BACKWARD(bf16, __nv_bfloat16, 128)
