/* SPDX-License-Identifier: Apache-2.0 */
/* A development probe for the 2:4 sparse GEMM on the GPU at bkbench's
 * shapes (not bkbench, not a test): a random W pruned to 2:4 and
 * prepared, a random X, then Y = X W^T run `runs` times by one-time
 * submits, each Y compared bit for bit with the first (the kernels are
 * deterministic: a difference is a race), and sampled rows of the first
 * checked against a double-precision sum on the host over the pruned W
 * (relative to the row's sum of |x w|). Prints the plan's kernel and the
 * verdict; exits 1 on any difference. Then times the plan: the best of 5
 * submits of a reusable buffer of 10 runs (wall clock over the submit,
 * so a little above bkbench's event-timed median). Arguments: f16 or
 * bf16, N, M, K, runs (defaults: f16 2048 8192 8192 20). With
 * BK_PROBE_TILINGS (tiling names, comma-separated) it then times the same
 * product with each tiling forced, alternating, two rounds; with
 * BK_PROBE_SETTINGS (planner variables, below) likewise with each setting.
 * bench/device-run.sh does not run it; build:
 *   cc -O2 -I include -I BUILD/include bench/probes/sparse24-probe.c -L BUILD/.libs -lbk -lm */
#define _POSIX_C_SOURCE 200809L
#include <bk/bk.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(x) do { BkResult r_ = (x); if (r_ != BK_SUCCESS) { \
    fprintf(stderr, "%s: %s (%s)\n", #x, bkResultString(r_), bkGetLastErrorMessage()); exit(1); } } while (0)

static BkContext ctx;
static BkQueue queue;

static BkDeviceAddress alloc(uint64_t bytes)
{
    BkMemoryAllocateInfo ai = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = bytes ? bytes : 4 };
    BkMemory m;
    CHECK(bkAllocateMemory(ctx, &ai, NULL, &m));
    BkDeviceAddress a;
    CHECK(bkGetMemoryAddress(m, &a));
    return a;
}

static float half_to_float(uint16_t h, BkDataType type)
{
    uint32_t bits;
    if (type == BK_DATA_TYPE_BF16) {
        bits = (uint32_t)h << 16;
    } else {
        const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, f = h & 0x3FFu;
        if (e == 0) { /* zero or subnormal */
            const float v = ldexpf((float)f, -24);
            return sign ? -v : v;
        }
        bits = sign | (e - 15 + 127) << 23 | f << 13;
    }
    float v;
    memcpy(&v, &bits, 4);
    return v;
}

/* n random 16-bit values in [-1, 1) (normal or zero), on the host. */
static uint16_t *random_halves(uint64_t n, BkDataType type, uint32_t seed)
{
    uint16_t *h = malloc(2 * n);
    uint32_t x = seed;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 1664525u + 1013904223u;
        const float f = (x >> 8) * (1.0f / 8388608.0f) - 1.0f;
        uint32_t bits;
        memcpy(&bits, &f, 4);
        if (type == BK_DATA_TYPE_BF16) {
            h[i] = (uint16_t)(bits >> 16);
        } else {
            const uint32_t sign = (bits >> 16) & 0x8000u;
            const int e = (int)((bits >> 23) & 0xFF) - 127 + 15;
            h[i] = (uint16_t)(e <= 0 ? sign : sign | (uint32_t)e << 10 | ((bits >> 13) & 0x3FFu));
        }
    }
    return h;
}

/* A command buffer of `runs` runs of plan with bindings bind. */
static BkCommandBuffer record(BkPlan plan, uint32_t n, const BkDeviceAddress *bind,
                              BkCommandBufferUsage usage, int runs)
{
    /* One workspace, as large as the largest plan's (stream-K needs one). */
    static BkDeviceAddress workspace;
    static uint64_t workspace_size;
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    CHECK(bkGetPlanProperties(plan, &props));
    if (props.workspaceSize > workspace_size) {
        workspace = alloc(props.workspaceSize);
        workspace_size = props.workspaceSize;
    }
    BkRunInfo ri = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = n, .pBindings = bind,
                     .workspace = workspace, .workspaceSize = workspace_size };
    BkCommandBuffer cb;
    CHECK(bkAllocateCommandBuffer(ctx, NULL, &cb));
    BkCommandBufferBeginInfo bi = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                    .usage = usage };
    CHECK(bkBeginCommandBuffer(cb, &bi));
    for (int i = 0; i < runs; i++)
        CHECK(bkCmdRun(cb, plan, &ri));
    CHECK(bkEndCommandBuffer(cb));
    return cb;
}

static void run_once(BkPlan plan, uint32_t n, const BkDeviceAddress *bind)
{
    BkCommandBuffer cb = record(plan, n, bind, BK_COMMAND_BUFFER_USAGE_ONE_TIME, 1);
    CHECK(bkQueueSubmit(queue, 1, &cb));
    CHECK(bkQueueWaitIdle(queue));
    bkFreeCommandBuffer(cb);
}

static BkPlan make_plan(const void *info)
{
    BkPlanCreateInfo pc = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = info };
    BkPlan p;
    CHECK(bkCreatePlan(ctx, &pc, NULL, &p));
    return p;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The best time of one run of plan, in microseconds. */
static double time_plan(BkPlan plan, uint32_t n, const BkDeviceAddress *bind)
{
    enum { RUNS = 10 };
    BkCommandBuffer cb = record(plan, n, bind, BK_COMMAND_BUFFER_USAGE_REUSABLE, RUNS);
    CHECK(bkQueueSubmit(queue, 1, &cb));
    CHECK(bkQueueWaitIdle(queue));
    double best = 1e30;
    for (int trial = 0; trial < 5; trial++) {
        const double t0 = now();
        CHECK(bkQueueSubmit(queue, 1, &cb));
        CHECK(bkQueueWaitIdle(queue));
        const double us = (now() - t0) * 1e6 / RUNS;
        best = us < best ? us : best;
    }
    bkFreeCommandBuffer(cb);
    return best;
}

/* Sets (or with set false, unsets) the VAR=VALUE words of item. */
static void set_vars(const char *item, bool set)
{
    char vars[256], *end;
    snprintf(vars, sizeof vars, "%s", item);
    for (char *v = strtok_r(vars, " ", &end); v; v = strtok_r(NULL, " ", &end)) {
        char *eq = strchr(v, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (set)
            setenv(v, eq + 1, 1);
        else
            unsetenv(v);
    }
}

static BkTensorDesc d2(BkDataType t, int64_t r, int64_t c)
{
    BkTensorDesc x = { .dataType = t, .rank = 2, .extent = { r, c } };
    return x;
}

int main(int argc, char **argv)
{
    const BkDataType type = argc > 1 && !strcmp(argv[1], "bf16") ? BK_DATA_TYPE_BF16
                                                                 : BK_DATA_TYPE_F16;
    const int64_t n = argc > 2 ? atoll(argv[2]) : 2048, m = argc > 3 ? atoll(argv[3]) : 8192,
                  k = argc > 4 ? atoll(argv[4]) : 8192;
    const int runs = argc > 5 ? atoi(argv[5]) : 20;
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = BK_DEVICE_TYPE_CUDA };
    CHECK(bkCreateContext(&ci, NULL, &ctx));
    CHECK(bkGetQueue(ctx, 0, &queue));

    /* W pruned to 2:4 on the device, then its dense form back for the host sums. */
    uint16_t *wh = random_halves((uint64_t)(m * k), type, 7), *xh = random_halves((uint64_t)(n * k), type, 11);
    const BkDeviceAddress w = alloc((uint64_t)(m * k) * 2), x = alloc((uint64_t)(n * k) * 2),
                          values = alloc((uint64_t)(m * k)), meta = alloc((uint64_t)(m * k) / 4),
                          report = alloc(sizeof(BkSparse24Report)), y = alloc((uint64_t)(n * m) * 2);
    CHECK(bkCopyToDevice(ctx, w, wh, (uint64_t)(m * k) * 2));
    CHECK(bkCopyToDevice(ctx, x, xh, (uint64_t)(n * k) * 2));
    BkSparse24ConvertInfo cv = { .sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO,
                                 .conversion = BK_SPARSE24_COMPRESS_PRUNE, .dense = d2(type, m, k),
                                 .values = d2(type, m, k / 2),
                                 .metadata = d2(BK_DATA_TYPE_U16, m, k / 8) };
    BkPlan prune = make_plan(&cv);
    cv.conversion = BK_SPARSE24_DECOMPRESS;
    BkPlan decompress = make_plan(&cv);
    const BkDeviceAddress cb[4] = { w, values, meta, report };
    run_once(prune, 4, cb);
    run_once(decompress, 4, cb);
    CHECK(bkCopyFromDevice(ctx, wh, w, (uint64_t)(m * k) * 2));
    BkSparse24PrepareInfo pi = { .sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO,
                                 .values = d2(type, m, k / 2),
                                 .metadata = d2(BK_DATA_TYPE_U16, m, k / 8) };
    BkPlan prepare = make_plan(&pi);
    BkPlanBindingProperties pb = { .sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES };
    BkPlanProperties pp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES, .pNext = &pb };
    CHECK(bkGetPlanProperties(prepare, &pp));
    const BkDeviceAddress prepared = alloc(pb.bindings[BK_SPARSE24_PREPARE_BINDING_PREPARED].size);
    run_once(prepare, 3, (BkDeviceAddress[3]){ values, meta, prepared });

    BkSparse24GemmInfo gi = { .sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, .weightType = type,
                              .m = m, .k = k, .alpha = 1, .x = d2(type, n, k), .y = d2(type, n, m) };
    BkPlan gemm = make_plan(&gi);
    BkPlanProperties gp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    CHECK(bkGetPlanProperties(gemm, &gp));
    const BkDeviceAddress gb[5] = { prepared, x, 0, y, 0 };
    const uint64_t ybytes = (uint64_t)(n * m) * 2;
    uint16_t *y0 = malloc(ybytes), *yi = malloc(ybytes);
    run_once(gemm, 5, gb);
    CHECK(bkCopyFromDevice(ctx, y0, y, ybytes));
    int differing = 0;
    for (int r = 1; r < runs; r++) {
        run_once(gemm, 5, gb);
        CHECK(bkCopyFromDevice(ctx, yi, y, ybytes));
        uint64_t bad = 0;
        for (uint64_t i = 0; i < (uint64_t)(n * m); i++)
            bad += yi[i] != y0[i];
        if (bad) {
            differing++;
            printf("run %d: %llu elements differ from run 0\n", r, (unsigned long long)bad);
        }
    }
    /* Sampled rows of Y against the host. */
    double worst = 0;
    const int64_t rows[] = { 0, 1, n / 3, n / 2 + 7, n - 1 };
    for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
        const int64_t i = rows[ri];
        if (i >= n)  /* small N: only the rows there are */
            continue;
        for (int64_t j = 0; j < m; j++) {
            double s = 0, a = 0;
            for (int64_t p = 0; p < k; p++) {
                const double v = (double)half_to_float(xh[i * k + p], type) *
                                 half_to_float(wh[j * k + p], type);
                s += v;
                a += fabs(v);
            }
            const double e = fabs(half_to_float(y0[i * m + j], type) - s) / (a > 0 ? a : 1);
            worst = e > worst ? e : worst;
        }
    }
    const double allowed = type == BK_DATA_TYPE_BF16 ? 1.0 / 128 : 1.0 / 1024;
    printf("%s N %lld M %lld K %lld [%s]: %d of %d runs differ from the first; sampled rows: "
           "worst |y - ref| / sum |x w| = %.3g (allowed %.3g)\n",
           type == BK_DATA_TYPE_BF16 ? "bf16" : "f16", (long long)n, (long long)m, (long long)k,
           gp.kernelName, differing, runs - 1, worst, allowed);
    const double us = time_plan(gemm, 5, gb);
    printf("%s N %lld M %lld K %lld [%s, workspace %llu B]: %.1f us, %.1f dense-equivalent "
           "TFLOP/s\n",
           type == BK_DATA_TYPE_BF16 ? "bf16" : "f16", (long long)n, (long long)m, (long long)k,
           gp.kernelName, (unsigned long long)gp.workspaceSize, us, 2.0 * n * m * k / us * 1e-6);
    /* BK_PROBE_TILINGS (names of BK_CUDA_SPARSE24_TILING, comma-separated)
     * and BK_PROBE_SETTINGS (planner settings separated by ';', each one or
     * more VAR=VALUE separated by spaces, say BK_CUDA_SPARSE24_DECODE_CTAS=
     * 120): the same product timed again with each, alternating, twice. */
    char settings[1024] = "";
    const char *tilings = getenv("BK_PROBE_TILINGS"), *more = getenv("BK_PROBE_SETTINGS");
    if (tilings) {
        char names[256];
        snprintf(names, sizeof names, "%s", tilings);
        for (char *name = strtok(names, ","); name; name = strtok(NULL, ","))
            snprintf(settings + strlen(settings), sizeof settings - strlen(settings),
                     "%sBK_CUDA_SPARSE24_TILING=%s", settings[0] ? ";" : "", name);
    }
    if (more)
        snprintf(settings + strlen(settings), sizeof settings - strlen(settings), "%s%s",
                 settings[0] ? ";" : "", more);
    for (int round = 0; settings[0] && round < 2; round++) {
        char items[1024], *item_end;
        snprintf(items, sizeof items, "%s", settings);
        for (char *item = strtok_r(items, ";", &item_end); item;
             item = strtok_r(NULL, ";", &item_end)) {
            set_vars(item, true);
            BkPlan forced = make_plan(&gi);
            BkPlanProperties fp = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
            CHECK(bkGetPlanProperties(forced, &fp));
            const double fus = time_plan(forced, 5, gb);
            printf("  round %d {%s} [%s]: %.1f us, %.1f TFLOP/s\n", round + 1, item,
                   fp.kernelName, fus, 2.0 * n * m * k / fus * 1e-6);
            bkDestroyPlan(forced);
            set_vars(item, false);
        }
    }
    return differing || !(worst <= allowed);
}
