// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention backward on tensor cores (mma.sync m16n8k16):
// F16 and BF16 (F32 on the same templates, 3xTF32:
// kernels/attention_tf32_backward.cu), any D and Dv from 1 to 256 at
// compiled widths DK and DV (as the forward,
// kernels/attention_mma_forward.cuh), blocks that are multiples of 64;
// the row sums rowsum(dy * y) come from kernels/attention_general.cu's
// kernel, launched first.
// kernels/attention_mma_backward.cu instantiates widths up to 128,
// kernels/attention_mma_backward_wide.cu the rest.
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
//
// Past width 128 a warp cannot hold dK and dV of 16 keys (16 x 256 F32
// each: 256 registers a thread): the dk/dv kernel then has 8 warps, two
// per 16 keys, each owning half of the columns of dK and dV (SPLIT = 2).
// Both warps of a pair compute the 16 keys' P^T and dS^T in full (the
// products over all of D and Dv); that duplicates two of the five
// products, but needs no exchange through shared memory and no barrier
// between the pair. dq holds one 16 x DK accumulator (128 registers at
// 256) and keeps 4 warps.
#ifndef BK_ATTENTION_MMA_BACKWARD_CUH
#define BK_ATTENTION_MMA_BACKWARD_CUH

#include "attention_mma.cuh"

namespace bk {
namespace attention {

// Queries (dk/dv) or keys (dq) per step of a tile: few enough that the
// accumulators of 16 x DK (or a share of it) stay in registers beside P and dS.
constexpr int SUB = 32;
constexpr int NS = SUB / 8; // its n-tiles

// The next query tile at or after tile t (of query head slot g in the
// group) whose query block sees key block jb and whose rows reach
// `first` (the causal start); advances g past exhausted heads. Returns
// false at the end.
// Pattern batch index pb; lq: the sequence's queries.
static __device__ __forceinline__ bool next_query_tile(const Args &a, int64_t pb, int lq,
                                                       int64_t kvh, int group, int64_t jb,
                                                       int first, int &g, int &t)
{
    const int per_block = (int)(a.block_q / TILE), tiles = (lq + TILE - 1) / TILE;
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

// lse (as +inf where the query sees nothing or lies past its sequence's
// lq, so that P is 0) and rowsum of its 64 queries from i0 (rows q0 + i0
// .. of batch entry b) into shared memory: threads 0..63 and 64..127 (the
// others, if any, idle).
static __device__ __forceinline__ void load_row_stats(const Args &a, float *lse_s, float *sum_s,
                                                      int b, int q0, int lq, int64_t h, int i0)
{
    const int e = threadIdx.x % TILE;
    const int i = i0 + e, r = q0 + i;
    if (threadIdx.x >= 2 * TILE)
        return;
    if (threadIdx.x < TILE) {
        float l = INFINITY;
        if (i < lq) {
            l = lse_base2(*lse_at<const float>(a, b, h, r));
        }
        lse_s[e] = l;
    } else {
        sum_s[e] = i < lq ? *rowsum_at<const float>(a, b, h, r) : 0.f;
    }
}

// The step from one SUB-wide block of a tile to the next a warp takes:
// SUB, or with HALVES = 2, past the tile (each half takes one block,
// `side`). ptxas, knowing that a half's loop runs once, folds it away and
// hoists the next tile's work into its body (dk/dv at F32 width 128
// spilled 40-72 bytes at 255 registers); a step it cannot prove
// (threadIdx.x >> 20 is 0) keeps the loop, in 232 registers.
template <int HALVES> static __device__ __forceinline__ int sub_step()
{
    return HALVES * SUB + (HALVES > 1 ? (int)(threadIdx.x >> 20) : 0);
}

// Two halves of a CTA's warps with the same outputs (HALVES = 2): warps
// 4..7 store their accumulators to shared memory (free once every copy
// has landed and every warp is past its last tile; halves_store), and
// warps 0..3 add them to theirs. Returns whether this warp holds the sums
// (the others are done).
template <int... N>
static __device__ __forceinline__ bool halves_sum(uint32_t smem, float (&...x)[N][4])
{
    const bool second = threadIdx.x >= THREADS;
    const uint32_t at = smem + (threadIdx.x % THREADS) * 16u;
    __syncthreads();
    if (second) {
        uint32_t off = 0; // each array after the one before
        ((halves_store(at + off, x), off += N * THREADS * 16), ...);
    }
    __syncthreads();
    if (second)
        return false;
    uint32_t off = 0;
    ((halves_add(at + off, x), off += N * THREADS * 16), ...);
    return true;
}

// SPLIT warps per 16 keys, warp w owning columns [part CK, (part + 1) CK)
// of dK and [part CV, ...) of dV, part = w / 4; or HALVES = 2 (SPLIT 1):
// warps 4..7 take the second SUB queries of every tile, warps 0..3 the
// first, and add the others' sums to theirs at the end (halves_sum).
template <typename T, int DK, int DV, int SPLIT, bool SEQ, int HALVES = 1>
static __device__ void dkv_tile(const Args &a)
{
    static_assert(HALVES == 1 || (SPLIT == 1 && HALVES * SUB == TILE), "halves of a tile");
    using O = TileOps<T>;
    constexpr int NTHREADS = THREADS * SPLIT * HALVES, CK = DK / SPLIT, CV = DV / SPLIT;
    constexpr int TK = O::template Layout<DK>::BYTES, TV = O::template Layout<DV>::BYTES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t k_s = smem, v_s = smem + TK, q_s = v_s + TV, dy_s = q_s + 2 * TK;
    float *stats = (float *)(smem_bytes + 3 * (TK + TV)); // [2 stages][lse 64, rowsum 64]
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk_cols = (int)a.d, dv_cols = (int)a.dv_cols;

    grid_dependency_wait();
    const int lane = threadIdx.x % 32, q4 = lane % 4;
    const int warp = (int)(threadIdx.x / 32) % 4;
    const int part = HALVES > 1 ? 0 : (int)(threadIdx.x / 32) / 4;
    const int side = HALVES > 1 ? (int)(threadIdx.x / 32) / 4 : 0; // its half
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
        load_tile<T, DK, NTHREADS>(k_s, a.k, b, kvh, k0s + k0, k0s + lk, dk_cols, vec);
        load_tile<T, DV, NTHREADS>(v_s, a.v, b, kvh, k0s + k0, k0s + lk, dv_cols, vec);
        load_tile<T, DK, NTHREADS>(q_s, a.q, b, kvh * group + g, q0s + t * TILE, q0s + lq,
                                       dk_cols, vec);
        load_tile<T, DV, NTHREADS>(dy_s, a.dy, b, kvh * group + g, q0s + t * TILE, q0s + lq,
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
            load_tile<T, DK, NTHREADS>(q_s + (stage ^ 1) * TK, a.q, b, h, q0s + nt * TILE,
                                           q0s + lq, dk_cols, vec);
            load_tile<T, DV, NTHREADS>(dy_s + (stage ^ 1) * TV, a.dy, b, h, q0s + nt * TILE,
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
        for (int c0 = side * SUB; c0 < TILE; c0 += sub_step<HALVES>()) {
            // P^T = exp(S^T - lse) for 16 keys x SUB queries.
            float p[NS][4];
            zero(p);
            O::template abt<DK, NS>(p, k_s, warp * 16, qs, c0, lane);
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
            O::template abt<DV, NS>(ds, v_s, warp * 16, dys, c0, lane);
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
            O::template pb<DV, NS, CV>(dv, p, dys, c0, part * CV, lane);
            O::template pb<DK, NS, CK>(dk, ds, qs, c0, part * CK, lane);
        }
        __syncthreads(); // this stage's buffers are refilled two tiles on
        more = next;
        g = ng;
        t = nt;
    }
    cp_async_wait<0>();
    if constexpr (HALVES > 1) {
        if (!halves_sum(smem, dk, dv))
            return;
    }
    const float nan = quiet_nan();
    const float fk = bad ? nan : (float)a.scale, fv = bad ? nan : 1.f;
    store_cols<T, CK>(a.dk, b, kvh, k0s + k0 + warp * 16, k_out, dk, part * CK, dk_cols, fk, fk,
                          lane, vec);
    store_cols<T, CV>(a.dv, b, kvh, k0s + k0 + warp * 16, k_out, dv, part * CV, dv_cols, fv, fv,
                          lane, vec);
}

// HALVES = 2: warps 4..7 take the second SUB keys of every tile, warps
// 0..3 the first, and add the others' sums to theirs at the end.
template <typename T, int DK, int DV, bool SEQ, int HALVES = 1>
static __device__ void dq_tile(const Args &a)
{
    static_assert(HALVES == 1 || HALVES * SUB == TILE, "halves of a tile");
    constexpr int NTHREADS = THREADS * HALVES;
    using O = TileOps<T>;
    constexpr int TK = O::template Layout<DK>::BYTES, TV = O::template Layout<DV>::BYTES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t q_s = smem, dy_s = smem + TK, k_s = dy_s + TV, v_s = k_s + 2 * TK;
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk_cols = (int)a.d, dv_cols = (int)a.dv_cols;

    grid_dependency_wait();
    const int warp = HALVES > 1 ? (threadIdx.x / 32) % 4 : threadIdx.x / 32;
    const int lane = threadIdx.x % 32, q4 = lane % 4;
    const int side = HALVES > 1 ? (int)(threadIdx.x / 128) : 0; // its half
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
        load_tile<T, DK, NTHREADS>(q_s, a.q, b, h, q0s + r0, q0s + lq, dk_cols, vec);
        load_tile<T, DV, NTHREADS>(dy_s, a.dy, b, h, q0s + r0, q0s + lq, dv_cols, vec);
        load_tile<T, DK, NTHREADS>(k_s, a.k, b, kvh, k0s + t * TILE, k0s + lk, dk_cols, vec);
        load_tile<T, DV, NTHREADS>(v_s, a.v, b, kvh, k0s + t * TILE, k0s + lk, dv_cols, vec);
    }
    cp_async_commit();
    const float sl2 = (float)a.scale * LOG2E;
    for (int stage = 0; t >= 0; stage ^= 1) {
        const int64_t next = next_key_tile(a, pb, ph, ib, t + 1, end);
        if (next >= 0) {
            load_tile<T, DK, NTHREADS>(k_s + (stage ^ 1) * TK, a.k, b, kvh,
                                       k0s + next * TILE, k0s + lk, dk_cols, vec);
            load_tile<T, DV, NTHREADS>(v_s + (stage ^ 1) * TV, a.v, b, kvh,
                                       k0s + next * TILE, k0s + lk, dv_cols, vec);
        }
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        const uint32_t ks = k_s + stage * TK, vs = v_s + stage * TV;
        const int64_t k0 = t * TILE;

        const bool edge = k0 + TILE > key_end(a, sq, r0);
        const int64_t end_a = key_end(a, sq, row_a), end_b = key_end(a, sq, row_b);
#pragma unroll 1
        for (int c0 = side * SUB; c0 < TILE; c0 += sub_step<HALVES>()) {
            float p[NS][4];
            zero(p);
            O::template abt<DK, NS>(p, q_s, warp * 16, ks, c0, lane);
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
            O::template abt<DV, NS>(ds, dy_s, warp * 16, vs, c0, lane);
#pragma unroll
            for (int n = 0; n < NS; n++) {
#pragma unroll
                for (int e = 0; e < 4; e++)
                    ds[n][e] = p[n][e] * (ds[n][e] - rsum[e / 2]);
            }
            O::template pb<DK, NS, DK>(dq, ds, ks, c0, 0, lane);
        }
        __syncthreads();
        t = next;
    }
    cp_async_wait<0>();
    if constexpr (HALVES > 1) {
        if (!halves_sum(smem, dq))
            return;
    }
    const float f = bad ? quiet_nan() : (float)a.scale;
    store_cols<T, DK>(a.dq, b, h, q0s + r0 + warp * 16, q_out, dq, 0, dk_cols, f, f, lane, vec);
}

} // namespace attention
} // namespace bk

// The backward kernels of element type T (NAME: f16, bf16, f32) at
// widths DK, DV: dk/dv with BK_ATTENTION_MMA_DKV_SPLIT(DK, DV) warps per 16 keys;
// _seq: those for plans with sequences of their own lengths.
#define BK_ATTENTION_MMA_BACKWARD_KERNELS(NAME, T, DK, DV, SPLIT, HALVES, SEQ, TAG)              \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS * (SPLIT) * (HALVES), \
                                                 1)                                            \
        bk_attention_dkv_mma##TAG##_##NAME##_d##DK##_v##DV(const bk::attention::Args a)          \
    {                                                                                            \
        bk::attention::dkv_tile<T, DK, DV, SPLIT, SEQ, HALVES>(a);                               \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS * (HALVES), 1)       \
        bk_attention_dq_mma##TAG##_##NAME##_d##DK##_v##DV(const bk::attention::Args a)           \
    {                                                                                            \
        bk::attention::dq_tile<T, DK, DV, SEQ, HALVES>(a);                                       \
    }
// SPLIT and HALVES: the dk/dv kernel's warps per 16 keys, and both
// kernels' halves (dkv_tile, dq_tile).
#define BK_ATTENTION_MMA_BACKWARD(NAME, T, DK, DV, SPLIT, HALVES)                                \
    BK_ATTENTION_MMA_BACKWARD_KERNELS(NAME, T, DK, DV, SPLIT, HALVES, false, )                   \
    BK_ATTENTION_MMA_BACKWARD_KERNELS(NAME, T, DK, DV, SPLIT, HALVES, true, _seq)

#define BK_ATTENTION_MMA_BACKWARD_TYPES(DK, DV)                                                  \
    BK_ATTENTION_MMA_BACKWARD(f16, __half, DK, DV, BK_ATTENTION_MMA_DKV_SPLIT(DK, DV), 1)        \
    BK_ATTENTION_MMA_BACKWARD(bf16, __nv_bfloat16, DK, DV, BK_ATTENTION_MMA_DKV_SPLIT(DK, DV), 1)

#endif // BK_ATTENTION_MMA_BACKWARD_CUH
