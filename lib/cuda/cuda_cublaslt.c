/* SPDX-License-Identifier: Apache-2.0 */
/* Loading cuBLASLt at run time, its errors, and the per-context handle.
 * libbk never links against cuBLAS: the library is opened with dlopen the
 * first time a GEMM plan needs it (never at load time, so that programs
 * that use no GEMM do not pay for a 500 MB library), once per process. */
#include "cuda_cublaslt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct bk_cublaslt bk_lt;

/* A mutex, as for the driver (cuda_driver.c): plan creation is no hot path. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static bool load_done;
static BkResult load_result;
static char load_message[1536];

/* cuBLAS 12.0: the oldest with every attribute used here (and libbk needs
 * a CUDA 12 driver anyway). */
#define MIN_VERSION 120000u

static const char *const default_names[] = {
    "libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
};

/* Appends "; " and a formatted reason to why. */
static void add_reason(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_reason(char *why, size_t size, const char *fmt, ...)
{
    size_t used = strlen(why);
    if (used && used + 2 < size) {
        memcpy(why + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why + used, size - used, fmt, ap);
    va_end(ap);
}

/* Fills bk_lt from lib; false (with the reason added) if a symbol is
 * missing or the library is too old or built for a newer CUDA than the
 * driver runs (a 13.x library on a 12.x driver fails only at its first
 * call: the next name may still work). */
static bool resolve(void *lib, const char *name, char *why, size_t size)
{
    static const struct {
        const char *name;
        size_t offset;
    } entries[] = {
#define BK_CUBLASLT_ENTRY(ret, fn, params) { #fn, offsetof(struct bk_cublaslt, fn) },
        BK_CUBLASLT_FUNCTIONS(BK_CUBLASLT_ENTRY)
#undef BK_CUBLASLT_ENTRY
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        (void)dlerror();
        void *fn = dlsym(lib, entries[i].name);
        if (!fn) {
            const char *err = dlerror();
            add_reason(why, size, "%s lacks %s: %s", name, entries[i].name,
                       err ? err : "no such symbol");
            return false;
        }
        /* dlsym returns object pointers; POSIX guarantees they convert. */
        memcpy((char *)&bk_lt + entries[i].offset, &fn, sizeof fn);
    }
    size_t version = bk_lt.cublasLtGetVersion();
    if (version < MIN_VERSION) {
        add_reason(why, size, "%s is cuBLASLt %zu.%zu.%zu: libbk needs 12.0 or newer", name,
                   version / 10000, version / 100 % 100, version % 100);
        return false;
    }
    /* 1000 major + 10 minor, as the driver's version. */
    size_t cudart = bk_lt.cublasLtGetCudartVersion();
    if (cudart / 1000 > (size_t)bk_cu.version / 1000) {
        add_reason(why, size, "%s is built for CUDA %zu.%zu but the driver runs CUDA %d.%d", name,
                   cudart / 1000, cudart % 1000 / 10, bk_cu.version / 1000,
                   bk_cu.version % 1000 / 10);
        return false;
    }
    bk_lt.version = version;
    return true;
}

static void load(void)
{
    const char *env = getenv("BK_CUBLASLT_LIBRARY");
    const char *const *names = default_names;
    size_t count = sizeof default_names / sizeof default_names[0];
    if (env && *env) {
        names = &env;
        count = 1;
    }
    char why[1024] = "";
    for (size_t i = 0; i < count; i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *err = dlerror();
            add_reason(why, sizeof why, "%s", err ? err : names[i]);
            continue;
        }
        /* Kept open for the life of the process, as the driver is: handles
         * may be destroyed as late as exit. */
        if (resolve(lib, names[i], why, sizeof why)) {
            load_result = BK_SUCCESS;
            return;
        }
        memset(&bk_lt, 0, sizeof bk_lt);
        dlclose(lib);
    }
    load_result = BK_ERROR_UNSUPPORTED;
    if (env && *env)
        snprintf(load_message, sizeof load_message, "could not load %s (BK_CUBLASLT_LIBRARY): %s",
                 env, why);
    else
        snprintf(load_message, sizeof load_message,
                 "could not load %s, %s or %s (set BK_CUBLASLT_LIBRARY): %s", default_names[0],
                 default_names[1], default_names[2], why);
}

const struct bk_cublaslt *bk_cublaslt(const char *who, BkResult *result)
{
    pthread_mutex_lock(&load_lock);
    if (!load_done) {
        load();
        load_done = true;
    }
    BkResult loaded = load_result;
    pthread_mutex_unlock(&load_lock);
    if (loaded != BK_SUCCESS) {
        /* load_message is written once, before load_done, under the lock. */
        *result = bk_error(loaded, "%s: dense GEMM on CUDA needs cuBLASLt: %s", who, load_message);
        return NULL;
    }
    *result = BK_SUCCESS;
    return &bk_lt;
}

static const struct {
    bk_lt_status status;
    const char *name;
    BkResult result;
} statuses[] = {
    { BK_LT_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS", BK_SUCCESS },
    /* cuBLASLt could not start its CUDA runtime on this driver. */
    { BK_LT_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED", BK_ERROR_UNSUPPORTED },
    { BK_LT_STATUS_ALLOC_FAILED, "CUBLAS_STATUS_ALLOC_FAILED", BK_ERROR_OUT_OF_HOST_MEMORY },
    { BK_LT_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE", BK_ERROR_INVALID_ARGUMENT },
    { BK_LT_STATUS_ARCH_MISMATCH, "CUBLAS_STATUS_ARCH_MISMATCH", BK_ERROR_UNSUPPORTED },
    { BK_LT_STATUS_MAPPING_ERROR, "CUBLAS_STATUS_MAPPING_ERROR", BK_ERROR_DEVICE_LOST },
    /* A kernel failed to launch: as a failed launch of libbk's own. */
    { BK_LT_STATUS_EXECUTION_FAILED, "CUBLAS_STATUS_EXECUTION_FAILED", BK_ERROR_DEVICE_LOST },
    { BK_LT_STATUS_INTERNAL_ERROR, "CUBLAS_STATUS_INTERNAL_ERROR", BK_ERROR_DEVICE_LOST },
    { BK_LT_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED", BK_ERROR_UNSUPPORTED },
    { BK_LT_STATUS_LICENSE_ERROR, "CUBLAS_STATUS_LICENSE_ERROR", BK_ERROR_UNSUPPORTED },
};

static size_t status_index(bk_lt_status s)
{
    size_t i = 0, n = sizeof statuses / sizeof statuses[0];
    while (i < n && statuses[i].status != s)
        i++;
    return i;
}

const char *bk_lt_status_name(bk_lt_status s)
{
    size_t i = status_index(s);
    return i < sizeof statuses / sizeof statuses[0] ? statuses[i].name
                                                    : "CUBLAS_STATUS_UNRECOGNIZED";
}

BkResult bk_lt_result(bk_lt_status s)
{
    size_t i = status_index(s);
    return i < sizeof statuses / sizeof statuses[0] ? statuses[i].result : BK_ERROR_UNSUPPORTED;
}

BkResult bk_lt_error(bk_lt_status s, BkResult forced, const char *what, ...)
{
    char where[256];
    va_list ap;
    va_start(ap, what);
    vsnprintf(where, sizeof where, what, ap);
    va_end(ap);
    BkResult result = forced != BK_SUCCESS ? forced : bk_lt_result(s);
    if (status_index(s) >= sizeof statuses / sizeof statuses[0])
        return bk_error(result, "%s: CUBLAS_STATUS_UNRECOGNIZED (%d)", where, s);
    return bk_error(result, "%s: %s", where, bk_lt_status_name(s));
}

BkResult bk_cublaslt_handle(BkContext ctx, const struct bk_cublaslt *lt, bk_lt_handle *handle)
{
    struct bk_cuda_context *c = ctx->impl;
    bk_lt_status s = BK_LT_STATUS_SUCCESS;
    pthread_mutex_lock(&c->lock);
    if (!c->cublaslt) {
        bk_lt_handle h = NULL;
        s = lt->cublasLtCreate(&h);
        if (s == BK_LT_STATUS_SUCCESS)
            c->cublaslt = h;
    }
    *handle = c->cublaslt;
    pthread_mutex_unlock(&c->lock);
    if (s != BK_LT_STATUS_SUCCESS)
        return bk_lt_error(s, BK_SUCCESS, "bkCreatePlan: cublasLtCreate (cuBLASLt %zu.%zu.%zu)",
                           lt->version / 10000, lt->version / 100 % 100, lt->version % 100);
    return BK_SUCCESS;
}

void bk_cuda_cublaslt_destroy(struct bk_cuda_context *c)
{
    /* A handle exists only after a successful load. */
    if (c->cublaslt)
        (void)bk_lt.cublasLtDestroy(c->cublaslt);
    c->cublaslt = NULL;
}
