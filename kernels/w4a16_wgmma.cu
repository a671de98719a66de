// SPDX-License-Identifier: Apache-2.0
// W4A16 GEMM on Hopper (sm_90a) for tiles of more than 32 rows of A:
// C^T = W^T A^T on wgmma, so that the weights, dequantised in registers,
// are the register operand and the rows of A the shared-memory one.
//
// wgmma's register operand gives warp w of a warpgroup rows 16 w .. +15
// in mma.sync's m16n8k16 A-fragment layout, and in Marlin's layout word j
// of a lane's 16-byte vector holds, for the 16 columns of tile j, the
// B fragments {b0, b1} of columns 0-7 and 8-15: the same eight values,
// so warp w of a consumer warpgroup reads word w of each lane's vector
// (one 32-bit load per k-tile), dequantises it and hands {r0, r2, r1, r3}
// to one m64nTk16 instruction per k-tile. A comes by the bulk tensor copy
// engine, 128-byte swizzled, as wgmma reads a K-major operand; the weights
// and scales as plain rows. A producer warpgroup's first thread fills a
// ring of stages; each consumer warp releases a stage once its wgmma group
// has finished reading it.
//
// Either K splits over the CTAs of a cluster, which add their partial
// tiles through distributed shared memory in rank order (as
// kernels/w4a16_gemm.cu): deterministic, one launch, no workspace; or, where
// the tiles would leave SMs idle, stream-K (w4a16_stream_k.cuh): one CTA
// an SM, equal shares of all tiles' stages, split tiles summed through a
// workspace in a fixed order.
//
// Zero points (the bk_w4a16_wgmma_zp_* kernels, ZP; the symmetric ones are
// compiled without any of it): the producer brings a stage's rows of
// packedZeros beside its scale rows, and a consumer lane dequantises
// (q - z) * s with the constants of its two columns' zero points, made
// where it reads their scales (consume).
#include "element_types.cuh"
#include "shared_memory_ops.cuh"
#include "tma_ops.cuh"
#include "w4a16_args.h"
#include "w4a16_cluster_sum.cuh"
#include "w4a16_dequant.cuh"
#include "w4a16_prefetch.cuh"
#include "w4a16_stream_k.cuh"
#include "wgmma_ops.cuh"
#include "workspace_clear.h"
#include "w4a16_layout.h"

// Tuning switch (a variant of the module): the least tile height whose
// consumers overlap dequantisation with the last stage's group.
#ifndef BK_W4A16_WG_OVERLAP_ROWS
#define BK_W4A16_WG_OVERLAP_ROWS 256
#endif

namespace {

using bk::w4a16::Dequant;

template <typename T, int N> struct Wgmma;
template <typename T> struct Wgmma<T, 64> {
    static __device__ __forceinline__ void run(float (&d)[8][4], const uint32_t (&a)[4],
                                               uint64_t db)
    {
        bk::hopper::mma_rs_n64_k<T>(d, a, db);
    }
};
template <typename T> struct Wgmma<T, 256> {
    static __device__ __forceinline__ void run(float (&d)[32][4], const uint32_t (&a)[4],
                                               uint64_t db)
    {
        bk::hopper::mma_rs_n256_k<T>(d, a, db);
    }
};
template <typename T> struct Wgmma<T, 128> {
    static __device__ __forceinline__ void run(float (&d)[16][4], const uint32_t (&a)[4],
                                               uint64_t db)
    {
        bk::hopper::mma_rs_n128_k<T>(d, a, db);
    }
};

using bk::load_shared32;
using bk::load_shared8;

// The pair (h, h) of the 16-bit value h.
__device__ __forceinline__ uint32_t splat(uint32_t h)
{
    return (h & 0xffffu) * 0x10001u;
}

// S: CTAs of a cluster splitting K, or 0: stream-K. ZP: zero points
// (zq: the kernel's parameters with their map and address).
template <typename T, int TT, int CW, int S, bool ZP = false> struct WgGemm {
    static constexpr int STAGES = BK_W4A16_WG_STAGES(TT, CW, ZP);
    static constexpr uint32_t STAGE_BYTES = BK_W4A16_WG_STAGE_BYTES(TT, CW, ZP);
    static constexpr uint32_t A_BYTES = BK_W4A16_WG_A_BYTES(TT);
    static constexpr uint32_t A_BOX_BYTES = 128u * TT; // 64 columns of K, swizzled
    static constexpr uint32_t W_OFF = A_BYTES, S_OFF = A_BYTES + BK_W4A16_WG_W_BYTES(TT, CW);
    static constexpr uint32_t Z_OFF = S_OFF + BK_W4A16_WG_S_BYTES(TT, CW);
    static constexpr int TN = BK_W4A16_WG_TILE_N(CW);
    static constexpr int KT = BK_W4A16_WG_STAGE_KT(TT);
    static constexpr int SK = BK_W4A16_WG_STAGE_K(TT);
    static constexpr int NT = TT / 8; // accumulator tiles of 8 rows of A
    // Consumers keep a wgmma group in flight while they dequantise the
    // next stage (two sets of A registers) where the registers allow.
    static constexpr bool OVERLAP = TT >= BK_W4A16_WG_OVERLAP_ROWS && CW == 2;
    // Stages of 8 k-tiles read a group spanning them once (consume<1>);
    // the 256-row tiles' stages of 4 keep the one consumer (a third
    // spills their stream-K kernels).
    static constexpr bool ONE_ROW = KT == 8;

    static constexpr bool STREAM_K = S == 0;

    const bk_w4a16_gemm_args &p;
    const bk_w4a16_tma_zp_args *zq;
    unsigned char *smem;
    uint32_t ring, bars;
    int n0, m0, c_begin, c_end; // the tiled kernels' one tile and share of it

    __device__ WgGemm(const bk_w4a16_gemm_args &args, unsigned char *raw,
                      const bk_w4a16_tma_zp_args *zp_args = nullptr)
        : p(args), zq(zp_args)
    {
        const uint32_t base = bk::shared_address(raw);
        const uint32_t pad = (1024u - base % 1024u) % 1024u; // BK_W4A16_WG_SMEM has the slack
        smem = raw + pad;
        ring = bk::hopper::warp_uniform(base + pad);  // uniform descriptors (wgmma_ops.cuh)
        bars = ring + BK_W4A16_WG_RING_BYTES(TT, CW, ZP);
        n0 = (int)blockIdx.x * TN;
        m0 = (int)blockIdx.z * TT;
        c_begin = (int)((int64_t)blockIdx.y * p.stages / p.splits);
        c_end = (int)((int64_t)(blockIdx.y + 1) * p.stages / p.splits);
    }

    __device__ uint32_t full(int b) const { return bars + 8 * b; }
    __device__ uint32_t empty(int b) const { return bars + 8 * (STAGES + b); }

    // Stages c_begin .. c_end - 1 of the tile at (m0, n0) into the ring,
    // the first at its position i0 (stages the CTA brought before).
    __device__ void produce(const bk_w4a16_tma_args &q, int c_begin, int c_end, int i0, int m0,
                            int n0) const
    {
        using namespace bk::hopper;
        const bool grouped = !(p.flags & BK_W4A16_PER_CHANNEL);
        const int srows = grouped ? BK_W4A16_WG_SROWS(p.group, TT) : 0;
        // ZP: as many rows of TN / 8 zero words (4 bytes) as of TN scales.
        const uint32_t tx = A_BYTES + BK_W4A16_WG_W_BYTES(TT, CW) +
                            (uint32_t)srows * (ZP ? TN * 2 + TN / 2 : TN * 2);
        for (int c = c_begin; c < c_end; c++) {
            const int i = i0 + (c - c_begin), b = i % STAGES, use = i / STAGES;
            if (use > 0)
                mbar_wait(empty(b), (uint32_t)(use - 1) & 1u);
            const uint32_t stage = ring + b * STAGE_BYTES;
            mbar_expect_tx(full(b), tx);
#pragma unroll
            for (int h = 0; h < SK / 64; h++)
                tma_load_2d(stage + h * A_BOX_BYTES, q.map_a, c * SK + 64 * h, m0, full(b));
            tma_load_2d(stage + W_OFF, q.map_w, n0, c * KT, full(b));
            if (grouped) {
                tma_load_2d(stage + S_OFF, q.map_s, n0, c * SK / p.group, full(b));
                if constexpr (ZP)
                    tma_load_2d(stage + Z_OFF, zq->map_z, n0 / 8, c * SK / p.group, full(b));
            }
        }
    }

    // The dequantisation constants of a lane's byte of zero points: its
    // low nibble the zero point of the lane's first column (r[0], r[1] of
    // Dequant::run_zero, scaled by s_lo), its high one of the second
    // (r[2], r[3], by s_hi).
    static __device__ __forceinline__ void zero_constants(uint32_t byte, uint32_t (&zk)[4])
    {
        Dequant<T>::zero_constants(byte & 15u, zk[0], zk[1]);
        Dequant<T>::zero_constants(byte >> 4, zk[2], zk[3]);
    }

    // Column n's per-channel zero point.
    __device__ uint32_t channel_zero(int64_t n) const
    {
        const uint32_t *zeros = reinterpret_cast<const uint32_t *>(zq->zeros);
        return (__ldg(zeros + bk_w4a16_zero_word(n, 1)) >> (4 * bk_w4a16_zero_nibble(n, 1))) &
               15u;
    }

    // Consumer warpgroup wi (0 .. CW - 1: weight columns 64 wi ..), warp w of it,
    // adds stages c_begin .. c_end - 1 (ring positions from i0) of the tile
    // of columns n0 to acc. SROWS: the stage's scale rows, 1 where a group
    // spans the stage (its scales, and zero points, read once a stage),
    // 2 for more (read every second k-tile), 0 per channel (one scale per
    // column).
    template <int SROWS>
    __device__ void consume(float (&acc)[NT][4], int wi, int w, int lane, int c_begin, int c_end,
                            int i0, int64_t n0) const
    {
        using namespace bk::hopper;
        constexpr bool GROUPED = SROWS > 0;
        const int g = lane / 4;
        // The scales of the lane's two columns 16 w + g and + 8: halves
        // 8 g + 2 w and + 1 of the 64-column block's permuted scale row.
        uint32_t s_lo = 0, s_hi = 0;
        // ZP: the constants of the two columns' zero points (zero_constants;
        // those of 8 where the columns lie past N, whose scales are 0).
        uint32_t zk[4];
        zero_constants(0x88u, zk);
        if (!GROUPED) {
            const uint16_t *scales = reinterpret_cast<const uint16_t *>(p.scales);
            const int64_t n = n0 + 64 * wi + 16 * w + g;
            if (n0 + 64 * wi < p.n) {
                s_lo = splat(scales[bk_w4a16_scale_position(n, 1)]);
                s_hi = splat(scales[bk_w4a16_scale_position(n + 8, 1)]);
                if constexpr (ZP)
                    zero_constants(channel_zero(n) | channel_zero(n + 8) << 4, zk);
            }
        }
        const uint32_t w_at = W_OFF + 512 * wi + 16 * lane + 4 * w;
        // Every second k-tile (groups are 32, 64 or 128 rows) reads the
        // scales of the group its first row is in, the stage's row
        // 16 kt / group: branch-free, whatever the group (a branch per
        // k-tile cost ~4%, measured); with one row a stage, the first.
        uint32_t s_at[KT / 2];
        const int group_shift = __ffs(p.group) - 1;
#pragma unroll
        for (int j = 0; j < KT / 2; j++)
            s_at[j] = S_OFF + 128 * wi + 2 * (8 * g + 2 * w) +
                      ((32u * j) >> group_shift) * (TN * 2);
        // Grouped zero points: packedZeros holds column n's in nibble p % 8
        // of word p / 8 of its row, p the position of its scale
        // (w4a16_layout.h), so the lane's columns 16 w + g and + 8 of
        // block b = (n0 + 64 wi) / 64, at positions 8 g + 2 w and + 1
        // (above), are nibbles 2 w and 2 w + 1 of word 8 b + g: the low
        // and high nibble of its byte w. A stage's zero rows hold TN / 8
        // words from word n0 / 8, so the lane's byte of each is at
        // 32 wi + 4 g + w, read with the scales of the same row.
        uint32_t z_at[ZP ? KT / 2 : 1];
#pragma unroll
        for (int j = 0; j < (ZP ? KT / 2 : 0); j++)
            z_at[j] = Z_OFF + 32 * wi + 4 * g + w + ((32u * j) >> group_shift) * (TN / 2);
        // Stage c's weights dequantised into a (its scales first where
        // they change), and the slot and parity of its ring stage.
        auto slot = [&](int c) { return (i0 + c - c_begin) % STAGES; };
        auto dequantise = [&](uint32_t(&a)[KT][4], int c) {
            const int i = i0 + (c - c_begin);
            const uint32_t stage = ring + slot(c) * STAGE_BYTES;
            mbar_wait(full(slot(c)), (uint32_t)(i / STAGES) & 1u);
#pragma unroll
            for (int kt = 0; kt < KT; kt++) {
                if (GROUPED && (SROWS == 1 ? kt == 0 : kt % 2 == 0)) {
                    const uint32_t s = load_shared32(stage + s_at[kt / 2]);
                    s_lo = splat(s);
                    s_hi = splat(s >> 16);
                    if constexpr (ZP)
                        zero_constants(load_shared8(stage + z_at[kt / 2]), zk);
                }
                uint32_t r[4];
                const uint32_t word = load_shared32(stage + w_at + kt * (TN * 8));
                if constexpr (ZP)
                    Dequant<T>::run_zero(word, r, zk[0], zk[1], zk[2], zk[3]);
                else
                    Dequant<T>::run(word, r);
                a[kt][0] = Dequant<T>::mul(r[0], s_lo);
                a[kt][1] = Dequant<T>::mul(r[2], s_hi);
                a[kt][2] = Dequant<T>::mul(r[1], s_lo);
                a[kt][3] = Dequant<T>::mul(r[3], s_hi);
            }
        };
        // Stage c's group of wgmmas on a, committed. Every input register
        // of the group (a, the descriptors) defined before it starts, else
        // ptxas serialises the wgmmas. k-tile kt's 16 columns of A: 32
        // bytes into the rows of its 64-column box.
        auto issue = [&](uint32_t(&a)[KT][4], int c) {
            const uint32_t stage = ring + slot(c) * STAGE_BYTES;
            uint64_t desc[KT];
            const uint64_t desc0 = smem_desc(stage, 16, 1024);
#pragma unroll
            for (int kt = 0; kt < KT; kt++) {
                desc[kt] = smem_desc_add(desc0, (kt / 4) * A_BOX_BYTES + 32 * (kt % 4));
                asm volatile("" : "+l"(desc[kt]));
            }
            fence_operand(a);
            wgmma_fence();
#pragma unroll
            for (int kt = 0; kt < KT; kt++)
                Wgmma<T, TT>::run(acc, a[kt], desc[kt]);
            wgmma_commit();
        };
        if (!OVERLAP) {
            // Each group waited for before the stage is released and the
            // next one's registers are written (a group in flight meanwhile
            // would make ptxas serialise every wgmma, C7513); the other
            // consumer warpgroup fills the gap.
            for (int c = c_begin; c < c_end; c++) {
                uint32_t a[KT][4];
                dequantise(a, c);
                issue(a, c);
                wgmma_wait<0>();
                fence_operand(acc);
                fence_operand(a);
                release(slot(c), lane);
            }
            return;
        }
        // OVERLAP: two sets of registers, stage c + 1 dequantised into the
        // other while stage c's group runs (that set's last group, c - 1,
        // waited for first).
        uint32_t a0[KT][4], a1[KT][4];
        if (c_begin < c_end)
            dequantise(a0, c_begin);
        for (int c = c_begin; c < c_end; c += 2) {
            issue(a0, c);
            if (c > c_begin) {
                wgmma_wait<1>();
                fence_operand(a1);
                release(slot(c - 1), lane);
            }
            if (c + 1 >= c_end)
                break;
            dequantise(a1, c + 1);
            issue(a1, c + 1);
            wgmma_wait<1>();
            fence_operand(a0);
            release(slot(c), lane);
            if (c + 2 < c_end)
                dequantise(a0, c + 2);
        }
        wgmma_wait<0>();
        fence_operand(acc);
        if (c_begin < c_end)
            release(slot(c_end - 1), lane);
    }

    // A consumer warp is done with slot b (its wgmma groups have read it).
    __device__ void release(int b, int lane) const
    {
        __syncwarp();
        if (lane == 0)
            bk::hopper::mbar_arrive(empty(b));
    }

    // The weights, scale rows and zero rows of the CTA's first stages (in
    // stream-K, those of its share's tiles in order) into L2 while the grid
    // before drains (w4a16_prefetch.cuh), by the producer warpgroup.
    __device__ void prefetch_first_stages() const
    {
        uint64_t zeros = 0;
        if constexpr (ZP)
            zeros = zq->zeros;
        const int warp = (int)threadIdx.x / 32; // of the producer warpgroup's 4
        int left = (int)BK_W4A16_PREFETCH_STAGES(p.flags);
        if constexpr (STREAM_K) {
            const bk::w4a16::StreamK<TT, TN> sk(p);
            sk.for_each_share([&](int, const auto &s) {
                const int c1 = s.c1 - s.c0 < left ? s.c1 : s.c0 + left;
                bk::w4a16::prefetch_stages<SK, TN>(p, zeros, sk.n0(s.tile), s.c0, c1, warp, 4);
                left -= c1 - s.c0;
            });
        } else {
            const int c1 = c_end - c_begin < left ? c_end : c_begin + left;
            bk::w4a16::prefetch_stages<SK, TN>(p, zeros, n0, c_begin, c1, warp, 4);
        }
    }

    __device__ void run(const bk_w4a16_tma_args &q)
    {
        using namespace bk::hopper;
        const int warp = warp_uniform((int)threadIdx.x / 32), lane = threadIdx.x % 32, wg = warp / 4;
        if (threadIdx.x == 0) {
            for (int b = 0; b < STAGES; b++) {
                mbar_init(full(b), 1);
                mbar_init(empty(b), 4 * CW); // the consumer warps
            }
            mbar_fence_init();
        }
        if (wg == 0)
            prefetch_first_stages();
        bk::grid_dependency_wait();
        __syncthreads();
        // Tiles of 256 rows of A take 128 accumulators a thread: registers
        // move from the producer, one thread of which works, to the
        // consumers, and back to an even split for the reduction (else
        // ptxas serialises the wgmmas for want of registers, C7512).
        constexpr bool MOVE = TT == 256;
        const bk::w4a16::StreamK<TT, TN> sk(p);
        if (wg == 0) {
            if constexpr (MOVE)
                bk::hopper::registers_shrink_to<STREAM_K ? 24 : 40>();
            if (threadIdx.x == 0) {
                if constexpr (STREAM_K)
                    sk.for_each_share([&](int, const auto &s) {
                        produce(q, s.c0, s.c1, s.ring, sk.m0(s.tile), sk.n0(s.tile));
                    });
                else
                    produce(q, c_begin, c_end, 0, m0, n0);
            }
            __syncwarp();
            if constexpr (STREAM_K)
                return;
            if constexpr (MOVE)
                bk::hopper::registers_grow_to<168>();
        } else {
            if constexpr (MOVE)
                bk::hopper::registers_grow_to<STREAM_K ? 240 : 232>();
            const int wi = wg - 1, w = warp % 4;
            float acc[NT][4];
            auto consume_share = [&](int c0, int c1, int i0, int tile_n0) {
#pragma unroll
                for (int t = 0; t < NT; t++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[t][e] = 0.f;
                if (p.flags & BK_W4A16_PER_CHANNEL)
                    consume<0>(acc, wi, w, lane, c0, c1, i0, tile_n0);
                else if (ONE_ROW && p.group >= SK)
                    consume<ONE_ROW ? 1 : 2>(acc, wi, w, lane, c0, c1, i0, tile_n0);
                else
                    consume<2>(acc, wi, w, lane, c0, c1, i0, tile_n0);
            };
            if constexpr (STREAM_K) {
                const int cw = 4 * wi + w;
                const uint32_t staging = bars + 16u * STAGES + 528u * cw;
#ifdef BK_W4A16_SK_TRACE
                // A development variant: each CTA's timings, 32 words after
                // the plan's workspace (bench/probes/w4a16-sk-trace.c reads them).
                uint64_t *trace = reinterpret_cast<uint64_t *>(
                                      p.workspace + BK_W4A16_SK_COUNTER_BYTES(p.units / p.stages, CW) +
                                      2ull * gridDim.x * BK_W4A16_SK_SLOT_BYTES(TT, CW)) +
                                  blockIdx.x * 32;
                const bool tr = cw == 0 && lane == 0;
                int seg = 0;
                if (tr) {
                    uint64_t g;
                    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
                    trace[0] = g;
                    trace[1] = clock64();
                }
#endif
                sk.for_each_share([&](int u, const auto &first_look) {
                    consume_share(first_look.c0, first_look.c1, first_look.ring,
                                  sk.n0(first_look.tile));
#ifdef BK_W4A16_SK_TRACE
                    if (tr && seg < 7)
                        trace[2 + 4 * seg] = clock64();
#endif
                    const auto s = sk.share_again(u);
                    const int tile = s.tile, c0 = s.c0, c1 = s.c1;
                    const bool last = s.last;
                    const int tm0 = sk.m0(tile), tn0 = sk.n0(tile);
                    const bool whole = sk.whole(c0, c1);
                    // The share's last tile, split: every consumer warp done
                    // with the ring before partials are copied into it.
                    if (last && !whole) {
                        bk::hopper::fence_proxy_async_shared();
                        asm volatile("bar.sync 1, %0;\n" ::"n"(128 * CW) : "memory");
                    }
                    if (tn0 + 64 * wi >= p.n) // the warpgroup's columns lie past N
                        return;
                    const int64_t n = tn0 + 64 * wi + 16 * w;
                    auto emit = [&](int t, float4 v0, float4 v1) {
                        bk::w4a16::store_pair<T>(p, v0, v1, staging, tm0 + 8 * t, n, lane);
                    };
                    if (whole) {
#pragma unroll
                        for (int t = 0; t < NT; t += 2)
                            emit(t, make_float4(acc[t][0], acc[t][1], acc[t][2], acc[t][3]),
                                 make_float4(acc[t + 1][0], acc[t + 1][1], acc[t + 1][2],
                                             acc[t + 1][3]));
                    } else {
                        sk.sum_split_tile<NT, CW>(acc, tile, c0, cw, lane, last,
                                                  ring + (uint32_t)cw * NT * 512u, staging + 512u,
                                                  emit);
                    }
#ifdef BK_W4A16_SK_TRACE
                    if (tr && seg < 7) {
                        trace[3 + 4 * seg] = clock64();
                        trace[4 + 4 * seg] = (uint64_t)(c1 - c0) << 32 | (uint64_t)c0 << 8 |
                                             (whole ? 2 : 0) | (last ? 1 : 0);
                        trace[5 + 4 * seg] = tile;
                    }
                    seg++;
#endif
                });
#ifdef BK_W4A16_SK_TRACE
                if (tr) {
                    uint64_t g;
                    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
                    trace[31] = g;
                    trace[30] = seg;
                }
#endif
                return;
            } else {
                consume_share(c_begin, c_end, 0, n0);
                stash(acc, wi, w, lane);
            }
            if constexpr (MOVE)
                bk::hopper::registers_shrink_to<168>();
        }
        if constexpr (!STREAM_K)
            bk::w4a16::store_cluster_sum<T, S, TN>(p, reinterpret_cast<float *>(smem),
                                                   p.m - m0 < TT ? p.m - m0 : TT, m0, n0);
    }

    // The consumers' partial tile, [TT rows of A][TN columns] floats at the
    // start of shared memory once all are done with the ring (named
    // barrier 1: the consumer threads); store_cluster_sum adds it up.
    __device__ void stash(const float (&acc)[NT][4], int wi, int w, int lane) const
    {
        float *red = reinterpret_cast<float *>(smem);
        asm volatile("bar.sync 1, %0;\n" ::"n"(128 * CW) : "memory");
        const int col = 64 * wi + 16 * w + lane / 4;
#pragma unroll
        for (int t = 0; t < NT; t++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                red[(8 * t + 2 * (lane % 4) + e % 2) * TN + col + 8 * (e / 2)] = acc[t][e];
    }
};

} // namespace

// Kernels: bk_w4a16_wgmma_<type>_t<rows of A>x<columns>_s<splits>.
#define BK_W4A16_WG_KERNEL(TNAME, T, TT, TN, S)                                               \
    extern "C" __global__ void __cluster_dims__(1, S, 1)                                       \
    __launch_bounds__(BK_W4A16_WG_THREADS((TN) / 64), 1)                                       \
        bk_w4a16_wgmma_##TNAME##_t##TT##x##TN##_s##S(const __grid_constant__ bk_w4a16_tma_args q) \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        WgGemm<T, TT, (TN) / 64, S> g(q.a, smem);                                              \
        g.run(q);                                                                              \
    }

// Stream-K: bk_w4a16_wgmma_<type>_t<rows of A>x<columns>_sk.
#define BK_W4A16_WG_SK_KERNEL(TNAME, T, TT, TN)                                               \
    extern "C" __global__ void __launch_bounds__(BK_W4A16_WG_THREADS((TN) / 64), 1)           \
        bk_w4a16_wgmma_##TNAME##_t##TT##x##TN##_sk(const __grid_constant__ bk_w4a16_tma_args q) \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        WgGemm<T, TT, (TN) / 64, 0> g(q.a, smem);                                              \
        g.run(q);                                                                              \
    }

// With zero points: bk_w4a16_wgmma_zp_<type>_t<rows of A>x<columns>_s<splits>
// and ..._sk (S 0).
#define BK_W4A16_WG_ZP_KERNEL(TNAME, T, TT, TN, S, SUFFIX, CLUSTER)                          \
    extern "C" __global__ void CLUSTER __launch_bounds__(BK_W4A16_WG_THREADS((TN) / 64), 1)  \
        bk_w4a16_wgmma_zp_##TNAME##_t##TT##x##TN##_##SUFFIX(                                   \
            const __grid_constant__ bk_w4a16_tma_zp_args q)                                    \
    {                                                                                          \
        extern __shared__ __align__(128) unsigned char smem[];                                 \
        WgGemm<T, TT, (TN) / 64, S, true> g(q.t.a, smem, &q);                                  \
        g.run(q.t);                                                                            \
    }
#define BK_W4A16_WG_ZP_SPLIT_KERNEL(TNAME, T, TT, TN, S) \
    BK_W4A16_WG_ZP_KERNEL(TNAME, T, TT, TN, S, s##S, __cluster_dims__(1, S, 1))

#define BK_W4A16_WG_SPLITS_OF(KERNEL, TNAME, T, TT, TN)                                       \
    KERNEL(TNAME, T, TT, TN, 1)                                                               \
    KERNEL(TNAME, T, TT, TN, 2)                                                               \
    KERNEL(TNAME, T, TT, TN, 3)                                                               \
    KERNEL(TNAME, T, TT, TN, 4)                                                               \
    KERNEL(TNAME, T, TT, TN, 5)                                                               \
    KERNEL(TNAME, T, TT, TN, 6)                                                               \
    KERNEL(TNAME, T, TT, TN, 7)                                                               \
    KERNEL(TNAME, T, TT, TN, 8)
#define BK_W4A16_WG_SPLITS(TNAME, T, TT, TN) \
    BK_W4A16_WG_SPLITS_OF(BK_W4A16_WG_KERNEL, TNAME, T, TT, TN)

// The tilings: rows of A x columns (64 x 4 consumer warpgroups, or x 2),
// the narrow ones in stream-K too (the wide ones only pay where they fill
// the device, and their consumers' 96 registers cannot hold the sums).
#define BK_W4A16_WG_TILINGS(TNAME, T)          \
    BK_W4A16_WG_SPLITS(TNAME, T, 64, 256)      \
    BK_W4A16_WG_SPLITS(TNAME, T, 64, 128)      \
    BK_W4A16_WG_SPLITS(TNAME, T, 128, 128)     \
    BK_W4A16_WG_SPLITS(TNAME, T, 256, 128)     \
    BK_W4A16_WG_SK_KERNEL(TNAME, T, 64, 128)   \
    BK_W4A16_WG_SK_KERNEL(TNAME, T, 128, 128)  \
    BK_W4A16_WG_SK_KERNEL(TNAME, T, 256, 128)

BK_W4A16_WG_TILINGS(f16, __half)
BK_W4A16_WG_TILINGS(bf16, __nv_bfloat16)

// The zero-point tilings: the same ones.
#define BK_W4A16_WG_ZP_TILINGS(TNAME, T)                                    \
    BK_W4A16_WG_SPLITS_OF(BK_W4A16_WG_ZP_SPLIT_KERNEL, TNAME, T, 64, 256)   \
    BK_W4A16_WG_SPLITS_OF(BK_W4A16_WG_ZP_SPLIT_KERNEL, TNAME, T, 64, 128)   \
    BK_W4A16_WG_SPLITS_OF(BK_W4A16_WG_ZP_SPLIT_KERNEL, TNAME, T, 128, 128)  \
    BK_W4A16_WG_SPLITS_OF(BK_W4A16_WG_ZP_SPLIT_KERNEL, TNAME, T, 256, 128)  \
    BK_W4A16_WG_ZP_KERNEL(TNAME, T, 64, 128, 0, sk, )                       \
    BK_W4A16_WG_ZP_KERNEL(TNAME, T, 128, 128, 0, sk, )                      \
    BK_W4A16_WG_ZP_KERNEL(TNAME, T, 256, 128, 0, sk, )

BK_W4A16_WG_ZP_TILINGS(f16, __half)
BK_W4A16_WG_ZP_TILINGS(bf16, __nv_bfloat16)

// Zeroes the stream-K counters before a run (kernels/shared/workspace_clear.h).
BK_WORKSPACE_CLEAR_KERNEL(bk_w4a16_sk_clear)
