/* SPDX-License-Identifier: Apache-2.0 */
/* The 2:4 sparse ops' validation, on the host device: every documented
 * rule of BkSparse24ConvertInfo, BkSparse24PrepareInfo and
 * BkSparse24GemmInfo broken one field at a time (result code, and the
 * message naming the field, and for shape rules the dimension and both
 * values), bkCheckSparse24Report, the reports of host runs, and that
 * nothing leaks: the context and every object made from it use the
 * counting allocator. What the 2:4 plans share with the dense GEMM's
 * (binding properties, run-time checks) is in t/gemm/gemm_validation.c. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm_infos.h"
#include "test_util.h"

static BkContext ctx;

#define EXPECT_PLAN(info, code, what, ...) BKT_EXPECT_PLAN(ctx, (info), (code), (what), __VA_ARGS__)

/* A plan the later checks need: one TAP line; NULL when it cannot be made. */
static BkPlan make_plan(const void *info, const char *what)
{
    BkPlan plan = BK_NULL_HANDLE;
    BKT_EXPECT(bkt_create_plan(ctx, info, &plan), BK_SUCCESS, NULL, "plan: %s", what);
    return plan;
}

/* ---- 2:4 conversions, prepare, sparse GEMM: the info rules --------------------- */

static void test_convert_rules(void)
{
    const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16;
    const BkSparse24Conversion all[] = { BK_SPARSE24_COMPRESS_STRICT, BK_SPARSE24_COMPRESS_PRUNE,
                                         BK_SPARSE24_DECOMPRESS, BK_SPARSE24_VALIDATE };
    const BkDataType types[] = { f32, f16, BK_DATA_TYPE_BF16, BK_DATA_TYPE_F64 };
    for (size_t c = 0; c < 4; c++)
        for (size_t t = 0; t < 4; t++) {
            char what[96];
            BkSparse24ConvertInfo ci = convert_info(all[c], types[t]);
            snprintf(what, sizeof what, "convert: conversion %d, %s", (int)all[c],
                     bkt_type_name(types[t]));
            EXPECT_PLAN(&ci, BK_SUCCESS, what, NULL);
        }
    BkSparse24ConvertInfo ci = convert_info(BK_SPARSE24_VALIDATE, f32);
    ci.dense = ABSENT_DESC, ci.values = ABSENT_DESC;
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: validate with dense and values zeroed", NULL);

    ci = convert_info((BkSparse24Conversion)4, f32);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: conversion 4",
                "BkSparse24ConvertInfo.conversion", "4");
    ci = convert_info((BkSparse24Conversion)-1, f32);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: conversion -1",
                "BkSparse24ConvertInfo.conversion");
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32), ci.reserved = 1;
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: reserved 1",
                "BkSparse24ConvertInfo.reserved");

    /* Metadata: U16, rank 2, [M, K/8]. */
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f32), ci.metadata.dataType = BK_DATA_TYPE_U8;
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: u8 metadata",
                "BkSparse24ConvertInfo.metadata.dataType", "U16");
    ci = convert_info(BK_SPARSE24_VALIDATE, f32), ci.metadata.dataType = BK_DATA_TYPE_I32;
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: validate, i32 metadata",
                "BkSparse24ConvertInfo.metadata.dataType");
    ci = convert_info(BK_SPARSE24_VALIDATE, f32), ci.metadata.dataType = BK_DATA_TYPE_UNDEFINED;
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: metadata is required",
                "BkSparse24ConvertInfo.metadata.dataType");
    ci = convert_info(BK_SPARSE24_DECOMPRESS, f32), ci.metadata = mat3(BK_DATA_TYPE_U16, 1, SM, 2);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: metadata of rank 3",
                "BkSparse24ConvertInfo.metadata.rank = 3");
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32), ci.metadata = mat(BK_DATA_TYPE_U16, SM, 3);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: metadata [4, 3] for K = 16",
                "BkSparse24ConvertInfo.metadata.extent[1] = 3", "K/8 = 2");
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32), ci.metadata = mat(BK_DATA_TYPE_U16, 5, 2);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: metadata [5, 2] for N = 4",
                "BkSparse24ConvertInfo.metadata.extent[0] = 5", "N = 4");
    /* Validation takes K = 8 x metadata's columns: a count whose bytes fit
     * 64 bits but whose K would not (found by the fuzz campaign). */
    ci = convert_info(BK_SPARSE24_VALIDATE, f32), ci.dense = ABSENT_DESC, ci.values = ABSENT_DESC;
    ci.metadata = mat(BK_DATA_TYPE_U16, 1, INT64_MAX / 4);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: validate, K overflows",
                "BkSparse24ConvertInfo.metadata.extent[1]", "overflow");

    /* Dense: rank 2, a supported type, K % 8. */
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f32), ci.dense = vec(f32, SK);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: dense of rank 1",
                "BkSparse24ConvertInfo.dense.rank = 1");
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f32), ci.dense = mat3(f32, 1, SM, SK);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: dense of rank 3",
                "BkSparse24ConvertInfo.dense.rank = 3");
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, BK_DATA_TYPE_I32);
    EXPECT_PLAN(&ci, BK_ERROR_UNSUPPORTED, "convert: i32 weight",
                "BkSparse24ConvertInfo.dense.dataType", "BK_DATA_TYPE_I32");
    ci = convert_info(BK_SPARSE24_DECOMPRESS, f16), ci.dense = mat(f16, SM, 12);
    ci.values = mat(f16, SM, 6), ci.metadata = mat(BK_DATA_TYPE_U16, SM, 1);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: K = 12",
                "BkSparse24ConvertInfo.dense.extent[1] = 12", "multiple of 8");
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f16), ci.dense = mat(f16, SM, 4);
    ci.values = mat(f16, SM, 2), ci.metadata = mat(BK_DATA_TYPE_U16, SM, 0);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: K = 4",
                "BkSparse24ConvertInfo.dense.extent[1] = 4");

    /* Values: the dense type, [M, K/2]. */
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f32), ci.values.dataType = f16;
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: values f16, dense f32",
                "BkSparse24ConvertInfo.values.dataType", "BK_DATA_TYPE_F16", "BK_DATA_TYPE_F32");
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f32), ci.values = mat(f32, SM, SK);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: values [4, 16]",
                "BkSparse24ConvertInfo.values.extent[1] = 16", "K/2 = 8");
    ci = convert_info(BK_SPARSE24_DECOMPRESS, f32), ci.values = mat(f32, 3, SK / 2);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: values [3, 8] for N = 4",
                "BkSparse24ConvertInfo.values.extent[0] = 3", "N = 4");
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32), ci.values = vec(f32, SM * SK / 2);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: values of rank 1",
                "BkSparse24ConvertInfo.values.rank = 1");

    /* What a conversion writes must not overlap itself; what it reads may. */
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32), ci.values = mat_s(f32, SM, SK / 2, 1, 1);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: prune into overlapping values",
                "BkSparse24ConvertInfo.values.stride");
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f32);
    ci.metadata = mat_s(BK_DATA_TYPE_U16, SM, 2, 1, 1);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: compress into overlapping metadata",
                "BkSparse24ConvertInfo.metadata.stride");
    ci = convert_info(BK_SPARSE24_DECOMPRESS, f32), ci.dense = mat_s(f32, SM, SK, 8, 1);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: decompress into overlapping dense",
                "BkSparse24ConvertInfo.dense.stride");
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32), ci.dense = mat_s(f32, SM, SK, 8, 1);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: compress from an overlapping (read) dense", NULL);
    ci = convert_info(BK_SPARSE24_DECOMPRESS, f32);
    ci.metadata = mat_s(BK_DATA_TYPE_U16, SM, 2, 1, 1), ci.values = mat_s(f32, SM, SK / 2, 1, 1);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: decompress from overlapping (read) values and "
                "metadata", NULL);
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32);
    ci.dense = mat_s(f32, SM, SK, 1, SM), ci.values = mat_s(f32, SM, SK / 2, 1, SM + 3);
    ci.metadata = mat_s(BK_DATA_TYPE_U16, SM, 2, 1, 2);
    EXPECT_PLAN(&ci, BK_ERROR_INVALID_ARGUMENT, "convert: metadata strides {1, 2} overlap",
                "BkSparse24ConvertInfo.metadata.stride[1] = 2");
    ci.metadata = mat_s(BK_DATA_TYPE_U16, SM, 2, 1, 7);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: column-major and padded tensors", NULL);

    /* Empty weights. */
    ci = convert_info(BK_SPARSE24_COMPRESS_PRUNE, f32), ci.dense = mat(f32, 0, SK);
    ci.values = mat(f32, 0, SK / 2), ci.metadata = mat(BK_DATA_TYPE_U16, 0, SK / 8);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: N = 0 (no rows of W)", NULL);
    ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, f32), ci.dense = mat(f32, SM, 0);
    ci.values = mat(f32, SM, 0), ci.metadata = mat(BK_DATA_TYPE_U16, SM, 0);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: K = 0", NULL);
}

static void test_prepare_rules(void)
{
    const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16, bf16 = BK_DATA_TYPE_BF16;
    BkSparse24PrepareInfo pi;
    const BkDataType ok[] = { f32, f16, bf16 };
    for (size_t t = 0; t < 3; t++) {
        char what[64];
        pi = prepare_info(ok[t]);
        snprintf(what, sizeof what, "prepare: %s", bkt_type_name(ok[t]));
        EXPECT_PLAN(&pi, BK_SUCCESS, what, NULL);
    }
    pi = prepare_info(BK_DATA_TYPE_F64);
    EXPECT_PLAN(&pi, BK_ERROR_UNSUPPORTED, "prepare: f64 is not prepared",
                "BkSparse24PrepareInfo.values.dataType", "BK_DATA_TYPE_F64");
    pi = prepare_info(BK_DATA_TYPE_I32);
    EXPECT_PLAN(&pi, BK_ERROR_UNSUPPORTED, "prepare: i32", "BkSparse24PrepareInfo.values.dataType");
    pi = prepare_info(f16), pi.values.dataType = (BkDataType)66;
    EXPECT_PLAN(&pi, BK_ERROR_INVALID_ARGUMENT, "prepare: values.dataType 66",
                "BkSparse24PrepareInfo.values.dataType");
    pi = prepare_info(f16), pi.values = mat(f16, SM, 6), pi.metadata = mat(BK_DATA_TYPE_U16, SM, 1);
    EXPECT_PLAN(&pi, BK_ERROR_INVALID_ARGUMENT, "prepare: values [4, 6] (K = 12)",
                "BkSparse24PrepareInfo.values.extent[1] = 6", "multiple of 4");
    pi = prepare_info(f16), pi.metadata = mat(BK_DATA_TYPE_U16, SM, 1);
    EXPECT_PLAN(&pi, BK_ERROR_INVALID_ARGUMENT, "prepare: metadata [4, 1] for K = 16",
                "BkSparse24PrepareInfo.metadata.extent[1] = 1", "K/8 = 2");
    pi = prepare_info(f16), pi.metadata = mat(BK_DATA_TYPE_U16, 2, 2);
    EXPECT_PLAN(&pi, BK_ERROR_INVALID_ARGUMENT, "prepare: metadata [2, 2] for N = 4",
                "BkSparse24PrepareInfo.metadata.extent[0] = 2", "N = 4");
    pi = prepare_info(f16), pi.metadata.dataType = f16;
    EXPECT_PLAN(&pi, BK_ERROR_INVALID_ARGUMENT, "prepare: f16 metadata",
                "BkSparse24PrepareInfo.metadata.dataType", "U16");
    pi = prepare_info(f16), pi.values = mat3(f16, 2, SM, SK / 2);
    EXPECT_PLAN(&pi, BK_ERROR_INVALID_ARGUMENT, "prepare: values of rank 3",
                "BkSparse24PrepareInfo.values.rank = 3");
    pi = prepare_info(f16), pi.metadata = vec(BK_DATA_TYPE_U16, 8);
    EXPECT_PLAN(&pi, BK_ERROR_INVALID_ARGUMENT, "prepare: metadata of rank 1",
                "BkSparse24PrepareInfo.metadata.rank = 1");
    pi = prepare_info(f16), pi.values = mat_s(f16, SM, SK / 2, 1, 1);
    pi.metadata = mat_s(BK_DATA_TYPE_U16, SM, 2, 1, 1);
    EXPECT_PLAN(&pi, BK_SUCCESS, "prepare: overlapping (read) values and metadata", NULL);
    pi = prepare_info(f16), pi.values = mat(f16, 0, SK / 2);
    pi.metadata = mat(BK_DATA_TYPE_U16, 0, 2);
    EXPECT_PLAN(&pi, BK_SUCCESS, "prepare: N = 0 (no rows of W)", NULL);
}

static void test_sparse_gemm_rules(void)
{
    const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16, bf16 = BK_DATA_TYPE_BF16;
    BkSparse24GemmInfo s;
    const struct { BkDataType w, out; } ok[] = {
        { f32, f32 }, { f16, f16 }, { f16, f32 }, { bf16, bf16 }, { bf16, f32 },
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char what[64];
        s = sgemm_info(ok[i].w, ok[i].out);
        snprintf(what, sizeof what, "sparse gemm: %s weight, %s output", bkt_type_name(ok[i].w),
                 bkt_type_name(ok[i].out));
        EXPECT_PLAN(&s, BK_SUCCESS, what, NULL);
    }
    s = sgemm_info(f16, f16), s.c = ABSENT_DESC, s.bias = ABSENT_DESC, s.beta = 0;
    EXPECT_PLAN(&s, BK_SUCCESS, "sparse gemm: no C, no bias", NULL);
    s = sgemm_info(f16, f16), s.x = mat_s(f16, SN, SK, 1, SN), s.y = mat_s(f16, SN, SM, 1, SN);
    s.c = mat_s(f16, SN, SM, 1, SN + 2);
    EXPECT_PLAN(&s, BK_SUCCESS, "sparse gemm: column-major x, c and y (W @ X^T)", NULL);
    s = sgemm_info(f16, f16), s.x = mat_s(f16, SN, SK, 40, 2);
    EXPECT_PLAN(&s, BK_SUCCESS, "sparse gemm: x with any positive strides", NULL);
    s = sgemm_info(f16, f16), s.x = mat3(f16, 2, SN, SK), s.y = mat3(f16, 2, SN, SM);
    EXPECT_PLAN(&s, BK_SUCCESS, "sparse gemm: a batch of 2, c shared", NULL);

    s = sgemm_info(BK_DATA_TYPE_F64, BK_DATA_TYPE_F64);
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: f64 weight",
                "BkSparse24GemmInfo.weightType", "BK_DATA_TYPE_F64");
    s = sgemm_info(f16, f16), s.weightType = BK_DATA_TYPE_I8;
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: i8 weight",
                "BkSparse24GemmInfo.weightType");
    /* 77 is no BkDataType: a broken rule (as for tensors), not an unsupported type. */
    s = sgemm_info(f16, f16), s.weightType = (BkDataType)77;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: weightType 77 is no BkDataType",
                "BkSparse24GemmInfo.weightType");
    s = sgemm_info(f16, f16), s.activation = (BkGemmActivation)7;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: activation 7",
                "BkSparse24GemmInfo.activation");
    s = sgemm_info(f16, f16), s.alpha = NAN;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: alpha NaN",
                "BkSparse24GemmInfo.alpha");
    s = sgemm_info(f16, f16), s.beta = -INFINITY;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: beta -inf", "BkSparse24GemmInfo.beta");
    s = sgemm_info(f16, f16), s.c = ABSENT_DESC, s.beta = 2;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: beta 2 without C",
                "BkSparse24GemmInfo.beta");
    s = sgemm_info(f16, f16), s.m = -4;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: m -4", "BkSparse24GemmInfo.m = -4");
    s = sgemm_info(f16, f16), s.k = -16;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: k -16", "BkSparse24GemmInfo.k = -16");
    s = sgemm_info(f16, f16), s.k = 12, s.x = mat(f16, SN, 12);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: k 12", "BkSparse24GemmInfo.k = 12",
                "multiple of 8");
    s = sgemm_info(f16, f16), s.k = 4, s.x = mat(f16, SN, 4);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: k 4", "BkSparse24GemmInfo.k = 4");
    s = sgemm_info(f16, f16), s.x.dataType = bf16;
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: bf16 x, f16 weight",
                "BkSparse24GemmInfo.x.dataType", "BK_DATA_TYPE_BF16", "BK_DATA_TYPE_F16");
    s = sgemm_info(f32, f32), s.y.dataType = s.c.dataType = s.bias.dataType = f16;
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: f32 weight, f16 output",
                "BkSparse24GemmInfo.y.dataType", "BK_DATA_TYPE_F16");
    s = sgemm_info(bf16, bf16), s.y.dataType = s.c.dataType = s.bias.dataType = f16;
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: bf16 weight, f16 output",
                "BkSparse24GemmInfo.y.dataType");
    s = sgemm_info(f16, f32), s.c.dataType = f16;
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: c f16, y f32",
                "BkSparse24GemmInfo.c.dataType", "BK_DATA_TYPE_F16");
    s = sgemm_info(f16, f16), s.x = mat(f16, SN, 24);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: x [3, 24] for k = 16",
                "BkSparse24GemmInfo.x.extent[1] = 24", "k = 16");
    s = sgemm_info(f16, f16), s.x = mat3(f16, 2, SN, 8), s.y = mat3(f16, 2, SN, SM);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: rank-3 x [2, 3, 8] for k = 16",
                "BkSparse24GemmInfo.x.extent[2] = 8", "k = 16");
    s = sgemm_info(f16, f16), s.y = mat(f16, SN, 5), s.c = s.y;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: y [3, 5] for m = 4",
                "BkSparse24GemmInfo.y.extent[1] = 5", "m = 4");
    s = sgemm_info(f16, f16), s.y = mat(f16, 2, SM), s.c = s.y;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: y has 2 rows, x 3",
                "M (tokens) disagrees", "y has 2 rows", "x has 3");
    s = sgemm_info(f16, f16), s.c = mat(f16, SN, 3);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: c [3, 3] vs y [3, 4]",
                "BkSparse24GemmInfo.c", "[3, 3]", "[3, 4]");
    s = sgemm_info(f16, f16), s.x = vec(f16, SK);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: x of rank 1",
                "BkSparse24GemmInfo.x.rank = 1");
    s = sgemm_info(f16, f16), s.y.rank = 4, s.y.extent[2] = s.y.extent[3] = 1;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: y of rank 4",
                "BkSparse24GemmInfo.y.rank = 4");
    s = sgemm_info(f16, f16), s.x = mat3(f16, 2, SN, SK);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: rank-3 x with rank-2 y",
                "BkSparse24GemmInfo.x.rank = 3", "y.rank");
    s = sgemm_info(f16, f16), s.x = mat3(f16, 2, SN, SK), s.y = mat3(f16, 3, SN, SM);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: x batch 2 vs y batch 3",
                "BkSparse24GemmInfo.x.extent[0] = 2", "y.extent[0] = 3");
    s = sgemm_info(f16, f16), s.c = mat3(f16, 2, SN, SM), s.x = mat3(f16, 3, SN, SK);
    s.y = mat3(f16, 3, SN, SM);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: c batch 2 vs y batch 3",
                "BkSparse24GemmInfo.c.extent[0] = 2");
    s = sgemm_info(f16, f16), s.y = mat_s(f16, SN, SM, 1, 1), s.c = ABSENT_DESC, s.beta = 0;
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: y overlapping itself",
                "BkSparse24GemmInfo.y.stride");
    s = sgemm_info(f16, f16), s.x = mat_s(f16, SN, SK, 1, 1);
    EXPECT_PLAN(&s, BK_SUCCESS, "sparse gemm: x (read) overlapping itself", NULL);
    s = sgemm_info(f16, f16), s.bias = vec(f16, SN);
    EXPECT_PLAN(&s, BK_ERROR_INVALID_ARGUMENT, "sparse gemm: bias of N, not m",
                "BkSparse24GemmInfo.bias", "m = 4", "extent[0] = 3");
    s = sgemm_info(f16, f16), s.bias.stride[0] = 3;
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: bias with stride 3",
                "BkSparse24GemmInfo.bias.stride[0] = 3");
    s = sgemm_info(f16, f32), s.bias.dataType = f16;
    EXPECT_PLAN(&s, BK_ERROR_UNSUPPORTED, "sparse gemm: f16 bias, f32 y",
                "BkSparse24GemmInfo.bias.dataType");
    s = sgemm_info(f16, f16), s.x = mat(f16, 0, SK), s.y = mat(f16, 0, SM), s.c = s.y;
    EXPECT_PLAN(&s, BK_SUCCESS, "sparse gemm: N = 0", NULL);
    s = sgemm_info(f16, f16), s.m = 0, s.y = mat(f16, SN, 0), s.c = s.y, s.bias = vec(f16, 0);
    EXPECT_PLAN(&s, BK_SUCCESS, "sparse gemm: m = 0", NULL);
}

/* ---- bkCheckSparse24Report ------------------------------------------------------- */

static void test_report(void)
{
    BkSparse24Report r = { .status = BK_SPARSE24_STATUS_OK };
    BKT_EXPECT(bkCheckSparse24Report(&r), BK_SUCCESS, NULL, "report: OK");
    r.badGroupCount = 3, r.firstBadRow = 9; /* only the status decides */
    BKT_EXPECT(bkCheckSparse24Report(&r), BK_SUCCESS, NULL, "report: OK whatever the counts");
    BKT_EXPECT(bkCheckSparse24Report(NULL), BK_ERROR_INVALID_ARGUMENT, "pReport", "report: NULL");

    const struct {
        BkSparse24Status status;
        uint64_t count, row, group;
        const char *const needles[6];
        const char *what;
    } bad[] = {
        { BK_SPARSE24_STATUS_TOO_MANY_NONZEROS, 2, 3, 5,
          { "row 3", "group 5", "columns 20..23", "2 such groups", "2:4" },
          "too many non-zeros at row 3, group 5" },
        { BK_SPARSE24_STATUS_TOO_MANY_NONZEROS, 1, 0, 0,
          { "row 0", "group 0", "columns 0..3", "1 such group)", NULL },
          "too many non-zeros, one group" },
        { BK_SPARSE24_STATUS_BAD_METADATA, 7, 4000000000ull, 123456789012ull,
          { "metadata", "row 4000000000", "group 123456789012", "7 such groups", NULL },
          "bad metadata, large row and group" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = (BkSparse24Report){ .status = bad[i].status, .badGroupCount = bad[i].count,
                                .firstBadRow = bad[i].row, .firstBadGroup = bad[i].group };
        bkt_expect_begin();
        BkResult res = bkCheckSparse24Report(&r);
        const char *needle = bkt_pick_needle(res, bad[i].needles);
        bkt_expect_end(res, BK_ERROR_INVALID_ARGUMENT, needle, "report: %s", bad[i].what);
    }
    r = (BkSparse24Report){ .status = 7 };
    BKT_EXPECT(bkCheckSparse24Report(&r), BK_ERROR_INVALID_ARGUMENT, "BkSparse24Report.status = 7",
               "report: status 7 is no BkSparse24Status");
    r = (BkSparse24Report){ .status = 0xFFFFFFFFu };
    BKT_EXPECT(bkCheckSparse24Report(&r), BK_ERROR_INVALID_ARGUMENT, "BkSparse24Report.status",
               "report: status 0xFFFFFFFF");
}

/* ---- Reports from runs on the host ------------------------------------------------- */

/* A strict compression and a validation on the host write reports that
 * bkCheckSparse24Report turns into messages naming the first bad group. */
static void test_reports_from_runs(void)
{
    /* W [4, 16]: 2:4 except row 2 group 1 (3 non-zeros) and row 3 group 0 (4). */
    float w[SM * SK] = { 0 };
    for (int r = 0; r < SM; r++)
        for (int g = 0; g < SK / 4; g++) {
            w[r * SK + 4 * g + (r + g) % 4] = (float)(r + 1);
            w[r * SK + 4 * g + (r + g + 2) % 4] = -(float)(g + 1);
        }
    w[2 * SK + 4 * 1 + 0] = w[2 * SK + 4 * 1 + 1] = w[2 * SK + 4 * 1 + 2] = 5.0f;
    w[2 * SK + 4 * 1 + 3] = 0.0f;
    for (int p = 0; p < 4; p++)
        w[3 * SK + p] = (float)(p + 1);
    BkSparse24ConvertInfo ci = convert_info(BK_SPARSE24_COMPRESS_STRICT, BK_DATA_TYPE_F32);
    BkPlan plan = make_plan(&ci, "compress strict f32 [4, 16]");
    struct bkt_buffer dense = bkt_alloc(ctx, sizeof w), values = bkt_alloc(ctx, sizeof w / 2),
                      meta = bkt_alloc(ctx, SM * 2 * 2), rep = bkt_alloc(ctx, 32);
    BkSparse24Report report = { .status = 99 };
    if (plan) {
        bkt_upload(ctx, dense.address, w, sizeof w);
        BkResult r = bkt_run(ctx, plan, 4, (BkDeviceAddress[4]){ dense.address, values.address,
                                                                 meta.address, rep.address });
        bkt_download(ctx, &report, rep.address, sizeof report);
        tap_ok(r == BK_SUCCESS && report.status == BK_SPARSE24_STATUS_TOO_MANY_NONZEROS &&
               report.badGroupCount == 2 && report.firstBadRow == 2 && report.firstBadGroup == 1,
               "strict compression reports 2 bad groups, the first at row 2, group 1 (status %u, "
               "%llu groups, row %llu, group %llu)", report.status,
               (unsigned long long)report.badGroupCount, (unsigned long long)report.firstBadRow,
               (unsigned long long)report.firstBadGroup);
        BKT_EXPECT(bkCheckSparse24Report(&report), BK_ERROR_INVALID_ARGUMENT, "row 2, group 1",
                   "... bkCheckSparse24Report names row 2, group 1");
        bkDestroyPlan(plan);
    }
    /* Metadata [4, 2]: all valid (positions 0 and 1: 0x04), then row 1
     * group 3 (element 1, high byte) with equal positions and row 3 group 0
     * with bit 4 set. */
    uint16_t md[SM * 2];
    for (int i = 0; i < SM * 2; i++)
        md[i] = 0x0404;
    md[1 * 2 + 1] = 0x0504;   /* group 3: first 1, second 1 */
    md[3 * 2 + 0] = 0x0414;   /* group 0: bit 4 */
    ci = convert_info(BK_SPARSE24_VALIDATE, BK_DATA_TYPE_F16);
    if ((plan = make_plan(&ci, "validate [4, 16]"))) {
        bkt_upload(ctx, meta.address, md, sizeof md);
        BkResult r = bkt_run(ctx, plan, 4, (BkDeviceAddress[4]){ 0, 0, meta.address,
                                                                 rep.address });
        bkt_download(ctx, &report, rep.address, sizeof report);
        tap_ok(r == BK_SUCCESS && report.status == BK_SPARSE24_STATUS_BAD_METADATA &&
               report.badGroupCount == 2 && report.firstBadRow == 1 && report.firstBadGroup == 3,
               "validation reports 2 bad groups, the first at row 1, group 3 (status %u, %llu "
               "groups, row %llu, group %llu)", report.status,
               (unsigned long long)report.badGroupCount, (unsigned long long)report.firstBadRow,
               (unsigned long long)report.firstBadGroup);
        BKT_EXPECT(bkCheckSparse24Report(&report), BK_ERROR_INVALID_ARGUMENT, "row 1, group 3",
                   "... bkCheckSparse24Report names row 1, group 3");
        bkDestroyPlan(plan);
    }
    bkt_free(ctx, &dense), bkt_free(ctx, &values), bkt_free(ctx, &meta), bkt_free(ctx, &rep);
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

    test_convert_rules();
    test_prepare_rules();
    test_sparse_gemm_rules();
    test_report();
    test_reports_from_runs();
    tap_ok(bkt_stray_plans() == 0, "failed bkCreatePlan calls left no handle (%ld did)",
           bkt_stray_plans());

    bkDestroyContext(ctx);
    tap_ok(bkt_alloc_live(&stats) == 0 && stats.unknown_frees == 0 && stats.bad_alignment == 0,
           "everything allocated through the context's callbacks was freed (%ld live, %ld "
           "foreign frees, %ld bad alignments; %ld allocations)", bkt_alloc_live(&stats),
           stats.unknown_frees, stats.bad_alignment, stats.allocations);
    return tap_done();
}
