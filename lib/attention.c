/* SPDX-License-Identifier: Apache-2.0 */
/* Block-sparse attention: validation of BkAttentionInfo and
 * BkAttentionBackwardInfo into struct bk_attention_problem (bk_attention.h,
 * bk-attention(7)), the binding slots and the workspace layout every
 * backend shares. */
#include "bk_internal.h"

#include <math.h>
#include <stdio.h>

#define MAX_HEAD_DIM 256
#define MAX_BLOCK 128
#define MIN_TILED_BLOCK 16
#define MIN_PAGE_SIZE 16
#define MAX_PAGE_SIZE 256

#define SEQS "BkAttentionSequencesInfo"
#define PAGED "BkAttentionPagedKvInfo"

/* The fields both infos share, so one validator serves both. */
struct attention_fields {
    const char *info;
    BkAttentionFlags flags, allowed_flags;
    uint32_t reserved;
    double scale;
    const BkAttentionPattern *pattern;
    const BkTensorDesc *q, *k, *v, *y, *lse, *dy, *dq, *dk, *dv;
    const void *next;                   /* the info's pNext chain */
    /* Found in the chain (NULL: absent). */
    const BkAttentionSequencesInfo *seqs;
    const BkAttentionPagedKvInfo *paged;
};


/* extent[dim] of field must equal want (named rule, e.g. "B (q.extent[0])"). */
static BkResult expect(const char *info, const char *field, const struct bk_tensor *t, int dim,
                       int64_t want, const char *rule)
{
    if (t->extent[dim] == want)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s.extent[%d] = %lld must equal %s = %lld",
                    info, field, dim, (long long)t->extent[dim], rule, (long long)want);
}

static BkResult expect_type(const char *info, const char *field, BkDataType got, BkDataType want,
                            const char *why)
{
    if (got == want)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s.dataType = %s must be %s (%s)", info, field,
                    bk_data_type_name(got), bk_data_type_name(want), why);
}

static void copy_strides(int64_t *dst, const struct bk_tensor *t, uint32_t rank)
{
    for (uint32_t i = 0; i < rank; i++)
        dst[i] = t->stride[i];
}

/* A [B, heads, rows, cols] operand checked against the problem's sizes. */
static BkResult view4(const struct attention_fields *f, const char *field, const BkTensorDesc *desc,
                      int64_t heads, const char *heads_rule, int64_t rows, const char *rows_rule,
                      int64_t cols, const char *cols_rule, const struct bk_attention_problem *p,
                      struct bk_tensor *t, int64_t *strides)
{
    BkResult r;
    if ((r = bk_tensor_field(f->info, field, desc, 4, t)) != BK_SUCCESS ||
        (r = expect_type(f->info, field, t->type, p->type, "q's type")) != BK_SUCCESS ||
        (r = expect(f->info, field, t, 0, p->batch, "B (q.extent[0])")) != BK_SUCCESS ||
        (r = expect(f->info, field, t, 1, heads, heads_rule)) != BK_SUCCESS ||
        (r = expect(f->info, field, t, 2, rows, rows_rule)) != BK_SUCCESS ||
        (r = expect(f->info, field, t, 3, cols, cols_rule)) != BK_SUCCESS)
        return r;
    copy_strides(strides, t, 4);
    return BK_SUCCESS;
}

static BkResult check_head_dim(const char *info, const char *field, int dim, int64_t value,
                               const char *what)
{
    if (value >= 1 && value <= MAX_HEAD_DIM)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.%s.extent[%d] = %lld (%s) must be in 1..%d",
                    info, field, dim, (long long)value, what, MAX_HEAD_DIM);
}

/* The structs chained to the info: each known sType at most once (a
 * second could only contradict the first), the paged cache only on the
 * forward, and only over PADDED lengths that give each sequence's keys.
 * Unknown sTypes are skipped. */
static BkResult chain(struct attention_fields *f)
{
    const char *in = f->info;
    BkResult r;
    if ((r = bk_check_output_chain(&(BkBaseInStructure){ .pNext = f->next }, in)) != BK_SUCCESS)
        return r;
    for (const BkBaseInStructure *s = f->next; s; s = s->pNext) {
        const void **slot = s->sType == BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO
                                ? (const void **)&f->seqs
                            : s->sType == BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO
                                ? (const void **)&f->paged
                                : NULL;
        if (!slot)
            continue;
        const char *name = slot == (const void **)&f->seqs ? SEQS : PAGED;
        if (*slot)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.pNext chains %s twice: each may be chained once", in, name);
        *slot = s;
    }
    if (!f->paged)
        return BK_SUCCESS;
    if (f->dq)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pNext chains " PAGED ": the paged KV cache is forward only", in);
    if (!f->seqs || f->seqs->form != BK_ATTENTION_SEQUENCES_PADDED ||
        bk_desc_absent(&f->seqs->lengthsK))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pNext chains " PAGED " without a PADDED " SEQS " whose lengthsK gives "
                        "each sequence's keys (the cache has no length of its own)", in);
    return BK_SUCCESS;
}

/* The paged cache's block table I32 [B, maxPagesPerSequence]: Lk is
 * maxPagesPerSequence x pageSize. */
static BkResult block_table(const struct attention_fields *f, struct bk_attention_problem *p,
                            struct bk_tensor *t)
{
    BkResult r;
    if ((r = bk_tensor_field(PAGED, "blockTable", &f->paged->blockTable, 2, t)) != BK_SUCCESS ||
        (r = expect_type(PAGED, "blockTable", t->type, BK_DATA_TYPE_I32, "page indices")) !=
            BK_SUCCESS ||
        (r = expect(PAGED, "blockTable", t, 0, p->batch, "B (q.extent[0])")) != BK_SUCCESS)
        return r;
    p->max_pages = t->extent[1];
    copy_strides(p->block_table_stride, t, 2);
    bool ovf = false;
    p->lk = bk_mul_i64(p->max_pages, p->page_size, &ovf);
    if (ovf)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        PAGED ".blockTable.extent[1] = %lld pages of %lld keys overflow 64 bits",
                        (long long)p->max_pages, (long long)p->page_size);
    return BK_SUCCESS;
}

/* k [pages, Hkv, pageSize, D] of a paged cache (k's own extent[0] and
 * extent[2] are the pool's, not B and Lk). */
static BkResult paged_k(const struct attention_fields *f, struct bk_attention_problem *p,
                        const struct bk_tensor *k)
{
    p->pages = k->extent[0];
    p->page_size = k->extent[2];
    if (p->page_size < MIN_PAGE_SIZE || p->page_size > MAX_PAGE_SIZE)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.k.extent[2] = %lld (pageSize of the " PAGED " pool) must be in "
                        "%d..%d", f->info, (long long)p->page_size, MIN_PAGE_SIZE, MAX_PAGE_SIZE);
    return BK_SUCCESS;
}

/* q, k, v: the sizes of the problem. */
static BkResult shapes(const struct attention_fields *f, struct bk_attention_problem *p,
                       struct bk_tensor *q, struct bk_tensor *k, struct bk_tensor *v,
                       struct bk_tensor *table)
{
    const char *in = f->info;
    BkResult r;
    if ((r = bk_tensor_field(in, "q", f->q, 4, q)) != BK_SUCCESS)
        return r;
    p->type = q->type;
    if (p->type != BK_DATA_TYPE_F16 && p->type != BK_DATA_TYPE_BF16 &&
        p->type != BK_DATA_TYPE_F32 && p->type != BK_DATA_TYPE_F64)
        return bk_error(BK_ERROR_UNSUPPORTED,
                        "%s.q.dataType = %s is not supported (F16, BF16, F32, F64)", in,
                        bk_data_type_name(p->type));
    p->lse_type = p->type == BK_DATA_TYPE_F64 ? BK_DATA_TYPE_F64 : BK_DATA_TYPE_F32;
    p->batch = q->extent[0];
    p->heads = q->extent[1];
    p->lq = q->extent[2];
    p->d = q->extent[3];
    if ((r = check_head_dim(in, "q", 3, p->d, "D")) != BK_SUCCESS)
        return r;
    copy_strides(p->stride.q, q, 4);

    if ((r = bk_tensor_field(in, "k", f->k, 4, k)) != BK_SUCCESS ||
        (r = expect_type(in, "k", k->type, p->type, "q's type")) != BK_SUCCESS ||
        (!p->paged && (r = expect(in, "k", k, 0, p->batch, "B (q.extent[0])")) != BK_SUCCESS) ||
        (r = expect(in, "k", k, 3, p->d, "D (q.extent[3])")) != BK_SUCCESS)
        return r;
    p->kv_heads = k->extent[1];
    p->lk = k->extent[2];
    if (p->paged && ((r = paged_k(f, p, k)) != BK_SUCCESS || (r = block_table(f, p, table))))
        return r;
    if (p->kv_heads == 0 && p->heads > 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.k.extent[1] = 0 (Hkv) must be positive when q has %lld heads", in,
                        (long long)p->heads);
    if (p->kv_heads > 0 && p->heads % p->kv_heads)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.q.extent[1] = %lld (H) must be a multiple of k.extent[1] = %lld (Hkv): "
                        "each kv head serves H / Hkv query heads", in, (long long)p->heads,
                        (long long)p->kv_heads);
    copy_strides(p->stride.k, k, 4);

    if ((r = bk_tensor_field(in, "v", f->v, 4, v)) != BK_SUCCESS ||
        (r = expect_type(in, "v", v->type, p->type, "q's type")) != BK_SUCCESS ||
        (r = expect(in, "v", v, 0, p->paged ? p->pages : p->batch,
                    p->paged ? "pages (k.extent[0])" : "B (q.extent[0])")) != BK_SUCCESS ||
        (r = expect(in, "v", v, 1, p->kv_heads, "Hkv (k.extent[1])")) != BK_SUCCESS ||
        (r = expect(in, "v", v, 2, p->paged ? p->page_size : p->lk,
                    p->paged ? "pageSize (k.extent[2])" : "Lk (k.extent[2])")) != BK_SUCCESS)
        return r;
    p->dv = v->extent[3];
    if ((r = check_head_dim(in, "v", 3, p->dv, "Dv")) != BK_SUCCESS)
        return r;
    copy_strides(p->stride.v, v, 4);
    return BK_SUCCESS;
}

/* One lengths tensor of the sequences struct: I32 [want] (PADDED [B],
 * PACKED [S + 1]); its stride into *stride. */
static BkResult lengths_tensor(const char *field, const BkTensorDesc *desc, int64_t want,
                               const char *rule, struct bk_tensor *t, int64_t *stride)
{
    BkResult r;
    if ((r = bk_tensor_field(SEQS, field, desc, 1, t)) != BK_SUCCESS ||
        (r = expect_type(SEQS, field, t->type, BK_DATA_TYPE_I32, "lengths and offsets")) !=
            BK_SUCCESS)
        return r;
    if (want >= 0 && (r = expect(SEQS, field, t, 0, want, rule)) != BK_SUCCESS)
        return r;
    *stride = t->stride[0];
    return BK_SUCCESS;
}

/* PACKED's bound on one axis: 1..L (the length axis L). */
static BkResult max_length(const char *field, int64_t value, int64_t axis, const char *axis_rule)
{
    if (value >= 1 && value <= axis)
        return BK_SUCCESS;
    return bk_error(BK_ERROR_INVALID_ARGUMENT,
                    SEQS ".%s = %lld must be in 1..%s = %lld (PACKED: the longest sequence)",
                    field, (long long)value, axis_rule, (long long)axis);
}

/* The sequences struct: form, lengths tensors, bounds (see struct
 * bk_attention_problem). Without one, one sequence per batch entry. */
static BkResult sequences(const struct attention_fields *f, struct bk_attention_problem *p,
                          struct bk_tensor *t /* [2] */)
{
    const BkAttentionSequencesInfo *s = f->seqs;
    BkResult r;
    p->seq_count = p->batch;
    p->max_len_q = p->lq;
    p->max_len_k = p->lk;
    if (!s)
        return BK_SUCCESS;
    p->has_sequences = true;
    if ((unsigned)s->form > BK_ATTENTION_SEQUENCES_PACKED)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        SEQS ".form = %d is not a BkAttentionSequenceForm", (int)s->form);
    if (s->reserved != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, SEQS ".reserved = %u must be 0", s->reserved);
    p->seq_form = s->form;
    if (s->form == BK_ATTENTION_SEQUENCES_PADDED) {
        if (s->maxLengthQ != 0 || s->maxLengthK != 0)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            SEQS ".maxLengthQ = %lld and maxLengthK = %lld must be 0 (PADDED: "
                            "the tensors' Lq and Lk bound the lengths)",
                            (long long)s->maxLengthQ, (long long)s->maxLengthK);
        p->has_lengths_q = !bk_desc_absent(&s->lengthsQ);
        p->has_lengths_k = !bk_desc_absent(&s->lengthsK);
        if ((p->has_lengths_q &&
             (r = lengths_tensor("lengthsQ", &s->lengthsQ, p->batch, "B (q.extent[0])", &t[0],
                                 &p->lengths_q_stride)) != BK_SUCCESS) ||
            (p->has_lengths_k &&
             (r = lengths_tensor("lengthsK", &s->lengthsK, p->batch, "B (q.extent[0])", &t[1],
                                 &p->lengths_k_stride)) != BK_SUCCESS))
            return r;
        return BK_SUCCESS;
    }
    if (p->batch != 1)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.q.extent[0] = %lld must be 1 (" SEQS ".form PACKED: the sequences lie "
                        "end to end along the length axis)", f->info, (long long)p->batch);
    p->has_lengths_q = p->has_lengths_k = true;
    if ((r = lengths_tensor("lengthsQ", &s->lengthsQ, -1, NULL, &t[0], &p->lengths_q_stride)))
        return r;
    if (t[0].extent[0] < 1)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        SEQS ".lengthsQ.extent[0] = 0 must be S + 1 >= 1 (PACKED offsets)");
    p->seq_count = t[0].extent[0] - 1;
    if ((r = lengths_tensor("lengthsK", &s->lengthsK, t[0].extent[0],
                            "S + 1 (lengthsQ.extent[0])", &t[1], &p->lengths_k_stride)) ||
        (r = max_length("maxLengthQ", s->maxLengthQ, p->lq, "Lq (q.extent[2])")) ||
        (r = max_length("maxLengthK", s->maxLengthK, p->lk, "Lk (k.extent[2])")))
        return r;
    p->max_len_q = s->maxLengthQ;
    p->max_len_k = s->maxLengthK;
    return BK_SUCCESS;
}

/* lse [B, H, Lq] of lse_type. */
static BkResult lse_view(const struct attention_fields *f, struct bk_attention_problem *p,
                         struct bk_tensor *t)
{
    const char *in = f->info;
    BkResult r;
    if ((r = bk_tensor_field(in, "lse", f->lse, 3, t)) != BK_SUCCESS ||
        (r = expect_type(in, "lse", t->type, p->lse_type,
                         p->type == BK_DATA_TYPE_F64 ? "F64 for F64 inputs"
                                                     : "log-sum-exp is kept in F32")) !=
            BK_SUCCESS ||
        (r = expect(in, "lse", t, 0, p->batch, "B (q.extent[0])")) != BK_SUCCESS ||
        (r = expect(in, "lse", t, 1, p->heads, "H (q.extent[1])")) != BK_SUCCESS ||
        (r = expect(in, "lse", t, 2, p->lq, "Lq (q.extent[2])")) != BK_SUCCESS)
        return r;
    copy_strides(p->stride.lse, t, 3);
    return BK_SUCCESS;
}

static BkResult block_sizes(const char *info, const BkAttentionPattern *pat)
{
    const int32_t bq = pat->blockQ, bk = pat->blockK;
    const bool tiled = bq >= MIN_TILED_BLOCK && bq <= MAX_BLOCK && bk >= MIN_TILED_BLOCK &&
                       bk <= MAX_BLOCK;
    const bool single = bq == bk && bq >= 1 && bq < MIN_TILED_BLOCK;
    if (tiled || single)
        return BK_SUCCESS;
    if (bq < 1 || bq > MAX_BLOCK)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pattern.blockQ = %d must be in 16..128 (or 1..15 when equal to "
                        "blockK)", info, (int)bq);
    if (bk < 1 || bk > MAX_BLOCK)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pattern.blockK = %d must be in 16..128 (or 1..15 when equal to "
                        "blockQ)", info, (int)bk);
    return bk_error(BK_ERROR_INVALID_ARGUMENT,
                    "%s.pattern.blockQ = %d and blockK = %d: a block size below 16 must be the "
                    "single size of both sides (blockQ == blockK)", info, (int)bq, (int)bk);
}

/* Extent 0 (Bp) and 1 (Hp) of a pattern tensor: 1 (shared) or B / H. */
static BkResult pattern_broadcast(const char *info, const char *field, const struct bk_tensor *t,
                                  struct bk_attention_problem *p)
{
    const bool packed = p->has_sequences && p->seq_form == BK_ATTENTION_SEQUENCES_PACKED;
    if (t->extent[0] != 1 && t->extent[0] != p->seq_count)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pattern.%s.extent[0] = %lld must be 1 (shared) or %s = %lld", info,
                        field, (long long)t->extent[0],
                        packed ? "S (PACKED sequences)" : "B", (long long)p->seq_count);
    if (t->extent[1] != 1 && t->extent[1] != p->heads)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pattern.%s.extent[1] = %lld must be 1 (shared) or H = %lld", info,
                        field, (long long)t->extent[1], (long long)p->heads);
    p->pattern_batch = t->extent[0] ? t->extent[0] : 1;
    p->pattern_heads = t->extent[1] ? t->extent[1] : 1;
    return BK_SUCCESS;
}

static BkResult pattern_tensor(const char *info, const char *field, const BkTensorDesc *desc,
                               uint32_t rank, BkDataType type, struct bk_tensor *t)
{
    char name[64];
    snprintf(name, sizeof name, "pattern.%s", field);
    BkResult r = bk_tensor_field(info, name, desc, rank, t);
    if (r != BK_SUCCESS)
        return r;
    if (t->type != type)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.pattern.%s.dataType = %s must be %s", info,
                        field, bk_data_type_name(t->type), bk_data_type_name(type));
    return BK_SUCCESS;
}

static const char *const form_names[] = {
    [BK_ATTENTION_PATTERN_DENSE] = "BK_ATTENTION_PATTERN_DENSE",
    [BK_ATTENTION_PATTERN_MASK] = "BK_ATTENTION_PATTERN_MASK",
    [BK_ATTENTION_PATTERN_LIST] = "BK_ATTENTION_PATTERN_LIST",
};

/* The pattern: block sizes, its tensors and their slots' tensors
 * (mask, counts, indices). */
static BkResult pattern(const struct attention_fields *f, struct bk_attention_problem *p,
                        struct bk_tensor *t /* [3] */)
{
    const char *in = f->info;
    const BkAttentionPattern *pat = f->pattern;
    BkResult r;
    if ((unsigned)pat->form > BK_ATTENTION_PATTERN_LIST)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pattern.form = %d is not a BkAttentionPatternForm", in, (int)pat->form);
    if (pat->reserved != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.pattern.reserved = %u must be 0", in,
                        pat->reserved);
    p->form = pat->form;
    p->pattern_batch = p->pattern_heads = 1;
    const char *form = form_names[pat->form];
    if (p->form == BK_ATTENTION_PATTERN_DENSE) {
        /* Blocks do not change a dense result: 0 (unset) or a valid size. */
        if ((pat->blockQ || pat->blockK) && (r = block_sizes(in, pat)) != BK_SUCCESS)
            return r;
        p->block_q = p->block_k = p->nbq = p->nbk = 0;
    } else {
        if ((r = block_sizes(in, pat)) != BK_SUCCESS)
            return r;
        p->block_q = pat->blockQ;
        p->block_k = pat->blockK;
        bool ovf = false;
        p->nbq = bk_ceil_div_i64(p->max_len_q, p->block_q, &ovf);
        p->nbk = bk_ceil_div_i64(p->max_len_k, p->block_k, &ovf);
        if (ovf) /* Lq, Lk >= 0 and the blocks >= 1 were checked: cannot happen */
            return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.pattern: ceil(Lq / blockQ) or "
                            "ceil(Lk / blockK) is out of range", in);
    }
    bool ovf = false;
    const int64_t blocks = bk_mul_i64(p->nbq, p->nbk, &ovf);
    if (ovf)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.pattern: nbq x nbk = %lld x %lld blocks overflow 64 bits", in,
                        (long long)p->nbq, (long long)p->nbk);

    if (p->form != BK_ATTENTION_PATTERN_MASK &&
        (r = bk_check_absent_field(in, "pattern.mask", &pat->mask, form)))
        return r;
    if (p->form != BK_ATTENTION_PATTERN_LIST &&
        ((r = bk_check_absent_field(in, "pattern.counts", &pat->counts, form)) ||
         (r = bk_check_absent_field(in, "pattern.indices", &pat->indices, form))))
        return r;

    if (p->form == BK_ATTENTION_PATTERN_MASK) {
        if ((r = pattern_tensor(in, "mask", &pat->mask, 3, BK_DATA_TYPE_U8, &t[0])) ||
            (r = pattern_broadcast(in, "mask", &t[0], p)))
            return r;
        if (t[0].extent[2] != blocks)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.pattern.mask.extent[2] = %lld must equal nbq x nbk = %lld x %lld "
                            "= %lld (ceil(Lq / blockQ) x ceil(Lk / blockK))", in,
                            (long long)t[0].extent[2], (long long)p->nbq, (long long)p->nbk,
                            (long long)blocks);
        /* Split the last axis into (query block, key block). */
        p->mask_stride[0] = t[0].stride[0];
        p->mask_stride[1] = t[0].stride[1];
        p->mask_stride[2] = bk_mul_i64(t[0].stride[2], p->nbk, &ovf);
        p->mask_stride[3] = t[0].stride[2];
        if (ovf)
            return bk_error(BK_ERROR_INVALID_ARGUMENT,
                            "%s.pattern.mask.stride[2] = %lld: one query block's row of nbk = "
                            "%lld key blocks spans more than 64 bits", in,
                            (long long)t[0].stride[2], (long long)p->nbk);
    } else if (p->form == BK_ATTENTION_PATTERN_LIST) {
        if ((r = pattern_tensor(in, "counts", &pat->counts, 3, BK_DATA_TYPE_I32, &t[1])) ||
            (r = pattern_broadcast(in, "counts", &t[1], p)) ||
            (r = expect(in, "pattern.counts", &t[1], 2, p->nbq, "nbq (ceil(Lq / blockQ))")) ||
            (r = pattern_tensor(in, "indices", &pat->indices, 4, BK_DATA_TYPE_I32, &t[2])) ||
            (r = expect(in, "pattern.indices", &t[2], 0, t[1].extent[0], "counts.extent[0]")) ||
            (r = expect(in, "pattern.indices", &t[2], 1, t[1].extent[1], "counts.extent[1]")) ||
            (r = expect(in, "pattern.indices", &t[2], 2, p->nbq, "nbq (ceil(Lq / blockQ))")))
            return r;
        p->capacity = t[2].extent[3];
        copy_strides(p->counts_stride, &t[1], 3);
        copy_strides(p->indices_stride, &t[2], 4);
    }
    return BK_SUCCESS;
}

/* Workspace: the list scattered to a mask, its bad flags, backward's row
 * sums, the forward's run-time choice (see struct bk_attention_problem). */
static BkResult workspace_layout(const char *in, struct bk_attention_problem *p)
{
    bool ovf = false;
    uint64_t at = 0;
    const int64_t heads = bk_mul_i64(p->pattern_batch, p->pattern_heads, &ovf);
    if (p->form == BK_ATTENTION_PATTERN_LIST) {
        const int64_t per_head = bk_mul_i64(p->nbq, p->nbk, &ovf);
        const int64_t mask = bk_mul_i64(heads, per_head, &ovf);
        p->ws_mask = 0;
        p->ws_bad = bk_u64_of_i64(mask, &ovf);
        at = bk_align_up_u64(bk_add_u64(p->ws_bad, bk_u64_of_i64(heads, &ovf), &ovf), 256, &ovf);
        /* The scattered mask [Bp, Hp, nbq, nbk] is contiguous. */
        p->mask_stride[3] = 1;
        p->mask_stride[2] = p->nbk;
        p->mask_stride[1] = per_head;
        p->mask_stride[0] = bk_mul_i64(p->pattern_heads, per_head, &ovf);
    }
    if (p->backward) {
        p->ws_rowsum = at;
        const int64_t rows = bk_product_i64((const int64_t[]){ p->batch, p->heads, p->lq }, 3,
                                            &ovf);
        at = bk_add_u64(at, bk_mul_u64(bk_u64_of_i64(rows, &ovf),
                                       bk_data_type_size(p->lse_type), &ovf), &ovf);
    }
    if (!p->backward && p->form != BK_ATTENTION_PATTERN_DENSE) {
        p->ws_choice = at;
        at = bk_add_u64(at, 256, &ovf);
    }
    if (ovf || at > (uint64_t)INT64_MAX)
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s: the workspace would exceed 64 bits (the list's blocks, row sums)",
                        in);
    p->ws_size = at;
    return BK_SUCCESS;
}

static BkResult attention_validate(struct attention_fields *f, BkPlan plan)
{
    struct bk_attention_problem *p = &plan->problem.attention;
    const char *in = f->info;
    struct bk_tensor q = { 0 }, k = { 0 }, v = { 0 }, y = { 0 }, lse = { 0 }, pat[3] = { 0 };
    struct bk_tensor dy = { 0 }, dq = { 0 }, dk = { 0 }, dv = { 0 }, seq[3] = { 0 };
    BkResult r;

    if ((r = chain(f)) != BK_SUCCESS)
        return r;
    if (f->flags & ~f->allowed_flags)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.flags = 0x%x has unknown bits 0x%x", in,
                        f->flags, f->flags & ~f->allowed_flags);
    if (f->reserved != 0)
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.reserved = %u must be 0", in, f->reserved);
    if (!isfinite(f->scale))
        return bk_error(BK_ERROR_INVALID_ARGUMENT, "%s.scale = %g must be finite", in, f->scale);
    p->causal = (f->flags & BK_ATTENTION_CAUSAL_BIT) != 0;
    p->allow_atomics = (f->flags & BK_ATTENTION_ALLOW_ATOMICS_BIT) != 0;
    p->scale = f->scale;

    p->paged = f->paged != NULL;
    if ((r = shapes(f, p, &q, &k, &v, &seq[2])) != BK_SUCCESS ||
        (r = sequences(f, p, seq)) != BK_SUCCESS ||
        (r = pattern(f, p, pat)) != BK_SUCCESS)
        return r;
    if ((r = view4(f, "y", f->y, p->heads, "H (q.extent[1])", p->lq, "Lq (q.extent[2])", p->dv,
                   "Dv (v.extent[3])", p, &y, p->stride.y)) != BK_SUCCESS)
        return r;
    p->has_lse = p->backward || !bk_desc_absent(f->lse);
    if (p->backward && bk_desc_absent(f->lse))
        return bk_error(BK_ERROR_INVALID_ARGUMENT,
                        "%s.lse is absent (dataType UNDEFINED): the backward needs the forward's "
                        "lse [B, H, Lq] (%s), which a forward plan writes when its lse is given",
                        in, bk_data_type_name(p->lse_type));
    if (p->has_lse && (r = lse_view(f, p, &lse)) != BK_SUCCESS)
        return r;
    if (p->backward) {
        if ((r = view4(f, "dy", f->dy, p->heads, "H (q.extent[1])", p->lq, "Lq (q.extent[2])",
                       p->dv, "Dv (v.extent[3])", p, &dy, p->stride.dy)) != BK_SUCCESS ||
            (r = view4(f, "dq", f->dq, p->heads, "H (q.extent[1])", p->lq, "Lq (q.extent[2])",
                       p->d, "D (q.extent[3])", p, &dq, p->stride.dq)) != BK_SUCCESS ||
            (r = view4(f, "dk", f->dk, p->kv_heads, "Hkv (k.extent[1])", p->lk,
                       "Lk (k.extent[2])", p->d, "D (q.extent[3])", p, &dk, p->stride.dk)) !=
                BK_SUCCESS ||
            (r = view4(f, "dv", f->dv, p->kv_heads, "Hkv (k.extent[1])", p->lk,
                       "Lk (k.extent[2])", p->dv, "Dv (v.extent[3])", p, &dv, p->stride.dv)) !=
                BK_SUCCESS ||
            (r = bk_check_written_field(in, "dq", &dq)) != BK_SUCCESS ||
            (r = bk_check_written_field(in, "dk", &dk)) != BK_SUCCESS ||
            (r = bk_check_written_field(in, "dv", &dv)) != BK_SUCCESS)
            return r;
    } else if ((r = bk_check_written_field(in, "y", &y)) != BK_SUCCESS ||
               (p->has_lse && (r = bk_check_written_field(in, "lse", &lse)) != BK_SUCCESS)) {
        return r;
    }
    if ((r = workspace_layout(in, p)) != BK_SUCCESS)
        return r;

    /* Slots: every tensor, absent ones with span 0. */
    const uint32_t es = (uint32_t)bk_data_type_size(p->type);
    const uint32_t ls = (uint32_t)bk_data_type_size(p->lse_type);
    const struct {
        const char *name;
        const struct bk_tensor *t;
        uint32_t align;
        bool written;
    } slots[] = {
        { "q", &q, es, false },           { "k", &k, es, false },
        { "v", &v, es, false },           { "mask", &pat[0], 1, false },
        { "counts", &pat[1], 4, false },  { "indices", &pat[2], 4, false },
        { "y", &y, es, !p->backward },    { "lse", &lse, ls, !p->backward },
        { "dy", &dy, es, false },         { "dq", &dq, es, true },
        { "dk", &dk, es, true },          { "dv", &dv, es, true },
        /* After the info's own slots when a struct is chained: */
        { "lengthsQ", &seq[0], 4, false }, { "lengthsK", &seq[1], 4, false },
        { "blockTable", &seq[2], 4, false },
    };
    const uint32_t own = p->backward ? 12 : 8, extra = p->backward ? 2 : 3;
    const bool chained = f->seqs || f->paged;
    plan->props.bindingCount = own + (chained ? extra : 0);
    for (uint32_t i = 0; i < plan->props.bindingCount; i++) {
        const uint32_t from = i < own ? i : 12 + (i - own);
        bk_plan_set_slot(plan, i, slots[from].name, slots[from].t->span,
                         slots[from].t->type != BK_DATA_TYPE_UNDEFINED ? slots[from].align : 1,
                         slots[from].written);
    }
    bk_plan_set_float_precision(plan, p->type);
    plan->props.workspaceSize = p->ws_size;
    return BK_SUCCESS;
}

BkResult bk_attention_init(BkPlan plan, const void *info)
{
    const BkBaseInStructure *base = info;
    struct bk_attention_problem *p = &plan->problem.attention;
    struct attention_fields f;
    if (base->sType == BK_STRUCTURE_TYPE_ATTENTION_INFO) {
        const BkAttentionInfo *a = info;
        f = (struct attention_fields){
            .info = "BkAttentionInfo", .flags = a->flags,
            .allowed_flags = BK_ATTENTION_CAUSAL_BIT, .reserved = a->reserved,
            .scale = a->scale, .pattern = &a->pattern,
            .q = &a->q, .k = &a->k, .v = &a->v, .y = &a->y, .lse = &a->lse,
            .next = a->pNext,
        };
    } else {
        const BkAttentionBackwardInfo *b = info;
        p->backward = true;
        f = (struct attention_fields){
            .info = "BkAttentionBackwardInfo", .flags = b->flags,
            .allowed_flags = BK_ATTENTION_CAUSAL_BIT | BK_ATTENTION_ALLOW_ATOMICS_BIT,
            .reserved = b->reserved, .scale = b->scale, .pattern = &b->pattern,
            .q = &b->q, .k = &b->k, .v = &b->v, .y = &b->y, .lse = &b->lse, .dy = &b->dy,
            .dq = &b->dq, .dk = &b->dk, .dv = &b->dv, .next = b->pNext,
        };
    }
    return attention_validate(&f, plan);
}
