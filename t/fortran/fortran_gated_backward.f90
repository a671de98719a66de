! SPDX-License-Identifier: Apache-2.0
! Gated activation backward from Fortran on the host device: every kind,
! F32 and F64, split along the fastest, a middle and the slowest Fortran
! dimension, against the analytic derivatives in extended precision
! (fortran_gated_ref); and, in F64, against central finite differences of
! libbk's own forward plan.
program fortran_gated_backward
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
    end do
  end do
  do ik = 1, NUM_KINDS
    call finite_differences(test_kinds(ik))
  end do
  call gated_teardown()
  call tap_done()

contains

  real(8) function tol(dtype)
    integer(c_int), intent(in) :: dtype
    tol = merge(1.0d-5, 1.0d-12, dtype == BK_DATA_TYPE_F32)
  end function tol

  function label(kind, dtype, what) result(s)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    character(len=*), intent(in) :: what
    character(len=:), allocatable :: s
    s = 'backward ' // dtype_name(dtype) // ' ' // kind_name(kind) // ': ' // what
  end function label

  ! x(6, 5) split along dimension 1 (a = x(1:3,:), b = x(4:6,:)).
  subroutine split_fastest(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: x(6, 5), dy(3, 5)
    real(xp) :: ref(6, 5)
    real(8), allocatable :: dx(:)
    logical :: single
    single = dtype == BK_DATA_TYPE_F32
    x = reshape(random_values(size(x), single), shape(x))
    dy = reshape(random_values(size(dy), single), shape(dy))
    ref(1:3, :) = dy * gate(kind, real(x(4:6, :), xp))
    ref(4:6, :) = dy * x(1:3, :) * gate_deriv(kind, real(x(4:6, :), xp))
    call run_backward(kind, dtype, reshape(x, [size(x)]), reshape(dy, [size(dy)]), shape(x), 1, dx)
    call tap_near(dx, real(reshape(ref, [size(ref)]), 8), tol(dtype), &
         label(kind, dtype, 'x(6,5) split along dim 1'))
  end subroutine split_fastest

  subroutine split_middle(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: x(4, 8, 3), dy(4, 4, 3)
    real(xp) :: ref(4, 8, 3)
    real(8), allocatable :: dx(:)
    logical :: single
    single = dtype == BK_DATA_TYPE_F32
    x = reshape(random_values(size(x), single), shape(x))
    dy = reshape(random_values(size(dy), single), shape(dy))
    ref(:, 1:4, :) = dy * gate(kind, real(x(:, 5:8, :), xp))
    ref(:, 5:8, :) = dy * x(:, 1:4, :) * gate_deriv(kind, real(x(:, 5:8, :), xp))
    call run_backward(kind, dtype, reshape(x, [size(x)]), reshape(dy, [size(dy)]), shape(x), 2, dx)
    call tap_near(dx, real(reshape(ref, [size(ref)]), 8), tol(dtype), &
         label(kind, dtype, 'x(4,8,3) split along dim 2'))
  end subroutine split_middle

  subroutine split_slowest(kind, dtype)
    integer, intent(in) :: kind
    integer(c_int), intent(in) :: dtype
    real(8) :: x(3, 4, 2), dy(3, 4, 1)
    real(xp) :: ref(3, 4, 2)
    real(8), allocatable :: dx(:)
    logical :: single
    single = dtype == BK_DATA_TYPE_F32
    x = reshape(random_values(size(x), single), shape(x))
    dy = reshape(random_values(size(dy), single), shape(dy))
    ref(:, :, 1:1) = dy * gate(kind, real(x(:, :, 2:2), xp))
    ref(:, :, 2:2) = dy * x(:, :, 1:1) * gate_deriv(kind, real(x(:, :, 2:2), xp))
    call run_backward(kind, dtype, reshape(x, [size(x)]), reshape(dy, [size(dy)]), shape(x), 3, dx)
    call tap_near(dx, real(reshape(ref, [size(ref)]), 8), tol(dtype), &
         label(kind, dtype, 'x(3,4,2) split along dim 3'))
  end subroutine split_slowest

  ! dx(i) ~ (L(x + h e_i) - L(x - h e_i)) / 2h with L(x) = sum(dy * y(x)),
  ! y from libbk's forward plan, in F64.
  subroutine finite_differences(kind)
    integer, intent(in) :: kind
    real(8), parameter :: h = 1.0d-5
    real(8) :: x(4, 3), dy(4, 3), fd(size(x) * 2), xp_(4 * 2, 3)
    real(8), allocatable :: dx(:), yp(:), ym(:)
    integer :: i
    x = reshape(random_values(size(x), .false.), shape(x))
    dy = reshape(random_values(size(dy), .false.), shape(dy))
    xp_(1:4, :) = x
    xp_(5:8, :) = reshape(random_values(size(x), .false.), shape(x))
    do i = 1, size(xp_)
      call run_forward(kind, BK_DATA_TYPE_F64, bump(xp_, i, h), shape(xp_), 1, yp)
      call run_forward(kind, BK_DATA_TYPE_F64, bump(xp_, i, -h), shape(xp_), 1, ym)
      fd(i) = sum(reshape(dy, [size(dy)]) * (yp - ym)) / (2 * h)
    end do
    call run_backward(kind, BK_DATA_TYPE_F64, reshape(xp_, [size(xp_)]), reshape(dy, [size(dy)]), &
         shape(xp_), 1, dx)
    call tap_near(dx, fd, 1.0d-6, label(kind, BK_DATA_TYPE_F64, &
         'matches finite differences of the forward plan'))
  end subroutine finite_differences

  ! v flattened, with element i moved by d.
  function bump(v, i, d) result(w)
    real(8), intent(in) :: v(:, :)
    integer, intent(in) :: i
    real(8), intent(in) :: d
    real(8) :: w(size(v))
    w = reshape(v, [size(v)])
    w(i) = w(i) + d
  end function bump
end program fortran_gated_backward
