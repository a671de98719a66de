#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Prints "N passed, N failed, N skipped": the TAP results automake's test
# harness left in the .trs files below DIR (default .), those of a
# distcheck's DIR/libbk-VERSION tree left out. Used by .ci/run and
# .ci/cross.sh.
dir=${1:-.}
find "$dir" -name '*.trs' -not -path "$dir/libbk-*" -exec cat {} + | awk '
    /^:test-result: (PASS|XFAIL)/ { p++ }
    /^:test-result: (FAIL|XPASS|ERROR)/ { f++ }
    /^:test-result: SKIP/ { s++ }
    END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'
