# SPDX-License-Identifier: Apache-2.0
# t/: the C TAP tests, one folder per kind: api/ (the API itself), one
# per op family (gated/, gemm/, sparse24/, w4a16/, attention/, convert/), gpu/
# (GPU against host), packaging/ (exports, symbols, man pages, linking),
# reliability/ (its own local.mk), and lib/, the library they share (TAP,
# helpers, reference models). The Fortran tests add themselves from
# bindings/fortran/local.mk, the man-page check from man/local.mk.

check_LTLIBRARIES += t/libbktest.la
t_libbktest_la_SOURCES = \
	t/lib/tap.h t/lib/tap.c \
	t/lib/test_util.h t/lib/test_util.c \
	t/lib/test_numeric.h t/lib/test_numeric.c \
	t/lib/gated_case.h t/lib/gated_case.c t/lib/gated_ref.c \
	t/lib/gemm_ref.h t/lib/gemm_ref.c t/lib/gemm_infos.h \
	t/lib/w4a16_ref.h t/lib/w4a16_ref.c \
	t/lib/attention_ref.h t/lib/attention_ref.c \
	t/lib/convert_ref.h t/lib/convert_ref.c

# Test programs: one area each. -no-install links them against the
# uninstalled libbk directly (no libtool wrapper), so they run as is,
# under gdb or valgrind too; they include t/lib/'s headers by name.
BK_C_TESTS = \
	t/api/version \
	t/api/messages \
	t/api/devices \
	t/api/context \
	t/api/memory \
	t/api/queue \
	t/api/command_buffer \
	t/api/copy_fill \
	t/api/plan \
	t/api/plan_threads \
	t/api/run_checks \
	t/api/queue_run \
	t/api/determinism \
	t/api/host_pointers \
	t/gated/gated_validation \
	t/gated/gated_forward \
	t/gated/gated_backward \
	t/gated/gated_fd \
	t/gated/gated_sizes \
	t/gated/gated_exhaustive \
	t/gemm/gemm \
	t/gemm/gemm_validation \
	t/gemm/gemm_f16_values \
	t/gemm/gemm_bf16_values \
	t/sparse24/sparse24 \
	t/sparse24/sparse24_validation \
	t/w4a16/w4a16 \
	t/w4a16/w4a16_validation \
	t/w4a16/w4a16_zero_points \
	t/attention/attention \
	t/attention/attention_validation \
	t/attention/attention_sequences \
	t/attention/attention_mask_orientation \
	t/attention/attention_turns \
	t/convert/convert \
	t/convert/convert_validation \
	t/convert/convert_exhaustive \
	t/gpu/gpu_gemm \
	t/gpu/gpu_gemm_nolib \
	t/gpu/gpu_sparse24 \
	t/gpu/gpu_w4a16 \
	t/gpu/gpu_w4a16_chain \
	t/gpu/gpu_attention \
	t/gpu/gpu_gated \
	t/gpu/gpu_convert \
	t/gpu/gpu_launch
check_PROGRAMS += $(BK_C_TESTS)
TESTS += $(BK_C_TESTS) t/packaging/exports.sh t/gated/gated_baseline.sh \
	t/packaging/debian_symbols.sh
EXTRA_DIST += t/packaging/exports.sh t/gated/gated_baseline.sh t/packaging/debian_symbols.sh
# Repository rules: the SPDX line of every tracked file, and the
# commit-msg hook that checks commit messages.
TESTS += t/spdx.sh t/commit-msg.sh
EXTRA_DIST += t/spdx.sh t/commit-msg.sh

# The current results are what bench/current.sh makes of bench/data/; the
# tree speaks of the code, not of how it was developed.
TESTS += t/bench-current.sh t/process-words.sh
EXTRA_DIST += t/bench-current.sh t/process-words.sh bench/current.sh bench/json-flat.awk bench/current-tables.awk \
	bench/add-run.sh bench/CURRENT.md bench/data

BK_TEST_LIBS = t/libbktest.la libbk.la
BK_TEST_LINK_FLAGS = -no-install
BK_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/t/lib
# The API itself: objects, messages, plans, run-time checks.
t_api_version_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_version_LDADD = $(BK_TEST_LIBS)
t_api_version_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_messages_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_messages_LDADD = $(BK_TEST_LIBS)
t_api_messages_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_devices_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_devices_LDADD = $(BK_TEST_LIBS)
t_api_devices_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_context_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_context_LDADD = $(BK_TEST_LIBS)
t_api_context_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_memory_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_memory_LDADD = $(BK_TEST_LIBS)
t_api_memory_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_queue_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_queue_LDADD = $(BK_TEST_LIBS)
t_api_queue_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_command_buffer_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_command_buffer_LDADD = $(BK_TEST_LIBS)
t_api_command_buffer_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_copy_fill_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_copy_fill_LDADD = $(BK_TEST_LIBS)
t_api_copy_fill_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_plan_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_plan_LDADD = $(BK_TEST_LIBS)
t_api_plan_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_plan_threads_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_plan_threads_LDADD = $(BK_TEST_LIBS)
t_api_plan_threads_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_run_checks_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_run_checks_LDADD = $(BK_TEST_LIBS)
t_api_run_checks_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_queue_run_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_queue_run_LDADD = $(BK_TEST_LIBS)
t_api_queue_run_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_determinism_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_determinism_LDADD = $(BK_TEST_LIBS)
t_api_determinism_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_api_host_pointers_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_api_host_pointers_LDADD = $(BK_TEST_LIBS)
t_api_host_pointers_LDFLAGS = $(BK_TEST_LINK_FLAGS)
# Gated activation.
t_gated_gated_validation_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gated_gated_validation_LDADD = $(BK_TEST_LIBS)
t_gated_gated_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_gated_forward_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gated_gated_forward_LDADD = $(BK_TEST_LIBS)
t_gated_gated_forward_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_gated_backward_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gated_gated_backward_LDADD = $(BK_TEST_LIBS)
t_gated_gated_backward_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_gated_fd_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gated_gated_fd_LDADD = $(BK_TEST_LIBS)
t_gated_gated_fd_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_gated_sizes_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gated_gated_sizes_LDADD = $(BK_TEST_LIBS)
t_gated_gated_sizes_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gated_gated_exhaustive_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gated_gated_exhaustive_LDADD = $(BK_TEST_LIBS)
t_gated_gated_exhaustive_LDFLAGS = $(BK_TEST_LINK_FLAGS)
# Dense GEMM (and the checks the GEMM family shares).
t_gemm_gemm_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gemm_gemm_LDADD = $(BK_TEST_LIBS)
t_gemm_gemm_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gemm_gemm_validation_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gemm_gemm_validation_LDADD = $(BK_TEST_LIBS)
t_gemm_gemm_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gemm_gemm_f16_values_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gemm_gemm_f16_values_LDADD = $(BK_TEST_LIBS)
t_gemm_gemm_f16_values_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gemm_gemm_f16_values_SOURCES = t/gemm/gemm_f16_values.c t/gemm/gemm_half_values.h
t_gemm_gemm_bf16_values_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gemm_gemm_bf16_values_LDADD = $(BK_TEST_LIBS)
t_gemm_gemm_bf16_values_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gemm_gemm_bf16_values_SOURCES = t/gemm/gemm_bf16_values.c t/gemm/gemm_half_values.h
# 2:4 sparse GEMM.
t_sparse24_sparse24_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_sparse24_sparse24_LDADD = $(BK_TEST_LIBS)
t_sparse24_sparse24_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_sparse24_sparse24_validation_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_sparse24_sparse24_validation_LDADD = $(BK_TEST_LIBS)
t_sparse24_sparse24_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
# W4A16 GEMM.
t_w4a16_w4a16_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_w4a16_w4a16_LDADD = $(BK_TEST_LIBS)
t_w4a16_w4a16_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_w4a16_w4a16_validation_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_w4a16_w4a16_validation_LDADD = $(BK_TEST_LIBS)
t_w4a16_w4a16_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_w4a16_w4a16_zero_points_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_w4a16_w4a16_zero_points_LDADD = $(BK_TEST_LIBS)
t_w4a16_w4a16_zero_points_LDFLAGS = $(BK_TEST_LINK_FLAGS)
# Attention.
t_attention_attention_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_attention_attention_LDADD = $(BK_TEST_LIBS)
t_attention_attention_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_attention_attention_validation_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_attention_attention_validation_LDADD = $(BK_TEST_LIBS)
t_attention_attention_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_attention_attention_sequences_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_attention_attention_sequences_LDADD = $(BK_TEST_LIBS)
t_attention_attention_sequences_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_attention_attention_mask_orientation_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_attention_attention_mask_orientation_LDADD = $(BK_TEST_LIBS)
t_attention_attention_mask_orientation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
# The plan's estimate is plain C, compiled into the test whatever the backends.
t_attention_attention_turns_SOURCES = t/attention/attention_turns.c \
	lib/cuda/cuda_attention_turns.h lib/cuda/cuda_attention_turns.c
t_attention_attention_turns_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_attention_attention_turns_LDADD = $(BK_TEST_LIBS)
t_attention_attention_turns_LDFLAGS = $(BK_TEST_LINK_FLAGS)
# GPU against host (skipped without a CUDA device unless required).
# The GPU-against-host tests of the GEMM family share t/gpu/gpu_pair.c.
t_gpu_gpu_gemm_SOURCES = t/gpu/gpu_gemm.c t/gpu/gpu_pair.c t/gpu/gpu_pair.h
t_gpu_gpu_gemm_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_gemm_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_gemm_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_gemm_nolib_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_gemm_nolib_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_gemm_nolib_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_sparse24_SOURCES = t/gpu/gpu_sparse24.c t/gpu/gpu_pair.c t/gpu/gpu_pair.h
t_gpu_gpu_sparse24_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_sparse24_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_sparse24_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_w4a16_SOURCES = t/gpu/gpu_w4a16.c t/gpu/gpu_pair.c t/gpu/gpu_pair.h
t_gpu_gpu_w4a16_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_w4a16_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_w4a16_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_w4a16_chain_SOURCES = t/gpu/gpu_w4a16_chain.c t/gpu/gpu_pair.c t/gpu/gpu_pair.h
t_gpu_gpu_w4a16_chain_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_w4a16_chain_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_w4a16_chain_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_attention_SOURCES = t/gpu/gpu_attention.c t/gpu/gpu_pair.c t/gpu/gpu_pair.h
t_gpu_gpu_attention_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_attention_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_attention_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_gated_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_gated_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_gated_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_convert_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_convert_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_convert_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_convert_convert_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_convert_convert_LDADD = $(BK_TEST_LIBS)
t_convert_convert_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_convert_convert_validation_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_convert_convert_validation_LDADD = $(BK_TEST_LIBS)
t_convert_convert_validation_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_convert_convert_exhaustive_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_convert_convert_exhaustive_LDADD = $(BK_TEST_LIBS)
t_convert_convert_exhaustive_LDFLAGS = $(BK_TEST_LINK_FLAGS)
t_gpu_gpu_launch_CPPFLAGS = $(BK_TEST_CPPFLAGS)
t_gpu_gpu_launch_LDADD = $(BK_TEST_LIBS)
t_gpu_gpu_launch_LDFLAGS = $(BK_TEST_LINK_FLAGS)
