! SPDX-License-Identifier: Apache-2.0
! Copyright The libbk authors; licensed under the Apache License, Version 2.0
! (http://www.apache.org/licenses/LICENSE-2.0; LICENSE in libbk's sources).
!
! libbk Fortran binding: thin helpers where the C idioms hurt in Fortran.
!
! Index order. libbk describes tensors in C (row-major) order: extent(1)
! is the slowest index. Fortran is column-major, so the same memory seen
! from Fortran has its dimensions reversed: x(d, l, h, b) is the row-major
! extent [b, h, l, d], and Fortran dimension k of a rank-r array is C axis
! r - k (bk_split_axis). bk_tensor_desc and bk_tensor_desc_of do the
! reversal; they take shapes and strides in Fortran order.
!
! Errors. Helpers that can fail take two optional arguments, as ALLOCATE
! does: `stat` (integer(c_int)) receives the BkResult (BK_SUCCESS, or a
! negative code), and `errmsg` (character(:), allocatable) receives the
! message on failure, untouched on success. Without `stat`, a failure
! prints the message on error_unit and stops the program (error stop).
!
! Matrices. The GEMM family (bk-gemm(7)) reads a matrix's layout from its
! strides, so a Fortran array a(m, k) needs no reversal: it is the
! column-major matrix [m, k] (extent [m, k], strides [1, m]), and
! bk_matrix_desc and bk_matrix_desc_of describe it so, with a trailing
! Fortran dimension as the batch. (bk_tensor_desc_of(a) describes the same
! memory as the row-major [k, m], that is a transposed.)
!
! Copies and host addresses take arrays of real(c_float), real(c_double),
! integer(c_int32_t), integer(c_int16_t) and integer(c_int8_t) of any rank
! (assumed rank, part of Fortran 2018; gfortran has it since 9; configure checks).
module bk_helpers
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  use bk_constants
  use bk_types
  use bk_capi
  implicit none
  private
  public :: BK_MAKE_VERSION, BK_VERSION_GET_MAJOR, BK_VERSION_GET_MINOR, BK_VERSION_GET_PATCH
  public :: bk_c_string, bk_last_error_message, bk_result_string, bk_check
  public :: bk_is_null, bk_data_type_size, bk_split_axis, bk_tensor_desc, bk_tensor_desc_of
  public :: bk_sizeof, bk_host_address, bk_copy_to_device, bk_copy_from_device
  public :: bk_enumerate_devices, bk_create_context, bk_allocate_memory, bk_memory_address
  public :: bk_create_plan, bk_cmd_run
  public :: bk_matrix_desc, bk_matrix_desc_of, bk_get_plan_properties, bk_check_sparse24_report
  public :: bk_check_w4a16_repack_report
  public :: bk_attention_desc, bk_attention_desc_of, bk_attention_mask_pattern, &
       bk_attention_list_pattern, bk_attention_info_of, bk_attention_backward_info_of

  ! A NUL-terminated C string (a c_ptr, or a character array such as
  ! BkDeviceProperties%name) as a Fortran string of its exact length.
  interface bk_c_string
    module procedure c_string_from_ptr, c_string_from_chars
  end interface bk_c_string

  ! .true. for a handle that is BK_NULL_HANDLE (the default of a new one).
  interface bk_is_null
    module procedure is_null_context, is_null_queue, is_null_command_buffer, is_null_plan, &
         is_null_memory
  end interface bk_is_null

  ! desc = bk_tensor_desc(dataType, shape [, stride] [, stat, errmsg]):
  ! shape and stride (in elements) in Fortran order, default or c_int64_t
  ! integers; no stride means contiguous.
  interface bk_tensor_desc
    module procedure tensor_desc_i32, tensor_desc_i64
  end interface bk_tensor_desc

  ! desc = bk_tensor_desc_of(x [, dataType] [, stat, errmsg]): a
  ! contiguous tensor of x's shape and type, i.e. the layout that
  ! bk_copy_to_device(ctx, dst, x) leaves on the device. dataType picks
  ! among the libbk types stored in x's kind (F16, BF16 or U16 in
  ! integer(c_int16_t) bits; I8 or U8; I32 or U32).
  interface bk_tensor_desc_of
    module procedure desc_of_f32, desc_of_f64, desc_of_i32, desc_of_i16, desc_of_i8
  end interface bk_tensor_desc_of

  ! desc = bk_matrix_desc(dataType, shape [, ld] [, batchStride] [, stat,
  ! errmsg]): a column-major GEMM operand of Fortran shape [rows, cols] or
  ! [rows, cols, batch]: extent [rows, cols] with strides [1, ld], or
  ! extent [batch, rows, cols] with strides [batchStride, 1, ld]. ld (the
  ! leading dimension, default rows) and batchStride (default ld * cols)
  ! describe a block of a larger array, as in BLAS: a(1:m, 1:k) of
  ! a(lda, *) is bk_matrix_desc(dt, [m, k], ld=lda). Default or c_int64_t
  ! integers.
  interface bk_matrix_desc
    module procedure matrix_desc_i32, matrix_desc_i64
  end interface bk_matrix_desc

  ! desc = bk_matrix_desc_of(x [, dataType] [, stat, errmsg]): the whole
  ! array x of rank 2 (a matrix) or 3 (matrices x(:, :, b)) as a
  ! column-major GEMM operand; dataType as for bk_tensor_desc_of (F16 or
  ! BF16 for half-precision bits in integer(c_int16_t); U8 for the
  ! quantized values of a W4A16 weight in integer(c_int8_t); I32, the
  ! default, for a GPTQ qweight or qzeros in integer(c_int32_t)).
  interface bk_matrix_desc_of
    module procedure matrix_desc_of_f32, matrix_desc_of_f64, matrix_desc_of_i32, &
         matrix_desc_of_i16, matrix_desc_of_i8
  end interface bk_matrix_desc_of

  ! bytes = bk_sizeof(x): the bytes of array x (any rank, allocatable
  ! too, where c_sizeof takes only explicit-shape arrays), as c_int64_t.
  interface bk_sizeof
    module procedure sizeof_f32, sizeof_f64, sizeof_i32, sizeof_i16, sizeof_i8
  end interface bk_sizeof

  ! address = bk_host_address(x [, stat, errmsg]): x (a contiguous TARGET
  ! array) as a BkDeviceAddress, for binding host memory directly on the
  ! host device. 0 for an empty array.
  interface bk_host_address
    module procedure host_address_f32, host_address_f64, host_address_i32, host_address_i16, &
         host_address_i8
  end interface bk_host_address

  ! call bk_copy_to_device(context, dst, src [, stat, errmsg]): all of the
  ! Fortran array src (any rank; a section is gathered first) to the
  ! device address dst, in array element order.
  interface bk_copy_to_device
    module procedure copy_to_f32, copy_to_f64, copy_to_i32, copy_to_i16, copy_to_i8
  end interface bk_copy_to_device

  ! call bk_copy_from_device(context, dst, src [, stat, errmsg]): fills the
  ! whole Fortran array dst from the device address src.
  interface bk_copy_from_device
    module procedure copy_from_f32, copy_from_f64, copy_from_i32, copy_from_i16, copy_from_i8
  end interface bk_copy_from_device

  ! call bk_create_plan(context, info, plan [, stat, errmsg]) for any op
  ! info struct: wraps it in a BkPlanCreateInfo.
  interface bk_create_plan
    module procedure create_plan_gated, create_plan_gated_backward, create_plan_gemm, &
         create_plan_sparse24_convert, create_plan_sparse24_prepare, create_plan_sparse24_gemm, &
         create_plan_w4a16_convert, create_plan_w4a16_gptq_repack, create_plan_w4a16_gemm, &
         create_plan_attention, create_plan_attention_backward
  end interface bk_create_plan

  ! Block-sparse attention (bk-attention(7)) reads its operands as
  ! [B, H, L, D] (lse [B, H, L]) in libbk's order, in any memory layout.
  ! `order` names the Fortran dimensions of an array by letter: D
  ! (features, D or Dv), L (sequence), H (heads), B (batch). 'DLHB' is
  ! q(d, l, h, b), which already is [B, H, L, D]; 'DHLB' is q(d, h, l, b),
  ! the [B, L, H, D] layout of most checkpoints, bound as a permuted view.
  ! B may be left out (one sequence, extent 1); an order without D
  ! describes an lse.
  !
  ! desc = bk_attention_desc(dataType, shape, order [, stride] [, stat,
  ! errmsg]): shape and strides (in elements; default contiguous) listed
  ! in the order of `order`, default or c_int64_t integers. Strides
  ! describe part of a larger array: q of a fused qkv(d, 3, h, l, b) is
  ! bk_attention_desc(dt, [d, h, l, b], 'DHLB', [1, 3*d, 3*d*h, 3*d*h*l]).
  interface bk_attention_desc
    module procedure attention_desc_i32, attention_desc_i64
  end interface bk_attention_desc

  ! desc = bk_attention_desc_of(x, order [, dataType] [, stat, errmsg]):
  ! the whole array x, of rank len(order), as above; dataType as for
  ! bk_tensor_desc_of (F16 or BF16 for half-precision bits in
  ! integer(c_int16_t)).
  interface bk_attention_desc_of
    module procedure attention_desc_of_f32, attention_desc_of_f64, attention_desc_of_i16
  end interface bk_attention_desc_of

  ! call bk_attention_info_of(info, q, k, v, y [, lse] [, order] [, scale]
  ! [, dataType] [, stat, errmsg]): the tensors of a BkAttentionInfo from
  ! Fortran arrays, all in one `order` (default 'DLHB'; lse in the same
  ! order without D), and its scale (default 1 / sqrt(D)); flags and
  ! pattern are left as they are, and so is all of info on failure. The
  ! arrays are real(c_float) or real(c_double), lse too, or
  ! integer(c_int16_t) half-precision bits with a real(c_float) lse and
  ! dataType (F16 or BF16) required.
  interface bk_attention_info_of
    module procedure attention_info_f32, attention_info_f64, attention_info_i16
  end interface bk_attention_info_of

  ! call bk_attention_backward_info_of(info, q, k, v, y, lse, dy, dq, dk,
  ! dv [, order] [, scale] [, dataType] [, stat, errmsg]): the same for a
  ! BkAttentionBackwardInfo.
  interface bk_attention_backward_info_of
    module procedure attention_backward_info_f32, attention_backward_info_f64, &
         attention_backward_info_i16
  end interface bk_attention_backward_info_of

contains

  ! ---- Version macros --------------------------------------------------
  elemental function BK_MAKE_VERSION(major, minor, patch) result(version)
    integer(c_int32_t), intent(in) :: major, minor, patch
    integer(c_int32_t) :: version
    version = ior(ishft(major, 22), ior(ishft(iand(minor, int(z'3FF', c_int32_t)), 12), &
         iand(patch, int(z'FFF', c_int32_t))))
  end function BK_MAKE_VERSION

  elemental function BK_VERSION_GET_MAJOR(version) result(major)
    integer(c_int32_t), intent(in) :: version
    integer(c_int32_t) :: major
    major = ishft(version, -22)   ! logical shift: the top bits of a uint32_t
  end function BK_VERSION_GET_MAJOR

  elemental function BK_VERSION_GET_MINOR(version) result(minor)
    integer(c_int32_t), intent(in) :: version
    integer(c_int32_t) :: minor
    minor = iand(ishft(version, -12), int(z'3FF', c_int32_t))
  end function BK_VERSION_GET_MINOR

  elemental function BK_VERSION_GET_PATCH(version) result(patch)
    integer(c_int32_t), intent(in) :: version
    integer(c_int32_t) :: patch
    patch = iand(version, int(z'FFF', c_int32_t))
  end function BK_VERSION_GET_PATCH

  ! ---- Strings -------------------------------------------------------------
  function c_string_from_ptr(p) result(str)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: str
    interface
      function c_strlen(s) result(n) bind(c, name='strlen')
        import :: c_ptr, c_size_t
        type(c_ptr), value :: s
        integer(c_size_t) :: n
      end function c_strlen
    end interface
    character(kind=c_char), pointer :: chars(:)
    integer :: n
    if (.not. c_associated(p)) then
      str = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    str = chars_to_string(chars, n)
  end function c_string_from_ptr

  function c_string_from_chars(chars) result(str)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: str
    integer :: n
    n = 0
    do while (n < size(chars))
      if (chars(n + 1) == c_null_char) exit
      n = n + 1
    end do
    str = chars_to_string(chars, n)
  end function c_string_from_chars

  function chars_to_string(chars, n) result(str)
    character(kind=c_char), intent(in) :: chars(:)
    integer, intent(in) :: n
    character(len=:), allocatable :: str
    integer :: i
    allocate (character(len=n) :: str)
    do i = 1, n
      str(i:i) = chars(i)
    end do
  end function chars_to_string

  ! The calling thread's last libbk error message.
  function bk_last_error_message() result(msg)
    character(len=:), allocatable :: msg
    msg = bk_c_string(bkGetLastErrorMessage())
  end function bk_last_error_message

  ! "BK_ERROR_INVALID_ARGUMENT" and the like.
  function bk_result_string(result) result(str)
    integer(c_int), intent(in) :: result
    character(len=:), allocatable :: str
    str = bk_c_string(bkResultString(result))
  end function bk_result_string

  ! ---- Errors ----------------------------------------------------------------
  ! Every public helper ends with
  !   if (res < 0 .and. present(errmsg)) errmsg = msg
  !   call finish(res, where, msg, stat)
  ! and never hands errmsg on to another procedure: gfortran 12 loses the
  ! length of an optional deferred-length character passed on that way.

  ! stat = res, or on failure without stat: print and stop.
  subroutine finish(res, where, msg, stat)
    integer(c_int), intent(in) :: res
    character(len=*), intent(in) :: where, msg
    integer(c_int), intent(out), optional :: stat
    if (present(stat)) then
      stat = res
    else if (res < 0) then
      write (error_unit, '(a)') 'libbk: ' // where // ': ' // bk_result_string(res) // ': ' // msg
      error stop 1
    end if
  end subroutine finish

  ! The message that goes with a libbk result.
  function message_of(res) result(msg)
    integer(c_int), intent(in) :: res
    character(len=:), allocatable :: msg
    if (res < 0) then
      msg = bk_last_error_message()
    else
      msg = ''
    end if
  end function message_of

  ! call bk_check(bkQueueSubmit(q, 1, [cmd]), 'bkQueueSubmit' [, stat, errmsg]):
  ! the stat/errmsg rule above for a raw call's result.
  subroutine bk_check(result, where, stat, errmsg)
    integer(c_int), intent(in) :: result
    character(len=*), intent(in) :: where
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    msg = message_of(result)
    if (result < 0 .and. present(errmsg)) errmsg = msg
    call finish(result, where, msg, stat)
  end subroutine bk_check

  ! ---- Handles -------------------------------------------------------------
  elemental logical function is_null_context(h)
    type(BkContext), intent(in) :: h
    is_null_context = .not. c_associated(h%handle)
  end function is_null_context

  elemental logical function is_null_queue(h)
    type(BkQueue), intent(in) :: h
    is_null_queue = .not. c_associated(h%handle)
  end function is_null_queue

  elemental logical function is_null_command_buffer(h)
    type(BkCommandBuffer), intent(in) :: h
    is_null_command_buffer = .not. c_associated(h%handle)
  end function is_null_command_buffer

  elemental logical function is_null_plan(h)
    type(BkPlan), intent(in) :: h
    is_null_plan = .not. c_associated(h%handle)
  end function is_null_plan

  elemental logical function is_null_memory(h)
    type(BkMemory), intent(in) :: h
    is_null_memory = .not. c_associated(h%handle)
  end function is_null_memory

  ! ---- Tensor descriptors ----------------------------------------------
  ! Bytes per element of a BkDataType; 0 for one libbk does not know.
  elemental function bk_data_type_size(dataType) result(bytes)
    integer(c_int), intent(in) :: dataType
    integer(c_int) :: bytes
    select case (dataType)
    case (BK_DATA_TYPE_F64)
      bytes = 8
    case (BK_DATA_TYPE_F32, BK_DATA_TYPE_I32, BK_DATA_TYPE_U32)
      bytes = 4
    case (BK_DATA_TYPE_F16, BK_DATA_TYPE_BF16, BK_DATA_TYPE_U16)
      bytes = 2
    case (BK_DATA_TYPE_U8, BK_DATA_TYPE_I8)
      bytes = 1
    case default
      bytes = 0
    end select
  end function bk_data_type_size

  ! The C (row-major) axis of Fortran dimension fortranDim (1-based) of a
  ! rank-`rank` array: what BkGatedActivationInfo%splitAxis wants.
  elemental function bk_split_axis(fortranDim, rank) result(axis)
    integer, intent(in) :: fortranDim, rank
    integer(c_int32_t) :: axis
    axis = int(rank - fortranDim, c_int32_t)
  end function bk_split_axis

  ! Shape and strides in Fortran order, reversed into the C order of
  ! BkTensorDesc: the heart of the index-order rule.
  subroutine make_desc(dataType, shape, desc, res, msg, stride)
    integer(c_int), intent(in) :: dataType
    integer(c_int64_t), intent(in) :: shape(:)
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    integer(c_int64_t), intent(in), optional :: stride(:)
    character(len=80) :: line
    integer :: r
    r = size(shape)
    res = BK_ERROR_INVALID_ARGUMENT
    if (r < 1 .or. r > BK_MAX_TENSOR_RANK) then
      write (line, '(a, i0, a, i0)') 'size(shape) = ', r, ' must be in 1..BK_MAX_TENSOR_RANK = ', &
           BK_MAX_TENSOR_RANK
      msg = trim(line)
      return
    end if
    if (present(stride)) then
      if (size(stride) /= r) then
        write (line, '(a, i0, a, i0)') 'size(stride) = ', size(stride), &
             ' must equal size(shape) = ', r
        msg = trim(line)
        return
      end if
      desc%stride(1:r) = stride(r:1:-1)
    end if
    desc%dataType = dataType
    desc%rank = int(r, c_int32_t)
    desc%extent(1:r) = shape(r:1:-1)
    res = BK_SUCCESS
    msg = ''
  end subroutine make_desc

  function tensor_desc_i64(dataType, shape, stride, stat, errmsg) result(desc)
    integer(c_int), intent(in) :: dataType
    integer(c_int64_t), intent(in) :: shape(:)
    integer(c_int64_t), intent(in), optional :: stride(:)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call make_desc(dataType, shape, desc, res, msg, stride)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_tensor_desc', msg, stat)
  end function tensor_desc_i64

  function tensor_desc_i32(dataType, shape, stride, stat, errmsg) result(desc)
    integer(c_int), intent(in) :: dataType
    integer(c_int32_t), intent(in) :: shape(:)
    integer(c_int32_t), intent(in), optional :: stride(:)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    if (present(stride)) then
      call make_desc(dataType, int(shape, c_int64_t), desc, res, msg, int(stride, c_int64_t))
    else
      call make_desc(dataType, int(shape, c_int64_t), desc, res, msg)
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_tensor_desc', msg, stat)
  end function tensor_desc_i32

  ! bk_tensor_desc_of: check dataType against the storage kind, then
  ! describe the array's shape.
  subroutine desc_of_shape(shape, natural, bytes, dataType, desc, res, msg)
    integer(c_int64_t), intent(in) :: shape(:)
    integer(c_int), intent(in) :: natural, bytes
    integer(c_int), intent(in), optional :: dataType
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    character(len=96) :: line
    integer(c_int) :: dt
    dt = natural
    if (present(dataType)) dt = dataType
    if (bk_data_type_size(dt) /= bytes) then
      write (line, '(a, i0, a, i0, a)') 'dataType = ', dt, ' does not fit the array''s ', bytes, &
           '-byte elements'
      msg = trim(line)
      res = BK_ERROR_INVALID_ARGUMENT
      return
    end if
    call make_desc(dt, shape, desc, res, msg)
  end subroutine desc_of_shape

  function desc_of_f32(x, dataType, stat, errmsg) result(desc)
    real(c_float), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call desc_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_F32, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_tensor_desc_of', msg, stat)
  end function desc_of_f32

  function desc_of_f64(x, dataType, stat, errmsg) result(desc)
    real(c_double), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call desc_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_F64, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_tensor_desc_of', msg, stat)
  end function desc_of_f64

  function desc_of_i32(x, dataType, stat, errmsg) result(desc)
    integer(c_int32_t), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call desc_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_I32, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_tensor_desc_of', msg, stat)
  end function desc_of_i32

  function desc_of_i16(x, dataType, stat, errmsg) result(desc)
    integer(c_int16_t), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call desc_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_U16, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_tensor_desc_of', msg, stat)
  end function desc_of_i16

  function desc_of_i8(x, dataType, stat, errmsg) result(desc)
    integer(c_int8_t), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call desc_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_I8, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_tensor_desc_of', msg, stat)
  end function desc_of_i8

  ! ---- Matrices (the GEMM family) -----------------------------------------
  ! Fortran shape [rows, cols (, batch)] -> a column-major matrix desc.
  subroutine make_matrix_desc(dataType, shape, desc, res, msg, ld, batchStride)
    integer(c_int), intent(in) :: dataType
    integer(c_int64_t), intent(in) :: shape(:)
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    integer(c_int64_t), intent(in), optional :: ld, batchStride
    character(len=80) :: line
    integer(c_int64_t) :: lead, bstride
    res = BK_ERROR_INVALID_ARGUMENT
    if (size(shape) /= 2 .and. size(shape) /= 3) then
      write (line, '(a, i0, a)') 'size(shape) = ', size(shape), &
           ' must be 2 ([rows, cols]) or 3 ([rows, cols, batch])'
      msg = trim(line)
      return
    end if
    lead = max(1_c_int64_t, shape(1))
    if (present(ld)) lead = ld
    bstride = max(1_c_int64_t, lead * shape(2))
    if (present(batchStride)) bstride = batchStride
    desc%dataType = dataType
    desc%rank = int(size(shape), c_int32_t)
    if (size(shape) == 2) then
      desc%extent(1:2) = shape(1:2)
      desc%stride(1:2) = [1_c_int64_t, lead]
    else
      desc%extent(1:3) = [shape(3), shape(1), shape(2)]
      desc%stride(1:3) = [bstride, 1_c_int64_t, lead]
    end if
    res = BK_SUCCESS
    msg = ''
  end subroutine make_matrix_desc

  function matrix_desc_i64(dataType, shape, ld, batchStride, stat, errmsg) result(desc)
    integer(c_int), intent(in) :: dataType
    integer(c_int64_t), intent(in) :: shape(:)
    integer(c_int64_t), intent(in), optional :: ld, batchStride
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call make_matrix_desc(dataType, shape, desc, res, msg, ld, batchStride)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_matrix_desc', msg, stat)
  end function matrix_desc_i64

  function matrix_desc_i32(dataType, shape, ld, batchStride, stat, errmsg) result(desc)
    integer(c_int), intent(in) :: dataType
    integer(c_int32_t), intent(in) :: shape(:)
    integer(c_int32_t), intent(in), optional :: ld, batchStride
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int64_t) :: lead, bstride
    integer(c_int) :: res
    if (present(ld) .and. present(batchStride)) then
      lead = ld
      bstride = batchStride
      call make_matrix_desc(dataType, int(shape, c_int64_t), desc, res, msg, lead, bstride)
    else if (present(ld)) then
      lead = ld
      call make_matrix_desc(dataType, int(shape, c_int64_t), desc, res, msg, ld=lead)
    else if (present(batchStride)) then
      bstride = batchStride
      call make_matrix_desc(dataType, int(shape, c_int64_t), desc, res, msg, batchStride=bstride)
    else
      call make_matrix_desc(dataType, int(shape, c_int64_t), desc, res, msg)
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_matrix_desc', msg, stat)
  end function matrix_desc_i32

  ! bk_matrix_desc_of: check dataType against the storage kind, then
  ! describe the array's shape as a matrix.
  subroutine matrix_of_shape(shape, natural, bytes, dataType, desc, res, msg)
    integer(c_int64_t), intent(in) :: shape(:)
    integer(c_int), intent(in) :: natural, bytes
    integer(c_int), intent(in), optional :: dataType
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    character(len=96) :: line
    integer(c_int) :: dt
    dt = natural
    if (present(dataType)) dt = dataType
    if (bk_data_type_size(dt) /= bytes) then
      write (line, '(a, i0, a, i0, a)') 'dataType = ', dt, ' does not fit the array''s ', bytes, &
           '-byte elements'
      msg = trim(line)
      res = BK_ERROR_INVALID_ARGUMENT
      return
    end if
    call make_matrix_desc(dt, shape, desc, res, msg)
  end subroutine matrix_of_shape

  function matrix_desc_of_f32(x, dataType, stat, errmsg) result(desc)
    real(c_float), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call matrix_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_F32, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_matrix_desc_of', msg, stat)
  end function matrix_desc_of_f32

  function matrix_desc_of_f64(x, dataType, stat, errmsg) result(desc)
    real(c_double), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call matrix_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_F64, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_matrix_desc_of', msg, stat)
  end function matrix_desc_of_f64

  function matrix_desc_of_i16(x, dataType, stat, errmsg) result(desc)
    integer(c_int16_t), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call matrix_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_U16, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_matrix_desc_of', msg, stat)
  end function matrix_desc_of_i16

  function matrix_desc_of_i32(x, dataType, stat, errmsg) result(desc)
    integer(c_int32_t), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call matrix_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_I32, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_matrix_desc_of', msg, stat)
  end function matrix_desc_of_i32

  function matrix_desc_of_i8(x, dataType, stat, errmsg) result(desc)
    integer(c_int8_t), intent(in) :: x(..)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call matrix_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_I8, storage_size(x) / 8, dataType, &
         desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_matrix_desc_of', msg, stat)
  end function matrix_desc_of_i8

  ! ---- Sizes -----------------------------------------------------------------
  pure function sizeof_f32(x) result(bytes)
    real(c_float), intent(in) :: x(..)
    integer(c_int64_t) :: bytes
    bytes = size(x, kind=c_int64_t) * (storage_size(x) / 8)
  end function sizeof_f32

  pure function sizeof_f64(x) result(bytes)
    real(c_double), intent(in) :: x(..)
    integer(c_int64_t) :: bytes
    bytes = size(x, kind=c_int64_t) * (storage_size(x) / 8)
  end function sizeof_f64

  pure function sizeof_i32(x) result(bytes)
    integer(c_int32_t), intent(in) :: x(..)
    integer(c_int64_t) :: bytes
    bytes = size(x, kind=c_int64_t) * (storage_size(x) / 8)
  end function sizeof_i32

  pure function sizeof_i16(x) result(bytes)
    integer(c_int16_t), intent(in) :: x(..)
    integer(c_int64_t) :: bytes
    bytes = size(x, kind=c_int64_t) * (storage_size(x) / 8)
  end function sizeof_i16

  pure function sizeof_i8(x) result(bytes)
    integer(c_int8_t), intent(in) :: x(..)
    integer(c_int64_t) :: bytes
    bytes = size(x, kind=c_int64_t) * (storage_size(x) / 8)
  end function sizeof_i8

  ! ---- Host addresses ----------------------------------------------------
  ! c_loc is only defined for a contiguous array, so the specifics check
  ! that first; an empty array has address 0 (empty tensors may bind 0).
  function address_of(p) result(address)
    type(c_ptr), intent(in) :: p
    integer(c_int64_t) :: address
    address = int(transfer(p, 0_c_intptr_t), c_int64_t)
  end function address_of

  subroutine no_address(res, msg)
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    res = BK_ERROR_INVALID_ARGUMENT
    msg = 'x must be contiguous to be bound in place'
  end subroutine no_address

  function host_address_f32(x, stat, errmsg) result(address)
    real(c_float), intent(in), target :: x(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    integer(c_int64_t) :: address
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    address = 0
    res = BK_SUCCESS
    msg = ''
    if (.not. is_contiguous(x)) then
      call no_address(res, msg)
    else if (size(x) > 0) then
      address = address_of(c_loc(x))
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_host_address', msg, stat)
  end function host_address_f32

  function host_address_f64(x, stat, errmsg) result(address)
    real(c_double), intent(in), target :: x(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    integer(c_int64_t) :: address
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    address = 0
    res = BK_SUCCESS
    msg = ''
    if (.not. is_contiguous(x)) then
      call no_address(res, msg)
    else if (size(x) > 0) then
      address = address_of(c_loc(x))
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_host_address', msg, stat)
  end function host_address_f64

  function host_address_i32(x, stat, errmsg) result(address)
    integer(c_int32_t), intent(in), target :: x(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    integer(c_int64_t) :: address
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    address = 0
    res = BK_SUCCESS
    msg = ''
    if (.not. is_contiguous(x)) then
      call no_address(res, msg)
    else if (size(x) > 0) then
      address = address_of(c_loc(x))
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_host_address', msg, stat)
  end function host_address_i32

  function host_address_i16(x, stat, errmsg) result(address)
    integer(c_int16_t), intent(in), target :: x(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    integer(c_int64_t) :: address
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    address = 0
    res = BK_SUCCESS
    msg = ''
    if (.not. is_contiguous(x)) then
      call no_address(res, msg)
    else if (size(x) > 0) then
      address = address_of(c_loc(x))
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_host_address', msg, stat)
  end function host_address_i16

  function host_address_i8(x, stat, errmsg) result(address)
    integer(c_int8_t), intent(in), target :: x(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    integer(c_int64_t) :: address
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    address = 0
    res = BK_SUCCESS
    msg = ''
    if (.not. is_contiguous(x)) then
      call no_address(res, msg)
    else if (size(x) > 0) then
      address = address_of(c_loc(x))
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_host_address', msg, stat)
  end function host_address_i8

  ! ---- Copies --------------------------------------------------------------
  ! The dummies are CONTIGUOUS: a section is gathered into (and scattered
  ! back from) a temporary by the compiler around the call.
  subroutine copy_to_f32(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: dst
    real(c_float), intent(in), target, contiguous :: src(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(src) > 0) res = bkCopyToDevice(context, dst, c_loc(src), bk_sizeof(src))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyToDevice', msg, stat)
  end subroutine copy_to_f32

  subroutine copy_to_f64(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: dst
    real(c_double), intent(in), target, contiguous :: src(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(src) > 0) res = bkCopyToDevice(context, dst, c_loc(src), bk_sizeof(src))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyToDevice', msg, stat)
  end subroutine copy_to_f64

  subroutine copy_to_i32(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: dst
    integer(c_int32_t), intent(in), target, contiguous :: src(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(src) > 0) res = bkCopyToDevice(context, dst, c_loc(src), bk_sizeof(src))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyToDevice', msg, stat)
  end subroutine copy_to_i32

  subroutine copy_to_i16(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: dst
    integer(c_int16_t), intent(in), target, contiguous :: src(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(src) > 0) res = bkCopyToDevice(context, dst, c_loc(src), bk_sizeof(src))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyToDevice', msg, stat)
  end subroutine copy_to_i16

  subroutine copy_to_i8(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: dst
    integer(c_int8_t), intent(in), target, contiguous :: src(..)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(src) > 0) res = bkCopyToDevice(context, dst, c_loc(src), bk_sizeof(src))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyToDevice', msg, stat)
  end subroutine copy_to_i8

  subroutine copy_from_f32(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    real(c_float), intent(inout), target, contiguous :: dst(..)
    integer(c_int64_t), intent(in) :: src
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(dst) > 0) res = bkCopyFromDevice(context, c_loc(dst), src, bk_sizeof(dst))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyFromDevice', msg, stat)
  end subroutine copy_from_f32

  subroutine copy_from_f64(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    real(c_double), intent(inout), target, contiguous :: dst(..)
    integer(c_int64_t), intent(in) :: src
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(dst) > 0) res = bkCopyFromDevice(context, c_loc(dst), src, bk_sizeof(dst))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyFromDevice', msg, stat)
  end subroutine copy_from_f64

  subroutine copy_from_i32(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int32_t), intent(inout), target, contiguous :: dst(..)
    integer(c_int64_t), intent(in) :: src
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(dst) > 0) res = bkCopyFromDevice(context, c_loc(dst), src, bk_sizeof(dst))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyFromDevice', msg, stat)
  end subroutine copy_from_i32

  subroutine copy_from_i16(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int16_t), intent(inout), target, contiguous :: dst(..)
    integer(c_int64_t), intent(in) :: src
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(dst) > 0) res = bkCopyFromDevice(context, c_loc(dst), src, bk_sizeof(dst))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyFromDevice', msg, stat)
  end subroutine copy_from_i16

  subroutine copy_from_i8(context, dst, src, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int8_t), intent(inout), target, contiguous :: dst(..)
    integer(c_int64_t), intent(in) :: src
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = BK_SUCCESS
    if (size(dst) > 0) res = bkCopyFromDevice(context, c_loc(dst), src, bk_sizeof(dst))
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCopyFromDevice', msg, stat)
  end subroutine copy_from_i8

  ! ---- Objects ---------------------------------------------------------------
  ! All devices, host first (the two-call idiom, retried if the count grew
  ! in between).
  subroutine bk_enumerate_devices(devices, stat, errmsg)
    type(BkDeviceProperties), allocatable, target, intent(out) :: devices(:)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int32_t) :: count
    integer(c_int) :: res
    do
      count = 0
      res = bkEnumerateDevices(count, c_null_ptr)
      if (res < 0) exit
      if (allocated(devices)) deallocate (devices)
      allocate (devices(count))
      if (count == 0) exit
      res = bkEnumerateDevices(count, c_loc(devices))
      if (res /= BK_INCOMPLETE) exit
    end do
    if (res >= 0 .and. size(devices) /= count) devices = devices(1:count)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkEnumerateDevices', msg, stat)
  end subroutine bk_enumerate_devices

  ! A context on deviceType (default BK_DEVICE_TYPE_AUTO), deviceIndex
  ! (default 0), no allocation callbacks.
  subroutine bk_create_context(context, deviceType, deviceIndex, stat, errmsg)
    type(BkContext), intent(out) :: context
    integer(c_int), intent(in), optional :: deviceType
    integer(c_int32_t), intent(in), optional :: deviceIndex
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkContextCreateInfo) :: info
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    if (present(deviceType)) info%deviceType = deviceType
    if (present(deviceIndex)) info%deviceIndex = deviceIndex
    res = bkCreateContext(info, c_null_ptr, context)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreateContext', msg, stat)
  end subroutine bk_create_context

  ! size bytes of memoryType (default BK_MEMORY_TYPE_DEVICE); address, when
  ! given, receives its device address. bk_sizeof(x) is the size of array x.
  subroutine bk_allocate_memory(context, size, memory, address, memoryType, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: size
    type(BkMemory), intent(out) :: memory
    integer(c_int64_t), intent(out), optional :: address
    integer(c_int), intent(in), optional :: memoryType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkMemoryAllocateInfo) :: info
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    info%size = size
    if (present(memoryType)) info%memoryType = memoryType
    if (present(address)) address = 0
    res = bkAllocateMemory(context, info, c_null_ptr, memory)
    if (res >= 0 .and. present(address)) res = bkGetMemoryAddress(memory, address)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkAllocateMemory', msg, stat)
  end subroutine bk_allocate_memory

  function bk_memory_address(memory, stat, errmsg) result(address)
    type(BkMemory), intent(in) :: memory
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    integer(c_int64_t) :: address
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    address = 0
    res = bkGetMemoryAddress(memory, address)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkGetMemoryAddress', msg, stat)
  end function bk_memory_address

  function create_plan_from(context, operation, plan) result(res)
    type(BkContext), intent(in) :: context
    type(c_ptr), intent(in) :: operation
    type(BkPlan), intent(out) :: plan
    integer(c_int) :: res
    type(BkPlanCreateInfo) :: info
    info%pOperation = operation
    res = bkCreatePlan(context, info, c_null_ptr, plan)
  end function create_plan_from

  subroutine create_plan_gated(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkGatedActivationInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_gated

  subroutine create_plan_gated_backward(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkGatedActivationBackwardInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_gated_backward

  subroutine create_plan_gemm(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkGemmInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_gemm

  subroutine create_plan_sparse24_convert(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkSparse24ConvertInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_sparse24_convert

  subroutine create_plan_sparse24_prepare(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkSparse24PrepareInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_sparse24_prepare

  subroutine create_plan_sparse24_gemm(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkSparse24GemmInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_sparse24_gemm

  subroutine create_plan_w4a16_convert(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkW4A16ConvertInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_w4a16_convert

  subroutine create_plan_w4a16_gptq_repack(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkW4A16GptqRepackInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_w4a16_gptq_repack

  subroutine create_plan_w4a16_gemm(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkW4A16GemmInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_w4a16_gemm

  ! call bk_get_plan_properties(plan, props [, bindings] [, stat, errmsg]):
  ! bkGetPlanProperties, with a BkPlanBindingProperties chained when
  ! bindings is given: bindings%bindings(s + 1)%size is then the bytes slot
  ! s needs (the way to size a prepared 2:4 weight). props%pNext is left
  ! null.
  subroutine bk_get_plan_properties(plan, props, bindings, stat, errmsg)
    type(BkPlan), intent(in) :: plan
    type(BkPlanProperties), intent(out) :: props
    type(BkPlanBindingProperties), intent(out), target, optional :: bindings
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    if (present(bindings)) props%pNext = c_loc(bindings)
    res = bkGetPlanProperties(plan, props)
    props%pNext = c_null_ptr
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkGetPlanProperties', msg, stat)
  end subroutine bk_get_plan_properties

  ! Records plan with bindings(s + 1) = the address for slot s (the op's
  ! BK_*_BINDING_* constants are 0-based slots), and an optional workspace
  ! and per-binding byte sizes. libbk copies the arrays while recording.
  subroutine bk_cmd_run(commandBuffer, plan, bindings, workspace, workspaceSize, bindingSizes, &
       stat, errmsg)
    type(BkCommandBuffer), intent(in) :: commandBuffer
    type(BkPlan), intent(in) :: plan
    integer(c_int64_t), intent(in), target, contiguous :: bindings(:)
    integer(c_int64_t), intent(in), optional :: workspace, workspaceSize
    integer(c_int64_t), intent(in), target, contiguous, optional :: bindingSizes(:)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkRunInfo) :: info
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    info%bindingCount = int(size(bindings), c_int32_t)
    if (size(bindings) > 0) info%pBindings = c_loc(bindings)
    if (present(workspace)) info%workspace = workspace
    if (present(workspaceSize)) info%workspaceSize = workspaceSize
    res = BK_SUCCESS
    if (present(bindingSizes)) then
      if (size(bindingSizes) /= size(bindings)) then
        res = BK_ERROR_INVALID_ARGUMENT
        msg = 'size(bindingSizes) must equal size(bindings)'
      else if (size(bindingSizes) > 0) then
        info%pBindingSizes = c_loc(bindingSizes)
      end if
    end if
    if (res == BK_SUCCESS) then
      res = bkCmdRun(commandBuffer, plan, info)
      msg = message_of(res)
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCmdRun', msg, stat)
  end subroutine bk_cmd_run

  ! call bk_check_sparse24_report(context, address [, report] [, stat,
  ! errmsg]): reads the BkSparse24Report a conversion plan wrote at the
  ! device address (run it and wait for the queue first) and applies the
  ! stat rule to bkCheckSparse24Report of it: without stat, a group that
  ! broke the 2:4 rule stops the program with a message naming its row and
  ! group. report, when given, receives the report.
  subroutine bk_check_sparse24_report(context, address, report, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: address
    type(BkSparse24Report), intent(out), optional :: report
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkSparse24Report), target :: got
    character(len=:), allocatable :: msg
    character(len=24) :: where
    integer(c_int) :: res
    where = 'bkCopyFromDevice'
    res = bkCopyFromDevice(context, c_loc(got), address, int(c_sizeof(got), c_int64_t))
    if (res >= 0) then
      where = 'bkCheckSparse24Report'
      res = bkCheckSparse24Report(got)
    end if
    if (present(report)) report = got
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, trim(where), msg, stat)
  end subroutine bk_check_sparse24_report

  ! call bk_check_w4a16_repack_report(context, address [, report] [, stat,
  ! errmsg]): reads the BkW4A16RepackReport a GPTQ repack plan wrote at the
  ! device address (run it and wait for the queue first) and applies the
  ! stat rule to bkCheckW4A16RepackReport of it: without stat, a checkpoint
  ! that could not be repacked stops the program with a message naming the
  ! first bad entry. report, when given, receives the report (its
  ! identityPermutation says whether the GEMM needs the perm).
  subroutine bk_check_w4a16_repack_report(context, address, report, stat, errmsg)
    type(BkContext), intent(in) :: context
    integer(c_int64_t), intent(in) :: address
    type(BkW4A16RepackReport), intent(out), optional :: report
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkW4A16RepackReport), target :: got
    character(len=:), allocatable :: msg
    character(len=24) :: where
    integer(c_int) :: res
    where = 'bkCopyFromDevice'
    res = bkCopyFromDevice(context, c_loc(got), address, int(c_sizeof(got), c_int64_t))
    if (res >= 0) then
      where = 'bkCheckW4A16RepackReport'
      res = bkCheckW4A16RepackReport(got)
    end if
    if (present(report)) report = got
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, trim(where), msg, stat)
  end subroutine bk_check_w4a16_repack_report

  ! ---- Block-sparse attention --------------------------------------------
  ! The [B, H, L, D] (or [B, H, L]) view of an array whose Fortran
  ! dimensions `order` names; what the bk_attention_* helpers share.
  subroutine make_attention_desc(dataType, shape, order, desc, res, msg, stride)
    integer(c_int), intent(in) :: dataType
    integer(c_int64_t), intent(in) :: shape(:)
    character(len=*), intent(in) :: order
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    integer(c_int64_t), intent(in), optional :: stride(:)
    character(len=*), parameter :: letters = 'BHLD'
    character(len=96) :: line
    integer(c_int64_t) :: fstride(BK_MAX_TENSOR_RANK)
    integer :: r, i, p, rank
    res = BK_ERROR_INVALID_ARGUMENT
    r = len(order)
    ! Each letter once, H and L always, B optional, D absent for an lse.
    do i = 1, r
      if (index(letters, order(i:i)) == 0 .or. index(order(i + 1:), order(i:i)) > 0) exit
    end do
    if (i <= r .or. r > 4 .or. index(order, 'H') == 0 .or. index(order, 'L') == 0) then
      msg = 'order = "' // order // '" must name each dimension of the array by one of D ' // &
           '(features), L (sequence), H (heads) and B (batch), each once, with L and H'
      return
    end if
    if (size(shape) /= r) then
      write (line, '(a, i0, a, i0)') ' names ', r, ' dimensions, the array has ', size(shape)
      msg = 'order = "' // order // '"' // trim(line)
      return
    end if
    if (present(stride)) then
      if (size(stride) /= r) then
        write (line, '(a, i0, a, i0)') 'size(stride) = ', size(stride), &
             ' must equal size(shape) = ', r
        msg = trim(line)
        return
      end if
      fstride(1:r) = stride
    else
      fstride(1) = 1
      do i = 2, r
        fstride(i) = fstride(i - 1) * max(1_c_int64_t, shape(i - 1))
      end do
    end if
    rank = 3
    if (index(order, 'D') > 0) rank = 4
    desc%dataType = dataType
    desc%rank = int(rank, c_int32_t)
    do i = 1, rank
      p = index(order, letters(i:i))
      if (p > 0) then
        desc%extent(i) = shape(p)
        desc%stride(i) = fstride(p)
      else
        desc%extent(i) = 1             ! no B: one sequence, and any stride will do
        desc%stride(i) = 1
      end if
    end do
    res = BK_SUCCESS
    msg = ''
  end subroutine make_attention_desc

  function attention_desc_i64(dataType, shape, order, stride, stat, errmsg) result(desc)
    integer(c_int), intent(in) :: dataType
    integer(c_int64_t), intent(in) :: shape(:)
    character(len=*), intent(in) :: order
    integer(c_int64_t), intent(in), optional :: stride(:)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call make_attention_desc(dataType, shape, order, desc, res, msg, stride)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_desc', msg, stat)
  end function attention_desc_i64

  function attention_desc_i32(dataType, shape, order, stride, stat, errmsg) result(desc)
    integer(c_int), intent(in) :: dataType
    integer(c_int32_t), intent(in) :: shape(:)
    character(len=*), intent(in) :: order
    integer(c_int32_t), intent(in), optional :: stride(:)
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    if (present(stride)) then
      call make_attention_desc(dataType, int(shape, c_int64_t), order, desc, res, msg, &
           int(stride, c_int64_t))
    else
      call make_attention_desc(dataType, int(shape, c_int64_t), order, desc, res, msg)
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_desc', msg, stat)
  end function attention_desc_i32

  ! bk_attention_desc_of: dataType checked against the storage kind, then
  ! the view.
  subroutine attention_of_shape(shape, natural, bytes, dataType, order, desc, res, msg)
    integer(c_int64_t), intent(in) :: shape(:)
    integer(c_int), intent(in) :: natural, bytes
    integer(c_int), intent(in), optional :: dataType
    character(len=*), intent(in) :: order
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    character(len=96) :: line
    integer(c_int) :: dt
    dt = natural
    if (present(dataType)) dt = dataType
    if (bk_data_type_size(dt) /= bytes) then
      write (line, '(a, i0, a, i0, a)') 'dataType = ', dt, ' does not fit the array''s ', bytes, &
           '-byte elements'
      msg = trim(line)
      res = BK_ERROR_INVALID_ARGUMENT
      return
    end if
    call make_attention_desc(dt, shape, order, desc, res, msg)
  end subroutine attention_of_shape

  function attention_desc_of_f32(x, order, dataType, stat, errmsg) result(desc)
    real(c_float), intent(in) :: x(..)
    character(len=*), intent(in) :: order
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call attention_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_F32, storage_size(x) / 8, &
         dataType, order, desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_desc_of', msg, stat)
  end function attention_desc_of_f32

  function attention_desc_of_f64(x, order, dataType, stat, errmsg) result(desc)
    real(c_double), intent(in) :: x(..)
    character(len=*), intent(in) :: order
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call attention_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_F64, storage_size(x) / 8, &
         dataType, order, desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_desc_of', msg, stat)
  end function attention_desc_of_f64

  function attention_desc_of_i16(x, order, dataType, stat, errmsg) result(desc)
    integer(c_int16_t), intent(in) :: x(..)
    character(len=*), intent(in) :: order
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: desc
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    call attention_of_shape(shape(x, c_int64_t), BK_DATA_TYPE_U16, storage_size(x) / 8, &
         dataType, order, desc, res, msg)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_desc_of', msg, stat)
  end function attention_desc_of_i16

  ! A pattern tensor of Fortran shape [inner..., (Hp, (Bp))]: left-out
  ! trailing dimensions become 1, then the C order [Bp, Hp, inner...].
  subroutine pattern_tensor(what, shape, inner, dataType, desc, res, msg)
    character(len=*), intent(in) :: what
    integer(c_int64_t), intent(in) :: shape(:)
    integer, intent(in) :: inner
    integer(c_int), intent(in) :: dataType
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    integer(c_int64_t) :: full(inner + 2)
    character(len=96) :: line
    integer :: r
    r = size(shape)
    if (r < inner .or. r > inner + 2) then
      write (line, '(a, i0, a, i0, a, i0)') ' has rank ', r, ', not ', inner, '..', inner + 2
      msg = what // trim(line)
      res = BK_ERROR_INVALID_ARGUMENT
      return
    end if
    full = 1
    full(1:r) = shape
    call make_desc(dataType, full, desc, res, msg)
  end subroutine pattern_tensor

  ! pattern = bk_attention_mask_pattern(mask, blockQ [, blockK] [, stat,
  ! errmsg]): the MASK form of an integer(c_int8_t) array
  ! mask(nbk, nbq [, Hp [, Bp]]), nonzero where query block i attends to
  ! key block j: mask(j + 1, i + 1, ...) with blocks counted from 0. Left
  ! out, Hp and Bp are 1 (shared). blockK defaults to blockQ.
  function bk_attention_mask_pattern(mask, blockQ, blockK, stat, errmsg) result(pattern)
    integer(c_int8_t), intent(in) :: mask(..)
    integer, intent(in) :: blockQ
    integer, intent(in), optional :: blockK
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkAttentionPattern) :: pattern
    character(len=:), allocatable :: msg
    integer(c_int64_t) :: shp(rank(mask))
    integer(c_int) :: res
    pattern%form = BK_ATTENTION_PATTERN_MASK
    pattern%blockQ = int(blockQ, c_int32_t)
    pattern%blockK = pattern%blockQ
    if (present(blockK)) pattern%blockK = int(blockK, c_int32_t)
    shp = shape(mask, c_int64_t)
    if (size(shp) < 2 .or. size(shp) > 4) then
      res = BK_ERROR_INVALID_ARGUMENT
      msg = 'mask must be mask(nbk, nbq [, Hp [, Bp]])'
    else
      ! (nbk, nbq) is C's one axis nbq * nbk, key blocks fastest.
      call pattern_tensor('mask', [shp(1) * shp(2), shp(3:)], 1, BK_DATA_TYPE_U8, &
           pattern%mask, res, msg)
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_mask_pattern', msg, stat)
  end function bk_attention_mask_pattern

  ! pattern = bk_attention_list_pattern(counts, indices, blockQ [, blockK]
  ! [, stat, errmsg]): the LIST form of integer(c_int32_t) arrays
  ! counts(nbq [, Hp [, Bp]]) and indices(capacity, nbq [, Hp [, Bp]]):
  ! query block i attends to key blocks indices(1:counts(i + 1), i + 1),
  ! numbered from 0.
  function bk_attention_list_pattern(counts, indices, blockQ, blockK, stat, errmsg) &
       result(pattern)
    integer(c_int32_t), intent(in) :: counts(..), indices(..)
    integer, intent(in) :: blockQ
    integer, intent(in), optional :: blockK
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkAttentionPattern) :: pattern
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    pattern%form = BK_ATTENTION_PATTERN_LIST
    pattern%blockQ = int(blockQ, c_int32_t)
    pattern%blockK = pattern%blockQ
    if (present(blockK)) pattern%blockK = int(blockK, c_int32_t)
    if (rank(indices) /= rank(counts) + 1) then
      res = BK_ERROR_INVALID_ARGUMENT
      msg = 'indices must have one dimension (capacity) before those of counts'
    else
      call pattern_tensor('counts', shape(counts, c_int64_t), 1, BK_DATA_TYPE_I32, &
           pattern%counts, res, msg)
      if (res == BK_SUCCESS) call pattern_tensor('indices', shape(indices, c_int64_t), 2, &
           BK_DATA_TYPE_I32, pattern%indices, res, msg)
    end if
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_list_pattern', msg, stat)
  end function bk_attention_list_pattern

  ! The next operand of an info filler, unless an earlier one failed; an
  ! lse is described in `order` without D.
  subroutine next_operand(name, shape, dataType, order, desc, res, msg)
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: shape(:)
    integer(c_int), intent(in) :: dataType
    character(len=*), intent(in) :: order
    type(BkTensorDesc), intent(out) :: desc
    integer(c_int), intent(inout) :: res
    character(len=:), allocatable, intent(inout) :: msg
    character(len=:), allocatable :: m
    integer :: p
    if (res < 0) return
    p = index(order, 'D')
    if (name == 'lse' .and. p > 0) then
      call make_attention_desc(dataType, shape, order(1:p - 1) // order(p + 1:), desc, res, m)
    else
      call make_attention_desc(dataType, shape, order, desc, res, m)
    end if
    if (res < 0) msg = name // ': ' // m
  end subroutine next_operand

  ! 1 / sqrt(D) unless given; D = 0 keeps what info had.
  subroutine attention_scale(d, scale, s)
    integer(c_int64_t), intent(in) :: d
    real(c_double), intent(in), optional :: scale
    real(c_double), intent(inout) :: s
    if (present(scale)) then
      s = scale
    else if (d > 0) then
      s = 1 / sqrt(real(d, c_double))
    end if
  end subroutine attention_scale

  ! The half-precision fillers' type: F16 or BF16, given.
  subroutine half_type(dataType, res, msg)
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out) :: res
    character(len=:), allocatable, intent(out) :: msg
    res = BK_SUCCESS
    msg = ''
    if (present(dataType)) then
      if (bk_data_type_size(dataType) == 2) return
    end if
    res = BK_ERROR_INVALID_ARGUMENT
    msg = 'dataType (BK_DATA_TYPE_F16 or BK_DATA_TYPE_BF16) is required for ' // &
         'integer(c_int16_t) arrays'
  end subroutine half_type

  ! Copies the descriptors into info, which is untouched on failure.
  subroutine set_forward(info, d, has_lse, scale, res)
    type(BkAttentionInfo), intent(inout) :: info
    type(BkTensorDesc), intent(in) :: d(5)
    logical, intent(in) :: has_lse
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(in) :: res
    type(BkTensorDesc) :: absent
    if (res < 0) return
    info%q = d(1)
    info%k = d(2)
    info%v = d(3)
    info%y = d(4)
    info%lse = absent
    if (has_lse) info%lse = d(5)
    call attention_scale(info%q%extent(4), scale, info%scale)
  end subroutine set_forward

  subroutine set_backward(info, d, scale, res)
    type(BkAttentionBackwardInfo), intent(inout) :: info
    type(BkTensorDesc), intent(in) :: d(9)
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(in) :: res
    if (res < 0) return
    info%q = d(1)
    info%k = d(2)
    info%v = d(3)
    info%y = d(4)
    info%lse = d(5)
    info%dy = d(6)
    info%dq = d(7)
    info%dk = d(8)
    info%dv = d(9)
    call attention_scale(info%q%extent(4), scale, info%scale)
  end subroutine set_backward

  subroutine attention_info_f32(info, q, k, v, y, lse, order, scale, stat, errmsg)
    type(BkAttentionInfo), intent(inout) :: info
    real(c_float), intent(in) :: q(..), k(..), v(..), y(..)
    real(c_float), intent(in), optional :: lse(..)
    character(len=*), intent(in), optional :: order
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: d(5)
    character(len=:), allocatable :: msg, o
    integer(c_int) :: res
    o = 'DLHB'
    if (present(order)) o = order
    res = BK_SUCCESS
    msg = ''
    call next_operand('q', shape(q, c_int64_t), BK_DATA_TYPE_F32, o, d(1), res, msg)
    call next_operand('k', shape(k, c_int64_t), BK_DATA_TYPE_F32, o, d(2), res, msg)
    call next_operand('v', shape(v, c_int64_t), BK_DATA_TYPE_F32, o, d(3), res, msg)
    call next_operand('y', shape(y, c_int64_t), BK_DATA_TYPE_F32, o, d(4), res, msg)
    if (present(lse)) &
         call next_operand('lse', shape(lse, c_int64_t), BK_DATA_TYPE_F32, o, d(5), res, msg)
    call set_forward(info, d, present(lse), scale, res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_info_of', msg, stat)
  end subroutine attention_info_f32

  subroutine attention_info_f64(info, q, k, v, y, lse, order, scale, stat, errmsg)
    type(BkAttentionInfo), intent(inout) :: info
    real(c_double), intent(in) :: q(..), k(..), v(..), y(..)
    real(c_double), intent(in), optional :: lse(..)
    character(len=*), intent(in), optional :: order
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: d(5)
    character(len=:), allocatable :: msg, o
    integer(c_int) :: res
    o = 'DLHB'
    if (present(order)) o = order
    res = BK_SUCCESS
    msg = ''
    call next_operand('q', shape(q, c_int64_t), BK_DATA_TYPE_F64, o, d(1), res, msg)
    call next_operand('k', shape(k, c_int64_t), BK_DATA_TYPE_F64, o, d(2), res, msg)
    call next_operand('v', shape(v, c_int64_t), BK_DATA_TYPE_F64, o, d(3), res, msg)
    call next_operand('y', shape(y, c_int64_t), BK_DATA_TYPE_F64, o, d(4), res, msg)
    if (present(lse)) &
         call next_operand('lse', shape(lse, c_int64_t), BK_DATA_TYPE_F64, o, d(5), res, msg)
    call set_forward(info, d, present(lse), scale, res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_info_of', msg, stat)
  end subroutine attention_info_f64

  subroutine attention_info_i16(info, q, k, v, y, lse, order, scale, dataType, stat, errmsg)
    type(BkAttentionInfo), intent(inout) :: info
    integer(c_int16_t), intent(in) :: q(..), k(..), v(..), y(..)
    real(c_float), intent(in), optional :: lse(..)
    character(len=*), intent(in), optional :: order
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: d(5)
    character(len=:), allocatable :: msg, o
    integer(c_int) :: res, dt
    o = 'DLHB'
    if (present(order)) o = order
    call half_type(dataType, res, msg)
    dt = BK_DATA_TYPE_UNDEFINED
    if (res == BK_SUCCESS) dt = dataType
    call next_operand('q', shape(q, c_int64_t), dt, o, d(1), res, msg)
    call next_operand('k', shape(k, c_int64_t), dt, o, d(2), res, msg)
    call next_operand('v', shape(v, c_int64_t), dt, o, d(3), res, msg)
    call next_operand('y', shape(y, c_int64_t), dt, o, d(4), res, msg)
    if (present(lse)) &
         call next_operand('lse', shape(lse, c_int64_t), BK_DATA_TYPE_F32, o, d(5), res, msg)
    call set_forward(info, d, present(lse), scale, res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_info_of', msg, stat)
  end subroutine attention_info_i16

  subroutine attention_backward_info_f32(info, q, k, v, y, lse, dy, dq, dk, dv, order, scale, &
       stat, errmsg)
    type(BkAttentionBackwardInfo), intent(inout) :: info
    real(c_float), intent(in) :: q(..), k(..), v(..), y(..), lse(..), dy(..), dq(..), dk(..), &
         dv(..)
    character(len=*), intent(in), optional :: order
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: d(9)
    character(len=:), allocatable :: msg, o
    integer(c_int) :: res
    o = 'DLHB'
    if (present(order)) o = order
    res = BK_SUCCESS
    msg = ''
    call next_operand('q', shape(q, c_int64_t), BK_DATA_TYPE_F32, o, d(1), res, msg)
    call next_operand('k', shape(k, c_int64_t), BK_DATA_TYPE_F32, o, d(2), res, msg)
    call next_operand('v', shape(v, c_int64_t), BK_DATA_TYPE_F32, o, d(3), res, msg)
    call next_operand('y', shape(y, c_int64_t), BK_DATA_TYPE_F32, o, d(4), res, msg)
    call next_operand('lse', shape(lse, c_int64_t), BK_DATA_TYPE_F32, o, d(5), res, msg)
    call next_operand('dy', shape(dy, c_int64_t), BK_DATA_TYPE_F32, o, d(6), res, msg)
    call next_operand('dq', shape(dq, c_int64_t), BK_DATA_TYPE_F32, o, d(7), res, msg)
    call next_operand('dk', shape(dk, c_int64_t), BK_DATA_TYPE_F32, o, d(8), res, msg)
    call next_operand('dv', shape(dv, c_int64_t), BK_DATA_TYPE_F32, o, d(9), res, msg)
    call set_backward(info, d, scale, res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_backward_info_of', msg, stat)
  end subroutine attention_backward_info_f32

  subroutine attention_backward_info_f64(info, q, k, v, y, lse, dy, dq, dk, dv, order, scale, &
       stat, errmsg)
    type(BkAttentionBackwardInfo), intent(inout) :: info
    real(c_double), intent(in) :: q(..), k(..), v(..), y(..), lse(..), dy(..), dq(..), dk(..), &
         dv(..)
    character(len=*), intent(in), optional :: order
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: d(9)
    character(len=:), allocatable :: msg, o
    integer(c_int) :: res
    o = 'DLHB'
    if (present(order)) o = order
    res = BK_SUCCESS
    msg = ''
    call next_operand('q', shape(q, c_int64_t), BK_DATA_TYPE_F64, o, d(1), res, msg)
    call next_operand('k', shape(k, c_int64_t), BK_DATA_TYPE_F64, o, d(2), res, msg)
    call next_operand('v', shape(v, c_int64_t), BK_DATA_TYPE_F64, o, d(3), res, msg)
    call next_operand('y', shape(y, c_int64_t), BK_DATA_TYPE_F64, o, d(4), res, msg)
    call next_operand('lse', shape(lse, c_int64_t), BK_DATA_TYPE_F64, o, d(5), res, msg)
    call next_operand('dy', shape(dy, c_int64_t), BK_DATA_TYPE_F64, o, d(6), res, msg)
    call next_operand('dq', shape(dq, c_int64_t), BK_DATA_TYPE_F64, o, d(7), res, msg)
    call next_operand('dk', shape(dk, c_int64_t), BK_DATA_TYPE_F64, o, d(8), res, msg)
    call next_operand('dv', shape(dv, c_int64_t), BK_DATA_TYPE_F64, o, d(9), res, msg)
    call set_backward(info, d, scale, res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_backward_info_of', msg, stat)
  end subroutine attention_backward_info_f64

  subroutine attention_backward_info_i16(info, q, k, v, y, lse, dy, dq, dk, dv, order, scale, &
       dataType, stat, errmsg)
    type(BkAttentionBackwardInfo), intent(inout) :: info
    integer(c_int16_t), intent(in) :: q(..), k(..), v(..), y(..), dy(..), dq(..), dk(..), dv(..)
    real(c_float), intent(in) :: lse(..)
    character(len=*), intent(in), optional :: order
    real(c_double), intent(in), optional :: scale
    integer(c_int), intent(in), optional :: dataType
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    type(BkTensorDesc) :: d(9)
    character(len=:), allocatable :: msg, o
    integer(c_int) :: res, dt
    o = 'DLHB'
    if (present(order)) o = order
    call half_type(dataType, res, msg)
    dt = BK_DATA_TYPE_UNDEFINED
    if (res == BK_SUCCESS) dt = dataType
    call next_operand('q', shape(q, c_int64_t), dt, o, d(1), res, msg)
    call next_operand('k', shape(k, c_int64_t), dt, o, d(2), res, msg)
    call next_operand('v', shape(v, c_int64_t), dt, o, d(3), res, msg)
    call next_operand('y', shape(y, c_int64_t), dt, o, d(4), res, msg)
    call next_operand('lse', shape(lse, c_int64_t), BK_DATA_TYPE_F32, o, d(5), res, msg)
    call next_operand('dy', shape(dy, c_int64_t), dt, o, d(6), res, msg)
    call next_operand('dq', shape(dq, c_int64_t), dt, o, d(7), res, msg)
    call next_operand('dk', shape(dk, c_int64_t), dt, o, d(8), res, msg)
    call next_operand('dv', shape(dv, c_int64_t), dt, o, d(9), res, msg)
    call set_backward(info, d, scale, res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bk_attention_backward_info_of', msg, stat)
  end subroutine attention_backward_info_i16

  subroutine create_plan_attention(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkAttentionInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_attention

  subroutine create_plan_attention_backward(context, info, plan, stat, errmsg)
    type(BkContext), intent(in) :: context
    type(BkAttentionBackwardInfo), intent(in), target :: info
    type(BkPlan), intent(out) :: plan
    integer(c_int), intent(out), optional :: stat
    character(len=:), allocatable, intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    integer(c_int) :: res
    res = create_plan_from(context, c_loc(info), plan)
    msg = message_of(res)
    if (res < 0 .and. present(errmsg)) errmsg = msg
    call finish(res, 'bkCreatePlan', msg, stat)
  end subroutine create_plan_attention_backward
end module bk_helpers
