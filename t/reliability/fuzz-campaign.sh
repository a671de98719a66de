#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The libFuzzer campaign (TAP). `make check` runs a short one with a fixed
# seed; any crash, leak, hang, sanitizer report or broken property of the
# harness (t/reliability/fuzz_harness.c) fails it. Skipped when configure
# found no clang with -fsanitize=fuzzer (or was given --disable-libfuzzer):
# fuzz-replay runs the same harness then.
#
# Longer campaigns (see CONTRIBUTING.md), from the build directory:
#   BK_FUZZ_SECONDS=3600 BK_FUZZ_RUNS=-1 sh $srcdir/t/reliability/fuzz-campaign.sh
#   sh $srcdir/t/reliability/fuzz-campaign.sh --update-corpus
#     (fuzz BK_FUZZ_SECONDS, default 600, then merge the corpus into
#      $srcdir/t/reliability/fuzz-corpus.txt: review and commit it)
# Environment: BK_FUZZ_RUNS (default 15000), BK_FUZZ_SECONDS (default 20;
# a cap), BK_FUZZ_SEED (default 1), BK_FUZZ_JOBS (parallel jobs, default 1).
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-$(dirname "$0")/../..}
fuzzer=$top_builddir/t/reliability/fuzz-libfuzzer
replay=$top_builddir/t/reliability/fuzz-replay
work=$top_builddir/t/reliability/fuzz-campaign.d
update=no
[ "x$1" = x--update-corpus ] && update=yes

if [ ! -x "$fuzzer" ]; then
    echo "1..0 # SKIP no libFuzzer build (no clang with -fsanitize=fuzzer, or --disable-libfuzzer); fuzz-replay ran the harness"
    exit 0
fi
runs=${BK_FUZZ_RUNS:-15000}
seconds=${BK_FUZZ_SECONDS:-20}
if [ $update = yes ]; then
    runs=${BK_FUZZ_RUNS:--1}
    seconds=${BK_FUZZ_SECONDS:-600}
fi
rm -rf "$work"
mkdir -p "$work/seeds" "$work/corpus" || exit 1
"$replay" --unpack "$work/seeds" || { echo "1..1"; echo "not ok 1 - unpack the corpus"; exit 1; }

echo "1..1"
# LeakSanitizer runs after every input; -timeout catches hangs.
set -- -seed="${BK_FUZZ_SEED:-1}" -runs="$runs" -max_total_time="$seconds" -max_len=2048 \
    -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/"
[ -n "$BK_FUZZ_JOBS" ] && set -- "$@" -jobs="$BK_FUZZ_JOBS" -workers="$BK_FUZZ_JOBS"
echo "# $fuzzer $* $work/corpus $work/seeds"
"$fuzzer" "$@" "$work/corpus" "$work/seeds" >"$work/fuzz.log" 2>&1
rc=$?
stats=$(grep -E '^stat::(number_of_executed_units|peak_rss_mb|new_units_added)' "$work/fuzz.log" |
        tr '\n' ' ')
if [ $rc -ne 0 ]; then
    echo "not ok 1 - libFuzzer campaign (seed ${BK_FUZZ_SEED:-1}) exited with status $rc"
    tail -n 60 "$work/fuzz.log" | sed 's/^/# /'
    for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
        [ -f "$f" ] && echo "# saved input: $f (replay: $replay $f)"
    done
    exit 1
fi
echo "ok 1 - libFuzzer campaign (seed ${BK_FUZZ_SEED:-1}, $runs runs max, ${seconds}s cap): no crash, leak, hang or broken property"
echo "# $stats"
if [ $update = yes ]; then
    # Keep the inputs that reach new edges (not new hit counts): a small
    # corpus; then the regressions section of the old file, unchanged.
    corpus=$top_srcdir/t/reliability/fuzz-corpus.txt
    mkdir -p "$work/merged"
    "$fuzzer" -merge=1 -use_counters=0 "$work/merged" "$work/seeds" "$work/corpus" \
        >"$work/merge.log" 2>&1 &&
        "$replay" --pack "$work/merged" >"$work/corpus.txt" &&
        sed -n '/^# Regressions/,$p' "$corpus" >>"$work/corpus.txt" &&
        mv "$work/corpus.txt" "$corpus" &&
        echo "# wrote $corpus ($(ls "$work/merged" | wc -l) inputs and the regressions)"
fi
exit 0
