! SPDX-License-Identifier: Apache-2.0
! The module's half-precision helpers (bk_to_f16, bk_to_bf16,
! bk_from_f16, bk_from_bf16; bk-convert(7)'s rounding), with no context:
! - every F16 and BF16 pattern widened to real(4) and real(8), against a
!   decoding written here (m * 2**(e - bias - mantissa bits));
! - every finite pattern back from both kinds gives its bits again, and
!   every NaN stays a NaN;
! - every rounding boundary: the midpoint of two neighbours rounds to the
!   even one, the reals next to it to the nearer one, in real(4) and
!   real(8); 65520 and above overflows F16 to infinity;
! - elemental on a strided section of a 2-D array.
program fortran_convert
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use bk
  use fortran_tap
  implicit none
  call widen_all('f16')
  call widen_all('bf16')
  call boundaries('f16')
  call boundaries('bf16')
  call sections()
  call tap_done()

contains

  ! The value of pattern b (0..65535) of the format, decoded here.
  function decoded(fmt, b) result(v)
    character(len=*), intent(in) :: fmt
    integer, intent(in) :: b
    real(c_double) :: v
    integer :: man, ebits, e, m
    man = merge(10, 7, fmt == 'f16')
    ebits = merge(5, 8, fmt == 'f16')
    e = ibits(b, man, ebits)
    m = ibits(b, 0, man)
    if (e == 0) then
      v = real(m, c_double) * 2.0_c_double**(2 - 2**(ebits - 1) - man)
    else
      v = real(m + 2**man, c_double) * 2.0_c_double**(e - (2**(ebits - 1) - 1) - man)
    end if
    if (btest(b, 15)) v = -v
  end function decoded

  logical function is_nan_pattern(fmt, b)
    character(len=*), intent(in) :: fmt
    integer, intent(in) :: b
    integer :: man, ebits
    man = merge(10, 7, fmt == 'f16')
    ebits = merge(5, 8, fmt == 'f16')
    is_nan_pattern = ibits(b, man, ebits) == 2**ebits - 1 .and. ibits(b, 0, man) /= 0
  end function is_nan_pattern

  logical function is_inf_pattern(fmt, b)
    character(len=*), intent(in) :: fmt
    integer, intent(in) :: b
    integer :: man, ebits
    man = merge(10, 7, fmt == 'f16')
    ebits = merge(5, 8, fmt == 'f16')
    is_inf_pattern = ibits(b, man, ebits) == 2**ebits - 1 .and. ibits(b, 0, man) == 0
  end function is_inf_pattern

  integer(c_int16_t) function h16(b)
    integer, intent(in) :: b
    h16 = int(b - 2 * iand(b, 32768), c_int16_t)
  end function h16

  integer function u16(h)
    integer(c_int16_t), intent(in) :: h
    u16 = iand(int(h), 65535)
  end function u16

  subroutine to_bits(fmt, x4, x8, b4, b8)
    character(len=*), intent(in) :: fmt
    real(c_float), intent(in) :: x4(:)
    real(c_double), intent(in) :: x8(:)
    integer(c_int16_t), intent(out) :: b4(:), b8(:)
    if (fmt == 'f16') then
      call bk_to_f16(x4, b4)
      call bk_to_f16(x8, b8)
    else
      call bk_to_bf16(x4, b4)
      call bk_to_bf16(x8, b8)
    end if
  end subroutine to_bits

  subroutine widen_all(fmt)
    character(len=*), intent(in) :: fmt
    integer(c_int16_t), allocatable :: h(:), b4(:), b8(:)
    real(c_float), allocatable :: x4(:)
    real(c_double), allocatable :: x8(:)
    integer :: i, bad, trip
    allocate (h(0:65535), b4(0:65535), b8(0:65535), x4(0:65535), x8(0:65535))
    do i = 0, 65535
      h(i) = h16(i)
    end do
    if (fmt == 'f16') then
      call bk_from_f16(h, x4)
      call bk_from_f16(h, x8)
    else
      call bk_from_bf16(h, x4)
      call bk_from_bf16(h, x8)
    end if
    bad = 0
    do i = 0, 65535
      if (is_nan_pattern(fmt, i)) then
        if (.not. (ieee_is_nan(x4(i)) .and. ieee_is_nan(x8(i)))) bad = bad + 1
      else if (is_inf_pattern(fmt, i)) then
        if (abs(x8(i)) <= huge(x8) .or. abs(x4(i)) <= huge(x4) .or. &
             (x4(i) > 0) .neqv. .not. btest(i, 15)) bad = bad + 1
      else if (x4(i) /= decoded(fmt, i) .or. x8(i) /= decoded(fmt, i)) then
        bad = bad + 1
      end if
    end do
    call tap_ok(bad == 0, 'every ' // fmt // ' pattern widens to real(4) and real(8) exactly')
    call to_bits(fmt, x4, x8, b4, b8)
    trip = 0
    do i = 0, 65535
      if (is_nan_pattern(fmt, i)) then
        if (.not. is_nan_pattern(fmt, u16(b4(i))) .or. .not. is_nan_pattern(fmt, u16(b8(i)))) &
             trip = trip + 1
      else if (b4(i) /= h(i) .or. b8(i) /= h(i)) then
        trip = trip + 1
      end if
    end do
    call tap_ok(trip == 0, 'every ' // fmt // ' pattern comes back from both kinds (NaN as NaN)')
  end subroutine widen_all

  ! Midpoints between neighbours h and h + 1 (positive and negative) round
  ! to the even one; the reals one step either side to the nearer one.
  subroutine boundaries(fmt)
    character(len=*), intent(in) :: fmt
    integer, parameter :: n = 6
    integer :: top, i, k, bad, want(n)
    real(c_double) :: lo, hi, mid, x8(n)
    real(c_float) :: x4(n)
    integer(c_int16_t) :: b4(n), b8(n)
    top = merge(int(z'7C00'), int(z'7F80'), fmt == 'f16')    ! infinity
    bad = 0
    do i = 0, top - 1
      lo = decoded(fmt, i)
      if (i + 1 < top) then
        hi = decoded(fmt, i + 1)
      else
        hi = 2 * lo - decoded(fmt, i - 1)                     ! where overflow begins
      end if
      mid = (lo + hi) / 2
      x8 = [mid, nearest(mid, 1.0_c_double), nearest(mid, -1.0_c_double), &
           -mid, -nearest(mid, 1.0_c_double), -nearest(mid, -1.0_c_double)]
      x4 = [real(mid, c_float), nearest(real(mid, c_float), 1.0), &
           nearest(real(mid, c_float), -1.0), -real(mid, c_float), &
           -nearest(real(mid, c_float), 1.0), -nearest(real(mid, c_float), -1.0)]
      want(1:3) = [merge(i, i + 1, mod(i, 2) == 0), i + 1, i]
      want(4:6) = want(1:3) + 32768
      call to_bits(fmt, x4, x8, b4, b8)
      do k = 1, n
        if (u16(b4(k)) /= want(k) .or. u16(b8(k)) /= want(k)) bad = bad + 1
      end do
    end do
    call tap_ok(bad == 0, fmt // ': every midpoint to even, its neighbours to the nearer')
    if (fmt == 'f16') then
      call bk_to_f16(65520.0_c_double, b8(1))
      call bk_to_f16(nearest(65520.0, -1.0), b4(1))
      call tap_ok(u16(b8(1)) == int(z'7C00') .and. u16(b4(1)) == int(z'7BFF'), &
           'f16: 65520 overflows to infinity, the float below it is 65504')
    end if
  end subroutine boundaries

  ! Elemental on strided sections: every other row of a 2-D array.
  subroutine sections()
    real(c_float) :: a(7, 5), back(7, 5)
    integer(c_int16_t) :: bits(7, 5)
    integer :: i, j
    do j = 1, 5
      do i = 1, 7
        a(i, j) = real(i, c_float) / 3 + real(j, c_float) * 1000
      end do
    end do
    bits = 0
    back = -1
    call bk_to_bf16(a(1:7:2, :), bits(1:7:2, :))
    call bk_from_bf16(bits(1:7:2, :), back(1:7:2, :))
    call tap_ok(all(abs(back(1:7:2, :) - a(1:7:2, :)) <= abs(a(1:7:2, :)) * 2.0**(-8)) .and. &
         all(bits(2:6:2, :) == 0) .and. all(back(2:6:2, :) == -1), &
         'bk_to_bf16 and bk_from_bf16 on every other row, the others untouched')
  end subroutine sections

end program fortran_convert
