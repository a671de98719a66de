#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# CI: libbk's Debian packages (packaging/). Builds them without the CUDA
# backend and without re-running the tests (the test stage ran them),
# checks them with lintian (no errors), installs them, builds and runs the
# installed-consumer programs (make installcheck in a build tree configured
# with the packages' paths: pkg-config bk, CMake bk::bk, pkg-config
# bk-fortran, CMake bk::fortran) against the installed packages, and
# removes them again. Needs root (apt-get) and debhelper, lintian, cmake.
set -uo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bk-ci-debs.XXXXXX")
trap 'rm -rf "$work"' EXIT
packages="libbk0 libbk-dev libbk-fortran0 libbk-fortran-dev bk-tools"

echo "packages: dpkg-buildpackage (default profile: no CUDA backend; nocheck)"
if ! DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
    packaging/build-debs.sh "$work/debs" >"$work/build.log" 2>&1; then
    tail -60 "$work/build.log"
    echo "packages: dpkg-buildpackage failed" >&2
    exit 1
fi
ls "$work/debs"

echo "packages: lintian"
lintian --fail-on error --tag-display-limit 0 "$work"/debs/*.changes || {
    echo "packages: lintian reports errors" >&2
    exit 1
}

echo "packages: installing"
debs=
for p in $packages; do
    debs="$debs $work/debs/${p}_*.deb"
done
# shellcheck disable=SC2086 # one path per package
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $debs >"$work/apt.log" 2>&1 || {
    cat "$work/apt.log"
    echo "packages: installing them failed" >&2
    exit 1
}

echo "packages: the installed consumers against the installed packages"
fmoddir=$(dirname "$(dpkg -L libbk-fortran-dev | grep '/bk\.mod$')")
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
# A fresh copy of the sources (the CI tree is configured in place).
mkdir "$work/src" "$work/ic"
(cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$work/src") &&
    (cd "$work/src" && autoreconf -fi >/dev/null 2>&1) || {
    echo "packages: could not copy and bootstrap the sources" >&2
    exit 1
}
(cd "$work/ic" &&
    "$work/src/configure" --prefix=/usr --libdir="/usr/lib/$multiarch" --without-cuda \
        --enable-fortran --with-fmoddir="$fmoddir" >configure.log 2>&1 &&
    make installcheck)
rc=$?
bkinfo >/dev/null || rc=1

# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq $packages >/dev/null 2>&1
[ $rc -eq 0 ] || { echo "packages: the installed consumers failed" >&2; exit 1; }
echo "packages: ok"
