# cmake/: the CMake package files (find_package(bk) -> imported target
# bk::bk), made at build time so their paths are the installed ones.
cmakedir = $(libdir)/cmake/bk
cmake_DATA = cmake/bkConfig.cmake cmake/bkConfigVersion.cmake
CLEANFILES += $(cmake_DATA)
EXTRA_DIST += cmake/bkConfig.cmake.in cmake/bkConfigVersion.cmake.in \
	cmake/test/CMakeLists.txt cmake/test/check.c

# The soname's major number: current - age of -version-info.
BK_SOVERSION = `echo $(BK_LT_VERSION) | $(AWK) -F: '{ print $$1 - $$3 }'`

BK_CMAKE_SUBST = $(MKDIR_P) cmake && $(SED) \
	  -e 's|@libdir[@]|$(libdir)|g' -e 's|@includedir[@]|$(includedir)|g' \
	  -e 's|@shrext[@]|.so|g' -e "s|@BK_SOVERSION[@]|$(BK_SOVERSION)|g" \
	  -e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g'
cmake/bkConfig.cmake: $(srcdir)/cmake/bkConfig.cmake.in Makefile
	$(AM_V_GEN)$(BK_CMAKE_SUBST) $(srcdir)/cmake/bkConfig.cmake.in > $@-t && mv -f $@-t $@
cmake/bkConfigVersion.cmake: $(srcdir)/cmake/bkConfigVersion.cmake.in Makefile
	$(AM_V_GEN)$(BK_CMAKE_SUBST) $(srcdir)/cmake/bkConfigVersion.cmake.in > $@-t && mv -f $@-t $@

# make installcheck (and so distcheck): a CMake project finds the installed
# package and builds and runs a program against it, when cmake is present.
BK_INSTALLCHECK_HOOKS += installcheck-cmake
installcheck-cmake:
	$(AM_V_at)if command -v cmake >/dev/null 2>&1 && test -z '$(DESTDIR)'; then \
	  rm -rf installcheck-cmake.tmp && $(MKDIR_P) installcheck-cmake.tmp && \
	  cmake -S $(srcdir)/cmake/test -B installcheck-cmake.tmp \
	    -DCMAKE_PREFIX_PATH='$(prefix)' -DCMAKE_C_COMPILER='$(CC)' >/dev/null && \
	  cmake --build installcheck-cmake.tmp >/dev/null && \
	  ./installcheck-cmake.tmp/bk-cmake-check && \
	  rm -rf installcheck-cmake.tmp; \
	else \
	  echo "installcheck-cmake: skipped (no cmake, or DESTDIR set)"; \
	fi
