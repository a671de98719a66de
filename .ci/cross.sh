#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# CI: the host backend on other Debian architectures, built with their
# cross compilers and tested under qemu-user: arm64 (NEON, little endian),
# s390x (big endian; GCC evaluates float as double there in ISO C mode),
# ppc64el (VSX), armhf (32-bit ARM, unsigned char) and i386 (32-bit
# pointers and longs, the x87's long double intermediates; run natively
# through its loader where the kernel runs 32-bit programs, else under
# qemu). libbk without the GPU backend and Fortran, static (libtool's
# wrapper scripts would start the programs themselves), warnings as
# errors, `make check` with the programs run through BK_TEST_RUNNER.
# Needs root (apt-get).
# BK_CROSS_ARCHES narrows the list (GNU triplet CPU names: aarch64 s390x
# powerpc64le arm i686 riscv64). BK_CI_NO_APT=1 skips apt-get (a machine
# that has the packages `cross.sh --packages` lists).
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
# The slowest under qemu first (ppc64el's floating point is the most
# costly to emulate), so that the last to finish is a short one.
arches=${BK_CROSS_ARCHES:-powerpc64le aarch64 s390x arm i686}

# Each architecture's GNU triplet, Debian's name for it and qemu's.
triplet() {
    case $1 in arm) echo arm-linux-gnueabihf ;; *) echo "$1-linux-gnu" ;; esac
}
debian_arch() {
    case $1 in
    aarch64) echo arm64 ;; powerpc64le) echo ppc64el ;; arm) echo armhf ;; i686) echo i386 ;;
    *) echo "$1" ;;
    esac
}
qemu_arch() {
    case $1 in powerpc64le) echo ppc64le ;; i686) echo i386 ;; *) echo "$1" ;; esac
}
# How the tests start a program of architecture $1: its own loader where
# this machine runs its programs (i386 on x86-64: much faster than qemu's
# x87 emulation), else qemu-user.
runner_for() {
    local root=/usr/$(triplet "$1") loader
    loader=$root/lib/ld-linux.so.2
    if [ "$1" = i686 ] && [ -x "$loader" ] &&
        "$loader" --library-path "$root/lib" "$root/lib/libc.so.6" >/dev/null 2>&1; then
        echo "$loader --library-path $root/lib"
    else
        echo "qemu-$(qemu_arch "$1") -L $root"
    fi
}

# cross_one ARCH: configure, build and `make check` for ARCH in
# $work/ARCH, its logs there; ends with its exit status. Run by the make
# below: the makes here take their jobs from its job slots.
cross_one() {
    local a=$1 build=$work/$1 runner
    runner=$(runner_for "$a")
    mkdir -p "$build" && cd "$build" &&
        "$src/configure" --build="$build_triplet" --host="$(triplet "$a")" --without-cuda --without-blas \
            --disable-fortran --enable-static --disable-shared --enable-werror \
            >configure.log 2>&1 &&
        make >build.log 2>&1 &&
        make check BK_TEST_RUNNER="$runner" >check.log 2>&1
}
if [ "${1:-}" = --one ]; then
    start=$(date +%s)
    cross_one "$2"
    rc=$?
    echo "$rc $(($(date +%s) - start))" >"$work/$2.status"
    exit 0
fi

pkgs=qemu-user
for a in $arches; do
    pkgs="$pkgs gcc-$(triplet "$a") libc6-dev-$(debian_arch "$a")-cross"
done
if [ "${1:-}" = --packages ]; then
    echo "$pkgs"
    exit 0
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bk-ci-cross.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A source tree of its own to build out of, so that the checkout may be
# built at the same time: the tracked files of a git checkout,
# bootstrapped; else (a tarball) the distribution tree where it is
# configured in place, or the tree itself.
if git ls-files --error-unmatch configure.ac >/dev/null 2>&1; then
    src=$work/src
    mkdir "$src" && git ls-files -z | xargs -0 cp --parents -t "$src" &&
        (cd "$src" && autoreconf -fi) >"$work/bootstrap.log" 2>&1 ||
        { tail -20 "$work/bootstrap.log"; exit 1; }
elif [ -f config.status ]; then
    make distdir distdir="$work/src" >"$work/distdir.log" 2>&1 || { tail -20 "$work/distdir.log"; exit 1; }
    src=$work/src
else
    [ -x configure ] || autoreconf -fi || exit 1
    src=$top
fi
build_triplet=$(sh "$src/build-aux/config.guess")

if [ "${BK_CI_NO_APT:-0}" = 1 ]; then
    echo "cross: BK_CI_NO_APT=1: using the packages installed"
else
    echo "cross: installing $pkgs"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $pkgs \
        >"$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; exit 1; }
fi

# One make runs every architecture (cross_one, through --one), its job
# slots, one a core, shared by all their makes: tests of one take the
# cores another no longer needs, so no core idles while tests are left.
cross_sh=$top/.ci/cross.sh
export work src build_triplet cross_sh
t0=$(date +%s)
# shellcheck disable=SC2016 # $@ and $$cross_sh are make's
printf 'all: %s\n%s:\n\t+@bash "$$cross_sh" --one $@\n.PHONY: all %s\n' \
    "$arches" "$arches" "$arches" >"$work/Makefile"
make --no-print-directory -j"$(nproc)" -C "$work" all

status=0
for a in $arches; do
    build=$work/$a
    read -r rc seconds <"$work/$a.status" 2>/dev/null || rc=1 seconds=?
    totals=$(sh "$top/.ci/tap-totals.sh" "$build")
    echo "cross: $a: $totals ($seconds s)"
    if [ "$rc" -ne 0 ]; then
        status=1
        for f in configure build check; do
            [ -s "$build/$f.log" ] && { echo "--- $a $f.log"; grep -v '^PASS:' "$build/$f.log" | tail -30; }
        done
        find "$build" -name '*.log' -path '*/t/*' -exec grep -l 'not ok\|ERROR' {} + 2>/dev/null |
            head -5 | while read -r f; do echo "--- $f"; grep -v '^ok' "$f" | head -30; done
    fi
done
echo "cross: every architecture in $(($(date +%s) - t0)) s"
exit $status
