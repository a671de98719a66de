#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP wrapper: run examples/swiglu on the host device (and on the device of
# BK_TEST_DEVICE when that is set), one test point each.
devices=host
case "${BK_TEST_DEVICE:-host}" in host) ;; *) devices="host $BK_TEST_DEVICE" ;; esac
n=0
for d in $devices; do n=$((n + 1)); done
echo "1..$n"
i=0
for d in $devices; do
    i=$((i + 1))
    if out=$($BK_TEST_RUNNER "${top_builddir:-.}/examples/swiglu" "$d" 2>&1); then
        echo "ok $i - swiglu example on $d"
    else
        echo "not ok $i - swiglu example on $d"
        printf '%s\n' "$out" | sed 's/^/# /'
    fi
done
