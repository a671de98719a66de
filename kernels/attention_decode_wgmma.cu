// SPDX-License-Identifier: Apache-2.0
// Attention over a KV cache for few query rows on Hopper (sm_90a): the
// units, stream-K split and parts of kernels/attention_decode.cu (whose
// combining kernel finishes the rows), with K and V brought by the bulk
// tensor copy engine and the products on warpgroup MMA.
//
// A CTA is one key stream: a producer warp copies steps of KEYS keys (K,
// then V, 128-byte swizzled) into a ring of stages, and NC consumer
// warpgroups, 64 packed rows each (rows past the kv head's pad with zero
// queries), take every step: S = Q K^T with Q as register fragments (read
// once a unit from global memory), the online softmax in base 2, then
// O += P V with P from registers. A step's stage is freed once its P V is
// done. The mma.sync kernel runs 16 packed rows a warp on quarter-rate
// products: past 32 rows (Lq = 8 and 16 of 8 heads) they bound it, where
// here they stay under the reads.
#include "attention_decode.cuh"
#include "attention_mma.cuh"
#include "attention_wgmma_walk.cuh"

namespace bk {
namespace attention {
namespace decode_wg {

using namespace bk::hopper;
using namespace bk::attention::wg;
using bk::attention::decode::DecodeArgs;
using bk::attention::decode::Sequence;

// Shared memory: STAGES K tiles, STAGES V tiles (DH / 64 column blocks of
// KEYS rows x 128 bytes each), then k_full, v_full and empty a stage; CTAS
// of them an SM.
template <int DH, int NC_, int KEYS_, int CTAS> struct Layout {
    static constexpr int NC = NC_;
    static constexpr int CB = DH / 64;
    static constexpr int KEYS = KEYS_;
    static constexpr int STAGES = BK_ATTENTION_DECODE_WG_STAGES(DH, KEYS, CTAS);
    static constexpr uint32_t KV_BLOCK = KEYS * 128, KV_BYTES = CB * KV_BLOCK;
    static constexpr uint32_t K = 0, V = STAGES * KV_BYTES, BARS = 2 * STAGES * KV_BYTES;
    static constexpr uint32_t BYTES = BARS + 24 * STAGES + 1024;
    static_assert(BYTES == BK_ATTENTION_DECODE_WG_SHARED_BYTES(DH, KEYS, CTAS),
                  "the plan's shared memory");
    static_assert(2 * STAGES * KV_BYTES == BK_ATTENTION_DECODE_WG_RING(CTAS), "the ring is full");
    static_assert(STAGES >= 3, "two stages in flight while one is read");
};

// Step n of the CTA's walk (counted over its units): its stage's
// barriers, the parity of their current phase and its tiles.
template <typename L> struct Step {
    uint32_t k_full, v_full, empty, parity, k_tile, v_tile;
    __device__ Step(uint32_t base, int n)
    {
        const int s = n % L::STAGES;
        k_full = base + L::BARS + 8 * s;
        v_full = k_full + 8 * L::STAGES;
        empty = v_full + 8 * L::STAGES;
        parity = (uint32_t)((n / L::STAGES) & 1);
        k_tile = base + L::K + s * L::KV_BYTES;
        v_tile = base + L::V + s * L::KV_BYTES;
    }
};

// A stretch of one unit that the CTA walks: the unit's kv head and row
// group, its sequence, the keys [key0, stop) and their steps, and the
// part slot it leaves.
struct Segment {
    int64_t u, b, kvh, rgi, key0, stop, steps, slot;
    Sequence seq;
};

// The CTA's stretches in order (its share of all units' steps, as
// kernels/attention_decode.cu's split gives a stream), f(segment) each.
template <int KEYS, typename F>
static __device__ __forceinline__ void each_segment(const DecodeArgs &d, F f)
{
    const int64_t me = blockIdx.x;
    if (me >= d.streams)
        return;
    const int64_t to = decode::stream_start(d, me + 1);
    for (int64_t at = decode::stream_start(d, me); at < to;) {
        Segment g;
        g.u = at / d.unit_steps;
        const int64_t s0 = at - g.u * d.unit_steps;
        const int64_t s1 = min(to, (g.u + 1) * d.unit_steps) - g.u * d.unit_steps;
        g.rgi = g.u % d.row_groups;
        const int64_t bk = g.u / d.row_groups;
        g.b = bk / d.a.kv_heads;
        g.kvh = bk % d.a.kv_heads;
        g.seq = decode::sequence(d, g.b);
        g.key0 = s0 * KEYS;
        g.stop = min(g.seq.lk, s1 * KEYS);
        g.steps = g.stop > g.key0 ? (g.stop - g.key0 + KEYS - 1) / KEYS : 0;
        g.slot = me - decode::first_stream(d, g.u);
        f(g);
        at = g.u * d.unit_steps + s1;
    }
}

// Warp 0, lane 0: the copies of every step, each stage once the
// consumers have freed its previous use.
template <typename L>
static __device__ void producer(const bk_attention_decode_tma_args &p, uint32_t base)
{
    int n = 0;
    each_segment<L::KEYS>(p.d, [&](const Segment &g) {
        for (int64_t s = 0; s < g.steps; s++, n++) {
            const Step<L> st(base, n);
            if (n >= L::STAGES)
                mbar_wait(st.empty, st.parity ^ 1u);
            const int key = (int)(g.key0 + s * L::KEYS);
            for (int kv = 0; kv < 2; kv++) {
                const uint32_t full = kv ? st.v_full : st.k_full;
                const uint32_t tile = kv ? st.v_tile : st.k_tile;
                mbar_expect_tx(full, L::KV_BYTES);
                for (int cb = 0; cb < L::CB; cb++)
                    for (int half = 0; half < L::KEYS / 64; half++)
                        tma_load_4d(tile + cb * L::KV_BLOCK + half * 64 * 128,
                                    kv ? p.map_v : p.map_k, 64 * cb, key + 64 * half,
                                    (int)g.kvh, (int)g.b, full);
            }
        }
    });
}

// Two consumers take turns to issue their products (named barriers
// TURN_BARRIER + c, FlashAttention-3's ping-pong): one's softmax runs
// while the tensor cores work on the other's. Consumer 1 passes first, so
// that consumer 0 starts; both take a turn for every issue, the same
// count (they walk the same steps), and consumer 0 takes the last pass.
constexpr int TURN_BARRIER = 2;
template <bool TURNS> static __device__ __forceinline__ void wait_turn(int c)
{
    if (TURNS)
        asm volatile("bar.sync %0, 256;\n" ::"r"(TURN_BARRIER + c) : "memory");
}
template <bool TURNS> static __device__ __forceinline__ void pass_turn(int c)
{
    if (TURNS)
        asm volatile("bar.arrive %0, 256;\n" ::"r"(TURN_BARRIER + (c ^ 1)) : "memory");
}

// Consumer warpgroup c: its 64 packed rows of every unit the CTA walks.
// Every step ends with no product in flight (ptxas serialises wgmma whose
// groups cross a branch it cannot prove uniform: C7518). A step is its
// softmax, then its P V with the next step's S; two consumers (more rows
// than the tensor pipe keeps up with serially) take turns for those.
template <typename T, int DH, int NC, int KEYS, int CTAS>
static __device__ void consumer(const bk_attention_decode_tma_args &p, uint32_t base, int c)
{
    typedef Layout<DH, NC, KEYS, CTAS> L;
    constexpr int NT_S = KEYS / 8, NT_O = DH / 8, KSTEPS = DH / 16;
    constexpr bool TURNS = NC == 2;
    const DecodeArgs &d = p.d;
    const Args &a = d.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
    const int g4 = lane / 4, q4 = lane % 4;
    const ScoreScale ss = score_scale(a.scale);
    int n = 0;
    each_segment<KEYS>(d, [&](const Segment &g) {
        // This thread's two packed rows (g4 and g4 + 8 of its warp's 16).
        const int64_t row0 = g.rgi * 64 * NC + c * 64 + warp * 16;
        int64_t head[2], query[2], end[2];
        bool valid[2];
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int64_t r = row0 + g4 + 8 * half;
            valid[half] = r < d.rows;
            head[half] = g.kvh * d.group + r / a.lq;
            query[half] = r % a.lq;
            end[half] = valid[half] ? decode::seq_key_end(a, g.seq, query[half]) : 0;
        }
        // Keys below this need no mask: every row sees them (query 0's limit
        // is the least, and queries past the sequence's see none); the same
        // in every thread, so that the branch on it does not diverge between
        // the warpgroup's MMAs.
        const int64_t open =
            g.seq.lq < a.lq ? 0 : min(g.stop, decode::seq_key_end(a, g.seq, 0));
        uint32_t qf[KSTEPS][4];
#pragma unroll
        for (int kk = 0; kk < KSTEPS; kk++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int half = i % 2, col = kk * 16 + 2 * q4 + 8 * (i / 2);
                qf[kk][i] = valid[half] ? *(const uint32_t *)(at<T>(a.q, g.b, head[half],
                                                                     query[half]) +
                                                              col)
                                        : 0u;
            }
        float o[NT_O][4], sa[NT_S][4];
        uint32_t pa[KEYS / 16][4];
        zero(o);
        float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.f, l_b = 0.f;
        // The scores of step s in sc: masked, the online softmax, P into pa.
        auto softmax = [&](float (&sc)[NT_S][4], int64_t s) {
            const int64_t k0 = g.key0 + s * KEYS;
            if (k0 + KEYS > open) {
#pragma unroll
                for (int j = 0; j < NT_S; j++)
#pragma unroll
                    for (int e = 0; e < 2; e++) {
                        const int64_t key = k0 + j * 8 + 2 * q4 + e;
                        if (key >= g.stop || key >= end[0])
                            sc[j][e] = ss.masked;
                        if (key >= g.stop || key >= end[1])
                            sc[j][2 + e] = ss.masked;
                    }
            }
            online_softmax(sc, o, m_a, m_b, l_a, l_b, ss);
#pragma unroll
            for (int j = 0; j < NT_S; j++) {
                pa[j / 2][(j % 2) * 2] = pack2<T>(sc[j][0], sc[j][1]);
                pa[j / 2][(j % 2) * 2 + 1] = pack2<T>(sc[j][2], sc[j][3]);
            }
        };
        if (g.steps > 0) { // S of the first step, alone
            const Step<L> st(base, n);
            mbar_wait(st.k_full, st.parity);
            wait_turn<TURNS>(c);
            issue_fragments_bt<T, L, KEYS>(sa, qf, st.k_tile);
            pass_turn<TURNS>(c);
            wgmma_wait<0>();
            fence_operand(sa);
        }
        for (int64_t s = 0; s < g.steps; s++, n++) {
            const Step<L> st(base, n);
            // V's rows past the sequence's keys (but short of Lk, which the
            // engine fills with zeros), zeroed before P V reads them; ahead
            // of the softmax, while P holds no registers.
            const UnownedRows unowned = unowned_rows(g.key0 + s * KEYS, g.seq.lk, a.lk, KEYS);
            if (unowned.from < unowned.to) {
                mbar_wait(st.v_full, st.parity);
                zero_tile_rows<L::CB, 128>(st.v_tile, L::KV_BLOCK, unowned.from, unowned.to, tid);
                publish_zeroed_rows<128>(ZEROED_BARRIER + c);
            }
            softmax(sa, s);
            mbar_wait(st.v_full, st.parity);
            if (s + 1 < g.steps) {
                const Step<L> next(base, n + 1);
                // With turns, the next K is waited for before the turn (not
                // holding it over a wait for copies); alone, under P V.
                if constexpr (TURNS) {
                    mbar_wait(next.k_full, next.parity);
                    wait_turn<TURNS>(c);
                }
                issue_ab<T, L, KEYS>(o, pa, st.v_tile);
                if constexpr (!TURNS)
                    mbar_wait(next.k_full, next.parity);
                issue_fragments_bt<T, L, KEYS>(sa, qf, next.k_tile);
                pass_turn<TURNS>(c);
                wgmma_wait<0>();
            } else {
                wait_turn<TURNS>(c);
                issue_ab<T, L, KEYS>(o, pa, st.v_tile);
                pass_turn<TURNS>(c);
                wgmma_wait<0>();
            }
            fence_operand(sa);
            fence_operand(o);
            fence_operand(pa);
            release(st.empty);
        }
#pragma unroll
        for (int x = 1; x <= 2; x *= 2) {
            l_a += __shfl_xor_sync(0xFFFFFFFFu, l_a, x);
            l_b += __shfl_xor_sync(0xFFFFFFFFu, l_b, x);
        }
        // The part: o / l and lse = m + log2 l (base 2), or 0 and -inf; NaN
        // for a sequence out of range.
        const int64_t cell0 = (g.u * d.max_parts + g.slot) * (64 * NC) + c * 64 + warp * 16 + g4;
#pragma unroll
        for (int half = 0; half < 2; half++)
            if (valid[half])
                decode::store_part_row(d, cell0 + 8 * half, o, half, half ? l_b : l_a,
                                       half ? m_b : m_a, q4, g.seq.bad);
    });
}

template <typename T, int DH, int NC, int KEYS, int CTAS>
static __device__ void split(const bk_attention_decode_tma_args &p)
{
    typedef Layout<DH, NC, KEYS, CTAS> L;
    const uint32_t base = shared_base_1024();
    if (threadIdx.x == 0) {
        // k_full, v_full: the producer's copies; empty: a consumer warp each.
        for (int s = 0; s < L::STAGES; s++) {
            mbar_init(base + L::BARS + 8 * s, 1);
            mbar_init(base + L::BARS + 8 * (L::STAGES + s), 1);
            mbar_init(base + L::BARS + 8 * (2 * L::STAGES + s), 4 * NC);
        }
        mbar_fence_init();
    }
    __syncthreads();
    grid_dependency_wait();
    const int group = threadIdx.x / 128;
    // Registers move to the consumers where two share the SM's file (two
    // of a CTA, or one each of two CTAs: 128 a thread at launch).
    constexpr bool SHARED_FILE = NC == 2 || CTAS == 2;
    if (group == 0) {
        if constexpr (SHARED_FILE)
            registers_shrink_to<40>();
        if (threadIdx.x == 0)
            producer<L>(p, base);
    } else {
        if constexpr (SHARED_FILE)
            registers_grow_to<NC == 2 ? 232 : 216>();
        const int c = NC == 1 ? 0 : group - 1;
        if (NC == 2 && c == 1)
            pass_turn<NC == 2>(c); // consumer 0 goes first
        consumer<T, DH, NC, KEYS, CTAS>(p, base, c);
        if (NC == 2 && c == 0)
            wait_turn<NC == 2>(c); // consumer 1's last pass: both barriers end complete
    }
}

} // namespace decode_wg
} // namespace attention
} // namespace bk

// bk_attention_decode_wgmma_<type>_d<D>_c<NC>_k<KEYS>[_p2]: NC consumer
// warpgroups (64 packed rows each) and the producer's, steps of KEYS keys;
// _p2: two CTAs an SM.
#define BK_ATTENTION_DECODE_WG(NAME, T, DH, NC, KEYS, CTAS, TAG)                                 \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_DECODE_WG_THREADS(NC), CTAS)     \
        bk_attention_decode_wgmma_##NAME##_d##DH##_c##NC##_k##KEYS##TAG(                         \
            const __grid_constant__ bk_attention_decode_tma_args p)                              \
    {                                                                                            \
        bk::attention::decode_wg::split<T, DH, NC, KEYS, CTAS>(p);                               \
    }
// Steps of 128 keys, but 64 at D = 128 with two CTAs an SM (three stages
// of 32 KiB each in 96 KiB).
#define BK_ATTENTION_DECODE_WG_TYPE(NAME, T)                                                     \
    BK_ATTENTION_DECODE_WG(NAME, T, 64, 1, 128, 1, )                                             \
    BK_ATTENTION_DECODE_WG(NAME, T, 64, 2, 128, 1, )                                             \
    BK_ATTENTION_DECODE_WG(NAME, T, 128, 1, 128, 1, )                                            \
    BK_ATTENTION_DECODE_WG(NAME, T, 128, 2, 128, 1, )                                            \
    BK_ATTENTION_DECODE_WG(NAME, T, 64, 1, 128, 2, _p2)                                          \
    BK_ATTENTION_DECODE_WG(NAME, T, 128, 1, 64, 2, _p2)

BK_ATTENTION_DECODE_WG_TYPE(f16, __half)
BK_ATTENTION_DECODE_WG_TYPE(bf16, __nv_bfloat16)
