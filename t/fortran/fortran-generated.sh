#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP: the committed Fortran binding is what bindings/fortran/gen/gen.sh
# makes from the headers now (after a header change, run
# `make fortran-generate`), and, with gfortran, its pure-interface modules
# are standard Fortran 2008.
LC_ALL=C; export LC_ALL
top_srcdir=$(cd "${top_srcdir:-.}" && pwd) || exit 1
top_builddir=$(cd "${top_builddir:-.}" && pwd) || exit 1
env=$top_builddir/bindings/fortran/fortran-env.sh
out=$top_builddir/bindings/fortran/generated
[ -r "$env" ] || { echo "Bail out! $env missing (make check writes it)"; exit 1; }
. "$env"
files="bk_constants.f90 bk_types.f90 bk_capi.f90 bk_helpers.f90"

rm -rf "$out"
if ! sh "$top_srcdir/bindings/fortran/gen/gen.sh" "$top_srcdir" "$out" 2> "$out.log"; then
    echo "Bail out! bindings/fortran/gen/gen.sh failed: $(cat "$out.log")"
    exit 1
fi
echo "1..5"
i=0
for f in $files; do
    i=$((i + 1))
    if cmp -s "$top_srcdir/bindings/fortran/$f" "$out/$f"; then
        echo "ok $i - bindings/fortran/$f is what the headers give"
    else
        echo "not ok $i - bindings/fortran/$f differs from what the headers give (make fortran-generate)"
        diff -u "$top_srcdir/bindings/fortran/$f" "$out/$f" | sed -n '1,60s/^/# /p'
    fi
done

i=$((i + 1))
case $($FC --version 2>&1 | sed 1q) in
*"GNU Fortran"*)
    if (cd "$out" && for m in bk_constants bk_types bk_capi; do
            $FC -std=f2008 -Wall -Werror -c "$m.f90" || exit 1
        done) > "$out.log" 2>&1; then
        echo "ok $i - constants, types and interfaces are standard Fortran 2008"
    else
        echo "not ok $i - the pure-interface modules are not standard Fortran 2008"
        sed 's/^/# /' "$out.log"
    fi ;;
*) echo "ok $i # SKIP the Fortran 2008 check needs gfortran" ;;
esac
rm -rf "$out" "$out.log"
