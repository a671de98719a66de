# SPDX-License-Identifier: Apache-2.0
# Reads the public headers (in the order bk/bk.h includes them) and writes
# what the Fortran binding needs, one declaration a line, fields split by
# tabs:
#   file NAME                      a header begins
#   section TEXT                   a "---- TEXT ----" comment
#   doc TEXT                       a comment line right above a prototype
#   define NAME VALUE | macro NAME an object-like | function-like #define
#   alias NAME CTYPE | handle NAME a scalar typedef | an opaque handle
#   pfn NAME RET | func NAME RET   a callback type | a BK_API function,
#     each followed by its parameters: param BASE CONST PTRS NAME
#   enum NAME (- when anonymous), then: value NAME VALUE; endenum
#   struct NAME, then: field BASE CONST PTRS NAME DIM COMMENT; endstruct
# BASE is the C type without const, struct and '*'; PTRS counts the '*'.
# A line the rules below do not know stops the generator: a header change
# the binding cannot follow must not pass unnoticed.
BEGIN { OFS = "\t"; state = "top" }

function fail(why) {
    printf "%s:%d: %s: %s\n", FILENAME, FNR, why, $0 > "/dev/stderr"
    failed = 1
    exit 1
}
function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
# "const struct X *name[DIM]" -> BASE CONST PTRS NAME DIM
function decl(s,    c, p, n, w, dim) {
    s = trim(s); dim = ""
    if (match(s, /\[[^]]*\]$/)) {
        dim = substr(s, RSTART + 1, RLENGTH - 2); s = trim(substr(s, 1, RSTART - 1))
    }
    c = sub(/^const[ \t]+/, "", s) ? 1 : 0
    sub(/^struct[ \t]+/, "", s)
    p = gsub(/\*/, " ", s)
    n = split(s, w, /[ \t]+/)
    if (n != 2) fail("cannot read the declaration '" s "'")
    return w[1] OFS c OFS p OFS w[2] OFS dim
}
# "ret name(a, b)" or "ret (*PFN_name)(a, b)" -> the func or pfn record
# and its params.
function proto(kind, s,    head, args, n, a, i, d, p) {
    if (kind == "pfn") {
        if (!match(s, /\(\*PFN_[A-Za-z0-9_]+\)/)) fail("cannot read the callback type")
        head = trim(substr(s, 1, RSTART - 1)) " " substr(s, RSTART + 2, RLENGTH - 3)
        args = trim(substr(s, RSTART + RLENGTH))
    } else {
        p = index(s, "("); head = trim(substr(s, 1, p - 1)); args = trim(substr(s, p))
    }
    if (args !~ /^\(.*\)$/) fail("cannot read the parameters")
    args = substr(args, 2, length(args) - 2)
    split(decl(head), d, OFS)
    print kind, d[4], d[1], d[2], d[3]
    if (args == "void") return
    n = split(args, a, /,/)
    for (i = 1; i <= n; i++) print "param", decl(a[i])
}

FNR == 1 {
    if (state != "top") fail("unterminated declaration at the end of the previous file")
    f = FILENAME; sub(/.*\//, "", f); print "file", f
    incomment = 0; ndoc = 0; pending = ""
}

{
    # Split the line into code and comment text (comments may span lines).
    line = $0; code = ""; ctext = ""; hadcode = 0
    while (line != "") {
        if (incomment) {
            p = index(line, "*/")
            piece = p ? substr(line, 1, p - 1) : line
            line = p ? substr(line, p + 2) : ""
            if (p) incomment = 0
            sub(/^[ \t]*\*?[ \t]?/, "", piece); sub(/[ \t]+$/, "", piece)
            ctext = ctext (ctext != "" && piece != "" ? " " : "") piece
        } else {
            p = index(line, "/*")
            code = code (p ? substr(line, 1, p - 1) : line)
            line = p ? substr(line, p + 2) : ""
            if (p) incomment = 1
        }
    }
    code = trim(code)
}

# Continued #define and prototypes: gather until complete.
pending != "" {
    pending = pending " " code
    if (pendkind == "define") { if (code !~ /\\$/) pending = ""; next }
    if (pendkind == "func" && pending !~ /;$/) next
    code = pending; pending = ""
    if (pendkind == "func") { sub(/^BK_API[ \t]+/, "", code); sub(/;$/, "", code); proto("func", code); ndoc = 0; next }
}

state == "struct" {
    if (code ~ /^\}/) { print "endstruct"; state = "top"; next }
    if (code == "") { if (ctext != "" && nfield) print "note", ctext; next }
    if (code !~ /;$/) fail("a struct field must fit on one line")
    sub(/;$/, "", code)
    print "field", decl(code), ctext
    nfield++
    next
}

state == "enum" {
    if (code ~ /^\}/) { print "endenum"; state = "top"; next }
    if (code == "") next
    if (!match(code, /^BK_[A-Z0-9_]+[ \t]*=[ \t]*[^,]+,?$/)) fail("cannot read the enumerator")
    sub(/,$/, "", code); split(code, kv, /[ \t]*=[ \t]*/)
    print "value", kv[1], kv[2]
    next
}

# Top level.
code == "" {
    if (ctext ~ /^---- /) {
        s = ctext; sub(/^---- /, "", s); sub(/[ \t]*-*$/, "", s); print "section", s; ndoc = 0
    } else if (ctext != "" || incomment) {
        if (!wascomment) ndoc = 0
        if (ctext != "") doc[++ndoc] = ctext
    } else ndoc = 0
    wascomment = (ctext != "" || incomment)
    next
}
{ wascomment = 0 }
code !~ /^BK_API / { ndoc = 0 }
code ~ /^#(ifndef|ifdef|if|else|endif|include)/ || code ~ /^extern "C" \{$/ || code == "}" { ndoc = 0; next }
code ~ /^#define [A-Za-z0-9_]+\(/ {
    n = $2; sub(/\(.*/, "", n); print "macro", n
    if (code ~ /\\$/) { pending = "-"; pendkind = "define" }
    next
}
code ~ /^#define / {
    n = split(code, w, /[ \t]+/); v = code; sub(/^#define[ \t]+[A-Za-z0-9_]+[ \t]*/, "", v)
    print "define", w[2], v
    next
}
code ~ /^BK_API / {
    for (i = 1; i <= ndoc; i++) print "doc", doc[i]
    if (code ~ /;$/) { sub(/^BK_API[ \t]+/, "", code); sub(/;$/, "", code); proto("func", code); ndoc = 0 }
    else { pending = code; pendkind = "func" }
    next
}
code ~ /^typedef enum [A-Za-z0-9_]+ \{$/ || code ~ /^enum \{$/ {
    n = split(code, w, /[ \t]+/); print "enum", (w[1] == "enum" ? "-" : w[3]); state = "enum"; ndoc = 0; next
}
code ~ /^typedef struct [A-Za-z0-9_]+ \{$/ {
    n = split(code, w, /[ \t]+/); print "struct", w[3]; state = "struct"; nfield = 0; ndoc = 0; next
}
code ~ /^typedef struct [A-Za-z0-9_]+ \*[A-Za-z0-9_]+;$/ {
    n = split(code, w, /[ \t*;]+/); print "handle", w[4]; next
}
code ~ /^typedef [^(]*\(\*PFN_/ { sub(/^typedef[ \t]+/, "", code); sub(/;$/, "", code); proto("pfn", code); next }
code ~ /^typedef [a-z0-9_]+ [A-Za-z0-9_]+;$/ {
    n = split(code, w, /[ \t;]+/); print "alias", w[3], w[2]; next
}
{ fail("a declaration the Fortran generator does not know") }
END { if (!failed && state != "top") { print "unterminated declaration" > "/dev/stderr"; exit 1 } }
