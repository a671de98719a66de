/* SPDX-License-Identifier: Apache-2.0 */
/* bkinfo: says whether each libbk backend is usable (and why not), lists
 * libbk's devices and, for each, which (op, kind, dtype) combinations it
 * can plan, and whether cuBLASLt (dense GEMM on CUDA) is there. See
 * bkinfo(1). Public API only (cuBLASLt itself is looked for
 * with dlopen). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bk/bk.h>

#include "attention_op.h"
#include "cublaslt_direct.h"
#include "gated_op.h"
#include "gemm_op.h"
#include "tool_common.h"

/* The matrix columns, the gated dtypes: f32 f16 bf16 f64. */
#define COLUMN_COUNT GATED_DTYPE_COUNT
#define ALL_COLUMNS 0xFu
#define FLOAT_COLUMNS 0x7u                /* f32 f16 bf16 */
#define HALF_COLUMNS 0x6u                 /* f16 bf16 */
#define F32_COLUMN 0x1u

/* Small problems: the GEMM family's shapes are multiples of what GPU
 * kernels tile by, so that a plan tells whether the op is implemented. */
#define PROBE_TOKENS 4
#define PROBE_HIDDEN 8
#define PROBE_GEMM 256                    /* M = N = K */
#define PROBE_SPARSE_M 256
#define PROBE_SPARSE_K 256
#define PROBE_SPARSE_N 128
#define PROBE_W4A16_K 128                 /* a weight [K, N] in groups of 128 rows */
#define PROBE_W4A16_N 64
#define PROBE_W4A16_GROUP 128
#define PROBE_W4A16_M 16
#define PROBE_ATTENTION_HEADS 2           /* B = 1, H = Hkv */
#define PROBE_ATTENTION_L 128             /* Lq = Lk: 2 x 2 blocks */
#define PROBE_ATTENTION_D 64              /* D = Dv */
#define PROBE_ATTENTION_BLOCK 64
/* Per-sequence lengths and a paged cache: a decode batch of B = 2
 * sequences of Lq = 4 queries (the CUDA decode kernels' shapes) over 128
 * key slots, as 2 pages of 64 keys each from a pool of 4; PACKED: 2
 * sequences end to end in 128 queries and keys, each at most 64. */
#define PROBE_SEQ_BATCH 2
#define PROBE_SEQ_LQ 4
#define PROBE_SEQ_PAGE 64
#define PROBE_SEQ_PAGES 4
#define PROBE_SEQ_PACKED 2

enum attention_sequence_kind { SEQ_PADDED, SEQ_PACKED, SEQ_PAGED };

/* An attention info with the structs chained to it. */
struct attention_chained {
    union attention_op_info info;
    BkAttentionSequencesInfo seqs;
    BkAttentionPagedKvInfo paged;
};

union op_storage {
    union gated_op_info gated;
    BkGemmInfo gemm;
    BkSparse24ConvertInfo convert;
    BkSparse24PrepareInfo prepare;
    BkSparse24GemmInfo sparse;
    BkW4A16ConvertInfo w4a16_convert;
    BkW4A16GptqRepackInfo w4a16_repack;
    BkW4A16GemmInfo w4a16_gemm;
    union attention_op_info attention;
    struct attention_chained attention_seq;
    BkConvertInfo type_convert;
};

/* One row of the support matrix: an op and its variant, the columns it
 * is tried in, and how to build its op info. */
struct row_def {
    const char *op;                       /* "gated-fwd", "gemm", "w4a16-gemm", ... */
    const char *kind;                     /* "swiglu", "tf32", "prune"; NULL: none */
    unsigned columns;                     /* bit t: gated_dtypes[t] is tried */
    int param;                            /* the kind, the conversion, tf32 */
    const void *(*build)(const struct row_def *r, BkDataType t, union op_storage *s);
};

static const void *build_gated(const struct row_def *r, BkDataType t, union op_storage *s)
{
    struct gated_op_desc d = {strcmp(r->op, "gated-bwd") == 0, (BkGatedActivationKind)r->param,
                              t, PROBE_TOKENS, PROBE_HIDDEN, 0};
    return gated_op_build(&d, &s->gated);
}

static const void *build_gemm(const struct row_def *r, BkDataType t, union op_storage *s)
{
    struct gemm_op_desc d = {t, r->param != 0, PROBE_GEMM, PROBE_GEMM, PROBE_GEMM};
    return gemm_op_build(&d, &s->gemm);
}

static const void *build_convert(const struct row_def *r, BkDataType t, union op_storage *s)
{
    return sparse24_convert_build((BkSparse24Conversion)r->param, t, PROBE_SPARSE_M,
                                  PROBE_SPARSE_K, &s->convert);
}

static const void *build_prepare(const struct row_def *r, BkDataType t, union op_storage *s)
{
    (void)r;
    return sparse24_prepare_build(t, PROBE_SPARSE_M, PROBE_SPARSE_K, &s->prepare);
}

static const void *build_sparse(const struct row_def *r, BkDataType t, union op_storage *s)
{
    (void)r;
    return sparse24_gemm_build(t, PROBE_SPARSE_M, PROBE_SPARSE_K, PROBE_SPARSE_N, &s->sparse);
}

/* The W4A16 family: the column is the scales' and activations' type,
 * and for QUANTIZE the weight's: scales are F16 or BF16 only, so an F32
 * weight is quantized to F16 scales. */
static const void *build_w4a16_convert(const struct row_def *r, BkDataType t,
                                       union op_storage *s)
{
    const BkDataType scales = t == BK_DATA_TYPE_F32 ? BK_DATA_TYPE_F16 : t;
    w4a16_convert_build((BkW4A16Conversion)r->param, scales, PROBE_W4A16_K, PROBE_W4A16_N,
                        PROBE_W4A16_GROUP, &s->w4a16_convert);
    if (r->param == BK_W4A16_QUANTIZE)
        s->w4a16_convert.weight.dataType = t;
    return &s->w4a16_convert;
}

static const void *build_w4a16_repack(const struct row_def *r, BkDataType t,
                                      union op_storage *s)
{
    (void)r;
    return w4a16_repack_build(t, PROBE_W4A16_K, PROBE_W4A16_N, PROBE_W4A16_GROUP,
                              &s->w4a16_repack);
}

static const void *build_w4a16_gemm(const struct row_def *r, BkDataType t, union op_storage *s)
{
    (void)r;
    return w4a16_gemm_build(t, PROBE_W4A16_M, PROBE_W4A16_K, PROBE_W4A16_N, PROBE_W4A16_GROUP,
                            &s->w4a16_gemm);
}

/* Attention, forward or backward, in each pattern form (the kind). */
static const void *build_attention(const struct row_def *r, BkDataType t, union op_storage *s)
{
    const struct attention_op_desc d = {
        strcmp(r->op, "attention-bwd") == 0, t, 1, PROBE_ATTENTION_HEADS,
        PROBE_ATTENTION_HEADS, PROBE_ATTENTION_L, PROBE_ATTENTION_L, PROBE_ATTENTION_D,
        PROBE_ATTENTION_D, PROBE_ATTENTION_BLOCK, PROBE_ATTENTION_BLOCK,
        (BkAttentionPatternForm)r->param, false, 1, 1,
        PROBE_ATTENTION_L / PROBE_ATTENTION_BLOCK};
    return attention_op_build(&d, &s->attention);
}

static BkTensorDesc i32_desc(uint32_t rank, int64_t e0, int64_t e1)
{
    BkTensorDesc t;
    memset(&t, 0, sizeof t);
    t.dataType = BK_DATA_TYPE_I32;
    t.rank = rank;
    t.extent[0] = e0;
    t.extent[1] = e1;
    return t;
}

/* Attention, dense, at other head sizes (param: D * 1000 + Dv), which
 * the CUDA backend runs at compiled widths: the kernel names say which. */
static const void *build_attention_heads(const struct row_def *r, BkDataType t,
                                         union op_storage *s)
{
    const struct attention_op_desc d = {
        strcmp(r->op, "attention-bwd") == 0, t, 1, PROBE_ATTENTION_HEADS,
        PROBE_ATTENTION_HEADS, PROBE_ATTENTION_L, PROBE_ATTENTION_L, r->param / 1000,
        r->param % 1000, 0, 0, BK_ATTENTION_PATTERN_DENSE, false, 1, 1, 0};
    return attention_op_build(&d, &s->attention);
}

/* Attention, dense, with BkAttentionSequencesInfo (PADDED or PACKED) and,
 * forward, a BkAttentionPagedKvInfo over PADDED lengths (the kind). */
static const void *build_attention_sequences(const struct row_def *r, BkDataType t,
                                             union op_storage *s)
{
    const enum attention_sequence_kind kind = (enum attention_sequence_kind)r->param;
    const bool packed = kind == SEQ_PACKED;
    const int64_t lk = PROBE_SEQ_PAGE * (PROBE_SEQ_PAGES / 2);
    const struct attention_op_desc d = {
        strcmp(r->op, "attention-bwd") == 0, t, packed ? 1 : PROBE_SEQ_BATCH,
        PROBE_ATTENTION_HEADS, PROBE_ATTENTION_HEADS, packed ? lk : PROBE_SEQ_LQ, lk,
        PROBE_ATTENTION_D, PROBE_ATTENTION_D, 0, 0, BK_ATTENTION_PATTERN_DENSE, false, 1, 1, 0};
    struct attention_chained *c = &s->attention_seq;
    const void *op = attention_op_build(&d, &c->info);
    memset(&c->seqs, 0, sizeof c->seqs);
    memset(&c->paged, 0, sizeof c->paged);
    c->seqs.sType = BK_STRUCTURE_TYPE_ATTENTION_SEQUENCES_INFO;
    if (packed) {
        c->seqs.form = BK_ATTENTION_SEQUENCES_PACKED;
        c->seqs.lengthsQ = i32_desc(1, PROBE_SEQ_PACKED + 1, 0);
        c->seqs.lengthsK = i32_desc(1, PROBE_SEQ_PACKED + 1, 0);
        c->seqs.maxLengthQ = c->seqs.maxLengthK = lk / PROBE_SEQ_PACKED;
    } else {
        c->seqs.lengthsQ = i32_desc(1, PROBE_SEQ_BATCH, 0);
        c->seqs.lengthsK = i32_desc(1, PROBE_SEQ_BATCH, 0);
    }
    if (kind == SEQ_PAGED) {
        /* k and v become the pool [pages, Hkv, pageSize, D]. */
        BkAttentionInfo *f = &c->info.fwd;
        f->k.extent[0] = f->v.extent[0] = PROBE_SEQ_PAGES;
        f->k.extent[2] = f->v.extent[2] = PROBE_SEQ_PAGE;
        c->paged.sType = BK_STRUCTURE_TYPE_ATTENTION_PAGED_KV_INFO;
        c->paged.blockTable = i32_desc(2, PROBE_SEQ_BATCH, PROBE_SEQ_PAGES / 2);
        c->seqs.pNext = &c->paged;
    }
    if (d.backward)
        c->info.bwd.pNext = &c->seqs;
    else
        c->info.fwd.pNext = &c->seqs;
    return op;
}

#define ATTENTION_SEQUENCE_ROWS(op)                                             \
    {op, "padded", ALL_COLUMNS, SEQ_PADDED, build_attention_sequences},         \
    {op, "packed", ALL_COLUMNS, SEQ_PACKED, build_attention_sequences}
/* Type conversion: the column is the input's type, the kind the
 * output's ("to-bf16"). */
static const void *build_type_convert(const struct row_def *r, BkDataType t,
                                      union op_storage *s)
{
    s->type_convert = (BkConvertInfo){
        .sType = BK_STRUCTURE_TYPE_CONVERT_INFO,
        .input = { .dataType = t, .rank = 2, .extent = { PROBE_TOKENS, PROBE_HIDDEN } },
        .output = { .dataType = (BkDataType)r->param, .rank = 2,
                    .extent = { PROBE_TOKENS, PROBE_HIDDEN } },
    };
    return &s->type_convert;
}

#define CONVERT_ROWS                                                                \
    {"convert", "to-f32", ALL_COLUMNS, BK_DATA_TYPE_F32, build_type_convert},       \
    {"convert", "to-f16", ALL_COLUMNS, BK_DATA_TYPE_F16, build_type_convert},       \
    {"convert", "to-bf16", ALL_COLUMNS, BK_DATA_TYPE_BF16, build_type_convert},     \
    {"convert", "to-f64", ALL_COLUMNS, BK_DATA_TYPE_F64, build_type_convert},       \
    {"convert", "to-i32", ALL_COLUMNS, BK_DATA_TYPE_I32, build_type_convert},       \
    {"convert", "to-u32", ALL_COLUMNS, BK_DATA_TYPE_U32, build_type_convert},       \
    {"convert", "to-u16", ALL_COLUMNS, BK_DATA_TYPE_U16, build_type_convert},       \
    {"convert", "to-i8", ALL_COLUMNS, BK_DATA_TYPE_I8, build_type_convert},         \
    {"convert", "to-u8", ALL_COLUMNS, BK_DATA_TYPE_U8, build_type_convert}

#define ATTENTION_ROWS(op)                                                      \
    {op, "dense", ALL_COLUMNS, BK_ATTENTION_PATTERN_DENSE, build_attention},    \
    {op, "mask", ALL_COLUMNS, BK_ATTENTION_PATTERN_MASK, build_attention},      \
    {op, "list", ALL_COLUMNS, BK_ATTENTION_PATTERN_LIST, build_attention},      \
    {op, "d96", ALL_COLUMNS, 96 * 1000 + 96, build_attention_heads},            \
    {op, "d192-v128", ALL_COLUMNS, 192 * 1000 + 128, build_attention_heads}

#define GATED_ROWS(op)                                                          \
    {op, "glu", ALL_COLUMNS, BK_GATED_ACTIVATION_GLU, build_gated},             \
    {op, "reglu", ALL_COLUMNS, BK_GATED_ACTIVATION_REGLU, build_gated},         \
    {op, "swiglu", ALL_COLUMNS, BK_GATED_ACTIVATION_SWIGLU, build_gated},       \
    {op, "geglu", ALL_COLUMNS, BK_GATED_ACTIVATION_GEGLU, build_gated},         \
    {op, "geglu-tanh", ALL_COLUMNS, BK_GATED_ACTIVATION_GEGLU_TANH, build_gated}

static const struct row_def rows[] = {
    GATED_ROWS("gated-fwd"),
    GATED_ROWS("gated-bwd"),
    {"gemm", NULL, ALL_COLUMNS, 0, build_gemm},
    {"gemm", "tf32", F32_COLUMN, 1, build_gemm},
    {"sparse24-convert", "strict", ALL_COLUMNS, BK_SPARSE24_COMPRESS_STRICT, build_convert},
    {"sparse24-convert", "prune", ALL_COLUMNS, BK_SPARSE24_COMPRESS_PRUNE, build_convert},
    {"sparse24-convert", "decompress", ALL_COLUMNS, BK_SPARSE24_DECOMPRESS, build_convert},
    {"sparse24-prepare", NULL, FLOAT_COLUMNS, 0, build_prepare},
    {"sparse24-gemm", NULL, FLOAT_COLUMNS, 0, build_sparse},
    {"w4a16-convert", "quantize", FLOAT_COLUMNS, BK_W4A16_QUANTIZE, build_w4a16_convert},
    {"w4a16-convert", "pack", HALF_COLUMNS, BK_W4A16_PACK, build_w4a16_convert},
    {"w4a16-convert", "unpack", HALF_COLUMNS, BK_W4A16_UNPACK, build_w4a16_convert},
    {"w4a16-gptq-repack", NULL, HALF_COLUMNS, 0, build_w4a16_repack},
    {"w4a16-gemm", NULL, HALF_COLUMNS, 0, build_w4a16_gemm},
    ATTENTION_ROWS("attention-fwd"),
    ATTENTION_SEQUENCE_ROWS("attention-fwd"),
    {"attention-fwd", "paged", ALL_COLUMNS, SEQ_PAGED, build_attention_sequences},
    ATTENTION_ROWS("attention-bwd"),
    ATTENTION_SEQUENCE_ROWS("attention-bwd"),
    CONVERT_ROWS,
};
#define ROW_COUNT (sizeof rows / sizeof rows[0])
#define CELL_COUNT (ROW_COUNT * COLUMN_COUNT)
#define GEMM_ROW (2 * GATED_KIND_COUNT)   /* rows[GEMM_ROW] is plain dense GEMM */
#define F16_COLUMN_INDEX 1u

/* One try of bkCreatePlan. */
struct cell {
    bool tried;                           /* false: not applicable, printed "-" */
    BkResult result;
    char kernel[BK_MAX_KERNEL_NAME_SIZE];
    char message[256];                    /* the error message when it failed */
};

struct device_report {
    BkDeviceProperties props;
    BkDeviceModuleProperties modules;     /* GPU code libbk carries for it */
    BkResult context_result;              /* of bkCreateContext */
    char context_message[256];
    struct cell cells[CELL_COUNT];        /* [row][column] */
};

/* A backend, usable when a context opens on one of its devices; else
 * why not, from libbk's own message (driver library not loaded, no
 * device, driver too old, or a libbk built without it). */
struct backend_report {
    BkDeviceType type;
    uint32_t devices;                     /* as bkEnumerateDevices lists them */
    BkResult result;                      /* BK_SUCCESS when usable */
    char message[256];
};

static const BkDeviceType backend_types[] = {BK_DEVICE_TYPE_HOST, BK_DEVICE_TYPE_CUDA};
#define BACKEND_COUNT (sizeof backend_types / sizeof backend_types[0])

/* cuBLASLt as bkinfo finds it (libbk looks for it the same way). */
struct lt_report {
    bool found;
    char library[256];
    size_t version;
    char message[256];
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
static void try_plan(BkContext ctx, const struct row_def *row, BkDataType dtype, struct cell *c)
{
    union op_storage info;
    BkPlanCreateInfo ci = {BK_STRUCTURE_TYPE_PLAN_CREATE_INFO, NULL, NULL, 0};
    BkPlan plan = BK_NULL_HANDLE;

    ci.pOperation = row->build(row, dtype, &info);
    c->tried = true;
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
    for (uint32_t row = 0; row < ROW_COUNT; row++)
        for (uint32_t t = 0; t < COLUMN_COUNT; t++)
            if (rows[row].columns & (1u << t))
                try_plan(ctx, &rows[row], gated_dtypes[t], &r->cells[row * COLUMN_COUNT + t]);
    bkDestroyContext(ctx);
}

/* From the devices' own results when the backend lists any, else from a
 * context asked of its device 0, whose failure says why none is listed. */
static void probe_backend(BkDeviceType type, const struct device_report *reps, uint32_t count,
                          struct backend_report *b)
{
    memset(b, 0, sizeof *b);
    b->type = type;
    b->result = BK_ERROR_NO_DEVICE;
    for (uint32_t i = 0; i < count; i++) {
        if (reps[i].props.deviceType != type)
            continue;
        if (b->devices++ == 0 || reps[i].context_result >= 0) {
            b->result = reps[i].context_result;
            snprintf(b->message, sizeof b->message, "%s", reps[i].context_message);
        }
    }
    if (b->devices > 0)
        return;
    BkContextCreateInfo ci = {BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO, NULL, type, 0,
                              BK_HEADER_VERSION, 0};
    BkContext ctx = BK_NULL_HANDLE;
    b->result = bkCreateContext(&ci, NULL, &ctx);
    if (b->result < 0)
        copy_message(b->message, sizeof b->message);
    bkDestroyContext(ctx);
}

static void probe_cublaslt(struct lt_report *lt)
{
    memset(lt, 0, sizeof *lt);
    struct cublaslt *h = cublaslt_open(lt->message, sizeof lt->message);
    if (!h)
        return;
    lt->found = true;
    snprintf(lt->library, sizeof lt->library, "%s", cublaslt_library(h));
    lt->version = cublaslt_version(h);
    cublaslt_close(h);
}

/* "ok", "unsupported" (libbk refuses it on this device), the error name,
 * or "n/a" when the op takes no such type and the cell is not tried. */
static const char *cell_status(const struct cell *c)
{
    if (!c->tried)
        return "n/a";
    if (c->result >= 0)
        return "ok";
    if (c->result == BK_ERROR_UNSUPPORTED)
        return "unsupported";
    return bkResultString(c->result);
}

/* libbk's own answer to "is cuBLASLt there": its f16 dense GEMM plan. */
static const struct cell *dense_gemm_cell(const struct device_report *r)
{
    return &r->cells[GEMM_ROW * COLUMN_COUNT + F16_COLUMN_INDEX];
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

/* "libcublasLt.so.13, version 130100" or "not found: why". */
static void lt_summary(const struct lt_report *lt, char *buf, size_t size)
{
    if (lt->found)
        snprintf(buf, size, "%s, version %zu", lt->library, lt->version);
    else
        snprintf(buf, size, "not found: %s", lt->message);
}

/* Whether libbk made its dense GEMM plan on a CUDA device, the one use
 * libbk has for cuBLASLt. */
static void print_cuda_gemm_library(const struct device_report *r)
{
    const struct cell *c = dense_gemm_cell(r);
    if (c->result >= 0)
        printf("  dense GEMM through cuBLASLt: yes (f16 plan: %s)\n", c->kernel);
    else
        printf("  dense GEMM through cuBLASLt: no: %.200s\n", c->message);
}

/* Text from column `used` on, broken at spaces so that lines stay within
 * TEXT_WIDTH columns; continuation lines are indented by `indent`. */
#define TEXT_WIDTH 100
static void print_wrapped(const char *text, size_t used, size_t indent)
{
    while (*text) {
        size_t len = strlen(text);
        size_t room = TEXT_WIDTH > used ? TEXT_WIDTH - used : 1;
        size_t cut = len;
        if (len > room) {
            cut = room;
            while (cut > 0 && text[cut] != ' ')
                cut--;
            if (cut == 0)             /* one word longer than the line */
                cut = room;
        }
        printf("%.*s\n", (int)cut, text);
        text += cut;
        while (*text == ' ')
            text++;
        if (*text)
            printf("%*s", (int)indent, "");
        used = indent;
    }
}

/* "usable: 2 devices" or "not usable: BK_ERROR_...: message". */
static void print_backends(const struct backend_report *backends)
{
    printf("backends:\n");
    for (size_t i = 0; i < BACKEND_COUNT; i++) {
        const struct backend_report *b = &backends[i];
        printf("  %-5s ", tool_device_type_name(b->type));
        if (b->result >= 0) {
            printf("usable: %u device%s\n", b->devices, b->devices == 1 ? "" : "s");
        } else {
            char line[400];
            snprintf(line, sizeof line, "not usable: %s: %s", bkResultString(b->result),
                     b->message);
            print_wrapped(line, 8, 8);
        }
    }
    printf("\n");
}

static void print_text(const struct device_report *reps, uint32_t count,
                       const struct backend_report *backends, const struct lt_report *lt)
{
    char lib[32], hdr[32], drv[16], rt[16], cc[16];
    version_string(bkGetVersion(), lib, sizeof lib);
    version_string(BK_HEADER_VERSION, hdr, sizeof hdr);
    printf("libbk %s (headers %s)\n\n", lib, hdr);
    print_backends(backends);

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
        printf("  %-17s %-11s", "op", "kind");
        for (uint32_t t = 0; t < COLUMN_COUNT; t++)
            print_column(tool_dtype_name(gated_dtypes[t]), t + 1 == COLUMN_COUNT);
        for (uint32_t row = 0; row < ROW_COUNT; row++) {
            const struct cell *c = &r->cells[row * COLUMN_COUNT];
            printf("  %-17s %-11s", rows[row].op, rows[row].kind ? rows[row].kind : "-");
            for (uint32_t t = 0; t < COLUMN_COUNT; t++)
                print_column(cell_status(&c[t]), t + 1 == COLUMN_COUNT);
        }
        if (r->props.deviceType == BK_DEVICE_TYPE_CUDA)
            print_cuda_gemm_library(r);
    }

    char buf[400];
    lt_summary(lt, buf, sizeof buf);
    printf("\ncuBLASLt (for dense GEMM on CUDA): %.60s\n", buf);
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

static void json_cell(const struct row_def *row, BkDataType dtype, const struct cell *c,
                      bool first)
{
    printf("%s\n      {\"op\": \"%s\", \"kind\": ", first ? "" : ",", row->op);
    if (row->kind)
        printf("\"%s\"", row->kind);
    else
        printf("null");
    printf(", \"dtype\": \"%s\", \"status\": \"%s\"", tool_dtype_name(dtype), cell_status(c));
    if (c->result >= 0) {
        printf(", \"kernel\": ");
        tool_json_string(stdout, c->kernel);
    } else {
        printf(", \"message\": ");
        tool_json_string(stdout, c->message);
    }
    printf("}");
}

static void json_cublaslt(const struct lt_report *lt)
{
    printf("  \"cublasLt\": {\"found\": %s, \"library\": ", lt->found ? "true" : "false");
    if (lt->found) {
        tool_json_string(stdout, lt->library);
        printf(", \"version\": %zu, \"message\": \"\"},\n", lt->version);
    } else {
        printf("null, \"version\": null, \"message\": ");
        tool_json_string(stdout, lt->message);
        printf("},\n");
    }
}

static void json_backends(const struct backend_report *backends)
{
    printf("  \"backends\": [");
    for (size_t i = 0; i < BACKEND_COUNT; i++) {
        const struct backend_report *b = &backends[i];
        printf("%s\n    {\"type\": \"%s\", \"usable\": %s, \"devices\": %u, \"status\": \"%s\", "
               "\"message\": ",
               i ? "," : "", tool_device_type_name(b->type), b->result >= 0 ? "true" : "false",
               b->devices, b->result >= 0 ? "ok" : bkResultString(b->result));
        tool_json_string(stdout, b->result >= 0 ? "" : b->message);
        printf("}");
    }
    printf("\n  ],\n");
}

static void print_json(const struct device_report *reps, uint32_t count,
                       const struct backend_report *backends, const struct lt_report *lt)
{
    char lib[32], hdr[32];
    version_string(bkGetVersion(), lib, sizeof lib);
    version_string(BK_HEADER_VERSION, hdr, sizeof hdr);
    printf("{\n  \"library\": {\"version\": \"%s\", \"headerVersion\": \"%s\"},\n", lib, hdr);
    json_backends(backends);
    json_cublaslt(lt);
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
        printf("{\"status\": \"ok\"}, ");
        if (cuda) {
            const struct cell *g = dense_gemm_cell(r);
            printf("\"denseGemmCublasLt\": %s, ", g->result >= 0 ? "true" : "false");
        }
        printf("\"support\": [");
        bool first = true;
        for (uint32_t row = 0; row < ROW_COUNT; row++)
            for (uint32_t t = 0; t < COLUMN_COUNT; t++) {
                const struct cell *c = &r->cells[row * COLUMN_COUNT + t];
                if (!c->tried)
                    continue;
                json_cell(&rows[row], gated_dtypes[t], c, first);
                first = false;
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
    struct backend_report backends[BACKEND_COUNT];
    for (size_t i = 0; i < BACKEND_COUNT; i++)
        probe_backend(backend_types[i], reps, count, &backends[i]);
    struct lt_report lt;
    probe_cublaslt(&lt);
    if (json)
        print_json(reps, count, backends, &lt);
    else
        print_text(reps, count, backends, &lt);

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
            const struct row_def *row = &rows[n / COLUMN_COUNT];
            const BkDataType dtype = gated_dtypes[n % COLUMN_COUNT];
            if (c->result < 0 && c->result != BK_ERROR_UNSUPPORTED)
                fprintf(stderr, "bkinfo: bkCreatePlan(%s %s %s) on %s %u: %s: %s\n", row->op,
                        row->kind ? row->kind : "-", tool_dtype_name(dtype),
                        tool_device_type_name(d->props.deviceType), d->props.deviceIndex,
                        bkResultString(c->result), c->message);
        }
    }
    if (r == BK_INCOMPLETE)
        fprintf(stderr, "bkinfo: device list changed while enumerating\n");
    free(props);
    free(reps);
    return status;
}
