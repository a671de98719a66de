#!/bin/sh
# TAP: tools/bkinfo and tools/bkbench --quick on the host device, text and
# JSON, and their usage errors.
top_builddir=${top_builddir:-.}
bkinfo=$top_builddir/tools/bkinfo
bkbench=$top_builddir/tools/bkbench
tmp=${TMPDIR:-/tmp}/bkbench-quick.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT

# 4 dtypes x 3 shapes x (forward, backward) x 5 kinds
cases=120

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

echo "1..24"

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

"$bkinfo" --json >"$tmp/info.json" 2>>"$tmp/info.err"
ok $? "bkinfo --json exits 0"
pycheck "$tmp/info.json" "bkinfo --json: host device with 40 supported cells" \
    "[x for x in d['devices'] if x['type'] == 'host' and x['context']['status'] == 'ok' and
      len([c for c in x['support'] if c['status'] == 'ok']) == 40]"
pycheck "$tmp/info.json" "bkinfo --json: the host carries no GPU code and is supported" \
    "[x for x in d['devices'] if x['type'] == 'host' and
      x['moduleArchitectures'] == {'binary': [], 'ptx': [], 'deviceSupported': True}]"

"$bkinfo" --no-such-option >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "bkinfo rejects an unknown option with status 2"

# ---- bkbench, text -------------------------------------------------------
"$bkbench" --quick --device host >"$tmp/bench.txt" 2>"$tmp/bench.err"
status=$?
ok $status "bkbench --quick --device host exits 0"
if [ $status -ne 0 ]; then sed 's/^/# /' "$tmp/bench.err"; fi
grep -Eq '^copy bandwidth .*: [0-9]+\.[0-9] GB/s$' "$tmp/bench.txt" &&
    ! grep -Eq ': 0\.0 GB/s$' "$tmp/bench.txt"
ok $? "bkbench prints a non-zero copy bandwidth"
grep -Eq '^op +kind +dtype +shape +sets +time\(us\) +GB/s +TFLOP/s +roof$' "$tmp/bench.txt"
ok $? "bkbench prints the table header"
rows=$(grep -Ec '^gated-(fwd|bwd) ' "$tmp/bench.txt")
[ "$rows" -eq $cases ]
ok $? "bkbench prints $cases rows (got $rows)"
row='^gated-(fwd|bwd) +[a-z-]+ +(f32|f16|bf16|f64) +[0-9]+x[0-9]+( rs=[0-9]+)?'
row="$row"' +[0-9]+ +[0-9]+\.[0-9]+ +[0-9]+\.[0-9] +- +[0-9]+\.[0-9]%$'
timed=$(grep -Ec "$row" "$tmp/bench.txt")
[ "$timed" -eq $cases ]
ok $? "every row has a time, GB/s and a roofline fraction (got $timed)"
[ "$(grep -c ' rs=' "$tmp/bench.txt")" -eq 40 ]
ok $? "the strided case runs for every op, kind and dtype"
grep -Eq '^  one-time buffer, .* +[0-9]+\.[0-9]+ us per plan' "$tmp/bench.txt" &&
    grep -Eq '^  \.\.\. the same bindings each time: +[0-9]+\.[0-9]+ us per plan' "$tmp/bench.txt" &&
    grep -Eq '^  reusable buffer of 100 plans, .* +[0-9]+\.[0-9]+ us per plan' "$tmp/bench.txt"
ok $? "bkbench prints the launch costs"
too_wide=$(awk 'length > 100' "$tmp/bench.txt" "$tmp/info.txt" | wc -l)
[ "$too_wide" -eq 0 ]
ok $? "text output fits in 100 columns"

# ---- bkbench, JSON -------------------------------------------------------
"$bkbench" --quick --device host --json >"$tmp/bench.json" 2>"$tmp/bench.err"
ok $? "bkbench --quick --device host --json exits 0"
pycheck "$tmp/bench.json" "bkbench --json: $cases timed results on the host" \
    "d['device']['type'] == 'host' and len(d['results']) == $cases and
     all(r['status'] == 'ok' and r['timeUs'] > 0 and r['gbPerS'] > 0 and r['roofline'] > 0
         for r in d['results'])"
pycheck "$tmp/bench.json" "bkbench --json: copy bandwidth and launch costs" \
    "d['copy']['gbPerS'] > 0 and d['launch']['oneTimeUsPerPlan'] > 0 and
     d['launch']['oneTimeSameBindingsUsPerPlan'] > 0 and
     d['launch']['reusableUsPerPlan'] > 0 and d['launch']['reusablePlans'] == 100"

# ---- bkbench, filters and usage errors ---------------------------------
"$bkbench" --quick --device host --op gated-bwd --kind swiglu --dtype bf16 \
    >"$tmp/one.txt" 2>&1
[ $? -eq 0 ] && [ "$(grep -Ec '^gated-bwd +swiglu +bf16 ' "$tmp/one.txt")" -eq 3 ] &&
    [ "$(grep -Ec '^gated-' "$tmp/one.txt")" -eq 3 ]
ok $? "filters leave the 3 shapes of one op, kind and dtype"
"$bkbench" --quick --device host --size-mib 0 >/dev/null 2>&1
[ $? -eq 2 ]
ok $? "bkbench rejects --size-mib 0 with status 2"
"$bkbench" --device nowhere >/dev/null 2>"$tmp/usage.err"
[ $? -eq 2 ] && grep -q "unknown device 'nowhere'" "$tmp/usage.err"
ok $? "bkbench rejects an unknown device with status 2 and says why"
"$bkbench" --quick --device host --dtype i32 >/dev/null 2>&1
[ $? -eq 1 ]
ok $? "bkbench exits 1 when no case matches"

exit 0
