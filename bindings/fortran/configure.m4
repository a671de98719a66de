# SPDX-License-Identifier: Apache-2.0
# Fortran binding (bindings/fortran/): the module bk and libbk_fortran.
# m4_included by configure.ac after LT_INIT. Sets BK_ENABLE_FORTRAN,
# bk_fortran_summary, BK_FMODDIR (where .mod files go), BK_WARN_FCFLAGS,
# and FC_MODINC / FC_MODOUT (the compiler's module search and output flags).
#
# --enable-fortran=check (default): build it when a Fortran compiler that
# handles the module is found, else leave it out cleanly. yes: such a
# compiler is required. no: never.
AC_ARG_ENABLE([fortran],
  [AS_HELP_STRING([--enable-fortran],
    [build the Fortran module bk (default: when a Fortran compiler is found)])],
  [], [enable_fortran=check])
AC_ARG_WITH([fmoddir],
  [AS_HELP_STRING([--with-fmoddir=DIR],
    [install the Fortran .mod files in DIR (default: LIBDIR/bk/fortran/COMPILER-VERSION)])],
  [], [with_fmoddir=])

# Always probe: automake needs FC defined, and libtool turns its Fortran tag
# off by itself when no compiler is found.
AC_PROG_FC
LT_LANG([Fortran])

bk_fortran_ok=no
bk_fortran_why="no Fortran compiler found"
AS_IF([test "x$enable_fortran" = xno],
  [bk_fortran_why="disabled"],
  [test -n "$FC" && test "x$_lt_disable_FC" != xyes], [
  AC_LANG_PUSH([Fortran])
  AC_FC_SRCEXT([f90], [bk_fortran_ok=yes], [bk_fortran_why="$FC cannot compile .f90 files"])
  AS_IF([test "x$bk_fortran_ok" = xyes], [
    # The module needs Fortran 2008 bind(c) types with default
    # initialisation, and assumed-rank dummies with SELECT RANK (Fortran
    # 2018).
    AC_MSG_CHECKING([whether $FC compiles the features the bk module uses])
    AC_COMPILE_IFELSE([AC_LANG_SOURCE([[
module conftest_bk
  use, intrinsic :: iso_c_binding
  implicit none
  type, bind(c) :: handle_t
    type(c_ptr) :: handle = c_null_ptr
  end type handle_t
contains
  function address(x) result(p)
    real(c_float), intent(in), target :: x(..)
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(x) .and. size(x) > 0) p = c_loc(x)
    select rank (x)
    rank (2)
      if (size(x, 2) < 0) p = c_null_ptr
    end select
  end function address
end module conftest_bk
]])], [bk_fortran_ok=yes], [bk_fortran_ok=no; bk_fortran_why="$FC lacks Fortran 2008/2018 features the module needs"])
    AC_MSG_RESULT([$bk_fortran_ok])])
  AS_IF([test "x$bk_fortran_ok" = xyes], [
    AC_FC_MODULE_EXTENSION
    AC_FC_MODULE_FLAG([], [bk_fortran_ok=no; bk_fortran_why="no module search flag for $FC"])])
  AS_IF([test "x$bk_fortran_ok" = xyes], [
    AC_FC_MODULE_OUTPUT_FLAG([], [bk_fortran_ok=no; bk_fortran_why="no module output flag for $FC"])])
  AC_LANG_POP([Fortran])])

AS_IF([test "x$enable_fortran" = xyes && test "x$bk_fortran_ok" != xyes],
  [AC_MSG_ERROR([--enable-fortran was given but $bk_fortran_why (set FC to a Fortran compiler)])])

# .mod files only work with the compiler (and version) that wrote them, so
# they go in a directory named after it: gfortran-12, ifx-2024, ...
bk_fc_id=unknown
BK_WARN_FCFLAGS=
BK_FC_INTEGER8=
AS_IF([test "x$bk_fortran_ok" = xyes], [
  bk_fc_banner=`$FC --version 2>&1 | sed 1q`
  AS_CASE([$bk_fc_banner],
    [*"GNU Fortran"*], [bk_fc_name=gfortran BK_FC_INTEGER8=-fdefault-integer-8
      BK_WARN_FCFLAGS="-std=f2018 -Wall -Wextra -Wno-compare-reals"
      AS_IF([test "x$enable_werror" = xyes], [BK_WARN_FCFLAGS="$BK_WARN_FCFLAGS -Werror"])],
    [*ifx*|*IFX*], [bk_fc_name=ifx BK_FC_INTEGER8=-i8],
    [*ifort*|*IFORT*], [bk_fc_name=ifort BK_FC_INTEGER8=-i8],
    [*flang*], [bk_fc_name=flang BK_FC_INTEGER8=-fdefault-integer-8],
    [bk_fc_name=`AS_ECHO(["$FC"]) | sed 's/ .*//; s|.*/||'`])
  bk_fc_version=`$FC -dumpversion 2>/dev/null | sed 1q`
  AS_IF([test -z "$bk_fc_version"],
    [bk_fc_version=`AS_ECHO(["$bk_fc_banner"]) | sed -n 's/^@<:@^0-9@:>@*\(@<:@0-9@:>@@<:@0-9@:>@*\).*/\1/p'`])
  bk_fc_version=`AS_ECHO(["$bk_fc_version"]) | sed 's/\..*//'`
  bk_fc_id=$bk_fc_name${bk_fc_version:+-$bk_fc_version}])

AS_CASE([$with_fmoddir],
  [""|yes|no], [BK_FMODDIR='${libdir}/bk/fortran/'"$bk_fc_id"],
  [BK_FMODDIR=$with_fmoddir])
AC_SUBST([BK_FMODDIR])
BK_FC_ID=$bk_fc_id
AC_SUBST([BK_FC_ID])
AC_SUBST([BK_WARN_FCFLAGS])
# The flag that makes default integers 8 bytes, for the test that user
# code built so compiles against the module; empty where unknown.
AC_SUBST([BK_FC_INTEGER8])
AC_SUBST([FC_MODINC])
AC_SUBST([FC_MODOUT])

AS_IF([test "x$bk_fortran_ok" = xyes],
  [bk_fortran_summary="yes ($bk_fc_id, modules in $BK_FMODDIR)"],
  [bk_fortran_summary="no ($bk_fortran_why)"])
AM_CONDITIONAL([BK_ENABLE_FORTRAN], [test "x$bk_fortran_ok" = xyes])
AC_CONFIG_FILES([bk-fortran.pc])
