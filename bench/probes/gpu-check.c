/* SPDX-License-Identifier: Apache-2.0 */
#define _POSIX_C_SOURCE 200809L
/* gpu-check: checks of the CUDA backend that the TAP suite does not reach
 * with its small shapes, run by bench/device-run.sh on a GPU machine:
 * the 16-byte vector path against the host backend (every kind, type and
 * direction, rank 1 to 3 after coalescing), its fallback for addresses that
 * are not 16-byte aligned, reusable command buffers (CUDA graphs) replayed,
 * an imported stream, and the error paths (out of device memory, a missing
 * or corrupt module, no driver, a sticky launch failure).
 *
 *   gpu-check            the checks that share one process
 *   gpu-check no-driver  run with BK_CUDA_DRIVER=/nonexistent
 *   gpu-check lost       a kernel that faults: BK_ERROR_DEVICE_LOST
 *
 * Prints TAP; exits non-zero on any failure. Plain C11 on the public API. */
#include <bk/bk.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checks;

static void ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", cond ? "ok" : "not ok", ++checks);
    vprintf(fmt, ap);
    va_end(ap);
    if (!cond)
        printf(" (last message: %s)", bkGetLastErrorMessage());
    printf("\n");
    failures += !cond;
}

static void must(BkResult r, const char *what)
{
    if (r != BK_SUCCESS) {
        printf("Bail out! %s: %s: %s\n", what, bkResultString(r), bkGetLastErrorMessage());
        exit(1);
    }
}

/* ---- values ------------------------------------------------------------ */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static size_t type_size(BkDataType t)
{
    return t == BK_DATA_TYPE_F64 ? 8 : t == BK_DATA_TYPE_F32 ? 4 : 2;
}

/* A random value in about [-4, 4], non-zero, written as type t. */
static void random_value(BkDataType t, void *p)
{
    uint64_t r = rng_next();
    double v = ((double)(r >> 11) / 9007199254740992.0 * 8.0 - 4.0);
    if (v == 0)
        v = 0.5;
    if (t == BK_DATA_TYPE_F64) {
        memcpy(p, &v, 8);
    } else if (t == BK_DATA_TYPE_F32) {
        float f = (float)v;
        memcpy(p, &f, 4);
    } else if (t == BK_DATA_TYPE_BF16) {
        float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t h = (uint16_t)(u >> 16);
        memcpy(p, &h, 2);
    } else { /* f16: sign, exponent 12..16 (1/8 .. 4), any mantissa */
        uint16_t h = (uint16_t)((r & 1) << 15 | (12 + (r >> 1) % 5) << 10 | (r >> 8) % 1024);
        memcpy(p, &h, 2);
    }
}

static double value_at(BkDataType t, const unsigned char *p)
{
    if (t == BK_DATA_TYPE_F64) {
        double d;
        memcpy(&d, p, 8);
        return d;
    }
    if (t == BK_DATA_TYPE_F32) {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    uint16_t h;
    memcpy(&h, p, 2);
    if (t == BK_DATA_TYPE_BF16) {
        uint32_t u = (uint32_t)h << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h >> 15 ? -v : v;
}

/* |gpu - host| <= rtol |host| + atol; atol covers values that cancel
 * (GeGLU's 1 + erf(b) for negative b). */
static void tolerance(BkDataType t, double *rtol, double *atol)
{
    switch (t) {
    case BK_DATA_TYPE_F64: *rtol = 1e-12, *atol = 1e-14; break;
    case BK_DATA_TYPE_F32: *rtol = 1e-5, *atol = 4e-6; break;
    case BK_DATA_TYPE_F16: *rtol = 2e-3, *atol = 1e-4; break;
    default: *rtol = 1.6e-2, *atol = 1e-3; break;
    }
}

/* ---- one gated case ---------------------------------------------------- */
struct shape {
    const char *name;
    uint32_t rank, axis;
    int64_t extent[3];       /* of the input x */
    int64_t x_row_pad;       /* extra elements after each innermost row of x and dx */
};

static BkTensorDesc desc(BkDataType t, uint32_t rank, const int64_t *ext, int64_t pad)
{
    BkTensorDesc d = { .dataType = t, .rank = rank };
    int64_t s = 1;
    for (uint32_t k = rank; k-- > 0;) {
        d.extent[k] = ext[k];
        d.stride[k] = s;
        s *= ext[k] + (k == rank - 1 ? pad : 0);
    }
    return d;
}

static uint64_t span_bytes(const BkTensorDesc *d)
{
    int64_t last = 0;
    for (uint32_t k = 0; k < d->rank; k++)
        last += (d->extent[k] - 1) * d->stride[k];
    return (uint64_t)(last + 1) * type_size(d->dataType);
}

static BkPlan make_plan(BkContext ctx, BkGatedActivationKind kind, BkDataType t, int backward,
                        const struct shape *s, BkTensorDesc *tensors)
{
    int64_t half[3];
    memcpy(half, s->extent, sizeof half);
    half[s->axis] /= 2;
    tensors[0] = desc(t, s->rank, s->extent, s->x_row_pad);
    tensors[1] = desc(t, s->rank, half, 0);
    tensors[2] = desc(t, s->rank, s->extent, s->x_row_pad);
    BkGatedActivationInfo fwd = { BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, NULL, kind, s->axis,
                                  tensors[0], tensors[1] };
    BkGatedActivationBackwardInfo bwd = { BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, NULL,
                                          kind, s->axis, tensors[0], tensors[1], tensors[2] };
    BkPlanCreateInfo ci = { BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, NULL,
                            backward ? (const void *)&bwd : (const void *)&fwd, 0 };
    BkPlan plan = NULL;
    must(bkCreatePlan(ctx, &ci, NULL, &plan), "bkCreatePlan");
    return plan;
}

/* Runs plan with bindings at the given addresses on queue, one-time. */
static BkResult run_once(BkContext ctx, BkQueue q, BkPlan plan, uint32_t n, const BkDeviceAddress *a)
{
    BkCommandBuffer cmd;
    must(bkAllocateCommandBuffer(ctx, NULL, &cmd), "bkAllocateCommandBuffer");
    BkCommandBufferBeginInfo bi = { BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                    BK_COMMAND_BUFFER_USAGE_ONE_TIME };
    BkRunInfo ri = { BK_STRUCTURE_TYPE_RUN_INFO, NULL, n, a, NULL, 0, 0 };
    BkResult r = bkBeginCommandBuffer(cmd, &bi);
    if (r == BK_SUCCESS)
        r = bkCmdRun(cmd, plan, &ri);
    if (r == BK_SUCCESS)
        r = bkEndCommandBuffer(cmd);
    if (r == BK_SUCCESS)
        r = bkQueueSubmit(q, 1, &cmd);
    if (r == BK_SUCCESS)
        r = bkQueueWaitIdle(q);
    bkFreeCommandBuffer(cmd);
    return r;
}

static const char *const kind_name[] = { "glu", "reglu", "swiglu", "geglu", "geglu_tanh" };
static const BkDataType types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                    BK_DATA_TYPE_F64 };
static const char *const type_name[] = { "", "f32", "f16", "bf16", "f64" };

/* Compares the CUDA backend with the host backend on one case; offset
 * elements shift every binding (1 makes them misaligned for 16 bytes). */
static void compare(BkContext gpu, BkContext host, BkGatedActivationKind kind, BkDataType t,
                    int backward, const struct shape *s, int offset, int want_vec)
{
    BkTensorDesc td[3];
    BkPlan gp = make_plan(gpu, kind, t, backward, s, td);
    BkPlan hp = make_plan(host, kind, t, backward, s, td);
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    must(bkGetPlanProperties(gp, &props), "bkGetPlanProperties");
    const size_t es = type_size(t);
    const uint32_t n = backward ? 3 : 2;
    /* slots: forward x, y; backward x, dy, dx */
    uint64_t bytes[3] = { span_bytes(&td[0]), span_bytes(&td[1]), span_bytes(&td[2]) };
    unsigned char *in[3] = { 0 }, *out_gpu[3] = { 0 }, *out_host[3] = { 0 };
    BkMemory mem[3] = { 0 };
    BkDeviceAddress ga[3], ha[3];
    for (uint32_t i = 0; i < n; i++) {
        uint64_t sz = bytes[i] + (uint64_t)offset * es;
        in[i] = malloc(sz);
        out_gpu[i] = malloc(sz);
        out_host[i] = malloc(sz);
        for (uint64_t e = 0; e < sz / es; e++)
            random_value(t, in[i] + e * es);
        memcpy(out_host[i], in[i], sz);
        BkMemoryAllocateInfo ai = { BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, sz,
                                    BK_MEMORY_TYPE_DEVICE };
        must(bkAllocateMemory(gpu, &ai, NULL, &mem[i]), "bkAllocateMemory");
        must(bkGetMemoryAddress(mem[i], &ga[i]), "bkGetMemoryAddress");
        must(bkCopyToDevice(gpu, ga[i], in[i], sz), "bkCopyToDevice");
        ga[i] += (uint64_t)offset * es;
        ha[i] = (BkDeviceAddress)(uintptr_t)(out_host[i] + (uint64_t)offset * es);
    }
    BkQueue gq, hq;
    must(bkGetQueue(gpu, 0, &gq), "bkGetQueue");
    must(bkGetQueue(host, 0, &hq), "bkGetQueue");
    BkResult rg = run_once(gpu, gq, gp, n, ga);
    BkResult rh = run_once(host, hq, hp, n, ha);
    int good = rg == BK_SUCCESS && rh == BK_SUCCESS;
    double worst = 0;
    for (uint32_t i = 0; good && i < n; i++) {
        uint64_t sz = bytes[i] + (uint64_t)offset * es;
        must(bkCopyFromDevice(gpu, out_gpu[i], ga[i] - (uint64_t)offset * es, sz),
             "bkCopyFromDevice");
        /* Every element, gaps and inputs too (those must be equal). */
        double rtol, atol;
        tolerance(t, &rtol, &atol);
        for (uint64_t e = 0; e < sz / es; e++) {
            double g = value_at(t, out_gpu[i] + e * es), h = value_at(t, out_host[i] + e * es);
            double err = fabs(g - h) / (rtol * fabs(h) + atol);
            if (!(err <= 1))
                good = 0;
            if (err > worst)
                worst = err;
        }
    }
    int vec = strstr(props.kernelName, "_vec") != NULL;
    ok(good && vec == want_vec, "%s %s %s %s offset %d: %s, worst error %.3g of tolerance",
       backward ? "bwd" : "fwd", kind_name[kind], type_name[t], s->name, offset,
       props.kernelName, worst);
    for (uint32_t i = 0; i < n; i++) {
        bkFreeMemory(gpu, mem[i]);
        free(in[i]);
        free(out_gpu[i]);
        free(out_host[i]);
    }
    bkDestroyPlan(gp);
    bkDestroyPlan(hp);
}

static BkContext open_context(BkDeviceType type)
{
    BkContextCreateInfo ci = { BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, NULL, type, 0, 0, 0 };
    BkContext ctx = NULL;
    must(bkCreateContext(&ci, NULL, &ctx), type == BK_DEVICE_TYPE_CUDA ? "CUDA context"
                                                                       : "host context");
    return ctx;
}

/* A reusable command buffer of several plans, replayed three times, and
 * an imported stream (the legacy default stream, handle NULL). */
static void check_graphs(BkContext gpu)
{
    const struct shape s = { "[64, 512]", 2, 1, { 64, 512, 0 }, 0 };
    BkTensorDesc td[3];
    BkPlan plan = make_plan(gpu, BK_GATED_ACTIVATION_SWIGLU, BK_DATA_TYPE_F32, 0, &s, td);
    const uint64_t xb = span_bytes(&td[0]), yb = span_bytes(&td[1]);
    float *x = malloc(xb), *y1 = malloc(yb), *y2 = malloc(yb);
    for (uint64_t i = 0; i < xb / 4; i++)
        random_value(BK_DATA_TYPE_F32, &x[i]);
    BkMemory mx, my1, my2;
    BkMemoryAllocateInfo ai = { BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, xb,
                                BK_MEMORY_TYPE_DEVICE };
    must(bkAllocateMemory(gpu, &ai, NULL, &mx), "bkAllocateMemory");
    ai.size = yb;
    must(bkAllocateMemory(gpu, &ai, NULL, &my1), "bkAllocateMemory");
    ai.memoryType = BK_MEMORY_TYPE_HOST_PINNED;
    must(bkAllocateMemory(gpu, &ai, NULL, &my2), "bkAllocateMemory (pinned)");
    BkDeviceAddress ax, ay1, ay2;
    bkGetMemoryAddress(mx, &ax);
    bkGetMemoryAddress(my1, &ay1);
    bkGetMemoryAddress(my2, &ay2);
    must(bkCopyToDevice(gpu, ax, x, xb), "bkCopyToDevice");

    BkCommandBuffer cmd;
    must(bkAllocateCommandBuffer(gpu, NULL, &cmd), "bkAllocateCommandBuffer");
    BkCommandBufferBeginInfo bi = { BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                    BK_COMMAND_BUFFER_USAGE_REUSABLE };
    BkDeviceAddress a[2] = { ax, ay1 };
    BkRunInfo ri = { BK_STRUCTURE_TYPE_RUN_INFO, NULL, 2, a, NULL, 0, 0 };
    must(bkBeginCommandBuffer(cmd, &bi), "bkBeginCommandBuffer");
    must(bkCmdFillMemory(cmd, ay1, yb, 0x7FC00000u), "bkCmdFillMemory");
    must(bkCmdRun(cmd, plan, &ri), "bkCmdRun");
    must(bkCmdCopyMemory(cmd, ay2, ay1, yb), "bkCmdCopyMemory to pinned");
    must(bkEndCommandBuffer(cmd), "bkEndCommandBuffer");
    BkQueue q;
    must(bkGetQueue(gpu, 1, &q), "bkGetQueue");
    int good = 1;
    for (int rep = 0; rep < 3; rep++) {
        memset((void *)(uintptr_t)ay2, 0, yb);
        must(bkQueueSubmit(q, 1, &cmd), "bkQueueSubmit (reusable)");
        must(bkQueueWaitIdle(q), "bkQueueWaitIdle");
        must(bkCopyFromDevice(gpu, y1, ay1, yb), "bkCopyFromDevice");
        good &= memcmp(y1, (void *)(uintptr_t)ay2, yb) == 0 && !isnan(y1[0]) &&
                !isnan(y1[yb / 4 - 1]);
    }
    ok(good, "a reusable command buffer (fill, run, copy to pinned memory) replays 3 times");

    BkQueue imported;
    must(bkImportQueue(gpu, NULL, &imported), "bkImportQueue(NULL stream)");
    memset(y2, 0, yb);
    must(bkCopyToDevice(gpu, ay1, y2, yb), "bkCopyToDevice");
    BkResult r = run_once(gpu, imported, plan, 2, a);
    must(bkCopyFromDevice(gpu, y2, ay1, yb), "bkCopyFromDevice");
    ok(r == BK_SUCCESS && memcmp(y1, y2, yb) == 0, "a plan on an imported stream gives the same y");
    bkDestroyQueue(imported);

    bkFreeCommandBuffer(cmd);
    bkFreeMemory(gpu, mx);
    bkFreeMemory(gpu, my1);
    bkFreeMemory(gpu, my2);
    bkDestroyPlan(plan);
    free(x);
    free(y1);
    free(y2);
}

static void check_errors(void)
{
    BkContext gpu = open_context(BK_DEVICE_TYPE_CUDA);
    BkMemoryAllocateInfo ai = { BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, 1ull << 42,
                                BK_MEMORY_TYPE_DEVICE };
    BkMemory m = NULL;
    BkResult r = bkAllocateMemory(gpu, &ai, NULL, &m);
    ok(r == BK_ERROR_OUT_OF_DEVICE_MEMORY && strstr(bkGetLastErrorMessage(), "CUDA_ERROR"),
       "4 TiB of device memory: %s: %s", bkResultString(r), bkGetLastErrorMessage());
    bkDestroyContext(gpu);

    const struct shape s = { "[4, 64]", 2, 1, { 4, 64, 0 }, 0 };
    BkTensorDesc td[3];
    BkGatedActivationInfo info = { BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, NULL,
                                   BK_GATED_ACTIVATION_GLU, 1, { 0 }, { 0 } };
    int64_t half[3] = { 4, 32, 0 };
    td[0] = desc(BK_DATA_TYPE_F32, 2, s.extent, 0);
    td[1] = desc(BK_DATA_TYPE_F32, 2, half, 0);
    info.input = td[0];
    info.output = td[1];
    BkPlanCreateInfo ci = { BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, NULL, &info, 0 };

    setenv("BK_CUDA_MODULE_DIR", "/nonexistent-bk-modules", 1);
    gpu = open_context(BK_DEVICE_TYPE_CUDA);
    BkPlan plan = NULL;
    r = bkCreatePlan(gpu, &ci, NULL, &plan);
    ok(r == BK_ERROR_MODULE_LOAD_FAILED, "a missing module: %s: %s", bkResultString(r),
       bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    bkDestroyContext(gpu);

    /* A file with a fatbin header and garbage after it. */
    const char *dir = "/tmp/bk-corrupt-modules";
    char path[256];
    snprintf(path, sizeof path, "mkdir -p %s", dir);
    if (system(path) != 0)
        printf("# mkdir %s failed\n", dir);
    snprintf(path, sizeof path, "%s/gated_forward.fatbin", dir);
    FILE *f = fopen(path, "wb");
    unsigned char junk[4096] = { 0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0 };
    uint64_t payload = sizeof junk - 16;
    memcpy(junk + 8, &payload, 8);
    for (size_t i = 16; i < sizeof junk; i++)
        junk[i] = (unsigned char)rng_next();
    if (f) {
        fwrite(junk, 1, sizeof junk, f);
        fclose(f);
    }
    setenv("BK_CUDA_MODULE_DIR", dir, 1);
    gpu = open_context(BK_DEVICE_TYPE_CUDA);
    plan = NULL;
    r = bkCreatePlan(gpu, &ci, NULL, &plan);
    ok(r == BK_ERROR_MODULE_LOAD_FAILED, "a corrupt module: %s: %s", bkResultString(r),
       bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    bkDestroyContext(gpu);
    unsetenv("BK_CUDA_MODULE_DIR");
}

static int no_driver(void)
{
    BkContextCreateInfo ci = { BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, NULL, BK_DEVICE_TYPE_CUDA,
                               0, 0, 0 };
    BkContext ctx = NULL;
    BkResult r = bkCreateContext(&ci, NULL, &ctx);
    ok(r == BK_ERROR_DRIVER_NOT_FOUND, "no driver: CUDA context: %s: %s", bkResultString(r),
       bkGetLastErrorMessage());
    ci.deviceType = BK_DEVICE_TYPE_AUTO;
    r = bkCreateContext(&ci, NULL, &ctx);
    BkDeviceProperties p = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    if (r == BK_SUCCESS)
        bkGetContextProperties(ctx, &p);
    ok(r == BK_SUCCESS && p.deviceType == BK_DEVICE_TYPE_HOST, "no driver: AUTO gives the host");
    bkDestroyContext(ctx);
    uint32_t n = 0;
    r = bkEnumerateDevices(&n, NULL);
    ok(r == BK_SUCCESS && n == 1, "no driver: one device listed (%u)", n);
    printf("1..%d\n", checks);
    return failures != 0;
}

static int device_lost(void)
{
    BkContext gpu = open_context(BK_DEVICE_TYPE_CUDA);
    const struct shape s = { "[256, 1024]", 2, 1, { 256, 1024, 0 }, 0 };
    BkTensorDesc td[3];
    BkPlan plan = make_plan(gpu, BK_GATED_ACTIVATION_GLU, BK_DATA_TYPE_F32, 0, &s, td);
    BkQueue q;
    must(bkGetQueue(gpu, 0, &q), "bkGetQueue");
    /* Addresses outside any allocation: the core cannot know their size. */
    BkDeviceAddress a[2] = { 0x10000000000ull, 0x20000000000ull };
    BkResult r = run_once(gpu, q, plan, 2, a);
    ok(r == BK_ERROR_DEVICE_LOST && strstr(bkGetLastErrorMessage(), "CUDA_ERROR_"),
       "a kernel that faults: %s: %s", bkResultString(r), bkGetLastErrorMessage());
    bkDestroyPlan(plan);
    bkDestroyContext(gpu);
    printf("1..%d\n", checks);
    return failures != 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 1 && strcmp(argv[1], "no-driver") == 0)
        return no_driver();
    if (argc > 1 && strcmp(argv[1], "lost") == 0)
        return device_lost();

    BkContext gpu = open_context(BK_DEVICE_TYPE_CUDA);
    BkContext host = open_context(BK_DEVICE_TYPE_HOST);
    /* Inner extents of the output are multiples of 8: the vector path for
     * every type. */
    const struct shape shapes[] = {
        { "[37, 272] split 1", 2, 1, { 37, 272, 0 }, 0 },
        { "[2, 3, 64] split 0", 3, 0, { 2, 3, 64 }, 0 },
        { "[5, 7, 32] split 2, rows padded by 8", 3, 2, { 5, 7, 32 }, 8 },
        { "[6, 10, 48] split 1, rows padded by 16", 3, 1, { 6, 10, 48 }, 16 },
    };
    for (int k = 0; k < 5; k++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (int back = 0; back < 2; back++)
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
                    compare(gpu, host, (BkGatedActivationKind)k, types[t], back, &shapes[s], 0, 1);
    /* Misaligned addresses fall back to the strided kernel. */
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        for (int back = 0; back < 2; back++)
            compare(gpu, host, BK_GATED_ACTIVATION_GEGLU, types[t], back, &shapes[0], 1, 1);
    /* Odd inner extents take the strided kernel. */
    const struct shape odd = { "[9, 2, 13] split 1", 3, 1, { 9, 2, 13 }, 0 };
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
        compare(gpu, host, BK_GATED_ACTIVATION_SWIGLU, types[t], 1, &odd, 0, 0);
    check_graphs(gpu);
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    check_errors();
    printf("1..%d\n", checks);
    return failures != 0;
}
