/* SPDX-License-Identifier: Apache-2.0 */
/* The W4A16 family's validation, on the host device: every documented
 * rule of BkW4A16ConvertInfo, BkW4A16GptqRepackInfo and BkW4A16GemmInfo
 * broken one field at a time (result code, and a message naming the
 * field, and for shape rules the value and the rule), the binding slots
 * and precision each plan reports, the run-time checks those slots imply
 * (sizes and alignments), bkCheckW4A16RepackReport's messages, and that
 * failed plan creations leak nothing: the context and everything made
 * from it use a counting allocator. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "w4a16_ref.h"

static BkContext ctx;
static BkCommandBuffer cmd;        /* recording; never submitted */

static const BkDataType f32 = BK_DATA_TYPE_F32, f16 = BK_DATA_TYPE_F16,
                        bf16 = BK_DATA_TYPE_BF16, i32 = BK_DATA_TYPE_I32, u8 = BK_DATA_TYPE_U8;

static const BkTensorDesc absent; /* dataType UNDEFINED */

/* The valid infos the checks break one field at a time: a weight [K, N]
 * = [128, 128] in groups of 32 (G = 4); A [M, K] = [4, 128]. */
enum { K = 128, N = 128, GS = 32, G = K / GS, M = 4 };

static BkW4A16ConvertInfo convert_info(BkW4A16Conversion conversion, BkDataType scale_type)
{
    BkW4A16ConvertInfo ci = {
        .sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO,
        .conversion = conversion, .groupSize = GS,
        .quantized = w4a16_mat(u8, K, N), .scales = w4a16_mat(scale_type, G, N),
    };
    if (conversion == BK_W4A16_QUANTIZE) {
        ci.weight = w4a16_mat(f32, K, N);
    } else {
        ci.packed = w4a16_mat(i32, K / 16, 2 * N);
        ci.packedScales = w4a16_mat(scale_type, G, N);
    }
    return ci;
}

static BkW4A16GptqRepackInfo repack_info(void)
{
    return (BkW4A16GptqRepackInfo){
        .sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO,
        .zeros = BK_W4A16_GPTQ_ZEROS_EXACT,
        .groupSize = GS,
        .qweight = w4a16_mat(i32, K / 8, N),
        .scales = w4a16_mat(f16, G, N),
        .qzeros = w4a16_mat(i32, G, N / 8),
        .gIdx = w4a16_vec(i32, K),
        .packed = w4a16_mat(i32, K / 16, 2 * N),
        .packedScales = w4a16_mat(f16, G, N),
        .perm = w4a16_vec(i32, K),
    };
}

static BkW4A16GemmInfo gemm_info(BkDataType type)
{
    return (BkW4A16GemmInfo){
        .sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO,
        .groupSize = GS,
        .a = w4a16_mat(type, M, K),
        .packed = w4a16_mat(i32, K / 16, 2 * N),
        .packedScales = w4a16_mat(type, G, N),
        .perm = w4a16_vec(i32, K),
        .c = w4a16_mat(type, M, N),
    };
}

/* ---- Expectations ------------------------------------------------------------ */

#define EXPECT_PLAN(info, code, what, ...) BKT_EXPECT_PLAN(ctx, (info), (code), (what), __VA_ARGS__)
#define INVALID BK_ERROR_INVALID_ARGUMENT
#define UNSUPPORTED BK_ERROR_UNSUPPORTED

static const int32_t bad_group_sizes[] = { 0, 16, 256, -2, 48, INT32_MIN };
#define BAD_GROUP_SIZES (sizeof bad_group_sizes / sizeof bad_group_sizes[0])

/* ---- Conversions --------------------------------------------------------------- */

static void test_convert_rules(void)
{
    const char *in = "BkW4A16ConvertInfo";
    char what[128];
    const BkW4A16Conversion all[] = { BK_W4A16_QUANTIZE, BK_W4A16_PACK, BK_W4A16_UNPACK };
    const char *names[] = { "quantize", "pack", "unpack" };
    const int32_t good[] = { 32, 64, 128, BK_W4A16_GROUP_PER_CHANNEL };
    BkW4A16ConvertInfo ci;
    for (int c = 0; c < 3; c++)
        for (int t = 0; t < 2; t++)
            for (int g = 0; g < 4; g++) {
                ci = convert_info(all[c], t ? bf16 : f16);
                ci.groupSize = good[g];
                const int64_t groups = good[g] < 0 ? 1 : K / good[g];
                ci.scales.extent[0] = groups;
                if (all[c] != BK_W4A16_QUANTIZE)
                    ci.packedScales.extent[0] = groups;
                snprintf(what, sizeof what, "convert: %s, %s scales, groupSize %d", names[c],
                         t ? "bf16" : "f16", (int)good[g]);
                EXPECT_PLAN(&ci, BK_SUCCESS, what, NULL);
            }
    const BkDataType weights[] = { f32, f16, bf16 };
    for (int t = 0; t < 3; t++) {
        ci = convert_info(BK_W4A16_QUANTIZE, bf16), ci.weight.dataType = weights[t];
        snprintf(what, sizeof what, "convert: quantize a %s weight", bkt_type_name(weights[t]));
        EXPECT_PLAN(&ci, BK_SUCCESS, what, NULL);
    }
    BkBaseInStructure ext = { .sType = (BkStructureType)0x5151 };
    ci = convert_info(BK_W4A16_PACK, f16), ci.pNext = &ext;
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: an unknown pNext struct is skipped", NULL);
    /* Quantizing knows nothing of Marlin's tiles. */
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight = w4a16_mat(f32, K, 40);
    ci.quantized = w4a16_mat(u8, K, 40), ci.scales = w4a16_mat(f16, G, 40);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: quantize N = 40", NULL);
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.groupSize = BK_W4A16_GROUP_PER_CHANNEL;
    ci.weight = w4a16_mat(f32, 24, N), ci.quantized = w4a16_mat(u8, 24, N),
    ci.scales = w4a16_mat(f16, 1, N);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: quantize per channel, K = 24", NULL);
    /* Plain tensors take any positive strides; packed ones explicit row-major strides. */
    ci = convert_info(BK_W4A16_UNPACK, f16), ci.quantized = w4a16_mat_strided(u8, K, N, 1, K + 3);
    ci.scales = w4a16_mat_strided(f16, G, N, 1, G),
    ci.packed = w4a16_mat_strided(i32, K / 16, 2 * N, 2 * N, 1);
    ci.packedScales = w4a16_mat_strided(f16, G, N, N, 1);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: unpack into column-major tensors, packed with "
                "explicit row-major strides", NULL);
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight = w4a16_mat_strided(f32, K, N, 1, 1);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: quantize from an overlapping (read) weight", NULL);

    /* Enums and groupSize. */
    ci = convert_info((BkW4A16Conversion)3, f16);
    EXPECT_PLAN(&ci, INVALID, "convert: conversion 3", "BkW4A16ConvertInfo.conversion = 3");
    ci = convert_info((BkW4A16Conversion)-1, f16);
    EXPECT_PLAN(&ci, INVALID, "convert: conversion -1", "BkW4A16ConvertInfo.conversion");
    for (size_t i = 0; i < BAD_GROUP_SIZES; i++) {
        ci = convert_info(BK_W4A16_PACK, f16), ci.groupSize = bad_group_sizes[i];
        snprintf(what, sizeof what, "convert: groupSize %d", (int)bad_group_sizes[i]);
        char needle[64];
        snprintf(needle, sizeof needle, "%s.groupSize = %d", in, (int)bad_group_sizes[i]);
        EXPECT_PLAN(&ci, INVALID, what, needle, "32, 64, 128");
    }

    /* Shapes: positive, whole groups, Marlin's tiles for the packed form. */
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight = w4a16_mat(f32, 0, N);
    ci.quantized = w4a16_mat(u8, 0, N), ci.scales = w4a16_mat(f16, 0, N);
    EXPECT_PLAN(&ci, INVALID, "convert: K = 0", "BkW4A16ConvertInfo.weight.extent[0] = 0 (K)",
                "positive");
    ci = convert_info(BK_W4A16_PACK, f16), ci.quantized = w4a16_mat(u8, K, 0);
    EXPECT_PLAN(&ci, INVALID, "convert: N = 0", "BkW4A16ConvertInfo.quantized.extent[1] = 0 (N)",
                "positive");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight = w4a16_mat(f32, 48, N);
    ci.quantized = w4a16_mat(u8, 48, N);
    EXPECT_PLAN(&ci, INVALID, "convert: quantize K = 48 in groups of 32",
                "BkW4A16ConvertInfo.weight.extent[0] = 48 (K)", "multiple of", "groupSize = 32");
    ci = convert_info(BK_W4A16_PACK, f16), ci.groupSize = 128, ci.quantized = w4a16_mat(u8, 192, N);
    EXPECT_PLAN(&ci, INVALID, "convert: pack K = 192 in groups of 128",
                "BkW4A16ConvertInfo.quantized.extent[0] = 192 (K)", "groupSize = 128");
    ci = convert_info(BK_W4A16_PACK, f16), ci.groupSize = BK_W4A16_GROUP_PER_CHANNEL;
    ci.quantized = w4a16_mat(u8, 24, N), ci.scales = w4a16_mat(f16, 1, N);
    ci.packed = w4a16_mat(i32, 1, 2 * N), ci.packedScales = w4a16_mat(f16, 1, N);
    EXPECT_PLAN(&ci, INVALID, "convert: pack per channel, K = 24",
                "BkW4A16ConvertInfo.quantized.extent[0] = 24 (K)", "multiple of 16",
                "the Marlin layout tiles K by 16 and N by 64");
    ci = convert_info(BK_W4A16_UNPACK, f16), ci.quantized = w4a16_mat(u8, K, 96);
    ci.scales = w4a16_mat(f16, G, 96), ci.packed = w4a16_mat(i32, K / 16, 192);
    ci.packedScales = w4a16_mat(f16, G, 96);
    EXPECT_PLAN(&ci, INVALID, "convert: unpack N = 96",
                "BkW4A16ConvertInfo.quantized.extent[1] = 96 (N)", "multiple of 64",
                "Marlin layout");
    ci = convert_info(BK_W4A16_PACK, f16), ci.quantized = w4a16_mat(u8, K, 32);
    EXPECT_PLAN(&ci, INVALID, "convert: pack N = 32", "quantized.extent[1] = 32 (N)",
                "multiple of 64");

    /* Types. */
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.scales.dataType = f32;
    EXPECT_PLAN(&ci, UNSUPPORTED, "convert: f32 scales", "BkW4A16ConvertInfo.scales.dataType",
                "BK_DATA_TYPE_F32", "F16, BF16");
    ci = convert_info(BK_W4A16_PACK, f16), ci.scales.dataType = u8;
    EXPECT_PLAN(&ci, UNSUPPORTED, "convert: u8 scales", "BkW4A16ConvertInfo.scales.dataType");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight.dataType = BK_DATA_TYPE_F64;
    EXPECT_PLAN(&ci, UNSUPPORTED, "convert: f64 weight", "BkW4A16ConvertInfo.weight.dataType",
                "BK_DATA_TYPE_F64", "F32, F16, BF16");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight.dataType = i32;
    EXPECT_PLAN(&ci, UNSUPPORTED, "convert: i32 weight", "BkW4A16ConvertInfo.weight.dataType");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight.dataType = BK_DATA_TYPE_UNDEFINED;
    EXPECT_PLAN(&ci, INVALID, "convert: quantize needs a weight",
                "BkW4A16ConvertInfo.weight.dataType");
    ci = convert_info(BK_W4A16_PACK, f16), ci.quantized.dataType = BK_DATA_TYPE_I8;
    EXPECT_PLAN(&ci, INVALID, "convert: i8 quantized", "BkW4A16ConvertInfo.quantized.dataType",
                "BK_DATA_TYPE_U8");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.quantized.dataType = f16;
    EXPECT_PLAN(&ci, INVALID, "convert: f16 quantized", "BkW4A16ConvertInfo.quantized.dataType");
    ci = convert_info(BK_W4A16_PACK, f16), ci.packed.dataType = BK_DATA_TYPE_U32;
    EXPECT_PLAN(&ci, INVALID, "convert: u32 packed", "BkW4A16ConvertInfo.packed.dataType",
                "BK_DATA_TYPE_I32");
    ci = convert_info(BK_W4A16_UNPACK, f16), ci.packed.dataType = f32;
    EXPECT_PLAN(&ci, INVALID, "convert: f32 packed", "BkW4A16ConvertInfo.packed.dataType");
    ci = convert_info(BK_W4A16_PACK, f16), ci.packedScales.dataType = bf16;
    EXPECT_PLAN(&ci, INVALID, "convert: bf16 packedScales, f16 scales",
                "BkW4A16ConvertInfo.packedScales.dataType", "BK_DATA_TYPE_BF16",
                "BK_DATA_TYPE_F16");
    ci = convert_info(BK_W4A16_PACK, f16), ci.quantized.dataType = (BkDataType)77;
    EXPECT_PLAN(&ci, INVALID, "convert: quantized.dataType 77",
                "BkW4A16ConvertInfo.quantized.dataType");

    /* Ranks and extents. */
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.weight = w4a16_vec(f32, K);
    EXPECT_PLAN(&ci, INVALID, "convert: weight of rank 1", "BkW4A16ConvertInfo.weight.rank = 1");
    ci = convert_info(BK_W4A16_PACK, f16);
    ci.quantized = (BkTensorDesc){ .dataType = u8, .rank = 3, .extent = { 1, K, N } };
    EXPECT_PLAN(&ci, INVALID, "convert: quantized of rank 3",
                "BkW4A16ConvertInfo.quantized.rank = 3");
    ci = convert_info(BK_W4A16_PACK, f16), ci.packed = w4a16_vec(i32, K / 16 * 2 * N);
    EXPECT_PLAN(&ci, INVALID, "convert: packed of rank 1", "BkW4A16ConvertInfo.packed.rank = 1",
                "must be 2");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.quantized = w4a16_mat(u8, K, N + 1);
    EXPECT_PLAN(&ci, INVALID, "convert: quantized [128, 129] for N = 128",
                "BkW4A16ConvertInfo.quantized.extent[1] = 129", "N = 128");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.quantized = w4a16_mat(u8, K - 32, N);
    EXPECT_PLAN(&ci, INVALID, "convert: quantized [96, 128] for K = 128",
                "BkW4A16ConvertInfo.quantized.extent[0] = 96", "K = 128");
    ci = convert_info(BK_W4A16_UNPACK, bf16), ci.scales = w4a16_mat(bf16, G + 1, N);
    EXPECT_PLAN(&ci, INVALID, "convert: scales [5, 128] for G = 4",
                "BkW4A16ConvertInfo.scales.extent[0] = 5", "G = 4");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.scales = w4a16_mat(f16, G, N / 2);
    EXPECT_PLAN(&ci, INVALID, "convert: scales [4, 64] for N = 128",
                "BkW4A16ConvertInfo.scales.extent[1] = 64", "N = 128");
    ci = convert_info(BK_W4A16_PACK, f16), ci.packed = w4a16_mat(i32, K / 16 + 1, 2 * N);
    EXPECT_PLAN(&ci, INVALID, "convert: packed [9, 256] for K = 128",
                "BkW4A16ConvertInfo.packed.extent[0] = 9", "K/16 = 8");
    ci = convert_info(BK_W4A16_UNPACK, f16), ci.packed = w4a16_mat(i32, K / 16, N);
    EXPECT_PLAN(&ci, INVALID, "convert: packed [8, 128] for N = 128",
                "BkW4A16ConvertInfo.packed.extent[1] = 128", "2N = 256");
    ci = convert_info(BK_W4A16_PACK, f16), ci.packedScales = w4a16_mat(f16, G, 2 * N);
    EXPECT_PLAN(&ci, INVALID, "convert: packedScales [4, 256] for N = 128",
                "BkW4A16ConvertInfo.packedScales.extent[1] = 256", "N = 128");
    ci = convert_info(BK_W4A16_PACK, f16), ci.packedScales = w4a16_mat(f16, 1, N);
    EXPECT_PLAN(&ci, INVALID, "convert: packedScales [1, 128] for G = 4",
                "BkW4A16ConvertInfo.packedScales.extent[0] = 1", "G = 4");

    /* Packed tensors are contiguous row-major. */
    ci = convert_info(BK_W4A16_PACK, f16),
    ci.packed = w4a16_mat_strided(i32, K / 16, 2 * N, 2 * N + 4, 1);
    EXPECT_PLAN(&ci, INVALID, "convert: padded packed",
                "BkW4A16ConvertInfo.packed.stride[0] = 260", "must be 256", "contiguous");
    ci = convert_info(BK_W4A16_UNPACK, f16),
    ci.packed = w4a16_mat_strided(i32, K / 16, 2 * N, 1, K / 16);
    EXPECT_PLAN(&ci, INVALID, "convert: column-major packed",
                "BkW4A16ConvertInfo.packed.stride[1] = 8", "must be 1");
    ci = convert_info(BK_W4A16_PACK, f16), ci.packedScales = w4a16_mat_strided(f16, G, N, 1, G);
    EXPECT_PLAN(&ci, INVALID, "convert: column-major packedScales",
                "BkW4A16ConvertInfo.packedScales.stride[1] = 4", "contiguous");

    /* Unused tensors must be absent. */
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.packed = w4a16_mat(i32, K / 16, 2 * N);
    EXPECT_PLAN(&ci, INVALID, "convert: quantize with packed given",
                "BkW4A16ConvertInfo.packed.dataType", "must be left zeroed (dataType UNDEFINED)",
                "BK_W4A16_QUANTIZE");
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.packedScales = w4a16_mat(f16, G, N);
    EXPECT_PLAN(&ci, INVALID, "convert: quantize with packedScales given",
                "BkW4A16ConvertInfo.packedScales.dataType", "BK_W4A16_QUANTIZE");
    ci = convert_info(BK_W4A16_PACK, f16), ci.weight = w4a16_mat(f32, K, N);
    EXPECT_PLAN(&ci, INVALID, "convert: pack with a weight given",
                "BkW4A16ConvertInfo.weight.dataType", "BK_W4A16_PACK", "zeroed");
    ci = convert_info(BK_W4A16_UNPACK, f16), ci.weight.dataType = f16;
    EXPECT_PLAN(&ci, INVALID, "convert: unpack with a weight's dataType set",
                "BkW4A16ConvertInfo.weight.dataType", "BK_W4A16_UNPACK");
    ci = convert_info(BK_W4A16_PACK, f16), ci.weight = absent, ci.weight.rank = 9;
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: an absent tensor is not read, whatever its other "
                "fields", NULL);
    ci = convert_info(BK_W4A16_PACK, f16), ci.packed = absent;
    EXPECT_PLAN(&ci, INVALID, "convert: pack needs packed", "BkW4A16ConvertInfo.packed.dataType");

    /* Written plain tensors must not overlap themselves. */
    ci = convert_info(BK_W4A16_QUANTIZE, f16), ci.quantized = w4a16_mat_strided(u8, K, N, 1, 1);
    EXPECT_PLAN(&ci, INVALID, "convert: quantize into overlapping quantized",
                "BkW4A16ConvertInfo.quantized.stride", "overlap");
    ci = convert_info(BK_W4A16_UNPACK, f16), ci.scales = w4a16_mat_strided(f16, G, N, 1, 2);
    EXPECT_PLAN(&ci, INVALID, "convert: unpack into overlapping scales",
                "BkW4A16ConvertInfo.scales.stride[1] = 2");
    ci = convert_info(BK_W4A16_PACK, f16), ci.quantized = w4a16_mat_strided(u8, K, N, 1, 1);
    ci.scales = w4a16_mat_strided(f16, G, N, 1, 1);
    EXPECT_PLAN(&ci, BK_SUCCESS, "convert: pack from overlapping (read) quantized and scales",
                NULL);
}

/* ---- GPTQ repack ------------------------------------------------------------------ */

static void test_repack_rules(void)
{
    const char *in = "BkW4A16GptqRepackInfo";
    char what[128];
    BkW4A16GptqRepackInfo ri = repack_info();
    EXPECT_PLAN(&ri, BK_SUCCESS, "repack: the valid info (qzeros, gIdx, perm)", NULL);
    ri = repack_info(), ri.gIdx = absent, ri.perm = absent, ri.qzeros = absent;
    EXPECT_PLAN(&ri, BK_SUCCESS, "repack: no qzeros, gIdx or perm", NULL);
    ri = repack_info(), ri.gIdx = absent;
    EXPECT_PLAN(&ri, BK_SUCCESS, "repack: perm without gIdx", NULL);
    ri = repack_info(), ri.zeros = BK_W4A16_GPTQ_ZEROS_MINUS_ONE, ri.scales.dataType = bf16;
    ri.packedScales.dataType = bf16;
    EXPECT_PLAN(&ri, BK_SUCCESS, "repack: minus-one zeros, bf16 scales", NULL);
    ri = repack_info(), ri.groupSize = BK_W4A16_GROUP_PER_CHANNEL, ri.scales = w4a16_mat(f16, 1, N);
    ri.qzeros = w4a16_mat(i32, 1, N / 8), ri.packedScales = w4a16_mat(f16, 1, N);
    EXPECT_PLAN(&ri, BK_SUCCESS, "repack: per channel", NULL);
    ri = repack_info(), ri.qweight = w4a16_mat_strided(i32, K / 8, N, 1, K / 8 + 1);
    ri.scales = w4a16_mat_strided(f16, G, N, 1, G),
    ri.qzeros = w4a16_mat_strided(i32, G, N / 8, 40, 2);
    EXPECT_PLAN(&ri, BK_SUCCESS, "repack: column-major and strided GPTQ tensors", NULL);

    ri = repack_info(), ri.zeros = (BkW4A16GptqZeros)2;
    EXPECT_PLAN(&ri, INVALID, "repack: zeros 2", "BkW4A16GptqRepackInfo.zeros = 2",
                "BkW4A16GptqZeros");
    ri = repack_info(), ri.zeros = (BkW4A16GptqZeros)-1;
    EXPECT_PLAN(&ri, INVALID, "repack: zeros -1", "BkW4A16GptqRepackInfo.zeros = -1");
    for (size_t i = 0; i < BAD_GROUP_SIZES; i++) {
        ri = repack_info(), ri.groupSize = bad_group_sizes[i];
        snprintf(what, sizeof what, "repack: groupSize %d", (int)bad_group_sizes[i]);
        char needle[64];
        snprintf(needle, sizeof needle, "%s.groupSize = %d", in, (int)bad_group_sizes[i]);
        EXPECT_PLAN(&ri, INVALID, what, needle);
    }

    /* Shapes from qweight [K/8, N]. */
    ri = repack_info(), ri.groupSize = BK_W4A16_GROUP_PER_CHANNEL,
    ri.qweight = w4a16_mat(i32, 3, N);
    ri.scales = w4a16_mat(f16, 1, N), ri.qzeros = w4a16_mat(i32, 1, N / 8),
    ri.packedScales = w4a16_mat(f16, 1, N);
    EXPECT_PLAN(&ri, INVALID, "repack: per channel, K = 24",
                "BkW4A16GptqRepackInfo.qweight.extent[0] = 3 (K/8, so K = 24)", "multiple of 16",
                "Marlin layout");
    ri = repack_info(), ri.qweight = w4a16_mat(i32, 6, N);
    EXPECT_PLAN(&ri, INVALID, "repack: K = 48 in groups of 32",
                "BkW4A16GptqRepackInfo.qweight.extent[0] = 6 (K/8, so K = 48)", "groupSize = 32");
    ri = repack_info(), ri.qweight = w4a16_mat(i32, K / 8, 32);
    EXPECT_PLAN(&ri, INVALID, "repack: N = 32", "BkW4A16GptqRepackInfo.qweight.extent[1] = 32 (N)",
                "multiple of 64");
    ri = repack_info(), ri.qweight = w4a16_mat(i32, 0, N);
    EXPECT_PLAN(&ri, INVALID, "repack: K = 0", "BkW4A16GptqRepackInfo.qweight.extent[0] = 0",
                "positive");
    ri = repack_info(), ri.qweight = w4a16_mat(i32, INT64_C(1) << 61, N);
    EXPECT_PLAN(&ri, INVALID, "repack: K/8 = 2^61", "BkW4A16GptqRepackInfo.qweight");

    /* Types. */
    ri = repack_info(), ri.qweight.dataType = BK_DATA_TYPE_U32;
    EXPECT_PLAN(&ri, INVALID, "repack: u32 qweight", "BkW4A16GptqRepackInfo.qweight.dataType",
                "BK_DATA_TYPE_I32");
    ri = repack_info(), ri.scales.dataType = f32, ri.packedScales.dataType = f32;
    EXPECT_PLAN(&ri, UNSUPPORTED, "repack: f32 scales", "BkW4A16GptqRepackInfo.scales.dataType",
                "F16, BF16");
    ri = repack_info(), ri.qzeros.dataType = BK_DATA_TYPE_U32;
    EXPECT_PLAN(&ri, INVALID, "repack: u32 qzeros", "BkW4A16GptqRepackInfo.qzeros.dataType");
    ri = repack_info(), ri.gIdx.dataType = BK_DATA_TYPE_I8;
    EXPECT_PLAN(&ri, INVALID, "repack: i8 gIdx", "BkW4A16GptqRepackInfo.gIdx.dataType");
    ri = repack_info(), ri.perm.dataType = BK_DATA_TYPE_U32;
    EXPECT_PLAN(&ri, INVALID, "repack: u32 perm", "BkW4A16GptqRepackInfo.perm.dataType");
    ri = repack_info(), ri.packed.dataType = f32;
    EXPECT_PLAN(&ri, INVALID, "repack: f32 packed", "BkW4A16GptqRepackInfo.packed.dataType");
    ri = repack_info(), ri.packedScales.dataType = bf16;
    EXPECT_PLAN(&ri, INVALID, "repack: bf16 packedScales, f16 scales",
                "BkW4A16GptqRepackInfo.packedScales.dataType", "scales");

    /* Extents, ranks, layouts. */
    ri = repack_info(), ri.scales = w4a16_mat(f16, G, N + 64);
    EXPECT_PLAN(&ri, INVALID, "repack: scales [4, 192]",
                "BkW4A16GptqRepackInfo.scales.extent[1] = 192", "N = 128");
    ri = repack_info(), ri.qzeros = w4a16_mat(i32, G, N / 8 + 1);
    EXPECT_PLAN(&ri, INVALID, "repack: qzeros [4, 17]",
                "BkW4A16GptqRepackInfo.qzeros.extent[1] = 17", "N/8 = 16");
    ri = repack_info(), ri.qzeros = w4a16_mat(i32, G - 1, N / 8);
    EXPECT_PLAN(&ri, INVALID, "repack: qzeros [3, 16]",
                "BkW4A16GptqRepackInfo.qzeros.extent[0] = 3", "G = 4");
    ri = repack_info(), ri.gIdx = w4a16_vec(i32, K - 1);
    EXPECT_PLAN(&ri, INVALID, "repack: gIdx [127]", "BkW4A16GptqRepackInfo.gIdx.extent[0] = 127",
                "K = 128");
    ri = repack_info(), ri.perm = w4a16_vec(i32, K + 16);
    EXPECT_PLAN(&ri, INVALID, "repack: perm [144]", "BkW4A16GptqRepackInfo.perm.extent[0] = 144",
                "K = 128");
    ri = repack_info(), ri.gIdx = w4a16_mat(i32, 1, K);
    EXPECT_PLAN(&ri, INVALID, "repack: gIdx of rank 2", "BkW4A16GptqRepackInfo.gIdx.rank = 2",
                "must be 1");
    ri = repack_info(), ri.gIdx.stride[0] = 2;
    EXPECT_PLAN(&ri, INVALID, "repack: gIdx with stride 2",
                "BkW4A16GptqRepackInfo.gIdx.stride[0] = 2", "contiguous");
    ri = repack_info(), ri.perm.stride[0] = 1;
    EXPECT_PLAN(&ri, BK_SUCCESS, "repack: perm with an explicit stride 1", NULL);
    ri = repack_info(), ri.packed = w4a16_mat_strided(i32, K / 16, 2 * N, 1, K / 16);
    EXPECT_PLAN(&ri, INVALID, "repack: column-major packed",
                "BkW4A16GptqRepackInfo.packed.stride");
    ri = repack_info(), ri.packed = w4a16_mat(i32, K / 8, N);
    EXPECT_PLAN(&ri, INVALID, "repack: packed in the GPTQ shape",
                "BkW4A16GptqRepackInfo.packed.extent[0] = 16", "K/16 = 8");
    ri = repack_info(), ri.qweight = w4a16_vec(i32, K / 8 * N);
    EXPECT_PLAN(&ri, INVALID, "repack: qweight of rank 1", "BkW4A16GptqRepackInfo.qweight.rank");

    /* perm is required with gIdx: the GEMM needs it. */
    ri = repack_info(), ri.perm = absent;
    EXPECT_PLAN(&ri, INVALID, "repack: gIdx without perm", "BkW4A16GptqRepackInfo.perm",
                "gIdx", "act-order", "GEMM");
}

/* ---- GEMM ---------------------------------------------------------------------------- */

static void test_gemm_rules(void)
{
    const char *in = "BkW4A16GemmInfo";
    char what[128];
    BkW4A16GemmInfo g;
    for (int t = 0; t < 2; t++) {
        g = gemm_info(t ? bf16 : f16);
        snprintf(what, sizeof what, "gemm: %s with perm", t ? "bf16" : "f16");
        EXPECT_PLAN(&g, BK_SUCCESS, what, NULL);
        g.perm = absent;
        snprintf(what, sizeof what, "gemm: %s without perm", t ? "bf16" : "f16");
        EXPECT_PLAN(&g, BK_SUCCESS, what, NULL);
    }
    g = gemm_info(f16), g.a = w4a16_mat_strided(f16, M, K, 1, M),
    g.c = w4a16_mat_strided(f16, M, N, 1, M + 5);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: column-major a and c", NULL);
    g = gemm_info(f16), g.a = w4a16_mat_strided(f16, M, K, 3 * K, 3);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: a with any positive strides", NULL);
    g = gemm_info(f16), g.a = w4a16_mat(f16, 0, K), g.c = w4a16_mat(f16, 0, N);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: M = 0", NULL);
    g = gemm_info(bf16), g.groupSize = BK_W4A16_GROUP_PER_CHANNEL;
    g.packedScales = w4a16_mat(bf16, 1, N);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: per channel", NULL);
    g = gemm_info(f16), g.groupSize = BK_W4A16_GROUP_PER_CHANNEL, g.a = w4a16_mat(f16, M, 16);
    g.packed = w4a16_mat(i32, 1, 2 * N), g.packedScales = w4a16_mat(f16, 1, N),
    g.perm = w4a16_vec(i32, 16);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: per channel, K = 16", NULL);

    g = gemm_info(f16), g.flags = 1;
    EXPECT_PLAN(&g, INVALID, "gemm: flags 1", "BkW4A16GemmInfo.flags = 0x1", "must be 0");
    g = gemm_info(f16), g.flags = 0x80000000u;
    EXPECT_PLAN(&g, INVALID, "gemm: flags 0x80000000", "BkW4A16GemmInfo.flags");
    for (size_t i = 0; i < BAD_GROUP_SIZES; i++) {
        g = gemm_info(f16), g.groupSize = bad_group_sizes[i];
        snprintf(what, sizeof what, "gemm: groupSize %d", (int)bad_group_sizes[i]);
        char needle[64];
        snprintf(needle, sizeof needle, "%s.groupSize = %d", in, (int)bad_group_sizes[i]);
        EXPECT_PLAN(&g, INVALID, what, needle);
    }

    /* Types: A and C F16 or BF16, alike; packedScales A's type. */
    g = gemm_info(f32);
    EXPECT_PLAN(&g, UNSUPPORTED, "gemm: f32 a", "BkW4A16GemmInfo.a.dataType", "BK_DATA_TYPE_F32",
                "F16, BF16");
    g = gemm_info(f16), g.a.dataType = BK_DATA_TYPE_F64;
    EXPECT_PLAN(&g, UNSUPPORTED, "gemm: f64 a", "BkW4A16GemmInfo.a.dataType");
    g = gemm_info(f16), g.c.dataType = bf16;
    EXPECT_PLAN(&g, UNSUPPORTED, "gemm: bf16 c, f16 a", "BkW4A16GemmInfo.c.dataType",
                "BK_DATA_TYPE_BF16", "BK_DATA_TYPE_F16");
    g = gemm_info(f16), g.c.dataType = f32;
    EXPECT_PLAN(&g, UNSUPPORTED, "gemm: f32 c", "BkW4A16GemmInfo.c.dataType");
    g = gemm_info(f16), g.packedScales.dataType = bf16;
    EXPECT_PLAN(&g, INVALID, "gemm: bf16 packedScales, f16 a",
                "BkW4A16GemmInfo.packedScales.dataType", "BK_DATA_TYPE_BF16", "a's type");
    g = gemm_info(bf16), g.packedScales.dataType = f32;
    EXPECT_PLAN(&g, INVALID, "gemm: f32 packedScales", "BkW4A16GemmInfo.packedScales.dataType");
    g = gemm_info(f16), g.packed.dataType = BK_DATA_TYPE_U32;
    EXPECT_PLAN(&g, INVALID, "gemm: u32 packed", "BkW4A16GemmInfo.packed.dataType",
                "BK_DATA_TYPE_I32");
    g = gemm_info(f16), g.perm.dataType = BK_DATA_TYPE_U32;
    EXPECT_PLAN(&g, INVALID, "gemm: u32 perm", "BkW4A16GemmInfo.perm.dataType");
    g = gemm_info(f16), g.a.dataType = BK_DATA_TYPE_UNDEFINED;
    EXPECT_PLAN(&g, INVALID, "gemm: a is required", "BkW4A16GemmInfo.a.dataType");
    g = gemm_info(f16), g.c.dataType = BK_DATA_TYPE_UNDEFINED;
    EXPECT_PLAN(&g, INVALID, "gemm: c is required", "BkW4A16GemmInfo.c.dataType");
    g = gemm_info(f16), g.packed = absent;
    EXPECT_PLAN(&g, INVALID, "gemm: packed is required", "BkW4A16GemmInfo.packed.dataType");

    /* Shapes. */
    g = gemm_info(f16), g.a = w4a16_mat(f16, M, 0);
    EXPECT_PLAN(&g, INVALID, "gemm: K = 0", "BkW4A16GemmInfo.a.extent[1] = 0 (K)", "positive");
    g = gemm_info(f16), g.c = w4a16_mat(f16, M, 0);
    EXPECT_PLAN(&g, INVALID, "gemm: N = 0", "BkW4A16GemmInfo.c.extent[1] = 0 (N)", "positive");
    g = gemm_info(f16), g.groupSize = 64, g.a = w4a16_mat(f16, M, 96);
    EXPECT_PLAN(&g, INVALID, "gemm: K = 96 in groups of 64", "BkW4A16GemmInfo.a.extent[1] = 96 (K)",
                "groupSize = 64");
    g = gemm_info(f16), g.groupSize = BK_W4A16_GROUP_PER_CHANNEL, g.a = w4a16_mat(f16, M, 40);
    g.packedScales = w4a16_mat(f16, 1, N);
    EXPECT_PLAN(&g, INVALID, "gemm: per channel, K = 40", "BkW4A16GemmInfo.a.extent[1] = 40 (K)",
                "multiple of 16", "Marlin layout");
    g = gemm_info(f16), g.c = w4a16_mat(f16, M, 96);
    EXPECT_PLAN(&g, INVALID, "gemm: N = 96", "BkW4A16GemmInfo.c.extent[1] = 96 (N)",
                "multiple of 64", "tiles K by 16 and N by 64");
    g = gemm_info(f16), g.c = w4a16_mat(f16, M + 1, N);
    EXPECT_PLAN(&g, INVALID, "gemm: c [5, 128] for M = 4", "BkW4A16GemmInfo.c.extent[0] = 5",
                "M = 4");
    g = gemm_info(f16), g.packed = w4a16_mat(i32, K / 16, 2 * N + 128);
    EXPECT_PLAN(&g, INVALID, "gemm: packed for N = 192", "BkW4A16GemmInfo.packed.extent[1] = 384",
                "2N = 256");
    g = gemm_info(f16), g.packed = w4a16_mat(i32, K / 8, 2 * N);
    EXPECT_PLAN(&g, INVALID, "gemm: packed [16, 256] for K = 128",
                "BkW4A16GemmInfo.packed.extent[0] = 16", "K/16 = 8");
    g = gemm_info(f16), g.packedScales = w4a16_mat(f16, 1, N);
    EXPECT_PLAN(&g, INVALID, "gemm: one scale row in groups of 32",
                "BkW4A16GemmInfo.packedScales.extent[0] = 1", "G = 4");
    g = gemm_info(f16), g.perm = w4a16_vec(i32, K / 2);
    EXPECT_PLAN(&g, INVALID, "gemm: perm [64]", "BkW4A16GemmInfo.perm.extent[0] = 64", "K = 128");
    g = gemm_info(f16), g.a = w4a16_vec(f16, K);
    EXPECT_PLAN(&g, INVALID, "gemm: a of rank 1", "BkW4A16GemmInfo.a.rank = 1");
    g = gemm_info(f16);
    g.c = (BkTensorDesc){ .dataType = f16, .rank = 3, .extent = { 1, M, N } };
    EXPECT_PLAN(&g, INVALID, "gemm: c of rank 3", "BkW4A16GemmInfo.c.rank = 3");

    /* Layouts: packed tensors contiguous, c not overlapping itself. */
    g = gemm_info(f16), g.packed = w4a16_mat_strided(i32, K / 16, 2 * N, 2 * N, 2);
    EXPECT_PLAN(&g, INVALID, "gemm: packed with column stride 2",
                "BkW4A16GemmInfo.packed.stride[1] = 2", "contiguous");
    g = gemm_info(f16), g.packedScales = w4a16_mat_strided(f16, G, N, N + 8, 1);
    EXPECT_PLAN(&g, INVALID, "gemm: padded packedScales",
                "BkW4A16GemmInfo.packedScales.stride[0] = 136", "must be 128");
    g = gemm_info(f16), g.perm.stride[0] = 3;
    EXPECT_PLAN(&g, INVALID, "gemm: perm with stride 3", "BkW4A16GemmInfo.perm.stride[0] = 3");
    g = gemm_info(f16), g.c = w4a16_mat_strided(f16, M, N, 1, 1);
    EXPECT_PLAN(&g, INVALID, "gemm: c overlapping itself", "BkW4A16GemmInfo.c.stride",
                "overlap");
    g = gemm_info(f16), g.a = w4a16_mat_strided(f16, M, K, 1, 1);
    EXPECT_PLAN(&g, BK_SUCCESS, "gemm: a read operand may overlap itself", NULL);
}

/* ---- Slots, precision, run-time checks ---------------------------------------------- */

/* The plan's slots must be these; each used slot's size and alignment are
 * what bkCmdRun checks (size - 1 is BUFFER_TOO_SMALL, alignment / 2 off
 * is MISALIGNED_OPERAND). */
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
    /* The workspace the plan asks for (a GEMM on a BLAS), aligned. */
    const uint64_t ws = props.workspaceSize;
    const uint64_t wa = props.workspaceAlignment ? props.workspaceAlignment : 1;
    struct bkt_buffer wbuf = bkt_alloc(ctx, ws ? ws + wa : 1);
    const BkDeviceAddress workspace = ws ? (wbuf.address + wa - 1) / wa * wa : 0;
    long wrong = 0;
    for (uint32_t i = 0; ok && at <= big->size && i < count; i++) {
        if (want[i].size == 0)
            continue;
        BkRunInfo run = { .sType = BK_STRUCTURE_TYPE_RUN_INFO, .bindingCount = count,
                          .pBindings = addr, .pBindingSizes = sizes,
                          .workspace = workspace, .workspaceSize = ws };
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
    bkt_free(ctx, &wbuf);
    bkDestroyPlan(plan);
}

static void test_slots(const struct bkt_buffer *big)
{
    const uint64_t packed = K / 16 * 2 * N * 4, ps = G * N * 2;
    BkW4A16ConvertInfo ci = convert_info(BK_W4A16_QUANTIZE, bf16);
    ci.weight.dataType = f16;
    const struct bkt_slot_want quantize[] = {
        { "weight", K * N * 2, 2, false }, { "quantized", K * N, 1, true },
        { "scales", G * N * 2, 2, true },  { "packed", 0, 1, false },
        { "packedScales", 0, 1, false },
    };
    check_slots(&ci, "quantize", quantize, 5, big);
    ci = convert_info(BK_W4A16_PACK, f16);
    const struct bkt_slot_want pack[] = {
        { "weight", 0, 1, false },        { "quantized", K * N, 1, false },
        { "scales", G * N * 2, 2, false }, { "packed", packed, 16, true },
        { "packedScales", ps, 16, true },
    };
    check_slots(&ci, "pack", pack, 5, big);
    ci = convert_info(BK_W4A16_UNPACK, f16), ci.quantized = w4a16_mat_strided(u8, K, N, 1, K + 1);
    const struct bkt_slot_want unpack[] = {
        { "weight", 0, 1, false },
        { "quantized", (uint64_t)(K - 1) + (uint64_t)(N - 1) * (K + 1) + 1, 1, true },
        { "scales", G * N * 2, 2, true },  { "packed", packed, 16, false },
        { "packedScales", ps, 16, false },
    };
    check_slots(&ci, "unpack (column-major quantized)", unpack, 5, big);

    BkW4A16GptqRepackInfo ri = repack_info();
    const struct bkt_slot_want repack[] = {
        { "qweight", K / 8 * N * 4, 4, false }, { "scales", G * N * 2, 2, false },
        { "qzeros", G * N / 8 * 4, 4, false },  { "gIdx", K * 4, 4, false },
        { "packed", packed, 16, true },          { "packedScales", ps, 16, true },
        { "perm", K * 4, 4, true },              { "report", 32, 8, true },
    };
    check_slots(&ri, "repack", repack, 8, big);
    ri = repack_info(), ri.qzeros = absent, ri.gIdx = absent, ri.perm = absent;
    const struct bkt_slot_want repack_min[] = {
        { "qweight", K / 8 * N * 4, 4, false }, { "scales", G * N * 2, 2, false },
        { "qzeros", 0, 1, false },               { "gIdx", 0, 1, false },
        { "packed", packed, 16, true },          { "packedScales", ps, 16, true },
        { "perm", 0, 1, false },                 { "report", 32, 8, true },
    };
    check_slots(&ri, "repack without qzeros, gIdx and perm", repack_min, 8, big);

    BkW4A16GemmInfo g = gemm_info(bf16);
    const struct bkt_slot_want gemm[] = {
        { "a", M * K * 2, 2, false },       { "packed", packed, 16, false },
        { "packedScales", ps, 16, false }, { "perm", K * 4, 4, false },
        { "c", M * N * 2, 2, true },
    };
    check_slots(&g, "gemm", gemm, 5, big);
    g = gemm_info(f16), g.a = w4a16_mat(f16, 0, K), g.c = w4a16_mat(f16, 0, N), g.perm = absent;
    const struct bkt_slot_want gemm_empty[] = {
        { "a", 0, 2, false },            { "packed", 0, 16, false },
        { "packedScales", 0, 16, false }, { "perm", 0, 1, false },
        { "c", 0, 2, true },
    };
    check_slots(&g, "gemm with M = 0: nothing is bound", gemm_empty, 5, big);
}

static void test_precision(void)
{
    const struct {
        const void *info;
        const char *what, *kernel;
        BkDataType compute, accumulate;
    } cases[] = {
        { NULL, "quantize", "host_w4a16_quantize_f32_f16", f32, f32 },
        { NULL, "pack", "host_w4a16_pack_bf16", bf16, bf16 },
        { NULL, "repack", "host_w4a16_gptq_repack_f16", f16, f16 },
        { NULL, "gemm", "host_w4a16_gemm_bf16", bf16, f32 },
    };
    const BkW4A16ConvertInfo q = convert_info(BK_W4A16_QUANTIZE, f16);
    const BkW4A16ConvertInfo p = convert_info(BK_W4A16_PACK, bf16);
    const BkW4A16GptqRepackInfo r = repack_info();
    const BkW4A16GemmInfo g = gemm_info(bf16);
    const void *infos[] = { &q, &p, &r, &g };
    for (int i = 0; i < 4; i++) {
        BkPlan plan = BK_NULL_HANDLE;
        BkPlanProperties props = { .sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES };
        bool ok = bkt_create_plan(ctx, infos[i], &plan) == BK_SUCCESS &&
                  bkGetPlanProperties(plan, &props) == BK_SUCCESS;
        const BkPrecisionGuarantee *pg = &props.precision;
        /* Only the GEMM may need a workspace (on a BLAS). */
        const bool gemm = i == 3;
        ok = ok && pg->computeType == cases[i].compute &&
             pg->accumulatorType == cases[i].accumulate && pg->deterministic == BK_TRUE &&
             pg->bitStable == BK_TRUE && (gemm || props.workspaceSize == 0) &&
             strcmp(props.kernelName, cases[i].kernel) == 0;
        if (!tap_ok(ok, "%s: precision %s / %s, deterministic, bit-stable, %s, kernel %s",
                    cases[i].what, bkt_type_name(cases[i].compute),
                    bkt_type_name(cases[i].accumulate),
                    gemm ? "the workspace it reports" : "no workspace", cases[i].kernel))
            tap_diag("compute %d, accumulate %d, workspace %llu, kernel \"%s\"",
                     (int)pg->computeType, (int)pg->accumulatorType,
                     (unsigned long long)props.workspaceSize, props.kernelName);
        bkDestroyPlan(plan);
    }
}

/* ---- Reports ---------------------------------------------------------------------------- */

static void test_report(void)
{
    BkW4A16RepackReport r = { .status = BK_W4A16_REPACK_STATUS_OK, .badCount = 5 };
    BKT_EXPECT(bkCheckW4A16RepackReport(&r), BK_SUCCESS, NULL, "report: OK whatever the counts");
    BKT_EXPECT(bkCheckW4A16RepackReport(NULL), INVALID, "bkCheckW4A16RepackReport: pReport",
               "report: NULL");
    const struct {
        BkW4A16RepackStatus status;
        uint64_t count, row, column;
        BkResult code;
        const char *const needles[6];
        const char *what;
    } bad[] = {
        { BK_W4A16_REPACK_STATUS_ASYMMETRIC, 3, 7, 300, UNSUPPORTED,
          { "asymmetric zero points are not supported", "group 7, column 300", "3 such entries",
            "not the value found", "BK_W4A16_GPTQ_ZEROS_MINUS_ONE" },
          "asymmetric, 3 entries" },
        { BK_W4A16_REPACK_STATUS_ASYMMETRIC, 1, 0, 0, UNSUPPORTED,
          { "group 0, column 0", "1 such entry;", NULL }, "asymmetric, 1 entry" },
        { BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX, 2, 17, 9, INVALID,
          { "gIdx[17] = 9", "0..G-1", "2 such rows", NULL }, "bad group index 9 at row 17" },
        { BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX, 1, 4000000000ull, (uint64_t)-5, INVALID,
          { "gIdx[4000000000] = -5", "1 such row)", NULL }, "bad group index -5, large row" },
        { BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS, 2, 3, 127, INVALID,
          { "group 3", "127 rows", "groupSize", "2 such groups", NULL }, "uneven groups" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = (BkW4A16RepackReport){ .status = bad[i].status, .badCount = bad[i].count,
                                   .firstBadRow = bad[i].row, .firstBadColumn = bad[i].column };
        bkt_expect_begin();
        BkResult res = bkCheckW4A16RepackReport(&r);
        bkt_expect_end(res, bad[i].code, bkt_pick_needle(res, bad[i].needles), "report: %s",
                       bad[i].what);
    }
    r = (BkW4A16RepackReport){ .status = 4 };
    BKT_EXPECT(bkCheckW4A16RepackReport(&r), INVALID, "BkW4A16RepackReport.status = 4",
               "report: status 4");
    r = (BkW4A16RepackReport){ .status = 0xFFFFFFFFu };
    BKT_EXPECT(bkCheckW4A16RepackReport(&r), INVALID, "BkW4A16RepackReport.status",
               "report: status 0xFFFFFFFF");
}

/* Each allocation failure in bkCreatePlan gives OUT_OF_HOST_MEMORY and
 * leaks nothing. */
static void test_plan_allocation_failures(void)
{
    const BkW4A16ConvertInfo ci = convert_info(BK_W4A16_PACK, f16);
    const BkW4A16GptqRepackInfo ri = repack_info();
    const BkW4A16GemmInfo g = gemm_info(f16);
    const void *infos[] = { &ci, &ri, &g };
    const char *names[] = { "convert", "repack", "gemm" };
    for (int i = 0; i < 3; i++) {
        bool made;
        long needed;
        const bool ok = bkt_plan_allocation_failures_clean(ctx, infos[i], &made, &needed);
        if (!made) {
            tap_ok(false, "%s: no plan (%s)", names[i], bkGetLastErrorMessage());
            continue;
        }
        tap_ok(ok, "%s: each of %ld allocation failures in bkCreatePlan gives OUT_OF_HOST_MEMORY "
               "and leaks nothing", names[i], needed);
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
    struct bkt_buffer big = bkt_alloc(ctx, 1 << 18);

    test_convert_rules();
    test_repack_rules();
    test_gemm_rules();
    test_slots(&big);
    test_precision();
    test_report();
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
