#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The licence line of libbk's tracked files. Every source, build and
# script file starts with "SPDX-License-Identifier: Apache-2.0" in its own
# comment syntax (the table in comment_of), on line 1, or on line 2 after a
# #! line, where tools that read licences look for it. Files that cannot
# hold a comment, or that a tool rewrites, are exempt (the table in
# exempt); a file of no known kind is reported, so that a new kind gets a
# rule here rather than going unchecked.
#
# usage: tools/spdx.sh check [DIR]  prints each tracked file of the git
#                                   checkout DIR (default .) that lacks
#                                   the line; status 1 when there is one
#        tools/spdx.sh add [DIR]    writes the line into those files
#                                   (not into files of no known kind)
set -uf
id='SPDX-License-Identifier: Apache-2.0'

# Licence text, prose, data and files other tools write or parse whole.
exempt() {
    case $1 in
    LICENSE | *.md) ;;
    abi/libbk.abi) ;;                 # written by make abi-dump (abidw)
    t/reliability/fuzz-corpus.txt) ;; # written by fuzz-campaign.sh
    *.json | *.csv) ;;                # measurements
    packaging/debian/changelog | packaging/debian/control | \
        packaging/debian/copyright | packaging/debian/source/format | \
        packaging/debian/*.install | packaging/debian/not-installed | \
        packaging/debian/*.symbols) ;; # Debian's data formats
    *) return 1 ;;
    esac
}

# The line for file $1 (its first line in $2), or status 1 for no known kind.
comment_of() {
    case $2 in
    '#!'*) printf '# %s\n' "$id"; return ;; # scripts: sh, python, make -f
    esac
    case $1 in
    *.c | *.h | *.S | *.map) printf '/* %s */\n' "$id" ;;
    *.cu | *.cuh) printf '// %s\n' "$id" ;;
    *.f90) printf '! %s\n' "$id" ;;
    *.f90.in) printf '!@# %s\n' "$id" ;; # a template comment: not copied out
    man/*.[1-9]) printf '.\\" %s\n' "$id" ;;
    *.sh | *.py | *.awk | *.mk | *.am | *.ac | *.m4 | *.in | *CMakeLists.txt | \
        *.supp | *.abignore | .gitignore | man/links) printf '# %s\n' "$id" ;;
    *) return 1 ;;
    esac
}

mode=${1:-}
dir=${2:-.}
case $mode in
check | add) ;;
*)
    echo "usage: $0 check|add [DIR]" >&2
    exit 2
    ;;
esac
cd "$dir" || exit 2
files=$(git ls-files) || {
    echo "$0: $dir is not a git checkout" >&2
    exit 2
}

status=0
for f in $files; do
    exempt "$f" && continue
    [ -f "$f" ] || continue # deleted in the working tree
    first=$(sed -n 1p "$f")
    if ! want=$(comment_of "$f" "$first"); then
        echo "$f: no SPDX rule for this kind of file (tools/spdx.sh)"
        status=1
        continue
    fi
    case $first in
    '#!'*) at=2 ;;
    *) at=1 ;;
    esac
    [ "$(sed -n "${at}p" "$f")" = "$want" ] && continue
    if [ "$mode" = check ]; then
        echo "$f: line $at is not '$want'"
        status=1
    else
        # Rewrite in place (cat >), keeping the file's mode.
        tmp=$(mktemp) || exit 2
        line=$want awk -v at="$at" 'NR == at { print ENVIRON["line"] } { print }
            END { if (NR < at) print ENVIRON["line"] }' "$f" >"$tmp" && cat "$tmp" >"$f"
        rm -f "$tmp"
        echo "$f: added '$want'"
    fi
done
exit $status
