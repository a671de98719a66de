#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The exported ABI is exactly what the headers declare and libbk.map lists:
# compares (a) the dynamic symbols libbk.so defines, (b) the functions the
# public headers declare BK_API and (c) the global names in lib/libbk.map.
# Environment (from make check): top_srcdir, top_builddir, NM, READELF.

: "${top_srcdir:=.}" "${top_builddir:=.}"
lib="$top_builddir/.libs/libbk.so"
if test ! -f "$lib"; then
    echo "1..0 # SKIP $lib is not built (static-only build?)"
    exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-exports.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# (a) defined dynamic symbols, version suffixes dropped; version-node
# symbols (type A, named like BK_0.1) are the map's nodes, not functions.
if test -n "$NM" && "$NM" -D --defined-only "$lib" >"$tmp/nm" 2>/dev/null; then
    awk 'NF >= 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' "$tmp/nm" | sort -u >"$tmp/exported"
elif test -n "$READELF" && "$READELF" --wide --dyn-syms "$lib" >"$tmp/re" 2>/dev/null; then
    awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $7 != "ABS" && $5 != "LOCAL" && $8 != "" {
             sub(/@.*/, "", $8); print $8 }' "$tmp/re" | sort -u >"$tmp/exported"
else
    echo "1..0 # SKIP neither NM nor READELF can read $lib"
    exit 0
fi

# (b) BK_API declarations: the identifier before the first '('.
sed -n 's/^BK_API[^(]*[ *]\([A-Za-z_][A-Za-z0-9_]*\)[ ]*(.*/\1/p' \
    "$top_srcdir"/include/bk/*.h | sort -u >"$tmp/header"

# (c) names in the global: sections of every version node.
awk '/^[ \t]*global:/ { g = 1; next }
     /^[ \t]*local:/ { g = 0; next }
     /}/ { g = 0; next }
     g && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ { gsub(/[ \t;]/, ""); print }' \
    "$top_srcdir/lib/libbk.map" | sort -u >"$tmp/map"

n=0
failed=0
check() { # description, status, diagnostics file
    n=$((n + 1))
    if test "$2" = 0; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        failed=1
        sed 's/^/# /' "$3"
    fi
}

# Two sets are equal; the diagnostics show what is in one only.
same() { # name-a file-a name-b file-b
    comm -3 "$2" "$4" | awk -v a="$1" -v b="$3" \
        '/^\t/ { sub(/^\t/, ""); print "only in " b ": " $0; next } { print "only in " a ": " $0 }' \
        >"$tmp/diff"
    test ! -s "$tmp/diff"
}

test -s "$tmp/exported" && test -s "$tmp/header" && test -s "$tmp/map"
status=$?
{ echo "exported: $(wc -l <"$tmp/exported"), header: $(wc -l <"$tmp/header"),"\
       "map: $(wc -l <"$tmp/map")"; } >"$tmp/counts"
check "the three symbol lists are not empty" $status "$tmp/counts"

grep -v '^bk' "$tmp/exported" >"$tmp/foreign"
test ! -s "$tmp/foreign"
check "libbk.so exports only bk* symbols" $? "$tmp/foreign"

same libbk.so "$tmp/exported" header "$tmp/header"
check "the exported symbols are the BK_API functions of the headers" $? "$tmp/diff"

same header "$tmp/header" libbk.map "$tmp/map"
check "the BK_API functions are the global names of libbk.map" $? "$tmp/diff"

same libbk.so "$tmp/exported" libbk.map "$tmp/map"
check "the exported symbols are the global names of libbk.map" $? "$tmp/diff"

echo "1..$n"
exit $failed
