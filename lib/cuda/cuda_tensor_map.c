/* Tensor maps for the bulk tensor copy engine (sm_90, cp.async.bulk.tensor):
 * a strided tensor described to the driver, copied box by box into shared
 * memory in the 128-byte swizzled order that wgmma reads. Shared by every
 * family whose Hopper kernels load through TMA. */
#include "cuda_internal.h"

/* The engine's limits: strides in whole 16-byte steps below 2^40 bytes,
 * extents up to 2^32, at most 5 dimensions, unit innermost stride. */
bool bk_cuda_tensor_map_fits(BkDataType type, uint32_t rank, const int64_t *extent,
                             const int64_t *stride)
{
    const uint64_t es = bk_data_type_size(type);
    if (rank < 1 || rank > 5 || stride[rank - 1] != 1 || (es != 2 && es != 4))
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

bool bk_cuda_tensor_map(CUtensorMap *map, BkDataType type, BkDeviceAddress base, uint32_t rank,
                        const int64_t *extent, const int64_t *stride, uint32_t box_cols,
                        uint32_t box_rows)
{
    if (!bk_cuda_tensor_map_fits(type, rank, extent, stride) || base % 16)
        return false;
    const int dtype = type == BK_DATA_TYPE_BF16 ? BK_CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                : BK_CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    if (type != BK_DATA_TYPE_F16 && type != BK_DATA_TYPE_BF16)
        return false;
    /* The driver counts dimensions innermost first. */
    uint64_t dims[5], strides[4];
    unsigned int box[5], unit[5];
    for (uint32_t i = 0; i < rank; i++) {
        const uint32_t d = rank - 1 - i;
        dims[i] = (uint64_t)extent[d];
        if (i > 0)
            strides[i - 1] = (uint64_t)stride[d] * 2;
        box[i] = i == 0 ? box_cols : i == 1 ? box_rows : 1;
        unit[i] = 1;
    }
    return bk_cu.cuTensorMapEncodeTiled(map, dtype, rank, (void *)(uintptr_t)base, dims, strides,
                                        box, unit, 0, BK_CU_TENSOR_MAP_SWIZZLE_128B,
                                        BK_CU_TENSOR_MAP_L2_PROMOTION_128B, 0) == BK_CUDA_SUCCESS;
}
