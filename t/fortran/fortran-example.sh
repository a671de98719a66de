#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP wrapper: run the Fortran example examples/fortran_swiglu_steps on the
# host device; it checks its own results and exits non-zero on a mismatch.
top_builddir=${top_builddir:-.}
echo "1..1"
if out=$("$top_builddir/examples/fortran_swiglu_steps" 2>&1); then
    echo "ok 1 - Fortran example fortran_swiglu_steps on host"
    printf '%s\n' "$out" | sed 's/^/# /'
else
    echo "not ok 1 - Fortran example fortran_swiglu_steps on host"
    printf '%s\n' "$out" | sed 's/^/# /'
fi
