// SPDX-License-Identifier: Apache-2.0
// What the attention kernels share (kernels/attention_general.cu,
// kernels/attention_mma.cu): element addressing, the block pattern, the
// causal limit and the NaN rule for a bad block list.
#ifndef BK_ATTENTION_COMMON_CUH
#define BK_ATTENTION_COMMON_CUH

#include "attention_args.h"
#include "element_types.cuh"

#include <math.h>

namespace bk {
namespace attention {

typedef bk_attention_args Args;
typedef bk_attention_view View;

template <typename T>
static __device__ __forceinline__ T *at(const View &v, int64_t b, int64_t h, int64_t r)
{
    return (T *)v.base + b * v.s[0] + h * v.s[1] + r * v.s[2];
}

// The pattern entry of (b, h): batch and head are shared when the
// pattern's extent there is 1.
static __device__ __forceinline__ int64_t pattern_b(const Args &a, int64_t b)
{
    return a.pattern_batch == 1 ? 0 : b;
}
static __device__ __forceinline__ int64_t pattern_h(const Args &a, int64_t h)
{
    return a.pattern_heads == 1 ? 0 : h;
}

// The mask's row of query block ib of pattern head (pb, ph): key block
// jb's entry at jb * a.mask.s[3] (MASK and LIST patterns only).
static __device__ __forceinline__ const unsigned char *mask_row(const Args &a, int64_t pb,
                                                                int64_t ph, int64_t ib)
{
    return (const unsigned char *)a.mask.base + pb * a.mask.s[0] + ph * a.mask.s[1] +
           ib * a.mask.s[2];
}

static __device__ __forceinline__ bool block_active(const Args &a, int64_t pb, int64_t ph,
                                                    int64_t ib, int64_t jb)
{
    if (!a.mask.base)
        return true;
    return mask_row(a, pb, ph, ib)[jb * a.mask.s[3]] != 0;
}

// A bad block list (LIST form) poisons every output of its heads.
static __device__ __forceinline__ bool pattern_bad(const Args &a, int64_t pb, int64_t ph)
{
    return a.bad && ((const unsigned char *)a.bad)[pb * a.pattern_heads + ph] != 0;
}

// Whether any query head of kv head kvh's group has a bad list: the
// group's K and V gradients are then NaN.
static __device__ __forceinline__ bool group_bad(const Args &a, int64_t b, int64_t kvh)
{
    const int64_t group = a.heads / a.kv_heads, pb = pattern_b(a, b);
    bool bad = false;
    for (int64_t g = 0; g < group; g++)
        bad = bad || pattern_bad(a, pb, pattern_h(a, kvh * group + g));
    return bad;
}

// Keys query i may see: j < Lk, and j <= i + (Lk - Lq) when causal.
static __device__ __forceinline__ int64_t key_end(const Args &a, int64_t i)
{
    int64_t end = a.lk;
    if (a.flags & BK_ATTENTION_CAUSAL) {
        const int64_t c = i + (a.lk - a.lq) + 1;
        end = c < end ? c : end;
    }
    return end > 0 ? end : 0;
}

// Keys any of query rows [first, first + rows) may see (0: none of the
// rows is below Lq).
static __device__ __forceinline__ int64_t rows_key_end(const Args &a, int64_t first, int64_t rows)
{
    return first < a.lq ? key_end(a, min(first + rows, a.lq) - 1) : 0;
}

// Queries that may see key j: i >= j - (Lk - Lq) when causal.
static __device__ __forceinline__ int64_t query_begin(const Args &a, int64_t j)
{
    if (!(a.flags & BK_ATTENTION_CAUSAL))
        return 0;
    const int64_t c = j - (a.lk - a.lq);
    return c > 0 ? c : 0;
}

// ---- Sequences of their own lengths ------------------------------------------
//
// Grid z index z names a sequence: a problem of its own inside the bound
// tensors (lib/host/host_attention_sequences.c states the rules). Without
// the struct it is batch entry z, of Lq queries and Lk keys; PADDED, batch
// entry z with its own lengths; PACKED, rows off[z] .. off[z + 1] - 1 of
// the one batch entry. Row indices the kernels walk are local to the
// sequence (the causal diagonal and the pattern blocks count from its
// first query and key); q0 and k0 make them rows of the tensors.
struct Seq {
    int64_t b;          // batch index of its rows (PACKED: 0)
    int64_t pb;         // its pattern entry's batch index
    int64_t q0, k0;     // rows of its first query and key (PADDED: 0)
    int64_t lq, lk;     // its queries and keys
    // One past the last query (key) row its CTAs write: the tensors' Lq
    // (Lk) where rows past a PADDED length get the host's zeros, its own
    // end where PACKED (the rows between sequences are the fix-up's).
    int64_t q_out, k_out;
    bool bad;           // its lengths broke a rule: its outputs are NaN (PACKED:
                        // q_out = k_out = 0, its offsets address nothing)
};

static __device__ __forceinline__ int64_t seq_entry(uint64_t base, int64_t stride, int64_t i)
{
    return ((const int32_t *)base)[i * stride];
}

// Whether PACKED offsets off[s], off[s + 1] of an axis of n rows (bound
// max) break a rule: outside 0..n, decreasing, longer than max, the first
// not 0 or the last not n.
static __device__ __forceinline__ bool offsets_bad(const Args &a, uint64_t off, int64_t stride,
                                                   int64_t s, int64_t n, int64_t max)
{
    const int64_t lo = seq_entry(off, stride, s), hi = seq_entry(off, stride, s + 1);
    return lo < 0 || hi > n || hi < lo || hi - lo > max || (s == 0 && lo != 0) ||
           (s == a.seq_count - 1 && hi != n);
}

static __device__ __forceinline__ bool packed_bad(const Args &a, int64_t s)
{
    return offsets_bad(a, a.seq_q, a.seq_s[0], s, a.lq, a.max_lq) ||
           offsets_bad(a, a.seq_k, a.seq_s[1], s, a.lk, a.max_lk);
}

// Batch entry z as the one sequence it is without the struct: what the
// tensor-core kernels compiled without sequences (SEQ false) take, every
// field but b a constant or a parameter.
static __device__ __forceinline__ Seq batch_entry(const Args &a, int64_t z)
{
    Seq s;
    s.b = z;
    s.pb = pattern_b(a, z);
    s.q0 = s.k0 = 0;
    s.lq = s.q_out = a.lq;
    s.lk = s.k_out = a.lk;
    s.bad = false;
    return s;
}

// The sequence of grid z index z: one branch a CTA; without sequences the
// batch entry as the kernels have always taken it.
static __device__ __forceinline__ Seq sequence(const Args &a, int64_t z)
{
    Seq s = batch_entry(a, z);
    if (a.seq_form == BK_ATTENTION_SEQ_PADDED) {
        if (a.seq_q)
            s.lq = seq_entry(a.seq_q, a.seq_s[0], z);
        if (a.seq_k)
            s.lk = seq_entry(a.seq_k, a.seq_s[1], z);
        s.bad = s.lq < 0 || s.lq > a.lq || s.lk < 0 || s.lk > a.lk;
        if (s.bad) // nothing is read; every row written is NaN
            s.lq = s.lk = 0;
    } else if (a.seq_form == BK_ATTENTION_SEQ_PACKED) {
        s.b = 0;
        s.bad = packed_bad(a, z);
        if (s.bad) {
            s.lq = s.lk = s.q_out = s.k_out = 0;
            return s;
        }
        s.q0 = seq_entry(a.seq_q, a.seq_s[0], z);
        s.k0 = seq_entry(a.seq_k, a.seq_s[1], z);
        s.lq = seq_entry(a.seq_q, a.seq_s[0], z + 1) - s.q0;
        s.lk = seq_entry(a.seq_k, a.seq_s[1], z + 1) - s.k0;
        s.q_out = s.q0 + s.lq;
        s.k_out = s.k0 + s.lk;
    }
    return s;
}

// The sequence of grid z index z in a kernel compiled with (SEQ) or
// without sequences: the plans launch the SEQ variants for plans with
// them only, so that the others' code and registers stay as they were.
template <bool SEQ> static __device__ __forceinline__ Seq grid_sequence(const Args &a, int64_t z)
{
    return SEQ ? sequence(a, z) : batch_entry(a, z);
}

// Keys query i (local) of sequence s may see: j < lk, and j <= i + (lk -
// lq) when causal (its diagonal aligned to its bottom right).
static __device__ __forceinline__ int64_t key_end(const Args &a, const Seq &s, int64_t i)
{
    int64_t end = s.lk;
    if (a.flags & BK_ATTENTION_CAUSAL) {
        const int64_t c = i + (s.lk - s.lq) + 1;
        end = c < end ? c : end;
    }
    return end > 0 ? end : 0;
}

// Keys any of its query rows [first, first + rows) may see (0: none of
// the rows is below its lq).
static __device__ __forceinline__ int64_t rows_key_end(const Args &a, const Seq &s, int64_t first,
                                                       int64_t rows)
{
    return first < s.lq ? key_end(a, s, min(first + rows, s.lq) - 1) : 0;
}

// Its queries that may see its key j: i >= j - (lk - lq) when causal.
static __device__ __forceinline__ int64_t query_begin(const Args &a, const Seq &s, int64_t j)
{
    if (!(a.flags & BK_ATTENTION_CAUSAL))
        return 0;
    const int64_t c = j - (s.lk - s.lq);
    return c > 0 ? c : 0;
}

// Whether any query head of kv head kvh's group has a bad list, pattern
// batch index pb.
static __device__ __forceinline__ bool group_bad_pb(const Args &a, int64_t pb, int64_t kvh)
{
    const int64_t group = a.heads / a.kv_heads;
    bool bad = false;
    for (int64_t g = 0; g < group; g++)
        bad = bad || pattern_bad(a, pb, pattern_h(a, kvh * group + g));
    return bad;
}

constexpr float LOG2E = 1.4426950408889634f; // scores run in base 2

// The tensor-core forward kernels take scores to base 2 as s * sl2. A key a
// row may not see gets `masked`, which scales to -inf whatever the sign of
// the scale; a zero scale (or one that rounds to zero in F32) runs as a
// tiny positive one: the same softmax, every visible score 0 to rounding.
struct ScoreScale {
    float sl2, masked;
    bool negative;
};
static __device__ __forceinline__ ScoreScale score_scale(double scale)
{
    ScoreScale s;
    s.sl2 = (float)(scale * 1.4426950408889634);
    if (s.sl2 == 0.f)
        s.sl2 = 1e-30f;
    s.negative = s.sl2 < 0.f;
    s.masked = s.negative ? INFINITY : -INFINITY;
    return s;
}

// v[0] op v[1] op ... op v[N - 1] for an associative op, as a tree: log2 N
// dependent steps where a running one would take N (the softmax waits on
// its row maxima). Overwrites v.
template <int N, typename F>
static __device__ __forceinline__ float tree_reduce(float (&v)[N], F op)
{
#pragma unroll
    for (int w = 1; w < N; w *= 2) {
#pragma unroll
        for (int i = 0; i + w < N; i += 2 * w)
            v[i] = op(v[i], v[i + w]);
    }
    return v[0];
}

// The largest scaled score of a fragment's two rows (elements 0-1 and 2-3
// of each 4), at least `prior`: the raw maximum (minimum for a negative
// scale) times the scale, one multiply per row instead of one per score.
template <int N>
static __device__ __forceinline__ float2 row_max(const float (&s)[N][4], const ScoreScale &ss,
                                                 float2 prior)
{
    float a[N], b[N];
    if (!ss.negative) {
#pragma unroll
        for (int n = 0; n < N; n++) {
            a[n] = fmaxf(s[n][0], s[n][1]);
            b[n] = fmaxf(s[n][2], s[n][3]);
        }
        tree_reduce(a, [](float x, float y) { return fmaxf(x, y); });
        tree_reduce(b, [](float x, float y) { return fmaxf(x, y); });
    } else {
#pragma unroll
        for (int n = 0; n < N; n++) {
            a[n] = fminf(s[n][0], s[n][1]);
            b[n] = fminf(s[n][2], s[n][3]);
        }
        tree_reduce(a, [](float x, float y) { return fminf(x, y); });
        tree_reduce(b, [](float x, float y) { return fminf(x, y); });
    }
    return make_float2(fmaxf(prior.x, a[0] * ss.sl2), fmaxf(prior.y, b[0] * ss.sl2));
}

// 2^x on the special function unit, a subnormal result flushed to zero (a
// probability below 2^-126 of the row's largest is nothing beside it);
// exp2f would add a range test and two multiplies around each.
static __device__ __forceinline__ float exp2_fast(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}

// Two F32 values rounded to T's storage, packed as one 32-bit register (an
// MMA fragment, or two adjacent output elements).
template <typename T> static __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi)
{
    __half2 v = __floats2half2_rn(lo, hi);
    return *(uint32_t *)&v;
}
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi)
{
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *(uint32_t *)&v;
}

// The two values of a packed pair of T, as F32 (pack2's inverse).
template <typename T> static __device__ __forceinline__ float2 unpack2(uint32_t v);
template <> __device__ __forceinline__ float2 unpack2<__half>(uint32_t v)
{
    return __half22float2(*(const __half2 *)&v);
}
template <> __device__ __forceinline__ float2 unpack2<__nv_bfloat16>(uint32_t v)
{
    return __bfloat1622float2(*(const __nv_bfloat162 *)&v);
}

// Zeroes an accumulator of N fragments of 4.
template <int N> static __device__ __forceinline__ void zero(float (&acc)[N][4])
{
#pragma unroll
    for (int n = 0; n < N; n++)
        acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
}

// Stores rows row0 + lane / 4 (+ 8) of a 16 x DH accumulator (an mma.sync
// fragment, or a warp's rows of a wgmma one) times factor
// into a view with unit column stride (rows at or past `rows` and columns
// at or past `cols` are not written: a kernel of width DH takes heads of
// any size up to it in whole 8-column steps, its columns past them zeros).
template <typename T, int DH>
static __device__ __forceinline__ void store_rows(const View &v, int64_t b, int64_t h,
                                                  int64_t row0, int64_t rows,
                                                  const float (&acc)[DH / 8][4], float fa,
                                                  float fb, int lane, int64_t cols = DH)
{
#pragma unroll
    for (int half = 0; half < 2; half++) {
        const int64_t row = row0 + lane / 4 + 8 * half;
        if (row >= rows)
            continue;
        const float f = half ? fb : fa;
        T *dst = at<T>(v, b, h, row) + 2 * (lane % 4);
#pragma unroll
        for (int n = 0; n < DH / 8; n++)
            if (n * 8 < cols)
                *(uint32_t *)(dst + n * 8) = pack2<T>(acc[n][2 * half] * f,
                                                          acc[n][2 * half + 1] * f);
    }
}

// Where row i of (b, h) keeps its lse (F32 on the fast paths, C = const
// float to read; the general kernels' type) and its backward row sum.
template <typename C> static __device__ __forceinline__ C *lse_at(const Args &a, int64_t b,
                                                                  int64_t h, int64_t i)
{
    return (C *)a.lse + b * a.lse_s[0] + h * a.lse_s[1] + i * a.lse_s[2];
}

template <typename C> static __device__ __forceinline__ C *rowsum_at(const Args &a, int64_t b,
                                                                     int64_t h, int64_t i)
{
    return (C *)a.rowsum + (b * a.heads + h) * a.lq + i;
}

// The first of the two chunks (64-column halves) of the fused backward's
// dq sums and counters for 64-query tile t of (b, h): chunks run over the
// tiles of each head, so tile t of head h + g is tile g * tiles + t of h.
static __device__ __forceinline__ int64_t dq_chunk(const Args &a, int64_t b, int64_t h, int64_t t)
{
    return ((b * a.heads + h) * ((a.lq + 63) / 64) + t) * 2;
}

// A row's lse from the forward's running maximum m (base 2) and sum l of
// 2^(s - m): -inf where the row saw no key.
static __device__ __forceinline__ float row_lse(float m, float l)
{
    return l > 0.f ? (m + log2f(l)) / LOG2E : -INFINITY;
}

// A row's lse as the backward uses it: in base 2, and +inf where the row
// sees no key (lse -inf), so that its P is 0.
static __device__ __forceinline__ float lse_base2(float l)
{
    return l == -INFINITY ? INFINITY : l * LOG2E;
}

// The backward's statistics of query row i of (b, h): lse in base 2 (+inf
// where the row sees nothing or lies past Lq, so that P is 0) and rowsum
// (0 past Lq).
static __device__ __forceinline__ float2 backward_row_stats(const Args &a, int64_t b, int64_t h,
                                                            int64_t i)
{
    float2 st = make_float2(INFINITY, 0.f);
    if (i < a.lq) {
        st.x = lse_base2(*lse_at<const float>(a, b, h, i));
        st.y = *rowsum_at<const float>(a, b, h, i);
    }
    return st;
}

static __device__ __forceinline__ float quiet_nan()
{
    return __int_as_float(0x7FC00000);
}

// The rows (pattern head, pair of neighbouring query blocks) whose entries
// bk_attention_forward_choice counts: those of its first CHOICE_ENTRIES.
static __device__ __forceinline__ int64_t choice_rows(const Args &a)
{
    const int64_t rows = a.pattern_batch * a.pattern_heads * ((a.nbq + 1) / 2);
    const int64_t counted = BK_ATTENTION_CHOICE_ENTRIES / a.nbk;
    return min(rows, counted > 0 ? counted : (int64_t)1);
}

} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_COMMON_CUH
