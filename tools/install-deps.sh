#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs what building and testing libbk needs on Debian 12 (or a
# Debian-like system with apt-get): directly when run as root, as in a
# fresh container without sudo, else through sudo. Extra package names
# may follow (CI adds the ones its checks use).
#
#   tools/install-deps.sh [PACKAGE...]
set -eu
packages="autoconf automake libtool make gcc gfortran mandoc groff-base pkg-config libopenblas-dev"
if [ "$(id -u)" = 0 ]; then
    run=
elif command -v sudo >/dev/null 2>&1; then
    run=sudo
else
    echo "install-deps.sh: not root and sudo is not installed: run this as root" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps.sh: no apt-get here; install: $packages $*" >&2
    exit 1
fi
# sudo drops the environment: pass the frontend on the command line.
$run env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    $packages "$@" >/dev/null
echo "install-deps.sh: installed $packages${1:+ $*}"
