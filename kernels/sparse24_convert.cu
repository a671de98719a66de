// SPDX-License-Identifier: Apache-2.0
// Module sparse24_convert: conversions between a dense W and the 2:4
// interchange format, their report, and prepare (the interchange format ->
// the CUDA prepared weight, kernels/shared/sparse24_args.h). Semantics follow the host
// backend (lib/host/host_sparse24_convert.c) exactly: values are copied as
// bits, pruning keeps the two largest magnitudes (NaN above every number,
// ties to the lower position, so a group with fewer than two non-zeros
// keeps its lowest zeros too), strict compression stores rejected groups
// as pruning would, and decompression follows bad metadata (the second
// position wins where both are equal).
//
// A conversion runs as three launches: report_init (the report, with the
// first bad group as UINT64_MAX in firstBadRow), the conversion (one thread
// per metadata element: two groups; each thread adds its bad groups to the
// count and takes the minimum of the linear index row * groups + group of
// its first bad one), report_finalize (the linear index back to row and
// group, the status; all zero for a clean weight, as on the host).
#include "sparse24_common.cuh"

namespace bk_sp24 {

// The report's fields (BkSparse24Report, 32 bytes).
struct Report {
    uint32_t status;
    uint32_t reserved;
    unsigned long long count;
    unsigned long long row;     // scratch between launches: the first bad linear index
    unsigned long long group;
};

template <typename T> static BK_SP24_HD T *at(uint64_t base, int64_t i)
{
    return reinterpret_cast<T *>(base) + i;
}

// x ranks above y when pruning keeps it (host: ranks_above).
template <typename C> static BK_SP24_HD bool ranks_above(C x, C y)
{
    if (isnan(y))
        return false;
    return isnan(x) || fabs(x) > fabs(y);
}

// The kept positions of a group as a metadata byte (host: keep_two). The
// running winners are carried as values, so w is indexed by constants only.
template <typename C> static BK_SP24_HD unsigned keep_two(const C (&w)[4])
{
    int first = 0;
    C wf = w[0];
#pragma unroll
    for (int q = 1; q < 4; q++)
        if (ranks_above(w[q], wf)) {
            first = q;
            wf = w[q];
        }
    const int start = first == 0 ? 1 : 0;
    int second = start;
    C ws = first == 0 ? w[1] : w[0];
#pragma unroll
    for (int q = 1; q < 4; q++)
        if (q > start && q != first && ranks_above(w[q], ws)) {
            second = q;
            ws = w[q];
        }
    const int lo = first < second ? first : second, hi = first < second ? second : first;
    return (unsigned)(lo | hi << 2);
}

template <typename B> static BK_SP24_HD B pick(const B (&b)[4], unsigned pos)
{
    return pos == 0 ? b[0] : pos == 1 ? b[1] : pos == 2 ? b[2] : b[3];
}

static BK_SP24_HD bool bad_byte(unsigned byte)
{
    return (byte & 0xF0u) || (byte & 3u) >= ((byte >> 2) & 3u);
}

// The conversion's per-thread tally of bad groups, added to the report once.
struct Tally {
    unsigned long long count = 0, first = ~0ull;
    BK_SP24_HD void bad(unsigned long long linear)
    {
        if (count++ == 0)
            first = linear;
    }
    __device__ __forceinline__ void flush(const bk_sp24_convert_args &p)
    {
        if (count == 0)
            return;
        Report *r = reinterpret_cast<Report *>(p.report);
        atomicAdd(&r->count, count);
        atomicMin(&r->row, first);
    }
};

// The report of count bad groups, the first at linear index first (host:
// convert_launch): all zero but the status when there are none.
static BK_SP24_HD Report final_report(const bk_sp24_convert_args &p, unsigned long long count,
                                      unsigned long long first)
{
    Report out = { 0, 0, 0, 0, 0 };
    if (count) {  // pruning finds none
        const unsigned long long groups = (unsigned long long)p.groups;
        out.status = p.conversion == BK_SP24_CONVERSION_STRICT ? BK_SP24_STATUS_TOO_MANY_NONZEROS
                                                               : BK_SP24_STATUS_BAD_METADATA;
        out.count = count;
        out.row = first / groups;
        out.group = first % groups;
    }
    return out;
}

// Items: metadata elements (r, j) in row-major order, so a thread's first
// bad group is also its smallest linear index.
template <class Op>
static __device__ __forceinline__ void for_each_item(const bk_sp24_convert_args &p, Op op)
{
    grid_dependency_wait();
    const int64_t per_row = p.groups / 2;
    const uint64_t items = (uint64_t)p.m * (uint64_t)per_row;
    Tally tally;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < items;
         i += (uint64_t)gridDim.x * blockDim.x) {
        const int64_t r = (int64_t)(i / (uint64_t)per_row), j = (int64_t)(i % (uint64_t)per_row);
        op(r, j, tally);
    }
    tally.flush(p);
}

template <typename T, bool STRICT> struct Compress {
    const bk_sp24_convert_args &p;
    BK_SP24_HD void operator()(int64_t r, int64_t j, Tally &tally) const
    {
        typedef typename Elem<T>::Bits B;
        typedef typename Elem<T>::C C;
        unsigned word = 0;
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t g = 2 * j + h;
            B bits[4];
            C w[4];
            int nonzeros = 0;
#pragma unroll
            for (int q = 0; q < 4; q++) {
                bits[q] = *at<const B>(p.dense, r * p.dense_rs + (4 * g + q) * p.dense_cs);
                w[q] = Elem<T>::in(*reinterpret_cast<const T *>(&bits[q]));
                nonzeros += w[q] != C(0) || isnan(w[q]);
            }
            if (STRICT && nonzeros > 2)
                tally.bad((unsigned long long)(r * p.groups + g));
            const unsigned byte = keep_two(w);
            *at<B>(p.values, r * p.values_rs + 2 * g * p.values_cs) = pick(bits, byte & 3u);
            *at<B>(p.values, r * p.values_rs + (2 * g + 1) * p.values_cs) = pick(bits, byte >> 2);
            word |= byte << (8 * h);
        }
        *at<uint16_t>(p.metadata, r * p.meta_rs + j * p.meta_cs) = (uint16_t)word;
    }
};

template <typename T> struct Decompress {
    const bk_sp24_convert_args &p;
    BK_SP24_HD void operator()(int64_t r, int64_t j, Tally &tally) const
    {
        typedef typename Elem<T>::Bits B;
        const unsigned word = *at<const uint16_t>(p.metadata, r * p.meta_rs + j * p.meta_cs);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int64_t g = 2 * j + h;
            const unsigned byte = (word >> (8 * h)) & 0xFFu;
            if (bad_byte(byte))
                tally.bad((unsigned long long)(r * p.groups + g));
            const unsigned p0 = byte & 3u, p1 = (byte >> 2) & 3u;
            const B v0 = *at<const B>(p.values, r * p.values_rs + 2 * g * p.values_cs);
            const B v1 = *at<const B>(p.values, r * p.values_rs + (2 * g + 1) * p.values_cs);
#pragma unroll
            for (unsigned q = 0; q < 4; q++)  // all-zero bits are +0 in every type
                *at<B>(p.dense, r * p.dense_rs + (4 * g + q) * p.dense_cs) =
                    q == p1 ? v1 : q == p0 ? v0 : B(0);
        }
    }
};

struct Validate {
    const bk_sp24_convert_args &p;
    BK_SP24_HD void operator()(int64_t r, int64_t j, Tally &tally) const
    {
        const unsigned word = *at<const uint16_t>(p.metadata, r * p.meta_rs + j * p.meta_cs);
#pragma unroll
        for (int h = 0; h < 2; h++)
            if (bad_byte((word >> (8 * h)) & 0xFFu))
                tally.bad((unsigned long long)(r * p.groups + 2 * j + h));
    }
};

// ---- Prepare ----------------------------------------------------------------
// F16/BF16: (tile, lane) writes 16 bytes of values, row lane % 8 of core
// matrix lane / 8 of the tile (its rows 8 (lane / 8 % 2) .., kept values
// 8 (lane / 16) ..: the rows ldmatrix reads for the A fragment), and, for
// lanes 4 g and 4 g + 1, its metadata word (layout in sparse24_args.h).
// Values are moved as 16-bit patterns.
static BK_SP24_HD void prepare_tile_lane(const bk_sp24_prepare_args &p, int64_t tile, uint32_t lane)
{
    const int64_t groups = p.k / 4, mt = tile / p.kbs, kb = tile % p.kbs;
    const uint32_t rl = 8 * (lane / 8 % 2) + lane % 8, c8 = lane / 16;
    const int64_t r = mt * 16 + rl;
    uint32_t reg[4];
#pragma unroll
    for (uint32_t q = 0; q < 4; q++) {
        const int64_t g = kb * 8 + 4 * c8 + q;
        uint32_t v = 0;
        if (r < p.m && g < groups) {
            const int64_t at0 = r * p.values_rs + 2 * g * p.values_cs;
            v = (uint32_t)*at<const uint16_t>(p.values, at0) |
                (uint32_t)*at<const uint16_t>(p.values, at0 + p.values_cs) << 16;
        }
        reg[q] = v;
    }
    const uint64_t slot = (uint64_t)bk_sp24_tile_slot(mt, kb, p.kbs);
    *reinterpret_cast<uint4 *>(p.prepared + (slot / 2) * (2 * BK_SP24_TILE_BYTES) +
                               bk_sp24_unit_offset(rl, 16 * (uint32_t)(kb % 2) + 8 * c8)) =
        make_uint4(reg[0], reg[1], reg[2], reg[3]);
    if ((lane & 3) >= 2)
        return;
    uint32_t word = 0;
#pragma unroll
    for (uint32_t h = 0; h < 2; h++) {
        const int64_t r = mt * 16 + (lane >> 2) + 8 * h;
#pragma unroll
        for (uint32_t e = 0; e < 2; e++) {  // a metadata element: groups g, g + 1
            const int64_t g = kb * 8 + 4 * (lane & 3) + 2 * e;
            uint32_t two = BK_SP24_PAD_NIBBLE | BK_SP24_PAD_NIBBLE << 8;
            if (r < p.m && g < groups)
                two = *at<const uint16_t>(p.metadata, r * p.meta_rs + (g / 2) * p.meta_cs);
            word |= ((two & 0xFu) | (two >> 4 & 0xF0u)) << (16 * h + 8 * e);
        }
    }
    *reinterpret_cast<uint32_t *>(p.prepared + p.meta_offset + slot * BK_SP24_META_BYTES +
                                  bk_sp24_meta_lane_word(lane) * 4) = word;
}

// F32: the interchange format packed row-major, as on the host; the bytes
// between the values and the metadata are zeroed, so equal weights prepare
// to equal bytes. Item i < m * k / 8: a metadata element, its 4 values and
// itself; past that, 4 bytes of the gap (a multiple of 4 below 16).
static BK_SP24_HD uint64_t prepare_f32_items(const bk_sp24_prepare_args &p)
{
    const uint64_t items = (uint64_t)p.m * (uint64_t)(p.k / 8);
    return items + (p.meta_offset - items * 16) / 4;
}

static BK_SP24_HD void prepare_f32_item(const bk_sp24_prepare_args &p, uint64_t i)
{
    const int64_t per_row = p.k / 8;
    const uint64_t items = (uint64_t)p.m * (uint64_t)per_row;
    if (i >= items) {
        *reinterpret_cast<uint32_t *>(p.prepared + items * 16 + (i - items) * 4) = 0;
        return;
    }
    const int64_t r = (int64_t)(i / (uint64_t)per_row), j = (int64_t)(i % (uint64_t)per_row);
    uint32_t *v = reinterpret_cast<uint32_t *>(p.prepared) + i * 4;
#pragma unroll
    for (int e = 0; e < 4; e++)
        v[e] = *at<const uint32_t>(p.values, r * p.values_rs + (4 * j + e) * p.values_cs);
    *reinterpret_cast<uint16_t *>(p.prepared + p.meta_offset + i * 2) =
        *at<const uint16_t>(p.metadata, r * p.meta_rs + j * p.meta_cs);
}

}  // namespace bk_sp24

using namespace bk_sp24;

extern "C" __global__ void __launch_bounds__(32)
    bk_sp24_report_init(const __grid_constant__ bk_sp24_convert_args p)
{
    grid_dependency_wait();
    if (threadIdx.x == 0)
        *reinterpret_cast<Report *>(p.report) = Report{ 0, 0, 0, ~0ull, 0 };
}

extern "C" __global__ void __launch_bounds__(32)
    bk_sp24_report_finalize(const __grid_constant__ bk_sp24_convert_args p)
{
    grid_dependency_wait();
    if (threadIdx.x != 0)
        return;
    Report *r = reinterpret_cast<Report *>(p.report);
    *r = final_report(p, r->count, r->row);
}

#define BK_SP24_CONVERT_ENTRIES(tname, T)                                                      \
    extern "C" __global__ void __launch_bounds__(BK_SP24_CONVERT_BLOCK)                        \
        bk_sp24_compress_strict_##tname(const __grid_constant__ bk_sp24_convert_args p)        \
    {                                                                                          \
        for_each_item(p, Compress<T, true>{ p });                                              \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(BK_SP24_CONVERT_BLOCK)                        \
        bk_sp24_compress_prune_##tname(const __grid_constant__ bk_sp24_convert_args p)         \
    {                                                                                          \
        for_each_item(p, Compress<T, false>{ p });                                             \
    }                                                                                          \
    extern "C" __global__ void __launch_bounds__(BK_SP24_CONVERT_BLOCK)                        \
        bk_sp24_decompress_##tname(const __grid_constant__ bk_sp24_convert_args p)             \
    {                                                                                          \
        for_each_item(p, Decompress<T>{ p });                                                  \
    }

BK_SP24_CONVERT_ENTRIES(f32, float)
BK_SP24_CONVERT_ENTRIES(f16, __half)
BK_SP24_CONVERT_ENTRIES(bf16, __nv_bfloat16)
BK_SP24_CONVERT_ENTRIES(f64, double)

extern "C" __global__ void __launch_bounds__(BK_SP24_CONVERT_BLOCK)
    bk_sp24_validate(const __grid_constant__ bk_sp24_convert_args p)
{
    for_each_item(p, Validate{ p });
}

extern "C" __global__ void __launch_bounds__(BK_SP24_CONVERT_BLOCK)
    bk_sp24_prepare_tiles(const __grid_constant__ bk_sp24_prepare_args p)
{
    grid_dependency_wait();
    const uint64_t threads = (uint64_t)p.mts * (uint64_t)p.kbs * 32;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < threads;
         i += (uint64_t)gridDim.x * blockDim.x)
        prepare_tile_lane(p, (int64_t)(i / 32), (uint32_t)(i % 32));
}

extern "C" __global__ void __launch_bounds__(BK_SP24_CONVERT_BLOCK)
    bk_sp24_prepare_f32(const __grid_constant__ bk_sp24_prepare_args p)
{
    grid_dependency_wait();
    const uint64_t items = prepare_f32_items(p);
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < items;
         i += (uint64_t)gridDim.x * blockDim.x)
        prepare_f32_item(p, i);
}
