#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Builds one kernel module: kernels/NAME.cu -> PTX for each virtual
# architecture -> a cubin for each real architecture (from the newest PTX
# not newer than it; ptxas runs in parallel) -> a fatbin holding the cubins
# and the newest PTX, which the driver compiles for GPUs newer than every
# cubin. Writes each kernel's resource report (registers, stack, spills,
# shared memory) to OUT.resources, not to the build log (a line per
# kernel and architecture would bury the warnings), and fails
# when a kernel spills registers or uses a stack frame (hot kernels must
# not), or when ptxas serialises its wgmma instructions.
#
# With BK_FATBIN_CACHE=DIR in the environment, a module built before from
# the same device code with the same tools and flags is copied from DIR
# instead (see cache_key); a module built here is stored there.
#
# usage: build-fatbin.sh SRC OUT "NVCC" PTXAS FATBINARY "ARCHS" "PTX_ARCHS" [NVCC flags...]
#   ARCHS: real architectures, e.g. "80 86 89 90" (90a means sm_90a);
#   PTX_ARCHS: virtual architectures, e.g. "80 90" (compute_80, compute_90).
set -eu
src=$1 out=$2 nvcc=$3 ptxas=$4 fatbinary=$5 archs=$6 ptx_archs=$7
shift 7

name=$(basename "$out" .fatbin)
tmp=$out.tmp.d
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

number() { echo "$1" | sed 's/[^0-9].*//'; }

# The virtual architecture a real one is assembled from: the same name
# when there is one (90a from compute_90a), else the newest not newer.
ptx_for() {
    best=
    for v in $ptx_archs; do
        if [ "$v" = "$1" ]; then
            echo "$v"
            return
        fi
        case $v in *[!0-9]*) continue ;; esac
        if [ "$v" -le "$(number "$1")" ] && { [ -z "$best" ] || [ "$v" -gt "$best" ]; }; then
            best=$v
        fi
    done
    if [ -z "$best" ]; then
        echo "$0: no PTX architecture in \"$ptx_archs\" for sm_$1" >&2
        exit 1
    fi
    echo "$best"
}

# Waits for the background jobs whose ids are in $pids; 1 if any failed.
wait_all() {
    status=0
    for p in $pids; do
        wait "$p" || status=1
    done
    pids=
    return $status
}

# The cache key: this script, and what it gives nvcc, ptxas and
# fatbinary. The module's device code as the preprocessor gives it for
# each virtual architecture (every header's text, no file names: -P drops
# the line markers), the architectures, the flags less the include paths
# (the text stands for them), and the tools' versions. nvcc -E leaves out
# macros its -ptx defines (__CUDA_ARCH_FEAT_SM90_ALL for compute_90a), so
# the preprocessor gets those its -ptx would (--dryrun), and cicc's
# options (less file names) are part of the key. Fails when the source
# does not preprocess; the build below then reports why.
key_input() {
    cat "$0"
    echo "archs $archs; ptx $ptx_archs"
    for f in "$@"; do
        case $f in -I*) ;; *) printf '%s\n' "$f" ;; esac
    done
    $nvcc --version && "$ptxas" --version && "$fatbinary" --version || return 1
    for v in $ptx_archs; do
        # shellcheck disable=SC2086
        dry=$($nvcc -ptx -arch=compute_$v -std=c++17 -O3 "$@" -o "$tmp/key.ptx" "$src" \
            --dryrun 2>&1) || return 1
        arch_macros=$(printf '%s\n' "$dry" | grep -e ' -E ' |
            grep -oE -e '-D__CUDA_ARCH[A-Z0-9_]*(=[0-9,]+)?' | sort -u)
        [ -n "$arch_macros" ] || return 1
        printf '%s\n' "$dry" | grep -e cicc | sed -E 's/"[^"]*"//g'
        # shellcheck disable=SC2086
        $nvcc -E -arch=compute_$v -std=c++17 -O3 "$@" $arch_macros -Xcompiler -P "$src" ||
            return 1
    done
}
cache_key() {
    key_input "$@" >"$tmp/key.in" 2>"$tmp/key.err" || return 1
    sha256sum <"$tmp/key.in" | cut -c1-64
}
cache=${BK_FATBIN_CACHE:-}
key=
if [ -n "$cache" ] && key=$(cache_key "$@"); then
    if [ -f "$cache/$key.fatbin" ] && [ -f "$cache/$key.resources" ]; then
        cp "$cache/$key.resources" "$tmp/$name.resources"
        cp "$cache/$key.fatbin" "$tmp/$name.fatbin"
        mv "$tmp/$name.resources" "$out.resources"
        mv "$tmp/$name.fatbin" "$out"
        exit 0
    fi
else
    key=
fi

newest= pids=
for v in $ptx_archs; do
    # shellcheck disable=SC2086 # NVCC may carry options ("nvcc -ccbin gcc-12")
    $nvcc -ptx -arch=compute_$v -std=c++17 -O3 "$@" -o "$tmp/$name.compute_$v.ptx" "$src" &
    pids="$pids $!"
    case $v in *[!0-9]*) ;; *) if [ -z "$newest" ] || [ "$v" -gt "$newest" ]; then newest=$v; fi ;; esac
done
wait_all || { echo "$0: nvcc failed for $src" >&2; exit 1; }
# A module of architecture-specific code only (PTX_ARCHS "90a") embeds that PTX.
if [ -z "$newest" ]; then
    for v in $ptx_archs; do newest=$v; done
fi

for a in $archs; do
    v=$(ptx_for "$a")
    "$ptxas" -arch=sm_$a -O3 -v -o "$tmp/$name.sm_$a.cubin" "$tmp/$name.compute_$v.ptx" \
        >"$tmp/$name.sm_$a.log" 2>&1 &
    pids="$pids $!"
done
if ! wait_all; then
    cat "$tmp"/*.log >&2
    echo "$0: ptxas failed for $src" >&2
    exit 1
fi

images=
for a in $archs; do
    images="$images --image3=kind=elf,sm=$a,file=$tmp/$name.sm_$a.cubin"
done
# shellcheck disable=SC2086
"$fatbinary" --64 --compress-all --create="$tmp/$name.fatbin" $images \
    --image3=kind=ptx,sm=$newest,file="$tmp/$name.compute_$newest.ptx"

# One line per kernel and architecture, from ptxas -v:
#   ptxas info : Compiling entry function 'K' for 'sm_90'
#   ptxas info : Function properties for K
#       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
#   ptxas info : Used 40 registers, used 0 barriers, 16 bytes smem
for a in $archs; do
    awk -v arch="sm_$a" '
        /Compiling entry function/ { k = $0; sub(/^[^'\'']*'\''/, "", k); sub(/'\''.*/, "", k) }
        /bytes stack frame/ { stack = $1; spill_st = $5; spill_ld = $9 }
        /Used [0-9]+ registers/ {
            regs = $0; sub(/.*Used /, "", regs); sub(/ registers.*/, "", regs)
            smem = 0
            if (match($0, /[0-9]+ bytes smem/)) { smem = substr($0, RSTART, RLENGTH); sub(/ .*/, "", smem) }
            printf "%-6s %-36s %3d registers %5d B stack %5d B spill stores %5d B spill loads %6d B smem\n", \
                arch, k, regs, stack, spill_st, spill_ld, smem
        }' "$tmp/$name.sm_$a.log"
done >"$tmp/$name.resources"
bad=$(awk '$5 != 0 || $8 != 0 || $12 != 0' "$tmp/$name.resources")
if [ -n "$bad" ]; then
    echo "$0: error: kernels of $name use a stack frame or spill registers:" >&2
    echo "$bad" >&2
    exit 1
fi
# ptxas serialises wgmma (waits after each) where it cannot prove that no
# other instruction touches a group's registers while it may run (C7513:
# an input written; C7514: an accumulator read; others of the same words):
# a silent loss of most of the tensor cores' speed, so an error here.
serial=$(grep -h "wgmma.mma_async instructions are serialized" "$tmp"/*.log |
    sed 's/.*function //' | sort -u)
if [ -n "$serial" ]; then
    echo "$0: error: ptxas serialises the wgmma instructions of $name in:" >&2
    echo "$serial" >&2
    exit 1
fi

# Into the cache, each file renamed into place whole (builds may share
# it), the fatbin last: a key with a fatbin has its resources.
if [ -n "$key" ] && mkdir -p "$cache"; then
    cp "$tmp/$name.resources" "$cache/$key.resources.$$" &&
        mv "$cache/$key.resources.$$" "$cache/$key.resources" &&
        cp "$tmp/$name.fatbin" "$cache/$key.fatbin.$$" &&
        mv "$cache/$key.fatbin.$$" "$cache/$key.fatbin"
fi
mv "$tmp/$name.resources" "$out.resources"
mv "$tmp/$name.fatbin" "$out"
