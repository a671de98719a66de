! SPDX-License-Identifier: Apache-2.0
! bk_queue_run and bkQueueRun from Fortran on the host device: a GLU run
! in one call gives the bits of bk_cmd_run + bkQueueSubmit, a GEMM takes
! its workspace, and bad arguments come back through stat and errmsg with
! the field named.
program fortran_queue_run
  use, intrinsic :: iso_c_binding
  use bk
  use fortran_tap
  implicit none
  type(BkContext) :: ctx
  type(BkQueue) :: queue

  call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
  call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')
  call glu()
  call gemm_workspace()
  call errors()
  call bkDestroyContext(ctx)
  call tap_done()

contains

  ! y(4, 4) = GLU of x(8, 4) split along Fortran dimension 1.
  function glu_plan(c) result(plan)
    type(BkContext), intent(in) :: c
    type(BkPlan) :: plan
    type(BkGatedActivationInfo) :: info
    info%kind = BK_GATED_ACTIVATION_GLU
    info%splitAxis = bk_split_axis(1, 2)
    info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [8, 4])
    info%output = bk_tensor_desc(BK_DATA_TYPE_F32, [4, 4])
    call bk_create_plan(c, info, plan)
  end function glu_plan

  ! The output of a bk_cmd_run + bkQueueSubmit of plan, the reference.
  subroutine reference(plan, bindings, out_addr, ws, ws_size)
    type(BkPlan), intent(in) :: plan
    integer(c_int64_t), intent(in) :: bindings(:), out_addr, ws, ws_size
    type(BkCommandBuffer) :: cmd
    type(BkCommandBufferBeginInfo) :: begin
    call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, cmd), 'bkAllocateCommandBuffer')
    call bk_check(bkBeginCommandBuffer(cmd, begin), 'bkBeginCommandBuffer')
    call bk_check(bkCmdFillMemory(cmd, out_addr, 64_c_int64_t, int(z'7FC00000', c_int32_t)), &
         'bkCmdFillMemory')
    call bk_cmd_run(cmd, plan, bindings, ws, ws_size)
    call bk_check(bkEndCommandBuffer(cmd), 'bkEndCommandBuffer')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [cmd]), 'bkQueueSubmit')
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
    call bkFreeCommandBuffer(cmd)
  end subroutine reference

  subroutine poison(addr)
    integer(c_int64_t), intent(in) :: addr
    real(c_float) :: nan(16)
    nan = transfer(int(z'7FC00000', c_int32_t), 1.0_c_float)
    call bk_copy_to_device(ctx, addr, nan)
  end subroutine poison

  subroutine glu()
    type(BkPlan) :: plan
    type(BkMemory) :: xm, ym
    integer(c_int64_t) :: xa, ya
    real(c_float) :: x(8, 4), want(4, 4), got(4, 4)
    integer :: i, j
    integer(c_int) :: stat
    plan = glu_plan(ctx)
    do j = 1, 4
      do i = 1, 8
        x(i, j) = real(mod(i + 3 * j, 9), c_float) * 0.375 - 1.5
      end do
    end do
    call bk_allocate_memory(ctx, 128_c_int64_t, xm, xa)
    call bk_allocate_memory(ctx, 64_c_int64_t, ym, ya)
    call bk_copy_to_device(ctx, xa, x)
    call reference(plan, [xa, ya], ya, 0_c_int64_t, 0_c_int64_t)
    call bk_copy_from_device(ctx, want, ya)
    call tap_ok(abs(want(2, 3) - x(2, 3) / (1 + exp(-x(6, 3)))) <= 1e-6, &
         'the reference is GLU (y = a * sigmoid(b))')

    call poison(ya)
    call bk_queue_run(queue, plan, [xa, ya], stat=stat)
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
    call bk_copy_from_device(ctx, got, ya)
    call tap_ok(stat == BK_SUCCESS .and. all(transfer(got, 1_c_int32_t, 16) == &
         transfer(want, 1_c_int32_t, 16)), &
         'bk_queue_run equals bk_cmd_run + bkQueueSubmit bit for bit')

    call bkFreeMemory(ctx, xm)
    call bkFreeMemory(ctx, ym)
    call bkDestroyPlan(plan)
  end subroutine glu

  ! D(4, 4) = relu(A(4, 4) B(4, 4)), F16 A and B, F32 D: the host plan
  ! converts A and B in a workspace (with a BLAS as without).
  subroutine gemm_workspace()
    ! The F16 bits of -2, -1, 0, 1, 2.
    integer(c_int16_t), parameter :: half_bits(0:4) = [-16384_c_int16_t, -17408_c_int16_t, &
         0_c_int16_t, 15360_c_int16_t, 16384_c_int16_t]
    type(BkGemmInfo) :: info
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkMemory) :: am, dm, wm
    integer(c_int64_t) :: aa, da, wa
    integer(c_int16_t) :: a(4, 4)
    real(c_float) :: want(4, 4), got(4, 4)
    integer(c_int) :: stat
    integer :: i
    a = reshape([(half_bits(mod(i, 5)), i = 1, 16)], [4, 4])
    info%transA = BK_GEMM_OP_N
    info%transB = BK_GEMM_OP_N
    info%activation = BK_GEMM_ACTIVATION_RELU
    info%alpha = 1
    info%a = bk_tensor_desc(BK_DATA_TYPE_F16, [4, 4])
    info%b = info%a
    info%d = bk_tensor_desc(BK_DATA_TYPE_F32, [4, 4])
    call bk_create_plan(ctx, info, plan)
    call bk_get_plan_properties(plan, props)
    call tap_ok(props%workspaceSize > 0, 'the host GEMM plan needs a workspace')
    call bk_allocate_memory(ctx, 64_c_int64_t, am, aa)
    call bk_allocate_memory(ctx, 64_c_int64_t, dm, da)
    call bk_allocate_memory(ctx, max(1_c_int64_t, props%workspaceSize), wm, wa)
    call bk_copy_to_device(ctx, aa, a)
    call reference(plan, [aa, aa, 0_c_int64_t, da, 0_c_int64_t], da, wa, props%workspaceSize)
    call bk_copy_from_device(ctx, want, da)
    call poison(da)
    call bk_queue_run(queue, plan, [aa, aa, 0_c_int64_t, da, 0_c_int64_t], wa, &
         props%workspaceSize, stat=stat)
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
    call bk_copy_from_device(ctx, got, da)
    call tap_ok(stat == BK_SUCCESS .and. all(transfer(got, 1_c_int32_t, 16) == &
         transfer(want, 1_c_int32_t, 16)), 'a GEMM with its workspace: the reference bits')
    call bkFreeMemory(ctx, am)
    call bkFreeMemory(ctx, dm)
    call bkFreeMemory(ctx, wm)
    call bkDestroyPlan(plan)
  end subroutine gemm_workspace

  subroutine expect(stat, errmsg, code, needle, what)
    integer(c_int), intent(in) :: stat, code
    character(len=:), allocatable, intent(in) :: errmsg
    character(len=*), intent(in) :: needle, what
    call tap_ok(stat == code .and. index(errmsg, needle) > 0, what, &
         bk_result_string(stat) // ': ' // errmsg)
  end subroutine expect

  subroutine errors()
    type(BkPlan) :: plan, foreign, none
    type(BkContext) :: other
    type(BkQueue) :: no_queue
    type(BkMemory) :: xm, ym
    type(BkRunInfo) :: info
    integer(c_int64_t) :: xa, ya
    integer(c_int) :: stat
    character(len=:), allocatable :: errmsg
    plan = glu_plan(ctx)
    call bk_allocate_memory(ctx, 128_c_int64_t, xm, xa)
    call bk_allocate_memory(ctx, 64_c_int64_t, ym, ya)

    call bk_queue_run(no_queue, plan, [xa, ya], stat=stat, errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'queue is NULL', 'a null queue')
    call bk_queue_run(queue, none, [xa, ya], stat=stat, errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'plan is NULL', 'a null plan')
    info%sType = BK_STRUCTURE_TYPE_PLAN_CREATE_INFO
    stat = bkQueueRun(queue, plan, info)
    errmsg = bk_last_error_message()
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'BkRunInfo.sType', &
         'bkQueueRun with a BkRunInfo of the wrong sType')
    call bk_create_context(other, BK_DEVICE_TYPE_HOST)
    foreign = glu_plan(other)
    call bk_queue_run(queue, foreign, [xa, ya], stat=stat, errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'another context than queue', &
         'a plan of another context')
    call bkDestroyPlan(foreign)
    call bkDestroyContext(other)
    call bk_queue_run(queue, plan, [xa], stat=stat, errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'BkRunInfo.bindingCount', &
         'one binding for a plan of two')
    call bk_queue_run(queue, plan, [xa, 0_c_int64_t], stat=stat, errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'pBindings[1]', 'the output bound to 0')
    call bk_queue_run(queue, plan, [xa, xa + 64], stat=stat, errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'overlaps', 'the output inside the input')
    call bk_queue_run(queue, plan, [xa, ya], bindingSizes=[128_c_int64_t], stat=stat, &
         errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_INVALID_ARGUMENT, 'size(bindingSizes)', &
         'bindingSizes shorter than bindings')
    call bk_queue_run(queue, plan, [xa, ya], bindingSizes=[128_c_int64_t, 60_c_int64_t], &
         stat=stat, errmsg=errmsg)
    call expect(stat, errmsg, BK_ERROR_BUFFER_TOO_SMALL, 'pBindingSizes[1]', &
         'bindingSizes(2) smaller than the output')
    call bkFreeMemory(ctx, xm)
    call bkFreeMemory(ctx, ym)
    call bkDestroyPlan(plan)
  end subroutine errors
end program fortran_queue_run
