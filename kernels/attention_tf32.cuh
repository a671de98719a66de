// SPDX-License-Identifier: Apache-2.0
// What the F32 attention kernels on tensor cores share
// (kernels/attention_tf32*.cu): F32 tiles in shared memory, and products
// of F32 accuracy from TF32 ones (3xTF32). Each F32 operand x is split
// into big = x rounded to TF32 (10 mantissa bits) and small = x - big
// rounded to TF32, and a b is taken as big(a) big(b) + big(a) small(b) +
// small(a) big(b), three mma.sync m16n8k8 TF32 products into one F32
// accumulator. What is dropped, small(a) small(b) and the rounding of the
// smalls, is below 2^-21 |a b| a product: F32's accuracy to a few units,
// where one TF32 product (2^-11) would be a thousand times off.
#ifndef BK_ATTENTION_TF32_CUH
#define BK_ATTENTION_TF32_CUH

#include "attention_mma.cuh"

namespace bk {
namespace attention {

// A tile of 64 rows of W floats in shared memory, rows W + 4 floats apart:
// an ldmatrix's 8 rows of 16 bytes fall in 8 bank groups (W / 4 + 1
// chunks a row, odd), and the column loads of mma_pb_f32 (rows 2t and 2t
// + 1, column g of lanes 4g + t) in 32 banks (rows 4 words apart mod 32).
template <int W> struct FTile {
    static_assert(W % 32 == 0, "widths are multiples of 32");
    static constexpr int CHUNKS = W / 4;
    static constexpr int ROW_FLOATS = BK_ATTENTION_TF32_ROW_BYTES(W) / 4;
    static constexpr int BYTES = BK_ATTENTION_TF32_TILE_BYTES(W);
    static_assert(ROW_FLOATS % 32 == 4, "conflict-free column loads");
    static __device__ __forceinline__ uint32_t offset(int r, int c) // c: 16-byte chunk
    {
        return (uint32_t)((r * ROW_FLOATS + c * 4) * 4);
    }
};

// The layout load_tile and store_cols take for F32.
template <int W> struct TileOf<float, W> {
    using type = FTile<W>;
};

// x as big + small, each TF32 (rounded to nearest, ties away).
static __device__ __forceinline__ void split_tf32(uint32_t x, uint32_t &big, uint32_t &small)
{
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(big) : "f"(__uint_as_float(x)));
    const float rest = __uint_as_float(x) - __uint_as_float(big); // exact
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(small) : "f"(rest));
}

// An operand fragment of N registers as its big and small halves.
template <int N> struct Split {
    uint32_t big[N], small[N];
    __device__ __forceinline__ explicit Split(const uint32_t (&x)[N])
    {
#pragma unroll
        for (int i = 0; i < N; i++)
            split_tf32(x[i], big[i], small[i]);
    }
};

// d += a b on 3xTF32: the small products first, then big big.
static __device__ __forceinline__ void mma3_tf32(float (&d)[4], const Split<4> &a,
                                                 const uint32_t (&bb)[2], const uint32_t (&bs)[2])
{
    mma_m16n8k8_tf32(d, a.small, bb[0], bb[1]);
    mma_m16n8k8_tf32(d, a.big, bs[0], bs[1]);
    mma_m16n8k8_tf32(d, a.big, bb[0], bb[1]);
}

// acc (16 x 8 NT) += A B^T: A rows arow0 .. arow0 + 15 of a tile at `at`,
// B rows brow0 .. brow0 + 8 NT - 1 of a tile at bt, both of width W (the
// k dimension). An ldmatrix of 16-bit 8 x 8 matrices reads 8 x 4 floats,
// lane 4g + t getting (g, t): the A and B fragments of m16n8k8 as stored.
template <int W, int NT>
static __device__ __forceinline__ void mma_abt_f32(float (&acc)[NT][4], uint32_t at, int arow0,
                                                   uint32_t bt, int brow0, int lane)
{
    static_assert(NT % 2 == 0, "two n-tiles an ldmatrix");
#pragma unroll(W <= 64 ? W / 8 : W <= 128 ? 4 : 1)
    for (int kk = 0; kk < W / 8; kk++) {
        uint32_t af[4];
        ldmatrix_x4(af, at + FTile<W>::offset(arow0 + lane % 8 + 8 * ((lane / 8) % 2),
                                              kk * 2 + lane / 16));
        const Split<4> a(af);
#pragma unroll
        for (int np = 0; np < NT / 2; np++) {
            uint32_t bf[4];
            ldmatrix_x4(bf, bt + FTile<W>::offset(brow0 + np * 16 + lane % 8 + 8 * (lane / 16),
                                                  kk * 2 + (lane / 8) % 2));
            const Split<4> b(bf);
            mma3_tf32(acc[2 * np], a, {b.big[0], b.big[1]}, {b.small[0], b.small[1]});
            mma3_tf32(acc[2 * np + 1], a, {b.big[2], b.big[3]}, {b.small[2], b.small[3]});
        }
    }
}

// acc (16 x NC) += P B: P 16 x 8 NT in the accumulator layout (lane 4g +
// t holds columns 2t and 2t + 1 of rows g and g + 8 of each n-tile), B
// rows krow0 .. krow0 + 8 NT - 1 (the k dimension) and columns col0 ..
// col0 + NC - 1 of a tile of width W. Each 8-wide k-step takes its keys
// in the order the lanes hold them: A column t is key 2t, column t + 4
// key 2t + 1, so the accumulators are A's fragment as they are, and B's
// rows k t and t + 4 are rows 2t and 2t + 1 of the tile (two column loads).
template <int W, int NT, int NC>
static __device__ __forceinline__ void mma_pb_f32(float (&acc)[NC / 8][4],
                                                  const float (&p)[NT][4], uint32_t bt, int krow0,
                                                  int col0, int lane)
{
    const int g = lane / 4, t = lane % 4;
    const uint32_t base = bt + (uint32_t)(((krow0 + 2 * t) * FTile<W>::ROW_FLOATS + col0 + g) * 4);
#pragma unroll
    for (int kk = 0; kk < NT; kk++) {
        const uint32_t pf[4] = { __float_as_uint(p[kk][0]), __float_as_uint(p[kk][2]),
                                 __float_as_uint(p[kk][1]), __float_as_uint(p[kk][3]) };
        const Split<4> a(pf);
#pragma unroll
        for (int n = 0; n < NC / 8; n++) {
            const uint32_t row = base + (uint32_t)((kk * 8 * FTile<W>::ROW_FLOATS + n * 8) * 4);
            const uint32_t bf[2] = { load_shared32(row),
                                     load_shared32(row + FTile<W>::ROW_FLOATS * 4) };
            const Split<2> b(bf);
            mma3_tf32(acc[n], a, b.big, b.small);
        }
    }
}

// TileOps for F32: FTile layouts, 3xTF32 products.
template <> struct TileOps<float> {
    template <int W> using Layout = FTile<W>;
    template <int W, int NT>
    static __device__ __forceinline__ void abt(float (&acc)[NT][4], uint32_t at, int arow0,
                                               uint32_t bt, int brow0, int lane)
    {
        mma_abt_f32<W, NT>(acc, at, arow0, bt, brow0, lane);
    }
    template <int W, int NT, int NC>
    static __device__ __forceinline__ void pb(float (&acc)[NC / 8][4], const float (&p)[NT][4],
                                              uint32_t bt, int krow0, int col0, int lane)
    {
        mma_pb_f32<W, NT, NC>(acc, p, bt, krow0, col0, lane);
    }
};

} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_TF32_CUH
