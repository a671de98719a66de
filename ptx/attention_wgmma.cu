// Block-sparse attention forward on Hopper (sm_90a): wgmma with K and V
// tiles brought by the bulk tensor copy engine, warp-specialised. F16 and
// BF16, D = Dv = 64 or 128, blocks that are multiples of 64; the plan
// takes ptx/attention_mma.cu elsewhere.
//
// A CTA owns 128 query rows of one (batch, head): warpgroup 0 is the
// producer (one thread issues every copy), warpgroups 1 and 2 each own 64
// rows. The producer walks the 64-key tiles that either consumer needs
// (their query blocks' active key blocks, up to the causal limit) and
// fills a ring of BK_ATTENTION_WGMMA_STAGES K and V stages; a consumer
// waits for K, computes S = Q K^T (wgmma, both operands in shared
// memory), runs the online softmax in registers, waits for V, adds P V
// (wgmma, P from registers) and releases the stage. A tile only one
// consumer needs is skipped by the other (blocks of 64 rows may differ).
#include "attention_common.cuh"
#include "tma_ops.cuh"
#include "wgmma_ops.cuh"

namespace bk {
namespace attention {
namespace wg {

using namespace bk::hopper;

constexpr int TILE = 64;              // keys per tile, rows per consumer
constexpr int STAGES = BK_ATTENTION_WGMMA_STAGES;
constexpr float LOG2E = 1.4426950408889634f;
constexpr uint32_t BLOCK_BYTES = TILE * 128; // 64 rows x 64 elements: one swizzled column block

template <typename T> struct Pack;
template <> struct Pack<__half> {
    static __device__ __forceinline__ uint32_t two(float lo, float hi)
    {
        __half2 v = __floats2half2_rn(lo, hi);
        return *(uint32_t *)&v;
    }
};
template <> struct Pack<__nv_bfloat16> {
    static __device__ __forceinline__ uint32_t two(float lo, float hi)
    {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *(uint32_t *)&v;
    }
};

// The walk over key tiles, the same in the producer and both consumers.
struct Walk {
    int64_t pb, ph, per_block;
    int64_t ib0, ib1, end0, end1; // each consumer's query block and key limit (0: no rows)

    __device__ bool needs(const Args &a, int c, int64_t t) const
    {
        return t * TILE < (c ? end1 : end0) &&
               block_active(a, pb, ph, c ? ib1 : ib0, t / per_block);
    }
    // The next tile at or after t that either consumer needs, or -1.
    __device__ int64_t next(const Args &a, int64_t t) const
    {
        const int64_t limit = max(end0, end1);
        for (; t * TILE < limit; t++)
            if (needs(a, 0, t) || needs(a, 1, t))
                return t;
        return -1;
    }
};

template <int DH> struct Layout {
    static constexpr int CB = DH / 64;                 // column blocks of a tile
    static constexpr uint32_t TILE_BYTES = CB * BLOCK_BYTES;
    static constexpr uint32_t Q = 0;                   // two consumers' Q tiles
    static constexpr uint32_t K = 2 * TILE_BYTES;      // STAGES K tiles
    static constexpr uint32_t V = K + STAGES * TILE_BYTES;
    static constexpr uint32_t BARS = V + STAGES * TILE_BYTES;
    // Barriers: q_full, then k_full, v_full and empty per stage; and the
    // slack to align the start to 1024 bytes.
    static constexpr uint32_t BYTES = BARS + 8 * (1 + 3 * STAGES) + 1024;
};

template <typename T, int DH>
static __device__ void producer(const bk_attention_tma_args &p, const Walk &w, uint32_t base,
                                int64_t r0, int64_t kvh, int64_t h, int64_t b)
{
    typedef Layout<DH> L;
    const Args &a = p.a;
    const uint32_t q_full = base + L::BARS;
    mbar_expect_tx(q_full, 2 * L::TILE_BYTES);
    for (int c = 0; c < 2; c++)
        for (int cb = 0; cb < L::CB; cb++)
            tma_load_4d(base + L::Q + c * L::TILE_BYTES + cb * BLOCK_BYTES, p.map_q, 64 * cb,
                        (int)(r0 + TILE * c), (int)h, (int)b, q_full);
    int n = 0;
    for (int64_t t = w.next(a, 0); t >= 0; t = w.next(a, t + 1), n++) {
        const int s = n % STAGES;
        const uint32_t k_full = q_full + 8 * (1 + s), v_full = k_full + 8 * STAGES,
                       empty = v_full + 8 * STAGES;
        if (n >= STAGES)
            mbar_wait(empty, (uint32_t)((n / STAGES - 1) & 1));
        mbar_expect_tx(k_full, L::TILE_BYTES);
        for (int cb = 0; cb < L::CB; cb++)
            tma_load_4d(base + L::K + s * L::TILE_BYTES + cb * BLOCK_BYTES, p.map_k, 64 * cb,
                        (int)(t * TILE), (int)kvh, (int)b, k_full);
        mbar_expect_tx(v_full, L::TILE_BYTES);
        for (int cb = 0; cb < L::CB; cb++)
            tma_load_4d(base + L::V + s * L::TILE_BYTES + cb * BLOCK_BYTES, p.map_v, 64 * cb,
                        (int)(t * TILE), (int)kvh, (int)b, v_full);
    }
}

template <typename T, int DH>
static __device__ void consumer(const bk_attention_tma_args &p, const Walk &w, uint32_t base,
                                int c, int64_t r0, int64_t h, int64_t b, bool bad)
{
    typedef Layout<DH> L;
    constexpr int NT_O = DH / 8;
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, q4 = lane % 4;
    const int64_t rows0 = r0 + TILE * c;                 // this consumer's first row
    const int64_t row_a = rows0 + warp * 16 + lane / 4, row_b = row_a + 8;
    const uint32_t q_full = base + L::BARS;
    const uint32_t q_tile = base + L::Q + c * L::TILE_BYTES;
    const float sl2 = (float)a.scale * LOG2E;

    float o[NT_O][4];
#pragma unroll
    for (int n = 0; n < NT_O; n++)
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.f, l_b = 0.f;
    const int64_t end_a = key_end(a, row_a), end_b = key_end(a, row_b);
    const int64_t first_end = key_end(a, rows0);

    mbar_wait(q_full, 0);
    int n = 0;
    for (int64_t t = w.next(a, 0); t >= 0; t = w.next(a, t + 1), n++) {
        const int s = n % STAGES;
        const uint32_t parity = (uint32_t)((n / STAGES) & 1);
        const uint32_t k_full = q_full + 8 * (1 + s), v_full = k_full + 8 * STAGES,
                       empty = v_full + 8 * STAGES;
        if (!bad && w.needs(a, c, t)) {
            const uint32_t k_tile = base + L::K + s * L::TILE_BYTES;
            const uint32_t v_tile = base + L::V + s * L::TILE_BYTES;
            mbar_wait(k_full, parity);
            // S = Q K^T: 64 rows x 64 keys, D in steps of 16 (32 bytes).
            float sc[8][4];
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < DH / 16; kk++) {
                const uint32_t off = (kk / 4) * BLOCK_BYTES + (kk % 4) * 32;
                mma_ss_n64<T>(sc, smem_desc(q_tile + off, 16, 1024),
                              smem_desc(k_tile + off, 16, 1024), kk > 0);
            }
            wgmma_commit();
            wgmma_wait<0>();

            const int64_t k0 = t * TILE;
            if (k0 + TILE > first_end) { // past Lk or the causal limit in this tile
#pragma unroll
                for (int j = 0; j < 8; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int64_t key = k0 + j * 8 + 2 * q4 + e;
                        if (key >= end_a)
                            sc[j][e] = -INFINITY;
                        if (key >= end_b)
                            sc[j][2 + e] = -INFINITY;
                    }
            }
            float mx_a = m_a, mx_b = m_b;
#pragma unroll
            for (int j = 0; j < 8; j++) {
                mx_a = fmaxf(mx_a, fmaxf(sc[j][0], sc[j][1]) * sl2);
                mx_b = fmaxf(mx_b, fmaxf(sc[j][2], sc[j][3]) * sl2);
            }
#pragma unroll
            for (int x = 1; x <= 2; x *= 2) {
                mx_a = fmaxf(mx_a, __shfl_xor_sync(0xFFFFFFFFu, mx_a, x));
                mx_b = fmaxf(mx_b, __shfl_xor_sync(0xFFFFFFFFu, mx_b, x));
            }
            const float base_a = mx_a == -INFINITY ? 0.f : mx_a;
            const float base_b = mx_b == -INFINITY ? 0.f : mx_b;
            const float corr_a = exp2f(m_a - base_a), corr_b = exp2f(m_b - base_b);
            m_a = mx_a;
            m_b = mx_b;
            float sum_a = 0.f, sum_b = 0.f;
            uint32_t pa[4][4]; // P as the A fragments of four 16-key steps
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const float p0 = exp2f(sc[j][0] * sl2 - base_a), p1 = exp2f(sc[j][1] * sl2 - base_a);
                const float p2 = exp2f(sc[j][2] * sl2 - base_b), p3 = exp2f(sc[j][3] * sl2 - base_b);
                sum_a += p0 + p1;
                sum_b += p2 + p3;
                pa[j / 2][(j % 2) * 2] = Pack<T>::two(p0, p1);
                pa[j / 2][(j % 2) * 2 + 1] = Pack<T>::two(p2, p3);
            }
            l_a = l_a * corr_a + sum_a;
            l_b = l_b * corr_b + sum_b;
#pragma unroll
            for (int j = 0; j < NT_O; j++) {
                o[j][0] *= corr_a;
                o[j][1] *= corr_a;
                o[j][2] *= corr_b;
                o[j][3] *= corr_b;
            }

            // O += P V: 16 keys per step; V is MN-major (d contiguous).
            mbar_wait(v_full, parity);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < TILE / 16; kk++) {
                const uint64_t dv = smem_desc(v_tile + kk * 16 * 128, BLOCK_BYTES, 1024);
                if constexpr (DH == 128)
                    mma_rs_n128_t<T>(o, pa[kk], dv);
                else
                    mma_rs_n64_t<T>(o, pa[kk], dv);
            }
            wgmma_commit();
            wgmma_wait<0>();
        }
        // The stage is free once this consumer is done with it (or skips it).
        __syncwarp();
        if (lane == 0)
            mbar_arrive(empty);
    }

#pragma unroll
    for (int x = 1; x <= 2; x *= 2) {
        l_a += __shfl_xor_sync(0xFFFFFFFFu, l_a, x);
        l_b += __shfl_xor_sync(0xFFFFFFFFu, l_b, x);
    }
    const float nan = quiet_nan();
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int64_t row = half ? row_b : row_a;
        if (row >= a.lq)
            continue;
        const float l = half ? l_b : l_a, m = half ? m_b : m_a;
        const float inv = bad ? nan : l > 0.f ? 1.f / l : 0.f;
        T *y = at<T>(a.y, b, h, row) + 2 * q4;
#pragma unroll
        for (int j = 0; j < NT_O; j++)
            *(uint32_t *)(y + j * 8) = Pack<T>::two(o[j][2 * half] * inv, o[j][2 * half + 1] * inv);
        if ((a.flags & BK_ATTENTION_HAS_LSE) && q4 == 0)
            *((float *)a.lse + b * a.lse_s[0] + h * a.lse_s[1] + row * a.lse_s[2]) =
                bad ? nan : l > 0.f ? (m + log2f(l)) / LOG2E : -INFINITY;
    }
}

template <typename T, int DH> static __device__ void forward(const bk_attention_tma_args &p)
{
    typedef Layout<DH> L;
    // Swizzled tiles need 1024-byte alignment: the plan asks for 1 KiB more.
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem_bytes) + 1023u) & ~1023u;
    const Args &a = p.a;
    const int64_t r0 = (int64_t)blockIdx.x * BK_ATTENTION_WGMMA_ROWS, h = blockIdx.y,
                  b = blockIdx.z;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    Walk w;
    w.pb = pattern_b(a, b);
    w.ph = pattern_h(a, h);
    w.per_block = a.block_k / TILE;
    const int64_t second = r0 + TILE;
    w.ib0 = r0 / a.block_q;
    w.ib1 = second / a.block_q;
    w.end0 = key_end(a, min(second, a.lq) - 1);
    w.end1 = second < a.lq ? key_end(a, min(second + TILE, a.lq) - 1) : 0;
    const bool bad = pattern_bad(a, w.pb, w.ph);
    if (bad)
        w.end0 = w.end1 = 0; // no tile: the consumers write NaN

    if (threadIdx.x == 0) {
        mbar_init(base + L::BARS, 1);
        for (int s = 0; s < STAGES; s++) {
            mbar_init(base + L::BARS + 8 * (1 + s), 1);              // k_full
            mbar_init(base + L::BARS + 8 * (1 + STAGES + s), 1);     // v_full
            mbar_init(base + L::BARS + 8 * (1 + 2 * STAGES + s), 8); // empty: 8 consumer warps
        }
        mbar_fence_init();
    }
    __syncthreads();
    grid_dependency_wait();

    const int group = threadIdx.x / 128;
    if (group == 0) {
        if (threadIdx.x == 0 && (w.end0 > 0 || w.end1 > 0))
            producer<T, DH>(p, w, base, r0, kvh, h, b);
        else if (threadIdx.x == 0) // nothing to load: still let the consumers past q_full
            mbar_expect_tx(base + L::BARS, 0);
    } else {
        consumer<T, DH>(p, w, base, group - 1, r0, h, b, bad);
    }
}

} // namespace wg
} // namespace attention
} // namespace bk

#define BK_ATTENTION_WGMMA_FORWARD(NAME, T, DH)                                                  \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_forward_wgmma_##NAME##_d##DH(const __grid_constant__ bk_attention_tma_args p) \
    {                                                                                            \
        bk::attention::wg::forward<T, DH>(p);                                                    \
    }

BK_ATTENTION_WGMMA_FORWARD(f16, __half, 64)
BK_ATTENTION_WGMMA_FORWARD(f16, __half, 128)
BK_ATTENTION_WGMMA_FORWARD(bf16, __nv_bfloat16, 64)
BK_ATTENTION_WGMMA_FORWARD(bf16, __nv_bfloat16, 128)
