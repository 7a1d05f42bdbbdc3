/* Java heap graphs (HeapGraph packets): hand-built graphs whose shallow
 * and retained sizes are known, the packet forms (continued dumps, id
 * deltas, reference bases, packed and repeated ids, field names), and the
 * corpus's heap graph traces against trace_processor's expected tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pf_corpus.h"
#include "pf_fixtures.h"
#include "t.h"
#include "test_util.h"

enum {
    JNI_GLOBAL = 1, JNI_LOCAL = 2, JAVA_FRAME = 3, STICKY_CLASS = 5,
    KIND_WEAK = 9, HEAP_ZYGOTE = 2,
};

static int cmp_line(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The shown heap rows as sorted "root;...;leaf size count" lines
 * (malloc'd); with heap not NULL, only that heap's. */
static char *rows_text(const pc_profile *p, const char *heap)
{
    size_t n = 0, total = 1;
    char **lines = calloc(p->heap.n + 1, sizeof *lines);
    for (size_t i = 0; lines && i < p->heap.n; i++) {
        if (p->heap.shown_dump && !p->heap.shown_dump[p->heap.dump[i]])
            continue;
        if (heap && strcmp(pc_str(&p->str, p->heap.heap[i]), heap) != 0)
            continue;
        char buf[1200];
        snprintf(buf, sizeof buf, "%s %llu %llu", stack_text(p, p->heap.stack[i]),
                 (unsigned long long)p->heap.alloc[i],
                 (unsigned long long)p->heap.alloc_count[i]);
        lines[n] = strdup(buf);
        total += strlen(buf) + 1;
        n++;
    }
    qsort(lines, n, sizeof *lines, cmp_line);
    char *out = calloc(total, 1);
    for (size_t i = 0; out && i < n; i++) {
        strcat(out, lines[i]);
        strcat(out, "\n");
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    return out;
}

/* The trace in b converted with --heap-graph shallow (0) or retained (1);
 * its rows as rows_text gives them. */
static char *converted(const pb_buf *b, int retained)
{
    pc_options o;
    pc_options_init(&o);
    o.heap_graph = retained;
    pc_profile *p = convert_buf(b, &o);
    char *text = p ? rows_text(p, NULL) : NULL;
    pc_profile_free(p);
    return text;
}

static void check_rows(const pb_buf *b, int retained, const char *want)
{
    char *got = converted(b, retained);
    T_EQ_STR(got ? got : "(no conversion)", want);
    free(got);
}

/* One object with references to refs[0..n). */
static void object(pb_buf *b, uint64_t id, uint64_t type, uint64_t size, const uint64_t *refs,
                   size_t n)
{
    pfe_hg_obj o = {0};
    o.id = id;
    o.type_id = type;
    o.self_size = size;
    o.refs = refs;
    o.n_refs = n;
    pfe_hg_object(b, &o);
}

static void types(pb_buf *b, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pfe_hg_type(b, i + 1, names[i], 0, 0, 0, NULL, 0, 0);
}

/* A whole graph in one packet of sequence 7 at ts, process 100. */
static size_t graph_open(pb_buf *b, uint64_t ts, size_t *hg)
{
    size_t pk = pfe_packet(b, 7);
    pb_uint(b, PFE_TIMESTAMP, ts);
    *hg = pfe_heap_graph(b, 100, 0, 0);
    return pk;
}

static void graph_close(pb_buf *b, size_t pk, size_t hg)
{
    pb_end(b, hg);
    pb_end(b, pk);
}

/* Root -> A, B; A -> D; B -> D.  D is reached through A first (A comes
 * first), and is dominated by the root alone. */
TEST(heap_graph_diamond)
{
    static const char *const names[] = {"Root", "A", "B", "D"};
    static const uint64_t r_refs[] = {2, 3}, a_refs[] = {4}, b_refs[] = {4}, roots[] = {1};
    pb_buf b = {0};
    process_tree(&b);
    size_t hg, pk = graph_open(&b, 1000, &hg);
    object(&b, 1, 1, 10, r_refs, 2);
    object(&b, 2, 2, 20, a_refs, 1);
    object(&b, 3, 3, 30, b_refs, 1);
    object(&b, 4, 4, 40, NULL, 0);
    pfe_hg_root(&b, JNI_GLOBAL, roots, 1, 0);
    types(&b, names, 4);
    graph_close(&b, pk, hg);
    check_rows(&b, 0,
               "[root: JNI global];Root 10 1\n"
               "[root: JNI global];Root;A 20 1\n"
               "[root: JNI global];Root;A;D 40 1\n"
               "[root: JNI global];Root;B 30 1\n");
    check_rows(&b, 1,
               "[root: JNI global];Root 10 1\n"
               "[root: JNI global];Root;A 20 1\n"
               "[root: JNI global];Root;B 30 1\n"
               "[root: JNI global];Root;D 40 1\n");
    /* The tracks and titles say what the sizes are: the objects' own,
     * or what they retain; not heapprofd's unreleased bytes. */
    for (int retained = 0; retained < 2; retained++) {
        t_case("heap_graph_diamond: named %s", retained ? "retained" : "shallow");
        pc_options o;
        pc_options_init(&o);
        o.heap_graph = retained;
        pc_profile *p = convert_buf(&b, &o);
        if (!p)
            continue;
        T_EQ_STR(pc_heap_measure_name(p), retained ? "retained" : "shallow");
        size_t len = 0;
        char *fx = written_text(p, PC_FORMAT_FIREFOX, &len);
        T_CONTAINS(fx ? fx : "", retained ? "\"name\":\"java heap (retained bytes)\""
                                          : "\"name\":\"java heap (shallow bytes)\"");
        T_CHECK(fx && !strstr(fx, "unreleased"));
        free(fx);
        char *ss = written_text(p, PC_FORMAT_SPEEDSCOPE, &len);
        T_CONTAINS(ss ? ss : "", retained ? "java heap (retained bytes)"
                                          : "java heap (shallow bytes)");
        free(ss);
        pc_profile_free(p);
    }
    pb_buf_free(&b);
}

/* Root -> A -> A -> B -> A (a cycle back): objects of one class in a row
 * share a node, as in trace_processor, and the cycle ends. */
TEST(heap_graph_chain_and_cycle)
{
    static const char *const names[] = {"Root", "A", "B"};
    static const uint64_t r_refs[] = {2}, a1[] = {3}, a2[] = {4}, b1[] = {2}, roots[] = {1};
    pb_buf b = {0};
    process_tree(&b);
    size_t hg, pk = graph_open(&b, 1000, &hg);
    object(&b, 1, 1, 10, r_refs, 1);
    object(&b, 2, 2, 5, a1, 1);
    object(&b, 3, 2, 5, a2, 1);
    object(&b, 4, 3, 7, b1, 1);
    pfe_hg_root(&b, JAVA_FRAME, roots, 1, 0);
    types(&b, names, 3);
    graph_close(&b, pk, hg);
    const char *want = "[root: Java frame];Root 10 1\n"
                       "[root: Java frame];Root;A 10 2\n"
                       "[root: Java frame];Root;A;B 7 1\n";
    check_rows(&b, 0, want);
    check_rows(&b, 1, want);
    pb_buf_free(&b);
}

/* Two roots reach one object: the shortest-path tree puts it under the
 * root whose class name comes first (trace_processor's order), the
 * dominator tree under neither.  An object that is a root twice takes the
 * kind that ranks first (sticky class before JNI global).  Objects no
 * root reaches are shown apart, by class. */
TEST(heap_graph_two_roots_and_unreachable)
{
    static const char *const names[] = {"RootB", "RootA", "Child", "Lost", "Held"};
    static const uint64_t to_child[] = {3}, both[] = {3, 6}, lost_refs[] = {5};
    static const uint64_t frame_roots[] = {1}, global_roots[] = {2, 7}, sticky[] = {7};
    pb_buf b = {0};
    process_tree(&b);
    size_t hg, pk = graph_open(&b, 1000, &hg);
    object(&b, 1, 1, 10, to_child, 1);
    object(&b, 2, 2, 10, both, 2);
    object(&b, 3, 3, 100, NULL, 0);
    object(&b, 4, 4, 9, lost_refs, 1);
    object(&b, 5, 4, 9, NULL, 0);
    object(&b, 6, 5, 1, NULL, 0);
    object(&b, 7, 5, 2, NULL, 0);
    pfe_hg_root(&b, JAVA_FRAME, frame_roots, 1, 0);
    pfe_hg_root(&b, JNI_GLOBAL, global_roots, 2, 1);
    pfe_hg_root(&b, STICKY_CLASS, sticky, 1, 0);
    types(&b, names, 5);
    graph_close(&b, pk, hg);
    check_rows(&b, 0,
               "[root: JNI global];RootA 10 1\n"
               "[root: JNI global];RootA;Child 100 1\n"
               "[root: JNI global];RootA;Held 1 1\n"
               "[root: Java frame];RootB 10 1\n"
               "[root: sticky class];Held 2 1\n"
               "[unreachable];Lost 18 2\n");
    check_rows(&b, 1,
               "[reachable from several roots];Child 100 1\n"
               "[root: JNI global];RootA 10 1\n"
               "[root: JNI global];RootA;Held 1 1\n"
               "[root: Java frame];RootB 10 1\n"
               "[root: sticky class];Held 2 1\n"
               "[unreachable];Lost 18 2\n");
    pb_buf_free(&b);
}

/* A dump over two packets, the types in the second; ids by delta, the
 * references from a base and repeated rather than packed; an object of
 * size 0 takes its class's; zygote objects are roots of the VM. */
TEST(heap_graph_continued)
{
    static const uint64_t rel[] = {1, 2, 0}, next[] = {103}, roots[] = {100};
    pb_buf b = {0};
    process_tree(&b);
    size_t pk = pfe_packet(&b, 7);
    pb_uint(&b, PFE_TIMESTAMP, 5000);
    size_t hg = pfe_heap_graph(&b, 100, 0, 1);
    pfe_hg_obj o = {0};
    o.id = 100;
    o.type_id = 1;
    o.refs = rel;
    o.n_refs = 3;
    o.ref_base = 100;
    pfe_hg_object(&b, &o);
    memset(&o, 0, sizeof o);
    o.id_delta = 1;
    o.type_id = 2;
    pfe_hg_object(&b, &o);
    o.refs = next;
    o.n_refs = 1;
    o.unpacked = 1;
    pfe_hg_object(&b, &o);
    pfe_hg_root(&b, JNI_LOCAL, roots, 1, 0);
    graph_close(&b, pk, hg);
    /* The second packet has no time: it continues the dump. */
    pk = pfe_packet(&b, 7);
    hg = pfe_heap_graph(&b, 100, 1, 0);
    memset(&o, 0, sizeof o);
    o.id = 103;
    o.type_id = 3;
    pfe_hg_object(&b, &o);
    o.id = 104;
    o.type_id = 4;
    o.self_size = 3;
    o.heap_type = HEAP_ZYGOTE;
    pfe_hg_object(&b, &o);
    pfe_hg_type(&b, 1, "Root", 8, 0, 0, NULL, 0, 0);
    pfe_hg_type(&b, 2, "A", 16, 0, 0, NULL, 0, 0);
    pfe_hg_type(&b, 3, "B", 64, 0, 0, NULL, 0, 0);
    pfe_hg_type(&b, 4, "Z", 0, 0, 0, NULL, 0, 0);
    graph_close(&b, pk, hg);
    check_rows(&b, 0,
               "[root: JNI local];Root 8 1\n"
               "[root: JNI local];Root;A 32 2\n"
               "[root: JNI local];Root;A;B 64 1\n"
               "[root: VM internal];Z 3 1\n");
    pb_buf_free(&b);
}

/* Weak, finalizer and phantom references keep nothing alive: their
 * referent field (named by the class's fields through its superclass, or
 * by the object's own field ids in older traces) is no path. */
TEST(heap_graph_weak_references)
{
    for (int own = 0; own < 2; own++) {
        static const uint64_t r_refs[] = {2}, w_refs[] = {3}, fields[] = {7}, roots[] = {1};
        pb_buf b = {0};
        process_tree(&b);
        size_t hg, pk = graph_open(&b, 1000, &hg);
        object(&b, 1, 1, 10, r_refs, 1);
        pfe_hg_obj o = {0};
        o.id = 2;
        o.type_id = 2;
        o.self_size = 24;
        o.refs = w_refs;
        o.n_refs = 1;
        if (own) {
            o.fields = fields;
            o.n_fields = 1;
        }
        pfe_hg_object(&b, &o);
        object(&b, 3, 4, 100, NULL, 0);
        pfe_hg_root(&b, JNI_GLOBAL, roots, 1, 0);
        pfe_hg_type(&b, 1, "Root", 0, 0, 0, NULL, 0, 0);
        pfe_hg_type(&b, 2, "java.lang.ref.WeakReference", 0, 3, KIND_WEAK, NULL, 0, 0);
        pfe_hg_type(&b, 3, "java.lang.ref.Reference", 0, 0, 0, own ? NULL : fields,
                    own ? 0 : 1, 0);
        pfe_hg_type(&b, 4, "Payload", 0, 0, 0, NULL, 0, 0);
        pfe_str(&b, PFE_HG_FIELD_NAMES, 7, "java.lang.Object java.lang.ref.Reference.referent");
        graph_close(&b, pk, hg);
        t_case("own field ids: %d", own);
        check_rows(&b, 0,
                   "[root: JNI global];Root 10 1\n"
                   "[root: JNI global];Root;java.lang.ref.WeakReference 24 1\n"
                   "[unreachable];Payload 100 1\n");
        pb_buf_free(&b);
    }
}

/* Dumps one after the other on a sequence: each its own dump, the last
 * shown by default; a gap in the packet index is reported, the dump kept;
 * a trace ending inside a dump keeps what arrived. */
TEST(heap_graph_dumps)
{
    static const uint64_t roots[] = {1};
    pb_buf b = {0};
    process_tree(&b);
    for (int d = 0; d < 3; d++) {
        size_t pk = pfe_packet(&b, 7);
        pb_uint(&b, PFE_TIMESTAMP, 1000u * (d + 1));
        /* The second dump starts at index 1: a packet was lost. */
        size_t hg = pfe_heap_graph(&b, 100, d == 1 ? 1 : 0, d == 2);
        object(&b, 1, 1, 10u * (d + 1), NULL, 0);
        pfe_hg_root(&b, JNI_GLOBAL, roots, 1, 0);
        pfe_hg_type(&b, 1, "Root", 0, 0, 0, NULL, 0, 0);
        graph_close(&b, pk, hg);
    }
    pc_options o;
    pc_options_init(&o);
    log_capture_start(&o);
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        T_EQ_INT(p->heap.n_dumps, 3);
        char *text = rows_text(p, "java heap");
        T_EQ_STR(text, "[root: JNI global];Root 30 1\n");
        free(text);
        T_EQ_STR(str_of(p, p->thread.name[p->heap.thread[0]]), "example.app");
    }
    T_CONTAINS(log_capture_text(), "1 Java heap graph dump(s) lost packets");
    T_CONTAINS(log_capture_text(), "1 Java heap graph dump(s) were cut short");
    pc_profile_free(p);
    o.heap_dump = 1;
    p = convert_buf(&b, &o);
    if (p) {
        char *text = rows_text(p, NULL);
        T_EQ_STR(text, "[root: JNI global];Root 10 1\n");
        free(text);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
}

/* Class names deobfuscated by a mapping file, arrays and class objects
 * included; the frames are in Java's category. */
TEST(heap_graph_mapping_file)
{
    static const char *const names[] = {"a", "a[]", "java.lang.Class<a>", "b.c"};
    static const uint64_t r_refs[] = {2, 3, 4}, roots[] = {1};
    char path[600];
    snprintf(path, sizeof path, "%s/hg_mapping.txt", t_tmpdir());
    FILE *f = fopen(path, "w");
    if (!f) {
        t_fail(__FILE__, __LINE__, "cannot write %s", path);
        return;
    }
    fputs("com.example.Original -> a:\n    int x -> a\ncom.example.Other -> b.c:\n", f);
    fclose(f);
    pb_buf b = {0};
    process_tree(&b);
    size_t hg, pk = graph_open(&b, 1000, &hg);
    object(&b, 1, 1, 1, r_refs, 3);
    object(&b, 2, 2, 2, NULL, 0);
    object(&b, 3, 3, 4, NULL, 0);
    object(&b, 4, 4, 8, NULL, 0);
    pfe_hg_root(&b, JNI_GLOBAL, roots, 1, 0);
    types(&b, names, 4);
    graph_close(&b, pk, hg);
    const char *files[] = {path};
    pc_options o;
    pc_options_init(&o);
    o.proguard_mapping_files = (pc_strings){files, 1};
    pc_profile *p = convert_buf(&b, &o);
    if (p) {
        char *text = rows_text(p, NULL);
        T_EQ_STR(text, "[root: JNI global];com.example.Original 1 1\n"
                       "[root: JNI global];com.example.Original;com.example.Original[] 2 1\n"
                       "[root: JNI global];com.example.Original;com.example.Other 8 1\n"
                       "[root: JNI global];com.example.Original;"
                       "java.lang.Class<com.example.Original> 4 1\n");
        free(text);
        T_EQ_INT(frame_category(p, "com.example.Original"), PC_CAT_DEX);
    }
    pc_profile_free(p);
    pb_buf_free(&b);
    remove(path);
}

/* Damaged heap graphs: a field of the wrong wire type is an error, field
 * names that do not pair with references leave the object out, an object
 * named by nothing but a reference has no class. */
TEST(heap_graph_damaged)
{
    static const uint64_t r_refs[] = {2, 99}, fields[] = {1, 2, 3}, roots[] = {1, 42};
    pb_buf b = {0};
    process_tree(&b);
    size_t hg, pk = graph_open(&b, 1000, &hg);
    object(&b, 1, 1, 10, r_refs, 2);
    pfe_hg_obj o = {0};
    o.id = 2;
    o.type_id = 1;
    o.refs = r_refs;
    o.n_refs = 2;
    o.fields = fields;
    o.n_fields = 3;
    pfe_hg_object(&b, &o);
    pfe_hg_root(&b, 77, roots, 2, 0);
    pfe_hg_type(&b, 1, "Root", 0, 0, 0, NULL, 0, 0);
    graph_close(&b, pk, hg);
    check_rows(&b, 0,
               "[root: unknown];Root 10 1\n"
               "[root: unknown];Root;[unknown class] 0 2\n");
    pb_buf_free(&b);

    /* pid as a length-delimited field. */
    pb_buf bad = {0};
    pk = pfe_packet(&bad, 7);
    hg = pb_begin(&bad, PFE_HEAP_GRAPH);
    pb_string(&bad, 1, "x");
    graph_close(&bad, pk, hg);
    pc_error err;
    memset(&err, 0, sizeof err);
    pc_profile *q = NULL;
    T_EQ_INT(convert_bytes_unchecked(bad.data, bad.len, NULL, &q, &err), PC_EINPUT);
    T_CONTAINS(err.message, "HeapGraph");
    pc_profile_free(q);
    pb_buf_free(&bad);
}

/* ---- The corpus ---- */

static const char *raw(const char *rel)
{
    static char path[1024];
    const char *shared = t_shared();
    snprintf(path, sizeof path, "%s/corpus/perfetto/raw_textprotos/test/trace_processor/"
             "diff_tests/%s", shared ? shared : "../shared", rel);
    return path;
}

static char *corpus_rows(const char *rel, int retained)
{
    struct stat st;
    if (stat(raw(rel), &st) != 0) {
        t_skip("%s not found", rel);
        return NULL;
    }
    pc_options o;
    pc_options_init(&o);
    o.heap_graph = retained;
    pc_profile *p = convert_path(raw(rel), &o);
    char *text = p ? rows_text(p, NULL) : NULL;
    pc_profile_free(p);
    return text;
}

/* trace_processor's heap graph flame graph of heap_graph.textproto
 * (test_heap_graph_flamegraph_2): FactoryProducerDelegateImplActor
 * [ROOT_JAVA_FRAME] 64 bytes, 96 with Foo (32); DeobfuscatedA[] 256
 * (deobfuscated by the trace's mapping for the package of the class's
 * install path); android.os.Parcel [ROOT_VM_INTERNAL] 256 (a zygote
 * object).  The same of heap_graph_baseapk (test_heap_graph_flamegraph). */
TEST(heap_graph_corpus_flamegraph)
{
    static const char *const traces[] = {"parser/profiling/heap_graph.pb",
                                          "parser/profiling/heap_graph_baseapk.pb",
                                          "parser/profiling/heap_graph_legacy.pb"};
    for (size_t i = 0; i < 3; i++) {
        t_case("%s", traces[i]);
        char *text = corpus_rows(traces[i], 0);
        if (!text)
            continue;
        T_CONTAINS(text, "[root: Java frame];FactoryProducerDelegateImplActor 64 1\n"
                         "[root: Java frame];FactoryProducerDelegateImplActor;Foo 32 1\n");
        T_CONTAINS(text, "[root: Java frame];DeobfuscatedA[] 256 1\n");
        if (i == 0)
            T_CONTAINS(text, "[root: VM internal];android.os.Parcel 256 1\n");
        /* Unreachable: Foo (128, its class's size), a (1024) and
         * java.lang.Class<a[]> (256). */
        T_CONTAINS(text, "[unreachable];DeobfuscatedA 1024 1\n[unreachable];Foo 128 1\n"
                         "[unreachable];java.lang.Class<DeobfuscatedA[]> 256 1\n");
        free(text);
    }
}

/* test_heap_graph_root_sorting(_reverse): Child is reached from RootA,
 * whose class name comes first, whichever order the roots are given in. */
TEST(heap_graph_corpus_root_sorting)
{
    static const char *const traces[] = {"parser/profiling/heap_graph_root_sorting.pb",
                                          "parser/profiling/heap_graph_root_sorting_reverse.pb"};
    for (size_t i = 0; i < 2; i++) {
        t_case("%s", traces[i]);
        char *text = corpus_rows(traces[i], 0);
        if (text)
            T_CONTAINS(text, "[root: Java frame];RootA;Child 100 1\n");
        free(text);
    }
}

/* test_heap_graph_interleaved_object: two processes' dumps interleaved on
 * two sequences, the second packet of one without a time. */
TEST(heap_graph_corpus_interleaved)
{
    char *text = corpus_rows("parser/profiling/heap_graph_interleaved.pb", 0);
    if (text)
        T_EQ_STR(text, "[root: Java frame];FactoryProducerDelegateImplActor 64 1\n"
                       "[root: Java frame];FactoryProducerDelegateImplActor 64 1\n"
                       "[root: Java frame];FactoryProducerDelegateImplActor;Foo 32 1\n"
                       "[unreachable];DeobfuscatedA 256 1\n"
                       "[unreachable];Foo 128 1\n");
    free(text);
}

/* Sums of the rows whose stack starts with prefix: a node's total. */
static void node_total(const char *text, const char *prefix, unsigned long long *size,
                       unsigned long long *count)
{
    *size = *count = 0;
    size_t n = strlen(prefix);
    for (const char *l = text; l && *l;) {
        const char *end = strchr(l, '\n');
        if (!end)
            break;
        if (strncmp(l, prefix, n) == 0 && (l[n] == ';' || l[n] == ' ')) {
            const char *sp = end;
            while (sp > l && sp[-1] != ' ')
                sp--;
            const char *sp2 = sp - 1;
            while (sp2 > l && sp2[-1] != ' ')
                sp2--;
            *size += strtoull(sp2, NULL, 10);
            *count += strtoull(sp, NULL, 10);
        }
        l = end + 1;
    }
}

/* test_heap_graph_dominator_tree: the dominated objects and bytes of R
 * (13, 39), S (10, 1023), M (6, 922), O (4, 904), C (4, 12), and the
 * Cleaner's phantom referent left out (N is S's alone). */
TEST(heap_graph_corpus_dominator_tree)
{
    static const struct {
        const char *node;
        unsigned long long size, count;
    } want[] = {
        {"[root: JNI global];R", 39, 13},
        {"[root: JNI global];S", 1023, 10},
        {"[root: JNI global];S;M", 922, 6},
        {"[root: JNI global];S;M;O", 904, 4},
        {"[root: JNI global];R;C", 12, 4},
        {"[root: JNI global];S;N", 100, 3},
        {"[root: JNI global];sun.misc.Cleaner", 1024, 1},
    };
    char *text = corpus_rows("stdlib/android/heap_graph_for_dominator_tree.pb", 1);
    for (size_t i = 0; text && i < sizeof want / sizeof *want; i++) {
        unsigned long long size, count;
        node_total(text, want[i].node, &size, &count);
        t_case("%s", want[i].node);
        T_EQ_INT(size, want[i].size);
        T_EQ_INT(count, want[i].count);
    }
    free(text);
}

/* test_heap_graph_class_summary_tree and the class loader test: A holds
 * 2 objects of 200 bytes, 11200 with what hangs under it; one class
 * loaded twice is one node of 2 objects. */
TEST(heap_graph_corpus_class_tree)
{
    char *text = corpus_rows("stdlib/android/heap_graph_for_aggregation.pb", 0);
    if (text)
        T_EQ_STR(text, "[root: JNI global];A 200 2\n"
                       "[root: JNI global];A;B 1000 1\n"
                       "[root: JNI global];A;java.lang.String 10000 1\n"
                       "[root: JNI global];java.lang.String 666 1\n");
    free(text);
    for (int retained = 0; retained < 2; retained++) {
        text = corpus_rows("stdlib/android/heap_graph_for_class_loader_dedup.pb", retained);
        if (text)
            T_EQ_STR(text, "[root: JNI global];Root 8 1\n[root: JNI global];Root;Clock 32 2\n");
        free(text);
    }
}

/* Every corpus trace with heap graphs converts to something to show, and
 * its Firefox profile loads in the profiler (../shared/fxprof/validate,
 * with Node.js 20). */
TEST(heap_graph_corpus_all)
{
    static const char *const traces[] = {
        "parser/profiling/heap_graph.pb", "parser/profiling/heap_graph_baseapk.pb",
        "parser/profiling/heap_graph_branching.pb",
        "parser/profiling/heap_graph_deobfuscate_pkg.pb",
        "parser/profiling/heap_graph_huge_size.pb", "parser/profiling/heap_graph_interleaved.pb",
        "parser/profiling/heap_graph_legacy.pb", "parser/profiling/heap_graph_native_size.pb",
        "parser/profiling/heap_graph_root_sorting.pb",
        "parser/profiling/heap_graph_root_sorting_reverse.pb",
        "parser/profiling/heap_graph_superclass.pb",
        "parser/profiling/heap_graph_two_locations.pb",
        "stdlib/android/heap_graph_for_dominator_tree.pb", "stdlib/android/heap_graph_oome.pb",
        "stdlib/android/heap_graph_for_aggregation.pb",
        "stdlib/android/heap_graph_for_class_loader_dedup.pb",
        "metrics/profiling/heap_graph_closest_proc.pb", "metrics/profiling/heap_graph.pb",
    };
    const char *shared = t_shared();
    char validate[700];
    snprintf(validate, sizeof validate, "%s/fxprof/validate.cjs", shared ? shared : "../shared");
    struct stat st;
    int can_validate = shared && stat(validate, &st) == 0 &&
                       t_node20();
    if (!can_validate)
        t_skip("../shared/fxprof or Node.js 20 not found: the profiler's load is not checked");
    size_t n_files = 0;
    char *cmd = malloc(64 * 1024);
    if (!cmd)
        return;
    size_t used = (size_t)snprintf(cmd, 64 * 1024, "%s/fxprof/validate --quiet",
                                   shared ? shared : "../shared");
    for (size_t i = 0; i < sizeof traces / sizeof *traces; i++) {
        t_case("%s", traces[i]);
        if (stat(raw(traces[i]), &st) != 0) {
            t_skip("%s not found", traces[i]);
            continue;
        }
        pc_profile *p = convert_path(raw(traces[i]), NULL);
        if (!p)
            continue;
        T_CHECK(p->heap.n > 0);
        for (int retained = 0; retained < 2 && can_validate; retained++) {
            pc_options o;
            pc_options_init(&o);
            o.heap_graph = retained;
            pc_profile *q = retained ? convert_path(raw(traces[i]), &o) : p;
            size_t len = 0;
            char *json = q ? written_text(q, PC_FORMAT_FIREFOX, &len) : NULL;
            char out[700];
            snprintf(out, sizeof out, "%s/hg_%zu_%d.json", t_tmpdir(), i, retained);
            FILE *f = json ? fopen(out, "w") : NULL;
            if (f) {
                fwrite(json, 1, len, f);
                fclose(f);
                used += (size_t)snprintf(cmd + used, 64 * 1024 - used, " %s", out);
                n_files++;
            }
            free(json);
            if (q != p)
                pc_profile_free(q);
        }
        pc_profile_free(p);
    }
    if (can_validate && n_files) {
        t_case("fxprof validate");
        snprintf(cmd + used, 64 * 1024 - used, " >/dev/null 2>&1");
        T_EQ_INT(system(cmd), 0);
    }
    free(cmd);
}
