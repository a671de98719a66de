/* SPDX-License-Identifier: Apache-2.0 */
/* W4A16 GEMMs back to back on CUDA, as a decode step runs its linears:
 * the plans of a chain recorded in one command buffer, each reading the
 * output of the one before as its A. With programmatic dependent launch
 * (sm_90) a kernel may start while the one before drains, and prefetches
 * its first stages of weights, scales and zero points into L2 before it
 * waits for it (kernels/w4a16_prefetch.cuh). Chains of each kernel: tiles
 * of 8, 16 and 32 rows on both pipelines, the wgmma kernel tiled and in
 * stream-K, zero points, every group size, K past a 128-row stage and N
 * past a 256-column tile. For each, the plans made with
 * BK_CUDA_W4A16_PREFETCH unset (the default: none), 1, 3 and all, and with
 * BK_CUDA_W4A16_EARLY_RING=1 (the Hopper pipeline's producer bringing its
 * ring's first stages of weights before the wait) with the prefetch unset
 * and 3, and the default again from a reusable command buffer replayed
 * three times (a CUDA graph, whose kernels keep their programmatic
 * edges):
 *
 * - the default's links each within w4a16_ref_close of the exact product
 *   of the input the link was given (with the weights rounded to the type,
 *   or exact where w4a16_ref_cuda_exact says the GPU takes them so) (read back after the run; every
 *   link's output starts as NaN, so a link that read its A before the
 *   link before wrote it fails), and the host backend's product of the
 *   same input too;
 * - every other setting's links bit for bit the default's, with the same
 *   kernels (a prefetch changes when bytes reach L2, never a value).
 *
 * Skips without a GPU; fails instead with BK_TEST_REQUIRE_GPU=1. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_pair.h"
#include "w4a16_ref.h"

#define MAX_LINKS 4

static BkContext gpu, host;
static struct bkt_rng rng;

/* A chain: dims[0] -> dims[1] -> ... (K then N of each link; 0 ends it). */
struct chain {
    const char *what;
    BkDataType type;
    int32_t gs;
    int64_t m;
    int64_t dims[MAX_LINKS + 2];
    const char *pipeline;                 /* BK_CUDA_W4A16_PIPELINE, or NULL */
    const char *schedule;                 /* BK_CUDA_W4A16_SCHEDULE, or NULL */
    bool zeros;
};

/* A setting of the plans: BK_CUDA_W4A16_PREFETCH and
 * BK_CUDA_W4A16_EARLY_RING while they are made (NULL: unset); replays:
 * a reusable command buffer submitted that many times (0: one-time). */
struct setting {
    const char *prefetch, *early_ring;
    uint32_t replays;
};

/* One link's weight: the plain form, its dequantized values and the
 * packed form on the GPU. */
struct link {
    int64_t k, n, groups;
    uint8_t *q, *z;
    uint16_t *s;
    double *w, *w_exact; /* rounded to the type; exact (w4a16_ref_cuda_exact) */
    uint32_t *packed, *pzeros;
    uint16_t *pscales;
    uint64_t pbytes, sbytes, zbytes;
    struct bkt_buffer dp, ds, dz;
    BkW4A16GemmInfo info;
    BkW4A16ZeroPointsInfo zp;
};

static void link_make(struct link *l, const struct chain *c, int64_t k, int64_t n)
{
    const BkDataType t = c->type;
    l->k = k, l->n = n, l->groups = k / w4a16_ref_group_rows(c->gs, k);
    l->q = malloc((size_t)(k * n));
    l->s = malloc((size_t)(l->groups * n) * 2);
    l->z = malloc((size_t)(l->groups * n));
    for (int64_t i = 0; i < k * n; i++)
        l->q[i] = (uint8_t)bkt_rand_int(&rng, 0, 15);
    /* Scales that keep the links' outputs near the size of their inputs. */
    for (int64_t i = 0; i < l->groups * n; i++) {
        const float v = (float)bkt_rand_uniform(&rng, 0.002, 0.02);
        l->s[i] = t == BK_DATA_TYPE_BF16 ? bkt_f32_to_bf16(v) : bkt_f32_to_f16(v);
        l->z[i] = c->zeros ? (uint8_t)bkt_rand_int(&rng, 0, 15) : 8;
    }
    l->pbytes = (uint64_t)(k / 16 * 2 * n) * 4;
    l->sbytes = (uint64_t)(l->groups * n) * 2;
    l->zbytes = (uint64_t)(l->groups * n / 8) * 4;
    l->packed = malloc(l->pbytes);
    l->pscales = malloc(l->sbytes);
    l->pzeros = malloc(l->zbytes);
    w4a16_ref_pack(l->q, l->s, k, n, c->gs, l->packed, l->pscales);
    w4a16_ref_pack_zeros(l->z, k, n, c->gs, l->pzeros);
    l->w = malloc((size_t)(k * n) * sizeof *l->w);
    w4a16_ref_dequant_zp(l->q, l->s, l->z, t, k, n, c->gs, l->w);
    l->w_exact = malloc((size_t)(k * n) * sizeof *l->w_exact);
    w4a16_ref_dequant_zp_exact(l->q, l->s, l->z, t, k, n, c->gs, l->w_exact);
    l->dp = bkt_alloc(gpu, l->pbytes);
    l->ds = bkt_alloc(gpu, l->sbytes);
    l->dz = bkt_alloc(gpu, l->zbytes);
    bkt_upload(gpu, l->dp.address, l->packed, l->pbytes);
    bkt_upload(gpu, l->ds.address, l->pscales, l->sbytes);
    bkt_upload(gpu, l->dz.address, l->pzeros, l->zbytes);

    l->info = (BkW4A16GemmInfo){ .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, .groupSize = c->gs };
    l->info.a = w4a16_mat_strided(t, c->m, k, 0, 0);
    l->info.packed = w4a16_mat_strided(BK_DATA_TYPE_I32, k / 16, 2 * n, 0, 0);
    l->info.packedScales = w4a16_mat_strided(t, l->groups, n, 0, 0);
    l->info.c = w4a16_mat_strided(t, c->m, n, 0, 0);
    l->zp = (BkW4A16ZeroPointsInfo){
        .sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO,
        .packedZeros = w4a16_mat_strided(BK_DATA_TYPE_I32, l->groups, n / 8, 0, 0),
    };
    if (c->zeros)
        l->info.pNext = &l->zp;
}

static void link_free(struct link *l)
{
    bkt_free(gpu, &l->dp), bkt_free(gpu, &l->ds), bkt_free(gpu, &l->dz);
    free(l->q), free(l->z), free(l->s), free(l->w), free(l->w_exact);
    free(l->packed), free(l->pzeros);
    free(l->pscales);
}

/* The chain's plans made under setting and run in one command buffer
 * from x[0]; x[1..links] (device buffers, NaN first) back into
 * out[1..links]. kernels[i] gets link i's kernel name. */
static BkResult run_chain(const struct chain *c, struct link *l, int links,
                          const struct setting *setting, const struct bkt_buffer *x,
                          void *const *out, char (*kernels)[BK_MAX_KERNEL_NAME_SIZE])
{
    BkPlan plan[MAX_LINKS] = { 0 };
    struct bkt_buffer ws[MAX_LINKS] = { 0 };
    BkResult r = BK_SUCCESS;
    if (setting->prefetch)
        setenv("BK_CUDA_W4A16_PREFETCH", setting->prefetch, 1);
    if (setting->early_ring)
        setenv("BK_CUDA_W4A16_EARLY_RING", setting->early_ring, 1);
    if (c->pipeline)
        setenv("BK_CUDA_W4A16_PIPELINE", c->pipeline, 1);
    if (c->schedule)
        setenv("BK_CUDA_W4A16_SCHEDULE", c->schedule, 1);
    for (int i = 0; i < links && r == BK_SUCCESS; i++)
        r = bkt_create_plan(gpu, &l[i].info, &plan[i]);
    unsetenv("BK_CUDA_W4A16_PREFETCH");
    unsetenv("BK_CUDA_W4A16_EARLY_RING");
    unsetenv("BK_CUDA_W4A16_PIPELINE");
    unsetenv("BK_CUDA_W4A16_SCHEDULE");
    BkCommandBuffer cmd = BK_NULL_HANDLE;
    const BkCommandBufferBeginInfo begin = {
        .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
        .usage = setting->replays ? BK_COMMAND_BUFFER_USAGE_REUSABLE
                                  : BK_COMMAND_BUFFER_USAGE_ONE_TIME,
    };
    if (r == BK_SUCCESS)
        r = bkAllocateCommandBuffer(gpu, NULL, &cmd);
    if (r == BK_SUCCESS)
        r = bkBeginCommandBuffer(cmd, &begin);
    for (int i = 0; i < links && r == BK_SUCCESS; i++) {
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        bkGetPlanProperties(plan[i], &props);
        snprintf(kernels[i], BK_MAX_KERNEL_NAME_SIZE, "%s", props.kernelName);
        if (props.workspaceSize)
            ws[i] = bkt_alloc(gpu, props.workspaceSize);
        const BkDeviceAddress b[6] = { x[i].address, l[i].dp.address, l[i].ds.address, 0,
                                       x[i + 1].address, l[i].dz.address };
        const BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO,
                                .bindingCount = c->zeros ? 6 : 5, .pBindings = b,
                                .workspace = ws[i].address,
                                .workspaceSize = props.workspaceSize };
        r = bkCmdRun(cmd, plan[i], &run);
    }
    if (r == BK_SUCCESS)
        r = bkEndCommandBuffer(cmd);
    for (uint32_t i = 0; r == BK_SUCCESS && i < (setting->replays ? setting->replays : 1); i++)
        r = bkQueueSubmit(bkt_queue(gpu), 1, &cmd);
    if (r == BK_SUCCESS)
        r = bkQueueWaitIdle(bkt_queue(gpu));
    for (int i = 1; i <= links && r == BK_SUCCESS; i++)
        bkt_download(gpu, out[i], x[i].address, x[i].size);
    bkFreeCommandBuffer(cmd);
    for (int i = 0; i < links; i++) {
        if (ws[i].size)
            bkt_free(gpu, &ws[i]);
        if (plan[i])
            bkDestroyPlan(plan[i]);
    }
    return r;
}

/* Misses of link l's output y against the exact product of its input a,
 * on the GPU and the host backend (run on the same a). */
static long link_misses(const struct chain *c, const struct link *l, const void *a,
                        const void *y)
{
    const int64_t m = c->m, k = l->k, n = l->n;
    const BkDataType t = c->type;
    double *av = malloc((size_t)(m * k) * sizeof *av);
    for (int64_t i = 0; i < m * k; i++)
        av[i] = bkt_load(a, t, i);
    long double *ref[2];
    double *size[2];
    for (int d = 0; d < 2; d++) {
        ref[d] = malloc((size_t)(m * n) * sizeof *ref[d]);
        size[d] = malloc((size_t)(m * n) * sizeof *size[d]);
        w4a16_ref_gemm(av, d == 0 && w4a16_ref_cuda_exact(m) ? l->w_exact : l->w, NULL, m, k,
                       n, ref[d], size[d]);
    }
    void *h = malloc((size_t)(m * n) * 2);
    poison(h, (uint64_t)(m * n) * 2);
    struct binding b[6] = {
        { (void *)a, (uint64_t)(m * k) * 2, 0 }, { l->packed, l->pbytes, 0 },
        { l->pscales, l->sbytes, 0 }, { 0 }, { h, (uint64_t)(m * n) * 2, 0 },
        { l->pzeros, l->zbytes, 0 },
    };
    long misses = run_images(host, &l->info, b, c->zeros ? 6 : 5, 1, NULL) != BK_SUCCESS;
    for (int d = 0; d < 2; d++)
        for (int64_t i = 0; i < m * n; i++) {
            const double got = bkt_load(d ? h : y, t, i);
            if (!w4a16_ref_close(ref[d][i], size[d][i], got, t, k) && misses++ < 3)
                tap_diag("%s: C[%lld][%lld] = %.9g, exact %.9Lg", d ? "host" : "cuda",
                         (long long)(i / n), (long long)(i % n), got, ref[d][i]);
        }
    free(av), free(ref[0]), free(ref[1]), free(size[0]), free(size[1]), free(h);
    return misses;
}

static void test_chain(const struct chain *c)
{
    static const struct setting settings[] = {
        { NULL, NULL, 0 }, { "1", NULL, 0 },  { "3", NULL, 0 }, { "all", NULL, 0 },
        { NULL, "1", 0 },  { "3", "1", 0 },  { NULL, NULL, 3 },
    };
    enum { SETTINGS = sizeof settings / sizeof settings[0] };
    int links = 0;
    while (links < MAX_LINKS && c->dims[links + 1])
        links++;
    struct link l[MAX_LINKS];
    for (int i = 0; i < links; i++)
        link_make(&l[i], c, c->dims[i], c->dims[i + 1]);
    /* x[0] the chain's input, x[i] link i - 1's output. */
    struct bkt_buffer x[MAX_LINKS + 1];
    void *out[SETTINGS][MAX_LINKS + 1];
    for (int i = 0; i <= links; i++) {
        const uint64_t bytes = (uint64_t)(c->m * c->dims[i]) * 2;
        x[i] = bkt_alloc(gpu, bytes);
        for (int s = 0; s < SETTINGS; s++)
            out[s][i] = malloc(bytes);
    }
    for (int64_t i = 0; i < c->m * c->dims[0]; i++)
        bkt_store(out[0][0], c->type, i, bkt_rand_value(&rng, c->type, -2, 2));
    bkt_upload(gpu, x[0].address, out[0][0], x[0].size);

    char kernels[SETTINGS][MAX_LINKS][BK_MAX_KERNEL_NAME_SIZE];
    for (int s = 0; s < SETTINGS; s++) {
        for (int i = 1; i <= links; i++) {
            poison(out[s][i], x[i].size);
            bkt_upload(gpu, x[i].address, out[s][i], x[i].size);
        }
        char name[64];
        snprintf(name, sizeof name, "prefetch %s%s%s",
                 settings[s].prefetch ? settings[s].prefetch : "default",
                 settings[s].early_ring ? ", early ring" : "",
                 settings[s].replays ? ", replayed x3" : "");
        const BkResult r = run_chain(c, l, links, &settings[s], x, out[s], kernels[s]);
        if (r != BK_SUCCESS) {
            tap_ok(false, "chain %s, %s: %s (%s)", c->what, name, bkResultString(r),
                   bkGetLastErrorMessage());
            continue;
        }
        long misses = 0, differ = 0;
        bool same_kernels = true;
        for (int i = 0; i < links; i++) {
            if (s == 0) {
                misses += link_misses(c, &l[i], out[0][i], out[0][i + 1]);
                kernel_seen(kernels[0][i]);
            } else {
                differ += memcmp(out[s][i + 1], out[0][i + 1], x[i + 1].size) != 0;
                same_kernels = same_kernels && strcmp(kernels[s][i], kernels[0][i]) == 0;
            }
        }
        if (s == 0)
            tap_ok(misses == 0, "chain %s (%s ... %s), %s: %ld misses against the exact "
                   "products of each link's input, on cuda and the host",
                   c->what, kernels[0][0], kernels[0][links - 1], name, misses);
        else
            tap_ok(!differ && same_kernels, "chain %s, %s: %d of %d links' outputs bit for "
                   "bit the default's, %s kernels", c->what, name, links - (int)differ, links,
                   same_kernels ? "the same" : "other");
    }
    for (int i = 0; i <= links; i++) {
        bkt_free(gpu, &x[i]);
        for (int s = 0; s < SETTINGS; s++)
            free(out[s][i]);
    }
    for (int i = 0; i < links; i++)
        link_free(&l[i]);
}

int main(void)
{
    gpu = bkt_open_cuda();
    host = bkt_open_host();
    rng = bkt_rng_new(4165);
    unsetenv("BK_CUDA_W4A16_SPLITS");
    const BkDataType F16 = BK_DATA_TYPE_F16, BF16 = BK_DATA_TYPE_BF16;
    const int32_t PC = BK_W4A16_GROUP_PER_CHANNEL;
    /* A decode step's linears in small (qkv, o, gate-up, down), then
     * chains that take each kernel: dims of 64-column multiples past a
     * 256-column tile (1216, 832), K past a 128-row stage (832). */
    const struct chain chains[] = {
        { "decode M 1", F16, 128, 1, { 1024, 1280, 1024, 2304, 1152 }, NULL, NULL, false },
        { "M 8 per channel", BF16, PC, 8, { 1024, 1216, 832, 1984 }, NULL, NULL, false },
        { "M 16 group 64", BF16, 64, 16, { 832, 1216, 832, 960 }, NULL, NULL, false },
        { "M 32 group 32", F16, 32, 32, { 1024, 832, 1280 }, NULL, NULL, false },
        { "M 16 cp.async", F16, 128, 16, { 1024, 1280, 1024 }, "cp.async", NULL, false },
        { "M 1 zero points", BF16, 64, 1, { 832, 1216, 1024 }, NULL, NULL, true },
        { "M 64 wgmma", F16, 128, 64, { 1024, 1280, 1024 }, NULL, NULL, false },
        { "M 100 wgmma zero points", BF16, 32, 100, { 832, 1024, 768 }, NULL, NULL, true },
        /* 16 tiles of 128 columns x 16 stages: a unit an SM at least. */
        { "M 64 stream-K", BF16, 64, 64, { 2048, 2048, 2048 }, NULL, "stream-k", false },
    };
    for (size_t i = 0; i < sizeof chains / sizeof chains[0]; i++)
        test_chain(&chains[i]);
    kernels_report("W4A16 GEMM chains on CUDA (plans' kernel names)");
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    return tap_done();
}
