#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP: Fortran handles are type-safe. Each handle kind is its own bind(c)
# type, so the compiler must reject a plan where a context is expected, and
# the like; a program passing the right kinds compiles.
top_builddir=$(cd "${top_builddir:-.}" && pwd) || exit 1
env=$top_builddir/bindings/fortran/fortran-env.sh
moddir=$top_builddir/bindings/fortran
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-fortran-typesafe.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
[ -r "$env" ] || { echo "Bail out! $env missing (make check writes it)"; exit 1; }
. "$env"

# program NAME with declarations and one statement.
prog() {
    cat > "$tmp/$1.f90" <<EOP
program $1
  use, intrinsic :: iso_c_binding
  use bk
  implicit none
  type(BkContext) :: ctx
  type(BkPlan) :: plan
  type(BkMemory) :: mem
  type(BkCommandBuffer) :: cmd
  type(BkQueue) :: queue
  type(BkPlanCreateInfo) :: info
  type(BkRunInfo) :: run
  integer(c_int) :: res
  res = 0
  $2
  print *, res
end program $1
EOP
    (cd "$tmp" && $FC $FCFLAGS ${FC_MODINC}"$moddir" -c "$1.f90") > "$tmp/$1.log" 2>&1
}

echo "1..5"
if prog right 'res = bkCreatePlan(ctx, info, c_null_ptr, plan); res = bkCmdRun(cmd, plan, run)
  call bkDestroyPlan(plan); call bkDestroyContext(ctx); res = bkQueueSubmit(queue, 1, [cmd])
  call bkFreeMemory(ctx, mem)'; then
    echo "ok 1 - the right handle kinds compile"
else
    echo "not ok 1 - the right handle kinds do not compile"
    sed 's/^/# /' "$tmp/right.log"
fi
n=1
check_rejects() {
    n=$((n + 1))
    if prog "wrong$n" "$2"; then
        echo "not ok $n - $1 compiles"
    else
        echo "ok $n - $1 is rejected"
    fi
}
check_rejects 'a plan passed as a context' 'call bkDestroyContext(plan)'
check_rejects 'a memory handle as the plan output' 'res = bkCreatePlan(ctx, info, c_null_ptr, mem)'
check_rejects 'a context as the plan of bkCmdRun' 'res = bkCmdRun(cmd, ctx, run)'
check_rejects 'a queue array as command buffers' 'res = bkQueueSubmit(queue, 1, [queue])'
