/* SPDX-License-Identifier: Apache-2.0 */
/* bkbench's progress line on a terminal. */
#define _POSIX_C_SOURCE 200809L

#include "bench_progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "tool_common.h"

#define DELAY_US 3e6                      /* short runs print nothing */
#define WIDTH 79                          /* no wrap on an 80-column terminal */

static struct {
    bool enabled, stdout_tty;
    size_t total, done, steps;
    double start_us;
    int shown;                            /* columns on screen now */
} p;

void bench_progress_start(size_t total, bool enabled)
{
    p.enabled = enabled && isatty(STDERR_FILENO);
    p.stdout_tty = isatty(STDOUT_FILENO);
    p.total = total;
    p.done = 0;
    p.steps = 0;
    p.shown = 0;
    p.start_us = tool_now_us();
}

static void clear(void)
{
    if (p.shown > 0)
        fprintf(stderr, "\r%*s\r", p.shown, "");
    p.shown = 0;
}

void bench_progress_case(size_t steps, const char *fmt, ...)
{
    p.steps = steps;
    if (!p.enabled || tool_now_us() - p.start_us < DELAY_US)
        return;
    char what[WIDTH + 1], line[2 * WIDTH];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    int n = snprintf(line, sizeof line, "bkbench: %zu/%zu cases, %s ...", p.done + 1, p.total,
                     what);
    if (n > WIDTH)
        n = WIDTH;
    /* Pad over the longer line before it, then stay at its end. */
    fprintf(stderr, "\r%s%*s", line, p.shown > n ? p.shown - n : 0, "");
    if (p.shown > n)
        fprintf(stderr, "\r%s", line);
    p.shown = n;
}

void bench_progress_done(void)
{
    p.done += p.steps;
    p.steps = 0;
    if (p.stdout_tty)
        clear();
}

void bench_progress_finish(void)
{
    clear();
    p.enabled = false;
}
