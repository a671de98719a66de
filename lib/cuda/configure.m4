# SPDX-License-Identifier: Apache-2.0
# CUDA backend (lib/cuda/, kernels/). --with-cuda[=DIR]: default is to build it
# when nvcc, ptxas and fatbinary are found (on PATH, else /usr/local/cuda);
# DIR names the toolkit (DIR/bin/nvcc). --without-cuda builds host only.
# Only the kernels need the toolkit: libbk's C sources use no CUDA header
# and libbk loads libcuda.so.1 at run time.
# Sets BK_HAVE_CUDA (config.h and automake conditional) and bk_cuda_summary.
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
    [build the CUDA backend with the toolkit in DIR (default: when nvcc is found)])],
  [], [with_cuda=check])
AC_ARG_VAR([NVCC], [CUDA compiler driver])
AC_ARG_VAR([PTXAS], [CUDA PTX assembler])
AC_ARG_VAR([FATBINARY], [CUDA fatbin packer])
AC_ARG_VAR([BK_CUDA_ARCHS], [real GPU architectures to build cubins for (default: 80 86 89 90)])
AC_ARG_VAR([BK_CUDA_PTX_ARCHS], [virtual architectures compiled to PTX (default: 80 90); each
  cubin is assembled from the newest not newer than it, and the newest is embedded])
AC_ARG_VAR([NVCCFLAGS], [extra flags for nvcc when it compiles kernels/*.cu to PTX])
# The kernels are embedded with an assembler .incbin (lib/cuda/cuda_fatbins.S).
AM_PROG_AS

bk_cuda=no
AS_CASE([$with_cuda],
  [no], [bk_cuda_summary="no (--without-cuda)"],
  [yes|check], [bk_cuda_path="$PATH$PATH_SEPARATOR/usr/local/cuda/bin"],
  [bk_cuda_path="$with_cuda/bin"])
AS_IF([test "x$with_cuda" != xno], [
  AC_PATH_PROG([NVCC], [nvcc], [], [$bk_cuda_path])
  AC_PATH_PROG([PTXAS], [ptxas], [], [$bk_cuda_path])
  AC_PATH_PROG([FATBINARY], [fatbinary], [], [$bk_cuda_path])
  AS_IF([test -n "$NVCC" && test -n "$PTXAS" && test -n "$FATBINARY"], [
    : "${BK_CUDA_ARCHS=80 86 89 90}"
    : "${BK_CUDA_PTX_ARCHS=80 90}"
    bk_cuda_ptx_first=`echo $BK_CUDA_PTX_ARCHS | $AWK '{ print $1 }'`
    AC_MSG_CHECKING([whether $NVCC compiles CUDA C++ to PTX for compute_$bk_cuda_ptx_first])
    cat >conftest.cu <<_BKEOF
extern "C" __global__ void bk_conftest(float *p) { p[[threadIdx.x]] = erff(p[[threadIdx.x]]); }
_BKEOF
    AS_IF([$NVCC -ptx -arch=compute_$bk_cuda_ptx_first -std=c++17 $NVCCFLAGS -o conftest.ptx conftest.cu \
             >&AS_MESSAGE_LOG_FD 2>&1 && test -s conftest.ptx],
          [bk_cuda=yes], [bk_cuda=no])
    rm -f conftest.cu conftest.ptx
    AC_MSG_RESULT([$bk_cuda])
    # "Cuda compilation tools, release 13.0, V13.0.88" -> 13000
    bk_cuda_release=`$NVCC --version 2>/dev/null | $SED -n 's/.*release \([[0-9]]*\)\.\([[0-9]]*\).*/\1 \2/p' | head -n 1`
    bk_cuda_version=`echo "$bk_cuda_release" | $AWK '{ if (NF == 2) print $1 * 1000 + $2 * 10; else print 0 }'`
    AS_IF([test "x$bk_cuda" = xyes],
          [bk_cuda_summary="yes (nvcc $NVCC, CUDA $bk_cuda_version; cubins for sm: $BK_CUDA_ARCHS; PTX from compute: $BK_CUDA_PTX_ARCHS)"],
          [bk_cuda_summary="no ($NVCC cannot compile a test kernel: see config.log)"])
  ], [
    bk_cuda_summary="no (nvcc, ptxas or fatbinary not found)"
  ])
  AS_IF([test "x$bk_cuda" != xyes && test "x$with_cuda" != xcheck],
        [AC_MSG_ERROR([--with-cuda was given but the CUDA backend cannot be built: $bk_cuda_summary])])
])
AS_IF([test "x$bk_cuda" = xyes], [
  AC_DEFINE([BK_HAVE_CUDA], [1], [Define to 1 to build the CUDA backend.])
  AC_DEFINE_UNQUOTED([BK_CUDA_TOOLKIT_VERSION], [$bk_cuda_version],
                     [CUDA version the embedded kernels were built with (1000 * major + 10 * minor).])
  AC_DEFINE_UNQUOTED([BK_CUDA_BINARY_ARCHS], ["$BK_CUDA_ARCHS"],
                     [GPU architectures the embedded cubins are built for.])
  AC_DEFINE_UNQUOTED([BK_CUDA_PTX_ARCHS], ["$BK_CUDA_PTX_ARCHS"],
                     [Virtual architectures of the embedded PTX.])
])
AM_CONDITIONAL([BK_HAVE_CUDA], [test "x$bk_cuda" = xyes])

# The kernel modules, from the table the C side is made from
# (lib/cuda/cuda_modules.h, rows "X(ID, NAME, ARCHS)"): every NAME, and
# the NAMEs whose ARCHS is sm_90a. kernels/local.mk builds and ships them from
# these lists; the table is a dependency of config.status, so a new row
# reconfigures. Read whatever the backend, for make dist.
bk_cuda_module_rows=`$SED -n 's/^ *X([[A-Z0-9_]]*, *\([[a-z0-9_]]*\), *\([[a-z0-9_]]*\)).*/\1 \2/p' \
  "$srcdir/lib/cuda/cuda_modules.h"`
BK_CUDA_MODULE_NAMES=`echo "$bk_cuda_module_rows" | $AWK '{ printf "%s%s", s, $[]1; s = " " }'`
BK_CUDA_SM90A_MODULE_NAMES=`echo "$bk_cuda_module_rows" |
  $AWK '$[]2 == "sm_90a" { printf "%s%s", s, $[]1; s = " " }'`
bk_cuda_bad_rows=`echo "$bk_cuda_module_rows" | $AWK '$[]2 != "configured" && $[]2 != "sm_90a"'`
AS_IF([test -z "$BK_CUDA_MODULE_NAMES"],
      [AC_MSG_ERROR([no "X(ID, NAME, ARCHS)" rows in lib/cuda/cuda_modules.h])])
AS_IF([test -n "$bk_cuda_bad_rows"],
      [AC_MSG_ERROR([lib/cuda/cuda_modules.h: ARCHS must be configured or sm_90a: $bk_cuda_bad_rows])])
AC_SUBST([BK_CUDA_MODULE_NAMES])
AC_SUBST([BK_CUDA_SM90A_MODULE_NAMES])
