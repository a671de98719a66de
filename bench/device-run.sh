#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds, tests, sanitizes and times libbk's CUDA backend on a GPU machine,
# in one go (one build serves every step). Run from a source tree that has
# configure generated (autoreconf -fi), on the GPU machine:
#
#   bench/device-run.sh [STEP...]
#
# STEP: build check gpucheck probe waves bench gemm w4a16 attention decode backward
# variants sanitize (default: all but backward, in that order). waves: bkbench on f32, f16 and bf16 for several
# BK_CUDA_GATED_WAVES; the best (highest lowest-case fraction of copy
# bandwidth) is used by the bench step and reported. probe: bench/probes/launch-probe.c (launch costs, libbk and the
# driver); bench: bkbench's gated cases and launch costs (JSON in gated.json)
# and, where python3 imports torch, bench/gated-peers.py (PyTorch eager and
# torch.compile on the same cases, text appended to bench.txt, JSON in
# gated-peers.json; BK_GATED_PEERS_ARGS, e.g. "--dtype bf16", narrows it and
# BK_GATED_PEERS_LIMIT bounds it, 420 s by default); gemm: bkbench's
# dense GEMM (beside cuBLASLt called directly) and 2:4 sparse GEMM cases
# (beside libbk's dense GEMM), text appended to bench.txt and the JSON in
# gemm.json; w4a16: bkbench's W4A16 cases (beside cuBLASLt) and the PyTorch
# peers of bench/w4a16-peers.py, in w4a16.txt and w4a16.json; attention:
# bkbench's block-sparse attention cases (forward and backward, with their
# host check) and bench/attention-peers.py (PyTorch's dense SDPA,
# FlexAttention and, where it imports, FlashAttention-4 on the same shapes and
# patterns, the same TFLOP/s over active blocks; then its --sweep and --train
# cases appended to the same report), text in attention.txt, JSON in
# attention.json and attention-peers.json (BK_ATTENTION_PEERS_ARGS, e.g.
# "--dtype bf16", narrows the peers, whose FlexAttention compiles take most of
# their time; bkbench is bounded by BK_ATTENTION_LIMIT and each peers pass by
# BK_ATTENTION_PEERS_LIMIT, 300 s by default); decode: bkbench's attention-decode and decode-step cases in one
# run (JSON in decode.json), bench/attention-decode-peers.py (SDPA, and
# FlashAttention-4 where it imports, on the same caches, decode-peers.json) and bench/decode-step-peers.py
# (PyTorch's step, step-peers.json), text in decode.txt: the three files
# bench/add-run.sh takes for the decode records; variants:
# bkbench on f16 and bf16 with kernel modules built with other settings
# (BK_CUDA_MODULE_DIR), for tuning.
#
# Logs go to $OUT (default /tmp/bk-device-out): summary.txt, build.log,
# resources-sm90.txt (each kernel's registers, stack and spills on sm_90),
# check.log (with test-suite.log), gpu-check.log, sanitize.log, waves.txt,
# bench.txt, gated.json, gated-peers.json and gemm.json; the attention step
# adds attention.txt, attention.json and attention-peers.json, the decode
# step decode.txt, decode.json, decode-peers.json and step-peers.json. The JSON files
# go to bench/data/ through bench/add-run.sh. The last lines printed are the
# summary.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-/tmp/bk-device-out}
build=${BK_BUILD_DIR:-/tmp/bk-build}
jobs=${BK_JOBS:-16}
steps=${*:-build check gpucheck probe waves bench gemm w4a16 attention decode variants sanitize}
mkdir -p "$OUT" "$build"
summary=$OUT/summary.txt
: >"$summary"

note() { echo "$*" | tee -a "$summary"; }
has_step() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
# timeout(1) bounds every step so that one hang cannot eat the lease.
limit() { secs=$1; shift; timeout --kill-after=10 "$secs" "$@"; }

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
    --format=csv,noheader 2>&1 | sed 's/^/gpu: /' | tee -a "$summary"
date -u '+date: %Y-%m-%d %H:%M UTC' | tee -a "$summary"

cd "$build" || exit 1
if has_step build; then
    t0=$(date +%s)
    if ! "$src/configure" --disable-fortran >configure.log 2>&1; then
        tail -30 configure.log
        exit 1
    fi
    grep 'CUDA backend:' configure.log | sed 's/^ */configure: /' | tee -a "$summary"
    if ! limit 420 make -j"$jobs" >"$OUT/build.log" 2>&1; then
        tail -40 "$OUT/build.log"
        exit 1
    fi
    # Each kernel's resources, from the build's kernels/NAME.fatbin.resources.
    for f in kernels/*.fatbin.resources; do
        grep '^sm_90 ' "$f" | sed "s|^|$(basename "$f" .fatbin.resources): |"
    done >"$OUT/resources-sm90.txt"
    note "build: $(($(date +%s) - t0)) s; $(wc -l <"$OUT/resources-sm90.txt") sm_90 kernels, most registers $(awk '{print $4}' "$OUT/resources-sm90.txt" | sort -n | tail -1)"
fi

if has_step check; then
    BK_TEST_REQUIRE_GPU=1 BK_TEST_DEVICE=cuda limit 300 make -j"$jobs" check >"$OUT/check.log" 2>&1
    cat test-suite.log >>"$OUT/check.log" 2>/dev/null
    grep -E '^(FAIL|ERROR|XPASS):' "$OUT/check.log" | head -40
    note "check (BK_TEST_DEVICE=cuda): $(make -s tap-summary 2>/dev/null)"
fi

gpu_check=$build/bench-gpu-check
if has_step gpucheck || has_step sanitize; then
    ${CC:-cc} -std=c11 -O2 -I"$src/include" "$src/bench/probes/gpu-check.c" -L"$build/.libs" -lbk -lm \
        -Wl,-rpath,"$build/.libs" -o "$gpu_check" || exit 1
fi
if has_step gpucheck; then
    {
        limit 300 "$gpu_check"
        echo "# exit $?"
        BK_CUDA_DRIVER=/nonexistent/libcuda.so.1 limit 60 "$gpu_check" no-driver
        echo "# exit $?"
        limit 60 "$gpu_check" lost
        echo "# exit $?"
    } >"$OUT/gpu-check.log" 2>&1
    grep -E '^not ok|^Bail' "$OUT/gpu-check.log" | head -20
    note "gpu-check: $(grep -c '^ok' "$OUT/gpu-check.log") ok, $(grep -c '^not ok' "$OUT/gpu-check.log") not ok"
fi

if has_step probe; then
    ${CC:-cc} -std=c11 -O2 -I"$src/include" "$src/bench/probes/launch-probe.c" -L"$build/.libs" -lbk -ldl \
        -Wl,-rpath,"$build/.libs" -o "$build/bench-launch-probe" &&
        limit 120 "$build/bench-launch-probe" "$build/kernels/gated_forward.fatbin" 2>&1 |
        sed 's/^/probe: /' | tee -a "$summary"
fi

if has_step waves; then
    best= best_low=0
    for w in ${BK_WAVES:-1 2 4 8 16 64}; do
        for dt in f32 f16 bf16; do
            BK_CUDA_GATED_WAVES=$w limit 120 tools/bkbench/bkbench --device cuda --op gated --dtype $dt \
                --repeats 20 --warmup 3 2>&1 | awk -v w="$w" '/^gated/ { print "waves " w ": " $0 }'
        done >"waves-$w.txt"
        low=$(awk '{ v = $NF + 0; if (low == "" || v < low) { low = v; k = $3 " " $4 " " $5 } s += v; n++ }
                   END { printf "%.1f %.1f %s", low, s / n, k }' "waves-$w.txt")
        note "waves $w: lowest, mean roof: $low"
        set -- $low
        if awk -v a="$1" -v b="$best_low" 'BEGIN { exit !(a > b) }'; then best=$w best_low=$1; fi
    done
    cat waves-*.txt >"$OUT/waves.txt"
    note "waves: best $best (lowest case $best_low%)"
    export BK_CUDA_GATED_WAVES="$best"
fi

if has_step bench; then
    limit 420 tools/bkbench/bkbench --device cuda --op gated --json-file "$OUT/gated.json" \
        >"$OUT/bench.txt" 2>&1
    note "bkbench (BK_CUDA_GATED_WAVES=${BK_CUDA_GATED_WAVES:-default}): exit $?"
    cat "$OUT/bench.txt"
    # The peers of the same cases (bench/add-run.sh --gated-peers keeps their JSON).
    if python3 -c 'import torch' 2>/dev/null; then
        {
            echo "==== bench/gated-peers.py (PyTorch eager and torch.compile)"
            # shellcheck disable=SC2086
            limit "${BK_GATED_PEERS_LIMIT:-420}" python3 "$src/bench/gated-peers.py" \
                --json "$OUT/gated-peers.json" ${BK_GATED_PEERS_ARGS:-} 2>&1
            echo "# exit $?"
        } >"$build/gated-peers.txt"
        cat "$build/gated-peers.txt" >>"$OUT/bench.txt"
        grep -E '^(gated-peers|copy|# exit)' "$build/gated-peers.txt" | tee -a "$summary"
    else
        note "gated-peers: python3 has no torch, not run"
    fi
fi

# cuBLASLt for libbk's dense GEMM and bkbench's comparison (both dlopen it):
# the loader's, else the toolkit's next to nvcc, else PyTorch's wheel.
# BK_CUBLASLT_LIBRARY set by the caller wins.
find_cublaslt() {
    if ldconfig -p 2>/dev/null | grep -Eq 'libcublasLt\.so\.1[23] '; then return; fi
    nvcc=$(sed -n 's/^NVCC = //p' Makefile 2>/dev/null)
    toolkit=$(dirname "${nvcc:-/usr/local/cuda/bin/nvcc}")/../lib64
    wheel=$(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' \
        2>/dev/null)/lib
    for f in "$toolkit/libcublasLt.so.13" "$toolkit/libcublasLt.so.12" \
        "$wheel/libcublasLt.so.13" "$wheel/libcublasLt.so.12"; do
        if [ -f "$f" ]; then BK_CUBLASLT_LIBRARY=$f; export BK_CUBLASLT_LIBRARY; return; fi
    done
}

# cuSPARSELt, bkbench's comparison for the 2:4 sparse GEMM (never libbk's):
# PyTorch's wheel (nvidia.cusparselt, or the older top-level cusparselt; a
# namespace package has no __file__, so its first __path__), else the
# loader's. BK_CUSPARSELT_LIBRARY set by the caller wins.
find_cusparselt() {
    for mod in nvidia.cusparselt cusparselt; do
        slt_dir=$(python3 -c "import $mod as m, os
f = getattr(m, '__file__', None)
print(os.path.dirname(f) if f else list(m.__path__)[0])" 2>/dev/null) || continue
        if [ -n "$slt_dir" ] && [ -f "$slt_dir/lib/libcusparseLt.so.0" ]; then
            BK_CUSPARSELT_LIBRARY=$slt_dir/lib/libcusparseLt.so.0
            export BK_CUSPARSELT_LIBRARY
            return
        fi
    done
}

if has_step gemm; then
    [ -n "${BK_CUBLASLT_LIBRARY:-}" ] || find_cublaslt
    note "cuBLASLt: ${BK_CUBLASLT_LIBRARY:-found by the loader}"
    [ -n "${BK_CUSPARSELT_LIBRARY:-}" ] || find_cusparselt
    note "cuSPARSELt: ${BK_CUSPARSELT_LIBRARY:-found by the loader, if at all}"
    # What libbk plans on the GPU for the GEMM family, and where it found cuBLASLt.
    limit 120 tools/bkinfo >"$build/bkinfo.txt" 2>&1
    note "bkinfo: exit $?"
    sed -n '/^support (bkCreatePlan) on cuda 0:/,/^$/p' "$build/bkinfo.txt" |
        grep -E '^  (op|gemm|sparse24-|dense GEMM)' | sed 's/^ */bkinfo: /' | tee -a "$summary"
    grep '^cuBLASLt' "$build/bkinfo.txt" | sed 's/^/bkinfo: /' | tee -a "$summary"
    {
        echo "==== bkbench --op gemm,sparse24"
        limit 420 tools/bkbench/bkbench --device cuda --op gemm,sparse24 --json-file "$OUT/gemm.json" 2>&1
        echo "# exit $?"
    } >"$build/gemm.txt"
    cat "$build/gemm.txt" >>"$OUT/bench.txt"
    # The three tables and any complaint go to the summary.
    grep -E '^(dense GEMM|1x:|peak:|op |gemm |2:4 sparse|TFLOP/s|sparse24 |cuSPARSELt|cusparselt |bkbench|# exit)' \
        "$build/gemm.txt" | tee -a "$summary"
fi

if has_step w4a16; then
    [ -n "${BK_CUBLASLT_LIBRARY:-}" ] || find_cublaslt
    {
        echo "==== bkbench --op w4a16"
        limit 420 tools/bkbench/bkbench --device cuda --op w4a16 --json-file "$OUT/w4a16.json" 2>&1
        echo "# exit $?"
        echo "==== bench/w4a16-peers.py (PyTorch: cuBLAS f16/bf16, int4 _weight_int4pack_mm)"
        limit 300 python3 "$src/bench/w4a16-peers.py" 2>&1
        echo "# exit $?"
    } >"$OUT/w4a16.txt"
    grep -E '^(dense GEMM|op |bkbench|# exit)' "$OUT/w4a16.txt" | tee -a "$summary"
fi

if has_step attention; then
    {
        echo "==== bkbench --op attention"
        limit "${BK_ATTENTION_LIMIT:-300}" tools/bkbench/bkbench --device cuda --op attention \
            --json-file "$OUT/attention.json" 2>&1
        echo "# exit $?"
        echo "==== bench/attention-peers.py (PyTorch: SDPA, FlexAttention, FlashAttention-4)"
        # shellcheck disable=SC2086
        limit "${BK_ATTENTION_PEERS_LIMIT:-300}" python3 "$src/bench/attention-peers.py" \
            --json "$OUT/attention-peers.json" ${BK_ATTENTION_PEERS_ARGS:-} 2>&1
        echo "# exit $?"
        # The head-size sweep's and the training shapes' peers, into the same report.
        for mode in --sweep --train; do
            echo "==== bench/attention-peers.py $mode"
            # shellcheck disable=SC2086
            limit "${BK_ATTENTION_PEERS_LIMIT:-300}" python3 "$src/bench/attention-peers.py" $mode \
                --json "$OUT/attention-peers.json" --append ${BK_ATTENTION_PEERS_ARGS:-} 2>&1
            echo "# exit $?"
        done
    } >"$OUT/attention.txt"
    grep -E '^(bkbench|attention-peers|# exit)' "$OUT/attention.txt" | tee -a "$summary"
    awk '/^attention-(fwd|bwd) / { n++ } /^attention-.* (unsupported|failed)$/ { u++ }
         /^attention-.*WRONG RESULT$/ { w++ } /^flex / { f++; if ($8 == "n/a") fn++ }
         END { printf "attention: %d bkbench rows (%d without a plan, %d wrong), ", n, u, w
               printf "%d flex rows (%d n/a)\n", f, fn }' "$OUT/attention.txt" | tee -a "$summary"
fi

if has_step decode; then
    {
        echo "==== bkbench --op attention-decode,decode-step"
        limit 300 tools/bkbench/bkbench --device cuda --op attention-decode,decode-step \
            --json-file "$OUT/decode.json" 2>&1
        echo "# exit $?"
        echo "==== bench/attention-decode-peers.py (SDPA; FlashAttention-4 where it imports)"
        limit 200 python3 "$src/bench/attention-decode-peers.py" \
            --json "$OUT/decode-peers.json" 2>&1
        echo "# exit $?"
        echo "==== bench/decode-step-peers.py (PyTorch's decode step)"
        limit 200 python3 "$src/bench/decode-step-peers.py" --json "$OUT/step-peers.json" 2>&1
        echo "# exit $?"
    } >"$OUT/decode.txt"
    grep -E '^(bkbench|# exit)' "$OUT/decode.txt" | tee -a "$summary"
fi

# backward (run only when named): the Hopper backward's kernels side by
# side on bench/probes/attention-probe.c's shapes (bf16, B = 2, L = 8192,
# H x D = 2048), dense and causal, two rounds: at D = 128 the fused
# kernel (the plan's choice), the two kernels and atomic
# (BK_CUDA_ATTENTION_BACKWARD), at D = 64 the two kernels; then the GPU
# cases run with the two kernels and the atomic kernel (gpu_attention's
# "(two kernels)" and "(atomics)" labels). Text in backward.txt.
if has_step backward; then
    probe=$build/bench-attention-probe
    ${CC:-cc} -std=c11 -O2 -I"$src/include" -I"$build/include" "$src/bench/probes/attention-probe.c" \
        -L"$build/.libs" -lbk -lm -Wl,-rpath,"$build/.libs" -o "$probe" || exit 1
    {
        for _ in 1 2; do
            for pattern in dense causal; do
                for kind in fused two atomic 64; do
                    case $kind in
                    fused) set -- env BK_UNUSED= ;;
                    two) set -- env BK_CUDA_ATTENTION_BACKWARD=two ;;
                    atomic) set -- env BK_CUDA_ATTENTION_BACKWARD=atomic BK_PROBE_ATOMICS=1 ;;
                    64) set -- env BK_UNUSED= ;;
                    esac
                    width=128
                    [ "$kind" = 64 ] && width=64
                    BK_PROBE_BLOCK=128 BK_PROBE_PATTERNS=$pattern limit 60 "$@" "$probe" bf16 bwd $width 2>&1 |
                        sed -n "s/^/backward $kind $pattern: /p" | tail -1
                done
            done
        done
        for label in "(two kernels)" "(atomics)"; do
            BK_TEST_ONLY="$label" BK_TEST_DEVICE=cuda BK_TEST_REQUIRE_GPU=1 limit 300 t/gpu/gpu_attention \
                >"$build/backward-cases.log" 2>&1
            echo "backward cases $label: exit $?, $(grep -c '^ok' "$build/backward-cases.log") ok," \
                "$(grep -c '^not ok' "$build/backward-cases.log") not ok"
            grep '^not ok' "$build/backward-cases.log" | head -5
        done
    } >"$OUT/backward.txt"
    grep -E '^backward' "$OUT/backward.txt" | sed 's/ fwd .* bwd / bwd /' | tee -a "$summary"
fi

# name:NVCC flags of kernel variants, compared with bkbench on f16 and bf16.
# (flags separated by commas); "waves4:env:VAR=VALUE" runs the default
# modules with VAR=VALUE in the environment instead.
variants=${BK_VARIANTS:-"u1:-DBK_GATED_UNROLL_VEC_HALF=1 u1all:-DBK_GATED_UNROLL_VEC=1,-DBK_GATED_UNROLL_VEC_HALF=1 fast:-DBK_GATED_FAST_HALF_MATH=1 u1fast:-DBK_GATED_UNROLL_VEC_HALF=1,-DBK_GATED_FAST_HALF_MATH=1 cs:-DBK_GATED_STREAMING=1 u1cs:-DBK_GATED_UNROLL_VEC_HALF=1,-DBK_GATED_STREAMING=1 waves4:env:BK_CUDA_GATED_WAVES=4"}
variant_dtypes=${BK_VARIANT_DTYPES:-"f32 f16 bf16"}
if has_step variants; then
    nvcc=$(sed -n 's/^NVCC = //p' Makefile) ptxas=$(sed -n 's/^PTXAS = //p' Makefile)
    fatbinary=$(sed -n 's/^FATBINARY = //p' Makefile)
    archs=$(sed -n 's/^BK_CUDA_ARCHS = //p' Makefile) ptx_archs=$(sed -n 's/^BK_CUDA_PTX_ARCHS = //p' Makefile)
    for v in $variants; do
        name=${v%%:*} flags=$(echo "${v#*:}" | tr , ' ')
        case $flags in env:*) continue ;; esac
        mkdir -p "variant-$name"
        for m in gated_forward gated_backward; do
            # shellcheck disable=SC2086
            sh "$src/kernels/build-fatbin.sh" "$src/kernels/$m.cu" "variant-$name/$m.fatbin" "$nvcc" "$ptxas" \
                "$fatbinary" "90" "90" -I"$src/kernels" -I"$src/kernels/shared" $flags >/dev/null &
        done
    done
    wait
    for v in base $variants; do
        name=${v%%:*} setting=${v#*:env:}
        for dt in $variant_dtypes; do
            dir=$build/variant-$name env=BK_UNUSED=
            if [ "$name" = base ]; then dir=; fi
            if [ "$setting" != "$v" ]; then dir= env=$setting; fi
            (export "$env"; BK_CUDA_MODULE_DIR="$dir" limit 120 tools/bkbench/bkbench --device cuda \
                --op gated --dtype $dt --repeats 20 --warmup 3 2>&1) |
                awk -v n="$name" '/^gated/ { print "variant " n ": " $0 } /^copy/ { print "variant " n ": " $0 }'
        done
    done >>"$OUT/bench.txt"
    grep '^variant.*gated' "$OUT/bench.txt" | awk '{ k = $2 " " $3 " " $5; r[k] += $NF; c[k]++
            if (!(k in lo) || $NF + 0 < lo[k]) { lo[k] = $NF + 0; worst[k] = $4 } }
        END { for (k in r) printf "variants: %-24s mean roof %.1f%%, lowest %.1f%% (%s)\n", k,
              r[k] / c[k], lo[k], worst[k] }' | sort | tee -a "$summary"
fi

if has_step sanitize; then
    # API errors are not reported: gpu-check provokes some on purpose.
    san="compute-sanitizer --error-exitcode 86 --print-limit 20 --report-api-errors no"
    : >"$OUT/sanitize.log"
    for tool in ${BK_SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
        for prog in ${BK_SANITIZE_PROGS:-"$gpu_check" t/gpu/gpu_gated t/gated/gated_exhaustive t/gpu/gpu_launch t/gpu/gpu_gemm t/gpu/gpu_sparse24}; do
            BK_TEST_DEVICE=cuda BK_TEST_REQUIRE_GPU=1 limit 240 ./libtool --mode=execute $san --tool $tool "$prog" \
                >>"$OUT/sanitize.log" 2>&1
            rc=$?
            note "compute-sanitizer $tool $(basename "$prog"): exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize.log" | tail -1 | sed 's/^=* *//')"
        done
    done
fi

echo "==== summary"
cat "$summary"
