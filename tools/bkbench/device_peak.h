/* SPDX-License-Identifier: Apache-2.0 */
/* Dense tensor-core peaks of known GPUs, to rate compute-bound cases as
 * a fraction of what the device can do. Devices are matched by name and
 * multiprocessor count; an unknown device has no peak. */
#ifndef BK_TOOL_DEVICE_PEAK_H
#define BK_TOOL_DEVICE_PEAK_H

#include <stdbool.h>

#include <bk/bk.h>

/* The peak dense TFLOP/s of a GEMM of dtype (tf32: F32 on TF32 tensor
 * cores) on the device, or 0 when unknown. The 2:4 sparse peak is twice
 * the dense one of the same type. */
double device_peak_tflops(const BkDeviceProperties *p, BkDataType dtype, bool tf32);
/* The name of the table entry that matched, or NULL. */
const char *device_peak_model(const BkDeviceProperties *p);

#endif /* BK_TOOL_DEVICE_PEAK_H */
