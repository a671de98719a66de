# SPDX-License-Identifier: Apache-2.0
# libbk itself: core objects, op validation, and the backends.
bkinclude_HEADERS += include/bk/bk.h include/bk/bk_core.h include/bk/bk_gated_activation.h \
	include/bk/bk_gemm.h include/bk/bk_w4a16.h include/bk/bk_attention.h \
	include/bk/bk_convert.h

lib_LTLIBRARIES += libbk.la
libbk_la_SOURCES = \
	lib/bk_internal.h \
	lib/checked.h \
	lib/op_registry.h \
	lib/error.c \
	lib/alloc.c \
	lib/structs.c \
	lib/tensor.c \
	lib/device.c \
	lib/memory.c \
	lib/queue.c \
	lib/command_buffer.c \
	lib/plan.c \
	lib/gated_activation.c \
	lib/matrix.c \
	lib/gemm.c \
	lib/sparse24.c \
	lib/sparse24_report.c \
	lib/w4a16.c \
	lib/w4a16_report.c \
	kernels/shared/w4a16_layout.h \
	lib/attention.c \
	lib/convert.c \
	kernels/shared/convert_round.h \
	lib/half.h \
	lib/host/host_backend.c \
	lib/host/host_internal.h \
	lib/host/host_gated_activation.c \
	lib/host/host_convert.c \
	lib/host/host_gated_simd.h \
	lib/host/host_gated_simd.c \
	lib/host/host_gemm.c \
	lib/host/host_gemm_engine.h \
	lib/host/host_gemm_engine.c \
	lib/host/host_gemm_kernel.c \
	lib/host/host_gemm_pack.c \
	lib/host/host_f16c.h \
	lib/host/host_f16c.c \
	lib/host/host_half_convert.h \
	lib/host/host_blas.h \
	lib/host/host_blas.c \
	lib/host/host_sparse24.c \
	lib/host/host_sparse24_convert.c \
	lib/host/host_w4a16.h \
	lib/host/host_w4a16.c \
	lib/host/host_w4a16_gemm.c \
	lib/host/host_attention.h \
	lib/host/host_attention.c \
	lib/host/host_attention_backward.c \
	lib/host/host_attention_sequences.c
# The headers the kernels share with the host code: kernels/shared/.
libbk_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/kernels/shared -DBK_BUILDING_LIBRARY $(BLAS_CFLAGS)
libbk_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden $(OPENMP_CFLAGS)
libbk_la_LDFLAGS = -version-info $(BK_LT_VERSION) -no-undefined $(OPENMP_CFLAGS)
libbk_la_LIBADD = $(BLAS_LIBS)
EXTRA_libbk_la_DEPENDENCIES = $(srcdir)/lib/libbk.map
if BK_HAVE_VERSION_SCRIPT
libbk_la_LDFLAGS += -Wl,--version-script=$(srcdir)/lib/libbk.map
endif
EXTRA_DIST += lib/libbk.map
