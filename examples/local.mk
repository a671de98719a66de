# SPDX-License-Identifier: Apache-2.0
# examples: complete programs that `make check` builds and runs.
check_PROGRAMS += examples/swiglu
examples_swiglu_SOURCES = examples/swiglu.c
examples_swiglu_LDADD = libbk.la -lm
# One context and thread per device (here, with no GPU, several host
# contexts at once as well).
check_PROGRAMS += examples/multi_gpu
examples_multi_gpu_SOURCES = examples/multi_gpu.c
examples_multi_gpu_LDADD = libbk.la -lm
# TAP wrappers that run the examples on the host (and BK_TEST_DEVICE).
TESTS += examples/run-swiglu.sh examples/run-multi-gpu.sh
EXTRA_DIST += examples/run-swiglu.sh examples/run-multi-gpu.sh

# make installcheck (and so distcheck): the example built against the
# installed library through `pkg-config bk`, as its comment says, and run
# on the host.
BK_INSTALLCHECK_HOOKS += installcheck-pkgconfig
installcheck-pkgconfig:
	$(AM_V_at)rm -rf installcheck-pkgconfig.tmp && $(MKDIR_P) installcheck-pkgconfig.tmp && \
	PKG_CONFIG_PATH='$(DESTDIR)$(pkgconfigdir)' && export PKG_CONFIG_PATH && \
	PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)' && export PKG_CONFIG_SYSROOT_DIR && \
	echo "  CC       examples/swiglu against the installed bk.pc" && \
	$(CC) `$(PKG_CONFIG) --cflags bk` -o installcheck-pkgconfig.tmp/swiglu \
	  $(srcdir)/examples/swiglu.c -Wl,-rpath,'$(DESTDIR)$(libdir)' `$(PKG_CONFIG) --libs bk` -lm && \
	./installcheck-pkgconfig.tmp/swiglu host >/dev/null && \
	rm -rf installcheck-pkgconfig.tmp
.PHONY: installcheck-pkgconfig

# The MPI examples (examples/configure.m4): built with the MPI compiler
# wrappers against the uninstalled libraries through libtool, and run by
# examples/run-mpi.sh with mpirun -np 2 on the host device (and on the
# GPUs of BK_TEST_DEVICE=cuda).
EXTRA_DIST += examples/configure.m4 examples/mpi_swiglu.c examples/mpi_swiglu.f90 \
	examples/run-mpi.sh
TESTS += examples/run-mpi.sh
BK_MPI_EXAMPLES =
if BK_HAVE_MPI
BK_MPI_EXAMPLES += examples/mpi_swiglu
examples/mpi_swiglu: $(srcdir)/examples/mpi_swiglu.c libbk.la
	@$(MKDIR_P) examples
	$(AM_V_CCLD)$(LIBTOOL) $(AM_V_lt) --tag=CC --mode=link $(MPICC) $(AM_CPPFLAGS) $(CPPFLAGS) \
	  $(CFLAGS) $(LDFLAGS) -o $@ $(srcdir)/examples/mpi_swiglu.c libbk.la -lm
endif
if BK_HAVE_MPI_FORTRAN
BK_MPI_EXAMPLES += examples/mpi_swiglu_f
examples/mpi_swiglu_f: $(srcdir)/examples/mpi_swiglu.f90 bindings/fortran/libbk_fortran.la
	@$(MKDIR_P) examples
	$(AM_V_FCLD)$(LIBTOOL) $(AM_V_lt) --tag=FC --mode=link $(MPIFORT) $(FCFLAGS) \
	  $(FC_MODINC)bindings/fortran $(LDFLAGS) -o $@ $(srcdir)/examples/mpi_swiglu.f90 \
	  bindings/fortran/libbk_fortran.la libbk.la
endif
check_SCRIPTS = $(BK_MPI_EXAMPLES)
CLEANFILES += examples/mpi_swiglu examples/mpi_swiglu_f
AM_TESTS_ENVIRONMENT += MPIRUN='$(MPIRUN)'; export MPIRUN;
