! SPDX-License-Identifier: Apache-2.0
! fortran_swiglu_steps: libbk from an HPC-style Fortran code.
!
! A time-stepping loop applies a SwiGLU to a column-major field
! h(2*d, l, b) (feature, position, batch: the first d features are the
! values a, the last d the gates g) giving y(d, l, b) = a * g * sigmoid(g).
! The plan is set up once; each step uploads the new field, runs the plan
! on the queue in one call (bk_queue_run) and reads the result back.
!
! Index order: libbk counts dimensions in C (row-major) order, so the
! Fortran array h(2*d, l, b) is the libbk tensor of extent [b, l, 2*d] and
! the split along Fortran dimension 1 is splitAxis 3 - 1 = 2. The helpers
! bk_tensor_desc_of and bk_split_axis do this arithmetic.
!
! Usage: fortran_swiglu_steps [host|cuda|auto]   (default host)
! Build: gfortran $(pkg-config --cflags bk-fortran) fortran_swiglu_steps.f90 \
!          $(pkg-config --libs bk-fortran)
program fortran_swiglu_steps
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: real64
  use bk
  implicit none
  integer, parameter :: d = 64, l = 48, b = 4, nsteps = 100
  real(real64), allocatable :: h(:, :, :), y(:, :, :), want(:, :, :)
  type(BkContext) :: ctx
  type(BkQueue) :: queue
  type(BkPlan) :: plan
  type(BkMemory) :: hmem, ymem, wsmem
  type(BkGatedActivationInfo) :: info
  type(BkPlanProperties) :: props
  type(BkDeviceProperties) :: device
  integer(c_int64_t) :: haddr, yaddr, wsaddr
  integer(c_int) :: device_type
  real(real64) :: energy, max_err, t
  integer :: step, i, j, k
  character(len=16) :: arg

  device_type = BK_DEVICE_TYPE_HOST
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    select case (trim(arg))
    case ('cuda')
      device_type = BK_DEVICE_TYPE_CUDA
    case ('auto')
      device_type = BK_DEVICE_TYPE_AUTO
    end select
  end if

  allocate (h(2 * d, l, b), y(d, l, b), want(d, l, b))

  ! ---- Set-up, once ------------------------------------------------------
  call bk_create_context(ctx, device_type)
  call bk_check(bkGetContextProperties(ctx, device), 'bkGetContextProperties')
  call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')

  info%kind = BK_GATED_ACTIVATION_SWIGLU
  info%splitAxis = bk_split_axis(1, rank(h))
  info%input = bk_tensor_desc_of(h)
  info%output = bk_tensor_desc_of(y)
  call bk_create_plan(ctx, info, plan)
  call bk_check(bkGetPlanProperties(plan, props), 'bkGetPlanProperties')

  call bk_allocate_memory(ctx, bk_sizeof(h), hmem, haddr)
  call bk_allocate_memory(ctx, bk_sizeof(y), ymem, yaddr)
  wsaddr = 0
  if (props%workspaceSize > 0) &
       call bk_allocate_memory(ctx, props%workspaceSize, wsmem, wsaddr)

  ! ---- Time loop ---------------------------------------------------------
  energy = 0
  max_err = 0
  do step = 1, nsteps
    t = 0.01_real64 * step
    do k = 1, b
      do j = 1, l
        do i = 1, 2 * d
          h(i, j, k) = 2 * sin(0.1_real64 * i + 0.3_real64 * j - 0.7_real64 * k + t)
        end do
      end do
    end do

    call bk_copy_to_device(ctx, haddr, h)
    call bk_queue_run(queue, plan, [haddr, yaddr], wsaddr, props%workspaceSize)
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
    call bk_copy_from_device(ctx, y, yaddr)

    ! The same SwiGLU in plain Fortran, to check libbk's answer.
    want = h(1:d, :, :) * h(d + 1:, :, :) / (1 + exp(-h(d + 1:, :, :)))
    max_err = max(max_err, maxval(abs(y - want)))
    energy = energy + sum(y**2) / size(y)
  end do

  write (*, '(a, a)') 'device:         ', bk_c_string(device%name)
  write (*, '(a, a)') 'kernel:         ', bk_c_string(props%kernelName)
  write (*, '(a, i0, a, i0, a, i0, a, i0, a)') 'field:          h(', 2 * d, ', ', l, ', ', b, &
       ') split along Fortran dim 1 (splitAxis ', info%splitAxis, ')'
  write (*, '(a, i0)') 'steps:          ', nsteps
  write (*, '(a, es12.5)') 'mean energy:    ', energy / nsteps
  write (*, '(a, es12.5)') 'max |y - want|: ', max_err

  call bkFreeMemory(ctx, hmem)
  call bkFreeMemory(ctx, ymem)
  call bkFreeMemory(ctx, wsmem)
  call bkDestroyPlan(plan)
  call bkDestroyContext(ctx)
  deallocate (h, y, want)

  if (max_err > 1.0e-12_real64) error stop 'libbk result differs from the Fortran SwiGLU'
end program fortran_swiglu_steps
