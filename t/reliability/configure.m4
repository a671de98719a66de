# SPDX-License-Identifier: Apache-2.0
# Reliability checks (t/reliability/): sanitizer builds, the libFuzzer
# campaign, the valgrind wrapper and the ABI check. m4_included by
# configure.ac after the compilers are known.
#
# --enable-sanitizers[=address|thread]: build everything (libbk, tests,
# tools) with AddressSanitizer + UndefinedBehaviorSanitizer, stopping at the
# first report (-fno-sanitize-recover=all), or with ThreadSanitizer.
AC_ARG_ENABLE([sanitizers],
  [AS_HELP_STRING([--enable-sanitizers@<:@=address|thread@:>@],
    [build with ASan+UBSan (address, the default) or TSan (thread), for testing])],
  [], [enable_sanitizers=no])
AS_CASE([$enable_sanitizers],
  [no], [bk_san_flags=],
  [yes|address], [bk_san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all"],
  [thread], [bk_san_flags="-fsanitize=thread"],
  [AC_MSG_ERROR([--enable-sanitizers=$enable_sanitizers: use address or thread])])
bk_san_summary=no
AS_IF([test -n "$bk_san_flags"], [
  bk_san_flags="$bk_san_flags -fno-omit-frame-pointer"
  AC_MSG_CHECKING([whether $CC builds and links with $bk_san_flags])
  CFLAGS="$CFLAGS $bk_san_flags"
  LDFLAGS="$LDFLAGS $bk_san_flags"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [bk_san_ok=yes], [bk_san_ok=no])
  AC_MSG_RESULT([$bk_san_ok])
  AS_IF([test "x$bk_san_ok" != xyes], [
    AC_MSG_ERROR([--enable-sanitizers: $CC cannot build with $bk_san_flags (Debian: install
      libasan/libubsan for gcc, or libclang-rt-dev for clang)])])
  # LDFLAGS reach every link (libtool passes -fsanitize=* through), so the
  # test programs and the Fortran ones load the runtime first, as ASan wants.
  AS_IF([test -n "$FC"], [FCFLAGS="$FCFLAGS $bk_san_flags"])
  bk_san_summary="$bk_san_flags"
])

# The libFuzzer campaign needs clang with -fsanitize=fuzzer (Debian: clang
# and libclang-rt-NN-dev). It is built with that compiler whatever CC is;
# without it `make check` still runs the harness through fuzz-replay.
AC_ARG_VAR([BK_FUZZ_CC], [clang that links -fsanitize=fuzzer, for the fuzz campaign])
AC_ARG_ENABLE([libfuzzer],
  [AS_HELP_STRING([--disable-libfuzzer],
    [do not build the libFuzzer campaign even when clang supports it])],
  [], [enable_libfuzzer=check])
bk_libfuzzer=no
bk_libfuzzer_summary="no (--disable-libfuzzer)"
# clang builds the campaign for the build machine, and libbk is built for
# another: none when cross-compiling.
AS_IF([test "x$cross_compiling" = xyes && test "x$enable_libfuzzer" != xno], [
  enable_libfuzzer=no
  bk_libfuzzer_summary="no (cross-compiling)"])
AS_IF([test "x$enable_libfuzzer" != xno], [
  AC_PATH_PROGS([BK_FUZZ_CC], [clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14])
  bk_libfuzzer_summary="no (no clang found; set BK_FUZZ_CC)"
  AS_IF([test -n "$BK_FUZZ_CC"], [
    AC_MSG_CHECKING([whether $BK_FUZZ_CC links -fsanitize=fuzzer,address,undefined])
    cat >conftest-fuzz.c <<_BKEOF
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return data && size > 1000000; }
_BKEOF
    AS_IF([$BK_FUZZ_CC -fsanitize=fuzzer,address,undefined -o conftest-fuzz$EXEEXT conftest-fuzz.c \
             >&AS_MESSAGE_LOG_FD 2>&1],
          [bk_libfuzzer=yes], [bk_libfuzzer=no])
    rm -f conftest-fuzz.c conftest-fuzz$EXEEXT
    AC_MSG_RESULT([$bk_libfuzzer])
    AS_IF([test "x$bk_libfuzzer" = xyes],
          [bk_libfuzzer_summary="yes ($BK_FUZZ_CC)"],
          [bk_libfuzzer_summary="no ($BK_FUZZ_CC cannot link -fsanitize=fuzzer: install libclang-rt-dev)"])
  ])
  AS_IF([test "x$enable_libfuzzer" = xyes && test "x$bk_libfuzzer" != xyes],
        [AC_MSG_ERROR([--enable-libfuzzer: $bk_libfuzzer_summary])])
])
AM_CONDITIONAL([BK_HAVE_LIBFUZZER], [test "x$bk_libfuzzer" = xyes])

# Optional tools: make check-valgrind, make abi-dump / abi-check say so and
# stop cleanly when they are missing.
AC_PATH_PROG([VALGRIND], [valgrind])
AC_PATH_PROG([ABIDW], [abidw])
AC_PATH_PROG([ABIDIFF], [abidiff])

AC_MSG_NOTICE([reliability checks: sanitizers: $bk_san_summary; libFuzzer campaign: $bk_libfuzzer_summary; valgrind: ${VALGRIND:-no}; abidiff: ${ABIDIFF:-no}])
