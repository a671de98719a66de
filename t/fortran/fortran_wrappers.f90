! SPDX-License-Identifier: Apache-2.0
! The wrappers a user writes around the module compile (gfortran 12 once
! stopped with an internal compiler error on the first two) and work:
! - assumed-rank x(..) without CONTIGUOUS handed to bk_copy_to_device,
!   bk_copy_from_device, bk_tensor_desc_of, bk_matrix_desc_of, bk_sizeof
!   and bk_host_address, with contiguous arrays, scalars and strided
!   sections of random data;
! - a copy back into a strided section of a poisoned array writes the
!   section and nothing else;
! - an assumed-shape bindings(:) section handed to bk_queue_run runs as
!   the contiguous array does, bit for bit.
module fortran_user_wrappers
  use, intrinsic :: iso_c_binding
  use bk
  implicit none
  private
  public :: put, get, desc_of, matrix_of, bytes_of, address_of, run

  interface put
    module procedure put_f32, put_f64, put_i16
  end interface put
  interface get
    module procedure get_f32, get_f64, get_i16
  end interface get

contains

  subroutine put_f32(ctx, dst, x)
    type(BkContext), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: dst
    real(c_float), intent(in) :: x(..)
    call bk_copy_to_device(ctx, dst, x)
  end subroutine put_f32

  subroutine put_f64(ctx, dst, x)
    type(BkContext), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: dst
    real(c_double), intent(in) :: x(..)
    call bk_copy_to_device(ctx, dst, x)
  end subroutine put_f64

  subroutine put_i16(ctx, dst, x)
    type(BkContext), intent(in) :: ctx
    integer(c_int64_t), intent(in) :: dst
    integer(c_int16_t), intent(in) :: x(..)
    call bk_copy_to_device(ctx, dst, x)
  end subroutine put_i16

  subroutine get_f32(ctx, x, src)
    type(BkContext), intent(in) :: ctx
    real(c_float), intent(inout) :: x(..)
    integer(c_int64_t), intent(in) :: src
    call bk_copy_from_device(ctx, x, src)
  end subroutine get_f32

  subroutine get_f64(ctx, x, src)
    type(BkContext), intent(in) :: ctx
    real(c_double), intent(inout) :: x(..)
    integer(c_int64_t), intent(in) :: src
    call bk_copy_from_device(ctx, x, src)
  end subroutine get_f64

  subroutine get_i16(ctx, x, src)
    type(BkContext), intent(in) :: ctx
    integer(c_int16_t), intent(inout) :: x(..)
    integer(c_int64_t), intent(in) :: src
    call bk_copy_from_device(ctx, x, src)
  end subroutine get_i16

  function desc_of(x) result(desc)
    real(c_float), intent(in) :: x(..)
    type(BkTensorDesc) :: desc
    desc = bk_tensor_desc_of(x)
  end function desc_of

  function matrix_of(x) result(desc)
    real(c_float), intent(in) :: x(..)
    type(BkTensorDesc) :: desc
    desc = bk_matrix_desc_of(x)
  end function matrix_of

  function bytes_of(x) result(bytes)
    real(c_float), intent(in) :: x(..)
    integer(c_int64_t) :: bytes
    bytes = bk_sizeof(x)
  end function bytes_of

  subroutine address_of(x, address, stat, errmsg)
    real(c_float), intent(in), target :: x(..)
    integer(c_int64_t), intent(out) :: address
    integer(c_int), intent(out) :: stat
    character(len=:), allocatable, intent(inout) :: errmsg
    address = bk_host_address(x, stat, errmsg)
  end subroutine address_of

  subroutine run(queue, plan, bindings)
    type(BkQueue), intent(in) :: queue
    type(BkPlan), intent(in) :: plan
    integer(c_int64_t), intent(in) :: bindings(:)
    call bk_queue_run(queue, plan, bindings)
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
  end subroutine run
end module fortran_user_wrappers

program fortran_wrappers
  use, intrinsic :: iso_c_binding
  use bk
  use fortran_tap
  use fortran_user_wrappers
  implicit none
  type(BkContext) :: ctx
  type(BkMemory) :: mem
  integer(c_int64_t) :: addr

  call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
  call bk_allocate_memory(ctx, 4096_c_int64_t, mem, addr)
  call copies_f32()
  call copies_other()
  call descriptors()
  call queue_run_section()
  call bkFreeMemory(ctx, mem)
  call bkDestroyContext(ctx)
  call tap_done()

contains

  ! Device bytes as f32, from the contiguous path.
  subroutine device_f32(n, got)
    integer, intent(in) :: n
    real(c_float), allocatable, intent(out) :: got(:)
    allocate (got(n))
    call bk_copy_from_device(ctx, got, addr)
  end subroutine device_f32

  subroutine copies_f32()
    real(c_float) :: a(5, 4, 3), b(7, 6), poisoned(7, 6), s
    real(c_float), allocatable :: got(:)
    logical :: outside(7, 6)
    call random_number(a)
    call put(ctx, addr, a)
    call device_f32(size(a), got)
    call tap_ok(all(got == reshape(a, [size(a)])), 'a contiguous rank-3 array through x(..)')

    call put(ctx, addr, a(1:5:2, 2:4, :))
    call device_f32(27, got)
    call tap_ok(all(got == reshape(a(1:5:2, 2:4, :), [27])), &
         'a strided rank-3 section through x(..) arrives in array element order')

    call put(ctx, addr, a(4, :, 2))
    call device_f32(4, got)
    call tap_ok(all(got == a(4, :, 2)), 'a row (stride 5) through x(..)')

    call put(ctx, addr, a(2, 3, 1))
    call device_f32(1, got)
    call tap_ok(got(1) == a(2, 3, 1), 'a scalar through x(..)')

    ! Back into a section: the section gets the data, the rest keeps its
    ! poison.
    call random_number(b)
    call put(ctx, addr, b(1:6, 1:2))
    poisoned = -7
    call get(ctx, poisoned(2:7:2, 1:6:3), addr)
    outside = .true.
    outside(2:7:2, 1:6:3) = .false.
    call tap_ok(all(reshape(poisoned(2:7:2, 1:6:3), [6]) == reshape(b(1:6, 1:2), [6])) .and. &
         all(pack(poisoned, outside) == -7), &
         'a copy into a strided section writes the section and nothing else')

    s = -1
    call get(ctx, s, addr)
    call tap_ok(s == b(1, 1), 'a copy into a scalar through x(..)')
  end subroutine copies_f32

  subroutine copies_other()
    real(c_double) :: d(6, 5), dback(6, 5)
    real(c_float) :: r(16)
    integer(c_int16_t) :: h(3, 4, 2, 2), hback(3, 4, 2, 2)
    integer :: i
    call random_number(d)
    dback = -1
    call put(ctx, addr, d(2:6:2, :))
    call get(ctx, dback(1:5:2, :), addr)
    call tap_ok(all(dback(1:5:2, :) == d(2:6:2, :)) .and. all(dback(2:6:2, :) == -1), &
         'real(c_double): a section there and into another section back')

    call random_number(r)
    h = int(reshape([(int(r(mod(i, 16) + 1) * 60000) - 30000, i = 1, size(h))], shape(h)), &
         c_int16_t)
    hback = 0
    call put(ctx, addr, h(:, 1:4:3, :, 2))
    call get(ctx, hback(:, 2:3, :, 1), addr)
    call tap_ok(all(hback(:, 2:3, :, 1) == h(:, 1:4:3, :, 2)) .and. all(hback(:, :, :, 2) == 0) &
         .and. all(hback(:, 1, :, 1) == 0) .and. all(hback(:, 4, :, 1) == 0), &
         'integer(c_int16_t): a rank-3 section of a rank-4 array there and back')
  end subroutine copies_other

  subroutine descriptors()
    real(c_float), target :: a(6, 5, 4)
    type(BkTensorDesc) :: desc
    integer(c_int64_t) :: address
    integer(c_int) :: stat
    character(len=:), allocatable :: errmsg
    a = 0
    desc = desc_of(a(1:6:2, :, 2:3))
    call tap_ok(desc%rank == 3 .and. all(desc%extent(1:3) == [2, 5, 3]), &
         'bk_tensor_desc_of a section through x(..): its shape, reversed', 'wrong shape')
    desc = matrix_of(a(2:5, 1:5:2, 1))
    call tap_ok(desc%rank == 2 .and. all(desc%extent(1:2) == [4, 3]) .and. &
         all(desc%stride(1:2) == [1, 4]), 'bk_matrix_desc_of a section through x(..)')
    call tap_ok(bytes_of(a(:, 2, 1:4:2)) == 6 * 2 * 4, 'bk_sizeof a section through x(..)')
    call address_of(a, address, stat, errmsg)
    call tap_ok(stat == BK_SUCCESS .and. address /= 0, &
         'bk_host_address of a contiguous array through x(..)')
    call address_of(a(1:6:2, :, :), address, stat, errmsg)
    call tap_ok(stat == BK_ERROR_INVALID_ARGUMENT .and. index(errmsg, 'x must be contiguous') > 0, &
         'bk_host_address of a strided section: an error naming x', errmsg)
  end subroutine descriptors

  ! A GLU run with bindings(1:3:2) of [x, unused, y] gives the bits of
  ! one with [x, y].
  subroutine queue_run_section()
    type(BkGatedActivationInfo) :: info
    type(BkPlan) :: plan
    type(BkQueue) :: queue
    type(BkMemory) :: xm, ym
    integer(c_int64_t) :: xa, ya, addrs(3)
    real(c_float) :: x(8, 4), want(4, 4), got(4, 4)
    call random_number(x)
    x = 4 * x - 2
    info%kind = BK_GATED_ACTIVATION_GLU
    info%splitAxis = bk_split_axis(1, 2)
    info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [8, 4])
    info%output = bk_tensor_desc(BK_DATA_TYPE_F32, [4, 4])
    call bk_create_plan(ctx, info, plan)
    call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')
    call bk_allocate_memory(ctx, bk_sizeof(x), xm, xa)
    call bk_allocate_memory(ctx, bk_sizeof(want), ym, ya)
    call bk_copy_to_device(ctx, xa, x)
    call run(queue, plan, [xa, ya])
    call bk_copy_from_device(ctx, want, ya)
    got = transfer(int(z'7FC00000', c_int32_t), 1.0_c_float)
    call bk_copy_to_device(ctx, ya, got)
    addrs = [xa, 0_c_int64_t, ya]
    call run(queue, plan, addrs(1:3:2))
    call bk_copy_from_device(ctx, got, ya)
    call tap_ok(all(transfer(got, 1_c_int32_t, 16) == transfer(want, 1_c_int32_t, 16)) .and. &
         abs(want(1, 1) - x(1, 1) / (1 + exp(-x(5, 1)))) <= 1e-6, &
         'bk_queue_run of a strided bindings section: the contiguous run''s bits')
    call bkFreeMemory(ctx, xm)
    call bkFreeMemory(ctx, ym)
    call bkDestroyPlan(plan)
  end subroutine queue_run_section
end program fortran_wrappers
