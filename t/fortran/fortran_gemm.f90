! SPDX-License-Identifier: Apache-2.0
! The GEMM family from Fortran on the host device, checked in double
! precision against matmul():
! - dense GEMM of Fortran arrays, f64 and f32, with transposes, C (also in
!   place at D's address), a bias, the activations, a batch with a shared
!   operand, a block of a larger array (leading dimension) and mixed
!   row-/column-major layouts; the precision guarantee and the binding
!   properties of the plan;
! - 2:4 sparsity: prune-compress against a reference pruning written here
!   (including the worked example of bk-gemm(7) and ties), decompress,
!   strict compression and validation with their reports, prepare, and
!   the sparse GEMM in its two Fortran layouts (feature-major, batched;
!   token-major with C);
! - bkCheckSparse24Report on good and bad reports, and plan errors (a K
!   that disagrees, K % 8, unsupported types, beta without C).
module fortran_gemm_util
  use, intrinsic :: iso_c_binding
  use bk
  implicit none
  private
  public :: setup, teardown, run_plan, up64, up32, up16, scratch, vals, gelu_tanh

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
    if (nmem == size(mems)) error stop 'fortran_gemm: too many allocations'
    nmem = nmem + 1
    call bk_allocate_memory(ctx, max(bytes, 8_c_int64_t), mems(nmem), addr)
  end function scratch

  ! Device copies of arrays. These call bkCopyToDevice themselves: gfortran
  ! 12 stops with an internal error when an assumed-rank integer(c_int16_t)
  ! dummy is passed on to bk_copy_to_device.
  function up64(x) result(addr)
    real(c_double), intent(in), target, contiguous :: x(..)
    integer(c_int64_t) :: addr
    addr = scratch(bk_sizeof(x))
    call bk_check(bkCopyToDevice(ctx, addr, c_loc(x), bk_sizeof(x)), 'bkCopyToDevice')
  end function up64

  function up32(x) result(addr)
    real(c_float), intent(in), target, contiguous :: x(..)
    integer(c_int64_t) :: addr
    addr = scratch(bk_sizeof(x))
    call bk_check(bkCopyToDevice(ctx, addr, c_loc(x), bk_sizeof(x)), 'bkCopyToDevice')
  end function up32

  function up16(x) result(addr)
    integer(c_int16_t), intent(in), target, contiguous :: x(..)
    integer(c_int64_t) :: addr
    addr = scratch(bk_sizeof(x))
    call bk_check(bkCopyToDevice(ctx, addr, c_loc(x), bk_sizeof(x)), 'bkCopyToDevice')
  end function up16

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

  ! n deterministic values in (-1, 1), without ties in magnitude in practice.
  function vals(n, seed) result(v)
    integer, intent(in) :: n, seed
    real(8) :: v(n)
    integer :: i
    do i = 1, n
      v(i) = sin(1.37d0 * i + 0.71d0 * seed) * cos(0.113d0 * i * seed + 0.3d0)
    end do
  end function vals

  elemental function gelu_tanh(x) result(y)
    real(8), intent(in) :: x
    real(8) :: y
    y = 0.5d0 * x * (1 + tanh(sqrt(2 / acos(-1d0)) * (x + 0.044715d0 * x**3)))
  end function gelu_tanh
end module fortran_gemm_util

program fortran_gemm
  use, intrinsic :: iso_c_binding
  use bk
  use fortran_tap
  use fortran_gemm_util
  implicit none
  integer, parameter :: m = 5, n = 7, k = 9
  integer, parameter :: sm = 6, sk = 16       ! the 2:4 weight W(sm, sk)

  call setup()
  call dense_f64()
  call dense_f32()
  call dense_layouts()
  call dense_errors()
  call sparse24()
  call report_checks()
  call teardown()
  call tap_done()

contains

  ! ---- Dense GEMM ----------------------------------------------------------

  ! f64: D = 1.5 A B + 0.5 C + bias; then D = relu(A B + bias) from A and B
  ! stored transposed (transA = transB = T).
  subroutine dense_f64()
    real(c_double) :: a(m, k), b(k, n), c(m, n), d(m, n), bias(n), at(k, m), bt(n, k)
    real(8) :: want(m, n)
    type(BkGemmInfo) :: info
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkPlanBindingProperties) :: bp
    integer(c_int64_t) :: da, db, dc, dd, dbias
    integer :: j

    a = reshape(vals(m * k, 1), [m, k])
    b = reshape(vals(k * n, 2), [k, n])
    c = reshape(vals(m * n, 3), [m, n])
    bias = vals(n, 4)
    info%alpha = 1.5d0
    info%beta = 0.5d0
    info%a = bk_matrix_desc_of(a)
    info%b = bk_matrix_desc_of(b)
    info%c = bk_matrix_desc_of(c)
    info%d = bk_matrix_desc_of(d)
    info%bias = bk_tensor_desc_of(bias)
    call bk_create_plan(ctx, info, plan)
    call bk_get_plan_properties(plan, props, bp)
    call tap_ok(props%operation == BK_STRUCTURE_TYPE_GEMM_INFO .and. props%bindingCount == 5, &
         'f64 GEMM plan: operation GEMM_INFO, 5 binding slots')
    call tap_ok(props%precision%computeType == BK_DATA_TYPE_F64 .and. &
         props%precision%accumulatorType == BK_DATA_TYPE_F64, 'f64 GEMM sums in f64')
    call tap_ok(bp%bindingCount == 5 .and. bk_c_string(bp%bindings(1)%name) == 'a' .and. &
         bk_c_string(bp%bindings(4)%name) == 'd' .and. bk_c_string(bp%bindings(5)%name) == 'bias', &
         'binding properties name the slots a, b, c, d, bias')
    call tap_ok(bp%bindings(4)%written == BK_TRUE .and. bp%bindings(1)%written == BK_FALSE .and. &
         bp%bindings(4)%size == m * n * 8 .and. bp%bindings(5)%size == n * 8 .and. &
         bp%bindings(4)%alignment == 8, 'binding properties: d written, sizes and alignment')
    da = up64(a)
    db = up64(b)
    dc = up64(c)
    dbias = up64(bias)
    dd = scratch(bk_sizeof(d))
    call run_plan(plan, [da, db, dc, dd, dbias])
    call bk_copy_from_device(ctx, d, dd)
    want = 1.5d0 * matmul(a, b) + 0.5d0 * c
    do j = 1, n
      want(:, j) = want(:, j) + bias(j)
    end do
    call tap_near(reshape(d, [m * n]), reshape(want, [m * n]), 1d-13, &
         'f64 D = 1.5 A B + 0.5 C + bias matches matmul')
    call bkDestroyPlan(plan)

    ! Transposed storage: at(k, m) is A^T, bt(n, k) is B^T. No C.
    at = transpose(a)
    bt = transpose(b)
    info = BkGemmInfo()
    info%transA = BK_GEMM_OP_T
    info%transB = BK_GEMM_OP_T
    info%activation = BK_GEMM_ACTIVATION_RELU
    info%a = bk_matrix_desc_of(at)
    info%b = bk_matrix_desc_of(bt)
    info%d = bk_matrix_desc_of(d)
    info%bias = bk_tensor_desc_of(bias)
    call bk_create_plan(ctx, info, plan)
    d = -99
    call bk_copy_to_device(ctx, dd, d)
    call run_plan(plan, [up64(at), up64(bt), 0_c_int64_t, dd, dbias])
    call bk_copy_from_device(ctx, d, dd)
    want = matmul(a, b)
    do j = 1, n
      want(:, j) = max(want(:, j) + bias(j), 0d0)
    end do
    call tap_near(reshape(d, [m * n]), reshape(want, [m * n]), 1d-13, &
         'f64 transA = transB = T, no C, relu(A B + bias) matches matmul')
    call bkDestroyPlan(plan)
  end subroutine dense_f64

  ! f32: C in place at D's address with gelu; a batch sharing B.
  subroutine dense_f32()
    integer, parameter :: nb = 3
    real(c_float) :: at(k, m), b(k, n), cd(m, n), bias(n), a3(m, k, nb), d3(m, n, nb)
    real(8) :: want(m, n), want3(m, n, nb)
    type(BkGemmInfo) :: info
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    integer(c_int64_t) :: dcd, db, dd3
    integer :: j, ib

    at = real(reshape(vals(k * m, 5), [k, m]), c_float)
    b = real(reshape(vals(k * n, 6), [k, n]), c_float)
    cd = real(reshape(vals(m * n, 7), [m, n]), c_float)
    bias = real(vals(n, 8), c_float)
    info%transA = BK_GEMM_OP_T
    info%activation = BK_GEMM_ACTIVATION_GELU_TANH
    info%alpha = 0.5d0
    info%beta = -1
    info%a = bk_matrix_desc_of(at)
    info%b = bk_matrix_desc_of(b)
    info%c = bk_matrix_desc_of(cd)
    info%d = bk_matrix_desc_of(cd)
    info%bias = bk_tensor_desc_of(bias)
    call bk_create_plan(ctx, info, plan)
    call bk_get_plan_properties(plan, props)
    call tap_ok(props%precision%accumulatorType == BK_DATA_TYPE_F32, 'f32 GEMM sums in f32')
    dcd = up32(cd)
    db = up32(b)
    call run_plan(plan, [up32(at), db, dcd, dcd, up32(bias)])
    want = 0.5d0 * matmul(transpose(real(at, 8)), real(b, 8)) - real(cd, 8)
    do j = 1, n
      want(:, j) = gelu_tanh(want(:, j) + bias(j))
    end do
    call bk_copy_from_device(ctx, cd, dcd)
    call tap_near(reshape(real(cd, 8), [m * n]), reshape(want, [m * n]), 2d-6, &
         'f32 in place (C at D''s address), A stored transposed: gelu(0.5 A B - C + bias)')
    call bkDestroyPlan(plan)

    ! a3(:, :, ib) @ b for every batch ib: b is rank 2, shared.
    a3 = real(reshape(vals(m * k * nb, 9), [m, k, nb]), c_float)
    info = BkGemmInfo()
    info%a = bk_matrix_desc_of(a3)
    info%b = bk_matrix_desc_of(b)
    info%d = bk_matrix_desc_of(d3)
    call tap_is_int(int(info%a%rank), 3, 'bk_matrix_desc_of of a rank-3 array is rank 3')
    call tap_ok(all(info%a%extent(1:3) == [nb, m, k]) .and. &
         all(info%a%stride(1:3) == [m * k, 1, m]), &
         'bk_matrix_desc_of(a(m, k, nb)): extent [nb, m, k], strides [m*k, 1, m]')
    call bk_create_plan(ctx, info, plan)
    dd3 = scratch(bk_sizeof(d3))
    call run_plan(plan, [up32(a3), db, 0_c_int64_t, dd3, 0_c_int64_t])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, d3, dd3)
    do ib = 1, nb
      want3(:, :, ib) = matmul(real(a3(:, :, ib), 8), real(b, 8))
    end do
    call tap_near(reshape(real(d3, 8), [size(d3)]), reshape(want3, [size(want3)]), 2d-6, &
         'f32 batch of 3 with B shared (rank 2) matches matmul per batch')
  end subroutine dense_f32

  ! A block of a larger array (leading dimension), a row-major B and D
  ! from Fortran arrays holding their transposes.
  subroutine dense_layouts()
    integer, parameter :: lda = m + 3
    real(c_double) :: abig(lda, k), bt(n, k), dt(n, m)
    real(8) :: want(n, m)
    type(BkGemmInfo) :: info
    type(BkPlan) :: plan
    integer(c_int64_t) :: ddt

    abig = reshape(vals(lda * k, 10), [lda, k])
    bt = reshape(vals(n * k, 11), [n, k])
    info%a = bk_matrix_desc(BK_DATA_TYPE_F64, [m, k], ld=lda)   ! abig(1:m, :)
    info%b = bk_tensor_desc_of(bt)                              ! row-major [k, n]: B
    info%d = bk_tensor_desc_of(dt)                              ! row-major [m, n]: D
    call tap_ok(all(info%a%stride(1:2) == [1, lda]) .and. all(info%b%extent(1:2) == [k, n]), &
         'bk_matrix_desc with ld; bk_tensor_desc_of(bt(n, k)) is the row-major [k, n]')
    call bk_create_plan(ctx, info, plan)
    ddt = scratch(bk_sizeof(dt))
    call run_plan(plan, [up64(abig), up64(bt), 0_c_int64_t, ddt, 0_c_int64_t])
    call bk_copy_from_device(ctx, dt, ddt)
    want = transpose(matmul(abig(1:m, :), transpose(bt)))
    call tap_near(reshape(dt, [n * m]), reshape(want, [n * m]), 1d-13, &
         'column-major block of A (ld) times row-major B into row-major D matches matmul')
    call bkDestroyPlan(plan)
  end subroutine dense_layouts

  subroutine dense_errors()
    type(BkGemmInfo) :: info
    type(BkPlan) :: plan
    integer(c_int) :: st
    character(len=:), allocatable :: msg

    info%a = bk_matrix_desc(BK_DATA_TYPE_F64, [m, k])
    info%b = bk_matrix_desc(BK_DATA_TYPE_F64, [k + 2, n])
    info%d = bk_matrix_desc(BK_DATA_TYPE_F64, [m, n])
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. bk_is_null(plan), &
         'K that disagrees: BK_ERROR_INVALID_ARGUMENT, no plan')
    call tap_ok(index(msg, 'K') > 0 .and. index(msg, '9') > 0 .and. index(msg, '11') > 0, &
         'the message names K and both values', msg)

    info%b = bk_matrix_desc(BK_DATA_TYPE_F32, [k, n])
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_UNSUPPORTED, 'f64 a with f32 b: BK_ERROR_UNSUPPORTED', msg)

    info%b = bk_matrix_desc(BK_DATA_TYPE_F64, [k, n])
    info%beta = 1
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, 'beta') > 0, &
         'beta /= 0 without C: BK_ERROR_INVALID_ARGUMENT naming beta', msg)

    info%beta = 0
    info%a%stride(1:2) = [2, m * 2]
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT, &
         'a matrix with neither stride 1: BK_ERROR_INVALID_ARGUMENT', msg)
  end subroutine dense_errors

  ! ---- 2:4 sparsity ------------------------------------------------------

  ! The reference pruning: in each group of 4 of each row keep the two
  ! largest |w|, ties to the lower position; pos(r, g, :) are the kept
  ! positions 0..3, increasing.
  subroutine prune(w, wp, pos)
    real(c_float), intent(in) :: w(:, :)
    real(c_float), intent(out) :: wp(:, :)
    integer, intent(out) :: pos(:, :, :)
    integer :: r, g, p1, p2
    real(c_float) :: grp(4)
    wp = 0
    do r = 1, size(w, 1)
      do g = 1, size(w, 2) / 4
        grp = abs(w(r, 4 * g - 3:4 * g))
        p1 = maxloc(grp, 1)             ! the first of equal maxima
        grp(p1) = -1
        p2 = maxloc(grp, 1)
        pos(r, g, :) = [min(p1, p2) - 1, max(p1, p2) - 1]
        wp(r, 4 * g - 4 + p1) = w(r, 4 * g - 4 + p1)
        wp(r, 4 * g - 4 + p2) = w(r, 4 * g - 4 + p2)
      end do
    end do
  end subroutine prune

  subroutine sparse24()
    integer, parameter :: nt = 5, nb = 2    ! tokens, batches
    real(c_float) :: w(sm, sk), wp(sm, sk), wd(sm, sk), v(sm, sk / 2), vwant(sm, sk / 2)
    real(c_float) :: x(sk, nt, nb), y(sm, nt, nb), bias(sm), xt(nt, sk), c(nt, sm), yt(nt, sm)
    integer(c_int16_t) :: meta(sm, sk / 8), mwant(sm, sk / 8)
    integer :: pos(sm, sk / 4, 2), r, g, ib, j
    real(8) :: want(sm, nt), want3(sm, nt, nb), wantt(nt, sm)
    type(BkSparse24ConvertInfo) :: conv
    type(BkSparse24PrepareInfo) :: prep
    type(BkSparse24GemmInfo) :: info
    type(BkSparse24Report) :: report
    type(BkPlan) :: plan
    type(BkPlanProperties) :: props
    type(BkPlanBindingProperties) :: bp
    integer(c_int64_t) :: dw, dv, dmeta, drep, dprep, dy, dx, dbias, dyt
    integer(c_int64_t) :: prepared_bytes
    integer(c_int) :: st
    character(len=:), allocatable :: msg

    ! A dense weight; row 1 holds bk-gemm(7)'s example, row 2 ties.
    w = real(reshape(vals(sm * sk, 12), [sm, sk]), c_float)
    w(1, 1:8) = [0.0, 3.5, 0.0, -1.0, 2.0, 0.0, 0.0, 7.0]
    w(2, 1:4) = [1.0, -1.0, 1.0, 0.0]
    call prune(w, wp, pos)
    do r = 1, sm
      do g = 1, sk / 4
        vwant(r, 2 * g - 1) = w(r, 4 * g - 3 + pos(r, g, 1))
        vwant(r, 2 * g) = w(r, 4 * g - 3 + pos(r, g, 2))
      end do
      do j = 1, sk / 8
        mwant(r, j) = int(pos(r, 2 * j - 1, 1) + 4 * pos(r, 2 * j - 1, 2) + &
             256 * (pos(r, 2 * j, 1) + 4 * pos(r, 2 * j, 2)), c_int16_t)
      end do
    end do
    call tap_ok(mwant(1, 1) == int(z'0C0D', c_int16_t) .and. &
         all(vwant(1, 1:4) == [3.5, -1.0, 2.0, 7.0]), &
         'the reference pruning gives the worked example of bk-gemm(7): metadata 0x0C0D')

    ! Prune-compress.
    conv%conversion = BK_SPARSE24_COMPRESS_PRUNE
    conv%dense = bk_matrix_desc_of(w)
    conv%values = bk_matrix_desc_of(v)
    conv%metadata = bk_matrix_desc_of(meta)
    call bk_create_plan(ctx, conv, plan)
    call bk_get_plan_properties(plan, props, bp)
    call tap_ok(props%bindingCount == 4 .and. bk_c_string(bp%bindings(4)%name) == 'report' .and. &
         bp%bindings(4)%size == 32 .and. bp%bindings(4)%written == BK_TRUE, &
         'conversion plan: 4 slots, the report slot is 32 bytes, written')
    dw = up32(w)
    dv = scratch(bk_sizeof(v))
    dmeta = scratch(bk_sizeof(meta))
    drep = scratch(32_c_int64_t)
    call run_plan(plan, [dw, dv, dmeta, drep])
    call bkDestroyPlan(plan)
    call bk_check_sparse24_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_SUCCESS .and. report%status == BK_SPARSE24_STATUS_OK, &
         'pruning reports OK', msg)
    call bk_copy_from_device(ctx, v, dv)
    call bk_copy_from_device(ctx, meta, dmeta)
    call tap_ok(all(v == vwant), 'pruned values: the two largest |w| of each group')
    call tap_ok(all(meta == mwant), 'metadata: positions packed two bits each, two groups per u16')
    call tap_ok(meta(1, 1) == int(z'0C0D', c_int16_t) .and. iand(meta(2, 1), 255_c_int16_t) == 4, &
         'metadata of the worked example (0x0C0D) and of ties (0x04, lower positions)')

    ! Decompress: values + metadata -> the pruned dense weight.
    conv%conversion = BK_SPARSE24_DECOMPRESS
    call bk_create_plan(ctx, conv, plan)
    wd = 99
    call bk_copy_to_device(ctx, dw, wd)
    call run_plan(plan, [dw, dv, dmeta, drep])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, wd, dw)
    call tap_ok(all(wd == wp), 'decompress gives back the pruned weight, zeros elsewhere')

    ! Strict compression of a weight with two groups of more than 2 non-zeros.
    wd = wp
    wd(4, 9:12) = [1.0, 2.0, 3.0, 4.0]      ! row 3, group 2 (from 0)
    wd(6, 13:16) = [1.0, 1.0, 1.0, 0.0]     ! row 5, group 3
    conv%conversion = BK_SPARSE24_COMPRESS_STRICT
    call bk_create_plan(ctx, conv, plan)
    call run_plan(plan, [up32(wd), dv, dmeta, drep])
    call bkDestroyPlan(plan)
    call bk_check_sparse24_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. &
         report%status == BK_SPARSE24_STATUS_TOO_MANY_NONZEROS, &
         'strict compression of a non-2:4 weight: TOO_MANY_NONZEROS, BK_ERROR_INVALID_ARGUMENT')
    call tap_ok(report%badGroupCount == 2 .and. report%firstBadRow == 3 .and. &
         report%firstBadGroup == 2, 'the report counts 2 bad groups, the first at row 3, group 2')
    call tap_ok(index(msg, 'row 3') > 0 .and. index(msg, 'group 2') > 0, &
         'the message names row 3 and group 2', msg)
    call bk_copy_from_device(ctx, meta, dmeta)
    ! Group 2 is the low byte of u16 1, group 3 its high byte.
    call tap_ok(iand(meta(4, 2), 255_c_int16_t) == 2 + 4 * 3 .and. &
         iand(ishft(meta(6, 2), -8), 255_c_int16_t) == 0 + 4 * 1, &
         'strict compression stores rejected groups as pruning would')

    ! Validate corrupt metadata: row 1 group 1 (high byte of u16 0) 0x05.
    meta = mwant
    meta(2, 1) = ior(iand(meta(2, 1), 255_c_int16_t), int(z'0500', c_int16_t))
    conv = BkSparse24ConvertInfo()
    conv%conversion = BK_SPARSE24_VALIDATE
    conv%metadata = bk_matrix_desc_of(meta)
    call bk_create_plan(ctx, conv, plan)
    call run_plan(plan, [0_c_int64_t, 0_c_int64_t, up16(meta), drep])
    call bkDestroyPlan(plan)
    call bk_check_sparse24_report(ctx, drep, report, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. &
         report%status == BK_SPARSE24_STATUS_BAD_METADATA .and. report%firstBadRow == 1 .and. &
         report%firstBadGroup == 1 .and. report%badGroupCount == 1, &
         'validate: equal positions are BAD_METADATA at row 1, group 1', msg)

    ! Prepare the pruned weight.
    prep%values = bk_matrix_desc_of(v)
    prep%metadata = bk_matrix_desc_of(mwant)
    call bk_create_plan(ctx, prep, plan)
    call bk_get_plan_properties(plan, props, bp)
    prepared_bytes = bp%bindings(BK_SPARSE24_PREPARE_BINDING_PREPARED + 1)%size
    call tap_ok(prepared_bytes > 0 .and. bp%bindings(3)%written == BK_TRUE .and. &
         bk_c_string(bp%bindings(3)%name) == 'prepared', &
         'prepare plan: the prepared slot is sized by its binding properties')
    dprep = scratch(prepared_bytes)
    call run_plan(plan, [up32(vwant), up16(mwant), dprep])
    call bkDestroyPlan(plan)

    ! Feature-major x(sk, nt, nb) is the row-major X [nb, nt, sk]: y = 2 W x + bias.
    x = real(reshape(vals(sk * nt * nb, 13), [sk, nt, nb]), c_float)
    bias = real(vals(sm, 14), c_float)
    info%weightType = BK_DATA_TYPE_F32
    info%m = sm
    info%k = sk
    info%alpha = 2
    info%x = bk_tensor_desc_of(x)
    info%y = bk_tensor_desc_of(y)
    info%bias = bk_tensor_desc_of(bias)
    call bk_create_plan(ctx, info, plan)
    call bk_get_plan_properties(plan, props, bp)
    call tap_ok(bp%bindings(1)%size == prepared_bytes .and. bp%bindings(4)%written == BK_TRUE, &
         'sparse GEMM plan: the weight slot has the prepared size')
    dx = up32(x)
    dy = scratch(bk_sizeof(y))
    dbias = up32(bias)
    call run_plan(plan, [dprep, dx, 0_c_int64_t, dy, dbias])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, y, dy)
    do ib = 1, nb
      want = 2 * matmul(real(wp, 8), real(x(:, :, ib), 8))
      do j = 1, nt
        want(:, j) = want(:, j) + bias
      end do
      want3(:, :, ib) = want
    end do
    call tap_near(reshape(real(y, 8), [size(y)]), reshape(want3, [size(want3)]), 2d-6, &
         'sparse GEMM, feature-major batch: y = 2 W x + bias matches matmul')

    ! Token-major xt(nt, sk) is the column-major X [nt, sk]; with C, relu.
    xt = real(reshape(vals(nt * sk, 15), [nt, sk]), c_float)
    c = real(reshape(vals(nt * sm, 16), [nt, sm]), c_float)
    info = BkSparse24GemmInfo()
    info%weightType = BK_DATA_TYPE_F32
    info%m = sm
    info%k = sk
    info%beta = 1
    info%activation = BK_GEMM_ACTIVATION_RELU
    info%x = bk_matrix_desc_of(xt)
    info%c = bk_matrix_desc_of(c)
    info%y = bk_matrix_desc_of(yt)
    info%bias = bk_tensor_desc_of(bias)
    call bk_create_plan(ctx, info, plan)
    dyt = scratch(bk_sizeof(yt))
    call run_plan(plan, [dprep, up32(xt), up32(c), dyt, dbias])
    call bkDestroyPlan(plan)
    call bk_copy_from_device(ctx, yt, dyt)
    wantt = matmul(real(xt, 8), transpose(real(wp, 8))) + real(c, 8)
    do j = 1, sm
      wantt(:, j) = max(wantt(:, j) + bias(j), 0d0)
    end do
    call tap_near(reshape(real(yt, 8), [size(yt)]), reshape(wantt, [size(wantt)]), 2d-6, &
         'sparse GEMM, token-major: y = relu(x W^T + c + bias) matches matmul')

    ! K % 8 /= 0.
    info%k = 12
    info%x = bk_matrix_desc(BK_DATA_TYPE_F32, [nt, 12])
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_INVALID_ARGUMENT .and. index(msg, '12') > 0 .and. &
         index(msg, '8') > 0, 'sparse GEMM with k = 12: BK_ERROR_INVALID_ARGUMENT, K % 8', msg)
    info%k = sk
    info%x = bk_matrix_desc(BK_DATA_TYPE_F64, [nt, sk])
    info%weightType = BK_DATA_TYPE_F64
    call bk_create_plan(ctx, info, plan, stat=st, errmsg=msg)
    call tap_ok(st == BK_ERROR_UNSUPPORTED, 'sparse GEMM of an f64 weight: BK_ERROR_UNSUPPORTED', &
         msg)
  end subroutine sparse24

  ! ---- bkCheckSparse24Report -------------------------------------------------
  subroutine report_checks()
    type(BkSparse24Report) :: report
    integer(c_int) :: res
    character(len=:), allocatable :: msg
    call tap_ok(bkCheckSparse24Report(report) == BK_SUCCESS, &
         'bkCheckSparse24Report of a zeroed (OK) report: BK_SUCCESS')
    report%status = BK_SPARSE24_STATUS_BAD_METADATA
    report%badGroupCount = 4
    report%firstBadRow = 3
    report%firstBadGroup = 5
    res = bkCheckSparse24Report(report)
    msg = bk_last_error_message()
    call tap_ok(res == BK_ERROR_INVALID_ARGUMENT, &
         'bkCheckSparse24Report of a BAD_METADATA report: BK_ERROR_INVALID_ARGUMENT')
    call tap_ok(index(msg, 'row 3') > 0 .and. index(msg, 'group 5') > 0, &
         'its message names row 3 and group 5', msg)
    report%status = 7
    call tap_ok(bkCheckSparse24Report(report) == BK_ERROR_INVALID_ARGUMENT, &
         'an unknown status: BK_ERROR_INVALID_ARGUMENT')
  end subroutine report_checks
end program fortran_gemm
