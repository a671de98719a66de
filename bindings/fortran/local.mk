# SPDX-License-Identifier: Apache-2.0
# bindings/fortran: the Fortran module bk (bk_constants, bk_types, bk_capi:
# pure interfaces to libbk; bk_helpers: Fortran-friendly helpers whose code
# is libbk_fortran), its tests and its Fortran example. Built when
# configure found a Fortran compiler (BK_ENABLE_FORTRAN); see
# bindings/fortran/configure.m4 and bk-fortran(7).
#
# The four module sources but bk.f90 are generated from the C headers by
# bindings/fortran/gen/ (bk_helpers.f90 from bk_helpers.f90.in) and
# committed, so building needs no generator run; `make fortran-generate`
# rewrites them after a header change, and t/fortran/fortran-generated.sh fails
# while they differ from a fresh run.

# Module sources in dependency order (each uses the ones before it).
BK_FORTRAN_SRC = \
	bindings/fortran/bk_constants.f90 \
	bindings/fortran/bk_types.f90 \
	bindings/fortran/bk_capi.f90 \
	bindings/fortran/bk_helpers.f90 \
	bindings/fortran/bk.f90
BK_FORTRAN_MODS = \
	bindings/fortran/bk_constants.mod \
	bindings/fortran/bk_types.mod \
	bindings/fortran/bk_capi.mod \
	bindings/fortran/bk_helpers.mod \
	bindings/fortran/bk.mod

# Every Fortran compile writes its .mod files to, and finds them in,
# bindings/fortran/ of the build tree.
AM_FCFLAGS = $(FC_MODOUT)bindings/fortran $(FC_MODINC)bindings/fortran $(BK_WARN_FCFLAGS)

# Tests: programs print TAP themselves; the .sh checks compare the
# committed binding with a fresh generation, C's layout with Fortran's,
# check handle type safety and run the example.
BK_FORTRAN_TAP_TESTS = \
	t/fortran/fortran_api \
	t/fortran/fortran_gated_forward \
	t/fortran/fortran_gated_backward \
	t/fortran/fortran_errors \
	t/fortran/fortran_gemm \
	t/fortran/fortran_w4a16 \
	t/fortran/fortran_attention \
	t/fortran/fortran_attention_sequences \
	t/fortran/fortran_queue_run \
	t/fortran/fortran_convert \
	t/fortran/fortran_wrappers \
	t/fortran/fortran_integer8 \
	t/fortran/fortran_readme
BK_FORTRAN_SH_TESTS = \
	t/fortran/fortran-generated.sh \
	t/fortran/fortran-layout.sh \
	t/fortran/fortran-typesafe.sh \
	t/fortran/fortran-example.sh
BK_FORTRAN_LIBS = bindings/fortran/libbk_fortran.la libbk.la
BK_FORTRAN_GEN = \
	bindings/fortran/gen/gen.sh \
	bindings/fortran/gen/parse.awk \
	bindings/fortran/gen/common.awk \
	bindings/fortran/gen/constants.awk \
	bindings/fortran/gen/types.awk \
	bindings/fortran/gen/capi.awk \
	bindings/fortran/gen/helpers.awk \
	bindings/fortran/gen/layout.awk \
	bindings/fortran/bk_helpers.f90.in

EXTRA_DIST += $(BK_FORTRAN_SH_TESTS) $(BK_FORTRAN_GEN) bk-fortran.pc.in t/fortran/readme-program.sh
dist_man7_MANS += man/bk-fortran.7
CLEANFILES += bindings/fortran/*.mod bindings/fortran/fortran-env.sh t/fortran/fortran_readme.f90 \
	t/fortran/fortran_layout_c.c t/fortran/fortran_layout_f.f90

# After a change to the headers or the generator: rewrite the committed
# binding (needs only sh and awk, no Fortran compiler).
fortran-generate:
	AWK='$(AWK)' $(SHELL) $(srcdir)/bindings/fortran/gen/gen.sh $(srcdir) $(srcdir)/bindings/fortran
.PHONY: fortran-generate

if BK_ENABLE_FORTRAN
lib_LTLIBRARIES += bindings/fortran/libbk_fortran.la
bindings_fortran_libbk_fortran_la_SOURCES = $(BK_FORTRAN_SRC)
bindings_fortran_libbk_fortran_la_LIBADD = libbk.la
# Its own libtool version (current:revision:age, libcurl rules as libbk).
bindings_fortran_libbk_fortran_la_LDFLAGS = -version-info 1:0:1 -no-undefined

# Module dependencies: automake does not see USE statements.
bindings/fortran/bk_types.lo: bindings/fortran/bk_constants.lo
bindings/fortran/bk_capi.lo: bindings/fortran/bk_types.lo
bindings/fortran/bk_helpers.lo: bindings/fortran/bk_capi.lo
bindings/fortran/bk.lo: bindings/fortran/bk_helpers.lo
$(BK_FORTRAN_MODS): bindings/fortran/libbk_fortran.la
	@test -f $@ || { echo "$@ was not written by $(FC)" >&2; exit 1; }

# Compiled modules in a compiler-specific directory; the sources, which
# any Fortran compiler can build, beside the C headers.
fmoddir = $(BK_FMODDIR)
nodist_fmod_DATA = $(BK_FORTRAN_MODS)
bkfortransrcdir = $(includedir)/bk/fortran
bkfortransrc_DATA = $(BK_FORTRAN_SRC)
pkgconfig_DATA += bk-fortran.pc

check_PROGRAMS += $(BK_FORTRAN_TAP_TESTS) t/fortran/fortran_layout_c t/fortran/fortran_layout_f \
	examples/fortran_swiglu_steps
TESTS += $(BK_FORTRAN_TAP_TESTS) $(BK_FORTRAN_SH_TESTS)

t_fortran_fortran_api_SOURCES = t/fortran/fortran_api.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_api_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_gated_forward_SOURCES = t/fortran/fortran_gated_forward.f90 t/fortran/fortran_gated_ref.f90 \
	t/fortran/fortran_gated_run.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_gated_forward_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_gated_backward_SOURCES = t/fortran/fortran_gated_backward.f90 t/fortran/fortran_gated_ref.f90 \
	t/fortran/fortran_gated_run.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_gated_backward_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_errors_SOURCES = t/fortran/fortran_errors.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_errors_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_gemm_SOURCES = t/fortran/fortran_gemm.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_gemm_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_w4a16_SOURCES = t/fortran/fortran_w4a16.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_w4a16_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_attention_SOURCES = t/fortran/fortran_attention.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_attention_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_attention_sequences_SOURCES = t/fortran/fortran_attention_sequences.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_attention_sequences_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_queue_run_SOURCES = t/fortran/fortran_queue_run.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_queue_run_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_convert_SOURCES = t/fortran/fortran_convert.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_convert_LDADD = $(BK_FORTRAN_LIBS)
t_fortran_fortran_wrappers_SOURCES = t/fortran/fortran_wrappers.f90 t/fortran/fortran_tap.f90
t_fortran_fortran_wrappers_LDADD = $(BK_FORTRAN_LIBS)
# Built with 8-byte default integers against the module built without.
t_fortran_fortran_integer8_SOURCES = t/fortran/fortran_integer8.f90
t_fortran_fortran_integer8_FCFLAGS = $(AM_FCFLAGS) $(BK_FC_INTEGER8)
t_fortran_fortran_integer8_LDADD = $(BK_FORTRAN_LIBS)
# README.md's Fortran block inside a program that checks its result,
# generated in the build tree, so that the README's code compiles.
t_fortran_fortran_readme_SOURCES = t/fortran/fortran_tap.f90
nodist_t_fortran_fortran_readme_SOURCES = t/fortran/fortran_readme.f90
t_fortran_fortran_readme_LDADD = $(BK_FORTRAN_LIBS)
t/fortran/fortran_readme.f90: $(srcdir)/README.md $(srcdir)/t/fortran/readme-program.sh
	$(AM_V_GEN)$(MKDIR_P) t/fortran && \
	  $(SHELL) $(srcdir)/t/fortran/readme-program.sh $(srcdir)/README.md > $@-t && mv -f $@-t $@
t/fortran/fortran_readme.$(OBJEXT): t/fortran/fortran_tap.$(OBJEXT)
# The layout programs are generated in the build tree, from the headers.
nodist_t_fortran_fortran_layout_c_SOURCES = t/fortran/fortran_layout_c.c
nodist_t_fortran_fortran_layout_f_SOURCES = t/fortran/fortran_layout_f.f90
t_fortran_fortran_layout_f_LDADD = $(BK_FORTRAN_LIBS)
examples_fortran_swiglu_steps_SOURCES = examples/fortran_swiglu_steps.f90
examples_fortran_swiglu_steps_LDADD = $(BK_FORTRAN_LIBS)

t/fortran/fortran_tap.$(OBJEXT): bindings/fortran/bk.lo
t/fortran/fortran_gated_ref.$(OBJEXT) t/fortran/fortran_gated_run.$(OBJEXT): bindings/fortran/bk.lo
t/fortran/fortran_api.$(OBJEXT) t/fortran/fortran_errors.$(OBJEXT) t/fortran/fortran_gemm.$(OBJEXT) \
	t/fortran/fortran_w4a16.$(OBJEXT) t/fortran/fortran_attention.$(OBJEXT) \
	t/fortran/fortran_attention_sequences.$(OBJEXT) t/fortran/fortran_queue_run.$(OBJEXT) \
	t/fortran/fortran_convert.$(OBJEXT) t/fortran/fortran_wrappers.$(OBJEXT): \
	t/fortran/fortran_tap.$(OBJEXT)
t/fortran/fortran_gated_forward.$(OBJEXT) t/fortran/fortran_gated_backward.$(OBJEXT): \
	t/fortran/fortran_tap.$(OBJEXT) t/fortran/fortran_gated_ref.$(OBJEXT) t/fortran/fortran_gated_run.$(OBJEXT)
t/fortran/fortran_layout_f.$(OBJEXT) examples/fortran_swiglu_steps.$(OBJEXT): bindings/fortran/bk.lo
t/fortran/fortran_integer8-fortran_integer8.$(OBJEXT): bindings/fortran/bk.lo

t/fortran/fortran_layout_c.c: $(BK_FORTRAN_GEN:%=$(srcdir)/%) $(bkinclude_HEADERS:%=$(srcdir)/%)
	$(AM_V_GEN)AWK='$(AWK)' $(SHELL) $(srcdir)/bindings/fortran/gen/gen.sh --layout $(srcdir) t/fortran
t/fortran/fortran_layout_f.f90: t/fortran/fortran_layout_c.c
	@test -f $@ || { echo "$@ is missing: remove t/fortran/fortran_layout_c.c and make again" >&2; exit 1; }

# What the .sh tests need to compile small Fortran programs themselves.
t/fortran/fortran-generated.log t/fortran/fortran-typesafe.log: bindings/fortran/fortran-env.sh
bindings/fortran/fortran-env.sh: Makefile
	$(AM_V_GEN)$(MKDIR_P) bindings/fortran && { \
	  echo "FC='$(FC)'"; \
	  echo "FCFLAGS='$(FCFLAGS) $(FCFLAGS_f90)'"; \
	  echo "BK_WARN_FCFLAGS='$(BK_WARN_FCFLAGS)'"; \
	  echo "FC_MODINC='$(FC_MODINC)'"; \
	  echo "FC_MODOUT='$(FC_MODOUT)'"; \
	} > $@-t && mv -f $@-t $@

endif

# Programs built against the installed module through bk-fortran.pc
# (make installcheck, and so distcheck): the example, and the gated
# activation tests, which run every op.
if BK_ENABLE_FORTRAN
BK_FORTRAN_INSTALLCHECK = yes
else
BK_FORTRAN_INSTALLCHECK = no
endif
BK_FORTRAN_IC_TEST_SRC = t/fortran/fortran_tap.f90 t/fortran/fortran_gated_ref.f90 t/fortran/fortran_gated_run.f90
BK_INSTALLCHECK_HOOKS += installcheck-fortran
installcheck-fortran:
	$(AM_V_at)if test $(BK_FORTRAN_INSTALLCHECK) = yes; then \
	  rm -rf installcheck-fortran.tmp && $(MKDIR_P) installcheck-fortran.tmp && \
	  PKG_CONFIG_PATH='$(DESTDIR)$(pkgconfigdir)' && export PKG_CONFIG_PATH && \
	  PKG_CONFIG_SYSROOT_DIR='$(DESTDIR)' && export PKG_CONFIG_SYSROOT_DIR && \
	  fcflags=`$(PKG_CONFIG) --cflags bk-fortran` && \
	  libs="-Wl,-rpath,$(DESTDIR)$(libdir) `$(PKG_CONFIG) --libs bk-fortran`" && \
	  cd installcheck-fortran.tmp && \
	  for p in examples/fortran_swiglu_steps t/fortran/fortran_gated_forward t/fortran/fortran_gated_backward; do \
	    case $$p in t/*) src='$(BK_FORTRAN_IC_TEST_SRC)' ;; *) src= ;; esac; \
	    srcs=; for s in $$src $$p.f90; do srcs="$$srcs $(abs_top_srcdir)/$$s"; done; \
	    echo "  FC       $$p against the installed bk-fortran.pc"; \
	    $(FC) $$fcflags -o prog $$srcs $$libs && ./prog > prog.out || \
	      { cat prog.out; exit 1; }; \
	  done && \
	  cd .. && rm -rf installcheck-fortran.tmp; \
	fi
.PHONY: installcheck-fortran
