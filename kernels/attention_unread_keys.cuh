// SPDX-License-Identifier: Apache-2.0
// Rows of a tile past a sequence's keys. The copy engine brings whole
// boxes, so a Hopper tile that ends past a PADDED sequence's last key (or
// a decode step past its sequence's) holds rows of the cache that the
// sequence does not own: stale slots that may hold NaN or infinities. A
// masked score makes P = 0, but 0 x NaN is NaN, so P V (and, in the
// backward, dP = dO V^T and dQ = dS K) would carry them into the outputs.
// The consumers zero those rows before a product reads them; a sequence's
// keys past its length are then never read into a result.
#ifndef BK_ATTENTION_UNREAD_KEYS_CUH
#define BK_ATTENTION_UNREAD_KEYS_CUH

#include "shared_memory_ops.cuh"
#include "tma_ops.cuh"

namespace bk {
namespace attention {

// The first named barrier of the consumers' publishing of zeroed rows
// (one a warpgroup; the turns take 2 to 4, the backward 1 to 3, the
// pair kernels 4 to 11).
constexpr int ZEROED_BARRIER = 12;

// The rows of a span of `rows` keys from key `first` that lie at or past
// own_end (the keys the sequence owns) but short of tensor_end (past which
// the copy engine fills zeros): [from, to), empty where from >= to.
struct UnownedRows {
    int from, to;
};
static __device__ __forceinline__ UnownedRows unowned_rows(int64_t first, int64_t own_end,
                                                           int64_t tensor_end, int rows)
{
    return { (int)max((int64_t)0, min(own_end - first, (int64_t)rows)),
             (int)max((int64_t)0, min(tensor_end - first, (int64_t)rows)) };
}

// Zeroes rows [first, end) of each of CB column blocks of 128-byte rows
// (`block` bytes apart) of the tile at `tile`, a THREADS-thread share
// each (thread tid of them); rows are whole, so the swizzle is moot.
template <int CB, int THREADS>
static __device__ __forceinline__ void zero_tile_rows(uint32_t tile, uint32_t block, int first,
                                                      int end, int tid)
{
    const int per = (end - first) * 8; // 16-byte pieces a block
    const uint4 z = make_uint4(0u, 0u, 0u, 0u);
    for (int i = tid; i < per * CB; i += THREADS) {
        const int cb = i / per;
        store_shared16(tile + (uint32_t)cb * block + (uint32_t)(first * 128 + (i - cb * per) * 16), z);
    }
}

// The zeroed rows, made visible to the warpgroup's wgmma (the async
// proxy): every thread's fence, then the warpgroup's barrier.
template <int THREADS> static __device__ __forceinline__ void publish_zeroed_rows(int barrier)
{
    hopper::fence_proxy_async_shared();
    asm volatile("bar.sync %0, %1;\n" ::"r"(barrier), "n"(THREADS) : "memory");
}

// Rows [first, end) of a K tile and its V tile (CB column blocks each)
// zeroed and published, where there are any; every thread of the
// warpgroup calls it with the same rows.
template <int CB>
static __device__ __forceinline__ void zero_kv_rows(uint32_t k_tile, uint32_t v_tile,
                                                    uint32_t block, UnownedRows r, int tid,
                                                    int barrier)
{
    if (r.from >= r.to)
        return;
    zero_tile_rows<CB, 128>(k_tile, block, r.from, r.to, tid);
    zero_tile_rows<CB, 128>(v_tile, block, r.from, r.to, tid);
    publish_zeroed_rows<128>(barrier);
}

} // namespace attention
} // namespace bk

#endif // BK_ATTENTION_UNREAD_KEYS_CUH
