/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the GPU-against-host tests of the GEMM family (t/gpu/gpu_gemm.c,
 * t/gpu/gpu_sparse24.c): one host image of a test matrix placed on a device
 * between guard bytes, bound one element (or any number of bytes) past a
 * 256-byte boundary, fetched back with the guards checked; and the
 * comparisons of two devices' results element by element (bit for bit or
 * within a bound), with the bytes that are no element checked against
 * what they held before the run. The matrices are struct tmat (gemm_ref.h). */
#ifndef BK_TEST_GPU_PAIR_H
#define BK_TEST_GPU_PAIR_H

#include "gemm_ref.h"

#define GPU_PAIR_GUARD 256u   /* poisoned bytes before and after each tensor */

struct placed {
    struct bkt_buffer buf;
    BkDeviceAddress addr;     /* the tensor's base: guard + offset bytes in */
    uint64_t bytes;           /* the image's bytes */
};

/* Copies bytes of host to a fresh buffer of ctx, offset bytes past the
 * 256-byte aligned start of the tensor area, the guards poisoned. */
struct placed place(BkContext ctx, const void *host, uint64_t bytes, uint64_t offset);
/* The tensor's bytes back into host; returns the guard bytes that lost
 * the poison (a write outside the tensor's span). */
long fetch(BkContext ctx, const struct placed *p, void *host);
void unplace(BkContext ctx, struct placed *p);

/* Bytes of got that are no element of m's layout and differ from before. */
long gap_changes(const struct tmat *m, const void *got, const void *before);
/* Elements of got (in m's layout and type) whose bits differ from want's;
 * the first few are printed under label. */
long bit_differences(const struct tmat *m, const void *got, const void *want, const char *label);
/* Elements where got is not within tol (scale[e], e = (b * rows + i) *
 * cols + j) of ref, or is not finite; the first few are printed. Tracks
 * the largest |got - ref| / bound seen in *worst (may be NULL). */
long close_differences(const struct tmat *m, const void *got, const void *ref,
                       const double *scale, struct bkt_tolerance tol, const char *label,
                       double *worst);

/* A binding given as a host image: uploaded before the run, downloaded
 * after it (so written ones come back). */
struct binding {
    void *host;
    uint64_t bytes;           /* 0: not bound */
    uint64_t offset;          /* bytes past a 256-byte boundary */
};
#define GPU_PAIR_SLOTS BK_MAX_BINDINGS

/* Makes a plan for info on ctx and runs it once with these bindings
 * (replays > 1: a reusable buffer submitted that many times); kernel (may
 * be NULL) receives the plan's kernel name. A guard byte that changed
 * around a binding makes the result BK_ERROR_DEVICE_LOST. */
BkResult run_images(BkContext ctx, const void *info, struct binding *b, uint32_t count,
                uint32_t replays, char *kernel);
/* Fills bytes with BKT_POISON (NaN in every float type). */
void poison(void *p, uint64_t bytes);

/* Records plan in a command buffer with a buffer of each binding slot's
 * size (none for a slot of 0 bytes) and a workspace of the plan's size:
 * one byte short, and no address, must be refused naming
 * BkRunInfo.workspaceSize and .workspace, the whole of it accepted. what
 * names the plan in the TAP lines. */
void workspace_refusals(BkContext ctx, BkPlan plan, const char *what);

/* Counts a plan's kernel name; kernels_report prints each with its count
 * as TAP comments. */
void kernel_seen(const char *name);
void kernels_report(const char *what);

#endif /* BK_TEST_GPU_PAIR_H */
