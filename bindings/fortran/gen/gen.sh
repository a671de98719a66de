#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Fortran binding from the C headers:
#   gen.sh SRCDIR OUTDIR          bk_constants.f90, bk_types.f90,
#                                 bk_capi.f90 and bk_helpers.f90 (from
#                                 SRCDIR/bindings/fortran/bk_helpers.f90.in)
#   gen.sh --layout SRCDIR OUTDIR fortran_layout_c.c and fortran_layout_f.f90,
#                                 the programs t/fortran/fortran-layout.sh compares
# The headers are those SRCDIR/include/bk/bk.h includes, in its order.
# Needs only sh and a POSIX awk ($AWK, default awk), so the build can run
# it; `make fortran-generate` writes the committed files, `make check`
# compares them with a fresh run (t/fortran/fortran-generated.sh).
set -e
LC_ALL=C; export LC_ALL
layout=no
if [ "$1" = --layout ]; then layout=yes; shift; fi
[ $# -eq 2 ] || { echo "usage: $0 [--layout] SRCDIR OUTDIR" >&2; exit 2; }
src=$1 out=$2
gen=$src/bindings/fortran/gen
AWK=${AWK:-awk}
mkdir -p "$out"
headers=$(sed -n 's|^#include <\(bk/[A-Za-z0-9_]*\.h\)>.*|'"$src"'/include/\1|p' "$src/include/bk/bk.h")
decls=$out/bk-declarations.tmp
trap 'rm -f "$decls" "$out"/*.gen-tmp' EXIT
$AWK -f "$gen/parse.awk" $headers > "$decls"

# part OUTPUT SCRIPT [ARGS...]: one file, written only when complete.
part() {
    o=$1; shift
    $AWK -f "$gen/common.awk" "$@" > "$out/$o.gen-tmp"
    mv -f "$out/$o.gen-tmp" "$out/$o"
}
if [ $layout = yes ]; then
    part fortran_layout_c.c -v lang=c -f "$gen/layout.awk" "$decls"
    part fortran_layout_f.f90 -v lang=f -f "$gen/layout.awk" "$decls"
else
    part bk_constants.f90 -f "$gen/constants.awk" "$decls"
    part bk_types.f90 -f "$gen/types.awk" "$decls"
    part bk_capi.f90 -f "$gen/capi.awk" "$decls"
    part bk_helpers.f90 -f "$gen/helpers.awk" "$decls" "$src/bindings/fortran/bk_helpers.f90.in"
fi
