#!/bin/sh
# Sets the CLI's help text (src/cli/help.c, printed by --help) in roff as
# the man page profconv.1, so that the two never disagree:
#   sh tools/man.sh build/profconv 0.1.0 > build/profconv.1
# The help's layout is what is parsed: the usage line, paragraphs, headings
# ending in ':' at the margin, options indented with their text at column
# 25, examples, and the closing exit-status paragraph.
set -eu
bin=$1
version=$2
"$bin" --help | awk -v version="$version" '
function esc(s) {
    gsub(/\\/, "\\e", s)
    gsub(/-/, "\\-", s)
    return s
}
# A text line must not start with a control character.
function line(s) {
    s = esc(s)
    if (s ~ /^[.\047]/)
        s = "\\&" s
    print s
}
function trim(s) {
    sub(/^[ \t]+/, "", s)
    sub(/[ \t]+$/, "", s)
    return s
}
BEGIN {
    print ".TH PROFCONV 1 \"\" \"profconv " version "\" \"User Commands\""
    state = "usage"
}
state == "usage" {
    if ($0 ~ /^usage: /) {
        synopsis = substr($0, 8)
        next
    }
    if ($0 == "")
        next
    name = $0
    sub(/\.$/, "", name)
    name = tolower(substr(name, 1, 1)) substr(name, 2)
    print ".SH NAME"
    print "profconv \\- " esc(name)
    print ".SH SYNOPSIS"
    line(synopsis)
    print ".SH DESCRIPTION"
    line($0)
    state = "desc"
    next
}
/^Exit status:/ {
    print ".SH EXIT STATUS"
    line(trim(substr($0, 13)))
    state = "exit"
    next
}
/^Examples:$/ {
    print ".SH EXAMPLES"
    print ".nf"
    state = "examples"
    next
}
state == "examples" {
    if ($0 ~ /^  /) {
        line(trim($0))
        next
    }
    print ".fi"
    state = "after"
}
/^[A-Z][^ ].*:$/ && state != "exit" {
    if (state == "desc") {
        print ".SH OPTIONS"
    }
    state = "options"
    print ".SS"
    line(substr($0, 1, length($0) - 1))
    next
}
$0 == "" {
    if (state != "options" && state != "examples")
        print ".PP"
    next
}
state == "options" {
    if (match($0, /[^ ]/) <= 8 && substr($0, RSTART, 1) == "-") {
        # An option: its name, then its text from column 25 (or the next line).
        tag = substr($0, 1, 24)
        rest = substr($0, 25)
        if (substr($0, 24, 1) != " " || substr($0, 25, 1) == " ") {
            tag = $0
            rest = ""
        }
        print ".TP"
        after_eg = 0
        print "\\fB" esc(trim(tag)) "\\fR"
        s = trim(rest)
        if (match(s, /  +e\.g\. /)) {
            line(substr(s, 1, RSTART - 1))
            print ".br"
            s = trim(substr(s, RSTART))
        }
        if (s != "")
            line(s)
        next
    }
    s = trim($0)
    # The right-aligned "e.g." of the help starts a line of its own.
    if (match(s, /  +e\.g\. /)) {
        line(substr(s, 1, RSTART - 1))
        s = trim(substr(s, RSTART))
    }
    if (s ~ /^e\.g\. / || after_eg)
        print ".br"
    after_eg = s ~ /^e\.g\. /
    line(s)
    next
}
{ line($0) }
END {
    if (state == "examples")
        print ".fi"
}
'
