/* SPDX-License-Identifier: Apache-2.0 */
/* swiglu: a complete libbk program. It runs SwiGLU forward on a [tokens,
 * 2*hidden] f32 matrix, split along the last axis, and checks the result.
 *
 * Build against an installed libbk:  cc swiglu.c $(pkg-config --cflags --libs bk) -lm
 * Run:  ./swiglu [host|cuda|auto]   (default auto: a GPU when one works) */
#include <bk/bk.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                                   \
    do {                                                                              \
        BkResult r_ = (call);                                                         \
        if (r_ < 0) {                                                                 \
            fprintf(stderr, "%s failed: %s: %s\n", #call, bkResultString(r_),         \
                    bkGetLastErrorMessage());                                         \
            exit(1);                                                                  \
        }                                                                             \
    } while (0)

enum { TOKENS = 64, HIDDEN = 256 };

static BkDeviceType device_from_name(const char *name)
{
    if (!name || !strcmp(name, "auto"))
        return BK_DEVICE_TYPE_AUTO;
    if (!strcmp(name, "host"))
        return BK_DEVICE_TYPE_HOST;
    if (!strcmp(name, "cuda"))
        return BK_DEVICE_TYPE_CUDA;
    fprintf(stderr, "usage: swiglu [host|cuda|auto]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    /* 1. A context on the chosen device, and its first queue. */
    BkContextCreateInfo ctx_info = {
        .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
        .deviceType = device_from_name(argc > 1 ? argv[1] : NULL),
        .apiVersion = BK_HEADER_VERSION,
    };
    BkContext ctx;
    CHECK(bkCreateContext(&ctx_info, NULL, &ctx));
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    CHECK(bkGetContextProperties(ctx, &dev));
    printf("device: %s\n", dev.name);
    BkQueue queue;
    CHECK(bkGetQueue(ctx, 0, &queue));

    /* 2. Input x[TOKENS][2*HIDDEN] on the host, and device memory for x and y. */
    const size_t nx = (size_t)TOKENS * 2 * HIDDEN, ny = (size_t)TOKENS * HIDDEN;
    float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    if (!x || !y)
        return 1;
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)sin(0.37 * (double)i) * 3.0f;

    BkMemory xm, ym;
    BkMemoryAllocateInfo mx = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = nx * sizeof *x, .memoryType = BK_MEMORY_TYPE_DEVICE };
    BkMemoryAllocateInfo my = mx;
    my.size = ny * sizeof *y;
    CHECK(bkAllocateMemory(ctx, &mx, NULL, &xm));
    CHECK(bkAllocateMemory(ctx, &my, NULL, &ym));
    BkDeviceAddress xa, ya;
    CHECK(bkGetMemoryAddress(xm, &xa));
    CHECK(bkGetMemoryAddress(ym, &ya));
    CHECK(bkCopyToDevice(ctx, xa, x, mx.size));

    /* 3. The plan: SwiGLU along axis 1 (the last, row-major); zero strides
     *    mean contiguous. */
    BkGatedActivationInfo op = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
        .kind = BK_GATED_ACTIVATION_SWIGLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { TOKENS, 2 * HIDDEN } },
        .output = { .dataType = BK_DATA_TYPE_F32, .rank = 2, .extent = { TOKENS, HIDDEN } },
    };
    BkPlanCreateInfo plan_info = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &op };
    BkPlan plan;
    CHECK(bkCreatePlan(ctx, &plan_info, NULL, &plan));
    BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
    CHECK(bkGetPlanProperties(plan, &props));
    printf("kernel: %s, workspace: %llu bytes\n", props.kernelName,
           (unsigned long long)props.workspaceSize);

    /* 4. Run the plan on the queue in one call, wait. */
    const BkDeviceAddress bindings[] = { [BK_GATED_ACTIVATION_BINDING_INPUT] = xa,
                                         [BK_GATED_ACTIVATION_BINDING_OUTPUT] = ya };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2,
                      .pBindings = bindings };
    CHECK(bkQueueRun(queue, plan, &run));
    CHECK(bkQueueWaitIdle(queue));

    /* 5. Read back and verify against y = a * b * sigmoid(b) in double. */
    CHECK(bkCopyFromDevice(ctx, y, ya, my.size));
    double worst = 0;
    for (size_t t = 0; t < TOKENS; t++) {
        for (size_t h = 0; h < HIDDEN; h++) {
            double a = x[t * 2 * HIDDEN + h], b = x[t * 2 * HIDDEN + HIDDEN + h];
            double want = a * b / (1.0 + exp(-b));
            double err = fabs(y[t * HIDDEN + h] - want) / (fabs(want) + 1e-6);
            worst = err > worst ? err : worst;
        }
    }
    printf("largest relative error: %.3g\n", worst);

    bkDestroyPlan(plan);
    bkFreeMemory(ctx, xm);
    bkFreeMemory(ctx, ym);
    bkDestroyContext(ctx);
    free(x);
    free(y);
    if (worst > 1e-5) {
        fprintf(stderr, "swiglu: result is wrong\n");
        return 1;
    }
    printf("swiglu: ok\n");
    return 0;
}
