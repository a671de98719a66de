// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention backward for F32 on tensor cores (3xTF32 on
// mma.sync m16n8k8: kernels/attention_tf32.cuh), any D and Dv from 1 to
// 128 at the compiled widths of BK_ATTENTION_MMA_WIDTH, blocks that are
// multiples of 64; the row sums rowsum(dy * y) come from
// kernels/attention_general.cu's kernel, launched first.
//
// The kernels of F16 and BF16 (kernels/attention_mma_backward.cuh) on F32
// tiles, each product three TF32 ones: dk/dv owns 64 keys of a (batch, kv
// head) and walks the query tiles that see them (S^T = K Q^T, P^T, dP^T
// = V dY^T, dS^T, dV += P^T dY, dK += dS^T Q); dq owns 64 queries and
// walks their key tiles (S, P, dP = dY V^T, dS, dQ += dS K). Both hold
// their operands' next tiles in a second stage (six tiles: 198 KiB at
// width 128); kernels/attention_tf32_backward_wide.cu holds the wider
// ones.
#include "attention_tf32.cuh"
#include "attention_mma_backward.cuh"

namespace bk {
namespace attention {

template <int DK, int DV, bool SEQ> static __device__ void dkv_tile_f32(const Args &a)
{
    // One warp a 16 keys (widths up to 128: dK and dV of 16 x 128 F32 fit).
    constexpr int SPLIT = 1, NTHREADS = THREADS * SPLIT, CK = DK / SPLIT, CV = DV / SPLIT;
    static_assert(!BK_ATTENTION_MMA_WIDE(DK, DV), "widths up to 128");
    constexpr int TK = FTile<DK>::BYTES, TV = FTile<DV>::BYTES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t k_s = smem, v_s = smem + TK, q_s = v_s + TV, dy_s = q_s + 2 * TK;
    float *stats = (float *)(smem_bytes + 3 * (TK + TV)); // [2 stages][lse 64, rowsum 64]
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk_cols = (int)a.d, dv_cols = (int)a.dv_cols;

    grid_dependency_wait();
    const int lane = threadIdx.x % 32, q4 = lane % 4;
    const int warp = (int)(threadIdx.x / 32) % 4, part = (int)(threadIdx.x / 32) / 4;
    // Row and tile numbers fit in int: the plan takes this path for Lq, Lk < 2^31.
    // Keys and queries are the sequence's (sequence()), from its rows
    // k0s and q0s of the tensors.
    const int k0 = (int)blockIdx.x * TILE, kvh = blockIdx.y;
    const Seq sq = grid_sequence<SEQ>(a, blockIdx.z);
    const int b = (int)sq.b, q0s = (int)sq.q0, k0s = (int)sq.k0, pb = (int)sq.pb;
    const int lq = (int)sq.lq, lk = (int)sq.lk, k_out = (int)sq.k_out;
    if (k0s + k0 >= k_out)
        return;
    const int group = (int)(a.heads / a.kv_heads);
    const int jb = k0 / (int)a.block_k;
    const bool bad = sq.bad || group_bad_pb(a, pb, kvh);
    // Queries before `first` see none of the tile's keys (causal).
    const int first = (int)query_begin(a, sq, k0);
    const int krow_a = k0 + warp * 16 + lane / 4, krow_b = krow_a + 8;
    // The first query each of this thread's two keys meets: none for keys
    // past lk (PADDED: their dk and dv are 0); the tile masks them where
    // it holds such keys or meets the causal diagonal.
    const int meet_a = krow_a < lk ? (int)query_begin(a, sq, krow_a) : lq;
    const int meet_b = krow_b < lk ? (int)query_begin(a, sq, krow_b) : lq;
    const bool ragged = k0 + TILE > lk;

    float dk[CK / 8][4], dv[CV / 8][4];
    zero(dk);
    zero(dv);
    int g = 0, t = first / TILE;
    bool more = !bad && k0 < lk && first < lq &&
                next_query_tile(a, pb, lq, kvh, group, jb, first, g, t);
    if (more) {
        load_tile_f32<DK, NTHREADS>(k_s, a.k, b, kvh, k0s + k0, k0s + lk, dk_cols, vec);
        load_tile_f32<DV, NTHREADS>(v_s, a.v, b, kvh, k0s + k0, k0s + lk, dv_cols, vec);
        load_tile_f32<DK, NTHREADS>(q_s, a.q, b, kvh * group + g, q0s + t * TILE, q0s + lq,
                                   dk_cols, vec);
        load_tile_f32<DV, NTHREADS>(dy_s, a.dy, b, kvh * group + g, q0s + t * TILE, q0s + lq,
                                   dv_cols, vec);
        load_row_stats(a, stats, stats + TILE, b, q0s, lq, kvh * group + g, t * TILE);
    }
    cp_async_commit();
    const float sl2 = (float)a.scale * LOG2E;
    for (int stage = 0; more; stage ^= 1) {
        int ng = g, nt = t + 1;
        const bool next = next_query_tile(a, pb, lq, kvh, group, jb, first, ng, nt);
        if (next) {
            const int h = kvh * group + ng;
            load_tile_f32<DK, NTHREADS>(q_s + (stage ^ 1) * TK, a.q, b, h, q0s + nt * TILE,
                                       q0s + lq, dk_cols, vec);
            load_tile_f32<DV, NTHREADS>(dy_s + (stage ^ 1) * TV, a.dy, b, h, q0s + nt * TILE,
                                       q0s + lq, dv_cols, vec);
            float *st = stats + (stage ^ 1) * 2 * TILE;
            load_row_stats(a, st, st + TILE, b, q0s, lq, h, nt * TILE);
        }
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        const uint32_t qs = q_s + stage * TK, dys = dy_s + stage * TV;
        const float *lse = stats + stage * 2 * TILE, *rowsum = lse + TILE;
        const int q0 = t * TILE;

        const bool diagonal = ragged || ((a.flags & BK_ATTENTION_CAUSAL) &&
                                         q0 < k0 + TILE - 1 - (lk - lq));
#pragma unroll 1
        for (int c0 = 0; c0 < TILE; c0 += SUB) {
            // P^T = exp(S^T - lse) for 16 keys x SUB queries.
            float p[NS][4];
            zero(p);
            mma_abt_f32<DK, NS>(p, k_s, warp * 16, qs, c0, lane);
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int col = c0 + n * 8 + 2 * q4 + (e & 1);
                    float v = exp2f(p[n][e] * sl2 - lse[col]);
                    if (diagonal && q0 + col < (e < 2 ? meet_a : meet_b))
                        v = 0.f;
                    p[n][e] = v;
                }
            }
            // dP^T = V dY^T, then dS^T = P^T (dP^T - rowsum).
            float ds[NS][4];
            zero(ds);
            mma_abt_f32<DV, NS>(ds, v_s, warp * 16, dys, c0, lane);
            // A query that does not see the key (P = 0) adds nothing to its
            // dk, even where its row sum is NaN (a row two PACKED sequences
            // claim, which the forward left NaN): 0 x NaN would.
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ds[n][e] = p[n][e] == 0.f ? 0.f
                                              : p[n][e] * (ds[n][e] -
                                                           rowsum[c0 + n * 8 + 2 * q4 + (e & 1)]);
            }
            mma_pb_f32<DV, NS, CV>(dv, p, dys, c0, part * CV, lane);
            mma_pb_f32<DK, NS, CK>(dk, ds, qs, c0, part * CK, lane);
        }
        __syncthreads(); // this stage's buffers are refilled two tiles on
        more = next;
        g = ng;
        t = nt;
    }
    cp_async_wait<0>();
    const float nan = quiet_nan();
    const float fk = bad ? nan : (float)a.scale, fv = bad ? nan : 1.f;
    store_cols_f32<CK>(a.dk, b, kvh, k0s + k0 + warp * 16, k_out, dk, part * CK, dk_cols, fk, fk,
                      lane, vec);
    store_cols_f32<CV>(a.dv, b, kvh, k0s + k0 + warp * 16, k_out, dv, part * CV, dv_cols, fv, fv,
                      lane, vec);
}

template <int DK, int DV, bool SEQ> static __device__ void dq_tile_f32(const Args &a)
{
    constexpr int TK = FTile<DK>::BYTES, TV = FTile<DV>::BYTES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t q_s = smem, dy_s = smem + TK, k_s = dy_s + TV, v_s = k_s + 2 * TK;
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk_cols = (int)a.d, dv_cols = (int)a.dv_cols;

    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, q4 = lane % 4;
    // Rows and keys are the sequence's (sequence()), from its rows q0s
    // and k0s of the tensors.
    const int64_t r0 = (int64_t)blockIdx.x * TILE, h = blockIdx.y;
    const Seq sq = grid_sequence<SEQ>(a, blockIdx.z);
    const int b = (int)sq.b, q0s = (int)sq.q0, k0s = (int)sq.k0;
    const int lq = (int)sq.lq, lk = (int)sq.lk, q_out = (int)sq.q_out;
    if (q0s + r0 >= q_out)
        return;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    const int64_t pb = sq.pb, ph = pattern_h(a, h), ib = r0 / a.block_q;
    const int64_t end = rows_key_end(a, sq, r0, TILE);
    const bool bad = sq.bad || pattern_bad(a, pb, ph);
    const int64_t row_a = r0 + warp * 16 + lane / 4, row_b = row_a + 8;
    // This thread's rows: lse in base 2 (+inf: P = 0, past lq too) and
    // rowsum.
    float lse2[2], rsum[2];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int64_t i = half ? row_b : row_a;
        const float2 st = i < lq ? backward_row_stats(a, b, h, q0s + i)
                                 : make_float2(INFINITY, 0.f);
        lse2[half] = st.x;
        rsum[half] = st.y;
    }

    float dq[DK / 8][4];
    zero(dq);
    int64_t t = bad ? -1 : next_key_tile(a, pb, ph, ib, 0, end);
    if (t >= 0) {
        load_tile_f32<DK>(q_s, a.q, b, h, q0s + r0, q0s + lq, dk_cols, vec);
        load_tile_f32<DV>(dy_s, a.dy, b, h, q0s + r0, q0s + lq, dv_cols, vec);
        load_tile_f32<DK>(k_s, a.k, b, kvh, k0s + t * TILE, k0s + lk, dk_cols, vec);
        load_tile_f32<DV>(v_s, a.v, b, kvh, k0s + t * TILE, k0s + lk, dv_cols, vec);
    }
    cp_async_commit();
    const float sl2 = (float)a.scale * LOG2E;
    for (int stage = 0; t >= 0; stage ^= 1) {
        const int64_t next = next_key_tile(a, pb, ph, ib, t + 1, end);
        if (next >= 0) {
            load_tile_f32<DK>(k_s + (stage ^ 1) * TK, a.k, b, kvh, k0s + next * TILE,
                             k0s + lk, dk_cols, vec);
            load_tile_f32<DV>(v_s + (stage ^ 1) * TV, a.v, b, kvh, k0s + next * TILE,
                             k0s + lk, dv_cols, vec);
        }
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        const uint32_t ks = k_s + stage * TK, vs = v_s + stage * TV;
        const int64_t k0 = t * TILE;

        const bool edge = k0 + TILE > key_end(a, sq, r0);
        const int64_t end_a = key_end(a, sq, row_a), end_b = key_end(a, sq, row_b);
#pragma unroll 1
        for (int c0 = 0; c0 < TILE; c0 += SUB) {
            float p[NS][4];
            zero(p);
            mma_abt_f32<DK, NS>(p, q_s, warp * 16, ks, c0, lane);
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
            mma_abt_f32<DV, NS>(ds, dy_s, warp * 16, vs, c0, lane);
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ds[n][e] = p[n][e] * (ds[n][e] - rsum[e / 2]);
            }
            mma_pb_f32<DK, NS, DK>(dq, ds, ks, c0, 0, lane);
        }
        __syncthreads();
        t = next;
    }
    cp_async_wait<0>();
    const float f = bad ? quiet_nan() : (float)a.scale;
    store_cols_f32<DK>(a.dq, b, h, q0s + r0 + warp * 16, q_out, dq, 0, dk_cols, f, f, lane, vec);
}

} // namespace attention
} // namespace bk

// The F32 backward kernels at widths DK, DV (the names of the F16 and
// BF16 kernels, type f32); _seq: for plans with sequences of their own
// lengths.
#define BK_ATTENTION_TF32_BACKWARD_KERNELS(DK, DV, SEQ, TAG)                                     \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS, 1)                  \
        bk_attention_dkv_mma##TAG##_f32_d##DK##_v##DV(const bk::attention::Args a)               \
    {                                                                                            \
        bk::attention::dkv_tile_f32<DK, DV, SEQ>(a);                                             \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS, 1)                  \
        bk_attention_dq_mma##TAG##_f32_d##DK##_v##DV(const bk::attention::Args a)                \
    {                                                                                            \
        bk::attention::dq_tile_f32<DK, DV, SEQ>(a);                                              \
    }
#define BK_ATTENTION_TF32_BACKWARD(DK, DV)                                                       \
    BK_ATTENTION_TF32_BACKWARD_KERNELS(DK, DV, false, )                                          \
    BK_ATTENTION_TF32_BACKWARD_KERNELS(DK, DV, true, _seq)

BK_ATTENTION_TF32_BACKWARD(32, 32)
BK_ATTENTION_TF32_BACKWARD(64, 64)
BK_ATTENTION_TF32_BACKWARD(96, 96)
BK_ATTENTION_TF32_BACKWARD(128, 128)
