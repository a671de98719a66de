#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# LOG_COMPILER for `make check-valgrind`: runs one test program under
# valgrind memcheck, through libtool so the uninstalled libbk is found.
# Any memory error, and any definitely or indirectly lost block, makes the
# test exit 99, which the TAP driver reports as an ERROR. Shell-script tests
# run as they are. BK_TEST_UNDER_VALGRIND=1 tells tests to do fewer rounds.
#   usage: memcheck.sh VALGRIND TEST [ARGS...]
valgrind=$1
shift
case $1 in
*.sh) exec ${SHELL:-/bin/sh} "$@" ;;
esac
BK_TEST_UNDER_VALGRIND=1
export BK_TEST_UNDER_VALGRIND
here=$(dirname "$0")
exec "${top_builddir:-.}/libtool" --mode=execute "$valgrind" --tool=memcheck --quiet \
    --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect \
    --errors-for-leak-kinds=definite,indirect --num-callers=30 \
    --suppressions="$here/valgrind.supp" "$@"
