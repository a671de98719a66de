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
