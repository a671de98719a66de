# SPDX-License-Identifier: Apache-2.0
# ptx/: CUDA kernel modules. Each ptx/NAME.cu becomes ptx/NAME.fatbin (a
# cubin for each of $(BK_CUDA_ARCHS), assembled from PTX for the newest of
# $(BK_CUDA_PTX_ARCHS) not newer than it, and that newest PTX)
# and ptx/NAME.fatbin.resources (every kernel's registers, stack, spills and
# shared memory, also printed to the build log); lib/cuda/cuda_fatbins.S
# embeds the fatbins in libbk. A new module needs a rule here, a line in
# cuda_fatbins.S and a row in lib/cuda/cuda_module.c.
BK_PTX_COMMON = \
	ptx/build-fatbin.sh \
	ptx/element_types.cuh \
	ptx/shared_memory_ops.cuh \
	ptx/mma_ops.cuh \
	ptx/gated_common.cuh \
	ptx/gated_kernel_args.h \
	ptx/tensor_map_args.h \
	ptx/workspace_clear.h \
	ptx/split_sum_sync.cuh
EXTRA_DIST += $(BK_PTX_COMMON) ptx/gated_forward.cu ptx/gated_backward.cu
# The 2:4 sparse modules share their own headers.
BK_PTX_SPARSE24 = ptx/sparse24_common.cuh ptx/sparse24_args.h ptx/sparse24_decode.cuh
EXTRA_DIST += $(BK_PTX_SPARSE24) ptx/sparse24_convert.cu ptx/sparse24_mma.cu \
	ptx/sparse24_general.cu ptx/sparse24_wgmma.cu
# The dense GEMM's epilogue kernels (copies of C, bias and activation).
EXTRA_DIST += ptx/gemm_epilogue.cu ptx/gemm_epilogue_args.h
# The W4A16 family: the GEMM, and the weight utilities; both include the
# layout arithmetic the host backend uses.
BK_PTX_W4A16 = ptx/w4a16_args.h ptx/w4a16_dequant.cuh ptx/w4a16_cluster_sum.cuh \
	ptx/w4a16_stream_k.cuh \
	lib/w4a16_layout.h
EXTRA_DIST += ptx/w4a16_gemm.cu ptx/w4a16_convert.cu ptx/w4a16_wgmma.cu ptx/w4a16_args.h \
	ptx/w4a16_dequant.cuh ptx/w4a16_cluster_sum.cuh ptx/w4a16_stream_k.cuh
# Attention: the general kernels and the tensor-core ones.
BK_PTX_ATTENTION = ptx/attention_args.h ptx/attention_common.cuh ptx/attention_mma.cuh
EXTRA_DIST += $(BK_PTX_ATTENTION) ptx/attention_general.cu ptx/attention_mma.cu \
	ptx/attention_mma_backward.cu ptx/attention_wgmma.cu ptx/attention_wgmma_backward.cu \
	ptx/attention_decode.cu
# Hopper's own instructions (wgmma, TMA): modules built for sm_90a only.
BK_PTX_HOPPER = ptx/tma_ops.cuh ptx/wgmma_ops.cuh ptx/attention_wgmma_walk.cuh
EXTRA_DIST += $(BK_PTX_HOPPER)

if BK_HAVE_CUDA
BK_CUDA_MODULES = ptx/gated_forward.fatbin ptx/gated_backward.fatbin
CLEANFILES += $(BK_CUDA_MODULES) ptx/gated_forward.fatbin.resources \
	ptx/gated_backward.fatbin.resources
BK_CUDA_MODULES += ptx/sparse24_convert.fatbin ptx/sparse24_mma.fatbin \
	ptx/sparse24_general.fatbin ptx/sparse24_wgmma.fatbin
CLEANFILES += ptx/sparse24_convert.fatbin ptx/sparse24_mma.fatbin ptx/sparse24_general.fatbin \
	ptx/sparse24_convert.fatbin.resources ptx/sparse24_mma.fatbin.resources \
	ptx/sparse24_general.fatbin.resources ptx/sparse24_wgmma.fatbin \
	ptx/sparse24_wgmma.fatbin.resources
BK_CUDA_MODULES += ptx/gemm_epilogue.fatbin
CLEANFILES += ptx/gemm_epilogue.fatbin ptx/gemm_epilogue.fatbin.resources
BK_CUDA_MODULES += ptx/w4a16_gemm.fatbin ptx/w4a16_convert.fatbin ptx/w4a16_wgmma.fatbin
CLEANFILES += ptx/w4a16_gemm.fatbin ptx/w4a16_gemm.fatbin.resources ptx/w4a16_convert.fatbin \
	ptx/w4a16_convert.fatbin.resources ptx/w4a16_wgmma.fatbin ptx/w4a16_wgmma.fatbin.resources
BK_CUDA_MODULES += ptx/attention_general.fatbin ptx/attention_mma.fatbin \
	ptx/attention_mma_backward.fatbin ptx/attention_wgmma.fatbin \
	ptx/attention_wgmma_backward.fatbin ptx/attention_decode.fatbin
CLEANFILES += ptx/attention_general.fatbin ptx/attention_general.fatbin.resources \
	ptx/attention_mma.fatbin ptx/attention_mma.fatbin.resources \
	ptx/attention_mma_backward.fatbin ptx/attention_mma_backward.fatbin.resources \
	ptx/attention_wgmma.fatbin ptx/attention_wgmma.fatbin.resources \
	ptx/attention_wgmma_backward.fatbin ptx/attention_wgmma_backward.fatbin.resources \
	ptx/attention_decode.fatbin ptx/attention_decode.fatbin.resources
BK_PTX_W4A16_DEPS = $(BK_PTX_W4A16:%=$(srcdir)/%)
BK_PTX_ATTENTION_DEPS = $(BK_PTX_ATTENTION:%=$(srcdir)/%)
BK_PTX_SPARSE24_DEPS = $(BK_PTX_SPARSE24:%=$(srcdir)/%)
BK_PTX_DEPS = $(BK_PTX_COMMON:%=$(srcdir)/%)
BK_PTX_BUILD = $(SHELL) $(srcdir)/ptx/build-fatbin.sh
BK_PTX_TOOLS = "$(NVCC)" "$(PTXAS)" "$(FATBINARY)" "$(BK_CUDA_ARCHS)" "$(BK_CUDA_PTX_ARCHS)" \
	-I$(srcdir)/ptx $(NVCCFLAGS)
# sm_90a code runs on compute capability 9.0 only: the plans check first.
BK_PTX_TOOLS_SM90A = "$(NVCC)" "$(PTXAS)" "$(FATBINARY)" 90a 90a -I$(srcdir)/ptx $(NVCCFLAGS)
BK_PTX_HOPPER_DEPS = $(BK_PTX_HOPPER:%=$(srcdir)/%)

ptx/gated_forward.fatbin: $(srcdir)/ptx/gated_forward.cu $(BK_PTX_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/gated_forward.cu $@ $(BK_PTX_TOOLS)

ptx/gated_backward.fatbin: $(srcdir)/ptx/gated_backward.cu $(BK_PTX_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/gated_backward.cu $@ $(BK_PTX_TOOLS)

ptx/sparse24_convert.fatbin: $(srcdir)/ptx/sparse24_convert.cu $(BK_PTX_DEPS) $(BK_PTX_SPARSE24_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/sparse24_convert.cu $@ $(BK_PTX_TOOLS)

ptx/sparse24_mma.fatbin: $(srcdir)/ptx/sparse24_mma.cu $(BK_PTX_DEPS) $(BK_PTX_SPARSE24_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/sparse24_mma.cu $@ $(BK_PTX_TOOLS)

ptx/sparse24_general.fatbin: $(srcdir)/ptx/sparse24_general.cu $(BK_PTX_DEPS) $(BK_PTX_SPARSE24_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/sparse24_general.cu $@ $(BK_PTX_TOOLS)

ptx/sparse24_wgmma.fatbin: $(srcdir)/ptx/sparse24_wgmma.cu $(BK_PTX_DEPS) \
		$(BK_PTX_SPARSE24_DEPS) $(BK_PTX_HOPPER_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/sparse24_wgmma.cu $@ $(BK_PTX_TOOLS_SM90A)

ptx/gemm_epilogue.fatbin: $(srcdir)/ptx/gemm_epilogue.cu $(srcdir)/ptx/gemm_epilogue_args.h \
		$(BK_PTX_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/gemm_epilogue.cu $@ $(BK_PTX_TOOLS)

ptx/w4a16_gemm.fatbin: $(srcdir)/ptx/w4a16_gemm.cu $(BK_PTX_DEPS) $(BK_PTX_W4A16_DEPS) \
		$(BK_PTX_HOPPER_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/w4a16_gemm.cu $@ $(BK_PTX_TOOLS)

ptx/w4a16_convert.fatbin: $(srcdir)/ptx/w4a16_convert.cu $(BK_PTX_DEPS) $(BK_PTX_W4A16_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/w4a16_convert.cu $@ $(BK_PTX_TOOLS)

ptx/w4a16_wgmma.fatbin: $(srcdir)/ptx/w4a16_wgmma.cu $(BK_PTX_DEPS) $(BK_PTX_W4A16_DEPS) \
		$(BK_PTX_HOPPER_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/w4a16_wgmma.cu $@ $(BK_PTX_TOOLS_SM90A)

ptx/attention_general.fatbin: $(srcdir)/ptx/attention_general.cu $(BK_PTX_DEPS) \
		$(BK_PTX_ATTENTION_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/attention_general.cu $@ $(BK_PTX_TOOLS)

ptx/attention_mma.fatbin: $(srcdir)/ptx/attention_mma.cu $(BK_PTX_DEPS) $(BK_PTX_ATTENTION_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/attention_mma.cu $@ $(BK_PTX_TOOLS)

ptx/attention_decode.fatbin: $(srcdir)/ptx/attention_decode.cu $(BK_PTX_DEPS) \
		$(BK_PTX_ATTENTION_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/attention_decode.cu $@ $(BK_PTX_TOOLS)

ptx/attention_mma_backward.fatbin: $(srcdir)/ptx/attention_mma_backward.cu $(BK_PTX_DEPS) \
		$(BK_PTX_ATTENTION_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/attention_mma_backward.cu $@ $(BK_PTX_TOOLS)

ptx/attention_wgmma.fatbin: $(srcdir)/ptx/attention_wgmma.cu $(BK_PTX_DEPS) \
		$(BK_PTX_ATTENTION_DEPS) $(BK_PTX_HOPPER_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/attention_wgmma.cu $@ $(BK_PTX_TOOLS_SM90A)

ptx/attention_wgmma_backward.fatbin: $(srcdir)/ptx/attention_wgmma_backward.cu $(BK_PTX_DEPS) \
		$(BK_PTX_ATTENTION_DEPS) $(BK_PTX_HOPPER_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/attention_wgmma_backward.cu $@ $(BK_PTX_TOOLS_SM90A)
endif
