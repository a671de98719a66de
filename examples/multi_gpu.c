/* SPDX-License-Identifier: Apache-2.0 */
/* multi_gpu: libbk on every GPU of a node, one context and one thread per
 * device (the host device when there is no GPU). Each thread runs SwiGLU
 * on its own slice of a [rows, 2*hidden] f32 problem on its device and
 * checks its slice against a double-precision reference; the program
 * fails when any slice is wrong.
 *
 * Contexts, plans and memory are per thread here, as a code that drives
 * one GPU per thread would have them; libbk's calls are thread-safe on
 * different objects (bk(7), "Threads").
 *
 * Build against an installed libbk:
 *   cc -pthread multi_gpu.c $(pkg-config --cflags --libs bk) -lm
 * Run:  ./multi_gpu              every CUDA device, else the host
 *       ./multi_gpu --host N     N host contexts in N threads (for testing) */
#include <bk/bk.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS_PER_DEVICE = 96, HIDDEN = 320, MAX_DEVICES = 64 };

struct job {
    BkDeviceType type;
    uint32_t index;
    uint32_t slice;           /* which rows of the whole problem */
    char name[BK_MAX_NAME_SIZE];
    double worst;             /* largest relative error of the slice */
    char error[512];          /* empty when the slice ran and was checked */
};

#define TRY(call)                                                                      \
    do {                                                                               \
        BkResult r_ = (call);                                                          \
        if (r_ < 0) {                                                                  \
            snprintf(j->error, sizeof j->error, "%s: %s: %s", #call, bkResultString(r_), \
                     bkGetLastErrorMessage());                                         \
            goto done;                                                                 \
        }                                                                              \
    } while (0)

/* Element i of the whole problem's input: rows differ from slice to slice. */
static float input_value(uint32_t slice, size_t i)
{
    return (float)(3.0 * sin(0.37 * (double)i + 1.3 * (double)slice));
}

static void *run_slice(void *arg)
{
    struct job *j = arg;
    const size_t nx = (size_t)ROWS_PER_DEVICE * 2 * HIDDEN, ny = (size_t)ROWS_PER_DEVICE * HIDDEN;
    float *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    BkContext ctx = BK_NULL_HANDLE;
    BkMemory xm = BK_NULL_HANDLE, ym = BK_NULL_HANDLE;
    BkPlan plan = BK_NULL_HANDLE;
    j->worst = INFINITY;
    if (!x || !y) {
        snprintf(j->error, sizeof j->error, "out of host memory");
        goto done;
    }
    for (size_t i = 0; i < nx; i++)
        x[i] = input_value(j->slice, i);

    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = j->type, .deviceIndex = j->index,
                               .apiVersion = BK_HEADER_VERSION };
    TRY(bkCreateContext(&ci, NULL, &ctx));
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    TRY(bkGetContextProperties(ctx, &dev));
    snprintf(j->name, sizeof j->name, "%s", dev.name);
    BkQueue queue;
    TRY(bkGetQueue(ctx, 0, &queue));

    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = nx * sizeof *x, .memoryType = BK_MEMORY_TYPE_DEVICE };
    TRY(bkAllocateMemory(ctx, &mi, NULL, &xm));
    mi.size = ny * sizeof *y;
    TRY(bkAllocateMemory(ctx, &mi, NULL, &ym));
    BkDeviceAddress xa, ya;
    TRY(bkGetMemoryAddress(xm, &xa));
    TRY(bkGetMemoryAddress(ym, &ya));
    TRY(bkCopyToDevice(ctx, xa, x, nx * sizeof *x));

    BkGatedActivationInfo op = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
        .kind = BK_GATED_ACTIVATION_SWIGLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F32, .rank = 2,
                   .extent = { ROWS_PER_DEVICE, 2 * HIDDEN } },
        .output = { .dataType = BK_DATA_TYPE_F32, .rank = 2,
                    .extent = { ROWS_PER_DEVICE, HIDDEN } },
    };
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &op };
    TRY(bkCreatePlan(ctx, &pi, NULL, &plan));
    const BkDeviceAddress bindings[] = { [BK_GATED_ACTIVATION_BINDING_INPUT] = xa,
                                         [BK_GATED_ACTIVATION_BINDING_OUTPUT] = ya };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2,
                      .pBindings = bindings };
    TRY(bkQueueRun(queue, plan, &run));
    TRY(bkQueueWaitIdle(queue));
    TRY(bkCopyFromDevice(ctx, y, ya, ny * sizeof *y));

    /* y = a * b * sigmoid(b), a and b the two halves of each row. */
    j->worst = 0;
    for (size_t r = 0; r < ROWS_PER_DEVICE; r++)
        for (size_t h = 0; h < HIDDEN; h++) {
            const double a = x[r * 2 * HIDDEN + h], b = x[r * 2 * HIDDEN + HIDDEN + h];
            const double want = a * b / (1.0 + exp(-b));
            const double err = fabs(y[r * HIDDEN + h] - want) / (fabs(want) + 1e-6);
            j->worst = err > j->worst ? err : j->worst;
        }
    if (!(j->worst <= 1e-5))
        snprintf(j->error, sizeof j->error, "wrong result (largest relative error %.3g)",
                 j->worst);
done:
    bkDestroyPlan(plan);
    if (ctx) {
        bkFreeMemory(ctx, xm);
        bkFreeMemory(ctx, ym);
    }
    bkDestroyContext(ctx);
    free(x);
    free(y);
    return NULL;
}

int main(int argc, char **argv)
{
    static struct job jobs[MAX_DEVICES];
    uint32_t n = 0;
    if (argc == 3 && !strcmp(argv[1], "--host")) {
        const long want = strtol(argv[2], NULL, 10);
        if (want < 1 || want > MAX_DEVICES) {
            fprintf(stderr, "multi_gpu: --host takes 1 to %d contexts\n", MAX_DEVICES);
            return 2;
        }
        for (; n < (uint32_t)want; n++)
            jobs[n] = (struct job){ .type = BK_DEVICE_TYPE_HOST, .index = 0, .slice = n };
    } else if (argc != 1) {
        fprintf(stderr, "usage: multi_gpu [--host N]\n");
        return 2;
    } else {
        /* Every CUDA device libbk can run on; the host when there is none. */
        uint32_t count = 0;
        BkDeviceProperties props[MAX_DEVICES];
        if (bkEnumerateDevices(&count, NULL) == BK_SUCCESS && count > 0) {
            if (count > MAX_DEVICES)
                count = MAX_DEVICES;
            for (uint32_t i = 0; i < count; i++)
                props[i] = (BkDeviceProperties){ .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
            if (bkEnumerateDevices(&count, props) < 0)
                count = 0;
        }
        for (uint32_t i = 0; i < count; i++)
            if (props[i].deviceType == BK_DEVICE_TYPE_CUDA) {
                jobs[n] = (struct job){ .type = BK_DEVICE_TYPE_CUDA,
                                        .index = props[i].deviceIndex, .slice = n };
                n++;
            }
        if (n == 0)
            jobs[n++] = (struct job){ .type = BK_DEVICE_TYPE_HOST, .index = 0, .slice = 0 };
    }

    pthread_t threads[MAX_DEVICES];
    for (uint32_t i = 0; i < n; i++)
        if (pthread_create(&threads[i], NULL, run_slice, &jobs[i]) != 0) {
            fprintf(stderr, "multi_gpu: pthread_create failed\n");
            return 1;
        }
    int failed = 0;
    for (uint32_t i = 0; i < n; i++) {
        pthread_join(threads[i], NULL);
        const struct job *j = &jobs[i];
        printf("slice %u on %s %u (%s): %s", j->slice,
               j->type == BK_DEVICE_TYPE_CUDA ? "cuda" : "host", j->index, j->name,
               j->error[0] ? j->error : "ok");
        if (!j->error[0])
            printf(", largest relative error %.3g", j->worst);
        printf("\n");
        failed |= j->error[0] != 0;
    }
    printf("multi_gpu: %u context%s, %s\n", n, n == 1 ? "" : "s", failed ? "FAILED" : "ok");
    return failed;
}
