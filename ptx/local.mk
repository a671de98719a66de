# ptx/: CUDA kernel modules. Each ptx/NAME.cu becomes ptx/NAME.fatbin (a
# cubin for each of $(BK_CUDA_ARCHS), assembled from PTX for the newest of
# $(BK_CUDA_PTX_ARCHS) not newer than it, and that newest PTX)
# and ptx/NAME.fatbin.resources (every kernel's registers, stack, spills and
# shared memory, also printed to the build log); lib/cuda/cuda_fatbins.S
# embeds the fatbins in libbk. A new module needs a rule here, a line in
# cuda_fatbins.S and a row in lib/cuda/cuda_module.c.
BK_PTX_COMMON = \
	ptx/build-fatbin.sh \
	ptx/gated_common.cuh \
	ptx/gated_kernel_args.h
EXTRA_DIST += $(BK_PTX_COMMON) ptx/gated_forward.cu ptx/gated_backward.cu

if BK_HAVE_CUDA
BK_CUDA_MODULES = ptx/gated_forward.fatbin ptx/gated_backward.fatbin
CLEANFILES += $(BK_CUDA_MODULES) ptx/gated_forward.fatbin.resources \
	ptx/gated_backward.fatbin.resources
BK_PTX_DEPS = $(BK_PTX_COMMON:%=$(srcdir)/%)
BK_PTX_BUILD = $(SHELL) $(srcdir)/ptx/build-fatbin.sh
BK_PTX_TOOLS = "$(NVCC)" "$(PTXAS)" "$(FATBINARY)" "$(BK_CUDA_ARCHS)" "$(BK_CUDA_PTX_ARCHS)" \
	-I$(srcdir)/ptx $(NVCCFLAGS)

ptx/gated_forward.fatbin: $(srcdir)/ptx/gated_forward.cu $(BK_PTX_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/gated_forward.cu $@ $(BK_PTX_TOOLS)

ptx/gated_backward.fatbin: $(srcdir)/ptx/gated_backward.cu $(BK_PTX_DEPS)
	@$(MKDIR_P) ptx
	$(AM_V_GEN)$(BK_PTX_BUILD) $(srcdir)/ptx/gated_backward.cu $@ $(BK_PTX_TOOLS)
endif
