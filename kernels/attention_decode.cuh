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

} // namespace decode
} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_DECODE_CUH
