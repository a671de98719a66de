! SPDX-License-Identifier: Apache-2.0
! The core API from Fortran on the host device: version, devices (the
! two-call idiom), contexts with allocation callbacks written in Fortran,
! memory and copies of Fortran arrays, fill and copy commands in one-time
! and reusable command buffers, queues, plan properties, null handles, and
! the index-order rule of the descriptor helpers.
module fortran_api_alloc
  use, intrinsic :: iso_c_binding
  implicit none
  integer, save :: allocs = 0, frees = 0
  interface
    function posix_memalign(memptr, alignment, size) result(err) bind(c, name='posix_memalign')
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), intent(out) :: memptr
      integer(c_size_t), value :: alignment, size
      integer(c_int) :: err
    end function posix_memalign
    subroutine c_free(p) bind(c, name='free')
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine c_free
  end interface
contains
  ! A PFN_bkAllocationFunction; pUserData points at a tag checked here.
  function fortran_alloc(pUserData, size, alignment) result(p) bind(c)
    type(c_ptr), value :: pUserData
    integer(c_size_t), value :: size, alignment
    type(c_ptr) :: p
    integer(c_int), pointer :: tag
    call c_f_pointer(pUserData, tag)
    p = c_null_ptr
    if (tag /= 7) return
    if (posix_memalign(p, max(alignment, int(c_sizeof(p), c_size_t)), max(size, 1_c_size_t)) /= 0) &
         p = c_null_ptr
    if (c_associated(p)) allocs = allocs + 1
  end function fortran_alloc

  ! A PFN_bkFreeFunction.
  subroutine fortran_free(pUserData, pMemory) bind(c)
    type(c_ptr), value :: pUserData, pMemory
    if (.not. c_associated(pUserData) .or. .not. c_associated(pMemory)) return
    frees = frees + 1
    call c_free(pMemory)
  end subroutine fortran_free
end module fortran_api_alloc

program fortran_api
  use, intrinsic :: iso_c_binding
  use bk
  use fortran_tap
  use fortran_api_alloc
  implicit none
  type(BkContext) :: ctx
  type(BkQueue) :: queue

  call version()
  call devices()
  call index_order()
  call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
  call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')
  call context_and_queues()
  call memory_and_copies()
  call commands()
  call plan_properties()
  call null_handles()
  call bkDestroyContext(ctx)
  call allocation_callbacks()
  call tap_done()

contains

  subroutine version()
    integer(c_int32_t) :: v
    v = bkGetVersion()
    call tap_ok(BK_VERSION_GET_MAJOR(v) == BK_VERSION_MAJOR, 'bkGetVersion major is the module''s')
    call tap_ok(BK_MAKE_VERSION(BK_VERSION_MAJOR, BK_VERSION_MINOR, BK_VERSION_PATCH) &
         == BK_HEADER_VERSION, 'BK_MAKE_VERSION gives BK_HEADER_VERSION')
    call tap_ok(BK_VERSION_GET_MINOR(BK_MAKE_VERSION(3, 1023, 4095)) == 1023 .and. &
         BK_VERSION_GET_PATCH(BK_MAKE_VERSION(3, 1023, 4095)) == 4095 .and. &
         BK_VERSION_GET_MAJOR(BK_MAKE_VERSION(1023, 0, 0)) == 1023, &
         'BK_VERSION_GET_* take BK_MAKE_VERSION apart, all bits')
  end subroutine version

  subroutine devices()
    integer(c_int32_t) :: count, two
    type(BkDeviceProperties), target :: props(8)
    type(BkDeviceProperties), allocatable :: all(:)
    integer(c_int) :: res
    count = 0
    res = bkEnumerateDevices(count, c_null_ptr)
    call tap_ok(res == BK_SUCCESS .and. count >= 1, 'bkEnumerateDevices counts at least the host')
    two = 0
    res = bkEnumerateDevices(two, c_loc(props))
    call tap_ok(res == BK_INCOMPLETE .and. two == 0, 'an array too small gives BK_INCOMPLETE')
    two = int(min(count, size(props)), c_int32_t)
    res = bkEnumerateDevices(two, c_loc(props))
    call tap_ok(res >= 0 .and. props(1)%deviceType == BK_DEVICE_TYPE_HOST .and. &
         props(1)%queueCount >= 1 .and. len(bk_c_string(props(1)%name)) > 0, &
         'the host device comes first, named, with queues')
    call tap_diag('device 1: ' // bk_c_string(props(1)%name))
    call bk_enumerate_devices(all)
    call tap_ok(size(all) == count .and. all(1)%deviceType == BK_DEVICE_TYPE_HOST, &
         'bk_enumerate_devices returns every device')
  end subroutine devices

  ! Fortran x(d, l, h, b) is C extent [b, h, l, d]; dimension k of rank r
  ! is C axis r - k.
  subroutine index_order()
    type(BkTensorDesc) :: d
    real(c_double) :: x(2, 3, 4, 5)
    integer(c_int16_t) :: h(6, 7)
    d = bk_tensor_desc(BK_DATA_TYPE_F32, [64, 128, 8, 2])
    call tap_ok(d%rank == 4 .and. all(d%extent(1:4) == [2, 8, 128, 64]) .and. &
         all(d%extent(5:) == 0) .and. all(d%stride == 0) .and. d%dataType == BK_DATA_TYPE_F32, &
         'bk_tensor_desc: Fortran shape [d,l,h,b] is extent [b,h,l,d]')
    d = bk_tensor_desc(BK_DATA_TYPE_F32, [3_c_int64_t, 4_c_int64_t], [2_c_int64_t, 10_c_int64_t])
    call tap_ok(all(d%extent(1:2) == [4, 3]) .and. all(d%stride(1:2) == [10, 2]), &
         'bk_tensor_desc: Fortran strides reversed too (int64 shape)')
    call tap_ok(all(bk_split_axis([1, 2, 3, 4], 4) == [3, 2, 1, 0]), &
         'bk_split_axis(k, 4) = 4 - k')
    d = bk_tensor_desc_of(x)
    call tap_ok(d%dataType == BK_DATA_TYPE_F64 .and. d%rank == 4 .and. &
         all(d%extent(1:4) == [5, 4, 3, 2]), 'bk_tensor_desc_of(real(c_double) x(2,3,4,5))')
    d = bk_tensor_desc_of(h)
    call tap_ok(d%dataType == BK_DATA_TYPE_U16 .and. all(d%extent(1:2) == [7, 6]), &
         'bk_tensor_desc_of(integer(c_int16_t)) is U16')
    d = bk_tensor_desc_of(h, BK_DATA_TYPE_BF16)
    call tap_ok(d%dataType == BK_DATA_TYPE_BF16, 'bk_tensor_desc_of(h, BK_DATA_TYPE_BF16)')
    call tap_ok(bk_data_type_size(BK_DATA_TYPE_F64) == 8 .and. &
         bk_data_type_size(BK_DATA_TYPE_BF16) == 2 .and. bk_data_type_size(BK_DATA_TYPE_U8) == 1 &
         .and. bk_data_type_size(BK_DATA_TYPE_UNDEFINED) == 0, 'bk_data_type_size')
  end subroutine index_order

  subroutine context_and_queues()
    type(BkDeviceProperties) :: props
    type(BkQueue) :: q
    integer(c_int) :: res
    res = bkGetContextProperties(ctx, props)
    call tap_ok(res == BK_SUCCESS .and. props%deviceType == BK_DEVICE_TYPE_HOST .and. &
         props%queueCount >= 1, 'bkGetContextProperties on a host context')
    res = bkGetQueue(ctx, props%queueCount - 1, q)
    if (res == BK_SUCCESS) res = bkQueueWaitIdle(q)
    call tap_ok(res == BK_SUCCESS .and. .not. bk_is_null(q), 'the last queue index works and waits')
    res = bkGetQueue(ctx, props%queueCount, q)
    call tap_ok(res == BK_ERROR_INVALID_ARGUMENT, 'queue index queueCount is refused')
  end subroutine context_and_queues

  subroutine memory_and_copies()
    type(BkMemory) :: mem
    integer(c_int64_t) :: addr, addr2, addr3
    integer(c_int) :: res
    real(c_double) :: x(3, 4, 5), y(3, 4, 5)
    integer(c_int32_t) :: i(10), j(10)
    integer(c_int16_t) :: s(7), t(7)
    integer(c_int8_t) :: b(5), c(5)
    real(c_float) :: f(12), g(4)
    integer :: k
    call bk_allocate_memory(ctx, 4096_c_int64_t, mem, addr)
    call tap_ok(addr /= 0 .and. .not. bk_is_null(mem), 'bk_allocate_memory gives memory and address')
    res = bkGetMemoryAddress(mem, addr2)
    addr3 = bk_memory_address(mem)
    call tap_ok(res == BK_SUCCESS .and. addr2 == addr .and. addr3 == addr, &
         'bkGetMemoryAddress and bk_memory_address agree')
    x = reshape([(real(k, c_double) / 7, k = 1, size(x))], shape(x))
    y = 0
    call bk_copy_to_device(ctx, addr, x)
    call bk_copy_from_device(ctx, y, addr)
    call tap_ok(all(y == x), 'real(c_double) rank-3 array round trip')
    i = [(k * 1000003, k = 1, 10)]
    call bk_copy_to_device(ctx, addr, i)
    call bk_copy_from_device(ctx, j, addr)
    s = [(int(k * 1111, c_int16_t), k = 1, 7)]
    call bk_copy_to_device(ctx, addr + 64, s)
    call bk_copy_from_device(ctx, t, addr + 64)
    b = [(int(-k, c_int8_t), k = 1, 5)]
    call bk_copy_to_device(ctx, addr + 128, b)
    call bk_copy_from_device(ctx, c, addr + 128)
    call tap_ok(all(i == j) .and. all(s == t) .and. all(b == c), &
         'integer(c_int32_t), (c_int16_t), (c_int8_t) round trips')
    ! A strided section is gathered on the way out and scattered back.
    f = [(real(k, c_float), k = 1, 12)]
    call bk_copy_to_device(ctx, addr, f(1:12:3))
    call bk_copy_from_device(ctx, g, addr)
    call tap_ok(all(g == [1, 4, 7, 10]), 'a section f(1:12:3) is copied in element order')
    f = 0
    call bk_copy_from_device(ctx, f(2:12:3), addr)
    call tap_ok(all(f(2:12:3) == [1, 4, 7, 10]) .and. all(f(1:12:3) == 0), &
         'copying back into a section writes only the section')
    call tap_ok(bkCopyToDevice(ctx, addr + 4090, c_loc_f(f), 16_c_int64_t) == &
         BK_ERROR_BUFFER_TOO_SMALL, 'a raw copy past the end of the memory is refused')
    call bkFreeMemory(ctx, mem)
  end subroutine memory_and_copies

  function c_loc_f(f) result(p)
    real(c_float), intent(in), target :: f(:)
    type(c_ptr) :: p
    p = c_loc(f(1))
  end function c_loc_f

  subroutine commands()
    type(BkCommandBuffer) :: once, again
    type(BkCommandBufferBeginInfo) :: begin
    type(BkMemory) :: mem
    integer(c_int64_t) :: a
    integer(c_int32_t) :: got(16), zeros(16)
    call bk_allocate_memory(ctx, 256_c_int64_t, mem, a)
    zeros = 0
    call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, once), 'bkAllocateCommandBuffer')
    call bk_check(bkBeginCommandBuffer(once, begin), 'bkBeginCommandBuffer')
    call bk_check(bkCmdFillMemory(once, a, 64_c_int64_t, int(z'01020304', c_int32_t)), 'fill')
    call bk_check(bkCmdCopyMemory(once, a + 64, a, 64_c_int64_t), 'copy')
    call bk_check(bkEndCommandBuffer(once), 'bkEndCommandBuffer')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [once]), 'bkQueueSubmit')
    call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
    call bk_copy_from_device(ctx, got, a + 64)
    call tap_ok(all(got == int(z'01020304', c_int32_t)), 'fill then copy in a one-time buffer')
    call tap_ok(bkQueueSubmit(queue, 1_c_int32_t, [once]) == BK_ERROR_INVALID_STATE, &
         'a one-time buffer cannot be submitted twice')

    call bk_check(bkAllocateCommandBuffer(ctx, c_null_ptr, again), 'bkAllocateCommandBuffer')
    begin%usage = BK_COMMAND_BUFFER_USAGE_REUSABLE
    call bk_check(bkBeginCommandBuffer(again, begin), 'bkBeginCommandBuffer')
    call bk_check(bkCmdFillMemory(again, a + 128, 64_c_int64_t, 7_c_int32_t), 'fill')
    call bk_check(bkEndCommandBuffer(again), 'bkEndCommandBuffer')
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [again]), 'bkQueueSubmit')
    call bk_copy_to_device(ctx, a + 128, zeros)
    call bk_check(bkQueueSubmit(queue, 1_c_int32_t, [again, again]), 'bkQueueSubmit')
    call bk_copy_from_device(ctx, got, a + 128)
    call tap_ok(all(got == 7), 'a reusable buffer replays at every submit')
    call bkFreeCommandBuffer(once)
    call bkFreeCommandBuffer(again)
    call bkFreeMemory(ctx, mem)
  end subroutine commands

  subroutine plan_properties()
    type(BkGatedActivationBackwardInfo) :: info
    type(BkPlanProperties) :: props
    type(BkPlan) :: plan
    info%kind = BK_GATED_ACTIVATION_GEGLU_TANH
    info%splitAxis = bk_split_axis(1, 2)
    info%input = bk_tensor_desc(BK_DATA_TYPE_F32, [4, 3])
    info%gradOutput = bk_tensor_desc(BK_DATA_TYPE_F32, [2, 3])
    info%gradInput = info%input
    call bk_create_plan(ctx, info, plan)
    call tap_ok(.not. bk_is_null(plan), 'bk_create_plan gives a plan')
    call bk_check(bkGetPlanProperties(plan, props), 'bkGetPlanProperties')
    call tap_ok(props%operation == BK_STRUCTURE_TYPE_GATED_ACTIVATION_BACKWARD_INFO .and. &
         props%backend == BK_DEVICE_TYPE_HOST .and. props%bindingCount == 3, &
         'plan properties: operation, backend, 3 binding slots')
    call tap_ok(len(bk_c_string(props%kernelName)) > 0 .and. &
         props%precision%computeType == BK_DATA_TYPE_F32 .and. &
         props%precision%deterministic == BK_TRUE, 'plan properties: kernel name and precision')
    call tap_diag('kernel: ' // bk_c_string(props%kernelName))
    call bkDestroyPlan(plan)
  end subroutine plan_properties

  subroutine null_handles()
    type(BkContext) :: c
    type(BkPlan) :: p
    type(BkMemory) :: m
    type(BkCommandBuffer) :: b
    type(BkQueue) :: q
    call tap_ok(bk_is_null(c) .and. bk_is_null(p) .and. bk_is_null(m) .and. bk_is_null(b) .and. &
         bk_is_null(q), 'new handles are BK_NULL_HANDLE')
    call bkDestroyPlan(p)
    call bkFreeMemory(ctx, m)
    call bkFreeCommandBuffer(b)
    call bkDestroyQueue(q)
    call bkDestroyContext(c)
    call tap_ok(.true., 'destroy and free functions accept null handles')
  end subroutine null_handles

  ! Every host allocation of a context and its objects through Fortran
  ! callbacks, each matched by a free.
  subroutine allocation_callbacks()
    type(BkAllocationCallbacks), target :: cb
    integer(c_int), target :: tag
    type(BkContextCreateInfo) :: info
    type(BkContext) :: c
    type(BkCommandBuffer) :: b
    tag = 7
    cb%pUserData = c_loc(tag)
    cb%pfnAllocation = c_funloc(fortran_alloc)
    cb%pfnFree = c_funloc(fortran_free)
    info%deviceType = BK_DEVICE_TYPE_HOST
    call bk_check(bkCreateContext(info, c_loc(cb), c), 'bkCreateContext')
    call bk_check(bkAllocateCommandBuffer(c, c_loc(cb), b), 'bkAllocateCommandBuffer')
    call tap_ok(allocs >= 2, 'libbk allocates through the Fortran callbacks')
    call bkFreeCommandBuffer(b)
    call bkDestroyContext(c)
    call tap_ok(allocs == frees, 'and frees all it allocated')
  end subroutine allocation_callbacks
end program fortran_api
