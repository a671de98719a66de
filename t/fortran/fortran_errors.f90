! SPDX-License-Identifier: Apache-2.0
! Error paths from Fortran: each bad request gives the documented BkResult
! and a message that names the field, through the raw interfaces, the
! helpers' stat/errmsg arguments and a message callback written in Fortran.
module fortran_errors_callback
  use, intrinsic :: iso_c_binding
  use bk, only: bk_c_string
  implicit none
  integer(c_int), save :: seen_result = 0
  integer, save :: seen_calls = 0
  character(len=:), allocatable, save :: seen_message
contains
  ! A PFN_bkMessageCallback.
  subroutine on_message(result, pMessage, pUserData) bind(c)
    integer(c_int), value :: result
    type(c_ptr), value :: pMessage
    type(c_ptr), value :: pUserData
    integer(c_int), pointer :: tag
    call c_f_pointer(pUserData, tag)
    if (tag /= 42) return
    seen_calls = seen_calls + 1
    seen_result = result
    seen_message = bk_c_string(pMessage)
  end subroutine on_message
end module fortran_errors_callback

program fortran_errors
  use, intrinsic :: iso_c_binding
  use bk
  use fortran_tap
  use fortran_errors_callback
  implicit none
  type(BkContext) :: ctx
  type(BkQueue) :: queue
  type(BkCommandBuffer) :: cmd
  integer(c_int) :: st
  character(len=:), allocatable :: msg

  call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
  call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')
  call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, cmd), 'bkAllocateCommandBuffer')

  call descriptor_errors()
  call helper_errors()
  call run_errors()
  call state_and_object_errors()
  call callback()

  call bkFreeCommandBuffer(cmd)
  call bkDestroyContext(ctx)
  if (allocated(msg)) deallocate (msg)
  call tap_done()

contains

  ! stat is want and the message (errmsg, and the thread's last message)
  ! contains field.
  subroutine expect(want, field, what)
    integer(c_int), intent(in) :: want
    character(len=*), intent(in) :: field, what
    character(len=:), allocatable :: m, last
    m = ''
    if (allocated(msg)) m = msg
    last = bk_last_error_message()
    call tap_ok(st == want .and. index(m, field) > 0 .and. last == m, &
         what, 'stat = ' // bk_result_string(st) // ', want ' // bk_result_string(want) // &
         '; message: ' // m // '; must contain: ' // field)
    if (allocated(msg)) deallocate (msg)
  end subroutine expect

  ! A valid forward info on x(8, 4) split along Fortran dimension 1.
  function forward_info() result(info)
    type(BkGatedActivationInfo) :: info
    info%kind = BK_GATED_ACTIVATION_GEGLU
    info%splitAxis = bk_split_axis(1, 2)
    info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [8, 4])
    info%output = bk_tensor_desc(BK_DATA_TYPE_F32, [4, 4])
  end function forward_info

  subroutine try_plan(info)
    type(BkGatedActivationInfo), intent(in) :: info
    type(BkPlan) :: plan
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call bkDestroyPlan(plan)
  end subroutine try_plan

  subroutine descriptor_errors()
    type(BkGatedActivationInfo) :: info
    type(BkGatedActivationBackwardInfo) :: back
    type(BkPlanCreateInfo) :: create
    type(BkPlan) :: plan

    ! x(7, 4) split along Fortran dimension 1 is C extent[1] = 7.
    info = forward_info()
    info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [7, 4])
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkGatedActivationInfo.input.extent[1] = 7', &
         'odd extent along the split: input.extent[1] named')

    info = forward_info()
    info%output = bk_tensor_desc(BK_DATA_TYPE_F32, [8, 4])
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkGatedActivationInfo.output.extent[1] = 8', &
         'output not halved: output.extent[1] named')

    info = forward_info()
    info%output = bk_tensor_desc(BK_DATA_TYPE_F32, [4, 5])
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkGatedActivationInfo.output.extent[0] = 5', &
         'output mismatch in Fortran dim 2: output.extent[0] named')

    info = forward_info()
    info%splitAxis = 2
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'splitAxis = 2', 'splitAxis past the rank named')

    info = forward_info()
    info%input%dataType = BK_DATA_TYPE_I32
    info%output%dataType = BK_DATA_TYPE_I32
    call try_plan(info)
    call expect(BK_ERROR_UNSUPPORTED, 'input.dataType', 'I32 is unsupported: input.dataType named')

    info = forward_info()
    info%output%dataType = BK_DATA_TYPE_F64
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'output.dataType', &
         'output type differs: output.dataType named')

    info = forward_info()
    info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [8, 4], [1, -8])
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'input.stride[0] = -8', &
         'negative stride: input.stride[0] named')

    info = forward_info()
    info%input = BkTensorDesc(dataType=BK_DATA_TYPE_F32)
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'input.rank = 0', 'rank 0: input.rank named')

    info = forward_info()
    info%kind = 99
    call try_plan(info)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkGatedActivationInfo.kind = 99', 'bad kind named')

    back%kind = BK_GATED_ACTIVATION_SWIGLU
    back%splitAxis = bk_split_axis(2, 3)
    back%input = bk_tensor_desc(BK_DATA_TYPE_F64, [3, 4, 5])
    back%gradOutput = bk_tensor_desc(BK_DATA_TYPE_F64, [3, 2, 5])
    back%gradInput = bk_tensor_desc(BK_DATA_TYPE_F64, [3, 2, 5])
    call bk_create_plan(ctx, back, plan, stat=st, errmsg=msg)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkGatedActivationBackwardInfo.gradInput.extent[1] = 2', &
         'backward gradInput shape: gradInput.extent[1] named')

    ! Raw interface: an op info whose sType is not an op's.
    info = forward_info()
    info%sType = BK_STRUCTURE_TYPE_RUN_INFO
    create%pOperation = c_loc_info(info)
    st = bkCreatePlan(ctx, create, c_null_ptr, plan)
    msg = bk_last_error_message()
    call expect(BK_ERROR_INVALID_ARGUMENT, 'pOperation->sType = 7', 'wrong op sType named')

    create%pOperation = c_null_ptr
    st = bkCreatePlan(ctx, create, c_null_ptr, plan)
    msg = bk_last_error_message()
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkPlanCreateInfo.pOperation', 'null pOperation named')
  end subroutine descriptor_errors

  function c_loc_info(info) result(p)
    type(BkGatedActivationInfo), intent(in), target :: info
    type(c_ptr) :: p
    p = c_loc(info)
  end function c_loc_info

  ! The helpers' own checks (before libbk is called).
  subroutine helper_errors()
    type(BkTensorDesc) :: d
    real(c_float), target :: a(4, 4)
    integer(c_int64_t) :: address
    d = bk_tensor_desc(BK_DATA_TYPE_F32, [1, 2, 3, 4, 5, 6, 7, 8, 9], stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'size(shape) = 9') > 0 &
         .and. d%rank == 0, 'bk_tensor_desc: rank 9 refused with stat and errmsg')
    d = bk_tensor_desc(BK_DATA_TYPE_F32, [2, 3], [1], stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'size(stride)') > 0, &
         'bk_tensor_desc: stride of the wrong size refused')
    d = bk_tensor_desc_of(a, BK_DATA_TYPE_F64, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'dataType') > 0, &
         'bk_tensor_desc_of: F64 over real(c_float) refused')
    d = bk_tensor_desc_of(a, stat=st)
    call tap_ok(st == BK_SUCCESS .and. d%rank == 2 .and. d%dataType == BK_DATA_TYPE_F32, &
         'bk_tensor_desc_of: stat = BK_SUCCESS on success')
    d = bk_matrix_desc(BK_DATA_TYPE_F32, [4_c_int64_t, 2_c_int64_t**40, 2_c_int64_t], &
         ld=2_c_int64_t**40, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'batchStride') > 0, &
         'bk_matrix_desc: a default batch stride ld * cols past 64 bits refused')
    address = bk_host_address(a(1:4:2, :), stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'contiguous') > 0 &
         .and. address == 0, 'bk_host_address: a non-contiguous section refused')
    if (allocated(msg)) deallocate (msg)
  end subroutine helper_errors

  ! bkCmdRun's generic checks, from the plan's binding slots.
  subroutine run_errors()
    type(BkPlan) :: plan
    type(BkMemory) :: small, big
    integer(c_int64_t) :: s, b
    integer :: i
    type(BkCommandBufferBeginInfo) :: begin
    call bk_create_plan(ctx, forward_info(), plan)
    call bk_allocate_memory(ctx, 32_c_int64_t, small, s)     ! x(8, 4) f32 needs 128 bytes
    call bk_allocate_memory(ctx, 1024_c_int64_t, big, b)
    call bk_copy_to_device(ctx, b, [(0.0_c_float, i = 1, 256)])   ! defined inputs for the last run
    call bk_check(bkBeginCommandBuffer(cmd, begin), 'bkBeginCommandBuffer')

    call bk_cmd_run(cmd, plan, [b, b + 512, b + 768], stat=st, errmsg=msg)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkRunInfo.bindingCount = 3', 'bindingCount 3 for 2 slots named')
    call bk_cmd_run(cmd, plan, [b + 1, b + 512], stat=st, errmsg=msg)
    call expect(BK_ERROR_MISALIGNED_OPERAND, 'BkRunInfo.pBindings[0]', 'misaligned input named')
    call bk_cmd_run(cmd, plan, [s, b + 512], stat=st, errmsg=msg)
    call expect(BK_ERROR_BUFFER_TOO_SMALL, 'BkRunInfo.pBindings[0]', 'input memory too small named')
    call bk_cmd_run(cmd, plan, [b, b + 512], bindingSizes=[64_c_int64_t, 0_c_int64_t], &
         stat=st, errmsg=msg)
    call expect(BK_ERROR_BUFFER_TOO_SMALL, 'BkRunInfo.pBindingSizes[0]', 'pBindingSizes too small named')
    call bk_cmd_run(cmd, plan, [b, b + 64], stat=st, errmsg=msg)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'overlaps', 'output overlapping the input refused')
    call bk_cmd_run(cmd, plan, [0_c_int64_t, b + 512], stat=st, errmsg=msg)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkRunInfo.pBindings[0]', 'zero binding named')
    call bk_check(bkCmdFillMemory(cmd, b, 6_c_int64_t, 0_c_int32_t), 'bkCmdFillMemory', st, msg)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'size = 6', 'fill size not a multiple of 4 named')
    call bk_check(bkCmdFillMemory(cmd, b + 2, 4_c_int64_t, 0_c_int32_t), 'bkCmdFillMemory', st, msg)
    call expect(BK_ERROR_MISALIGNED_OPERAND, 'dst', 'fill to a misaligned dst named')
    ! Failed commands record nothing: the buffer still ends and runs.
    call bk_cmd_run(cmd, plan, [b, b + 512])
    st = bkEndCommandBuffer(cmd)
    if (st == BK_SUCCESS) st = bkQueueSubmit(queue, 1_c_int32_t, [cmd])
    call tap_ok(st == BK_SUCCESS, 'the buffer still ends and submits after failed records')
    call bkFreeMemory(ctx, small)
    call bkFreeMemory(ctx, big)
    call bkDestroyPlan(plan)
  end subroutine run_errors

  subroutine state_and_object_errors()
    type(BkCommandBuffer) :: fresh
    type(BkContextCreateInfo) :: cinfo
    type(BkContext) :: other
    type(BkMemory) :: mem
    type(BkMemoryAllocateInfo) :: minfo
    type(BkQueue) :: imported
    call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, fresh), 'bkAllocateCommandBuffer')
    call bk_check(bkEndCommandBuffer(fresh), 'bkEndCommandBuffer', st, msg)
    call expect(BK_ERROR_INVALID_STATE, 'bkEndCommandBuffer', 'ending a buffer never begun')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [fresh]), 'bkQueueSubmit', st, msg)
    call expect(BK_ERROR_INVALID_STATE, 'bkQueueSubmit', 'submitting a buffer never recorded')
    call bkFreeCommandBuffer(fresh)

    cinfo%deviceType = BK_DEVICE_TYPE_HOST
    cinfo%apiVersion = BK_MAKE_VERSION(BK_VERSION_MAJOR + 1, 0, 0)
    call bk_check(bkCreateContext(cinfo, c_null_ptr, other), 'bkCreateContext', st, msg)
    call expect(BK_ERROR_INCOMPATIBLE_VERSION, 'BkContextCreateInfo.apiVersion', &
         'a newer major apiVersion refused')
    call tap_ok(bk_is_null(other), 'no context is returned on failure')

    cinfo = BkContextCreateInfo()
    cinfo%sType = BK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
    call bk_check(bkCreateContext(cinfo, c_null_ptr, other), 'bkCreateContext', st, msg)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkContextCreateInfo.sType', 'a wrong sType named')

    call bk_check(bkAllocateMemory(ctx, minfo, c_null_ptr, mem), 'bkAllocateMemory', st, msg)
    call expect(BK_ERROR_INVALID_ARGUMENT, 'BkMemoryAllocateInfo.size', 'zero-size memory named')

    call bk_check(bkImportQueue(ctx, c_null_ptr, imported), 'bkImportQueue', st, msg)
    call tap_ok(st < 0 .and. len(msg) > 0, 'bkImportQueue on the host fails with a message')
    if (allocated(msg)) deallocate (msg)
  end subroutine state_and_object_errors

  subroutine callback()
    integer(c_int), target :: tag
    type(BkPlan) :: plan
    type(BkGatedActivationInfo) :: info
    tag = 42
    call bkSetMessageCallback(c_funloc(on_message), c_loc(tag))
    info = forward_info()
    info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [7, 4])
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(seen_calls == 1 .and. seen_result == st .and. st == BK_ERROR_INVALID_ARGUMENT, &
         'the Fortran message callback ran once with the result')
    if (allocated(seen_message)) then
      call tap_ok(seen_message == msg, 'the callback got the message errmsg got')
    else
      call tap_ok(.false., 'the callback got the message errmsg got')
    end if
    call bkSetMessageCallback(c_null_funptr, c_null_ptr)
    call bk_create_plan(ctx, info, plan, stat=st)
    call tap_ok(seen_calls == 1, 'no callback after it is unset')
    call tap_ok(bk_result_string(BK_ERROR_INVALID_STATE) == 'BK_ERROR_INVALID_STATE', &
         'bk_result_string names the code')
  end subroutine callback
end program fortran_errors
