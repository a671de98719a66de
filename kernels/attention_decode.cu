// SPDX-License-Identifier: Apache-2.0
// Attention over a KV cache for few query rows (a decode step: Lq up to
// BK_ATTENTION_DECODE_MAX_LQ), F16 and BF16, D = Dv = 64 or 128, on
// tensor cores (mma.sync m16n8k16, sm_80 and later); the layout of the
// work is in attention_args.h (struct bk_attention_decode_args).
//
// Such a step is bound by reading K and V once: the query heads that
// share a kv head are packed into the rows of one tile, so that their K
// and V are read once, and the keys are split over enough CTAs and key
// streams to keep every SM's loads in flight. A stream's warps take 16
// packed rows each and share its ring of K and V tiles (cp.async, rows
// swizzled for ldmatrix); with one warp a stream, a stream synchronises
// no more than its warp. The softmax runs online in base 2 in F32, as in
// attention_mma.cu. Each stream leaves its part of the result divided by
// its own sum, and the lse of that sum; bk_attention_decode_combine_*
// weighs the parts of a row in the order of their keys, so that a result
// does not depend on the order the CTAs ran in.
#include "attention_decode.cuh"
#include "attention_mma.cuh"
#include "decode_trace.cuh"

namespace bk {
namespace attention {
namespace decode {

// The barrier of a stream's warps (named barrier 1 + stream when the
// stream has several warps).
template <int RG> static __device__ __forceinline__ void stream_sync(int stream)
{
    if (RG == 1)
        __syncwarp();
    else
        asm volatile("bar.sync %0, %1;\n" ::"r"(1 + stream), "n"(RG * 32) : "memory");
}

// The L2 policy of the K and V copies: evict first where each kv head's
// keys are read once (one row group a kv head); where several row groups
// walk the same keys, the usual one, so the second finds them.
static __device__ __forceinline__ uint64_t kv_policy(const DecodeArgs &d)
{
    return d.row_groups == 1 ? l2_evict_first_policy() : l2_evict_normal_policy();
}

// The paged form of load_step for a whole step (k0 + KEYS <= stop) where
// page_size is a power of two: k0 is a multiple of KEYS and of STRIDE, so
// a thread's rows k0 + r0 + STRIDE i (r0 < STRIDE) enter a new page
// exactly where STRIDE i is a multiple of the page size (ONE_PAGE: only
// at i = 0), at the same i for every thread. A row then costs a pointer
// step; a page, one table read. A page out of range reads page 0 instead
// (in range; the part is NaN). Reading the table and two 64-bit products a
// row, the position walked along (load_step_walk), made the copies the
// bound of the two-warp streams: 394 us against 254 contiguous, bf16 D128
// B8 H64/8 Lq4 Lk32768 page64, H200.
template <typename T, int DH, int RG, bool ONE_PAGE>
static __device__ __forceinline__ void load_step_pow2(uint32_t stage, const DecodeArgs &d,
                                                      int64_t b, const T *k, const T *v,
                                                      int64_t k0, int r0, int c)
{
    constexpr int CHUNKS = DH / 8, KEYS = BK_ATTENTION_DECODE_KEYS(DH);
    constexpr int STRIDE = RG * 32 / CHUNKS;
    constexpr uint32_t TB = KEYS * DH * 2;
    const Args &a = d.a;
    const uint64_t kv = kv_policy(d);
    const int sh = (int)d.page_shift;
    const int64_t mask = ((int64_t)1 << sh) - 1;
    const T *kp = k, *vp = v;
#pragma unroll
    for (int i = 0; i < KEYS / STRIDE; i++) {
        if (i == 0 || (!ONE_PAGE && ((i * STRIDE) & mask) == 0)) {
            const int64_t key = k0 + r0 + i * STRIDE, pos = key & mask;
            const int64_t page = max(page_at(d, b, key >> sh), (int64_t)0);
            kp = k + page * a.k.s[0] + pos * a.k.s[2];
            vp = v + page * a.v.s[0] + pos * a.v.s[2];
        }
        const uint32_t off = SwizzledTile<DH>::offset(r0 + i * STRIDE, c);
        cp_async16_policy(stage + off, kp, 16u, kv);
        cp_async16_policy(stage + TB + off, vp, 16u, kv);
        kp += STRIDE * a.k.s[2];
        vp += STRIDE * a.v.s[2];
    }
}

// The paged form of load_step for any page size: a thread walks its rows'
// position in their page along, reading the table only when a row crosses
// into the next page (no division per row: with one, the address
// arithmetic cost the paged walk two thirds of its speed).
template <typename T, int DH, int RG>
static __device__ __forceinline__ void load_step_walk(uint32_t stage, const DecodeArgs &d,
                                                      int64_t b, const T *k, const T *v,
                                                      int64_t k0, int64_t stop, int r0, int c)
{
    constexpr int CHUNKS = DH / 8, KEYS = BK_ATTENTION_DECODE_KEYS(DH);
    constexpr int STRIDE = RG * 32 / CHUNKS;
    constexpr uint32_t TB = KEYS * DH * 2;
    const Args &a = d.a;
    const uint64_t kv = kv_policy(d);
    int r = r0;
    int64_t key = k0 + r, index = key / d.page_size, pos = key - index * d.page_size;
    int64_t page = key < stop ? page_at(d, b, index) : -1;
#pragma unroll 4
    for (; r < KEYS; r += STRIDE) {
        const bool in = key < stop && page >= 0;
        const int64_t at_k = in ? page * a.k.s[0] + pos * a.k.s[2] : 0;
        const int64_t at_v = in ? page * a.v.s[0] + pos * a.v.s[2] : 0;
        const uint32_t off = SwizzledTile<DH>::offset(r, c);
        cp_async16_policy(stage + off, k + at_k, in ? 16u : 0u, kv);
        cp_async16_policy(stage + TB + off, v + at_v, in ? 16u : 0u, kv);
        key += STRIDE, pos += STRIDE;
        bool next = false;
        while (pos >= d.page_size)
            pos -= d.page_size, index++, next = true;
        if (next && key < stop)
            page = page_at(d, b, index);
    }
}

// cp.async of keys [k0, k0 + KEYS) of kv head (b, kvh) into one stage of a
// stream's ring: K's tile, then V's. Keys at or past `stop`, and those of
// a page out of range, are zero-filled (and masked, or the part is NaN).
// A thread copies one 16-byte column chunk of every STRIDE-th row.
template <typename T, int DH, int RG>
static __device__ __forceinline__ void load_step(uint32_t stage, const DecodeArgs &d, int64_t b,
                                                 int64_t kvh, int64_t k0, int64_t stop, int tid)
{
    constexpr int CHUNKS = DH / 8, KEYS = BK_ATTENTION_DECODE_KEYS(DH);
    constexpr int STRIDE = RG * 32 / CHUNKS;
    static_assert(RG * 32 % CHUNKS == 0, "a thread keeps its column chunk");
    constexpr uint32_t TB = KEYS * DH * 2;
    const Args &a = d.a;
    const uint64_t kv = kv_policy(d);
    const int c = tid % CHUNKS;
    if (!d.block_table) {
        const T *k = at<T>(a.k, b, kvh, 0) + c * 8, *v = at<T>(a.v, b, kvh, 0) + c * 8;
#pragma unroll 4
        for (int r = tid / CHUNKS; r < KEYS; r += STRIDE) {
            const bool in = k0 + r < stop;
            const int64_t row = in ? k0 + r : 0;
            const uint32_t off = SwizzledTile<DH>::offset(r, c);
            cp_async16_policy(stage + off, k + row * a.k.s[2], in ? 16u : 0u, kv);
            cp_async16_policy(stage + TB + off, v + row * a.v.s[2], in ? 16u : 0u, kv);
        }
        return;
    }
    const T *k = at<T>(a.k, 0, kvh, 0) + c * 8, *v = at<T>(a.v, 0, kvh, 0) + c * 8;
    if (d.page_shift && k0 + KEYS <= stop) {
        if (KEYS <= 1 << d.page_shift)
            load_step_pow2<T, DH, RG, true>(stage, d, b, k, v, k0, tid / CHUNKS, c);
        else
            load_step_pow2<T, DH, RG, false>(stage, d, b, k, v, k0, tid / CHUNKS, c);
    } else
        load_step_walk<T, DH, RG>(stage, d, b, k, v, k0, stop, tid / CHUNKS, c);
}

// A stream's ring over the steps of one stretch (keys [key0, stop) of kv
// head (b, kvh)): start() issues the first STAGES - 1 steps' copies;
// arrive(s) issues those STAGES - 1 steps past s and waits for step s's
// own (the caller's stream barrier then publishes them), returning its
// stage.
template <typename T, int DH, int RG, int STAGES> struct StretchRing {
    static constexpr uint32_t STAGE_BYTES = BK_ATTENTION_DECODE_STAGE_BYTES(DH);
    static constexpr int KEYS = BK_ATTENTION_DECODE_KEYS(DH);
    uint32_t ring;
    const DecodeArgs &d;
    int64_t b, kvh, key0, stop, steps;
    int tid;
    __device__ __forceinline__ void start() const
    {
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (s < steps)
                load_step<T, DH, RG>(ring + s * STAGE_BYTES, d, b, kvh, key0 + s * KEYS, stop,
                                     tid);
            cp_async_commit();
        }
    }
    __device__ __forceinline__ uint32_t arrive(int64_t s) const
    {
        const int64_t ahead = s + STAGES - 1;
        if (ahead < steps)
            load_step<T, DH, RG>(ring + (uint32_t)(ahead % STAGES) * STAGE_BYTES, d, b, kvh,
                                 key0 + ahead * KEYS, stop, tid);
        cp_async_commit();
        cp_async_wait<STAGES - 1>();
        return ring + (uint32_t)(s % STAGES) * STAGE_BYTES;
    }
};

// One stream's walk over steps [s0, s1) of unit u (kv head (b, kvh), row
// group rgi), leaving its part in slot `slot`.
template <typename T, int DH, int RG, int STAGES>
static __device__ __forceinline__ void walk_unit(const DecodeArgs &d, uint32_t ring, int stream,
                                                 int rank, int lane, int64_t u, int64_t s0,
                                                 int64_t s1, int64_t slot)
{
    constexpr int KEYS = BK_ATTENTION_DECODE_KEYS(DH);
    constexpr uint32_t TB = KEYS * DH * 2;
    constexpr int KSTEPS = DH / 16, NT_S = KEYS / 8, NT_O = DH / 8;
    const Args &a = d.a;
    const int64_t rgi = u % d.row_groups, bk = u / d.row_groups;
    const int64_t b = bk / a.kv_heads, kvh = bk % a.kv_heads;
    const Sequence seq = sequence(d, b);
    const int64_t key0 = s0 * KEYS, stop = min(seq.lk, s1 * KEYS);
    const int64_t steps = stop > key0 ? (stop - key0 + KEYS - 1) / KEYS : 0;
    const bool bad = seq.bad || pages_bad(d, b, key0, stop, lane);
    const int tid = rank * 32 + lane; // its index among the stream's threads

    // This thread's two packed rows (g and g + 8 of its warp's 16).
    const int g = lane / 4, q4 = lane % 4;
    const int64_t row0 = rgi * 16 * RG + rank * 16;
    int64_t head[2], query[2], end[2];
    bool valid[2];
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int64_t r = row0 + g + 8 * half;
        valid[half] = r < d.rows;
        head[half] = kvh * d.group + r / a.lq;
        query[half] = r % a.lq;
        end[half] = valid[half] ? seq_key_end(a, seq, query[half]) : 0;
    }
    // Keys below this need no mask: both of this thread's rows see them.
    const int64_t open = min(stop, min(end[0], end[1]));

    // Q's A fragments, straight from global memory; rows past the packed
    // rows are zero.
    uint32_t qf[KSTEPS][4];
#pragma unroll
    for (int kk = 0; kk < KSTEPS; kk++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int half = i % 2, col = kk * 16 + 2 * q4 + 8 * (i / 2);
            qf[kk][i] = valid[half]
                            ? *(const uint32_t *)(at<T>(a.q, b, head[half], query[half]) + col)
                            : 0u;
        }

    const StretchRing<T, DH, RG, STAGES> rs = { ring, d, b, kvh, key0, stop, steps, tid };
    rs.start();

    float o[NT_O][4];
    zero(o);
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.f, l_b = 0.f;
    const ScoreScale ss = score_scale(a.scale);
    for (int64_t s = 0; s < steps; s++) {
        const uint32_t ks = rs.arrive(s), vs = ks + TB;
        stream_sync<RG>(stream);

        float sc[NT_S][4];
        zero(sc);
        mma_abt<T, DH, NT_S>(sc, [&](int kk, uint32_t (&af)[4]) {
#pragma unroll
            for (int i = 0; i < 4; i++)
                af[i] = qf[kk][i];
        }, ks, 0, lane);

        const int64_t k0 = key0 + s * KEYS;
        if (k0 + KEYS > open) {
#pragma unroll
            for (int n = 0; n < NT_S; n++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int64_t j = k0 + n * 8 + 2 * q4 + e;
                    if (j >= stop || j >= end[0])
                        sc[n][e] = ss.masked;
                    if (j >= stop || j >= end[1])
                        sc[n][2 + e] = ss.masked;
                }
        }

        online_softmax(sc, o, m_a, m_b, l_a, l_b, ss);
        mma_pb<T, DH, NT_S>(o, sc, vs, 0, lane);
        stream_sync<RG>(stream); // this stage is refilled STAGES - 1 steps on
    }
    cp_async_wait<0>();

#pragma unroll
    for (int o2 = 1; o2 <= 2; o2 *= 2) {
        l_a += __shfl_xor_sync(0xFFFFFFFFu, l_a, o2);
        l_b += __shfl_xor_sync(0xFFFFFFFFu, l_b, o2);
    }
    // The part: o / l and lse = m + log2 l (base 2), or 0 and -inf; NaN
    // for a sequence out of range.
    const int64_t cell0 = (u * d.max_parts + slot) * (16 * RG) + rank * 16 + g;
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const float l = half ? l_b : l_a, m = half ? m_b : m_a;
        const float inv = l > 0.f ? 1.f / l : 0.f;
        const int64_t cell = cell0 + 8 * half;
        float *dst = (float *)d.part_o + cell * a.dv_cols + 2 * q4;
#pragma unroll
        for (int n = 0; n < NT_O; n++)
            *(float2 *)(dst + n * 8) = make_float2(o[n][2 * half] * inv,
                                                   o[n][2 * half + 1] * inv);
        if (q4 == 0)
            ((float *)d.part_lse)[cell] = bad ? quiet_nan() : l > 0.f ? m + log2f(l) : -INFINITY;
    }
}

// 8 x 8 of 16-bit values across the warp, transposed: lane l holds row
// l / 4, columns 2 (l % 4) and + 1 (the ldmatrix layout), before and after.
static __device__ __forceinline__ uint32_t movmatrix_trans(uint32_t x)
{
    uint32_t y;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
    return y;
}

// The walk of walk_unit for at most 8 packed rows, keys as the tiles' 16
// rows: S^T = K Q^T and O^T += V^T P^T, m16n8k16 with the packed rows as
// N = 8. With rows as M (walk_unit) half of every tile is padding at 8
// rows; here none is at 8 and every product and exponential is half as
// many. Lane (g, q4) = (lane / 4, lane % 4) holds the scores of keys g and
// g + 8 of each 16 for rows 2 q4 and 2 q4 + 1, and O^T's rows (columns of
// O) g and g + 8 of each 16 for the same two rows; a row's maximum and sum
// gather over the 8 lanes of its q4. P^T reaches the B fragments of the
// second product through a register transpose (movmatrix).
template <typename T, int DH, int STAGES, bool DIRECT>
static __device__ __forceinline__ void walk_unit_narrow(const DecodeArgs &d, uint32_t ring,
                                                        int lane, int64_t u, int64_t s0,
                                                        int64_t s1, int64_t slot)
{
    constexpr int KEYS = BK_ATTENTION_DECODE_KEYS(DH);
    constexpr uint32_t TB = KEYS * DH * 2;
    constexpr int KSTEPS = DH / 16, MT = KEYS / 16, DT = DH / 16;
    const Args &a = d.a;
    const int64_t bk = u / d.row_groups;
    const int64_t b = bk / a.kv_heads, kvh = bk % a.kv_heads;
    const Sequence seq = sequence(d, b);
    const int64_t key0 = s0 * KEYS, stop = min(seq.lk, s1 * KEYS);
    const int64_t steps = stop > key0 ? (stop - key0 + KEYS - 1) / KEYS : 0;
    const bool bad = seq.bad || pages_bad(d, b, key0, stop, lane);
    const int g = lane / 4, q4 = lane % 4;

    // The key limits of this lane's two rows; a row past the packed rows
    // has Q = 0 and no limit (its scores are 0, its output never read).
    int64_t end[2];
#pragma unroll
    for (int e = 0; e < 2; e++) {
        const int64_t r = 2 * q4 + e;
        end[e] = r < d.rows ? seq_key_end(a, seq, r % a.lq) : INT64_MAX;
    }
    const int64_t open = min(stop, min(end[0], end[1]));

    // Q^T's B fragments: row g's columns 2 q4 (+ 1) and + 8 of each 16.
    uint32_t qf[KSTEPS][2];
    {
        const bool valid = g < d.rows;
        const T *q = at<T>(a.q, b, kvh * d.group + g / a.lq, g % a.lq);
#pragma unroll
        for (int kk = 0; kk < KSTEPS; kk++)
#pragma unroll
            for (int i = 0; i < 2; i++)
                qf[kk][i] = valid ? *(const uint32_t *)(q + kk * 16 + 2 * q4 + 8 * i) : 0u;
    }

    const StretchRing<T, DH, 1, STAGES> rs = { ring, d, b, kvh, key0, stop, steps, lane };
    rs.start();

    float o[DT][4];
    zero(o);
    float m_a = -INFINITY, m_b = -INFINITY, l_a = 0.f, l_b = 0.f;
    const ScoreScale ss = score_scale(a.scale);
    for (int64_t s = 0; s < steps; s++) {
        const uint32_t ks = rs.arrive(s), vs = ks + TB;
        __syncwarp();

        // sc[mt] = S^T (keys 16 mt + g, + 8; rows 2 q4, + 1) as
        // { (g, a), (g, b), (g + 8, a), (g + 8, b) }.
        float sc[MT][4];
        zero(sc);
#pragma unroll
        for (int kk = 0; kk < KSTEPS; kk++)
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                uint32_t kf[4];
                load_a<DH>(kf, ks, mt * 16, kk, lane);
                Mma<T>::run(sc[mt], kf, qf[kk][0], qf[kk][1]);
            }

        const int64_t k0 = key0 + s * KEYS;
        if (k0 + KEYS > open) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    const int64_t j = k0 + mt * 16 + g + 8 * (i / 2);
                    if (j >= stop || j >= end[i % 2])
                        sc[mt][i] = ss.masked;
                }
        }

        // Row maxima: row_max pairs elements 0-1 and 2-3, so hand it each
        // tile's row a values first.
        float byrow[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            byrow[mt][0] = sc[mt][0];
            byrow[mt][1] = sc[mt][2];
            byrow[mt][2] = sc[mt][1];
            byrow[mt][3] = sc[mt][3];
        }
        const MovedMaxima mm =
            move_maxima<4, 16>(row_max(byrow, ss, make_float2(m_a, m_b)), m_a, m_b);
        const float base_a = mm.base_a, base_b = mm.base_b;
        const float corr_a = mm.corr_a, corr_b = mm.corr_b;
        float sum_a = 0.f, sum_b = 0.f;
        uint32_t pt[MT][2]; // P^T's B fragments: keys 2 q4 (+ 1), + 8; row g
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            const float p0 = exp2_fast(fmaf(sc[mt][0], ss.sl2, -base_a));
            const float p1 = exp2_fast(fmaf(sc[mt][1], ss.sl2, -base_b));
            const float p2 = exp2_fast(fmaf(sc[mt][2], ss.sl2, -base_a));
            const float p3 = exp2_fast(fmaf(sc[mt][3], ss.sl2, -base_b));
            sum_a += p0 + p2;
            sum_b += p1 + p3;
            pt[mt][0] = movmatrix_trans(pack2<T>(p0, p1));
            pt[mt][1] = movmatrix_trans(pack2<T>(p2, p3));
        }
        l_a = l_a * corr_a + sum_a;
        l_b = l_b * corr_b + sum_b;
#pragma unroll
        for (int dt = 0; dt < DT; dt++) {
            o[dt][0] *= corr_a;
            o[dt][1] *= corr_b;
            o[dt][2] *= corr_a;
            o[dt][3] *= corr_b;
        }

        // O^T (columns 16 dt ..) += V^T (16 dt .., keys 16 mt ..) P^T: V^T's
        // A fragments are V's rows read transposed.
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int dt = 0; dt < DT; dt++) {
                uint32_t vf[4];
                ldmatrix_x4_trans(vf, vs + SwizzledTile<DH>::offset(
                                          mt * 16 + lane % 8 + 8 * (lane / 16),
                                          dt * 2 + (lane / 8) % 2));
                Mma<T>::run(o[dt], vf, pt[mt][0], pt[mt][1]);
            }
        __syncwarp(); // this stage is refilled STAGES - 1 steps on
    }
    cp_async_wait<0>();

#pragma unroll
    for (int o2 = 4; o2 <= 16; o2 *= 2) {
        l_a += __shfl_xor_sync(0xFFFFFFFFu, l_a, o2);
        l_b += __shfl_xor_sync(0xFFFFFFFFu, l_b, o2);
    }
    // The part as walk_unit leaves it, row 2 q4 + e of the unit's 16; or,
    // where the stream walks whole units (DIRECT: every unit one
    // stream's), the rows' y and lse as the combining kernel makes them
    // from one part.
    const int64_t cell0 = (u * d.max_parts + slot) * 16;
#pragma unroll
    for (int e = 0; e < 2; e++) {
        const int64_t r = 2 * q4 + e;
        if (r >= d.rows)
            continue;
        const float l = e ? l_b : l_a, m = e ? m_b : m_a;
        const float inv = DIRECT && bad ? quiet_nan() : l > 0.f ? 1.f / l : 0.f;
        if constexpr (DIRECT) {
            const int64_t h = kvh * d.group + r / a.lq, i = r % a.lq;
            T *dst = at<T>(a.y, b, h, i) + g;
#pragma unroll
            for (int dt = 0; dt < DT; dt++) {
                dst[dt * 16] = Storage<T>::out(o[dt][e] * inv);
                dst[dt * 16 + 8] = Storage<T>::out(o[dt][2 + e] * inv);
            }
            if ((a.flags & BK_ATTENTION_HAS_LSE) && g == 0)
                *lse_at<float>(a, b, h, i) = bad ? quiet_nan() : row_lse(m, l);
            continue;
        }
        float *dst = (float *)d.part_o + (cell0 + r) * a.dv_cols + g;
#pragma unroll
        for (int dt = 0; dt < DT; dt++) {
            dst[dt * 16] = o[dt][e] * inv;
            dst[dt * 16 + 8] = o[dt][2 + e] * inv;
        }
        if (g == 0)
            ((float *)d.part_lse)[cell0 + r] = bad ? quiet_nan() : l > 0.f ? m + log2f(l) : -INFINITY;
    }
}

// BK_DECODE_TRACE (kernels/decode_trace.cuh): the split kernel's stream
// records past y's last row (the probe's y has the room), the combining
// kernel's CTA records 8192 records after them.
static __device__ __forceinline__ uint64_t trace_base(const DecodeArgs &d, bool combining)
{
#ifdef BK_DECODE_TRACE
    const Args &a = d.a;
    const uint64_t end =
        (uint64_t)(at<uint16_t>(a.y, a.batch - 1, a.heads - 1, a.lq - 1) + a.dv_cols);
    return (end + 255u) / 256u * 256u + (combining ? 8u * 8u * 8192u : 0u);
#else
    (void)d;
    (void)combining;
    return 0;
#endif
}

// Before the wait for the grid before: the first d.prefetch_steps steps
// of stream me's share (of its first unit) brought into L2, K's and V's
// rows by one bulk prefetch each where a kv head's rows are contiguous and
// the cache is not paged. Launched with programmatic dependent launch, a
// CTA may start while that grid drains; L2 is the point of coherence, so
// a line prefetched before the wait still takes any write of that grid,
// and the ring reads after the wait what it would have read anyway. No
// table or length is read before the wait: a padded sequence's unused
// keys may be prefetched (they are in the tensor), never more.
template <typename T, int DH>
static __device__ __forceinline__ void prefetch_share(const DecodeArgs &d, int64_t me)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    constexpr int KEYS = BK_ATTENTION_DECODE_KEYS(DH);
    const Args &a = d.a;
    if (d.prefetch_steps == 0 || d.block_table || a.k.s[2] != DH || a.v.s[2] != DH ||
        me >= d.streams)
        return;
    const int64_t from = stream_start(d, me), to = stream_start(d, me + 1);
    const int64_t u = from / d.unit_steps, s0 = from - u * d.unit_steps;
    const int64_t s1 =
        min(min(to - u * d.unit_steps, d.unit_steps), s0 + (int64_t)d.prefetch_steps);
    const int64_t k0 = s0 * KEYS, k1 = min(s1 * KEYS, a.lk);
    if (k1 <= k0)
        return;
    const int64_t bk = u / d.row_groups, b = bk / a.kv_heads, kvh = bk % a.kv_heads;
    const uint32_t bytes = (uint32_t)((k1 - k0) * DH * 2);
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(at<T>(a.k, b, kvh, k0)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(at<T>(a.v, b, kvh, k0)),
                 "r"(bytes)
                 : "memory");
#else
    (void)d, (void)me;
#endif
}

// A stream's share of the steps of all units (stream_start), a unit at a
// time; NS streams a CTA; DIRECT (narrow only): each stream's share is
// whole units, whose y it writes.
template <typename T, int DH, int RG, int STAGES, bool NARROW, int NS, bool DIRECT = false>
static __device__ void split(const DecodeArgs &d)
{
    constexpr uint32_t STAGE_BYTES = BK_ATTENTION_DECODE_STAGE_BYTES(DH);
    static_assert(STAGES >= 2, "a stream's ring needs two stages");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int stream = warp / RG, rank = warp % RG;
    const uint32_t ring = shared_address(smem_bytes) + stream * STAGES * STAGE_BYTES;
    const int64_t me = (int64_t)blockIdx.x * NS + stream;
    // BK_DECODE_TRACE: a record a stream (its first lane): the times past
    // the wait, at the end and at the end of its first unit, the units it
    // walked and its SM.
    const uint64_t trace = trace_base(d, false);
    const bool tracer = rank == 0 && lane == 0;
    if (rank == 0 && lane == 0)
        prefetch_share<T, DH>(d, me);
    grid_dependency_wait();
    if (tracer)
        trace_set(trace, me, 0, trace_clock());
    if (me >= d.streams)
        return;
    const int64_t from = stream_start(d, me), to = stream_start(d, me + 1);
    uint64_t units = 0;
    for (int64_t at = from; at < to;) {
        const int64_t u = at / d.unit_steps, unit_end = (u + 1) * d.unit_steps;
        const int64_t s1 = min(to, unit_end) - u * d.unit_steps;
        if (NARROW)
            walk_unit_narrow<T, DH, STAGES, DIRECT>(d, ring, lane, u, at - u * d.unit_steps, s1,
                                                    me - first_stream(d, u));
        else
            walk_unit<T, DH, RG, STAGES>(d, ring, stream, rank, lane, u, at - u * d.unit_steps,
                                         s1, me - first_stream(d, u));
        at = u * d.unit_steps + s1;
        if (tracer && units++ == 0)
            trace_set(trace, me, 3, trace_clock());
    }
    if (tracer) {
        trace_set(trace, me, 1, trace_clock());
        trace_set(trace, me, 2, units);
        trace_set(trace, me, 7, trace_sm());
    }
}

static __device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xFFFFFFFFu, v, o));
    return v;
}

static __device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o /= 2)
        v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

// A lane's N consecutive F32 columns of a part (N = 2 or 4: aligned).
template <int N> static __device__ __forceinline__ void load_columns(float (&v)[N], const float *p)
{
    if constexpr (N == 4) {
        const float4 x = *(const float4 *)p;
        v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
    } else {
        static_assert(N == 2, "D = 64 or 128");
        const float2 x = *(const float2 *)p;
        v[0] = x.x, v[1] = x.y;
    }
}

// Output row r = (b H + h) Lq + i from the parts of its unit: the weights
// 2^(lse_p - max), y = the parts' sum over the sum of the weights, in T;
// lse in natural log. d.combine_warps warps (1, 2 or 4) share a row: warp
// k of a row takes the parts' chunks of 32 k, k + cw, ... in order, its
// lanes reading the 32 parts' lse and their columns in one trip, and
// folds each chunk in with a running maximum; the row's first warp then
// folds the others' sums in in warp order. The order is fixed by the
// plan, so a result does not depend on the order the CTAs ran in. The
// row's arithmetic comes before the wait for the split kernel, which it
// overlaps where the launch is programmatic.
//
// FEW (the _few kernels, for plans whose rows have at most 8 slots and are
// many): a chunk's parts four at a time, in few registers; else all 32 in
// flight (many slots: B1 Lk131072 has 66 a row). H200, bf16 D128, with
// each of the two alone: Lq16 B8 H64/8 Lk8192 82.0 us against 95.8 (8192
// rows, two parts each), B1 H64/8 Lq1 Lk131072 139.2 against 132.2.
template <typename T, int DH, int RG, bool FEW> static __device__ void combine(const DecodeArgs &d)
{
    constexpr int PER_LANE = DH / 32, UR = 16 * RG;
    constexpr int WARPS = BK_ATTENTION_DECODE_COMBINE_THREADS / 32;
    __shared__ float shared_acc[WARPS][DH], shared_top[WARPS], shared_sum[WARPS];
    __shared__ bool shared_nan[WARPS];
    const Args &a = d.a;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int cw = (int)d.combine_warps, share = warp % cw;
    const int64_t r = ((int64_t)blockIdx.x * WARPS + warp) / cw;
    const bool live = r < a.batch * a.heads * a.lq;
    int64_t i = 0, h = 0, b = 0, parts = 0, cell0 = 0;
    if (live) {
        i = r % a.lq, h = (r / a.lq) % a.heads, b = r / (a.lq * a.heads);
        const int64_t kvh = h / d.group, packed = (h % d.group) * a.lq + i;
        const int64_t u = (b * a.kv_heads + kvh) * d.row_groups + packed / UR;
        parts = unit_parts(d, u);
        cell0 = u * d.max_parts * UR + packed % UR; // slot k: + k UR
    }
    const uint64_t trace = trace_base(d, true);
    if (threadIdx.x == 0)
        trace_mark(trace, 0);
    grid_dependency_wait();
    if (threadIdx.x == 0)
        trace_mark(trace, 1);
    const float *lse = (const float *)d.part_lse + cell0;
    const float *o = (const float *)d.part_o + cell0 * a.dv_cols + lane * PER_LANE;
    float top = -INFINITY, sum = 0.f, acc[PER_LANE] = {};
    bool nan = false;
    for (int64_t p0 = 32 * share; p0 < parts; p0 += 32 * cw) {
        const bool mine = p0 + lane < parts;
        const int64_t last = parts - 1 - p0; // slots past it: weight 0, slot p0 read
        const float l = mine ? lse[(p0 + lane) * UR] : -INFINITY;
        // The chunk's parts' columns (not FEW), all in flight, but only those
        // there are read, each lane's columns in one load.
        float v[FEW ? 1 : 32][PER_LANE] = {};
#pragma unroll
        for (int j = 0; j < (FEW ? 0 : 32); j++)
            if (j <= last)
                load_columns<PER_LANE>(v[j], o + (p0 + j) * UR * a.dv_cols);
        nan = nan || isnan(l);
        const float next = fmaxf(top, warp_max(isnan(l) ? -INFINITY : l));
        if (next == -INFINITY)
            continue; // no part so far saw a key
        const float keep = exp2_fast(top - next);
        const float w = mine ? exp2_fast(l - next) : 0.f;
        sum = sum * keep + warp_sum(w);
#pragma unroll
        for (int c = 0; c < PER_LANE; c++)
            acc[c] *= keep;
        // The parts in slot order either way (the same sums).
        if constexpr (FEW) {
            for (int j = 0; j <= last && j < 32; j += 4) {
                float f[4][PER_LANE];
#pragma unroll
                for (int q = 0; q < 4; q++)
                    load_columns<PER_LANE>(f[q], o + (p0 + (j + q <= last ? j + q : j)) * UR *
                                                         a.dv_cols);
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    if (j + q > last)
                        break;
                    const float wj = __shfl_sync(0xFFFFFFFFu, w, j + q);
#pragma unroll
                    for (int c = 0; c < PER_LANE; c++)
                        acc[c] = fmaf(wj, f[q][c], acc[c]);
                }
            }
        } else {
#pragma unroll
            for (int j = 0; j < 32; j++) {
                const float wj = __shfl_sync(0xFFFFFFFFu, w, j);
                if (j > last)
                    break;
#pragma unroll
                for (int c = 0; c < PER_LANE; c++)
                    acc[c] = fmaf(wj, v[j][c], acc[c]);
            }
        }
        top = next;
    }
    nan = __any_sync(0xFFFFFFFFu, nan);
    if (threadIdx.x == 0)
        trace_mark(trace, 2);
    if (cw > 1) {
#pragma unroll
        for (int c = 0; c < PER_LANE; c++)
            shared_acc[warp][lane * PER_LANE + c] = acc[c];
        if (lane == 0)
            shared_top[warp] = top, shared_sum[warp] = sum, shared_nan[warp] = nan;
        __syncthreads();
        if (share == 0) {
            float all = top;
            for (int k = 1; k < cw; k++)
                all = fmaxf(all, shared_top[warp + k]);
            if (all != -INFINITY) {
                const float keep = exp2_fast(top - all);
                sum *= keep;
#pragma unroll
                for (int c = 0; c < PER_LANE; c++)
                    acc[c] *= keep;
                for (int k = 1; k < cw; k++) {
                    const float wk = exp2_fast(shared_top[warp + k] - all);
                    sum = fmaf(shared_sum[warp + k], wk, sum);
#pragma unroll
                    for (int c = 0; c < PER_LANE; c++)
                        acc[c] = fmaf(shared_acc[warp + k][lane * PER_LANE + c], wk, acc[c]);
                }
            }
            for (int k = 1; k < cw; k++)
                nan = nan || shared_nan[warp + k];
            top = all;
        }
    }
    if (!live || share != 0)
        return;
    // A sequence out of range: every output NaN.
    const float inv = nan ? quiet_nan() : sum > 0.f ? 1.f / sum : 0.f;
    T *dst = at<T>(a.y, b, h, i) + lane * PER_LANE;
#pragma unroll
    for (int c = 0; c < PER_LANE; c += 2)
        *(uint32_t *)(dst + c) = pack2<T>(acc[c] * inv, acc[c + 1] * inv);
    if ((a.flags & BK_ATTENTION_HAS_LSE) && lane == 0)
        *lse_at<float>(a, b, h, i) = nan          ? quiet_nan()
                                     : sum > 0.f ? (top + log2f(sum)) / LOG2E
                                                 : -INFINITY;
}

} // namespace decode
} // namespace attention
} // namespace bk

using namespace bk::attention::decode;

// The kernels: every (D, RG, STAGES) the two rings of attention_args.h
// give (lib/cuda/cuda_attention_decode.c names them the same way).
#define BK_ATTENTION_DECODE(NAME, T, DH, RG, STAGES)                                             \
    extern "C" __global__ void __launch_bounds__(32 * BK_ATTENTION_DECODE_WARPS(RG), 1)        \
        bk_attention_decode_##NAME##_d##DH##_r##RG##_s##STAGES(const DecodeArgs d)               \
    {                                                                                            \
        split<T, DH, RG, STAGES, false, BK_ATTENTION_DECODE_STREAMS(RG)>(d);                     \
    }
// The kernels of at most 8 packed rows (walk_unit_narrow), RG = 1: four
// streams a CTA, or (_w2) two, where each stream walks whole units.
#define BK_ATTENTION_DECODE_NARROW(NAME, T, DH, STAGES)                                          \
    extern "C" __global__ void __launch_bounds__(32 * BK_ATTENTION_DECODE_WARPS(1), 1)         \
        bk_attention_decode_##NAME##_d##DH##_n8_s##STAGES(const DecodeArgs d)                    \
    {                                                                                            \
        split<T, DH, 1, STAGES, true, BK_ATTENTION_DECODE_STREAMS(1)>(d);                        \
    }
#define BK_ATTENTION_DECODE_NARROW_WHOLE(NAME, T, DH, STAGES)                                    \
    extern "C" __global__ void __launch_bounds__(32 * BK_ATTENTION_DECODE_WHOLE_STREAMS, 1)    \
        bk_attention_decode_##NAME##_d##DH##_n8_w2_s##STAGES(const DecodeArgs d)                 \
    {                                                                                            \
        split<T, DH, 1, STAGES, true, BK_ATTENTION_DECODE_WHOLE_STREAMS, true>(d);               \
    }
#define BK_ATTENTION_DECODE_COMBINE(NAME, T, DH, RG)                                             \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_DECODE_COMBINE_THREADS)          \
        bk_attention_decode_combine_##NAME##_d##DH##_r##RG(const DecodeArgs d)                   \
    {                                                                                            \
        combine<T, DH, RG, false>(d);                                                            \
    }                                                                                            \
    extern "C" __global__ void __launch_bounds__(BK_ATTENTION_DECODE_COMBINE_THREADS)          \
        bk_attention_decode_combine_##NAME##_d##DH##_r##RG##_few(const DecodeArgs d)             \
    {                                                                                            \
        combine<T, DH, RG, true>(d);                                                             \
    }
#define BK_ATTENTION_DECODE_TYPE(NAME, T)                                                        \
    BK_ATTENTION_DECODE_D(NAME, T, 64)                                                           \
    BK_ATTENTION_DECODE_D(NAME, T, 128)
// Both head sizes take 8 KiB steps, hence the same stages.
#define BK_ATTENTION_DECODE_D(NAME, T, DH)                                                       \
    BK_ATTENTION_DECODE(NAME, T, DH, 1, 2)                                                       \
    BK_ATTENTION_DECODE(NAME, T, DH, 1, 3)                                                       \
    BK_ATTENTION_DECODE_NARROW(NAME, T, DH, 2)                                                   \
    BK_ATTENTION_DECODE_NARROW(NAME, T, DH, 3)                                                   \
    BK_ATTENTION_DECODE_NARROW_WHOLE(NAME, T, DH, 4)                                             \
    BK_ATTENTION_DECODE_NARROW_WHOLE(NAME, T, DH, 6)                                             \
    BK_ATTENTION_DECODE(NAME, T, DH, 2, 4)                                                       \
    BK_ATTENTION_DECODE(NAME, T, DH, 2, 6)                                                       \
    BK_ATTENTION_DECODE(NAME, T, DH, 4, 4)                                                       \
    BK_ATTENTION_DECODE(NAME, T, DH, 4, 6)                                                       \
    BK_ATTENTION_DECODE(NAME, T, DH, 8, 8)                                                       \
    BK_ATTENTION_DECODE_COMBINE(NAME, T, DH, 1)                                                  \
    BK_ATTENTION_DECODE_COMBINE(NAME, T, DH, 2)                                                  \
    BK_ATTENTION_DECODE_COMBINE(NAME, T, DH, 4)                                                  \
    BK_ATTENTION_DECODE_COMBINE(NAME, T, DH, 8)

BK_ATTENTION_DECODE_TYPE(f16, __half)
BK_ATTENTION_DECODE_TYPE(bf16, __nv_bfloat16)
