/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers shared by bkinfo and bkbench: names for enums, error exits,
 * JSON string output and small statistics. Public API only. */
#ifndef BK_TOOL_COMMON_H
#define BK_TOOL_COMMON_H

#include <stdint.h>
#include <stdio.h>

#include <bk/bk.h>

/* Exit statuses shared by the tools. */
enum { TOOL_EXIT_OK = 0, TOOL_EXIT_ERROR = 1, TOOL_EXIT_USAGE = 2 };

/* The program name used in messages ("bkbench"). */
extern const char *tool_name;

/* Short lower-case names ("bf16", "swiglu", "cuda"); "?" when unknown. */
const char *tool_dtype_name(BkDataType type);
const char *tool_kind_name(BkGatedActivationKind kind);
const char *tool_device_type_name(BkDeviceType type);
/* Element size in bytes, 0 when unknown. */
size_t tool_dtype_size(BkDataType type);

/* Parses a dtype or kind name; returns 0 on success, -1 when unknown. */
int tool_parse_dtype(const char *s, BkDataType *out);
int tool_parse_kind(const char *s, BkGatedActivationKind *out);

/* If result is an error, prints "tool: what: RESULT: message" and exits 1. */
void tool_check(BkResult result, const char *what);
/* Prints "tool: message" on stderr and exits 1. */
void tool_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* CUDA-style version 12040 -> "12.4"; 0 -> "-". buf holds >= 16 bytes. */
const char *tool_cuda_version(uint32_t version, char *buf, size_t size);

/* Writes s as a JSON string literal, quotes included. */
void tool_json_string(FILE *f, const char *s);

/* Monotonic clock in microseconds. */
double tool_now_us(void);
/* Median of n values (n >= 1); reorders v. */
double tool_median(double *v, uint32_t n);

#endif /* BK_TOOL_COMMON_H */
