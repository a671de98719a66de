! SPDX-License-Identifier: Apache-2.0
! Reference gated activations for the Fortran tests, in extended precision
! (long double where the processor has it), written from the formulas in
! bk_gated_activation.h, independent of libbk.
module fortran_gated_ref
  use bk, only: BK_GATED_ACTIVATION_GLU, BK_GATED_ACTIVATION_REGLU, BK_GATED_ACTIVATION_SWIGLU, &
       BK_GATED_ACTIVATION_GEGLU, BK_GATED_ACTIVATION_GEGLU_TANH
  implicit none
  private
  public :: xp, gate, gate_deriv, kind_name, NUM_KINDS, test_kinds, random_values

  integer, parameter :: xp = selected_real_kind(18)
  integer, parameter :: NUM_KINDS = 5
  integer, parameter :: test_kinds(NUM_KINDS) = [BK_GATED_ACTIVATION_GLU, &
       BK_GATED_ACTIVATION_REGLU, BK_GATED_ACTIVATION_SWIGLU, BK_GATED_ACTIVATION_GEGLU, &
       BK_GATED_ACTIVATION_GEGLU_TANH]
  real(xp), parameter :: PI = 3.14159265358979323846264338327950288_xp
  real(xp), parameter :: GELU_C = 0.044715_xp

  integer(8), save :: lcg_state = 20240607

contains

  ! n deterministic values in (-3, 3) (the MINSTD generator, exact in
  ! 64-bit integers, so every run and platform sees the same numbers),
  ! rounded to single precision when single is .true. so that references
  ! start from what libbk sees.
  function random_values(n, single) result(v)
    integer, intent(in) :: n
    logical, intent(in) :: single
    real(8) :: v(n)
    integer :: i
    do i = 1, n
      lcg_state = mod(48271_8 * lcg_state, 2147483647_8)
      v(i) = 6 * real(lcg_state, 8) / 2147483647.0d0 - 3
    end do
    if (single) v = real(real(v, 4), 8)
  end function random_values

  function kind_name(kind) result(name)
    integer, intent(in) :: kind
    character(len=:), allocatable :: name
    select case (kind)
    case (BK_GATED_ACTIVATION_GLU)
      name = 'GLU'
    case (BK_GATED_ACTIVATION_REGLU)
      name = 'ReGLU'
    case (BK_GATED_ACTIVATION_SWIGLU)
      name = 'SwiGLU'
    case (BK_GATED_ACTIVATION_GEGLU)
      name = 'GeGLU'
    case (BK_GATED_ACTIVATION_GEGLU_TANH)
      name = 'GeGLU-tanh'
    case default
      name = '?'
    end select
  end function kind_name

  elemental real(xp) function sigmoid(b)
    real(xp), intent(in) :: b
    sigmoid = 1 / (1 + exp(-b))
  end function sigmoid

  ! gate(b): y = a * gate(b).
  elemental real(xp) function gate(kind, b)
    integer, intent(in) :: kind
    real(xp), intent(in) :: b
    real(xp) :: u
    select case (kind)
    case (BK_GATED_ACTIVATION_GLU)
      gate = sigmoid(b)
    case (BK_GATED_ACTIVATION_REGLU)
      gate = max(b, 0.0_xp)
    case (BK_GATED_ACTIVATION_SWIGLU)
      gate = b * sigmoid(b)
    case (BK_GATED_ACTIVATION_GEGLU)
      gate = b * 0.5_xp * (1 + erf(b / sqrt(2.0_xp)))
    case (BK_GATED_ACTIVATION_GEGLU_TANH)
      u = sqrt(2 / PI) * (b + GELU_C * b**3)
      gate = 0.5_xp * b * (1 + tanh(u))
    case default
      gate = 0
    end select
  end function gate

  ! d gate / d b; ReGLU's at b = 0 is 0, as libbk documents.
  elemental real(xp) function gate_deriv(kind, b)
    integer, intent(in) :: kind
    real(xp), intent(in) :: b
    real(xp) :: s, u, t
    select case (kind)
    case (BK_GATED_ACTIVATION_GLU)
      s = sigmoid(b)
      gate_deriv = s * (1 - s)
    case (BK_GATED_ACTIVATION_REGLU)
      gate_deriv = merge(1.0_xp, 0.0_xp, b > 0)
    case (BK_GATED_ACTIVATION_SWIGLU)
      s = sigmoid(b)
      gate_deriv = s + b * s * (1 - s)
    case (BK_GATED_ACTIVATION_GEGLU)
      gate_deriv = 0.5_xp * (1 + erf(b / sqrt(2.0_xp))) + b * exp(-b * b / 2) / sqrt(2 * PI)
    case (BK_GATED_ACTIVATION_GEGLU_TANH)
      u = sqrt(2 / PI) * (b + GELU_C * b**3)
      t = tanh(u)
      gate_deriv = 0.5_xp * (1 + t) + 0.5_xp * b * (1 - t * t) * sqrt(2 / PI) &
           * (1 + 3 * GELU_C * b * b)
    case default
      gate_deriv = 0
    end select
  end function gate_deriv
end module fortran_gated_ref
