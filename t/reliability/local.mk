# SPDX-License-Identifier: Apache-2.0
# t/reliability: fuzzing, fault injection, thread safety, overflow and
# bounds properties (TAP, run by `make check`), plus the targets
# check-valgrind, abi-dump and abi-check. See CONTRIBUTING.md.

BK_REL_COMMON = t/reliability/rel_util.c t/reliability/rel_util.h
# TAP output comes from t/libbktest.la (t/lib/tap.c); -no-install runs the
# programs against the uninstalled libbk directly, as t/local.mk does.
BK_REL_LIBS = t/libbktest.la libbk.la
BK_FUZZ_HARNESS = \
	t/reliability/fuzz_harness.c t/reliability/fuzz_harness.h \
	t/reliability/fuzz_input.c t/reliability/fuzz_input.h \
	t/reliability/fuzz_ops.c t/reliability/fuzz_ops.h

BK_REL_TESTS = \
	t/reliability/fuzz-replay \
	t/reliability/fault-injection \
	t/reliability/no-libc-alloc \
	t/reliability/threads \
	t/reliability/bounds \
	t/reliability/hostile
check_PROGRAMS += $(BK_REL_TESTS)
TESTS += $(BK_REL_TESTS) t/reliability/fuzz-campaign.sh
EXTRA_DIST += \
	t/reliability/configure.m4 \
	t/reliability/fuzz-campaign.sh \
	t/reliability/fuzz-corpus.txt \
	t/reliability/memcheck.sh \
	t/reliability/valgrind.supp \
	abi/libbk.abi \
	CONTRIBUTING.md \
	.ci/reliability.sh

t_reliability_fuzz_replay_SOURCES = t/reliability/fuzz_replay.c $(BK_FUZZ_HARNESS) $(BK_REL_COMMON)
t_reliability_fuzz_replay_LDADD = $(BK_REL_LIBS)
t_reliability_fuzz_replay_LDFLAGS = -no-install
t_reliability_fault_injection_SOURCES = t/reliability/fault_injection.c $(BK_REL_COMMON)
t_reliability_fault_injection_LDADD = $(BK_REL_LIBS)
t_reliability_fault_injection_LDFLAGS = -no-install
t_reliability_threads_SOURCES = t/reliability/threads.c $(BK_REL_COMMON)
t_reliability_threads_LDADD = $(BK_REL_LIBS)
t_reliability_threads_LDFLAGS = -no-install
t_reliability_bounds_SOURCES = t/reliability/bounds.c $(BK_REL_COMMON)
t_reliability_bounds_LDADD = $(BK_REL_LIBS)
t_reliability_bounds_LDFLAGS = -no-install
t_reliability_hostile_SOURCES = t/reliability/hostile.c $(BK_REL_COMMON)
t_reliability_hostile_LDADD = $(BK_REL_LIBS)
t_reliability_hostile_LDFLAGS = -no-install

# no-libc-alloc links libbk's objects themselves, with every C allocation
# function wrapped, so it sees each call libbk's code makes to them.
t_reliability_no_libc_alloc_SOURCES = t/reliability/no_libc_alloc.c $(BK_REL_COMMON)
t_reliability_no_libc_alloc_LDADD = t/libbktest.la $(libbk_la_OBJECTS) $(libbk_la_LIBADD)
t_reliability_no_libc_alloc_LDFLAGS = $(OPENMP_CFLAGS) \
	-Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc -Wl,--wrap=reallocarray \
	-Wl,--wrap=free -Wl,--wrap=aligned_alloc -Wl,--wrap=posix_memalign \
	-Wl,--wrap=memalign -Wl,--wrap=strdup -Wl,--wrap=strndup
EXTRA_t_reliability_no_libc_alloc_DEPENDENCIES = $(libbk_la_OBJECTS)

# ---- The libFuzzer campaign --------------------------------------------------
# Built with $(BK_FUZZ_CC) from the harness and libbk's host-only sources
# (a config.h that includes the real one and drops BK_HAVE_CUDA), so
# libFuzzer sees coverage inside libbk; run by fuzz-campaign.sh.
BK_FUZZ_BIN = t/reliability/fuzz-libfuzzer$(EXEEXT)
BK_FUZZ_CFLAGS = -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer
CLEANFILES += $(BK_FUZZ_BIN) t/reliability/fuzz-config/config.h
clean-local: clean-reliability
clean-reliability:
	-rm -rf t/reliability/fuzz-campaign.d t/reliability/fuzz-config
.PHONY: clean-reliability

if BK_HAVE_LIBFUZZER
t/reliability/fuzz-config/config.h: config.h
	@$(MKDIR_P) t/reliability/fuzz-config
	$(AM_V_GEN){ echo '#include "$(abs_top_builddir)/config.h"'; \
	  echo '#undef BK_HAVE_CUDA'; } >$@
# The objects of fuzz-replay and libbk stand for their sources as
# prerequisites.
$(BK_FUZZ_BIN): $(t_reliability_fuzz_replay_OBJECTS) $(libbk_la_OBJECTS) \
		t/reliability/fuzz-config/config.h
	$(AM_V_CCLD)srcs=; \
	for f in $(BK_FUZZ_HARNESS) $(BK_REL_COMMON) $(libbk_la_SOURCES); do \
	  case $$f in lib/cuda/*) ;; *.c) srcs="$$srcs $(srcdir)/$$f" ;; esac; \
	done; \
	$(BK_FUZZ_CC) $(BK_FUZZ_CFLAGS) -DBK_FUZZ_LIBFUZZER -DBK_BUILDING_LIBRARY \
	  -I$(builddir)/t/reliability/fuzz-config -I$(top_srcdir)/include \
	  -I$(top_srcdir)/kernels/shared $(BLAS_CFLAGS) -o $@ $$srcs $(BLAS_LIBS) $(LIBS)
t/reliability/fuzz-campaign.log: $(BK_FUZZ_BIN) t/reliability/fuzz-replay$(EXEEXT)
fuzz-libfuzzer: $(BK_FUZZ_BIN)
else
t/reliability/fuzz-campaign.log: t/reliability/fuzz-replay$(EXEEXT)
fuzz-libfuzzer:
	@echo "fuzz-libfuzzer: configure found no clang with -fsanitize=fuzzer (set BK_FUZZ_CC)"; exit 1
endif
.PHONY: fuzz-libfuzzer

# ---- The whole suite under valgrind memcheck ------------------------------------
check-valgrind:
	@if test -z "$(VALGRIND)"; then \
	  echo "check-valgrind: valgrind not found (Debian: apt-get install valgrind)"; exit 1; fi
	$(MAKE) $(AM_MAKEFLAGS) check \
	  LOG_COMPILER='$(SHELL) $(abs_top_srcdir)/t/reliability/memcheck.sh $(VALGRIND)'
.PHONY: check-valgrind

# ---- ABI baseline ----------------------------------------------------------------
# abi/libbk.abi is abidw's description of the exported interface: no paths,
# line numbers or DT_NEEDED, hash type ids, and source paths cut to lib/...,
# so the same sources give the same file whatever the build flags or
# directory. abi/libbk.abignore hides the opaque handle structs. abi-check
# fails on a removed or changed function or variable; additions pass with a
# reminder. See CONTRIBUTING.md for when to renew the baseline.
BK_ABI_BASELINE = $(srcdir)/abi/libbk.abi
BK_ABI_SUPPRESSIONS = $(srcdir)/abi/libbk.abignore
BK_ABIDW_FLAGS = --no-corpus-path --no-comp-dir-path --no-show-locs --no-elf-needed \
	--type-id-style hash --exported-interfaces-only
BK_ABIDIFF_FLAGS = --no-show-locs --suppressions $(BK_ABI_SUPPRESSIONS)
EXTRA_DIST += abi/libbk.abignore
# The real file behind libbk.la (.libs/libbk.so.0 on GNU/Linux), and a
# check that it has the debug info abidw reads.
bk_abi_find_so = so=.libs/`$(SED) -n "s/^dlname='\(.*\)'$$/\1/p" libbk.la`; \
	if ! $(READELF) -S "$$so" | grep -q '\.debug_info'; then \
	  echo "$@: $$so has no debug info: configure with CFLAGS='-g -O0' (or any -g)"; exit 1; fi

abi-dump: libbk.la
	@if test -z "$(ABIDW)"; then \
	  echo "abi-dump: abidw not found (Debian: apt-get install abigail-tools)"; exit 1; fi
	@$(bk_abi_find_so); \
	echo "$(ABIDW) $(BK_ABIDW_FLAGS) $$so > $(BK_ABI_BASELINE)"; \
	$(ABIDW) $(BK_ABIDW_FLAGS) "$$so" | \
	  $(SED) -e "s|path='[^']*\(lib/[^']*\)'|path='\1'|" >$(BK_ABI_BASELINE).tmp && \
	mv $(BK_ABI_BASELINE).tmp $(BK_ABI_BASELINE)

abi-check: libbk.la
	@if test -z "$(ABIDIFF)"; then \
	  echo "abi-check: SKIP: abidiff not found (Debian: apt-get install abigail-tools)"; \
	  exit 0; fi; \
	$(bk_abi_find_so); \
	echo "$(ABIDIFF) $(BK_ABIDIFF_FLAGS) $(BK_ABI_BASELINE) $$so"; \
	out=`$(ABIDIFF) $(BK_ABIDIFF_FLAGS) $(BK_ABI_BASELINE) "$$so"`; rc=$$?; \
	echo "$$out"; \
	if test $$(( rc & 3 )) -ne 0; then \
	  echo "abi-check: FAIL: abidiff could not compare (status $$rc)"; exit 1; fi; \
	if test $$(( rc & 8 )) -ne 0 || \
	   echo "$$out" | grep -Eq 'summary: [1-9][0-9]* Removed|, [1-9][0-9]* Changed'; then \
	  echo "abi-check: FAIL: an exported function or variable was removed or changed"; \
	  exit 1; fi; \
	if test $$rc -ne 0; then \
	  echo "abi-check: compatible additions only: bump -version-info (C+1:0:A+1), put new"; \
	  echo "abi-check: symbols in a new version node once BK_0.1 is released, then 'make abi-dump'"; \
	else echo "abi-check: the ABI matches $(BK_ABI_BASELINE)"; fi
.PHONY: abi-dump abi-check
