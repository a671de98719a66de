! SPDX-License-Identifier: Apache-2.0
! Copyright The libbk authors; licensed under the Apache License, Version 2.0
! (http://www.apache.org/licenses/LICENSE-2.0; LICENSE in libbk's sources).
!
! libbk for Fortran: `use bk` gives the whole C API (constants, handle and
! struct types, one interface per function, under their C names) and the
! Fortran helpers (bk_* in lower case). See bk-fortran(7).
module bk
  use bk_constants
  use bk_types
  use bk_capi
  use bk_helpers
  implicit none
  public
end module bk
