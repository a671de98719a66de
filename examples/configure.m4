# SPDX-License-Identifier: Apache-2.0
# examples/configure.m4: MPI for the MPI examples (examples/mpi_swiglu.c,
# examples/mpi_swiglu.f90), built and run by `make check` when the MPI
# compiler wrappers and mpirun are found (Debian: openmpi-bin,
# libopenmpi-dev). MPICC, MPIFORT and MPIRUN may be given instead.
AC_ARG_VAR([MPICC], [MPI C compiler wrapper for the MPI examples])
AC_ARG_VAR([MPIFORT], [MPI Fortran compiler wrapper for the MPI example in Fortran])
AC_ARG_VAR([MPIRUN], [MPI launcher that make check runs the MPI examples with])
# The wrappers found on the PATH build for the build machine: none looked
# for when cross-compiling (give MPICC and MPIRUN for the other machine).
bk_mpi_why="no mpicc or mpirun"
AS_IF([test "x$cross_compiling" = xyes],
  [bk_mpi_why="cross-compiling; MPICC and MPIRUN not given"],
  [AC_PATH_PROGS([MPICC], [mpicc])
   AC_PATH_PROGS([MPIFORT], [mpifort mpif90])
   AC_PATH_PROGS([MPIRUN], [mpirun mpiexec])])
AM_CONDITIONAL([BK_HAVE_MPI], [test -n "$MPICC" && test -n "$MPIRUN"])
AM_CONDITIONAL([BK_HAVE_MPI_FORTRAN],
  [test -n "$MPIFORT" && test -n "$MPIRUN" && test "x$bk_fortran_ok" = xyes])
AS_IF([test -n "$MPICC" && test -n "$MPIRUN"],
  [bk_mpi_summary="yes ($MPICC${MPIFORT:+, $MPIFORT}; make check runs mpirun -np 2)"],
  [bk_mpi_summary="no ($bk_mpi_why: the MPI examples are not built)"])
