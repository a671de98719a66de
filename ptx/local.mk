# ptx/: the CUDA kernel modules, one per row of lib/cuda/cuda_modules.h
# (configure reads the rows into BK_CUDA_MODULE_NAMES, and those of ARCHS
# sm_90a into BK_CUDA_SM90A_MODULE_NAMES). Each ptx/NAME.cu becomes
# ptx/NAME.fatbin (a cubin for each of $(BK_CUDA_ARCHS), assembled from PTX
# for the newest of $(BK_CUDA_PTX_ARCHS) not newer than it, and that newest
# PTX; or, for sm_90a, an sm_90a cubin and its PTX) and
# ptx/NAME.fatbin.resources (every kernel's registers, stack, spills and
# shared memory: the build log stays quiet); lib/cuda/cuda_fatbins.S
# embeds the fatbins in libbk. A new module is a row in the table, its
# source, and a line below naming the headers it includes.
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
EXTRA_DIST += $(BK_PTX_COMMON) $(BK_CUDA_MODULE_NAMES:%=ptx/%.cu)
# The 2:4 sparse modules share their own headers.
BK_PTX_SPARSE24 = ptx/sparse24_common.cuh ptx/sparse24_args.h ptx/sparse24_decode.cuh
EXTRA_DIST += $(BK_PTX_SPARSE24)
# The dense GEMM's epilogue kernels (copies of C, bias and activation).
BK_PTX_GEMM_EPILOGUE = ptx/gemm_epilogue_args.h
EXTRA_DIST += $(BK_PTX_GEMM_EPILOGUE)
# The W4A16 family: the GEMM, and the weight utilities; both include the
# layout arithmetic the host backend uses.
BK_PTX_W4A16 = ptx/w4a16_args.h ptx/w4a16_dequant.cuh ptx/w4a16_cluster_sum.cuh \
	ptx/w4a16_stream_k.cuh \
	lib/w4a16_layout.h
EXTRA_DIST += ptx/w4a16_args.h ptx/w4a16_dequant.cuh ptx/w4a16_cluster_sum.cuh \
	ptx/w4a16_stream_k.cuh
# Attention: the general kernels and the tensor-core ones.
BK_PTX_ATTENTION = ptx/attention_args.h ptx/attention_common.cuh ptx/attention_mma.cuh
EXTRA_DIST += $(BK_PTX_ATTENTION)
# Hopper's own instructions (wgmma, TMA): modules built for sm_90a only.
BK_PTX_HOPPER = ptx/tma_ops.cuh ptx/wgmma_ops.cuh ptx/attention_wgmma_walk.cuh
EXTRA_DIST += $(BK_PTX_HOPPER)

BK_CUDA_MODULES = $(BK_CUDA_MODULE_NAMES:%=ptx/%.fatbin)
CONFIG_STATUS_DEPENDENCIES = $(srcdir)/lib/cuda/cuda_modules.h
BK_PTX_BUILD = $(SHELL) $(srcdir)/ptx/build-fatbin.sh
BK_PTX_TOOLS = "$(NVCC)" "$(PTXAS)" "$(FATBINARY)" "$(BK_CUDA_ARCHS)" "$(BK_CUDA_PTX_ARCHS)" \
	-I$(srcdir)/ptx $(NVCCFLAGS)
# sm_90a code runs on compute capability 9.0 only: the plans check first.
BK_PTX_TOOLS_SM90A = "$(NVCC)" "$(PTXAS)" "$(FATBINARY)" 90a 90a -I$(srcdir)/ptx $(NVCCFLAGS)

# One rule builds every module, for the architectures of its row.
.cu.fatbin:
	@$(MKDIR_P) ptx
	$(AM_V_GEN)case " $(BK_CUDA_SM90A_MODULE_NAMES) " in \
	*" $(*F) "*) $(BK_PTX_BUILD) $< $@ $(BK_PTX_TOOLS_SM90A) ;; \
	*) $(BK_PTX_BUILD) $< $@ $(BK_PTX_TOOLS) ;; \
	esac

if BK_HAVE_CUDA
CLEANFILES += $(BK_CUDA_MODULES) $(BK_CUDA_MODULE_NAMES:%=ptx/%.fatbin.resources)
# What each module includes beyond the common headers.
$(BK_CUDA_MODULES): $(BK_PTX_COMMON:%=$(srcdir)/%)
ptx/sparse24_convert.fatbin ptx/sparse24_mma.fatbin ptx/sparse24_general.fatbin \
	ptx/sparse24_wgmma.fatbin: $(BK_PTX_SPARSE24:%=$(srcdir)/%)
ptx/gemm_epilogue.fatbin: $(BK_PTX_GEMM_EPILOGUE:%=$(srcdir)/%)
ptx/w4a16_gemm.fatbin ptx/w4a16_convert.fatbin ptx/w4a16_wgmma.fatbin: \
	$(BK_PTX_W4A16:%=$(srcdir)/%)
ptx/attention_general.fatbin ptx/attention_mma.fatbin ptx/attention_mma_backward.fatbin \
	ptx/attention_wgmma.fatbin ptx/attention_wgmma_backward.fatbin: \
	$(BK_PTX_ATTENTION:%=$(srcdir)/%)
ptx/sparse24_wgmma.fatbin ptx/w4a16_gemm.fatbin ptx/w4a16_wgmma.fatbin \
	ptx/attention_wgmma.fatbin ptx/attention_wgmma_backward.fatbin: \
	$(BK_PTX_HOPPER:%=$(srcdir)/%)
endif
