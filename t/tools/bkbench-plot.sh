#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bkbench's noise and plots as a user meets them: every text row of every
# table shows its spread (the "-a/+b%" column, or min and max), the JSON
# of the same run has min <= median <= max for every result, the header
# states what the roof is, the busy-machine warning appears exactly when
# the JSON counts wide rows, --plot writes an SVG that parses as XML with
# one labelled bar per result that has a ratio, and the installed pages
# name no script of the source tree.
# Environment (from make check): top_builddir, srcdir, BK_TEST_RUNNER.
: "${top_builddir:=.}"
: "${srcdir:=.}"
bkbench=$top_builddir/tools/bkbench/bkbench
if [ -n "${BK_TEST_RUNNER:-}" ]; then
    echo "1..0 # SKIP bkbench's timed runs under BK_TEST_RUNNER ($BK_TEST_RUNNER)"
    exit 0
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "1..0 # SKIP no python3 to read the JSON and the SVG"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bkbench-plot.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "1..9"
n=0
check() { # check DESCRIPTION COMMAND...: one TAP line
    n=$((n + 1))
    what=$1
    shift
    if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; fi
}

"$bkbench" --quick --device host --quiet --dtype bf16 \
    --op gated-fwd,convert,gemm,sparse24,w4a16,attention-fwd,attention-decode,decode-step \
    --json-file "$tmp/run.json" --plot "$tmp/run.svg" >"$tmp/run.txt" 2>"$tmp/run.err"
check "bkbench --quick --plot --json-file exits 0" test $? -eq 0 ||
    sed 's/^/# /' "$tmp/run.err"

# The rows of the five tables with a spread column, and those with it.
rows=$(grep -Ec '^(gated-fwd|convert|gemm|sparse24|w4a16|attention-fwd) ' "$tmp/run.txt")
spread=$(grep -Ec '^(gated-fwd|convert|gemm|sparse24|w4a16|attention-fwd) .* -[0-9]+/\+[0-9]+% ' \
         "$tmp/run.txt")
headers=$(grep -Ec '^op .* (re )?spread ' "$tmp/run.txt")
check "every row of the 6 tables has its spread ($spread of $rows), under 6 headers ($headers)" \
    test "$rows" -gt 0 -a "$rows" -eq "$spread" -a "$headers" -eq 6

check "the header defines the roof and says the copy is past the last-level cache" \
    grep -q "^roof: an op's bytes read + written per second over that copy bandwidth" \
    "$tmp/run.txt"

python3 - "$tmp/run.json" >"$tmp/spread.out" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
keys = {"results": "timeUs usMin usMax", "convert": "timeUs usMin usMax", "gemm": "reusableUs reusableUsMin reusableUsMax",
        "sparse24": "sparseUs sparseUsMin sparseUsMax", "w4a16": "us usMin usMax",
        "attention": "us usMin usMax", "attentionDecode": "us usMin usMax",
        "decodeStep": "us usMin usMax"}
bad = [(k, r.get("op")) for k, ks in keys.items() for r in d[k] if r["status"] == "ok"
       for med, lo, hi in [ks.split()] if not 0 < r[lo] <= r[med] <= r[hi]]
count = sum(1 for k in keys for r in d[k] if r["status"] == "ok")
print("# %d results, %d without min <= median <= max %s" % (count, len(bad), bad[:3]))
sys.exit(0 if count > 0 and not bad and d["copy"]["pastCache"] is True else 1)
PY
check "JSON: every result has min <= median <= max; the copy is past the cache" test $? -eq 0 ||
    cat "$tmp/spread.out"

wide=$(python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["noise"]; print(n["wideRows"] if 0 <= n["wideRows"] <= n["rows"] and n["rows"] > 0 else -1)' "$tmp/run.json")
if [ "$wide" -gt 0 ]; then
    grep -q "^bkbench: warning: $wide of [0-9]* rows spread wide" "$tmp/run.txt"
else
    [ "$wide" -eq 0 ] && ! grep -q '^bkbench: warning' "$tmp/run.txt"
fi
check "the busy-machine warning appears exactly when rows spread wide ($wide)" test $? -eq 0

python3 - "$tmp/run.svg" "$tmp/run.json" >"$tmp/svg.out" 2>&1 <<'PY'
import json, sys
import xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
svg = ET.parse(sys.argv[1]).getroot()
d = json.load(open(sys.argv[2]))
def first(r, *keys):
    for k in keys:
        o = r
        for part in k.split("."):
            o = o.get(part) if isinstance(o, dict) else None
        if o is not None:
            return o
    return None
ratio = {"results": ("roofline",), "convert": ("roofline",), "gemm": ("reusableVsCublasLt", "peakFraction"),
         "sparse24": ("cusparseLt.sparseVsCusparseLt", "speedup"), "w4a16": ("ofFloor",),
         "attentionDecode": ("roofline",), "decodeStep": ("ofFloor",)}
want = [first(r, *ks) for k, ks in ratio.items() for r in d[k] if r["status"] == "ok"]
want = [v for v in want if v is not None]
bars = [e for e in svg.iter(ns + "rect") if e.get("class") == "bar"]
labels = [e.text for e in svg.iter(ns + "text") if e.get("class") == "label"]
values = [e.text for e in svg.iter(ns + "text") if e.get("class") == "value"]
got = sorted(round(float(v[:-1]), 1) for v in values)
print("# %d bars, %d expected" % (len(bars), len(want)))
good = (svg.tag == ns + "svg" and len(bars) == len(want) > 0 and len(labels) == len(bars) and
        all(l and l.strip() for l in labels) and all(v.endswith("%") for v in values) and
        got == sorted(round(100 * v, 1) for v in want) and
        all(float(b.get("width")) >= 0 for b in bars))
sys.exit(0 if good else 1)
PY
check "--plot: an SVG that parses as XML, one labelled bar per result with a ratio" \
    test $? -eq 0 || cat "$tmp/svg.out"

"$bkbench" --quick --device host --op gated-fwd --kind glu --dtype f32 \
    --plot "$tmp/no/such/dir/x.svg" >/dev/null 2>"$tmp/err.txt"
check "--plot into a missing directory exits 1 and names the option" \
    sh -c "test $? -eq 1 && grep -q -- '--plot' '$tmp/err.txt'"

"$bkbench" --plot= >/dev/null 2>"$tmp/err.txt"
check "--plot with no file name is a usage error (status 2)" \
    sh -c "test $? -eq 2 && grep -q -- '--plot needs a file name' '$tmp/err.txt'"

# The installed pages (every page under man/) name no script that only the
# source tree has.
! grep -El 'bench/[A-Za-z0-9_-]+\.(py|sh)' "$srcdir"/man/*.[137] >"$tmp/pages.txt"
check "installed man pages name no bench/ script" test $? -eq 0 || sed 's/^/# /' "$tmp/pages.txt"
