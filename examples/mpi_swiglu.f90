! SPDX-License-Identifier: Apache-2.0
! mpi_swiglu: libbk under MPI from Fortran, one rank per GPU (as
! examples/mpi_swiglu.c). Each rank takes the device of its node-local rank
! (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED; the host device when the
! node has no GPU), runs SwiGLU on its slice h(2*d, rows) of a distributed
! f64 field, and the ranks combine a checksum and their largest error with
! MPI_Allreduce; rank 0 checks the checksum against plain Fortran.
!
! Build: mpifort $(pkg-config --cflags bk-fortran) mpi_swiglu.f90 \
!          $(pkg-config --libs bk-fortran)
! Run:   mpirun -np 4 ./mpi_swiglu
program mpi_swiglu
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: real64
  use mpi
  use bk
  implicit none
  integer, parameter :: d = 128, rows = 32
  real(real64), allocatable :: h(:, :), y(:, :)
  type(BkDeviceProperties), allocatable, target :: props(:)
  type(BkDeviceProperties) :: device
  type(BkContext) :: ctx
  type(BkQueue) :: queue
  type(BkPlan) :: plan
  type(BkMemory) :: hmem, ymem
  type(BkGatedActivationInfo) :: info
  integer(c_int64_t) :: haddr, yaddr
  integer(c_int32_t) :: ndev, gpus
  integer :: ierr, rank, nranks, node, local_rank, i, r, failed
  real(real64) :: local(2), global(2), want

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, node, ierr)
  call MPI_Comm_rank(node, local_rank, ierr)
  call MPI_Comm_free(node, ierr)

  ! The node-local rank picks a GPU; ranks share GPUs round robin.
  ndev = 0
  call bk_check(bkEnumerateDevices(ndev, c_null_ptr), 'bkEnumerateDevices')
  allocate (props(max(ndev, 1)))
  call bk_check(bkEnumerateDevices(ndev, c_loc(props(1))), 'bkEnumerateDevices')
  gpus = int(count(props(1:ndev)%deviceType == BK_DEVICE_TYPE_CUDA), c_int32_t)
  if (gpus > 0) then
    call bk_create_context(ctx, BK_DEVICE_TYPE_CUDA, int(mod(local_rank, gpus), c_int32_t))
  else
    call bk_create_context(ctx, BK_DEVICE_TYPE_HOST)
  end if
  call bk_check(bkGetContextProperties(ctx, device), 'bkGetContextProperties')
  call bk_check(bkGetQueue(ctx, 0_c_int32_t, queue), 'bkGetQueue')

  ! This rank's columns of the field: h(:, r) is global row rank*rows + r.
  allocate (h(2 * d, rows), y(d, rows))
  do r = 1, rows
    do i = 1, 2 * d
      h(i, r) = input_value(rank * rows + r - 1, i - 1)
    end do
  end do
  info%kind = BK_GATED_ACTIVATION_SWIGLU
  info%splitAxis = bk_split_axis(1, 2)
  info%input = bk_tensor_desc_of(h)
  info%output = bk_tensor_desc_of(y)
  call bk_create_plan(ctx, info, plan)
  call bk_allocate_memory(ctx, bk_sizeof(h), hmem, haddr)
  call bk_allocate_memory(ctx, bk_sizeof(y), ymem, yaddr)
  call bk_copy_to_device(ctx, haddr, h)
  call bk_queue_run(queue, plan, [haddr, yaddr])
  call bk_check(bkQueueWaitIdle(queue), 'bkQueueWaitIdle')
  call bk_copy_from_device(ctx, y, yaddr)

  ! The rank's checksum and largest error, combined over all ranks.
  local(1) = sum(y)
  local(2) = maxval(abs(y - h(1:d, :) * h(d + 1:, :) / (1 + exp(-h(d + 1:, :)))))
  call MPI_Allreduce(local(1), global(1), 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(local(2), global(2), 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  write (*, '(a, i0, a, i0, a, i0, 3a, es10.3)') 'rank ', rank, ' of ', nranks, ' (node rank ', &
       local_rank, ') on ', bk_c_string(device%name), ': slice error ', local(2)

  failed = 0
  if (rank == 0) then
    want = 0
    do r = 0, nranks * rows - 1
      do i = 0, d - 1
        want = want + swiglu(input_value(r, i), input_value(r, d + i))
      end do
    end do
    if (abs(global(1) - want) > 1.0e-9_real64 * max(1.0_real64, abs(want)) .or. &
        global(2) > 1.0e-12_real64) failed = 1
    write (*, '(a, es20.12, a, es20.12, a, es10.3, a, l1)') 'checksum ', global(1), &
         ' (plain Fortran ', want, '), largest error ', global(2), ', failed: ', failed /= 0
  end if
  call MPI_Bcast(failed, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)

  call bkFreeMemory(ctx, hmem)
  call bkFreeMemory(ctx, ymem)
  call bkDestroyPlan(plan)
  call bkDestroyContext(ctx)
  call MPI_Finalize(ierr)
  if (failed /= 0) error stop 'mpi_swiglu: wrong checksum'

contains

  ! Element (row, column) of the whole input, both counted from 0.
  pure function input_value(row, col) result(v)
    integer, intent(in) :: row, col
    real(real64) :: v
    v = 2 * sin(0.01_real64 * col + 0.3_real64 * row)
  end function input_value

  pure function swiglu(a, b) result(v)
    real(real64), intent(in) :: a, b
    real(real64) :: v
    v = a * b / (1 + exp(-b))
  end function swiglu
end program mpi_swiglu
