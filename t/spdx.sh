#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP test: every tracked source, build and script file starts with its
# SPDX licence line (tools/spdx.sh check, which holds the rules), so the
# rule cannot drift; the files that lack it are listed. The rule is on
# the files git tracks, so outside a git checkout of libbk (a release
# tarball) there is nothing to check.
# Environment (from AM_TESTS_ENVIRONMENT): top_srcdir.

top_srcdir=${top_srcdir:-.}
src=$(cd "$top_srcdir" && pwd -P) || {
    echo "Bail out! cannot enter $top_srcdir"
    exit 1
}
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) && top=$(cd "$top" && pwd -P)
if [ "${top:-}" != "$src" ]; then
    echo "1..0 # SKIP $src is not a git checkout"
    exit 0
fi

echo "1..1"
out=$(sh "$src/tools/spdx.sh" check "$src" 2>&1)
rc=$?
if [ $rc -eq 0 ]; then
    echo "ok 1 - every tracked source file has its SPDX line"
else
    echo "not ok 1 - every tracked source file has its SPDX line"
    printf '%s\n' "$out" | sed 's/^/# /'
    echo "# tools/spdx.sh add writes the line; a new kind of file needs a rule there"
fi
