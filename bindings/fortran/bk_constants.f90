! SPDX-License-Identifier: Apache-2.0
! Copyright The libbk authors; licensed under the Apache License, Version 2.0
! (http://www.apache.org/licenses/LICENSE-2.0; LICENSE in libbk's sources).
!
! libbk Fortran binding: every constant and enumerator of include/bk/*.h.
!
! C enums become `enum, bind(c)` blocks, so each enumerator has the kind of
! a C int (32 bits); #define'd numbers become integer(c_int32_t)
! parameters. The names are the C names; Fortran ignores case. C's
! unsigned types map to the signed integer of the same size: values past
! the signed range (none of the constants here) would read as negative.
module bk_constants
  use, intrinsic :: iso_c_binding, only: c_int32_t
  implicit none
  private :: c_int32_t

  ! ---- Version ---------------------------------------------------------
  integer(c_int32_t), parameter :: BK_VERSION_MAJOR = 0
  integer(c_int32_t), parameter :: BK_VERSION_MINOR = 1
  integer(c_int32_t), parameter :: BK_VERSION_PATCH = 0
  ! BK_MAKE_VERSION(major, minor, patch), spelt out: major in bits 22..31,
  ! minor in bits 12..21, patch in bits 0..11.
  integer(c_int32_t), parameter :: BK_HEADER_VERSION = &
       ior(ishft(BK_VERSION_MAJOR, 22), ior(ishft(BK_VERSION_MINOR, 12), BK_VERSION_PATCH))

  integer(c_int32_t), parameter :: BK_MAX_TENSOR_RANK = 8
  integer(c_int32_t), parameter :: BK_MAX_NAME_SIZE = 256
  integer(c_int32_t), parameter :: BK_MAX_KERNEL_NAME_SIZE = 64
  integer(c_int32_t), parameter :: BK_MAX_MODULE_ARCHITECTURES = 16
  integer(c_int32_t), parameter :: BK_MAX_BINDINGS = 16
  integer(c_int32_t), parameter :: BK_MAX_BINDING_NAME_SIZE = 32
  integer(c_int32_t), parameter :: BK_TRUE = 1
  integer(c_int32_t), parameter :: BK_FALSE = 0

  ! ---- BkResult --------------------------------------------------------
  enum, bind(c)
    enumerator :: BK_SUCCESS = 0
    enumerator :: BK_INCOMPLETE = 1
    enumerator :: BK_ERROR_INVALID_ARGUMENT = -1
    enumerator :: BK_ERROR_UNSUPPORTED = -2
    enumerator :: BK_ERROR_MISALIGNED_OPERAND = -3
    enumerator :: BK_ERROR_WORKSPACE_TOO_SMALL = -4
    enumerator :: BK_ERROR_BUFFER_TOO_SMALL = -5
    enumerator :: BK_ERROR_OUT_OF_HOST_MEMORY = -6
    enumerator :: BK_ERROR_OUT_OF_DEVICE_MEMORY = -7
    enumerator :: BK_ERROR_DRIVER_NOT_FOUND = -8
    enumerator :: BK_ERROR_NO_DEVICE = -9
    enumerator :: BK_ERROR_DEVICE_LOST = -10
    enumerator :: BK_ERROR_MODULE_LOAD_FAILED = -11
    enumerator :: BK_ERROR_INCOMPATIBLE_VERSION = -12
    enumerator :: BK_ERROR_INVALID_STATE = -13
    enumerator :: BK_RESULT_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! ---- BkStructureType -------------------------------------------------
  enum, bind(c)
    enumerator :: BK_STRUCTURE_TYPE_UNDEFINED = 0
    enumerator :: BK_STRUCTURE_TYPE_DEVICE_PROPERTIES = 1
    enumerator :: BK_STRUCTURE_TYPE_CONTEXT_CREATE_INFO = 2
    enumerator :: BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO = 3
    enumerator :: BK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO = 4
    enumerator :: BK_STRUCTURE_TYPE_PLAN_CREATE_INFO = 5
    enumerator :: BK_STRUCTURE_TYPE_PLAN_PROPERTIES = 6
    enumerator :: BK_STRUCTURE_TYPE_RUN_INFO = 7
    enumerator :: BK_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES = 8
    enumerator :: BK_STRUCTURE_TYPE_PLAN_BINDING_PROPERTIES = 9
    enumerator :: BK_STRUCTURE_TYPE_GATED_ACTIVATION_INFO = 100
    enumerator :: BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO = 101
    enumerator :: BK_STRUCTURE_TYPE_GEMM_INFO = 200
    enumerator :: BK_STRUCTURE_TYPE_SPARSE24_CONVERT_INFO = 201
    enumerator :: BK_STRUCTURE_TYPE_SPARSE24_PREPARE_INFO = 202
    enumerator :: BK_STRUCTURE_TYPE_SPARSE24_GEMM_INFO = 203
    enumerator :: BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO = 300
    enumerator :: BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO = 301
    enumerator :: BK_STRUCTURE_TYPE_W4A16_GEMM_INFO = 302
    enumerator :: BK_STRUCTURE_TYPE_ATTENTION_INFO = 400
    enumerator :: BK_STRUCTURE_TYPE_ATTENTION_BACKWARD_INFO = 401
    enumerator :: BK_STRUCTURE_TYPE_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! ---- BkDataType ------------------------------------------------------
  enum, bind(c)
    enumerator :: BK_DATA_TYPE_UNDEFINED = 0
    enumerator :: BK_DATA_TYPE_F32 = 1
    enumerator :: BK_DATA_TYPE_F16 = 2
    enumerator :: BK_DATA_TYPE_BF16 = 3
    enumerator :: BK_DATA_TYPE_F64 = 4
    enumerator :: BK_DATA_TYPE_I32 = 5
    enumerator :: BK_DATA_TYPE_U16 = 6
    enumerator :: BK_DATA_TYPE_U8 = 7
    enumerator :: BK_DATA_TYPE_I8 = 8
    enumerator :: BK_DATA_TYPE_U32 = 9
    ! Only a BkPrecisionGuarantee%computeType: F32 inputs rounded to a 10-bit
    ! mantissa for tensor cores. No tensor has this type.
    enumerator :: BK_DATA_TYPE_TF32 = 10
    enumerator :: BK_DATA_TYPE_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! ---- BkDeviceType ----------------------------------------------------
  enum, bind(c)
    enumerator :: BK_DEVICE_TYPE_AUTO = 0
    enumerator :: BK_DEVICE_TYPE_HOST = 1
    enumerator :: BK_DEVICE_TYPE_CUDA = 2
    enumerator :: BK_DEVICE_TYPE_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! ---- BkMemoryType ----------------------------------------------------
  enum, bind(c)
    enumerator :: BK_MEMORY_TYPE_DEVICE = 0
    enumerator :: BK_MEMORY_TYPE_HOST_PINNED = 1
    enumerator :: BK_MEMORY_TYPE_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! ---- BkCommandBufferUsage --------------------------------------------
  enum, bind(c)
    enumerator :: BK_COMMAND_BUFFER_USAGE_ONE_TIME = 0
    enumerator :: BK_COMMAND_BUFFER_USAGE_REUSABLE = 1
    enumerator :: BK_COMMAND_BUFFER_USAGE_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! ---- BkGatedActivationKind -------------------------------------------
  enum, bind(c)
    enumerator :: BK_GATED_ACTIVATION_GLU = 0
    enumerator :: BK_GATED_ACTIVATION_REGLU = 1
    enumerator :: BK_GATED_ACTIVATION_SWIGLU = 2
    enumerator :: BK_GATED_ACTIVATION_GEGLU = 3
    enumerator :: BK_GATED_ACTIVATION_GEGLU_TANH = 4
    enumerator :: BK_GATED_ACTIVATION_KIND_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! ---- Gated activation binding slots (0-based, as BkRunInfo.pBindings
  ! is a C array: slot s is Fortran element s + 1) ------------------------
  enum, bind(c)
    enumerator :: BK_GATED_ACTIVATION_BINDING_INPUT = 0
    enumerator :: BK_GATED_ACTIVATION_BINDING_OUTPUT = 1
    enumerator :: BK_GATED_ACTIVATION_BACKWARD_BINDING_INPUT = 0
    enumerator :: BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_OUTPUT = 1
    enumerator :: BK_GATED_ACTIVATION_BACKWARD_BINDING_GRAD_INPUT = 2
  end enum

  ! ---- The GEMM family (bk/bk_gemm.h, bk-gemm(7)) ------------------------
  ! BkGemmOp: op(X) in BkGemmInfo%transA and %transB.
  enum, bind(c)
    enumerator :: BK_GEMM_OP_N = 0
    enumerator :: BK_GEMM_OP_T = 1
    enumerator :: BK_GEMM_OP_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! BkGemmActivation: applied last, after alpha, beta * C and the bias.
  enum, bind(c)
    enumerator :: BK_GEMM_ACTIVATION_NONE = 0
    enumerator :: BK_GEMM_ACTIVATION_RELU = 1
    enumerator :: BK_GEMM_ACTIVATION_GELU_TANH = 2
    enumerator :: BK_GEMM_ACTIVATION_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! BkGemmFlagBits, for BkGemmInfo%flags (ior them together).
  enum, bind(c)
    enumerator :: BK_GEMM_ALLOW_TF32_BIT = 1
    enumerator :: BK_GEMM_FLAG_BITS_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! Dense GEMM binding slots (0-based: slot s is Fortran element s + 1).
  enum, bind(c)
    enumerator :: BK_GEMM_BINDING_A = 0
    enumerator :: BK_GEMM_BINDING_B = 1
    enumerator :: BK_GEMM_BINDING_C = 2
    enumerator :: BK_GEMM_BINDING_D = 3
    enumerator :: BK_GEMM_BINDING_BIAS = 4
  end enum

  ! BkSparse24Conversion, for BkSparse24ConvertInfo%conversion.
  enum, bind(c)
    enumerator :: BK_SPARSE24_COMPRESS_STRICT = 0
    enumerator :: BK_SPARSE24_COMPRESS_PRUNE = 1
    enumerator :: BK_SPARSE24_DECOMPRESS = 2
    enumerator :: BK_SPARSE24_VALIDATE = 3
    enumerator :: BK_SPARSE24_CONVERSION_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! BkSparse24Status, in BkSparse24Report%status.
  enum, bind(c)
    enumerator :: BK_SPARSE24_STATUS_OK = 0
    enumerator :: BK_SPARSE24_STATUS_TOO_MANY_NONZEROS = 1
    enumerator :: BK_SPARSE24_STATUS_BAD_METADATA = 2
    enumerator :: BK_SPARSE24_STATUS_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! 2:4 conversion, prepare and sparse GEMM binding slots (0-based).
  enum, bind(c)
    enumerator :: BK_SPARSE24_CONVERT_BINDING_DENSE = 0
    enumerator :: BK_SPARSE24_CONVERT_BINDING_VALUES = 1
    enumerator :: BK_SPARSE24_CONVERT_BINDING_METADATA = 2
    enumerator :: BK_SPARSE24_CONVERT_BINDING_REPORT = 3
  end enum
  enum, bind(c)
    enumerator :: BK_SPARSE24_PREPARE_BINDING_VALUES = 0
    enumerator :: BK_SPARSE24_PREPARE_BINDING_METADATA = 1
    enumerator :: BK_SPARSE24_PREPARE_BINDING_PREPARED = 2
  end enum
  enum, bind(c)
    enumerator :: BK_SPARSE24_GEMM_BINDING_WEIGHT = 0
    enumerator :: BK_SPARSE24_GEMM_BINDING_X = 1
    enumerator :: BK_SPARSE24_GEMM_BINDING_C = 2
    enumerator :: BK_SPARSE24_GEMM_BINDING_Y = 3
    enumerator :: BK_SPARSE24_GEMM_BINDING_BIAS = 4
  end enum

  ! ---- The W4A16 family (bk/bk_w4a16.h, bk-w4a16(7)) ---------------------
  ! groupSize of one scale per column (G = 1).
  integer(c_int32_t), parameter :: BK_W4A16_GROUP_PER_CHANNEL = -1

  ! BkW4A16Conversion, for BkW4A16ConvertInfo%conversion.
  enum, bind(c)
    enumerator :: BK_W4A16_QUANTIZE = 0
    enumerator :: BK_W4A16_PACK = 1
    enumerator :: BK_W4A16_UNPACK = 2
    enumerator :: BK_W4A16_CONVERSION_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! Conversion binding slots (0-based: slot s is Fortran element s + 1).
  enum, bind(c)
    enumerator :: BK_W4A16_CONVERT_BINDING_WEIGHT = 0
    enumerator :: BK_W4A16_CONVERT_BINDING_QUANTIZED = 1
    enumerator :: BK_W4A16_CONVERT_BINDING_SCALES = 2
    enumerator :: BK_W4A16_CONVERT_BINDING_PACKED = 3
    enumerator :: BK_W4A16_CONVERT_BINDING_PACKED_SCALES = 4
  end enum

  ! BkW4A16GptqZeros, for BkW4A16GptqRepackInfo%zeros: how qzeros stores
  ! the zero point (8; only symmetric checkpoints are repacked).
  enum, bind(c)
    enumerator :: BK_W4A16_GPTQ_ZEROS_EXACT = 0
    enumerator :: BK_W4A16_GPTQ_ZEROS_MINUS_ONE = 1
    enumerator :: BK_W4A16_GPTQ_ZEROS_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! BkW4A16RepackStatus, in BkW4A16RepackReport%status.
  enum, bind(c)
    enumerator :: BK_W4A16_REPACK_STATUS_OK = 0
    enumerator :: BK_W4A16_REPACK_STATUS_ASYMMETRIC = 1
    enumerator :: BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX = 2
    enumerator :: BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS = 3
    enumerator :: BK_W4A16_REPACK_STATUS_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! GPTQ repack and W4A16 GEMM binding slots (0-based).
  enum, bind(c)
    enumerator :: BK_W4A16_REPACK_BINDING_QWEIGHT = 0
    enumerator :: BK_W4A16_REPACK_BINDING_SCALES = 1
    enumerator :: BK_W4A16_REPACK_BINDING_QZEROS = 2
    enumerator :: BK_W4A16_REPACK_BINDING_G_IDX = 3
    enumerator :: BK_W4A16_REPACK_BINDING_PACKED = 4
    enumerator :: BK_W4A16_REPACK_BINDING_PACKED_SCALES = 5
    enumerator :: BK_W4A16_REPACK_BINDING_PERM = 6
    enumerator :: BK_W4A16_REPACK_BINDING_REPORT = 7
  end enum
  enum, bind(c)
    enumerator :: BK_W4A16_GEMM_BINDING_A = 0
    enumerator :: BK_W4A16_GEMM_BINDING_PACKED = 1
    enumerator :: BK_W4A16_GEMM_BINDING_PACKED_SCALES = 2
    enumerator :: BK_W4A16_GEMM_BINDING_PERM = 3
    enumerator :: BK_W4A16_GEMM_BINDING_C = 4
  end enum

  ! ---- Block-sparse attention (bk/bk_attention.h, bk-attention(7)) -------
  ! BkAttentionFlagBits, for the infos' flags (ior them together).
  enum, bind(c)
    enumerator :: BK_ATTENTION_CAUSAL_BIT = 1
    enumerator :: BK_ATTENTION_ALLOW_ATOMICS_BIT = 2        ! backward only
    enumerator :: BK_ATTENTION_FLAG_BITS_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! BkAttentionPatternForm, for BkAttentionPattern%form.
  enum, bind(c)
    enumerator :: BK_ATTENTION_PATTERN_DENSE = 0
    enumerator :: BK_ATTENTION_PATTERN_MASK = 1
    enumerator :: BK_ATTENTION_PATTERN_LIST = 2
    enumerator :: BK_ATTENTION_PATTERN_FORM_MAX_ENUM = int(z'7FFFFFFF')
  end enum

  ! Forward and backward binding slots (0-based: slot s is Fortran element
  ! s + 1). The backward plan has the forward's eight slots first.
  enum, bind(c)
    enumerator :: BK_ATTENTION_BINDING_Q = 0
    enumerator :: BK_ATTENTION_BINDING_K = 1
    enumerator :: BK_ATTENTION_BINDING_V = 2
    enumerator :: BK_ATTENTION_BINDING_MASK = 3
    enumerator :: BK_ATTENTION_BINDING_COUNTS = 4
    enumerator :: BK_ATTENTION_BINDING_INDICES = 5
    enumerator :: BK_ATTENTION_BINDING_Y = 6
    enumerator :: BK_ATTENTION_BINDING_LSE = 7
  end enum
  enum, bind(c)
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_Q = 0
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_K = 1
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_V = 2
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_MASK = 3
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_COUNTS = 4
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_INDICES = 5
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_Y = 6
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_LSE = 7
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_DY = 8
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_DQ = 9
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_DK = 10
    enumerator :: BK_ATTENTION_BACKWARD_BINDING_DV = 11
  end enum
end module bk_constants
