#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The gated activation tests again with the host's vectorised path turned
# off (BK_HOST_SIMD=0), so that both the SIMD and the baseline path are
# checked: one TAP line per test program, its own output as diagnostics.
# Environment (from make check): top_builddir, BK_TEST_RUNNER (see
# Makefile.am).

: "${top_builddir:=.}"
progs="gated_forward gated_backward gated_exhaustive"
echo "1..3"
n=0
for p in $progs; do
    n=$((n + 1))
    out=$(BK_HOST_SIMD=0 $BK_TEST_RUNNER "$top_builddir/t/gated/$p" 2>&1)
    rc=$?
    printf '%s\n' "$out" | sed 's/^/# /'
    if test $rc -ne 0 || printf '%s\n' "$out" | grep -q '^not ok'; then
        echo "not ok $n - $p with BK_HOST_SIMD=0"
    elif printf '%s\n' "$out" | grep -q '^1\.\.0'; then
        echo "ok $n - $p with BK_HOST_SIMD=0 # SKIP $p skipped"
    else
        echo "ok $n - $p with BK_HOST_SIMD=0"
    fi
done
