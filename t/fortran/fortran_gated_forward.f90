! SPDX-License-Identifier: Apache-2.0
! Gated activation forward from Fortran on the host device: every kind, F32
! and F64, split along the fastest, a middle and the slowest Fortran
! dimension, rank 1, a strided input, and host arrays bound in place and
! replayed through a reusable command buffer. References are Fortran
! array expressions in extended precision (fortran_gated_ref).
program fortran_gated_forward
  use, intrinsic :: iso_c_binding
  use bk
  use fortran_tap
  use fortran_gated_ref
  use fortran_gated_run
  implicit none
  integer(c_int), parameter :: dtypes(2) = [BK_DATA_TYPE_F32, BK_DATA_TYPE_F64]
  integer :: it, ik

  call gated_setup()
  do it = 1, size(dtypes)
    do ik = 1, NUM_KINDS
      call split_fastest(test_kinds(ik), dtypes(it))
      call split_middle(test_kinds(ik), dtypes(it))
      call split_slowest(test_kinds(ik), dtypes(it))
      call rank_one(test_kinds(ik), dtypes(it))
      call strided_input(test_kinds(ik), dtypes(it))
    end do
    call bound_in_place(dtypes(it))
  end do
  call gated_teardown()
  call tap_done()

contains

  real(8) function tol(dtype)
    integer(c_int), intent(in) :: dtype
    tol = merge(5.0d-6, 1.0d-12, dtype == BK_DATA_TYPE_F32)
  end function tol

  function label(kind, dtype, what) result(s)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: what
    character(len=:), allocatable :: s
    s = 'forward ' // dtype_name(dtype) // ' ' // kind_name(kind) // ': ' // what
  end function label

  ! x(8, 7), split along dimension 1: C splitAxis 1, the innermost.
  subroutine split_fastest(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: x(8, 7)
    real(xp) :: ref(4, 7)
    real(8), allocatable :: y(:)
    x = reshape(random_values(size(x), dtype == BK_DATA_TYPE_F32), shape(x))
    ref = real(x(1:4, :), xp) * gate(kind, real(x(5:8, :), xp))
    call run_forward(kind, dtype, reshape(x, [size(x)]), shape(x), 1, y)
    call tap_near(y, real(reshape(ref, [size(ref)]), 8), tol(dtype), &
         label(kind, dtype, 'x(8,7) split along dim 1'))
  end subroutine split_fastest

  ! x(5, 6, 4), split along dimension 2: C splitAxis 1 of 3.
  subroutine split_middle(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: x(5, 6, 4)
    real(xp) :: ref(5, 3, 4)
    real(8), allocatable :: y(:)
    x = reshape(random_values(size(x), dtype == BK_DATA_TYPE_F32), shape(x))
    ref = real(x(:, 1:3, :), xp) * gate(kind, real(x(:, 4:6, :), xp))
    call run_forward(kind, dtype, reshape(x, [size(x)]), shape(x), 2, y)
    call tap_near(y, real(reshape(ref, [size(ref)]), 8), tol(dtype), &
         label(kind, dtype, 'x(5,6,4) split along dim 2'))
  end subroutine split_middle

  ! x(3, 2, 4, 4), split along dimension 4: C splitAxis 0, the outermost.
  subroutine split_slowest(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: x(3, 2, 4, 4)
    real(xp) :: ref(3, 2, 4, 2)
    real(8), allocatable :: y(:)
    x = reshape(random_values(size(x), dtype == BK_DATA_TYPE_F32), shape(x))
    ref = real(x(:, :, :, 1:2), xp) * gate(kind, real(x(:, :, :, 3:4), xp))
    call run_forward(kind, dtype, reshape(x, [size(x)]), shape(x), 4, y)
    call tap_near(y, real(reshape(ref, [size(ref)]), 8), tol(dtype), &
         label(kind, dtype, 'x(3,2,4,4) split along dim 4'))
  end subroutine split_slowest

  subroutine rank_one(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: x(18)
    real(xp) :: ref(9)
    real(8), allocatable :: y(:)
    x = random_values(size(x), dtype == BK_DATA_TYPE_F32)
    ref = real(x(1:9), xp) * gate(kind, real(x(10:18), xp))
    call run_forward(kind, dtype, x, shape(x), 1, y)
    call tap_near(y, real(ref, 8), tol(dtype), label(kind, dtype, 'x(18), rank 1'))
  end subroutine rank_one

  ! The input is the section p(1:6:2, :, :) of p(6, 10, 2), described with
  ! Fortran strides [2, 6, 60] on a buffer holding all of p.
  subroutine strided_input(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: p(6, 10, 2)
    real(xp) :: ref(3, 5, 2)
    real(8), allocatable :: y(:)
    p = reshape(random_values(size(p), dtype == BK_DATA_TYPE_F32), shape(p))
    ref = real(p(1:6:2, 1:5, :), xp) * gate(kind, real(p(1:6:2, 6:10, :), xp))
    call run_forward(kind, dtype, reshape(p, [size(p)]), [3, 10, 2], 2, y, xstride=[2, 6, 60])
    call tap_near(y, real(reshape(ref, [size(ref)]), 8), tol(dtype), &
         label(kind, dtype, 'strided section p(1:6:2,:,:) split along dim 2'))
  end subroutine strided_input

  ! The HPC pattern: Fortran arrays bound in place (host device), one
  ! reusable command buffer recorded once and submitted every step with
  ! new values written into the same arrays.
  subroutine bound_in_place(dtype)
    integer(c_int), intent(in) :: dtype
    real(c_float), target :: x4(6, 2, 3), y4(6, 1, 3)
    real(c_double), target :: x8(6, 2, 3), y8(6, 1, 3)
    real(8) :: x(6, 2, 3)
    real(xp) :: ref(6, 1, 3)
    type(BkGatedActivationInfo) :: info
    type(BkCommandBufferBeginInfo) :: begin
    type(BkCommandBuffer) :: replay
    type(BkPlan) :: plan
    integer(c_int64_t) :: bindings(2)
    integer :: step
    character(len=40) :: what
    info%kind = BK_GATED_ACTIVATION_SWIGLU
    info%splitAxis = bk_split_axis(2, 3)
    if (dtype == BK_DATA_TYPE_F32) then
      info%input = bk_tensor_desc_of(x4)
      info%output = bk_tensor_desc_of(y4)
      bindings = [bk_host_address(x4), bk_host_address(y4)]
    else
      info%input = bk_tensor_desc_of(x8)
      info%output = bk_tensor_desc_of(y8)
      bindings = [bk_host_address(x8), bk_host_address(y8)]
    end if
    call bk_create_plan(ctx, info, plan)
    call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, replay), 'bkAllocateCommandBuffer')
    begin%usage = BK_COMMAND_BUFFER_USAGE_REUSABLE
    call bk_check(bkBeginCommandBuffer(replay, begin), 'bkBeginCommandBuffer')
    call bk_cmd_run(replay, plan, bindings)
    call bk_check(bkEndCommandBuffer(replay), 'bkEndCommandBuffer')
    do step = 1, 3
      x = reshape(random_values(size(x), dtype == BK_DATA_TYPE_F32), shape(x))
      x4 = real(x, c_float)
      x8 = x
      call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [replay]), 'bkQueueSubmit')
      call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
      ref = real(x(:, 1:1, :), xp) * gate(info%kind, real(x(:, 2:2, :), xp))
      write (what, '(a, i0)') 'arrays bound in place, replay ', step
      if (dtype == BK_DATA_TYPE_F32) then
        call tap_near(real(reshape(y4, [size(y4)]), 8), real(reshape(ref, [size(ref)]), 8), &
             tol(dtype), label(info%kind, dtype, trim(what)))
      else
        call tap_near(reshape(y8, [size(y8)]), real(reshape(ref, [size(ref)]), 8), tol(dtype), &
             label(info%kind, dtype, trim(what)))
      end if
    end do
    call bkFreeCommandBuffer(replay)
    call bkDestroyPlan(plan)
  end subroutine bound_in_place
end program fortran_gated_forward
