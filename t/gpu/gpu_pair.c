/* SPDX-License-Identifier: Apache-2.0 */
/* Tensors on two devices and their comparison: see gpu_pair.h. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pair.h"

struct placed place(BkContext ctx, const void *host, uint64_t bytes, uint64_t offset)
{
    struct placed p = { .bytes = bytes };
    const uint64_t front = GPU_PAIR_GUARD + offset;
    p.buf = bkt_alloc(ctx, front + bytes + GPU_PAIR_GUARD);
    if (bkt_fill(ctx, p.buf.address, p.buf.size, BKT_POISON) != BK_SUCCESS)
        tap_bail("poisoning a buffer: %s", bkGetLastErrorMessage());
    p.addr = p.buf.address + front;
    bkt_upload(ctx, p.addr, host, bytes);
    return p;
}

long fetch(BkContext ctx, const struct placed *p, void *host)
{
    unsigned char *all = malloc(p->buf.size);
    if (!all)
        tap_bail("out of memory");
    bkt_download(ctx, all, p->buf.address, p->buf.size);
    const uint64_t front = p->addr - p->buf.address;
    memcpy(host, all + front, p->bytes);
    const uint32_t poison = BKT_POISON;
    const unsigned char *pat = (const unsigned char *)&poison;
    long bad = 0;
    for (uint64_t i = 0; i < p->buf.size; i++)
        if (i < front || i >= front + p->bytes)
            bad += all[i] != pat[i % 4]; /* the fill started at an aligned address */
    free(all);
    return bad;
}

void unplace(BkContext ctx, struct placed *p)
{
    bkt_free(ctx, &p->buf);
}

/* A byte mask of the elements of m. */
static unsigned char *element_mask(const struct tmat *m)
{
    unsigned char *used = calloc(1, m->bytes);
    if (!used)
        tap_bail("out of memory");
    const size_t es = bkt_type_size(m->type);
    for (int64_t b = 0; b < m->batch; b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++)
                memset(used + (size_t)tmat_index(m, b, i, j) * es, 1, es);
    return used;
}

long gap_changes(const struct tmat *m, const void *got, const void *before)
{
    unsigned char *used = element_mask(m);
    const unsigned char *g = got, *w = before;
    long bad = 0;
    for (uint64_t i = 0; i < m->bytes; i++)
        bad += !used[i] && g[i] != w[i];
    free(used);
    return bad;
}

long bit_differences(const struct tmat *m, const void *got, const void *want, const char *label)
{
    const size_t es = bkt_type_size(m->type);
    long bad = 0;
    for (int64_t b = 0; b < m->batch; b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++) {
                const size_t at = (size_t)tmat_index(m, b, i, j) * es;
                if (memcmp((const char *)got + at, (const char *)want + at, es) == 0)
                    continue;
                if (bad++ < 4) {
                    uint64_t g = 0, w = 0;
                    memcpy(&g, (const char *)got + at, es);
                    memcpy(&w, (const char *)want + at, es);
                    tap_diag("%s: [%lld, %lld, %lld] bits 0x%llx, expected 0x%llx", label,
                             (long long)b, (long long)i, (long long)j, (unsigned long long)g,
                             (unsigned long long)w);
                }
            }
    return bad;
}

long close_differences(const struct tmat *m, const void *got, const void *ref,
                       const double *scale, struct bkt_tolerance tol, const char *label,
                       double *worst)
{
    long bad = 0;
    for (int64_t b = 0; b < m->batch; b++)
        for (int64_t i = 0; i < m->rows; i++)
            for (int64_t j = 0; j < m->cols; j++) {
                const int64_t at = tmat_index(m, b, i, j);
                const int64_t e = (b * m->rows + i) * m->cols + j;
                const double g = bkt_load(got, m->type, at), r = bkt_load(ref, m->type, at);
                const double bound = fmax(tol.rel * fabs(r), tol.ulps * bkt_ulp(m->type, r)) +
                                     tol.abs * scale[e];
                if (worst && isfinite(g) && isfinite(r) && bound > 0 &&
                    fabs(g - r) / bound > *worst)
                    *worst = fabs(g - r) / bound;
                if (isfinite(r) && bkt_close(r, g, m->type, tol, scale[e]))
                    continue;
                if (bad++ < 4)
                    tap_diag("%s: [%lld, %lld, %lld] = %.9g, expected %.9g within %.3g (scale "
                             "%.3g)", label, (long long)b, (long long)i, (long long)j, g, r, bound,
                             scale[e]);
            }
    return bad;
}

static struct {
    char name[BK_MAX_KERNEL_NAME_SIZE];
    unsigned count;
} kernels[64];
static unsigned nkernels;

void kernel_seen(const char *name)
{
    for (unsigned i = 0; i < nkernels; i++)
        if (strcmp(kernels[i].name, name) == 0) {
            kernels[i].count++;
            return;
        }
    if (nkernels < sizeof kernels / sizeof kernels[0]) {
        snprintf(kernels[nkernels].name, sizeof kernels[nkernels].name, "%s", name);
        kernels[nkernels++].count = 1;
    }
}

void kernels_report(const char *what)
{
    tap_diag("%s: %u kernels ran", what, nkernels);
    for (unsigned i = 0; i < nkernels; i++)
        tap_diag("  %-56s %u case%s", kernels[i].name, kernels[i].count,
                 kernels[i].count == 1 ? "" : "s");
}

BkResult run_images(BkContext ctx, const void *info, struct binding *b, uint32_t count,
                uint32_t replays, char *kernel)
{
    BkPlan plan;
    BkResult r = bkt_create_plan(ctx, info, &plan);
    if (r != BK_SUCCESS)
        return r;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    bkGetPlanProperties(plan, &props);
    if (kernel)
        snprintf(kernel, BK_MAX_KERNEL_NAME_SIZE, "%s", props.kernelName);
    struct placed p[GPU_PAIR_SLOTS];
    BkDeviceAddress addr[GPU_PAIR_SLOTS] = { 0 };
    for (uint32_t i = 0; i < count; i++) {
        if (!b[i].bytes)
            continue;
        p[i] = place(ctx, b[i].host, b[i].bytes, b[i].offset);
        addr[i] = p[i].addr;
    }
    r = replays > 1 ? bkt_run_on(ctx, 0, BK_COMMAND_BUFFER_USAGE_REUSABLE, replays, plan, count,
                                 addr)
                    : bkt_run(ctx, plan, count, addr);
    long guards = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (!b[i].bytes)
            continue;
        guards += fetch(ctx, &p[i], b[i].host);
        unplace(ctx, &p[i]);
    }
    bkDestroyPlan(plan);
    if (guards)
        tap_diag("%ld guard bytes changed around the bindings", guards);
    return r == BK_SUCCESS && guards ? BK_ERROR_DEVICE_LOST : r;
}

void poison(void *p, uint64_t bytes)
{
    const uint32_t v = BKT_POISON;
    for (uint64_t i = 0; i + 4 <= bytes; i += 4)
        memcpy((char *)p + i, &v, 4);
}

void workspace_refusals(BkContext ctx, BkPlan plan, const char *what)
{
    BkPlanBindingProperties pb = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &pb };
    bkGetPlanProperties(plan, &props);
    const uint64_t ws = props.workspaceSize;
    const uint32_t count = props.bindingCount;
    struct bkt_buffer buf[GPU_PAIR_SLOTS], wbuf = bkt_alloc(ctx, ws);
    BkDeviceAddress addr[GPU_PAIR_SLOTS] = { 0 };
    for (uint32_t i = 0; i < count; i++)
        if (pb.bindings[i].size) {
            buf[i] = bkt_alloc(ctx, pb.bindings[i].size);
            addr[i] = buf[i].address;
        }
    BkCommandBuffer cmd;
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .usage = BK_COMMAND_BUFFER_USAGE_ONE_TIME };
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS ||
        bkBeginCommandBuffer(cmd, &begin) != BK_SUCCESS)
        tap_bail("a command buffer: %s", bkGetLastErrorMessage());
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = count,
                      .pBindings = addr, .workspace = wbuf.address, .workspaceSize = ws - 1 };
    BKT_EXPECT(bkCmdRun(cmd, plan, &run), BK_ERROR_WORKSPACE_TOO_SMALL, "BkRunInfo.workspaceSize",
               "%s: a workspace one byte short", what);
    run.workspaceSize = ws;
    run.workspace = 0;
    BKT_EXPECT(bkCmdRun(cmd, plan, &run), BK_ERROR_INVALID_ARGUMENT, "BkRunInfo.workspace is 0",
               "%s: no workspace address", what);
    run.workspace = wbuf.address;
    tap_ok(bkCmdRun(cmd, plan, &run) == BK_SUCCESS, "%s: the plan's workspace is enough", what);
    bkFreeCommandBuffer(cmd);
    for (uint32_t i = 0; i < count; i++)
        if (pb.bindings[i].size)
            bkt_free(ctx, &buf[i]);
    bkt_free(ctx, &wbuf);
}
