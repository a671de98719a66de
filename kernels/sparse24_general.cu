// SPDX-License-Identifier: Apache-2.0
// Module sparse24_general: the 2:4 sparse GEMM on CUDA cores, for what the
// tensor-core kernels do not take (F32, X with strides or misaligned rows).
// Correct for every shape and layout before fast.
//
// One CTA of 256 threads computes a 64 (m) x 64 (n) tile of Y, each thread
// a 4 x 4 block (m = tm + 16 i, n = tn + 16 j, so a warp reads consecutive
// shared words). K goes in steps of 32: the weight's groups are decoded
// from the prepared layout into a dense [32][64] f32 tile (a value goes
// where its position says, the second where both are equal, as on the
// host), X's [64][32] tile is read along whichever of its strides is 1.
// Each sum runs over k in order with separate roundings of product and sum,
// as the host backend's engine does, so for F32 the results are the host's
// bits (exp aside: GELU's expf may differ by an ulp).
#include "sparse24_common.cuh"

namespace bk_sp24 {

#define BK_SP24_GENERAL_BK 32

// The kept values of (row r, group g) of W and their positions.
template <typename T, bool TILED>
static BK_SP24_HD void weight_group(const bk_sp24_gemm_args &p, int64_t r, int64_t g, float (&d)[4])
{
    const char *w = reinterpret_cast<const char *>(p.w);
    float v0, v1;
    unsigned nibble;
    if (TILED) {
        const T *v = reinterpret_cast<const T *>(w) + bk_sp24_value_index(r, g, p.kbs);
        v0 = Elem<T>::in(v[0]);
        v1 = Elem<T>::in(v[1]);
        uint32_t shift;
        const uint64_t at = p.meta_offset + bk_sp24_meta_word(r, g, p.kbs, &shift);
        nibble = *reinterpret_cast<const uint32_t *>(w + at) >> shift;
    } else {
        const T *v = reinterpret_cast<const T *>(w) + r * (p.k / 2) + 2 * g;
        v0 = Elem<T>::in(v[0]);
        v1 = Elem<T>::in(v[1]);
        const uint16_t *e = reinterpret_cast<const uint16_t *>(w + p.meta_offset);
        nibble = (unsigned)e[r * (p.k / 8) + g / 2] >> (8 * (g & 1));
    }
    const unsigned p0 = nibble & 3u, p1 = (nibble >> 2) & 3u;
#pragma unroll
    for (unsigned q = 0; q < 4; q++)
        d[q] = q == p1 ? v1 : q == p0 ? v0 : 0.0f;
}

// One 64 x 64 tile of Y in batch b, in shared [k][m] and [k][n] tiles; the
// odd pitch spreads the column writes over the banks.
template <typename T, typename O, bool TILED>
static __device__ __forceinline__ void general_tile(const bk_sp24_gemm_args &p, int64_t b,
                                                    int64_t m0, int64_t n0)
{
    constexpr int BM = BK_SP24_GENERAL_BM, BN = BK_SP24_GENERAL_BN, BK = BK_SP24_GENERAL_BK;
    constexpr int THREADS = BK_SP24_GENERAL_THREADS;
    __shared__ float ws[BK][BM + 1];
    __shared__ float xs[BK][BN + 1];
    const int tid = (int)threadIdx.x, tm = tid % 16, tn = tid / 16;
    const T *const x = reinterpret_cast<const T *>(p.x) + b * p.x_bs;
    const bool x_n_fast = p.x_cs != 1 && p.x_rs == 1;
    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc[i][j] = 0.0f;

    for (int64_t k0 = 0; k0 < p.k; k0 += BK) {
        // W: 64 rows x 8 groups, two (row, group) items a thread.
#pragma unroll
        for (int it = 0; it < BM * (BK / 4) / THREADS; it++) {
            const int q = tid + it * THREADS, rl = q / (BK / 4), gl = q % (BK / 4);
            const int64_t r = m0 + rl, g = k0 / 4 + gl;
            float d[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
            if (r < p.m && g < p.k / 4)
                weight_group<T, TILED>(p, r, g, d);
#pragma unroll
            for (int e = 0; e < 4; e++)
                ws[4 * gl + e][rl] = d[e];
        }
        // X: 64 rows x 32 columns, along its unit stride.
#pragma unroll
        for (int it = 0; it < BN * BK / THREADS; it++) {
            const int q = tid + it * THREADS;
            const int kl = x_n_fast ? q / BN : q % BK, nl = x_n_fast ? q % BN : q / BK;
            const int64_t n = n0 + nl, k = k0 + kl;
            xs[kl][nl] = n < p.n && k < p.k ? Elem<T>::in(x[n * p.x_rs + k * p.x_cs]) : 0.0f;
        }
        __syncthreads();
        const int kmax = p.k - k0 < BK ? (int)(p.k - k0) : BK;
#pragma unroll 4
        for (int kk = 0; kk < kmax; kk++) {
            float a[4], bx[4];
#pragma unroll
            for (int i = 0; i < 4; i++)
                a[i] = ws[kk][tm + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; j++)
                bx[j] = xs[kk][tn + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int j = 0; j < 4; j++)
                    acc[i][j] = add_rn(acc[i][j], mul_rn(a[i], bx[j]));
        }
        __syncthreads();
    }
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t m = m0 + tm + 16 * i, n = n0 + tn + 16 * j;
            if (m < p.m && n < p.n)
                store_output<O>(p, b, n, m, acc[i][j]);
        }
}

template <typename T, typename O, bool TILED>
static __device__ __forceinline__ void general_gemm(const bk_sp24_gemm_args &p)
{
    const uint32_t tiles = p.m_tiles * p.n_tiles;
    grid_dependency_wait();
    for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z)
        for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            uint32_t mt, nt;
            tile_coords(p, t, mt, nt);
            general_tile<T, O, TILED>(p, b, (int64_t)mt * BK_SP24_GENERAL_BM,
                                      (int64_t)nt * BK_SP24_GENERAL_BN);
        }
}

}  // namespace bk_sp24

// ---- Entry points: bk_sp24_general_<type>_<out> -------------------------------------
#define BK_SP24_GENERAL_ENTRY(tname, T, oname, O, TILED)                                           \
    extern "C" __global__ void __launch_bounds__(BK_SP24_GENERAL_THREADS, 2)                       \
        bk_sp24_general_##tname##_##oname(const __grid_constant__ bk_sp24_gemm_args p)             \
    {                                                                                              \
        bk_sp24::general_gemm<T, O, TILED>(p);                                                     \
    }

BK_SP24_GENERAL_ENTRY(f32, float, f32, float, false)
BK_SP24_GENERAL_ENTRY(f16, __half, f16, __half, true)
BK_SP24_GENERAL_ENTRY(f16, __half, f32, float, true)
BK_SP24_GENERAL_ENTRY(bf16, __nv_bfloat16, bf16, __nv_bfloat16, true)
BK_SP24_GENERAL_ENTRY(bf16, __nv_bfloat16, f32, float, true)
