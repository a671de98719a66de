#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP: the Fortran module binds the whole public C API.
# - every symbol exported by lib/libbk.map, and every BK_API function of
#   the public headers, has exactly one bind(c, name='...') interface in
#   bindings/fortran/bk_capi.f90, and no interface names anything else;
# - a program that `use bk` can name each of them as a procedure (so the
#   Fortran name is the C name and module bk re-exports it);
# - with gfortran, the pure-interface modules (constants, types, C
#   interfaces) compile as standard Fortran 2008.
LC_ALL=C; export LC_ALL
top_srcdir=$(cd "${top_srcdir:-.}" && pwd) || exit 1
top_builddir=$(cd "${top_builddir:-.}" && pwd) || exit 1
capi=$top_srcdir/bindings/fortran/bk_capi.f90
env=$top_builddir/bindings/fortran/fortran-env.sh
moddir=$top_builddir/bindings/fortran
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-fortran-coverage.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
[ -r "$env" ] || { echo "Bail out! $env missing (make check writes it)"; exit 1; }
. "$env"

# Exported: the global: names of the version script, and the header's BK_API functions.
sed -n '/global:/,/local:/{s/^[ \t]*\(bk[A-Za-z0-9_]*\);.*/\1/p;}' "$top_srcdir/lib/libbk.map" > "$tmp/map"
sed -n 's/^BK_API[^(]*[ *]\(bk[A-Za-z0-9_]*\)(.*/\1/p' "$top_srcdir"/include/bk/*.h > "$tmp/header"
sort -u "$tmp/map" "$tmp/header" > "$tmp/api"
grep -o "bind(c, *name *= *'[A-Za-z0-9_]*')" "$capi" | sed "s/.*'\(.*\)'.*/\1/" | sort > "$tmp/bound"

n=$(wc -l < "$tmp/api")
echo "1..$((n + 4))"
i=0
for f in $(cat "$tmp/api"); do
    i=$((i + 1))
    c=$(grep -c -x "$f" "$tmp/bound")
    if [ "$c" -eq 1 ]; then
        echo "ok $i - $f has a bind(c) interface"
    else
        echo "not ok $i - $f has $c bind(c) interfaces (want 1)"
    fi
done

i=$((i + 1))
extra=$(sort -u "$tmp/bound" | comm -13 "$tmp/api" -)
if [ -z "$extra" ]; then
    echo "ok $i - every interface binds an exported function"
else
    echo "not ok $i - interfaces bind names libbk does not export"
    printf '%s\n' "$extra" | sed 's/^/# /'
fi

# Name every function through module bk; compiles only if each exists.
i=$((i + 1))
{
    echo "program coverage"
    echo "  use bk"
    echo "  implicit none"
    k=0
    for f in $(cat "$tmp/api"); do
        k=$((k + 1))
        echo "  procedure($f), pointer :: p$k => null()"
    done
    echo "  print *, associated(p1)"
    echo "end program coverage"
} > "$tmp/coverage.f90"
if (cd "$tmp" && $FC $FCFLAGS ${FC_MODINC}"$moddir" -c coverage.f90) \
        > "$tmp/log" 2>&1; then
    echo "ok $i - a program using bk names all $n functions"
else
    echo "not ok $i - a program using bk cannot name every function"
    sed 's/^/# /' "$tmp/log"
fi

# The Fortran names of the handle, struct and callback types are C's.
i=$((i + 1))
types=$(sed -n 's/^typedef struct [A-Za-z0-9_]* \*\(Bk[A-Za-z0-9]*\);/\1/p; s/^typedef struct \(Bk[A-Za-z0-9]*\) {.*/\1/p; s/^typedef [^(]*(\*\(PFN_bk[A-Za-z0-9]*\)).*/\1/p' \
    "$top_srcdir"/include/bk/*.h | sort -u)
{
    echo "program types"
    echo "  use bk"
    echo "  implicit none"
    for t in $types; do
        case $t in
            PFN_*) echo "  procedure($t), pointer :: v_$t => null()" ;;
            *) echo "  type($t) :: v_$t" ;;
        esac
    done
    echo "end program types"
} > "$tmp/types.f90"
if (cd "$tmp" && $FC $FCFLAGS ${FC_MODINC}"$moddir" -c types.f90) \
        > "$tmp/log" 2>&1; then
    echo "ok $i - module bk has all $(echo $types | wc -w) handle, struct and callback types"
else
    echo "not ok $i - module bk lacks a type of the headers"
    sed 's/^/# /' "$tmp/log"
fi

i=$((i + 1))
case $($FC --version 2>&1 | sed 1q) in
*"GNU Fortran"*)
    if (cd "$tmp" && for m in bk_constants bk_types bk_capi; do
            $FC -std=f2008 -Wall -Werror -c "$top_srcdir/bindings/fortran/$m.f90" || exit 1
        done) > "$tmp/log" 2>&1; then
        echo "ok $i - constants, types and interfaces are standard Fortran 2008"
    else
        echo "not ok $i - the pure-interface modules are not standard Fortran 2008"
        sed 's/^/# /' "$tmp/log"
    fi ;;
*) echo "ok $i # SKIP the Fortran 2008 check needs gfortran" ;;
esac
