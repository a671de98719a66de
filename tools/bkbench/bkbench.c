/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench: times libbk's ops on one device and rates them against the
 * device-to-device copy bandwidth measured in the same run (memory-bound
 * ops) or the device's peak and cuBLASLt (GEMMs), or in TFLOP/s over the
 * active blocks (block-sparse attention). See bkbench(1). Public
 * API only; GPU timing through CUDA events. */
#define _POSIX_C_SOURCE 200809L

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bk/bk.h>

#include "bench_attention.h"
#include "bench_case.h"
#include "bench_decode.h"
#include "bench_device.h"
#include "bench_gemm.h"
#include "bench_gemm_suite.h"
#include "bench_launch.h"
#include "bench_plot.h"
#include "bench_progress.h"
#include "bench_record.h"
#include "bench_run.h"
#include "bench_spread.h"
#include "bench_step.h"
#include "tool_common.h"

#define MIB (1024.0 * 1024.0)
#define MAX_SETS 64u
#define MIN_GPU_ROTATE (100ull << 20)   /* 2 x H100's 50 MiB L2 */
#define COPY_BYTES (256ull << 20)
#define QUICK_COPY_BYTES (16ull << 20)

/* The case families --op selects. */
enum {
    OP_GATED_FWD = 1u << 0,
    OP_GATED_BWD = 1u << 1,
    OP_GEMM = 1u << 2,
    OP_SPARSE24 = 1u << 3,
    OP_W4A16 = 1u << 4,
    OP_ATTENTION_FWD = 1u << 5,
    OP_ATTENTION_BWD = 1u << 6,
    OP_ATTENTION_DECODE = 1u << 7,
    OP_DECODE_STEP = 1u << 8,
    OP_CONVERT = 1u << 9,
    OP_ALL = OP_GATED_FWD | OP_GATED_BWD | OP_GEMM | OP_SPARSE24 | OP_W4A16 | OP_ATTENTION_FWD |
             OP_ATTENTION_BWD | OP_ATTENTION_DECODE | OP_DECODE_STEP | OP_CONVERT,
};

static const struct {
    const char *name;
    unsigned ops;
} op_names[] = {
    {"gated-fwd", OP_GATED_FWD}, {"gated-bwd", OP_GATED_BWD},
    {"gated", OP_GATED_FWD | OP_GATED_BWD}, {"gemm", OP_GEMM},
    {"sparse24", OP_SPARSE24}, {"w4a16", OP_W4A16}, {"attention-fwd", OP_ATTENTION_FWD},
    {"attention-bwd", OP_ATTENTION_BWD}, {"attention", OP_ATTENTION_FWD | OP_ATTENTION_BWD},
    {"attention-decode", OP_ATTENTION_DECODE}, {"decode-step", OP_DECODE_STEP},
    {"convert", OP_CONVERT}, {"all", OP_ALL},
};

struct options {
    BkDeviceType device_type;
    uint32_t device_index;
    bool quick, json, quiet;
    double size_mib;                  /* 0: the mode's default */
    int warmup, repeats;              /* -1: the mode's default */
    unsigned ops;                     /* OP_* bits */
    const char *kind, *dtype;         /* filters; NULL = all */
    const char *patterns;             /* attention patterns, "10%,window"; NULL = all */
    const char *shapes;               /* GEMM-family or attention shapes; NULL = all */
    const char *json_file;            /* also write the JSON here; NULL = no */
    const char *csv_file;             /* write the results as CSV here; NULL = no */
    const char *plot_file;            /* write an SVG chart here; NULL = no */
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bkbench [--device auto|host|cuda|cuda:N] [--quick] [--quiet] [--json]\n"
            "               [--json-file FILE] [--csv FILE] [--plot FILE.svg]\n"
            "               [--size-mib N] [--repeats N] [--warmup N]\n"
            "               [--op OP[,OP...]] [--kind KIND] [--dtype f32|f16|bf16|f64]\n"
            "               [--pattern full|50%%|25%%|10%%|window|causal|varlen|varlen-c[,...]]\n"
            "               [--shape MxNxK[,...]]\n"
            "OP: gated-fwd gated-bwd gated gemm sparse24 w4a16 attention-fwd attention-bwd\n"
            "    attention attention-decode decode-step convert all (default all).\n"
            "Times libbk's ops and rates them against the measured copy bandwidth, or\n"
            "GEMMs in TFLOP/s against the device's peak and cuBLASLt, or attention in\n"
            "TFLOP/s over its active blocks.\n");
}

static void usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "bkbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    usage(stderr);
    exit(TOOL_EXIT_USAGE);
}

static int parse_count(const char *s, const char *opt)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < 0 || v > 100000)
        usage_error("%s needs a count from 0 to 100000", opt);
    return (int)v;
}

static void parse_device(const char *s, struct options *o)
{
    o->device_index = 0;
    if (strcmp(s, "auto") == 0) {
        o->device_type = BK_DEVICE_TYPE_AUTO;
    } else if (strcmp(s, "host") == 0) {
        o->device_type = BK_DEVICE_TYPE_HOST;
    } else if (strncmp(s, "cuda", 4) == 0 && (s[4] == '\0' || s[4] == ':')) {
        o->device_type = BK_DEVICE_TYPE_CUDA;
        if (s[4] == ':')
            o->device_index = (uint32_t)parse_count(s + 5, "--device cuda:N");
    } else {
        usage_error("unknown device '%s'", s);
    }
}

/* A comma-separated list of op_names; adds to o->ops. */
static void parse_ops(const char *list, struct options *o)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    if (*list == '\0' || strlen(list) >= sizeof buf)
        usage_error("--op needs ops separated by commas, not '%s'", list);
    bool any = false;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < sizeof op_names / sizeof op_names[0] && strcmp(op_names[k].name, tok) != 0)
            k++;
        if (k == sizeof op_names / sizeof op_names[0])
            usage_error("unknown op '%s'", tok);
        o->ops |= op_names[k].ops;
        any = true;
    }
    if (!any)
        usage_error("--op needs ops separated by commas, not '%s'", list);
}

/* The attention patterns --pattern may name. */
static const char *const pattern_names[] = {"full",   "50%",    "25%",   "10%",
                                            "window", "causal", "varlen", "varlen-c"};

/* Whether name is in the comma-separated list. */
static bool in_list(const char *list, const char *name)
{
    const size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',')) {
        p += *p == ',';
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    }
    return false;
}

static void parse_patterns(const char *list)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", list);
    if (*list == '\0' || strlen(list) >= sizeof buf)
        usage_error("--pattern needs patterns separated by commas, not '%s'", list);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < sizeof pattern_names / sizeof pattern_names[0] &&
               strcmp(pattern_names[k], tok) != 0)
            k++;
        if (k == sizeof pattern_names / sizeof pattern_names[0])
            usage_error("unknown attention pattern '%s'", tok);
    }
}

static void parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){BK_DEVICE_TYPE_AUTO, 0, false, false, false, 0.0, -1, -1, 0, NULL,
                          NULL, NULL, NULL, NULL, NULL, NULL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *value = NULL;
        static const char *const with_value[] = {"--device", "--size-mib", "--repeats",
                                                 "--warmup", "--op",       "--kind",
                                                 "--dtype",  "--json-file", "--pattern",
                                                 "--csv",    "--shape",     "--plot"};
        char name[32];
        snprintf(name, sizeof name, "%s", a);
        char *eq = strchr(name, '=');
        if (eq)
            *eq = '\0';
        for (size_t k = 0; k < sizeof with_value / sizeof with_value[0]; k++) {
            if (strcmp(name, with_value[k]) != 0)
                continue;
            if (eq)
                value = strchr(a, '=') + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                usage_error("%s needs a value", name);
        }
        if (strcmp(a, "--quick") == 0) {
            o->quick = true;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--quiet") == 0) {
            o->quiet = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            exit(TOOL_EXIT_OK);
        } else if (strcmp(a, "--version") == 0) {
            uint32_t v = bkGetVersion();
            printf("bkbench (libbk) %u.%u.%u\n", BK_VERSION_GET_MAJOR(v),
                   BK_VERSION_GET_MINOR(v), BK_VERSION_GET_PATCH(v));
            exit(TOOL_EXIT_OK);
        } else if (strcmp(name, "--device") == 0) {
            parse_device(value, o);
        } else if (strcmp(name, "--size-mib") == 0) {
            char *end;
            o->size_mib = strtod(value, &end);
            if (*value == '\0' || *end != '\0' || !(o->size_mib > 0) || o->size_mib > 65536)
                usage_error("--size-mib needs a size in MiB, > 0 and <= 65536, not '%s'", value);
        } else if (strcmp(name, "--repeats") == 0) {
            o->repeats = parse_count(value, "--repeats");
            if (o->repeats == 0)
                usage_error("%s must be at least 1", "--repeats");
        } else if (strcmp(name, "--warmup") == 0) {
            o->warmup = parse_count(value, "--warmup");
        } else if (strcmp(name, "--op") == 0) {
            parse_ops(value, o);
        } else if (strcmp(name, "--json-file") == 0) {
            if (*value == '\0')
                usage_error("%s needs a file name", "--json-file");
            o->json_file = value;
        } else if (strcmp(name, "--csv") == 0) {
            if (*value == '\0')
                usage_error("%s needs a file name", "--csv");
            o->csv_file = value;
        } else if (strcmp(name, "--plot") == 0) {
            if (*value == '\0')
                usage_error("%s needs a file name", "--plot");
            o->plot_file = value;
        } else if (strcmp(name, "--kind") == 0) {
            BkGatedActivationKind k;
            o->kind = value;
            if (tool_parse_kind(value, &k) != 0)
                usage_error("unknown kind '%s'", value);
        } else if (strcmp(name, "--shape") == 0) {
            o->shapes = value;
        } else if (strcmp(name, "--pattern") == 0) {
            parse_patterns(value);
            o->patterns = value;
        } else if (strcmp(name, "--dtype") == 0) {
            BkDataType t;
            o->dtype = value;
            if (tool_parse_dtype(value, &t) != 0)
                usage_error("unknown dtype '%s'", value);
        } else {
            usage_error("unknown option '%s'", a);
        }
    }
    if (o->ops == 0)
        o->ops = OP_ALL;
}

/* What one run measures, from the mode and the options. */
struct plan_of_run {
    double size_mib;
    uint64_t copy_bytes;
    struct bench_settings bench;
    struct launch_settings launch;
    const char *timer;
};

static void choose_settings(const struct options *o, const struct bench_device *d,
                            struct plan_of_run *p)
{
    bool cuda = bench_device_is_cuda(d);
    if (o->quick) {
        p->size_mib = 1;
        p->bench = (struct bench_settings){1, 3, 0, MAX_SETS};
        p->launch = (struct launch_settings){200, 3, 5};
        p->copy_bytes = QUICK_COPY_BYTES;
    } else if (cuda) {
        p->size_mib = 256;
        p->bench = (struct bench_settings){5, 50, 2 * d->cache_bytes, MAX_SETS};
        if (p->bench.rotate_bytes < MIN_GPU_ROTATE)
            p->bench.rotate_bytes = MIN_GPU_ROTATE;
        p->launch = (struct launch_settings){5000, 20, 50};
        p->copy_bytes = COPY_BYTES;
    } else {
        p->size_mib = 64;
        p->bench = (struct bench_settings){2, 10, 2 * d->cache_bytes, MAX_SETS};
        p->launch = (struct launch_settings){2000, 10, 20};
        p->copy_bytes = COPY_BYTES;
    }
    if (o->size_mib > 0)
        p->size_mib = o->size_mib;
    if (o->warmup >= 0)
        p->bench.warmup = (uint32_t)o->warmup;
    if (o->repeats > 0)
        p->bench.repeats = (uint32_t)o->repeats;
    /* The copy is at least as large as one input, so it too misses cache. */
    uint64_t size_bytes = (uint64_t)(p->size_mib * MIB);
    if (!o->quick && p->copy_bytes < size_bytes)
        p->copy_bytes = size_bytes;
    /* The roof is memory's: the copy is past the last-level cache, even
     * with --quick. */
    if (p->copy_bytes < 2 * d->cache_bytes)
        p->copy_bytes = 2 * d->cache_bytes;
    p->timer = cuda ? "cuda-events" : "clock-monotonic";
}

/* Conversion cases have no kind, pattern or shape; --dtype keeps those
 * that convert from or to it. */
static bool keep_convert(const struct bench_case *c, const struct options *o)
{
    return (o->ops & OP_CONVERT) && !o->kind && !o->patterns && !o->shapes &&
           (!o->dtype || strcmp(o->dtype, tool_dtype_name(c->dtype)) == 0 ||
            strcmp(o->dtype, c->variant) == 0);
}

static bool keep_case(const struct bench_case *c, const struct options *o)
{
    unsigned op = strcmp(c->op, "gated-bwd") == 0 ? OP_GATED_BWD : OP_GATED_FWD;
    return (o->ops & op) && !o->patterns && !o->shapes &&
           (!o->kind || strcmp(o->kind, c->variant) == 0) &&
           (!o->dtype || strcmp(o->dtype, tool_dtype_name(c->dtype)) == 0);
}

/* GEMM-family cases have no kind: --kind leaves none of them, nor does
 * --pattern; --shape picks among them by their shape strings. */
static bool keep_gemm(unsigned op, BkDataType dtype, const char *shape, const struct options *o)
{
    return (o->ops & op) && !o->kind && !o->patterns &&
           (!o->dtype || strcmp(o->dtype, tool_dtype_name(dtype)) == 0) &&
           (!o->shapes || in_list(o->shapes, shape));
}

/* ---- Text output ---------------------------------------------------- */

static void print_header(const struct bench_device *d, const struct plan_of_run *p,
                         bool quick, double copy_gbs)
{
    const BkDeviceProperties *dp = &d->props;
    uint32_t v = bkGetVersion();
    printf("bkbench: libbk %u.%u.%u on %s %u: %s", BK_VERSION_GET_MAJOR(v),
           BK_VERSION_GET_MINOR(v), BK_VERSION_GET_PATCH(v),
           tool_device_type_name(dp->deviceType), dp->deviceIndex, dp->name);
    if (dp->deviceType == BK_DEVICE_TYPE_CUDA)
        printf(" (sm_%u%u, %u SMs)", dp->computeCapabilityMajor, dp->computeCapabilityMinor,
               dp->multiprocessorCount);
    printf("\n");
    printf("inputs %.4g MiB, median of %u after %u warm-up, timer %s, cache %.0f MiB%s\n",
           p->size_mib, p->bench.repeats, p->bench.warmup, p->timer,
           (double)d->cache_bytes / MIB, quick ? ", quick" : "");
    printf("copy bandwidth (bkCmdCopyMemory %.0f MiB, read + write): %.1f GB/s\n",
           (double)p->copy_bytes / MIB, copy_gbs);
    printf("roof: an op's bytes read + written per second over that copy bandwidth, the copy\n"
           "past the %.0f MiB last-level cache; %s\n", (double)d->cache_bytes / MIB,
           quick ? "with --quick the ops' inputs stay in the cache, so\n"
                   "a roof above 100% measures the cache, not memory"
                 : "each op rotates buffer sets past it too");
    if (dp->deviceType == BK_DEVICE_TYPE_HOST)
        printf("On the host the copy is one thread's memmove: an op whose traffic is not a "
               "copy's\n(more reads than writes) can pass 100%%.\n");
    printf("spread: the fastest and the slowest run against the median\n");
}

static void print_launch(const struct launch_result *l, const struct launch_settings *s)
{
    static const char *const what[LAUNCH_SHAPES] = { "", ", libbk's own work" };
    for (int i = 0; i < LAUNCH_SHAPES; i++) {
        const struct launch_shape_costs *c = &l->shape[i];
        printf("\nlaunch cost (gated-fwd %s %lldx%lld%s, CPU wall time):\n",
               tool_dtype_name(l->dtype), (long long)c->extent[0], (long long)c->extent[1],
               what[i]);
        printf("  one-time buffer, begin + bkCmdRun + end + submit: %8.2f us per plan "
               "(median of %u)\n", c->one_time_us, s->one_time_iterations);
        printf("  ... the same bindings each time:                  %8.2f us per plan "
               "(median of %u)\n", c->one_time_same_us, s->one_time_iterations);
        printf("  reusable buffer of %u plans, replay + wait:      %8.2f us per plan "
               "(median of %u x %u)\n", BENCH_LAUNCH_PLANS, c->replay_us_per_plan,
               s->replay_batches, s->replays_per_batch);
    }
}

/* ---- JSON output ---------------------------------------------------- */

/* Everything one run measured, for the JSON object. */
struct run_report {
    const struct bench_device *d;
    const struct plan_of_run *p;
    const struct options *o;
    double copy_gbs;
    const struct bench_case *cases;
    const struct bench_result *res;
    size_t n;
    const struct bench_case *conv;        /* the conversion cases */
    const struct bench_result *conv_res;
    size_t nconv;
    const struct launch_result *launch;   /* NULL: not measured */
    const struct gemm_suite *gemm;
    const struct attention_suite *attention;
    const struct decode_suite *decode;
    const struct step_suite *step;
};

static void print_json(const struct run_report *r)
{
    const BkDeviceProperties *dp = &r->d->props;
    const struct plan_of_run *p = r->p;
    uint32_t v = bkGetVersion();
    printf("{\n  \"tool\": \"bkbench\", \"libraryVersion\": \"%u.%u.%u\",\n",
           BK_VERSION_GET_MAJOR(v), BK_VERSION_GET_MINOR(v), BK_VERSION_GET_PATCH(v));
    printf("  \"device\": {\"type\": \"%s\", \"index\": %u, \"name\": ",
           tool_device_type_name(dp->deviceType), dp->deviceIndex);
    tool_json_string(stdout, dp->name);
    if (dp->deviceType == BK_DEVICE_TYPE_CUDA)
        printf(", \"computeCapability\": \"%u.%u\"", dp->computeCapabilityMajor,
               dp->computeCapabilityMinor);
    else
        printf(", \"computeCapability\": null");
    printf(", \"multiprocessors\": %u, \"cacheBytes\": %llu},\n", dp->multiprocessorCount,
           (unsigned long long)r->d->cache_bytes);
    printf("  \"settings\": {\"quick\": %s, \"sizeMiB\": %.6g, \"warmup\": %u, \"repeats\": %u, "
           "\"rotateBytes\": %llu, \"timer\": \"%s\"},\n",
           r->o->quick ? "true" : "false", p->size_mib, p->bench.warmup, p->bench.repeats,
           (unsigned long long)p->bench.rotate_bytes, p->timer);
    printf("  \"copy\": {\"bytes\": %llu, \"gbPerS\": %.6g, \"pastCache\": %s},\n",
           (unsigned long long)p->copy_bytes, r->copy_gbs,
           p->copy_bytes > r->d->cache_bytes ? "true" : "false");
    unsigned rows, wide;
    bench_noise_counts(&rows, &wide);
    printf("  \"noise\": {\"rows\": %u, \"wideRows\": %u, \"wideAbove\": %.6g},\n", rows, wide,
           BENCH_SPREAD_WIDE);
    struct rec w = rec_json(stdout);
    printf("  \"results\": ");
    bench_gated_records(&w, r->cases, r->res, r->n);
    printf(",\n  \"convert\": ");
    bench_convert_records(&w, r->conv, r->conv_res, r->nconv);
    printf(",\n");
    gemm_suite_print_json(r->gemm);
    printf(",\n  \"attention\": ");
    const struct attention_suite *a = r->attention;
    bench_attention_records(&w, a->cases, a->pattern, a->fwd, a->bwd, a->n);
    printf(",\n  \"attentionDecode\": ");
    bench_decode_records(&w, r->decode);
    printf(",\n  \"decodeStep\": ");
    bench_step_records(&w, r->step);
    printf(",\n");
    const struct launch_result *l = r->launch;
    if (!l) {
        printf("  \"launch\": null\n}\n");
        return;
    }
    /* The tiny shape's costs at the top level (as before), the minimal
     * one's under "minimal". */
    const struct launch_shape_costs *t = &l->shape[LAUNCH_TINY], *m = &l->shape[LAUNCH_MINIMAL];
    printf("  \"launch\": {\"op\": \"gated-fwd\", \"dtype\": \"%s\", \"shape\": [%lld, %lld], "
           "\"oneTimeUsPerPlan\": %.6g, \"oneTimeSameBindingsUsPerPlan\": %.6g, "
           "\"reusablePlans\": %u, \"reusableUsPerPlan\": %.6g, "
           "\"minimal\": {\"shape\": [%lld, %lld], \"oneTimeUsPerPlan\": %.6g, "
           "\"oneTimeSameBindingsUsPerPlan\": %.6g, \"reusableUsPerPlan\": %.6g}}\n}\n",
           tool_dtype_name(l->dtype), (long long)t->extent[0], (long long)t->extent[1],
           t->one_time_us, t->one_time_same_us, BENCH_LAUNCH_PLANS, t->replay_us_per_plan,
           (long long)m->extent[0], (long long)m->extent[1], m->one_time_us, m->one_time_same_us,
           m->replay_us_per_plan);
}

/* print_json into path instead of standard output. */
static void print_json_file(const char *path, const struct run_report *r)
{
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (saved < 0 || fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
        tool_die("--json-file %s: cannot write it", path);
    close(fd);
    print_json(r);
    bool failed = fflush(stdout) != 0 || ferror(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    clearerr(stdout);
    if (failed)
        tool_die("--json-file %s: write failed", path);
}

/* ---- CSV output ----------------------------------------------------- */

/* Every result record, in the JSON's order: "results" (gated),
 * "convert", "gemm", "sparse24", "w4a16", "attention", "attentionDecode",
 * "decodeStep". */
static void run_records(struct rec *w, const void *user)
{
    const struct run_report *r = user;
    const struct attention_suite *a = r->attention;
    bench_gated_records(w, r->cases, r->res, r->n);
    bench_convert_records(w, r->conv, r->conv_res, r->nconv);
    gemm_suite_records(w, r->gemm);
    bench_attention_records(w, a->cases, a->pattern, a->fwd, a->bwd, a->n);
    bench_decode_records(w, r->decode);
    bench_step_records(w, r->step);
}

static void print_csv_file(const char *path, const struct run_report *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        tool_die("--csv %s: cannot write it", path);
    bool failed = rec_write_csv(f, run_records, r) != 0;
    if (fclose(f) != 0 || failed)
        tool_die("--csv %s: write failed", path);
}

/* ---- main --------------------------------------------------------------- */

static bool gemm_filter(enum gemm_family family, BkDataType dtype, const char *shape,
                        const void *user)
{
    unsigned op = family == GEMM_FAMILY_SPARSE24 ? OP_SPARSE24
                  : family == GEMM_FAMILY_W4A16  ? OP_W4A16
                                                 : OP_GEMM;
    return keep_gemm(op, dtype, shape, user);
}

/* Attention cases have no kind either; --pattern and --shape (BxHxLxD,
 * BxHxLxD/Dv) pick among them. */
static bool attention_filter(const struct attention_case *c, bool backward, const void *user)
{
    const struct options *o = user;
    return (o->ops & (backward ? OP_ATTENTION_BWD : OP_ATTENTION_FWD)) && !o->kind &&
           (!o->shapes || in_list(o->shapes, c->shape)) &&
           (!o->dtype || strcmp(o->dtype, tool_dtype_name(c->dtype)) == 0) &&
           (!o->patterns || in_list(o->patterns, c->pattern));
}

/* Decode cases: --dtype picks among them; no kind, pattern or shape. */
static bool decode_filter(const struct decode_case *c, const void *user)
{
    const struct options *o = user;
    return (o->ops & OP_ATTENTION_DECODE) && !o->kind && !o->shapes && !o->patterns &&
           (!o->dtype || strcmp(o->dtype, tool_dtype_name(c->dtype)) == 0);
}

/* Decode steps: bf16 only, so --dtype bf16 or none keeps them. */
static bool step_filter(const struct step_case *c, const void *user)
{
    const struct options *o = user;
    return (o->ops & OP_DECODE_STEP) && !o->kind && !o->shapes && !o->patterns &&
           (!o->dtype || strcmp(o->dtype, tool_dtype_name(c->dtype)) == 0);
}

static enum attention_scale attention_scale(const struct options *o, const struct bench_device *d)
{
    if (o->quick)
        return ATTENTION_SCALE_QUICK;
    return bench_device_is_cuda(d) ? ATTENTION_SCALE_GPU : ATTENTION_SCALE_HOST;
}

static enum bench_gemm_scale gemm_scale(const struct options *o, const struct bench_device *d)
{
    if (o->quick)
        return BENCH_GEMM_QUICK;
    return bench_device_is_cuda(d) ? BENCH_GEMM_GPU : BENCH_GEMM_HOST;
}

int main(int argc, char **argv)
{
    struct options o;
    tool_name = "bkbench";
    parse_options(argc, argv, &o);

    /* Enough events for the largest --repeats. */
    uint32_t max_repeats = o.repeats > 50 ? (uint32_t)o.repeats : 50u;
    struct bench_device dev;
    /* x2: the GEMM cases time libbk and cuBLASLt run by run, alternating. */
    bench_device_open(&dev, o.device_type, o.device_index, 2 * max_repeats);

    struct plan_of_run p;
    choose_settings(&o, &dev, &p);

    size_t total = bench_gated_case_count();
    struct bench_case *cases = calloc(total, sizeof *cases);
    struct bench_result *results = calloc(total, sizeof *results);
    if (!cases || !results)
        tool_die("out of host memory");
    size_t n = 0;
    if (o.ops & (OP_GATED_FWD | OP_GATED_BWD)) {
        size_t made = bench_gated_cases((uint64_t)(p.size_mib * MIB), cases, total);
        for (size_t i = 0; i < made; i++)
            if (keep_case(&cases[i], &o))
                cases[n++] = cases[i];
    }
    size_t conv_total = bench_convert_case_count(), nconv = 0;
    struct bench_case *conv = calloc(conv_total, sizeof *conv);
    struct bench_result *conv_res = calloc(conv_total, sizeof *conv_res);
    if (!conv || !conv_res)
        tool_die("out of host memory");
    if (o.ops & OP_CONVERT) {
        size_t made = bench_convert_cases((uint64_t)(p.size_mib * MIB), conv, conv_total);
        for (size_t i = 0; i < made; i++)
            if (keep_convert(&conv[i], &o))
                conv[nconv++] = conv[i];
    }
    struct gemm_suite gemm;
    gemm_suite_open(&gemm, &dev, &p.bench, gemm_scale(&o, &dev), o.shapes, gemm_filter, &o);
    struct attention_suite attention;
    attention_suite_open(&attention, attention_scale(&o, &dev), &p.bench, attention_filter, &o);
    struct decode_suite decode;
    decode_suite_open(&decode, attention_scale(&o, &dev), &p.bench, decode_filter, &o);
    struct step_suite step;
    step_suite_open(&step, attention_scale(&o, &dev), &p.bench, step_filter, &o);
    if (n + nconv + gemm_suite_count(&gemm) + attention.n + decode.n + step.n == 0)
        tool_die("no case matches --op, --kind, --dtype, --pattern and --shape");

    size_t steps = n + nconv + gemm_suite_count(&gemm) + decode.n + step.n;
    for (size_t i = 0; i < attention.n; i++)
        steps += (size_t)attention.fwd[i].ran + attention.bwd[i].ran;
    bench_progress_start(steps, !o.quiet);

    double copy_gbs = bench_copy_bandwidth(&dev, p.copy_bytes, &p.bench);
    if (!o.json) {
        print_header(&dev, &p, o.quick, copy_gbs);
        if (n)
            bench_gated_print_header();
    }
    bench_run_cases(&dev, cases, n, &p.bench, copy_gbs, results,
                    o.json ? NULL : bench_gated_print_row, NULL);
    if (nconv && !o.json)
        bench_convert_print_header();
    bench_run_cases(&dev, conv, nconv, &p.bench, copy_gbs, conv_res,
                    o.json ? NULL : bench_convert_print_row, NULL);
    gemm_suite_run(&gemm, &dev, copy_gbs, o.json);
    attention_suite_run(&attention, &dev, o.json);
    decode_suite_run(&decode, &dev, copy_gbs, o.json);
    step_suite_run(&step, &dev, copy_gbs, o.json);

    /* Launch costs go with the gated cases (they time a gated plan). */
    struct launch_result launch;
    bool launched = n > 0;
    if (launched)
        bench_launch_costs(&dev, &p.launch, &launch);
    bench_progress_finish();
    struct run_report report = {&dev, &p, &o, copy_gbs, cases, results, n, conv, conv_res,
                                nconv, launched ? &launch : NULL, &gemm, &attention, &decode,
                                &step};
    if (o.json)
        print_json(&report);
    else if (launched)
        print_launch(&launch, &p.launch);
    bench_noise_warn(o.json ? stderr : stdout);
    if (o.json_file)
        print_json_file(o.json_file, &report);
    if (o.csv_file)
        print_csv_file(o.csv_file, &report);
    if (o.plot_file) {
        char title[320];
        snprintf(title, sizeof title, "bkbench: libbk on %s %u: %s%s",
                 tool_device_type_name(dev.props.deviceType), dev.props.deviceIndex,
                 dev.props.name, o.quick ? " (quick)" : "");
        if (bench_plot_write(o.plot_file, title, run_records, &report) < 0)
            tool_die("--plot %s: cannot write it", o.plot_file);
    }

    /* Every op is meant to exist on every backend: a gap fails the run. */
    size_t unsupported = 0;
    for (size_t i = 0; i < n; i++) {
        if (results[i].supported)
            continue;
        unsupported++;
        fprintf(stderr, "bkbench: %s %s %s %s: unsupported: %s\n", cases[i].op,
                cases[i].variant, tool_dtype_name(cases[i].dtype), cases[i].shape,
                results[i].message);
    }
    for (size_t i = 0; i < nconv; i++) {
        if (conv_res[i].supported)
            continue;
        unsupported++;
        fprintf(stderr, "bkbench: convert %s -> %s %s: unsupported: %s\n",
                tool_dtype_name(conv[i].dtype), conv[i].variant, conv[i].shape,
                conv_res[i].message);
    }
    unsupported += gemm_suite_report_failures(&gemm);
    unsupported += attention_suite_report_failures(&attention);
    unsupported += decode_suite_report_failures(&decode);
    unsupported += step_suite_report_failures(&step);
    step_suite_close(&step);
    decode_suite_close(&decode);
    attention_suite_close(&attention);
    gemm_suite_close(&gemm);
    bench_device_close(&dev);
    free(conv_res);
    free(conv);
    free(results);
    free(cases);
    return unsupported ? TOOL_EXIT_ERROR : TOOL_EXIT_OK;
}
