#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian symbols file of libbk0 (packaging/debian/libbk0.symbols) lists
# exactly the symbols and version nodes of lib/libbk.map, each as
# NAME@NODE, under the soname libbk.so.0: a function added to the map
# without the symbols file, or the reverse, fails here (and
# dpkg-gensymbols checks the built library against the file).
# Environment (from make check): top_srcdir.

: "${top_srcdir:=.}"
map=$top_srcdir/lib/libbk.map
symbols=$top_srcdir/packaging/debian/libbk0.symbols
echo "1..2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-symbols.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The map's nodes (NODE@NODE) and global names (NAME@NODE).
awk '/^[A-Za-z_][A-Za-z0-9_.]*[ \t]*\{/ { node = $1; sub(/\{.*/, "", node); print node "@" node; next }
     /^[ \t]*global:/ { g = 1; next }
     /^[ \t]*local:/ { g = 0; next }
     /\}/ { g = 0; next }
     g && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;/ { gsub(/[ \t;]/, ""); print $0 "@" node }' \
    "$map" | sort >"$tmp/map"
# The symbols file's entries (lines starting with a space), versions dropped.
awk '/^ / { print $1 }' "$symbols" | sort >"$tmp/symbols"

if head -1 "$symbols" | grep -q '^libbk\.so\.0 libbk0 '; then
    echo "ok 1 - $symbols is for libbk.so.0 in libbk0"
else
    echo "not ok 1 - $symbols does not start with 'libbk.so.0 libbk0'"
fi
if diff "$tmp/map" "$tmp/symbols" >"$tmp/diff"; then
    echo "ok 2 - libbk0.symbols lists lib/libbk.map's $(wc -l <"$tmp/map") symbols and nodes"
else
    echo "not ok 2 - libbk0.symbols and lib/libbk.map differ (< map only, > symbols file only)"
    sed 's/^/# /' "$tmp/diff"
fi
