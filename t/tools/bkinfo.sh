#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bkinfo(1) as a user reads it: it exits 0 on this machine; its backends
# section says the host is usable and, for CUDA, either usable or why not,
# naming the driver library it looked for when that cannot be loaded; its
# support matrix marks the types an op does not take "n/a", apart from
# "unsupported", and shows the W4A16 quantize of an f32 weight as ok on
# the host; --json carries the same backends.
# Environment (from make check): top_builddir, BK_TEST_RUNNER.

: "${top_builddir:=.}"
bkinfo="$top_builddir/tools/bkinfo"
missing=libbk-test-missing-driver.so.1
echo "1..7"
n=0
check() { # check DESCRIPTION COMMAND...: one TAP line
    n=$((n + 1))
    what=$1
    shift
    if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; fi
}
diag() { printf '%s\n' "$1" | sed 's/^/# /'; }

out=$($BK_TEST_RUNNER "$bkinfo" 2>&1)
rc=$?
check "bkinfo exits 0" test "$rc" -eq 0 || diag "$out"

# The line of backend $1 in the backends section of $2, with the lines
# its reason is wrapped onto (indented 8 columns) joined to it.
backend_line() {
    printf '%s\n' "$2" | awk -v b="$1" '/^backends:/ { on = 1; next }
        !on { next } /^$/ { exit }
        got && /^        [^ ]/ { sub(/^ +/, ""); line = line " " $0; next }
        got { exit }
        $1 == b { line = $0; got = 1 }
        END { if (got) print line }'
}
host=$(backend_line host "$out")
check "the host backend is usable" \
    sh -c 'printf "%s\n" "$1" | grep -Eq "^  host +usable: [1-9][0-9]* devices?$"' - "$host" ||
    diag "host line: '$host'"
cuda=$(backend_line cuda "$out")
check "the cuda backend is usable or says why not" \
    sh -c 'printf "%s\n" "$1" | grep -Eq "^  cuda +(usable: [1-9]|not usable: BK_ERROR_[A-Z_]+: .+)"' - "$cuda" ||
    diag "cuda line: '$cuda'"

# A driver that cannot be loaded: the reason names the library looked for
# (or says the CUDA backend is not compiled in).
cuda=$(backend_line cuda "$(BK_CUDA_DRIVER=$missing $BK_TEST_RUNNER "$bkinfo" 2>&1)")
check "a missing CUDA driver is named in the reason" \
    sh -c 'printf "%s\n" "$1" | grep -Eq "not usable: (BK_ERROR_DRIVER_NOT_FOUND: .*$2|BK_ERROR_UNSUPPORTED: .*built without the CUDA backend)"' \
    - "$cuda" "$missing" || diag "cuda line with BK_CUDA_DRIVER=$missing: '$cuda'"

# The host matrix: columns f32 f16 bf16 f64; no cell left blank or "-".
matrix=$(printf '%s\n' "$out" | awk '/^support \(bkCreatePlan\) on host 0:/ { on = 1; next }
    on && /^$/ { exit } on')
# Every row has 4 cells after op and kind, none of them "-".
cells_filled() {
    printf '%s\n' "$1" | awk 'NR > 1 { if (NF != 6) bad = 1; for (i = 3; i <= 6; i++) if ($i == "-") bad = 1 }
        END { exit bad || NR < 2 }'
}
check "the host matrix has n/a, not '-', for types an op does not take" \
    cells_filled "$matrix" || diag "$matrix"
check "w4a16-convert quantize of an f32 weight is ok on the host" \
    sh -c 'printf "%s\n" "$1" | grep -Eq "^  w4a16-convert +quantize +ok "' - "$matrix" ||
    diag "$(printf '%s\n' "$matrix" | grep quantize)"

json=$($BK_TEST_RUNNER "$bkinfo" --json 2>&1)
check "--json lists the backends" \
    sh -c 'printf "%s\n" "$1" | grep -q "^    {\"type\": \"host\", \"usable\": true, \"devices\": [1-9]"' \
    - "$json" || diag "$json"
