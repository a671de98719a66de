#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# TAP test of the man pages (run by `make check`, see man/local.mk):
#  - every page in man/ lints clean: `mandoc -Tlint -W warning` prints
#    nothing;
#  - every page formats without a warning under groff, as Debian's man(1)
#    formats it: `groff -mandoc -ww -Tutf8` prints nothing (mandoc passes
#    pages that groff cannot lay out, such as a table row wider than its
#    columns: "can't break line"); skipped when groff is not installed;
#  - every symbol in a global section of lib/libbk.map has a page
#    man/<symbol>.3, or a line "<symbol> <page>" in man/links (installed
#    as a link), and that page's NAME section names it;
#  - every public name of the Fortran module's helpers (the public
#    statements of bindings/fortran/bk_helpers.f90) has a man3 page the
#    same way, and man/bk_helpers.3 names nothing else, so the page and
#    the module cannot drift apart;
#  - every page is installed through a *_MANS variable, and every page
#    man/local.mk lists exists.
# Environment (from AM_TESTS_ENVIRONMENT): top_srcdir, MANDOC, GROFF.

top_srcdir=${top_srcdir:-.}
mandir=$top_srcdir/man
map=$top_srcdir/lib/libbk.map
helpers=$top_srcdir/bindings/fortran/bk_helpers.f90

if [ -z "${MANDOC:-}" ]; then
    echo "1..0 # SKIP mandoc not found"
    exit 0
fi
if [ ! -r "$map" ] || [ ! -r "$helpers" ] || [ ! -d "$mandir" ]; then
    echo "Bail out! cannot read $map, $helpers or $mandir"
    exit 1
fi

# The exported symbols: identifiers in the global: part of each version
# node, comments removed.
symbols=$(awk '
{
    line = $0; out = ""
    while (line != "") {
        if (incomment) {
            i = index(line, "*/")
            if (i == 0) { line = ""; break }
            line = substr(line, i + 2); incomment = 0
        } else {
            i = index(line, "/*")
            if (i == 0) { out = out line; line = "" }
            else { out = out substr(line, 1, i - 1); line = substr(line, i + 2); incomment = 1 }
        }
    }
    sub(/#.*/, "", out)
    gsub(/[{}]/, " & ", out)
    gsub(/;/, " ", out)
    n = split(out, tok)
    for (k = 1; k <= n; k++) {
        if (tok[k] == "global:") global = 1
        else if (tok[k] == "local:" || tok[k] == "}") global = 0
        else if (global && tok[k] ~ /^[A-Za-z_][A-Za-z0-9_]*$/) print tok[k]
    }
}' "$map")
if [ -z "$symbols" ]; then
    echo "Bail out! no exported symbols found in $map"
    exit 1
fi

# The Fortran helpers: the names of the module's public statements (with
# their & continuation lines), comments removed.
fnames=$(awk '
{ sub(/!.*/, "") }
/^[[:space:]]*public[[:space:]]*::/ { cont = 1; sub(/^[[:space:]]*public[[:space:]]*::/, "") }
cont {
    more = ($0 ~ /&[[:space:]]*$/)
    gsub(/[&,]/, " ")
    n = split($0, tok)
    for (k = 1; k <= n; k++) print tok[k]
    cont = more
}' "$helpers")
if [ -z "$fnames" ]; then
    echo "Bail out! no public names found in $helpers"
    exit 1
fi
fpage=bk_helpers.3

pages=
for f in "$mandir"/*.[1-9]; do
    [ -f "$f" ] && pages="$pages ${f##*/}"
done

set -- $pages
npages=$#
set -- $symbols $fnames
echo "1..$((2 * npages + $# + 3))"

# mandoc resolves ".so man3/x.3" from the directory it runs in, as man(1)
# does from the top of a manual tree: build such a tree of links.
absmandir=$(cd "$mandir" && pwd)
tree=$(mktemp -d "${TMPDIR:-/tmp}/man-pages.XXXXXX") || {
    echo "Bail out! mktemp failed"
    exit 1
}
trap 'rm -rf "$tree"' EXIT
for s in 1 2 3 4 5 6 7 8 9; do
    ln -s "$absmandir" "$tree/man$s"
done

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; }
diag() { sed 's/^/# /'; }

# The page a man3 name is linked to in man/links ("" when none).
link_target() {
    awk -v name="$1" '!/^#/ && $1 == name { print $2 ".3"; exit }' "$mandir/links"
}

# Does page $1 list $2 in its NAME section (.Nm name, or .Nm name ,)?
names() {
    grep -Eq "^\\.Nm[[:space:]]+$2([[:space:]]+,)?[[:space:]]*\$" "$mandir/$1" 2>/dev/null
}

for page in $pages; do
    sec=${page##*.}
    out=$(cd "$tree" && "$MANDOC" -Tlint -W warning "man$sec/$page" 2>&1)
    problem=
    grep -q '^\.so' "$mandir/$page" && problem="no .so pages: list the name in man/links"
    if [ -z "$out" ] && [ -z "$problem" ]; then
        ok "man/$page lints clean"
    else
        notok "man/$page lints clean"
        [ -n "$out" ] && printf '%s\n' "$out" | diag
        [ -n "$problem" ] && echo "$problem" | diag
    fi
done

# groff warns on stderr; -z formats without writing the page out.
for page in $pages; do
    sec=${page##*.}
    if [ -z "${GROFF:-}" ]; then
        n=$((n + 1)); echo "ok $n - man/$page formats under groff # SKIP groff not found"
        continue
    fi
    out=$(cd "$tree" && LC_ALL=C.UTF-8 "$GROFF" -mandoc -ww -Tutf8 -z "man$sec/$page" 2>&1)
    if [ -z "$out" ]; then
        ok "man/$page formats under groff"
    else
        notok "man/$page formats under groff"
        printf '%s\n' "$out" | diag
    fi
done

for sym in $symbols $fnames; do
    page=$sym.3
    [ -f "$mandir/$page" ] || page=$(link_target "$sym")
    if [ -z "$page" ] || [ ! -f "$mandir/$page" ]; then
        notok "$sym has a man3 page"
        echo "man/$sym.3 is missing: write it, or list \"$sym <page>\" in man/links" | diag
    elif names "$page" "$sym"; then
        ok "$sym has a man3 page"
    else
        notok "$sym has a man3 page"
        echo "man/$page does not list $sym in its NAME section (.Nm)" | diag
    fi
done

# The Fortran helpers' page names only the module's public names.
extra=
for nm in $(sed -n 's/^\.Nm[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/\1/p' "$mandir/$fpage" 2>/dev/null); do
    case " $(echo $fnames) " in
        *" $nm "*) ;;
        *) extra="$extra $nm" ;;
    esac
done
if [ -f "$mandir/$fpage" ] && [ -z "$extra" ]; then
    ok "man/$fpage names only public helpers of the Fortran module"
else
    notok "man/$fpage names only public helpers of the Fortran module"
    echo "not public in ${helpers#$top_srcdir/} (remove them from the page and man/links):${extra:- (no page)}" | diag
fi

# Installed: each page is named in some *_MANS list of the build.
mkfiles=$(ls "$top_srcdir"/Makefile.am "$top_srcdir"/*/local.mk \
              "$top_srcdir"/*/*/local.mk 2>/dev/null)
missing=
for page in $pages; do
    grep -Eq "(^|[[:space:]])man/$page([[:space:]]|\\\\|\$)" $mkfiles ||
        missing="$missing $page"
done
if [ -z "$missing" ]; then
    ok "every page is listed in a *_MANS variable"
else
    notok "every page is listed in a *_MANS variable"
    echo "not listed (add them to man/local.mk):$missing" | diag
fi

stale=
for page in $(sed -n 's|.*man/\([^ /\\]*\.[1-9]\).*|\1|p' "$mandir/local.mk"); do
    [ -f "$mandir/$page" ] || stale="$stale $page"
done
if [ -z "$stale" ]; then
    ok "every page man/local.mk lists exists"
else
    notok "every page man/local.mk lists exists"
    echo "listed but missing:$stale" | diag
fi
