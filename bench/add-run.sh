#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Adds a measurement run to bench/data/ and regenerates bench/CURRENT.md:
#
#   bench/add-run.sh [--attention-decode-peers FILE] [--decode-step-peers FILE] \
#       [--convert-peers FILE] [--gated-peers FILE] NAME BKBENCH.json \
#       [ATTENTION-PEERS.json]
#
# BKBENCH.json is bkbench's --json (or --json-file) output, kept whole;
# ATTENTION-PEERS.json, when given, bench/attention-peers.py's --json
# report, kept whole too, as are the --json lists of
# bench/attention-decode-peers.py, bench/decode-step-peers.py,
# bench/convert-peers.py and bench/gated-peers.py. The run's date is
# today's (UTC) and its commit the source tree's HEAD unless BK_RUN_DATE
# and BK_RUN_COMMIT say otherwise; BK_RUN_DEVICE describes the device
# (driver, CUDA, peers' versions), else bkbench's device name stands;
# BK_RUN_NOTE, when set, is the run's note (printed under its tables). The
# file is bench/data/DATE-NAME.json; bench/data/README.md gives its format.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
usage() {
    echo "usage: bench/add-run.sh [--attention-decode-peers FILE] [--decode-step-peers FILE]" >&2
    echo "                        [--convert-peers FILE] [--gated-peers FILE] NAME BKBENCH.json" >&2
    echo "                        [ATTENTION-PEERS.json]" >&2
    exit 2
}
decode_peers='' step_peers='' convert_peers='' gated_peers=''
while [ $# -gt 0 ]; do
    case $1 in
    --attention-decode-peers) [ $# -ge 2 ] || usage; decode_peers=$2; shift 2 ;;
    --decode-step-peers) [ $# -ge 2 ] || usage; step_peers=$2; shift 2 ;;
    --convert-peers) [ $# -ge 2 ] || usage; convert_peers=$2; shift 2 ;;
    --gated-peers) [ $# -ge 2 ] || usage; gated_peers=$2; shift 2 ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] && [ $# -le 3 ] || usage
for f in "$decode_peers" "$step_peers" "$convert_peers" "$gated_peers"; do
    [ -z "$f" ] || [ -f "$f" ] || { echo "bench/add-run.sh: no file $f" >&2; exit 1; }
done
name=$1 bk=$2 peers=${3-}
date=${BK_RUN_DATE:-$(date -u +%Y-%m-%d)}
commit=${BK_RUN_COMMIT:-$(git -C "$src" rev-parse --short HEAD)}
out=$src/bench/data/$date-$name.json
[ ! -e "$out" ] || { echo "bench/add-run.sh: $out exists" >&2; exit 1; }
grep -q '"tool": "bkbench"' "$bk" || { echo "bench/add-run.sh: $bk is not bkbench's JSON" >&2; exit 1; }

# A JSON string of $1: backslashes and quotes escaped.
str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }

{
    printf '{\n  "format": 1, "date": %s, "commit": %s, "origin": "measured",\n' \
        "$(str "$date")" "$(str "$commit")"
    [ -z "${BK_RUN_DEVICE-}" ] || printf '  "device": %s,\n' "$(str "$BK_RUN_DEVICE")"
    [ -z "${BK_RUN_NOTE-}" ] || printf '  "note": %s,\n' "$(str "$BK_RUN_NOTE")"
    printf '  "bkbench": '
    cat "$bk"
    if [ -n "$peers" ]; then
        printf ',\n  "attentionPeers": '
        cat "$peers"
    fi
    if [ -n "$decode_peers" ]; then
        printf ',\n  "attentionDecodePeers": '
        cat "$decode_peers"
    fi
    if [ -n "$step_peers" ]; then
        printf ',\n  "decodeStepPeers": '
        cat "$step_peers"
    fi
    if [ -n "$convert_peers" ]; then
        printf ',\n  "convertPeers": '
        cat "$convert_peers"
    fi
    if [ -n "$gated_peers" ]; then
        printf ',\n  "gatedPeers": '
        cat "$gated_peers"
    fi
    printf ',\n  "peers": []\n}\n'
} > "$out.tmp"
mv "$out.tmp" "$out"
sh "$src/bench/current.sh"
echo "bench/add-run.sh: wrote $out and bench/CURRENT.md"
