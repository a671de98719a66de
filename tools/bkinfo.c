/* bkinfo: lists libbk's devices and, for each, which (op, kind, dtype)
 * combinations it can plan. See bkinfo(1). Public API only. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bk/bk.h>

#include "gated_op.h"
#include "tool_common.h"

#define OP_COUNT 2u
#define CELL_COUNT (OP_COUNT * GATED_KIND_COUNT * GATED_DTYPE_COUNT)

/* One try of bkCreatePlan. */
struct cell {
    bool backward;
    BkGatedActivationKind kind;
    BkDataType dtype;
    BkResult result;
    char kernel[BK_MAX_KERNEL_NAME_SIZE];
    char message[256];                /* the error message when it failed */
};

struct device_report {
    BkDeviceProperties props;
    BkDeviceModuleProperties modules; /* GPU code libbk carries for it */
    BkResult context_result;          /* of bkCreateContext */
    char context_message[256];
    struct cell cells[CELL_COUNT];
};

static void usage(FILE *f)
{
    fprintf(f, "usage: bkinfo [--json] [--help] [--version]\n"
               "Lists libbk devices and the ops each one supports.\n");
}

static void copy_message(char *dst, size_t size)
{
    const char *m = bkGetLastErrorMessage();
    snprintf(dst, size, "%s", m ? m : "");
}

/* Plans one small problem; the result tells the support. */
static void try_plan(BkContext ctx, struct cell *c)
{
    struct gated_op_desc d = {c->backward, c->kind, c->dtype, 4, 8, 0};
    union gated_op_info info;
    BkPlanCreateInfo ci = {BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, NULL, NULL, 0};
    BkPlan plan = BK_NULL_HANDLE;

    ci.pOperation = gated_op_build(&d, &info);
    c->result = bkCreatePlan(ctx, &ci, NULL, &plan);
    c->kernel[0] = '\0';
    c->message[0] = '\0';
    if (c->result < 0) {
        copy_message(c->message, sizeof c->message);
        return;
    }
    BkPlanProperties pp;
    memset(&pp, 0, sizeof pp);
    pp.sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES;
    c->result = bkGetPlanProperties(plan, &pp);
    if (c->result < 0)
        copy_message(c->message, sizeof c->message);
    else
        snprintf(c->kernel, sizeof c->kernel, "%s", pp.kernelName);
    bkDestroyPlan(plan);
}

static void probe_device(struct device_report *r)
{
    BkContextCreateInfo ci = {BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, NULL,
                              r->props.deviceType, r->props.deviceIndex, BK_HEADER_VERSION, 0};
    BkContext ctx = BK_NULL_HANDLE;

    r->context_result = bkCreateContext(&ci, NULL, &ctx);
    r->context_message[0] = '\0';
    if (r->context_result < 0) {
        copy_message(r->context_message, sizeof r->context_message);
        return;
    }
    uint32_t n = 0;
    for (uint32_t op = 0; op < OP_COUNT; op++)
        for (uint32_t k = 0; k < GATED_KIND_COUNT; k++)
            for (uint32_t t = 0; t < GATED_DTYPE_COUNT; t++, n++) {
                struct cell *c = &r->cells[n];
                c->backward = op == 1;
                c->kind = gated_kinds[k];
                c->dtype = gated_dtypes[t];
                try_plan(ctx, c);
            }
    bkDestroyContext(ctx);
}

/* "ok", "unsupported" or the error name. */
static const char *cell_status(const struct cell *c)
{
    if (c->result >= 0)
        return "ok";
    if (c->result == BK_ERROR_UNSUPPORTED)
        return "unsupported";
    return bkResultString(c->result);
}

static bool report_failed(const struct device_report *r)
{
    if (r->context_result < 0)
        return true;
    for (uint32_t i = 0; i < CELL_COUNT; i++)
        if (r->cells[i].result < 0 && r->cells[i].result != BK_ERROR_UNSUPPORTED)
            return true;
    return false;
}

static void version_string(uint32_t v, char *buf, size_t size)
{
    snprintf(buf, size, "%u.%u.%u", BK_VERSION_GET_MAJOR(v), BK_VERSION_GET_MINOR(v),
             BK_VERSION_GET_PATCH(v));
}

/* "80 86 90", or "-" for an empty list. */
static void arch_list(const uint32_t *archs, uint32_t count, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < count && used < size; i++) {
        int w = snprintf(buf + used, size - used, "%s%u", i ? " " : "", archs[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (count == 0)
        snprintf(buf, size, "-");
}

static void json_arch_array(const uint32_t *archs, uint32_t count)
{
    printf("[");
    for (uint32_t i = 0; i < count; i++)
        printf("%s%u", i ? ", " : "", archs[i]);
    printf("]");
}

/* A matrix column, padded unless it ends the line. */
static void print_column(const char *text, bool last)
{
    if (last)
        printf(" %s\n", text);
    else
        printf(" %-12s", text);
}

static void print_text(const struct device_report *reps, uint32_t count)
{
    char lib[32], hdr[32], drv[16], rt[16], cc[16];
    version_string(bkGetVersion(), lib, sizeof lib);
    version_string(BK_HEADER_VERSION, hdr, sizeof hdr);
    printf("libbk %s (headers %s)\n\n", lib, hdr);

    printf("devices:\n");
    printf("  %-5s %-3s  %-30s %-5s %5s %10s %7s %6s %6s\n", "type", "idx", "name", "cc", "SMs",
           "memory", "driver", "cuda", "queues");
    for (uint32_t i = 0; i < count; i++) {
        const BkDeviceProperties *p = &reps[i].props;
        if (p->deviceType == BK_DEVICE_TYPE_CUDA)
            snprintf(cc, sizeof cc, "%u.%u", p->computeCapabilityMajor,
                     p->computeCapabilityMinor);
        else
            snprintf(cc, sizeof cc, "-");
        printf("  %-5s %-3u  %-30.30s %-5s %5u %6.1f GiB %7s %6s %6u\n",
               tool_device_type_name(p->deviceType), p->deviceIndex, p->name, cc,
               p->multiprocessorCount, (double)p->totalMemory / (1024.0 * 1024.0 * 1024.0),
               tool_cuda_version(p->driverVersion, drv, sizeof drv),
               tool_cuda_version(p->runtimeVersion, rt, sizeof rt), p->queueCount);
    }

    printf("\nembedded GPU code:\n");
    printf("  %-5s %-3s  %-24s %-24s %s\n", "type", "idx", "cubin (sm)", "PTX (compute)",
           "device");
    for (uint32_t i = 0; i < count; i++) {
        const BkDeviceModuleProperties *m = &reps[i].modules;
        char bin[128], ptx[128];
        arch_list(m->binaryArchitectures, m->binaryArchitectureCount, bin, sizeof bin);
        arch_list(m->ptxArchitectures, m->ptxArchitectureCount, ptx, sizeof ptx);
        printf("  %-5s %-3u  %-24s %-24s %s\n", tool_device_type_name(reps[i].props.deviceType),
               reps[i].props.deviceIndex, bin, ptx,
               m->deviceSupported ? "supported" : "not supported");
    }

    for (uint32_t i = 0; i < count; i++) {
        const struct device_report *r = &reps[i];
        printf("\nsupport (bkCreatePlan) on %s %u:\n", tool_device_type_name(r->props.deviceType),
               r->props.deviceIndex);
        if (r->context_result < 0) {
            printf("  no context: %s: %s\n", bkResultString(r->context_result),
                   r->context_message);
            continue;
        }
        printf("  %-10s %-11s", "op", "kind");
        for (uint32_t t = 0; t < GATED_DTYPE_COUNT; t++)
            print_column(tool_dtype_name(gated_dtypes[t]), t + 1 == GATED_DTYPE_COUNT);
        for (uint32_t row = 0; row < OP_COUNT * GATED_KIND_COUNT; row++) {
            const struct cell *c = &r->cells[row * GATED_DTYPE_COUNT];
            printf("  %-10s %-11s", gated_op_name(c->backward), tool_kind_name(c->kind));
            for (uint32_t t = 0; t < GATED_DTYPE_COUNT; t++)
                print_column(cell_status(&c[t]), t + 1 == GATED_DTYPE_COUNT);
        }
    }
}

static void json_version(const char *key, uint32_t v, bool last)
{
    char buf[16];
    printf("\"%s\": ", key);
    if (v == 0)
        printf("null");
    else
        tool_json_string(stdout, tool_cuda_version(v, buf, sizeof buf));
    printf("%s", last ? "" : ", ");
}

static void print_json(const struct device_report *reps, uint32_t count)
{
    char lib[32], hdr[32];
    version_string(bkGetVersion(), lib, sizeof lib);
    version_string(BK_HEADER_VERSION, hdr, sizeof hdr);
    printf("{\n  \"library\": {\"version\": \"%s\", \"headerVersion\": \"%s\"},\n", lib, hdr);
    printf("  \"devices\": [");
    for (uint32_t i = 0; i < count; i++) {
        const struct device_report *r = &reps[i];
        const BkDeviceProperties *p = &r->props;
        bool cuda = p->deviceType == BK_DEVICE_TYPE_CUDA;
        printf("%s\n    {\"type\": \"%s\", \"index\": %u, \"name\": ", i ? "," : "",
               tool_device_type_name(p->deviceType), p->deviceIndex);
        tool_json_string(stdout, p->name);
        if (cuda)
            printf(", \"computeCapability\": \"%u.%u\"", p->computeCapabilityMajor,
                   p->computeCapabilityMinor);
        else
            printf(", \"computeCapability\": null");
        printf(", \"multiprocessors\": %u, \"queues\": %u, \"totalMemory\": %llu, ",
               p->multiprocessorCount, p->queueCount, (unsigned long long)p->totalMemory);
        json_version("driverVersion", p->driverVersion, false);
        json_version("cudaVersion", p->runtimeVersion, false);
        const BkDeviceModuleProperties *m = &r->modules;
        printf("\"moduleArchitectures\": {\"binary\": ");
        json_arch_array(m->binaryArchitectures, m->binaryArchitectureCount);
        printf(", \"ptx\": ");
        json_arch_array(m->ptxArchitectures, m->ptxArchitectureCount);
        printf(", \"deviceSupported\": %s},\n     \"context\": ",
               m->deviceSupported ? "true" : "false");
        if (r->context_result < 0) {
            printf("{\"status\": \"%s\", \"message\": ", bkResultString(r->context_result));
            tool_json_string(stdout, r->context_message);
            printf("}, \"support\": []}");
            continue;
        }
        printf("{\"status\": \"ok\"}, \"support\": [");
        for (uint32_t n = 0; n < CELL_COUNT; n++) {
            const struct cell *c = &r->cells[n];
            printf("%s\n      {\"op\": \"%s\", \"kind\": \"%s\", \"dtype\": \"%s\", "
                   "\"status\": \"%s\"",
                   n ? "," : "", gated_op_name(c->backward), tool_kind_name(c->kind),
                   tool_dtype_name(c->dtype), cell_status(c));
            if (c->result >= 0) {
                printf(", \"kernel\": ");
                tool_json_string(stdout, c->kernel);
            } else {
                printf(", \"message\": ");
                tool_json_string(stdout, c->message);
            }
            printf("}");
        }
        printf("\n    ]}");
    }
    printf("\n  ]\n}\n");
}

int main(int argc, char **argv)
{
    bool json = false;
    tool_name = "bkinfo";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return TOOL_EXIT_OK;
        } else if (strcmp(argv[i], "--version") == 0) {
            uint32_t v = bkGetVersion();
            printf("bkinfo (libbk) %u.%u.%u\n", BK_VERSION_GET_MAJOR(v), BK_VERSION_GET_MINOR(v),
                   BK_VERSION_GET_PATCH(v));
            return TOOL_EXIT_OK;
        } else {
            fprintf(stderr, "bkinfo: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return TOOL_EXIT_USAGE;
        }
    }

    uint32_t count = 0;
    tool_check(bkEnumerateDevices(&count, NULL), "bkEnumerateDevices");
    struct device_report *reps = calloc(count ? count : 1, sizeof *reps);
    BkDeviceProperties *props = calloc(count ? count : 1, sizeof *props);
    if (!reps || !props)
        tool_die("out of memory");
    for (uint32_t i = 0; i < count; i++) {
        props[i].sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        props[i].pNext = &reps[i].modules;
        reps[i].modules.sType = BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    }
    BkResult r = bkEnumerateDevices(&count, props);
    tool_check(r, "bkEnumerateDevices");

    for (uint32_t i = 0; i < count; i++) {
        reps[i].props = props[i];
        reps[i].props.pNext = NULL;
        probe_device(&reps[i]);
    }
    if (json)
        print_json(reps, count);
    else
        print_text(reps, count);

    /* Errors other than "unsupported" also go to stderr and the status. */
    int status = TOOL_EXIT_OK;
    for (uint32_t i = 0; i < count; i++) {
        if (!report_failed(&reps[i]))
            continue;
        status = TOOL_EXIT_ERROR;
        const struct device_report *d = &reps[i];
        if (d->context_result < 0)
            fprintf(stderr, "bkinfo: bkCreateContext(%s %u): %s: %s\n",
                    tool_device_type_name(d->props.deviceType), d->props.deviceIndex,
                    bkResultString(d->context_result), d->context_message);
        for (uint32_t n = 0; d->context_result >= 0 && n < CELL_COUNT; n++) {
            const struct cell *c = &d->cells[n];
            if (c->result < 0 && c->result != BK_ERROR_UNSUPPORTED)
                fprintf(stderr, "bkinfo: bkCreatePlan(%s %s %s) on %s %u: %s: %s\n",
                        gated_op_name(c->backward), tool_kind_name(c->kind),
                        tool_dtype_name(c->dtype), tool_device_type_name(d->props.deviceType),
                        d->props.deviceIndex, bkResultString(c->result), c->message);
        }
    }
    if (r == BK_INCOMPLETE)
        fprintf(stderr, "bkinfo: device list changed while enumerating\n");
    free(props);
    free(reps);
    return status;
}
