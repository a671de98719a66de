// Block-sparse attention forward on Hopper (sm_90a): wgmma with K and V
// tiles brought by the bulk tensor copy engine, warp-specialised. F16 and
// BF16, D = Dv = 64 or 128, blocks that are multiples of 64; the plan
// takes ptx/attention_mma.cu elsewhere.
//
// A CTA owns 128 query rows of one (batch, head): warpgroup 0 is the
// producer, warpgroups 1 and 2 each own 64 rows. The producer (one warp,
// one lane issuing the copies) walks the key tiles (BN = 128 keys where
// the key blocks allow, else 64) that either consumer needs (their query
// blocks' active key blocks, up to the causal limit) and fills a ring of
// K and V stages; a consumer
// waits for K, computes S = Q K^T (wgmma, both operands in shared
// memory), runs the online softmax in registers, waits for V, adds P V
// (wgmma, P from registers) and releases the stage. A tile only one
// consumer needs is skipped by the other (blocks of 64 rows may differ).
#include "attention_common.cuh"
#include "tma_ops.cuh"
#include "wgmma_ops.cuh"

// Tuning switches (variants of the module, BK_CUDA_MODULE_DIR): the overlap
// of one tile's softmax with the tensor cores' work on its neighbours (on,
// it measured 3-4% slower on the H100, 2026-11-23: the two consumers
// already take turns), and the move of registers from the producer to the
// consumers.
#ifndef BK_ATTENTION_WGMMA_OVERLAP
#define BK_ATTENTION_WGMMA_OVERLAP 0
#endif
#ifndef BK_ATTENTION_WGMMA_SETMAXNREG
#define BK_ATTENTION_WGMMA_SETMAXNREG 1
#endif

namespace bk {
namespace attention {
namespace wg {

using namespace bk::hopper;

constexpr int ROWS = 64;              // query rows per consumer

// The walk over 64-key slots, the same in the producer and both
// consumers. A tile of the ring is a pair of active slots (one when the
// row ends): any two, so blocks of 64 keys fill 128-key tiles too.
constexpr int SLOT = 64;
struct Pair {
    int64_t lo, hi; // slots; hi < 0: the upper half is empty
};

struct Walk {
    int64_t pb, ph, per_block;
    int64_t ib0, ib1, end0, end1; // each consumer's query block and key limit (0: no rows)
    // Query blocks of 64 rows: both consumers own the CTA's 64 rows and take
    // turns over the tiles (consumer n % 2 takes tile n), merged at the end;
    // else each consumer owns 64 of 128 rows and computes every tile it needs.
    bool split;

    __device__ bool needs(const Args &a, int c, int64_t t) const
    {
        return t >= 0 && t * SLOT < (c ? end1 : end0) &&
               block_active(a, pb, ph, c ? ib1 : ib0, t / per_block);
    }
    __device__ bool needs(const Args &a, int c, const Pair &p) const
    {
        return needs(a, c, p.lo) || needs(a, c, p.hi);
    }
    // Whether consumer c computes union tile n (the pair p).
    __device__ bool takes(const Args &a, int c, int n, const Pair &p) const
    {
        return split ? n % 2 == c : needs(a, c, p);
    }
    // The next slot at or after t that either consumer needs, or -1. Called
    // by whole warps: the lanes test 32 slots at once (a sparse row would
    // otherwise cost one dependent mask read per slot).
    __device__ int64_t next(const Args &a, int64_t t) const
    {
        const int64_t limit = max(end0, end1);
        for (; t * SLOT < limit; t += 32) {
            const int64_t mine = t + threadIdx.x % 32;
            const unsigned hits =
                __ballot_sync(0xFFFFFFFFu, needs(a, 0, mine) || needs(a, 1, mine));
            if (hits)
                return t + __ffs(hits) - 1;
        }
        return -1;
    }
    // The pair from slot t on; lo < 0 at the end.
    __device__ Pair pair_from(const Args &a, int64_t t) const
    {
        Pair p;
        p.lo = t < 0 ? -1 : next(a, t);
        p.hi = p.lo < 0 ? -1 : next(a, p.lo + 1);
        return p;
    }
    __device__ Pair after(const Args &a, const Pair &p) const
    {
        return pair_from(a, p.hi < 0 ? -1 : p.hi + 1);
    }
};

// Shared memory of a CTA: two Q tiles (64 rows each), STAGES K and V
// tiles (BN rows each), then the barriers. A tile is DH / 64 column
// blocks of rows x 128 bytes, each 128-byte swizzled.
template <int DH, int BN> struct Layout {
    static constexpr int CB = DH / 64;
    static constexpr int STAGES = DH == 128 && BN == 128 ? 2 : 3;
    static constexpr uint32_t Q_BLOCK = ROWS * 128, KV_BLOCK = BN * 128;
    static constexpr uint32_t Q_BYTES = CB * Q_BLOCK, KV_BYTES = CB * KV_BLOCK;
    static constexpr uint32_t Q = 0;
    static constexpr uint32_t K = 2 * Q_BYTES;
    static constexpr uint32_t V = K + STAGES * KV_BYTES;
    // Split mode: consumer 1's O (64 x DH F32), row maxima and sums for
    // consumer 0 to merge.
    static constexpr uint32_t XO = V + STAGES * KV_BYTES;
    static constexpr uint32_t XML = XO + ROWS * DH * 4;
    static constexpr uint32_t BARS = XML + 4 * 128 * 4;
    // Barriers: q_full, then k_full, v_full and empty per stage; and the
    // slack to align the start to 1024 bytes.
    static constexpr uint32_t BYTES = BARS + 8 * (1 + 3 * STAGES) + 1024;
};

// The stage of union tile n: its K, V and empty barriers and the parity
// of its current use.
struct Stage {
    uint32_t k_full, v_full, empty, parity, k_tile, v_tile;
    template <int DH, int BN> static __device__ Stage of(uint32_t base, int n)
    {
        typedef Layout<DH, BN> L;
        const int s = n % L::STAGES;
        Stage st;
        st.k_full = base + L::BARS + 8 * (1 + s);
        st.v_full = st.k_full + 8 * L::STAGES;
        st.empty = st.v_full + 8 * L::STAGES;
        st.parity = (uint32_t)((n / L::STAGES) & 1);
        st.k_tile = base + L::K + s * L::KV_BYTES;
        st.v_tile = base + L::V + s * L::KV_BYTES;
        return st;
    }
};

// Run by warp 0: every lane walks the tiles, lane 0 issues the copies.
template <typename T, int DH, int BN>
static __device__ void producer(const bk_attention_tma_args &p, const Walk &w, uint32_t base,
                                int64_t r0, int64_t kvh, int64_t h, int64_t b)
{
    typedef Layout<DH, BN> L;
    const Args &a = p.a;
    const bool leader = threadIdx.x == 0;
    const uint32_t q_full = base + L::BARS;
    if (leader) {
        const int q_tiles = w.split ? 1 : 2;
        mbar_expect_tx(q_full, q_tiles * L::Q_BYTES);
        for (int c = 0; c < q_tiles; c++)
            for (int cb = 0; cb < L::CB; cb++)
                tma_load_4d(base + L::Q + c * L::Q_BYTES + cb * L::Q_BLOCK, p.map_q, 64 * cb,
                            (int)(r0 + ROWS * c), (int)h, (int)b, q_full);
    }
    int n = 0;
    for (Pair pr = w.pair_from(a, 0); pr.lo >= 0; pr = w.after(a, pr), n++) {
        const Stage st = Stage::of<DH, BN>(base, n);
        if (n >= L::STAGES) // the previous use of the stage, one phase back
            mbar_wait(st.empty, st.parity ^ 1u);
        if (!leader)
            continue;
        // Each half from its slot; an empty upper half from past Lk (zeros).
        const int key[2] = { (int)(pr.lo * SLOT), (int)(pr.hi >= 0 ? pr.hi * SLOT : a.lk) };
        mbar_expect_tx(st.k_full, L::KV_BYTES);
        for (int half = 0; half < 2; half++)
            for (int cb = 0; cb < L::CB; cb++)
                tma_load_4d(st.k_tile + cb * L::KV_BLOCK + half * SLOT * 128, p.map_k, 64 * cb,
                            key[half], (int)kvh, (int)b, st.k_full);
        mbar_expect_tx(st.v_full, L::KV_BYTES);
        for (int half = 0; half < 2; half++)
            for (int cb = 0; cb < L::CB; cb++)
                tma_load_4d(st.v_tile + cb * L::KV_BLOCK + half * SLOT * 128, p.map_v, 64 * cb,
                            key[half], (int)kvh, (int)b, st.v_full);
    }
}

// One arrival per consumer warp frees a stage (8 make it empty).
static __device__ __forceinline__ void release(const Stage &st)
{
    __syncwarp();
    if (threadIdx.x % 32 == 0)
        mbar_arrive(st.empty);
}

// Frees a use this consumer skips. Its arrival must count toward this
// use's phase of the stage's empty barrier, not the use before (which the
// other consumer may still be reading): wait for that one first.
template <int DH, int BN>
static __device__ __forceinline__ void release_skipped(uint32_t base, int n)
{
    const Stage st = Stage::of<DH, BN>(base, n);
    if (n >= Layout<DH, BN>::STAGES)
        mbar_wait(st.empty, st.parity ^ 1u);
    release(st);
}

// S = Q K^T for 64 rows x BN keys (D in steps of 16, 32 bytes), issued.
template <typename T, int DH, int BN>
static __device__ __forceinline__ void issue_scores(float (&sc)[BN / 8][4], uint32_t q_tile,
                                                    const Stage &st)
{
    typedef Layout<DH, BN> L;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < DH / 16; kk++) {
        const uint32_t in_block = (kk % 4) * 32;
        const uint64_t dq = smem_desc(q_tile + (kk / 4) * L::Q_BLOCK + in_block, 16, 1024);
        const uint64_t dk = smem_desc(st.k_tile + (kk / 4) * L::KV_BLOCK + in_block, 16, 1024);
        if constexpr (BN == 128)
            mma_ss_n128<T>(sc, dq, dk, kk > 0);
        else
            mma_ss_n64<T>(sc, dq, dk, kk > 0);
    }
    wgmma_commit();
}

// O += P V, 16 keys per step, V MN-major (d contiguous), issued.
template <typename T, int DH, int BN>
static __device__ __forceinline__ void issue_pv(float (&o)[DH / 8][4],
                                                const uint32_t (&pa)[BN / 16][4], const Stage &st)
{
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) {
        const uint64_t dv = smem_desc(st.v_tile + kk * 16 * 128, Layout<DH, BN>::KV_BLOCK, 1024);
        if constexpr (DH == 128)
            mma_rs_n128_t<T>(o, pa[kk], dv);
        else
            mma_rs_n64_t<T>(o, pa[kk], dv);
    }
    wgmma_commit();
}

// A consumer's rows, their softmax state and output accumulators.
template <typename T, int DH> struct Rows {
    float o[DH / 8][4];
    float m_a, m_b, l_a, l_b;
    int64_t end_a, end_b, first_end;
    int q4;
};

// Masks the tile's scores past each row's last key, then turns them into
// P in place, in base 2 against the new row maxima; returns the factors
// that rescale the rows' running sums and outputs.
// The keys of a tile's two halves for this consumer: where each starts,
// and whether the consumer needs it at all.
struct Halves {
    int64_t k0, k1;
    bool use0, use1;
};

template <typename T, int DH, int BN>
static __device__ __forceinline__ float2 softmax(Rows<T, DH> &r, float (&sc)[BN / 8][4],
                                                 const Halves &hv, float sl2)
{
    // Mask a half this consumer skips, keys past Lk and past the causal limit.
    if (!hv.use0 || !hv.use1 || max(hv.k0, hv.k1) + SLOT > r.first_end) {
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const bool upper = j >= SLOT / 8;
            const bool use = upper ? hv.use1 : hv.use0;
            const int64_t first = (upper ? hv.k1 : hv.k0) + (j % (SLOT / 8)) * 8 + 2 * r.q4;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int64_t key = first + e;
                if (!use || key >= r.end_a)
                    sc[j][e] = -INFINITY;
                if (!use || key >= r.end_b)
                    sc[j][2 + e] = -INFINITY;
            }
        }
    }
    float mx_a = r.m_a, mx_b = r.m_b;
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        mx_a = fmaxf(mx_a, fmaxf(sc[j][0], sc[j][1]) * sl2);
        mx_b = fmaxf(mx_b, fmaxf(sc[j][2], sc[j][3]) * sl2);
    }
#pragma unroll
    for (int x = 1; x <= 2; x *= 2) {
        mx_a = fmaxf(mx_a, __shfl_xor_sync(0xFFFFFFFFu, mx_a, x));
        mx_b = fmaxf(mx_b, __shfl_xor_sync(0xFFFFFFFFu, mx_b, x));
    }
    const float base_a = mx_a == -INFINITY ? 0.f : mx_a;
    const float base_b = mx_b == -INFINITY ? 0.f : mx_b;
    const float2 corr = make_float2(exp2f(r.m_a - base_a), exp2f(r.m_b - base_b));
    r.m_a = mx_a;
    r.m_b = mx_b;
    float sum_a = 0.f, sum_b = 0.f;
#pragma unroll
    for (int j = 0; j < BN / 8; j++) {
        sc[j][0] = exp2f(sc[j][0] * sl2 - base_a);
        sc[j][1] = exp2f(sc[j][1] * sl2 - base_a);
        sc[j][2] = exp2f(sc[j][2] * sl2 - base_b);
        sc[j][3] = exp2f(sc[j][3] * sl2 - base_b);
        sum_a += sc[j][0] + sc[j][1];
        sum_b += sc[j][2] + sc[j][3];
    }
    r.l_a = r.l_a * corr.x + sum_a;
    r.l_b = r.l_b * corr.y + sum_b;
    return corr;
}

// Split mode: consumer 1 leaves its partial rows (O, maxima, sums) in
// shared memory and returns false; consumer 0 waits for them and folds
// them into its own. Thread tid of both holds the same rows and columns.
template <int DH, int BN, typename R>
static __device__ __forceinline__ bool merge(R &r, uint32_t base, int c, int tid)
{
    typedef Layout<DH, BN> L;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    unsigned char *window = smem_bytes + (base - (uint32_t)__cvta_generic_to_shared(smem_bytes));
    float *xo = (float *)(window + L::XO), *xml = (float *)(window + L::XML);
    if (c == 1) {
#pragma unroll
        for (int j = 0; j < DH / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                xo[(j * 4 + e) * 128 + tid] = r.o[j][e];
        xml[0 * 128 + tid] = r.m_a;
        xml[1 * 128 + tid] = r.m_b;
        xml[2 * 128 + tid] = r.l_a;
        xml[3 * 128 + tid] = r.l_b;
        asm volatile("bar.arrive 1, 256;\n" ::: "memory");
        return false;
    }
    asm volatile("bar.sync 1, 256;\n" ::: "memory");
    const float m1a = xml[tid], m1b = xml[128 + tid];
    const float ma = fmaxf(r.m_a, m1a), mb = fmaxf(r.m_b, m1b);
    // Scale each side to the joint maximum (a side that saw nothing: 0).
    const float base_a = ma == -INFINITY ? 0.f : ma, base_b = mb == -INFINITY ? 0.f : mb;
    const float f0a = exp2f(r.m_a - base_a), f1a = exp2f(m1a - base_a);
    const float f0b = exp2f(r.m_b - base_b), f1b = exp2f(m1b - base_b);
#pragma unroll
    for (int j = 0; j < DH / 8; j++) {
        r.o[j][0] = r.o[j][0] * f0a + xo[(j * 4 + 0) * 128 + tid] * f1a;
        r.o[j][1] = r.o[j][1] * f0a + xo[(j * 4 + 1) * 128 + tid] * f1a;
        r.o[j][2] = r.o[j][2] * f0b + xo[(j * 4 + 2) * 128 + tid] * f1b;
        r.o[j][3] = r.o[j][3] * f0b + xo[(j * 4 + 3) * 128 + tid] * f1b;
    }
    r.l_a = r.l_a * f0a + xml[2 * 128 + tid] * f1a;
    r.l_b = r.l_b * f0b + xml[3 * 128 + tid] * f1b;
    r.m_a = ma;
    r.m_b = mb;
    return true;
}

// A consumer warpgroup. The softmax of tile t runs while the tensor cores
// finish P V of tile t - 1; S of the next tile is issued before P V of
// this one, so it is ready when the softmax needs it.
template <typename T, int DH, int BN>
static __device__ void consumer(const bk_attention_tma_args &p, const Walk &w, uint32_t base,
                                int c, int64_t r0, int64_t h, int64_t b, bool bad)
{
    typedef Layout<DH, BN> L;
    constexpr int NT_O = DH / 8;
    const Args &a = p.a;
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
    const int own = w.split ? 0 : c;        // which 64 rows (and Q tile)
    const int64_t rows0 = r0 + ROWS * own; // this consumer's first row
    const int64_t row_a = rows0 + warp * 16 + lane / 4, row_b = row_a + 8;
    const uint32_t q_tile = base + L::Q + own * L::Q_BYTES;
    const float sl2 = (float)a.scale * LOG2E;

    Rows<T, DH> r;
    zero(r.o);
    r.m_a = r.m_b = -INFINITY;
    r.l_a = r.l_b = 0.f;
    r.end_a = key_end(a, row_a);
    r.end_b = key_end(a, row_b);
    r.first_end = key_end(a, rows0);
    r.q4 = lane % 4;

    mbar_wait(base + L::BARS, 0); // Q
    // Walks the union of tiles from (n, t) to the next this consumer needs.
    auto find_mine = [&](int &n, Pair &t) {
        while (t.lo >= 0 && (bad || !w.takes(a, c, n, t))) {
            n++;
            t = w.after(a, t);
        }
    };
    int n = 0;
    Pair t = w.pair_from(a, 0);
    find_mine(n, t);
    for (int m = 0; m < n; m++) // the uses skipped (all of them when none is left)
        release_skipped<DH, BN>(base, m);
    float sc[BN / 8][4];
    uint32_t pa[BN / 16][4] = {}; // P as the A fragments of 16-key steps, read by P V in flight
    if (t.lo >= 0) {
        const Stage st = Stage::of<DH, BN>(base, n);
        mbar_wait(st.k_full, st.parity);
        issue_scores<T, DH, BN>(sc, q_tile, st);
        wgmma_wait<0>();
        fence_operand(sc);
    }
    int pending = -1; // the union tile whose P V may still run
    while (t.lo >= 0) {
        const Stage st = Stage::of<DH, BN>(base, n);
        const Halves hv = { t.lo * SLOT, t.hi * SLOT, w.needs(a, own, t.lo),
                            w.needs(a, own, t.hi) };
        const float2 corr = softmax<T, DH, BN>(r, sc, hv, sl2);
        wgmma_wait<0>(); // P V of the tile before: O and pa are free
        fence_operand(r.o);
        fence_operand(pa);
        if (pending >= 0)
            release(Stage::of<DH, BN>(base, pending));
#pragma unroll
        for (int j = 0; j < NT_O; j++) {
            r.o[j][0] *= corr.x;
            r.o[j][1] *= corr.x;
            r.o[j][2] *= corr.y;
            r.o[j][3] *= corr.y;
        }
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            pa[j / 2][(j % 2) * 2] = pack2<T>(sc[j][0], sc[j][1]);
            pa[j / 2][(j % 2) * 2 + 1] = pack2<T>(sc[j][2], sc[j][3]);
        }
        int n2 = n + 1;
        Pair t2 = w.after(a, t);
        find_mine(n2, t2);
        // Waiting for the next K (or freeing skipped uses) while holding
        // this stage is safe only when the producer can get there without
        // this stage back.
        const bool early = BK_ATTENTION_WGMMA_OVERLAP && t2.lo >= 0 && n2 - n < L::STAGES;
        if (early) {
            for (int m = n + 1; m < n2; m++)
                release_skipped<DH, BN>(base, m);
            const Stage nx = Stage::of<DH, BN>(base, n2);
            mbar_wait(nx.k_full, nx.parity);
            issue_scores<T, DH, BN>(sc, q_tile, nx);
        }
        mbar_wait(st.v_full, st.parity);
        issue_pv<T, DH, BN>(r.o, pa, st);
        pending = n;
        if (early) {
            wgmma_wait<1>(); // the scores; P V may still run
            fence_operand(sc);
        } else {
            wgmma_wait<0>();
            fence_operand(r.o);
            fence_operand(pa);
            release(st);
            pending = -1;
            for (int m = n + 1; m < n2; m++)
                release_skipped<DH, BN>(base, m);
            if (t2.lo >= 0) {
                const Stage nx = Stage::of<DH, BN>(base, n2);
                mbar_wait(nx.k_full, nx.parity);
                issue_scores<T, DH, BN>(sc, q_tile, nx);
                wgmma_wait<0>();
                fence_operand(sc);
            }
        }
        n = n2;
        t = t2;
    }
    wgmma_wait<0>();
    fence_operand(r.o);
    if (pending >= 0)
        release(Stage::of<DH, BN>(base, pending));

#pragma unroll
    for (int x = 1; x <= 2; x *= 2) {
        r.l_a += __shfl_xor_sync(0xFFFFFFFFu, r.l_a, x);
        r.l_b += __shfl_xor_sync(0xFFFFFFFFu, r.l_b, x);
    }
    if (w.split && !merge<DH, BN>(r, base, c, tid))
        return; // consumer 1 handed its rows to consumer 0
    const float nan = quiet_nan();
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int64_t row = half ? row_b : row_a;
        if (row >= a.lq)
            continue;
        const float l = half ? r.l_b : r.l_a, m = half ? r.m_b : r.m_a;
        const float inv = bad ? nan : l > 0.f ? 1.f / l : 0.f;
        T *y = at<T>(a.y, b, h, row) + 2 * r.q4;
#pragma unroll
        for (int j = 0; j < NT_O; j++)
            *(uint32_t *)(y + j * 8) =
                pack2<T>(r.o[j][2 * half] * inv, r.o[j][2 * half + 1] * inv);
        if ((a.flags & BK_ATTENTION_HAS_LSE) && r.q4 == 0)
            *((float *)a.lse + b * a.lse_s[0] + h * a.lse_s[1] + row * a.lse_s[2]) =
                bad ? nan : l > 0.f ? (m + log2f(l)) / LOG2E : -INFINITY;
    }
}

template <typename T, int DH, int BN>
static __device__ void forward(const bk_attention_tma_args &p)
{
    typedef Layout<DH, BN> L;
    // Swizzled tiles need 1024-byte alignment: the plan asks for 1 KiB more.
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem_bytes) + 1023u) & ~1023u;
    const Args &a = p.a;
    const bool split = (a.flags & BK_ATTENTION_SPLIT_KEYS) != 0;
    const int64_t r0 = (int64_t)blockIdx.x * (split ? ROWS : BK_ATTENTION_WGMMA_ROWS),
                  h = blockIdx.y, b = blockIdx.z;
    const int64_t kvh = h / (a.heads / a.kv_heads);
    Walk w;
    w.pb = pattern_b(a, b);
    w.ph = pattern_h(a, h);
    w.per_block = a.block_k / SLOT;
    w.split = split;
    const int64_t second = r0 + ROWS;
    w.ib0 = r0 / a.block_q;
    w.ib1 = split ? w.ib0 : second / a.block_q;
    w.end0 = key_end(a, min(second, a.lq) - 1);
    w.end1 = split ? w.end0 : second < a.lq ? key_end(a, min(second + ROWS, a.lq) - 1) : 0;
    const bool bad = pattern_bad(a, w.pb, w.ph);
    if (bad)
        w.end0 = w.end1 = 0; // no tile: the consumers write NaN

    if (threadIdx.x == 0) {
        mbar_init(base + L::BARS, 1);
        for (int s = 0; s < L::STAGES; s++) {
            mbar_init(base + L::BARS + 8 * (1 + s), 1);                 // k_full
            mbar_init(base + L::BARS + 8 * (1 + L::STAGES + s), 1);     // v_full
            mbar_init(base + L::BARS + 8 * (1 + 2 * L::STAGES + s), 8); // empty: 8 consumer warps
        }
        mbar_fence_init();
    }
    __syncthreads();
    grid_dependency_wait();

    const int group = threadIdx.x / 128;
    // Registers move from the producer, which needs few, to the consumers.
    if (group == 0) {
#if BK_ATTENTION_WGMMA_SETMAXNREG
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
#endif
        if (threadIdx.x < 32 && (w.end0 > 0 || w.end1 > 0))
            producer<T, DH, BN>(p, w, base, r0, kvh, h, b);
        else if (threadIdx.x == 0) // nothing to load: still let the consumers past q_full
            mbar_expect_tx(base + L::BARS, 0);
    } else {
#if BK_ATTENTION_WGMMA_SETMAXNREG
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
#endif
        consumer<T, DH, BN>(p, w, base, group - 1, r0, h, b, bad);
    }
}

} // namespace wg
} // namespace attention
} // namespace bk

// Tiles of 128 keys (two 64-key slots) against 64 rows per consumer.
#define BK_ATTENTION_WGMMA_FORWARD(NAME, T, DH)                                                  \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_WGMMA_THREADS, 1)                \
        bk_attention_forward_wgmma_##NAME##_d##DH(const __grid_constant__ bk_attention_tma_args p) \
    {                                                                                            \
        bk::attention::wg::forward<T, DH, 128>(p);                                               \
    }

BK_ATTENTION_WGMMA_FORWARD(f16, __half, 64)
BK_ATTENTION_WGMMA_FORWARD(f16, __half, 128)
BK_ATTENTION_WGMMA_FORWARD(bf16, __nv_bfloat16, 64)
BK_ATTENTION_WGMMA_FORWARD(bf16, __nv_bfloat16, 128)
