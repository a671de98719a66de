# SPDX-License-Identifier: Apache-2.0
# cmake/: the CMake package files (find_package(bk) -> imported target
# bk::bk), made at build time so their paths are the installed ones.
cmakedir = $(libdir)/cmake/bk
cmake_DATA = cmake/bkConfig.cmake cmake/bkConfigVersion.cmake
CLEANFILES += $(cmake_DATA)
EXTRA_DIST += cmake/bkConfig.cmake.in cmake/bkConfigVersion.cmake.in \
	cmake/test/CMakeLists.txt cmake/test/check.c cmake/test-fortran/CMakeLists.txt

# The soname's major number: current - age of -version-info.
BK_SOVERSION = `echo $(BK_LT_VERSION) | $(AWK) -F: '{ print $$1 - $$3 }'`

BK_CMAKE_SUBST = $(MKDIR_P) cmake && $(SED) \
	  -e 's|@libdir[@]|$(libdir)|g' -e 's|@includedir[@]|$(includedir)|g' \
	  -e 's|@shrext[@]|.so|g' -e "s|@BK_SOVERSION[@]|$(BK_SOVERSION)|g" \
	  -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g' \
	  -e 's|@BK_FMODDIR[@]|$(BK_FMODDIR)|g' -e 's|@BK_FC_ID[@]|$(BK_FC_ID)|g'
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
