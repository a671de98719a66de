#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# CI, after the main test run (.ci/run): the reliability checks of
# CONTRIBUTING.md on a clean Debian 12 machine without a GPU.
#   1. ASan + UBSan build (gcc), whole `make check`, with the libFuzzer
#      campaign (clang) included;
#   2. plain -g -O1 build: whole suite under valgrind memcheck, the thread
#      test under helgrind, and the ABI check against abi/libbk.abi;
#   3. ThreadSanitizer build (clang): the thread-safety test.
# Installs what it needs with apt-get, prints every command it runs and a
# summary, and exits non-zero when a check failed. Budget: ~12 minutes on
# 2 cores. BK_CI_WORK sets the work directory (default _ci-reliability);
# BK_CI_NO_APT=1 skips apt-get (a machine that has the tools
# `reliability.sh --packages` lists);
# BK_CI_CONFIGURE_FLAGS adds flags to every configure (e.g. --without-cuda).
set -uo pipefail
cd "$(dirname "$0")/.."
packages="autoconf automake libtool make gcc gfortran pkg-config libopenblas-dev binutils file
    mandoc groff-base clang libclang-rt-14-dev valgrind abigail-tools"
if [ "${1:-}" = --packages ]; then
    echo $packages
    exit 0
fi
top=$PWD
work=${BK_CI_WORK:-$top/_ci-reliability}
jobs=$(nproc 2>/dev/null || echo 2)
declare -a results=()
failed=0

# fd 3 is the log, so each command is shown even when its output goes to a file.
exec 3>&1
log() { printf '\n=== %s\n' "$*"; }
run() { echo "+ $*" >&3; "$@"; }
# step NAME COMMAND...: runs a check, times it, records PASS or FAIL.
step() {
    local name=$1 start=$SECONDS rc
    shift
    log "$name"
    "$@"
    rc=$?
    if [ $rc -eq 0 ]; then
        results+=("PASS  $name ($((SECONDS - start)) s)")
    else
        results+=("FAIL  $name ($((SECONDS - start)) s, status $rc)")
        failed=1
    fi
    return 0
}
# Show the logs of failing tests of a build directory.
show_failures() {
    grep -l -E '^(not ok|Bail out)|^ERROR:|^FAIL:' $(find "$1" -name '*.log' -path '*/t/*') \
        2>/dev/null | while read -r f; do echo "--- $f"; tail -60 "$f"; done
}

log "installing the reliability tools"
export DEBIAN_FRONTEND=noninteractive
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
if [ "${BK_CI_NO_APT:-0}" = 1 ]; then
    echo "BK_CI_NO_APT=1: using the tools already installed"
else
    run $SUDO apt-get update -qq || exit 1
    # shellcheck disable=SC2086 # one word a package
    run $SUDO apt-get install -y -qq --no-install-recommends $packages >/dev/null || exit 1
fi

for tool in gcc clang valgrind abidiff; do
    printf '%-9s %s\n' "$tool" "$($tool --version 2>&1 | head -n 1)"
done

# A pristine source tree: the checkout itself when it is not configured in
# place, else its distribution tree (an in-place configure forbids VPATH).
log "source tree"
rm -rf "$work" && mkdir -p "$work" || exit 1
if [ -f config.status ]; then
    run make distdir distdir="$work/src" >/dev/null || exit 1
    src=$work/src
else
    [ -x configure ] || run autoreconf -fi || exit 1
    src=$top
fi
echo "sources: $src"

# The kernels' fatbins do not depend on the C compiler or its flags: a
# build here whose CUDA settings match those of the checkout's own build
# (CI's README build, which compiles every kernel) takes that build's
# fatbins instead of running nvcc again. Copied after configure, they are
# newer than their sources, so make keeps them.
cuda_settings() {
    grep -h -E '^#define BK_HAVE_CUDA |^(NVCC|PTXAS|FATBINARY|NVCCFLAGS|BK_CUDA_ARCHS|BK_CUDA_PTX_ARCHS|BK_CUDA_MODULE_NAMES) =' \
        "$1/config.h" "$1/Makefile" 2>/dev/null
}
reuse_fatbins() {
    local dir=$1 settings
    settings=$(cuda_settings "$dir")
    grep -q '^#define BK_HAVE_CUDA 1' <<<"$settings" &&
        [ "$settings" = "$(cuda_settings "$top")" ] && ls "$top"/kernels/*.fatbin >/dev/null 2>&1 ||
        return 0
    mkdir -p "$dir/kernels" &&
        run cp "$top"/kernels/*.fatbin "$top"/kernels/*.fatbin.resources "$dir/kernels/"
}

# configure_build DIR CONFIGURE-ARGS...: configure and build in DIR.
configure_build() {
    local dir=$1
    shift
    mkdir -p "$dir" && cd "$dir" || return 1
    run "$src/configure" "$@" ${BK_CI_CONFIGURE_FLAGS:-} >configure.log 2>&1 ||
        { tail -40 configure.log; return 1; }
    grep -E '^configure: reliability checks' configure.log
    reuse_fatbins "$dir" || return 1
    run make -j"$jobs" >build.log 2>&1 || { tail -40 build.log; return 1; }
}

# 1. ASan + UBSan. A request the C allocator cannot meet must return NULL,
# as in a normal build, instead of stopping the program.
asan() {
    configure_build "$work/asan" --enable-sanitizers --enable-werror || return 1
    export ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1:abort_on_error=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    run make -j"$jobs" check >check.log 2>&1
    local rc=$?
    grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' check.log
    grep -E '^(PASS|FAIL|ERROR): t/reliability/fuzz-campaign' check.log
    [ $rc -eq 0 ] || show_failures "$work/asan"
    unset ASAN_OPTIONS UBSAN_OPTIONS
    return $rc
}

# 2. valgrind memcheck over the whole suite, and the ABI check (needs -g).
memcheck_build() {
    configure_build "$work/plain" CFLAGS='-g -O1' --enable-werror --disable-libfuzzer
}
memcheck() {
    cd "$work/plain" || return 1
    run make -j"$jobs" check-valgrind >check.log 2>&1
    local rc=$?
    grep -E '^# (TOTAL|PASS|SKIP|FAIL|ERROR)' check.log
    [ $rc -eq 0 ] || show_failures "$work/plain"
    return $rc
}
helgrind() {
    cd "$work/plain" || return 1
    BK_TEST_UNDER_VALGRIND=1 run ./libtool --mode=execute valgrind --tool=helgrind -q \
        --error-exitcode=9 ./t/reliability/threads >helgrind.log 2>&1
    local rc=$?
    cat helgrind.log
    [ $rc -eq 0 ] && ! grep -q '^not ok' helgrind.log
}
abi() {
    cd "$work/plain" || return 1
    run make abi-check
}

# 3. ThreadSanitizer: libbk and the thread test only, without OpenMP and
# without a BLAS (libgomp and the BLAS's threads are not instrumented and
# would give false reports).
tsan() {
    mkdir -p "$work/tsan" && cd "$work/tsan" || return 1
    run "$src/configure" CC=clang CFLAGS='-g -O1' --enable-sanitizers=thread \
        --disable-openmp --without-blas --disable-fortran --disable-libfuzzer ${BK_CI_CONFIGURE_FLAGS:-} \
        >configure.log 2>&1 ||
        { tail -40 configure.log; return 1; }
    reuse_fatbins "$work/tsan" || return 1
    run make -j"$jobs" libbk.la t/reliability/threads >build.log 2>&1 ||
        { tail -40 build.log; return 1; }
    TSAN_OPTIONS=halt_on_error=1:exitcode=66 run ./t/reliability/threads >threads.log 2>&1
    local rc=$?
    # TSan of clang 14 cannot map its shadow with a kernel's larger mmap
    # randomisation; then run without address randomisation.
    if grep -q 'unexpected memory mapping' threads.log; then
        TSAN_OPTIONS=halt_on_error=1:exitcode=66 \
            run setarch "$(uname -m)" -R ./t/reliability/threads >threads.log 2>&1
        rc=$?
    fi
    cat threads.log
    [ $rc -eq 0 ] && ! grep -q '^not ok' threads.log
}

step "ASan+UBSan build, make check (with the libFuzzer campaign)" asan
step "plain -g -O1 build" memcheck_build
step "make check-valgrind (whole suite under memcheck)" memcheck
step "helgrind, t/reliability/threads" helgrind
step "make abi-check against abi/libbk.abi" abi
step "ThreadSanitizer build, t/reliability/threads" tsan

log "reliability summary"
printf '%s\n' "${results[@]}"
exit $failed
