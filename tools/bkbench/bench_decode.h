/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's attention-decode cases: attention over a KV cache, few query
 * rows (Lq <= 16) against a long Lk, grouped-query heads (Hkv < H), a
 * plain BkAttentionInfo plan (the DENSE form, causal aligned bottom-right
 * where asked), f16 and bf16, D = 128 and 64, at the shapes decoders
 * run. Each row is memory-bound: K and V dominate its bytes, so it is
 * rated by the K+V bytes over its median time, as a fraction of the
 * copy bandwidth measured in the same run (bytes read + written a
 * second). Its median, min and max come from reusable command buffers
 * replayed over buffer sets past the cache; after the timed runs set
 * 0's y and lse are checked against a reference made on the host in
 * double precision (every query row of the last batch and head).
 *
 * Case names, "bf16 D128 B8 H64/8 Lq1 Lk8192" (" causal" when causal),
 * are the ones bench/attention-decode-peers.py writes.
 *
 * Paged variants (" page16" and so on) keep the same K and V in a pool of
 * pages (BkAttentionPagedKvInfo, k and v [pages, Hkv, pageSize, D]), the
 * sequences' pages shuffled over the pool by a fixed seed, every length
 * Lk (BkAttentionSequencesInfo, PADDED): their time beside the
 * contiguous row of the same shape is what paging costs. */
#ifndef BK_TOOL_BENCH_DECODE_H
#define BK_TOOL_BENCH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "bench_attention.h"
#include "bench_device.h"
#include "bench_run.h"
#include "bench_spread.h"

/* Submits cmds round robin as bench_device_time does (s's warm-up and
 * repeats) and sums up the timed runs. */
void bench_spread_time(struct bench_device *d, const BkCommandBuffer *cmds, uint32_t ncmds,
                       const struct bench_settings *s, struct bench_spread *t);

struct decode_case {
    BkDataType dtype;
    int64_t d;                            /* Dv = D */
    int64_t batch, heads, kv_heads, lq, lk;
    bool causal;
    int32_t page;                         /* tokens a page of a paged cache; 0: contiguous */
    bool by_token;                        /* the pool stored [pages, page, Hkv, D] */
    char name[64];                        /* "bf16 D128 B8 H64/8 Lq1 Lk8192 causal page16" */
};

struct decode_result {
    bool supported;                       /* false: no plan (message) */
    bool failed;                          /* ... because of an error, not unsupported */
    bool check_failed;                    /* y or lse is not the reference's (message) */
    char message[256];
    char kernel[BK_MAX_KERNEL_NAME_SIZE];
    uint64_t workspace;
    uint64_t kv_bytes;                    /* K + V, read once */
    uint32_t sets;
    struct bench_spread t;
    double gb_per_s;                      /* kv_bytes over the median */
    double roofline;                      /* gb_per_s / the copy bandwidth; 0: unknown */
    double max_rel_err;                   /* the check's; < 0: not run */
};

/* The cases of a scale (bench_attention.h's: GPU, host, quick). */
size_t bench_decode_cases(enum attention_scale scale, struct decode_case *out, size_t max);
size_t bench_decode_case_count(void);

/* Measures a case; a plan that cannot be made is its result, other libbk
 * errors exit. */
void bench_decode_run(struct bench_device *d, const struct decode_case *c,
                      const struct bench_settings *s, double copy_gb_per_s,
                      struct decode_result *r);

typedef bool (*decode_filter_fn)(const struct decode_case *c, const void *user);

struct decode_suite {
    struct bench_settings s;
    struct decode_case *cases;
    struct decode_result *res;
    size_t n;
};

void decode_suite_open(struct decode_suite *a, enum attention_scale scale,
                       const struct bench_settings *s, decode_filter_fn keep, const void *user);
/* Runs every case; text rows as they finish unless json. */
void decode_suite_run(struct decode_suite *a, struct bench_device *d, double copy_gb_per_s,
                      bool json);
/* Writes each case without a plan and each failed check to stderr;
 * returns how many there were. */
size_t decode_suite_report_failures(const struct decode_suite *a);
void decode_suite_close(struct decode_suite *a);

/* Text and JSON (bench_decode_report.c). */
void bench_decode_print_header(const struct bench_settings *s, double copy_gb_per_s);
void bench_decode_print_row(const struct decode_case *c, const struct decode_result *r);
struct rec;
/* The records of "attentionDecode". */
void bench_decode_records(struct rec *w, const struct decode_suite *a);

#endif /* BK_TOOL_BENCH_DECODE_H */
