/* SPDX-License-Identifier: Apache-2.0 */
/* A small TAP (Test Anything Protocol) producer shared by the C tests.
 *
 * A test prints `ok N - description` or `not ok N - description` for each
 * check, `# ...` diagnostics, and the plan `1..N`: either first
 * (tap_plan) or last (tap_done). automake's tap-driver.sh reads it. */
#ifndef BK_TEST_TAP_H
#define BK_TEST_TAP_H

#include <stdbool.h>

#define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* Announce the number of checks up front. */
void tap_plan(unsigned count);
/* Print `1..0 # SKIP reason` and exit(0): the test cannot run here. */
_Noreturn void tap_skip_all(const char *fmt, ...) TAP_PRINTF(1, 2);
/* Print `Bail out! reason` and exit(1): the test cannot go on. */
_Noreturn void tap_bail(const char *fmt, ...) TAP_PRINTF(1, 2);

/* One check; returns cond so callers can add diagnostics on failure. */
bool tap_ok(bool cond, const char *fmt, ...) TAP_PRINTF(2, 3);
/* A `# ...` diagnostic line (on stdout, so it stays in order). */
void tap_diag(const char *fmt, ...) TAP_PRINTF(1, 2);
/* count checks that are skipped, each `ok N # SKIP reason`. */
void tap_skip(unsigned count, const char *fmt, ...) TAP_PRINTF(2, 3);

/* Integer and string comparisons with an expected-vs-got diagnostic. */
bool tap_is_int(long long got, long long want, const char *fmt, ...) TAP_PRINTF(3, 4);
bool tap_is_str(const char *got, const char *want, const char *fmt, ...) TAP_PRINTF(3, 4);

/* Number of checks run so far, and how many failed. */
unsigned tap_count(void);
unsigned tap_failures(void);

/* Prints the plan if tap_plan was not called, checks the count against it
 * otherwise; returns the exit status for main (0 when all passed). */
int tap_done(void);

#endif /* BK_TEST_TAP_H */
