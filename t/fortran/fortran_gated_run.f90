! SPDX-License-Identifier: Apache-2.0
! The full libbk path for the Fortran gated-activation tests, on the host
! device: descriptors from Fortran shapes, device memory, a plan, a
! one-time command buffer (poison the output, run), submit, read back.
! Values travel as real(8) and are stored in the precision of dtype.
module fortran_gated_run
  use, intrinsic :: iso_c_binding
  use bk
  implicit none
  private
  public :: gated_setup, gated_teardown, run_forward, run_backward, dtype_name

  type(BkContext), save, public :: ctx
  type(BkQueue), save, public :: queue
  type(BkCommandBuffer), save :: cmd

contains

  subroutine gated_setup()
    call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
    call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')
    call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, cmd), 'bkAllocateCommandBuffer')
  end subroutine gated_setup

  subroutine gated_teardown()
    call bkFreeCommandBuffer(cmd)
    call bkDestroyContext(ctx)
  end subroutine gated_teardown

  function dtype_name(dtype) result(name)
    integer(c_int), intent(in) :: dtype
    character(len=:), allocatable :: name
    name = merge('F32', 'F64', dtype == BK_DATA_TYPE_F32)
  end function dtype_name

  ! Device memory for n elements of dtype.
  subroutine device_alloc(dtype, n, mem, addr)
    integer(c_int), intent(in) :: dtype
    integer, intent(in) :: n
    type(BkMemory), intent(out) :: mem
    integer(c_int64_t), intent(out) :: addr
    call bk_allocate_memory(ctx, int(max(1, n) * bk_data_type_size(dtype), c_int64_t), mem, addr)
  end subroutine device_alloc

  ! Device memory holding values in the precision of dtype.
  subroutine upload(dtype, values, mem, addr)
    integer(c_int), intent(in) :: dtype
    real(8), intent(in) :: values(:)
    type(BkMemory), intent(out) :: mem
    integer(c_int64_t), intent(out) :: addr
    call device_alloc(dtype, size(values), mem, addr)
    if (dtype == BK_DATA_TYPE_F32) then
      call bk_copy_to_device(ctx, addr, real(values, c_float))
    else
      call bk_copy_to_device(ctx, addr, values)
    end if
  end subroutine upload

  subroutine download(dtype, addr, values)
    integer(c_int), intent(in) :: dtype
    integer(c_int64_t), intent(in) :: addr
    real(8), intent(out) :: values(:)
    real(c_float), allocatable :: v4(:)
    if (dtype == BK_DATA_TYPE_F32) then
      allocate (v4(size(values)))
      call bk_copy_from_device(ctx, v4, addr)
      values = v4
    else
      call bk_copy_from_device(ctx, values, addr)
    end if
  end subroutine download

  ! Poison `out` with NaNs, run the plan, wait, all in one submission.
  subroutine execute(plan, bindings, out_addr, out_bytes)
    type(BkPlan), intent(in) :: plan
    integer(c_int64_t), intent(in) :: bindings(:), out_addr, out_bytes
    type(BkPlanProperties) :: props
    type(BkCommandBufferBeginInfo) :: begin
    type(BkMemory) :: ws
    integer(c_int64_t) :: ws_addr
    call bk_check(bkGetPlanProperties(plan, props), 'bkGetPlanProperties')
    if (props%bindingCount /= size(bindings)) error stop 'plan bindingCount differs'
    ws_addr = 0
    if (props%workspaceSize > 0) call bk_allocate_memory(ctx, props%workspaceSize, ws, ws_addr)
    call bk_check(bkBeginCommandBuffer(cmd, begin), 'bkBeginCommandBuffer')
    if (out_bytes > 0) call bk_check(bkCmdFillMemory(cmd, out_addr, out_bytes, &
         int(z'7FC00000', c_int32_t)), 'bkCmdFillMemory')
    call bk_cmd_run(cmd, plan, bindings, ws_addr, props%workspaceSize)
    call bk_check(bkEndCommandBuffer(cmd), 'bkEndCommandBuffer')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [cmd]), 'bkQueueSubmit')
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
    call bkFreeMemory(ctx, ws)
  end subroutine execute

  ! y = gated(x) for x of Fortran shape xshape (strides xstride within the
  ! buffer x when given), split along Fortran dimension split_dim; y is
  ! contiguous, in Fortran element order.
  subroutine run_forward(kind, dtype, x, xshape, split_dim, y, xstride)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8), intent(in) :: x(:)
    integer, intent(in) :: xshape(:), split_dim
    real(8), allocatable, intent(out) :: y(:)
    integer, intent(in), optional :: xstride(:)
    type(BkGatedActivationInfo) :: info
    type(BkPlan) :: plan
    type(BkMemory) :: xmem, ymem
    integer(c_int64_t) :: xaddr, yaddr
    integer :: yshape(size(xshape))
    yshape = xshape
    yshape(split_dim) = xshape(split_dim) / 2
    info%kind = kind
    info%splitAxis = bk_split_axis(split_dim, size(xshape))
    info%input = bk_tensor_desc(dtype, xshape, xstride)
    info%output = bk_tensor_desc(dtype, yshape)
    call bk_create_plan(ctx, info, plan)
    allocate (y(product(yshape)))
    call upload(dtype, x, xmem, xaddr)
    call device_alloc(dtype, size(y), ymem, yaddr)
    call execute(plan, [xaddr, yaddr], yaddr, int(size(y) * bk_data_type_size(dtype), c_int64_t))
    call download(dtype, yaddr, y)
    call bkFreeMemory(ctx, xmem)
    call bkFreeMemory(ctx, ymem)
    call bkDestroyPlan(plan)
  end subroutine run_forward

  ! dx = gated backward(x, dy); dy has the output's shape; all contiguous.
  subroutine run_backward(kind, dtype, x, dy, xshape, split_dim, dx)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8), intent(in) :: x(:), dy(:)
    integer, intent(in) :: xshape(:), split_dim
    real(8), allocatable, intent(out) :: dx(:)
    type(BkGatedActivationBackwardInfo) :: info
    type(BkPlan) :: plan
    type(BkMemory) :: xmem, dymem, dxmem
    integer(c_int64_t) :: xaddr, dyaddr, dxaddr
    integer :: yshape(size(xshape))
    yshape = xshape
    yshape(split_dim) = xshape(split_dim) / 2
    info%kind = kind
    info%splitAxis = bk_split_axis(split_dim, size(xshape))
    info%input = bk_tensor_desc(dtype, xshape)
    info%gradOutput = bk_tensor_desc(dtype, yshape)
    info%gradInput = bk_tensor_desc(dtype, xshape)
    call bk_create_plan(ctx, info, plan)
    allocate (dx(size(x)))
    call upload(dtype, x, xmem, xaddr)
    call upload(dtype, dy, dymem, dyaddr)
    call device_alloc(dtype, size(dx), dxmem, dxaddr)
    call execute(plan, [xaddr, dyaddr, dxaddr], dxaddr, &
         int(size(dx) * bk_data_type_size(dtype), c_int64_t))
    call download(dtype, dxaddr, dx)
    call bkFreeMemory(ctx, xmem)
    call bkFreeMemory(ctx, dymem)
    call bkFreeMemory(ctx, dxmem)
    call bkDestroyPlan(plan)
  end subroutine run_backward
end module fortran_gated_run
