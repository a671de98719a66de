/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel modules: the fatbins built from kernels/ (one per row of
 * cuda_modules.h) and embedded in libbk by cuda_fatbins.S, loaded into a
 * context once, on the first plan that needs one. For kernel development
 * and for tests, BK_CUDA_MODULE_DIR=DIR makes libbk read DIR/NAME.fatbin
 * instead of the embedded copy. */
#include "cuda_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The fatbins' bounds, from cuda_fatbins.S; one pair per row of
 * cuda_modules.h. */
#define MODULE_SYMBOLS(id, name, archs)                                                        \
    extern const unsigned char bk_cuda_fatbin_##name[] BK_HIDDEN;                              \
    extern const unsigned char bk_cuda_fatbin_##name##_end[] BK_HIDDEN;
BK_CUDA_MODULES(MODULE_SYMBOLS)
#undef MODULE_SYMBOLS

#define MODULE_ROW(id, name, archs)                                                            \
    [BK_CUDA_MODULE_##id] = { #name, bk_cuda_fatbin_##name, bk_cuda_fatbin_##name##_end },
static const struct {
    const char *name;
    const unsigned char *start, *end;
} modules[] = { BK_CUDA_MODULES(MODULE_ROW) };
#undef MODULE_ROW
_Static_assert(sizeof modules / sizeof modules[0] == BK_CUDA_MODULE_COUNT,
               "modules must have a row for every module of BK_CUDA_MODULES");

static uint64_t little_endian(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* A fatbin is a header (u32 magic 0xBA55ED50, u16 version, u16 header
 * size, u64 size of what follows) and a chain of entries, each a header
 * (u16 kind, u16 version, u32 header size, u64 payload size, ...) and its
 * payload. Walking the chain before the driver sees the image turns a
 * truncated or foreign file into a clean error. */
static bool looks_like_fatbin(const unsigned char *p, size_t size)
{
    if (size < 16 || little_endian(p, 4) != 0xBA55ED50u)
        return false;
    uint64_t at = little_endian(p + 6, 2), body = little_endian(p + 8, 8);
    if (at < 16 || at > size || body > size - at)
        return false;
    const uint64_t end = at + body;
    int entries = 0;
    while (at < end) {
        if (end - at < 16)
            return false;
        uint64_t kind = little_endian(p + at, 2), header = little_endian(p + at + 4, 4);
        uint64_t payload = little_endian(p + at + 8, 8);
        if (kind == 0 || kind > 16 || header < 16 || header > end - at ||
            payload > end - at - header)
            return false;
        at += header + payload;
        entries++;
    }
    return entries > 0;
}

static BkResult read_file(BkContext ctx, const char *path, unsigned char **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return bk_error(BK_ERROR_MODULE_LOAD_FAILED, "cannot open the CUDA module %s: %s", path,
                        strerror(errno));
    BkResult res = BK_SUCCESS;
    long n = -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        res = bk_error(BK_ERROR_MODULE_LOAD_FAILED, "cannot read the CUDA module %s: %s", path,
                       strerror(errno));
    } else if (!(*data = bk_alloc(&ctx->alloc, (size_t)n + 1))) {
        res = bk_error(BK_ERROR_OUT_OF_HOST_MEMORY, "reading the CUDA module %s: out of host memory",
                       path);
    } else if (fread(*data, 1, (size_t)n, f) != (size_t)n) {
        res = bk_error(BK_ERROR_MODULE_LOAD_FAILED, "cannot read the CUDA module %s", path);
        bk_free(&ctx->alloc, *data);
        *data = NULL;
    } else {
        *size = (size_t)n;
    }
    fclose(f);
    return res;
}

static BkResult load_module(BkContext ctx, enum bk_cuda_module_id id, CUmodule *out)
{
    const unsigned char *image = modules[id].start;
    size_t size = (size_t)(modules[id].end - modules[id].start);
    unsigned char *owned = NULL;
    char path[4096];
    const char *dir = getenv("BK_CUDA_MODULE_DIR");
    if (dir && *dir) {
        snprintf(path, sizeof path, "%s/%s.fatbin", dir, modules[id].name);
        BkResult res = read_file(ctx, path, &owned, &size);
        if (res != BK_SUCCESS)
            return res;
        image = owned;
    } else {
        snprintf(path, sizeof path, "%s (embedded)", modules[id].name);
    }

    BkResult res = BK_SUCCESS;
    if (!looks_like_fatbin(image, size)) {
        res = bk_error(BK_ERROR_MODULE_LOAD_FAILED,
                       "the CUDA module %s is not a fatbin (bad header or truncated, %zu bytes)",
                       path, size);
    } else {
        CUresult r = bk_cu.cuModuleLoadData(out, image);
        if (r != BK_CUDA_SUCCESS)
            res = bk_cuda_error(r, r == BK_CUDA_ERROR_OUT_OF_MEMORY ? BK_SUCCESS
                                                                    : BK_ERROR_MODULE_LOAD_FAILED,
                                "loading the CUDA module %s for %s (sm_%u%u): cuModuleLoadData",
                                path, ctx->props.name, ctx->props.computeCapabilityMajor,
                                ctx->props.computeCapabilityMinor);
    }
    bk_free(&ctx->alloc, owned);
    return res;
}

BkResult bk_cuda_function(BkContext ctx, enum bk_cuda_module_id id, const char *name,
                          CUfunction *fn)
{
    struct bk_cuda_context *c = ctx->impl;
    BkResult res = BK_SUCCESS;
    pthread_mutex_lock(&c->lock);
    if (!c->module[id])
        res = load_module(ctx, id, &c->module[id]);
    CUmodule m = c->module[id];
    pthread_mutex_unlock(&c->lock);
    if (res != BK_SUCCESS)
        return res;
    CUresult r = bk_cu.cuModuleGetFunction(fn, m, name);
    if (r != BK_CUDA_SUCCESS)
        return bk_cuda_error(r, BK_ERROR_MODULE_LOAD_FAILED,
                             "the CUDA module %s has no kernel %s: cuModuleGetFunction",
                             modules[id].name, name);
    return BK_SUCCESS;
}

void bk_cuda_modules_unload(struct bk_cuda_context *c)
{
    for (int i = 0; i < BK_CUDA_MODULE_COUNT; i++) {
        if (c->module[i])
            (void)bk_cu.cuModuleUnload(c->module[i]);
        c->module[i] = NULL;
    }
}
