// SPDX-License-Identifier: Apache-2.0
// What the tensor-core attention kernels share (kernels/attention_mma.cu,
// kernels/attention_mma*.cu, kernels/attention_decode.cu): the mma.sync
// wrapper (mma_ops.cuh), 64-row tiles of a compiled width in shared memory
// filled by cp.async or element by element, and the walk over a query
// block's active key tiles.
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

// A tile of 64 rows of a compiled width W (BK_ATTENTION_MMA_WIDTH) in
// shared memory. Where W is a multiple of 64, rows of W * 2 bytes with row
// r's 16-byte chunk c at chunk c ^ (r % 8): the 8 rows an ldmatrix reads
// at one chunk fall in 8 different bank groups. The swizzle needs a
// multiple of 8 chunks a row, so other widths (32, 96, 160) pad each row
// by one chunk instead: W / 8 + 1 chunks, an odd number, puts the same 8
// rows in 8 different bank groups too, for 16 bytes a row.
template <int W> struct Tile {
    static_assert(W % 32 == 0, "widths are multiples of 32");
    static constexpr bool SWIZZLED = W % 64 == 0;
    static constexpr int CHUNKS = W / 8;
    static constexpr int ROW_CHUNKS = BK_ATTENTION_MMA_ROW_BYTES(W) / 16;
    static constexpr int BYTES = BK_ATTENTION_MMA_TILE_BYTES(W);
    static_assert(SWIZZLED ? ROW_CHUNKS == CHUNKS : ROW_CHUNKS % 2 == 1, "bank-conflict free");
    static __device__ __forceinline__ uint32_t offset(int r, int c)
    {
        return (uint32_t)((r * ROW_CHUNKS + (SWIZZLED ? c ^ (r & 7) : c)) * 16);
    }
};
// The kernels of 64 and 128 columns (decode) name it by its layout.
template <int DH> using SwizzledTile = Tile<DH>;

// The shared-memory tile of width W for element type T: Tile for the
// 16-bit types; F32's, FTile, in kernels/attention_tf32.cuh.
template <typename T, int W> struct TileOf {
    using type = Tile<W>;
};

// Rows [r0, r0 + ROWS) of a view into a tile of width W: rows past
// `rows` and columns past `cols` are zero, so they add nothing (V, and
// every product over the padded columns) or are masked (K). With `vec`
// (unit column strides, rows starting on 16-byte boundaries) by
// cp.async, its source size cut at `cols`; else element by element (any
// strides), which the caller's barrier after its cp.async wait publishes
// as well.
template <typename T, int W, int NTHREADS = THREADS, int ROWS = TILE>
static __device__ __forceinline__ void load_tile(uint32_t smem, const View &v, int64_t b,
                                                 int64_t h, int64_t r0, int64_t rows, int cols,
                                                 bool vec)
{
    using L = typename TileOf<T, W>::type;
    constexpr int CHUNKS = L::CHUNKS, PER = 16 / (int)sizeof(T); // elements a chunk
    if (vec) {
#pragma unroll 1 // few registers: it runs while the accumulators are live
        for (int e = threadIdx.x; e < ROWS * CHUNKS; e += NTHREADS) {
            const int r = e / CHUNKS, c = e % CHUNKS, left = cols - c * PER;
            const bool in = r0 + r < rows && left > 0;
            const T *src = at<T>(v, b, h, in ? r0 + r : 0) + (in ? c * PER : 0);
            cp_async16(smem + L::offset(r, c), src,
                       in ? (left >= PER ? 16u : (uint32_t)left * (uint32_t)sizeof(T)) : 0u);
        }
        return;
    }
#pragma unroll 1
    for (int e = threadIdx.x; e < ROWS * CHUNKS; e += NTHREADS) {
        const int r = e / CHUNKS, c = e % CHUNKS;
        const bool in = r0 + r < rows;
        uint32_t w[4];
        if constexpr (sizeof(T) == 4) {
            const uint32_t *src = (const uint32_t *)at<T>(v, b, h, in ? r0 + r : 0);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int j = c * 4 + i;
                w[i] = in && j < cols ? src[j * v.s[3]] : 0u;
            }
        } else { // pairs of 16-bit elements a word
            const uint16_t *src = (const uint16_t *)at<T>(v, b, h, in ? r0 + r : 0);
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int j = c * 8 + 2 * i;
                const uint32_t lo = in && j < cols ? src[j * v.s[3]] : 0u;
                const uint32_t hi = in && j + 1 < cols ? src[(j + 1) * v.s[3]] : 0u;
                w[i] = lo | hi << 16;
            }
        }
        store_shared16(smem + L::offset(r, c), make_uint4(w[0], w[1], w[2], w[3]));
    }
}

// An accumulator of N n-tiles handed from one half of a CTA's warps to
// the other through shared memory: word i of thread t (of THREADS) at
// `at` + 16 THREADS i, `at` the thread's own 16 bytes (conflict-free; no
// layout shared but the register order).
template <int N>
static __device__ __forceinline__ void halves_store(uint32_t at, const float (&x)[N][4])
{
#pragma unroll
    for (int i = 0; i < N; i++)
        store_shared16(at + (uint32_t)(i * THREADS * 16),
                       make_uint4(__float_as_uint(x[i][0]), __float_as_uint(x[i][1]),
                                  __float_as_uint(x[i][2]), __float_as_uint(x[i][3])));
}
template <int N> static __device__ __forceinline__ void halves_add(uint32_t at, float (&x)[N][4])
{
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint4 w = load_shared16(at + (uint32_t)(i * THREADS * 16));
        x[i][0] += __uint_as_float(w.x);
        x[i][1] += __uint_as_float(w.y);
        x[i][2] += __uint_as_float(w.z);
        x[i][3] += __uint_as_float(w.w);
    }
}

// Stores rows row0 + lane / 4 (+ 8) of a 16 x NC accumulator (columns
// col0 ..) times fa (fb for the second row) into a view: columns at or
// past `cols` and rows at or past `rows` are not written. With `vec`
// (unit column stride, 16-byte row starts) pairs of columns as one
// store, else element by element.
template <typename T, int NC>
static __device__ __forceinline__ void store_cols(const View &v, int64_t b, int64_t h,
                                                  int64_t row0, int64_t rows,
                                                  const float (&acc)[NC / 8][4], int col0,
                                                  int cols, float fa, float fb, int lane, bool vec)
{
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int64_t row = row0 + lane / 4 + 8 * half;
        if (row >= rows)
            continue;
        const float f = half ? fb : fa;
        T *dst = at<T>(v, b, h, row);
#pragma unroll
        for (int n = 0; n < NC / 8; n++) {
            const int c = col0 + n * 8 + 2 * (lane % 4);
            if constexpr (sizeof(T) == 4) {
                const float lo = acc[n][2 * half] * f, hi = acc[n][2 * half + 1] * f;
                if (vec && c + 1 < cols) {
                    *(float2 *)(dst + c) = make_float2(lo, hi);
                } else {
                    if (c < cols)
                        dst[c * v.s[3]] = lo;
                    if (c + 1 < cols)
                        dst[(c + 1) * v.s[3]] = hi;
                }
            } else {
                const uint32_t pair = pack2<T>(acc[n][2 * half] * f, acc[n][2 * half + 1] * f);
                if (vec && c + 1 < cols) {
                    *(uint32_t *)(dst + c) = pair;
                } else {
                    if (c < cols)
                        ((uint16_t *)dst)[c * v.s[3]] = (uint16_t)pair;
                    if (c + 1 < cols)
                        ((uint16_t *)dst)[(c + 1) * v.s[3]] = (uint16_t)(pair >> 16);
                }
            }
        }
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
// tile of width DH.
template <int DH>
static __device__ __forceinline__ void load_a(uint32_t (&af)[4], uint32_t tile, int row0, int kk,
                                              int lane)
{
    ldmatrix_x4(af, tile + Tile<DH>::offset(row0 + lane % 16, kk * 2 + lane / 16));
}

// acc (16 x 8 NT) += A (16 x DH) B^T, B rows brow0 .. brow0 + 8 NT - 1 of
// a tile of width DH; A's fragments come from the callable
// a_frag(kk, frag).
template <typename T, int DH, int NT, typename AFrag>
static __device__ __forceinline__ void mma_abt(float (&acc)[NT][4], AFrag a_frag, uint32_t bt,
                                               int brow0, int lane)
{
    // Past 8 k-steps, unrolled by 4: ptxas would otherwise hoist every
    // step's fragment loads beside wide accumulators and spill.
#pragma unroll(DH <= 128 ? DH / 16 : 4)
    for (int kk = 0; kk < DH / 16; kk++) {
        uint32_t af[4];
        a_frag(kk, af);
#pragma unroll
        for (int np = 0; np < NT / 2; np++) {
            uint32_t bf[4];
            ldmatrix_x4(bf, bt + Tile<DH>::offset(brow0 + np * 16 + lane % 8 + 8 * (lane / 16),
                                                  kk * 2 + (lane / 8) % 2));
            Mma<T>::run(acc[2 * np], af, bf[0], bf[1]);
            Mma<T>::run(acc[2 * np + 1], af, bf[2], bf[3]);
        }
    }
}

// acc (16 x NC) += P (16 x 8 NT, F32 in the accumulator layout) B, B rows
// krow0 .. krow0 + 8 NT - 1 (the k dimension) and columns col0 .. col0 +
// NC - 1 of a tile of width W.
template <typename T, int W, int NT, int NC>
static __device__ __forceinline__ void mma_pb_cols(float (&acc)[NC / 8][4],
                                                   const float (&p)[NT][4], uint32_t bt, int krow0,
                                                   int col0, int lane)
{
    static_assert(NC % 16 == 0, "16 columns an ldmatrix");
#pragma unroll
    for (int kk = 0; kk < NT / 2; kk++) {
        const uint32_t pa[4] = {
            pack2<T>(p[2 * kk][0], p[2 * kk][1]),
            pack2<T>(p[2 * kk][2], p[2 * kk][3]),
            pack2<T>(p[2 * kk + 1][0], p[2 * kk + 1][1]),
            pack2<T>(p[2 * kk + 1][2], p[2 * kk + 1][3]),
        };
#pragma unroll
        for (int np = 0; np < NC / 16; np++) {
            uint32_t bf[4];
            ldmatrix_x4_trans(bf, bt + Tile<W>::offset(
                                          krow0 + kk * 16 + lane % 8 + 8 * ((lane / 8) % 2),
                                          col0 / 8 + np * 2 + lane / 16));
            Mma<T>::run(acc[2 * np], pa, bf[0], bf[1]);
            Mma<T>::run(acc[2 * np + 1], pa, bf[2], bf[3]);
        }
    }
}

// acc (16 x DH) += P B over all DH columns of B.
template <typename T, int DH, int NT>
static __device__ __forceinline__ void mma_pb(float (&acc)[DH / 8][4], const float (&p)[NT][4],
                                              uint32_t bt, int krow0, int lane)
{
    mma_pb_cols<T, DH, NT, DH>(acc, p, bt, krow0, 0, lane);
}

// What the kernels written once for every element type T take from it
// besides load_tile and store_cols: the tile layout and the two products
// (one mma.sync each for 16-bit types; F32's, 3xTF32, in
// kernels/attention_tf32.cuh).
template <typename T> struct TileOps {
    template <int W> using Layout = typename TileOf<T, W>::type;
    // acc (16 x 8 NT) += A B^T: A rows arow0 .. arow0 + 15 of a tile at
    // `at`, B rows brow0 .. brow0 + 8 NT - 1 of a tile at bt, both of
    // width W.
    template <int W, int NT>
    static __device__ __forceinline__ void abt(float (&acc)[NT][4], uint32_t at, int arow0,
                                               uint32_t bt, int brow0, int lane)
    {
        mma_abt<T, W, NT>(acc, [&](int kk, uint32_t (&af)[4]) {
            load_a<W>(af, at, arow0, kk, lane);
        }, bt, brow0, lane);
    }
    // acc (16 x NC) += P B, as mma_pb_cols.
    template <int W, int NT, int NC>
    static __device__ __forceinline__ void pb(float (&acc)[NC / 8][4], const float (&p)[NT][4],
                                              uint32_t bt, int krow0, int col0, int lane)
    {
        mma_pb_cols<T, W, NT, NC>(acc, p, bt, krow0, col0, lane);
    }
};

// One tile's online softmax in base 2 for a fragment's two rows (a: g,
// b: g + 8; the 4 lanes of a quad share them): the running maxima m move to
// the tile's, O and the per-lane sums l are rescaled to them, and the
// scores s become P = 2^(s sl2 - m) (0 where masked). The quad adds l up
// once, at the end.
// Two rows' running maxima m_a, m_b moved to at least this lane's mx,
// gathered over the lanes that share the rows (those FIRST, 2 FIRST, ..,
// LAST apart): the new maxima, the bases the exponentials take (0 where a
// row has seen nothing yet) and the factors the old sums and outputs take.
struct MovedMaxima {
    float base_a, base_b, corr_a, corr_b;
};
template <int FIRST, int LAST>
static __device__ __forceinline__ MovedMaxima move_maxima(float2 mx, float &m_a, float &m_b)
{
    float mx_a = mx.x, mx_b = mx.y;
#pragma unroll
    for (int o2 = FIRST; o2 <= LAST; o2 *= 2) {
        mx_a = fmaxf(mx_a, __shfl_xor_sync(0xFFFFFFFFu, mx_a, o2));
        mx_b = fmaxf(mx_b, __shfl_xor_sync(0xFFFFFFFFu, mx_b, o2));
    }
    MovedMaxima r;
    r.base_a = mx_a == -INFINITY ? 0.f : mx_a;
    r.base_b = mx_b == -INFINITY ? 0.f : mx_b;
    r.corr_a = exp2_fast(m_a - r.base_a);
    r.corr_b = exp2_fast(m_b - r.base_b);
    m_a = mx_a;
    m_b = mx_b;
    return r;
}

template <int NT_S, int NT_O>
static __device__ __forceinline__ void online_softmax(float (&s)[NT_S][4], float (&o)[NT_O][4],
                                                      float &m_a, float &m_b, float &l_a,
                                                      float &l_b, const ScoreScale &ss)
{
    const MovedMaxima mm = move_maxima<1, 2>(row_max(s, ss, make_float2(m_a, m_b)), m_a, m_b);
    const float base_a = mm.base_a, base_b = mm.base_b, corr_a = mm.corr_a, corr_b = mm.corr_b;
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
