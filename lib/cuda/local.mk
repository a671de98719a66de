# SPDX-License-Identifier: Apache-2.0
# lib/cuda: the CUDA backend (driver API loaded at run time) and the
# embedded kernel modules from kernels/ (see kernels/local.mk).
if BK_HAVE_CUDA
libbk_la_SOURCES += \
	lib/cuda/cuda_driver.h \
	lib/cuda/cuda_driver.c \
	lib/cuda/cuda_internal.h \
	lib/cuda/cuda_backend.c \
	lib/cuda/cuda_modules.h \
	lib/cuda/cuda_module.c \
	lib/cuda/cuda_submit.c \
	lib/cuda/cuda_launch.c \
	lib/cuda/cuda_gated.c \
	lib/cuda/cuda_gemm.h \
	lib/cuda/cuda_gemm.c \
	lib/cuda/cuda_gemm_mapping.c \
	lib/cuda/cuda_cublaslt.h \
	lib/cuda/cuda_cublaslt.c \
	lib/cuda/cuda_sparse24.c \
	lib/cuda/cuda_sparse24_gemm.c \
	lib/cuda/cuda_sparse24.h \
	lib/cuda/cuda_w4a16.h \
	lib/cuda/cuda_w4a16_convert.c \
	lib/cuda/cuda_w4a16_gemm.c \
	lib/cuda/cuda_attention.c \
	lib/cuda/cuda_fastdiv.c \
	lib/cuda/cuda_convert.c \
	lib/cuda/cuda_attention_decode.h lib/cuda/cuda_attention_decode.c \
	lib/cuda/cuda_attention_turns.h lib/cuda/cuda_attention_turns.c \
	lib/cuda/cuda_tensor_map.c \
	lib/cuda/cuda_fatbins.S \
	kernels/shared/gated_kernel_args.h \
	kernels/shared/sparse24_args.h \
	kernels/shared/gemm_epilogue_args.h \
	kernels/shared/w4a16_args.h \
	kernels/shared/attention_args.h \
	kernels/shared/convert_args.h \
	kernels/shared/tensor_map_args.h \
	kernels/shared/workspace_clear.h
# cuda_fatbins.S .incbin's kernels/NAME.fatbin from the build tree. The object
# is named through a variable so that automake keeps its own rule for it.
libbk_la_CCASFLAGS = -Wa,-I$(top_builddir)/kernels
BK_CUDA_FATBINS_OBJECT = lib/cuda/libbk_la-cuda_fatbins.lo
$(BK_CUDA_FATBINS_OBJECT): $(BK_CUDA_MODULES)
endif

# Whatever the configuration, libbk must not link against CUDA.
TESTS += t/packaging/no-cuda-link.sh
EXTRA_DIST += t/packaging/no-cuda-link.sh

# Run by hand on a GPU machine: bench/device-run.sh (see bench/log/README.md).
EXTRA_DIST += bench/device-run.sh bench/w4a16-peers.py bench/attention-hunt.sh \
	bench/probes/gpu-check.c bench/probes/w4a16-probe.c bench/probes/w4a16-sk-trace.c \
	bench/probes/decode_trace.h
