# t/: the C TAP tests and the small library they share (tap.c, helpers,
# gated activation cases). Fortran tests and man-page checks add
# themselves from their own local.mk.

check_LTLIBRARIES += t/libbktest.la
t_libbktest_la_SOURCES = \
	t/tap.h t/tap.c \
	t/test_util.h t/test_util.c \
	t/test_numeric.h t/test_numeric.c \
	t/gated_case.h t/gated_case.c t/gated_ref.c \
	t/gemm_ref.h t/gemm_ref.c t/gemm_infos.h \
	t/w4a16_ref.h t/w4a16_ref.c \
	t/attention_ref.h t/attention_ref.c

# Test programs: one area each. -no-install links them against the
# uninstalled libbk directly (no libtool wrapper), so they run as is,
# under gdb or valgrind too.
BK_C_TESTS = \
	t/version \
	t/messages \
	t/devices \
	t/context \
	t/memory \
	t/queue \
	t/command_buffer \
	t/copy_fill \
	t/plan \
	t/plan_threads \
	t/run_checks \
	t/gated_validation \
	t/gated_forward \
	t/gated_backward \
	t/gated_fd \
	t/gated_sizes \
	t/gated_exhaustive \
	t/gemm \
	t/sparse24 \
	t/gemm_validation \
	t/sparse24_validation \
	t/w4a16 \
	t/w4a16_validation \
	t/attention \
	t/attention_validation \
	t/gpu_gemm \
	t/gpu_gemm_nolib \
	t/gpu_sparse24 \
	t/gpu_w4a16 \
	t/gpu_attention \
	t/determinism \
	t/host_pointers \
	t/gpu_gated \
	t/gpu_launch
check_PROGRAMS += $(BK_C_TESTS)
TESTS += $(BK_C_TESTS) t/exports.sh t/gated_baseline.sh t/debian_symbols.sh
EXTRA_DIST += t/exports.sh t/gated_baseline.sh t/debian_symbols.sh

BK_TEST_LIBS = t/libbktest.la libbk.la
BK_TEST_LINK_FLAGS = -no-install
t_version_LDADD = $(BK_TEST_LIBS)
t_version_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_messages_LDADD = $(BK_TEST_LIBS)
t_messages_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_devices_LDADD = $(BK_TEST_LIBS)
t_devices_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_context_LDADD = $(BK_TEST_LIBS)
t_context_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_memory_LDADD = $(BK_TEST_LIBS)
t_memory_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_queue_LDADD = $(BK_TEST_LIBS)
t_queue_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_command_buffer_LDADD = $(BK_TEST_LIBS)
t_command_buffer_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_copy_fill_LDADD = $(BK_TEST_LIBS)
t_copy_fill_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_plan_LDADD = $(BK_TEST_LIBS)
t_plan_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_plan_threads_LDADD = $(BK_TEST_LIBS)
t_plan_threads_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_launch_LDADD = $(BK_TEST_LIBS)
t_gpu_launch_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_exhaustive_LDADD = $(BK_TEST_LIBS)
t_gated_exhaustive_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_run_checks_LDADD = $(BK_TEST_LIBS)
t_run_checks_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_validation_LDADD = $(BK_TEST_LIBS)
t_gated_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_forward_LDADD = $(BK_TEST_LIBS)
t_gated_forward_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_backward_LDADD = $(BK_TEST_LIBS)
t_gated_backward_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_fd_LDADD = $(BK_TEST_LIBS)
t_gated_fd_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_sizes_LDADD = $(BK_TEST_LIBS)
t_gated_sizes_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_determinism_LDADD = $(BK_TEST_LIBS)
t_determinism_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_host_pointers_LDADD = $(BK_TEST_LIBS)
t_host_pointers_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gated_LDADD = $(BK_TEST_LIBS)
t_gpu_gated_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gemm_LDADD = $(BK_TEST_LIBS)
t_gemm_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_sparse24_LDADD = $(BK_TEST_LIBS)
t_sparse24_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gemm_validation_LDADD = $(BK_TEST_LIBS)
t_gemm_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_sparse24_validation_LDADD = $(BK_TEST_LIBS)
t_sparse24_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_w4a16_LDADD = $(BK_TEST_LIBS)
t_w4a16_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_w4a16_validation_LDADD = $(BK_TEST_LIBS)
t_w4a16_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_attention_LDADD = $(BK_TEST_LIBS)
t_attention_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_attention_validation_LDADD = $(BK_TEST_LIBS)
t_attention_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
# The GPU-against-host tests of the GEMM family share t/gpu_pair.c.
t_gpu_gemm_SOURCES = t/gpu_gemm.c t/gpu_pair.c t/gpu_pair.h
t_gpu_gemm_LDADD = $(BK_TEST_LIBS)
t_gpu_gemm_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gemm_nolib_LDADD = $(BK_TEST_LIBS)
t_gpu_gemm_nolib_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_sparse24_SOURCES = t/gpu_sparse24.c t/gpu_pair.c t/gpu_pair.h
t_gpu_sparse24_LDADD = $(BK_TEST_LIBS)
t_gpu_sparse24_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_w4a16_SOURCES = t/gpu_w4a16.c t/gpu_pair.c t/gpu_pair.h
t_gpu_w4a16_LDADD = $(BK_TEST_LIBS)
t_gpu_w4a16_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_attention_SOURCES = t/gpu_attention.c t/gpu_pair.c t/gpu_pair.h
t_gpu_attention_LDADD = $(BK_TEST_LIBS)
t_gpu_attention_LDFLAGS = $(BK_TEST_LINK_FLAGS)
