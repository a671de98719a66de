# CUDA backend configuration (owned by lib/cuda/). Sets BK_HAVE_CUDA and
# bk_cuda_summary. Placeholder until the CUDA backend lands.
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [build the CUDA backend (default: when nvcc is found)])],
  [], [with_cuda=check])
bk_cuda_summary="no (not built yet)"
AM_CONDITIONAL([BK_HAVE_CUDA], [false])
