#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The tree speaks of the code, not of how it was developed: no working
# sessions, numbered calls, device-time budgets, scratch directories,
# branches outside the repository or tracker numbers. A comment states the
# rule and cites a commit or a design document's section instead. Scans
# the tracked files (every file of the tree in a tarball, less what
# autotools generate). ALLOW lists the hits where such a word means
# something else: extended regular expressions over "file:line:text",
# one a line, without spaces.
top_srcdir=${top_srcdir:-.}
echo 1..1
words='sess''ion|(^|[^[:alnum:]_])calls? [0-9]|\.car''ry|(^|[^[:alnum:]_])wip/|issues? #?[0-9]|device[ -]time'
ALLOW=''
self=t/process-words.sh
list=$(pwd)/t/process-words.files
if git -C "$top_srcdir" ls-files > "$list" 2>/dev/null && [ -s "$list" ]; then
    :
else
    # A tarball: its files, less what autotools generate and any build
    # tree configured inside it (make distcheck builds in _build/sub).
    builds=$(cd "$top_srcdir" && find . -name config.status | sed 's|^\./||; s|/*config\.status$||' |
        sed '/^$/d' | sed 's|.*|^&/|' | tr '\n' '|' | sed 's/|$//')
    (cd "$top_srcdir" && find . -type f | sed 's|^\./||' |
        grep -Ev '^(configure|aclocal\.m4|config\.h\.in|build-aux/|m4/(libtool|lt)|autom4te\.cache/)|Makefile\.in$' |
        grep -Ev '^(libtool|config\.(status|log|h)|stamp-h1)$|(^|/)(\.deps|\.libs)/|\.(o|lo|la|log|trs)$' |
        { if [ -n "$builds" ]; then grep -Ev "$builds"; else cat; fi; }) > "$list"
fi
hits=$(cd "$top_srcdir" && grep -v -x -F "$self" < "$list" | while read -r f; do
    [ -f "$f" ] && grep -n -i -E "$words" "$f" /dev/null
done)
rm -f "$list"
for a in $ALLOW; do
    hits=$(printf '%s\n' "$hits" | grep -v -E "$a")
done
hits=$(printf '%s\n' "$hits" | sed '/^$/d')
if [ -z "$hits" ]; then
    echo "ok 1 - no process words in the tree"
else
    printf '%s\n' "$hits" | sed 's/^/# /'
    echo "not ok 1 - process words in the tree: state the rule, cite a commit or a design section"
fi
