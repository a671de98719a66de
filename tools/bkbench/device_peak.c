/* SPDX-License-Identifier: Apache-2.0 */
/* Peak table of bkbench. Figures are NVIDIA's dense (not 2:4 sparse)
 * tensor-core peaks at the boost clock. */
#include "device_peak.h"

#include <string.h>

struct peak_entry {
    const char *model;                /* what bkbench prints */
    const char *has, *also_has;       /* the name must contain both (NULL: no second) */
    const char *lacks;                /* ... and not this (NULL: nothing) */
    unsigned sms;                     /* multiprocessors */
    double f16, bf16, tf32, f64;      /* dense TFLOP/s */
};

/* H100 SXM is "NVIDIA H100 80GB HBM3"; the PCIe (114 SMs) and NVL cards
 * (lower clocks) differ and are left out, as is the H200 NVL. */
static const struct peak_entry peaks[] = {
    {"H100 SXM", "H100", "HBM3", "NVL", 132, 989.4, 989.4, 494.7, 66.9},
    {"H200 SXM", "H200", NULL, "NVL", 132, 989.4, 989.4, 494.7, 66.9},
};

static const struct peak_entry *lookup(const BkDeviceProperties *p)
{
    if (p->deviceType != BK_DEVICE_TYPE_CUDA)
        return NULL;
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++) {
        const struct peak_entry *e = &peaks[i];
        if (strstr(p->name, e->has) && (!e->also_has || strstr(p->name, e->also_has)) &&
            (!e->lacks || !strstr(p->name, e->lacks)) && p->multiprocessorCount == e->sms)
            return e;
    }
    return NULL;
}

const char *device_peak_model(const BkDeviceProperties *p)
{
    const struct peak_entry *e = lookup(p);
    return e ? e->model : NULL;
}

double device_peak_tflops(const BkDeviceProperties *p, BkDataType dtype, bool tf32)
{
    const struct peak_entry *e = lookup(p);
    if (!e)
        return 0.0;
    switch (dtype) {
    case BK_DATA_TYPE_F16: return e->f16;
    case BK_DATA_TYPE_BF16: return e->bf16;
    case BK_DATA_TYPE_F32: return tf32 ? e->tf32 : 0.0;
    case BK_DATA_TYPE_F64: return e->f64;
    default: return 0.0;
    }
}
