#!/usr/bin/env bash
# Checks that the README's build-dependency line is enough to build: every
# header the build includes, every file the linker opens and every program
# make runs for `make example` must belong to a package on that line, to a
# package those depend on (recursively), or to an Essential package (which
# every Debian system has).  That is what an install of only those packages
# on a fresh system provides: g++ pulls in libc6-dev, linux-libc-dev and
# libstdc++-*-dev, gcc its own headers (libgcc-*-dev) and binutils (ld, ar,
# objcopy).  The line is read from README.md itself, so that the two cannot
# drift apart.
#
# Run from the project root.  Exit 0: every file is accounted for; 1: some
# are not, each printed with its package; 77: this system cannot tell
# (no dpkg, no make), with the reason on the first line.
#
# With BUILT naming a build directory, the headers of each source are
# read from the dependency file its compile there wrote (the Makefile's
# -MD), where that file is up to date and the build used the compiler
# `make example` uses; the others are preprocessed here, which took most
# of this script's time.
set -uo pipefail
cd "$(dirname "$0")/../.."

skip() { echo "$*"; exit 77; }
command -v dpkg-query >/dev/null 2>&1 ||
    skip "dpkg is absent (not Debian or Ubuntu): the README's build dependencies are not checked"
command -v make >/dev/null 2>&1 || skip "make is absent: the build dependencies are not checked"

# The quick start's line: "apt-get install -y PKG... && make example".
line=$(grep -m1 -E 'apt-get install .*&& *make example' README.md) ||
    { echo "README.md has no line 'apt-get install ... && make example'"; exit 1; }
line=${line##*apt-get install}
line=${line%%&&*}
listed=()
for w in $line; do
    case $w in -*) ;; *) listed+=("$w") ;; esac
done
[ ${#listed[@]} -gt 0 ] || { echo "README.md's apt-get line names no package"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

for p in "${listed[@]}"; do
    dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' ||
        { echo "README.md lists $p, which is not installed here (misspelt, or not needed?)"; status=1; }
done

# The commands `make example` runs, from make itself (a fresh build
# directory, and none of the calling make's flags such as SAN=1).
b=$tmp/b
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u SAN -u TSAN make -n -B BUILD="$b" "$b/profconv" "$b/gen-simpleperf" \
    > "$tmp/commands" 2> "$tmp/make.err" ||
    { echo "make -n failed:"; cat "$tmp/make.err"; exit 1; }

# Whether dependency file $1 describes source $2 as it is now: newer than
# the source and than every project header (one may have gained an
# include since), and written by -MD (-MMD names no system header).
newest_header=$(find src include tests fuzz bench -name '*.h' -printf '%T@ %p\n' 2> /dev/null |
                sort -n | tail -n 1 | cut -d' ' -f2-)
fresh_deps() {
    [ -f "$1" ] && [ "$1" -nt "$2" ] && { [ -z "$newest_header" ] || [ "$1" -nt "$newest_header" ]; } &&
        grep -q ' /' "$1"
}
# The system headers a dependency file or `cc -M` output names.
system_headers() { tr ' \\' '\n\n' | grep -v ':$' | grep '^/' | sort -u; }

printf 'int main(void) { return 0; }\n' > "$tmp/main.c"
: > "$tmp/files"
declare -A groups=()
while read -r -a w; do
    [ ${#w[@]} -gt 0 ] || continue
    echo "${w[0]}" >> "$tmp/programs"
    args=() out="" src="" compile=0 link=0 skipnext=0
    for ((i = 1; i < ${#w[@]}; i++)); do
        a=${w[i]}
        if [ $skipnext = 1 ]; then skipnext=0; out=$a; continue; fi
        case $a in
            -c) compile=1 ;;
            -o) skipnext=1 ;;
            -MD | -MMD | -MP) ;;
            *.c) src=$a ;;
            "$b"/*.o | "$b"/*.a) link=1 ;;
            *) args+=("$a") ;;
        esac
    done
    if [ $compile = 1 ] && [ -n "$src" ]; then
        d=${BUILT:-}/${out#"$b"/}
        d=${d%.o}.d
        if [ -n "${BUILT:-}" ] && fresh_deps "$d" "$src"; then
            # The build under test may have used another compiler (make
            # CC=clang) and so other headers: the first source is
            # preprocessed as `make example` would, and the build's files
            # are used only if they name the same headers.
            if [ -z "${checked_built:-}" ]; then
                checked_built=1
                "${w[0]}" "${args[@]}" -M "$src" 2> /dev/null | system_headers > "$tmp/probe.now"
                system_headers < "$d" > "$tmp/probe.built"
                if ! [ -s "$tmp/probe.now" ] || ! cmp -s "$tmp/probe.now" "$tmp/probe.built"; then
                    BUILT=""
                fi
            fi
            if [ -n "$BUILT" ]; then
                echo "$d" >> "$tmp/depfiles"
                continue
            fi
        fi
        # Sources with the same flags are preprocessed in one run.
        key="${w[0]} ${args[*]}"
        groups[$key]+=" $src"
    elif [ $link = 1 ] && [ -z "$src" ] && [ "${w[0]}" != ar ] && [ "${w[0]}" != objcopy ] &&
         [ "${w[0]}" != rm ] && [ "${w[0]}" != "${LD:-ld}" ]; then
        # The link line with the project's objects replaced by an empty
        # program: the linker still opens every library it names.
        [ -f "$tmp/main.o" ] || "${w[0]}" -c -o "$tmp/main.o" "$tmp/main.c"
        if ! "${w[0]}" "${args[@]}" -o "$tmp/a.out" "$tmp/main.o" -Wl,--trace \
                > "$tmp/trace" 2> "$tmp/link.err"; then
            echo "linking ${out##*/}'s libraries failed:"; cat "$tmp/link.err"; status=1
        fi
        sed -n -e 's/^.*(\(\/[^)]*\))$/\1/p' -e '/^\/[^ ]*$/p' "$tmp/trace" >> "$tmp/files"
    fi
done < <(grep -v '^mkdir ' "$tmp/commands")

# Each group's sources in two halves at once: preprocessing is most of
# this script's time.
k=0
for key in "${!groups[@]}"; do
    read -r -a cmd <<< "$key"
    read -r -a srcs <<< "${groups[$key]}"
    half=$(((${#srcs[@]} + 1) / 2))
    for part in 0 1; do
        set -- "${srcs[@]:$((part * half)):$half}"
        [ $# -gt 0 ] || continue
        k=$((k + 1))
        { "${cmd[@]}" -M "$@" > "$tmp/deps.$k" 2> "$tmp/cc.err.$k" || echo failed > "$tmp/cc.failed.$k"; } &
    done
done
wait
for ((i = 1; i <= k; i++)); do
    if [ -e "$tmp/cc.failed.$i" ]; then
        echo "preprocessing failed:"; cat "$tmp/cc.err.$i"; status=1
    fi
    system_headers < "$tmp/deps.$i" >> "$tmp/files"
done
if [ -s "$tmp/depfiles" ]; then
    xargs -r -d '\n' cat < "$tmp/depfiles" | system_headers >> "$tmp/files"
fi

# The programs, as the files they resolve to (cc is an alternatives link).
sort -u "$tmp/programs" | while read -r prog; do
    path=$(command -v "$prog") && readlink -f "$path"
done >> "$tmp/files"

# Normalised paths; a file dpkg does not know by that name is looked up
# by the name its links resolve to, then under the other half of merged /usr.
grep -v "^$tmp/" "$tmp/files" | sort -u | xargs -r -d '\n' realpath -s -- | sort -u > "$tmp/paths"
owners() {  # paths on stdin -> "path<TAB>pkg pkg" for those dpkg knows
    xargs -r -d '\n' dpkg-query -S 2>/dev/null | grep -v '^diversion' |
        sed -e 's/^\(.*\): \(\/.*\)$/\2\t\1/' -e 's/:[a-z0-9_]*\(,\|$\)/\1/g' -e 's/, / /g'
}
owners < "$tmp/paths" > "$tmp/owned"
cut -f1 "$tmp/owned" | sort -u | comm -23 "$tmp/paths" - > "$tmp/unknown"
while read -r f; do
    for alt in "$(readlink -f "$f")" "${f#/usr}" "/usr$f"; do
        [ "$alt" != "$f" ] || continue
        o=$(printf '%s\n' "$alt" | owners | cut -f2 | head -n 1)
        if [ -n "$o" ]; then printf '%s\t%s\n' "$f" "$o" >> "$tmp/owned"; continue 2; fi
    done
    echo "$f: from no package (installed by hand?)"
    status=1
done < "$tmp/unknown"

# The installed packages that the listed ones pull in (Depends and
# Pre-Depends, every alternative, virtual packages through their
# providers), plus the Essential ones.
dpkg-query -W -f='${db:Status-Abbrev}\t${Package}\t${Essential}\t${Provides}\t${Pre-Depends}, ${Depends}\n' |
    awk -F'\t' -v roots="${listed[*]}" '
    function names(s, out,   n, parts, i, p) {
        gsub(/\([^)]*\)/, "", s); gsub(/[|,]/, " ", s); gsub(/:[a-z0-9_]+/, "", s)
        n = split(s, parts, " "); out = ""
        for (i = 1; i <= n; i++) out = out " " parts[i]
        return out
    }
    $1 ~ /^ii/ {
        inst[$2] = 1; deps[$2] = names($5)
        if ($3 == "yes") want[$2] = 1
        n = split(names($4), pv, " ")
        for (i = 1; i <= n; i++) prov[pv[i]] = prov[pv[i]] " " $2
    }
    END {
        n = split(roots, r, " ")
        for (i = 1; i <= n; i++) want[r[i]] = 1
        do {
            added = 0
            for (p in want) {
                if (done[p]++) continue
                m = split(deps[p] " " prov[p], d, " ")
                for (j = 1; j <= m; j++)
                    if (!(d[j] in want)) { want[d[j]] = 1; added = 1 }
            }
        } while (added)
        for (p in want) if (p in inst) print p
    }' | sort -u > "$tmp/allowed"

# Each file's owners against the allowed packages, in one pass.
sort -u "$tmp/owned" | awk -F'\t' -v line="${listed[*]}" '
    FILENAME == ARGV[1] { ok[$0] = 1; next }
    {
        n = split($2, p, " "); good = 0
        for (i = 1; i <= n; i++) if (p[i] in ok) good = 1
        if (!good) { printf "%s: from %s, which the README'"'"'s build-dependency line (%s) does not pull in\n", $1, $2, line; bad = 1 }
    }
    END { exit bad }' "$tmp/allowed" - || status=1

if [ $status = 0 ]; then
    echo "$(wc -l < "$tmp/paths") files the build uses, all from the README's build dependencies (${listed[*]}) or what they pull in"
fi
exit $status
