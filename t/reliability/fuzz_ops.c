/* SPDX-License-Identifier: Apache-2.0 */
/* Op infos for the fuzz harness: see fuzz_ops.h. */
#include "config.h"

#include "fuzz_ops.h"

#include <stddef.h>
#include <string.h>

/* ---- Shared by every family ------------------------------------------------ */

static const BkDataType float_types[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
                                          BK_DATA_TYPE_F64 };
static const BkDataType other_types[] = { BK_DATA_TYPE_I32, BK_DATA_TYPE_U8, BK_DATA_TYPE_U16 };

/* Mostly a floating type, sometimes one no gated op takes. */
static BkDataType pick_type(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    return b % 8 < 7 ? float_types[b % 4] : other_types[b % 3];
}

/* Strides for t's extents: zero (contiguous), explicit row-major, padded,
 * or a random dimension order with padding. Never self-overlapping. */
static void layout(struct fz_input *in, BkTensorDesc *t)
{
    unsigned mode = fz_byte(in) % 4;
    if (mode == 0) {
        memset(t->stride, 0, sizeof t->stride);
        return;
    }
    uint32_t order[BK_MAX_TENSOR_RANK];
    for (uint32_t k = 0; k < t->rank; k++)
        order[k] = t->rank - 1 - k; /* fastest first */
    if (mode == 3)
        for (uint32_t k = t->rank; k > 1; k--) {
            uint32_t j = fz_byte(in) % k, tmp = order[k - 1];
            order[k - 1] = order[j], order[j] = tmp;
        }
    int64_t s = 1;
    for (uint32_t k = 0; k < t->rank; k++) {
        t->stride[order[k]] = s;
        int64_t pad = mode >= 2 ? fz_byte(in) % 3 : 0;
        s *= (t->extent[order[k]] > 0 ? t->extent[order[k]] : 1) + pad;
    }
}

/* Breaks one field of tensor t. */
static void mutate_tensor(struct fz_input *in, BkTensorDesc *t)
{
    switch (fz_byte(in) % 9) {
    case 7: { /* empty: one extent 0, another extent or a stride huge */
        t->extent[fz_byte(in) % BK_MAX_TENSOR_RANK] = 0;
        const int64_t huge = fz_one_in(in, 2) ? INT64_MAX - (int64_t)fz_byte(in)
                                              : (int64_t)1 << (32 + fz_byte(in) % 31);
        if (fz_byte(in) & 1)
            t->extent[fz_byte(in) % BK_MAX_TENSOR_RANK] = huge;
        else
            t->stride[fz_byte(in) % BK_MAX_TENSOR_RANK] = huge;
        break;
    }
    case 8: /* interleaved small strides ({3, 2} and the like) */
        for (uint32_t k = 0; k < BK_MAX_TENSOR_RANK; k++)
            t->stride[k] = 1 + fz_byte(in) % 12;
        break;
    case 0: t->rank = fz_pick_u32(in); break;
    case 1: t->dataType = (BkDataType)fz_pick_u32(in); break;
    case 2: case 3: t->extent[fz_byte(in) % BK_MAX_TENSOR_RANK] = fz_pick_i64(in); break;
    case 4: case 5: t->stride[fz_byte(in) % BK_MAX_TENSOR_RANK] = fz_pick_i64(in); break;
    default: { /* equal small strides everywhere: usually self-overlapping */
        int64_t s = fz_byte(in) % 3;
        for (uint32_t k = 0; k < BK_MAX_TENSOR_RANK; k++)
            t->stride[k] = s;
        break;
    }
    }
}

/* A view of count unused slots; view_tensor makes slot i the tensor t,
 * unless t is absent (dataType UNDEFINED). */
static struct fz_op_view view_new(unsigned count)
{
    struct fz_op_view v;
    memset(&v, 0, sizeof v);
    v.count = count;
    for (unsigned i = 0; i < FZ_MAX_SLOTS; i++)
        v.alias[i] = -1;
    return v;
}

static void view_tensor(struct fz_op_view *v, unsigned i, BkTensorDesc *t, bool written)
{
    v->t[i] = t->dataType == BK_DATA_TYPE_UNDEFINED ? NULL : t;
    v->written[i] = written;
}

/* ---- Gated activations, forward and backward ----------------------------- */

static unsigned tensors_gated(union fz_op_info *op, BkTensorDesc **t)
{
    t[0] = &op->gated.input, t[1] = &op->gated.output;
    return 2;
}

static unsigned tensors_gated_bwd(union fz_op_info *op, BkTensorDesc **t)
{
    t[0] = &op->gated_bwd.input, t[1] = &op->gated_bwd.gradOutput;
    t[2] = &op->gated_bwd.gradInput;
    return 3;
}

static struct fz_op_view view_gated(union fz_op_info *op)
{
    struct fz_op_view v = view_new(2);
    view_tensor(&v, 0, &op->gated.input, false);
    view_tensor(&v, 1, &op->gated.output, true);
    return v;
}

static struct fz_op_view view_gated_bwd(union fz_op_info *op)
{
    struct fz_op_view v = view_new(3);
    view_tensor(&v, 0, &op->gated_bwd.input, false);
    view_tensor(&v, 1, &op->gated_bwd.gradOutput, false);
    view_tensor(&v, 2, &op->gated_bwd.gradInput, true);
    return v;
}

/* kind and splitAxis sit at the same place in both infos. */
static void build_gated_common(struct fz_input *in, union fz_op_info *op, BkTensorDesc **t,
                               unsigned count)
{
    uint32_t rank = 1 + fz_byte(in) % 4;
    if (fz_one_in(in, 8))
        rank = 1 + fz_byte(in) % BK_MAX_TENSOR_RANK;
    uint32_t axis = fz_byte(in) % rank;
    int64_t half[BK_MAX_TENSOR_RANK];
    for (uint32_t k = 0; k < rank; k++) {
        uint8_t b = fz_byte(in);
        half[k] = b % 32 == 31 ? 0 : 1 + b % (rank > 4 ? 2 : 6);
    }
    BkDataType type = pick_type(in);
    uint8_t kb = fz_byte(in);
    op->gated.kind = kb < 250 ? (BkGatedActivationKind)(kb % 5)
                              : (BkGatedActivationKind)fz_pick_u32(in);
    op->gated.splitAxis = axis;
    for (unsigned i = 0; i < count; i++) {
        bool is_half = i == 1; /* output, or gradOutput */
        t[i]->dataType = type;
        t[i]->rank = rank;
        for (uint32_t k = 0; k < rank; k++)
            t[i]->extent[k] = half[k] * (k == axis && !is_half ? 2 : 1);
        layout(in, t[i]);
    }
}

static void build_gated(struct fz_input *in, union fz_op_info *op)
{
    BkTensorDesc *t[FZ_MAX_SLOTS];
    op->base.sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO;
    build_gated_common(in, op, t, tensors_gated(op, t));
}

static void build_gated_bwd(struct fz_input *in, union fz_op_info *op)
{
    BkTensorDesc *t[FZ_MAX_SLOTS];
    op->base.sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO;
    build_gated_common(in, op, t, tensors_gated_bwd(op, t));
}

static void mutate_gated_scalars(struct fz_input *in, union fz_op_info *op)
{
    if (fz_byte(in) & 1)
        op->gated.kind = (BkGatedActivationKind)fz_pick_u32(in);
    else
        op->gated.splitAxis = fz_pick_u32(in);
}

/* ---- Type conversion ------------------------------------------------------ */

static unsigned tensors_convert(union fz_op_info *op, BkTensorDesc **t)
{
    t[0] = &op->convert.input, t[1] = &op->convert.output;
    return 2;
}

static struct fz_op_view view_convert(union fz_op_info *op)
{
    struct fz_op_view v = view_new(2);
    view_tensor(&v, 0, &op->convert.input, false);
    view_tensor(&v, 1, &op->convert.output, true);
    return v;
}

/* Any two types of the nine (now and then one it refuses), the same
 * extents, layouts of their own. */
static void build_convert(struct fz_input *in, union fz_op_info *op)
{
    static const BkDataType types[] = {
        BK_DATA_TYPE_F32, BK_DATA_TYPE_F64, BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16,
        BK_DATA_TYPE_I32, BK_DATA_TYPE_U32, BK_DATA_TYPE_U16, BK_DATA_TYPE_I8, BK_DATA_TYPE_U8,
    };
    BkTensorDesc *t[FZ_MAX_SLOTS];
    op->base.sType = BK_STRUCTURE_TYPE_CONVERT_INFO;
    tensors_convert(op, t);
    uint32_t rank = 1 + fz_byte(in) % 4;
    if (fz_one_in(in, 8))
        rank = 1 + fz_byte(in) % BK_MAX_TENSOR_RANK;
    int64_t extent[BK_MAX_TENSOR_RANK];
    for (uint32_t k = 0; k < rank; k++) {
        const uint8_t b = fz_byte(in);
        extent[k] = b % 32 == 31 ? 0 : 1 + b % (rank > 4 ? 2 : 7);
    }
    for (unsigned i = 0; i < 2; i++) {
        const uint8_t b = fz_byte(in);
        t[i]->dataType = b < 250 ? types[b % 9] : BK_DATA_TYPE_TF32;
        t[i]->rank = rank;
        memcpy(t[i]->extent, extent, sizeof extent[0] * rank);
        layout(in, t[i]);
    }
}

static void mutate_convert_scalars(struct fz_input *in, union fz_op_info *op)
{
    if (fz_byte(in) & 1)
        op->convert.flags = fz_pick_u32(in);
    else
        op->convert.reserved = fz_pick_u32(in);
}

/* ---- The GEMM family ------------------------------------------------------- */

static bool half_type(BkDataType t)
{
    return t == BK_DATA_TYPE_F16 || t == BK_DATA_TYPE_BF16;
}

/* A small extent: mostly 1..7, sometimes 0 or up to 40. */
static int64_t small_extent(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    if (b % 16 == 15)
        return 0;
    return b % 16 == 14 ? 8 + b % 33 : 1 + b % 7;
}

/* A finite scalar mostly; 0, small values, or NaN and infinities. */
static double pick_scalar(struct fz_input *in)
{
    static const double values[] = { 1.0, 0.0, -1.0, 0.5, 2.0, -0.0, 1e-30, -3.25 };
    uint8_t b = fz_byte(in);
    if (b < 240)
        return values[b % 8];
    switch (b % 4) {
    case 0: return __builtin_nan("");
    case 1: return __builtin_inf();
    case 2: return -__builtin_inf();
    default: return 1e308 * 10.0 * (b & 1 ? 1 : -1);
    }
}

/* A [rows, cols] (batch 0) or [batch, rows, cols] matrix: row-major
 * contiguous (zero strides), row- or column-major with a padded leading
 * dimension and batch stride, or any order (layout()). */
static void matrix(struct fz_input *in, BkTensorDesc *t, BkDataType type, int64_t batch,
                   int64_t rows, int64_t cols)
{
    memset(t, 0, sizeof *t);
    t->dataType = type;
    t->rank = batch ? 3 : 2;
    if (batch)
        t->extent[0] = batch;
    const uint32_t r = t->rank - 2, c = t->rank - 1;
    t->extent[r] = rows, t->extent[c] = cols;
    const uint8_t mode = fz_byte(in) % 8;
    if (mode < 2)
        return;
    if (mode == 7) {
        layout(in, t);
        return;
    }
    const bool col = mode % 2;
    const int64_t pad = mode >= 4 ? fz_byte(in) % 3 : 0;
    const int64_t lead = (col ? rows : cols) + pad;
    t->stride[r] = col ? 1 : (lead > 0 ? lead : 1);
    t->stride[c] = col ? (lead > 0 ? lead : 1) : 1;
    if (batch)
        t->stride[0] = (rows > 0 ? rows : 1) * (cols > 0 ? cols : 1) + pad;
}

static void vector(BkTensorDesc *t, BkDataType type, int64_t n)
{
    memset(t, 0, sizeof *t);
    t->dataType = type;
    t->rank = 1;
    t->extent[0] = n;
}

/* The output type of a GEMM with inputs of type t: t, or F32 for half types. */
static BkDataType output_type(struct fz_input *in, BkDataType t)
{
    uint8_t b = fz_byte(in);
    if (b % 16 == 15)
        return pick_type(in);
    return half_type(t) && b % 2 ? BK_DATA_TYPE_F32 : t;
}

/* C and D of [batch,] rows x cols; C absent, shared (rank 2), or with D's
 * very layout (so that C == D in place is possible). */
static void c_and_d(struct fz_input *in, BkTensorDesc *c, BkTensorDesc *d, BkDataType type,
                    int64_t batch, int64_t rows, int64_t cols, double *beta)
{
    matrix(in, d, type, batch, rows, cols);
    switch (fz_byte(in) % 4) {
    case 0:
        memset(c, 0, sizeof *c);   /* no C: beta must be 0 */
        if (!fz_one_in(in, 8))
            *beta = 0;
        break;
    case 1: *c = *d; break;
    case 2: matrix(in, c, type, fz_byte(in) % 4 == 0 ? 0 : batch, rows, cols); break;
    default: matrix(in, c, type, batch, rows, cols); break;
    }
}

static void bias_of(struct fz_input *in, BkTensorDesc *bias, BkDataType type, int64_t n)
{
    if (fz_byte(in) % 2) {
        memset(bias, 0, sizeof *bias);
        return;
    }
    vector(bias, type, n);
    if (fz_one_in(in, 16))
        bias->stride[0] = 1 + fz_byte(in) % 3;
}

static unsigned tensors_gemm(union fz_op_info *op, BkTensorDesc **t)
{
    BkGemmInfo *g = &op->gemm;
    t[0] = &g->a, t[1] = &g->b, t[2] = &g->c, t[3] = &g->d, t[4] = &g->bias;
    return 5;
}

static void build_gemm(struct fz_input *in, union fz_op_info *op)
{
    BkGemmInfo *g = &op->gemm;
    g->sType = BK_STRUCTURE_TYPE_GEMM_INFO;
    const BkDataType ab = pick_type(in), cd = output_type(in, ab);
    const int64_t m = small_extent(in), n = small_extent(in), k = small_extent(in);
    const int64_t batch = fz_byte(in) % 4 == 0 ? small_extent(in) : 0;
    g->transA = (BkGemmOp)(fz_byte(in) % 2);
    g->transB = (BkGemmOp)(fz_byte(in) % 2);
    const uint8_t shared = fz_byte(in);
    matrix(in, &g->a, ab, shared % 3 == 1 ? 0 : batch, g->transA ? k : m, g->transA ? m : k);
    matrix(in, &g->b, fz_one_in(in, 16) ? pick_type(in) : ab, shared % 3 == 2 ? 0 : batch,
           g->transB ? n : k, g->transB ? k : n);
    g->alpha = pick_scalar(in);
    g->beta = pick_scalar(in);
    c_and_d(in, &g->c, &g->d, cd, batch, m, n, &g->beta);
    bias_of(in, &g->bias, cd, n);
    g->activation = (BkGemmActivation)(fz_byte(in) % 3);
    g->flags = fz_byte(in) % 4 == 0 ? BK_GEMM_ALLOW_TF32_BIT : 0;
}

static void mutate_gemm_scalars(struct fz_input *in, union fz_op_info *op)
{
    BkGemmInfo *g = &op->gemm;
    switch (fz_byte(in) % 6) {
    case 0: g->transA = (BkGemmOp)fz_pick_u32(in); break;
    case 1: g->transB = (BkGemmOp)fz_pick_u32(in); break;
    case 2: g->activation = (BkGemmActivation)fz_pick_u32(in); break;
    case 3: g->flags = fz_pick_u32(in); break;
    case 4: g->alpha = pick_scalar(in); break;
    default: g->beta = pick_scalar(in); break;
    }
}

/* Whether a tensor has no element (an extent 0). */
static bool no_elements(const BkTensorDesc *t)
{
    for (uint32_t k = 0; k < t->rank && k < BK_MAX_TENSOR_RANK; k++)
        if (t->extent[k] == 0)
            return true;
    return false;
}

static struct fz_op_view view_gemm(union fz_op_info *op)
{
    BkGemmInfo *g = &op->gemm;
    struct fz_op_view v = view_new(5);
    const bool empty = no_elements(&g->d);   /* then nothing is read */
    if (!empty) {
        view_tensor(&v, 0, &g->a, false);
        view_tensor(&v, 1, &g->b, false);
        view_tensor(&v, 2, &g->c, false);
        view_tensor(&v, 4, &g->bias, false);
    }
    view_tensor(&v, 3, &g->d, true);
    v.alias[3] = 2;
    return v;
}

static unsigned tensors_sp24_convert(union fz_op_info *op, BkTensorDesc **t)
{
    BkSparse24ConvertInfo *c = &op->sp24_convert;
    t[0] = &c->dense, t[1] = &c->values, t[2] = &c->metadata;
    return 3;
}

/* K: mostly a multiple of 8 (0 to 48), sometimes not. */
static int64_t pick_k(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    return b % 32 == 31 ? b % 13 : 8 * (b % 7);
}

static void build_sp24_convert(struct fz_input *in, union fz_op_info *op)
{
    BkSparse24ConvertInfo *c = &op->sp24_convert;
    c->sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO;
    uint8_t b = fz_byte(in);
    c->conversion = b < 250 ? (BkSparse24Conversion)(b % 4)
                            : (BkSparse24Conversion)fz_pick_u32(in);
    const BkDataType type = pick_type(in);
    const int64_t m = small_extent(in), k = pick_k(in);
    matrix(in, &c->dense, type, 0, m, k);
    matrix(in, &c->values, type, 0, m, k / 2);
    matrix(in, &c->metadata, fz_one_in(in, 16) ? pick_type(in) : BK_DATA_TYPE_U16, 0, m, k / 8);
    if (c->conversion == BK_SPARSE24_VALIDATE && fz_byte(in) % 2) {
        memset(&c->dense, 0, sizeof c->dense);
        memset(&c->values, 0, sizeof c->values);
    }
}

static void mutate_sp24_convert_scalars(struct fz_input *in, union fz_op_info *op)
{
    if (fz_byte(in) & 1)
        op->sp24_convert.conversion = (BkSparse24Conversion)fz_pick_u32(in);
    else
        op->sp24_convert.reserved = fz_pick_u32(in);
}

static struct fz_op_view view_sp24_convert(union fz_op_info *op)
{
    BkSparse24ConvertInfo *c = &op->sp24_convert;
    struct fz_op_view v = view_new(4);
    const bool validate = c->conversion == BK_SPARSE24_VALIDATE;
    const bool decompress = c->conversion == BK_SPARSE24_DECOMPRESS;
    /* M and K: the metadata's rows and 8 times its columns for a
     * validation, the dense tensor's shape otherwise. */
    const bool empty = validate ? no_elements(&c->metadata) : no_elements(&c->dense);
    /* Written or not by the conversion, used or not. */
    v.written[0] = decompress;
    v.written[1] = v.written[2] = !validate && !decompress;
    if (!empty) {
        if (!validate) {
            view_tensor(&v, 0, &c->dense, decompress);
            view_tensor(&v, 1, &c->values, !decompress);
        }
        view_tensor(&v, 2, &c->metadata, !validate && !decompress);
    }
    v.bytes[3] = sizeof(BkSparse24Report);
    v.align[3] = 8;
    v.written[3] = true;
    return v;
}

static unsigned tensors_sp24_prepare(union fz_op_info *op, BkTensorDesc **t)
{
    t[0] = &op->sp24_prepare.values, t[1] = &op->sp24_prepare.metadata;
    return 2;
}

/* A weight type: F16, BF16 and F32 mostly; F64 (which cannot be
 * prepared) or any type sometimes. */
static BkDataType pick_sparse_type(struct fz_input *in)
{
    static const BkDataType types[] = { BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16, BK_DATA_TYPE_F32,
                                        BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16, BK_DATA_TYPE_F32,
                                        BK_DATA_TYPE_F64 };
    uint8_t b = fz_byte(in);
    return b % 16 == 15 ? pick_type(in) : types[b % 7];
}

static void build_sp24_prepare(struct fz_input *in, union fz_op_info *op)
{
    BkSparse24PrepareInfo *p = &op->sp24_prepare;
    p->sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO;
    const BkDataType type = pick_sparse_type(in);
    const int64_t m = small_extent(in), k = pick_k(in);
    matrix(in, &p->values, type, 0, m, k / 2);
    matrix(in, &p->metadata, BK_DATA_TYPE_U16, 0, m, k / 8);
}

static void mutate_sp24_prepare_scalars(struct fz_input *in, union fz_op_info *op)
{
    /* No scalars: a dimension of a tensor instead. */
    BkTensorDesc *t = fz_byte(in) & 1 ? &op->sp24_prepare.values : &op->sp24_prepare.metadata;
    t->extent[fz_byte(in) % 2] = small_extent(in);
}

static struct fz_op_view view_sp24_prepare(union fz_op_info *op)
{
    BkSparse24PrepareInfo *p = &op->sp24_prepare;
    struct fz_op_view v = view_new(3);
    if (!no_elements(&p->values) && !no_elements(&p->metadata)) {
        view_tensor(&v, 0, &p->values, false);
        view_tensor(&v, 1, &p->metadata, false);
    }
    v.opaque[2] = true;
    v.written[2] = true;
    return v;
}

static unsigned tensors_sp24_gemm(union fz_op_info *op, BkTensorDesc **t)
{
    BkSparse24GemmInfo *g = &op->sp24_gemm;
    t[0] = &g->x, t[1] = &g->c, t[2] = &g->y, t[3] = &g->bias;
    return 4;
}

static void build_sp24_gemm(struct fz_input *in, union fz_op_info *op)
{
    BkSparse24GemmInfo *g = &op->sp24_gemm;
    g->sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO;
    g->weightType = pick_sparse_type(in);
    const BkDataType out = output_type(in, g->weightType);
    g->m = small_extent(in);
    g->k = pick_k(in);
    const int64_t n = small_extent(in);
    const int64_t batch = fz_byte(in) % 4 == 0 ? small_extent(in) : 0;
    matrix(in, &g->x, fz_one_in(in, 16) ? pick_type(in) : g->weightType, batch, n, g->k);
    g->alpha = pick_scalar(in);
    g->beta = pick_scalar(in);
    c_and_d(in, &g->c, &g->y, out, batch, n, g->m, &g->beta);
    bias_of(in, &g->bias, out, g->m);
    g->activation = (BkGemmActivation)(fz_byte(in) % 3);
}

static void mutate_sp24_gemm_scalars(struct fz_input *in, union fz_op_info *op)
{
    BkSparse24GemmInfo *g = &op->sp24_gemm;
    switch (fz_byte(in) % 6) {
    case 0: g->weightType = (BkDataType)fz_pick_u32(in); break;
    case 1: g->m = fz_pick_i64(in); break;
    case 2: g->k = fz_pick_i64(in); break;
    case 3: g->activation = (BkGemmActivation)fz_pick_u32(in); break;
    case 4: g->alpha = pick_scalar(in); break;
    default: g->beta = pick_scalar(in); break;
    }
}

static struct fz_op_view view_sp24_gemm(union fz_op_info *op)
{
    BkSparse24GemmInfo *g = &op->sp24_gemm;
    struct fz_op_view v = view_new(5);
    if (!no_elements(&g->y)) {
        v.opaque[0] = true;
        view_tensor(&v, 1, &g->x, false);
        view_tensor(&v, 2, &g->c, false);
        view_tensor(&v, 4, &g->bias, false);
    }
    view_tensor(&v, 3, &g->y, true);
    v.alias[3] = 2;
    return v;
}

/* ---- The W4A16 family --------------------------------------------------------- */

/* groupSize: 32, 64, 128 or per channel mostly (the small K of 32 and per
 * channel most); sometimes any value. */
static int32_t pick_group(struct fz_input *in)
{
    static const int32_t groups[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL, 32,
                                      BK_W4A16_GROUP_PER_CHANNEL, 32 };
    uint8_t b = fz_byte(in);
    if (b % 16 == 15)
        return b & 16 ? 16 * (int32_t)(b % 9) : (int32_t)fz_pick_u32(in);
    return groups[b % 7];
}

/* Rows per group and the group count of a K-row weight, as the harness
 * reads the rule (for an invalid groupSize: any number, the plan fails). */
static int64_t group_rows(int32_t group, int64_t k)
{
    return group == BK_W4A16_GROUP_PER_CHANNEL || group <= 0 ? (k > 0 ? k : 1) : group;
}

static int64_t group_count(int32_t group, int64_t k)
{
    const int64_t rows = group_rows(group, k);
    return k > 0 && k >= rows ? k / rows : 1;
}

/* K: a multiple of 16 and of the group, up to 256, mostly small (the
 * packed weight is K N / 2 bytes); sometimes any small value. */
static int64_t pick_w4_k(struct fz_input *in, int32_t group)
{
    const int64_t unit = group == 32 || group == 64 || group == 128 ? group : 16;
    uint8_t b = fz_byte(in);
    if (b % 32 == 31)
        return b % 3 == 0 ? 0 : 8 * (b % 9);
    const int64_t most = 256 / unit;
    return unit * (1 + (b % 8 < 6 ? b % 2 : (b / 8) % most));
}

/* N: a multiple of 64 up to 256, mostly 64; any small value sometimes (or
 * often, for QUANTIZE, which has no Marlin rule). */
static int64_t pick_w4_n(struct fz_input *in, bool any)
{
    uint8_t b = fz_byte(in);
    if (b % 32 == 31 || (any && b % 4 == 3))
        return (b / 4) % 72;
    return 64 * (1 + (b % 8 < 5 ? 0 : (b / 8) % 4));
}

/* M: 0 to 20, mostly small. */
static int64_t pick_w4_m(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    return b % 8 < 6 ? 1 + b % 5 : b % 21;
}

/* Scales and activations: F16 or BF16, sometimes any type. */
static BkDataType pick_half(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    return b % 16 == 15 ? pick_type(in) : b % 2 ? BK_DATA_TYPE_BF16 : BK_DATA_TYPE_F16;
}

/* A packed operand or index vector: contiguous (zero strides) mostly, the
 * explicit row-major strides sometimes, any layout() rarely (refused
 * unless it is row-major). */
static void packed_tensor(struct fz_input *in, BkTensorDesc *t, BkDataType type, uint32_t rank,
                          int64_t rows, int64_t cols)
{
    memset(t, 0, sizeof *t);
    t->dataType = type;
    t->rank = rank;
    t->extent[0] = rank == 1 ? cols : rows;
    if (rank == 2)
        t->extent[1] = cols;
    uint8_t b = fz_byte(in);
    if (b % 16 == 14) {
        t->stride[rank - 1] = 1;
        if (rank == 2)
            t->stride[0] = cols > 0 ? cols : 1;
    } else if (b % 16 == 15) {
        layout(in, t);
    }
}

static BkDataType or_sometimes(struct fz_input *in, BkDataType type)
{
    return fz_one_in(in, 16) ? pick_type(in) : type;
}

/* packed and packedScales (slots i and j, when used) are read in 16-byte
 * vectors: their bindings must be 16-byte aligned. */
static void align_packed(struct fz_op_view *v, unsigned i, unsigned j)
{
    v->align[i] = v->t[i] ? 16 : 0;
    v->align[j] = v->t[j] ? 16 : 0;
}

/* The zero points a W4A16 info chains (pNext) a third of the time,
 * rebuilt with each op: plain zeros [G, N] where a conversion uses them,
 * packedZeros [G, N/8] where the op reads or writes packed weights, AWQ's
 * format for a repack sometimes, and now and then a tensor the op does
 * not use, a bad flag or format (the plan then fails). */
static BkW4A16ZeroPointsInfo w4_zp;

static const void *w4_zp_build(struct fz_input *in, bool plain, bool packed, bool repack,
                               int64_t g, int64_t n)
{
    memset(&w4_zp, 0, sizeof w4_zp);
    const uint8_t b = fz_byte(in);
    if (b % 3)
        return NULL;
    w4_zp.sType = BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO;
    if (plain || fz_one_in(in, 16))
        matrix(in, &w4_zp.zeros, or_sometimes(in, BK_DATA_TYPE_U8), 0, g, n);
    if (packed || fz_one_in(in, 16))
        packed_tensor(in, &w4_zp.packedZeros, or_sometimes(in, BK_DATA_TYPE_I32), 2, g, n / 8);
    if (repack && (b & 8))
        w4_zp.checkpointFormat = BK_W4A16_CHECKPOINT_AWQ;
    if (fz_one_in(in, 32))
        w4_zp.flags = fz_pick_u32(in);
    if (fz_one_in(in, 32))
        w4_zp.checkpointFormat = (BkW4A16CheckpointFormat)fz_pick_u32(in);
    return &w4_zp;
}

/* The first BkW4A16ZeroPointsInfo of a chain, as libbk reads it (a
 * mutated chain may hold another, zeroed past its header). */
static BkW4A16ZeroPointsInfo *w4_zp_chained(const void *next)
{
    for (const BkBaseInStructure *c = next; c; c = c->pNext)
        if (c->sType == BK_STRUCTURE_TYPE_W4A16_ZERO_POINTS_INFO)
            return (BkW4A16ZeroPointsInfo *)(uintptr_t)c;
    return NULL;
}

/* The chained zero points' tensors after an info's n. */
static unsigned w4_zp_tensors(const void *next, BkTensorDesc **t, unsigned n)
{
    BkW4A16ZeroPointsInfo *z = w4_zp_chained(next);
    if (!z)
        return n;
    t[n] = &z->zeros, t[n + 1] = &z->packedZeros;
    return n + 2;
}

static unsigned tensors_w4_convert(union fz_op_info *op, BkTensorDesc **t)
{
    BkW4A16ConvertInfo *c = &op->w4_convert;
    t[0] = &c->weight, t[1] = &c->quantized, t[2] = &c->scales, t[3] = &c->packed;
    t[4] = &c->packedScales;
    return w4_zp_tensors(c->pNext, t, 5);
}

static void build_w4_convert(struct fz_input *in, union fz_op_info *op)
{
    BkW4A16ConvertInfo *c = &op->w4_convert;
    c->sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO;
    uint8_t b = fz_byte(in);
    c->conversion = b < 250 ? (BkW4A16Conversion)(b % 3) : (BkW4A16Conversion)fz_pick_u32(in);
    c->groupSize = pick_group(in);
    const bool quantize = c->conversion == BK_W4A16_QUANTIZE;
    const int64_t k = pick_w4_k(in, c->groupSize), n = pick_w4_n(in, quantize);
    const int64_t g = group_count(c->groupSize, k);
    const BkDataType scale = pick_half(in);
    /* The tensors a conversion does not use stay zeroed, but sometimes. */
    const bool extra = fz_one_in(in, 16);
    if (quantize || extra) {
        static const BkDataType weights[] = { BK_DATA_TYPE_F32, BK_DATA_TYPE_F16,
                                              BK_DATA_TYPE_BF16 };
        matrix(in, &c->weight, fz_one_in(in, 16) ? pick_type(in) : weights[fz_byte(in) % 3], 0,
               k, n);
    }
    matrix(in, &c->quantized, or_sometimes(in, BK_DATA_TYPE_U8), 0, k, n);
    matrix(in, &c->scales, scale, 0, g, n);
    if (!quantize || extra) {
        packed_tensor(in, &c->packed, or_sometimes(in, BK_DATA_TYPE_I32), 2, k / 16, 2 * n);
        packed_tensor(in, &c->packedScales, or_sometimes(in, scale), 2, g, n);
    }
    c->pNext = w4_zp_build(in, true, !quantize, false, g, n);
}

static void mutate_w4_convert_scalars(struct fz_input *in, union fz_op_info *op)
{
    if (fz_byte(in) & 1)
        op->w4_convert.conversion = (BkW4A16Conversion)fz_pick_u32(in);
    else
        op->w4_convert.groupSize = (int32_t)fz_pick_u32(in);
}

static struct fz_op_view view_w4_convert(union fz_op_info *op)
{
    BkW4A16ConvertInfo *c = &op->w4_convert;
    struct fz_op_view v = view_new(5);
    const bool pack = c->conversion == BK_W4A16_PACK;
    /* QUANTIZE reads weight and writes the plain form, PACK reads the
     * plain form and writes the packed one, UNPACK the other way; the
     * unused tensors are absent (0 bytes). K, N > 0: never empty. */
    view_tensor(&v, 0, &c->weight, false);
    view_tensor(&v, 1, &c->quantized, !pack);
    view_tensor(&v, 2, &c->scales, !pack);
    view_tensor(&v, 3, &c->packed, pack);
    view_tensor(&v, 4, &c->packedScales, pack);
    align_packed(&v, 3, 4);
    BkW4A16ZeroPointsInfo *z = w4_zp_chained(c->pNext);
    if (z) {
        v.count = 7;
        view_tensor(&v, 5, &z->zeros, !pack);
        view_tensor(&v, 6, &z->packedZeros, pack);
        v.align[6] = v.t[6] ? 16 : 0;
    }
    return v;
}

static unsigned tensors_w4_repack(union fz_op_info *op, BkTensorDesc **t)
{
    BkW4A16GptqRepackInfo *r = &op->w4_repack;
    t[0] = &r->qweight, t[1] = &r->scales, t[2] = &r->qzeros, t[3] = &r->gIdx;
    t[4] = &r->packed, t[5] = &r->packedScales, t[6] = &r->perm;
    return w4_zp_tensors(r->pNext, t, 7);
}

static void build_w4_repack(struct fz_input *in, union fz_op_info *op)
{
    BkW4A16GptqRepackInfo *r = &op->w4_repack;
    r->sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO;
    uint8_t b = fz_byte(in);
    r->zeros = b < 250 ? (BkW4A16GptqZeros)(b % 2) : (BkW4A16GptqZeros)fz_pick_u32(in);
    r->groupSize = pick_group(in);
    const int64_t k = pick_w4_k(in, r->groupSize), n = pick_w4_n(in, false);
    const int64_t g = group_count(r->groupSize, k);
    const BkDataType scale = pick_half(in);
    matrix(in, &r->qweight, or_sometimes(in, BK_DATA_TYPE_I32), 0, k / 8, n);
    matrix(in, &r->scales, scale, 0, g, n);
    const uint8_t present = fz_byte(in);
    if (present & 1)
        matrix(in, &r->qzeros, or_sometimes(in, BK_DATA_TYPE_I32), 0, g, n / 8);
    const bool g_idx = present & 2;
    if (g_idx)
        packed_tensor(in, &r->gIdx, or_sometimes(in, BK_DATA_TYPE_I32), 1, 0, k);
    packed_tensor(in, &r->packed, or_sometimes(in, BK_DATA_TYPE_I32), 2, k / 16, 2 * n);
    packed_tensor(in, &r->packedScales, or_sometimes(in, scale), 2, g, n);
    /* perm: required with gIdx (left out sometimes), optional without. */
    if (g_idx ? !fz_one_in(in, 16) : (present & 4) != 0)
        packed_tensor(in, &r->perm, or_sometimes(in, BK_DATA_TYPE_I32), 1, 0, k);
    /* AWQ packs eight columns a word: qweight [K, N/8]. */
    r->pNext = w4_zp_build(in, false, true, true, g, n);
    if (r->pNext && w4_zp.checkpointFormat == BK_W4A16_CHECKPOINT_AWQ)
        matrix(in, &r->qweight, or_sometimes(in, BK_DATA_TYPE_I32), 0, k, n / 8);
}

static void mutate_w4_repack_scalars(struct fz_input *in, union fz_op_info *op)
{
    if (fz_byte(in) & 1)
        op->w4_repack.zeros = (BkW4A16GptqZeros)fz_pick_u32(in);
    else
        op->w4_repack.groupSize = (int32_t)fz_pick_u32(in);
}

static struct fz_op_view view_w4_repack(union fz_op_info *op)
{
    BkW4A16GptqRepackInfo *r = &op->w4_repack;
    struct fz_op_view v = view_new(8);
    view_tensor(&v, 0, &r->qweight, false);
    view_tensor(&v, 1, &r->scales, false);
    view_tensor(&v, 2, &r->qzeros, false);
    view_tensor(&v, 3, &r->gIdx, false);
    view_tensor(&v, 4, &r->packed, true);
    view_tensor(&v, 5, &r->packedScales, true);
    /* perm, when bound, is written; an absent slot is not. */
    view_tensor(&v, 6, &r->perm, r->perm.dataType != BK_DATA_TYPE_UNDEFINED);
    align_packed(&v, 4, 5);
    v.bytes[7] = sizeof(BkW4A16RepackReport);
    v.align[7] = 8;
    v.written[7] = true;
    BkW4A16ZeroPointsInfo *z = w4_zp_chained(r->pNext);
    if (z) {
        v.count = 9;
        view_tensor(&v, 8, &z->packedZeros, true);
        v.align[8] = v.t[8] ? 16 : 0;
    }
    return v;
}

static unsigned tensors_w4_gemm(union fz_op_info *op, BkTensorDesc **t)
{
    BkW4A16GemmInfo *g = &op->w4_gemm;
    t[0] = &g->a, t[1] = &g->packed, t[2] = &g->packedScales, t[3] = &g->perm, t[4] = &g->c;
    return w4_zp_tensors(g->pNext, t, 5);
}

static void build_w4_gemm(struct fz_input *in, union fz_op_info *op)
{
    BkW4A16GemmInfo *g = &op->w4_gemm;
    g->sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO;
    g->groupSize = pick_group(in);
    const BkDataType type = pick_half(in);
    const int64_t m = pick_w4_m(in), k = pick_w4_k(in, g->groupSize), n = pick_w4_n(in, false);
    matrix(in, &g->a, type, 0, m, k);
    packed_tensor(in, &g->packed, or_sometimes(in, BK_DATA_TYPE_I32), 2, k / 16, 2 * n);
    packed_tensor(in, &g->packedScales, or_sometimes(in, type), 2,
                  group_count(g->groupSize, k), n);
    if (fz_byte(in) % 3 == 0)
        packed_tensor(in, &g->perm, or_sometimes(in, BK_DATA_TYPE_I32), 1, 0, k);
    matrix(in, &g->c, or_sometimes(in, type), 0, m, n);
    if (fz_one_in(in, 32))
        g->flags = fz_pick_u32(in);
    g->pNext = w4_zp_build(in, false, true, false, group_count(g->groupSize, k), n);
}

static void mutate_w4_gemm_scalars(struct fz_input *in, union fz_op_info *op)
{
    if (fz_byte(in) & 1)
        op->w4_gemm.flags = fz_pick_u32(in);
    else
        op->w4_gemm.groupSize = (int32_t)fz_pick_u32(in);
}

static struct fz_op_view view_w4_gemm(union fz_op_info *op)
{
    BkW4A16GemmInfo *g = &op->w4_gemm;
    struct fz_op_view v = view_new(5);
    if (g->a.extent[0] > 0) { /* M == 0: nothing is read or written */
        view_tensor(&v, 0, &g->a, false);
        view_tensor(&v, 1, &g->packed, false);
        view_tensor(&v, 2, &g->packedScales, false);
        view_tensor(&v, 3, &g->perm, false);
    }
    view_tensor(&v, 4, &g->c, true);
    align_packed(&v, 1, 2);
    BkW4A16ZeroPointsInfo *z = w4_zp_chained(g->pNext);
    if (z) {
        v.count = 6;
        if (g->a.extent[0] > 0)
            view_tensor(&v, 5, &z->packedZeros, false);
        v.align[5] = v.t[5] ? 16 : 0;
    }
    return v;
}

/* ---- Block-sparse attention, forward and backward ------------------------------ */

/* The fields both infos share sit at the same place in both (as the
 * gated infos' do), so one builder, view and mutation serve both. */
_Static_assert(offsetof(BkAttentionInfo, lse) == offsetof(BkAttentionBackwardInfo, lse) &&
                   offsetof(BkAttentionInfo, pattern) ==
                       offsetof(BkAttentionBackwardInfo, pattern),
               "the attention infos share their leading fields");

/* The sizes a builder picked (any values once a choice broke a rule: the
 * plan then fails) and the pattern's block grid. */
struct attn_shape {
    int64_t b, h, hkv, lq, lk, d, dv, nbq, nbk;
    int64_t seqs;         /* the pattern's extent[0] when not shared: B, or S when PACKED */
    int64_t max_q, max_k; /* the lengths that size the pattern: Lq, Lk, or PACKED's bounds */
    int64_t pages, page_size, max_pages; /* a paged cache's pool (pages 0: none) */
};

/* The structs an attention info chains (pNext), rebuilt with each op.
 * Either may be left out, chained twice, or chained where the plan must
 * refuse it (a paged cache on the backward pass, without PADDED lengthsK). */
static struct {
    BkAttentionSequencesInfo seqs, seqs_again;
    BkAttentionPagedKvInfo paged;
} attn_chain;

enum attn_chaining { ATTN_PLAIN, ATTN_PADDED, ATTN_PACKED, ATTN_PAGED, ATTN_BAD_CHAIN };

static int64_t at_least_1(int64_t x)
{
    return x > 0 ? x : 1;
}

/* Lq, Lk: 1..24 mostly; 0, or up to 64, sometimes. */
static int64_t attn_length(struct fz_input *in)
{
    uint8_t b = fz_byte(in);
    if (b % 16 == 15)
        return b & 16 ? 0 : 25 + b % 40;
    return 1 + b % 24;
}

/* D, Dv: 1..16 mostly; the fast paths' 64 and 128, the limit 256, or
 * outside 1..256 sometimes. */
static int64_t attn_head_dim(struct fz_input *in)
{
    static const int64_t rare[] = { 64, 128, 256, 0, 257, 32, 3, -1 };
    uint8_t b = fz_byte(in);
    return b % 16 == 15 ? rare[(b / 16) % 8] : 1 + b % 16;
}

/* A [B, heads, rows, cols] operand: contiguous; the view of [B, L, H, D]
 * storage, its rows padded or side by side with others' (a fused QKV
 * projection); or any layout(). */
static void attn_operand(struct fz_input *in, BkTensorDesc *t, BkDataType type, int64_t b,
                         int64_t heads, int64_t rows, int64_t cols)
{
    memset(t, 0, sizeof *t);
    t->dataType = type;
    t->rank = 4;
    t->extent[0] = b, t->extent[1] = heads, t->extent[2] = rows, t->extent[3] = cols;
    const uint8_t mode = fz_byte(in) % 4;
    if (mode == 1 || mode == 2) {
        const int64_t pad = mode == 2 ? fz_byte(in) % 3 : 0;
        const int64_t fused = mode == 2 ? 1 + fz_byte(in) % 3 : 1;
        const int64_t c = at_least_1(cols) + pad, row = fused * at_least_1(heads) * c;
        t->stride[3] = 1;
        t->stride[1] = c;
        t->stride[2] = row;
        t->stride[0] = at_least_1(rows) * row;
    } else if (mode == 3) {
        layout(in, t);
    }
}

/* lse and the pattern's tensors: contiguous mostly, any layout() sometimes. */
static void attn_small(struct fz_input *in, BkTensorDesc *t, BkDataType type, uint32_t rank,
                       const int64_t *extent)
{
    memset(t, 0, sizeof *t);
    t->dataType = type;
    t->rank = rank;
    for (uint32_t k = 0; k < rank; k++)
        t->extent[k] = extent[k];
    if (fz_byte(in) % 4 == 3)
        layout(in, t);
}

/* Block sizes: tiled ones (16..128, the two sides apart) mostly, one small
 * size for both sometimes, any values rarely; DENSE leaves them 0 mostly. */
static void attn_blocks(struct fz_input *in, BkAttentionPattern *p)
{
    static const int32_t tiled[] = { 16, 16, 32, 16, 64, 128, 48, 17 };
    if (p->form == BK_ATTENTION_PATTERN_DENSE && fz_byte(in) % 4 != 3)
        return;
    uint8_t b = fz_byte(in);
    if (b % 8 < 5) {
        p->blockQ = tiled[b % 8];
        p->blockK = tiled[(b / 8) % 8];
    } else if (b % 8 < 7) {
        p->blockQ = p->blockK = 1 + (b / 8) % 15;
    } else {
        p->blockQ = (int32_t)fz_pick_u32(in);
        p->blockK = fz_byte(in) & 1 ? p->blockQ : (int32_t)fz_pick_u32(in);
    }
}

/* ceil(length / block), 1 for a block size the plan refuses. */
static int64_t attn_block_count(int64_t length, int32_t block)
{
    return block >= 1 && block <= 128 ? (length + block - 1) / block : 1;
}

/* The pattern: a form (any value rarely), its blocks and its tensors,
 * shared by every batch or head or not; the tensors a form does not use
 * stay zeroed, but sometimes. Their values come from the pool: a list is
 * mostly one that breaks a rule (NaN outputs), a mask mostly active. */
static void attn_pattern(struct fz_input *in, BkAttentionPattern *p, struct attn_shape *s)
{
    uint8_t b = fz_byte(in);
    p->form = b < 250 ? (BkAttentionPatternForm)(b % 3) : (BkAttentionPatternForm)fz_pick_u32(in);
    attn_blocks(in, p);
    s->nbq = attn_block_count(s->max_q, p->blockQ);
    s->nbk = attn_block_count(s->max_k, p->blockK);
    const uint8_t share = fz_byte(in);
    const int64_t bp = share & 1 ? s->seqs : 1, hp = share & 2 ? s->h : 1;
    const unsigned extra = fz_one_in(in, 16) ? 1 + fz_byte(in) % 2 : 0;
    if (p->form == BK_ATTENTION_PATTERN_MASK || extra == 1)
        attn_small(in, &p->mask, BK_DATA_TYPE_U8, 3, (int64_t[]){ bp, hp, s->nbq * s->nbk });
    if (p->form == BK_ATTENTION_PATTERN_LIST || extra == 2) {
        const int64_t capacity = fz_byte(in) % (s->nbk + 2);
        attn_small(in, &p->counts, BK_DATA_TYPE_I32, 3, (int64_t[]){ bp, hp, s->nbq });
        attn_small(in, &p->indices, BK_DATA_TYPE_I32, 4, (int64_t[]){ bp, hp, s->nbq, capacity });
    }
}

/* A lengths tensor I32 [n]: contiguous mostly, any layout() sometimes. */
static void attn_lengths(struct fz_input *in, BkTensorDesc *t, int64_t n)
{
    attn_small(in, t, BK_DATA_TYPE_I32, 1, (int64_t[]){ n });
}

/* A PACKED bound: the axis (mostly), a shorter one, or any value. */
static int64_t attn_bound(struct fz_input *in, int64_t axis)
{
    const uint8_t b = fz_byte(in);
    if (b % 16 == 15)
        return fz_pick_i64(in);
    return b % 2 || axis < 2 ? axis : 1 + b / 2 % axis;
}

/* The sizes a chained struct changes, picked before the pattern (which
 * counts its blocks from them): PACKED makes B 1 (mostly) and S
 * sequences; a paged cache a pool of pages of 16..256 keys (its limits
 * and neighbours sometimes) and Lk = maxPagesPerSequence x pageSize.
 * True when k and v are a pool of pages. */
static bool attn_chain_shape(struct fz_input *in, enum attn_chaining chaining,
                             struct attn_shape *s)
{
    static const int64_t page_sizes[] = { 16, 16, 32, 16, 64, 256, 15, 257 };
    memset(&attn_chain, 0, sizeof attn_chain);
    s->seqs = s->b;
    s->max_q = s->lq;
    s->max_k = s->lk;
    s->pages = s->page_size = s->max_pages = 0;
    if (chaining == ATTN_PACKED) {
        if (!fz_one_in(in, 16))
            s->b = 1;
        s->seqs = fz_byte(in) % 5; /* S, 0 sometimes */
        attn_chain.seqs.maxLengthQ = s->max_q = attn_bound(in, s->lq);
        attn_chain.seqs.maxLengthK = s->max_k = attn_bound(in, s->lk);
        if (s->max_q < 1 || s->max_q > 64)
            s->max_q = 1; /* the plan refuses it: any small grid */
        if (s->max_k < 1 || s->max_k > 64)
            s->max_k = 1;
    } else if (chaining == ATTN_PAGED || chaining == ATTN_BAD_CHAIN) {
        const uint8_t b = fz_byte(in);
        s->page_size = page_sizes[b % 8];
        s->pages = b / 8 % 4 == 3 ? 0 : 1 + b / 8 % 4;
        s->max_pages = fz_byte(in) % 3;
        s->lk = s->max_k = s->max_pages * s->page_size;
        return true;
    }
    return false;
}

/* The chained structs for the sizes attn_chain_shape picked, in either
 * order: PADDED lengths (either absent sometimes), PACKED offsets, or
 * the paged cache with PADDED lengthsK; a bad chain is one of these with
 * a rule broken (the paged cache alone, over PACKED offsets or PADDED
 * lengths without lengthsK, or the sequences chained twice). */
static const void *attn_chain_build(struct fz_input *in, enum attn_chaining chaining,
                                    const struct attn_shape *s)
{
    BkAttentionSequencesInfo *q = &attn_chain.seqs;
    BkAttentionPagedKvInfo *p = &attn_chain.paged;
    q->sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO;
    p->sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO;
    const uint8_t b = fz_byte(in);
    const unsigned bad = chaining == ATTN_BAD_CHAIN ? 1 + b / 8 % 4 : 0;
    if (chaining == ATTN_PACKED || bad == 2) {
        q->form = BK_ATTENTION_SEQUENCES_PACKED;
        attn_lengths(in, &q->lengthsQ, s->seqs + 1);
        attn_lengths(in, &q->lengthsK, fz_one_in(in, 8) ? s->seqs : s->seqs + 1);
    } else {
        if (b % 4 != 1 && chaining != ATTN_PAGED && bad != 3)
            attn_lengths(in, &q->lengthsQ, s->b);
        if ((b % 4 != 2 || chaining == ATTN_PAGED) && bad != 3)
            attn_lengths(in, &q->lengthsK, s->b);
    }
    if (fz_one_in(in, 16))
        q->form = (BkAttentionSequenceForm)fz_pick_u32(in);
    if (chaining == ATTN_PADDED || chaining == ATTN_PACKED)
        return q;
    attn_small(in, &p->blockTable, BK_DATA_TYPE_I32, 2, (int64_t[]){ s->b, s->max_pages });
    if (bad == 1)
        return p; /* no lengths: the cache has none of its own */
    if (bad == 4) { /* the sequences twice */
        attn_chain.seqs_again = *q;
        attn_chain.seqs_again.pNext = p;
        q->pNext = &attn_chain.seqs_again;
        return q;
    }
    if (b & 4) {
        p->pNext = q;
        return p;
    }
    q->pNext = p;
    return q;
}

/* The chained structs an info holds, by the harness's own reading: the
 * first of each sType (libbk refuses a second). */
static void attn_chained(const void *next, BkAttentionSequencesInfo **seqs,
                         BkAttentionPagedKvInfo **paged)
{
    *seqs = NULL;
    *paged = NULL;
    for (const BkBaseInStructure *n = next; n; n = n->pNext) {
        if (n->sType == BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO && !*seqs)
            *seqs = (BkAttentionSequencesInfo *)n;
        else if (n->sType == BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO && !*paged)
            *paged = (BkAttentionPagedKvInfo *)n;
    }
}

/* The fields both infos share, built alike: sizes (GQA: H a multiple of
 * Hkv), the type (F16, BF16, F32, F64 mostly), flags, scale, pattern,
 * q, k, v, y and lse (absent half the time in the forward pass, rarely
 * in the backward one, which needs it). */
static void build_attn_common(struct fz_input *in, BkAttentionInfo *a, bool backward,
                              struct attn_shape *s, BkDataType *type)
{
    s->b = fz_one_in(in, 16) ? 0 : 1 + fz_byte(in) % 2;
    const uint8_t h = fz_byte(in);
    s->hkv = 1 + h % 2;
    s->h = s->hkv * (1 + (h / 2) % 3);
    if (h % 32 == 31) { /* no heads, no kv heads, or H not a multiple of Hkv */
        switch (h / 32 % 3) {
        case 0: s->h = 0; break;
        case 1: s->hkv = 0; break;
        default: s->hkv = 2, s->h = 3; break;
        }
    }
    s->lq = attn_length(in);
    const uint8_t l = fz_byte(in);
    s->lk = l % 3 == 0 ? s->lq : l % 3 == 1 ? attn_length(in) : s->lq + l % 9;
    s->d = attn_head_dim(in);
    s->dv = fz_byte(in) % 2 ? s->d : attn_head_dim(in);
    const uint8_t t = fz_byte(in);
    *type = t % 16 == 15 ? pick_type(in) : float_types[t % 4];

    const uint8_t f = fz_byte(in);
    a->flags = (f & 1 ? BK_ATTENTION_CAUSAL_BIT : 0) |
               (backward && f & 2 ? BK_ATTENTION_ALLOW_ATOMICS_BIT : 0);
    if (f % 32 == 31)
        a->flags = fz_pick_u32(in);
    static const double scales[] = { 0.25, 0.125, 1.0, 0.5 };
    const uint8_t sc = fz_byte(in);
    a->scale = sc % 8 < 6 ? scales[sc % 4] : pick_scalar(in);
    /* The flags byte's top bits (unused above) chain the per-sequence
     * and paged structs: 5 PADDED, 6 PACKED, 7 paged or a bad chain. */
    const enum attn_chaining chaining = f >> 5 < 5 ? ATTN_PLAIN : (enum attn_chaining)((f >> 5) - 4);
    const bool paged = attn_chain_shape(in, chaining, s);
    attn_pattern(in, &a->pattern, s);

    attn_operand(in, &a->q, *type, s->b, s->h, s->lq, s->d);
    if (paged) { /* the pool of pages, [pages, Hkv, pageSize, D] */
        attn_operand(in, &a->k, *type, s->pages, s->hkv, s->page_size, s->d);
        attn_operand(in, &a->v, *type, s->pages, s->hkv, s->page_size, s->dv);
    } else {
        attn_operand(in, &a->k, *type, s->b, s->hkv, s->lk, s->d);
        attn_operand(in, &a->v, *type, s->b, s->hkv, s->lk, s->dv);
    }
    attn_operand(in, &a->y, *type, s->b, s->h, s->lq, s->dv);
    if (chaining != ATTN_PLAIN)
        a->pNext = attn_chain_build(in, chaining, s);
    if (backward ? !fz_one_in(in, 16) : fz_byte(in) % 2) {
        const BkDataType lse = *type == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
        attn_small(in, &a->lse, lse, 3, (int64_t[]){ s->b, s->h, s->lq });
    }
}

/* One tensor of n (present or not) of another type sometimes: the types
 * are checked one by one, and many at once would stop at the first. */
static void attn_odd_type(struct fz_input *in, BkTensorDesc **t, unsigned n)
{
    const uint8_t b = fz_byte(in);
    if (b % 8 == 7)
        t[b / 8 % n]->dataType = pick_type(in);
}

/* The tensors of the chained structs after the info's own n: lengthsQ,
 * lengthsK and (forward) blockTable of those chained. */
static unsigned attn_chain_tensors(const void *next, BkTensorDesc **t, unsigned n, bool backward)
{
    BkAttentionSequencesInfo *seqs;
    BkAttentionPagedKvInfo *paged;
    attn_chained(next, &seqs, &paged);
    if (seqs)
        t[n++] = &seqs->lengthsQ, t[n++] = &seqs->lengthsK;
    if (paged && !backward)
        t[n++] = &paged->blockTable;
    return n;
}

static unsigned tensors_attn(union fz_op_info *op, BkTensorDesc **t)
{
    BkAttentionInfo *a = &op->attn;
    t[0] = &a->q, t[1] = &a->k, t[2] = &a->v, t[3] = &a->y, t[4] = &a->lse;
    t[5] = &a->pattern.mask, t[6] = &a->pattern.counts, t[7] = &a->pattern.indices;
    return attn_chain_tensors(a->pNext, t, 8, false);
}

static unsigned tensors_attn_bwd(union fz_op_info *op, BkTensorDesc **t)
{
    BkAttentionBackwardInfo *a = &op->attn_bwd;
    t[0] = &a->q, t[1] = &a->k, t[2] = &a->v, t[3] = &a->y, t[4] = &a->lse;
    t[5] = &a->pattern.mask, t[6] = &a->pattern.counts, t[7] = &a->pattern.indices;
    t[8] = &a->dy, t[9] = &a->dq, t[10] = &a->dk, t[11] = &a->dv;
    return attn_chain_tensors(a->pNext, t, 12, true);
}

static void build_attn(struct fz_input *in, union fz_op_info *op)
{
    struct attn_shape s;
    BkDataType type;
    BkTensorDesc *t[FZ_MAX_SLOTS];
    op->attn.sType = BK_STRUCTURE_TYPE_ATTENTION_INFO;
    build_attn_common(in, &op->attn, false, &s, &type);
    attn_odd_type(in, t, tensors_attn(op, t));
}

static void build_attn_bwd(struct fz_input *in, union fz_op_info *op)
{
    BkAttentionBackwardInfo *a = &op->attn_bwd;
    struct attn_shape s;
    BkDataType type;
    a->sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO;
    build_attn_common(in, &op->attn, true, &s, &type);
    attn_operand(in, &a->dy, type, s.b, s.h, s.lq, s.dv);
    attn_operand(in, &a->dq, type, s.b, s.h, s.lq, s.d);
    attn_operand(in, &a->dk, type, s.b, s.hkv, s.lk, s.d);
    attn_operand(in, &a->dv, type, s.b, s.hkv, s.lk, s.dv);
    BkTensorDesc *t[FZ_MAX_SLOTS];
    attn_odd_type(in, t, tensors_attn_bwd(op, t));
}

/* A scalar of a chained struct: the form, reserved, a PACKED bound, or
 * an sType (which makes the struct unknown, or the other one). */
static void mutate_attn_chain(struct fz_input *in, BkAttentionInfo *a)
{
    BkAttentionSequencesInfo *seqs;
    BkAttentionPagedKvInfo *paged;
    attn_chained(a->pNext, &seqs, &paged);
    const uint8_t b = fz_byte(in);
    if (!seqs || b % 8 == 7) {
        BkBaseInStructure *n = seqs ? (BkBaseInStructure *)seqs : (BkBaseInStructure *)paged;
        if (n)
            n->sType = b & 8 ? fz_pick_stype(in)
                             : n->sType == BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO
                                 ? BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO
                                 : BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO;
        return;
    }
    switch (b % 8) {
    case 0: case 1: seqs->form = (BkAttentionSequenceForm)fz_pick_u32(in); break;
    case 2: seqs->reserved = fz_pick_u32(in); break;
    case 3: case 4: seqs->maxLengthQ = fz_pick_i64(in); break;
    default: seqs->maxLengthK = fz_pick_i64(in); break;
    }
}

/* Both infos: a shared field, a chained struct's, or the other info's sType (a forward info
 * read as a backward one finds no dq; a backward one read as a forward
 * one is a valid forward pass). */
static void mutate_attn_scalars(struct fz_input *in, union fz_op_info *op)
{
    BkAttentionInfo *a = &op->attn;
    const uint8_t b = fz_byte(in);
    switch (b % 8) {
    case 0: a->flags = fz_pick_u32(in); break;
    case 1: a->reserved = fz_pick_u32(in); break;
    case 2: a->scale = pick_scalar(in); break;
    case 3: a->pattern.form = (BkAttentionPatternForm)fz_pick_u32(in); break;
    case 4: a->pattern.blockQ = (int32_t)fz_pick_u32(in); break;
    case 5: a->pattern.blockK = (int32_t)fz_pick_u32(in); break;
    case 6: a->pattern.reserved = fz_pick_u32(in); break;
    default:
        if (a->pNext && b & 8) {
            mutate_attn_chain(in, a);
            break;
        }
        a->sType = a->sType == BK_STRUCTURE_TYPE_ATTENTION_INFO
                       ? BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO
                       : BK_STRUCTURE_TYPE_ATTENTION_INFO;
        break;
    }
}

/* Slots 0..7 of both plans: q, k, v, the pattern's mask, counts and
 * indices, y and lse; the forward pass writes y and lse (its slot marked
 * written even when lse is absent, as bk-attention(7) lists it). Every
 * tensor present is touched whole, an empty problem's too (0 bytes). */
static struct fz_op_view view_attn_common(BkAttentionInfo *a, unsigned count, bool backward)
{
    struct fz_op_view v = view_new(count);
    view_tensor(&v, 0, &a->q, false);
    view_tensor(&v, 1, &a->k, false);
    view_tensor(&v, 2, &a->v, false);
    view_tensor(&v, 3, &a->pattern.mask, false);
    view_tensor(&v, 4, &a->pattern.counts, false);
    view_tensor(&v, 5, &a->pattern.indices, false);
    view_tensor(&v, 6, &a->y, !backward);
    view_tensor(&v, 7, &a->lse, !backward);
    return v;
}

/* Slots after the info's own (from 8 forward, 12 backward) when a
 * struct is chained: lengthsQ, lengthsK and, forward, blockTable, read
 * whole; absent ones 0 bytes. */
static unsigned attn_slot_count(BkAttentionInfo *a, bool backward)
{
    BkAttentionSequencesInfo *seqs;
    BkAttentionPagedKvInfo *paged;
    attn_chained(a->pNext, &seqs, &paged);
    const unsigned own = backward ? 12 : 8;
    return seqs || paged ? own + (backward ? 2 : 3) : own;
}

static void view_attn_chain(struct fz_op_view *v, BkAttentionInfo *a, unsigned own)
{
    BkAttentionSequencesInfo *seqs;
    BkAttentionPagedKvInfo *paged;
    attn_chained(a->pNext, &seqs, &paged);
    v->chained = seqs || paged;
    if (seqs) {
        view_tensor(v, own, &seqs->lengthsQ, false);
        view_tensor(v, own + 1, &seqs->lengthsK, false);
    }
    if (paged && own + 2 < v->count)
        view_tensor(v, own + 2, &paged->blockTable, false);
}

static struct fz_op_view view_attn(union fz_op_info *op)
{
    struct fz_op_view v = view_attn_common(&op->attn, attn_slot_count(&op->attn, false), false);
    view_attn_chain(&v, &op->attn, 8);
    return v;
}

static struct fz_op_view view_attn_bwd(union fz_op_info *op)
{
    BkAttentionBackwardInfo *a = &op->attn_bwd;
    struct fz_op_view v = view_attn_common(&op->attn, attn_slot_count(&op->attn, true), true);
    view_attn_chain(&v, &op->attn, 12);
    view_tensor(&v, 8, &a->dy, false);
    view_tensor(&v, 9, &a->dq, true);
    view_tensor(&v, 10, &a->dk, true);
    view_tensor(&v, 11, &a->dv, true);
    return v;
}

/* ---- The families ----------------------------------------------------------- */

static const struct {
    BkStructureType stype;
    const char *name;
    void (*build)(struct fz_input *in, union fz_op_info *op);
    struct fz_op_view (*view)(union fz_op_info *op);
    unsigned (*tensors)(union fz_op_info *op, BkTensorDesc **t);
    void (*mutate_scalars)(struct fz_input *in, union fz_op_info *op);
} families[] = {
    { BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO, "gated forward", build_gated, view_gated,
      tensors_gated, mutate_gated_scalars },
    { BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO, "gated backward", build_gated_bwd,
      view_gated_bwd, tensors_gated_bwd, mutate_gated_scalars },
    { BK_STRUCTURE_TYPE_GEMM_INFO, "gemm", build_gemm, view_gemm, tensors_gemm,
      mutate_gemm_scalars },
    { BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO, "2:4 convert", build_sp24_convert,
      view_sp24_convert, tensors_sp24_convert, mutate_sp24_convert_scalars },
    { BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO, "2:4 prepare", build_sp24_prepare,
      view_sp24_prepare, tensors_sp24_prepare, mutate_sp24_prepare_scalars },
    { BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO, "2:4 gemm", build_sp24_gemm, view_sp24_gemm,
      tensors_sp24_gemm, mutate_sp24_gemm_scalars },
    { BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO, "w4a16 convert", build_w4_convert, view_w4_convert,
      tensors_w4_convert, mutate_w4_convert_scalars },
    { BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO, "w4a16 repack", build_w4_repack, view_w4_repack,
      tensors_w4_repack, mutate_w4_repack_scalars },
    { BK_STRUCTURE_TYPE_W4A16_GEMM_INFO, "w4a16 gemm", build_w4_gemm, view_w4_gemm,
      tensors_w4_gemm, mutate_w4_gemm_scalars },
    { BK_STRUCTURE_TYPE_ATTENTION_INFO, "attention", build_attn, view_attn, tensors_attn,
      mutate_attn_scalars },
    { BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO, "attention bwd", build_attn_bwd,
      view_attn_bwd, tensors_attn_bwd, mutate_attn_scalars },
    { BK_STRUCTURE_TYPE_CONVERT_INFO, "convert", build_convert, view_convert, tensors_convert,
      mutate_convert_scalars },
};
#define N_FAMILIES (sizeof families / sizeof families[0])
_Static_assert(N_FAMILIES <= FZ_MAX_FAMILIES, "FZ_MAX_FAMILIES holds every family");
_Static_assert(N_FAMILIES == 2 + 4 + 3 + 2 + 1,
               "fz_build_op picks 2 gated, 4 GEMM, 3 W4A16, 2 attention and 1 convert families");

unsigned fz_build_op(struct fz_input *in, union fz_op_info *op)
{
    memset(op, 0, sizeof *op);
    /* Bytes below 176 pick a gated family as they always did, so the
     * corpus of inputs from before the GEMM family keeps its meaning
     * (176 to 191 did too until the attention infos took them: gated
     * inputs of the corpus whose byte was there were moved 16 lower, into
     * the same family); 192 to 239 the dense GEMM and the 2:4 infos, as
     * they did before the W4A16 family took 240 to 255 (GEMM-family
     * inputs of the corpus whose byte was there were moved into
     * 192..239); 255 the conversion (it was a W4A16 quantize, which 240,
     * 243, ... still pick). */
    uint8_t b = fz_byte(in);
    unsigned f = b < 176   ? b % 2u
                 : b < 192 ? 9u + b % 2u
                 : b < 240 ? 2u + b % 4u
                 : b < 255 ? 6u + b % 3u
                           : 11u;
    families[f].build(in, op);
    return f;
}

void fz_mutate_op(struct fz_input *in, union fz_op_info *op, unsigned family)
{
    BkTensorDesc *t[FZ_MAX_SLOTS];
    const unsigned n = families[family].tensors(op, t);
    switch (fz_byte(in) % 8) {
    case 0: op->base.sType = fz_pick_stype(in); break;
    case 1: families[family].mutate_scalars(in, op); break;
    case 2: op->base.pNext = fz_pick_chain(in); break;
    case 3: { /* swap two tensors */
        unsigned i = fz_byte(in) % n, j = fz_byte(in) % n;
        BkTensorDesc tmp = *t[i];
        *t[i] = *t[j];
        *t[j] = tmp;
        break;
    }
    default: mutate_tensor(in, t[fz_byte(in) % n]); break;
    }
}

bool fz_view_op(union fz_op_info *op, struct fz_op_view *view)
{
    for (unsigned f = 0; f < N_FAMILIES; f++)
        if (families[f].stype == op->base.sType) {
            *view = families[f].view(op);
            return true;
        }
    return false;
}

unsigned fz_family_count(void)
{
    return N_FAMILIES;
}

int fz_family_of(BkStructureType stype)
{
    for (unsigned f = 0; f < N_FAMILIES; f++)
        if (families[f].stype == stype)
            return (int)f;
    return -1;
}

const char *fz_family_name(unsigned family)
{
    return family < N_FAMILIES ? families[family].name : "?";
}
