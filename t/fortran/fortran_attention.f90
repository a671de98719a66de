! SPDX-License-Identifier: Apache-2.0
! Block-sparse attention from Fortran on the host device, checked against
! a naive double-precision reference written here (the full score matrix,
! a two-pass softmax, the textbook gradients):
! - forward and backward with a MASK pattern and the causal bit, grouped
!   query heads (H = 2 on Hkv = 1), Lq /= Lk (the causal diagonal aligned
!   bottom right), D /= Dv, partial last blocks, a pattern shared by the
!   batch (Bp = 1) and one per head (Hp = H), and a query block that sees
!   no key (y = 0, lse = -inf, zero gradients);
! - f32 on arrays q(d, l, h, b), the contiguous [B, H, L, D], and f64 on
!   arrays q(d, h, l, b), the [B, L, H, D] layout, bound as strided views
!   ('DHLB');
! - the LIST form of the same pattern, with repeats, another order and
!   junk past the counts, gives the same result; a count past the
!   capacity turns that head's outputs into NaN;
! - slot counts and names, the backward's workspace, and errors: plan
!   errors name the field, helper errors the argument.
module fortran_attention_util
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_negative_inf
  use bk
  implicit none
  private
  public :: setup, teardown, run_plan, vals, reference, visible, no_inf

  ! The problem every check shares.
  integer, parameter, public :: nb = 2, nh = 2, nhkv = 1, lq = 40, lk = 56, d = 16, dv = 8
  integer, parameter, public :: bsq = 16, bsk = 16
  integer, parameter, public :: nbq = 3, nbk = 4    ! ceil(lq / bsq), ceil(lk / bsk): partial last

  type(BkContext), save, public :: ctx
  type(BkQueue), save :: queue
  type(BkCommandBuffer), save :: cmd
  type(BkMemory), save :: mems(64)
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

  ! Runs plan once with these bindings (slot s in element s + 1) and a
  ! fresh workspace of the size it asks for, filled with junk: it is
  ! scratch, which no run may expect cleared. Returns that size.
  function run_plan(plan, bindings) result(wsSize)
    type(BkPlan), intent(in) :: plan
    integer(c_int64_t), intent(in) :: bindings(:)
    integer(c_int64_t) :: wsSize
    type(BkPlanProperties) :: props
    type(BkCommandBufferBeginInfo) :: begin
    integer(c_int64_t) :: ws
    integer(c_int8_t), allocatable, target :: junk(:)
    call bk_get_plan_properties(plan, props)
    wsSize = props%workspaceSize
    ws = 0
    if (wsSize > 0) then
      if (nmem == size(mems)) error stop 'fortran_attention: too many allocations'
      nmem = nmem + 1
      call bk_allocate_memory(ctx, wsSize, mems(nmem), ws)
      allocate (junk(wsSize))
      junk = int(z'5A', c_int8_t)
      call bk_copy_to_device(ctx, ws, junk)
    end if
    call bk_check(bkBeginCommandBuffer(cmd, begin), 'bkBeginCommandBuffer')
    call bk_cmd_run(cmd, plan, bindings, ws, wsSize)
    call bk_check(bkEndCommandBuffer(cmd), 'bkEndCommandBuffer')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [cmd]), 'bkQueueSubmit')
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
  end function run_plan

  ! n deterministic values in (-1, 1).
  function vals(n, seed) result(v)
    integer, intent(in) :: n, seed
    real(8) :: v(n)
    integer :: i
    do i = 1, n
      v(i) = sin(1.37d0 * i + 0.71d0 * seed) * cos(0.113d0 * i * seed + 0.3d0)
    end do
  end function vals

  ! Does query i see key j (0-based) in head h (1-based)? The mask's block
  ! and the causal rule j <= i + (Lk - Lq).
  logical function visible(mask, i, j, h)
    integer(c_int8_t), intent(in) :: mask(:, :, :)
    integer, intent(in) :: i, j, h
    visible = mask(j / bsk + 1, i / bsq + 1, h) /= 0 .and. j <= i + (lk - lq)
  end function visible

  ! -inf as a huge finite number, so that the ordinary comparisons catch
  ! a finite value where -inf is wanted, and the other way round.
  elemental real(8) function no_inf(x)
    real(8), intent(in) :: x
    no_inf = x
    if (x < -huge(x)) no_inf = -1d30
  end function no_inf

  ! The reference, in the canonical layout q(d, lq, h, b) and so on:
  ! s = scale q.k over visible keys, lse = log sum exp s, P = exp(s - lse),
  ! y = P v; backward: Di = dy.y, dP = dy.v, dS = P (dP - Di),
  ! dq = scale dS k, dk = scale dS^T q (summed over the query heads of a
  ! kv head), dv = P^T dy.
  subroutine reference(mask, scale, q, k, v, dy, y, lse, dq, dk, dvv)
    integer(c_int8_t), intent(in) :: mask(:, :, :)
    real(8), intent(in) :: scale, q(d, lq, nh, nb), k(d, lk, nhkv, nb), v(dv, lk, nhkv, nb)
    real(8), intent(in) :: dy(dv, lq, nh, nb)
    real(8), intent(out) :: y(dv, lq, nh, nb), lse(lq, nh, nb), dq(d, lq, nh, nb)
    real(8), intent(out) :: dk(d, lk, nhkv, nb), dvv(dv, lk, nhkv, nb)
    real(8) :: s(lk), p(lk), m, di, ds
    logical :: seen(lk)
    integer :: b, h, g, i, j
    dk = 0
    dvv = 0
    do b = 1, nb
      do h = 1, nh
        g = (h - 1) / (nh / nhkv) + 1
        do i = 1, lq
          do j = 1, lk
            seen(j) = visible(mask, i - 1, j - 1, h)
            s(j) = scale * dot_product(q(:, i, h, b), k(:, j, g, b))
          end do
          y(:, i, h, b) = 0
          dq(:, i, h, b) = 0
          if (.not. any(seen)) then
            lse(i, h, b) = ieee_value(m, ieee_negative_inf)
            cycle
          end if
          m = maxval(s, mask=seen)
          lse(i, h, b) = m + log(sum(exp(s - m), mask=seen))
          p = merge(exp(s - lse(i, h, b)), 0d0, seen)
          do j = 1, lk
            y(:, i, h, b) = y(:, i, h, b) + p(j) * v(:, j, g, b)
          end do
          di = dot_product(dy(:, i, h, b), y(:, i, h, b))
          do j = 1, lk
            ds = p(j) * (dot_product(dy(:, i, h, b), v(:, j, g, b)) - di)
            dq(:, i, h, b) = dq(:, i, h, b) + scale * ds * k(:, j, g, b)
            dk(:, j, g, b) = dk(:, j, g, b) + scale * ds * q(:, i, h, b)
            dvv(:, j, g, b) = dvv(:, j, g, b) + p(j) * dy(:, i, h, b)
          end do
        end do
      end do
    end do
  end subroutine reference
end module fortran_attention_util

program fortran_attention
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use bk
  use fortran_tap
  use fortran_attention_util
  implicit none
  ! The pattern, per query head (Hp = H, Bp = 1): mask(key block + 1,
  ! query block + 1, h). Head 1 is a causal sliding window of two blocks
  ! with a sink (key block 0); in head 2, query block 0 attends only to
  ! key block 3, which the causal rule hides from it (rows 0..15 see no
  ! key), block 1 to key blocks 1 and 3, block 2 to all.
  integer(c_int8_t), target :: mask(nbk, nbq, nh)
  real(8) :: q(d, lq, nh, nb), k(d, lk, nhkv, nb), v(dv, lk, nhkv, nb), dy(dv, lq, nh, nb)
  real(8) :: yr(dv, lq, nh, nb), lser(lq, nh, nb), dqr(d, lq, nh, nb), dkr(d, lk, nhkv, nb)
  real(8) :: dvr(dv, lk, nhkv, nb), scale

  mask = 0
  mask([1, 2], 1, 1) = 1
  mask([1, 2, 3], 2, 1) = 1
  mask([1, 3, 4], 3, 1) = 1
  mask(4, 1, 2) = 1
  mask([2, 4], 2, 2) = 1
  mask(:, 3, 2) = 1
  q = reshape(vals(size(q), 1), shape(q))
  k = reshape(vals(size(k), 2), shape(k))
  v = reshape(vals(size(v), 3), shape(v))
  dy = reshape(vals(size(dy), 4), shape(dy))
  scale = 1 / sqrt(real(d, 8))
  call reference(mask, scale, q, k, v, dy, yr, lser, dqr, dkr, dvr)
  ! The reference itself: head 2's first query block sees nothing.
  call tap_ok(all(lser(1:bsq, 2, :) < -huge(1d0)) .and. all(yr(:, 1:bsq, 2, :) == 0) .and. &
       all(lser(bsq + 1:, 2, :) > -huge(1d0)) .and. all(lser(:, 1, :) > -huge(1d0)), &
       'reference: exactly the rows of head 2, query block 0 are empty')

  call setup()
  call errors()
  call f32_heads_first()
  call f64_tokens_first()
  call list_form()
  call teardown()
  call tap_done()

contains

  ! ---- f32, q(d, l, h, b): the contiguous [B, H, L, D] --------------------
  subroutine f32_heads_first()
    real(c_float), target :: q4(d, lq, nh, nb), k4(d, lk, nhkv, nb), v4(dv, lk, nhkv, nb)
    real(c_float), target :: y4(dv, lq, nh, nb), lse4(lq, nh, nb), dy4(dv, lq, nh, nb)
    real(c_float), target :: dq4(d, lq, nh, nb), dk4(d, lk, nhkv, nb), dv4(dv, lk, nhkv, nb)
    type(BkAttentionInfo) :: fwd
    type(BkAttentionBackwardInfo) :: bwd
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkPlanBindingProperties) :: slots
    integer(c_int64_t) :: bind(12), ws
    q4 = real(q, c_float)
    k4 = real(k, c_float)
    v4 = real(v, c_float)
    dy4 = real(dy, c_float)

    ! The inputs as the library sees them: f32 values, exact in f64.
    call reference(mask, scale, real(q4, 8), real(k4, 8), real(v4, 8), real(dy4, 8), yr, lser, &
         dqr, dkr, dvr)

    call bk_attention_info_of(fwd, q4, k4, v4, y4, lse4)
    call tap_ok(all(fwd%q%extent(1:4) == [nb, nh, lq, d]) .and. &
         all(fwd%q%stride(1:4) == [nh * lq * d, lq * d, d, 1]) .and. &
         all(fwd%lse%extent(1:3) == [nb, nh, lq]) .and. abs(fwd%scale - scale) < 1d-15, &
         'bk_attention_info_of: q(d, l, h, b) is [B, H, L, D], row-major; scale 1/sqrt(D)')
    fwd%flags = BK_ATTENTION_CAUSAL_BIT
    fwd%pattern = bk_attention_mask_pattern(mask, bsq, bsk)
    call tap_ok(fwd%pattern%mask%rank == 3 .and. &
         all(fwd%pattern%mask%extent(1:3) == [1, nh, nbq * nbk]), &
         'bk_attention_mask_pattern: mask(nbk, nbq, h) is [1, H, nbq * nbk]')
    call bk_create_plan(ctx, fwd, plan)
    call bk_get_plan_properties(plan, props, slots)
    call tap_ok(props%bindingCount == 8 .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BINDING_Q + 1)%name) == 'q' .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BINDING_MASK + 1)%name) == 'mask' .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BINDING_LSE + 1)%name) == 'lse' .and. &
         slots%bindings(BK_ATTENTION_BINDING_Y + 1)%written == BK_TRUE .and. &
         slots%bindings(BK_ATTENTION_BINDING_COUNTS + 1)%size == 0, &
         'forward: 8 slots, named as the constants say; y written; counts unused')
    bind = 0
    bind(BK_ATTENTION_BINDING_Q + 1) = bk_host_address(q4)
    bind(BK_ATTENTION_BINDING_K + 1) = bk_host_address(k4)
    bind(BK_ATTENTION_BINDING_V + 1) = bk_host_address(v4)
    bind(BK_ATTENTION_BINDING_MASK + 1) = bk_host_address(mask)
    bind(BK_ATTENTION_BINDING_Y + 1) = bk_host_address(y4)
    bind(BK_ATTENTION_BINDING_LSE + 1) = bk_host_address(lse4)
    y4 = -7
    lse4 = -7
    ws = run_plan(plan, bind(1:8))
    call bkDestroyPlan(plan)
    call tap_near(real(pack(y4, .true.), 8), pack(yr, .true.), 1d-6, 'f32 forward: y')
    call tap_near(no_inf(real(pack(lse4, .true.), 8)), no_inf(pack(lser, .true.)), 1d-6, &
         'f32 forward: lse, -inf on the empty rows')
    call tap_ok(all(y4(:, 1:bsq, 2, :) == 0), 'f32 forward: y = 0 on the empty rows')

    call bk_attention_backward_info_of(bwd, q4, k4, v4, y4, lse4, dy4, dq4, dk4, dv4)
    bwd%flags = fwd%flags
    bwd%pattern = fwd%pattern
    call bk_create_plan(ctx, bwd, plan)
    call bk_get_plan_properties(plan, props, slots)
    call tap_ok(props%bindingCount == 12 .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BACKWARD_BINDING_DY + 1)%name) == 'dy' .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BACKWARD_BINDING_DV + 1)%name) == 'dv' .and. &
         slots%bindings(BK_ATTENTION_BACKWARD_BINDING_DK + 1)%written == BK_TRUE .and. &
         slots%bindings(BK_ATTENTION_BACKWARD_BINDING_Y + 1)%written == BK_FALSE, &
         'backward: 12 slots, named as the constants say; dk written, y read')
    bind(BK_ATTENTION_BACKWARD_BINDING_DY + 1) = bk_host_address(dy4)
    bind(BK_ATTENTION_BACKWARD_BINDING_DQ + 1) = bk_host_address(dq4)
    bind(BK_ATTENTION_BACKWARD_BINDING_DK + 1) = bk_host_address(dk4)
    bind(BK_ATTENTION_BACKWARD_BINDING_DV + 1) = bk_host_address(dv4)
    dq4 = -7
    dk4 = -7
    dv4 = -7
    ws = run_plan(plan, bind)
    call bkDestroyPlan(plan)
    call tap_ok(ws >= int(nb * nh * lq * 4, c_int64_t), &
         'backward: a workspace of at least the row sums (B H Lq f32)')
    call tap_near(real(pack(dq4, .true.), 8), pack(dqr, .true.), 5d-7, 'f32 backward: dq')
    call tap_near(real(pack(dk4, .true.), 8), pack(dkr, .true.), 5d-7, &
         'f32 backward: dk, summed over the two query heads')
    call tap_near(real(pack(dv4, .true.), 8), pack(dvr, .true.), 5d-7, 'f32 backward: dv')
    call tap_ok(all(dq4(:, 1:bsq, 2, :) == 0), 'f32 backward: dq = 0 on the empty rows')
  end subroutine f32_heads_first

  ! ---- f64, q(d, h, l, b): [B, L, H, D] as a strided view -----------------
  subroutine f64_tokens_first()
    real(c_double), target :: q2(d, nh, lq, nb), k2(d, nhkv, lk, nb), v2(dv, nhkv, lk, nb)
    real(c_double), target :: y2(dv, nh, lq, nb), lse2(nh, lq, nb), dy2(dv, nh, lq, nb)
    real(c_double), target :: dq2(d, nh, lq, nb), dk2(d, nhkv, lk, nb), dv2(dv, nhkv, lk, nb)
    type(BkAttentionInfo) :: fwd
    type(BkAttentionBackwardInfo) :: bwd
    type(BkPlan) :: plan
    integer(c_int64_t) :: bind(12), ws

    call reference(mask, scale, q, k, v, dy, yr, lser, dqr, dkr, dvr)
    q2 = reshape(q, shape(q2), order=[1, 3, 2, 4])
    k2 = reshape(k, shape(k2), order=[1, 3, 2, 4])
    v2 = reshape(v, shape(v2), order=[1, 3, 2, 4])
    dy2 = reshape(dy, shape(dy2), order=[1, 3, 2, 4])

    call bk_attention_info_of(fwd, q2, k2, v2, y2, lse2, order='DHLB', scale=scale)
    call tap_ok(all(fwd%q%extent(1:4) == [nb, nh, lq, d]) .and. &
         all(fwd%q%stride(1:4) == [nh * lq * d, d, nh * d, 1]) .and. &
         all(fwd%lse%extent(1:3) == [nb, nh, lq]) .and. &
         all(fwd%lse%stride(1:3) == [nh * lq, 1, nh]), &
         'bk_attention_info_of: q(d, h, l, b) is [B, H, L, D] with strides [LHD, D, HD, 1]')
    fwd%flags = BK_ATTENTION_CAUSAL_BIT
    fwd%pattern = bk_attention_mask_pattern(mask, bsq)
    call bk_create_plan(ctx, fwd, plan)
    bind = 0
    bind(BK_ATTENTION_BINDING_Q + 1) = bk_host_address(q2)
    bind(BK_ATTENTION_BINDING_K + 1) = bk_host_address(k2)
    bind(BK_ATTENTION_BINDING_V + 1) = bk_host_address(v2)
    bind(BK_ATTENTION_BINDING_MASK + 1) = bk_host_address(mask)
    bind(BK_ATTENTION_BINDING_Y + 1) = bk_host_address(y2)
    bind(BK_ATTENTION_BINDING_LSE + 1) = bk_host_address(lse2)
    ws = run_plan(plan, bind(1:8))
    call bkDestroyPlan(plan)
    call tap_near(pack(reshape(y2, shape(yr), order=[1, 3, 2, 4]), .true.), pack(yr, .true.), &
         1d-13, 'f64 forward, [B, L, H, D] layout: y')
    call tap_near(no_inf(pack(reshape(lse2, shape(lser), order=[2, 1, 3]), .true.)), &
         no_inf(pack(lser, .true.)), 1d-13, 'f64 forward, [B, L, H, D] layout: lse')

    call bk_attention_backward_info_of(bwd, q2, k2, v2, y2, lse2, dy2, dq2, dk2, dv2, &
         order='DHLB')
    bwd%flags = BK_ATTENTION_CAUSAL_BIT
    bwd%pattern = fwd%pattern
    call bk_create_plan(ctx, bwd, plan)
    bind(BK_ATTENTION_BACKWARD_BINDING_DY + 1) = bk_host_address(dy2)
    bind(BK_ATTENTION_BACKWARD_BINDING_DQ + 1) = bk_host_address(dq2)
    bind(BK_ATTENTION_BACKWARD_BINDING_DK + 1) = bk_host_address(dk2)
    bind(BK_ATTENTION_BACKWARD_BINDING_DV + 1) = bk_host_address(dv2)
    ws = run_plan(plan, bind)
    call bkDestroyPlan(plan)
    call tap_near(pack(reshape(dq2, shape(dqr), order=[1, 3, 2, 4]), .true.), pack(dqr, .true.), &
         1d-12, 'f64 backward, [B, L, H, D] layout: dq')
    call tap_near(pack(reshape(dk2, shape(dkr), order=[1, 3, 2, 4]), .true.), pack(dkr, .true.), &
         1d-12, 'f64 backward, [B, L, H, D] layout: dk')
    call tap_near(pack(reshape(dv2, shape(dvr), order=[1, 3, 2, 4]), .true.), pack(dvr, .true.), &
         1d-12, 'f64 backward, [B, L, H, D] layout: dv')
  end subroutine f64_tokens_first

  ! ---- The LIST form, and a bad list ---------------------------------------
  subroutine list_form()
    integer, parameter :: cap = 5
    integer(c_int32_t), target :: counts(nbq, nh), indices(cap, nbq, nh)
    real(c_double), target :: y(dv, lq, nh, nb), lse(lq, nh, nb)
    type(BkAttentionInfo) :: fwd
    type(BkPlan) :: plan
    integer(c_int64_t) :: bind(8), ws
    integer :: h, i, j, n

    call reference(mask, scale, q, k, v, dy, yr, lser, dqr, dkr, dvr)
    ! The mask's blocks, last first, the first repeated, junk past the count.
    indices = 99
    do h = 1, nh
      do i = 1, nbq
        n = 0
        do j = nbk, 1, -1
          if (mask(j, i, h) /= 0) then
            n = n + 1
            indices(n, i, h) = j - 1
          end if
        end do
        if (n > 0) then
          n = n + 1
          indices(n, i, h) = indices(1, i, h)
        end if
        counts(i, h) = n
      end do
    end do

    call bk_attention_info_of(fwd, q, k, v, y, lse, scale=scale)
    fwd%flags = BK_ATTENTION_CAUSAL_BIT
    fwd%pattern = bk_attention_list_pattern(counts, indices, bsq, bsk)
    call tap_ok(all(fwd%pattern%counts%extent(1:3) == [1, nh, nbq]) .and. &
         all(fwd%pattern%indices%extent(1:4) == [1, nh, nbq, cap]), &
         'bk_attention_list_pattern: counts [1, H, nbq], indices [1, H, nbq, capacity]')
    call bk_create_plan(ctx, fwd, plan)
    bind = 0
    bind(BK_ATTENTION_BINDING_Q + 1) = bk_host_address(q)
    bind(BK_ATTENTION_BINDING_K + 1) = bk_host_address(k)
    bind(BK_ATTENTION_BINDING_V + 1) = bk_host_address(v)
    bind(BK_ATTENTION_BINDING_COUNTS + 1) = bk_host_address(counts)
    bind(BK_ATTENTION_BINDING_INDICES + 1) = bk_host_address(indices)
    bind(BK_ATTENTION_BINDING_Y + 1) = bk_host_address(y)
    bind(BK_ATTENTION_BINDING_LSE + 1) = bk_host_address(lse)
    ws = run_plan(plan, bind)
    call tap_ok(ws > 0, 'LIST forward: a workspace for the scattered mask')
    call tap_near(pack(y, .true.), pack(yr, .true.), 1d-13, &
         'LIST forward (repeats, reversed, junk past the counts): y as for the mask')
    call tap_near(no_inf(pack(lse, .true.)), no_inf(pack(lser, .true.)), 1d-13, &
         'LIST forward: lse as for the mask')

    ! Head 1's list breaks a rule: its outputs, in every batch (Bp = 1),
    ! are NaN; head 2's are unchanged.
    counts(2, 1) = cap + 1
    ws = run_plan(plan, bind)
    call bkDestroyPlan(plan)
    call tap_ok(all(ieee_is_nan(y(:, :, 1, :))) .and. all(ieee_is_nan(lse(:, 1, :))), &
         'a count past the capacity: y and lse of that head are NaN')
    call tap_near(pack(y(:, :, 2, :), .true.), pack(yr(:, :, 2, :), .true.), 1d-13, &
         'a count past the capacity: the other head is untouched')
  end subroutine list_form

  ! ---- Errors ------------------------------------------------------------
  subroutine errors()
    real(c_float) :: q4(d, lq, nh, nb), k4(d, lk, nhkv, nb), v4(dv, lk, nhkv, nb)
    real(c_float) :: y4(dv, lq, nh, nb), lse4(lq, nh, nb), kbad(d, lk - 16, nhkv, nb)
    integer(c_int16_t) :: h16(d, lq, nh, nb)
    integer(c_int8_t) :: small(3, nbq, nh)
    type(BkAttentionInfo) :: fwd, fresh
    type(BkAttentionBackwardInfo) :: bwd
    type(BkTensorDesc) :: desc
    type(BkPlan) :: plan
    integer(c_int) :: st
    character(len=:), allocatable :: msg

    q4 = 0
    k4 = 0
    v4 = 0
    call bk_attention_info_of(fwd, q4, k4, v4, y4, lse4)
    fwd%pattern = bk_attention_mask_pattern(small, bsq)
    call bk_create_plan(ctx, fwd, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. bk_is_null(plan), &
         'a mask of 3 x 3 blocks where 3 x 4 are: BK_ERROR_INVALID_ARGUMENT, no plan', msg)
    call tap_ok(index(msg, 'BkAttentionInfo.pattern.mask.extent[2] = 9') > 0 .and. &
         index(msg, '3 x 4 = 12') > 0, 'the message names the field, its value and nbq x nbk', &
         msg)

    fwd%pattern = bk_attention_mask_pattern(mask, bsq)
    fwd%scale = transfer(int(z'7FF8000000000000', c_int64_t), 0d0)
    call bk_create_plan(ctx, fwd, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'scale') > 0, &
         'a NaN scale (the Fortran default) is refused, naming scale', msg)
    call tap_ok(ieee_is_nan(fresh%scale) .and. fresh%pattern%form == BK_ATTENTION_PATTERN_DENSE, &
         'a new BkAttentionInfo has a NaN scale and a DENSE pattern')

    call bk_attention_backward_info_of(bwd, q4, kbad, v4, y4, lse4, y4, q4, kbad, v4)
    call bk_create_plan(ctx, bwd, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. &
         index(msg, 'BkAttentionBackwardInfo.v.extent[2] = 56') > 0, &
         'backward: v longer than k is refused, naming BkAttentionBackwardInfo.v', msg)

    desc = bk_attention_desc_of(q4, 'DLXB', stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'order = "DLXB"') > 0, &
         'bk_attention_desc_of: an unknown letter in order is refused', msg)
    desc = bk_attention_desc_of(q4, 'DLH', stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'the array has 4') > 0, &
         'bk_attention_desc_of: an order of the wrong length is refused', msg)
    desc = bk_attention_desc(BK_DATA_TYPE_F16, [d, lq, nh], 'DLH')
    call tap_ok(desc%rank == 4 .and. all(desc%extent(1:4) == [1, nh, lq, d]), &
         'bk_attention_desc: without B, one sequence [1, H, L, D]')
    h16 = 0
    call bk_attention_info_of(fwd, h16, h16, h16, h16, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'dataType') > 0, &
         'bk_attention_info_of on integer(c_int16_t) arrays needs dataType', msg)
    call bk_attention_info_of(fwd, h16, h16, h16, h16, dataType=BK_DATA_TYPE_BF16, stat=st)
    call tap_ok(st == BK_SUCCESS .and. fwd%q%dataType == BK_DATA_TYPE_BF16 .and. &
         fwd%lse%dataType == BK_DATA_TYPE_UNDEFINED, &
         'bk_attention_info_of: BF16 bits, no lse')
  end subroutine errors
end program fortran_attention
