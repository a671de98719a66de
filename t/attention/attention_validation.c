/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention's validation, on the host device: every rule of
 * BkAttentionInfo and BkAttentionBackwardInfo (lib/attention.c) broken one
 * field at a time on both infos and every pattern form (result code, and
 * a message naming the info and the field, and for shapes the value and
 * the rule), the binding slots each plan reports (names, sizes,
 * alignments, written flags) and the run-time checks they imply, the
 * precision, kernel name and workspace of each plan, and that failed plan
 * creations leak nothing: the context and everything made from it use a
 * counting allocator. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static BkContext ctx;
static BkCommandBuffer cmd;        /* recording; never submitted */

#define INVALID BK_ERROR_INVALID_ARGUMENT
#define UNSUPPORTED BK_ERROR_UNSUPPORTED
#define DENSE BK_ATTENTION_PATTERN_DENSE
#define MASK BK_ATTENTION_PATTERN_MASK
#define LIST BK_ATTENTION_PATTERN_LIST
#define f16 BK_DATA_TYPE_F16
#define bf16 BK_DATA_TYPE_BF16
#define f32 BK_DATA_TYPE_F32
#define f64 BK_DATA_TYPE_F64
#define i32 BK_DATA_TYPE_I32
#define u8 BK_DATA_TYPE_U8

/* The valid problem the rules break: q [2, 4, 40, 32], k [2, 2, 72, 32],
 * v [2, 2, 72, 16]; blocks 16 x 32 give nbq = 3, nbk = 3; lists hold 4. */
enum { B = 2, H = 4, HKV = 2, LQ = 40, LK = 72, D = 32, DV = 16, BQ = 16, BK = 32 };
enum { NBQ = (LQ + BQ - 1) / BQ, NBK = (LK + BK - 1) / BK, CAP = 4 };

static BkTensorDesc t3(BkDataType type, int64_t a, int64_t b, int64_t c)
{
    return (BkTensorDesc){ .dataType = type, .rank = 3, .extent = { a, b, c } };
}

static BkTensorDesc t4(BkDataType type, int64_t a, int64_t b, int64_t c, int64_t d)
{
    return (BkTensorDesc){ .dataType = type, .rank = 4, .extent = { a, b, c, d } };
}

/* ---- Both infos behind one view ------------------------------------------------ */

enum field { Q, K, V, Y, LSE, MASK_T, COUNTS, INDICES, DY, DQ, DK, DV_T, FIELDS };

struct infos {
    BkAttentionInfo fwd;
    BkAttentionBackwardInfo bwd;
};

/* The fields of one of the two infos. */
struct view {
    const char *name;
    const void *info;
    BkAttentionFlags *flags;
    uint32_t *reserved;
    double *scale;
    BkAttentionPattern *pattern;
    BkTensorDesc *t[FIELDS];       /* NULL: not in this info */
};

static BkAttentionPattern pattern(BkAttentionPatternForm form, int32_t bq, int32_t bk)
{
    BkAttentionPattern p = { .form = form, .blockQ = bq, .blockK = bk };
    if (form == DENSE)
        return p;
    const int64_t nbq = (LQ + bq - 1) / bq, nbk = (LK + bk - 1) / bk;
    if (form == MASK) {
        p.mask = t3(u8, B, H, nbq * nbk);
    } else {
        p.counts = t3(i32, B, H, nbq);
        p.indices = t4(i32, B, H, nbq, CAP);
    }
    return p;
}

/* Valid infos of form and type (blocks bq x bk; 0: 16 x 32, or none for
 * DENSE) and a view of the forward's or the backward's fields. */
static struct view make(struct infos *in, bool backward, BkAttentionPatternForm form,
                        BkDataType type, int32_t bq, int32_t bk)
{
    if (!bq && form != DENSE)
        bq = BQ, bk = BK;
    const BkDataType lt = type == f64 ? f64 : f32;
    in->fwd = (BkAttentionInfo){
        .sType = BK_STRUCTURE_TYPE_ATTENTION_INFO, .scale = 0.125,
        .flags = BK_ATTENTION_CAUSAL_BIT, .pattern = pattern(form, bq, bk),
        .q = t4(type, B, H, LQ, D), .k = t4(type, B, HKV, LK, D), .v = t4(type, B, HKV, LK, DV),
        .y = t4(type, B, H, LQ, DV), .lse = t3(lt, B, H, LQ),
    };
    in->bwd = (BkAttentionBackwardInfo){
        .sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, .scale = 0.125,
        .flags = BK_ATTENTION_CAUSAL_BIT, .pattern = pattern(form, bq, bk),
        .q = in->fwd.q, .k = in->fwd.k, .v = in->fwd.v, .y = in->fwd.y, .lse = in->fwd.lse,
        .dy = in->fwd.y, .dq = in->fwd.q, .dk = in->fwd.k, .dv = in->fwd.v,
    };
    if (!backward) {
        BkAttentionInfo *f = &in->fwd;
        return (struct view){
            .name = "BkAttentionInfo", .info = f, .flags = &f->flags, .reserved = &f->reserved,
            .scale = &f->scale, .pattern = &f->pattern,
            .t = { &f->q, &f->k, &f->v, &f->y, &f->lse, &f->pattern.mask, &f->pattern.counts,
                   &f->pattern.indices },
        };
    }
    BkAttentionBackwardInfo *b = &in->bwd;
    return (struct view){
        .name = "BkAttentionBackwardInfo", .info = b, .flags = &b->flags,
        .reserved = &b->reserved, .scale = &b->scale, .pattern = &b->pattern,
        .t = { &b->q, &b->k, &b->v, &b->y, &b->lse, &b->pattern.mask, &b->pattern.counts,
               &b->pattern.indices, &b->dy, &b->dq, &b->dk, &b->dv },
    };
}

/* ---- Expectations ------------------------------------------------------------------ */


/* ---- The rules ------------------------------------------------------------------------ */

enum op {
    NONE, EXTENT, TYPE, RANK, OVERLAP, ABSENT, PRESENT, FLAGS, RESERVED, SCALE, FORM,
    PATTERN_RESERVED, BLOCK_Q, BLOCK_K, NO_KEYS,
};
enum which { BOTH, FORWARD, BACKWARD };

/* One rule broken (or one valid variation): on the valid info of form,
 * type and blocks (bq x bk), apply op to field (dimension dim) with value
 * (dvalue for the scale); the result must be code and the message name
 * the info followed by needles[0], and contain the other needles. */
struct rule {
    const char *what;
    enum which which;
    BkAttentionPatternForm form;
    BkDataType type;               /* 0: F16 */
    int32_t bq, bk;
    enum op op;
    enum field field;
    int dim;
    int64_t value;
    double dvalue;
    BkResult code;
    const char *needles[4];
};

static const struct rule rules[] = {
    /* Valid variations. */
    { "the valid DENSE info", BOTH, DENSE, 0, 0, 0, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "the valid MASK info", BOTH, MASK, 0, 0, 0, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "the valid LIST info", BOTH, LIST, 0, 0, 0, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "bf16", BOTH, MASK, bf16, 0, 0, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "f32", BOTH, LIST, f32, 0, 0, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "f64 with an f64 lse", BOTH, DENSE, f64, 0, 0, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "DENSE with blocks 16 x 128", BOTH, DENSE, 0, 16, 128, NONE, 0, 0, 0, 0, BK_SUCCESS,
      { NULL } },
    { "blocks 128 x 16", BOTH, MASK, 0, 128, 16, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "a single block size 8", BOTH, LIST, 0, 8, 8, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "a single block size 1", BOTH, MASK, 0, 1, 1, NONE, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "a mask shared by the batches (Bp = 1)", BOTH, MASK, 0, 0, 0, EXTENT, MASK_T, 0, 1, 0,
      BK_SUCCESS, { NULL } },
    { "a mask shared by the heads (Hp = 1)", BOTH, MASK, 0, 0, 0, EXTENT, MASK_T, 1, 1, 0,
      BK_SUCCESS, { NULL } },
    { "forward without lse", FORWARD, DENSE, 0, 0, 0, ABSENT, LSE, 0, 0, 0, BK_SUCCESS,
      { NULL } },
    { "no causal bit", BOTH, LIST, 0, 0, 0, FLAGS, 0, 0, 0, 0, BK_SUCCESS, { NULL } },
    { "ALLOW_ATOMICS in the backward", BACKWARD, DENSE, 0, 0, 0, FLAGS, 0, 0,
      BK_ATTENTION_ALLOW_ATOMICS_BIT | BK_ATTENTION_CAUSAL_BIT, 0, BK_SUCCESS, { NULL } },
    { "a negative scale", BOTH, DENSE, 0, 0, 0, SCALE, 0, 0, 0, -3.5, BK_SUCCESS, { NULL } },
    { "q may overlap itself (read only)", BOTH, MASK, 0, 0, 0, OVERLAP, Q, 0, 0, 0,
      BK_SUCCESS, { NULL } },
    { "Lk = 0 (lists of nbq rows, nothing to point at)", BOTH, LIST, 0, 0, 0, NO_KEYS, 0, 0,
      0, 0, BK_SUCCESS, { NULL } },

    /* Flags, reserved, scale. */
    { "ALLOW_ATOMICS in the forward", FORWARD, DENSE, 0, 0, 0, FLAGS, 0, 0,
      BK_ATTENTION_ALLOW_ATOMICS_BIT, 0, INVALID, { ".flags = 0x2 has unknown bits 0x2" } },
    { "an unknown flag", BOTH, DENSE, 0, 0, 0, FLAGS, 0, 0, 0x11, 0, INVALID,
      { ".flags = 0x11 has unknown bits 0x10" } },
    { "reserved 1", BOTH, MASK, 0, 0, 0, RESERVED, 0, 0, 1, 0, INVALID,
      { ".reserved = 1 must be 0" } },
    { "scale NaN", BOTH, DENSE, 0, 0, 0, SCALE, 0, 0, 0, NAN, INVALID,
      { ".scale = nan must be finite" } },
    { "scale infinite", BOTH, LIST, 0, 0, 0, SCALE, 0, 0, 0, -INFINITY, INVALID,
      { ".scale = -inf must be finite" } },

    /* q, k, v: the sizes. */
    { "q absent", BOTH, DENSE, 0, 0, 0, ABSENT, Q, 0, 0, 0, INVALID, { ".q.dataType" } },
    { "q of rank 3", BOTH, DENSE, 0, 0, 0, RANK, Q, 0, 3, 0, INVALID,
      { ".q.rank = 3 must be 4" } },
    { "q i32", BOTH, MASK, 0, 0, 0, TYPE, Q, 0, i32, 0, UNSUPPORTED,
      { ".q.dataType = BK_DATA_TYPE_I32 is not supported", "F16, BF16, F32, F64" } },
    { "D = 0", BOTH, DENSE, 0, 0, 0, EXTENT, Q, 3, 0, 0, INVALID,
      { ".q.extent[3] = 0 (D) must be in 1..256" } },
    { "D = 257", BOTH, DENSE, 0, 0, 0, EXTENT, Q, 3, 257, 0, INVALID,
      { ".q.extent[3] = 257 (D) must be in 1..256" } },
    { "k f32 for f16 q", BOTH, DENSE, 0, 0, 0, TYPE, K, 0, f32, 0, INVALID,
      { ".k.dataType = BK_DATA_TYPE_F32 must be BK_DATA_TYPE_F16", "q's type" } },
    { "k batch 3", BOTH, MASK, 0, 0, 0, EXTENT, K, 0, 3, 0, INVALID,
      { ".k.extent[0] = 3 must equal B (q.extent[0]) = 2" } },
    { "k with D = 16", BOTH, DENSE, 0, 0, 0, EXTENT, K, 3, 16, 0, INVALID,
      { ".k.extent[3] = 16 must equal D (q.extent[3]) = 32" } },
    { "Hkv = 0", BOTH, DENSE, 0, 0, 0, EXTENT, K, 1, 0, 0, INVALID,
      { ".k.extent[1] = 0 (Hkv) must be positive" } },
    { "H % Hkv != 0", BOTH, LIST, 0, 0, 0, EXTENT, K, 1, 3, 0, INVALID,
      { ".q.extent[1] = 4 (H) must be a multiple of k.extent[1] = 3 (Hkv)" } },
    { "k of rank 5", BOTH, DENSE, 0, 0, 0, RANK, K, 0, 5, 0, INVALID, { ".k.rank = 5" } },
    { "v bf16 for f16 q", BOTH, DENSE, 0, 0, 0, TYPE, V, 0, bf16, 0, INVALID,
      { ".v.dataType = BK_DATA_TYPE_BF16 must be BK_DATA_TYPE_F16" } },
    { "v batch 1", BOTH, DENSE, 0, 0, 0, EXTENT, V, 0, 1, 0, INVALID,
      { ".v.extent[0] = 1 must equal B (q.extent[0]) = 2" } },
    { "v with 4 heads", BOTH, DENSE, 0, 0, 0, EXTENT, V, 1, 4, 0, INVALID,
      { ".v.extent[1] = 4 must equal Hkv (k.extent[1]) = 2" } },
    { "v with Lk = 71", BOTH, MASK, 0, 0, 0, EXTENT, V, 2, 71, 0, INVALID,
      { ".v.extent[2] = 71 must equal Lk (k.extent[2]) = 72" } },
    { "Dv = 0", BOTH, DENSE, 0, 0, 0, EXTENT, V, 3, 0, 0, INVALID,
      { ".v.extent[3] = 0 (Dv) must be in 1..256" } },
    { "Dv = 300", BOTH, DENSE, 0, 0, 0, EXTENT, V, 3, 300, 0, INVALID,
      { ".v.extent[3] = 300 (Dv) must be in 1..256" } },

    /* The pattern. */
    { "form 3", BOTH, DENSE, 0, 0, 0, FORM, 0, 0, 3, 0, INVALID,
      { ".pattern.form = 3 is not a BkAttentionPatternForm" } },
    { "form -1", BOTH, DENSE, 0, 0, 0, FORM, 0, 0, -1, 0, INVALID, { ".pattern.form = -1" } },
    { "pattern.reserved 2", BOTH, MASK, 0, 0, 0, PATTERN_RESERVED, 0, 0, 2, 0, INVALID,
      { ".pattern.reserved = 2 must be 0" } },
    { "blockQ 0", BOTH, MASK, 0, 0, 0, BLOCK_Q, 0, 0, 0, 0, INVALID,
      { ".pattern.blockQ = 0 must be in 16..128", "1..15 when equal to blockK" } },
    { "blockQ 129", BOTH, LIST, 0, 0, 0, BLOCK_Q, 0, 0, 129, 0, INVALID,
      { ".pattern.blockQ = 129 must be in 16..128" } },
    { "blockQ -16", BOTH, MASK, 0, 0, 0, BLOCK_Q, 0, 0, -16, 0, INVALID,
      { ".pattern.blockQ = -16" } },
    { "blockK 256", BOTH, MASK, 0, 0, 0, BLOCK_K, 0, 0, 256, 0, INVALID,
      { ".pattern.blockK = 256 must be in 16..128" } },
    { "blockK 0", BOTH, LIST, 0, 0, 0, BLOCK_K, 0, 0, 0, 0, INVALID,
      { ".pattern.blockK = 0" } },
    { "blockQ 8 with blockK 32", BOTH, MASK, 0, 0, 0, BLOCK_Q, 0, 0, 8, 0, INVALID,
      { ".pattern.blockQ = 8 and blockK = 32", "single size of both sides" } },
    { "blocks 8 x 4", BOTH, LIST, 0, 8, 8, BLOCK_K, 0, 0, 4, 0, INVALID,
      { ".pattern.blockQ = 8 and blockK = 4" } },
    { "DENSE with blockQ 200", BOTH, DENSE, 0, 16, 16, BLOCK_Q, 0, 0, 200, 0, INVALID,
      { ".pattern.blockQ = 200" } },
    { "DENSE with blockK alone", BOTH, DENSE, 0, 0, 0, BLOCK_K, 0, 0, 16, 0, INVALID,
      { ".pattern.blockQ = 0" } },
    { "DENSE with a mask", BOTH, DENSE, 0, 0, 0, PRESENT, MASK_T, 0, 0, 0, INVALID,
      { ".pattern.mask.dataType = BK_DATA_TYPE_U8", "left zeroed (dataType UNDEFINED)",
        "BK_ATTENTION_PATTERN_DENSE" } },
    { "DENSE with counts", BOTH, DENSE, 0, 0, 0, PRESENT, COUNTS, 0, 0, 0, INVALID,
      { ".pattern.counts.dataType", "BK_ATTENTION_PATTERN_DENSE" } },
    { "MASK with indices", BOTH, MASK, 0, 0, 0, PRESENT, INDICES, 0, 0, 0, INVALID,
      { ".pattern.indices.dataType", "BK_ATTENTION_PATTERN_MASK" } },
    { "LIST with a mask", BOTH, LIST, 0, 0, 0, PRESENT, MASK_T, 0, 0, 0, INVALID,
      { ".pattern.mask.dataType", "BK_ATTENTION_PATTERN_LIST" } },
    { "MASK without a mask", BOTH, MASK, 0, 0, 0, ABSENT, MASK_T, 0, 0, 0, INVALID,
      { ".pattern.mask.dataType" } },
    { "mask of rank 4", BOTH, MASK, 0, 0, 0, RANK, MASK_T, 0, 4, 0, INVALID,
      { ".pattern.mask.rank = 4 must be 3" } },
    { "mask i32", BOTH, MASK, 0, 0, 0, TYPE, MASK_T, 0, i32, 0, INVALID,
      { ".pattern.mask.dataType = BK_DATA_TYPE_I32 must be BK_DATA_TYPE_U8" } },
    { "mask Bp = 3", BOTH, MASK, 0, 0, 0, EXTENT, MASK_T, 0, 3, 0, INVALID,
      { ".pattern.mask.extent[0] = 3 must be 1 (shared) or B = 2" } },
    { "mask Hp = 2", BOTH, MASK, 0, 0, 0, EXTENT, MASK_T, 1, 2, 0, INVALID,
      { ".pattern.mask.extent[1] = 2 must be 1 (shared) or H = 4" } },
    { "mask of 8 blocks for 3 x 3", BOTH, MASK, 0, 0, 0, EXTENT, MASK_T, 2, 8, 0, INVALID,
      { ".pattern.mask.extent[2] = 8 must equal nbq x nbk = 3 x 3 = 9" } },
    { "LIST without counts", BOTH, LIST, 0, 0, 0, ABSENT, COUNTS, 0, 0, 0, INVALID,
      { ".pattern.counts.dataType" } },
    { "counts u8", BOTH, LIST, 0, 0, 0, TYPE, COUNTS, 0, u8, 0, INVALID,
      { ".pattern.counts.dataType = BK_DATA_TYPE_U8 must be BK_DATA_TYPE_I32" } },
    { "counts of rank 4", BOTH, LIST, 0, 0, 0, RANK, COUNTS, 0, 4, 0, INVALID,
      { ".pattern.counts.rank = 4 must be 3" } },
    { "counts Bp = 4", BOTH, LIST, 0, 0, 0, EXTENT, COUNTS, 0, 4, 0, INVALID,
      { ".pattern.counts.extent[0] = 4 must be 1 (shared) or B = 2" } },
    { "counts Hp = 3", BOTH, LIST, 0, 0, 0, EXTENT, COUNTS, 1, 3, 0, INVALID,
      { ".pattern.counts.extent[1] = 3 must be 1 (shared) or H = 4" } },
    { "counts for 4 query blocks", BOTH, LIST, 0, 0, 0, EXTENT, COUNTS, 2, 4, 0, INVALID,
      { ".pattern.counts.extent[2] = 4 must equal nbq (ceil(Lq / blockQ)) = 3" } },
    { "LIST without indices", BOTH, LIST, 0, 0, 0, ABSENT, INDICES, 0, 0, 0, INVALID,
      { ".pattern.indices.dataType" } },
    { "indices of rank 3", BOTH, LIST, 0, 0, 0, RANK, INDICES, 0, 3, 0, INVALID,
      { ".pattern.indices.rank = 3 must be 4" } },
    { "indices f32", BOTH, LIST, 0, 0, 0, TYPE, INDICES, 0, f32, 0, INVALID,
      { ".pattern.indices.dataType = BK_DATA_TYPE_F32 must be BK_DATA_TYPE_I32" } },
    { "indices Bp = 1, counts Bp = 2", BOTH, LIST, 0, 0, 0, EXTENT, INDICES, 0, 1, 0, INVALID,
      { ".pattern.indices.extent[0] = 1 must equal counts.extent[0] = 2" } },
    { "indices Hp = 1, counts Hp = 4", BOTH, LIST, 0, 0, 0, EXTENT, INDICES, 1, 1, 0, INVALID,
      { ".pattern.indices.extent[1] = 1 must equal counts.extent[1] = 4" } },
    { "indices for 2 query blocks", BOTH, LIST, 0, 0, 0, EXTENT, INDICES, 2, 2, 0, INVALID,
      { ".pattern.indices.extent[2] = 2 must equal nbq (ceil(Lq / blockQ)) = 3" } },
    { "a list capacity of 0", BOTH, LIST, 0, 0, 0, EXTENT, INDICES, 3, 0, 0, BK_SUCCESS,
      { NULL } },

    /* y and lse. */
    { "y absent", BOTH, DENSE, 0, 0, 0, ABSENT, Y, 0, 0, 0, INVALID, { ".y.dataType" } },
    { "y f32 for f16 q", BOTH, MASK, 0, 0, 0, TYPE, Y, 0, f32, 0, INVALID,
      { ".y.dataType = BK_DATA_TYPE_F32 must be BK_DATA_TYPE_F16 (q's type)" } },
    { "y with 2 heads", BOTH, DENSE, 0, 0, 0, EXTENT, Y, 1, 2, 0, INVALID,
      { ".y.extent[1] = 2 must equal H (q.extent[1]) = 4" } },
    { "y with 41 rows", BOTH, DENSE, 0, 0, 0, EXTENT, Y, 2, 41, 0, INVALID,
      { ".y.extent[2] = 41 must equal Lq (q.extent[2]) = 40" } },
    { "y with D columns", BOTH, LIST, 0, 0, 0, EXTENT, Y, 3, D, 0, INVALID,
      { ".y.extent[3] = 32 must equal Dv (v.extent[3]) = 16" } },
    { "lse f16", BOTH, DENSE, 0, 0, 0, TYPE, LSE, 0, f16, 0, INVALID,
      { ".lse.dataType = BK_DATA_TYPE_F16 must be BK_DATA_TYPE_F32",
        "log-sum-exp is kept in F32" } },
    { "lse f32 for f64 inputs", BOTH, DENSE, f64, 0, 0, TYPE, LSE, 0, f32, 0, INVALID,
      { ".lse.dataType = BK_DATA_TYPE_F32 must be BK_DATA_TYPE_F64", "F64 for F64 inputs" } },
    { "lse of rank 4", BOTH, MASK, 0, 0, 0, RANK, LSE, 0, 4, 0, INVALID,
      { ".lse.rank = 4 must be 3" } },
    { "lse batch 1", BOTH, DENSE, 0, 0, 0, EXTENT, LSE, 0, 1, 0, INVALID,
      { ".lse.extent[0] = 1 must equal B (q.extent[0]) = 2" } },
    { "lse with 1 head", BOTH, DENSE, 0, 0, 0, EXTENT, LSE, 1, 1, 0, INVALID,
      { ".lse.extent[1] = 1 must equal H (q.extent[1]) = 4" } },
    { "lse with 39 rows", BOTH, DENSE, 0, 0, 0, EXTENT, LSE, 2, 39, 0, INVALID,
      { ".lse.extent[2] = 39 must equal Lq (q.extent[2]) = 40" } },
    { "backward without lse", BACKWARD, DENSE, 0, 0, 0, ABSENT, LSE, 0, 0, 0, INVALID,
      { ".lse is absent", "the backward needs the forward's lse" } },
    { "y overlapping itself", FORWARD, DENSE, 0, 0, 0, OVERLAP, Y, 0, 0, 0, INVALID,
      { ".y.stride", "overlap" } },
    { "lse overlapping itself", FORWARD, MASK, 0, 0, 0, OVERLAP, LSE, 0, 0, 0, INVALID,
      { ".lse.stride", "overlap" } },
    { "y may overlap itself in the backward (read)", BACKWARD, DENSE, 0, 0, 0, OVERLAP, Y, 0,
      0, 0, BK_SUCCESS, { NULL } },

    /* The backward's dy and gradients. */
    { "dy absent", BACKWARD, DENSE, 0, 0, 0, ABSENT, DY, 0, 0, 0, INVALID, { ".dy.dataType" } },
    { "dy f32 for f16 q", BACKWARD, DENSE, 0, 0, 0, TYPE, DY, 0, f32, 0, INVALID,
      { ".dy.dataType = BK_DATA_TYPE_F32 must be BK_DATA_TYPE_F16" } },
    { "dy with D columns", BACKWARD, LIST, 0, 0, 0, EXTENT, DY, 3, D, 0, INVALID,
      { ".dy.extent[3] = 32 must equal Dv (v.extent[3]) = 16" } },
    { "dq with 3 heads", BACKWARD, DENSE, 0, 0, 0, EXTENT, DQ, 1, 3, 0, INVALID,
      { ".dq.extent[1] = 3 must equal H (q.extent[1]) = 4" } },
    { "dq bf16", BACKWARD, MASK, 0, 0, 0, TYPE, DQ, 0, bf16, 0, INVALID,
      { ".dq.dataType = BK_DATA_TYPE_BF16" } },
    { "dq with Dv columns", BACKWARD, DENSE, 0, 0, 0, EXTENT, DQ, 3, DV, 0, INVALID,
      { ".dq.extent[3] = 16 must equal D (q.extent[3]) = 32" } },
    { "dk with H heads", BACKWARD, DENSE, 0, 0, 0, EXTENT, DK, 1, H, 0, INVALID,
      { ".dk.extent[1] = 4 must equal Hkv (k.extent[1]) = 2" } },
    { "dk with 70 rows", BACKWARD, DENSE, 0, 0, 0, EXTENT, DK, 2, 70, 0, INVALID,
      { ".dk.extent[2] = 70 must equal Lk (k.extent[2]) = 72" } },
    { "dv with D columns", BACKWARD, LIST, 0, 0, 0, EXTENT, DV_T, 3, D, 0, INVALID,
      { ".dv.extent[3] = 32 must equal Dv (v.extent[3]) = 16" } },
    { "dv absent", BACKWARD, DENSE, 0, 0, 0, ABSENT, DV_T, 0, 0, 0, INVALID,
      { ".dv.dataType" } },
    { "dq overlapping itself", BACKWARD, DENSE, 0, 0, 0, OVERLAP, DQ, 0, 0, 0, INVALID,
      { ".dq.stride", "overlap" } },
    { "dk overlapping itself", BACKWARD, MASK, 0, 0, 0, OVERLAP, DK, 0, 0, 0, INVALID,
      { ".dk.stride", "overlap" } },
    { "dv overlapping itself", BACKWARD, LIST, 0, 0, 0, OVERLAP, DV_T, 0, 0, 0, INVALID,
      { ".dv.stride", "overlap" } },
};
#define RULES (sizeof rules / sizeof rules[0])

static void apply(const struct rule *r, struct view *v)
{
    BkTensorDesc *t = v->t[r->field];
    switch (r->op) {
    case NONE: break;
    case EXTENT: t->extent[r->dim] = r->value; break;
    case TYPE: t->dataType = (BkDataType)r->value; break;
    case RANK: t->rank = (uint32_t)r->value; break;
    case OVERLAP:                  /* every stride 1 */
        for (uint32_t k = 0; k < t->rank; k++)
            t->stride[k] = 1;
        break;
    case ABSENT: *t = (BkTensorDesc){ 0 }; break;
    case PRESENT: *t = t3(r->field == MASK_T ? u8 : i32, B, H, NBQ * NBK); break;
    case FLAGS: *v->flags = (BkAttentionFlags)r->value; break;
    case RESERVED: *v->reserved = (uint32_t)r->value; break;
    case SCALE: *v->scale = r->dvalue; break;
    case FORM: v->pattern->form = (BkAttentionPatternForm)r->value; break;
    case PATTERN_RESERVED: v->pattern->reserved = (uint32_t)r->value; break;
    case BLOCK_Q: v->pattern->blockQ = (int32_t)r->value; break;
    case BLOCK_K: v->pattern->blockK = (int32_t)r->value; break;
    case NO_KEYS:                  /* every operand of Lk rows empty */
        for (int f = K; f < FIELDS; f++)
            if (v->t[f] && (f == K || f == V || f == DK || f == DV_T))
                v->t[f]->extent[2] = 0;
        break;
    }
}

static void test_rules(void)
{
    for (size_t i = 0; i < RULES; i++) {
        const struct rule *r = &rules[i];
        for (int backward = 0; backward < 2; backward++) {
            if ((r->which == FORWARD && backward) || (r->which == BACKWARD && !backward))
                continue;
            struct infos in;
            struct view v = make(&in, backward, r->form, r->type ? r->type : f16, r->bq, r->bk);
            apply(r, &v);
            char what[200], needle[200];
            snprintf(what, sizeof what, "%s: %s", backward ? "backward" : "forward", r->what);
            const char *needles[5] = { NULL };
            if (r->needles[0]) {
                snprintf(needle, sizeof needle, "%s%s", v.name, r->needles[0]);
                needles[0] = needle;
                for (int n = 1; n < 4; n++)
                    needles[n] = r->needles[n];
            }
            bkt_expect_plan(ctx, v.info, r->code, what, needles);
        }
    }
}

/* Rules that need several fields changed at once. */
static void test_sizes(void)
{
    struct infos in;
    for (int backward = 0; backward < 2; backward++) {
        const char *dir = backward ? "backward" : "forward";
        char what[160], needle[160];

        /* nbq x nbk past 64 bits: 2^33 x 2^33 blocks of one element. */
        struct view v = make(&in, backward, MASK, f16, 1, 1);
        const int64_t huge = INT64_C(1) << 33;
        v.t[Q]->extent[2] = v.t[Y]->extent[2] = v.t[LSE]->extent[2] = huge;
        v.t[K]->extent[2] = v.t[V]->extent[2] = huge;
        for (int f = DY; backward && f < FIELDS; f++)
            v.t[f]->extent[2] = huge;
        snprintf(what, sizeof what, "%s: nbq x nbk overflowing 64 bits", dir);
        snprintf(needle, sizeof needle, "%s.pattern: nbq x nbk = 8589934592 x 8589934592", v.name);
        BKT_EXPECT_PLAN(ctx, v.info, INVALID, what, needle, "overflow");

        /* The list's workspace past 64 bits: Bp Hp nbq nbk = 8 x 2^31 x 2^31. */
        v = make(&in, backward, LIST, f16, 1, 1);
        const int64_t big = INT64_C(1) << 31;
        for (int f = 0; f < FIELDS; f++)
            if (v.t[f] && f != MASK_T) {
                v.t[f]->extent[0] = 4;
                v.t[f]->extent[1] = f == K || f == V || f == DK || f == DV_T ? 1 : 2;
                v.t[f]->extent[2] = big;
                if (f == Q || f == K || f == DQ || f == DK)
                    v.t[f]->extent[3] = 1;
                if (f == V || f == Y || f == DY || f == DV_T)
                    v.t[f]->extent[3] = 1;
            }
        v.t[INDICES]->extent[3] = 1;
        snprintf(what, sizeof what, "%s: the list's workspace overflowing 64 bits", dir);
        snprintf(needle, sizeof needle, "%s: the workspace would exceed 64 bits", v.name);
        BKT_EXPECT_PLAN(ctx, v.info, INVALID, what, needle);

        /* Empty problems are valid. */
        const int dims[][2] = { { 0, 0 }, { 1, 0 }, { 2, 0 } };  /* (tensor dim, value) */
        for (size_t e = 0; e < sizeof dims / sizeof dims[0]; e++) {
            v = make(&in, backward, LIST, f16, 0, 0);
            for (int f = 0; f < FIELDS; f++) {
                const bool kv = f == K || f == V || f == DK || f == DV_T;
                if (!v.t[f] || f == MASK_T || (dims[e][0] == 2 && kv))
                    continue;
                if (dims[e][0] == 1 && kv)      /* H = 0 with Hkv = 1 */
                    v.t[f]->extent[1] = 1;
                else
                    v.t[f]->extent[dims[e][0]] = dims[e][1];
            }
            snprintf(what, sizeof what, "%s: an empty problem (%s = 0)", dir,
                     (const char *[]){ "B", "H", "Lq" }[e]);
            bkt_expect_plan(ctx, v.info, BK_SUCCESS, what, (const char *const[]){ NULL });
        }
    }
}

/* ---- Slots, properties, run-time checks ------------------------------------------------ */

/* The plan's slots must be these; bkCmdRun must accept each slot's size
 * and refuse size - 1 (BUFFER_TOO_SMALL) and an address off by half the
 * alignment (MISALIGNED_OPERAND). */
static void check_slots(const void *info, const char *what, const struct bkt_slot_want *want,
                        uint32_t count, const struct bkt_buffer *big)
{
    BkPlan plan = BK_NULL_HANDLE;
    if (bkt_create_plan(ctx, info, &plan) != BK_SUCCESS) {
        tap_ok(false, "%s: plan (%s)", what, bkGetLastErrorMessage());
        return;
    }
    BkPlanProperties props;
    bool ok = bkt_slots_match(plan, what, want, count, &props);
    tap_ok(ok, "%s: %u slots with the expected names, sizes, alignments and written flags",
           what, count);

    BkDeviceAddress addr[BK_MAX_BINDINGS] = { 0 };
    uint64_t sizes[BK_MAX_BINDINGS] = { 0 }, at = bkt_slot_addresses(big, want, count, addr);
    const uint64_t ws = props.workspaceSize;
    BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = count,
                      .pBindings = addr, .pBindingSizes = sizes,
                      .workspace = ws ? big->address + at : 0, .workspaceSize = ws };
    at += ws;
    long wrong = 0;
    for (uint32_t i = 0; ok && at <= big->size && i < count; i++) {
        if (want[i].size == 0)
            continue;
        memset(sizes, 0, sizeof sizes);
        sizes[i] = want[i].size;
        BkResult r1 = bkCmdRun(cmd, plan, &run);
        sizes[i] = want[i].size - 1;
        BkResult r2 = bkCmdRun(cmd, plan, &run);
        sizes[i] = 0;
        BkResult r3 = BK_ERROR_MISALIGNED_OPERAND;
        if (want[i].alignment > 1) {
            addr[i] += want[i].alignment / 2;
            r3 = bkCmdRun(cmd, plan, &run);
            addr[i] -= want[i].alignment / 2;
        }
        if ((r1 != BK_SUCCESS || r2 != BK_ERROR_BUFFER_TOO_SMALL ||
             r3 != BK_ERROR_MISALIGNED_OPERAND) && wrong++ == 0)
            tap_diag("%s: slot %u: size gives %s, size - 1 %s, misaligned %s", what, i,
                     bkResultString(r1), bkResultString(r2), bkResultString(r3));
    }
    tap_ok(ok && at <= big->size && wrong == 0, "%s: bkCmdRun checks those sizes and alignments",
           what);

    /* The binding count, the workspace, an output over an input. */
    memset(sizes, 0, sizeof sizes);
    run.bindingCount = count - 1;
    BKT_EXPECT(bkCmdRun(cmd, plan, &run), INVALID, "BkRunInfo.bindingCount", "%s: %u bindings",
               what, count - 1);
    run.bindingCount = count;
    if (ws) {
        run.workspaceSize = ws - 1;
        BKT_EXPECT(bkCmdRun(cmd, plan, &run), BK_ERROR_WORKSPACE_TOO_SMALL,
                   "BkRunInfo.workspaceSize", "%s: a workspace one byte short", what);
        run.workspaceSize = ws;
        const BkDeviceAddress w = run.workspace;
        run.workspace = 0;
        BKT_EXPECT(bkCmdRun(cmd, plan, &run), INVALID, "BkRunInfo.workspace is 0",
                   "%s: no workspace address", what);
        /* A workspace whose BkMemory ends before the plan's bytes do: the
         * last 256-byte step of the memory (when the plan needs more). */
        run.workspace = (big->address + big->size - 1) & ~(BkDeviceAddress)255;
        if (big->address + big->size - run.workspace < ws)
            BKT_EXPECT(bkCmdRun(cmd, plan, &run), BK_ERROR_WORKSPACE_TOO_SMALL,
                       "its BkMemory has", "%s: a workspace at the end of its memory", what);
        run.workspace = ~(BkDeviceAddress)255;
        BKT_EXPECT(bkCmdRun(cmd, plan, &run), INVALID, "wrap the address space",
                   "%s: a workspace that wraps the address space", what);
        run.workspace = w;
    } else {
        tap_ok(run.workspace == 0, "%s: no workspace", what);
    }
    const uint32_t out = count == 8 ? BK_ATTENTION_BINDING_Y : BK_ATTENTION_BACKWARD_BINDING_DQ;
    const BkDeviceAddress keep = addr[out];
    addr[out] = addr[BK_ATTENTION_BINDING_Q];
    BKT_EXPECT(bkCmdRun(cmd, plan, &run), INVALID, "cannot run in place",
               "%s: the output bound over q", what);
    addr[out] = keep;
    bkDestroyPlan(plan);
}

static void test_slots(const struct bkt_buffer *big)
{
    struct infos in;
    const uint64_t q2 = B * H * LQ * D * 2, k2 = B * HKV * LK * D * 2, v2 = B * HKV * LK * DV * 2;
    const uint64_t y2 = B * H * LQ * DV * 2, lse4 = B * H * LQ * 4;
    make(&in, false, MASK, f16, 0, 0);
    const struct bkt_slot_want fwd_mask[] = {
        { "q", q2, 2, false }, { "k", k2, 2, false },     { "v", v2, 2, false },
        { "mask", B * H * NBQ * NBK, 1, false },          { "counts", 0, 1, false },
        { "indices", 0, 1, false }, { "y", y2, 2, true }, { "lse", lse4, 4, true },
    };
    check_slots(&in.fwd, "forward, MASK", fwd_mask, 8, big);

    make(&in, false, LIST, bf16, 0, 0);
    in.fwd.lse = (BkTensorDesc){ 0 };
    const struct bkt_slot_want fwd_list[] = {
        { "q", q2, 2, false }, { "k", k2, 2, false }, { "v", v2, 2, false },
        { "mask", 0, 1, false }, { "counts", B * H * NBQ * 4, 4, false },
        { "indices", B * H * NBQ * CAP * 4, 4, false }, { "y", y2, 2, true },
        { "lse", 0, 1, true },
    };
    check_slots(&in.fwd, "forward, LIST, no lse", fwd_list, 8, big);

    make(&in, true, LIST, f32, 0, 0);
    const struct bkt_slot_want bwd_list[] = {
        { "q", 2 * q2, 4, false },  { "k", 2 * k2, 4, false },  { "v", 2 * v2, 4, false },
        { "mask", 0, 1, false },    { "counts", B * H * NBQ * 4, 4, false },
        { "indices", B * H * NBQ * CAP * 4, 4, false },
        { "y", 2 * y2, 4, false },  { "lse", lse4, 4, false },  { "dy", 2 * y2, 4, false },
        { "dq", 2 * q2, 4, true },  { "dk", 2 * k2, 4, true },  { "dv", 2 * v2, 4, true },
    };
    check_slots(&in.bwd, "backward, LIST", bwd_list, 12, big);

    make(&in, true, DENSE, f64, 0, 0);
    in.bwd.dq.stride[0] = H * LQ * D + 5, in.bwd.dq.stride[1] = LQ * D;
    in.bwd.dq.stride[2] = D, in.bwd.dq.stride[3] = 1;
    const uint64_t dq_span = ((B - 1) * (H * LQ * D + 5) + H * LQ * D) * 8;
    const struct bkt_slot_want bwd_dense[] = {
        { "q", 4 * q2, 8, false },  { "k", 4 * k2, 8, false },  { "v", 4 * v2, 8, false },
        { "mask", 0, 1, false },    { "counts", 0, 1, false },  { "indices", 0, 1, false },
        { "y", 4 * y2, 8, false },  { "lse", 2 * lse4, 8, false }, { "dy", 4 * y2, 8, false },
        { "dq", dq_span, 8, true }, { "dk", 4 * k2, 8, true },  { "dv", 4 * v2, 8, true },
    };
    check_slots(&in.bwd, "backward, DENSE, f64, padded dq", bwd_dense, 12, big);
}

static void test_properties(void)
{
    static const struct {
        bool backward;
        BkAttentionPatternForm form;
        BkDataType type;
        const char *kernel;
        uint64_t workspace;
    } cases[] = {
        { false, DENSE, f16, "host_attention_forward_f16", 0 },
        /* The forward's run-time choice: 256 bytes for a MASK or LIST. */
        { false, MASK, bf16, "host_attention_forward_bf16", 256 },
        /* The scattered mask (B H nbq nbk bytes), bad flags (B H), to 256. */
        { false, LIST, f32, "host_attention_forward_f32", 256 + 256 },
        /* Row sums in lse's type. */
        { true, DENSE, f64, "host_attention_backward_f64", B * H * LQ * 8 },
        { true, MASK, f16, "host_attention_backward_f16", B * H * LQ * 4 },
        { true, LIST, bf16, "host_attention_backward_bf16", 256 + B * H * LQ * 4 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct infos in;
        const struct view v = make(&in, cases[i].backward, cases[i].form, cases[i].type, 0, 0);
        BkPlan plan = BK_NULL_HANDLE;
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        bool ok = bkt_create_plan(ctx, v.info, &plan) == BK_SUCCESS &&
                  bkGetPlanProperties(plan, &props) == BK_SUCCESS;
        const BkPrecisionGuarantee *pg = &props.precision;
        ok = ok && pg->computeType == f64 && pg->accumulatorType == f64 &&
             pg->deterministic == BK_TRUE && pg->bitStable == BK_TRUE &&
             props.workspaceSize == cases[i].workspace && props.workspaceAlignment == 256 &&
             props.bindingCount == (cases[i].backward ? 12u : 8u) &&
             props.operation == ((const BkBaseInStructure *)v.info)->sType &&
             strcmp(props.kernelName, cases[i].kernel) == 0;
        if (!tap_ok(ok, "%s: kernel %s, F64 compute and sums, deterministic, bit-stable, "
                    "workspace %llu", v.name, cases[i].kernel,
                    (unsigned long long)cases[i].workspace))
            tap_diag("compute %d, accumulate %d, workspace %llu, kernel \"%s\"",
                     (int)pg->computeType, (int)pg->accumulatorType,
                     (unsigned long long)props.workspaceSize, props.kernelName);
        bkDestroyPlan(plan);
    }
}

/* Each allocation failure in bkCreatePlan gives OUT_OF_HOST_MEMORY and
 * leaks nothing. */
static void test_plan_allocation_failures(void)
{
    for (int backward = 0; backward < 2; backward++) {
        struct infos in;
        const struct view v = make(&in, backward, LIST, f16, 0, 0);
        bool made;
        long needed;
        const bool ok = bkt_plan_allocation_failures_clean(ctx, v.info, &made, &needed);
        if (!made)
            tap_ok(false, "%s: no plan (%s)", v.name, bkGetLastErrorMessage());
        else
            tap_ok(ok, "%s: each of %ld allocation failures in bkCreatePlan gives "
                   "OUT_OF_HOST_MEMORY and leaks nothing", v.name, needed);
    }
}

int main(void)
{
    struct bkt_alloc_stats stats;
    BkAllocationCallbacks cb = bkt_counting_allocator(&stats);
    BkContextCreateInfo info = {
        .sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO,
        .deviceType = BK_DEVICE_TYPE_HOST,
        .apiVersion = BK_HEADER_VERSION,
    };
    bkt_capture_messages();
    if (bkCreateContext(&info, &cb, &ctx) != BK_SUCCESS)
        tap_bail("bkCreateContext: %s", bkGetLastErrorMessage());
    if (bkAllocateCommandBuffer(ctx, NULL, &cmd) != BK_SUCCESS)
        tap_bail("bkAllocateCommandBuffer: %s", bkGetLastErrorMessage());
    BkCommandBufferBeginInfo begin = { .sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    if (bkBeginCommandBuffer(cmd, &begin) != BK_SUCCESS)
        tap_bail("bkBeginCommandBuffer: %s", bkGetLastErrorMessage());
    struct bkt_buffer big = bkt_alloc(ctx, 1 << 20);

    test_rules();
    test_sizes();
    test_slots(&big);
    test_properties();
    test_plan_allocation_failures();
    tap_ok(bkt_stray_plans() == 0, "failed bkCreatePlan calls left no handle (%ld did)",
           bkt_stray_plans());

    bkFreeCommandBuffer(cmd);   /* never submitted: the runs recorded used no real data */
    bkt_free(ctx, &big);
    bkDestroyContext(ctx);
    tap_ok(bkt_alloc_live(&stats) == 0 && stats.unknown_frees == 0 && stats.bad_alignment == 0,
           "everything allocated through the context's callbacks was freed (%ld live, %ld "
           "foreign frees, %ld bad alignments; %ld allocations)", bkt_alloc_live(&stats),
           stats.unknown_frees, stats.bad_alignment, stats.allocations);
    return tap_done();
}
