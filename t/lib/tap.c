/* SPDX-License-Identifier: Apache-2.0 */
/* The TAP producer: see tap.h. */
#include "config.h"

#include "tap.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned planned;      /* 0: no plan printed yet */
static unsigned run;
static unsigned failed;

/* Line buffering keeps our lines in order with anything the library or a
 * crash writes to stderr. */
static void tap_init(void)
{
    static bool done;
    if (!done) {
        setvbuf(stdout, NULL, _IOLBF, 0);
        done = true;
    }
}

void tap_plan(unsigned count)
{
    tap_init();
    planned = count;
    printf("1..%u\n", count);
}

void tap_skip_all(const char *fmt, ...)
{
    va_list ap;
    tap_init();
    printf("1..0 # SKIP ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(0);
}

void tap_bail(const char *fmt, ...)
{
    va_list ap;
    tap_init();
    printf("Bail out! ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    exit(1);
}

/* Descriptions must stay on one line and must not start a directive. */
static void print_description(const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    for (char *p = buf; *p; p++)
        if (*p == '\n' || *p == '#')
            *p = ' ';
    printf("%s", buf);
}

static bool vok(bool cond, const char *fmt, va_list ap)
{
    tap_init();
    run++;
    if (!cond)
        failed++;
    printf("%sok %u - ", cond ? "" : "not ", run);
    print_description(fmt, ap);
    printf("\n");
    return cond;
}

bool tap_ok(bool cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vok(cond, fmt, ap);
    va_end(ap);
    return cond;
}

void tap_diag(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    tap_init();
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    /* Every line of a multi-line diagnostic gets its own '#'. */
    for (char *line = buf, *end; line; line = end) {
        end = strchr(line, '\n');
        if (end)
            *end++ = '\0';
        printf("# %s\n", line);
    }
}

void tap_skip(unsigned count, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    tap_init();
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (unsigned i = 0; i < count; i++)
        printf("ok %u # SKIP %s\n", ++run, buf);
}

bool tap_is_int(long long got, long long want, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    bool cond = vok(got == want, fmt, ap);
    va_end(ap);
    if (!cond)
        tap_diag("expected %lld, got %lld", want, got);
    return cond;
}

bool tap_is_str(const char *got, const char *want, const char *fmt, ...)
{
    va_list ap;
    bool cond = got && want && strcmp(got, want) == 0;
    va_start(ap, fmt);
    vok(cond, fmt, ap);
    va_end(ap);
    if (!cond)
        tap_diag("expected \"%s\", got \"%s\"", want ? want : "(null)", got ? got : "(null)");
    return cond;
}

unsigned tap_count(void)
{
    return run;
}

unsigned tap_failures(void)
{
    return failed;
}

int tap_done(void)
{
    tap_init();
    if (planned == 0) {
        printf("1..%u\n", run);
    } else if (planned != run) {
        tap_diag("planned %u checks but ran %u", planned, run);
        return 1;
    }
    fflush(stdout);
    return failed ? 1 : 0;
}
