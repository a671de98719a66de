/* SPDX-License-Identifier: Apache-2.0 */
/* Gated activation test cases shared by the correctness tests: shapes and
 * layouts, random inputs, running a case on a context, and checking the
 * result against long double closed forms or against another run. */
#ifndef BK_TEST_GATED_CASE_H
#define BK_TEST_GATED_CASE_H

#include "test_util.h"

#define GATED_KIND_COUNT 5
extern const BkGatedActivationKind gated_kinds[GATED_KIND_COUNT];
#define GATED_TYPE_COUNT 4
extern const BkDataType gated_types[GATED_TYPE_COUNT];
const char *gated_kind_name(BkGatedActivationKind kind);

/* ---- Closed forms in long double (gated_ref.c) ------------------------- */
long double gated_ref_gate(BkGatedActivationKind kind, long double b);       /* g(b) */
long double gated_ref_gate_deriv(BkGatedActivationKind kind, long double b); /* g'(b) */
/* y = a g(b); da = dy g(b); db = dy a g'(b). */
long double gated_ref_forward(BkGatedActivationKind kind, long double a, long double b);
void gated_ref_backward(BkGatedActivationKind kind, long double a, long double b,
                        long double dy, long double *da, long double *db);

/* ---- Layouts ------------------------------------------------------------ */
enum gated_layout {
    GATED_CONTIGUOUS,      /* all-zero strides: row-major contiguous */
    GATED_PADDED,          /* row-major order with gaps between rows */
    GATED_TRANSPOSED,      /* axes in a random order, packed */
    GATED_TRANSPOSED_PADDED,
    GATED_LAYOUT_COUNT
};
const char *gated_layout_name(enum gated_layout layout);

/* A shape to test: rank, split axis, the half (output) extents and the
 * layout of each tensor (x, y or dy, dx). */
struct gated_shape {
    uint32_t rank, split;
    int64_t half[BK_MAX_TENSOR_RANK];
    enum gated_layout layout[3];
    int64_t offset;        /* elements between each buffer's start and its tensor */
};
/* The shapes every correctness test runs: rank 1..8, split first, middle
 * and last, contiguous, padded and transposed, odd sizes. Returns how many
 * were written (at most max). */
unsigned gated_shapes(struct bkt_rng *rng, struct gated_shape *shapes, unsigned max);

/* ---- A case and its data ------------------------------------------------ */
enum { GATED_X = 0, GATED_Y = 1, GATED_DY = 1, GATED_DX = 2 };

struct gated_case {
    BkGatedActivationKind kind;
    BkDataType type;
    bool backward;
    uint32_t rank, split;
    int64_t extent[3][BK_MAX_TENSOR_RANK];  /* x (2n along split), y or dy (n), dx */
    int64_t stride[3][BK_MAX_TENSOR_RANK];  /* explicit, in elements */
    bool contiguous[3];                     /* describe with all-zero strides */
    int64_t span[3];                        /* elements from base to last + 1 */
    int64_t offset;                         /* elements before each tensor's base */
    char label[192];
};

/* Build a case from a shape; rng picks the strides of padded and
 * transposed layouts. */
void gated_case_init(struct gated_case *c, BkGatedActivationKind kind, BkDataType type,
                     bool backward, const struct gated_shape *shape, struct bkt_rng *rng);
unsigned gated_case_tensors(const struct gated_case *c);   /* 2 or 3 */
unsigned gated_case_output(const struct gated_case *c);    /* GATED_Y or GATED_DX */
void gated_case_desc(const struct gated_case *c, unsigned tensor, BkTensorDesc *desc);
/* The op info struct for a plan (forward or backward, per c->backward). */
union gated_info {
    BkGatedActivationInfo forward;
    BkGatedActivationBackwardInfo backward;
};
void gated_case_info(const struct gated_case *c, union gated_info *info);

/* Host copies of each tensor's span (rounded up to 4 bytes). */
struct gated_data {
    uint64_t bytes[3];
    void *host[3];
    long prefix_written;   /* output bytes before the offset found changed */
};
void gated_data_alloc(const struct gated_case *c, struct gated_data *d);
void gated_data_free(struct gated_data *d);
/* Fill inputs with random values exactly representable in the type: most
 * in [-4, 4], some in [-30, 30]; with avoid_kink, |b| >= 1e-3. */
void gated_data_randomize(const struct gated_case *c, struct gated_data *d, struct bkt_rng *rng,
                          bool avoid_kink);

/* Upload the inputs, poison the output's buffer with bkCmdFillMemory,
 * plan, run with each tensor bound c->offset elements into its buffer,
 * and download the output's span. Bytes of the buffer before the offset
 * must keep the poison (counted as gap bytes by the checks). Returns the
 * first failing result and says what failed in a diagnostic. */
BkResult gated_case_run(BkContext ctx, const struct gated_case *c, struct gated_data *d);

/* ---- Checks ----------------------------------------------------------------- */
/* The tolerance for comparing with the long double closed forms. */
struct bkt_tolerance gated_reference_tolerance(BkDataType type);
/* Every output element against the closed form; bytes of the output
 * buffer that are no element must still hold BKT_POISON. Returns the
 * number of bad elements and gap bytes; prints the first few. */
long gated_check_reference(const struct gated_case *c, const struct gated_data *d,
                           struct bkt_tolerance tol);
/* Every output element of d against the same element of ref (another
 * backend's run on the same inputs); gaps as above. */
long gated_check_against(const struct gated_case *c, const struct gated_data *d,
                         const struct gated_data *ref, struct bkt_tolerance tol);
/* Gap bytes that do not hold BKT_POISON. */
long gated_check_gaps(const struct gated_case *c, const struct gated_data *d);

/* Run c on fresh random inputs and check it against the closed forms:
 * one TAP line. */
bool gated_case_test_reference(BkContext ctx, const struct gated_case *c, struct bkt_rng *rng);
/* gated_case_test_reference for every kind x type x shape: one TAP line
 * each. */
void gated_case_test_all(BkContext ctx, bool backward, const struct gated_shape *shapes,
                         unsigned count, struct bkt_rng *rng);

/* Visit every element of the half (output) shape with its element offsets
 * in each tensor: a and b halves of x, y or dy, and a and b halves of dx. */
struct gated_offsets { int64_t xa, xb, y, dxa, dxb; };
typedef void (*gated_visit_fn)(void *user, const struct gated_offsets *off);
void gated_for_each(const struct gated_case *c, gated_visit_fn visit, void *user);

#endif /* BK_TEST_GATED_CASE_H */
