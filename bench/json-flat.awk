# SPDX-License-Identifier: Apache-2.0
# A JSON reader for awk: every scalar of every input file lands in
# V[file, path] (path: keys and array indices joined by dots, e.g.
# "bkbench.attention.3.tflopPerS"; strings unquoted, null as ""), and
# NFILES / FILES[1..NFILES] list the files in the order read. A token never
# spans lines in JSON (strings hold no raw newline), so each line is
# tokenised on its own while the nesting carries over. Malformed input
# stops the run with the file and line.

function jf_fail(msg) {
    printf "%s:%d: %s\n", FILENAME, FNR, msg > "/dev/stderr"
    jf_failed = 1
    exit 1
}

# The path of the value about to be read.
function jf_path(   i, p, seg) {
    p = ""
    for (i = 1; i <= jf_sp; i++) {
        seg = jf_kind[i] == "a" ? jf_index[i] : jf_key[i]
        p = i == 1 ? seg : p "." seg
    }
    return p
}

# A value starts: in an array it takes the next index.
function jf_value_starts() {
    if (jf_sp == 0 && jf_done)
        jf_fail("more than one value")
    if (jf_sp > 0 && jf_kind[jf_sp] == "a")
        jf_index[jf_sp]++
    else if (jf_sp > 0 && jf_want[jf_sp] != "value")
        jf_fail("a value where a key belongs")
}

function jf_scalar(v) {
    jf_value_starts()
    V[FILENAME, jf_path()] = v
    if (jf_sp > 0 && jf_kind[jf_sp] == "o")
        jf_want[jf_sp] = "comma"
}

function jf_unquote(s) {
    s = substr(s, 2, length(s) - 2)
    gsub(/\\"/, "\"", s)
    gsub(/\\\//, "/", s)
    gsub(/\\n/, " ", s)
    gsub(/\\\\/, "\\", s)
    return s
}

FNR == 1 {
    if (jf_sp != 0)
        jf_fail("unterminated value before this file")
    FILES[++NFILES] = FILENAME
    jf_done = 0
}

{
    s = $0
    while (s != "") {
        c = substr(s, 1, 1)
        if (c ~ /[ \t\r]/) {
            s = substr(s, 2)
        } else if (c == "{" || c == "[") {
            jf_value_starts()
            jf_sp++
            jf_kind[jf_sp] = c == "{" ? "o" : "a"
            jf_index[jf_sp] = -1
            jf_key[jf_sp] = ""
            jf_want[jf_sp] = "key"
            s = substr(s, 2)
        } else if (c == "}" || c == "]") {
            if (jf_sp == 0 || jf_kind[jf_sp] != (c == "}" ? "o" : "a"))
                jf_fail("unbalanced " c)
            jf_sp--
            if (jf_sp == 0)
                jf_done = 1
            else if (jf_kind[jf_sp] == "o")
                jf_want[jf_sp] = "comma"
            s = substr(s, 2)
        } else if (c == ",") {
            if (jf_sp > 0 && jf_kind[jf_sp] == "o")
                jf_want[jf_sp] = "key"
            s = substr(s, 2)
        } else if (c == ":") {
            if (jf_sp == 0 || jf_kind[jf_sp] != "o" || jf_want[jf_sp] != "colon")
                jf_fail("misplaced :")
            jf_want[jf_sp] = "value"
            s = substr(s, 2)
        } else if (c == "\"") {
            if (!match(s, /^"([^"\\]|\\.)*"/))
                jf_fail("unterminated string")
            t = jf_unquote(substr(s, 1, RLENGTH))
            s = substr(s, RLENGTH + 1)
            if (jf_sp > 0 && jf_kind[jf_sp] == "o" && jf_want[jf_sp] == "key") {
                jf_key[jf_sp] = t
                jf_want[jf_sp] = "colon"
            } else {
                jf_scalar(t)
            }
        } else if (match(s, /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/)) {
            jf_scalar(substr(s, 1, RLENGTH))
            s = substr(s, RLENGTH + 1)
        } else if (match(s, /^(true|false|null)/)) {
            t = substr(s, 1, RLENGTH)
            jf_scalar(t == "null" ? "" : t)
            s = substr(s, RLENGTH + 1)
        } else {
            jf_fail("unexpected " c)
        }
    }
}
