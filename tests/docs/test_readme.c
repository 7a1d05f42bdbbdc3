/* The documentation against the binary.
 *
 * doc/options.md holds the exact text of `profconv --help` between two
 * marker lines; the binary's help is the one source of the option
 * reference, and this test keeps the page equal to it.  It fails naming
 * the option when the help has an option the page lacks, when the page
 * names an option the help does not have, and, for any other difference,
 * the first line that differs with the option whose entry holds it.
 *
 * It also checks that every option the help lists is one the binary
 * accepts, and that the profconv command lines shown in README.md and
 * doc/ use only options the help lists.
 *
 * Options in the help are every "--name" outside `code spans` (which quote
 * other tools' commands) and the short "-x" that start an option's line. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "t.h"

#define REFERENCE "doc/options.md"
#define BEGIN_MARK "<!-- help text: begin -->"
#define END_MARK "<!-- help text: end -->"

/* ---- Text ---- */

typedef struct lines {
    const char **s;  /* start of each line */
    size_t *n;       /* its length, without the '\n' */
    size_t count;
} lines;

static void split_lines(const char *text, size_t len, lines *l)
{
    size_t cap = 1;
    for (size_t i = 0; i < len; i++)
        cap += text[i] == '\n';
    l->s = malloc(cap * sizeof *l->s);
    l->n = malloc(cap * sizeof *l->n);
    l->count = 0;
    if (!l->s || !l->n)
        return;
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        l->s[l->count] = p;
        l->n[l->count++] = (size_t)(e - p);
        p = nl ? nl + 1 : end;
    }
}

static void lines_free(lines *l)
{
    free(l->s);
    free(l->n);
}

/* ---- Option sets ---- */

#define MAX_OPTS 256

typedef struct optset {
    char name[MAX_OPTS][48];
    size_t n;
} optset;

static int has_opt(const optset *o, const char *s, size_t n)
{
    for (size_t i = 0; i < o->n; i++)
        if (strlen(o->name[i]) == n && memcmp(o->name[i], s, n) == 0)
            return 1;
    return 0;
}

static void add_opt(optset *o, const char *s, size_t n)
{
    if (n == 0 || n >= sizeof o->name[0] || has_opt(o, s, n) || o->n == MAX_OPTS)
        return;
    memcpy(o->name[o->n], s, n);
    o->name[o->n][n] = 0;
    o->n++;
}

static int opt_char(char c)
{
    return islower((unsigned char)c) || isdigit((unsigned char)c) || c == '-';
}

/* Length of the long option "--name" at s (e < s + 2: none); a preceding
 * letter, digit or dash means the dashes are part of something else. */
static size_t long_opt_at(const char *line, const char *s, const char *e)
{
    if (e - s < 3 || s[0] != '-' || s[1] != '-' ||
        !(islower((unsigned char)s[2]) || isdigit((unsigned char)s[2])))
        return 0;
    if (s > line && (isalnum((unsigned char)s[-1]) || s[-1] == '-'))
        return 0;
    const char *q = s + 2;
    while (q < e && opt_char(*q))
        q++;
    while (q[-1] == '-')
        q--;
    return (size_t)(q - s);
}

/* The short options that start an option's line: "  -o, --output FILE". */
static void short_opts_of_line(const char *s, size_t n, optset *o)
{
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    if (i < 2 || i > 6 || i + 1 >= n || s[i] != '-' || !isalpha((unsigned char)s[i + 1]))
        return;
    if (i + 2 == n || s[i + 2] == ',' || s[i + 2] == ' ')
        add_opt(o, s + i, 2);
}

/* Every option of a help-formatted text: long ones outside code spans,
 * short ones at the start of option lines. */
static void help_options(const lines *l, size_t from, size_t to, optset *o)
{
    for (size_t k = from; k < to; k++) {
        const char *s = l->s[k], *e = s + l->n[k];
        int code = 0;
        short_opts_of_line(s, l->n[k], o);
        for (const char *p = s; p < e; p++) {
            if (*p == '`') {
                code = !code;
                continue;
            }
            size_t n = code ? 0 : long_opt_at(s, p, e);
            if (n) {
                add_opt(o, p, n);
                p += n - 1;
            }
        }
    }
}

/* Every long option named anywhere in lines [from, to), code spans
 * included (prose about profconv quotes its options that way). */
static void all_long_options(const lines *l, size_t from, size_t to, optset *o)
{
    for (size_t k = from; k < to; k++) {
        const char *s = l->s[k], *e = s + l->n[k];
        for (const char *p = s; p < e; p++) {
            size_t n = long_opt_at(s, p, e);
            if (n) {
                add_opt(o, p, n);
                p += n - 1;
            }
        }
    }
}

/* The first option an option line of the help defines ("--output" for
 * "  -o, --output FILE ..."), or NULL for another kind of line. */
static const char *defined_on(const char *s, size_t n, char *buf, size_t size)
{
    size_t i = 0;
    while (i < n && s[i] == ' ')
        i++;
    if (i < 2 || i > 6 || i >= n || s[i] != '-')
        return NULL;
    const char *p = s + i, *e = s + n;
    const char *long_start = NULL;
    size_t long_n = 0;
    /* "-o, --output": the long name, when there is one. */
    if (p + 1 < e && p[1] != '-') {
        p += 2;
        while (p < e && (*p == ',' || *p == ' '))
            p++;
    }
    long_n = long_opt_at(s, p, e);
    if (long_n)
        long_start = p;
    else {
        long_start = s + i;
        long_n = 2;
    }
    snprintf(buf, size, "%.*s", (int)long_n, long_start);
    return buf;
}

/* ---- Running the binary ---- */

/* The output of `profconv ARGS` on standard output (NUL-terminated,
 * *len bytes), or NULL; *status receives its exit status. */
static char *run_profconv(const char *args, size_t *len, int *status)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "'%s' %s </dev/null 2>/dev/null", t_profconv(), args);
    FILE *f = popen(cmd, "r");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (cap - n < 4096) {
            char *b = realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    int ws = pclose(f);
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
    if (buf)
        buf[n] = 0;
    *len = n;
    return buf;
}

/* Whether the binary knows option opt: it says "unknown option" for one
 * it does not (and "needs a value", or "no input file given", for one it
 * does). */
static int binary_accepts(const char *opt)
{
    char cmd[1024], errf[700];
    snprintf(errf, sizeof errf, "%s/docs-option.err", t_tmpdir());
    snprintf(cmd, sizeof cmd, "'%s' %s </dev/null >/dev/null 2>'%s'", t_profconv(), opt, errf);
    if (system(cmd) == -1)
        return 0;
    size_t len = 0;
    unsigned char *e = t_read_file(errf, &len);
    int ok = e && !strstr((const char *)e, "unknown option");
    free(e);
    return ok;
}

/* ---- The reference ---- */

typedef struct reference {
    char *text;
    size_t len;
    lines l;
    size_t first, end;  /* the help text: lines [first, end) */
    int found;
} reference;

/* Finds the help text between the markers: BEGIN_MARK, "```text", the
 * text, "```", END_MARK. */
static void reference_read(reference *r)
{
    memset(r, 0, sizeof *r);
    r->text = (char *)t_read_file(REFERENCE, &r->len);
    if (!r->text) {
        t_fail(__FILE__, __LINE__, "%s cannot be read", REFERENCE);
        return;
    }
    split_lines(r->text, r->len, &r->l);
    size_t k = 0, count = r->l.count;
    while (k < count && !(r->l.n[k] == strlen(BEGIN_MARK) &&
                          memcmp(r->l.s[k], BEGIN_MARK, r->l.n[k]) == 0))
        k++;
    if (k + 1 >= count || r->l.n[k + 1] != 7 || memcmp(r->l.s[k + 1], "```text", 7) != 0) {
        t_fail(__FILE__, __LINE__, "%s has no line \"%s\" followed by \"```text\"",
               REFERENCE, BEGIN_MARK);
        return;
    }
    r->first = k + 2;
    size_t e = r->first;
    while (e < count && !(r->l.n[e] == 3 && memcmp(r->l.s[e], "```", 3) == 0))
        e++;
    if (e + 1 >= count || r->l.n[e + 1] != strlen(END_MARK) ||
        memcmp(r->l.s[e + 1], END_MARK, r->l.n[e + 1]) != 0) {
        t_fail(__FILE__, __LINE__, "%s: the help text's block does not end with \"```\" "
               "and \"%s\"", REFERENCE, END_MARK);
        return;
    }
    r->end = e;
    r->found = 1;
}

static void reference_free(reference *r)
{
    lines_free(&r->l);
    free(r->text);
}

/* The option whose entry holds help line k: the nearest option line at or
 * above it. */
static const char *entry_of(const lines *help, size_t k, char *buf, size_t size)
{
    for (size_t i = k + 1; i-- > 0;) {
        if (i >= help->count)
            continue;
        const char *o = defined_on(help->s[i], help->n[i], buf, size);
        if (o)
            return o;
        if (help->n[i] == 0)
            break;
    }
    return NULL;
}

static void compare_text(const lines *help, const reference *r)
{
    size_t nh = help->count, nr = r->end - r->first;
    char buf[64];
    for (size_t k = 0; k < nh || k < nr; k++) {
        const char *hs = k < nh ? help->s[k] : NULL;
        const char *rs = k < nr ? r->l.s[r->first + k] : NULL;
        size_t hn = k < nh ? help->n[k] : 0, rn = k < nr ? r->l.n[r->first + k] : 0;
        if (hs && rs && hn == rn && memcmp(hs, rs, hn) == 0)
            continue;
        const char *o = entry_of(help, k < nh ? k : nh - 1, buf, sizeof buf);
        char where[96];
        if (o)
            snprintf(where, sizeof where, "in the entry of option %s", o);
        else
            snprintf(where, sizeof where, "outside the option entries");
        t_fail(__FILE__, __LINE__, "%s differs from `profconv --help` at line %zu of the help "
               "(%s): the page has \"%.*s\"%s, the help \"%.*s\"%s; the page's block must "
               "be the exact help text (its first lines say how to regenerate it)",
               REFERENCE, k + 1, where, (int)rn, rs ? rs : "",
               rs ? "" : " (nothing: the page ends)", (int)hn, hs ? hs : "",
               hs ? "" : " (nothing: the help ends)");
        return;
    }
}

/* ---- Tests ---- */

TEST(docs_options_reference)
{
    size_t len = 0;
    int status = -1;
    char *help = run_profconv("--help", &len, &status);
    T_EQ_INT(status, 0);
    if (!help || len == 0) {
        t_fail(__FILE__, __LINE__, "%s --help printed nothing", t_profconv());
        free(help);
        return;
    }
    T_CHECK(help[len - 1] == '\n');
    lines hl;
    split_lines(help, len, &hl);
    optset *in_help = calloc(1, sizeof *in_help), *in_page = calloc(1, sizeof *in_page);
    reference r;
    reference_read(&r);
    if (in_help && in_page && r.found) {
        help_options(&hl, 0, hl.count, in_help);
        /* The page's options: those of its help block, read as the help is
         * read, and any other it names in its own prose. */
        help_options(&r.l, r.first, r.end, in_page);
        all_long_options(&r.l, 0, r.first, in_page);
        all_long_options(&r.l, r.end, r.l.count, in_page);
        T_CHECK(in_help->n > 20);
        for (size_t i = 0; i < in_help->n; i++)
            if (!has_opt(in_page, in_help->name[i], strlen(in_help->name[i])))
                t_fail(__FILE__, __LINE__, "option %s is in `profconv --help` but not in %s",
                       in_help->name[i], REFERENCE);
        for (size_t i = 0; i < in_page->n; i++)
            if (!has_opt(in_help, in_page->name[i], strlen(in_page->name[i])))
                t_fail(__FILE__, __LINE__, "%s names option %s, which `profconv --help` "
                       "does not have", REFERENCE, in_page->name[i]);
        compare_text(&hl, &r);
    }
    reference_free(&r);
    lines_free(&hl);
    free(in_help);
    free(in_page);
    free(help);
}

/* Every option the help lists is one the binary takes. */
TEST(docs_help_options_exist)
{
    size_t len = 0;
    int status = -1;
    char *help = run_profconv("--help", &len, &status);
    if (!help) {
        t_fail(__FILE__, __LINE__, "%s --help could not be run", t_profconv());
        return;
    }
    lines hl;
    split_lines(help, len, &hl);
    optset *o = calloc(1, sizeof *o);
    if (o) {
        help_options(&hl, 0, hl.count, o);
        for (size_t i = 0; i < o->n; i++)
            if (!binary_accepts(o->name[i]))
                t_fail(__FILE__, __LINE__, "`profconv --help` lists option %s, which "
                       "profconv refuses as unknown", o->name[i]);
    }
    free(o);
    lines_free(&hl);
    free(help);
}

/* Checks the options of the profconv command in code text [s, e): the
 * words after "profconv" up to the end of the command. */
static void check_command(const char *file, size_t line_no, const char *s, const char *e,
                          const optset *known)
{
    while (s < e) {
        const char *w = s;
        int last = 0;
        while (s < e && *s != ' ' && *s != '\t')
            s++;
        size_t n = (size_t)(s - w);
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        if (n == 0)
            continue;
        if (*w == '|' || *w == ';' || *w == '>' || *w == '#' || *w == '&' || *w == '<')
            return;
        /* "--help;": the command ends inside the word. */
        for (size_t i = 0; i < n; i++)
            if (strchr(";|&>", w[i])) {
                n = i;
                last = 1;
                break;
            }
        if (n < 2 || w[0] != '-') {
            if (last)
                return;
            continue;
        }
        size_t k = n;
        const char *eq = memchr(w, '=', n);
        if (eq)
            k = (size_t)(eq - w);
        if (!has_opt(known, w, k))
            t_fail(__FILE__, __LINE__, "%s:%zu: the profconv command uses option %.*s, "
                   "which `profconv --help` does not list", file, line_no, (int)k, w);
        if (last)
            return;
    }
}

/* Finds profconv commands in code segment [s, e) of a Markdown line. */
static void check_code(const char *file, size_t line_no, const char *s, const char *e,
                       const optset *known)
{
    static const char word[] = "profconv";
    const size_t wn = sizeof word - 1;
    for (const char *p = s; p + wn < e; p++) {
        if (memcmp(p, word, wn) != 0 || p[wn] != ' ')
            continue;
        if (p > s && p[-1] != ' ' && p[-1] != '/' && p[-1] != '(')
            continue;
        check_command(file, line_no, p + wn, e, known);
    }
}

/* The code of a Markdown file: fenced blocks, lines indented by four
 * spaces, and `code spans`. */
static void check_file(const char *path, const optset *known)
{
    size_t len = 0;
    char *text = (char *)t_read_file(path, &len);
    if (!text) {
        t_fail(__FILE__, __LINE__, "%s cannot be read", path);
        return;
    }
    lines l;
    split_lines(text, len, &l);
    int fenced = 0;
    for (size_t k = 0; k < l.count; k++) {
        const char *s = l.s[k], *e = s + l.n[k];
        if (l.n[k] >= 3 && memcmp(s, "```", 3) == 0) {
            fenced = !fenced;
            continue;
        }
        if (fenced || (l.n[k] >= 4 && memcmp(s, "    ", 4) == 0)) {
            check_code(path, k + 1, s, e, known);
            continue;
        }
        for (const char *p = s; p < e; p++) {
            if (*p != '`')
                continue;
            const char *q = memchr(p + 1, '`', (size_t)(e - p - 1));
            if (!q)
                break;
            check_code(path, k + 1, p + 1, q, known);
            p = q;
        }
    }
    lines_free(&l);
    free(text);
}

/* The Markdown files of a folder and its subfolders. */
static void check_folder(const char *dir, const optset *known, size_t *files)
{
    DIR *d = opendir(dir);
    if (!d) {
        t_fail(__FILE__, __LINE__, "%s cannot be read", dir);
        return;
    }
    for (struct dirent *de; (de = readdir(d));) {
        const char *name = de->d_name;
        size_t n = strlen(name);
        char path[1024];
        if (name[0] == '.')
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        if (n > 3 && strcmp(name + n - 3, ".md") == 0) {
            check_file(path, known);
            (*files)++;
        } else if (!strchr(name, '.')) {
            DIR *sub = opendir(path);
            if (sub) {
                closedir(sub);
                check_folder(path, known, files);
            }
        }
    }
    closedir(d);
}

TEST(docs_commands_use_known_options)
{
    size_t len = 0, files = 0;
    int status = -1;
    char *help = run_profconv("--help", &len, &status);
    if (!help) {
        t_fail(__FILE__, __LINE__, "%s --help could not be run", t_profconv());
        return;
    }
    lines hl;
    split_lines(help, len, &hl);
    optset *known = calloc(1, sizeof *known);
    if (known) {
        help_options(&hl, 0, hl.count, known);
        check_file("README.md", known);
        check_folder("doc", known, &files);
        T_CHECK(files > 0);
    }
    free(known);
    lines_free(&hl);
    free(help);
}
