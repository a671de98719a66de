#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP: tools/bkinfo and tools/bkbench --quick on the host device, text and
# JSON, the gated and the GEMM-family cases, and their usage errors.
top_builddir=${top_builddir:-.}
bkinfo=$top_builddir/tools/bkinfo
bkbench=$top_builddir/tools/bkbench/bkbench
# Under an emulator (BK_TEST_RUNNER, see Makefile.am) bkbench's timed runs
# take minutes each.
if [ -n "${BK_TEST_RUNNER:-}" ]; then
    echo "1..0 # SKIP bkbench's timed runs under BK_TEST_RUNNER ($BK_TEST_RUNNER)"
    exit 0
fi
tmp=${TMPDIR:-/tmp}/bkbench-quick.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT

# 4 dtypes x 3 shapes x (forward, backward) x 5 kinds
cases=120
# dense GEMM: (f16, bf16, tf32, f64) x 2 sizes; 2:4 sparse: (f16, bf16) x
# (a square weight + 4 Llama layers x 2 token counts)
gemm_cases=8
sparse_cases=18
# attention: (f16, bf16) x D (64, 128) x blocks (16, 32) x (full, 50%, 25%,
# 10% as a mask and a list, window) x (forward, backward)
attention_rows=96
# the head-size sweep: (f16, bf16) x 9 (D, Dv) x (full, 25%) x (forward, backward)
sweep_rows=72
# packed sequences: (f16, bf16) x D (64, 128) x (causal at L = 64, varlen
# and varlen-c over 4 sequences, 136 tokens) x (forward, backward)
varlen_rows=24
# training shapes: (f16, bf16) x D (64, 128) x (B = 4, L = 64 and B = 2,
# L = 128, blocks of 16) x (full, causal) x (forward, backward)
train_rows=32
# F32: dense D (64, 128, 256) and causal D 128 at the sweep's sizes (L = 32,
# H * D = 256, blocks of 16) x (forward, backward)
f32_rows=8
attention_all=$((attention_rows + sweep_rows + varlen_rows + train_rows + f32_rows))
# attention over a KV cache: (f16, bf16) x D (128, 64) x 3 shapes (one paged)
decode_rows=12
# decode steps: bf16, M (1, 4) x KV 64, symmetric and with zero points; a
# row for the step, the linears and one per op (6)
step_cases=4
# conversions: f32 -> bf16, bf16 -> f32, f32 -> f16, f16 -> f32, strided f32 -> bf16
convert_cases=5

n=0
failed=0
ok() {  # ok CONDITION-STATUS DESCRIPTION
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        failed=1
    fi
}
skip() {
    n=$((n + 1))
    echo "ok $n # SKIP $1"
}
have_python=no
if command -v python3 >/dev/null 2>&1; then have_python=yes; fi
pycheck() {  # pycheck FILE DESCRIPTION PYTHON-EXPRESSION-ON-d
    if [ $have_python = no ]; then skip "$2: no python3"; return; fi
    python3 - "$1" <<PY
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    good = bool($3)
except Exception as e:  # bad JSON or a missing key
    print("# %s: %s" % (type(e).__name__, e))
    good = False
sys.exit(0 if good else 1)
PY
    ok $? "$2"
}

echo "1..71"

# ---- bkinfo ------------------------------------------------------------
"$bkinfo" >"$tmp/info.txt" 2>"$tmp/info.err"
ok $? "bkinfo exits 0"
grep -Eq '^libbk [0-9]+\.[0-9]+\.[0-9]+' "$tmp/info.txt"
ok $? "bkinfo prints the library version"
grep -Eq '^  host +0 ' "$tmp/info.txt"
ok $? "bkinfo lists the host device"
grep -Eq '^  host +0 +- +- +supported$' "$tmp/info.txt"
ok $? "bkinfo lists the host's embedded GPU code: none, supported"
rows=$(sed -n '/^support (bkCreatePlan) on host 0:/,/^$/p' "$tmp/info.txt" |
       grep -Ec '^  gated-(fwd|bwd) +[a-z-]+ +ok +ok +ok +ok *$')
[ "$rows" -eq 10 ]
ok $? "bkinfo host support matrix: 10 op x kind rows, all dtypes ok (got $rows)"

matrix=$(sed -n '/^support (bkCreatePlan) on host 0:/,/^$/p' "$tmp/info.txt")
echo "$matrix" | grep -Eq '^  gemm +- +ok +ok +ok +ok *$' &&
    echo "$matrix" | grep -Eq '^  gemm +tf32 +ok +n/a +n/a +n/a *$' &&
    [ "$(echo "$matrix" |
         grep -Ec '^  sparse24-convert +(strict|prune|decompress) +ok +ok +ok +ok *$')" -eq 3 ] &&
    echo "$matrix" | grep -Eq '^  sparse24-prepare +- +ok +ok +ok +n/a *$' &&
    echo "$matrix" | grep -Eq '^  sparse24-gemm +- +ok +ok +ok +n/a *$'
ok $? "bkinfo host support matrix: dense GEMM, 2:4 convert, prepare and sparse GEMM rows"
echo "$matrix" | grep -Eq '^  w4a16-convert +quantize +ok +ok +ok +n/a *$' &&
    [ "$(echo "$matrix" |
         grep -Ec '^  w4a16-convert +(pack|unpack) +n/a +ok +ok +n/a *$')" -eq 2 ] &&
    echo "$matrix" | grep -Eq '^  w4a16-gptq-repack +- +n/a +ok +ok +n/a *$' &&
    echo "$matrix" | grep -Eq '^  w4a16-gemm +- +n/a +ok +ok +n/a *$'
ok $? "bkinfo host support matrix: W4A16 convert (quantize from f32 too), GPTQ repack and GEMM rows"
[ "$(echo "$matrix" |
     grep -Ec '^  attention-(fwd|bwd) +(dense|mask|list) +ok +ok +ok +ok *$')" -eq 6 ]
ok $? "bkinfo host support matrix: attention forward and backward, each pattern form, all dtypes"
grep -Eq '^cuBLASLt \(for dense GEMM on CUDA\): (lib.*, version [0-9]+|not found: .+)$' \
    "$tmp/info.txt"
ok $? "bkinfo says whether cuBLASLt is there"

"$bkinfo" --json >"$tmp/info.json" 2>>"$tmp/info.err"
ok $? "bkinfo --json exits 0"
pycheck "$tmp/info.json" "bkinfo --json: host device with 40 supported gated cells" \
    "[x for x in d['devices'] if x['type'] == 'host' and x['context']['status'] == 'ok' and
      len([c for c in x['support'] if c['status'] == 'ok' and c['op'].startswith('gated')]) == 40]"
pycheck "$tmp/info.json" "bkinfo --json: 23 GEMM-family cells on the host, all supported" \
    "[x for x in d['devices'] if x['type'] == 'host' and
      len([c for c in x['support'] if c['op'].startswith(('gemm', 'sparse24'))]) == 23 and
      all(c['status'] == 'ok' for c in x['support'])] and
     isinstance(d['cublasLt']['found'], bool)"
pycheck "$tmp/info.json" "bkinfo --json: 11 W4A16 cells on the host (f16, bf16; quantize f32), all supported" \
    "[x for x in d['devices'] if x['type'] == 'host' and
      sorted((c['op'], c['kind'] or '-', c['dtype']) for c in x['support']
             if c['op'].startswith('w4a16')) ==
      sorted([(op, kind, t) for op, kind in [('w4a16-convert', 'quantize'),
             ('w4a16-convert', 'pack'), ('w4a16-convert', 'unpack'),
             ('w4a16-gptq-repack', '-'), ('w4a16-gemm', '-')] for t in ('f16', 'bf16')] +
             [('w4a16-convert', 'quantize', 'f32')])]"
pycheck "$tmp/info.json" "bkinfo --json: the host carries no GPU code and is supported" \
    "[x for x in d['devices'] if x['type'] == 'host' and
      x['moduleArchitectures'] == {'binary': [], 'ptx': [], 'deviceSupported': True}]"

"$bkinfo" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "bkinfo rejects an unknown option with status 2"

# ---- bkbench, text -------------------------------------------------------
# One run of every case gives the text, the JSON (--json-file writes what
# --json prints) and the CSV the checks below read; --json on standard
# output and --quiet are checked on runs of a few cases.
"$bkbench" --quick --device host --json-file "$tmp/bench.json" --csv "$tmp/run.csv" \
    >"$tmp/bench.txt" 2>"$tmp/bench.err"
status=$?
ok $status "bkbench --quick --device host --json-file --csv exits 0"
if [ $status -ne 0 ]; then sed 's/^/# /' "$tmp/bench.err"; fi
grep -Eq '^copy bandwidth .*: [0-9]+\.[0-9] GB/s$' "$tmp/bench.txt" &&
    ! grep -Eq ': 0\.0 GB/s$' "$tmp/bench.txt"
ok $? "bkbench prints a non-zero copy bandwidth"
grep -Eq '^op +kind +dtype +shape +sets +time\(us\) +spread +GB/s +TFLOP/s +roof$' "$tmp/bench.txt"
ok $? "bkbench prints the table header"
rows=$(grep -Ec '^gated-(fwd|bwd) ' "$tmp/bench.txt")
[ "$rows" -eq $cases ]
ok $? "bkbench prints $cases rows (got $rows)"
row='^gated-(fwd|bwd) +[a-z-]+ +(f32|f16|bf16|f64) +[0-9]+x[0-9]+( rs=[0-9]+)?'
row="$row"' +[0-9]+ +[0-9]+\.[0-9]+ +-[0-9]+/\+[0-9]+% +[0-9]+\.[0-9] +- +[0-9]+\.[0-9]%$'
timed=$(grep -Ec "$row" "$tmp/bench.txt")
[ "$timed" -eq $cases ]
ok $? "every row has a time, its spread, GB/s and a roofline fraction (got $timed)"
[ "$(grep -c '^gated-.* rs=' "$tmp/bench.txt")" -eq 40 ]
ok $? "the strided case runs for every op, kind and dtype"
grep -Eq '^  one-time buffer, .* +[0-9]+\.[0-9]+ us per plan' "$tmp/bench.txt" &&
    grep -Eq '^  \.\.\. the same bindings each time: +[0-9]+\.[0-9]+ us per plan' "$tmp/bench.txt" &&
    grep -Eq '^  reusable buffer of 100 plans, .* +[0-9]+\.[0-9]+ us per plan' "$tmp/bench.txt" &&
    [ "$(grep -c '^launch cost (gated-fwd f32 ' "$tmp/bench.txt")" -eq 2 ] &&
    grep -q "^launch cost (gated-fwd f32 1x32, libbk's own work" "$tmp/bench.txt"
ok $? "bkbench prints the launch costs, for a tiny and a minimal plan"
# shape, sets, 1x and re TFLOP/s, re's spread, no peak on the host; where
# libbk has a BLAS its direct TFLOP/s and ratios for tf32 (computed as f32)
# and f64, else none
row='^gemm +(f16|bf16|tf32|f64) +[0-9]+x[0-9]+x[0-9]+ +[0-9]+( +[0-9.e+-]+){2} +-[0-9]+/\+[0-9]+%'
blas_row='^gemm +(tf32|f64) +[0-9]+x[0-9]+x[0-9]+ +[0-9]+( +[0-9.e+-]+){2} +-[0-9]+/\+[0-9]+%'
blas_rows=0
grep -q '^1x: .*Lt: BLAS direct$' "$tmp/bench.txt" && blas_rows=$((gemm_cases / 2))
rows=$(grep -Ec "$row"' +- +n/a +n/a +n/a$' "$tmp/bench.txt")
with_blas=$(grep -Ec "$blas_row"' +[0-9.e+-]+( +[0-9.]+%){2} +n/a$' "$tmp/bench.txt")
[ "$rows" -eq $((gemm_cases - blas_rows)) ] && [ "$with_blas" -eq $blas_rows ]
ok $? "bkbench prints $gemm_cases dense GEMM rows with TFLOP/s, the BLAS beside $blas_rows (got $rows and $with_blas)"
# layer, shape, sets, dense and sparse TFLOP/s, sparse's spread, speedup, kernel
row='^sparse24 +(f16|bf16) +(square|qkv|o|gate-up|down) +[0-9]+x[0-9]+x[0-9]+ +[0-9]+'
rows=$(grep -Ec "$row"'( +[0-9.e+-]+){2} +-[0-9]+/\+[0-9]+% +[0-9]+\.[0-9]+x +[a-z0-9_]+' \
       "$tmp/bench.txt")
[ "$rows" -eq $sparse_cases ]
ok $? "bkbench prints $sparse_cases 2:4 sparse rows with speedup and kernel (got $rows)"
# Where libbk has a BLAS, the 2:4 and W4A16 rows again, beside it: libbk's
# and the BLAS's TFLOP/s, the BLAS's time over libbk's
w4a16_rows=$(grep -Ec '^w4a16 +(f16|bf16) +[a-z0-9-]+ +[0-9]+x[0-9]+x[0-9]+ +[0-9]+ ' \
             "$tmp/bench.txt")
row='^blas +(sparse24|w4a16) +(f16|bf16) +[a-z0-9-]+ +[0-9]+x[0-9]+x[0-9]+( +[0-9.e+-]+){2} +[0-9.]+%$'
rows=$(grep -Ec "$row" "$tmp/bench.txt")
want=0
[ $blas_rows -eq 0 ] || want=$((sparse_cases + w4a16_rows))
[ "$w4a16_rows" -gt 0 ] && [ "$rows" -eq $want ]
ok $? "bkbench prints the $want 2:4 and W4A16 rows beside the BLAS (got $rows)"
# shape, blk, pattern, form, active, sets, us, spread, TF/s, kernel (cut)
row='^attention-(fwd|bwd) +(f16|bf16) +1x[12]x64x(64|128) +(16|32) +(full|50%|25%|10%|window)'
row="$row"' +(dense|mask|list) +[0-9]+\.[0-9]% +[0-9]+ +[0-9.]+ +-[0-9]+/\+[0-9]+% +[0-9.]+( +h[a-z_]*)?$'
rows=$(grep -Ec "$row" "$tmp/bench.txt")
[ "$rows" -eq $attention_rows ]
ok $? "bkbench prints $attention_rows attention rows with time, TF/s and kernel (got $rows)"
row='^attention-(fwd|bwd) +(f16|bf16) +1x[0-9]+x32x[0-9]+(/128)? +16 +(full|25%)'
row="$row"' +(dense|mask) +[0-9]+\.[0-9]% +[0-9]+ +[0-9.]+ +-[0-9]+/\+[0-9]+% +[0-9.]+( +h[a-z_]*)?$'
rows=$(grep -Ec "$row" "$tmp/bench.txt")
[ "$rows" -eq $sweep_rows ]
ok $? "bkbench prints $sweep_rows head-size sweep rows, D / Dv where they differ (got $rows)"
row='^attention-(fwd|bwd) +(f16|bf16) +1x[12]x(64|136)x(64|128) +32 +(causal|varlen|varlen-c)'
row="$row"' +dense +[0-9]+\.[0-9]% +[0-9]+ +[0-9.]+ +-[0-9]+/\+[0-9]+% +[0-9.]+( +h[a-z_]*)?$'
rows=$(grep -Ec "$row" "$tmp/bench.txt")
packed=$(grep -Ec '^attention-(fwd|bwd) +(f16|bf16) +1x[12]x136x(64|128) +32 +varlen(-c)? ' \
         "$tmp/bench.txt")
[ "$rows" -eq $varlen_rows ] && [ "$packed" -eq $((varlen_rows * 2 / 3)) ]
ok $? "bkbench prints $varlen_rows packed-sequence and causal rows, checked (got $rows, $packed packed)"
row='^attention-(fwd|bwd) +f32 +1x[124]x32x(64|128|256) +16 +(full|causal)'
row="$row"' +dense +[0-9]+\.[0-9]% +[0-9]+ +[0-9.]+ +-[0-9]+/\+[0-9]+% +[0-9.]+( +h[a-z_]*)?$'
rows=$(grep -Ec "$row" "$tmp/bench.txt")
[ "$rows" -eq $f32_rows ]
ok $? "bkbench prints $f32_rows F32 rows, dense and causal (got $rows)"
row='^attention-(fwd|bwd) +(f16|bf16) +(4x[12]x64|2x[12]x128)x(64|128) +16 +(full|causal)'
row="$row"' +dense +[0-9]+\.[0-9]% +[0-9]+ +[0-9.]+ +-[0-9]+/\+[0-9]+% +[0-9.]+( +h[a-z_]*)?$'
rows=$(grep -Ec "$row" "$tmp/bench.txt")
[ "$rows" -eq $train_rows ]
ok $? "bkbench prints $train_rows training-shape rows, full and causal, checked (got $rows)"
row='^(f16|bf16) D(128|64) B[0-9]+ H[0-9]+/[0-9]+ Lq[0-9]+ Lk[0-9]+( causal)?( page[0-9]+)?'
row="$row"' +([0-9]+\.[0-9] +){5}[0-9]+\.[0-9]%$'
rows=$(grep -Ec "$row" "$tmp/bench.txt")
[ "$rows" -eq $decode_rows ]
ok $? "bkbench prints $decode_rows attention-decode rows: median, min, max, K+V, GB/s, copy (got $rows)"
row='^bf16 M[0-9]+ KV[0-9]+( zp)? +(step|linears|qkv|attention|o|gate-up|swiglu|down)'
rows=$(grep -Ec "$row"' +([0-9]+\.[0-9] +){4}[0-9]+\.[0-9]%$' "$tmp/bench.txt")
[ "$rows" -eq $((step_cases * 8)) ]
ok $? "bkbench prints $step_cases decode steps, a row for the step, the linears and each op (got $rows rows)"
row='^convert +(f32|bf16|f16) +(f32|bf16|f16) +64x4096( rs=8192)? +[0-9]+ +[0-9]+\.[0-9]+'
rows=$(grep -Ec "$row"' +-[0-9]+/\+[0-9]+% +[0-9]+\.[0-9] +[0-9]+\.[0-9]% +host_convert_' "$tmp/bench.txt")
[ "$rows" -eq $convert_cases ]
ok $? "bkbench prints $convert_cases conversion rows: time, spread, GB/s, roof, kernel (got $rows)"
too_wide=$(awk 'length > 100' "$tmp/bench.txt" "$tmp/info.txt" | wc -l)
[ "$too_wide" -eq 0 ]
ok $? "text output fits in 100 columns"

# ---- bkbench, JSON -------------------------------------------------------
# --json: the document alone on standard output, the same one --json-file
# writes (the run above).
"$bkbench" --quick --device host --json --op gated --kind glu --dtype f64 \
    >"$tmp/glu.json" 2>"$tmp/glu.err"
ok $? "bkbench --quick --device host --json exits 0"
pycheck "$tmp/glu.json" "bkbench --json: standard output is the JSON, the 6 results asked for" \
    "d['device']['type'] == 'host' and len(d['results']) == 6 and
     all(r['status'] == 'ok' and r['timeUs'] > 0 for r in d['results']) and
     d['launch']['oneTimeUsPerPlan'] > 0"
pycheck "$tmp/bench.json" "bkbench --json: $cases timed results on the host" \
    "d['device']['type'] == 'host' and len(d['results']) == $cases and
     all(r['status'] == 'ok' and r['timeUs'] > 0 and r['gbPerS'] > 0 and r['roofline'] > 0
         for r in d['results'])"
pycheck "$tmp/bench.json" "bkbench --json: $gemm_cases dense GEMM results, cuBLASLt skipped, the BLAS beside $blas_rows" \
    "len(d['gemm']) == $gemm_cases and d['cublasLt']['status'] == 'skipped' and
     all(r['status'] == 'ok' and r['oneTimeUs'] > 0 and r['reusableUs'] > 0 and
         r['reusableTflopPerS'] > 0 and r['flops'] == 2 * r['m'] * r['n'] * r['k'] and
         ((r['cublasLt']['status'] == 'skipped' and r['reusableVsCublasLt'] is None) or
          (r['cublasLt']['status'] == 'ok' and r['reusableVsCublasLt'] > 0)) and
         r['peakFraction'] is None and r['kernel'] for r in d['gemm']) and
     sum(r['cublasLt']['status'] == 'ok' for r in d['gemm']) == $blas_rows"
pycheck "$tmp/bench.json" "bkbench --json: $sparse_cases sparse results beside dense" \
    "len(d['sparse24']) == $sparse_cases and
     all(r['status'] == 'ok' and r['sparseUs'] > 0 and r['denseUs'] > 0 and r['speedup'] > 0 and
         r['preparedBytes'] > 0 and r['kernel'] and r['denseKernel'] for r in d['sparse24']) and
     sorted(set(r['n'] for r in d['sparse24'])) == [16, 32, 128]"
pycheck "$tmp/bench.json" "bkbench --json: the 2:4 and W4A16 results beside the BLAS where libbk has one" \
    "all((r['blas']['us'] > 0 and r['blas']['tflopPerS'] > 0 and r[v] > 0) if $blas_rows else
         (r['blas']['us'] is None and r[v] is None)
         for f, v in (('sparse24', 'sparseVsBlas'), ('w4a16', 'vsBlas'))
         for r in d[f] if r['status'] == 'ok') and
     all(r['status'] == 'ok' for r in d['w4a16'])"
pycheck "$tmp/bench.json" "bkbench --json: $attention_all attention results, checked, active-block TFLOP/s" \
    "len(d['attention']) == $attention_all and
     sorted(set((r['d'], r['dv']) for r in d['attention'])) ==
         [(32, 32), (64, 64), (80, 80), (96, 96), (128, 128), (160, 160), (192, 128),
          (192, 192), (256, 256)] and
     all(r['status'] == 'ok' and r['us'] > 0 and r['tflopPerS'] > 0 and
         r['check']['maxRelErr'] <= r['check']['limit'] and
         r['flops'] == 2 * r['blockQ'] * r['blockK'] * (r['d'] + r['dv']) * r['activeBlocks'] *
                       (2.5 if r['op'] == 'attention-bwd' else 1) and
         0 < r['activeBlocks'] <= r['totalBlocks'] and
         (r['patternHash'] is None) == (r['form'] == 'dense')
         for r in d['attention']) and
     len(set(r['patternHash'] for r in d['attention'] if r['form'] == 'list')) ==
     len(set(r['patternHash'] for r in d['attention'] if r['pattern'] == '10%'))"
# Each packed sequence's own blocks: ceil(n / blk)^2, causal the lower
# triangle with the diagonal (Lq = Lk); the check covers 3 rows of 2
# sequences; only packed records name sequences.
pycheck "$tmp/bench.json" "bkbench --json: $((varlen_rows * 2 / 3)) packed-sequence results, checked, each sequence's blocks" \
    "len([r for r in d['attention'] if 'sequences' in r]) == $((varlen_rows * 2 / 3)) and
     all(r['status'] == 'ok' and r['check']['maxRelErr'] <= r['check']['limit'] and
         r['check']['rows'] == 6 and r['sequences'] > 1 and r['seqForm'] == 'packed' and
         len(r['seqLengths']) == r['sequences'] and r['batch'] == 1 and
         sum(r['seqLengths']) == r['lq'] == r['lk'] == r['shape'][2] and
         r['causal'] == (r['pattern'] == 'varlen-c') and
         r['totalBlocks'] == r['heads'] * sum((-(-n // r['blockQ'])) ** 2
                                              for n in r['seqLengths']) and
         r['activeBlocks'] == r['heads'] * sum(
             (-(-n // r['blockQ'])) * (-(-n // r['blockQ']) + (1 if r['causal'] else 0)) //
             (2 if r['causal'] else 1) for n in r['seqLengths'])
         for r in d['attention'] if 'sequences' in r) and
     all(r['pattern'].startswith('varlen') == ('sequences' in r) for r in d['attention'])"
# The training shapes: several query blocks each, every block of every
# batch entry and head, causal the lower triangle with the diagonal.
pycheck "$tmp/bench.json" "bkbench --json: $train_rows training-shape results, checked, causal blocks" \
    "len([r for r in d['attention'] if r['set'] == 'train']) == $train_rows and
     sorted(set(r['set'] for r in d['attention'])) ==
         ['f32', 'heads', 'main', 'train', 'varlen'] and
     sorted(set((r['batch'], r['lq']) for r in d['attention'] if r['set'] == 'train')) ==
         [(2, 128), (4, 64)] and
     all(r['status'] == 'ok' and r['check']['maxRelErr'] <= r['check']['limit'] and
         r['form'] == 'dense' and r['causal'] == (r['pattern'] == 'causal') and
         r['pattern'] in ('full', 'causal') and r['lq'] == r['lk'] and
         r['lq'] // r['blockQ'] >= 4 and
         r['totalBlocks'] == r['batch'] * r['heads'] * (r['lq'] // r['blockQ']) ** 2 and
         r['activeBlocks'] == (r['batch'] * r['heads'] * (r['lq'] // r['blockQ']) *
                               (r['lq'] // r['blockQ'] + 1) // 2 if r['causal']
                               else r['totalBlocks'])
         for r in d['attention'] if r['set'] == 'train')"
pycheck "$tmp/bench.json" "bkbench --json: $decode_rows attention-decode results, checked, named" \
    "len(d['attentionDecode']) == $decode_rows and
     all(r['status'] == 'ok' and r['usMin'] <= r['us'] <= r['usMax'] and
         r['check']['maxRelErr'] <= r['check']['limit'] and r['check']['rows'] == r['lq'] and
         r['kvBytes'] == 2 * r['batch'] * r['kvHeads'] * r['lk'] * r['d'] * 2 and
         abs(r['roofline'] - r['gbPerS'] / d['copy']['gbPerS']) <= 1e-3 * r['roofline'] and
         r['case'] == '%s D%d B%d H%d/%d Lq%d Lk%d%s%s' % (r['dtype'], r['d'], r['batch'],
             r['heads'], r['kvHeads'], r['lq'], r['lk'], ' causal' if r['causal'] else '',
             ' page%d' % r['pageSize'] if r['pageSize'] else '')
         for r in d['attentionDecode'])"
pycheck "$tmp/bench.json" "bkbench --json: $step_cases decode steps, their floors, linears and ops" \
    "len(d['decodeStep']) == $step_cases and
     all(r['status'] == 'ok' and r['usMin'] <= r['us'] <= r['usMax'] and
         r['case'] == 'bf16 M%d KV%d%s' % (r['m'], r['kv'], ' zp' if r['zeroPoints'] else '') and
         r['weightBytes'] == sum(r[k]['k'] * r[k]['n'] // 2 + r[k]['k'] // 128 * r[k]['n'] * 2 +
                                 (r[k]['k'] // 128 * r[k]['n'] // 2 if r['zeroPoints'] else 0)
                                 for k in ('qkv', 'o', 'gateUp', 'down')) and
         sum(r['zeroPoints'] for r in d['decodeStep']) == $step_cases // 2 and
         r['kvBytes'] == 2 * r['m'] * r['kvHeads'] * r['kv'] * r['d'] * 2 and
         (r['qkv']['n'], r['gateUp']['n'], r['down']['k']) ==
         ((r['heads'] + 2 * r['kvHeads']) * r['d'], 2 * r['ffn'], r['ffn']) and
         abs(r['floorUs'] - (r['weightBytes'] + r['kvBytes']) / d['copy']['gbPerS'] * 1e-3) <=
         1e-3 * r['floorUs'] and
         r['linears']['usMin'] <= r['linears']['us'] <= r['linears']['usMax'] and
         abs(r['linears']['floorUs'] - r['weightBytes'] / d['copy']['gbPerS'] * 1e-3) <=
         1e-3 * r['linears']['floorUs'] and
         all(r[k]['us'] > 0 and r[k]['kernel']
             for k in ('qkv', 'attention', 'o', 'gateUp', 'swiglu', 'down'))
         for r in d['decodeStep'])"
pycheck "$tmp/bench.json" "bkbench --json: $convert_cases conversions, bytes in + out, rated" \
    "len(d['convert']) == $convert_cases and
     sorted((r['from'], r['to'], r['inputStrides'] is None) for r in d['convert']) ==
     sorted([('f32', 'bf16', True), ('bf16', 'f32', True), ('f32', 'f16', True),
             ('f16', 'f32', True), ('f32', 'bf16', False)]) and
     all(r['status'] == 'ok' and r['usMin'] <= r['timeUs'] <= r['usMax'] and
         r['bytes'] == r['shape'][0] * r['shape'][1] *
                       sum({'f32': 4, 'bf16': 2, 'f16': 2}[t] for t in (r['from'], r['to'])) and
         abs(r['roofline'] - r['gbPerS'] / d['copy']['gbPerS']) <= 1e-3 * r['roofline'] and
         r['kernel'] for r in d['convert'])"
pycheck "$tmp/bench.json" "bkbench --json: copy bandwidth and launch costs" \
    "d['copy']['gbPerS'] > 0 and d['launch']['oneTimeUsPerPlan'] > 0 and
     d['launch']['oneTimeSameBindingsUsPerPlan'] > 0 and
     d['launch']['reusableUsPerPlan'] > 0 and d['launch']['reusablePlans'] == 100 and
     d['launch']['minimal']['shape'] == [1, 32] and
     d['launch']['minimal']['oneTimeUsPerPlan'] > 0 and
     d['launch']['minimal']['reusableUsPerPlan'] > 0"

# ---- bkbench, CSV and quiet ---------------------------------------------
# stderr is a file here, so no progress line may appear: no '\r' anywhere.
cr=$(printf '\r')
! grep -q "$cr" "$tmp/bench.err" "$tmp/bench.txt" "$tmp/bench.json" "$tmp/glu.err" \
    "$tmp/glu.json"
ok $? "no progress line (no carriage return) when stderr is not a terminal"
"$bkbench" --quick --device host --quiet --op gated --kind glu --dtype f64 \
    --json-file "$tmp/quiet.json" --csv "$tmp/quiet.csv" >"$tmp/quiet.txt" 2>"$tmp/quiet.err"
[ $? -eq 0 ] && [ ! -s "$tmp/quiet.err" ] && grep -Eq '^op +kind +dtype ' "$tmp/quiet.txt" &&
    [ "$(grep -Ec '^gated-(fwd|bwd) +glu +f64 ' "$tmp/quiet.txt")" -eq 6 ] &&
    [ "$(wc -l <"$tmp/quiet.csv")" -eq 7 ]
ok $? "--quiet with --csv: the table still goes to stdout, stderr stays empty"
head -n 1 "$tmp/run.csv" | grep -Eq '^section,op,(.*,)?dtype,(.*,)?status,' &&
    head -n 1 "$tmp/run.csv" | grep -q ',cublasLt\.status,' &&
    ! grep -q "$cr" "$tmp/run.csv"
ok $? "--csv writes a header line: section, op, dtype, status, nested fields dotted"
lines=$(wc -l <"$tmp/run.csv")
pycheck "$tmp/bench.json" "--csv has a row per JSON result, every family ($((lines - 1)) rows)" \
    "sum(len(d[k]) for k in ('results', 'convert', 'gemm', 'sparse24', 'w4a16', 'attention',
                             'attentionDecode', 'decodeStep')) ==
     $lines - 1 and len(d['results']) == $cases and len(d['attention']) == $attention_all"
if [ $have_python = no ]; then
    skip "--csv reads back as CSV: no python3"
else
    python3 - "$tmp/run.csv" "$tmp/bench.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
d = json.load(open(sys.argv[2]))
want = [(k, r) for k in ("results", "convert", "gemm", "sparse24", "w4a16", "attention",
                         "attentionDecode", "decodeStep") for r in d[k]]
good = len(rows) == len(want) and all(
    c["section"] == k and c["op"] == r["op"] and c["dtype"] == r["dtype"] and
    c["status"] == r["status"] and c.get("kernel", "") == r.get("kernel", "")
    for c, (k, r) in zip(rows, want))
sys.exit(0 if good else 1)
PY
    ok $? "--csv reads back as CSV, row by row the JSON's results"
fi

# ---- bkbench, filters and usage errors ---------------------------------
"$bkbench" --quick --device host --op gated-bwd --kind swiglu --dtype bf16 \
    >"$tmp/one.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^gated-bwd +swiglu +bf16 ' "$tmp/one.txt")" -eq 3 ] &&
    [ "$(grep -Ec '^gated-' "$tmp/one.txt")" -eq 3 ]
ok $? "filters leave the 3 shapes of one op, kind and dtype"
"$bkbench" --quick --device host --op gemm,sparse24 --dtype bf16 --json-file "$tmp/gemm.json" \
    >"$tmp/gemm.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^gemm +bf16 ' "$tmp/gemm.txt")" -eq 2 ] &&
    [ "$(grep -Ec '^sparse24 +bf16 ' "$tmp/gemm.txt")" -eq 9 ] &&
    ! grep -Eq '^(gated-|launch cost)' "$tmp/gemm.txt"
ok $? "--op gemm,sparse24 --dtype bf16 leaves 2 dense and 9 sparse rows, no gated case"
pycheck "$tmp/gemm.json" "--json-file writes the same run as JSON beside the text" \
    "len(d['gemm']) == 2 and len(d['sparse24']) == 9 and d['results'] == [] and
     d['launch'] is None"
"$bkbench" --quick --device host --op gated --kind glu --dtype f64 >"$tmp/glu.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^gated-(fwd|bwd) +glu +f64 ' "$tmp/glu.txt")" -eq 6 ] &&
    ! grep -Eq '^(gemm|sparse24) ' "$tmp/glu.txt"
ok $? "--op gated and --kind leave the gated cases only"
"$bkbench" --quick --device host --op attention --pattern window --dtype bf16 >"$tmp/att.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^attention-(fwd|bwd) +bf16 .* window +mask ' "$tmp/att.txt")" -eq 8 ] &&
    [ "$(grep -Ec '^attention-' "$tmp/att.txt")" -eq 8 ] &&
    ! grep -Eq '^(gated-|gemm |sparse24 )' "$tmp/att.txt"
ok $? "--op attention --pattern window --dtype bf16 leaves 8 window rows, nothing else"
"$bkbench" --quick --device host --op attention --pattern varlen,varlen-c --dtype f16 \
    >"$tmp/att.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^attention-(fwd|bwd) +f16 +1x[12]x136x[0-9]+ .* varlen(-c)? +dense ' "$tmp/att.txt")" -eq 8 ] &&
    [ "$(grep -Ec '^attention-' "$tmp/att.txt")" -eq 8 ]
ok $? "--op attention --pattern varlen,varlen-c --dtype f16 leaves 8 packed rows, nothing else"
"$bkbench" --quick --device host --op attention --shape 2x1x128x128,4x2x64x64 \
    >"$tmp/att.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^attention-(fwd|bwd) +(f16|bf16) +(2x1x128x128|4x2x64x64) +16 +(full|causal) +dense ' "$tmp/att.txt")" -eq 16 ] &&
    [ "$(grep -Ec '^attention-' "$tmp/att.txt")" -eq 16 ]
ok $? "--op attention --shape leaves two training shapes' rows, full and causal, nothing else"
"$bkbench" --quick --device host --pattern nothing >/dev/null 2>"$tmp/usage.err"
[ $? -eq 2 ] && grep -q "unknown attention pattern 'nothing'" "$tmp/usage.err"
ok $? "bkbench rejects an unknown attention pattern with status 2"
"$bkbench" --quick --device host --op attention --shape 1x1x32x192/128 >"$tmp/att.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^attention-(fwd|bwd) +(f16|bf16) +1x1x32x192/128 ' "$tmp/att.txt")" -eq 8 ] &&
    [ "$(grep -Ec '^attention-' "$tmp/att.txt")" -eq 8 ]
ok $? "--op attention --shape B x H x L x D/Dv leaves that shape's attention rows"
"$bkbench" --quick --device host --op attention-decode --dtype f16 >"$tmp/dec.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^f16 D(128|64) ' "$tmp/dec.txt")" -eq $((decode_rows / 2)) ] &&
    ! grep -Eq '^(gated-|gemm |sparse24 |attention-(fwd|bwd) |bf16 )' "$tmp/dec.txt"
ok $? "--op attention-decode --dtype f16 leaves the f16 decode rows, nothing else"
"$bkbench" --quick --device host --op decode-step --json-file "$tmp/step.json" >"$tmp/step.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^bf16 M[0-9]+ KV[0-9]+( zp)? +step ' "$tmp/step.txt")" -eq $step_cases ] &&
    ! grep -Eq '^(gated-|gemm |sparse24 |attention-|f16 )' "$tmp/step.txt"
ok $? "--op decode-step leaves the decode steps only"
"$bkbench" --quick --device host --op decode-step --dtype f16 >/dev/null 2>&1
[ $? -eq 1 ]
ok $? "bkbench exits 1 for --op decode-step --dtype f16 (the steps are bf16)"
"$bkbench" --quick --device host --op gemm,nothing >/dev/null 2>"$tmp/usage.err"
[ $? -eq 2 ] && grep -q "unknown op 'nothing'" "$tmp/usage.err"
ok $? "bkbench rejects an unknown op with status 2"
"$bkbench" --quick --device host --size-mib 0 >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "bkbench rejects --size-mib 0 with status 2"
"$bkbench" --device nowhere >/dev/null 2>"$tmp/usage.err"
[ $? -eq 2 ] && grep -q "unknown device 'nowhere'" "$tmp/usage.err"
ok $? "bkbench rejects an unknown device with status 2 and says why"
"$bkbench" --quick --device host --dtype i32 >/dev/null 2>&1
[ $? -eq 1 ]
ok $? "bkbench exits 1 when no case matches"
"$bkbench" --quick --device host --op sparse24 --dtype f64 >/dev/null 2>&1
[ $? -eq 1 ]
ok $? "bkbench exits 1 when no sparse case has the dtype (f64)"
"$bkbench" --quick --device host --op sparse24 --dtype f16 >"$tmp/sp.txt" 2>&1
shape=$(awk '$1 == "sparse24" && $4 ~ /x/ { print $4; exit }' "$tmp/sp.txt")
# 1x64x128 is no standard case: it becomes dense and sparse cases of its own.
"$bkbench" --quick --device host --op sparse24,gemm,attention --shape "$shape,1x64x128" >"$tmp/shape.txt" 2>&1
[ $? -eq 0 ] && [ -n "$shape" ] &&
    [ "$(grep -Ec "^sparse24 +(f16|bf16) +[a-z-]+ +$shape " "$tmp/shape.txt")" -ge 1 ] &&
    [ "$(grep -Ec '^sparse24 +(f16|bf16) +shape +1x64x128 ' "$tmp/shape.txt")" -eq 2 ] &&
    [ "$(grep -Ec '^gemm +[a-z0-9]+ +1x64x128 ' "$tmp/shape.txt")" -eq 4 ] &&
    [ "$(grep -Ec '^(sparse24|gemm) ' "$tmp/shape.txt")" -eq "$(grep -Ec "^(sparse24|gemm) .* ($shape|1x64x128) " "$tmp/shape.txt")" ] &&
    ! grep -Eq '^(gated-|attention-)' "$tmp/shape.txt"
ok $? "--shape leaves the GEMM-family rows of those shapes only, one no case has as cases of its own ($shape, 1x64x128)"
"$bkbench" --quick --device host --op sparse24 --shape 1x2x3 >/dev/null 2>&1
[ $? -eq 1 ]
ok $? "bkbench exits 1 when no case has the --shape"

exit 0
