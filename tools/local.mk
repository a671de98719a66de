# SPDX-License-Identifier: Apache-2.0
# tools/: bkinfo (devices, support matrix) and bkbench (timings, roofline).
# Both use only the public API; bkbench loads libcuda itself (dlopen) for
# CUDA events, and both load cuBLASLt (dlopen) to compare with or report
# it, bkbench cuSPARSELt (dlopen) to compare its 2:4 GEMM with, so neither
# links against CUDA.
bin_PROGRAMS += tools/bkinfo tools/bkbench/bkbench

tools_bkinfo_SOURCES = \
	tools/bkinfo.c \
	tools/attention_op.c tools/attention_op.h \
	tools/cublaslt_direct.c tools/cublaslt_direct.h \
	tools/gated_op.c tools/gated_op.h \
	tools/gemm_op.c tools/gemm_op.h \
	tools/tool_common.c tools/tool_common.h
tools_bkinfo_LDADD = libbk.la

tools_bkbench_bkbench_SOURCES = \
	tools/bkbench/bkbench.c \
	tools/attention_op.c tools/attention_op.h \
	tools/bkbench/bench_attention.c tools/bkbench/bench_attention.h \
	tools/bkbench/bench_attention_report.c \
	tools/bkbench/bench_varlen.c tools/bkbench/bench_varlen.h \
	tools/bkbench/bench_case.h tools/bkbench/bench_gated.c tools/bkbench/bench_gated_report.c \
	tools/bkbench/bench_convert.c tools/bkbench/bench_case_report.c \
	tools/bkbench/bench_decode.c tools/bkbench/bench_decode.h \
	tools/bkbench/bench_decode_report.c \
	tools/bkbench/bench_device.c tools/bkbench/bench_device.h \
	tools/bkbench/bench_gemm.c tools/bkbench/bench_gemm.h tools/bkbench/bench_gemm_report.c \
	tools/bkbench/bench_gemm_suite.c tools/bkbench/bench_gemm_suite.h \
	tools/bkbench/bench_host_blas.c tools/bkbench/bench_host_blas.h \
	tools/bkbench/bench_launch.c tools/bkbench/bench_launch.h \
	tools/bkbench/bench_plot.c tools/bkbench/bench_plot.h \
	tools/bkbench/bench_plan.c tools/bkbench/bench_plan.h \
	tools/bkbench/bench_progress.c tools/bkbench/bench_progress.h \
	tools/bkbench/bench_random.c tools/bkbench/bench_random.h \
	tools/bkbench/bench_record.c tools/bkbench/bench_record.h \
	tools/bkbench/bench_run.c tools/bkbench/bench_run.h \
	tools/bkbench/bench_sets.c tools/bkbench/bench_sets.h \
	tools/bkbench/bench_spread.c tools/bkbench/bench_spread.h \
	tools/bkbench/bench_sparse24.c tools/bkbench/bench_sparse24_slt.c \
	tools/bkbench/bench_step.c tools/bkbench/bench_step.h tools/bkbench/bench_step_report.c \
	tools/bkbench/bench_w4a16.c tools/bkbench/bench_w4a16.h \
	tools/bkbench/blas_direct.c tools/bkbench/blas_direct.h \
	tools/cublaslt_direct.c tools/cublaslt_direct.h \
	tools/bkbench/cuda_timing.c tools/bkbench/cuda_timing.h \
	tools/bkbench/cusparselt_direct.c tools/bkbench/cusparselt_direct.h \
	tools/bkbench/device_peak.c tools/bkbench/device_peak.h \
	tools/gated_op.c tools/gated_op.h \
	tools/gemm_op.c tools/gemm_op.h \
	tools/tool_common.c tools/tool_common.h
# The host BLAS, called directly beside libbk's host GEMM.
tools_bkbench_bkbench_LDADD = libbk.la $(BLAS_LIBS)
# bkbench's sources (tools/bkbench/) use the op wrappers bkinfo shares.
tools_bkbench_bkbench_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/tools $(BLAS_CFLAGS)

# Unit test of the random test values (half and bfloat16 rounding).
check_PROGRAMS += tools/test-bench-random
tools_test_bench_random_SOURCES = tools/bkbench/test_bench_random.c tools/bkbench/bench_random.c \
	tools/bkbench/bench_random.h

dist_man1_MANS += man/bkinfo.1 man/bkbench.1

# Unit test of the timings' spreads (bkbench's "spread" column).
check_PROGRAMS += tools/test-bench-spread
tools_test_bench_spread_SOURCES = tools/bkbench/test_bench_spread.c tools/bkbench/bench_spread.c \
	tools/bkbench/bench_spread.h tools/tool_common.c tools/tool_common.h
tools_test_bench_spread_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/tools
tools_test_bench_spread_LDADD = libbk.la

TESTS += tools/test-bench-random tools/test-bench-spread tools/bkbench/bkbench-quick.sh
EXTRA_DIST += tools/bkbench/bkbench-quick.sh
# bkbench's attention peers (PyTorch), run by bench/device-run.sh attention.
EXTRA_DIST += bench/attention-peers.py
# The PyTorch peers of bkbench's attention-decode and decode-step cases (bench/current.sh
# pairs them by case name).
EXTRA_DIST += bench/attention-decode-peers.py bench/decode-step-peers.py
# The PyTorch peer of bkbench's conversion cases (Tensor.to()).
EXTRA_DIST += bench/convert-peers.py
# The PyTorch peers of bkbench's gated cases (eager and torch.compile), run by
# bench/device-run.sh bench.
EXTRA_DIST += bench/gated-peers.py
# The timing loop the peers above import.
EXTRA_DIST += bench/peers_timing.py
# Plots a bkbench JSON or CSV run's roofline fractions (matplotlib); for people, not CI.
EXTRA_DIST += bench/roofline-plot.py
# The README's first command: the build dependencies, as root or with sudo.
EXTRA_DIST += tools/install-deps.sh
# Checks and adds the SPDX licence line of tracked files (t/spdx.sh runs it).
EXTRA_DIST += tools/spdx.sh
# The git hook that checks commit messages (CONTRIBUTING.md; t/commit-msg.sh).
EXTRA_DIST += tools/commit-msg
# bkinfo's backends section and support matrix as bkinfo(1) describes them.
TESTS += t/tools/bkinfo.sh
EXTRA_DIST += t/tools/bkinfo.sh
# bkbench's spread column, busy-machine warning and --plot chart.
TESTS += t/tools/bkbench-plot.sh
EXTRA_DIST += t/tools/bkbench-plot.sh
