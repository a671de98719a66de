// SPDX-License-Identifier: Apache-2.0
// W4A16 GEMM on Marlin-layout weights: C[M, N] = A[M, K] @ dequant(B)[K, N]
// with mma.sync.m16n8k16 (sm_80 and later), A and C f16 or bf16.
//
// Small M is bound by reading the weights once, so the kernel is built
// around a ring of shared-memory stages that cp.async keeps filled three
// to five stages ahead (48-80 KiB in flight per CTA, with no registers
// held for it): each stage is 8 k-tiles (16 rows of K) of the CTA's 256
// columns, the scale rows that cover them and the matching columns of A.
// In Marlin's layout a k-tile of a 64-column block is 512 contiguous
// bytes, and lane l's 16 bytes at 16 l are exactly its B fragments for
// the block's four 16 x 16 tiles (kernels/shared/w4a16_layout.h), so a warp reads
// its weights from shared memory with one conflict-free 16-byte load per
// k-tile. Warps: 4 column blocks x 2 groups of 4 k-tiles per stage.
// A is staged with cp.async where its rows are contiguous, else gathered
// element by element (perm applied), and read with ldmatrix.
// Dequantisation: w4a16_dequant.cuh. With zero points (ZP, the
// bk_w4a16_gemm_zp_* and bk_w4a16_gemm_tma_zp_* kernels; taller tiles on
// sm_90a have kernels/w4a16_wgmma.cu's zp form) each scale row has a row
// of packedZeros, which the dequantisation takes as constants: in the
// cp.async pipeline a lane reads its word beside its eight scales from
// global memory one stage ahead and makes them; in the Hopper pipeline the
// producer warp makes them into the stage, so a consumer lane only loads
// its sixteen (the consumers' instructions are the decode kernels' limit).
// The symmetric kernels are compiled without any of it.
//
// The two warp groups of a CTA add their sums through shared memory; the
// CTAs of a cluster (sm_90) split K and add their partial tiles through
// distributed shared memory, each rank reducing a slice of the tile in
// rank order: deterministic, one launch, and no global workspace.
#include "element_types.cuh"
#include "shared_memory_ops.cuh"
#include "w4a16_args.h"
#include "mma_ops.cuh"
#include "w4a16_cluster_sum.cuh"
#include "w4a16_dequant.cuh"
#include "decode_trace.cuh"
#include "w4a16_layout.h"
#include "w4a16_prefetch.cuh"

#if BK_W4A16_HAS_CLUSTERS
#include "tma_ops.cuh"
#endif

namespace {

using bk::w4a16::Dequant;

using bk::Mma;
using bk::load_shared16;

// The eight scale pairs of a lane's 8-half scale vector: half q in both
// halves of pair q.
__device__ __forceinline__ void scale_pairs(const uint4 &s, uint32_t pair[8])
{
    const uint32_t w[4] = { s.x, s.y, s.z, s.w };
#pragma unroll
    for (int q = 0; q < 8; q++)
        pair[q] = __byte_perm(w[q / 2], 0, (q & 1) ? 0x3232 : 0x1010);
}

// The dequantisation constants of the eight zero points of a lane's word
// of packedZeros (nibble q: the column of scale pair q).
struct ZeroPairs {
    uint32_t sub[8], fma[8];
};

template <typename T> __device__ __forceinline__ void zero_pairs(uint32_t word, ZeroPairs &z)
{
#pragma unroll
    for (int q = 0; q < 8; q++)
        Dequant<T>::zero_constants((word >> (4 * q)) & 15u, z.sub[q], z.fma[q]);
}

// HOPPER: the bulk tensor copy pipeline (run_tma), whose stages are whole
// KiB and hold A 128-byte swizzled; else the cp.async one (run). ZP: zero
// points.
template <typename T, int TM, int S, int WARPS, int STAGES, bool HOPPER, bool ZP = false>
struct Gemm {
    static constexpr bool SWAP = TM == 8;              // weights as the mma's A operand
    static constexpr int MT = SWAP ? 1 : TM / 16;      // m16 fragments of A
    static constexpr int NT = SWAP ? 4 : 8;            // accumulator tiles per warp and fragment
    static constexpr int NB = BK_W4A16_NB;
    static constexpr int KG = BK_W4A16_KG(WARPS);
    static constexpr int KW = BK_W4A16_KW(WARPS);      // k-tiles per warp and stage
    static constexpr int SKT = BK_W4A16_STAGE_KT;      // k-tiles per stage
    static constexpr int SK = BK_W4A16_STAGE_K;        // rows of K per stage
    static constexpr int TN = BK_W4A16_TILE_N;
    static constexpr int PITCH = BK_W4A16_A_PITCH;     // elements per A row in a stage
    static constexpr uint32_t W_BYTES = BK_W4A16_W_STAGE_BYTES;
    static constexpr uint32_t S_BYTES = BK_W4A16_S_STAGE_BYTES;
    static constexpr uint32_t STAGE_BYTES =
        HOPPER ? BK_W4A16_TMA_STAGE_BYTES(TM, ZP) : BK_W4A16_STAGE_BYTES(TM);
    static constexpr uint32_t A_OFF = W_BYTES + S_BYTES;  // A's place in a stage
    static constexpr uint32_t Z_OFF = BK_W4A16_TMA_Z_OFF(TM);  // HOPPER && ZP: the zero rows'
    static constexpr uint32_t Z_ROW = BK_W4A16_TMA_Z_ROW_BYTES; // constants (w4a16_args.h)
    static constexpr int THREADS = 32 * WARPS;         // consumers (and cp.async loaders)
    static constexpr int KT_PIECES = TN / 2;           // 16-byte pieces per k-tile of the tile
    static constexpr int W_PIECES = SKT * KT_PIECES / THREADS;   // per thread and stage
    static constexpr int A_PIECES = SK / 8;            // 16-byte pieces per A row and stage
    // The cp.async pipeline's A pieces: how many a thread copies per
    // stage, the rows between them and their distance in a stage.
    struct APieces {
        static constexpr int PER_THREAD = (TM * A_PIECES + THREADS - 1) / THREADS;
        static constexpr int ROW_STEP = THREADS / A_PIECES;
        static constexpr uint32_t DST_STEP = 2 * ROW_STEP * PITCH;
    };
    static_assert(W_PIECES * THREADS == SKT * KT_PIECES, "whole weight pieces");
    static_assert(THREADS % KT_PIECES == 0, "a thread keeps its column piece");
    static_assert(THREADS % A_PIECES == 0, "a thread keeps its A column piece");
    static_assert(!ZP || 16 * KW <= 64, "zero points: two scale rows a warp at most");
    static_assert(!HOPPER || !ZP || Z_OFF + BK_W4A16_TMA_Z_ROWS * Z_ROW <= STAGE_BYTES,
                  "the zero rows' constants fit the stage");

    struct WarpView; // a consumer warp's place in a stage (warp_view)

    const bk_w4a16_gemm_args &p;
    unsigned char *smem;
    uint32_t smem0;                 // shared address of the ring
    int64_t m0, rows;               // first row of the tile, rows of it within M
    int64_t n0;                     // first column of the tile
    int64_t c_begin, c_end;         // the CTA's stages
    int64_t full_end;               // stages before this one lie wholly within K

    // Where this thread's copies of the next stage to load come from and
    // go; the sources advance one stage per load.
    const unsigned char *w_src, *s_src, *a_src;
    uint32_t w_dst, s_dst, a_dst;
    int64_t w_step, s_step;         // bytes between k-tile pairs; scale bytes per stage
    int64_t a_step;                 // bytes between the thread's A rows
    uint32_t w_bytes, s_bytes;      // 16, or 0 past N (zero fill)
    bool s_have;
    int a_rows;                     // rows of A left from the thread's first
    int a_k;                        // first column of K of the thread's A piece in a stage
    int s_k;                        // first row of K of the thread's scale row in a stage

    __device__ Gemm(const bk_w4a16_gemm_args &args, unsigned char *sm) : p(args), smem(sm)
    {
        const int t = threadIdx.x;
        smem0 = bk::shared_address(sm);
        if (HOPPER) { // the ring starts on a KiB (BK_W4A16_TMA_SMEM has the slack)
            const uint32_t pad = (1024u - smem0 % 1024u) % 1024u;
            smem += pad;
            smem0 += pad;
        }
        m0 = (int64_t)blockIdx.z * TM;
        rows = p.m - m0 < TM ? p.m - m0 : TM;
        n0 = (int64_t)blockIdx.x * TN;
        c_begin = (int64_t)blockIdx.y * p.stages / p.splits;
        c_end = (int64_t)(blockIdx.y + 1) * p.stages / p.splits;
        full_end = p.k / SK;

        // Weights: a thread keeps one 16-byte column piece of the tile and
        // takes W_PIECES k-tiles of it, two apart.
        const int piece = t % KT_PIECES, kt0 = t / KT_PIECES;
        const bool w_on = n0 + 64 * (piece / 32) < p.n; // its 64-column block
        w_bytes = w_on ? 16u : 0u;
        w_step = w_on ? (int64_t)(THREADS / KT_PIECES) * 2 * p.n * 4 : 0;
        w_src = reinterpret_cast<const unsigned char *>(p.packed) +
                (w_on ? 4 * ((c_begin * SKT + kt0) * 2 * p.n + 2 * n0 + 4 * piece) : 0);
        w_dst = kt0 * (TN * 8) + 16 * piece;

        // Scales: SK / group rows of TN per stage (grouped only).
        const bool grouped = !(p.flags & BK_W4A16_PER_CHANNEL);
        const int srows = grouped ? SK / p.group : 0;
        const int sr = t / (TN / 8), spiece = t % (TN / 8);
        const bool s_on = n0 + 8 * spiece < p.n;
        s_have = sr < srows;
        s_bytes = s_on ? 16u : 0u;
        s_step = s_on ? (int64_t)srows * p.n * 2 : 0;
        s_src = reinterpret_cast<const unsigned char *>(p.scales) +
                (s_on ? 2 * ((c_begin * srows + sr) * p.n + n0 + 8 * spiece) : 0);
        s_dst = W_BYTES + sr * (TN * 2) + 16 * spiece;
        s_k = sr * p.group;

        // A (contiguous rows): APieces::PER_THREAD pieces of a column piece.
        a_k = 8 * (t % A_PIECES);
        const int r = t / A_PIECES;
        a_rows = (int)rows - r;
        a_step = 2 * (THREADS / A_PIECES) * p.a_rs;
        a_src = reinterpret_cast<const unsigned char *>(p.a) +
                (a_rows > 0 ? 2 * ((m0 + r) * p.a_rs + c_begin * SK + a_k) : 0);
        a_dst = W_BYTES + S_BYTES + 2 * (r * PITCH + a_k);
    }

    __device__ T *a_stage(int b) const
    {
        return reinterpret_cast<T *>(smem + b * STAGE_BYTES + W_BYTES + S_BYTES);
    }

    // Rows of the A stages past M are zero for the whole run.
    __device__ void zero_pad_rows() const
    {
        const int pad = (int)(TM - rows) * PITCH;
        for (int i = threadIdx.x; i < STAGES * pad; i += blockDim.x)
            a_stage(i / pad)[rows * PITCH + i % pad] = T();
    }

    // A's columns of stage c gathered element by element (strided rows or
    // a permutation of K).
    __device__ void gather_a(int64_t c, int b, int first, int step) const
    {
        const int64_t k0 = c * SK;
        const T *a = reinterpret_cast<const T *>(p.a);
        const int32_t *perm = reinterpret_cast<const int32_t *>(p.perm);
        const bool has_perm = p.flags & BK_W4A16_HAS_PERM;
        T *dst = a_stage(b);
        for (int i = first; i < rows * SK; i += step) {
            const int r = i / SK, kk = i % SK;
            const int64_t k = k0 + kk;
            T v = T();
            if (k < p.k) {
                const int64_t src = has_perm ? (int64_t)perm[k] : k;
                // A perm that is no permutation gives unspecified results,
                // but never reads out of bounds.
                if (src >= 0 && src < p.k)
                    v = a[(m0 + r) * p.a_rs + src * p.a_cs];
            }
            dst[r * PITCH + kk] = v;
        }
    }

    // Stage c (the next in order) into ring slot b. Past N the weight and
    // scale copies are zero-filled (their sources then stay at a valid
    // address: see the constructor); a stage that reaches past K takes the
    // checked path, zero-filling there too, and a zero A column meets a
    // zero weight. One cp.async group per stage, empty past the end, so
    // the wait count is always the same.
    __device__ void load_stage(int64_t c, int b)
    {
        if (c >= c_end) {
            bk::cp_async_commit();
            return;
        }
        const uint32_t stage = smem0 + b * STAGE_BYTES;
        const bool vector_a = p.flags & BK_W4A16_A_VECTOR;
        if (c < full_end) {
            const unsigned char *w = w_src;
#pragma unroll
            for (int i = 0; i < W_PIECES; i++, w += w_step)
                bk::cp_async16(stage + w_dst + i * 2 * (TN * 8), w, w_bytes);
            if (s_have)
                bk::cp_async16(stage + s_dst, s_src, s_bytes);
            if (vector_a) {
#pragma unroll
                for (int j = 0; j < APieces::PER_THREAD; j++)
                    if (j * APieces::ROW_STEP < a_rows)
                        bk::cp_async16(stage + a_dst + j * APieces::DST_STEP, a_src + j * a_step,
                                       16u);
            }
        } else {
            const unsigned char *w = w_src;
#pragma unroll
            for (int i = 0; i < W_PIECES; i++, w += w_step) {
                const bool ok = c * SKT + t_kt(i) < p.k / 16;
                bk::cp_async16(stage + w_dst + i * 2 * (TN * 8), ok ? w : w_base(),
                               ok ? w_bytes : 0u);
            }
            if (s_have) {
                const bool ok = c * SK + s_k < p.k;
                bk::cp_async16(stage + s_dst, ok ? s_src : (const unsigned char *)p.scales,
                               ok ? s_bytes : 0u);
            }
            if (vector_a) {
                const bool ok = c * SK + a_k < p.k;
#pragma unroll
                for (int j = 0; j < APieces::PER_THREAD; j++)
                    if (j * APieces::ROW_STEP < a_rows)
                        bk::cp_async16(stage + a_dst + j * APieces::DST_STEP,
                                       ok ? a_src + j * a_step : (const unsigned char *)p.a,
                                       ok ? 16u : 0u);
            }
        }
        if (!vector_a)
            gather_a(c, b, threadIdx.x, THREADS);
        w_src += W_PIECES * w_step;
        s_src += s_step;
        a_src += 2 * SK;
        bk::cp_async_commit();
    }

    // Any valid address, for the zero-filling copies that read nothing.
    __device__ __forceinline__ const void *w_base() const
    {
        return reinterpret_cast<const void *>(p.packed);
    }

    // The k-tile (within a stage) of this thread's weight piece i.
    __device__ __forceinline__ int t_kt(int i) const
    {
        return (int)threadIdx.x / KT_PIECES + i * (THREADS / KT_PIECES);
    }

    // The per-channel scales of the lane's eight columns, in the order of
    // a grouped scale vector.
    __device__ uint4 channel_scales(int cb) const
    {
        const int lane = threadIdx.x % 32;
        const uint16_t *scales = reinterpret_cast<const uint16_t *>(p.scales);
        const int64_t block = n0 + 64 * cb;
        uint32_t h[8];
#pragma unroll
        for (int q = 0; q < 8; q++) {
            const int64_t n = block + 8 * q + lane / 4;
            h[q] = block < p.n ? scales[bk_w4a16_scale_position(n, 1)] : 0u;
        }
        return make_uint4(h[0] | h[1] << 16, h[2] | h[3] << 16, h[4] | h[5] << 16,
                          h[6] | h[7] << 16);
    }

    // The lane's word of packedZeros row g (its column block cb): 8 zero
    // points, nibble q that of scale pair q; 8s past N and past the groups
    // (where the weights and scales are zero-filled).
    __device__ __forceinline__ uint32_t zero_word(int64_t g, int cb, int lane) const
    {
        const int64_t block = n0 + 64 * cb;
        if (block >= p.n || g * p.group >= p.k)
            return 0x88888888u;
        const uint32_t *z = reinterpret_cast<const uint32_t *>(p.zeros);
        return __ldg(z + g * (p.n / 8) + block / 8 + lane / 4);
    }

    // The zero words of the warp's scale rows in stage c: its first row,
    // and the next when a group is shorter than the warp's k-tiles.
    __device__ __forceinline__ void stage_zero_words(int64_t c, const WarpView &v,
                                                     uint32_t zw[2]) const
    {
        if (!ZP || (p.flags & BK_W4A16_PER_CHANNEL) || c >= c_end)
            return;
        const int64_t g = (c * SK + 16 * KW * v.kg) >> v.group_shift;
        zw[0] = zero_word(g, v.cb, v.lane);
        zw[1] = p.group < 16 * KW ? zero_word(g + 1, v.cb, v.lane) : zw[0];
    }

    // The per-channel zero points of the lane's eight columns, in the
    // order of a grouped zero word.
    __device__ uint32_t channel_zeros(int cb) const
    {
        const int lane = threadIdx.x % 32;
        const uint32_t *zeros = reinterpret_cast<const uint32_t *>(p.zeros);
        const int64_t block = n0 + 64 * cb;
        uint32_t w = 0;
#pragma unroll
        for (int q = 0; q < 8; q++) {
            const int64_t n = block + 8 * q + lane / 4;
            const uint32_t z = block < p.n ? (zeros[bk_w4a16_zero_word(n, 1)] >>
                                              (4 * bk_w4a16_zero_nibble(n, 1))) & 15u
                                           : 8u;
            w |= z << (4 * q);
        }
        return w;
    }

    // The zero-point constants of the warp's scale row at its k-tile i in
    // the stage at `stage`: on HOPPER the producer's (w4a16_args.h's
    // layout), else made here from the lane's zero word.
    __device__ __forceinline__ void row_zeros(uint32_t stage, const WarpView &v, int i,
                                              uint32_t word, ZeroPairs &zp) const
    {
        if (!HOPPER) {
            zero_pairs<T>(word, zp);
            return;
        }
        const uint32_t at = stage + Z_OFF + Z_ROW * ((16 * (KW * v.kg + i)) >> v.group_shift) +
                            16 * (8 * v.cb + v.lane / 4);
        const uint4 s0 = load_shared16(at), s1 = load_shared16(at + 512);
        const uint32_t sub[8] = { s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w };
        uint32_t fma[8] = {};
        if (Dequant<T>::HAS_FMA_ZERO) {
            const uint4 f0 = load_shared16(at + 1024), f1 = load_shared16(at + 1536);
            const uint32_t f[8] = { f0.x, f0.y, f0.z, f0.w, f1.x, f1.y, f1.z, f1.w };
#pragma unroll
            for (int q = 0; q < 8; q++)
                fma[q] = f[q];
        }
#pragma unroll
        for (int q = 0; q < 8; q++) {
            zp.sub[q] = sub[q];
            zp.fma[q] = fma[q];
        }
    }

    // Word j of a lane's weight vector, dequantised and scaled: the B
    // fragments {b0, b1} of the 16 x 16 tile's first 8 columns in r[0..1],
    // of its last 8 in r[2..3].
    static __device__ __forceinline__ void weights(uint32_t word, const uint32_t pair[8],
                                                   const ZeroPairs &zp, int j, uint32_t r[4])
    {
        if (ZP)
            Dequant<T>::run_zero(word, r, zp.sub[2 * j], zp.fma[2 * j], zp.sub[2 * j + 1],
                                 zp.fma[2 * j + 1]);
        else
            Dequant<T>::run(word, r);
        r[0] = Dequant<T>::mul(r[0], pair[2 * j]);
        r[1] = Dequant<T>::mul(r[1], pair[2 * j]);
        r[2] = Dequant<T>::mul(r[2], pair[2 * j + 1]);
        r[3] = Dequant<T>::mul(r[3], pair[2 * j + 1]);
    }

    // The warp's k-tiles of the stage at shared address `stage`: column
    // block cb, k-tiles KW kg .. KW kg + KW - 1, at the offsets of v.
    // zw: with ZP, the zero words of the warp's scale rows (stage_zero_words).
    __device__ __forceinline__ void mma_stage(uint32_t stage, const WarpView &v, uint32_t pair[8],
                                              ZeroPairs &zp, const uint32_t zw[2],
                                              float acc[MT][NT][4]) const
    {
        if constexpr (SWAP) {
            mma_stage_sums(stage, v, pair, zp, zw, acc);
            return;
        }
        const uint32_t w_at = v.w_at, s_at = v.s_at;
        const bool grouped = !(p.flags & BK_W4A16_PER_CHANNEL);
        uint4 w[KW];
#pragma unroll
        for (int i = 0; i < KW; i++)
            w[i] = load_shared16(stage + w_at + i * (TN * 8));
        if (grouped) {
            scale_pairs(load_shared16(stage + s_at), pair);
            if (ZP)
                row_zeros(stage, v, 0, zw[0], zp);
        }
#pragma unroll
        for (int i = 0; i < KW; i++) {
            // Groups of 32 or 64 shorter than the warp's k-tiles: the next
            // row (groups are powers of two: masks and shifts, no division
            // in the loop).
            if (grouped && i > 0 && ((16 * i) & (p.group - 1)) == 0) {
                scale_pairs(load_shared16(stage + s_at + (TN * 2) * ((16 * i) >> v.group_shift)),
                            pair);
                if (ZP)
                    row_zeros(stage, v, i, zw[1], zp);
            }
            const uint32_t words[4] = { w[i].x, w[i].y, w[i].z, w[i].w };
            if (SWAP) {
                // B: rows of A as 8 columns, k-tiles i (x2: two 8 x 8 matrices).
                uint32_t b[2];
                bk::ldmatrix_x2(b, a_address(stage, v, 0, i));
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    uint32_t r[4];
                    weights(words[j], pair, zp, j, r);
                    const uint32_t a[4] = { r[0], r[2], r[1], r[3] };
                    Mma<T>::run(acc[0][j], a, b[0], b[1]);
                }
            } else {
                uint32_t a[MT][4];
#pragma unroll
                for (int mi = 0; mi < MT; mi++)
                    bk::ldmatrix_x4(a[mi], a_address(stage, v, mi, i));
#pragma unroll
                for (int j = 0; j < 4; j++) {
                    uint32_t r[4];
                    weights(words[j], pair, zp, j, r);
#pragma unroll
                    for (int mi = 0; mi < MT; mi++) {
                        Mma<T>::run(acc[mi][2 * j], a[mi], r[0], r[1]);
                        Mma<T>::run(acc[mi][2 * j + 1], a[mi], r[2], r[3]);
                    }
                }
            }
        }
    }

    // Tiles of 8 rows (SWAP): a group's products with the weights q - z,
    // exact in the type, are summed in F32 (sum), and the sum is scaled
    // once, acc += s sum, where the group ends and at the end of the
    // warp's k-tiles. Each weight is then (q - z) s exactly, not rounded
    // to A's type: a multiplication a weight fewer, and the decode
    // kernels' consumers are bound by their instructions
    // (doc/design/w4a16.md). BF16 (RAW) takes the weights as 128 + q and
    // sums A's values of each row too (a product with ones, asum), so that
    // sum - (128 + z) asum is the group's sum: no subtraction a weight
    // either. Scales and zero points are read where a sum is added, so no
    // registers hold them in between. pair: per channel, the lane's
    // scales as scale_pairs gives them.
    __device__ __forceinline__ void mma_stage_sums(uint32_t stage, const WarpView &v,
                                                   const uint32_t pair[8], ZeroPairs &zp,
                                                   const uint32_t zw[2],
                                                   float acc[MT][NT][4]) const
    {
        constexpr bool RAW = Dequant<T>::HAS_RAW;
        const bool grouped = !(p.flags & BK_W4A16_PER_CHANNEL);
        uint4 w[KW];
#pragma unroll
        for (int i = 0; i < KW; i++)
            w[i] = load_shared16(stage + v.w_at + i * (TN * 8));
        if (!RAW && grouped && ZP)
            row_zeros(stage, v, 0, zw[0], zp);
        float sum[NT][4] = {}, asum[4] = {};
#pragma unroll
        for (int i = 0; i < KW; i++) {
            if (grouped && i > 0 && ((16 * i) & (p.group - 1)) == 0) {
                add_group(stage, v, i - 1, pair, zp, zw, sum, asum, acc);
                if (!RAW && ZP)
                    row_zeros(stage, v, i, zw[1], zp);
            }
            const uint32_t words[4] = { w[i].x, w[i].y, w[i].z, w[i].w };
            uint32_t b[2]; // rows of A as 8 columns, k-tile i (two 8 x 8 matrices)
            bk::ldmatrix_x2(b, a_address(stage, v, 0, i));
            if (RAW) {
                const uint32_t ones[4] = { Dequant<T>::ONES, Dequant<T>::ONES,
                                           Dequant<T>::ONES, Dequant<T>::ONES };
                Mma<T>::run(asum, ones, b[0], b[1]);
            }
#pragma unroll
            for (int j = 0; j < 4; j++) {
                uint32_t r[4];
                if (RAW)
                    Dequant<T>::raw(words[j], r);
                else if (ZP)
                    Dequant<T>::run_zero(words[j], r, zp.sub[2 * j], zp.fma[2 * j],
                                         zp.sub[2 * j + 1], zp.fma[2 * j + 1]);
                else
                    Dequant<T>::run(words[j], r);
                const uint32_t a[4] = { r[0], r[2], r[1], r[3] };
                Mma<T>::run(sum[j], a, b[0], b[1]);
            }
        }
        add_group(stage, v, KW - 1, pair, zp, zw, sum, asum, acc);
    }

    // acc += s (sum - (128 + z) asum) (RAW) or s sum for the lane's
    // columns, for the group of the warp's k-tile i; sum and asum = 0.
    // Scale q of the lane's eight (half q % 2 of word q / 2) is column 16 t
    // + lane / 4 + 8 (e / 2) of the block for q = 2 t + e / 2 (acc_col);
    // asum[e % 2] is row e % 2 of the lane's two (the same in every column).
    __device__ __forceinline__ void add_group(uint32_t stage, const WarpView &v, int i,
                                              const uint32_t pair[8], ZeroPairs &zp,
                                              const uint32_t zw[2], float sum[NT][4],
                                              float asum[4], float acc[MT][NT][4]) const
    {
        constexpr bool RAW = Dequant<T>::HAS_RAW;
        const bool grouped = !(p.flags & BK_W4A16_PER_CHANNEL);
        uint4 s;
        if (grouped) {
            s = load_shared16(stage + v.s_at + (TN * 2) * ((16 * i) >> v.group_shift));
            if (RAW && ZP)
                row_zeros(stage, v, i, (16 * i) >> v.group_shift ? zw[1] : zw[0], zp);
        } else {
            s = make_uint4(__byte_perm(pair[0], pair[1], 0x5410),
                           __byte_perm(pair[2], pair[3], 0x5410),
                           __byte_perm(pair[4], pair[5], 0x5410),
                           __byte_perm(pair[6], pair[7], 0x5410));
        }
        const uint32_t word[4] = { s.x, s.y, s.z, s.w };
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float scale = Dequant<T>::to_float(word[t], e / 2);
                float x = sum[t][e];
                if (RAW) // zp.sub: 128 + z in both halves
                    x = fmaf(ZP ? -Dequant<T>::to_float(zp.sub[2 * t + e / 2], 0) : -136.f,
                             asum[e % 2], x);
                acc[0][t][e] = fmaf(x, scale, acc[0][t][e]);
                sum[t][e] = 0.f;
            }
#pragma unroll
        for (int e = 0; e < 4; e++)
            asum[e] = 0.f;
    }

    // A consumer warp's offsets within a stage: the weights of column
    // block cb, k-tiles KW kg.., the scale row of k-tile KW kg, and the
    // lane's A fragment row (ldmatrix: x4 of rows lane % 16 at
    // k + 8 (lane / 16), or for SWAP x2 of rows lane % 8 at k + 8 ((lane / 8) % 2)):
    // in the padded rows of the cp.async pipeline the address of its first
    // k-tile; in HOPPER's swizzled boxes its row, and its first 16-byte
    // chunk along K (a_chunk) and the row's swizzle (a_xor) apart.
    struct WarpView {
        int cb, kg, lane, group_shift;
        uint32_t w_at, s_at, a_at;
        int a_chunk, a_xor;
    };
    __device__ WarpView warp_view() const
    {
        WarpView v;
        const int warp = threadIdx.x / 32;
        v.lane = threadIdx.x % 32;
        v.cb = warp % NB;
        v.kg = warp / NB;
        v.w_at = KW * v.kg * (TN * 8) + 512 * v.cb + 16 * v.lane;
        // Groups are 32, 64 or 128 rows (per channel: no scale rows).
        const int group_shift = __ffs(p.group) - 1;
        v.group_shift = group_shift < 16 ? group_shift : 16;
        v.s_at = W_BYTES + (TN * 2) * ((16 * KW * v.kg) >> v.group_shift) +
                 128 * v.cb + 16 * (v.lane / 4);
        const int row = SWAP ? v.lane % 8 : v.lane % 16;
        const int half = SWAP ? (v.lane / 8) % 2 : v.lane / 16;
        v.a_chunk = 2 * KW * v.kg + half;
        v.a_xor = row % 8;
        v.a_at = HOPPER ? A_OFF + 128 * row : A_OFF + 2 * (row * PITCH + 8 * v.a_chunk);
        return v;
    }

    // The lane's ldmatrix address for m16 fragment mi of k-tile i of the
    // warp's k-tiles in the stage at `stage`.
    static __device__ __forceinline__ uint32_t a_address(uint32_t stage, const WarpView &v,
                                                         int mi, int i)
    {
        if (!HOPPER)
            return stage + v.a_at + 2 * (16 * mi * PITCH) + 32 * i;
        const int chunk = v.a_chunk + 2 * i; // 64 rows of K (8 chunks) per box
        return stage + v.a_at + 128 * (16 * mi) + (chunk / 8) * (128 * TM) +
               16 * ((chunk % 8) ^ v.a_xor);
    }

    static __device__ __forceinline__ void zero_acc(float acc[MT][NT][4])
    {
#pragma unroll
        for (int mi = 0; mi < MT; mi++)
#pragma unroll
            for (int t = 0; t < NT; t++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    acc[mi][t][e] = 0.f;
    }

    // The weights, scale rows and zero rows of the CTA's stages from c0 on
    // into L2 while the grid before drains (w4a16_prefetch.cuh), by every
    // warp.
    __device__ void prefetch_stages(int64_t c0) const
    {
        const int64_t want = c0 + BK_W4A16_PREFETCH_STAGES(p.flags);
        bk::w4a16::prefetch_stages<SK, TN>(p, ZP ? p.zeros : 0, n0, c0,
                                           want < c_end ? want : c_end, threadIdx.x / 32,
                                           blockDim.x / 32);
    }

    // The cp.async pipeline (every GPU): all warps load each stage, and a
    // CTA barrier per stage hands the slots over.
    __device__ void run()
    {
        const WarpView v = warp_view();
        float acc[MT][NT][4];
        zero_acc(acc);
        prefetch_stages(c_begin);
        bk::grid_dependency_wait();
        zero_pad_rows();
        uint32_t pair[8];
        ZeroPairs zp;
        uint32_t zw[2] = { 0x88888888u, 0x88888888u };
        if (p.flags & BK_W4A16_PER_CHANNEL) {
            scale_pairs(channel_scales(v.cb), pair);
            if (ZP)
                zero_pairs<T>(channel_zeros(v.cb), zp);
        }
        stage_zero_words(c_begin, v, zw);
        for (int i = 0; i < STAGES - 1; i++)
            load_stage(c_begin + i, i);
        int b = 0;
        for (int64_t c = c_begin; c < c_end; c++) {
            bk::cp_async_wait<STAGES - 2>();
            // Stage c has landed for every thread, and every warp is done
            // with the slot the next load overwrites (stage c - 1's).
            __syncthreads();
            load_stage(c + STAGES - 1, b == 0 ? STAGES - 1 : b - 1);
            // The next stage's zero words load under this stage's work.
            uint32_t zn[2] = { zw[0], zw[1] };
            stage_zero_words(c + 1, v, zn);
            mma_stage(smem0 + b * STAGE_BYTES, v, pair, zp, zw, acc);
            zw[0] = zn[0];
            zw[1] = zn[1];
            b = b == STAGES - 1 ? 0 : b + 1;
        }
        bk::cp_async_wait<0>();
        reduce_and_store(acc, v, true);
    }

#if BK_W4A16_HAS_CLUSTERS
    // The Hopper pipeline: a producer warp (the last) fills each slot by
    // the bulk tensor copy engine (the tensor maps give zeros past K, N
    // and M), and the slot's full barrier completes when all its bytes
    // have landed; the consumer warps each release a slot on its empty
    // barrier, so no warp waits for the others between stages.
    __device__ void run_tma(const bk_w4a16_tma_args &q)
    {
        using namespace bk::hopper;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const uint32_t bars = smem0 + BK_W4A16_TMA_RING_BYTES(TM, ZP);
        const uint64_t trace = trace_base();
        if (threadIdx.x == 0) {
            bk::trace_mark(trace, 0);
            for (int b = 0; b < STAGES; b++) {
                // ZP: the producer's lanes arrive too, their constants written.
                mbar_init(bars + 8 * b, ZP ? 33 : 1);
                mbar_init(bars + 8 * (STAGES + b), WARPS);
            }
            mbar_fence_init();
        }
        // BK_W4A16_EARLY_RING: the weights and scales of the ring's first
        // stages start on their way to shared memory before the wait (the
        // barriers initialised first), A's after it; the L2 prefetch takes
        // the stages after those.
        int64_t early_end = c_begin;
        if (p.flags & BK_W4A16_EARLY_RING) {
            __syncthreads();
            early_end = c_begin + STAGES < c_end ? c_begin + STAGES : c_end;
            for (int64_t c = c_begin; c < early_end && warp == WARPS && lane == 0; c++)
                produce_weights(q, c, smem0 + (c - c_begin) * STAGE_BYTES,
                                bars + 8 * (c - c_begin), stage_scale_rows(), weight_policy());
        }
        prefetch_stages(early_end);
        bk::grid_dependency_wait();
        __syncthreads();
        if (threadIdx.x == 0)
            bk::trace_mark(trace, 1);
        const WarpView v = warp_view();
        float acc[MT][NT][4];
        zero_acc(acc);
        if (warp == WARPS) {
            produce(q, bars, lane, early_end);
        } else {
            uint32_t pair[8];
            ZeroPairs zp;
            const uint32_t zw[2] = { 0x88888888u, 0x88888888u }; // ZP: in the stage
            if (p.flags & BK_W4A16_PER_CHANNEL) {
                scale_pairs(channel_scales(v.cb), pair);
                if (ZP)
                    zero_pairs<T>(channel_zeros(v.cb), zp);
            }
            // Slot b's barriers and stage, and the phase its full barrier
            // completes next, stepped (no division in the loop).
            const int n = (int)(c_end - c_begin);
            uint32_t full = bars, stage = smem0, phase = 0;
            for (int i = 0, b = 0; i < n; i++) {
                mbar_wait(full, phase);
                if (i == 0 && threadIdx.x == 0)
                    bk::trace_mark(trace, 2);
                mma_stage(stage, v, pair, zp, zw, acc);
                __syncwarp();
                if (lane == 0)
                    mbar_arrive(full + 8 * STAGES);
                if (++b == STAGES) {
                    b = 0;
                    full = bars;
                    stage = smem0;
                    phase ^= 1u;
                } else {
                    full += 8;
                    stage += STAGE_BYTES;
                }
            }
            if (threadIdx.x == 0)
                bk::trace_mark(trace, 3);
        }
        reduce_and_store(acc, v, warp < WARPS);
        if (threadIdx.x == 0)
            bk::trace_mark(trace, 4);
    }

    // BK_DECODE_TRACE (kernels/decode_trace.cuh): the tiles of 8 rows'
    // trace, in C past its 16th row (the probe's C has the rows).
    __device__ uint64_t trace_base() const
    {
#ifdef BK_DECODE_TRACE
        return TM == 8 ? p.c + 2ull * 16u * (uint64_t)p.c_rs : 0;
#else
        return 0;
#endif
    }

    // Scale rows a stage (0: per channel).
    __device__ int stage_scale_rows() const
    {
        return (p.flags & BK_W4A16_PER_CHANNEL) ? 0 : SK / p.group;
    }

    // The L2 policy of the weights and scale rows: evict first where one
    // row tile reads them (each byte once: they should leave the L2 before
    // what is read again, A and the next kernel's inputs), else the usual.
    static __device__ __forceinline__ uint64_t weight_policy()
    {
        return gridDim.z == 1 ? bk::l2_evict_first_policy() : bk::l2_evict_normal_policy();
    }

    // Stage c's bytes announced on its full barrier (all of them: weights,
    // srows scale rows and A), and its weights and scale rows brought.
    __device__ void produce_weights(const bk_w4a16_tma_args &q, int64_t c, uint32_t stage,
                                    uint32_t full, int srows, uint64_t policy) const
    {
        using namespace bk::hopper;
        mbar_expect_tx(full, W_BYTES + (uint32_t)srows * (TN * 2) + 2u * (128 * TM));
        tma_load_2d_policy(stage, q.map_w, (int)n0, (int)(c * SKT), full, policy);
        if (srows)
            tma_load_2d_policy(stage + W_BYTES, q.map_s, (int)n0, (int)(c * srows), full, policy);
    }

    // The stages from early_end on whole, those before it (their weights
    // on their way) A only.
    __device__ void produce(const bk_w4a16_tma_args &q, uint32_t bars, int lane,
                            int64_t early_end) const
    {
        using namespace bk::hopper;
        const int srows = stage_scale_rows();
        const uint64_t policy = weight_policy();
        // ZP: every lane takes part (zero_rows); else lane 0 alone.
        const int zrows = (p.flags & BK_W4A16_PER_CHANNEL) ? 0 : SK / p.group;
        uint32_t zw[BK_W4A16_TMA_Z_ROWS];
        if (ZP)
            load_zero_row_words(c_begin, zrows, lane, zw);
        for (int64_t c = c_begin; c < c_end && (ZP || lane == 0); c++) {
            const int i = (int)(c - c_begin), b = i % STAGES, use = i / STAGES;
            const uint32_t stage = smem0 + b * STAGE_BYTES, full = bars + 8 * b;
            if (c >= early_end && use > 0)
                mbar_wait(bars + 8 * (STAGES + b), (uint32_t)(use - 1) & 1u);
            if (lane == 0) {
                if (c >= early_end)
                    produce_weights(q, c, stage, full, srows, policy);
                for (int h = 0; h < 2; h++)
                    tma_load_2d(stage + A_OFF + h * (128 * TM), q.map_a,
                                (int)(c * SK + 64 * h), (int)m0, full);
            }
            if (ZP) {
                uint32_t next[BK_W4A16_TMA_Z_ROWS];
                load_zero_row_words(c + 1, zrows, lane, next);
                zero_rows(stage, zrows, lane, zw);
                mbar_arrive(full);
#pragma unroll
                for (int r = 0; r < (int)BK_W4A16_TMA_Z_ROWS; r++)
                    zw[r] = next[r];
            }
        }
        __syncwarp();
    }

    // ZP: lane t's word of each zero row of stage c (word t of the tile's
    // N/8 in packedZeros; 8s past N, past the groups and past the share).
    __device__ __forceinline__ void load_zero_row_words(int64_t c, int zrows, int t,
                                                        uint32_t zw[BK_W4A16_TMA_Z_ROWS]) const
    {
#pragma unroll
        for (int r = 0; r < (int)BK_W4A16_TMA_Z_ROWS; r++)
            zw[r] = c < c_end && r < zrows ? zero_word(c * zrows + r, t / 8, 4 * (t % 8))
                                           : 0x88888888u;
    }

    // ZP: the constants of lane t's words of the zero rows into the stage
    // at `stage` (w4a16_args.h's layout).
    __device__ __forceinline__ void zero_rows(uint32_t stage, int zrows, int t,
                                              const uint32_t zw[BK_W4A16_TMA_Z_ROWS]) const
    {
#pragma unroll
        for (int r = 0; r < (int)BK_W4A16_TMA_Z_ROWS; r++) {
            if (r >= zrows)
                break;
            ZeroPairs z;
            zero_pairs<T>(zw[r], z);
            const uint32_t at = stage + Z_OFF + Z_ROW * r + 16 * t;
            bk::store_shared16(at, make_uint4(z.sub[0], z.sub[1], z.sub[2], z.sub[3]));
            bk::store_shared16(at + 512, make_uint4(z.sub[4], z.sub[5], z.sub[6], z.sub[7]));
            if (Dequant<T>::HAS_FMA_ZERO) {
                bk::store_shared16(at + 1024, make_uint4(z.fma[0], z.fma[1], z.fma[2], z.fma[3]));
                bk::store_shared16(at + 1536, make_uint4(z.fma[4], z.fma[5], z.fma[6], z.fma[7]));
            }
        }
    }
#endif

    // Element (row, column) of the CTA tile that acc[mi][t][e] holds.
    static __device__ __forceinline__ int acc_row(int mi, int e, int lane)
    {
        return SWAP ? 2 * (lane % 4) + e % 2 : mi * 16 + lane / 4 + 8 * (e / 2);
    }
    static __device__ __forceinline__ int acc_col(int cb, int t, int e, int lane)
    {
        return SWAP ? cb * 64 + 16 * t + lane / 4 + 8 * (e / 2)
                    : cb * 64 + 8 * t + 2 * (lane % 4) + (e % 2);
    }

    // has_acc: a consumer warp (the producer warp only joins the barriers
    // and the stores).
    __device__ void reduce_and_store(float acc[MT][NT][4], const WarpView &v, bool has_acc)
    {
        const int cb = v.cb, kg = has_acc ? v.kg : -1, lane = v.lane;
        float *red = reinterpret_cast<float *>(smem);
        __syncthreads(); // the ring is free
        if (kg > 0) {
#pragma unroll
            for (int mi = 0; mi < MT; mi++)
#pragma unroll
                for (int t = 0; t < NT; t++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        red[(kg - 1) * TM * TN + acc_row(mi, e, lane) * TN +
                            acc_col(cb, t, e, lane)] = acc[mi][t][e];
        }
        __syncthreads();
        // Group 0 adds the others in order and leaves the CTA's partial
        // tile, [TM][TN] floats, at the start of shared memory (each
        // element read and written by the same thread).
        if (kg == 0) {
#pragma unroll
            for (int mi = 0; mi < MT; mi++)
#pragma unroll
                for (int t = 0; t < NT; t++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int at = acc_row(mi, e, lane) * TN + acc_col(cb, t, e, lane);
                        float v = acc[mi][t][e];
#pragma unroll
                        for (int g = 1; g < KG; g++)
                            v += red[(g - 1) * TM * TN + at];
                        red[at] = v;
                    }
        }
        bk::w4a16::store_cluster_sum<T, S, TN>(p, red, rows, m0, n0);
    }
};

} // namespace

// Kernels: bk_w4a16_gemm[_tma]_<type>_m<tile rows>_s<splits>. Clusters need sm_90;
// elsewhere the split kernels are never chosen and trap.
// The compute capability this code is compiled for (10 major + minor),
// which bounds the shared memory of a block (w4a16_args.h).
#ifdef __CUDA_ARCH__
#define BK_W4A16_CC (__CUDA_ARCH__ / 10)
#else
#define BK_W4A16_CC 90
#endif

#if BK_W4A16_HAS_CLUSTERS
#define BK_W4A16_CLUSTER(S) __cluster_dims__(1, S, 1)
#define BK_W4A16_CLUSTER_OK(S) true
#else
#define BK_W4A16_CLUSTER(S)
#define BK_W4A16_CLUSTER_OK(S) ((S) == 1)
#endif

#define BK_W4A16_KERNEL(TNAME, T, TM, S, CLUSTER)                                              \
    extern "C" __global__ void CLUSTER                                                         \
    __launch_bounds__(BK_W4A16_THREADS, BK_W4A16_CTAS_PER_SM(TM))                              \
        bk_w4a16_gemm_##TNAME##_m##TM##_s##S(const bk_w4a16_gemm_args args)                   \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        if (!BK_W4A16_CLUSTER_OK(S)) {                                                         \
            __trap();                                                                          \
        } else {                                                                               \
            Gemm<T, TM, S, BK_W4A16_WARPS, BK_W4A16_STAGES(TM, BK_W4A16_CC), false> g(args,    \
                                                                                     smem);    \
            g.run();                                                                           \
        }                                                                                      \
    }

// The same with zero points: bk_w4a16_gemm_zp_<type>_m<tile rows>_s<splits>.
#define BK_W4A16_ZP_KERNEL(TNAME, T, TM, S, CLUSTER)                                           \
    extern "C" __global__ void CLUSTER                                                         \
    __launch_bounds__(BK_W4A16_THREADS, BK_W4A16_CTAS_PER_SM(TM))                              \
        bk_w4a16_gemm_zp_##TNAME##_m##TM##_s##S(const bk_w4a16_gemm_args args)                \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        if (!BK_W4A16_CLUSTER_OK(S)) {                                                         \
            __trap();                                                                          \
        } else {                                                                               \
            Gemm<T, TM, S, BK_W4A16_WARPS, BK_W4A16_STAGES(TM, BK_W4A16_CC), false, true> g(   \
                args, smem);                                                                   \
            g.run();                                                                           \
        }                                                                                      \
    }

#define BK_W4A16_TMA_KERNEL(TNAME, T, TM, S, CLUSTER)                                          \
    extern "C" __global__ void CLUSTER                                                         \
    __launch_bounds__(BK_W4A16_TMA_THREADS(TM), BK_W4A16_TMA_CTAS_PER_SM(TM))                  \
        bk_w4a16_gemm_tma_##TNAME##_m##TM##_s##S(const __grid_constant__ bk_w4a16_tma_args q) \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        BK_W4A16_TMA_BODY(T, TM, S)                                                            \
    }

// The same with zero points: bk_w4a16_gemm_tma_zp_<type>_m<tile rows>_s<splits>
// (packedZeros at q.a.zeros).
#define BK_W4A16_TMA_ZP_KERNEL(TNAME, T, TM, S, CLUSTER)                                       \
    extern "C" __global__ void CLUSTER                                                         \
    __launch_bounds__(BK_W4A16_TMA_THREADS(TM), BK_W4A16_TMA_CTAS_PER_SM(TM))                  \
        bk_w4a16_gemm_tma_zp_##TNAME##_m##TM##_s##S(                                           \
            const __grid_constant__ bk_w4a16_tma_args q)                                       \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        BK_W4A16_TMA_ZP_BODY(T, TM, S)                                                         \
    }

// The bulk tensor copy engine needs sm_90: elsewhere the TMA kernels are
// never chosen and trap.
#if BK_W4A16_HAS_CLUSTERS
#define BK_W4A16_TMA_BODY(T, TM, S)                                                           \
    Gemm<T, TM, S, BK_W4A16_TMA_WARPS(TM), BK_W4A16_TMA_STAGES(TM), true> g(q.a, smem);        \
    g.run_tma(q);
#define BK_W4A16_TMA_ZP_BODY(T, TM, S)                                                        \
    Gemm<T, TM, S, BK_W4A16_TMA_WARPS(TM), BK_W4A16_TMA_STAGES(TM), true, true> g(q.a, smem);  \
    g.run_tma(q);
#else
#define BK_W4A16_TMA_BODY(T, TM, S) __trap();
#define BK_W4A16_TMA_ZP_BODY(T, TM, S) __trap();
#endif

#define BK_W4A16_SPLIT_KERNELS(KERNEL, TNAME, T, TM)                                         \
    KERNEL(TNAME, T, TM, 1, )                                                                \
    KERNEL(TNAME, T, TM, 2, BK_W4A16_CLUSTER(2))                                             \
    KERNEL(TNAME, T, TM, 3, BK_W4A16_CLUSTER(3))                                             \
    KERNEL(TNAME, T, TM, 4, BK_W4A16_CLUSTER(4))                                             \
    KERNEL(TNAME, T, TM, 5, BK_W4A16_CLUSTER(5))                                             \
    KERNEL(TNAME, T, TM, 6, BK_W4A16_CLUSTER(6))                                             \
    KERNEL(TNAME, T, TM, 7, BK_W4A16_CLUSTER(7))                                             \
    KERNEL(TNAME, T, TM, 8, BK_W4A16_CLUSTER(8))

// Tiles up to 32 rows also have the Hopper pipeline (taller ones are not
// bound by the weights' stream, and their accumulators leave no registers
// for a producer warp).
// The zero-point kernels: the cp.async pipeline at every height, and
// the Hopper one where it exists.
#define BK_W4A16_KERNELS_TM(TNAME, T, TM)                                                    \
    BK_W4A16_SPLIT_KERNELS(BK_W4A16_KERNEL, TNAME, T, TM)                                    \
    BK_W4A16_SPLIT_KERNELS(BK_W4A16_TMA_KERNEL, TNAME, T, TM)                                \
    BK_W4A16_SPLIT_KERNELS(BK_W4A16_ZP_KERNEL, TNAME, T, TM)                                 \
    BK_W4A16_SPLIT_KERNELS(BK_W4A16_TMA_ZP_KERNEL, TNAME, T, TM)

#define BK_W4A16_KERNELS_TYPE(TNAME, T)                                                      \
    BK_W4A16_KERNELS_TM(TNAME, T, 8)                                                         \
    BK_W4A16_KERNELS_TM(TNAME, T, 16)                                                        \
    BK_W4A16_KERNELS_TM(TNAME, T, 32)                                                        \
    BK_W4A16_SPLIT_KERNELS(BK_W4A16_KERNEL, TNAME, T, 64)                                    \
    BK_W4A16_SPLIT_KERNELS(BK_W4A16_ZP_KERNEL, TNAME, T, 64)

BK_W4A16_KERNELS_TYPE(f16, __half)
BK_W4A16_KERNELS_TYPE(bf16, __nv_bfloat16)
