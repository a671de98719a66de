# SPDX-License-Identifier: Apache-2.0
# bk_capi.f90: one bind(c) interface per BK_API function, under its C name
# and with its C parameter names (so keyword arguments work). The rules:
#   handle                        type(H), value
#   H * (the call writes it)      type(H), intent(out)
#   const H * (an array)          type(H), intent(in) :: p(*)
#   const S * (an input struct)   type(S), intent(in)
#   S * (an output struct)        type(S), intent(inout)
#   S * after a uint32_t *count   type(c_ptr), value: the two-call idiom's
#                                 array, c_null_ptr to ask for the count
#   const BkAllocationCallbacks * type(c_ptr), value: optional
#   void *, const char *          type(c_ptr), value
#   uint32_t * count (two-call)   intent(inout); other scalar pointers
#                                 intent(out)
#   numbers, enums                by value, the integer of the C size
#   function pointers             type(c_funptr), value
# A count, an index or a size (an integer parameter named *Count, *Index
# or size, by value or the two-call count) takes either integer kind: the
# function is also a generic of its name whose second specific, NAME_i64
# or NAME_i32, converts it (code built with -fdefault-integer-8 passes
# INTEGER(8) literals where C has uint32_t, default-integer code INTEGER(4)
# ones where C has uint64_t). A value outside uint32_t's range becomes
# 4294967295, never a small value wrapped around.
BEGIN { optional["BkAllocationCallbacks"] = 1 }

function emit(s) { body = body s "\n" }
function addimport(spec,    t) {
    t = spec; sub(/^[a-z]+\(/, "", t); sub(/\)$/, "", t); sub(/^kind=/, "", t)
    if (index(", " imports ", ", ", " t ", ") == 0) imports = imports (imports == "" ? "" : ", ") t
}

# The declaration of parameter k of the function being written.
function param_decl(k,    base, c, p, name, spec, attr, nb, np, dims) {
    base = pbase[k]; c = pconst[k]; p = pptrs[k]; name = pname[k]; dims = ""
    if (p == 0) {
        spec = ftype(base); attr = ", value"
    } else if (p == 1 && (base == "void" || base == "char" || base in optional || \
               (base in isstruct && k > 1 && pptrs[k - 1] == 1 && pbase[k - 1] == "uint32_t"))) {
        spec = "type(c_ptr)"; attr = ", value"
    } else if (p == 1 && base in ishandle) {
        spec = ftype(base); attr = c ? ", intent(in)" : ", intent(out)"; if (c) dims = "(*)"
    } else if (p == 1 && base in isstruct) {
        spec = ftype(base); attr = c ? ", intent(in)" : ", intent(inout)"
    } else if (p == 1 && !c) {
        spec = ftype(base)
        attr = (k < nparam && pptrs[k + 1] == 1 && pbase[k + 1] in isstruct) ? ", intent(inout)" : ", intent(out)"
    } else fail(fname ": no Fortran rule for parameter " name)
    addimport(spec)
    return "      " spec attr " :: " name dims
}

# The index of the count, index or size parameter, 0 if none.
function flex_param(    k, t, b, found) {
    found = 0
    for (k = 1; k <= nparam; k++) {
        b = pbase[k]; while (b in alias) b = alias[b]
        if (pbase[k] in alias && pbase[k] ~ /Address$/) continue
        if (b !~ /^u?int(32|64)_t$/ || pname[k] !~ /(Count|Index)$|^size$/) continue
        if (pptrs[k] > 1 || (pptrs[k] == 1 && pconst[k])) continue
        if (found) fail(fname ": two count parameters; the generator makes one alternative")
        found = k
    }
    return found
}

# The specific of a count parameter of the other kind: declarations as
# the C interface's (values by intent(in)), the count converted.
function flex_specific(k, kind, res,    j, d, alt, altname, call_, pre, post, a) {
    alt = ftype(pbase[k]) == "integer(c_int32_t)" ? "c_int64_t" : "c_int32_t"
    altname = fname "_" (alt == "c_int64_t" ? "i64" : "i32")
    s = "  ! " fname " with " pname[k] " of kind " alt ".\n"
    s = s wrap("  " kind " " altname "(" args ")" (res == "" ? "" : " result(res)"), 5) "\n"
    call_ = ""
    for (j = 1; j <= nparam; j++) {
        d = param_decl(j); sub(/, value/, ", intent(in)", d); sub(/^      /, "    ", d)
        if (j == k) sub(/integer\(c_int(32|64)_t\)/, "integer(" alt ")", d)
        s = s d "\n"
        a = pname[j]
        if (j == k && pptrs[k] == 1) a = "n"
        else if (j == k) a = alt == "c_int64_t" ? "u32_of(" a ")" : "int(" a ", c_int64_t)"
        call_ = call_ (j > 1 ? ", " : "") a
    }
    pre = ""; post = ""
    if (pptrs[k] == 1) {
        if (alt != "c_int64_t") fail(fname ": a uint64_t count by reference has no rule")
        s = s "    integer(c_int32_t) :: n\n"
        pre = "    n = u32_of(" pname[k] ")\n"
        post = "    " pname[k] " = iand(int(n, c_int64_t), 4294967295_c_int64_t)\n"
    }
    if (res != "") s = s "    " res " :: res\n"
    s = s pre wrap("    " (res == "" ? "call " : "res = ") fname "(" call_ ")", 5) "\n" post
    s = s "  end " kind " " altname "\n"
    specifics = specifics "\n" s
    generics = generics "\n  interface " fname "\n    procedure :: " fname "\n    module procedure " \
        altname "\n  end interface " fname "\n"
}

function flush_func(    k, kind, head, decls, res, flex) {
    if (fname == "") return
    imports = ""; decls = ""; args = ""
    for (k = 1; k <= nparam; k++) {
        decls = decls param_decl(k) "\n"
        args = args (k > 1 ? ", " : "") pname[k]
    }
    if (rptrs > 0) res = "type(c_ptr)"
    else if (rbase != "void") res = ftype(rbase)
    else res = ""
    if (res != "") addimport(res)
    kind = res == "" ? "subroutine" : "function"
    head = "    " kind " " fname "(" args ")" (res == "" ? "" : " result(res)")
    if (length(head) + length(fname) + 18 <= 100) emit(head " bind(c, name='" fname "')")
    else { emit(wrap(head, 5) " &"); emit("         bind(c, name='" fname "')") }
    if (imports != "") emit("      import :: " sortwords(imports))
    body = body decls
    if (res != "") emit("      " res " :: res")
    emit("    end " kind " " fname)
    flex = flex_param()
    if (flex) flex_specific(flex, kind, res)
    pub[++npub] = fname
    fname = ""
}

END {
    if (failed) exit 1
    body = ""; npub = 0; ndoc = 0
    for (i = 1; i <= nrec; i++) {
        split(rec[i], f, "\t")
        if (f[1] != "param") flush_func()
        if (f[1] == "file") file = f[2]
        else if (f[1] == "section") section = f[2]
        else if (f[1] == "doc") doc[++ndoc] = f[2]
        else if (f[1] == "func") {
            if (section != "" || file != lastfile) {
                t = section != "" ? section " (bk/" file ")" : "bk/" file
                emit(""); emit("    ! ---- " t " " substr("------------------------------------------------------------", 1, 64 - length(t)))
                section = ""; lastfile = file
            } else emit("")
            for (k = 1; k <= ndoc; k++) emit("    ! " doc[k])
            ndoc = 0
            fname = f[2]; rbase = f[3]; rptrs = f[5]; nparam = 0
        } else if (f[1] == "param" && fname != "") {
            nparam++; pbase[nparam] = f[2]; pconst[nparam] = f[3]; pptrs[nparam] = f[4]; pname[nparam] = f[5]
        } else if (f[1] != "param") ndoc = 0
    }
    flush_func()
    uses(body); uses(specifics)

    generated("libbk Fortran binding: one bind(c) interface per function of include/bk/*.h.")
    print "!"
    print "! The Fortran name is the C name; calls go straight to libbk. Handles are"
    print "! the bind(c) types of bk_types; a struct pointer is the struct by"
    print "! reference (intent(in) when const); optional pointers, void * data and"
    print "! the array of the two-call idiom are type(c_ptr), value: pass c_null_ptr"
    print "! or c_loc(x); numbers and enums are by value, or by reference where C"
    print "! takes a pointer to one. A count, an index or a size takes either"
    print "! integer kind (c_int32_t or c_int64_t, so default integers with or"
    print "! without -fdefault-integer-8): its function is also a generic. See"
    print "! bk-fortran(7)."
    print "module bk_capi"
    print wrap("  use, intrinsic :: iso_c_binding, only: " used_list(), 5)
    print "  use bk_types"
    print "  implicit none"
    print "  private"
    s = ""
    for (i = 1; i <= npub; i++) s = s (i > 1 ? ", " : "") pub[i]
    print wrap("  public :: " s, 5)
    print ""
    print "  interface"
    sub(/^\n/, "", body)
    printf "%s", body
    print "  end interface"
    if (specifics != "") {
        print ""
        print "  ! Counts, indices and sizes of either integer kind (see above)."
        printf "%s", substr(generics, 2)
        print ""
        print "contains"
        print ""
        print "  ! A count or an index for a uint32_t, as its two's complement bits:"
        print "  ! itself in [0, 4294967295], else 4294967295 (never a value wrapped"
        print "  ! around into range)."
        print "  elemental function u32_of(x) result(u)"
        print "    integer(c_int64_t), intent(in) :: x"
        print "    integer(c_int32_t) :: u"
        print "    if (x < 0 .or. x > 4294967295_c_int64_t) then"
        print "      u = -1"
        print "    else if (x > 2147483647_c_int64_t) then"
        print "      u = int(x - 4294967296_c_int64_t, c_int32_t)"
        print "    else"
        print "      u = int(x, c_int32_t)"
        print "    end if"
        print "  end function u32_of"
        printf "%s", specifics
    }
    print "end module bk_capi"
}
