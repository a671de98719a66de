/* SPDX-License-Identifier: Apache-2.0 */
/* Marlin's packed int4 layout as index arithmetic, shared by the host
 * backend's packer and unpacker and the CUDA kernels (plain C, no
 * dependencies, so kernels/ can include it too). bk-w4a16(7) says the same in
 * words.
 *
 * packed is I32 [K/16, 2N]. Row k/16 holds the 16 rows k/16*16 .. +15 of
 * the weight; within it each block of 64 columns takes 128 words, and
 * word 4 * lane + j of a block holds, for mma lane
 * lane = 4 * (n % 8) + (k % 8) / 2, the eight values of the 16 x 16 tile
 * j = (n % 64) / 16 that an m16n8k16 B fragment of that lane needs:
 * rows 2t, 2t+1, 2t+8, 2t+9 (t = lane % 4) of columns n % 8 and n % 8 + 8.
 * The nibbles interleave them so that bits 0-3 and 16-19 (one f16x2 pair
 * after a shift-free dequantisation) are rows 2t and 2t+1. */
#ifndef BK_W4A16_LAYOUT_H
#define BK_W4A16_LAYOUT_H

#include <stdint.h>

#ifdef __CUDACC__
#define BK_W4A16_FN static __host__ __device__ __forceinline__
#else
#define BK_W4A16_FN static inline
#endif

/* Word of element (k, n) within packed row k / 16 (that row has 2N words). */
BK_W4A16_FN int64_t bk_w4a16_word(int64_t k, int64_t n)
{
    return 128 * (n / 64) + 16 * (n % 8) + 4 * ((k % 8) / 2) + (n % 64) / 16;
}

/* Nibble (0..7) of element (k, n) in its word: bits 4 * nibble .. +3. */
BK_W4A16_FN int bk_w4a16_nibble(int64_t k, int64_t n)
{
    return (int)(4 * (k % 2) + 2 * ((n % 16) / 8) + (k % 16) / 8);
}

/* Position of column n's scale within a packedScales row: grouped scales
 * are permuted within blocks of 64 columns, per-channel ones within
 * blocks of 32. */
BK_W4A16_FN int64_t bk_w4a16_scale_position(int64_t n, int per_channel)
{
    if (per_channel)
        return 32 * (n / 32) + 8 * ((n % 8) / 2) + 2 * ((n % 32) / 8) + n % 2;
    return 64 * (n / 64) + 8 * (n % 8) + (n % 64) / 8;
}

/* Zero points (packedZeros, I32 [G, N/8]): column n's is in the nibble
 * of its row that has the index of its scale's position p, word p / 8,
 * bits 4 (p % 8) .. +3; so the word a lane of the GEMM reads beside its
 * eight grouped scales (positions 8w .. 8w + 7) holds their zero points
 * in the same order. */
BK_W4A16_FN int64_t bk_w4a16_zero_word(int64_t n, int per_channel)
{
    return bk_w4a16_scale_position(n, per_channel) / 8;
}

BK_W4A16_FN int bk_w4a16_zero_nibble(int64_t n, int per_channel)
{
    return (int)(bk_w4a16_scale_position(n, per_channel) % 8);
}

/* AWQ's order of eight columns in a 32-bit word: column c of the eight is
 * in nibble 4 (c % 2) + c / 2 (the nibbles hold columns 0, 2, 4, 6, 1, 3,
 * 5, 7). */
BK_W4A16_FN int bk_w4a16_awq_nibble(int c)
{
    return 4 * (c % 2) + c / 2;
}

#endif /* BK_W4A16_LAYOUT_H */
