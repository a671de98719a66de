! SPDX-License-Identifier: Apache-2.0
! A small TAP producer for the Fortran tests (the C tests have t/lib/tap.c).
! Each check prints `ok N - what` or `not ok N - what` and `# ...`
! diagnostics; tap_done prints the plan `1..N` last and stops with status 1
! when a check failed.
module fortran_tap
  use, intrinsic :: iso_fortran_env, only: output_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  implicit none
  private
  public :: tap_ok, tap_diag, tap_skip_all, tap_done, tap_is_int, tap_near, tap_failures

  integer, save :: count = 0, failures = 0

  ! call tap_near(got, want, tol, what): every |got - want| <= tol * max(1, |want|).
  interface tap_near
    module procedure near_r4, near_r8
  end interface tap_near

contains

  subroutine tap_ok(cond, what, diag)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    character(len=*), intent(in), optional :: diag   ! printed on failure
    count = count + 1
    if (cond) then
      write (output_unit, '(a, i0, a)') 'ok ', count, ' - ' // what
    else
      failures = failures + 1
      write (output_unit, '(a, i0, a)') 'not ok ', count, ' - ' // what
      if (present(diag)) call tap_diag(diag)
    end if
    flush (output_unit)
  end subroutine tap_ok

  subroutine tap_diag(msg)
    character(len=*), intent(in) :: msg
    write (output_unit, '(a)') '# ' // msg
  end subroutine tap_diag

  subroutine tap_is_int(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    character(len=64) :: line
    write (line, '(a, i0, a, i0)') 'got ', got, ', want ', want
    call tap_ok(got == want, what, trim(line))
  end subroutine tap_is_int

  subroutine near_r4(got, want, tol, what)
    real(4), intent(in) :: got(:), want(:)
    real(4), intent(in) :: tol
    character(len=*), intent(in) :: what
    call near_r8(real(got, 8), real(want, 8), real(tol, 8), what)
  end subroutine near_r4

  subroutine near_r8(got, want, tol, what)
    real(8), intent(in) :: got(:), want(:)
    real(8), intent(in) :: tol
    character(len=*), intent(in) :: what
    character(len=160) :: line
    real(8) :: err
    integer :: i, worst
    worst = 0
    err = 0
    line = 'sizes differ'
    if (size(got) == size(want)) then
      do i = 1, size(want)
        if (abs(got(i) - want(i)) > tol * max(1.0d0, abs(want(i))) .or. ieee_is_nan(got(i))) then
          if (worst == 0) worst = i
          err = max(err, abs(got(i) - want(i)))
        end if
      end do
      if (worst /= 0) write (line, '(a, i0, a, es24.16, a, es24.16, a, es10.3)') &
           'first bad element ', worst, ': got ', got(worst), ', want ', want(worst), &
           '; worst error ', err
    end if
    call tap_ok(size(got) == size(want) .and. worst == 0, what, trim(line))
  end subroutine near_r8

  integer function tap_failures()
    tap_failures = failures
  end function tap_failures

  subroutine tap_skip_all(reason)
    character(len=*), intent(in) :: reason
    write (output_unit, '(a)') '1..0 # SKIP ' // reason
    stop
  end subroutine tap_skip_all

  subroutine tap_done()
    write (output_unit, '(a, i0)') '1..', count
    flush (output_unit)
    if (failures > 0) stop 1
  end subroutine tap_done
end module fortran_tap
