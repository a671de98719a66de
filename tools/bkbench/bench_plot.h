/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench --plot FILE.svg: the run as a bar chart, written by bkbench
 * itself (plain SVG, no dependency). One bar per result row that has a
 * ratio: the fraction of the roof (gated ops, attention decode), of the
 * floor (W4A16, decode steps), of the peer (dense GEMM: cuBLASLt, else
 * the device's peak; 2:4 GEMM: cuSPARSELt, else libbk's dense GEMM). A
 * line marks 1 (100%), each bar is labelled with its row and its value. */
#ifndef BK_TOOL_BENCH_PLOT_H
#define BK_TOOL_BENCH_PLOT_H

#include "bench_record.h"

/* Writes the chart of the records that records() lists to path, with a
 * title line. Returns the number of bars, or -1 when the file could not
 * be written. */
int bench_plot_write(const char *path, const char *title, rec_source_fn records,
                     const void *user);

#endif /* BK_TOOL_BENCH_PLOT_H */
