# SPDX-License-Identifier: Apache-2.0
# The host GEMM family on a CBLAS (lib/host/host_blas.c).
# --with-blas (default: when found) / --without-blas (libbk's own blocked
# engine). The header comes from OpenBLAS's pkg-config module, else BLIS's,
# else the compiler's default path (cblas.h). The library is -lblas when
# it has cblas_sgemm and cblas_dgemm: on Debian that is libblas.so.3, the
# BLAS alternatives' interface (OpenBLAS, BLIS, the reference BLAS, MKL),
# so a site switches implementations without rebuilding libbk. Elsewhere
# the module's own libraries. BLAS_CFLAGS and BLAS_LIBS override both.
# Sets BK_HAVE_BLAS (config.h and automake conditional) and bk_blas_summary.
AC_ARG_WITH([blas],
  [AS_HELP_STRING([--without-blas],
    [run the host GEMMs on libbk's own engine, not a CBLAS (default: a CBLAS when found)])],
  [], [with_blas=check])
AC_ARG_VAR([BLAS_CFLAGS], [C compiler flags for the CBLAS header (cblas.h)])
AC_ARG_VAR([BLAS_LIBS], [linker flags for the CBLAS (default: -lblas when it has cblas_sgemm)])

bk_blas=no
bk_blas_summary="no (--without-blas)"
AS_IF([test "x$with_blas" != xno], [
  bk_blas_module=
  AS_IF([test "x${BLAS_CFLAGS+set}" != xset], [
    PKG_CHECK_MODULES([BK_OPENBLAS], [openblas],
      [BLAS_CFLAGS=$BK_OPENBLAS_CFLAGS; bk_blas_module=openblas; bk_blas_pc_libs=$BK_OPENBLAS_LIBS],
      [PKG_CHECK_MODULES([BK_BLIS], [blis],
        [BLAS_CFLAGS=$BK_BLIS_CFLAGS; bk_blas_module=blis; bk_blas_pc_libs=$BK_BLIS_LIBS],
        [BLAS_CFLAGS=])])])
  bk_save_CPPFLAGS=$CPPFLAGS
  bk_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS $BLAS_CFLAGS"
  AC_CHECK_HEADER([cblas.h], [bk_blas_header=yes], [bk_blas_header=no])
  bk_blas_link_test='AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cblas.h>]],
      [[float s = 0; double d = 0;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &s, 1, &s, 1,
                    0.0f, &s, 1);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &d, 1, &d, 1,
                    0.0, &d, 1);]])], [bk_blas_links=yes], [bk_blas_links=no])'
  AS_IF([test "x$bk_blas_header" = xyes], [
    AS_IF([test "x${BLAS_LIBS+set}" = xset], [bk_blas_candidates="user"],
      [bk_blas_candidates="-lblas module"])
    for bk_blas_try in $bk_blas_candidates; do
      AS_CASE([$bk_blas_try],
        [user], [bk_blas_libs=$BLAS_LIBS],
        [module], [bk_blas_libs=$bk_blas_pc_libs],
        [bk_blas_libs=$bk_blas_try])
      AS_IF([test "x$bk_blas_libs" = x], [continue])
      AC_MSG_CHECKING([for cblas_sgemm and cblas_dgemm in $bk_blas_libs])
      LIBS="$bk_blas_libs $bk_save_LIBS"
      eval "$bk_blas_link_test"
      AC_MSG_RESULT([$bk_blas_links])
      AS_IF([test "x$bk_blas_links" = xyes], [bk_blas=yes; BLAS_LIBS=$bk_blas_libs; break])
    done])
  CPPFLAGS=$bk_save_CPPFLAGS
  LIBS=$bk_save_LIBS
  AS_IF([test "x$bk_blas" = xyes],
    [bk_blas_summary="$BLAS_LIBS${bk_blas_module:+ (cblas.h of $bk_blas_module)}"],
    [test "x$with_blas" = xyes],
    [AC_MSG_ERROR([--with-blas: no CBLAS found (cblas.h and cblas_sgemm); set BLAS_CFLAGS and BLAS_LIBS])],
    [bk_blas_summary="no (no CBLAS found: libbk's own engine)"; BLAS_CFLAGS=; BLAS_LIBS=])
])
AS_IF([test "x$bk_blas" = xyes],
  [AC_DEFINE([BK_HAVE_BLAS], [1], [Define to run the host GEMMs on a CBLAS.])],
  [BLAS_CFLAGS=; BLAS_LIBS=])
AM_CONDITIONAL([BK_HAVE_BLAS], [test "x$bk_blas" = xyes])
AC_SUBST([BLAS_CFLAGS])
AC_SUBST([BLAS_LIBS])
