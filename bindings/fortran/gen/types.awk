# SPDX-License-Identifier: Apache-2.0
# bk_types.f90: one bind(c) type per handle (holding the C pointer, so a
# BkPlan cannot be passed where a BkContext is wanted) and per struct (the
# same fields in the same order), and an abstract interface per callback
# type.
#
# Every field has a default, so a plain declaration is ready to fill in:
# sType its struct's own BK_STRUCTURE_TYPE_* (named in the header's
# comment on the field), an enum its first enumerator, a BkBool32
# BK_FALSE, pointers null, numbers 0, and the few fields below, where 0
# would be a silent mistake, what C programs are told to set.
BEGIN {
    override["BkContextCreateInfo.apiVersion"] = "BK_HEADER_VERSION"
    reason["BkContextCreateInfo.apiVersion"] = "The version of the headers the binding was made from."
    override["BkGemmInfo.alpha"] = override["BkSparse24GemmInfo.alpha"] = "1"
    reason["BkGemmInfo.alpha"] = reason["BkSparse24GemmInfo.alpha"] = \
        "1, not 0: a zero alpha would silently give beta * C."
    nan = "transfer(int(z'7FF8000000000000', c_int64_t), 0.0_c_double)"
    override["BkAttentionInfo.scale"] = override["BkAttentionBackwardInfo.scale"] = nan
    reason["BkAttentionInfo.scale"] = reason["BkAttentionBackwardInfo.scale"] = \
        "A NaN, which no plan accepts, rather than 0 (every key weighted alike, " \
        "a silent mistake): set it, usually to 1 / sqrt(D), or let " \
        "bk_attention_info_of do it."
}

# Comment text as lines of "ind! ..." of at most 78 columns.
function comment(text, ind,    out, w, n, i, line) {
    n = split(text, w, / +/); out = ""; line = ind "!"
    for (i = 1; i <= n; i++) {
        if (length(line) + 1 + length(w[i]) > 78 && line != ind "!") { out = out line "\n"; line = ind "!" }
        line = line " " w[i]
    }
    return out line
}

function emit(s) { body = body s "\n"; uses(s) }

function flush_field(    d, line) {
    if (fname == "") return
    d = "    " fspec " :: " fname fdim (fdefault != "" ? " = " fdefault : "")
    if (key in reason) emit(comment(reason[key], "    "))
    if (fcomment == "") emit(wrap(d, 5))
    else {
        line = d substr("                                                  ", 1, 46 - length(d)) "  ! " fcomment
        if (length(line) <= 110) emit(line)
        else { emit(comment(fcomment, "    ")); emit(wrap(d, 5)) }
    }
    fname = ""
}

END {
    if (failed) exit 1
    body = ""; npub = 0
    emit("")
    emit("  ! ---- Handles: BK_NULL_HANDLE when new ------------------------------")
    for (i = 1; i <= nrec; i++) {
        split(rec[i], f, "\t")
        if (f[1] != "handle") continue
        pub[++npub] = f[2]
        emit("  type, bind(c) :: " f[2])
        emit("    type(c_ptr) :: handle = c_null_ptr")
        emit("  end type " f[2])
    }
    for (i = 1; i <= nrec; i++) {
        n = split(rec[i], f, "\t")
        if (inpfn && f[1] != "param") pfn_end()
        if (f[1] == "file") { emit(""); emit("  ! ---- bk/" f[2] " " substr("------------------------------------------------------------", 1, 60 - length(f[2]))) }
        else if (f[1] == "struct") {
            s = f[2]; pub[++npub] = s
            emit(""); emit("  type, bind(c) :: " s)
        } else if (f[1] == "field") {
            flush_field()
            base = f[2]; ptrs = f[4]; fname = f[5]; fdim = f[6] != "" ? "(" f[6] ")" : ""
            fcomment = f[7]; key = s "." fname
            if (ptrs > 0) { fspec = "type(c_ptr)"; fdefault = "c_null_ptr" }
            else {
                fspec = ftype(base)
                if (fspec ~ /^type\(c_funptr/) fdefault = "c_null_funptr"
                else if (fspec ~ /^type/) fdefault = ""
                else if (fname == "sType") {
                    fdefault = firstvalue["BkStructureType"]
                    if (match(fcomment, /BK_STRUCTURE_TYPE_[A-Z0-9_]+/)) {
                        fdefault = substr(fcomment, RSTART, RLENGTH); fcomment = ""
                    }
                } else if (base in isenum) fdefault = firstvalue[base]
                else if (base == "BkBool32") fdefault = "BK_FALSE"
                else if (fspec ~ /^character/) fdefault = "c_null_char"
                else fdefault = "0"
            }
            if (key in override) fdefault = override[key]
        } else if (f[1] == "note") fcomment = fcomment " " f[2]
        else if (f[1] == "endstruct") { flush_field(); emit("  end type " s) }
        else if (f[1] == "pfn") pfn_begin(f[2], f[3], f[5])
        else if (f[1] == "param" && inpfn) pfn_param(f[2], f[4], f[5])
    }
    if (inpfn) pfn_end()
    if (npfn) {
        emit("")
        emit("  ! ---- Callback types: write a bind(c) procedure of this interface and")
        emit("  ! pass c_funloc of it. Strings arrive as c_ptr: bk_c_string(pMessage).")
        emit("  abstract interface")
        body = body pfnbody
        emit("  end interface")
    }

    generated("libbk Fortran binding: the handles, structs and callback types of include/bk/*.h.")
    print "!"
    print "! Enum fields are integer(c_int); C's unsigned fields the signed integer of"
    print "! the same size; pointers type(c_ptr) (c_loc of a TARGET) and function"
    print "! pointers type(c_funptr). t/fortran/fortran-layout.sh checks sizes and offsets"
    print "! against C's."
    print "module bk_types"
    print wrap("  use, intrinsic :: iso_c_binding, only: " used_list(), 5)
    print "  use bk_constants"
    print "  implicit none"
    print "  private"
    s = ""
    for (i = 1; i <= npub; i++) s = s (i > 1 ? ", " : "") pub[i]
    print wrap("  public :: " s, 5)
    printf "%s", body
    print "end module bk_types"
}

# Callback types become abstract interfaces; every argument is by value.
function pfn_begin(name, ret, rptrs) {
    pub[++npub] = name; npfn++; inpfn = 1; pname = name; pargs = ""; pdecl = ""; pimports = ""
    pret = rptrs > 0 ? "type(c_ptr)" : (ret == "void" ? "" : ftype(ret))
}
function pfn_param(base, ptrs, name,    spec) {
    spec = ptrs > 0 ? "type(c_ptr)" : ftype(base)
    pargs = pargs (pargs == "" ? "" : ", ") name
    pdecl = pdecl "      " spec ", value :: " name "\n"
    addimport(spec)
}
function addimport(spec,    t) {
    t = spec; sub(/^[a-z]+\(/, "", t); sub(/\)$/, "", t); sub(/^kind=/, "", t)
    if (index(", " pimports ", ", ", " t ", ") == 0) pimports = pimports (pimports == "" ? "" : ", ") t
}
function pfn_end(    head, k) {
    inpfn = 0
    if (pret != "") addimport(pret)
    k = pret == "" ? "subroutine" : "function"
    head = "    " k " " pname "(" pargs ")" (pret == "" ? "" : " result(res)") " bind(c)"
    pfnbody = pfnbody (npfn > 1 ? "\n" : "") wrap(head, 5) "\n"
    if (pimports != "") pfnbody = pfnbody "      import :: " sortwords(pimports) "\n"
    pfnbody = pfnbody pdecl
    if (pret != "") pfnbody = pfnbody "      " pret " :: res\n"
    pfnbody = pfnbody "    end " k " " pname "\n"
    uses(pfnbody)
}
