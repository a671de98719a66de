# SPDX-License-Identifier: Apache-2.0
# bk_helpers.f90 from its template (the second input file):
#   !@ item NAME KEY=VALUE ...   an item with keys (@KEY@ in a block)
#   !@ list NAME ITEM ...        a list of items
#   !@ procedures PATTERN LIST   "module procedure" of PATTERN per item
#   !@ for LIST ... !@ end       the block once per item, @K@ its name
#   !@ each LIST ... !@ done     inside a for block: the lines once per
#                                item of LIST, @R@ its name
#   !@# TEXT                     a comment about the template, left out
# Two lists come from the headers: HANDLE (K the snake-case name, T the
# type) and OP (the op info structs: those with an sType declared outside
# bk_core.h; K the snake-case name without Bk and Info, T the type).
# Every function-like macro of the headers must have a function of its
# name in the template.

function additem(list, name, keys,    n, k, kv, i) {
    items[list] = items[list] (items[list] == "" ? "" : " ") name
    n = split(keys, kv, / +/)
    for (i = 1; i <= n; i++) {
        k = index(kv[i], "=")
        if (k) attr[name, substr(kv[i], 1, k - 1)] = substr(kv[i], k + 1)
    }
}
function subst(s, item,    k, v, out, p, q) {
    out = ""
    while ((p = index(s, "@")) > 0) {
        q = index(substr(s, p + 1), "@")
        if (q == 0) break
        k = substr(s, p + 1, q - 1)
        if (k == "K") v = item
        else if ((item, k) in attr) v = attr[item, k]
        else fail("template line " tline ": no key " k " for item " item)
        out = out substr(s, 1, p - 1) v
        s = substr(s, p + q + 1)
    }
    return out s
}

# The stored for block for one item; an each block inside it once per
# item of its list, @R@ replaced first.
function expand(item,    j, e, ne, ri, r, k, l) {
    for (j = 1; j <= nblock; j++) {
        if (block[j] !~ /^!@ each /) { print subst(block[j], item); continue }
        l = block[j]; sub(/^!@ each +/, "", l)
        if (items[l] == "") fail("template: '!@ each' of no list " l)
        for (e = j + 1; e <= nblock && block[e] !~ /^!@ done$/; e++) ;
        if (e > nblock) fail("template: '!@ each' without '!@ done'")
        ne = split(items[l], ri, " ")
        for (r = 1; r <= ne; r++)
            for (k = j + 1; k < e; k++) { l = block[k]; gsub(/@R@/, ri[r], l); print subst(l, item) }
        j = e
    }
}

FNR != NR && FNR == 1 {
    if (failed) exit 1
    for (i = 1; i <= nrec; i++) {
        split(rec[i], f, "\t")
        if (f[1] == "handle") {
            k = f[2]; sub(/^Bk/, "", k); k = snake(k)
            additem("HANDLE", k, "T=" f[2])
        } else if (f[1] == "struct" && hasstype[f[2]] && structfile[f[2]] != "bk_core.h") {
            k = f[2]; sub(/^Bk/, "", k); sub(/Info$/, "", k); k = snake(k)
            additem("OP", k, "T=" f[2])
        } else if (f[1] == "macro") macro[f[2]] = 1
    }
    generated("libbk Fortran binding: the helpers, from bindings/fortran/bk_helpers.f90.in.")
    print "!"
}
FNR != NR {
    tline = FNR
    if (match($0, /function [A-Za-z0-9_]+\(/)) {
        name = substr($0, RSTART + 9, RLENGTH - 10); delete macro[name]
    }
    if (infor) {
        if ($0 ~ /^!@ end$/) {
            n = split(items[forlist], it, " ")
            for (i = 1; i <= n; i++) expand(it[i])
            infor = 0
        } else block[++nblock] = $0
        next
    }
    if ($0 ~ /^!@#/) next
    if ($0 !~ /^ *!@ /) { print; next }
    d = $0; sub(/^ *!@ /, "", d); nw = split(d, w, / +/)
    if (w[1] == "item") { k = d; sub(/^item +[^ ]+ */, "", k); pend[w[2]] = k }
    else if (w[1] == "list") {
        for (i = 3; i <= nw; i++) additem(w[2], w[i], pend[w[i]])
    } else if (w[1] == "procedures") {
        if (items[w[3]] == "") fail("template line " FNR ": no list " w[3])
        n = split(items[w[3]], it, " "); s = ""
        for (i = 1; i <= n; i++) s = s (i > 1 ? ", " : "") subst(w[2], it[i])
        match($0, /^ */)
        print wrap(substr($0, 1, RLENGTH) "module procedure " s, 5)
    } else if (w[1] == "for") {
        if (items[w[2]] == "") fail("template line " FNR ": no list " w[2])
        infor = 1; forlist = w[2]; nblock = 0
    } else fail("template line " FNR ": unknown directive " w[1])
}
END {
    if (failed) exit 1
    if (infor) fail("template: '!@ for' without '!@ end'")
    for (m in macro) fail("the function-like macro " m " has no function in bk_helpers.f90.in")
}
