! SPDX-License-Identifier: Apache-2.0
! Attention over sequences of their own lengths from Fortran on the host
! device, checked against a naive double-precision reference written here:
! - a PADDED batch (BkAttentionSequencesInfo chained to the forward info)
!   of three sequences using 4, 1 and 2 of Lq = 4 queries and 40, 17 and 0
!   of Lk = 40 keys, causal per sequence (j <= i + lengthsK - lengthsQ),
!   grouped query heads (H = 2 on Hkv = 1); rows past a sequence's
!   queries, and a sequence without keys, get y = 0 and lse = -inf;
! - the same keys and values as a paged cache (BkAttentionPagedKvInfo):
!   a pool of 8 pages of 16 keys, k(d, row, hkv, page), block tables with
!   the pages out of order and entries past a sequence's keys out of
!   range (never read), giving the same result;
! - slot counts and names of the chained plans, and a paged cache chained
!   without lengths refused, naming the struct.
program fortran_attention_sequences
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_negative_inf
  use bk
  use fortran_tap
  implicit none

  integer, parameter :: nb = 3, nh = 2, nhkv = 1, lq = 4, lk = 40, d = 8, dv = 4
  integer, parameter :: psz = 16, npages = 8, maxp = 3
  real(8), parameter :: scale = 0.35d0
  integer(c_int32_t), target :: lenq(nb) = [4, 1, 2], lenk(nb) = [40, 17, 0]
  ! table(page of the sequence, sequence): 0-based page indices.
  integer(c_int32_t), target :: table(maxp, nb) = reshape([5, 0, 3, 7, 2, 99, -1, 99, 99], &
       [maxp, nb])
  real(c_double), target :: q(d, lq, nh, nb), k(d, lk, nhkv, nb), v(dv, lk, nhkv, nb)
  real(c_double), target :: kp(d, psz, nhkv, npages), vp(dv, psz, nhkv, npages)
  real(c_double), target :: y(dv, lq, nh, nb), lse(lq, nh, nb)
  real(8) :: yr(dv, lq, nh, nb), lser(lq, nh, nb)
  type(BkContext) :: ctx
  type(BkQueue) :: queue
  type(BkCommandBuffer) :: cmd
  integer :: b, j, page

  call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
  call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')
  call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, cmd), 'bkAllocateCommandBuffer')

  q = reshape(vals(size(q), 1), shape(q))
  k = reshape(vals(size(k), 2), shape(k))
  v = reshape(vals(size(v), 3), shape(v))
  call reference(yr, lser)

  ! The pool: key j of sequence b on row mod(j, psz) of its table's page.
  kp = 1d300
  vp = 1d300
  do b = 1, nb
    do j = 0, lenk(b) - 1
      page = table(j / psz + 1, b) + 1
      kp(:, mod(j, psz) + 1, :, page) = k(:, j + 1, :, b)
      vp(:, mod(j, psz) + 1, :, page) = v(:, j + 1, :, b)
    end do
  end do

  call padded()
  call paged()
  call refused()

  call bkFreeCommandBuffer(cmd)
  call bkDestroyContext(ctx)
  call tap_done()

contains

  ! n deterministic values in (-1, 1).
  function vals(n, seed) result(r)
    integer, intent(in) :: n, seed
    real(8) :: r(n)
    integer :: i
    do i = 1, n
      r(i) = sin(1.37d0 * i + 0.71d0 * seed) * cos(0.113d0 * i * seed + 0.3d0)
    end do
  end function vals

  ! Each sequence alone: query i (0-based, below lenq) sees keys j below
  ! lenk with j <= i + lenk - lenq; lse = log sum exp of the scaled
  ! scores, y their softmax times v. Other rows: y = 0, lse = -inf.
  subroutine reference(yr, lser)
    real(8), intent(out) :: yr(dv, lq, nh, nb), lser(lq, nh, nb)
    real(8) :: s(lk), m
    integer :: b, h, g, i, j, n
    yr = 0
    lser = ieee_value(m, ieee_negative_inf)
    do b = 1, nb
      do h = 1, nh
        g = (h - 1) / (nh / nhkv) + 1
        do i = 0, lenq(b) - 1
          n = min(lenk(b), i + lenk(b) - lenq(b) + 1)
          if (n <= 0) cycle
          do j = 1, n
            s(j) = scale * dot_product(q(:, i + 1, h, b), k(:, j, g, b))
          end do
          m = maxval(s(1:n))
          lser(i + 1, h, b) = m + log(sum(exp(s(1:n) - m)))
          do j = 1, n
            yr(:, i + 1, h, b) = yr(:, i + 1, h, b) + exp(s(j) - lser(i + 1, h, b)) * &
                 v(:, j, g, b)
          end do
        end do
      end do
    end do
  end subroutine reference

  ! -inf as a huge finite number, so that the comparisons catch a finite
  ! value where -inf is wanted, and the other way round.
  elemental real(8) function no_inf(x)
    real(8), intent(in) :: x
    no_inf = x
    if (x < -huge(x)) no_inf = -1d30
  end function no_inf

  subroutine run(plan, bind)
    type(BkPlan), intent(in) :: plan
    integer(c_int64_t), intent(in) :: bind(:)
    type(BkPlanProperties) :: props
    type(BkCommandBufferBeginInfo) :: begin
    type(BkMemory) :: mem
    integer(c_int64_t) :: ws
    call bk_get_plan_properties(plan, props)
    ws = 0
    if (props%workspaceSize > 0) call bk_allocate_memory(ctx, props%workspaceSize, mem, ws)
    call bk_check(bkBeginCommandBuffer(cmd, begin), 'bkBeginCommandBuffer')
    call bk_cmd_run(cmd, plan, bind, ws, props%workspaceSize)
    call bk_check(bkEndCommandBuffer(cmd), 'bkEndCommandBuffer')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [cmd]), 'bkQueueSubmit')
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
    if (ws /= 0) call bkFreeMemory(ctx, mem)
  end subroutine run

  subroutine padded()
    type(BkAttentionInfo) :: fwd
    type(BkAttentionSequencesInfo), target :: seqs
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkPlanBindingProperties) :: slots
    integer(c_int64_t) :: bind(10)
    call bk_attention_info_of(fwd, q, k, v, y, lse, scale=scale)
    fwd%flags = BK_ATTENTION_CAUSAL_BIT
    seqs%form = BK_ATTENTION_SEQUENCES_PADDED
    seqs%lengthsQ = bk_tensor_desc_of(lenq)
    seqs%lengthsK = bk_tensor_desc_of(lenk)
    fwd%pNext = c_loc(seqs)
    call bk_create_plan(ctx, fwd, plan)
    call bk_get_plan_properties(plan, props, slots)
    ! A chained struct adds the slots after the info's own: 8, 9, 10.
    call tap_ok(props%bindingCount == 11 .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BINDING_LENGTHS_Q + 1)%name) == 'lengthsQ' .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BINDING_LENGTHS_K + 1)%name) == 'lengthsK' .and. &
         slots%bindings(BK_ATTENTION_BINDING_LENGTHS_K + 1)%size == 4 * nb .and. &
         slots%bindings(BK_ATTENTION_BINDING_BLOCK_TABLE + 1)%size == 0, &
         'PADDED: 11 slots, lengthsQ and lengthsK named and sized, no block table')
    bind = 0
    bind(BK_ATTENTION_BINDING_Q + 1) = bk_host_address(q)
    bind(BK_ATTENTION_BINDING_K + 1) = bk_host_address(k)
    bind(BK_ATTENTION_BINDING_V + 1) = bk_host_address(v)
    bind(BK_ATTENTION_BINDING_Y + 1) = bk_host_address(y)
    bind(BK_ATTENTION_BINDING_LSE + 1) = bk_host_address(lse)
    bind(BK_ATTENTION_BINDING_LENGTHS_Q + 1) = bk_host_address(lenq)
    bind(BK_ATTENTION_BINDING_LENGTHS_K + 1) = bk_host_address(lenk)
    y = -7
    lse = -7
    call run(plan, [bind, 0_c_int64_t])
    call bkDestroyPlan(plan)
    call tap_near(pack(y, .true.), pack(yr, .true.), 1d-13, 'PADDED forward: y')
    call tap_near(no_inf(pack(lse, .true.)), no_inf(pack(lser, .true.)), 1d-13, &
         'PADDED forward: lse, -inf past each sequence''s queries and without keys')
    call tap_ok(all(y(:, 2:, :, 2) == 0) .and. all(y(:, :, :, 3) == 0), &
         'PADDED forward: y = 0 past the queries and for the sequence without keys')
  end subroutine padded

  subroutine paged()
    type(BkAttentionInfo) :: fwd
    type(BkAttentionSequencesInfo), target :: seqs
    type(BkAttentionPagedKvInfo), target :: cache
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkPlanBindingProperties) :: slots
    integer(c_int64_t) :: bind(11)
    ! The pool kp(d, row, hkv, page) is k [pages, Hkv, pageSize, D].
    call bk_attention_info_of(fwd, q, kp, vp, y, lse, scale=scale)
    fwd%flags = BK_ATTENTION_CAUSAL_BIT
    seqs%lengthsQ = bk_tensor_desc_of(lenq)
    seqs%lengthsK = bk_tensor_desc_of(lenk)
    cache%blockTable = bk_tensor_desc_of(table)
    seqs%pNext = c_loc(cache)
    fwd%pNext = c_loc(seqs)
    call bk_create_plan(ctx, fwd, plan)
    call bk_get_plan_properties(plan, props, slots)
    call tap_ok(props%bindingCount == 11 .and. &
         bk_c_string(slots%bindings(BK_ATTENTION_BINDING_BLOCK_TABLE + 1)%name) == 'blockTable' &
         .and. slots%bindings(BK_ATTENTION_BINDING_BLOCK_TABLE + 1)%size == 4 * maxp * nb .and. &
         all(cache%blockTable%extent(1:2) == [nb, maxp]), &
         'paged: 11 slots, blockTable [B, maxPagesPerSequence] named and sized')
    bind = 0
    bind(BK_ATTENTION_BINDING_Q + 1) = bk_host_address(q)
    bind(BK_ATTENTION_BINDING_K + 1) = bk_host_address(kp)
    bind(BK_ATTENTION_BINDING_V + 1) = bk_host_address(vp)
    bind(BK_ATTENTION_BINDING_Y + 1) = bk_host_address(y)
    bind(BK_ATTENTION_BINDING_LSE + 1) = bk_host_address(lse)
    bind(BK_ATTENTION_BINDING_LENGTHS_Q + 1) = bk_host_address(lenq)
    bind(BK_ATTENTION_BINDING_LENGTHS_K + 1) = bk_host_address(lenk)
    bind(BK_ATTENTION_BINDING_BLOCK_TABLE + 1) = bk_host_address(table)
    y = -7
    lse = -7
    call run(plan, bind)
    call bkDestroyPlan(plan)
    call tap_near(pack(y, .true.), pack(yr, .true.), 1d-13, &
         'paged forward (pages out of order, unread entries out of range): y')
    call tap_near(no_inf(pack(lse, .true.)), no_inf(pack(lser, .true.)), 1d-13, &
         'paged forward: lse')
  end subroutine paged

  subroutine refused()
    type(BkAttentionInfo) :: fwd
    type(BkAttentionPagedKvInfo), target :: cache
    type(BkPlan) :: plan
    integer(c_int) :: st
    character(len=:), allocatable :: msg
    call bk_attention_info_of(fwd, q, kp, vp, y, lse, scale=scale)
    cache%blockTable = bk_tensor_desc_of(table)
    fwd%pNext = c_loc(cache)
    call bk_create_plan(ctx, fwd, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. &
         index(msg, 'BkAttentionPagedKvInfo without a PADDED BkAttentionSequencesInfo') > 0, &
         'a paged cache without lengths is refused, naming the structs', msg)
  end subroutine refused
end program fortran_attention_sequences
