/* SPDX-License-Identifier: Apache-2.0 */
/* Loading the CUDA driver at run time, and turning its errors into
 * BkResults with messages. libbk never links against libcuda: the library
 * is opened with dlopen once per process, and every entry point comes from
 * cuGetProcAddress with the ABI of BK_CUDA_API_VERSION. */
#include "cuda_driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bk_cuda_driver bk_cu;

/* A mutex rather than pthread_once: every caller then synchronises with
 * the loader in a way helgrind and ThreadSanitizer both see, and this runs
 * only at enumeration and context creation, never per launch. */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static bool load_done;
static BkResult load_result;
static char load_message[512];

typedef CUresult (*get_proc_v2_fn)(const char *symbol, void **pfn, int version,
                                   unsigned long long flags, int *status);
typedef CUresult (*get_proc_v1_fn)(const char *symbol, void **pfn, int version,
                                   unsigned long long flags);

static void load_fail(BkResult result, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void load_fail(BkResult result, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(load_message, sizeof load_message, fmt, ap);
    va_end(ap);
    load_result = result;
}

static const char *error_name(CUresult r)
{
    const char *name = NULL;
    if (!bk_cu.cuGetErrorName || bk_cu.cuGetErrorName(r, &name) != BK_CUDA_SUCCESS || !name)
        return "CUDA_ERROR_UNRECOGNIZED";
    return name;
}

static const char *error_text(CUresult r)
{
    const char *text = NULL;
    if (!bk_cu.cuGetErrorString || bk_cu.cuGetErrorString(r, &text) != BK_CUDA_SUCCESS || !text)
        return "no description";
    return text;
}

static void load(void)
{
    const char *path = getenv("BK_CUDA_DRIVER");
    if (!path || !*path)
        path = "libcuda.so.1";
    /* The handle is kept for the life of the process: contexts, modules and
     * other libraries in the process may still use the driver at exit. */
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        load_fail(BK_ERROR_DRIVER_NOT_FOUND, "the CUDA driver %s cannot be loaded: %s", path,
                  why ? why : "unknown reason");
        return;
    }
    void *sym2 = dlsym(lib, "cuGetProcAddress_v2");
    void *sym1 = sym2 ? NULL : dlsym(lib, "cuGetProcAddress");
    get_proc_v2_fn get_proc_v2 = NULL;
    get_proc_v1_fn get_proc_v1 = NULL;
    /* dlsym returns object pointers; POSIX guarantees they convert. */
    memcpy(&get_proc_v2, &sym2, sizeof sym2);
    memcpy(&get_proc_v1, &sym1, sizeof sym1);
    if (!get_proc_v2 && !get_proc_v1) {
        load_fail(BK_ERROR_DRIVER_NOT_FOUND,
                  "the CUDA driver %s has no cuGetProcAddress: libbk needs a driver for CUDA "
                  "12.0 or newer", path);
        return;
    }

    static const struct {
        const char *name;
        size_t offset;
    } entries[] = {
#define BK_CUDA_ENTRY(name, params) { #name, offsetof(struct bk_cuda_driver, name) },
        BK_CUDA_DRIVER_FUNCTIONS(BK_CUDA_ENTRY)
#undef BK_CUDA_ENTRY
    };
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *fn = NULL;
        int status = 0;
        CUresult r = get_proc_v2
                         ? get_proc_v2(entries[i].name, &fn, BK_CUDA_API_VERSION,
                                       BK_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status)
                         : get_proc_v1(entries[i].name, &fn, BK_CUDA_API_VERSION,
                                       BK_CU_GET_PROC_ADDRESS_LEGACY_STREAM);
        if (r != BK_CUDA_SUCCESS || !fn) {
            load_fail(BK_ERROR_DRIVER_NOT_FOUND,
                      "the CUDA driver %s lacks %s (error %d, status %d): libbk needs a driver "
                      "for CUDA 12.0 or newer", path, entries[i].name, r, status);
            memset(&bk_cu, 0, sizeof bk_cu);
            return;
        }
        memcpy((char *)&bk_cu + entries[i].offset, &fn, sizeof fn);
    }

    int version = 0;
    CUresult r = bk_cu.cuDriverGetVersion(&version);
    if (r != BK_CUDA_SUCCESS || version < BK_CUDA_API_VERSION) {
        load_fail(BK_ERROR_DRIVER_NOT_FOUND,
                  "the CUDA driver %s is for CUDA %d.%d: libbk needs 12.0 or newer", path,
                  version / 1000, version % 1000 / 10);
        return;
    }
    bk_cu.version = version;

    r = bk_cu.cuInit(0);
    if (r != BK_CUDA_SUCCESS) {
        BkResult mapped = bk_cuda_result(r);
        if (mapped != BK_ERROR_DRIVER_NOT_FOUND)
            mapped = BK_ERROR_NO_DEVICE;
        load_fail(mapped, "cuInit: %s (%s)", error_name(r), error_text(r));
    }
}

const struct bk_cuda_driver *bk_cuda_driver(BkResult *result, bool report)
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
        *result = report ? bk_error(loaded, "%s", load_message) : loaded;
        return NULL;
    }
    *result = BK_SUCCESS;
    return &bk_cu;
}

BkResult bk_cuda_result(CUresult r)
{
    /* A stream-capture rule was broken (an imported stream that is being
     * captured, say): the work was refused, the device is fine. */
    if (r >= BK_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && r <= BK_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
        return BK_ERROR_INVALID_STATE;
    switch (r) {
    case BK_CUDA_SUCCESS:
        return BK_SUCCESS;
    case BK_CUDA_ERROR_OUT_OF_MEMORY:
        return BK_ERROR_OUT_OF_DEVICE_MEMORY;
    case BK_CUDA_ERROR_NO_DEVICE:
    case BK_CUDA_ERROR_INVALID_DEVICE:
        return BK_ERROR_NO_DEVICE;
    case BK_CUDA_ERROR_STUB_LIBRARY:
    case BK_CUDA_ERROR_INSUFFICIENT_DRIVER:
    case BK_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case BK_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
        return BK_ERROR_DRIVER_NOT_FOUND;
    case BK_CUDA_ERROR_INVALID_IMAGE:
    case BK_CUDA_ERROR_NO_BINARY_FOR_GPU:
    case BK_CUDA_ERROR_INVALID_PTX:
    case BK_CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case BK_CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case BK_CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case BK_CUDA_ERROR_INVALID_SOURCE:
    case BK_CUDA_ERROR_FILE_NOT_FOUND:
    case BK_CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND:
    case BK_CUDA_ERROR_SHARED_OBJECT_INIT_FAILED:
    case BK_CUDA_ERROR_NOT_FOUND:
        return BK_ERROR_MODULE_LOAD_FAILED;
    case BK_CUDA_ERROR_INVALID_VALUE:
    case BK_CUDA_ERROR_INVALID_HANDLE:
        return BK_ERROR_INVALID_ARGUMENT;
    default:
        /* Launch failures, illegal addresses, ECC and other sticky errors:
         * the context can no longer be used. */
        return BK_ERROR_DEVICE_LOST;
    }
}

BkResult bk_cuda_error(CUresult r, BkResult forced, const char *what, ...)
{
    char where[256];
    va_list ap;
    va_start(ap, what);
    vsnprintf(where, sizeof where, what, ap);
    va_end(ap);
    BkResult result = forced != BK_SUCCESS ? forced : bk_cuda_result(r);
    return bk_error(result, "%s: %s (%s)", where, error_name(r), error_text(r));
}
