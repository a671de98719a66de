#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Repeats t/gpu/gpu_attention's pass over persistent CTAs of 3 ("(3 CTAs)": the
# Hopper forward and dq kernels taking many query tiles each, where
# wrong dq rows were seen under graph replays until 569b3dd) with two sets of
# kernel modules, alternated: for an A/B of a fix to a rare race. Each slot
# runs PROCS processes in a loop for SECONDS; the totals per set come last,
# failing cases' diagnostics in $OUT/hunt-fail.txt. On a GPU machine, from a
# configured build directory:
#
#   bench/attention-hunt.sh BUILD_DIR DIR_A DIR_B [SECONDS [PROCS [ROUNDS]]]
#
# DIR_A, DIR_B: BK_CUDA_MODULE_DIR folders, each with every module's fatbin
# (e.g. BUILD_DIR/kernels's, and a copy of them with the modules under test
# replaced). Defaults: 75 s, 6 processes, 2 rounds.
set -u
build=$1 dir_a=$2 dir_b=$3 secs=${4:-75} procs=${5:-6} rounds=${6:-2}
OUT=${OUT:-/tmp/bk-device-out}
mkdir -p "$OUT"
hunt() {
    local v=$1 dir=$2 end=$(($(date +%s) + secs))
    for p in $(seq "$procs"); do
        (
            n=0
            while [ "$(date +%s)" -lt "$end" ]; do
                log=/tmp/bk-hunt.$v.$p.$n.log
                BK_CUDA_MODULE_DIR=$dir BK_TEST_ONLY="(3 CTAs)" timeout 150 \
                    "$build/t/gpu/gpu_attention" >"$log" 2>&1
                rc=$?
                bad=$(grep -c '^not ok' "$log")
                echo "$v rc=$rc notok=$bad" >>"$OUT/hunt.txt"
                if [ "$bad" -gt 0 ] || [ "$rc" -ne 0 ]; then
                    { echo "=== $v process $p run $n (rc $rc)"; grep -A30 '^not ok' "$log" | head -80; } \
                        >>"$OUT/hunt-fail.txt"
                fi
                n=$((n + 1))
            done
        ) &
    done
    wait
}
: >"$OUT/hunt.txt"
for _ in $(seq "$rounds"); do
    hunt a "$dir_a"
    hunt b "$dir_b"
done
echo "set runs failed-runs"
for v in a b; do
    awk -v v="$v" '$1 == v { r++; if ($2 != "rc=0" || $3 != "notok=0") f++ }
        END { printf "%s %d %d\n", v, r, f }' "$OUT/hunt.txt"
done
