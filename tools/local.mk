# SPDX-License-Identifier: Apache-2.0
# tools/: bkinfo (devices, support matrix) and bkbench (timings, roofline).
# Both use only the public API; bkbench loads libcuda itself (dlopen) for
# CUDA events, and both load cuBLASLt (dlopen) to compare with or report
# it, bkbench cuSPARSELt (dlopen) to compare its 2:4 GEMM with, so neither
# links against CUDA.
bin_PROGRAMS += tools/bkinfo tools/bkbench

tools_bkinfo_SOURCES = \
	tools/bkinfo.c \
	tools/attention_op.c tools/attention_op.h \
	tools/cublaslt_direct.c tools/cublaslt_direct.h \
	tools/gated_op.c tools/gated_op.h \
	tools/gemm_op.c tools/gemm_op.h \
	tools/tool_common.c tools/tool_common.h
tools_bkinfo_LDADD = libbk.la

tools_bkbench_SOURCES = \
	tools/bkbench.c \
	tools/attention_op.c tools/attention_op.h \
	tools/bench_attention.c tools/bench_attention.h tools/bench_attention_report.c \
	tools/bench_case.h tools/bench_gated.c tools/bench_gated_report.c \
	tools/bench_device.c tools/bench_device.h \
	tools/bench_gemm.c tools/bench_gemm.h tools/bench_gemm_report.c \
	tools/bench_gemm_suite.c tools/bench_gemm_suite.h \
	tools/bench_launch.c tools/bench_launch.h \
	tools/bench_plan.c tools/bench_plan.h \
	tools/bench_progress.c tools/bench_progress.h \
	tools/bench_random.c tools/bench_random.h \
	tools/bench_record.c tools/bench_record.h \
	tools/bench_run.c tools/bench_run.h \
	tools/bench_sets.c tools/bench_sets.h \
	tools/bench_sparse24.c tools/bench_sparse24_slt.c \
	tools/bench_w4a16.c tools/bench_w4a16.h \
	tools/cublaslt_direct.c tools/cublaslt_direct.h \
	tools/cuda_timing.c tools/cuda_timing.h \
	tools/cusparselt_direct.c tools/cusparselt_direct.h \
	tools/device_peak.c tools/device_peak.h \
	tools/gated_op.c tools/gated_op.h \
	tools/gemm_op.c tools/gemm_op.h \
	tools/tool_common.c tools/tool_common.h
tools_bkbench_LDADD = libbk.la

# Unit test of the random test values (half and bfloat16 rounding).
check_PROGRAMS += tools/test-bench-random
tools_test_bench_random_SOURCES = tools/test_bench_random.c tools/bench_random.c \
	tools/bench_random.h

dist_man1_MANS += man/bkinfo.1 man/bkbench.1

TESTS += tools/test-bench-random t/bkbench-quick.sh
EXTRA_DIST += t/bkbench-quick.sh
# bkbench's attention peers (PyTorch), run by bench/device-run.sh attention.
EXTRA_DIST += bench/attention-peers.py
# Plots a bkbench JSON or CSV run's roofline fractions (matplotlib); for people, not CI.
EXTRA_DIST += bench/roofline-plot.py
# The README's first command: the build dependencies, as root or with sudo.
EXTRA_DIST += tools/install-deps.sh
# Checks and adds the SPDX licence line of tracked files (t/spdx.sh runs it).
EXTRA_DIST += tools/spdx.sh
# The git hook that checks commit messages (CONTRIBUTING.md; t/commit-msg.sh).
EXTRA_DIST += tools/commit-msg
