// W4A16 GEMM on Marlin-layout weights: C[M, N] = A[M, K] @ dequant(B)[K, N]
// with mma.sync.m16n8k16 (sm_80 and later), A and C f16 or bf16.
//
// Each warp owns one 64-column block of B and, per chunk, four k-tiles
// (16 rows of K each): for every k-tile a lane loads one 16-byte vector
// of the packed weight, which in Marlin's layout is exactly that lane's B
// fragments for the block's four 16 x 16 tiles (lib/w4a16_layout.h). The
// loads go straight to registers, two chunks ahead, so each warp keeps
// 4 KiB of weights in flight with no shared memory traffic for B; the
// weights are streamed once, which is what the small-M case is bound by.
// A is staged in shared memory per chunk (cp.async where its rows are
// contiguous, else gathered, perm applied) and read with ldmatrix.
// Dequantisation is shift-and-or into the exponent of a magic number, as
// Marlin does: (q | 0x6400) is 1024 + q in f16 and (q | 0x4300) 128 + q in
// bf16, so one subtraction gives q - 8 exactly; the scale multiply then
// rounds (q - 8) * s once to A's type, as the host reference does.
//
// The warps of a CTA that share columns split the chunk's k-tiles and add
// their sums through shared memory; the CTAs of a cluster (sm_90) split K
// and add their partial tiles through distributed shared memory, each
// rank reducing a slice of the tile in rank order: deterministic, one
// launch, and no global workspace to clear.
#include "element_types.cuh"
#include "shared_memory_ops.cuh"
#include "w4a16_args.h"
#include "../lib/w4a16_layout.h"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#define BK_W4A16_HAS_CLUSTERS 1
#else
#define BK_W4A16_HAS_CLUSTERS 0
#endif

namespace {

__device__ __forceinline__ uint32_t or_mask(uint32_t w, uint32_t mask, uint32_t ex)
{
    uint32_t r;
    // (w & mask) | ex in one LOP3
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(r) : "r"(w), "r"(mask), "r"(ex));
    return r;
}

template <typename T> struct Dequant;

// f16: nibbles 0 and 4 (bits 0-3, 16-19) are rows 2t, 2t+1 of the first
// 8 columns; nibbles 1 and 5 rows 2t+8, 2t+9 (taken in place, x 16, so
// scaled back by 1/16); >> 8 gives the same for the next 8 columns.
template <> struct Dequant<__half> {
    static __device__ __forceinline__ uint32_t sub(uint32_t x, uint32_t y)
    {
        __half2 r = __hsub2(*reinterpret_cast<__half2 *>(&x), *reinterpret_cast<__half2 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ uint32_t fma(uint32_t x, uint32_t y, uint32_t z)
    {
        __half2 r = __hfma2(*reinterpret_cast<__half2 *>(&x), *reinterpret_cast<__half2 *>(&y),
                            *reinterpret_cast<__half2 *>(&z));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ uint32_t mul(uint32_t x, uint32_t y)
    {
        __half2 r = __hmul2(*reinterpret_cast<__half2 *>(&x), *reinterpret_cast<__half2 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ void run(uint32_t w, uint32_t r[4])
    {
        const uint32_t ex = 0x64006400u, lo = 0x000f000fu, hi = 0x00f000f0u;
        const uint32_t k1032 = 0x64086408u, k1_16 = 0x2c002c00u, km72 = 0xd480d480u;
        const uint32_t w8 = w >> 8;
        r[0] = sub(or_mask(w, lo, ex), k1032);
        r[1] = fma(or_mask(w, hi, ex), k1_16, km72);
        r[2] = sub(or_mask(w8, lo, ex), k1032);
        r[3] = fma(or_mask(w8, hi, ex), k1_16, km72);
    }
};

// bf16 has 7 mantissa bits: 128 + 16 q does not fit, so every nibble
// pair is shifted down to bits 0-3 / 16-19 first.
template <> struct Dequant<__nv_bfloat16> {
    static __device__ __forceinline__ uint32_t sub(uint32_t x, uint32_t y)
    {
        __nv_bfloat162 r = __hsub2(*reinterpret_cast<__nv_bfloat162 *>(&x),
                                   *reinterpret_cast<__nv_bfloat162 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ uint32_t mul(uint32_t x, uint32_t y)
    {
        __nv_bfloat162 r = __hmul2(*reinterpret_cast<__nv_bfloat162 *>(&x),
                                   *reinterpret_cast<__nv_bfloat162 *>(&y));
        return *reinterpret_cast<uint32_t *>(&r);
    }
    static __device__ __forceinline__ void run(uint32_t w, uint32_t r[4])
    {
        const uint32_t ex = 0x43004300u, lo = 0x000f000fu, k136 = 0x43084308u;
        r[0] = sub(or_mask(w, lo, ex), k136);
        r[1] = sub(or_mask(w >> 4, lo, ex), k136);
        r[2] = sub(or_mask(w >> 8, lo, ex), k136);
        r[3] = sub(or_mask(w >> 12, lo, ex), k136);
    }
};

template <typename T> struct Mma;
template <> struct Mma<__half> {
    static __device__ __forceinline__ void run(float d[4], const uint32_t a[4], uint32_t b0,
                                               uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};
template <> struct Mma<__nv_bfloat16> {
    static __device__ __forceinline__ void run(float d[4], const uint32_t a[4], uint32_t b0,
                                               uint32_t b1)
    {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
};

__device__ __forceinline__ uint4 load_stream(const void *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

__device__ __forceinline__ uint4 load_cached(const void *p)
{
    uint4 v;
    asm volatile("ld.global.nc.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// Half q (0..7) of an 8-half vector, in both halves of a register.
__device__ __forceinline__ uint32_t scale_pair(const uint4 &s, int q)
{
    const uint32_t w = q < 2 ? s.x : q < 4 ? s.y : q < 6 ? s.z : s.w;
    return __byte_perm(w, 0, (q & 1) ? 0x3232 : 0x1010);
}

// Every nibble 8: the weight 0, for k-tiles past K.
#define ZERO_WORDS make_uint4(0x88888888u, 0x88888888u, 0x88888888u, 0x88888888u)

template <typename T, int MT, int S> struct Gemm {
    static constexpr int NB = BK_W4A16_NB(MT);
    static constexpr int KG = BK_W4A16_KG(MT);
    static constexpr int CH = BK_W4A16_CHUNK_KT(MT);   // k-tiles per chunk
    static constexpr int TM = BK_W4A16_TILE_M(MT);
    static constexpr int TN = BK_W4A16_TILE_N(MT);
    static constexpr int PITCH = BK_W4A16_A_PITCH(MT); // elements per A row in shared memory
    static constexpr int CK = 16 * CH;                 // k per chunk

    const bk_w4a16_gemm_args &p;
    T *sa;                          // BK_W4A16_A_STAGES A chunks
    int64_t m0, rows;               // first row of the tile, rows of it within M
    int64_t kt_total;

    __device__ Gemm(const bk_w4a16_gemm_args &args, unsigned char *smem)
        : p(args), sa(reinterpret_cast<T *>(smem))
    {
        m0 = (int64_t)blockIdx.z * TM;
        rows = p.m - m0 < TM ? p.m - m0 : TM;
        kt_total = p.k / 16;
    }

    // Rows of the A buffers past M are zero for the whole run.
    __device__ void zero_pad_rows()
    {
        for (int i = threadIdx.x; i < BK_W4A16_A_STAGES * (TM - rows) * PITCH;
             i += BK_W4A16_THREADS) {
            const int b = i / ((TM - rows) * PITCH), rest = i % ((TM - rows) * PITCH);
            sa[b * TM * PITCH + (rows + rest / PITCH) * PITCH + rest % PITCH] = T();
        }
    }

    // A[m0 .. m0 + rows, chunk c] into buffer b: 16-byte cp.async pieces,
    // or element by element through perm and strides.
    __device__ void load_a(int64_t c, int64_t c_end, int b)
    {
        if (c >= c_end) {
            bk::cp_async_commit();
            return;
        }
        T *dst = sa + b * TM * PITCH;
        const int64_t k0 = c * CK;
        const T *a = reinterpret_cast<const T *>(p.a);
        if (p.flags & BK_W4A16_A_VECTOR) {
            constexpr int PIECES = CK / 8;
            for (int i = threadIdx.x; i < rows * PIECES; i += BK_W4A16_THREADS) {
                const int r = i / PIECES, piece = i % PIECES;
                const int64_t k = k0 + 8 * piece;
                // Past K: zero-filled (no byte read from a).
                bk::cp_async16(bk::shared_address(dst + r * PITCH + 8 * piece),
                               k < p.k ? a + (m0 + r) * p.a_rs + k : a, k < p.k ? 16u : 0u);
            }
        } else {
            const int32_t *perm = reinterpret_cast<const int32_t *>(p.perm);
            const bool has_perm = p.flags & BK_W4A16_HAS_PERM;
            for (int i = threadIdx.x; i < rows * CK; i += BK_W4A16_THREADS) {
                const int r = i / CK, kk = i % CK;
                const int64_t k = k0 + kk;
                T v = T();
                if (k < p.k) {
                    int64_t src = has_perm ? (int64_t)perm[k] : k;
                    // A perm that is no permutation gives unspecified
                    // results, but never reads out of bounds.
                    if (src >= 0 && src < p.k)
                        v = a[(m0 + r) * p.a_rs + src * p.a_cs];
                }
                dst[r * PITCH + kk] = v;
            }
        }
        bk::cp_async_commit();
    }

    // The warp's four k-tiles of chunk c: weights, and the scale rows of
    // its first and last two k-tiles.
    __device__ void load_b(int64_t c, int64_t c_end, int kg, int64_t nblock, bool col_ok,
                           uint4 w[4], uint4 s[2]) const
    {
        const int lane = threadIdx.x % 32;
        const uint32_t *packed = reinterpret_cast<const uint32_t *>(p.packed);
        const T *scales = reinterpret_cast<const T *>(p.scales);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int64_t kt = c * CH + kg * 4 + i;
            if (c < c_end && col_ok && kt < kt_total)
                w[i] = load_stream(packed + kt * 2 * p.n + 128 * nblock + 4 * lane);
            else
                w[i] = ZERO_WORDS;
        }
        if (p.flags & BK_W4A16_PER_CHANNEL)
            return;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t kt = c * CH + kg * 4 + 2 * h;
            if (c < c_end && col_ok && kt < kt_total)
                s[h] = load_cached(scales + (kt * 16 / p.group) * p.n + 64 * nblock +
                                   8 * (lane / 4));
            else
                s[h] = make_uint4(0, 0, 0, 0);
        }
    }

    // The per-channel scales of the lane's eight columns, in the order of
    // a grouped scale vector.
    __device__ uint4 channel_scales(int64_t nblock, bool col_ok) const
    {
        const int lane = threadIdx.x % 32;
        const uint16_t *scales = reinterpret_cast<const uint16_t *>(p.scales);
        uint32_t h[8];
#pragma unroll
        for (int q = 0; q < 8; q++) {
            const int64_t n = 64 * nblock + 8 * q + lane / 4;
            h[q] = col_ok ? scales[bk_w4a16_scale_position(n, 1)] : 0u;
        }
        return make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16,
                          h[6] | h[7] << 16);
    }

    __device__ void mma_chunk(int b, int kg, const uint4 w[4], const uint4 s[2],
                              float acc[MT][8][4]) const
    {
        const int lane = threadIdx.x % 32;
        const T *buf = sa + b * TM * PITCH;
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int ko = (kg * 4 + i) * 16;
            uint32_t a[MT][4];
#pragma unroll
            for (int mi = 0; mi < MT; mi++)
                bk::ldmatrix_x4(a[mi], bk::shared_address(buf + (mi * 16 + lane % 16) * PITCH +
                                                          ko + (lane / 16) * 8));
            const uint32_t words[4] = { w[i].x, w[i].y, w[i].z, w[i].w };
            const uint4 &sv = s[i / 2];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                uint32_t r[4];
                Dequant<T>::run(words[j], r);
                const uint32_t s0 = scale_pair(sv, 2 * j), s1 = scale_pair(sv, 2 * j + 1);
                r[0] = Dequant<T>::mul(r[0], s0);
                r[1] = Dequant<T>::mul(r[1], s0);
                r[2] = Dequant<T>::mul(r[2], s1);
                r[3] = Dequant<T>::mul(r[3], s1);
#pragma unroll
                for (int mi = 0; mi < MT; mi++) {
                    Mma<T>::run(acc[mi][2 * j], a[mi], r[0], r[1]);
                    Mma<T>::run(acc[mi][2 * j + 1], a[mi], r[2], r[3]);
                }
            }
        }
    }

    __device__ void run(unsigned char *smem)
    {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int nbw = warp % NB, kg = warp / NB;
        const int64_t nblock = (int64_t)blockIdx.x * NB + nbw;
        const bool col_ok = nblock * 64 < p.n;
        const int64_t c_begin = (int64_t)blockIdx.y * p.chunks / p.splits;
        const int64_t c_end = (int64_t)(blockIdx.y + 1) * p.chunks / p.splits;

        float acc[MT][8][4];
#pragma unroll
        for (int mi = 0; mi < MT; mi++)
#pragma unroll
            for (int t = 0; t < 8; t++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    acc[mi][t][e] = 0.f;

        bk::grid_dependency_wait();
        zero_pad_rows();
        uint4 w0[4], w1[4], s0[2], s1[2];
        const bool per_channel = p.flags & BK_W4A16_PER_CHANNEL;
        if (per_channel) {
            s0[0] = s0[1] = s1[0] = s1[1] = channel_scales(nblock, col_ok);
        }
        // A runs BK_W4A16_A_STAGES - 1 chunks ahead (one cp.async group per
        // chunk, empty past the end, so the wait count is always the same).
        for (int i = 0; i < BK_W4A16_A_STAGES - 1; i++)
            load_a(c_begin + i, c_end, i);
        load_b(c_begin, c_end, kg, nblock, col_ok, w0, s0);
        load_b(c_begin + 1, c_end, kg, nblock, col_ok, w1, s1);

        // Chunk c computes from A buffer (c - c_begin) % stages and the
        // register set of parity (c - c_begin) % 2; two steps per trip keep
        // the register sets named at compile time.
        auto step = [&](int64_t c, uint4 w[4], uint4 s[2]) {
            const int b = (int)((c - c_begin) % BK_W4A16_A_STAGES);
            const int ahead = BK_W4A16_A_STAGES - 1;
            load_a(c + ahead, c_end, (b + ahead) % BK_W4A16_A_STAGES);
            bk::cp_async_wait<BK_W4A16_A_STAGES - 1>();
            __syncthreads();
            mma_chunk(b, kg, w, s, acc);
            load_b(c + 2, c_end, kg, nblock, col_ok, w, s);
            __syncthreads();
        };
        for (int64_t c = c_begin; c < c_end; c += 2) {
            step(c, w0, s0);
            if (c + 1 < c_end)
                step(c + 1, w1, s1);
        }
        reduce_and_store(smem, acc, nbw, kg, lane);
    }

    // Element (row, column) of the CTA tile that acc[mi][t][e] holds.
    static __device__ __forceinline__ int acc_row(int mi, int e, int lane)
    {
        return mi * 16 + lane / 4 + 8 * (e / 2);
    }
    static __device__ __forceinline__ int acc_col(int nbw, int t, int e, int lane)
    {
        return nbw * 64 + 8 * t + 2 * (lane % 4) + (e % 2);
    }

    // The warp's sums into a [TM][TN] float tile in shared memory.
    static __device__ __forceinline__ void store_tile(float *tile, const float acc[MT][8][4],
                                                      int nbw, int lane)
    {
#pragma unroll
        for (int mi = 0; mi < MT; mi++)
#pragma unroll
            for (int t = 0; t < 8; t++)
#pragma unroll
                for (int e = 0; e < 4; e += 2)
                    *reinterpret_cast<float2 *>(
                        &tile[acc_row(mi, e, lane) * TN + acc_col(nbw, t, e, lane)]) =
                        make_float2(acc[mi][t][e], acc[mi][t][e + 1]);
    }

    __device__ void reduce_and_store(unsigned char *smem, float acc[MT][8][4], int nbw, int kg,
                                     int lane)
    {
        float *red = reinterpret_cast<float *>(smem);
        __syncthreads();
        if (KG > 1 && kg > 0)
            store_tile(red + (kg - 1) * TM * TN, acc, nbw, lane);
        __syncthreads();
        if (kg == 0) {
#pragma unroll
            for (int g = 1; g < KG; g++)
#pragma unroll
                for (int mi = 0; mi < MT; mi++)
#pragma unroll
                    for (int t = 0; t < 8; t++)
#pragma unroll
                        for (int e = 0; e < 4; e++)
                            acc[mi][t][e] += red[(g - 1) * TM * TN + acc_row(mi, e, lane) * TN +
                                                 acc_col(nbw, t, e, lane)];
        }
        __syncthreads();
        // The CTA's partial tile, [TM][TN] floats at the start of shared memory.
        if (kg == 0)
            store_tile(red, acc, nbw, lane);
        const int64_t elements = rows * TN;
        int64_t begin = 0, end = elements;
#if BK_W4A16_HAS_CLUSTERS
        namespace cg = cooperative_groups;
        cg::cluster_group cluster = cg::this_cluster();
        if (S > 1) {
            cluster.sync();
            const unsigned rank = cluster.block_rank();
            begin = elements * rank / S;
            end = elements * (rank + 1) / S;
        } else {
            __syncthreads();
        }
#else
        __syncthreads();
#endif
        T *c = reinterpret_cast<T *>(p.c);
        const int64_t n0 = (int64_t)blockIdx.x * TN;
        for (int64_t e = begin + threadIdx.x; e < end; e += BK_W4A16_THREADS) {
            const int64_t r = e / TN, col = e % TN;
            float v = red[e];
#if BK_W4A16_HAS_CLUSTERS
            if (S > 1) {
                v = 0.f;
#pragma unroll
                for (int q = 0; q < S; q++)
                    v += cluster.map_shared_rank(red, q)[e];
            }
#endif
            if (n0 + col < p.n)
                c[(m0 + r) * p.c_rs + (n0 + col) * p.c_cs] = bk::Storage<T>::out(v);
        }
#if BK_W4A16_HAS_CLUSTERS
        if (S > 1)
            cluster.sync(); // the other ranks read this CTA's tile until here
#endif
    }
};

} // namespace

// Kernels: bk_w4a16_gemm_<type>_m<mt>_s<splits>. Clusters need sm_90;
// elsewhere the split kernels are never chosen and trap.
#if BK_W4A16_HAS_CLUSTERS
#define BK_W4A16_CLUSTER(S) __cluster_dims__(1, S, 1)
#define BK_W4A16_CLUSTER_OK(S) true
#else
#define BK_W4A16_CLUSTER(S)
#define BK_W4A16_CLUSTER_OK(S) ((S) == 1)
#endif

#define BK_W4A16_KERNEL(TNAME, T, MT, S, CLUSTER)                                              \
    extern "C" __global__ void CLUSTER __launch_bounds__(BK_W4A16_THREADS, (MT) >= 2 ? 1 : 2) \
        bk_w4a16_gemm_##TNAME##_m##MT##_s##S(const bk_w4a16_gemm_args args)                   \
    {                                                                                          \
        extern __shared__ __align__(16) unsigned char smem[];                                  \
        if (!BK_W4A16_CLUSTER_OK(S)) {                                                         \
            __trap();                                                                          \
        } else {                                                                               \
            Gemm<T, MT, S> g(args, smem);                                                      \
            g.run(smem);                                                                       \
        }                                                                                      \
    }

#define BK_W4A16_KERNELS_MT(TNAME, T, MT)                                                    \
    BK_W4A16_KERNEL(TNAME, T, MT, 1, )                                                       \
    BK_W4A16_KERNEL(TNAME, T, MT, 2, BK_W4A16_CLUSTER(2))                                    \
    BK_W4A16_KERNEL(TNAME, T, MT, 4, BK_W4A16_CLUSTER(4))                                    \
    BK_W4A16_KERNEL(TNAME, T, MT, 8, BK_W4A16_CLUSTER(8))

#define BK_W4A16_KERNELS_TYPE(TNAME, T)                                                      \
    BK_W4A16_KERNELS_MT(TNAME, T, 1)                                                         \
    BK_W4A16_KERNELS_MT(TNAME, T, 2)

BK_W4A16_KERNELS_TYPE(f16, __half)
BK_W4A16_KERNELS_TYPE(bf16, __nv_bfloat16)
