// SPDX-License-Identifier: Apache-2.0
// W4A16 weight utilities on the GPU: quantize, pack to and unpack from
// Marlin's layout, and repack GPTQ checkpoints (bk_w4a16.h). One thread
// per output word or per (group, column); the layout arithmetic is the
// host packer's (kernels/shared/w4a16_layout.h), so both write the same bytes.
//
// The GPTQ repack is four launches: report_init (one CTA: the report, and
// g_idx checked for range), perm (one CTA per group ranks that group's
// rows in order: a stable counting sort, and groups of the wrong size),
// repack (words, scales, zero points) and report_finalize; with zero
// points (asymmetric, GPTQ or AWQ) repack_zeros writes packedZeros before
// finalize, and repack no longer checks them. A status is
// recorded only while no earlier check failed, so the report names the
// first rule broken in the documented order; during the run firstBadRow
// holds a key that orders the candidates (atomicMin), which finalize
// splits into row and column.
#include "element_types.cuh"
#include "w4a16_args.h"
#include "w4a16_layout.h"

namespace {

enum : uint32_t { STATUS_OK = 0, STATUS_ASYMMETRIC = 1, STATUS_BAD_GROUP_INDEX = 2,
                  STATUS_UNEVEN_GROUPS = 3 };

struct Report {
    uint32_t status;
    uint32_t identity;
    unsigned long long count;
    unsigned long long key;     // firstBadRow during the run
    unsigned long long column;
};

__device__ __forceinline__ int64_t thread_index()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ uint16_t load_u16(const struct bk_w4a16_matrix &m, int64_t r, int64_t c)
{
    return reinterpret_cast<const uint16_t *>(m.base)[r * m.rs + c * m.cs];
}

__device__ __forceinline__ void store_u16(const struct bk_w4a16_matrix &m, int64_t r, int64_t c,
                                          uint16_t v)
{
    reinterpret_cast<uint16_t *>(m.base)[r * m.rs + c * m.cs] = v;
}

__device__ __forceinline__ float scale_value(uint16_t bits, bool bf16)
{
    return bf16 ? __uint_as_float((uint32_t)bits << 16) : __half2float(__ushort_as_half(bits));
}

// Round to nearest even in the scale's type.
__device__ __forceinline__ uint16_t scale_bits(float v, bool bf16)
{
    return bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v))
                : __half_as_ushort(__float2half_rn(v));
}

// The quantized value of w with scale s and zero point z (8 when
// symmetric; host_w4a16.c does the same): nearest-even(w / s) + z clamped
// to 0..15; z where s is 0 or w / s is not a number.
__device__ __forceinline__ uint32_t quantize_one(float w, float s, uint32_t z = 8)
{
    if (s == 0.f)
        return z;
    const float x = rintf(__fdiv_rn(w, s));
    if (x != x)
        return z;
    return (uint32_t)fminf(fmaxf(x + (float)z, 0.f), 15.f);
}

// The asymmetric zero point of a group whose range is lo .. hi (lo <= 0)
// under the rounded scale s: nearest-even(-lo / s) clamped to 0..15; 8
// where s is 0 or infinite.
__device__ __forceinline__ uint32_t zero_point(float lo, float s)
{
    if (s == 0.f || isinf(s))
        return 8;
    return (uint32_t)fminf(fmaxf(rintf(__fdiv_rn(-lo, s)), 0.f), 15.f);
}

template <typename W> __device__ __forceinline__ float weight_at(const bk_w4a16_convert_args &a,
                                                                 int64_t k, int64_t n)
{
    const W *w = reinterpret_cast<const W *>(a.weight.base);
    return bk::Storage<W>::in(w[k * a.weight.rs + n * a.weight.cs]);
}

// One thread per (group, column): the scale from the group's largest
// magnitude (NaN ignored), then every row's value.
template <typename W> __device__ void quantize(const bk_w4a16_convert_args &a)
{
    const int64_t i = thread_index();
    if (i >= a.groups * a.n)
        return;
    const int64_t g = i / a.n, n = i % a.n;
    const bool bf16 = a.scale_bf16, asymmetric = a.zeros.base != 0;
    float amax = 0.f, lo = 0.f, hi = 0.f;   // fmaxf and fminf ignore a NaN
    for (int64_t k = g * a.group; k < (g + 1) * a.group; k++) {
        const float w = weight_at<W>(a, k, n);
        amax = fmaxf(amax, fabsf(w));
        lo = fminf(lo, w);
        hi = fmaxf(hi, w);
    }
    const float raw = asymmetric ? __fdiv_rn(__fsub_rn(hi, lo), 15.f)
                                 : __fdiv_rn(__fmul_rn(amax, 2.f), 15.f);
    const uint16_t sb = scale_bits(raw, bf16);
    store_u16(a.scales, g, n, sb);
    const float s = scale_value(sb, bf16);
    uint32_t z = 8;
    if (asymmetric) {
        z = zero_point(lo, s);
        reinterpret_cast<uint8_t *>(a.zeros.base)[g * a.zeros.rs + n * a.zeros.cs] = (uint8_t)z;
    }
    uint8_t *q = reinterpret_cast<uint8_t *>(a.quantized.base);
    for (int64_t k = g * a.group; k < (g + 1) * a.group; k++)
        q[k * a.quantized.rs + n * a.quantized.cs] =
            (uint8_t)quantize_one(weight_at<W>(a, k, n), s, z);
}

// Element (g, n)'s place in packedScales.
__device__ __forceinline__ uint16_t *packed_scale(const bk_w4a16_convert_args &a, int64_t g,
                                                  int64_t n)
{
    return reinterpret_cast<uint16_t *>(a.packed_scales) + g * a.n +
           bk_w4a16_scale_position(n, a.per_channel);
}

// Word w of packedZeros row g (w < n / 8): its eight columns are those
// whose scales sit at positions 8 (w % (n / 8)) .. + 7 of the row. Calls
// f(g, n, nibble) for each.
template <typename F>
__device__ __forceinline__ void for_zero_word_columns(const bk_w4a16_convert_args &a, int64_t i,
                                                      F f)
{
    const int64_t g = i / (a.n / 8), w = i % (a.n / 8);
    // Positions 8w .. 8w + 7 lie in one block of 64 (32 per channel) columns;
    // find each one's column by the layout's own rule, within that block.
    const int64_t span = a.per_channel ? 32 : 64, block = 8 * w / span * span;
    for (int64_t c = block; c < block + span; c++) {
        const int64_t p = bk_w4a16_scale_position(c, a.per_channel);
        if (p / 8 == w)
            f(g, c, (int)(p % 8));
    }
}

// Calls f(k, n, nibble) for the eight elements of packed word `word` of
// packed row kt.
template <typename F>
__device__ __forceinline__ void for_word_elements(int64_t kt, int64_t word, F f)
{
    const int64_t block = word / 128, lane = (word % 128) / 4, j = word % 4;
    const int64_t c = lane / 4, t = lane % 4;
#pragma unroll
    for (int e = 0; e < 8; e++) {
        const int64_t kk = 16 * kt + 2 * t + (e % 2) + 8 * ((e / 2) % 2);
        const int64_t nn = 64 * block + 16 * j + c + 8 * (e / 4);
        f(kk, nn, bk_w4a16_nibble(kk, nn));
    }
}

} // namespace

extern "C" {

#define BK_W4A16_QUANTIZE_KERNEL(NAME, W)                                       \
    __global__ void bk_w4a16_quantize_##NAME(const bk_w4a16_convert_args a) \
    {                                                                       \
        bk::grid_dependency_wait();                                         \
        quantize<W>(a);                                                     \
    }
BK_W4A16_QUANTIZE_KERNEL(f32, float)
BK_W4A16_QUANTIZE_KERNEL(f16, __half)
BK_W4A16_QUANTIZE_KERNEL(bf16, __nv_bfloat16)

// One thread per packed word, then one per (group, column) for scales:
// grid covers max(words, groups * n).
__global__ void bk_w4a16_pack(const bk_w4a16_convert_args a)
{
    bk::grid_dependency_wait();
    const int64_t i = thread_index();
    const uint8_t *q = reinterpret_cast<const uint8_t *>(a.quantized.base);
    if (i < a.k / 16 * 2 * a.n) {
        const int64_t kt = i / (2 * a.n), word = i % (2 * a.n);
        uint32_t v = 0;
        for_word_elements(kt, word, [&](int64_t k, int64_t n, int nib) {
            v |= (uint32_t)(q[k * a.quantized.rs + n * a.quantized.cs] & 15u) << (4 * nib);
        });
        reinterpret_cast<uint32_t *>(a.packed)[i] = v;
    }
    if (i < a.groups * a.n) {
        const int64_t g = i / a.n, n = i % a.n;
        *packed_scale(a, g, n) = load_u16(a.scales, g, n);
    }
    if (a.packed_zeros && i < a.groups * (a.n / 8)) {
        const uint8_t *z = reinterpret_cast<const uint8_t *>(a.zeros.base);
        uint32_t v = 0;
        for_zero_word_columns(a, i, [&](int64_t g, int64_t n, int nib) {
            v |= (uint32_t)(z[g * a.zeros.rs + n * a.zeros.cs] & 15u) << (4 * nib);
        });
        reinterpret_cast<uint32_t *>(a.packed_zeros)[i] = v;
    }
}

__global__ void bk_w4a16_unpack(const bk_w4a16_convert_args a)
{
    bk::grid_dependency_wait();
    const int64_t i = thread_index();
    uint8_t *q = reinterpret_cast<uint8_t *>(a.quantized.base);
    if (i < a.k / 16 * 2 * a.n) {
        const int64_t kt = i / (2 * a.n), word = i % (2 * a.n);
        const uint32_t v = reinterpret_cast<const uint32_t *>(a.packed)[i];
        for_word_elements(kt, word, [&](int64_t k, int64_t n, int nib) {
            q[k * a.quantized.rs + n * a.quantized.cs] = (uint8_t)((v >> (4 * nib)) & 15u);
        });
    }
    if (i < a.groups * a.n) {
        const int64_t g = i / a.n, n = i % a.n;
        store_u16(a.scales, g, n, *packed_scale(a, g, n));
    }
    if (a.packed_zeros && i < a.groups * (a.n / 8)) {
        uint8_t *z = reinterpret_cast<uint8_t *>(a.zeros.base);
        const uint32_t v = reinterpret_cast<const uint32_t *>(a.packed_zeros)[i];
        for_zero_word_columns(a, i, [&](int64_t g, int64_t n, int nib) {
            z[g * a.zeros.rs + n * a.zeros.cs] = (uint8_t)((v >> (4 * nib)) & 15u);
        });
    }
}

// ---- GPTQ repack ------------------------------------------------------------

// One CTA: the report's initial state, and every g_idx in 0..G-1.
__global__ void bk_w4a16_repack_init(const bk_w4a16_convert_args a)
{
    bk::grid_dependency_wait();
    Report *r = reinterpret_cast<Report *>(a.report);
    if (threadIdx.x == 0) {
        r->status = STATUS_OK;
        r->identity = 1;
        r->count = 0;
        r->key = ~0ull;
        r->column = 0;
    }
    __syncthreads();
    if (!a.g_idx)
        return;
    const int32_t *g_idx = reinterpret_cast<const int32_t *>(a.g_idx);
    for (int64_t k = threadIdx.x; k < a.k; k += blockDim.x) {
        const int32_t g = g_idx[k];
        if (g < 0 || g >= a.groups) {
            atomicExch(&r->status, STATUS_BAD_GROUP_INDEX);
            atomicAdd(&r->count, 1ull);
            atomicMin(&r->key, (unsigned long long)k << 32 | (uint32_t)g);
        }
    }
}

// Without g_idx: perm is 0..K-1 (grid over K). With it: CTA g ranks the
// rows of group g in k order (a stable counting sort: the rows of group
// g land at g * group + rank) and checks the group has `group` rows.
__global__ void bk_w4a16_repack_perm(const bk_w4a16_convert_args a)
{
    bk::grid_dependency_wait();
    int32_t *perm = reinterpret_cast<int32_t *>(a.perm);
    if (!a.g_idx) {
        const int64_t k = thread_index();
        if (perm && k < a.k)
            perm[k] = (int32_t)k;
        return;
    }
    Report *r = reinterpret_cast<Report *>(a.report);
    if (r->status != STATUS_OK && r->status != STATUS_UNEVEN_GROUPS)
        return;
    const int32_t *g_idx = reinterpret_cast<const int32_t *>(a.g_idx);
    const int64_t g = blockIdx.x;
    __shared__ uint32_t warp_counts[BK_W4A16_CONVERT_THREADS / 32];
    __shared__ int moved;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (threadIdx.x == 0)
        moved = 0;
    int64_t base = 0;
    for (int64_t k0 = 0; k0 < a.k; k0 += blockDim.x) {
        const int64_t k = k0 + threadIdx.x;
        const bool mine = k < a.k && g_idx[k] == g;
        const uint32_t ballot = __ballot_sync(0xffffffffu, mine);
        if (lane == 0)
            warp_counts[warp] = __popc(ballot);
        __syncthreads();
        int64_t before = base;
        uint32_t total = 0;
        for (int w = 0; w < (int)(blockDim.x / 32); w++) {
            if (w < warp)
                before += warp_counts[w];
            total += warp_counts[w];
        }
        before += __popc(ballot & ((1u << lane) - 1u));
        if (mine && before < a.group) {
            const int64_t pos = g * a.group + before;
            perm[pos] = (int32_t)k;
            if (pos != k)
                moved = 1;
        }
        base += total;
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (moved)
            atomicExch(&r->identity, 0u);
        if (base != a.group && atomicCAS(&r->status, STATUS_OK, STATUS_UNEVEN_GROUPS) !=
                                   STATUS_BAD_GROUP_INDEX) {
            atomicAdd(&r->count, 1ull);
            atomicMin(&r->key, (unsigned long long)g << 32 | (uint32_t)base);
        }
    }
}

// Words (row k' of the packed weight is GPTQ row perm[k']), scales, and
// zero points (grid over max(words, groups * n)).
__global__ void bk_w4a16_repack(const bk_w4a16_convert_args a)
{
    bk::grid_dependency_wait();
    const int64_t i = thread_index();
    const int32_t *perm = reinterpret_cast<const int32_t *>(a.perm);
    const int32_t *qw = reinterpret_cast<const int32_t *>(a.qweight.base);
    Report *r = reinterpret_cast<Report *>(a.report);
    if (i < a.k / 16 * 2 * a.n) {
        const int64_t kt = i / (2 * a.n), word = i % (2 * a.n);
        uint32_t v = 0;
        for_word_elements(kt, word, [&](int64_t k, int64_t n, int nib) {
            int64_t src = a.g_idx ? (int64_t)perm[k] : k;
            if (src < 0 || src >= a.k) // only after a bad g_idx, which the report names
                src = k;
            // GPTQ packs eight rows a word, AWQ eight columns in its order.
            const uint32_t word_in =
                a.awq ? (uint32_t)qw[src * a.qweight.rs + (n / 8) * a.qweight.cs]
                      : (uint32_t)qw[(src / 8) * a.qweight.rs + n * a.qweight.cs];
            const int at = a.awq ? bk_w4a16_awq_nibble((int)(n % 8)) : (int)(src % 8);
            v |= ((word_in >> (4 * at)) & 15u) << (4 * nib);
        });
        reinterpret_cast<uint32_t *>(a.packed)[i] = v;
    }
    if (i < a.groups * a.n) {
        const int64_t g = i / a.n, n = i % a.n;
        *packed_scale(a, g, n) = load_u16(a.scales, g, n);
        if (a.qzeros.base && !a.packed_zeros) {
            const uint32_t zw = (uint32_t)reinterpret_cast<const int32_t *>(a.qzeros.base)
                                    [g * a.qzeros.rs + (n / 8) * a.qzeros.cs];
            const uint32_t zero = ((zw >> (4 * (n % 8))) & 15u) + a.zero_offset;
            if (zero != 8 && r->status != STATUS_BAD_GROUP_INDEX &&
                r->status != STATUS_UNEVEN_GROUPS) {
                atomicCAS(&r->status, STATUS_OK, STATUS_ASYMMETRIC);
                atomicAdd(&r->count, 1ull);
                atomicMin(&r->key, (unsigned long long)(g * a.n + n));
            }
        }
    }
}

// With zero points: packedZeros from qzeros (stored nibble plus the
// offset, modulo 16; 8 without qzeros), one thread per word (grid over
// groups * n / 8). Every zero point is accepted.
__global__ void bk_w4a16_repack_zeros(const bk_w4a16_convert_args a)
{
    bk::grid_dependency_wait();
    const int64_t i = thread_index();
    if (i >= a.groups * (a.n / 8))
        return;
    const int32_t *qz = reinterpret_cast<const int32_t *>(a.qzeros.base);
    uint32_t v = 0;
    for_zero_word_columns(a, i, [&](int64_t g, int64_t n, int nib) {
        uint32_t z = 8;
        if (qz) {
            const uint32_t zw = (uint32_t)qz[g * a.qzeros.rs + (n / 8) * a.qzeros.cs];
            const int at = a.awq ? bk_w4a16_awq_nibble((int)(n % 8)) : (int)(n % 8);
            z = (((zw >> (4 * at)) & 15u) + a.zero_offset) & 15u;
        }
        v |= z << (4 * nib);
    });
    reinterpret_cast<uint32_t *>(a.packed_zeros)[i] = v;
}

// The key split into the row and column the status documents.
__global__ void bk_w4a16_repack_finalize(const bk_w4a16_convert_args a)
{
    bk::grid_dependency_wait();
    Report *r = reinterpret_cast<Report *>(a.report);
    const unsigned long long key = r->key;
    switch (r->status) {
    case STATUS_BAD_GROUP_INDEX:
        r->key = key >> 32;
        r->column = (unsigned long long)(long long)(int32_t)(uint32_t)(key & 0xffffffffu);
        break;
    case STATUS_UNEVEN_GROUPS:
        r->key = key >> 32;
        r->column = key & 0xffffffffu;
        break;
    case STATUS_ASYMMETRIC:
        r->key = key / (unsigned long long)a.n;
        r->column = key % (unsigned long long)a.n;
        break;
    default:
        r->count = 0;
        r->key = 0;
        r->column = 0;
    }
    if (r->status != STATUS_OK) // as on the host: no permutation was made
        r->identity = 0;
}

} // extern "C"
