/* SPDX-License-Identifier: Apache-2.0 */
/* An independent model of block-sparse attention for the tests
 * (t/attention/attention.c on the host, t/gpu/gpu_attention.c against the GPU): test
 * problems with every operand in a chosen layout, a random block pattern
 * encoded both as a MASK and as an equivalent LIST (shuffled, with
 * repeats and junk past each count), device buffers, a naive long double
 * reference that materialises each head's Lq x Lk score matrix, and the
 * comparison of a downloaded output with it. Written from bk_attention.h,
 * not from libbk's code.
 *
 * Typical use:
 *   struct attn_case c = { .type = BK_DATA_TYPE_F16, .batch = 2, .heads = 4,
 *                          .kv_heads = 2, .lq = 100, .lk = 130, .d = 64, .dv = 64,
 *                          .form = BK_ATTENTION_PATTERN_LIST, .block_q = 16,
 *                          .block_k = 32, .density = 0.5, .causal = true };
 *   struct attn_problem pr;
 *   attn_problem_init(&pr, &c, &rng);
 *   attn_upload(ctx, &pr);
 *   BkAttentionInfo info = attn_forward_info(&pr);
 *   BkDeviceAddress bind[8];
 *   attn_forward_bindings(&pr, bind);
 *   ... create a plan from info, bkt_run(ctx, plan, 8, bind) ...
 *   attn_download(ctx, &pr.y);
 *   long double *ref_y = attn_ref_alloc(&pr.y), *ref_lse = attn_ref_alloc(&pr.lse);
 *   attn_ref_forward(&pr, ref_y, ref_lse);
 *   attn_check(&pr.y, ref_y, attn_tolerance(c.type), "forward y", NULL) == 0
 *
 * Reference arrays are row-major over the output's logical extents
 * ([B][H][Lq][Dv] for y, [B][H][Lq] for lse, ...). */
#ifndef BK_TEST_ATTENTION_REF_H
#define BK_TEST_ATTENTION_REF_H

#include "test_util.h"

/* How q, k, v, y, dy and the gradients are stored (lse follows). */
enum attn_layout {
    ATTN_LAYOUT_CONTIGUOUS,   /* [B, H, L, D] row-major, described with zero strides */
    ATTN_LAYOUT_BLHD,         /* [B, L, H, D] storage: a permuted view */
    ATTN_LAYOUT_PADDED,       /* row-major with random gaps, column stride 1 or 2;
                               * pattern tensors padded too */
    ATTN_LAYOUT_TRANSPOSED,   /* [B, H, D, L] storage: row stride 1 */
    ATTN_LAYOUT_COUNT
};
const char *attn_layout_name(enum attn_layout layout);

/* One test case. Zero-initialise and set what matters. */
struct attn_case {
    BkDataType type;                  /* F16, BF16, F32, F64 */
    int64_t batch, heads, kv_heads, lq, lk, d, dv;
    BkAttentionPatternForm form;
    int32_t block_q, block_k;         /* for DENSE, 0 or any valid size */
    bool causal;
    double density;                   /* chance a block is active (MASK, LIST) */
    bool shared_batch, shared_heads;  /* pattern extent 1 (Bp = 1, Hp = 1) */
    enum attn_layout layout;
    bool no_lse;                      /* forward without lse */
    double scale;                     /* 0: 1 / sqrt(D) */
    double range;                     /* inputs uniform in [-range, range]; 0: 1 */
};
/* "f16 B2 H4/2 Lq100 Lk130 D64/64 list 16x32 causal 50% blhd", for labels. */
const char *attn_case_name(const struct attn_case *c, char *buf, size_t size);

/* One operand: logical extents, element strides, a host copy (whose
 * gaps hold BKT_POISON) and a device buffer (after attn_upload). */
struct attn_tensor {
    BkDataType type;
    uint32_t rank;                    /* 3 or 4 */
    int64_t extent[4], stride[4];
    bool zero_strides;                /* described with all-zero strides */
    int64_t count, span;              /* elements, and elements spanned */
    uint64_t bytes;                   /* host and device buffer (0 when empty) */
    void *host;
    struct bkt_buffer dev;
};
BkTensorDesc attn_desc(const struct attn_tensor *t);      /* UNDEFINED when t->rank == 0 */
int64_t attn_index(const struct attn_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
double attn_get(const struct attn_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3);
void attn_set(struct attn_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, double v);
/* The whole host buffer set to BKT_POISON (gaps included). */
void attn_poison(struct attn_tensor *t);
/* Whether two tensors of one layout hold the same bytes. */
bool attn_identical(const struct attn_tensor *a, const struct attn_tensor *b);

/* A problem: the case, its pattern and every operand. */
struct attn_problem {
    struct attn_case c;
    double scale;
    int64_t nbq, nbk;                 /* 1 x 1 for DENSE */
    int64_t bp, hp, capacity;         /* pattern extents; list capacity */
    uint8_t *active;                  /* [bp][hp][nbq][nbk]: 1 where a block is active */
    bool *bad;                        /* [bp][hp]: the list was broken (attn_break_list) */
    struct attn_tensor q, k, v, y, lse, dy, dq, dk, dv;
    struct attn_tensor mask, counts, indices;  /* both encodings, whatever c.form */
};

/* Random inputs (q, k, v, dy exactly representable in the type), a random
 * pattern of c->density, outputs poisoned (y and lse too); no device
 * buffers yet. */
void attn_problem_init(struct attn_problem *pr, const struct attn_case *c, struct bkt_rng *rng);
/* Frees host copies and device buffers (ctx may be NULL without any). */
void attn_problem_free(BkContext ctx, struct attn_problem *pr);
/* Rewrites mask, counts and indices from pr->active (after a test edits
 * it): mask bytes random nonzero where active; each list shuffled, with
 * repeats up to the capacity (the first non-empty list of each pattern
 * entry exactly full) and junk (-1, nbk, ...) past the count. Clears
 * pr->bad. */
void attn_encode_pattern(struct attn_problem *pr, struct bkt_rng *rng);

enum attn_list_error {
    ATTN_COUNT_OVER_CAPACITY,         /* count = capacity + 1, every entry valid */
    ATTN_COUNT_NEGATIVE,              /* count = -1 */
    ATTN_INDEX_PAST_END,              /* an entry = nbk */
    ATTN_INDEX_NEGATIVE,              /* an entry = -3 */
};
/* Breaks the list of pattern entry (pb, ph) in query block ib and marks
 * it bad: every output of the (b, h) using it becomes NaN. */
void attn_break_list(struct attn_problem *pr, int64_t pb, int64_t ph, int64_t ib,
                     enum attn_list_error how);

/* The infos for pr (lse absent when c.no_lse in the forward). */
BkAttentionInfo attn_forward_info(const struct attn_problem *pr);
BkAttentionBackwardInfo attn_backward_info(const struct attn_problem *pr);
/* Allocates device buffers (once) and copies every host operand there. */
void attn_upload(BkContext ctx, struct attn_problem *pr);
void attn_upload_tensor(BkContext ctx, struct attn_tensor *t);
void attn_download(BkContext ctx, struct attn_tensor *t);
/* Binding slots for the plans (0 for absent or empty tensors). */
void attn_forward_bindings(const struct attn_problem *pr, BkDeviceAddress bindings[8]);
void attn_backward_bindings(const struct attn_problem *pr, BkDeviceAddress bindings[12]);

/* ---- Reference --------------------------------------------------------- */
/* Whether query i of (b, h) sees key j: block active and causal rule. */
bool attn_ref_visible(const struct attn_problem *pr, int64_t b, int64_t h, int64_t i, int64_t j);
/* calloc'd array of t's element count (at least 1), bails out on failure. */
long double *attn_ref_alloc(const struct attn_tensor *t);
/* y [B][H][Lq][Dv] and lse [B][H][Lq] from the host q, k, v; NaN for a
 * broken list's heads, y = 0 and lse = -inf where a query sees nothing. */
void attn_ref_forward(const struct attn_problem *pr, long double *y, long double *lse);
/* dq, dk, dv from the host q, k, v, dy and the y and lse in pr->y and
 * pr->lse (as the backward plan gets them). */
void attn_ref_backward(const struct attn_problem *pr, long double *dq, long double *dk,
                       long double *dv);
/* pr->y and pr->lse set to the reference forward rounded to their types,
 * so a backward can run without a forward plan. */
void attn_set_forward_outputs(struct attn_problem *pr);

/* ---- Comparison -------------------------------------------------------- */
/* Error allowed relative to the largest |ref| of an output: the host rounds
 * each output once (f64 1e-12, f32 1e-5, f16 2e-3, bf16 1.6e-2). */
double attn_tolerance(BkDataType type);
/* Compares out's host copy with ref: NaN where ref is NaN, the same
 * infinity where ref is one, else |got - ref| <= tol * max |ref| (so 0
 * exactly when every ref is 0); and gaps still poisoned. Prints the first
 * misses under label; returns how many elements (and gap bytes) missed.
 * *max_error (when not NULL): the largest |got - ref| / max |ref|. */
long attn_check(const struct attn_tensor *out, const long double *ref, double tol,
                const char *label, double *max_error);

#endif /* BK_TEST_ATTENTION_REF_H */
