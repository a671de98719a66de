// SPDX-License-Identifier: Apache-2.0
// What the decode kernels share (kernels/attention_decode.cu's, on
// mma.sync, and kernels/attention_decode_wgmma.cu's, on Hopper): a
// sequence's lengths, its keys' limits, and the stream-K arithmetic that
// names a unit's part slots (the combining kernel reads them back).
#ifndef BK_ATTENTION_DECODE_CUH
#define BK_ATTENTION_DECODE_CUH

#include "attention_common.cuh"

namespace bk {
namespace attention {
namespace decode {

typedef bk_attention_decode_args DecodeArgs;

// A sequence's lengths (its queries and keys) and whether they are in
// range.
struct Sequence {
    int64_t lq, lk;
    bool bad;
};

static __device__ __forceinline__ Sequence sequence(const DecodeArgs &d, int64_t b)
{
    Sequence q = { d.a.lq, d.a.lk, false };
    if (d.lengths_q)
        q.lq = ((const int32_t *)d.lengths_q)[b * d.lengths_s[0]];
    if (d.lengths_k)
        q.lk = ((const int32_t *)d.lengths_k)[b * d.lengths_s[1]];
    q.bad = q.lq < 0 || q.lq > d.a.lq || q.lk < 0 || q.lk > d.a.lk;
    if (q.bad)
        q.lq = q.lk = 0;
    return q;
}

// Keys query i of a sequence sees: j < lk, and j <= i + (lk - lq) when
// causal; none past its queries.
static __device__ __forceinline__ int64_t seq_key_end(const Args &a, const Sequence &q, int64_t i)
{
    if (i >= q.lq)
        return 0;
    int64_t end = q.lk;
    if (a.flags & BK_ATTENTION_CAUSAL)
        end = min(end, i + (q.lk - q.lq) + 1);
    return end > 0 ? end : 0;
}

// Page i of sequence b's table (paged caches), or -1 out of range.
static __device__ __forceinline__ int64_t page_at(const DecodeArgs &d, int64_t b, int64_t i)
{
    const int64_t p = ((const int32_t *)d.block_table)[b * d.table_s[0] + i * d.table_s[1]];
    return p >= 0 && p < d.pages ? p : -1;
}

// Whether a page that keys [k0, stop) of sequence b use is out of range
// (a warp's vote: every lane gets the answer).
static __device__ __forceinline__ bool pages_bad(const DecodeArgs &d, int64_t b, int64_t k0,
                                                 int64_t stop, int lane)
{
    bool bad = false;
    if (d.block_table && stop > k0) {
        const int64_t first = k0 / d.page_size, last = (stop - 1) / d.page_size;
        for (int64_t p = first + lane; p <= last; p += 32)
            bad = bad || page_at(d, b, p) < 0;
    }
    return __any_sync(0xFFFFFFFFu, bad);
}

// The first of stream i's steps (of all units' end to end, S of them):
// i S / W, so that no two streams' shares differ by more than a step (a
// share rounded up left up to a thirtieth of the streams with none).
static __device__ __forceinline__ int64_t stream_start(const DecodeArgs &d, int64_t i)
{
    return i * (d.units * d.unit_steps) / d.streams;
}

// The stream that walks step x: the last i with i S / W <= x.
static __device__ __forceinline__ int64_t stream_of(const DecodeArgs &d, int64_t x)
{
    return ((x + 1) * d.streams - 1) / (d.units * d.unit_steps);
}

// The first stream that walks a step of unit u (its part slot 0).
static __device__ __forceinline__ int64_t first_stream(const DecodeArgs &d, int64_t u)
{
    return stream_of(d, u * d.unit_steps);
}

// The parts unit u leaves: a slot per stream-K range.
static __device__ __forceinline__ int64_t unit_parts(const DecodeArgs &d, int64_t u)
{
    if (d.unit_steps == 0)
        return 0;
    return stream_of(d, u * d.unit_steps + d.unit_steps - 1) - first_stream(d, u) + 1;
}

// A thread's row of a part, in `cell` (unit u's slot k, row r: (u
// max_parts + k) rows a unit + r): its columns o[j][2 half], o[j][2 half
// + 1] (2 q4 + 8 j) divided by l, and by lane q4 = 0 the lse m + log2 l in
// base 2 (-inf without a key; NaN for a sequence out of range).
template <int NT_O>
static __device__ __forceinline__ void store_part_row(const DecodeArgs &d, int64_t cell,
                                                      const float (&o)[NT_O][4], int half,
                                                      float l, float m, int q4, bool bad)
{
    const float inv = l > 0.f ? 1.f / l : 0.f;
    float *dst = (float *)d.part_o + cell * d.a.dv_cols + 2 * q4;
#pragma unroll
    for (int j = 0; j < NT_O; j++)
        *(float2 *)(dst + j * 8) = make_float2(o[j][2 * half] * inv, o[j][2 * half + 1] * inv);
    if (q4 == 0)
        ((float *)d.part_lse)[cell] = bad ? quiet_nan() : l > 0.f ? m + log2f(l) : -INFINITY;
}

} // namespace decode
} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_DECODE_CUH
