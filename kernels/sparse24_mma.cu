// SPDX-License-Identifier: Apache-2.0
// Module sparse24_mma: the 2:4 sparse GEMM on sparse tensor cores (sm_80
// and later), Y[b, n, m] = act(alpha X[b, n, :] . W[m, :] + beta C + bias),
// for F16 and BF16 with f32 sums.
//
// One CTA computes a BM (m) x BN (n) tile of Y with mma.sp::ordered_metadata
// .m16n8k32 (PTX ISA 9.7.14.6): the sparse A operand is a 16 x 32 tile of W
// (rows: output features), B is X^T (X's rows run along k: the "col" layout).
// K goes in steps of 64 through a STAGES-deep cp.async pipeline: X tiles
// [BN][64] (16-byte chunks swizzled, zero-filled past N and K) and the
// prepared W tiles (sparse24_args.h): each lane loads its A fragment with
// one ldmatrix.x4 and its metadata word with one 4-byte load; B comes from
// ldmatrix.x4, one n8 x k32 fragment per instruction. Warps split the tile WM (m) x WN (n). The
// epilogue goes through shared memory so that each warp writes 32
// consecutive elements of Y along its unit-stride dimension.
//
// X comes in with cp.async when its k stride is 1 and its rows are 16-byte
// aligned (the launcher checks, per run for the address), else through
// registers with any strides (the _strided kernels); the sums are the same
// either way, in a fixed order: no atomics, the same bits on every run.
// Launch bounds hold every tiling to 128 registers a thread (512 threads
// an SM): two 256-thread CTAs share an SM.
#include "shared_memory_ops.cuh"
#include "sparse24_common.cuh"

namespace bk_sp24 {

using bk::cp_async16;
using bk::cp_async_commit;
using bk::cp_async_wait;
using bk::ldmatrix_x4;
using bk::shared_address;

template <int BM_, int BN_, int WM_, int WN_, int STAGES_> struct Tiling {
    static constexpr int BM = BM_, BN = BN_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int THREADS = WM * WN * 32;
    static constexpr int KSUB = 2;                  // k32 blocks per 64-wide k step
    static constexpr int MTILES = BM / 16;          // 16-row W tiles per CTA
    static constexpr int WTM = BM / WM / 16;        // m16 tiles per warp
    static constexpr int WTN = BN / WN / 8;         // n8 tiles per warp
    static constexpr int X_BYTES = BN * 128;
    static constexpr int A_BYTES = MTILES * KSUB * BK_SP24_TILE_BYTES;
    static constexpr int E_BYTES = MTILES * KSUB * BK_SP24_META_BYTES;
    static constexpr int STAGE_BYTES = X_BYTES + A_BYTES + E_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES;
    static constexpr int X_LOADS = BN * 8 / THREADS;             // 16-byte copies per thread
    static constexpr int A_LOADS = MTILES * KSUB * 32 / THREADS;
    static constexpr int E_COPIES = MTILES * KSUB * 4;           // threads below copy one
    static constexpr int OUT_PITCH = BM + 4;        // floats: conflict-free fragment stores
    static_assert(BK_SP24_PAD_M % BM == 0, "the prepared rows are padded to whole CTA tiles");
    static_assert(BM % (16 * WM) == 0 && BN % (8 * WN) == 0, "warps tile the CTA tile");
    static_assert(BM % 32 == 0, "OUT_PITCH % 32 == 4");
    static_assert(X_LOADS * THREADS == BN * 8 && A_LOADS * THREADS == MTILES * KSUB * 32 &&
                      E_COPIES <= THREADS, "copies divide evenly");
    static_assert(BN * OUT_PITCH * 4 <= SMEM_BYTES, "the epilogue tile fits the pipeline");
    static_assert(SMEM_BYTES == BK_SP24_MMA_SMEM(BM, BN, STAGES), "the launcher's size");
    static_assert(BK_SP24_PAD_K == 32 * KSUB, "the prepared columns fill whole k steps");
};

// ---- PTX wrappers ---------------------------------------------------------------
// A host program that defines BK_SP24_EMULATION brings its own (warp-
// collective ones emulated by the PTX ISA's rules) and runs mma_tile.
#ifndef BK_SP24_EMULATION
static __device__ __forceinline__ void cta_barrier()
{
    __syncthreads();
}

static __device__ __forceinline__ void st_shared16(uint32_t address, const uint32_t (&v)[4])
{
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(address), "r"(v[0]), "r"(v[1]),
                 "r"(v[2]), "r"(v[3])
                 : "memory");
}

#endif  // BK_SP24_EMULATION

// ---- The kernel body -------------------------------------------------------------
// What one thread copies into each pipeline stage: X chunks (row q / 8,
// chunk q % 8 of the [BN][64] tile, q = tid + i THREADS), 16-byte pieces of
// the W value tiles (per tile row: KSUB tiles, contiguous in the weight)
// and, for the first E_COPIES threads, of their metadata tiles.
template <class G> struct Copies {
    const char *x_row[G::X_LOADS];  // the first element of the X row
    uint32_t x_dst[G::X_LOADS], x_k[G::X_LOADS];
    bool x_live[G::X_LOADS];        // the row is < N
    const char *a_src[G::A_LOADS];
    const char *e_src;
};

template <class G>
BK_SP24_DEV void plan_copies(const bk_sp24_gemm_args &p, int64_t b, int64_t m0, int64_t n0,
                             uint32_t tid, Copies<G> &cp)
{
    const char *x = reinterpret_cast<const char *>(p.x);
    const char *w = reinterpret_cast<const char *>(p.w);
#pragma unroll
    for (int i = 0; i < G::X_LOADS; i++) {
        const uint32_t q = tid + i * G::THREADS, r = q >> 3, c = q & 7;
        cp.x_live[i] = n0 + r < p.n;
        cp.x_row[i] = x + 2 * (b * p.x_bs + (cp.x_live[i] ? n0 + r : 0) * p.x_rs);
        cp.x_dst[i] = bk_sp24_x_chunk(r, c);
        cp.x_k[i] = c * 8;
    }
    // A CTA's tile rows lie in one stage-major block (BM divides 128): a
    // tile row's two tiles of a k step are 1 KiB together, the next k
    // step's BK_SP24_STEP_TILES tiles on.
    const int64_t tile_row = m0 / 16;
    static_assert(BK_SP24_BLOCK_TILE_ROWS % G::MTILES == 0 && G::KSUB == 2,
                  "a CTA's rows in one block of the prepared layout, k steps of two tiles");
#pragma unroll
    for (int i = 0; i < G::A_LOADS; i++) {
        const uint32_t q = tid + i * G::THREADS;
        cp.a_src[i] = w + (uint64_t)bk_sp24_tile_slot(tile_row + q / (G::KSUB * 32), 0, p.kbs) *
                              BK_SP24_TILE_BYTES +
                      (q % (G::KSUB * 32)) * 16;
    }
    cp.e_src = w + p.meta_offset +
               (uint64_t)bk_sp24_tile_slot(tile_row + tid / (G::KSUB * 4), 0, p.kbs) *
                   BK_SP24_META_BYTES +
               (tid % (G::KSUB * 4)) * 16;
}

// Starts the copies of k step ks into the stage at shared address base.
template <class G, bool ASYNC_X>
BK_SP24_DEV void load_stage(const bk_sp24_gemm_args &p, const Copies<G> &cp, uint32_t tid,
                            uint32_t base, int64_t ks)
{
    const int64_t k0 = ks * 64;
#pragma unroll
    for (int i = 0; i < G::X_LOADS; i++) {
        const bool ok = cp.x_live[i] && k0 + cp.x_k[i] < p.k;
        if (ASYNC_X) {
            const char *src = ok ? cp.x_row[i] + 2 * (k0 + cp.x_k[i]) : cp.x_row[i];
            cp_async16(base + cp.x_dst[i], src, ok ? 16 : 0);
        } else {
            uint32_t v[4] = { 0, 0, 0, 0 };
            if (ok) {
                const uint16_t *e =
                    reinterpret_cast<const uint16_t *>(cp.x_row[i]) + (k0 + cp.x_k[i]) * p.x_cs;
#pragma unroll
                for (int h = 0; h < 8; h++)
                    v[h / 2] |= (uint32_t)e[h * p.x_cs] << (16 * (h % 2));
            }
            st_shared16(base + cp.x_dst[i], v);
        }
    }
#pragma unroll
    for (int i = 0; i < G::A_LOADS; i++)
        cp_async16(base + G::X_BYTES + (tid + i * G::THREADS) * 16,
                   cp.a_src[i] + ks * (BK_SP24_STEP_TILES * BK_SP24_TILE_BYTES), 16);
    if (tid < G::E_COPIES)
        cp_async16(base + G::X_BYTES + G::A_BYTES + tid * 16,
                   cp.e_src + ks * (BK_SP24_STEP_TILES * BK_SP24_META_BYTES), 16);
}

// The MMAs of one stage at shared address base (generic pointer stage):
// per k32 block, the warp's A fragments and metadata words (one ldmatrix.x4
// and one 4-byte load each), its B fragments (ldmatrix.x4: lane supplies row
// lane % 8 of matrix lane / 8, i.e. k chunk lane / 8 of the block).
template <typename T, class G>
BK_SP24_DEV void compute_stage(const unsigned char *stage, uint32_t base, uint32_t lane,
                               uint32_t warp_m, uint32_t warp_n, float (&acc)[G::WTM][G::WTN][4])
{
    const uint32_t as = base + G::X_BYTES;
    const unsigned char *es = stage + G::X_BYTES + G::A_BYTES;
    const uint32_t b_row = warp_n * (G::WTN * 8) + (lane & 7);
#pragma unroll
    for (int sub = 0; sub < G::KSUB; sub++) {
        uint4 a[G::WTM];
        uint32_t e[G::WTM];
#pragma unroll
        for (int i = 0; i < G::WTM; i++) {
            const int tile = (warp_m * G::WTM + i) * G::KSUB + sub;
            a[i] = load_a_fragment(as + (warp_m * G::WTM + i) * (G::KSUB * BK_SP24_TILE_BYTES),
                                   (uint32_t)sub, lane);
            e[i] = *reinterpret_cast<const uint32_t *>(es + tile * BK_SP24_META_BYTES +
                                                       bk_sp24_meta_lane_word(lane) * 4);
        }
        uint32_t bf[G::WTN][4];
#pragma unroll
        for (int j = 0; j < G::WTN; j++)
            ldmatrix_x4(bf[j], base + bk_sp24_x_chunk(b_row + j * 8, sub * 4 + (lane >> 3)));
#pragma unroll
        for (int i = 0; i < G::WTM; i++)
#pragma unroll
            for (int j = 0; j < G::WTN; j++)
                SparseMma<T>::run(acc[i][j], a[i], bf[j], e[i]);
    }
}

// The accumulators to a [BN][BM] f32 tile in shared memory (fragment rows
// m = gid, gid + 8, columns n = 2 tig, 2 tig + 1; OUT_PITCH keeps the
// stores free of bank conflicts), then to Y along its unit-stride
// dimension: each warp writes 32 consecutive elements.
template <typename O, class G>
BK_SP24_DEV void epilogue(const bk_sp24_gemm_args &p, int64_t b, int64_t m0, int64_t n0,
                          unsigned char *smem, uint32_t tid, uint32_t warp_m, uint32_t warp_n,
                          const float (&acc)[G::WTM][G::WTN][4])
{
    float *out = reinterpret_cast<float *>(smem);
    const uint32_t lane = tid & 31;
#pragma unroll
    for (int i = 0; i < G::WTM; i++)
#pragma unroll
        for (int j = 0; j < G::WTN; j++) {
            const int ml = (warp_m * G::WTM + i) * 16 + (lane >> 2);
            const int nl = (warp_n * G::WTN + j) * 8 + 2 * (lane & 3);
            out[nl * G::OUT_PITCH + ml] = acc[i][j][0];
            out[(nl + 1) * G::OUT_PITCH + ml] = acc[i][j][1];
            out[nl * G::OUT_PITCH + ml + 8] = acc[i][j][2];
            out[(nl + 1) * G::OUT_PITCH + ml + 8] = acc[i][j][3];
        }
    cta_barrier();
    store_tile<O, G::BM, G::BN>(p, b, m0, n0, out, G::OUT_PITCH, tid, G::THREADS);
}

// One BM x BN tile of Y in batch b: the STAGES-deep pipeline over k (one
// barrier per k step: stage ks has landed for every thread, and every warp
// is done with the stage the next copies overwrite), then the epilogue.
template <typename T, typename O, class G, bool ASYNC_X>
BK_SP24_DEV void mma_tile(const bk_sp24_gemm_args &p, int64_t b, int64_t m0, int64_t n0,
                          unsigned char *smem, uint32_t tid)
{
    const uint32_t lane = tid & 31, warp = tid >> 5;
    const uint32_t warp_m = warp % G::WM, warp_n = warp / G::WM;
    const uint32_t smem0 = shared_address(smem);
    const int64_t ksteps = p.kbs / G::KSUB;
    Copies<G> cp;
    plan_copies<G>(p, b, m0, n0, tid, cp);

    float acc[G::WTM][G::WTN][4];
#pragma unroll
    for (int i = 0; i < G::WTM; i++)
#pragma unroll
        for (int j = 0; j < G::WTN; j++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                acc[i][j][r] = 0.0f;

#pragma unroll
    for (int s = 0; s < G::STAGES - 1; s++) {
        if (s < ksteps)
            load_stage<G, ASYNC_X>(p, cp, tid, smem0 + s * G::STAGE_BYTES, s);
        cp_async_commit();
    }
    for (int64_t ks = 0; ks < ksteps; ks++) {
        cp_async_wait<G::STAGES - 2>();
        cta_barrier();
        const int64_t next = ks + G::STAGES - 1;
        if (next < ksteps) {
            const uint32_t free_slot = (uint32_t)(next % G::STAGES);
            load_stage<G, ASYNC_X>(p, cp, tid, smem0 + free_slot * G::STAGE_BYTES, next);
        }
        cp_async_commit();
        const uint32_t slot = (uint32_t)(ks % G::STAGES);
        compute_stage<T, G>(smem + slot * G::STAGE_BYTES, smem0 + slot * G::STAGE_BYTES, lane,
                            warp_m, warp_n, acc);
    }
    cp_async_wait<0>();
    cta_barrier();  // the epilogue reuses the pipeline's shared memory
    epilogue<O, G>(p, b, m0, n0, smem, tid, warp_m, warp_n, acc);
    cta_barrier();  // the next tile's copies overwrite the epilogue's tile
}

#ifndef BK_SP24_EMULATION
template <typename T, typename O, class G, bool ASYNC_X>
static __device__ __forceinline__ void mma_gemm(const bk_sp24_gemm_args &p)
{
    extern __shared__ __align__(128) unsigned char smem[];
    const uint32_t tiles = p.m_tiles * p.n_tiles;
    grid_dependency_wait();
    for (int64_t b = blockIdx.z; b < p.batch; b += gridDim.z)
        for (uint32_t t = blockIdx.x; t < tiles; t += gridDim.x) {
            uint32_t mt, nt;
            tile_coords(p, t, mt, nt);
            mma_tile<T, O, G, ASYNC_X>(p, b, (int64_t)mt * G::BM, (int64_t)nt * G::BN, smem,
                                       threadIdx.x);
        }
}
#endif  // BK_SP24_EMULATION

}  // namespace bk_sp24

// ---- Entry points -------------------------------------------------------------------
// bk_sp24_mma_<type>_<out>_<BM>x<BN><TAG>[_strided]: the names the launcher
// (lib/cuda/cuda_sparse24_gemm.c) builds, for the tilings of
// BK_SP24_MMA_TILINGS (sparse24_args.h).
#define BK_SP24_MMA_ENTRY(tname, T, oname, O, BM, BN, WM, WN, STAGES, TAG, suffix, ASYNC)          \
    extern "C" __global__ void __launch_bounds__(WM * WN * 32, 512 / (WM * WN * 32))               \
        bk_sp24_mma_##tname##_##oname##_##BM##x##BN##TAG##suffix(                                  \
            const __grid_constant__ bk_sp24_gemm_args p)                                           \
    {                                                                                              \
        bk_sp24::mma_gemm<T, O, bk_sp24::Tiling<BM, BN, WM, WN, STAGES>, ASYNC>(p);                \
    }

#define BK_SP24_MMA_LOADERS(tname, T, oname, O, BM, BN, WM, WN, STAGES, TAG)   \
    BK_SP24_MMA_ENTRY(tname, T, oname, O, BM, BN, WM, WN, STAGES, TAG, , true) \
    BK_SP24_MMA_ENTRY(tname, T, oname, O, BM, BN, WM, WN, STAGES, TAG, _strided, false)

#define BK_SP24_MMA_TYPES(BM, BN, WM, WN, STAGES, TAG)                                            \
    BK_SP24_MMA_LOADERS(f16, __half, f16, __half, BM, BN, WM, WN, STAGES, TAG)                    \
    BK_SP24_MMA_LOADERS(f16, __half, f32, float, BM, BN, WM, WN, STAGES, TAG)                     \
    BK_SP24_MMA_LOADERS(bf16, __nv_bfloat16, bf16, __nv_bfloat16, BM, BN, WM, WN, STAGES, TAG)    \
    BK_SP24_MMA_LOADERS(bf16, __nv_bfloat16, f32, float, BM, BN, WM, WN, STAGES, TAG)

#ifndef BK_SP24_EMULATION
BK_SP24_MMA_TILINGS(BK_SP24_MMA_TYPES)
#endif
