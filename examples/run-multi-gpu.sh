#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP wrapper: examples/multi_gpu on every device it finds (the host when
# there is no GPU), then on four host contexts in four threads at once.
echo "1..2"
i=0
for args in "" "--host 4"; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    if out=$($BK_TEST_RUNNER "${top_builddir:-.}/examples/multi_gpu" $args 2>&1); then
        echo "ok $i - multi_gpu ${args:-on every device}"
    else
        echo "not ok $i - multi_gpu ${args:-on every device}"
    fi
    printf '%s\n' "$out" | sed 's/^/# /'
done
