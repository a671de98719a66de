// SPDX-License-Identifier: Apache-2.0
// The walk over key tiles shared by the Hopper attention kernels that own
// query rows (kernels/attention_wgmma.cu's forward, the dq kernel of
// kernels/attention_wgmma_backward.cu): a producer warp finds the 64-key slots
// that either of two consumer warpgroups needs and streams them as 128-key
// tiles through a ring of K and V stages, each with a record saying who
// takes it; and the GEMM issue steps both kernels run on such tiles.
//
// A layout L gives: NC (consumer warpgroups of 64 rows: 2; 1 for the
// forward's solo and narrow CTAs, two an SM; 3 for its trio CTAs), CB (column blocks
// of 64 elements per row), STAGES, Q_BLOCK, Q_BYTES (one consumer's 64-row
// operand), KV_BLOCK, KV_BYTES (a tile of 128 keys, or of 64: a single
// slot, the narrow CTAs at D = 128), ROW_OPERANDS (1: Q; 2: Q and dY), V_LAGS
// (V of a tile loaded after K of the next, for consumers that free K
// first: the forward), and the offsets Q (the row operands: operand op of
// consumer c at Q + (NC op + c) Q_BYTES), K, V, RECORDS and BARS (q_full,
// q_empty, then k_full, v_full, k_empty and v_empty per stage).
#ifndef BK_ATTENTION_WGMMA_WALK_CUH
#define BK_ATTENTION_WGMMA_WALK_CUH

#include "attention_common.cuh"
#include "attention_unread_keys.cuh"
#include "shared_memory_ops.cuh"
#include "tma_ops.cuh"
#include "wgmma_ops.cuh"

// Tuning switch (variants of the modules, BK_CUDA_MODULE_DIR): the move of
// registers from the producer warpgroup to the consumers.
#ifndef BK_ATTENTION_WGMMA_SETMAXNREG
#define BK_ATTENTION_WGMMA_SETMAXNREG 1
#endif

namespace bk {
namespace attention {
namespace wg {

using namespace bk::hopper;

constexpr int ROWS = 64; // query rows per consumer

// The walk over 64-key slots, by the producer warp, which tells the
// consumers what it found through each tile's record. A tile of the ring
// is a pair of active slots (one when the row ends): any two, so blocks
// of 64 keys fill 128-key tiles too.
constexpr int SLOT = 64;

struct Walk {
    // 32 bits suffice (the fast kernels take lengths below 2^31, B and H
    // below 2^16), and what the arguments give is not kept: the producer
    // has few registers.
    int pb, ph;
    // Each consumer's query block and key limit (0: no rows); the third's
    // only in a trio CTA.
    int ib0, ib1, ib2, end0, end1, end2;

    __device__ bool needs(const Args &a, int c, int64_t t) const
    {
        return t * SLOT < (c == 0 ? end0 : c == 1 ? end1 : end2) &&
               block_active(a, pb, ph, c == 0 ? ib0 : c == 1 ? ib1 : ib2,
                            t / (int)(a.block_k / SLOT));
    }
};

// The first 1024-byte boundary of the dynamic shared memory: swizzled
// tiles need it (the plans ask for 1 KiB more than a layout takes).
static __device__ __forceinline__ uint32_t shared_base_1024()
{
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    return ((uint32_t)__cvta_generic_to_shared(smem_bytes) + 1023u) & ~1023u;
}

// Registers move from the producer warpgroup, which needs few, to the
// consumer warpgroups: 40 + 2 x 232 per thread of the 3 x 128, what the
// CTA was launched with (3 x 128 x 168); a wide CTA's (tiles of BN = 192
// keys) 24 + 2 x 240; a solo CTA (two an SM) 40 + 216 of its 2 x 128 x
// 128, at D = 128 (O of 64 registers, and a solo CTA's S; a narrow one's
// the same) 32 + 224; a trio CTA 32 + 3 x 160 of its 4 x 128 x 128.
template <int NC = 2, int BN = 128, int DH = 64>
static __device__ __forceinline__ void producer_registers()
{
    if (BK_ATTENTION_WGMMA_SETMAXNREG)
        registers_shrink_to<BN == 192                           ? 24
                            : NC == 3 || (NC == 1 && DH == 128) ? 32
                                                                : 40>();
}
template <int NC, int BN = 128, int DH = 64>
static __device__ __forceinline__ void consumer_registers()
{
    if (BK_ATTENTION_WGMMA_SETMAXNREG)
        registers_grow_to<NC == 3   ? 160
                          : NC == 2 ? (BN == 192 ? 240 : 232)
                                    : (DH == 128 ? 224 : 216)>();
}

// A walk's blocks and key limits for first query row r0: first_end() the
// first consumer's key limit, rows_end(first) the limit of the 64 rows
// from `first` (the second and third consumers'); nc 1 leaves the second
// to the first's walk, in order. bad: its pattern head is bad, or
// seq_bad; such a walk has no keys, and its consumers write NaN.
template <typename FirstEnd, typename RowsEnd>
static __device__ __forceinline__ Walk walk_rows(const Args &a, int pb, int64_t r0, int64_t h,
                                                 int nc, const FirstEnd &first_end,
                                                 const RowsEnd &rows_end, bool seq_bad,
                                                 bool &bad)
{
    Walk w;
    w.pb = pb;
    w.ph = (int)pattern_h(a, h);
    const int64_t second = r0 + ROWS;
    w.ib0 = (int)((uint32_t)r0 / (uint32_t)a.block_q);
    w.ib1 = (int)((uint32_t)second / (uint32_t)a.block_q);
    w.end0 = (int)first_end();
    w.end1 = (int)rows_end(second);
    if (nc == 1) { // no second consumer: its walk is the first's, in order
        w.ib1 = w.ib0;
        w.end1 = 0;
    }
    w.ib2 = w.ib1;
    w.end2 = 0;
    if (nc == 3) {
        const int64_t third = second + ROWS;
        w.ib2 = (int)((uint32_t)third / (uint32_t)a.block_q);
        w.end2 = (int)rows_end(third);
    }
    bad = seq_bad || pattern_bad(a, w.pb, w.ph);
    if (bad)
        w.end0 = w.end1 = w.end2 = 0;
    return w;
}

// The walk of the CTA whose first query row is r0 (64 rows each of its
// nc consumers); a bad pattern head walks nothing, and its consumers write
// NaN. (32-bit divisions: the persistent forward's producer makes a walk
// per query tile within its 40 registers.)
static __device__ __forceinline__ Walk make_walk(const Args &a, int64_t r0, int64_t h, int64_t b,
                                                 int nc, bool &bad)
{
    return walk_rows(
        a, (int)pattern_b(a, b), r0, h, nc, [&] { return key_end(a, min(r0 + ROWS, a.lq) - 1); },
        [&](int64_t first) { return rows_key_end(a, first, ROWS); }, false, bad);
}

// The walk of a CTA whose first query row is r0 of sequence s (rows and
// keys its own: rows past its lq see no key, a PADDED tile past them
// walks nothing and writes zeros); a bad sequence walks nothing.
static __device__ __forceinline__ Walk make_seq_walk(const Args &a, const Seq &s, int64_t r0,
                                                     int64_t h, int nc, bool &bad)
{
    return walk_rows(
        a, (int)s.pb, r0, h, nc, [&] { return rows_key_end(a, s, r0, ROWS); },
        [&](int64_t first) { return rows_key_end(a, s, first, ROWS); }, s.bad, bad);
}

// The slots each of NC (at least 2) consumers needs, 32 at a time: a
// whole warp reads one mask entry per lane and keeps the answers as a bit
// word per consumer, so that a tile costs no dependent mask read.
template <int NC> struct SlotScan {
    int t0 = -1;            // the first slot of the words
    uint32_t need[NC] = {}; // bit i: consumer c needs slot t0 + i

    // The next slot at or after t that any consumer needs (-1: none),
    // with bit c of `needs` set where consumer c needs it.
    __device__ int next(const Args &a, const Walk &w, int t, uint32_t &needs)
    {
        const int64_t limit = NC == 3 ? max(max(w.end0, w.end1), w.end2) : max(w.end0, w.end1);
        for (; (int64_t)t * SLOT < limit;) {
            if (t0 < 0 || t >= t0 + 32) {
                t0 = t;
                for (int c = 0; c < NC; c++)
                    need[c] = __ballot_sync(0xFFFFFFFFu, w.needs(a, c, t + threadIdx.x % 32));
            }
            uint32_t any = 0;
            for (int c = 0; c < NC; c++)
                any |= need[c];
            const uint32_t ahead = any >> (t - t0);
            if (ahead) {
                const int at = t - t0 + __ffs(ahead) - 1;
                needs = 0;
                for (int c = 0; c < NC; c++)
                    needs |= ((need[c] >> at) & 1u) << c;
                return t0 + at;
            }
            t = t0 + 32;
        }
        needs = 0;
        return -1;
    }
};

// What the producer tells the consumers of union tile n, in shared memory
// beside its K tile and published by k_full: where its 64-key slots start
// (x, y, and w for the third of a wide CTA's 192-key tiles; -64 for an
// empty one) and flags (z): which consumer takes it and needs which slot,
// whether it is the query tile's last, or the end of a walk that found no
// tile (a record without keys). The consumers so skip the walk over the
// pattern (a mask read per slot, 64-bit index math).
enum : uint32_t {
    TILE_END = 1u,
    TILE_LAST = 2u,
    TILE_TAKEN = 4u,       // << consumer (up to 3)
    TILE_USES_LO = 32u,    // << 2 * consumer
    TILE_USES_HI = 64u,    // << 2 * consumer
    TILE_USES_THIRD = 2048u, // << consumer
};

// The stage of union tile n: its barriers, the parity of its current use,
// its K and V tiles and its record.
struct Stage {
    uint32_t k_full, v_full, k_empty, v_empty, parity, k_tile, v_tile, record;
    template <typename L> static __device__ Stage of(uint32_t base, int n)
    {
        const int s = n % L::STAGES;
        Stage st;
        st.k_full = base + L::BARS + 8 * (2 + s);
        st.v_full = st.k_full + 8 * L::STAGES;
        st.k_empty = st.v_full + 8 * L::STAGES;
        st.v_empty = st.k_empty + 8 * L::STAGES;
        st.parity = (uint32_t)((n / L::STAGES) & 1);
        st.k_tile = base + L::K + s * L::KV_BYTES;
        st.v_tile = base + L::V + s * L::KV_BYTES;
        st.record = base + L::RECORDS + 16 * (n % BK_ATTENTION_WGMMA_RECORD_SLOTS(L::STAGES));
        return st;
    }
};

// The ring's barriers, by one thread (then __syncthreads): q_full (the
// row operands' copies) and q_empty (one arrival per consumer warp once
// it holds them in registers: a persistent CTA's next tile of rows may
// come), then per stage k_full and v_full (the producer's copies),
// k_empty and v_empty (one arrival per consumer warp: 4 NC, or WARPS
// where more warpgroups than the walk's NC share each tile).
template <typename L, int WARPS = 4 * L::NC>
static __device__ __forceinline__ void init_ring(uint32_t base)
{
    if (threadIdx.x == 0) {
        mbar_init(base + L::BARS, 1);
        mbar_init(base + L::BARS + 8, WARPS);
        for (int i = 0; i < 4 * L::STAGES; i++)
            mbar_init(base + L::BARS + 8 * (2 + i), i < 2 * L::STAGES ? 1 : WARPS);
        mbar_fence_init();
    }
}

// The rows of union tile st's SLOTS 64-key slots (from keys[s]; negative: an
// empty slot, the engine's zeros) past the keys the sequence owns
// (own_end) but short of the tensors' (tensor_end), zeroed before the
// consumer's products read them (attention_unread_keys.cuh): V's, and K's
// too where WITH_K (the dq kernel's dQ += dS K). V is waited for here, a
// tile early in the forward, only where a slot has such rows (a
// sequence's last tile).
template <typename L, bool WITH_K, int SLOTS>
static __device__ __forceinline__ void zero_unowned_slots(const Stage &st, const int *keys,
                                                          int own_end, int tensor_end, int tid,
                                                          int barrier)
{
    bool any = false;
#pragma unroll
    for (int s = 0; s < SLOTS; s++) {
        const UnownedRows r = unowned_rows(keys[s], own_end, tensor_end, SLOT);
        any = any || (keys[s] >= 0 && r.from < r.to);
    }
    if (!any)
        return;
    mbar_wait(st.v_full, st.parity);
#pragma unroll
    for (int s = 0; s < SLOTS; s++) {
        const UnownedRows r = unowned_rows(keys[s], own_end, tensor_end, SLOT);
        const uint32_t off = s * SLOT * 128;
        if (keys[s] >= 0 && r.from < r.to) {
            if (WITH_K)
                zero_tile_rows<L::CB, 128>(st.k_tile + off, L::KV_BLOCK, r.from, r.to, tid);
            zero_tile_rows<L::CB, 128>(st.v_tile + off, L::KV_BLOCK, r.from, r.to, tid);
        }
    }
    publish_zeroed_rows<128>(barrier);
}

// A 64-key slot of a paged pool from key `key` of sequence b (the decode
// kernels, D their arguments; pages of a power of two, the map's boxes
// min(page, 64) rows): a box a page's piece, at (col, the key's row in
// its page, kvh, the page the block table names). A key at or past Lk (an
// empty slot) or a page out of range reads past the pool: the engine's
// zeros (a page out of range makes the sequence's outputs NaN).
template <typename D>
static __device__ __forceinline__ void paged_slot(const D &d, uint32_t dst, const void *map,
                                                  int col, int key, int kvh, int b, uint32_t full)
{
    // 32-bit: the plan keeps the table's entries, pages and keys below 2^31.
    const int sh = (int)d.page_shift, rows = min(1 << sh, SLOT);
    for (int r = 0; r < SLOT; r += rows) {
        const int k = key + r;
        int page = (int)d.pages;
        if (k < (int)d.a.lk) {
            const int e = ((const int32_t *)d.block_table)[b * (int)d.table_s[0] +
                                                           (k >> sh) * (int)d.table_s[1]];
            page = (unsigned)e < (unsigned)d.pages ? e : page;
        }
        tma_load_4d(dst + (uint32_t)r * 128, map, col, k & ((1 << sh) - 1), kvh, page, full);
    }
}

// Run by warp 0: every lane walks the tiles, lane 0 writes their records
// and issues the copies; the last tile's record says so (a tile is held
// back until the next is found), or where the walk finds none, a record
// without keys ends it. The row operands
// (L::ROW_OPERANDS of Q, then dY) of the consumers come first, on q_full
// (its use-th phase: a persistent CTA's use-th tile of rows, once the
// consumers hold the last one's). The ring's union tiles count on from n;
// returns the count after the query tile's. Keys are the walk's plus k0,
// the sequence's first key row (r0 is a row of the tensors); an empty
// slot loads past the tensors' keys (zeros). PACKED_Q: r0 is a packed row
// of the decode kernels (head-in-group * Lq + query) of the heads from h
// on, loaded through a map whose boxes span 64 / Lq heads.
template <typename L, bool PACKED_Q = false, typename P = bk_attention_tma_args>
static __device__ int producer(const P &p, const Walk &w, uint32_t base, int r0, int kvh, int h,
                               int b, int n, int use, int k0 = 0)
{
    const Args &a = p.a;
    const bool leader = threadIdx.x == 0;
    const uint32_t q_full = base + L::BARS;
    // Slots a tile: 2; 1 where the tiles are of 64 keys (one consumer); 3
    // in a wide CTA.
    constexpr int TILE_SLOTS = L::KV_BLOCK / (SLOT * 128);
    static_assert(TILE_SLOTS >= 1 && TILE_SLOTS <= 3, "tiles of one, two or three slots");
    const bool any = w.end0 > 0 || w.end1 > 0 || (L::NC == 3 && w.end2 > 0);
    if (use > 0)
        mbar_wait(q_full + 8, (uint32_t)(use - 1) & 1u);
    if (leader && any) {
        mbar_expect_tx(q_full, L::NC * L::ROW_OPERANDS * L::Q_BYTES);
        for (int op = 0; op < L::ROW_OPERANDS; op++)
            for (int c = 0; c < L::NC; c++)
                for (int cb = 0; cb < L::CB; cb++)
                    tma_load_4d(base + L::Q + (L::NC * op + c) * L::Q_BYTES + cb * L::Q_BLOCK,
                                op ? p.map_dy : p.map_q, 64 * cb,
                                PACKED_Q ? 0 : (int)(r0 + ROWS * c),
                                PACKED_Q ? h + (r0 + ROWS * c) / (int)a.lq : (int)h, (int)b,
                                q_full);
    } else if (leader) {
        mbar_arrive(q_full); // nothing to load: still let the consumers past
    }
    // K or V of union tile n, from the slots key[0 .. TILE_SLOTS).
    auto load = [&](int kv, int n, const int (&key)[3]) {
        const Stage st = Stage::of<L>(base, n);
        if (n >= L::STAGES) // the previous use of the stage, one phase back
            mbar_wait(kv ? st.v_empty : st.k_empty, st.parity ^ 1u);
        if (!leader)
            return;
        const uint32_t full = kv ? st.v_full : st.k_full, tile = kv ? st.v_tile : st.k_tile;
        mbar_expect_tx(full, L::KV_BYTES);
        for (int half = 0; half < TILE_SLOTS; half++)
            for (int cb = 0; cb < L::CB; cb++) {
                const uint32_t dst = tile + cb * L::KV_BLOCK + half * SLOT * 128;
                if constexpr (PACKED_Q) {
                    if (p.d.block_table) {
                        paged_slot(p.d, dst, kv ? p.map_v : p.map_k, 64 * cb, k0 + key[half],
                                   (int)kvh, (int)b, full);
                        continue;
                    }
                }
                tma_load_4d(dst, kv ? p.map_v : p.map_k, 64 * cb, k0 + key[half], (int)kvh,
                            (int)b, full);
            }
    };
    // The record of union tile n, before its K (k_full publishes it).
    auto record = [&](int n, uint4 rec) {
        const Stage st = Stage::of<L>(base, n);
        if (n >= L::STAGES)
            mbar_wait(st.k_empty, st.parity ^ 1u);
        if (leader)
            store_shared16(st.record, rec);
    };
    // V runs a tile behind K (as the consumers use them: S of tile n with
    // P V of tile n - 1), so that a V slot the consumers still hold does
    // not hold up the next K.
    // The slots of union tile m, from its record (kept in shared memory
    // while its V may still be to load: not in registers, which a wide
    // CTA's producer lacks); an empty one from past Lk (zeros).
    auto recorded = [&](int m, int (&key)[3]) {
        // Lane 0 wrote the record and alone issues the copies: only it reads
        // (no read by another lane racing that write).
        const uint4 rec =
            leader ? load_shared16(Stage::of<L>(base, m).record) : make_uint4(0u, 0u, 0u, 0u);
        key[0] = (int)rec.x;
        key[1] = (int)rec.y < 0 ? (int)a.lk - k0 : (int)rec.y;
        key[2] = (int)rec.w < 0 ? (int)a.lk - k0 : (int)rec.w;
    };
    bool earlier = false; // a tile before this one in the query tile's walk
    // The tile found last, held back until the next is found (or none):
    // its slots (held_lo -1: none held; held_hi, held_3rd -1: empty) and
    // flags.
    int held_lo = -1, held_hi = -1, held_3rd = -1;
    uint32_t held_flags = 0;
    // The held tile as union tile n, TILE_LAST in `last_flag` or 0.
    auto emit_held = [&](uint32_t last_flag) {
        // Each slot's keys; an empty one from past Lk (zeros).
        const int key[3] = { held_lo * SLOT, held_hi >= 0 ? held_hi * SLOT : (int)a.lk - k0,
                             held_3rd >= 0 ? held_3rd * SLOT : (int)a.lk - k0 };
        record(n, make_uint4((uint32_t)key[0], (uint32_t)(held_hi >= 0 ? key[1] : -SLOT),
                             held_flags | last_flag,
                             (uint32_t)(held_3rd >= 0 ? key[2] : -SLOT)));
        load(0, n, key);
        if (!L::V_LAGS) {
            load(1, n, key);
        } else if (earlier) {
            int last[3];
            recorded(n - 1, last);
            load(1, n - 1, last);
        }
        earlier = true;
        n++;
    };
    // A tile from slots lo, hi and third (-1: empty) and the consumers
    // that need each (bit c for consumer c): the one held before goes out,
    // this one is held.
    auto emit = [&](int lo, int hi, uint32_t lo_cls, uint32_t hi_cls, int third = -1,
                    uint32_t third_cls = 0) {
        if (held_lo >= 0)
            emit_held(0u);
        // Who takes the tile, who needs which slot: bit c of each slot's
        // class to consumer c's flags.
        held_flags = (lo_cls | hi_cls | third_cls) * TILE_TAKEN;
        for (int c = 0; c < L::NC; c++)
            held_flags |= ((lo_cls >> c) & 1u) * (TILE_USES_LO << 2 * c) |
                          ((hi_cls >> c) & 1u) * (TILE_USES_HI << 2 * c) |
                          ((third_cls >> c) & 1u) * (TILE_USES_THIRD << c);
        held_lo = lo;
        held_hi = hi;
        held_3rd = third;
    };
    if constexpr (TILE_SLOTS == 3) {
        // A wide CTA (DENSE patterns only: the plan) takes every slot below
        // either consumer's key limit, in order, three a tile; no mask to
        // read, and no scan's state in its producer's 24 registers.
        const int limit = max(w.end0, w.end1);
        const auto cls = [&](int s) {
            return (uint32_t)(s * SLOT < w.end0) | (uint32_t)(s * SLOT < w.end1) << 1;
        };
        for (int t = 0; t * SLOT < limit; t += 3) {
            const uint32_t c1 = cls(t + 1), c2 = cls(t + 2);
            emit(t, c1 ? t + 1 : -1, cls(t), c1, c2 ? t + 2 : -1, c2);
        }
    } else {
        SlotScan<L::NC < 2 ? 2 : L::NC> scan;
        uint32_t needs, hi_needs; // bit c: consumer c needs the slot
        int t = any ? scan.next(a, w, 0, needs) : -1;
        if (L::NC == 3 || TILE_SLOTS == 1 || w.ib0 == w.ib1) {
            // One query block (and pattern row) for both consumers: they differ
            // at most by their key limits; the slots pair in order. So too in a
            // trio CTA (taken for DENSE patterns: forced onto others, a consumer
            // skips or masks the slots it does not need), and in tiles of one
            // slot, which the consumers that do not need it skip.
            for (; t >= 0;) {
                hi_needs = 0;
                const int hi = TILE_SLOTS == 2 ? scan.next(a, w, t + 1, hi_needs) : -1;
                emit(t, hi, needs, hi_needs);
                t = TILE_SLOTS == 1 ? scan.next(a, w, t + 1, needs)
                    : hi < 0        ? -1
                                    : scan.next(a, w, hi + 1, needs);
            }
        } else {
            // Blocks of 64 rows whose patterns differ: a tile pairs two slots
            // that the same consumers need (the slot's class), so that a
            // consumer computes only keys it needs while every slot still loads
            // once. A slot waits in held<class> for the next of its class;
            // those left over at the end pair up whatever their classes, the
            // last alone. Tiles so leave out of key order, which the online
            // softmax and dQ's sums do not mind. (Three variables, not an
            // array: no local memory. In order when the consumers share a
            // block: this walk cost ~4% there on the H100.)
            int held1 = -1, held2 = -1, held3 = -1;
            // Takes the held slot of the first class in 3, 1, 2 that has one
            // (class 0 and -1: none).
            auto take_held = [&](uint32_t &cls) {
                cls = held3 >= 0 ? 3u : held1 >= 0 ? 1u : held2 >= 0 ? 2u : 0u;
                const int slot = cls == 3 ? held3 : cls == 1 ? held1 : cls == 2 ? held2 : -1;
                held1 = cls == 1 ? -1 : held1;
                held2 = cls == 2 ? -1 : held2;
                held3 = cls == 3 ? -1 : held3;
                return slot;
            };
            for (; t >= 0; t = scan.next(a, w, t + 1, needs)) {
                const int waiting = needs == 1 ? held1 : needs == 2 ? held2 : held3;
                const int keep = waiting < 0 ? t : -1;
                held1 = needs == 1 ? keep : held1;
                held2 = needs == 2 ? keep : held2;
                held3 = needs == 3 ? keep : held3;
                if (waiting >= 0)
                    emit(waiting, t, needs, needs);
            }
            for (;;) {
                uint32_t lo_cls, hi_cls;
                const int lo = take_held(lo_cls);
                if (lo < 0)
                    break;
                const int hi = take_held(hi_cls);
                emit(lo, hi, lo_cls, hi_cls);
            }
        }
    }
    if (held_lo >= 0) {
        emit_held(TILE_LAST);
        if (L::V_LAGS) {
            int last[3];
            recorded(n - 1, last);
            load(1, n - 1, last);
        }
        return n;
    }
    // No tile: a record without keys takes a stage. It takes no V, but
    // its v_full still completes this use's phase, so that the ring's
    // phases stay in step for the CTA's next tile of rows: once every
    // consumer is done with the stage's last V (so none still waits for
    // its phase: a barrier two phases ahead of a waiter would hold it
    // forever), and before the record is published (after that the
    // consumers may complete the stage's next phases, and this wait would
    // see the wrong one).
    const Stage st = Stage::of<L>(base, n);
    if (n >= L::STAGES)
        mbar_wait(st.v_empty, st.parity ^ 1u);
    record(n, make_uint4(0u, 0u, TILE_END, 0u));
    if (leader) {
        mbar_arrive(st.v_full);
        mbar_arrive(st.k_full);
    }
    return n + 1;
}

// PACKED sequences' tiles of R rows along an axis of n rows: sequence s
// owns the slots from off[s] / R + s, of n / R + S. The first slot grows
// by at least ceil(len_s / R) from one sequence to the next
// (floor((o + l) / R) - floor(o / R) + 1 >= ceil(l / R)), so the
// sequences' tiles never meet, at most one slot a sequence is left over,
// and no prefix sum of the device's offsets is needed. Returns the
// sequence of slot x, the last whose first slot is at or before it, by a
// binary search (log2 S loads; 32 bits: S < 2^16, offsets below 2^31),
// and makes x the tile's index within it. (The first slots grow with s
// where the offsets do; where a bad offset breaks that, the bad
// sequence's rows are the fix-up's anyway.)
template <int R>
static __device__ __forceinline__ uint32_t packed_slot(const Args &a, uint64_t off,
                                                       int64_t stride, uint32_t &x)
{
    const int32_t *o = (const int32_t *)off;
    uint32_t lo = 0, hi = (uint32_t)a.seq_count, first = 0;
    while (hi - lo > 1) {
        const uint32_t mid = (lo + hi) / 2, at = (uint32_t)o[(int64_t)mid * stride] / R + mid;
        lo = at <= x ? mid : lo;
        hi = at <= x ? hi : mid;
        first = at <= x ? at : first;
    }
    x -= first;
    return lo;
}

// Where PACKED offsets run back so far that the first slots of
// packed_slot do not grow with s (a bad sequence between good ones: their
// slots may then meet, and a good sequence's tile be found by none), the
// tiles of R rows (keys) fall back to a rectangle of S x ceil(max / R)
// (the longest a good sequence may be), as the mma.sync kernels' grid.
// Returns ceil(max / R), or 0 where the slots grow (every good input).
// Every thread of the CTA takes part (one offset pair each, then
// __syncthreads_or).
template <int R>
static __device__ __forceinline__ uint32_t packed_fallback(const Args &a, uint64_t off,
                                                           int64_t stride, int64_t max)
{
    if (a.seq_form != BK_ATTENTION_SEQ_PACKED)
        return 0;
    const int32_t *o = (const int32_t *)off;
    bool down = false;
    for (uint32_t s = threadIdx.x; s + 1 < (uint32_t)a.seq_count; s += blockDim.x)
        down = down || (uint32_t)o[(int64_t)(s + 1) * stride] / R + s + 1 <
                           (uint32_t)o[(int64_t)s * stride] / R + s;
    return __syncthreads_or(down) ? (uint32_t)((max > 0 ? max : 1) + R - 1) / R : 0u;
}

// The query tiles of ROWS NC rows a CTA owns: its own (a.items = 0), or,
// persistent, one of every gridDim.x of a.items (next()) counted over
// the tile, then the head, then the batch. Nothing is kept: each bound is
// read where used from the parameters (constant-bank operands, not
// registers a wide CTA's producer, at 32, lacks), in 32-bit arithmetic.
// SEQ: the tiles of sequences of their own lengths (place()), and the
// fallback's rectangle (packed_fallback), made by every thread and kept,
// with the loop's end, in the two words at RECT_AT past the 1024-aligned
// base (the layout's end, which its alignment slack always leaves), read
// where used rather than held in registers over the loops (the kernels
// stay free of spills).
template <int NC, bool SEQ = false, uint32_t RECT_AT = 0> struct QueryTiles {
    static constexpr int TILE_ROWS = ROWS * NC;
    static constexpr bool DECODE = false; // see DecodeTiles
    __device__ explicit QueryTiles(const Args &a)
    {
        if constexpr (SEQ) {
            const uint32_t r = packed_fallback<TILE_ROWS>(a, a.seq_q, a.seq_s[0], a.max_lq);
            // The loop's end: the rectangle's tiles of every head
            // (persistent), or those of this CTA's head from own_x() on,
            // gridDim.x apart (32 bits, capped: a rectangle past 2^32 tiles
            // is cut short); without the fallback, as the plain kernels'.
            uint32_t e = a.items ? a.items : 1u;
            if (r) {
                const uint64_t n64 = (uint64_t)a.seq_count * r;
                const uint32_t n = n64 < 0xFFFFFFFFu ? (uint32_t)n64 : 0xFFFFFFFFu;
                const uint64_t all = n64 * (uint64_t)a.heads;
                e = a.items ? (all < 0xFFFFFFFFu ? (uint32_t)all : 0xFFFFFFFFu)
                    : n > own_x() ? (n - own_x() - 1) / gridDim.x + 1
                                  : 0u;
            }
            if (threadIdx.x == 0) {
                store_shared_f32(shared_base_1024() + RECT_AT, __uint_as_float(r));
                store_shared_f32(shared_base_1024() + RECT_AT + 4, __uint_as_float(e));
            }
            __syncthreads();
        }
    }
    // packed_fallback's rectangle: tiles a sequence, or 0.
    static __device__ uint32_t rect() { return load_shared32(shared_base_1024() + RECT_AT); }
    static __device__ uint32_t first(const Args &a) { return a.items ? blockIdx.x : 0u; }
    __device__ uint32_t end(const Args &a) const
    {
        if constexpr (SEQ)
            return load_shared32(shared_base_1024() + RECT_AT + 4);
        return a.items ? a.items : 1u;
    }
    // Persistent, the turns zigzag: CTA c takes item c of the even rounds
    // of gridDim.x items and gridDim.x - 1 - c of the odd ones, so that
    // where a head's tiles divide the CTAs (causal rows of 3 to 8 tiles
    // on 132 SMs) no CTA takes the same, heaviest, tile of every head.
    static __device__ uint32_t next(const Args &a, uint32_t i)
    {
        if (!a.items)
            return i + 1u;
        const uint32_t c = blockIdx.x, n = gridDim.x;
        return i + (i % n == c ? 2u * (n - c) - 1u : 2u * c + 1u);
    }
    // A CTA a tile: the tiles of a head from the last (causal rows: the
    // most keys) so that the grid's last wave has the lightest.
    static __device__ uint32_t own_x() { return gridDim.x - 1u - blockIdx.x; }
    // Tile i's first row, head and batch.
    static __device__ void coords(const Args &a, uint32_t i, int64_t &r0, int64_t &h, int64_t &b)
    {
        if (!a.items) {
            r0 = (int64_t)own_x() * TILE_ROWS;
            h = blockIdx.y;
            b = blockIdx.z;
            return;
        }
        const uint32_t nx = ((uint32_t)a.lq + TILE_ROWS - 1) / TILE_ROWS, heads = (uint32_t)a.heads;
        const uint32_t hb = i / nx;
        r0 = (int64_t)(i - hb * nx) * TILE_ROWS;
        h = hb % heads;
        b = hb / heads;
    }

    // The tiles along x of a head: ceil(Lq / TILE_ROWS) of each batch
    // entry, or PACKED, Lq / TILE_ROWS + S slots over the one entry
    // (packed_slot).
    static __device__ uint32_t tiles_x(const Args &a)
    {
        if (a.seq_form == BK_ATTENTION_SEQ_PACKED)
            return (uint32_t)a.lq / TILE_ROWS + (uint32_t)a.seq_count;
        return ((uint32_t)a.lq + TILE_ROWS - 1) / TILE_ROWS;
    }
    // Query tile i as sequence s's tile of local first row r0 and head h;
    // false where no rows of a sequence are there (a PACKED slot past its
    // sequence's tiles, or a bad sequence's: the fix-up's rows), a tile
    // that every loop skips alike. (The offsets are in L1 after a CTA's
    // first tile.)
    __device__ bool place(const Args &a, uint32_t i, int64_t &r0, int64_t &h, Seq &s) const
    {
        const uint32_t rect = QueryTiles::rect();
        uint32_t x, z;
        if (!a.items) {
            x = own_x() + (rect ? i * gridDim.x : 0u);
            h = blockIdx.y;
            z = blockIdx.z;
        } else {
            // The head first, then the tile slot: the persistent CTAs' turns
            // (i mod CTAs) then sweep every sequence's slots alike, whereas
            // the slot first would give each CTA the same few slots of every
            // head where the slots are a multiple of the CTAs (16 sequences
            // of 512 x k: 528 slots, 4 x 132), whose lengths' work differs.
            const uint32_t nx = rect ? (uint32_t)a.seq_count * rect : tiles_x(a),
                           heads = (uint32_t)a.heads;
            const uint32_t xz = i / heads;
            h = i - xz * heads;
            x = xz % nx;
            z = xz / nx;
        }
        if (a.seq_form == BK_ATTENTION_SEQ_PACKED && rect) {
            z = x / rect; // the rectangle: tile x % rect of sequence x / rect
            x -= z * rect;
        } else if (a.seq_form == BK_ATTENTION_SEQ_PACKED) {
            z = packed_slot<TILE_ROWS>(a, a.seq_q, a.seq_s[0], x);
        }
        s = sequence(a, z);
        r0 = (int64_t)x * TILE_ROWS;
        return s.q0 + r0 < s.q_out;
    }
};

// The producer warp over the CTA's query tiles, the ring's union tiles
// counting on from one to the next.
template <typename L, bool SEQ = false>
static __device__ __forceinline__ void
produce_tiles(const bk_attention_tma_args &p, uint32_t base,
              const QueryTiles<L::NC, SEQ, L::BYTES - 1024> &tiles)
{
    const Args &a = p.a;
    const uint32_t group_size = (uint32_t)a.heads / (uint32_t)a.kv_heads;
    int n = 0, use = 0;
    for (uint32_t item = tiles.first(a); item < tiles.end(a); item = tiles.next(a, item)) {
        int64_t r0, h, b;
        bool bad;
        if constexpr (SEQ) {
            Seq s;
            if (!tiles.place(a, item, r0, h, s))
                continue;
            const Walk w = make_seq_walk(a, s, r0, h, L::NC, bad);
            n = producer<L>(p, w, base, (int)(s.q0 + r0), (int)((uint32_t)h / group_size), (int)h,
                            (int)s.b, n, use, (int)s.k0);
        } else {
            tiles.coords(a, item, r0, h, b);
            const Walk w = make_walk(a, r0, h, b, L::NC, bad);
            n = producer<L>(p, w, base, (int)r0, (int)((uint32_t)h / group_size), (int)h, (int)b,
                            n, use);
        }
        use++;
    }
}

// One arrival per consumer warp frees a K or V tile (8 make it empty).
static __device__ __forceinline__ void release(uint32_t empty)
{
    __syncwarp();
    if (threadIdx.x % 32 == 0)
        mbar_arrive(empty);
}

// Frees a tile this consumer skips, once its record has been read (so the
// producer is past K's previous use). V's arrival must count toward this
// use's phase of v_empty, not the use before (which the other consumer may
// still be reading): wait for that one first.
template <typename L>
static __device__ __forceinline__ void release_skipped(const Stage &st, int n)
{
    release(st.k_empty);
    if (n >= L::STAGES)
        mbar_wait(st.v_empty, st.parity ^ 1u);
    release(st.v_empty);
}

// A tile's record, read by lane 0 (the lane that frees the tile: so the
// read is ordered before the producer's next write of the slot for
// compute-sanitizer's racecheck too) and passed to the warp (its w only
// for tiles of three slots).
template <int SLOTS = 2> static __device__ __forceinline__ uint4 read_record(uint32_t record)
{
    uint4 rec = make_uint4(0u, 0u, 0u, 0u);
    if (threadIdx.x % 32 == 0)
        rec = load_shared16(record);
    rec.x = __shfl_sync(0xFFFFFFFFu, rec.x, 0);
    rec.y = __shfl_sync(0xFFFFFFFFu, rec.y, 0);
    rec.z = __shfl_sync(0xFFFFFFFFu, rec.z, 0);
    if (SLOTS == 3)
        rec.w = __shfl_sync(0xFFFFFFFFu, rec.w, 0);
    return rec;
}

// A consumer's 64 rows of a row operand (Q or dY, DH columns in the
// swizzled layout) as wgmma register A fragments, one per 16 columns,
// loaded once: the GEMMs against K and V then read only those from shared
// memory (which bounds these kernels more than the tensor cores do).
template <typename L>
static __device__ __forceinline__ void load_row_fragments(uint32_t (&f)[L::CB * 4][4],
                                                          uint32_t tile, int warp, int lane)
{
    const int r = warp * 16 + lane % 16;
#pragma unroll
    for (int kk = 0; kk < L::CB * 4; kk++) {
        const int chunk = 2 * (kk % 4) + lane / 16;
        ldmatrix_x4(f[kk], tile + (kk / 4) * L::Q_BLOCK + r * 128 + ((chunk ^ (r % 8)) * 16));
    }
}

// A consumer warp holds its row fragments: the next query tile's Q (and
// dY) may be copied over them (q_empty). ldmatrix read them through the
// generic proxy and the copy engine writes through the async proxy, so
// each thread orders its reads before the copy by a proxy fence (the PTX
// memory model asks for it; the arrival alone let a read still queued
// behind it see the next tile's rows: wrong dq rows of one warp, the first
// rows of a CTA's later query tile, under the backward's graph replays).
// Before the row statistics' global loads: the fence waits for every
// memory access the thread has in flight.
template <typename L> static __device__ __forceinline__ void release_row_operands(uint32_t base)
{
    fence_proxy_async_shared();
    release(base + L::BARS + 8);
}

// D (64 x BN) = A B^T with A the row fragments and B BN rows of a K or V
// tile (K-major); issued and committed: S = Q K^T, or dP = dY V^T.
template <typename T, typename L, int BN>
static __device__ __forceinline__ void issue_fragments_bt(float (&d)[BN / 8][4],
                                                          const uint32_t (&f)[L::CB * 4][4],
                                                          uint32_t b_tile)
{
    const uint64_t db0 = smem_desc(b_tile, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < L::CB * 4; kk++) {
        const uint64_t db = smem_desc_add(db0, (kk / 4) * L::KV_BLOCK + (kk % 4) * 32);
        if constexpr (BN == 128)
            mma_rs_n128_k<T>(d, f[kk], db, kk > 0);
        else
            mma_rs_n64_k<T>(d, f[kk], db, kk > 0);
    }
    wgmma_commit();
}

// D (64 x BN) = A B^T with A a consumer's 64 rows of a row operand and B
// BN rows of a K tile, both in shared memory (K-major): S = Q K^T where
// the registers for Q's fragments are not there (the trio, wide and tall
// CTAs).
template <typename T, typename L, int BN>
static __device__ __forceinline__ void issue_shared_bt(float (&d)[BN / 8][4], uint32_t a_tile,
                                                       uint32_t b_tile)
{
    static_assert(BN == 64 || BN == 128 || BN == 192, "the key tiles of Q-in-shared CTAs");
    const uint64_t da0 = smem_desc(a_tile, 16, 1024), db0 = smem_desc(b_tile, 16, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < L::CB * 4; kk++) {
        const uint64_t da = smem_desc_add(da0, (kk / 4) * L::Q_BLOCK + (kk % 4) * 32);
        const uint64_t db = smem_desc_add(db0, (kk / 4) * L::KV_BLOCK + (kk % 4) * 32);
        if constexpr (BN == 192)
            mma_ss_n192<T>(d, da, db, kk > 0);
        else if constexpr (BN == 128)
            mma_ss_n128<T>(d, da, db, kk > 0);
        else
            mma_ss_n64<T>(d, da, db, kk > 0);
    }
    wgmma_commit();
}

// D (64 x 64 NB) += A B, A (64 x BN) in registers as BN / 16 steps of 16
// keys, B NB column blocks (all L::CB unless asked) of a tile of BN rows
// (MN-major: d contiguous) from `tile`; issued and committed: O += P V,
// or dQ += dS K.
template <typename T, typename L, int BN, int NB = L::CB>
static __device__ __forceinline__ void issue_ab(float (&d)[NB * 8][4],
                                                const uint32_t (&pa)[BN / 16][4], uint32_t tile)
{
    const uint64_t db0 = smem_desc(tile, L::KV_BLOCK, 1024);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++) {
        const uint64_t db = smem_desc_add(db0, kk * 16 * 128);
        if constexpr (NB == 4)
            mma_rs_n256_t<T>(d, pa[kk], db);
        else if constexpr (NB == 3)
            mma_rs_n192_t<T>(d, pa[kk], db);
        else if constexpr (NB == 2)
            mma_rs_n128_t<T>(d, pa[kk], db);
        else
            mma_rs_n64_t<T>(d, pa[kk], db);
    }
    wgmma_commit();
}

} // namespace wg
} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_WGMMA_WALK_CUH
