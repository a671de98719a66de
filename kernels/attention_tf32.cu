// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention forward for F32 on tensor cores (3xTF32 on
// mma.sync m16n8k8, sm_80 and later: kernels/attention_tf32.cuh), any D
// and Dv from 1 to 256 at the compiled widths of BK_ATTENTION_MMA_WIDTH
// (columns past D and Dv zero in shared memory, never stored), blocks
// that are multiples of 64.
//
// As the F16 and BF16 kernels (kernels/attention_mma_forward.cuh, whose
// key masks it takes): a CTA of 4 warps takes 64 query rows of one
// (batch, head), 16 per warp, and walks the active 64-key tiles of its
// query block, the softmax online in registers in base 2. F32 tiles are
// twice the bytes: one K and one V tile in shared memory beside Q (2 CTAs
// an SM to width 128, and width 256 in 195 KiB), each refilled as soon as
// every warp is done with it, so that K's next tile lands under the
// softmax and P V, and V's under the next tile's Q K^T. Q's fragments are
// read from shared memory at each tile (split again: holding both halves
// beside O would spill).
#include "attention_tf32.cuh"
#include "attention_mma_forward.cuh"

namespace bk {
namespace attention {

// Past width 128 (one CTA an SM) two halves of 4 warps, HALVES = 2: each
// half walks the same rows over its 32 keys of every tile with a softmax
// of its own, and the first merges the second's maxima, sums and O into
// its own at the end (merge_halves), so that two warps a scheduler hide
// the products' latency.
template <int DV>
static __device__ __forceinline__ bool merge_halves(uint32_t smem, float (&o)[DV / 8][4],
                                                    float &m_a, float &m_b, float &l_a, float &l_b)
{
    constexpr int NT_O = DV / 8;
    const bool second = threadIdx.x >= THREADS;
    const uint32_t at = smem + (threadIdx.x % THREADS) * 16u; // as halves_store
    __syncthreads(); // every warp is done with the tiles
    if (second) {
        halves_store(at, o);
        store_shared16(at + (uint32_t)(NT_O * THREADS * 16),
                       make_uint4(__float_as_uint(m_a), __float_as_uint(m_b),
                                  __float_as_uint(l_a), __float_as_uint(l_b)));
    }
    __syncthreads();
    if (second)
        return false;
    const uint4 st = load_shared16(at + (uint32_t)(NT_O * THREADS * 16));
    const float m2_a = __uint_as_float(st.x), m2_b = __uint_as_float(st.y);
    const float mx_a = fmaxf(m_a, m2_a), mx_b = fmaxf(m_b, m2_b);
    // A row neither half saw keeps -inf and sums of 0.
    const float base_a = mx_a == -INFINITY ? 0.f : mx_a, base_b = mx_b == -INFINITY ? 0.f : mx_b;
    const float c1_a = exp2f(m_a - base_a), c2_a = exp2f(m2_a - base_a);
    const float c1_b = exp2f(m_b - base_b), c2_b = exp2f(m2_b - base_b);
    l_a = l_a * c1_a + __uint_as_float(st.z) * c2_a;
    l_b = l_b * c1_b + __uint_as_float(st.w) * c2_b;
    m_a = mx_a;
    m_b = mx_b;
#pragma unroll
    for (int n = 0; n < NT_O; n++) {
        const uint4 w = load_shared16(at + (uint32_t)(n * THREADS * 16));
        o[n][0] = o[n][0] * c1_a + __uint_as_float(w.x) * c2_a;
        o[n][1] = o[n][1] * c1_a + __uint_as_float(w.y) * c2_a;
        o[n][2] = o[n][2] * c1_b + __uint_as_float(w.z) * c2_b;
        o[n][3] = o[n][3] * c1_b + __uint_as_float(w.w) * c2_b;
    }
    return true;
}

template <int DK, int DV, bool SEQ, int HALVES>
static __device__ void forward_tile_f32(const Args &a)
{
    constexpr int NTHREADS = THREADS * HALVES;
    constexpr int NT_S = TILE / 8 / HALVES; // n-tiles of S (this half's keys)
    constexpr int NT_O = DV / 8;   // n-tiles of O (columns)
    constexpr int TK = FTile<DK>::BYTES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t q_s = smem, k_s = smem + TK, v_s = smem + 2 * TK;
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk = (int)a.d, dv = (int)a.dv_cols;

    grid_dependency_wait();
    const int warp = HALVES > 1 ? (threadIdx.x / 32) % 4 : threadIdx.x / 32, lane = threadIdx.x % 32;
    const int kh = HALVES > 1 ? (int)(threadIdx.x / THREADS) * (TILE / HALVES) : 0; // its keys
    const int64_t r0 = (int64_t)blockIdx.x * TILE, h = blockIdx.y;
    const Seq sq = grid_sequence<SEQ>(a, blockIdx.z);
    const int b = (int)sq.b, q0 = (int)sq.q0, k0s = (int)sq.k0;
    const int lq = (int)sq.lq, lk = (int)sq.lk, q_out = (int)sq.q_out;
    if (q0 + r0 >= q_out)
        return;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    const int64_t pb = sq.pb, ph = pattern_h(a, h);
    const int64_t ib = r0 / a.block_q;
    // Keys and rows fit in int: the plan takes this path for Lq, Lk < 2^31.
    const int end = (int)rows_key_end(a, sq, r0, TILE);
    const bool bad = sq.bad || pattern_bad(a, pb, ph);
    const int g = lane / 4, q4 = lane % 4;
    const int row_a = (int)r0 + warp * 16 + g, row_b = row_a + 8;
    const bool ragged = r0 + TILE > lq;

    float o[NT_O][4];
    zero(o);
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.f, l_b = 0.f;

    // Copy groups, in order: {Q, K(t)}, {V(t)}, then per tile {K(next)},
    // {V(next)}; each wait leaves only the newest in flight.
    int t = bad ? -1 : (int)next_key_tile(a, pb, ph, ib, 0, end);
    if (t >= 0) {
        load_tile<float, DK, NTHREADS>(q_s, a.q, b, h, q0 + r0, q0 + lq, dk, vec);
        load_tile<float, DK, NTHREADS>(k_s, a.k, b, kvh, k0s + t * TILE, k0s + lk, dk, vec);
    }
    cp_async_commit();
    if (t >= 0)
        load_tile<float, DV, NTHREADS>(v_s, a.v, b, kvh, k0s + t * TILE, k0s + lk, dv, vec);
    cp_async_commit();
    const ScoreScale ss = score_scale(a.scale);
    while (t >= 0) {
        const int next = (int)next_key_tile(a, pb, ph, ib, t + 1, end);
        cp_async_wait<1>(); // K(t) (and Q)
        __syncthreads();

        // S = Q K^T for 16 rows x 64 keys per warp (32 a half's).
        float s[NT_S][4];
        zero(s);
        mma_abt_f32<DK, NT_S>(s, q_s, warp * 16, k_s, kh, lane);
        __syncthreads(); // every warp is done with K(t)
        if (next >= 0)
            load_tile<float, DK, NTHREADS>(k_s, a.k, b, kvh, k0s + next * TILE, k0s + lk, dk, vec);
        cp_async_commit();

        mask_keys<int>(s, a, sq, r0, t * TILE + kh, row_a, row_b, lq, ragged, q4, ss.masked);
        online_softmax(s, o, m_a, m_b, l_a, l_b, ss);

        cp_async_wait<1>(); // V(t)
        __syncthreads();
        mma_pb_f32<DV, NT_S, DV>(o, s, v_s, kh, 0, lane);
        __syncthreads(); // every warp is done with V(t)
        if (next >= 0)
            load_tile<float, DV, NTHREADS>(v_s, a.v, b, kvh, k0s + next * TILE, k0s + lk, dv, vec);
        cp_async_commit();
        t = next;
    }
    cp_async_wait<0>();
    if constexpr (HALVES > 1) {
        if (!merge_halves<DV>(smem, o, m_a, m_b, l_a, l_b))
            return;
    }

#pragma unroll
    for (int o2 = 1; o2 <= 2; o2 *= 2) {
        l_a += __shfl_xor_sync(0xFFFFFFFFu, l_a, o2);
        l_b += __shfl_xor_sync(0xFFFFFFFFu, l_b, o2);
    }
    // A row that sees no key: y = 0 and lse = -inf; a bad list: NaN.
    const float nan = quiet_nan();
    const float inv_a = bad ? nan : l_a > 0.f ? 1.f / l_a : 0.f;
    const float inv_b = bad ? nan : l_b > 0.f ? 1.f / l_b : 0.f;
    store_cols<float, DV>(a.y, b, h, q0 + r0 + warp * 16, q_out, o, 0, dv, inv_a, inv_b, lane, vec);
    if ((a.flags & BK_ATTENTION_HAS_LSE) && q4 == 0) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int row = q0 + (half ? row_b : row_a);
            const float l = half ? l_b : l_a, m = half ? m_b : m_a;
            if (row < q_out)
                *lse_at<float>(a, b, h, row) = bad ? nan : row_lse(m, l);
        }
    }
}

} // namespace attention
} // namespace bk

// The F32 forward at widths DK, DV (the names of the F16 and BF16
// kernels, type f32); _seq: for plans with sequences of their own lengths.
#define BK_ATTENTION_TF32_FORWARD_KERNEL(DK, DV, SEQ, TAG)                                       \
    extern "C" __global__ void __launch_bounds__(                                                \
        BK_ATTENTION_MMA_THREADS * BK_ATTENTION_TF32_FORWARD_HALVES(DK, DV), 1)                  \
        bk_attention_forward_mma##TAG##_f32_d##DK##_v##DV(const bk::attention::Args a)           \
    {                                                                                            \
        bk::attention::forward_tile_f32<DK, DV, SEQ, BK_ATTENTION_TF32_FORWARD_HALVES(DK, DV)>(a); \
    }
#define BK_ATTENTION_TF32_FORWARD(DK, DV)                                                        \
    BK_ATTENTION_TF32_FORWARD_KERNEL(DK, DV, false, )                                            \
    BK_ATTENTION_TF32_FORWARD_KERNEL(DK, DV, true, _seq)

BK_ATTENTION_TF32_FORWARD(32, 32)
BK_ATTENTION_TF32_FORWARD(64, 64)
BK_ATTENTION_TF32_FORWARD(96, 96)
BK_ATTENTION_TF32_FORWARD(128, 128)
BK_ATTENTION_TF32_FORWARD(160, 160)
BK_ATTENTION_TF32_FORWARD(192, 192)
BK_ATTENTION_TF32_FORWARD(256, 256)
BK_ATTENTION_TF32_FORWARD(192, 128)
