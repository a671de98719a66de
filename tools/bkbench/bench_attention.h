/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's block-sparse attention cases (bk_attention.h), forward and
 * backward, at the target shapes: B * L = 16k tokens with
 * Lq = Lk = L = 8192 (B = 2), H * D = 2048 with D = 64 (H = 32) and
 * D = 128 (H = 16), Hkv = H, Dv = D; square blocks of 64 and 128; the
 * patterns full (the DENSE form), 50%, 25% and 10% (random, one pattern
 * per head; 10% also as a LIST) and window (a causal sliding window of
 * L / 8 tokens, 1024 at L = 8192, and a sink; attention_op.h); f16 and
 * bf16. Rated in TFLOP/s over the active blocks (attention_flops): a
 * block the causal diagonal cuts counts as a whole one. The host runs
 * B = 1, L = 128 (64 with --quick), H * D = 128 and blocks of 16 and 32:
 * seconds with its reference in double precision. Then the head-size
 * sweep: D = 32, 64, 80, 96, 128, 160, 192, 256 and D = 192 with Dv = 128,
 * dense and 25% with blocks of 128, B = 2, L = 4096, H = 2048 / D (on the
 * host B = 1, L = 64, H = 256 / D, blocks of 32). Next the packed
 * variable-length cases (bench_varlen.h), dense with blocks of 128 (32 on
 * the host), causal ("varlen-c") and not ("varlen"), and beside them the
 * dense causal case ("causal") of the main shapes that they compare with
 * (the non-causal one is "full"). Last the training shapes: many short
 * sequences, dense ("full") and causal ("causal"), B = 32 at L = 512 and
 * B = 16 at L = 1024 with blocks of 128 (on the host B = 8 at L = 64 and
 * B = 4 at L = 128, half that B with --quick, blocks of 16). Then F32
 * ("f32"): dense at D = 64, 128 and 256 and causal at D = 128, the
 * sweep's B, L and H * D, as bench/attention-peers.py --dtype f32 times
 * SDPA.
 *
 * Per case, outside the timing: the pattern is made on the host and
 * uploaded, the forward plan runs once on every set to make y and lse
 * (the backward's inputs), and one run of each plan is checked against a
 * reference made on the host in double precision for a few rows of the
 * last batch and head. */
#ifndef BK_TOOL_BENCH_ATTENTION_H
#define BK_TOOL_BENCH_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <bk/bk.h>

#include "attention_op.h"
#include "bench_device.h"
#include "bench_run.h"

#define ATTENTION_CHECK_ROWS 3            /* rows 0, L/2 and L-1 of the last batch and head */
#define ATTENTION_CHECK_SEQUENCES 2       /* varlen: those of the first and last sequence */

enum attention_scale {
    ATTENTION_SCALE_GPU,                  /* the target shapes */
    ATTENTION_SCALE_HOST,                 /* seconds on a CPU */
    ATTENTION_SCALE_QUICK,                /* a smoke test */
};

struct attention_case {
    BkDataType dtype;
    int64_t batch, heads, l, d, dv;       /* Lq = Lk = L, Hkv = H */
    int32_t block;                        /* blockQ = blockK */
    const char *pattern;                  /* "full", "50%", "25%", "10%", "window",
                                           * "causal", "varlen", "varlen-c" */
    struct attention_pattern_desc pat;
    BkAttentionPatternForm form;
    bool causal;
    char shape[40];                       /* "2x32x8192x64": B x H x L x D (/ Dv) */
    /* PACKED sequences of these lengths (Lq = Lk each) along L, B = 1;
     * NULL and 0: none (one sequence per batch entry). */
    const int32_t *lengths;
    int32_t sequences;
    /* Which table of bench/CURRENT.md it belongs to: "main" (the
     * patterns), "heads" (the head-size sweep), "varlen" (packed
     * sequences and their dense reference), "train" (the training
     * shapes) or "f32" (F32 beside SDPA's). */
    const char *set;
};

/* One direction of a case. */
struct attention_result {
    bool ran;                             /* false: filtered out */
    bool supported;                       /* false: no plan (message) */
    bool failed;                          /* ... because of an error, not unsupported */
    bool check_failed;                    /* a result is not the reference's (message) */
    char message[256];
    char kernel[BK_MAX_KERNEL_NAME_SIZE];
    uint64_t workspace;
    uint32_t sets;
    double flops;                         /* over the active blocks */
    double us;                            /* median, reusable submits */
    struct bench_spread t;                /* us, min and max */
    double max_rel_err;                   /* the check's; < 0: not run */
};

/* The pattern of a case, shared by both directions. */
struct attention_pattern_info {
    int64_t active_blocks;                /* over every batch (or sequence) and head */
    int64_t total_blocks;                 /* B * H * nbq * nbk (summed over sequences) */
    int64_t capacity;                     /* LIST: the longest row */
    uint64_t hash;                        /* attention_mask_hash; 0 for full */
};

size_t bench_attention_case_count(void);
size_t bench_attention_cases(enum attention_scale scale, struct attention_case *out, size_t max);
/* The op description of a case in one direction (capacity from the
 * pattern, 0 before it is known). */
struct attention_op_desc attention_case_desc(const struct attention_case *c, bool backward,
                                             int64_t capacity);

/* Buffers kept while consecutive cases have the same dtype and sizes. */
struct attention_buffers;

/* Measures a case: the forward when fwd->ran, the backward when bwd->ran
 * (the forward plan runs for it either way). A plan that cannot be made,
 * whatever the error, is the case's result (the family is young on some
 * backends); other libbk errors exit. */
void bench_attention_run(struct bench_device *d, const struct attention_case *c,
                         const struct bench_settings *s, struct attention_buffers **buffers,
                         struct attention_pattern_info *pi, struct attention_result *fwd,
                         struct attention_result *bwd);
void bench_attention_release(struct bench_device *d, struct attention_buffers **buffers);
/* The rows a case's check compares (of q's and of k's axis each). */
int bench_attention_check_rows(const struct attention_case *c);
/* The check's limit on max |result - reference| / max |reference|. */
double bench_attention_check_limit(BkDataType dtype, bool backward);

/* Whether to run a direction of a case. */
typedef bool (*attention_filter_fn)(const struct attention_case *c, bool backward,
                                    const void *user);

/* The attention part of a bkbench run: the cases kept and their results. */
struct attention_suite {
    struct bench_settings s;
    struct attention_case *cases;
    struct attention_pattern_info *pattern;
    struct attention_result *fwd, *bwd;
    size_t n;
};

void attention_suite_open(struct attention_suite *a, enum attention_scale scale,
                          const struct bench_settings *s, attention_filter_fn keep,
                          const void *user);
/* Runs every case; text rows as they finish unless json. */
void attention_suite_run(struct attention_suite *a, struct bench_device *d, bool json);
/* Writes each case without a plan and each failed check to stderr;
 * returns how many there were. */
size_t attention_suite_report_failures(const struct attention_suite *a);
void attention_suite_close(struct attention_suite *a);

/* Text and JSON (bench_attention_report.c). */
void bench_attention_print_header(const struct bench_settings *s);
void bench_attention_print_rows(const struct attention_case *c,
                                const struct attention_pattern_info *pi,
                                const struct attention_result *fwd,
                                const struct attention_result *bwd);
/* The records of "attention": one per direction that ran. */
struct rec;
void bench_attention_records(struct rec *w, const struct attention_case *c,
                             const struct attention_pattern_info *pi,
                             const struct attention_result *fwd,
                             const struct attention_result *bwd, size_t n);

#endif /* BK_TOOL_BENCH_ATTENTION_H */
