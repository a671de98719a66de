/* SPDX-License-Identifier: Apache-2.0 */
/* Tensor maps for the bulk tensor copy engine (sm_90, cp.async.bulk.tensor):
 * a strided tensor described to the driver, copied box by box into shared
 * memory, either in the 128-byte swizzled order that wgmma reads or as
 * plain rows of bits. Shared by every family whose Hopper kernels load
 * through TMA. */
#include "cuda_internal.h"

/* The engine's limits: strides in whole 16-byte steps below 2^40 bytes,
 * extents up to 2^32, at most 5 dimensions, unit innermost stride. */
static bool fits(uint64_t es, uint32_t rank, const int64_t *extent, const int64_t *stride)
{
    if (rank < 1 || rank > 5 || stride[rank - 1] != 1 || (es != 2 && es != 4 && es != 8))
        return false;
    for (uint32_t i = 0; i < rank; i++) {
        if (extent[i] < 1 || extent[i] > ((int64_t)1 << 32))
            return false;
        if (i + 1 < rank) {
            const uint64_t bytes = (uint64_t)stride[i] * es;
            if (stride[i] < 1 || bytes % 16 || bytes >= ((uint64_t)1 << 40))
                return false;
        }
    }
    return true;
}

bool bk_cuda_tensor_map_fits(BkDataType type, uint32_t rank, const int64_t *extent,
                             const int64_t *stride)
{
    return fits(bk_data_type_size(type), rank, extent, stride);
}

/* The driver counts dimensions innermost first. */
static bool encode(CUtensorMap *map, int dtype, uint64_t es, BkDeviceAddress base, uint32_t rank,
                   const int64_t *extent, const int64_t *stride, const uint32_t *box3,
                   int swizzle, int promotion)
{
    if (!fits(es, rank, extent, stride) || base % 16)
        return false;
    uint64_t dims[5], strides[4];
    unsigned int box[5], unit[5];
    for (uint32_t i = 0; i < rank; i++) {
        const uint32_t d = rank - 1 - i;
        dims[i] = (uint64_t)extent[d];
        if (i > 0)
            strides[i - 1] = (uint64_t)stride[d] * es;
        box[i] = i < 3 ? box3[i] : 1;
        unit[i] = 1;
    }
    return bk_cu.cuTensorMapEncodeTiled(map, dtype, rank, (void *)(uintptr_t)base, dims, strides,
                                        box, unit, 0, swizzle, promotion,
                                        0) == BK_CUDA_SUCCESS;
}

bool bk_cuda_tensor_map_box(CUtensorMap *map, BkDataType type, BkDeviceAddress base, uint32_t rank,
                            const int64_t *extent, const int64_t *stride, uint32_t box_cols,
                            uint32_t box_rows, uint32_t box_depth)
{
    if ((type != BK_DATA_TYPE_F16 && type != BK_DATA_TYPE_BF16) || (rank < 3 && box_depth != 1))
        return false;
    const int dtype = type == BK_DATA_TYPE_BF16 ? BK_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                : BK_CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const uint32_t box[3] = { box_cols, box_rows, box_depth };
    return encode(map, dtype, 2, base, rank, extent, stride, box, BK_CU_TENSOR_MAP_SWIZZLE_128B,
                  BK_CU_TENSOR_MAP_L2_PROMOTION_128B);
}

bool bk_cuda_tensor_map(CUtensorMap *map, BkDataType type, BkDeviceAddress base, uint32_t rank,
                        const int64_t *extent, const int64_t *stride, uint32_t box_cols,
                        uint32_t box_rows)
{
    return bk_cuda_tensor_map_box(map, type, base, rank, extent, stride, box_cols, box_rows, 1);
}

bool bk_cuda_tensor_map_plain(CUtensorMap *map, uint32_t element_bytes, BkDeviceAddress base,
                              uint32_t rank, const int64_t *extent, const int64_t *stride,
                              uint32_t box_cols, uint32_t box_rows)
{
    const int dtype = element_bytes == 8   ? BK_CU_TENSOR_MAP_DATA_TYPE_UINT64
                      : element_bytes == 4 ? BK_CU_TENSOR_MAP_DATA_TYPE_UINT32
                                           : BK_CU_TENSOR_MAP_DATA_TYPE_UINT16;
    const uint32_t box[3] = { box_cols, box_rows, 1 };
    return encode(map, dtype, element_bytes, base, rank, extent, stride, box,
                  BK_CU_TENSOR_MAP_SWIZZLE_NONE, BK_CU_TENSOR_MAP_L2_PROMOTION_256B);
}
