! SPDX-License-Identifier: Apache-2.0
! Copyright The libbk authors; licensed under the Apache License, Version 2.0
! (http://www.apache.org/licenses/LICENSE-2.0; LICENSE in libbk's sources).
!
! libbk Fortran binding: one bind(c) interface per exported C function
! (every symbol of lib/libbk.map; t/fortran-coverage.sh checks). The
! Fortran name is the C name. Calls go straight to libbk: no code here.
!
! Mapping rules:
! - a handle is the matching bind(c) handle type (bk_types), by value;
!   a handle written by the call (BkContext *pContext) is intent(out);
! - a struct pointer is the bind(c) struct by reference: intent(in) for
!   const input structs, intent(inout) for output structs, whose sType and
!   pNext the caller sets (the defaults already do);
! - an optional pointer (pAllocator, pProperties of the two-call idiom)
!   and void * data are type(c_ptr), value: pass c_null_ptr or c_loc(x);
! - a count or address is an integer of the C size, by value, or by
!   reference where C takes a pointer to it.
module bk_capi
  use, intrinsic :: iso_c_binding, only: c_ptr, c_funptr, c_int, c_int32_t, c_int64_t
  use bk_types
  implicit none
  private
  public :: bkGetVersion, bkResultString, bkGetLastErrorMessage, bkSetMessageCallback
  public :: bkEnumerateDevices, bkCreateContext, bkDestroyContext, bkGetContextProperties
  public :: bkAllocateMemory, bkFreeMemory, bkGetMemoryAddress, bkCopyToDevice, bkCopyFromDevice
  public :: bkGetQueue, bkImportQueue, bkDestroyQueue, bkQueueWaitIdle
  public :: bkAllocateCommandBuffer, bkFreeCommandBuffer, bkBeginCommandBuffer, &
       bkEndCommandBuffer, bkQueueSubmit, bkCmdCopyMemory, bkCmdFillMemory
  public :: bkCreatePlan, bkDestroyPlan, bkGetPlanProperties, bkCmdRun
  public :: bkCheckSparse24Report, bkCheckW4A16RepackReport

  interface
    ! ---- Errors and messages ---------------------------------------------
    function bkGetVersion() result(version) bind(c, name='bkGetVersion')
      import :: c_int32_t
      integer(c_int32_t) :: version
    end function bkGetVersion

    ! A static NUL-terminated string: bk_c_string(bkResultString(r)).
    function bkResultString(result) result(str) bind(c, name='bkResultString')
      import :: c_ptr, c_int
      integer(c_int), value :: result
      type(c_ptr) :: str
    end function bkResultString

    ! The calling thread's last error message; bk_last_error_message()
    ! returns it as a Fortran string.
    function bkGetLastErrorMessage() result(str) bind(c, name='bkGetLastErrorMessage')
      import :: c_ptr
      type(c_ptr) :: str
    end function bkGetLastErrorMessage

    subroutine bkSetMessageCallback(pfnCallback, pUserData) bind(c, name='bkSetMessageCallback')
      import :: c_funptr, c_ptr
      type(c_funptr), value :: pfnCallback   ! c_funloc of a PFN_bkMessageCallback, or c_null_funptr
      type(c_ptr), value :: pUserData
    end subroutine bkSetMessageCallback

    ! ---- Devices and contexts --------------------------------------------
    ! pProperties: c_null_ptr to ask for the count, else c_loc(props(1)).
    function bkEnumerateDevices(pDeviceCount, pProperties) result(res) &
         bind(c, name='bkEnumerateDevices')
      import :: c_int, c_int32_t, c_ptr
      integer(c_int32_t), intent(inout) :: pDeviceCount
      type(c_ptr), value :: pProperties
      integer(c_int) :: res
    end function bkEnumerateDevices

    function bkCreateContext(pCreateInfo, pAllocator, pContext) result(res) &
         bind(c, name='bkCreateContext')
      import :: c_int, c_ptr, BkContextCreateInfo, BkContext
      type(BkContextCreateInfo), intent(in) :: pCreateInfo
      type(c_ptr), value :: pAllocator       ! c_null_ptr or c_loc(BkAllocationCallbacks)
      type(BkContext), intent(out) :: pContext
      integer(c_int) :: res
    end function bkCreateContext

    subroutine bkDestroyContext(context) bind(c, name='bkDestroyContext')
      import :: BkContext
      type(BkContext), value :: context
    end subroutine bkDestroyContext

    function bkGetContextProperties(context, pProperties) result(res) &
         bind(c, name='bkGetContextProperties')
      import :: c_int, BkContext, BkDeviceProperties
      type(BkContext), value :: context
      type(BkDeviceProperties), intent(inout) :: pProperties
      integer(c_int) :: res
    end function bkGetContextProperties

    ! ---- Memory ------------------------------------------------------------
    function bkAllocateMemory(context, pAllocateInfo, pAllocator, pMemory) result(res) &
         bind(c, name='bkAllocateMemory')
      import :: c_int, c_ptr, BkContext, BkMemoryAllocateInfo, BkMemory
      type(BkContext), value :: context
      type(BkMemoryAllocateInfo), intent(in) :: pAllocateInfo
      type(c_ptr), value :: pAllocator
      type(BkMemory), intent(out) :: pMemory
      integer(c_int) :: res
    end function bkAllocateMemory

    subroutine bkFreeMemory(context, memory) bind(c, name='bkFreeMemory')
      import :: BkContext, BkMemory
      type(BkContext), value :: context
      type(BkMemory), value :: memory
    end subroutine bkFreeMemory

    function bkGetMemoryAddress(memory, pAddress) result(res) &
         bind(c, name='bkGetMemoryAddress')
      import :: c_int, c_int64_t, BkMemory
      type(BkMemory), value :: memory
      integer(c_int64_t), intent(out) :: pAddress
      integer(c_int) :: res
    end function bkGetMemoryAddress

    function bkCopyToDevice(context, dst, pSrc, size) result(res) bind(c, name='bkCopyToDevice')
      import :: c_int, c_int64_t, c_ptr, BkContext
      type(BkContext), value :: context
      integer(c_int64_t), value :: dst
      type(c_ptr), value :: pSrc
      integer(c_int64_t), value :: size
      integer(c_int) :: res
    end function bkCopyToDevice

    function bkCopyFromDevice(context, pDst, src, size) result(res) &
         bind(c, name='bkCopyFromDevice')
      import :: c_int, c_int64_t, c_ptr, BkContext
      type(BkContext), value :: context
      type(c_ptr), value :: pDst
      integer(c_int64_t), value :: src
      integer(c_int64_t), value :: size
      integer(c_int) :: res
    end function bkCopyFromDevice

    ! ---- Queues --------------------------------------------------------------
    function bkGetQueue(context, queueIndex, pQueue) result(res) bind(c, name='bkGetQueue')
      import :: c_int, c_int32_t, BkContext, BkQueue
      type(BkContext), value :: context
      integer(c_int32_t), value :: queueIndex
      type(BkQueue), intent(out) :: pQueue
      integer(c_int) :: res
    end function bkGetQueue

    function bkImportQueue(context, pNativeQueue, pQueue) result(res) &
         bind(c, name='bkImportQueue')
      import :: c_int, c_ptr, BkContext, BkQueue
      type(BkContext), value :: context
      type(c_ptr), value :: pNativeQueue      ! a CUstream on CUDA
      type(BkQueue), intent(out) :: pQueue
      integer(c_int) :: res
    end function bkImportQueue

    subroutine bkDestroyQueue(queue) bind(c, name='bkDestroyQueue')
      import :: BkQueue
      type(BkQueue), value :: queue
    end subroutine bkDestroyQueue

    function bkQueueWaitIdle(queue) result(res) bind(c, name='bkQueueWaitIdle')
      import :: c_int, BkQueue
      type(BkQueue), value :: queue
      integer(c_int) :: res
    end function bkQueueWaitIdle

    ! ---- Command buffers -------------------------------------------------
    function bkAllocateCommandBuffer(context, pAllocator, pCommandBuffer) result(res) &
         bind(c, name='bkAllocateCommandBuffer')
      import :: c_int, c_ptr, BkContext, BkCommandBuffer
      type(BkContext), value :: context
      type(c_ptr), value :: pAllocator
      type(BkCommandBuffer), intent(out) :: pCommandBuffer
      integer(c_int) :: res
    end function bkAllocateCommandBuffer

    subroutine bkFreeCommandBuffer(commandBuffer) bind(c, name='bkFreeCommandBuffer')
      import :: BkCommandBuffer
      type(BkCommandBuffer), value :: commandBuffer
    end subroutine bkFreeCommandBuffer

    function bkBeginCommandBuffer(commandBuffer, pBeginInfo) result(res) &
         bind(c, name='bkBeginCommandBuffer')
      import :: c_int, BkCommandBuffer, BkCommandBufferBeginInfo
      type(BkCommandBuffer), value :: commandBuffer
      type(BkCommandBufferBeginInfo), intent(in) :: pBeginInfo
      integer(c_int) :: res
    end function bkBeginCommandBuffer

    function bkEndCommandBuffer(commandBuffer) result(res) bind(c, name='bkEndCommandBuffer')
      import :: c_int, BkCommandBuffer
      type(BkCommandBuffer), value :: commandBuffer
      integer(c_int) :: res
    end function bkEndCommandBuffer

    ! pCommandBuffers: an array of handles, e.g. [cmd] for one.
    function bkQueueSubmit(queue, commandBufferCount, pCommandBuffers) result(res) &
         bind(c, name='bkQueueSubmit')
      import :: c_int, c_int32_t, BkQueue, BkCommandBuffer
      type(BkQueue), value :: queue
      integer(c_int32_t), value :: commandBufferCount
      type(BkCommandBuffer), intent(in) :: pCommandBuffers(*)
      integer(c_int) :: res
    end function bkQueueSubmit

    function bkCmdCopyMemory(commandBuffer, dst, src, size) result(res) &
         bind(c, name='bkCmdCopyMemory')
      import :: c_int, c_int64_t, BkCommandBuffer
      type(BkCommandBuffer), value :: commandBuffer
      integer(c_int64_t), value :: dst
      integer(c_int64_t), value :: src
      integer(c_int64_t), value :: size
      integer(c_int) :: res
    end function bkCmdCopyMemory

    function bkCmdFillMemory(commandBuffer, dst, size, pattern) result(res) &
         bind(c, name='bkCmdFillMemory')
      import :: c_int, c_int32_t, c_int64_t, BkCommandBuffer
      type(BkCommandBuffer), value :: commandBuffer
      integer(c_int64_t), value :: dst
      integer(c_int64_t), value :: size
      integer(c_int32_t), value :: pattern
      integer(c_int) :: res
    end function bkCmdFillMemory

    ! ---- Plans -----------------------------------------------------------
    function bkCreatePlan(context, pCreateInfo, pAllocator, pPlan) result(res) &
         bind(c, name='bkCreatePlan')
      import :: c_int, c_ptr, BkContext, BkPlanCreateInfo, BkPlan
      type(BkContext), value :: context
      type(BkPlanCreateInfo), intent(in) :: pCreateInfo
      type(c_ptr), value :: pAllocator
      type(BkPlan), intent(out) :: pPlan
      integer(c_int) :: res
    end function bkCreatePlan

    subroutine bkDestroyPlan(plan) bind(c, name='bkDestroyPlan')
      import :: BkPlan
      type(BkPlan), value :: plan
    end subroutine bkDestroyPlan

    function bkGetPlanProperties(plan, pProperties) result(res) &
         bind(c, name='bkGetPlanProperties')
      import :: c_int, BkPlan, BkPlanProperties
      type(BkPlan), value :: plan
      type(BkPlanProperties), intent(inout) :: pProperties
      integer(c_int) :: res
    end function bkGetPlanProperties

    function bkCmdRun(commandBuffer, plan, pRunInfo) result(res) bind(c, name='bkCmdRun')
      import :: c_int, BkCommandBuffer, BkPlan, BkRunInfo
      type(BkCommandBuffer), value :: commandBuffer
      type(BkPlan), value :: plan
      type(BkRunInfo), intent(in) :: pRunInfo
      integer(c_int) :: res
    end function bkCmdRun

    ! ---- The GEMM family -------------------------------------------------
    ! BK_SUCCESS for a report whose status is BK_SPARSE24_STATUS_OK, else
    ! BK_ERROR_INVALID_ARGUMENT and a message naming the first bad row and
    ! group. pReport is read back from the device first
    ! (bk_check_sparse24_report does both).
    function bkCheckSparse24Report(pReport) result(res) bind(c, name='bkCheckSparse24Report')
      import :: c_int, BkSparse24Report
      type(BkSparse24Report), intent(in) :: pReport
      integer(c_int) :: res
    end function bkCheckSparse24Report

    ! ---- The W4A16 family --------------------------------------------------
    ! BK_SUCCESS for a report whose status is BK_W4A16_REPACK_STATUS_OK,
    ! else BK_ERROR_UNSUPPORTED (asymmetric zero points) or
    ! BK_ERROR_INVALID_ARGUMENT (a bad g_idx) and a message naming the first
    ! bad entry. pReport is read back from the device first
    ! (bk_check_w4a16_repack_report does both).
    function bkCheckW4A16RepackReport(pReport) result(res) &
         bind(c, name='bkCheckW4A16RepackReport')
      import :: c_int, BkW4A16RepackReport
      type(BkW4A16RepackReport), intent(in) :: pReport
      integer(c_int) :: res
    end function bkCheckW4A16RepackReport
  end interface
end module bk_capi
