#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP test of tools/commit-msg, the git hook that holds commit messages to
# CONTRIBUTING.md's rule: messages that keep it pass, each way of breaking
# it fails, and the limits are exact (72 characters pass, 73 fail).
# Environment (from AM_TESTS_ENVIRONMENT): top_srcdir.

top_srcdir=${top_srcdir:-.}
# Absolute: the test runs in a directory of its own.
hook=$(cd "$top_srcdir/tools" && pwd)/commit-msg || {
    echo "Bail out! cannot enter $top_srcdir/tools"
    exit 1
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/commit-msg.XXXXXX") || {
    echo "Bail out! mktemp failed"
    exit 1
}
trap 'rm -rf "$tmp"' EXIT
# The hook reads core.commentChar: no configuration but the test's own.
unset GIT_DIR GIT_WORK_TREE GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS
GIT_CONFIG_NOSYSTEM=1
GIT_CONFIG_GLOBAL=/dev/null
export GIT_CONFIG_NOSYSTEM GIT_CONFIG_GLOBAL
cd "$tmp" || exit 1

# Lines of exactly N characters: one word, and words with spaces.
word() { awk -v n="$1" -v c="${2:-x}" 'BEGIN { for (i = 0; i < n; i++) s = s c; print s }'; }
words() { awk -v n="$1" 'BEGIN { s = "word"; while (length(s) < n) s = s " word"; print substr(s, 1, n) }'; }
s72=$(word 72)
s73=$(word 73)
b72=$(words 72)
b73=$(words 73)
# UTF-8: 2 bytes a character (U+00E9), so 72 characters are 144 bytes.
u72=$(word 72 "$(printf '\303\251')")
u73=$(word 73 "$(printf '\303\251')")
sha=0123456789abcdef0123456789abcdef01234567
scissors='# ------------------------ >8 ------------------------'

n=0
# expect pass|fail DESCRIPTION: runs the hook on the message in file msg.
expect() {
    n=$((n + 1))
    sh "$hook" msg >out 2>&1
    rc=$?
    if { [ "$1" = pass ] && [ $rc -eq 0 ]; } || { [ "$1" = fail ] && [ $rc -eq 1 ]; }; then
        echo "ok $n - $1: $2"
    else
        echo "not ok $n - $1: $2 (status $rc)"
        sed 's/^/# /' msg
    fi
    sed 's/^/# hook: /' out
}
msg() { printf '%s\n' "$@" >msg; }

echo "1..21"

n=$((n + 1))
if [ -x "$hook" ]; then
    echo "ok $n - tools/commit-msg is executable (git runs it as a hook)"
else
    echo "not ok $n - tools/commit-msg is executable (git runs it as a hook)"
fi

msg "$s72" "" "$b72" "$b72" "short"
expect pass "a 72-character subject, a blank line, 72-column body lines"
msg "$u72" "" "The subject is 72 characters of 2 bytes."
expect pass "characters are counted, not bytes"
msg "Subject" "" "Body." "# $b73 $b73" "#" "# Please enter the commit message"
expect pass "comment lines are not part of the message"
msg "Subject" "" "Body." "$scissors" "# Do not modify or remove the line above." "diff --git a/x b/x" "+$b73 $b73"
expect pass "nothing below git's scissors line counts"
msg "" "" "Subject   " "" "Body.  " "" ""
expect pass "leading and trailing blank lines and trailing spaces are stripped"
msg "Subject" "" "Output:" "    $b73 $b73" "	$b73" "https://$s73"
expect pass "indented lines and one-word lines (URLs) may pass 72 columns"
msg "Merge remote-tracking branch 'origin/a-branch-with-a-long-name' into another-long-branch"
expect pass "git's merge subject may be longer and has no body"
msg "Revert \"$s72\"" "" "This reverts commit $sha."
expect pass "git's revert subject may be longer"
msg "fixup! $s72"
expect pass "fixup! subjects may be longer and have no body"
msg "# Please enter the commit message for your changes." "#"
expect pass "an empty message is left to git, which refuses it"

msg "$s73" "" "Body."
expect fail "a 73-character subject"
msg "$u73" "" "Body."
expect fail "a 73-character UTF-8 subject"
msg "Subject" "Body straight after the subject."
expect fail "no blank line after the subject"
msg "A subject and nothing else"
expect fail "no body"
msg "Subject" "" "$b72" "$b73"
expect fail "a 73-column body line"
msg "Subject" "" "# $b72" "$b73"
expect fail "a body line after comments is still checked"
msg "Revert the change that made the subjects of the commit messages of libbk too long" "" "Body."
expect fail "a subject that only starts like git's revert"
msg "Merge the two halves of the attention backward into one kernel, at long last" "" "Body."
expect fail "a merge subject that git did not write"

# core.commentChar: with ';' the comment lines are those, and '#' lines
# are message lines.
GIT_CONFIG_COUNT=1
GIT_CONFIG_KEY_0=core.commentChar
GIT_CONFIG_VALUE_0=';'
export GIT_CONFIG_COUNT GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0
if [ "$(git config --get core.commentChar 2>/dev/null)" = ';' ]; then
    msg "Subject" "" "Body." "; $b73 $b73"
    expect pass "core.commentChar ';': its lines are comments"
    msg "Subject" "" "Body." "# $b73 $b73"
    expect fail "core.commentChar ';': '#' lines are message lines"
else
    n=$((n + 2))
    echo "ok $((n - 1)) # SKIP git cannot set core.commentChar here (git 2.31 or later)"
    echo "ok $n # SKIP git cannot set core.commentChar here (git 2.31 or later)"
fi
