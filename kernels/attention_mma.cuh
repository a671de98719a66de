// SPDX-License-Identifier: Apache-2.0
// What the tensor-core attention kernels share (kernels/attention_mma.cu,
// kernels/attention_mma_backward.cu): the mma.sync wrapper (mma_ops.cuh), swizzled 64-row tiles in shared memory filled by cp.async, and the walk
// over a query block's active key tiles.
#ifndef BK_ATTENTION_MMA_CUH
#define BK_ATTENTION_MMA_CUH

#include "attention_common.cuh"
#include "mma_ops.cuh"
#include "shared_memory_ops.cuh"

namespace bk {
namespace attention {

constexpr int TILE = BK_ATTENTION_MMA_TILE;
constexpr int THREADS = BK_ATTENTION_MMA_THREADS;

using bk::Mma;

static __device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// A tile of 64 rows of DH elements in shared memory: row r's 16-byte
// chunk c sits at chunk c ^ (r % 8), so the 8 rows an ldmatrix reads at
// one chunk fall in 8 different bank groups.
template <int DH> struct SwizzledTile {
    static constexpr int CHUNKS = DH / 8;
    static constexpr int BYTES = TILE * DH * 2;
    static __device__ __forceinline__ uint32_t offset(int r, int c)
    {
        return (uint32_t)((r * CHUNKS + (c ^ (r & 7))) * 16);
    }
};

// cp.async of rows [r0, r0 + 64) of a view into a swizzled tile; rows past
// `rows` are zero-filled, so they add nothing (V) or are masked (K).
template <typename T, int DH>
static __device__ __forceinline__ void load_tile(uint32_t smem, const View &v, int64_t b,
                                                 int64_t h, int64_t r0, int64_t rows)
{
    constexpr int CHUNKS = SwizzledTile<DH>::CHUNKS;
#pragma unroll 1 // few registers: it runs while the accumulators are live
    for (int e = threadIdx.x; e < TILE * CHUNKS; e += THREADS) {
        const int r = e / CHUNKS, c = e % CHUNKS;
        const bool in = r0 + r < rows;
        const T *src = at<T>(v, b, h, in ? r0 + r : 0) + c * 8;
        cp_async16(smem + SwizzledTile<DH>::offset(r, c), src, in ? 16u : 0u);
    }
}

// The next active 64-key tile at or after key tile t of query block ib
// whose keys start before `end`, or -1. Called by whole warps: the lanes
// test 32 tiles at once (a sparse row would otherwise cost one dependent
// mask read per tile).
static __device__ __forceinline__ int64_t next_key_tile(const Args &a, int64_t pb, int64_t ph,
                                                        int64_t ib, int64_t t, int64_t end)
{
    const int64_t per_block = a.block_k / TILE;
    for (; t * TILE < end; t += 32) {
        const int64_t mine = t + threadIdx.x % 32;
        const bool hit = mine * TILE < end && block_active(a, pb, ph, ib, mine / per_block);
        const unsigned hits = __ballot_sync(0xFFFFFFFFu, hit);
        if (hits)
            return t + __ffs(hits) - 1;
    }
    return -1;
}

// The A fragments (m16n8k16) of k-step kk for rows row0 .. row0 + 15 of a
// swizzled tile.
template <int DH>
static __device__ __forceinline__ void load_a(uint32_t (&af)[4], uint32_t tile, int row0, int kk,
                                              int lane)
{
    ldmatrix_x4(af, tile + SwizzledTile<DH>::offset(row0 + lane % 16, kk * 2 + lane / 16));
}

// acc (16 x 8 NT) += A (16 x DH) B^T, B rows brow0 .. brow0 + 8 NT - 1 of
// a swizzled tile of DH columns; A's fragments come from the callable
// a_frag(kk, frag).
template <typename T, int DH, int NT, typename AFrag>
static __device__ __forceinline__ void mma_abt(float (&acc)[NT][4], AFrag a_frag, uint32_t bt,
                                               int brow0, int lane)
{
#pragma unroll
    for (int kk = 0; kk < DH / 16; kk++) {
        uint32_t af[4];
        a_frag(kk, af);
#pragma unroll
        for (int np = 0; np < NT / 2; np++) {
            uint32_t bf[4];
            ldmatrix_x4(bf, bt + SwizzledTile<DH>::offset(brow0 + np * 16 + lane % 8 +
                                                               8 * (lane / 16),
                                                           kk * 2 + (lane / 8) % 2));
            Mma<T>::run(acc[2 * np], af, bf[0], bf[1]);
            Mma<T>::run(acc[2 * np + 1], af, bf[2], bf[3]);
        }
    }
}

// acc (16 x DH) += P (16 x 8 NT, F32 in the accumulator layout) B, B rows
// krow0 .. krow0 + 8 NT - 1 (the k dimension) of a swizzled tile of DH
// columns.
template <typename T, int DH, int NT>
static __device__ __forceinline__ void mma_pb(float (&acc)[DH / 8][4], const float (&p)[NT][4],
                                              uint32_t bt, int krow0, int lane)
{
#pragma unroll
    for (int kk = 0; kk < NT / 2; kk++) {
        const uint32_t pa[4] = {
            pack2<T>(p[2 * kk][0], p[2 * kk][1]),
            pack2<T>(p[2 * kk][2], p[2 * kk][3]),
            pack2<T>(p[2 * kk + 1][0], p[2 * kk + 1][1]),
            pack2<T>(p[2 * kk + 1][2], p[2 * kk + 1][3]),
        };
#pragma unroll
        for (int np = 0; np < DH / 16; np++) {
            uint32_t bf[4];
            ldmatrix_x4_trans(bf, bt + SwizzledTile<DH>::offset(
                                          krow0 + kk * 16 + lane % 8 + 8 * ((lane / 8) % 2),
                                          np * 2 + lane / 16));
            Mma<T>::run(acc[2 * np], pa, bf[0], bf[1]);
            Mma<T>::run(acc[2 * np + 1], pa, bf[2], bf[3]);
        }
    }
}

// One tile's online softmax in base 2 for a fragment's two rows (a: g,
// b: g + 8; the 4 lanes of a quad share them): the running maxima m move to
// the tile's, O and the per-lane sums l are rescaled to them, and the
// scores s become P = 2^(s sl2 - m) (0 where masked). The quad adds l up
// once, at the end.
template <int NT_S, int NT_O>
static __device__ __forceinline__ void online_softmax(float (&s)[NT_S][4], float (&o)[NT_O][4],
                                                      float &m_a, float &m_b, float &l_a,
                                                      float &l_b, const ScoreScale &ss)
{
    const float2 mx = row_max(s, ss, make_float2(m_a, m_b));
    float mx_a = mx.x, mx_b = mx.y;
#pragma unroll
    for (int o2 = 1; o2 <= 2; o2 *= 2) {
        mx_a = fmaxf(mx_a, __shfl_xor_sync(0xFFFFFFFFu, mx_a, o2));
        mx_b = fmaxf(mx_b, __shfl_xor_sync(0xFFFFFFFFu, mx_b, o2));
    }
    const float base_a = mx_a == -INFINITY ? 0.f : mx_a;
    const float base_b = mx_b == -INFINITY ? 0.f : mx_b;
    const float corr_a = exp2_fast(m_a - base_a), corr_b = exp2_fast(m_b - base_b);
    m_a = mx_a;
    m_b = mx_b;
    float sum_a = 0.f, sum_b = 0.f;
#pragma unroll
    for (int n = 0; n < NT_S; n++) {
        s[n][0] = exp2_fast(fmaf(s[n][0], ss.sl2, -base_a));
        s[n][1] = exp2_fast(fmaf(s[n][1], ss.sl2, -base_a));
        s[n][2] = exp2_fast(fmaf(s[n][2], ss.sl2, -base_b));
        s[n][3] = exp2_fast(fmaf(s[n][3], ss.sl2, -base_b));
        sum_a += s[n][0] + s[n][1];
        sum_b += s[n][2] + s[n][3];
    }
    l_a = l_a * corr_a + sum_a;
    l_b = l_b * corr_b + sum_b;
#pragma unroll
    for (int n = 0; n < NT_O; n++) {
        o[n][0] *= corr_a;
        o[n][1] *= corr_a;
        o[n][2] *= corr_b;
        o[n][3] *= corr_b;
    }
}

} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_MMA_CUH
