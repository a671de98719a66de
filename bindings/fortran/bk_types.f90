! SPDX-License-Identifier: Apache-2.0
! Copyright The libbk authors; licensed under the Apache License, Version 2.0
! (http://www.apache.org/licenses/LICENSE-2.0; LICENSE in libbk's sources).
!
! libbk Fortran binding: handles and structs of include/bk/*.h.
!
! Handles: one bind(c) type per handle kind, each holding the C pointer, so
! the compiler rejects a BkPlan where a BkContext is expected. A struct of
! one pointer is passed and returned exactly like the pointer on every
! C ABI libbk supports, so the interfaces take these types in place of the
! C handles. A new handle is null (BK_NULL_HANDLE).
!
! Structs: one bind(c) type per C struct with the same fields in the same
! order (t/fortran-layout.sh checks sizes and offsets against C). Input
! and output structs come with sType set to their own BK_STRUCTURE_TYPE_*
! value, pNext null and every other field at a safe default, so a plain
! declaration is ready to fill in. Enum fields are integer(c_int) and
! C's unsigned fields the signed integer of the same size.
module bk_types
  use, intrinsic :: iso_c_binding, only: c_ptr, c_funptr, c_null_ptr, c_null_funptr, &
       c_int, c_int32_t, c_int64_t, c_size_t, c_char, c_null_char, c_double
  use bk_constants
  implicit none
  private
  public :: BkContext, BkQueue, BkCommandBuffer, BkPlan, BkMemory
  public :: BkBaseInStructure, BkBaseOutStructure, BkTensorDesc, BkAllocationCallbacks, &
       BkDeviceProperties, BkDeviceModuleProperties, BkContextCreateInfo, BkMemoryAllocateInfo, &
       BkCommandBufferBeginInfo, BkPlanCreateInfo, &
       BkPrecisionGuarantee, BkPlanProperties, BkBindingProperties, BkPlanBindingProperties, &
       BkRunInfo, BkGatedActivationInfo, BkGatedActivationBackwardInfo
  public :: BkGemmInfo, BkSparse24Report, BkSparse24ConvertInfo, BkSparse24PrepareInfo, &
       BkSparse24GemmInfo
  public :: BkW4A16ConvertInfo, BkW4A16RepackReport, BkW4A16GptqRepackInfo, BkW4A16GemmInfo
  public :: BkAttentionPattern, BkAttentionInfo, BkAttentionBackwardInfo
  public :: PFN_bkAllocationFunction, PFN_bkFreeFunction, PFN_bkMessageCallback

  ! ---- Handles -----------------------------------------------------------
  type, bind(c) :: BkContext
    type(c_ptr) :: handle = c_null_ptr
  end type BkContext

  type, bind(c) :: BkQueue
    type(c_ptr) :: handle = c_null_ptr
  end type BkQueue

  type, bind(c) :: BkCommandBuffer
    type(c_ptr) :: handle = c_null_ptr
  end type BkCommandBuffer

  type, bind(c) :: BkPlan
    type(c_ptr) :: handle = c_null_ptr
  end type BkPlan

  type, bind(c) :: BkMemory
    type(c_ptr) :: handle = c_null_ptr
  end type BkMemory

  ! ---- Structs -----------------------------------------------------------
  ! The header every input struct starts with, for walking pNext chains.
  type, bind(c) :: BkBaseInStructure
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_UNDEFINED
    type(c_ptr) :: pNext = c_null_ptr
  end type BkBaseInStructure

  ! The same for the structs libbk fills in (BkPlanProperties and what is
  ! chained to it).
  type, bind(c) :: BkBaseOutStructure
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_UNDEFINED
    type(c_ptr) :: pNext = c_null_ptr
  end type BkBaseOutStructure

  ! extent(1) is the SLOWEST index (C order): a Fortran array x(d, l, h, b)
  ! is extent = [b, h, l, d]. bk_tensor_desc() does this reversal.
  type, bind(c) :: BkTensorDesc
    integer(c_int) :: dataType = BK_DATA_TYPE_UNDEFINED
    integer(c_int32_t) :: rank = 0
    integer(c_int64_t) :: extent(BK_MAX_TENSOR_RANK) = 0
    integer(c_int64_t) :: stride(BK_MAX_TENSOR_RANK) = 0
  end type BkTensorDesc

  type, bind(c) :: BkAllocationCallbacks
    type(c_ptr) :: pUserData = c_null_ptr
    type(c_funptr) :: pfnAllocation = c_null_funptr   ! c_funloc of a PFN_bkAllocationFunction
    type(c_funptr) :: pfnFree = c_null_funptr         ! c_funloc of a PFN_bkFreeFunction
  end type BkAllocationCallbacks

  type, bind(c) :: BkDeviceProperties
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_DEVICE_PROPERTIES
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: deviceType = BK_DEVICE_TYPE_AUTO
    integer(c_int32_t) :: deviceIndex = 0
    character(kind=c_char) :: name(BK_MAX_NAME_SIZE) = c_null_char  ! bk_c_string(p%name)
    integer(c_int32_t) :: computeCapabilityMajor = 0
    integer(c_int32_t) :: computeCapabilityMinor = 0
    integer(c_int32_t) :: multiprocessorCount = 0
    integer(c_int32_t) :: queueCount = 0
    integer(c_int64_t) :: totalMemory = 0
    integer(c_int32_t) :: driverVersion = 0
    integer(c_int32_t) :: runtimeVersion = 0
  end type BkDeviceProperties

  ! Output struct: chain c_loc of a TARGET one to BkDeviceProperties%pNext.
  ! Architectures are 10 * major + minor (90 = sm_90); the first *Count
  ! entries of each list are valid.
  type, bind(c) :: BkDeviceModuleProperties
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int32_t) :: binaryArchitectureCount = 0
    integer(c_int32_t) :: binaryArchitectures(BK_MAX_MODULE_ARCHITECTURES) = 0
    integer(c_int32_t) :: ptxArchitectureCount = 0
    integer(c_int32_t) :: ptxArchitectures(BK_MAX_MODULE_ARCHITECTURES) = 0
    integer(c_int32_t) :: deviceSupported = BK_FALSE
  end type BkDeviceModuleProperties

  type, bind(c) :: BkContextCreateInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: deviceType = BK_DEVICE_TYPE_AUTO
    integer(c_int32_t) :: deviceIndex = 0
    integer(c_int32_t) :: apiVersion = BK_HEADER_VERSION
    integer(c_int32_t) :: flags = 0
  end type BkContextCreateInfo

  type, bind(c) :: BkMemoryAllocateInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int64_t) :: size = 0
    integer(c_int) :: memoryType = BK_MEMORY_TYPE_DEVICE
  end type BkMemoryAllocateInfo

  type, bind(c) :: BkCommandBufferBeginInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: usage = BK_COMMAND_BUFFER_USAGE_ONE_TIME
  end type BkCommandBufferBeginInfo

  type, bind(c) :: BkPlanCreateInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO
    type(c_ptr) :: pNext = c_null_ptr
    type(c_ptr) :: pOperation = c_null_ptr   ! c_loc of an op info (a TARGET variable)
    integer(c_int32_t) :: flags = 0
  end type BkPlanCreateInfo

  type, bind(c) :: BkPrecisionGuarantee
    integer(c_int) :: computeType = BK_DATA_TYPE_UNDEFINED
    integer(c_int) :: accumulatorType = BK_DATA_TYPE_UNDEFINED
    integer(c_int32_t) :: deterministic = BK_FALSE
    integer(c_int32_t) :: bitStable = BK_FALSE
  end type BkPrecisionGuarantee

  type, bind(c) :: BkPlanProperties
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_PLAN_PROPERTIES
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: operation = BK_STRUCTURE_TYPE_UNDEFINED
    integer(c_int) :: backend = BK_DEVICE_TYPE_AUTO
    integer(c_int32_t) :: bindingCount = 0
    integer(c_int64_t) :: workspaceSize = 0
    integer(c_int64_t) :: workspaceAlignment = 0
    character(kind=c_char) :: kernelName(BK_MAX_KERNEL_NAME_SIZE) = c_null_char
    type(BkPrecisionGuarantee) :: precision
  end type BkPlanProperties

  ! What one binding slot needs: bindings(s + 1) of BkPlanBindingProperties
  ! describes slot s. bk_c_string(b%name) is the slot's field name; size is
  ! the bytes from its address the op touches (0: slot unused).
  type, bind(c) :: BkBindingProperties
    character(kind=c_char) :: name(BK_MAX_BINDING_NAME_SIZE) = c_null_char
    integer(c_int64_t) :: size = 0
    integer(c_int64_t) :: alignment = 0
    integer(c_int32_t) :: written = BK_FALSE
    integer(c_int32_t) :: reserved = 0
  end type BkBindingProperties

  ! Output struct: chain c_loc of a TARGET one to BkPlanProperties%pNext
  ! (bk_get_plan_properties does it); the first bindingCount entries of
  ! bindings are written.
  type, bind(c) :: BkPlanBindingProperties
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int32_t) :: bindingCount = 0
    integer(c_int32_t) :: reserved = 0
    type(BkBindingProperties) :: bindings(BK_MAX_BINDINGS)
  end type BkPlanBindingProperties

  type, bind(c) :: BkRunInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_RUN_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int32_t) :: bindingCount = 0
    type(c_ptr) :: pBindings = c_null_ptr       ! c_loc of integer(c_int64_t) addresses
    type(c_ptr) :: pBindingSizes = c_null_ptr   ! optional: c_loc of integer(c_int64_t) sizes
    integer(c_int64_t) :: workspace = 0
    integer(c_int64_t) :: workspaceSize = 0
  end type BkRunInfo

  ! splitAxis is a C (row-major) axis: Fortran dimension k of a rank-r
  ! array is splitAxis r - k (bk_split_axis(k, r)).
  type, bind(c) :: BkGatedActivationInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: kind = BK_GATED_ACTIVATION_GLU
    integer(c_int32_t) :: splitAxis = 0
    type(BkTensorDesc) :: input
    type(BkTensorDesc) :: output
  end type BkGatedActivationInfo

  type, bind(c) :: BkGatedActivationBackwardInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: kind = BK_GATED_ACTIVATION_GLU
    integer(c_int32_t) :: splitAxis = 0
    type(BkTensorDesc) :: input
    type(BkTensorDesc) :: gradOutput
    type(BkTensorDesc) :: gradInput
  end type BkGatedActivationBackwardInfo

  ! ---- The GEMM family (bk-gemm(7)) ----------------------------------------
  ! Matrices are rank 2 [rows, cols] or rank 3 [batch, rows, cols] in
  ! libbk's index order, with the layout in the strides: a Fortran array
  ! a(m, k) is the column-major [m, k] that bk_matrix_desc_of(a) describes.
  ! alpha defaults to 1 and beta to 0 (C's zero initialisation gives
  ! alpha 0); c and bias start absent (dataType BK_DATA_TYPE_UNDEFINED).
  type, bind(c) :: BkGemmInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_GEMM_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: transA = BK_GEMM_OP_N
    integer(c_int) :: transB = BK_GEMM_OP_N
    integer(c_int) :: activation = BK_GEMM_ACTIVATION_NONE
    integer(c_int32_t) :: flags = 0             ! BK_GEMM_ALLOW_TF32_BIT
    real(c_double) :: alpha = 1
    real(c_double) :: beta = 0
    type(BkTensorDesc) :: a
    type(BkTensorDesc) :: b
    type(BkTensorDesc) :: c
    type(BkTensorDesc) :: d
    type(BkTensorDesc) :: bias
  end type BkGemmInfo

  ! Written by a conversion plan to its report binding (32 bytes); read it
  ! back when the queue is idle and pass it to bkCheckSparse24Report, or
  ! let bk_check_sparse24_report do both. Rows and groups count from 0.
  type, bind(c) :: BkSparse24Report
    integer(c_int32_t) :: status = BK_SPARSE24_STATUS_OK
    integer(c_int32_t) :: reserved = 0
    integer(c_int64_t) :: badGroupCount = 0
    integer(c_int64_t) :: firstBadRow = 0
    integer(c_int64_t) :: firstBadGroup = 0
  end type BkSparse24Report

  type, bind(c) :: BkSparse24ConvertInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: conversion = BK_SPARSE24_COMPRESS_STRICT
    integer(c_int32_t) :: reserved = 0
    type(BkTensorDesc) :: dense
    type(BkTensorDesc) :: values
    type(BkTensorDesc) :: metadata
  end type BkSparse24ConvertInfo

  type, bind(c) :: BkSparse24PrepareInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO
    type(c_ptr) :: pNext = c_null_ptr
    type(BkTensorDesc) :: values
    type(BkTensorDesc) :: metadata
  end type BkSparse24PrepareInfo

  ! Y[N, M] = act(alpha * X[N, K] @ W^T + beta * C + bias[M]); alpha
  ! defaults to 1, beta to 0, as in BkGemmInfo.
  type, bind(c) :: BkSparse24GemmInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: weightType = BK_DATA_TYPE_UNDEFINED
    integer(c_int) :: activation = BK_GEMM_ACTIVATION_NONE
    integer(c_int64_t) :: m = 0
    integer(c_int64_t) :: k = 0
    real(c_double) :: alpha = 1
    real(c_double) :: beta = 0
    type(BkTensorDesc) :: x
    type(BkTensorDesc) :: c
    type(BkTensorDesc) :: y
    type(BkTensorDesc) :: bias
  end type BkSparse24GemmInfo

  ! ---- The W4A16 family (bk-w4a16(7)) --------------------------------------
  ! groupSize starts at 0, which no plan accepts: set it to 32, 64, 128 or
  ! BK_W4A16_GROUP_PER_CHANNEL. Tensors start absent (dataType
  ! BK_DATA_TYPE_UNDEFINED), as the ones an op does not use must be. The
  ! packed form is row-major and contiguous: packed [K/16, 2N] is the
  ! Fortran integer(c_int32_t) p(2*n, k/16), described by
  ! bk_tensor_desc_of(p).
  type, bind(c) :: BkW4A16ConvertInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: conversion = BK_W4A16_QUANTIZE
    integer(c_int32_t) :: groupSize = 0
    type(BkTensorDesc) :: weight
    type(BkTensorDesc) :: quantized
    type(BkTensorDesc) :: scales
    type(BkTensorDesc) :: packed
    type(BkTensorDesc) :: packedScales
  end type BkW4A16ConvertInfo

  ! Written by a GPTQ repack plan to its report binding (32 bytes); read it
  ! back when the queue is idle and pass it to bkCheckW4A16RepackReport, or
  ! let bk_check_w4a16_repack_report do both. Rows, groups and columns
  ! count from 0.
  type, bind(c) :: BkW4A16RepackReport
    integer(c_int32_t) :: status = BK_W4A16_REPACK_STATUS_OK
    integer(c_int32_t) :: identityPermutation = BK_FALSE
    integer(c_int64_t) :: badCount = 0
    integer(c_int64_t) :: firstBadRow = 0
    integer(c_int64_t) :: firstBadColumn = 0
  end type BkW4A16RepackReport

  type, bind(c) :: BkW4A16GptqRepackInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int) :: zeros = BK_W4A16_GPTQ_ZEROS_EXACT
    integer(c_int32_t) :: groupSize = 0
    type(BkTensorDesc) :: qweight
    type(BkTensorDesc) :: scales
    type(BkTensorDesc) :: qzeros
    type(BkTensorDesc) :: gIdx
    type(BkTensorDesc) :: packed
    type(BkTensorDesc) :: packedScales
    type(BkTensorDesc) :: perm
  end type BkW4A16GptqRepackInfo

  ! C[M, N] = A[M, K] @ dequant(packed, packedScales); perm (optional)
  ! makes column k of the product read A(m, perm[k]).
  type, bind(c) :: BkW4A16GemmInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_W4A16_GEMM_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int32_t) :: flags = 0
    integer(c_int32_t) :: groupSize = 0
    type(BkTensorDesc) :: a
    type(BkTensorDesc) :: packed
    type(BkTensorDesc) :: packedScales
    type(BkTensorDesc) :: perm
    type(BkTensorDesc) :: c
  end type BkW4A16GemmInfo

  ! ---- Block-sparse attention (bk-attention(7)) --------------------------
  ! Operands are [B, H, L, D] in libbk's (C) order: the Fortran array
  ! q(d, l, h, b) as it is (bk_tensor_desc_of(q)), and q(d, h, l, b), the
  ! [B, L, H, D] layout, as a strided view (bk_attention_desc_of(q,
  ! 'DHLB')). A pattern starts DENSE with no tensors; the mask and list
  ! forms are easiest made with bk_attention_mask_pattern and
  ! bk_attention_list_pattern.
  type, bind(c) :: BkAttentionPattern
    integer(c_int) :: form = BK_ATTENTION_PATTERN_DENSE
    integer(c_int32_t) :: blockQ = 0
    integer(c_int32_t) :: blockK = 0
    integer(c_int32_t) :: reserved = 0
    type(BkTensorDesc) :: mask                  ! MASK: U8 [Bp, Hp, nbq * nbk]
    type(BkTensorDesc) :: counts                ! LIST: I32 [Bp, Hp, nbq]
    type(BkTensorDesc) :: indices               ! LIST: I32 [Bp, Hp, nbq, capacity]
  end type BkAttentionPattern

  ! scale starts as a NaN, which no plan accepts, rather than C's 0 (every
  ! key weighted alike, a silent mistake): set it, usually to 1 / sqrt(D),
  ! or let bk_attention_info_of do it. lse starts absent.
  type, bind(c) :: BkAttentionInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_ATTENTION_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int32_t) :: flags = 0             ! BK_ATTENTION_CAUSAL_BIT
    integer(c_int32_t) :: reserved = 0
    real(c_double) :: scale = transfer(int(z'7FF8000000000000', c_int64_t), 0.0_c_double)
    type(BkAttentionPattern) :: pattern
    type(BkTensorDesc) :: q                     ! [B, H, Lq, D]
    type(BkTensorDesc) :: k                     ! [B, Hkv, Lk, D]
    type(BkTensorDesc) :: v                     ! [B, Hkv, Lk, Dv]
    type(BkTensorDesc) :: y                     ! [B, H, Lq, Dv], written
    type(BkTensorDesc) :: lse                   ! [B, H, Lq], written; optional
  end type BkAttentionInfo

  ! The same scale, flags and pattern as the forward; y and lse are the
  ! forward's outputs.
  type, bind(c) :: BkAttentionBackwardInfo
    integer(c_int) :: sType = BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO
    type(c_ptr) :: pNext = c_null_ptr
    integer(c_int32_t) :: flags = 0             ! CAUSAL_BIT, ALLOW_ATOMICS_BIT
    integer(c_int32_t) :: reserved = 0
    real(c_double) :: scale = transfer(int(z'7FF8000000000000', c_int64_t), 0.0_c_double)
    type(BkAttentionPattern) :: pattern
    type(BkTensorDesc) :: q                     ! [B, H, Lq, D]
    type(BkTensorDesc) :: k                     ! [B, Hkv, Lk, D]
    type(BkTensorDesc) :: v                     ! [B, Hkv, Lk, Dv]
    type(BkTensorDesc) :: y                     ! [B, H, Lq, Dv]
    type(BkTensorDesc) :: lse                   ! [B, H, Lq]
    type(BkTensorDesc) :: dy                    ! [B, H, Lq, Dv]
    type(BkTensorDesc) :: dq                    ! [B, H, Lq, D], written
    type(BkTensorDesc) :: dk                    ! [B, Hkv, Lk, D], written
    type(BkTensorDesc) :: dv                    ! [B, Hkv, Lk, Dv], written
  end type BkAttentionBackwardInfo

  ! ---- Callback shapes: write a bind(c) procedure with this interface and
  ! pass c_funloc(it). ------------------------------------------------------
  abstract interface
    function PFN_bkAllocationFunction(pUserData, size, alignment) result(p) bind(c)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: pUserData
      integer(c_size_t), value :: size
      integer(c_size_t), value :: alignment
      type(c_ptr) :: p
    end function PFN_bkAllocationFunction

    subroutine PFN_bkFreeFunction(pUserData, pMemory) bind(c)
      import :: c_ptr
      type(c_ptr), value :: pUserData
      type(c_ptr), value :: pMemory
    end subroutine PFN_bkFreeFunction

    ! pMessage is a NUL-terminated C string: bk_c_string(pMessage).
    subroutine PFN_bkMessageCallback(result, pMessage, pUserData) bind(c)
      import :: c_ptr, c_int
      integer(c_int), value :: result
      type(c_ptr), value :: pMessage
      type(c_ptr), value :: pUserData
    end subroutine PFN_bkMessageCallback
  end interface
end module bk_types
