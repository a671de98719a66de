# SPDX-License-Identifier: Apache-2.0
# man/: the man3 page of every exported function and the man7 overviews.
# A page may document a family; the other names in it are listed in
# man/links and installed as symbolic links to the family's page (Debian
# policy prefers links to .so pages, and they lint clean).
# (The man1 pages of the tools are listed in tools/local.mk.)
dist_man3_MANS += \
	man/bkAllocateCommandBuffer.3 \
	man/bkAllocateMemory.3 \
	man/bkCheckSparse24Report.3 \
	man/bkCheckW4A16RepackReport.3 \
	man/bkCmdCopyMemory.3 \
	man/bkCmdRun.3 \
	man/bkCreateContext.3 \
	man/bkCreatePlan.3 \
	man/bkEnumerateDevices.3 \
	man/bkGetLastErrorMessage.3 \
	man/bkGetQueue.3 \
	man/bkGetVersion.3 \
	man/bkQueueRun.3 \
	man/bkResultString.3 \
	man/bk_helpers.3

dist_man7_MANS += \
	man/bk.7 \
	man/bk-attention.7 \
	man/bk-convert.7 \
	man/bk-gated-activation.7 \
	man/bk-gemm.7 \
	man/bk-w4a16.7

EXTRA_DIST += man/links
BK_INSTALL_DATA_HOOKS += install-man3-links
BK_UNINSTALL_HOOKS += uninstall-man3-links

install-man3-links:
	@$(MKDIR_P) "$(DESTDIR)$(man3dir)"
	@sed -e '/^#/d' -e '/^$$/d' $(srcdir)/man/links | while read alias page; do \
	  rm -f "$(DESTDIR)$(man3dir)/$$alias.3"; \
	  echo " $(LN_S) $$page.3 $(DESTDIR)$(man3dir)/$$alias.3"; \
	  $(LN_S) "$$page.3" "$(DESTDIR)$(man3dir)/$$alias.3" || exit 1; \
	done

uninstall-man3-links:
	@sed -e '/^#/d' -e '/^$$/d' $(srcdir)/man/links | while read alias page; do \
	  rm -f "$(DESTDIR)$(man3dir)/$$alias.3"; \
	done

# Lints every page with mandoc and checks each exported symbol has a page.
TESTS += t/packaging/man-pages.sh
EXTRA_DIST += t/packaging/man-pages.sh
