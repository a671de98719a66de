/* SPDX-License-Identifier: Apache-2.0 */
/* A tensor map (CUtensorMap: 128 opaque bytes, 64-byte aligned) inside a
 * kernel's parameter block, for the kernels that load through the bulk
 * tensor copy engine (sm_90) and their launchers, C and CUDA alike. */
#ifndef BK_TENSOR_MAP_ARGS_H
#define BK_TENSOR_MAP_ARGS_H

#ifdef __cplusplus
#define BK_TENSOR_MAP_ALIGN alignas(64)
#else
#define BK_TENSOR_MAP_ALIGN _Alignas(64)
#endif
#define BK_TENSOR_MAP_FIELD(name) BK_TENSOR_MAP_ALIGN unsigned char name[128]

#endif /* BK_TENSOR_MAP_ARGS_H */
