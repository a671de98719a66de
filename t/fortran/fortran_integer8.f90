! SPDX-License-Identifier: Apache-2.0
! Code built with -fdefault-integer-8 (ifx: -i8) against the module built
! without it: default integers and their literals are INTEGER(8) here,
! where the C API has uint32_t counts and indices. Everything below must
! compile as a user writes it, and:
! - bkGetQueue(ctx, 0, queue), bkEnumerateDevices(count, ...) with an
!   INTEGER(8) count, bkQueueSubmit(queue, 1, [cmd]) work;
! - an index past uint32_t's range is refused, not wrapped (2**32 would
!   wrap to queue 0);
! - the helpers' indices and block sizes take the literals (bk_split_axis,
!   bk_create_context's deviceIndex, bk_attention_mask_pattern's blocks);
! - a GLU of random data run with bk_queue_run matches a reference
!   computed here, and the raw copies take sizes of both kinds.
! Prints TAP itself: the fortran_tap module is built with default
! integers and cannot be used from here.
program fortran_integer8
  use, intrinsic :: iso_c_binding
  use bk
  implicit none
  integer :: count, failures
  type(BkContext) :: ctx
  type(BkQueue) :: queue
  type(BkCommandBuffer) :: cmd
  type(BkCommandBufferBeginInfo) :: begin
  type(BkGatedActivationInfo) :: info
  type(BkAttentionPattern) :: pattern
  type(BkPlan) :: plan
  type(BkMemory) :: xm, ym
  integer(c_int64_t) :: xa, ya
  integer(c_int8_t) :: mask(4, 4)
  integer(c_int) :: stat, res
  integer :: ndev
  real(c_float), target :: x(8, 4), y(4, 4), want(4, 4)

  if (kind(count) /= 8) then
    print '(a)', '1..0 # SKIP default integers are not 8 bytes (no -fdefault-integer-8 flag known)'
    stop
  end if
  count = 0
  failures = 0

  call bk_create_context(ctx, BK_DEVICE_TYPE_HOST, 0)
  call ok(logical(.not. bk_is_null(ctx)), 'bk_create_context(ctx, BK_DEVICE_TYPE_HOST, 0)')
  call ok(bkGetQueue(ctx, 0, queue) == BK_SUCCESS, 'bkGetQueue(ctx, 0, queue)')
  ndev = 0
  call ok(bkEnumerateDevices(ndev, c_null_ptr) == BK_SUCCESS .and. ndev >= 1, &
       'bkEnumerateDevices with an INTEGER(8) count')
  block
    type(BkQueue) :: other
    call ok(bkGetQueue(ctx, 2_8**32, other) < 0 .and. bk_is_null(other), &
         'queue index 2**32 is refused, not wrapped to 0')
  end block

  call ok(bk_split_axis(1, 2) == 1 .and. bk_split_axis(2, 2) == 0, 'bk_split_axis(1, 2)')
  mask = 1
  pattern = bk_attention_mask_pattern(mask, 16)
  call ok(pattern%blockQ == 16 .and. pattern%blockK == 16, 'bk_attention_mask_pattern(mask, 16)')
  pattern = bk_attention_mask_pattern(mask, 16, 2_8**32 + 16, stat=stat)
  call ok(pattern%blockK == -1, 'a block size past int32_t is -1 (refused), not wrapped to 16')

  info%kind = BK_GATED_ACTIVATION_GLU
  info%splitAxis = bk_split_axis(1, 2)
  info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [8, 4])
  info%output = bk_tensor_desc(BK_DATA_TYPE_F32, [4, 4])
  call bk_create_plan(ctx, info, plan, stat)
  call ok(stat == BK_SUCCESS, 'bk_tensor_desc(..., [8, 4]) and bk_create_plan')
  call bk_allocate_memory(ctx, 128, xm, xa)
  call bk_allocate_memory(ctx, 64, ym, ya)
  call random_number(x)
  x = 6 * x - 3
  call ok(bkCopyToDevice(ctx, xa, c_loc(x), 128) == BK_SUCCESS, &
       'bkCopyToDevice with an INTEGER(8) size')

  ! Poison y through a one-time command buffer, then run.
  res = bkAllocateCommandBuffer(ctx, c_null_ptr, cmd)
  if (res == BK_SUCCESS) res = bkBeginCommandBuffer(cmd, begin)
  if (res == BK_SUCCESS) res = bkCmdFillMemory(cmd, ya, 64, int(z'7FC00000', c_int32_t))
  if (res == BK_SUCCESS) res = bkEndCommandBuffer(cmd)
  if (res == BK_SUCCESS) res = bkQueueSubmit(queue, 1, [cmd])
  if (res == BK_SUCCESS) res = bkQueueWaitIdle(queue)
  call ok(res == BK_SUCCESS, 'bkCmdFillMemory(cmd, y, 64, ...) and bkQueueSubmit(queue, 1, [cmd])')
  call bkFreeCommandBuffer(cmd)
  call bk_queue_run(queue, plan, [xa, ya], stat=stat)
  res = bkQueueWaitIdle(queue)
  call ok(stat == BK_SUCCESS .and. res == BK_SUCCESS, 'bk_queue_run')
  y = 0
  call ok(bkCopyFromDevice(ctx, c_loc(y), ya, 64_c_int32_t) == BK_SUCCESS, &
       'bkCopyFromDevice with an INTEGER(4) size')
  want = x(1:4, :) / (1 + exp(-x(5:8, :)))
  call ok(all(abs(y - want) <= 1e-6 * max(1.0, abs(want))), 'GLU of random data: the reference')

  call bkFreeMemory(ctx, xm)
  call bkFreeMemory(ctx, ym)
  call bkDestroyPlan(plan)
  call bkDestroyContext(ctx)
  print '(a, i0)', '1..', count
  if (failures > 0) stop 1

contains

  subroutine ok(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    count = count + 1
    if (cond) then
      print '(a, i0, a)', 'ok ', count, ' - ' // what
    else
      failures = failures + 1
      print '(a, i0, a)', 'not ok ', count, ' - ' // what
    end if
  end subroutine ok
end program fortran_integer8
