# examples/configure.m4: MPI for the MPI examples (examples/mpi_swiglu.c,
# examples/mpi_swiglu.f90), built and run by `make check` when the MPI
# compiler wrappers and mpirun are found (Debian: openmpi-bin,
# libopenmpi-dev). MPICC, MPIFORT and MPIRUN may be given instead.
AC_ARG_VAR([MPICC], [MPI C compiler wrapper for the MPI examples])
AC_ARG_VAR([MPIFORT], [MPI Fortran compiler wrapper for the MPI example in Fortran])
AC_ARG_VAR([MPIRUN], [MPI launcher that make check runs the MPI examples with])
AC_PATH_PROGS([MPICC], [mpicc])
AC_PATH_PROGS([MPIFORT], [mpifort mpif90])
AC_PATH_PROGS([MPIRUN], [mpirun mpiexec])
AM_CONDITIONAL([BK_HAVE_MPI], [test -n "$MPICC" && test -n "$MPIRUN"])
AM_CONDITIONAL([BK_HAVE_MPI_FORTRAN],
  [test -n "$MPIFORT" && test -n "$MPIRUN" && test "x$bk_fortran_ok" = xyes])
AS_IF([test -n "$MPICC" && test -n "$MPIRUN"],
  [bk_mpi_summary="yes ($MPICC${MPIFORT:+, $MPIFORT}; make check runs mpirun -np 2)"],
  [bk_mpi_summary="no (no mpicc or mpirun: the MPI examples are not built)"])
