/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's progress line: "bkbench: 12/96 cases, attention-fwd f16 ...",
 * on standard error only, redrawn with \r in place, and only when
 * standard error is a terminal and the run has taken more than a few
 * seconds, so logs and pipes never see it. */
#ifndef BK_TOOL_BENCH_PROGRESS_H
#define BK_TOOL_BENCH_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Starts the clock; enabled: false for --quiet. */
void bench_progress_start(size_t total, bool enabled);
/* A case of 'steps' results starts (after the ones done so far). */
void bench_progress_case(size_t steps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* It is done: the line is cleared if standard output shares the
 * terminal, so a row printed next starts on a clean line. */
void bench_progress_done(void);
/* The run is done: clears the line for good. */
void bench_progress_finish(void);

#endif /* BK_TOOL_BENCH_PROGRESS_H */
