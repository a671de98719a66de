/* SPDX-License-Identifier: Apache-2.0 */
/* GPU timing for bkbench through the CUDA driver API, loaded at run time
 * with dlopen("libcuda.so.1"): a stream in the device's primary context
 * (the context libbk's CUDA backend uses too) and a row of events. */
#ifndef BK_TOOL_CUDA_TIMING_H
#define BK_TOOL_CUDA_TIMING_H

#include <stddef.h>
#include <stdint.h>

struct cuda_timing;

/* Opens the driver, retains the primary context of CUDA device 'ordinal',
 * makes it current, creates a non-blocking stream and event_count events.
 * On failure returns NULL and writes the reason into err. */
struct cuda_timing *cuda_timing_open(int ordinal, uint32_t event_count, char *err,
                                     size_t err_size);
/* Destroys events and stream and releases the primary context. */
void cuda_timing_close(struct cuda_timing *t);

/* The CUstream, for bkImportQueue. */
void *cuda_timing_stream(struct cuda_timing *t);
/* L2 cache size in bytes, 0 if the driver does not say. */
uint64_t cuda_timing_l2_bytes(struct cuda_timing *t);

/* Each returns 0, or -1 after writing the driver's error into err. */
int cuda_timing_record(struct cuda_timing *t, uint32_t event, char *err, size_t err_size);
int cuda_timing_wait(struct cuda_timing *t, uint32_t event, char *err, size_t err_size);
/* Milliseconds between two recorded, completed events. */
int cuda_timing_elapsed(struct cuda_timing *t, uint32_t from, uint32_t to, double *ms,
                        char *err, size_t err_size);
/* Makes the primary context current on the calling thread (libbk may
 * have left another one there). */
int cuda_timing_make_current(struct cuda_timing *t, char *err, size_t err_size);
/* Waits for all work in the primary context, whatever stream it is on. */
int cuda_timing_sync_context(struct cuda_timing *t, char *err, size_t err_size);

#endif /* BK_TOOL_CUDA_TIMING_H */
