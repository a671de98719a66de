#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP: the Fortran module's handles, structs and constants match C's.
# t/fortran/fortran_layout_c and t/fortran/fortran_layout_f, generated from the headers by
# bindings/fortran/gen/gen.sh --layout, print the same table (sizes, field
# offsets and sizes, constant values, the version macros on sample
# arguments) through each language; this compares them, which checks the
# generator's type mapping and the hand-written version functions against
# the C compiler.
LC_ALL=C; export LC_ALL
top_builddir=${top_builddir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-fortran-layout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

$BK_TEST_RUNNER "$top_builddir/t/fortran/fortran_layout_c" > "$tmp/c" || { echo "Bail out! t/fortran/fortran_layout_c failed"; exit 1; }
$BK_TEST_RUNNER "$top_builddir/t/fortran/fortran_layout_f" > "$tmp/f" || { echo "Bail out! t/fortran/fortran_layout_f failed"; exit 1; }

structs=$(sed -n 's/^field \([A-Za-z0-9_]*\)\..*/\1/p' "$tmp/c" | sort -u)
handles=$(sed -n 's/^size \([A-Za-z0-9_]*\) .*/\1/p' "$tmp/c" | grep -v -x -F "$structs")
n=0
for s in $structs; do n=$((n + 1)); done
echo "1..$((n + 3))"

i=0
for s in $structs; do
    i=$((i + 1))
    grep -e "^size $s " -e "^field $s\\." "$tmp/c" > "$tmp/c.$s"
    grep -e "^size $s " -e "^field $s\\." "$tmp/f" > "$tmp/f.$s"
    nf=$(grep -c '^field' "$tmp/c.$s")
    if cmp -s "$tmp/c.$s" "$tmp/f.$s"; then
        echo "ok $i - $s: size and the offsets and sizes of its $nf fields agree"
    else
        echo "not ok $i - $s: C and Fortran layouts differ"
        diff "$tmp/c.$s" "$tmp/f.$s" | sed 's/^/# /'
    fi
done

i=$((i + 1))
for h in $handles; do grep "^size $h " "$tmp/c"; done > "$tmp/c.h"
for h in $handles; do grep "^size $h " "$tmp/f"; done > "$tmp/f.h"
if [ -s "$tmp/c.h" ] && cmp -s "$tmp/c.h" "$tmp/f.h"; then
    echo "ok $i - the $(wc -l < "$tmp/c.h") handle types have C's size"
else
    echo "not ok $i - handle sizes differ"
    diff "$tmp/c.h" "$tmp/f.h" | sed 's/^/# /'
fi

i=$((i + 1))
grep -e '^const ' -e '^macro ' "$tmp/c" > "$tmp/c.k"
grep -e '^const ' -e '^macro ' "$tmp/f" > "$tmp/f.k"
if [ "$(grep -c '^macro ' "$tmp/c.k")" -ge 1 ] && cmp -s "$tmp/c.k" "$tmp/f.k"; then
    echo "ok $i - $(grep -c '^const' "$tmp/c.k") constants and the version macros have C's values"
else
    echo "not ok $i - constant values differ"
    diff "$tmp/c.k" "$tmp/f.k" | sed 's/^/# /'
fi

i=$((i + 1))
if cmp -s "$tmp/c" "$tmp/f"; then
    echo "ok $i - the C and Fortran tables are identical ($(wc -l < "$tmp/c") lines)"
else
    echo "not ok $i - the C and Fortran tables differ"
    diff "$tmp/c" "$tmp/f" | sed 's/^/# /'
fi
