#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# libbk must load on machines without CUDA: its ELF dynamic section may not
# name libcuda, libcudart or cuBLAS, and it may not import any CUDA driver
# or runtime symbol (the CUDA backend opens libcuda.so.1 with dlopen).
: "${top_builddir:=.}"
: "${READELF:=readelf}"
: "${NM:=nm}"

lib=
for f in "$top_builddir"/.libs/libbk.so "$top_builddir"/lib/.libs/libbk.so; do
    if [ -f "$f" ]; then
        lib=$f
        break
    fi
done
if [ -z "$lib" ]; then
    echo "1..0 # SKIP no shared libbk.so in $top_builddir/.libs"
    exit 0
fi
if ! command -v "$READELF" >/dev/null 2>&1; then
    echo "1..0 # SKIP readelf not found"
    exit 0
fi

echo "1..3"
needed=$("$READELF" -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p')
if "$READELF" -d "$lib" | grep -q '(NEEDED)'; then
    echo "ok 1 - readelf lists the NEEDED entries of $lib"
else
    echo "not ok 1 - readelf lists no NEEDED entry of $lib"
fi

bad=$(echo "$needed" | grep -E '^lib(cuda|cudart|cublas|cublasLt|nvrtc|nvJitLink)[.]' || true)
if [ -z "$bad" ]; then
    echo "ok 2 - no CUDA library among NEEDED:" $needed
else
    echo "not ok 2 - libbk links against CUDA libraries:" $bad
fi

# NM may carry options (libtool sets "nm -B").
nm_program=${NM%% *}
if command -v "$nm_program" >/dev/null 2>&1; then
    undef=$($NM -D --undefined-only "$lib" | awk '{ print $NF }' |
            grep -E '^(cu[A-Z]|cuda[A-Z]|cublas|nvrtc)' || true)
    if [ -z "$undef" ]; then
        echo "ok 3 - no undefined CUDA symbol"
    else
        echo "not ok 3 - libbk imports CUDA symbols:" $undef
    fi
else
    echo "ok 3 # SKIP nm not found"
fi
