/* SPDX-License-Identifier: Apache-2.0 */
/* launch-probe: where the CPU time of a small libbk launch goes, and what
 * the driver itself costs, for bench/log/platform.md. Run on a GPU machine by
 * bench/device-run.sh:
 *
 *   launch-probe BUILD/kernels/gated_forward.fatbin
 *
 * libbk: begin + bkCmdRun + end, and submit, of a one-time buffer holding
 * one small plan (f32 GLU forward, 4 x 256). Driver, on the same kernel and
 * parameter block: cuLaunchKernel on a blocking and a non-blocking stream,
 * cuLaunchKernelEx with programmatic stream serialization, empty kernels
 * with parameter blocks of 8 to 440 bytes (the gated kernels' size),
 * cuCtxGetCurrent; and a graph of 100 launches
 * replayed, with and without programmatic dependent launch. Medians, in
 * microseconds. */
#define _POSIX_C_SOURCE 200809L
#include <bk/bk.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../kernels/shared/gated_kernel_args.h"

#define N 5000
#define SYNC_EVERY 64

typedef int CUresult;
typedef void *CUstream, *CUfunction, *CUmodule, *CUcontext, *CUgraph, *CUgraphExec, *CUgraphNode;
typedef struct {   /* CUDA_KERNEL_NODE_PARAMS (v1) */
    CUfunction func;
    unsigned gx, gy, gz, bx, by, bz, smem;
    void **params, **extra;
} KernelNodeParams;
typedef unsigned long long CUdeviceptr;
typedef struct {
    int id;
    char pad[4];
    union { char pad[64]; int value; unsigned long long align; } value;
} Attr;
typedef struct {
    unsigned gx, gy, gz, bx, by, bz, smem;
    CUstream stream;
    Attr *attrs;
    unsigned nattrs;
} Config;

static struct {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDeviceGet)(int *, int);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, int);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxGetCurrent)(CUcontext *);
    CUresult (*cuModuleLoadData)(CUmodule *, const void *);
    CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
    CUresult (*cuStreamCreate)(CUstream *, unsigned);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, CUstream, void **, void **);
    CUresult (*cuLaunchKernelEx)(const Config *, CUfunction, void **, void **);
    CUresult (*cuStreamBeginCapture_v2)(CUstream, int);
    CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
    CUresult (*cuGraphGetNodes)(CUgraph, CUgraphNode *, size_t *);
    CUresult (*cuGraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode, const KernelNodeParams *);
} cu;

static void need(CUresult r, const char *what)
{
    if (r != 0) {
        printf("launch-probe: %s failed: CUDA error %d\n", what, r);
        exit(1);
    }
}

static void must(BkResult r, const char *what)
{
    if (r != BK_SUCCESS) {
        printf("launch-probe: %s: %s\n", what, bkGetLastErrorMessage());
        exit(1);
    }
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, by_value);
    return v[n / 2];
}

static double samples[N];

/* launch: 0 plain, 1 Ex with programmatic serialization. */
/* empty: 0 the gated kernel, k > 0 the empty kernel with empty_size[k - 1]
 * bytes of parameters. */
static const unsigned empty_size[] = { 8, 64, 160, 440 };
#define EMPTY_KINDS (int)(sizeof empty_size / sizeof empty_size[0])
static CUfunction fn_gated, fn_empty[EMPTY_KINDS];
static struct bk_gated_args args;
static _Alignas(16) unsigned char empty_block[512];

static CUresult launch(CUstream s, int how, int empty)
{
    void *params[] = { empty ? (void *)empty_block : (void *)&args };
    CUfunction f = empty ? fn_empty[empty - 1] : fn_gated;
    if (how == 0)
        return cu.cuLaunchKernel(f, 1, 1, 1, BK_GATED_BLOCK, 1, 1, 0, s, params, NULL);
    Attr a = { .id = 6 };
    a.value.value = 1;
    Config c = { 1, 1, 1, BK_GATED_BLOCK, 1, 1, 0, s, &a, 1 };
    return cu.cuLaunchKernelEx(&c, f, params, NULL);
}

static double time_launches(CUstream s, int how, int empty)
{
    for (int i = 0; i < N + N / 10; i++) {
        if (i % SYNC_EVERY == 0)
            need(cu.cuStreamSynchronize(s), "cuStreamSynchronize");
        double t0 = now_us();
        need(launch(s, how, empty), "launch");
        double t = now_us() - t0;
        if (i >= N / 10)
            samples[i - N / 10] = t;
    }
    need(cu.cuStreamSynchronize(s), "cuStreamSynchronize");
    return median(samples, N);
}

static double time_graph(CUstream s, int how)
{
    CUgraph g;
    CUgraphExec e;
    need(cu.cuStreamBeginCapture_v2(s, 1), "cuStreamBeginCapture");
    for (int i = 0; i < 100; i++)
        need(launch(s, how, 0), "launch (capture)");
    need(cu.cuStreamEndCapture(s, &g), "cuStreamEndCapture");
    need(cu.cuGraphInstantiateWithFlags(&e, g, 0), "cuGraphInstantiate");
    for (int i = 0; i < 5; i++)
        need(cu.cuGraphLaunch(e, s), "cuGraphLaunch");
    need(cu.cuStreamSynchronize(s), "cuStreamSynchronize");
    double per[20];
    for (int r = 0; r < 20; r++) {
        double t0 = now_us();
        for (int i = 0; i < 50; i++)
            need(cu.cuGraphLaunch(e, s), "cuGraphLaunch");
        need(cu.cuStreamSynchronize(s), "cuStreamSynchronize");
        per[r] = (now_us() - t0) / (50.0 * 100.0);
    }
    return median(per, 20);
}

/* CPU time of cuGraphLaunch of a one-kernel graph (no wait), and of
 * updating that kernel's parameters in the executable graph. */
static void time_one_node_graph(CUstream s)
{
    CUgraph g;
    CUgraphExec e;
    CUgraphNode node;
    size_t count = 1;
    need(cu.cuStreamBeginCapture_v2(s, 1), "cuStreamBeginCapture");
    need(launch(s, 1, 0), "launch (capture)");
    need(cu.cuStreamEndCapture(s, &g), "cuStreamEndCapture");
    need(cu.cuGraphGetNodes(g, &node, &count), "cuGraphGetNodes");
    need(cu.cuGraphInstantiateWithFlags(&e, g, 0), "cuGraphInstantiate");
    void *params[] = { &args };
    KernelNodeParams kp = { fn_gated, 1, 1, 1, BK_GATED_BLOCK, 1, 1, 0, params, NULL };
    static double upd[N];
    for (int i = 0; i < N + N / 10; i++) {
        if (i % SYNC_EVERY == 0)
            need(cu.cuStreamSynchronize(s), "cuStreamSynchronize");
        double t0 = now_us();
        need(cu.cuGraphExecKernelNodeSetParams(e, node, &kp), "cuGraphExecKernelNodeSetParams");
        double t1 = now_us();
        need(cu.cuGraphLaunch(e, s), "cuGraphLaunch");
        double t2 = now_us();
        if (i >= N / 10) {
            upd[i - N / 10] = t1 - t0;
            samples[i - N / 10] = t2 - t1;
        }
    }
    need(cu.cuStreamSynchronize(s), "cuStreamSynchronize");
    printf("driver: one-kernel graph: cuGraphExecKernelNodeSetParams %.2f us, cuGraphLaunch %.2f us\n",
           median(upd, N), median(samples, N));
}

/* stream: NULL for the context's queue 0, else a CUstream to import. */
static void libbk_costs(void *stream)
{
    BkContextCreateInfo ci = { BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, NULL, BK_DEVICE_TYPE_CUDA,
                               0, 0, 0 };
    BkContext ctx;
    must(bkCreateContext(&ci, NULL, &ctx), "bkCreateContext");
    BkGatedActivationInfo info = { BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, NULL,
                                   BK_GATED_ACTIVATION_GLU, 1, { 0 }, { 0 } };
    info.input = (BkTensorDesc){ BK_DATA_TYPE_F32, 2, { 4, 256 }, { 0 } };
    info.output = (BkTensorDesc){ BK_DATA_TYPE_F32, 2, { 4, 128 }, { 0 } };
    BkPlanCreateInfo pci = { BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, NULL, &info, 0 };
    BkPlan plan;
    must(bkCreatePlan(ctx, &pci, NULL, &plan), "bkCreatePlan");
    BkMemory mx, my;
    BkMemoryAllocateInfo ai = { BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, 4096,
                                BK_MEMORY_TYPE_DEVICE };
    must(bkAllocateMemory(ctx, &ai, NULL, &mx), "bkAllocateMemory");
    must(bkAllocateMemory(ctx, &ai, NULL, &my), "bkAllocateMemory");
    BkDeviceAddress a[2];
    bkGetMemoryAddress(mx, &a[0]);
    bkGetMemoryAddress(my, &a[1]);
    BkQueue q;
    if (stream)
        must(bkImportQueue(ctx, stream, &q), "bkImportQueue");
    else
        must(bkGetQueue(ctx, 0, &q), "bkGetQueue");
    uint64_t sizes[2] = { 4096, 4096 };
    BkCommandBuffer cmd;
    must(bkAllocateCommandBuffer(ctx, NULL, &cmd), "bkAllocateCommandBuffer");
    BkCommandBufferBeginInfo bi = { BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL,
                                    BK_COMMAND_BUFFER_USAGE_ONE_TIME };
    BkRunInfo ri = { BK_STRUCTURE_TYPE_RUN_INFO, NULL, 2, a, stream ? sizes : NULL, 0, 0 };
    static double rec[N], sub[N];
    for (int i = 0; i < N + N / 10; i++) {
        if (i % SYNC_EVERY == 0)
            must(bkQueueWaitIdle(q), "bkQueueWaitIdle");
        double t0 = now_us();
        must(bkBeginCommandBuffer(cmd, &bi), "bkBeginCommandBuffer");
        must(bkCmdRun(cmd, plan, &ri), "bkCmdRun");
        must(bkEndCommandBuffer(cmd), "bkEndCommandBuffer");
        double t1 = now_us();
        must(bkQueueSubmit(q, 1, &cmd), "bkQueueSubmit");
        double t2 = now_us();
        if (i >= N / 10) {
            rec[i - N / 10] = t1 - t0;
            sub[i - N / 10] = t2 - t1;
        }
    }
    must(bkQueueWaitIdle(q), "bkQueueWaitIdle");
    printf("libbk one-time, %s: begin + bkCmdRun + end %.2f us, bkQueueSubmit %.2f us\n",
           stream ? "imported non-blocking stream, binding sizes given" : "queue 0",
           median(rec, N), median(sub, N));
    bkFreeCommandBuffer(cmd);
    if (stream)
        bkDestroyQueue(q);
    bkFreeMemory(ctx, mx);
    bkFreeMemory(ctx, my);
    bkDestroyPlan(plan);
    bkDestroyContext(ctx);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: launch-probe BUILD/kernels/gated_forward.fatbin\n");
        return 2;
    }
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib)
        return printf("launch-probe: no libcuda.so.1\n"), 1;
#define LOAD(name) *(void **)&cu.name = dlsym(lib, #name); if (!cu.name) return printf("no %s\n", #name), 1;
    LOAD(cuInit) LOAD(cuDeviceGet) LOAD(cuDevicePrimaryCtxRetain) LOAD(cuCtxSetCurrent)
    LOAD(cuCtxGetCurrent) LOAD(cuModuleLoadData) LOAD(cuModuleGetFunction) LOAD(cuMemAlloc_v2)
    LOAD(cuStreamCreate) LOAD(cuStreamSynchronize) LOAD(cuLaunchKernel) LOAD(cuLaunchKernelEx)
    LOAD(cuStreamBeginCapture_v2) LOAD(cuStreamEndCapture) LOAD(cuGraphInstantiateWithFlags)
    LOAD(cuGraphLaunch) LOAD(cuGraphGetNodes) LOAD(cuGraphExecKernelNodeSetParams)
    int dev;
    CUcontext ctx;
    need(cu.cuInit(0), "cuInit");
    need(cu.cuDeviceGet(&dev, 0), "cuDeviceGet");
    need(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    need(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");

    FILE *f = fopen(argv[1], "rb");
    if (!f)
        return printf("launch-probe: cannot open %s\n", argv[1]), 1;
    static unsigned char image[16 << 20];
    size_t n = fread(image, 1, sizeof image, f);
    fclose(f);
    (void)n;
    CUmodule m;
    need(cu.cuModuleLoadData(&m, image), "cuModuleLoadData");
    need(cu.cuModuleGetFunction(&fn_gated, m, "bk_gated_fwd_glu_f32_vec"), "cuModuleGetFunction");
    for (int k = 0; k < EMPTY_KINDS; k++) {
        char ptx[256];
        CUmodule me;
        snprintf(ptx, sizeof ptx, ".version 7.0\n.target sm_80\n.address_size 64\n"
                 ".visible .entry bk_probe_empty(.param .align 8 .b8 p[%u])\n{\n ret;\n}\n",
                 empty_size[k]);
        need(cu.cuModuleLoadData(&me, ptx), "cuModuleLoadData (empty kernel)");
        need(cu.cuModuleGetFunction(&fn_empty[k], me, "bk_probe_empty"),
             "cuModuleGetFunction (empty)");
    }

    CUdeviceptr x, y;
    need(cu.cuMemAlloc_v2(&x, 4096), "cuMemAlloc");
    need(cu.cuMemAlloc_v2(&y, 4096), "cuMemAlloc");
    args = (struct bk_gated_args){ .x = x, .y = y, .count = 128, .x_gate = 512, .rank = 1 };
    args.dim[0] = (struct bk_gated_dim){ .extent = 128, .magic = 1, .x_stride = 4, .y_stride = 4 };

    CUstream blocking, nonblocking;
    need(cu.cuStreamCreate(&blocking, 0), "cuStreamCreate");
    need(cu.cuStreamCreate(&nonblocking, 1), "cuStreamCreate");
    libbk_costs(NULL);
    libbk_costs(nonblocking);
    CUcontext cur;
    for (int i = 0; i < N; i++) {
        double t0 = now_us();
        cu.cuCtxGetCurrent(&cur);
        samples[i] = now_us() - t0;
    }
    printf("driver: cuCtxGetCurrent %.3f us\n", median(samples, N));
    printf("driver: cuLaunchKernel, gated kernel (%zu-byte parameters), blocking stream %.2f us\n",
           sizeof args, time_launches(blocking, 0, 0));
    printf("driver: cuLaunchKernel, gated kernel, non-blocking stream %.2f us\n",
           time_launches(nonblocking, 0, 0));
    printf("driver: cuLaunchKernelEx + programmatic serialization, non-blocking %.2f us\n",
           time_launches(nonblocking, 1, 0));
    printf("driver: cuLaunchKernelEx + programmatic serialization, blocking %.2f us\n",
           time_launches(blocking, 1, 0));
    for (int k = 0; k < EMPTY_KINDS; k++)
        printf("driver: cuLaunchKernelEx + programmatic, empty kernel, %u-byte parameters, "
               "non-blocking %.2f us\n", empty_size[k], time_launches(nonblocking, 1, k + 1));
    printf("driver: cuLaunchKernel, empty kernel, 8-byte parameters, blocking %.2f us\n",
           time_launches(blocking, 0, 1));
    printf("driver: graph of 100 gated launches, replay + wait: %.2f us per launch\n",
           time_graph(nonblocking, 0));
    printf("driver: ... with programmatic dependent launch: %.2f us per launch\n",
           time_graph(nonblocking, 1));
    time_one_node_graph(nonblocking);
    /* Again, warm: the first pass may pay for the process's start. */
    libbk_costs(NULL);
    libbk_costs(nonblocking);
    return 0;
}
