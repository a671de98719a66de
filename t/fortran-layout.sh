#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP: the Fortran module's structs, handles and constants match C's.
# t/fortran_layout_c and t/fortran_layout_f print the same table (sizes,
# field offsets and sizes, constant values) from each language; this
# compares them, and checks against the public headers that the table
# lists every struct field, every constant and every function-like macro,
# so a field added to a header without a Fortran twin fails here.
# Not listed, on purpose: BK_API (export macro), header guards (*_H) and
# BK_NULL_HANDLE (a new Fortran handle is null; see bk_is_null).
LC_ALL=C; export LC_ALL
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-fortran-layout.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

"$top_builddir/t/fortran_layout_c" > "$tmp/c" || { echo "Bail out! t/fortran_layout_c failed"; exit 1; }
"$top_builddir/t/fortran_layout_f" > "$tmp/f" || { echo "Bail out! t/fortran_layout_f failed"; exit 1; }

# What the headers declare: "field Struct.member", "const NAME", "macro NAME".
awk '
/^typedef struct [A-Za-z0-9_]+ \{/ { s = $3; next }
s != "" && /^\}/ { s = ""; next }
s != "" {
    line = $0
    sub(/\/\*.*/, "", line)
    if (line !~ /;/) next
    sub(/;.*/, "", line); sub(/\[.*/, "", line); sub(/[ \t]+$/, "", line)
    n = split(line, w, /[ \t*]+/)
    print "field " s "." w[n]
    next
}
/^#define BK_[A-Z0-9_]+\(/ { name = $2; sub(/\(.*/, "", name); print "macro " name; next }
/^#define BK_[A-Z0-9_]+/ { print "const " $2; next }
/^[ \t]+BK_[A-Z0-9_]+[ \t]*=/ { name = $1; sub(/=.*/, "", name); print "const " name }
' "$top_srcdir"/include/bk/*.h |
    grep -v -e '^const BK_API$' -e '^const BK_NULL_HANDLE$' -e '^const BK_[A-Z0-9_]*_H$' -e '^const BK_H$' |
    sort -u > "$tmp/header"

structs=$(sed -n 's/^field \([A-Za-z0-9_]*\)\..*/\1/p' "$tmp/header" | sort -u)
n=0
for s in $structs; do n=$((n + 1)); done
echo "1..$((n + 5))"

i=0
for s in $structs; do
    i=$((i + 1))
    grep -e "^size $s " -e "^field $s\\." "$tmp/c" > "$tmp/c.$s"
    grep -e "^size $s " -e "^field $s\\." "$tmp/f" > "$tmp/f.$s"
    nf=$(grep -c '^field' "$tmp/c.$s")
    if [ -s "$tmp/c.$s" ] && cmp -s "$tmp/c.$s" "$tmp/f.$s"; then
        echo "ok $i - $s: size and the offsets and sizes of its $nf fields agree"
    else
        echo "not ok $i - $s: C and Fortran layouts differ"
        diff "$tmp/c.$s" "$tmp/f.$s" | sed 's/^/# /'
    fi
done

i=$((i + 1))
for h in BkContext BkQueue BkCommandBuffer BkPlan BkMemory; do grep "^size $h " "$tmp/c"; done > "$tmp/c.h"
for h in BkContext BkQueue BkCommandBuffer BkPlan BkMemory; do grep "^size $h " "$tmp/f"; done > "$tmp/f.h"
if [ "$(wc -l < "$tmp/c.h")" -eq 5 ] && cmp -s "$tmp/c.h" "$tmp/f.h"; then
    echo "ok $i - the five handle types have C's size"
else
    echo "not ok $i - handle sizes differ"
    diff "$tmp/c.h" "$tmp/f.h" | sed 's/^/# /'
fi

i=$((i + 1))
grep -e '^const ' -e '^macro ' "$tmp/c" > "$tmp/c.k"
grep -e '^const ' -e '^macro ' "$tmp/f" > "$tmp/f.k"
if cmp -s "$tmp/c.k" "$tmp/f.k"; then
    echo "ok $i - $(grep -c '^const' "$tmp/c.k") constants and the version macros have C's values"
else
    echo "not ok $i - constant values differ"
    diff "$tmp/c.k" "$tmp/f.k" | sed 's/^/# /'
fi

# Coverage of the table against the headers.
i=$((i + 1))
sed -n 's/^\(field [^ ]*\) .*/\1/p' "$tmp/c" | sort -u > "$tmp/c.fields"
missing=$(grep '^field ' "$tmp/header" | comm -23 - "$tmp/c.fields")
if [ -z "$missing" ]; then
    echo "ok $i - the table covers all $(grep -c '^field' "$tmp/header") struct fields of the headers"
else
    echo "not ok $i - struct fields of the headers missing from the layout table"
    printf '%s\n' "$missing" | sed 's/^/# /'
fi

i=$((i + 1))
sed -n 's/^\(const [^ ]*\) .*/\1/p; s/^macro \([A-Za-z0-9_]*\)(.*/macro \1/p' "$tmp/c" | sort -u > "$tmp/c.consts"
missing=$(grep -e '^const ' -e '^macro ' "$tmp/header" | comm -23 - "$tmp/c.consts")
if [ -z "$missing" ]; then
    echo "ok $i - the table covers every constant and function-like macro of the headers"
else
    echo "not ok $i - constants of the headers missing from the layout table"
    printf '%s\n' "$missing" | sed 's/^/# /'
fi

i=$((i + 1))
if cmp -s "$tmp/c" "$tmp/f"; then
    echo "ok $i - the C and Fortran tables are identical ($(wc -l < "$tmp/c") lines)"
else
    echo "not ok $i - the C and Fortran tables differ"
    diff "$tmp/c" "$tmp/f" | sed 's/^/# /'
fi
