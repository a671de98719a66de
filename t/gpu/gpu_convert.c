/* SPDX-License-Identifier: Apache-2.0 */
/* Type conversion on CUDA against the host backend, bit for bit: every
 * pair of the nine types on contiguous, strided and rank-8 layouts, bound
 * at aligned addresses (the vector path) and one element off (the strided
 * fallback), random bit patterns in, NaN-poisoned outputs, the whole
 * output image compared (the gaps too); and every F16 and BF16 pattern to
 * every type, and 2^22 random F32 and F64 patterns to F16 and BF16.
 * Skips without a GPU; fails instead with BK_TEST_REQUIRE_GPU=1. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert_ref.h"
#include "test_util.h"

static BkContext gpu, host;

static size_t type_size(BkDataType t)
{
    return t == BK_DATA_TYPE_F64 ? 8
           : t == BK_DATA_TYPE_F32 || t == BK_DATA_TYPE_I32 || t == BK_DATA_TYPE_U32 ? 4
           : t == BK_DATA_TYPE_I8 || t == BK_DATA_TYPE_U8 ? 1 : 2;
}

struct layout {
    const char *name;
    uint32_t rank;
    int64_t extent[8], in_stride[8], out_stride[8];
    int64_t offset; /* elements past a 256-byte boundary, both tensors */
};

static const struct layout layouts[] = {
    { "[4096] contiguous, aligned", 1, { 4096 }, { 0 }, { 0 }, 0 },
    { "[4096] contiguous, one element off", 1, { 4096 }, { 0 }, { 0 }, 1 },
    { "[1000, 1003] contiguous", 2, { 1000, 1003 }, { 0 }, { 0 }, 0 },
    { "[64, 48] padded rows", 2, { 64, 48 }, { 64, 1 }, { 56, 1 }, 0 },
    { "[129, 77] transposed in, padded out", 2, { 129, 77 }, { 1, 130 }, { 80, 1 }, 0 },
    { "[2,3,1,2,5,1,3,4] rank 8, strided out", 8, { 2, 3, 1, 2, 5, 1, 3, 4 }, { 0 },
      { 2880, 960, 960, 480, 96, 96, 32, 2 }, 0 },
};

static int64_t strides_of(const struct layout *l, const int64_t *given, int64_t *s)
{
    bool zero = true;
    for (uint32_t k = 0; k < l->rank; k++)
        zero &= given[k] == 0;
    int64_t c = 1, span = 1;
    for (uint32_t k = l->rank; k-- > 0;) {
        s[k] = zero ? c : given[k];
        c *= l->extent[k];
        span += (l->extent[k] - 1) * s[k];
    }
    return span;
}

/* Runs info on ctx with in at its offset; out (poisoned before) comes back. */
static BkResult run_on(BkContext ctx, const BkConvertInfo *info, const void *in, uint64_t ibytes,
                       void *out, uint64_t obytes, uint64_t ioff, uint64_t ooff, char *kernel)
{
    struct bkt_buffer ib = bkt_alloc(ctx, ibytes + 256), ob = bkt_alloc(ctx, obytes + 256);
    bkt_upload(ctx, ib.address + ioff, in, ibytes);
    bkt_upload(ctx, ob.address + ooff, out, obytes);
    BkPlan plan = BK_NULL_HANDLE;
    BkResult r = bkt_create_plan(ctx, info, &plan);
    if (r == BK_SUCCESS) {
        if (kernel) {
            BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
            bkGetPlanProperties(plan, &props);
            memcpy(kernel, props.kernelName, BK_MAX_KERNEL_NAME_SIZE);
        }
        r = bkt_run(ctx, plan, 2, (BkDeviceAddress[2]){ ib.address + ioff, ob.address + ooff });
    }
    bkt_download(ctx, out, ob.address + ooff, obytes);
    bkDestroyPlan(plan);
    bkt_free(ctx, &ib);
    bkt_free(ctx, &ob);
    return r;
}

/* The same conversion on both devices; true when the output images agree. */
static bool compare(const BkConvertInfo *info, const void *in, uint64_t ibytes, uint64_t obytes,
                    uint64_t ioff, uint64_t ooff, const char *label)
{
    char *og = malloc(obytes + 4), *oh = malloc(obytes + 4);
    for (uint64_t b = 0; b < obytes; b += 4) {
        memcpy(og + b, &(uint32_t){ BKT_POISON }, 4);
        memcpy(oh + b, &(uint32_t){ BKT_POISON }, 4);
    }
    char kernel[BK_MAX_KERNEL_NAME_SIZE] = "";
    const BkResult rg = run_on(gpu, info, in, ibytes, og, obytes, ioff, ooff, kernel);
    const BkResult rh = run_on(host, info, in, ibytes, oh, obytes, ioff, ooff, NULL);
    long bad = 0;
    const size_t es = type_size(info->output.dataType);
    for (uint64_t e = 0; rg == BK_SUCCESS && rh == BK_SUCCESS && e < obytes / es; e++)
        if (memcmp(og + e * es, oh + e * es, es) != 0 && bad++ < 3)
            tap_diag("%s: element %llu differs", label, (unsigned long long)e);
    const bool ok = tap_ok(rg == BK_SUCCESS && rh == BK_SUCCESS && bad == 0,
                           "cuda = host: %s [%s] (%ld differ)", label, kernel, bad);
    free(og), free(oh);
    return ok;
}

static void random_bits(struct bkt_rng *rng, void *p, uint64_t bytes)
{
    for (uint64_t b = 0; b < bytes; b += 8) {
        const uint64_t u = bkt_rand_u64(rng);
        memcpy((char *)p + b, &u, bytes - b < 8 ? bytes - b : 8);
    }
}

static void test_layouts(struct bkt_rng *rng)
{
    for (unsigned a = 0; a < CONVERT_TYPE_COUNT; a++)
        for (unsigned b = 0; b < CONVERT_TYPE_COUNT; b++)
            for (size_t k = 0; k < sizeof layouts / sizeof layouts[0]; k++) {
                const struct layout *l = &layouts[k];
                const BkDataType it = convert_types[a], ot = convert_types[b];
                int64_t is[8], os[8];
                const uint64_t ib = (uint64_t)strides_of(l, l->in_stride, is) * type_size(it);
                const uint64_t ob = (uint64_t)strides_of(l, l->out_stride, os) * type_size(ot);
                BkConvertInfo info = { .sType = BK_STRUCTURE_TYPE_CONVERT_INFO };
                info.input = (BkTensorDesc){ .dataType = it, .rank = l->rank };
                info.output = (BkTensorDesc){ .dataType = ot, .rank = l->rank };
                memcpy(info.input.extent, l->extent, sizeof l->extent);
                memcpy(info.output.extent, l->extent, sizeof l->extent);
                memcpy(info.input.stride, l->in_stride, sizeof l->in_stride);
                memcpy(info.output.stride, l->out_stride, sizeof l->out_stride);
                void *in = malloc(ib + 8);
                random_bits(rng, in, ib);
                char label[128];
                snprintf(label, sizeof label, "%s -> %s, %s", convert_type_name(it),
                         convert_type_name(ot), l->name);
                compare(&info, in, ib, ob, (uint64_t)l->offset * type_size(it),
                        (uint64_t)l->offset * type_size(ot), label);
                free(in);
            }
}

/* n contiguous elements of it, converted to ot on both devices. */
static void compare_array(BkDataType it, BkDataType ot, const void *in, int64_t n,
                          const char *label)
{
    BkConvertInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONVERT_INFO,
        .input = { .dataType = it, .rank = 1, .extent = { n } },
        .output = { .dataType = ot, .rank = 1, .extent = { n } },
    };
    compare(&info, in, (uint64_t)n * type_size(it), (uint64_t)n * type_size(ot), 0, 0, label);
}

static void test_patterns(struct bkt_rng *rng)
{
    uint16_t *h = malloc(65536 * 2);
    for (uint32_t i = 0; i < 65536; i++)
        h[i] = (uint16_t)i;
    for (unsigned b = 0; b < CONVERT_TYPE_COUNT; b++) {
        char label[64];
        snprintf(label, sizeof label, "every f16 pattern -> %s", convert_type_name(convert_types[b]));
        compare_array(BK_DATA_TYPE_F16, convert_types[b], h, 65536, label);
        snprintf(label, sizeof label, "every bf16 pattern -> %s", convert_type_name(convert_types[b]));
        compare_array(BK_DATA_TYPE_BF16, convert_types[b], h, 65536, label);
    }
    free(h);
    const int64_t n = 1 << 22;
    void *x = malloc((size_t)n * 8);
    random_bits(rng, x, (uint64_t)n * 8);
    compare_array(BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, x, n, "2^22 random f32 -> f16");
    compare_array(BK_DATA_TYPE_F32, BK_DATA_TYPE_BF16, x, n, "2^22 random f32 -> bf16");
    compare_array(BK_DATA_TYPE_F64, BK_DATA_TYPE_F16, x, n, "2^22 random f64 -> f16");
    compare_array(BK_DATA_TYPE_F64, BK_DATA_TYPE_BF16, x, n, "2^22 random f64 -> bf16");
    free(x);
}

int main(void)
{
    gpu = bkt_open_cuda();
    host = bkt_open_host();
    struct bkt_rng rng = bkt_rng_new(505);
    test_layouts(&rng);
    test_patterns(&rng);
    bkDestroyContext(host);
    bkDestroyContext(gpu);
    return tap_done();
}
