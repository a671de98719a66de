// SPDX-License-Identifier: Apache-2.0
// Block-sparse attention forward on tensor cores (mma.sync m16n8k16,
// sm_80 and later), F16 and BF16, any D and Dv from 1 to 256 at compiled
// widths DK and DV (BK_ATTENTION_MMA_WIDTH; columns past D and Dv are
// zero in shared memory and never stored), blocks that are multiples of
// 64; kernels/attention_mma.cu instantiates widths up to 128,
// kernels/attention_mma_wide.cu the rest. Everything else runs
// kernels/attention_general.cu.
//
// A CTA of 4 warps takes 64 query rows of one (batch, head), 16 per warp,
// and walks the active 64-key tiles of its query block: K and V tiles
// come through cp.async (or element by element where the strides or
// addresses do not allow 16-byte copies) into a double-buffered shared
// ring while the tile before is used; S = Q K^T and O += P V run on the
// tensor cores, the softmax online in registers in base 2, F32
// throughout. Q's fragments stay in registers up to DK = 128; past it
// they are read from shared memory at each tile (beside O of 16 x 256
// they would spill). A skipped block costs a byte of the mask: its K and
// V are never read.
#ifndef BK_ATTENTION_MMA_FORWARD_CUH
#define BK_ATTENTION_MMA_FORWARD_CUH

#include "attention_mma.cuh"

namespace bk {
namespace attention {

// Masks this thread's scores of key tile k0 (rows row_a and row_b): keys
// past lk and past the causal limit (tested only in edge tiles), and
// every key of rows past lq. I: the type of key and row numbers.
template <typename I, int NT>
static __device__ __forceinline__ void mask_keys(float (&s)[NT][4], const Args &a, const Seq &sq,
                                                 int64_t r0, I k0, I row_a, I row_b, I lq,
                                                 bool ragged, int q4, float masked)
{
    if (ragged || k0 + TILE > key_end(a, sq, r0)) {
        const I end_a = row_a < lq ? (I)key_end(a, sq, row_a) : 0;
        const I end_b = row_b < lq ? (I)key_end(a, sq, row_b) : 0;
#pragma unroll
        for (int n = 0; n < NT; n++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const I j = k0 + n * 8 + 2 * q4 + e;
                if (j >= end_a)
                    s[n][e] = masked;
                if (j >= end_b)
                    s[n][2 + e] = masked;
            }
        }
    }
}

template <typename T, int DK, int DV, bool SEQ> static __device__ void forward_tile(const Args &a)
{
    constexpr int KSTEPS = DK / 16;   // k-steps of S = Q K^T
    constexpr int NT_S = TILE / 8;    // n-tiles of S (keys)
    constexpr int NT_O = DV / 8;      // n-tiles of O (columns)
    constexpr int TK = Tile<DK>::BYTES, TV = Tile<DV>::BYTES;
    constexpr bool Q_IN_REGISTERS = DK <= 128;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t smem = shared_address(smem_bytes);
    const uint32_t q_s = smem, k_s = smem + TK, v_s = smem + 3 * TK; // K and V: 2 stages each
    const bool vec = !(a.flags & BK_ATTENTION_ELEMENTWISE);
    const int dk = (int)a.d, dv = (int)a.dv_cols;

    grid_dependency_wait();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    // Rows and keys are the sequence's (sequence()); its first query and
    // key rows are q0 and k0 of the tensors.
    // Row numbers fit in int: the plan takes this path for Lq, Lk < 2^31.
    const int64_t r0 = (int64_t)blockIdx.x * TILE, h = blockIdx.y;
    const Seq sq = grid_sequence<SEQ>(a, blockIdx.z);
    const int b = (int)sq.b, q0 = (int)sq.q0, k0s = (int)sq.k0;
    const int lq = (int)sq.lq, lk = (int)sq.lk, q_out = (int)sq.q_out;
    if (q0 + r0 >= q_out)
        return;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    const int64_t pb = sq.pb, ph = pattern_h(a, h);
    const int64_t ib = r0 / a.block_q;
    const int64_t end = rows_key_end(a, sq, r0, TILE); // no key past this is seen by the tile
    const bool bad = sq.bad || pattern_bad(a, pb, ph);
    const int g = lane / 4, q4 = lane % 4;
    const int64_t row_a = r0 + warp * 16 + g, row_b = row_a + 8; // this thread's two rows
    // Rows past a PADDED length see no key: the tile is masked whole.
    const bool ragged = r0 + TILE > lq;

    float o[NT_O][4];
    zero(o);
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.f, l_b = 0.f;

    int64_t t = bad ? -1 : next_key_tile(a, pb, ph, ib, 0, end);
    if (t >= 0) {
        load_tile<T, DK>(q_s, a.q, b, h, q0 + r0, q0 + lq, dk, vec);
        load_tile<T, DK>(k_s, a.k, b, kvh, k0s + t * TILE, k0s + lk, dk, vec);
        load_tile<T, DV>(v_s, a.v, b, kvh, k0s + t * TILE, k0s + lk, dv, vec);
    }
    cp_async_commit();
    uint32_t qf[Q_IN_REGISTERS ? KSTEPS : 1][4];
    const ScoreScale ss = score_scale(a.scale);
    for (int stage = 0, first = 1; t >= 0; stage ^= 1, first = 0) {
        const int64_t next = next_key_tile(a, pb, ph, ib, t + 1, end);
        if (next >= 0) {
            load_tile<T, DK>(k_s + (stage ^ 1) * TK, a.k, b, kvh, k0s + next * TILE, k0s + lk,
                             dk, vec);
            load_tile<T, DV>(v_s + (stage ^ 1) * TV, a.v, b, kvh, k0s + next * TILE, k0s + lk,
                             dv, vec);
        }
        cp_async_commit();
        cp_async_wait<1>();
        __syncthreads();
        if constexpr (Q_IN_REGISTERS) {
            if (first) { // Q to registers once it has landed
#pragma unroll
                for (int kk = 0; kk < KSTEPS; kk++)
                    load_a<DK>(qf[kk], q_s, warp * 16, kk, lane);
            }
        }
        const uint32_t ks = k_s + stage * TK, vs = v_s + stage * TV;

        // S = Q K^T for 16 rows x 64 keys per warp.
        float s[NT_S][4];
        zero(s);
        mma_abt<T, DK, NT_S>(s, [&](int kk, uint32_t (&af)[4]) {
            if constexpr (Q_IN_REGISTERS) {
#pragma unroll
                for (int i = 0; i < 4; i++)
                    af[i] = qf[kk][i];
            } else {
                load_a<DK>(af, q_s, warp * 16, kk, lane);
            }
        }, ks, 0, lane);

        mask_keys<int64_t>(s, a, sq, r0, t * TILE, row_a, row_b, lq, ragged, q4, ss.masked);

        online_softmax(s, o, m_a, m_b, l_a, l_b, ss);

        // O += P V: P's accumulators are the A fragments of 16-key steps.
        mma_pb<T, DV, NT_S>(o, s, vs, 0, lane);
        __syncthreads(); // this stage's buffers are refilled two tiles on
        t = next;
    }
    cp_async_wait<0>();

#pragma unroll
    for (int o2 = 1; o2 <= 2; o2 *= 2) {
        l_a += __shfl_xor_sync(0xFFFFFFFFu, l_a, o2);
        l_b += __shfl_xor_sync(0xFFFFFFFFu, l_b, o2);
    }
    // A row that sees no key: y = 0 and lse = -inf; a bad list: NaN.
    const float nan = quiet_nan();
    const float inv_a = bad ? nan : l_a > 0.f ? 1.f / l_a : 0.f;
    const float inv_b = bad ? nan : l_b > 0.f ? 1.f / l_b : 0.f;
    store_cols<T, DV>(a.y, b, h, q0 + r0 + warp * 16, q_out, o, 0, dv, inv_a, inv_b, lane, vec);
    if ((a.flags & BK_ATTENTION_HAS_LSE) && q4 == 0) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int64_t row = q0 + (half ? row_b : row_a);
            const float l = half ? l_b : l_a, m = half ? m_b : m_a;
            if (row < q_out)
                *lse_at<float>(a, b, h, row) = bad ? nan : row_lse(m, l);
        }
    }
}

} // namespace attention
} // namespace bk

// The forward kernel of element type T (NAME: f16, bf16) at widths DK,
// DV: two CTAs an SM where their shared memory allows (widths up to 128);
// _seq: the one for plans with sequences of their own lengths.
#define BK_ATTENTION_MMA_FORWARD_KERNEL(NAME, T, DK, DV, SEQ, TAG)                               \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_MMA_THREADS,                     \
                                                 BK_ATTENTION_MMA_WIDE(DK, DV) ? 1 : 2)        \
        bk_attention_forward_mma##TAG##_##NAME##_d##DK##_v##DV(const bk::attention::Args a)      \
    {                                                                                            \
        bk::attention::forward_tile<T, DK, DV, SEQ>(a);                                          \
    }
#define BK_ATTENTION_MMA_FORWARD(NAME, T, DK, DV)                                                \
    BK_ATTENTION_MMA_FORWARD_KERNEL(NAME, T, DK, DV, false, )                                    \
    BK_ATTENTION_MMA_FORWARD_KERNEL(NAME, T, DK, DV, true, _seq)

#define BK_ATTENTION_MMA_FORWARD_TYPES(DK, DV)                                                   \
    BK_ATTENTION_MMA_FORWARD(f16, __half, DK, DV)                                                \
    BK_ATTENTION_MMA_FORWARD(bf16, __nv_bfloat16, DK, DV)

#endif // BK_ATTENTION_MMA_FORWARD_CUH
