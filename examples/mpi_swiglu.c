/* SPDX-License-Identifier: Apache-2.0 */
/* mpi_swiglu: libbk under MPI, one rank per GPU. Each rank takes the
 * device of its node-local rank (MPI_Comm_split_type with
 * MPI_COMM_TYPE_SHARED; the host device when the node has no GPU), runs
 * SwiGLU on its slice of a distributed [rows, 2*hidden] f64 problem, and
 * the ranks combine a checksum of the output and their largest error with
 * MPI_Allreduce; rank 0 checks the checksum against the whole problem
 * computed in plain C. libbk does the node-local work; communication is the
 * job's MPI (or NCCL), not libbk's.
 *
 * Build:  mpicc mpi_swiglu.c $(pkg-config --cflags --libs bk) -lm
 * Run:    mpirun -np 4 ./mpi_swiglu */
#include <bk/bk.h>
#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { ROWS_PER_RANK = 32, HIDDEN = 128 };

#define CHECK(call)                                                                   \
    do {                                                                              \
        BkResult r_ = (call);                                                         \
        if (r_ < 0) {                                                                 \
            fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call,             \
                    bkResultString(r_), bkGetLastErrorMessage());                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                             \
        }                                                                             \
    } while (0)

/* Element (row, column) of the whole input, row counted over all ranks. */
static double input_value(long row, long col)
{
    return 2.0 * sin(0.01 * (double)col + 0.3 * (double)row);
}

static double swiglu(double a, double b)
{
    return a * b / (1.0 + exp(-b));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, local_rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_free(&node);

    /* The node-local rank picks a GPU; ranks share GPUs round robin. */
    uint32_t count = 0, gpus = 0;
    CHECK(bkEnumerateDevices(&count, NULL));
    BkDeviceProperties *props = calloc(count ? count : 1, sizeof *props);
    for (uint32_t i = 0; i < count; i++)
        props[i].sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    CHECK(bkEnumerateDevices(&count, props));
    for (uint32_t i = 0; i < count; i++)
        gpus += props[i].deviceType == BK_DEVICE_TYPE_CUDA;
    free(props);
    BkContextCreateInfo ci = { .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
                               .deviceType = gpus ? BK_DEVICE_TYPE_CUDA : BK_DEVICE_TYPE_HOST,
                               .deviceIndex = gpus ? (uint32_t)local_rank % gpus : 0,
                               .apiVersion = BK_HEADER_VERSION };
    BkContext ctx;
    CHECK(bkCreateContext(&ci, NULL, &ctx));
    BkDeviceProperties dev = { .sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES };
    CHECK(bkGetContextProperties(ctx, &dev));
    BkQueue queue;
    CHECK(bkGetQueue(ctx, 0, &queue));

    /* This rank's rows of the input, and the plan for them. */
    const size_t nx = (size_t)ROWS_PER_RANK * 2 * HIDDEN, ny = (size_t)ROWS_PER_RANK * HIDDEN;
    double *x = malloc(nx * sizeof *x), *y = malloc(ny * sizeof *y);
    if (!x || !y)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const long row0 = (long)rank * ROWS_PER_RANK;
    for (long r = 0; r < ROWS_PER_RANK; r++)
        for (long c = 0; c < 2 * HIDDEN; c++)
            x[r * 2 * HIDDEN + c] = input_value(row0 + r, c);
    BkMemory xm, ym;
    BkMemoryAllocateInfo mi = { .sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                                .size = nx * sizeof *x, .memoryType = BK_MEMORY_TYPE_DEVICE };
    CHECK(bkAllocateMemory(ctx, &mi, NULL, &xm));
    mi.size = ny * sizeof *y;
    CHECK(bkAllocateMemory(ctx, &mi, NULL, &ym));
    BkDeviceAddress xa, ya;
    CHECK(bkGetMemoryAddress(xm, &xa));
    CHECK(bkGetMemoryAddress(ym, &ya));
    CHECK(bkCopyToDevice(ctx, xa, x, nx * sizeof *x));
    BkGatedActivationInfo op = {
        .sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO,
        .kind = BK_GATED_ACTIVATION_SWIGLU,
        .splitAxis = 1,
        .input = { .dataType = BK_DATA_TYPE_F64, .rank = 2,
                   .extent = { ROWS_PER_RANK, 2 * HIDDEN } },
        .output = { .dataType = BK_DATA_TYPE_F64, .rank = 2, .extent = { ROWS_PER_RANK, HIDDEN } },
    };
    BkPlanCreateInfo pi = { .sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, .pOperation = &op };
    BkPlan plan;
    CHECK(bkCreatePlan(ctx, &pi, NULL, &plan));

    const BkDeviceAddress bindings[] = { [BK_GATED_ACTIVATION_BINDING_INPUT] = xa,
                                         [BK_GATED_ACTIVATION_BINDING_OUTPUT] = ya };
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = 2,
                      .pBindings = bindings };
    CHECK(bkQueueRun(queue, plan, &run));
    CHECK(bkQueueWaitIdle(queue));
    CHECK(bkCopyFromDevice(ctx, y, ya, ny * sizeof *y));

    /* The rank's checksum and largest error, combined over all ranks. */
    double local[2] = { 0, 0 }, global[2];
    for (long r = 0; r < ROWS_PER_RANK; r++)
        for (long h = 0; h < HIDDEN; h++) {
            const double got = y[r * HIDDEN + h];
            const double want = swiglu(input_value(row0 + r, h), input_value(row0 + r, HIDDEN + h));
            local[0] += got;
            local[1] = fmax(local[1], fabs(got - want));
        }
    MPI_Allreduce(&local[0], &global[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&local[1], &global[1], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    printf("rank %d of %d (node rank %d) on %s %u (%s): slice error %.3g\n", rank, size,
           local_rank, dev.deviceType == BK_DEVICE_TYPE_CUDA ? "cuda" : "host", dev.deviceIndex,
           dev.name, local[1]);

    int failed = 0;
    if (rank == 0) {
        double want = 0;
        for (long r = 0; r < (long)size * ROWS_PER_RANK; r++)
            for (long h = 0; h < HIDDEN; h++)
                want += swiglu(input_value(r, h), input_value(r, HIDDEN + h));
        const double diff = fabs(global[0] - want);
        failed = !(diff <= 1e-9 * fmax(1.0, fabs(want)) && global[1] <= 1e-12);
        printf("checksum %.12g (plain C %.12g), largest error %.3g over %d ranks: %s\n",
               global[0], want, global[1], size, failed ? "FAILED" : "ok");
    }
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);

    bkDestroyPlan(plan);
    bkFreeMemory(ctx, xm);
    bkFreeMemory(ctx, ym);
    bkDestroyContext(ctx);
    free(x);
    free(y);
    MPI_Finalize();
    return failed;
}
