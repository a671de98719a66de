#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/CURRENT.md is what bench/current.sh makes of bench/data/: a table
# edited by hand, or a run added without rerunning the script, fails here.
top_srcdir=${top_srcdir:-.}
echo 1..2
out=t/bench-current.out
if sh "$top_srcdir/bench/current.sh" --stdout > "$out"; then
    echo "ok 1 - bench/current.sh ran"
else
    echo "not ok 1 - bench/current.sh failed"
fi
if diff -u "$top_srcdir/bench/CURRENT.md" "$out"; then
    echo "ok 2 - bench/CURRENT.md is current"
else
    echo "not ok 2 - bench/CURRENT.md differs from bench/current.sh's output: run it and commit"
fi
rm -f "$out"
