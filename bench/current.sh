#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Writes bench/CURRENT.md, the current results, from the measurement runs
# under bench/data/ (one JSON file a run: bkbench's --json output, the
# peers' figures and the run's date, device and commit; bench/data/README.md
# gives the format). Each op family's table comes from the newest run that
# has that family, so a new measurement is a new data file and a rerun:
#
#   bench/current.sh            # rewrites bench/CURRENT.md
#   bench/current.sh --stdout   # prints it instead (t/bench-current.sh diffs it)
#
# POSIX sh and awk only (no python3), so that make check can run it anywhere.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=$src/bench/CURRENT.md
case ${1-} in
--stdout) out=- ;;
'') ;;
*) echo "usage: bench/current.sh [--stdout]" >&2; exit 2 ;;
esac
set -- "$src"/bench/data/*.json
[ -f "$1" ] || { echo "bench/current.sh: no bench/data/*.json" >&2; exit 1; }

generate() {
LC_ALL=C awk -f "$src/bench/json-flat.awk" -f "$src/bench/current-tables.awk" "$@"
}

if [ "$out" = - ]; then
    generate "$@"
else
    generate "$@" > "$out.tmp"
    mv "$out.tmp" "$out"
fi
