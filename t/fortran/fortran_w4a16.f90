! SPDX-License-Identifier: Apache-2.0
! The W4A16 family from Fortran on the host device:
! - quantize an f32 weight w(k, n) (K = 128, N = 64, groups of 64) to U8
!   values and F16 scales: every weight within half a scale of its
!   dequantized value, scales max|w| * 2/15, an all-zero group at scale 0;
! - pack: every nibble and scale where bk-w4a16(7) puts it (the layout
!   written again here, in Fortran); unpack gives the plain form back;
! - the GEMM with M = 3 f16 activations, without and with perm, against a
!   double-precision reference built from the quantized values and the
!   f16 scales read back, each weight rounded to f16;
! - GPTQ repack: a checkpoint built here from the quantized weight gives
!   PACK's words, an act-order g_idx its stable sort as perm and a GEMM
!   that matches, and bad checkpoints their reports
!   (bk_check_w4a16_repack_report);
! - zero points: PACK with a chained BkW4A16ZeroPointsInfo puts each zero
!   point where bk-w4a16(7) says, and the GEMM with it matches a reference
!   of (q - z) * scale;
! - bkCheckW4A16RepackReport on good and bad reports, and plan errors.
module fortran_w4a16_util
  use, intrinsic :: iso_c_binding
  use bk
  implicit none
  private
  public :: setup, teardown, scratch, run_plan, up8, up16, up32, upf, vals, f16_bits, f16_value
  public :: packed_word, packed_nibble, scale_position

  type(BkContext), save, public :: ctx
  type(BkQueue), save :: queue
  type(BkCommandBuffer), save :: cmd
  type(BkMemory), save :: mems(256)
  integer, save :: nmem = 0

contains

  subroutine setup()
    call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
    call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')
    call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, cmd), 'bkAllocateCommandBuffer')
  end subroutine setup

  subroutine teardown()
    integer :: i
    do i = 1, nmem
      call bkFreeMemory(ctx, mems(i))
    end do
    call bkFreeCommandBuffer(cmd)
    call bkDestroyContext(ctx)
  end subroutine teardown

  ! Device memory of at least `bytes` bytes, freed at teardown.
  function scratch(bytes) result(addr)
    integer(c_int64_t), intent(in) :: bytes
    integer(c_int64_t) :: addr
    if (nmem == size(mems)) error stop 'fortran_w4a16: too many allocations'
    nmem = nmem + 1
    call bk_allocate_memory(ctx, max(bytes, 8_c_int64_t), mems(nmem), addr)
  end function scratch

  ! Device copies of arrays (bkCopyToDevice called here: gfortran 12 stops
  ! with an internal error when an assumed-rank integer(c_int16_t) dummy is
  ! passed on to bk_copy_to_device).
  function up8(x) result(addr)
    integer(c_int8_t), intent(in), target, contiguous :: x(..)
    integer(c_int64_t) :: addr
    addr = scratch(bk_sizeof(x))
    call bk_check(bkCopyToDevice(ctx, addr, c_loc(x), bk_sizeof(x)), 'bkCopyToDevice')
  end function up8

  function up16(x) result(addr)
    integer(c_int16_t), intent(in), target, contiguous :: x(..)
    integer(c_int64_t) :: addr
    addr = scratch(bk_sizeof(x))
    call bk_check(bkCopyToDevice(ctx, addr, c_loc(x), bk_sizeof(x)), 'bkCopyToDevice')
  end function up16

  function up32(x) result(addr)
    integer(c_int32_t), intent(in), target, contiguous :: x(..)
    integer(c_int64_t) :: addr
    addr = scratch(bk_sizeof(x))
    call bk_check(bkCopyToDevice(ctx, addr, c_loc(x), bk_sizeof(x)), 'bkCopyToDevice')
  end function up32

  function upf(x) result(addr)
    real(c_float), intent(in), target, contiguous :: x(..)
    integer(c_int64_t) :: addr
    addr = scratch(bk_sizeof(x))
    call bk_check(bkCopyToDevice(ctx, addr, c_loc(x), bk_sizeof(x)), 'bkCopyToDevice')
  end function upf

  ! Runs plan once with these bindings (slot s in element s + 1) and the
  ! workspace it asks for, and waits.
  subroutine run_plan(plan, bindings)
    type(BkPlan), intent(in) :: plan
    integer(c_int64_t), intent(in) :: bindings(:)
    type(BkPlanProperties) :: props
    type(BkCommandBufferBeginInfo) :: begin
    integer(c_int64_t) :: ws
    call bk_get_plan_properties(plan, props)
    ws = 0
    if (props%workspaceSize > 0) ws = scratch(props%workspaceSize)
    call bk_check(bkBeginCommandBuffer(cmd, begin), 'bkBeginCommandBuffer')
    call bk_cmd_run(cmd, plan, bindings, ws, props%workspaceSize)
    call bk_check(bkEndCommandBuffer(cmd), 'bkEndCommandBuffer')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [cmd]), 'bkQueueSubmit')
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
  end subroutine run_plan

  ! n deterministic values in (-1, 1).
  function vals(n, seed) result(v)
    integer, intent(in) :: n, seed
    real(8) :: v(n)
    integer :: i
    do i = 1, n
      v(i) = sin(1.37d0 * i + 0.71d0 * seed) * cos(0.113d0 * i * seed + 0.3d0)
    end do
  end function vals

  ! The IEEE half-precision bits of x, rounded to nearest, ties to even
  ! (finite x; overflow gives infinity).
  elemental function f16_bits(x) result(h)
    real(8), intent(in) :: x
    integer(c_int16_t) :: h
    real(8) :: a, r, d
    integer :: e, m, b
    a = abs(x)
    if (a == 0) then
      b = 0
    else
      e = exponent(a) - 1                   ! a = 1.f * 2**e
      if (e < -14) then                     ! subnormal: units of 2**-24
        r = scale(a, 24)
      else
        r = scale(a, 10 - e)                ! in [1024, 2048)
      end if
      m = int(r)
      d = r - m
      if (d > 0.5d0 .or. (d == 0.5d0 .and. mod(m, 2) == 1)) m = m + 1
      if (e < -14) then
        b = m                               ! 1024 is the least normal
      else
        if (m == 2048) then
          m = 1024
          e = e + 1
        end if
        b = (e + 15) * 1024 + (m - 1024)
        if (e > 15) b = 31 * 1024
      end if
    end if
    if (x < 0) b = b + 32768
    if (b >= 32768) b = b - 65536
    h = int(b, c_int16_t)
  end function f16_bits

  ! The value of half-precision bits h (finite).
  elemental function f16_value(h) result(x)
    integer(c_int16_t), intent(in) :: h
    real(8) :: x
    integer :: b, e, m
    b = iand(int(h), 65535)
    e = iand(ishft(b, -10), 31)
    m = iand(b, 1023)
    if (e == 0) then
      x = scale(real(m, 8), -24)
    else
      x = scale(real(1024 + m, 8), e - 25)
    end if
    if (b >= 32768) x = -x
  end function f16_value

  ! bk-w4a16(7)'s packed layout, 0-based: W[k, n] is in row k / 16 of
  ! packed, at word packed_word(k, n), bits 4 * packed_nibble(k, n) ...
  elemental integer function packed_word(k, n)
    integer, intent(in) :: k, n
    packed_word = 128 * (n / 64) + 16 * mod(n, 8) + 4 * (mod(k, 8) / 2) + mod(n, 64) / 16
  end function packed_word

  elemental integer function packed_nibble(k, n)
    integer, intent(in) :: k, n
    packed_nibble = 4 * mod(k, 2) + 2 * (mod(n, 16) / 8) + mod(k, 16) / 8
  end function packed_nibble

  ! ... and column n's scale is at column scale_position(n) of packedScales.
  elemental integer function scale_position(n, perChannel)
    integer, intent(in) :: n
    logical, intent(in) :: perChannel
    if (perChannel) then
      scale_position = 32 * (n / 32) + 8 * (mod(n, 8) / 2) + 2 * (mod(n, 32) / 8) + mod(n, 2)
    else
      scale_position = 64 * (n / 64) + 8 * mod(n, 8) + mod(n, 64) / 8
    end if
  end function scale_position
end module fortran_w4a16_util

program fortran_w4a16
  use, intrinsic :: iso_c_binding
  use bk
  use fortran_tap
  use fortran_w4a16_util
  implicit none
  integer, parameter :: k = 128, n = 64, gs = 64, g = k / gs, m = 3
  real(c_float) :: w(k, n)
  integer(c_int8_t) :: q(k, n)                 ! quantized, 0..15
  integer(c_int16_t) :: s(g, n)                ! f16 scales
  integer(c_int32_t) :: p(2 * n, k / 16)       ! packed [K/16, 2N]
  integer(c_int16_t) :: ps(n, g)               ! packedScales [G, N]
  integer(c_int16_t) :: a(m, k)                ! f16 activations
  integer(c_int64_t) :: dq, ds, dp, dps, da

  call setup()
  call quantize()
  call pack_unpack()
  call gemm()
  call gemm_zero_points()
  call gptq()
  call report_checks()
  call plan_errors()
  call teardown()
  call tap_done()

contains

  ! The f16 value of each weight (q - 8) * scale of rows k1 of q with
  ! scale rows grp(k1) (1-based), as the GEMM rounds it.
  function dequant(qq, ss, grp) result(wd)
    integer(c_int8_t), intent(in) :: qq(:, :)
    integer(c_int16_t), intent(in) :: ss(:, :)
    integer, intent(in) :: grp(:)
    real(8) :: wd(size(qq, 1), size(qq, 2))
    integer :: kk, nn
    do nn = 1, size(qq, 2)
      do kk = 1, size(qq, 1)
        wd(kk, nn) = f16_value(f16_bits((qq(kk, nn) - 8) * f16_value(ss(grp(kk), nn))))
      end do
    end do
  end function dequant

  ! ---- Quantize --------------------------------------------------------------
  subroutine quantize()
    type(BkW4A16ConvertInfo) :: conv
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkPlanBindingProperties) :: bp
    real(8) :: sv, maxabs, err
    logical :: inrange, near, scaled, extremes
    integer :: kk, nn, gg, kmax

    w = real(reshape(vals(k * n, 1), [k, n]), c_float)
    w(:, 5) = 100 * w(:, 5)                      ! groups of other magnitudes
    w(:, 6) = 0.001 * w(:, 6)
    w(gs + 1:k, 7) = 0                           ! an all-zero group: scale 0
    conv%conversion = BK_W4A16_QUANTIZE
    conv%groupSize = gs
    conv%weight = bk_matrix_desc_of(w)             ! [K, N], strides [1, K]
    conv%quantized = bk_matrix_desc_of(q, BK_DATA_TYPE_U8)
    conv%scales = bk_matrix_desc_of(s, BK_DATA_TYPE_F16)
    call bk_create_plan(ctx, conv, plan)
    call bk_get_plan_properties(plan, props, bp)
    call tap_ok(props%operation == BK_STRUCTURE_TYPE_W4A16_CONVERT_INFO .and. &
         props%bindingCount == 5, 'quantize plan: operation W4A16_CONVERT_INFO, 5 binding slots')
    call tap_ok(bp%bindings(BK_W4A16_CONVERT_BINDING_QUANTIZED + 1)%written == BK_TRUE .and. &
         bp%bindings(BK_W4A16_CONVERT_BINDING_SCALES + 1)%written == BK_TRUE .and. &
         bp%bindings(BK_W4A16_CONVERT_BINDING_WEIGHT + 1)%written == BK_FALSE, &
         'quantize writes quantized and scales, reads weight')
    dq = scratch(bk_sizeof(q))
    ds = scratch(bk_sizeof(s))
    call run_plan(plan, [upf(w), dq, ds, 0_c_int64_t, 0_c_int64_t])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, q, dq)
    call bk_copy_from_device(ctx, s, ds)

    inrange = all(q >= 0 .and. q <= 15)
    near = .true.
    scaled = .true.
    extremes = .true.
    do nn = 1, n
      do gg = 1, g
        sv = f16_value(s(gg, nn))
        maxabs = maxval(abs(real(w((gg - 1) * gs + 1:gg * gs, nn), 8)))
        if (abs(sv - maxabs * 2 / 15) > 1d-3 * maxabs * 2 / 15) scaled = .false.
        do kk = (gg - 1) * gs + 1, gg * gs
          ! Within half a scale, or clamped to 15 past 7.5 scales (a scale
          ! rounded down by at most half an f16 ulp).
          err = abs(w(kk, nn) - (q(kk, nn) - 8) * sv)
          if (err > 0.5d0 * sv * (1 + 1d-6) .and. .not. (q(kk, nn) == 15 .and. &
               w(kk, nn) > 7.5d0 * sv .and. w(kk, nn) <= 7.5d0 * sv * (1 + 2d0**(-10)))) &
               near = .false.
        end do
        kmax = (gg - 1) * gs + maxloc(abs(w((gg - 1) * gs + 1:gg * gs, nn)), 1)
        if (maxabs > 0 .and. all(q(kmax, nn) /= [0_c_int8_t, 1_c_int8_t, 15_c_int8_t])) &
             extremes = .false.
      end do
    end do
    call tap_ok(inrange, 'quantized values are 0..15')
    call tap_ok(scaled, 'each scale is max|w| * 2/15 of its group and column, rounded to f16')
    call tap_ok(near, 'every weight is within half a scale of (q - 8) * scale, or clamped to 15')
    call tap_ok(extremes, 'the largest magnitude of each group becomes 15 (positive), 0 or 1')
    call tap_ok(s(2, 7) == 0 .and. all(q(gs + 1:k, 7) == 8), 'an all-zero group: scale 0, q = 8')
  end subroutine quantize

  ! ---- Pack, unpack ----------------------------------------------------------
  subroutine pack_unpack()
    type(BkW4A16ConvertInfo) :: conv
    type(BkPlan) :: plan
    type(BkPlanBindingProperties) :: bp
    type(BkPlanProperties) :: props
    integer(c_int8_t) :: q2(n, k)              ! row-major [K, N] this time
    integer(c_int16_t) :: s2(n, g)
    logical :: layout, scales_ok
    integer :: kk, nn, gg, word, nib
    integer(c_int64_t) :: dq2, ds2

    conv%conversion = BK_W4A16_PACK
    conv%groupSize = gs
    conv%quantized = bk_matrix_desc_of(q, BK_DATA_TYPE_U8)
    conv%scales = bk_matrix_desc_of(s, BK_DATA_TYPE_F16)
    conv%packed = bk_tensor_desc_of(p)            ! row-major [K/16, 2N]
    conv%packedScales = bk_tensor_desc_of(ps, BK_DATA_TYPE_F16)
    call tap_ok(all(conv%packed%extent(1:2) == [k / 16, 2 * n]), &
         'bk_tensor_desc_of(p(2*n, k/16)) is the packed [K/16, 2N]')
    call bk_create_plan(ctx, conv, plan)
    call bk_get_plan_properties(plan, props, bp)
    call tap_ok(bp%bindings(BK_W4A16_CONVERT_BINDING_PACKED + 1)%size == 4 * size(p) .and. &
         bp%bindings(BK_W4A16_CONVERT_BINDING_PACKED + 1)%written == BK_TRUE, &
         'pack plan: the packed slot is K/16 * 2N words, written')
    dp = scratch(bk_sizeof(p))
    dps = scratch(bk_sizeof(ps))
    call run_plan(plan, [0_c_int64_t, dq, ds, dp, dps])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, p, dp)
    call bk_copy_from_device(ctx, ps, dps)

    layout = .true.
    do nn = 0, n - 1
      do kk = 0, k - 1
        word = packed_word(kk, nn)
        nib = packed_nibble(kk, nn)
        if (ibits(p(word + 1, ishft(kk, -4) + 1), 4 * nib, 4) /= q(kk + 1, nn + 1)) layout = .false.
      end do
    end do
    call tap_ok(layout, 'every value is at the word and nibble bk-w4a16(7) gives')
    scales_ok = .true.
    do gg = 1, g
      do nn = 0, n - 1
        if (ps(scale_position(nn, .false.) + 1, gg) /= s(gg, nn + 1)) scales_ok = .false.
      end do
    end do
    call tap_ok(scales_ok, 'packed scales: column n at 8 * (n % 8) + (n % 64) / 8')

    ! Unpack into a row-major quantized and scales.
    conv%conversion = BK_W4A16_UNPACK
    conv%quantized = bk_tensor_desc_of(q2, BK_DATA_TYPE_U8)
    conv%scales = bk_tensor_desc_of(s2, BK_DATA_TYPE_F16)
    call bk_create_plan(ctx, conv, plan)
    q2 = 99
    s2 = 0
    dq2 = up8(q2)
    ds2 = up16(s2)
    call run_plan(plan, [0_c_int64_t, dq2, ds2, dp, dps])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, q2, dq2)
    call bk_copy_from_device(ctx, s2, ds2)
    call tap_ok(all(transpose(q2) == q) .and. all(transpose(s2) == s), &
         'unpack gives back the quantized values and scales bit for bit')
  end subroutine pack_unpack

  ! ---- GEMM ------------------------------------------------------------------
  subroutine gemm()
    type(BkW4A16GemmInfo) :: info
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkPlanBindingProperties) :: bp
    integer(c_int16_t) :: c(m, n)
    integer(c_int32_t) :: perm(k)
    real(8) :: wd(k, n), want(m, n)
    integer :: grp(k), kk
    integer(c_int64_t) :: dc

    a = f16_bits(reshape(vals(m * k, 2), [m, k]))
    do kk = 1, k
      grp(kk) = (kk - 1) / gs + 1
    end do
    wd = dequant(q, s, grp)
    want = matmul(f16_value(a), wd)

    info%groupSize = gs
    info%a = bk_matrix_desc_of(a, BK_DATA_TYPE_F16)     ! [M, K], strides [1, M]
    info%packed = bk_tensor_desc_of(p)
    info%packedScales = bk_tensor_desc_of(ps, BK_DATA_TYPE_F16)
    info%c = bk_matrix_desc_of(c, BK_DATA_TYPE_F16)
    call bk_create_plan(ctx, info, plan)
    call bk_get_plan_properties(plan, props, bp)
    call tap_ok(props%operation == BK_STRUCTURE_TYPE_W4A16_GEMM_INFO .and. &
         props%bindingCount == 5 .and. &
         bp%bindings(BK_W4A16_GEMM_BINDING_C + 1)%written == BK_TRUE, &
         'GEMM plan: operation W4A16_GEMM_INFO, 5 slots, c written')
    call tap_ok(props%precision%accumulatorType == BK_DATA_TYPE_F32 .and. &
         props%precision%deterministic == BK_TRUE, 'the W4A16 GEMM sums in f32, deterministically')
    da = up16(a)
    dc = scratch(bk_sizeof(c))
    call run_plan(plan, [da, dp, dps, 0_c_int64_t, dc])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, c, dc)
    call tap_near(reshape(f16_value(c), [m * n]), reshape(want, [m * n]), 2d-3, &
         'f16 GEMM, M = 3: C = A @ dequant(W) with f16 weights matches the reference')

    ! perm: column k of the product reads A(:, perm(k) + 1).
    perm = [(int(mod(37 * (kk - 1) + 11, k), c_int32_t), kk = 1, k)]
    want = matmul(f16_value(a(:, perm + 1)), wd)
    info%perm = bk_tensor_desc_of(perm)
    call bk_create_plan(ctx, info, plan)
    call run_plan(plan, [da, dp, dps, up32(perm), dc])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, c, dc)
    call tap_near(reshape(f16_value(c), [m * n]), reshape(want, [m * n]), 2d-3, &
         'f16 GEMM with perm reads A(m, perm(k)) for row k of the weight')
  end subroutine gemm

  ! ---- Zero points -------------------------------------------------------------
  subroutine gemm_zero_points()
    type(BkW4A16ZeroPointsInfo), target :: zp
    type(BkW4A16ConvertInfo) :: conv
    type(BkW4A16GemmInfo) :: info
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    integer(c_int8_t) :: z(g, n)                 ! plain zero points [G, N]
    integer(c_int32_t) :: pz(n / 8, g)           ! packedZeros [G, N/8]
    integer(c_int16_t) :: c(m, n)
    real(8) :: wd(k, n), want(m, n)
    integer :: kk, nn, gg, pos
    logical :: layout
    integer(c_int64_t) :: dz, dpz, dc

    do nn = 1, n
      do gg = 1, g
        z(gg, nn) = int(mod(7 * nn + 5 * gg, 16), c_int8_t)
      end do
    end do
    zp%zeros = bk_matrix_desc_of(z, BK_DATA_TYPE_U8)
    zp%packedZeros = bk_tensor_desc_of(pz)
    conv%pNext = c_loc(zp)
    conv%conversion = BK_W4A16_PACK
    conv%groupSize = gs
    conv%quantized = bk_matrix_desc_of(q, BK_DATA_TYPE_U8)
    conv%scales = bk_matrix_desc_of(s, BK_DATA_TYPE_F16)
    conv%packed = bk_tensor_desc_of(p)
    conv%packedScales = bk_tensor_desc_of(ps, BK_DATA_TYPE_F16)
    call bk_create_plan(ctx, conv, plan)
    call bk_get_plan_properties(plan, props)
    call tap_ok(props%bindingCount == 7, 'pack with zero points: 7 slots (zeros 5, packedZeros 6)')
    dz = up8(z)
    dpz = scratch(bk_sizeof(pz))
    call run_plan(plan, [0_c_int64_t, dq, ds, dp, dps, dz, dpz])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, pz, dpz)
    layout = .true.
    do gg = 1, g
      do nn = 0, n - 1
        pos = scale_position(nn, .false.)
        if (ibits(pz(pos / 8 + 1, gg), 4 * mod(pos, 8), 4) /= z(gg, nn + 1)) layout = .false.
      end do
    end do
    call tap_ok(layout, 'each zero point is at nibble p % 8 of word p / 8, p its scale''s position')

    ! C = A @ ((q - z) * scale), each weight rounded to f16.
    do nn = 1, n
      do kk = 1, k
        gg = (kk - 1) / gs + 1
        wd(kk, nn) = f16_value(f16_bits((q(kk, nn) - z(gg, nn)) * f16_value(s(gg, nn))))
      end do
    end do
    want = matmul(f16_value(a), wd)
    info%pNext = c_loc(zp)
    zp%zeros = BkTensorDesc()
    info%groupSize = gs
    info%a = bk_matrix_desc_of(a, BK_DATA_TYPE_F16)
    info%packed = bk_tensor_desc_of(p)
    info%packedScales = bk_tensor_desc_of(ps, BK_DATA_TYPE_F16)
    info%c = bk_matrix_desc_of(c, BK_DATA_TYPE_F16)
    call bk_create_plan(ctx, info, plan)
    call bk_get_plan_properties(plan, props)
    call tap_ok(props%bindingCount == 6, 'GEMM with zero points: 6 slots (packedZeros 5)')
    dc = scratch(bk_sizeof(c))
    call run_plan(plan, [up16(a), dp, dps, 0_c_int64_t, dc, dpz])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, c, dc)
    call tap_near(reshape(f16_value(c), [m * n]), reshape(want, [m * n]), 2d-3, &
         'f16 GEMM with zero points: C = A @ ((q - z) * scale) matches the reference')
  end subroutine gemm_zero_points

  ! ---- GPTQ repack -----------------------------------------------------------

  ! The checkpoint tensors of q: qweight(K/8, N), 8 rows per word, and
  ! qzeros(G, N/8) all holding zero.
  subroutine gptq_tensors(qq, zero, qw, qz)
    integer(c_int8_t), intent(in) :: qq(:, :)
    integer, intent(in) :: zero
    integer(c_int32_t), intent(out) :: qw(:, :), qz(:, :)
    integer :: r, i, nn
    qw = 0
    do nn = 1, size(qq, 2)
      do r = 1, size(qq, 1) / 8
        do i = 0, 7
          qw(r, nn) = ior(qw(r, nn), ishft(int(qq(8 * (r - 1) + i + 1, nn), c_int32_t), 4 * i))
        end do
      end do
    end do
    qz = 0
    do i = 0, 7
      qz = ior(qz, ishft(int(zero, c_int32_t), 4 * i))
    end do
  end subroutine gptq_tensors

  subroutine gptq()
    type(BkW4A16GptqRepackInfo) :: info
    type(BkW4A16GemmInfo) :: gi
    type(BkW4A16RepackReport) :: report
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    integer(c_int32_t) :: qw(k / 8, n), qz(g, n / 8), gidx(k), perm(k), want_perm(k)
    integer(c_int32_t) :: p2(2 * n, k / 16)
    integer(c_int16_t) :: ps2(n, g), c(m, n)
    real(8) :: want(m, n)
    integer(c_int64_t) :: dqw, dqz, dg, dp2, dps2, dperm, drep, dc
    integer(c_int) :: st
    character(len=:), allocatable :: msg
    logical :: layout
    integer :: kk, nn

    call gptq_tensors(q, 8, qw, qz)
    info%zeros = BK_W4A16_GPTQ_ZEROS_EXACT
    info%groupSize = gs
    info%qweight = bk_matrix_desc_of(qw)          ! [K/8, N], strides [1, K/8]
    info%scales = bk_matrix_desc_of(s, BK_DATA_TYPE_F16)
    info%qzeros = bk_matrix_desc_of(qz)
    info%packed = bk_tensor_desc_of(p2)
    info%packedScales = bk_tensor_desc_of(ps2, BK_DATA_TYPE_F16)
    info%perm = bk_tensor_desc_of(perm)
    call bk_create_plan(ctx, info, plan)
    call bk_get_plan_properties(plan, props)
    call tap_ok(props%operation == BK_STRUCTURE_TYPE_W4A16_GPTQ_REPACK_INFO .and. &
         props%bindingCount == 8, 'repack plan: operation W4A16_GPTQ_REPACK_INFO, 8 slots')
    dqw = up32(qw)
    dqz = up32(qz)
    dp2 = scratch(bk_sizeof(p2))
    dps2 = scratch(bk_sizeof(ps2))
    dperm = scratch(bk_sizeof(perm))
    drep = scratch(32_c_int64_t)
    call run_plan(plan, [dqw, ds, dqz, 0_c_int64_t, dp2, dps2, dperm, drep])
    call bkDestroyPlan(plan)
    call bk_check_w4a16_repack_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_SUCCESS .and. report%status == BK_W4A16_REPACK_STATUS_OK .and. &
         report%identityPermutation == BK_TRUE, &
         'a symmetric checkpoint without g_idx: report OK, identity permutation', msg)
    call bk_copy_from_device(ctx, p2, dp2)
    call bk_copy_from_device(ctx, ps2, dps2)
    call bk_copy_from_device(ctx, perm, dperm)
    call tap_ok(all(p2 == p) .and. all(ps2 == ps), 'the repacked words and scales are PACK''s')
    call tap_ok(all(perm == [(kk - 1, kk = 1, k)]), 'perm is 0, 1, ..., K - 1')

    ! Legacy zeros (7 stored for 8) and an act-order g_idx: row k (0-based)
    ! in group k % 2, so perm is the even rows, then the odd ones.
    call gptq_tensors(q, 7, qw, qz)
    gidx = [(int(mod(kk - 1, 2), c_int32_t), kk = 1, k)]
    want_perm = [(int(2 * (kk - 1), c_int32_t), kk = 1, k / 2), &
         (int(2 * (kk - 1) + 1, c_int32_t), kk = 1, k / 2)]
    info%zeros = BK_W4A16_GPTQ_ZEROS_MINUS_ONE
    info%gIdx = bk_tensor_desc_of(gidx)
    call bk_create_plan(ctx, info, plan)
    call bk_copy_to_device(ctx, dqz, qz)
    dg = up32(gidx)
    call run_plan(plan, [dqw, ds, dqz, dg, dp2, dps2, dperm, drep])
    call bkDestroyPlan(plan)
    call bk_check_w4a16_repack_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_SUCCESS .and. report%identityPermutation == BK_FALSE, &
         'act-order with legacy zeros (7): report OK, not the identity', msg)
    call bk_copy_from_device(ctx, p2, dp2)
    call bk_copy_from_device(ctx, perm, dperm)
    call tap_ok(all(perm == want_perm), 'perm: rows sorted by group, stable')
    layout = .true.
    do nn = 0, n - 1
      do kk = 0, k - 1                             ! packed row kk holds row perm(kk + 1)
        if (ibits(p2(packed_word(kk, nn) + 1, ishft(kk, -4) + 1), 4 * packed_nibble(kk, nn), 4) /= &
             q(perm(kk + 1) + 1, nn + 1)) layout = .false.
      end do
    end do
    call tap_ok(layout, 'the rows are packed in perm''s order')

    ! The GEMM of the act-order weight with its perm: A @ the checkpoint's
    ! weight, row k scaled by group g_idx(k).
    want = matmul(f16_value(a), dequant(q, s, gidx + 1))
    gi%groupSize = gs
    gi%a = bk_matrix_desc_of(a, BK_DATA_TYPE_F16)
    gi%packed = bk_tensor_desc_of(p2)
    gi%packedScales = bk_tensor_desc_of(ps2, BK_DATA_TYPE_F16)
    gi%perm = bk_tensor_desc_of(perm)
    gi%c = bk_matrix_desc_of(c, BK_DATA_TYPE_F16)
    call bk_create_plan(ctx, gi, plan)
    dc = scratch(bk_sizeof(c))
    call run_plan(plan, [da, dp2, dps2, dperm, dc])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, c, dc)
    call tap_near(reshape(f16_value(c), [m * n]), reshape(want, [m * n]), 2d-3, &
         'GEMM of the act-order repack with its perm is A @ the checkpoint''s weight')

    ! An asymmetric zero point (7 under EXACT) at group 1, column 10.
    call gptq_tensors(q, 8, qw, qz)
    qz(2, 2) = ior(iand(qz(2, 2), not(ishft(15_c_int32_t, 8))), ishft(7_c_int32_t, 8))
    info%zeros = BK_W4A16_GPTQ_ZEROS_EXACT
    info%gIdx = BkTensorDesc()
    call bk_create_plan(ctx, info, plan)
    call bk_copy_to_device(ctx, dqz, qz)
    call run_plan(plan, [dqw, ds, dqz, 0_c_int64_t, dp2, dps2, dperm, drep])
    call bkDestroyPlan(plan)
    call bk_check_w4a16_repack_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_UNSUPPORTED .and. &
         report%status == BK_W4A16_REPACK_STATUS_ASYMMETRIC .and. report%badCount == 1 .and. &
         report%firstBadRow == 1 .and. report%firstBadColumn == 10, &
         'a zero point of 7 under ZEROS_EXACT: ASYMMETRIC at group 1, column 10, UNSUPPORTED', msg)

    ! A g_idx entry out of range (row 5 in group 2 of 0..1) also leaves the
    ! groups uneven and a zero point bad: the bad index is reported.
    do kk = 1, k
      gidx(kk) = int((kk - 1) / gs, c_int32_t)
    end do
    gidx(6) = 2
    info%gIdx = bk_tensor_desc_of(gidx)
    call bk_create_plan(ctx, info, plan)
    call bk_copy_to_device(ctx, dg, gidx)
    call run_plan(plan, [dqw, ds, dqz, dg, dp2, dps2, dperm, drep])
    call bkDestroyPlan(plan)
    call bk_check_w4a16_repack_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. &
         report%status == BK_W4A16_REPACK_STATUS_BAD_GROUP_INDEX .and. report%badCount == 1 .and. &
         report%firstBadRow == 5 .and. report%firstBadColumn == 2, &
         'g_idx(5) = 2 of 2 groups: BAD_GROUP_INDEX at row 5, before uneven groups and zeros', msg)

    ! Uneven groups: row 5 moved to group 1 (65 rows against 63).
    gidx(6) = 1
    call gptq_tensors(q, 8, qw, qz)
    call bk_copy_to_device(ctx, dqz, qz)
    call bk_copy_to_device(ctx, dg, gidx)
    call bk_create_plan(ctx, info, plan)
    call run_plan(plan, [dqw, ds, dqz, dg, dp2, dps2, dperm, drep])
    call bkDestroyPlan(plan)
    call bk_check_w4a16_repack_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. &
         report%status == BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS .and. &
         report%firstBadRow == 0 .and. report%firstBadColumn == 63, &
         'a row moved to group 1: UNEVEN_GROUPS, group 0 with 63 rows', msg)
  end subroutine gptq

  ! ---- bkCheckW4A16RepackReport ----------------------------------------------
  subroutine report_checks()
    type(BkW4A16RepackReport) :: report
    integer(c_int) :: res
    character(len=:), allocatable :: msg
    call tap_ok(bkCheckW4A16RepackReport(report) == BK_SUCCESS, &
         'bkCheckW4A16RepackReport of a default (OK) report: BK_SUCCESS')
    report%status = BK_W4A16_REPACK_STATUS_UNEVEN_GROUPS
    report%badCount = 2
    report%firstBadRow = 3
    report%firstBadColumn = 65
    res = bkCheckW4A16RepackReport(report)
    msg = bk_last_error_message()
    call tap_ok(res == BK_ERROR_INVALID_ARGUMENT, &
         'an UNEVEN_GROUPS report: BK_ERROR_INVALID_ARGUMENT')
    call tap_ok(index(msg, '3') > 0 .and. index(msg, '65') > 0, &
         'its message names group 3 and its 65 rows', msg)
    report%status = BK_W4A16_REPACK_STATUS_ASYMMETRIC
    call tap_ok(bkCheckW4A16RepackReport(report) == BK_ERROR_UNSUPPORTED, &
         'an ASYMMETRIC report: BK_ERROR_UNSUPPORTED')
    report%status = 9
    call tap_ok(bkCheckW4A16RepackReport(report) == BK_ERROR_INVALID_ARGUMENT, &
         'an unknown status: BK_ERROR_INVALID_ARGUMENT')
  end subroutine report_checks

  ! ---- Plan errors -------------------------------------------------------------
  subroutine plan_errors()
    type(BkW4A16GemmInfo) :: info
    type(BkPlan) :: plan
    integer(c_int) :: st
    character(len=:), allocatable :: msg

    info%groupSize = 48
    info%a = bk_matrix_desc(BK_DATA_TYPE_F16, [m, k])
    info%packed = bk_tensor_desc(BK_DATA_TYPE_I32, [2 * n, k / 16])
    info%packedScales = bk_tensor_desc(BK_DATA_TYPE_F16, [n, g])
    info%c = bk_matrix_desc(BK_DATA_TYPE_F16, [m, n])
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. bk_is_null(plan) .and. &
         index(msg, 'groupSize') > 0, &
         'groupSize = 48: BK_ERROR_INVALID_ARGUMENT naming groupSize', msg)

    info%groupSize = BK_W4A16_GROUP_PER_CHANNEL
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT, &
         'per channel with 2 rows of scales: BK_ERROR_INVALID_ARGUMENT', msg)

    info%groupSize = gs
    info%packed = bk_tensor_desc(BK_DATA_TYPE_I32, [2 * 48, k / 16])
    info%packedScales = bk_tensor_desc(BK_DATA_TYPE_F16, [48, g])
    info%c = bk_matrix_desc(BK_DATA_TYPE_F16, [m, 48])
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT, 'N = 48: BK_ERROR_INVALID_ARGUMENT', msg)

    info%packed = bk_tensor_desc(BK_DATA_TYPE_I32, [2 * n, k / 16])
    info%packedScales = bk_tensor_desc(BK_DATA_TYPE_F32, [n, g])
    info%a = bk_matrix_desc(BK_DATA_TYPE_F32, [m, k])
    info%c = bk_matrix_desc(BK_DATA_TYPE_F32, [m, n])
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_UNSUPPORTED, 'f32 activations: BK_ERROR_UNSUPPORTED', msg)
  end subroutine plan_errors
end program fortran_w4a16
