#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds libbk's Debian packages from this source tree, leaving it
# neutral: the tracked files as they are in the working tree are copied to
# a temporary libbk-VERSION/, packaging/debian becomes its debian/, and
# dpkg-buildpackage -us -uc -b runs there (it needs debhelper and the
# Build-Depends of packaging/debian/control).
#
# usage: packaging/build-debs.sh OUTDIR [dpkg-buildpackage options]
# The .deb, .changes and .buildinfo files go to OUTDIR. DEB_BUILD_PROFILES
# and DEB_BUILD_OPTIONS work as for dpkg-buildpackage: the default builds
# without the CUDA backend, DEB_BUILD_PROFILES=pkg.libbk.cuda with it;
# CI builds the default with DEB_BUILD_OPTIONS=nocheck.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUTDIR [dpkg-buildpackage options]}
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
version=$(sed -n '1s/^libbk (\([^)]*\)).*/\1/p' "$src/packaging/debian/changelog")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-debs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/libbk-$version
mkdir "$tree"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$tree")
else # a release tarball: everything but build outputs
    (cd "$src" && tar -cf - --exclude=./debian --exclude='*.o' --exclude='*.lo' --exclude=.libs .) |
        (cd "$tree" && tar -xf -)
fi
rm -rf "$tree/debian"
cp -r "$src/packaging/debian" "$tree/debian"
(cd "$tree" && dpkg-buildpackage -us -uc -b "$@")
for f in "$tmp"/*.deb "$tmp"/*.changes "$tmp"/*.buildinfo; do
    mv "$f" "$out/"
done
echo "build-debs.sh: packages in $out"
