/* The parameter blocks of the W4A16 kernels (ptx/w4a16_*.cu, nvcc),
 * shared with their launchers (lib/cuda/cuda_w4a16*.c, plain C11) so both
 * agree. Addresses are device addresses; strides are in elements. */
#ifndef BK_W4A16_ARGS_H
#define BK_W4A16_ARGS_H

#include <stdint.h>

/* ---- GEMM (ptx/w4a16_gemm.cu) -------------------------------------------
 * A CTA computes a tile of BK_W4A16_TILE_M(mt) rows and 64 * nb columns
 * over its share of K; the CTAs of a cluster (sm_90, splits of 2, 4 or 8
 * along grid y) split K and add their partial tiles through distributed
 * shared memory in rank order. Grid: x = column tiles, y = splits,
 * z = row tiles. */
#define BK_W4A16_THREADS 256
#define BK_W4A16_WARPS (BK_W4A16_THREADS / 32)

#define BK_W4A16_A_VECTOR 0x1u    /* A's rows are k-contiguous, 16-byte aligned, no perm */
#define BK_W4A16_PER_CHANNEL 0x2u
#define BK_W4A16_HAS_PERM 0x4u

/* The tilings: m16 fragments per CTA (mt: 1 or 2; 2 runs one CTA per SM)
 * -> 64-column blocks per CTA (nb)
 * and warps along K (kg = BK_W4A16_WARPS / nb); a chunk is the k-tiles
 * (16 rows of K) the CTA consumes per step, 4 per warp. */
#define BK_W4A16_NB(mt) ((mt) >= 4 ? 4 : 2)
#define BK_W4A16_KG(mt) (BK_W4A16_WARPS / BK_W4A16_NB(mt))
#define BK_W4A16_CHUNK_KT(mt) (4 * BK_W4A16_KG(mt))
#define BK_W4A16_TILE_M(mt) (16 * (mt))
#define BK_W4A16_TILE_N(mt) (64 * BK_W4A16_NB(mt))
/* Shared memory: BK_W4A16_A_STAGES A chunks (A is fetched that many
 * chunks minus one ahead; rows padded by 8 elements against bank
 * conflicts), or later the partial sums of kg - 1 warp groups, or the
 * CTA's partial tile: whichever is largest. */
#define BK_W4A16_A_STAGES 4
#define BK_W4A16_A_PITCH(mt) (16 * BK_W4A16_CHUNK_KT(mt) + 8)
#define BK_W4A16_A_BYTES(mt) \
    (2u * BK_W4A16_A_STAGES * BK_W4A16_TILE_M(mt) * BK_W4A16_A_PITCH(mt))
#define BK_W4A16_RED_BYTES(mt) \
    (4u * (BK_W4A16_KG(mt) - 1u) * BK_W4A16_TILE_M(mt) * BK_W4A16_TILE_N(mt))
#define BK_W4A16_MAX2(a, b) ((a) > (b) ? (a) : (b))
#define BK_W4A16_SMEM(mt) BK_W4A16_MAX2(BK_W4A16_A_BYTES(mt), BK_W4A16_RED_BYTES(mt))

struct bk_w4a16_gemm_args {
    uint64_t a, packed, scales, perm, c;
    int64_t m, n, k;
    int64_t a_rs, a_cs, c_rs, c_cs;
    int32_t group;                /* rows per scale group (k when per channel) */
    uint32_t flags;
    uint32_t chunks;              /* ceil(k / 16 / chunk k-tiles) */
    uint32_t splits;              /* CTAs per cluster along y (1: no cluster) */
};

/* ---- Conversions (ptx/w4a16_convert.cu) ---------------------------------- */
#define BK_W4A16_CONVERT_THREADS 256

/* A plain or GPTQ matrix operand: address and element strides. */
struct bk_w4a16_matrix {
    uint64_t base;
    int64_t rs, cs;
};

struct bk_w4a16_convert_args {
    struct bk_w4a16_matrix weight, quantized, scales, qweight, qzeros;
    uint64_t packed, packed_scales, g_idx, perm, report;
    int64_t k, n, group, groups;
    uint32_t per_channel;
    uint32_t weight_type;         /* BkDataType of weight (quantize) */
    uint32_t scale_bf16;          /* scales are BF16 (else F16) */
    uint32_t zero_offset;         /* GPTQ: added to a stored zero (0 or 1) */
};

#endif /* BK_W4A16_ARGS_H */
