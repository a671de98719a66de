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

function flush_func(    k, kind, head, decls, res) {
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
    uses(body)

    generated("libbk Fortran binding: one bind(c) interface per function of include/bk/*.h.")
    print "!"
    print "! The Fortran name is the C name; calls go straight to libbk. Handles are"
    print "! the bind(c) types of bk_types; a struct pointer is the struct by"
    print "! reference (intent(in) when const); optional pointers, void * data and"
    print "! the array of the two-call idiom are type(c_ptr), value: pass c_null_ptr"
    print "! or c_loc(x); numbers and enums are by value, or by reference where C"
    print "! takes a pointer to one. See bk-fortran(7)."
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
    print "end module bk_capi"
}
