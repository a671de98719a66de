# SPDX-License-Identifier: Apache-2.0
# cmake/: the CMake package files (find_package(bk) -> imported target
# bk::bk), made at build time. Paths under the prefix are written relative
# to the package's own directory (${PACKAGE_PREFIX_DIR}, @BK_CMAKE_UP@ =
# "../../.." for lib/cmake/bk), so an installed tree can be moved; when
# cmakedir is outside the prefix every path stays absolute.
cmakedir = $(libdir)/cmake/bk
cmake_DATA = cmake/bkConfig.cmake cmake/bkConfigVersion.cmake
CLEANFILES += $(cmake_DATA)
EXTRA_DIST += cmake/bkConfig.cmake.in cmake/bkConfigVersion.cmake.in \
	cmake/test/CMakeLists.txt cmake/test/check.c cmake/test-fortran/CMakeLists.txt

# The soname's major number: current - age of -version-info.
BK_SOVERSION = `echo $(BK_LT_VERSION) | $(AWK) -F: '{ print $$1 - $$3 }'`

BK_CMAKE_SUBST = $(MKDIR_P) cmake && \
	rel=`echo '$(cmakedir)' | $(SED) -n 's|^$(prefix)/||p'` && \
	if test -n "$$rel"; then \
	  up=`echo "$$rel" | $(SED) 's|[^/][^/]*|..|g'`; \
	  rel() { echo "$$1" | $(SED) 's|^$(prefix)/|$${PACKAGE_PREFIX_DIR}/|'; }; \
	else \
	  up=.; rel() { echo "$$1"; }; \
	fi && $(SED) -e "s|@BK_CMAKE_UP[@]|$$up|g" \
	  -e "s|@libdir[@]|`rel '$(libdir)'`|g" -e "s|@includedir[@]|`rel '$(includedir)'`|g" \
	  -e 's|@shrext[@]|.so|g' -e "s|@BK_SOVERSION[@]|$(BK_SOVERSION)|g" \
	  -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	  -e "s|@BK_FMODDIR[@]|`rel '$(BK_FMODDIR)'`|g" -e 's|@BK_FC_ID[@]|$(BK_FC_ID)|g'
cmake/bkConfig.cmake: $(srcdir)/cmake/bkConfig.cmake.in Makefile
	$(AM_V_GEN)$(BK_CMAKE_SUBST) $(srcdir)/cmake/bkConfig.cmake.in > $@-t && mv -f $@-t $@
cmake/bkConfigVersion.cmake: $(srcdir)/cmake/bkConfigVersion.cmake.in Makefile
	$(AM_V_GEN)$(BK_CMAKE_SUBST) $(srcdir)/cmake/bkConfigVersion.cmake.in > $@-t && mv -f $@-t $@

# make installcheck (and so distcheck): CMake projects find the installed
# package and build and run programs against it, when cmake is present: C
# through bk::bk (a version check and examples/swiglu.c, which runs SwiGLU
# on the host and checks it), Fortran through bk::fortran
# (examples/fortran_swiglu_steps.f90) when libbk has its Fortran module.
BK_INSTALLCHECK_HOOKS += installcheck-cmake
installcheck-cmake:
	$(AM_V_at)if command -v cmake >/dev/null 2>&1 && test -z '$(DESTDIR)'; then \
	  rm -rf installcheck-cmake.tmp && $(MKDIR_P) installcheck-cmake.tmp && \
	  echo "  CMAKE    cmake/test against the installed bk::bk" && \
	  cmake -S $(srcdir)/cmake/test -B installcheck-cmake.tmp/c \
	    -DCMAKE_PREFIX_PATH='$(prefix)' -DCMAKE_C_COMPILER='$(CC)' \
	    -DBK_EXAMPLES='$(abs_top_srcdir)/examples' >/dev/null && \
	  cmake --build installcheck-cmake.tmp/c >/dev/null && \
	  ./installcheck-cmake.tmp/c/bk-cmake-check && \
	  ./installcheck-cmake.tmp/c/bk-cmake-swiglu host >/dev/null && \
	  if test $(BK_FORTRAN_INSTALLCHECK) = yes; then \
	    echo "  CMAKE    cmake/test-fortran against the installed bk::fortran" && \
	    cmake -S $(srcdir)/cmake/test-fortran -B installcheck-cmake.tmp/f \
	      -DCMAKE_PREFIX_PATH='$(prefix)' -DCMAKE_Fortran_COMPILER='$(FC)' \
	      -DBK_EXAMPLES='$(abs_top_srcdir)/examples' >/dev/null && \
	    cmake --build installcheck-cmake.tmp/f >/dev/null && \
	    ./installcheck-cmake.tmp/f/bk-cmake-fortran host >/dev/null; \
	  fi && \
	  rm -rf installcheck-cmake.tmp; \
	else \
	  echo "installcheck-cmake: skipped (no cmake, or DESTDIR set)"; \
	fi

# make installcheck: the installed package is relocatable. Its files are
# copied to another directory, each keeping its place under the prefix
# (as moving the whole prefix would), and cmake/test is built against the
# copy (BK_EXPECT_PREFIX: bk::bk's paths must all point into it) and run,
# and so is cmake/test-fortran when libbk has its Fortran module.
BK_INSTALLCHECK_HOOKS += installcheck-cmake-moved
installcheck-cmake-moved:
	$(AM_V_at)rel=`echo '$(cmakedir)' | $(SED) -n 's|^$(prefix)/||p'`; \
	if command -v cmake >/dev/null 2>&1 && test -z '$(DESTDIR)' && test -n "$$rel"; then \
	  tmp=installcheck-moved.tmp && moved=`pwd`/$$tmp/moved && rm -rf $$tmp && \
	  echo "  CMAKE    cmake/test against a moved copy of the installed bk::bk" && \
	  for f in '$(cmakedir)' '$(includedir)/bk' '$(libdir)'/libbk.so* \
	           '$(libdir)'/libbk_fortran.so* '$(BK_FMODDIR)'; do \
	    test -n "$$f" && test -e "$$f" || continue; \
	    to=$$moved/`echo "$$f" | $(SED) 's|^$(prefix)/||'`; \
	    $(MKDIR_P) "`dirname "$$to"`" && cp -RP "$$f" "$$to" || exit 1; \
	  done && \
	  cmake -S $(srcdir)/cmake/test -B $$tmp/c -DCMAKE_PREFIX_PATH="$$moved" \
	    -DBK_EXPECT_PREFIX="$$moved" -DCMAKE_C_COMPILER='$(CC)' \
	    -DBK_EXAMPLES='$(abs_top_srcdir)/examples' >/dev/null && \
	  cmake --build $$tmp/c >/dev/null && \
	  ./$$tmp/c/bk-cmake-check && \
	  ./$$tmp/c/bk-cmake-swiglu host >/dev/null && \
	  if test $(BK_FORTRAN_INSTALLCHECK) = yes; then \
	    echo "  CMAKE    cmake/test-fortran against the moved copy of bk::fortran" && \
	    cmake -S $(srcdir)/cmake/test-fortran -B $$tmp/f -DCMAKE_PREFIX_PATH="$$moved" \
	      -DCMAKE_Fortran_COMPILER='$(FC)' \
	      -DBK_EXAMPLES='$(abs_top_srcdir)/examples' >/dev/null && \
	    cmake --build $$tmp/f >/dev/null && \
	    ./$$tmp/f/bk-cmake-fortran host >/dev/null; \
	  fi && \
	  rm -rf $$tmp; \
	else \
	  echo "installcheck-cmake-moved: skipped (no cmake, DESTDIR set, or cmakedir outside the prefix)"; \
	fi
