/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by bkinfo and bkbench. */
#define _POSIX_C_SOURCE 200809L

#include "tool_common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *tool_name = "bktool";

struct name_entry {
    int value;
    const char *name;
};

static const struct name_entry dtype_names[] = {
    {BK_DATA_TYPE_F32, "f32"}, {BK_DATA_TYPE_F16, "f16"}, {BK_DATA_TYPE_BF16, "bf16"},
    {BK_DATA_TYPE_F64, "f64"}, {BK_DATA_TYPE_I32, "i32"}, {BK_DATA_TYPE_U16, "u16"},
    {BK_DATA_TYPE_U8, "u8"},   {BK_DATA_TYPE_I8, "i8"},   {BK_DATA_TYPE_U32, "u32"},
};

static const struct name_entry kind_names[] = {
    {BK_GATED_ACTIVATION_GLU, "glu"},
    {BK_GATED_ACTIVATION_REGLU, "reglu"},
    {BK_GATED_ACTIVATION_SWIGLU, "swiglu"},
    {BK_GATED_ACTIVATION_GEGLU, "geglu"},
    {BK_GATED_ACTIVATION_GEGLU_TANH, "geglu-tanh"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup_name(const struct name_entry *t, size_t n, int value)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].value == value)
            return t[i].name;
    return "?";
}

static int lookup_value(const struct name_entry *t, size_t n, const char *name, int *value)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t[i].name, name) == 0) {
            *value = t[i].value;
            return 0;
        }
    }
    return -1;
}

const char *tool_dtype_name(BkDataType type)
{
    return lookup_name(dtype_names, COUNT(dtype_names), (int)type);
}

const char *tool_kind_name(BkGatedActivationKind kind)
{
    return lookup_name(kind_names, COUNT(kind_names), (int)kind);
}

const char *tool_device_type_name(BkDeviceType type)
{
    switch (type) {
    case BK_DEVICE_TYPE_HOST: return "host";
    case BK_DEVICE_TYPE_CUDA: return "cuda";
    case BK_DEVICE_TYPE_AUTO: return "auto";
    default: return "?";
    }
}

size_t tool_dtype_size(BkDataType type)
{
    switch (type) {
    case BK_DATA_TYPE_F64: return 8;
    case BK_DATA_TYPE_F32: case BK_DATA_TYPE_I32: case BK_DATA_TYPE_U32: return 4;
    case BK_DATA_TYPE_F16: case BK_DATA_TYPE_BF16: case BK_DATA_TYPE_U16: return 2;
    case BK_DATA_TYPE_U8: case BK_DATA_TYPE_I8: return 1;
    default: return 0;
    }
}

int tool_parse_dtype(const char *s, BkDataType *out)
{
    int v;
    if (lookup_value(dtype_names, COUNT(dtype_names), s, &v) != 0)
        return -1;
    *out = (BkDataType)v;
    return 0;
}

int tool_parse_kind(const char *s, BkGatedActivationKind *out)
{
    int v;
    if (lookup_value(kind_names, COUNT(kind_names), s, &v) != 0)
        return -1;
    *out = (BkGatedActivationKind)v;
    return 0;
}

void tool_check(BkResult result, const char *what)
{
    if (result >= 0)
        return;
    const char *msg = bkGetLastErrorMessage();
    fprintf(stderr, "%s: %s: %s: %s\n", tool_name, what, bkResultString(result),
            msg && *msg ? msg : "(no message)");
    exit(TOOL_EXIT_ERROR);
}

void tool_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", tool_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(TOOL_EXIT_ERROR);
}

const char *tool_cuda_version(uint32_t version, char *buf, size_t size)
{
    if (version == 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%u.%u", version / 1000u, (version % 1000u) / 10u);
    return buf;
}

void tool_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

double tool_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tool_median(double *v, uint32_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
