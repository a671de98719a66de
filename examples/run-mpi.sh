#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP wrapper: the MPI examples (examples/mpi_swiglu, and mpi_swiglu_f
# when Fortran is built) on two ranks with $MPIRUN; the ranks pick their
# devices themselves (the host without a GPU). Skips when configure found
# no MPI.
dir=${top_builddir:-.}/examples
progs=
for p in mpi_swiglu mpi_swiglu_f; do
    [ -x "$dir/$p" ] && progs="$progs $p"
done
if [ -z "${MPIRUN:-}" ] || [ -z "$progs" ]; then
    echo "1..0 # SKIP no MPI (configure found no mpicc or mpirun)"
    exit 0
fi
# The sanitizer runs check libbk; Open MPI's own allocations would be
# reported as leaks there.
if [ -n "${ASAN_OPTIONS:-}${UBSAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
    echo "1..0 # SKIP a sanitizer run (MPI's own leaks are not libbk's)"
    exit 0
fi
# Open MPI refuses root unless told, and a CI machine may have fewer cores
# than ranks.
flags="--oversubscribe"
[ "$(id -u)" = 0 ] && flags="$flags --allow-run-as-root"
n=0
for p in $progs; do n=$((n + 1)); done
echo "1..$n"
i=0
for p in $progs; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    if out=$(OMPI_MCA_rmaps_base_oversubscribe=1 "$MPIRUN" $flags -np 2 "$dir/$p" 2>&1); then
        echo "ok $i - $p on 2 ranks"
    else
        echo "not ok $i - $p on 2 ranks"
    fi
    printf '%s\n' "$out" | sed 's/^/# /'
done
