/* SPDX-License-Identifier: Apache-2.0 */
/* GPU timing through the CUDA driver API, loaded with dlopen. Only the few
 * types and entry points needed are declared here; cuda.h is not used, so
 * the tools build and run on machines without CUDA. */
#include "cuda_timing.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;            /* CUDA_SUCCESS = 0 */
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    CU_STREAM_NON_BLOCKING = 0x1,
    CU_EVENT_DEFAULT = 0x0,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
};

struct cuda_api {
    CUresult (*Init)(unsigned int flags);
    CUresult (*DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (*DeviceGetAttribute)(int *value, int attribute, CUdevice dev);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice dev);
    CUresult (*CtxSetCurrent)(CUcontext ctx);
    CUresult (*CtxSynchronize)(void);
    CUresult (*StreamCreate)(CUstream *stream, unsigned int flags);
    CUresult (*StreamDestroy)(CUstream stream);
    CUresult (*EventCreate)(CUevent *event, unsigned int flags);
    CUresult (*EventRecord)(CUevent event, CUstream stream);
    CUresult (*EventSynchronize)(CUevent event);
    CUresult (*EventElapsedTime)(float *ms, CUevent start, CUevent end);
    CUresult (*EventDestroy)(CUevent event);
    CUresult (*GetErrorName)(CUresult error, const char **name);
};

/* Entry points by exported name; the versioned name (what cuda.h maps the
 * plain name to) is tried first, the plain one as a fallback. */
static const struct {
    const char *name, *fallback;
    size_t offset;
} symbols[] = {
    {"cuInit", NULL, offsetof(struct cuda_api, Init)},
    {"cuDeviceGet", NULL, offsetof(struct cuda_api, DeviceGet)},
    {"cuDeviceGetAttribute", NULL, offsetof(struct cuda_api, DeviceGetAttribute)},
    {"cuDevicePrimaryCtxRetain", NULL, offsetof(struct cuda_api, DevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease",
     offsetof(struct cuda_api, DevicePrimaryCtxRelease)},
    {"cuCtxSetCurrent", NULL, offsetof(struct cuda_api, CtxSetCurrent)},
    {"cuCtxSynchronize", NULL, offsetof(struct cuda_api, CtxSynchronize)},
    {"cuStreamCreate", NULL, offsetof(struct cuda_api, StreamCreate)},
    {"cuStreamDestroy_v2", "cuStreamDestroy", offsetof(struct cuda_api, StreamDestroy)},
    {"cuEventCreate", NULL, offsetof(struct cuda_api, EventCreate)},
    {"cuEventRecord", NULL, offsetof(struct cuda_api, EventRecord)},
    {"cuEventSynchronize", NULL, offsetof(struct cuda_api, EventSynchronize)},
    {"cuEventElapsedTime_v2", "cuEventElapsedTime", offsetof(struct cuda_api, EventElapsedTime)},
    {"cuEventDestroy_v2", "cuEventDestroy", offsetof(struct cuda_api, EventDestroy)},
    {"cuGetErrorName", NULL, offsetof(struct cuda_api, GetErrorName)},
};

struct cuda_timing {
    void *lib;
    struct cuda_api api;
    CUdevice dev;
    CUcontext ctx;                /* the primary context */
    bool retained;                /* the primary context is ours to release */
    CUstream stream;
    uint32_t event_count;
    CUevent *events;
};

static void driver_error(struct cuda_timing *t, CUresult r, const char *what, char *err,
                         size_t size)
{
    const char *name = NULL;
    if (!t->api.GetErrorName || t->api.GetErrorName(r, &name) != 0 || !name)
        name = "unknown error";
    snprintf(err, size, "%s failed: %s (%d)", what, name, r);
}

static int load_symbols(struct cuda_timing *t, char *err, size_t size)
{
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        void *sym = dlsym(t->lib, symbols[i].name);
        if (!sym && symbols[i].fallback)
            sym = dlsym(t->lib, symbols[i].fallback);
        if (!sym) {
            snprintf(err, size, "libcuda.so.1 lacks %s", symbols[i].name);
            return -1;
        }
        /* POSIX guarantees object and function pointers convert. */
        memcpy((char *)&t->api + symbols[i].offset, &sym, sizeof sym);
    }
    return 0;
}

#define CALL(t, expr, what)                                   \
    do {                                                      \
        CUresult r_ = (expr);                                 \
        if (r_ != 0) {                                        \
            driver_error((t), r_, (what), err, err_size);     \
            return -1;                                        \
        }                                                     \
    } while (0)

static int setup(struct cuda_timing *t, int ordinal, char *err, size_t err_size)
{
    t->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!t->lib) {
        snprintf(err, err_size, "cannot load libcuda.so.1: %s", dlerror());
        return -1;
    }
    if (load_symbols(t, err, err_size) != 0)
        return -1;
    CALL(t, t->api.Init(0), "cuInit");
    CALL(t, t->api.DeviceGet(&t->dev, ordinal), "cuDeviceGet");
    CALL(t, t->api.DevicePrimaryCtxRetain(&t->ctx, t->dev), "cuDevicePrimaryCtxRetain");
    t->retained = true;
    CALL(t, t->api.CtxSetCurrent(t->ctx), "cuCtxSetCurrent");
    CALL(t, t->api.StreamCreate(&t->stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    t->events = calloc(t->event_count, sizeof *t->events);
    if (!t->events) {
        snprintf(err, err_size, "out of host memory");
        return -1;
    }
    for (uint32_t i = 0; i < t->event_count; i++)
        CALL(t, t->api.EventCreate(&t->events[i], CU_EVENT_DEFAULT), "cuEventCreate");
    return 0;
}

struct cuda_timing *cuda_timing_open(int ordinal, uint32_t event_count, char *err,
                                     size_t err_size)
{
    struct cuda_timing *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, err_size, "out of host memory");
        return NULL;
    }
    t->event_count = event_count;
    if (setup(t, ordinal, err, err_size) != 0) {
        cuda_timing_close(t);
        return NULL;
    }
    return t;
}

void cuda_timing_close(struct cuda_timing *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; t->events && i < t->event_count; i++)
        if (t->events[i])
            t->api.EventDestroy(t->events[i]);
    free(t->events);
    if (t->stream)
        t->api.StreamDestroy(t->stream);
    if (t->retained)
        t->api.DevicePrimaryCtxRelease(t->dev);
    /* libcuda stays loaded: libbk holds it too, and unloading a driver
     * library in a running process is never worth the risk. */
    free(t);
}

void *cuda_timing_stream(struct cuda_timing *t)
{
    return t->stream;
}

uint64_t cuda_timing_l2_bytes(struct cuda_timing *t)
{
    int v = 0;
    if (t->api.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, t->dev) != 0 || v < 0)
        return 0;
    return (uint64_t)v;
}

int cuda_timing_record(struct cuda_timing *t, uint32_t event, char *err, size_t err_size)
{
    CALL(t, t->api.EventRecord(t->events[event], t->stream), "cuEventRecord");
    return 0;
}

int cuda_timing_wait(struct cuda_timing *t, uint32_t event, char *err, size_t err_size)
{
    CALL(t, t->api.EventSynchronize(t->events[event]), "cuEventSynchronize");
    return 0;
}

int cuda_timing_elapsed(struct cuda_timing *t, uint32_t from, uint32_t to, double *ms,
                        char *err, size_t err_size)
{
    float f = 0.0f;
    CALL(t, t->api.EventElapsedTime(&f, t->events[from], t->events[to]), "cuEventElapsedTime");
    *ms = (double)f;
    return 0;
}

int cuda_timing_make_current(struct cuda_timing *t, char *err, size_t err_size)
{
    CALL(t, t->api.CtxSetCurrent(t->ctx), "cuCtxSetCurrent");
    return 0;
}

int cuda_timing_sync_context(struct cuda_timing *t, char *err, size_t err_size)
{
    /* libbk may have changed this thread's current context. */
    CALL(t, t->api.CtxSetCurrent(t->ctx), "cuCtxSetCurrent");
    CALL(t, t->api.CtxSynchronize(), "cuCtxSynchronize");
    return 0;
}
