# SPDX-License-Identifier: Apache-2.0
# kernels/: the CUDA kernel modules, one per row of lib/cuda/cuda_modules.h
# (configure reads the rows into BK_CUDA_MODULE_NAMES, and those of ARCHS
# sm_90a into BK_CUDA_SM90A_MODULE_NAMES). Each kernels/NAME.cu becomes
# kernels/NAME.fatbin (a cubin for each of $(BK_CUDA_ARCHS), assembled from PTX
# for the newest of $(BK_CUDA_PTX_ARCHS) not newer than it, and that newest
# PTX; or, for sm_90a, an sm_90a cubin and its PTX) and
# kernels/NAME.fatbin.resources (every kernel's registers, stack, spills and
# shared memory: the build log stays quiet); lib/cuda/cuda_fatbins.S
# embeds the fatbins in libbk. A new module is a row in the table, its
# source, and a line below naming the headers it includes.
BK_PTX_COMMON = \
	kernels/build-fatbin.sh \
	kernels/element_types.cuh \
	kernels/shared_memory_ops.cuh \
	kernels/mma_ops.cuh \
	kernels/gated_common.cuh \
	kernels/shared/gated_kernel_args.h \
	kernels/shared/tensor_map_args.h \
	kernels/shared/workspace_clear.h \
	kernels/split_sum_sync.cuh \
	kernels/decode_trace.cuh
EXTRA_DIST += $(BK_PTX_COMMON) $(BK_CUDA_MODULE_NAMES:%=kernels/%.cu)
# The 2:4 sparse modules share their own headers.
BK_PTX_SPARSE24 = kernels/sparse24_common.cuh kernels/shared/sparse24_args.h \
	kernels/sparse24_decode.cuh
EXTRA_DIST += $(BK_PTX_SPARSE24)
# The dense GEMM's epilogue kernels (copies of C, bias and activation).
BK_PTX_GEMM_EPILOGUE = kernels/shared/gemm_epilogue_args.h
EXTRA_DIST += $(BK_PTX_GEMM_EPILOGUE)
# The W4A16 family: the GEMM, and the weight utilities; both include the
# layout arithmetic the host backend uses.
BK_PTX_W4A16 = kernels/shared/w4a16_args.h kernels/w4a16_dequant.cuh kernels/w4a16_cluster_sum.cuh \
	kernels/w4a16_stream_k.cuh kernels/w4a16_prefetch.cuh \
	kernels/shared/w4a16_layout.h
EXTRA_DIST += kernels/shared/w4a16_args.h kernels/w4a16_dequant.cuh kernels/w4a16_cluster_sum.cuh \
	kernels/w4a16_stream_k.cuh kernels/w4a16_prefetch.cuh
# Attention: the general kernels and the tensor-core ones.
BK_PTX_ATTENTION = kernels/shared/attention_args.h kernels/attention_common.cuh \
	kernels/attention_mma.cuh kernels/attention_mma_forward.cuh \
	kernels/attention_mma_backward.cuh kernels/attention_decode.cuh \
	kernels/attention_tf32.cuh
EXTRA_DIST += $(BK_PTX_ATTENTION)
# Type conversion: its rounding is the host backend's.
BK_PTX_CONVERT = kernels/shared/convert_args.h kernels/shared/convert_round.h
EXTRA_DIST += kernels/shared/convert_args.h
# The half types' packed forward kernels.
EXTRA_DIST += kernels/gated_packed.cuh

# Hopper's own instructions (wgmma, TMA): modules built for sm_90a only.
BK_PTX_HOPPER = kernels/tma_ops.cuh kernels/wgmma_ops.cuh kernels/attention_wgmma_walk.cuh \
	kernels/attention_wgmma_backward_pair.cuh kernels/attention_unread_keys.cuh
EXTRA_DIST += $(BK_PTX_HOPPER)

BK_CUDA_MODULES = $(BK_CUDA_MODULE_NAMES:%=kernels/%.fatbin)
CONFIG_STATUS_DEPENDENCIES += $(srcdir)/lib/cuda/cuda_modules.h
BK_PTX_BUILD = $(SHELL) $(srcdir)/kernels/build-fatbin.sh
BK_PTX_INCLUDES = -I$(srcdir)/kernels -I$(srcdir)/kernels/shared
# sm_90a code runs on compute capability 9.0 only: the plans check first.
BK_PTX_TOOLS_SM90A = "$(NVCC)" "$(PTXAS)" "$(FATBINARY)" 90a 90a $(BK_PTX_INCLUDES) $(NVCCFLAGS)
# The attention kernels of widths past 128 need more shared memory than
# sm_86 and sm_89 let a CTA have (99 KiB): the plans never load them
# there, so these modules get no cubins for them (sm_80's would run, but
# for F32's backward past 128, which needs sm_90's shared memory).
BK_CUDA_LARGE_SHARED_MODULE_NAMES = attention_mma_wide attention_mma_backward_wide \
	attention_tf32_backward_wide

# One rule builds every module, for the architectures of its row.
.cu.fatbin:
	@$(MKDIR_P) kernels
	$(AM_V_GEN)case " $(BK_CUDA_SM90A_MODULE_NAMES) " in \
	*" $(*F) "*) $(BK_PTX_BUILD) $< $@ $(BK_PTX_TOOLS_SM90A) ;; \
	*) archs="$(BK_CUDA_ARCHS)"; \
	   case " $(BK_CUDA_LARGE_SHARED_MODULE_NAMES) " in *" $(*F) "*) \
	       archs=`for a in $$archs; do case $$a in 86|89) ;; *) printf '%s ' $$a ;; esac; done` ;; \
	   esac; \
	   $(BK_PTX_BUILD) $< $@ "$(NVCC)" "$(PTXAS)" "$(FATBINARY)" "$$archs" \
	       "$(BK_CUDA_PTX_ARCHS)" $(BK_PTX_INCLUDES) $(NVCCFLAGS) ;; \
	esac

if BK_HAVE_CUDA
CLEANFILES += $(BK_CUDA_MODULES) $(BK_CUDA_MODULE_NAMES:%=kernels/%.fatbin.resources)
# What each module includes beyond the common headers.
$(BK_CUDA_MODULES): $(BK_PTX_COMMON:%=$(srcdir)/%)
kernels/sparse24_convert.fatbin kernels/sparse24_mma.fatbin kernels/sparse24_general.fatbin \
	kernels/sparse24_wgmma.fatbin: $(BK_PTX_SPARSE24:%=$(srcdir)/%)
kernels/gemm_epilogue.fatbin: $(BK_PTX_GEMM_EPILOGUE:%=$(srcdir)/%)
kernels/w4a16_gemm.fatbin kernels/w4a16_convert.fatbin kernels/w4a16_wgmma.fatbin: \
	$(BK_PTX_W4A16:%=$(srcdir)/%)
kernels/attention_general.fatbin kernels/attention_mma.fatbin \
	kernels/attention_mma_wide.fatbin kernels/attention_mma_backward.fatbin \
	kernels/attention_mma_backward_wide.fatbin kernels/attention_wgmma.fatbin \
	kernels/attention_tf32.fatbin kernels/attention_tf32_backward.fatbin \
	kernels/attention_tf32_backward_wide.fatbin \
	kernels/attention_wgmma_backward.fatbin kernels/attention_decode.fatbin \
	kernels/attention_decode_wgmma.fatbin: $(BK_PTX_ATTENTION:%=$(srcdir)/%)
kernels/convert.fatbin: $(BK_PTX_CONVERT:%=$(srcdir)/%)
kernels/gated_forward.fatbin: $(srcdir)/kernels/gated_packed.cuh
kernels/sparse24_wgmma.fatbin kernels/w4a16_gemm.fatbin kernels/w4a16_wgmma.fatbin \
	kernels/attention_wgmma.fatbin kernels/attention_wgmma_backward.fatbin \
	kernels/attention_decode_wgmma.fatbin: $(BK_PTX_HOPPER:%=$(srcdir)/%)
endif
