# SPDX-License-Identifier: Apache-2.0
# bk_constants.f90: every enumerator (an `enum, bind(c)` block per C enum,
# so each has the kind of a C int) and every numeric #define (an
# integer(c_int32_t) parameter) of the headers, under their C names.

# #defines with no Fortran twin: the export macro, and the null handle (a
# new Fortran handle is null; bk_is_null tests it).
BEGIN {
    skip["BK_API"] = 1
    skip["BK_NULL_HANDLE"] = 1
    # Values that are C expressions the generator does not translate,
    # spelt out (t/fortran/fortran-layout.sh compares the values with C's).
    spelt["BK_HEADER_VERSION"] = \
        "ior(ishft(BK_VERSION_MAJOR, 22), ior(ishft(BK_VERSION_MINOR, 12), BK_VERSION_PATCH))"
}

# A heading before the first constant of each header and section.
function heading(    t) {
    if (section == "") return
    t = section == "-" ? "bk/" file : section " (bk/" file ")"
    print ""
    print "  ! ---- " t " " substr("------------------------------------------------------------", 1, 66 - length(t))
    section = ""
}

END {
    if (failed) exit 1
    generated("libbk Fortran binding: the constants of include/bk/*.h.")
    print "!"
    print "! C enums are `enum, bind(c)` blocks, so each enumerator has the kind of a"
    print "! C int (32 bits); #define'd numbers are integer(c_int32_t) parameters."
    print "! The names are the C names (Fortran ignores case). C's unsigned values"
    print "! map to the signed integer of the same size."
    print "module bk_constants"
    print "  use, intrinsic :: iso_c_binding, only: c_int32_t"
    print "  implicit none"
    print "  private :: c_int32_t"
    for (i = 1; i <= nrec; i++) {
        split(rec[i], f, "\t")
        if (f[1] == "file") { file = f[2]; section = "-" }
        else if (f[1] == "section") section = f[2]
        else if (f[1] == "define") {
            if (f[2] in skip || f[3] == "") continue
            v = cnumber(f[3])
            if (f[2] in spelt) v = spelt[f[2]]
            if (v == "") fail("#define " f[2] " " f[3] ": no Fortran value (add it to spelt[] in constants.awk)")
            heading()
            print wrap("  integer(c_int32_t), parameter :: " f[2] " = " v, 5)
        } else if (f[1] == "enum") {
            heading()
            print "  enum, bind(c)" (f[2] == "-" ? "" : "  ! " f[2])
        } else if (f[1] == "value") {
            v = cnumber(f[3])
            if (v == "") fail("enumerator " f[2] " = " f[3] ": not a number")
            print "    enumerator :: " f[2] " = " v
        } else if (f[1] == "endenum") print "  end enum"
    }
    print "end module bk_constants"
}
