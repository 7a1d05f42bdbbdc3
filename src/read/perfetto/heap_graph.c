/* ART's Java heap graphs (HeapGraph packets, android.java_hprof): the
 * objects of one process's heap, their references and the GC roots,
 * shown as a flame graph of bytes by the shortest path from a root,
 * grouped by class, as trace_processor's heap graph class tree does
 * (stdlib android.memory.heap_graph.class_tree), or, with --heap-graph
 * retained, by the path in the dominator tree, so that a node's total is
 * what the objects under it retain.
 *
 * A dump spans the packets of one sequence up to one that is not
 * `continued`; its objects, references, types and roots are gathered
 * into flat arrays (no allocation per object) and turned into the tree
 * when the dump ends.  The tree's nodes stand for types, not names:
 * class names are deobfuscated only once the whole trace is read (the
 * mapping may come after the graph), then nodes of equal names merge,
 * and the rows go to the model's heap table. */
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/path.h"
#include "java/proguard.h"
#include "read/perfetto/reader.h"

enum {
    ROOT_UNKNOWN = 0,
    ROOT_JNI_GLOBAL = 1,
    ROOT_JNI_LOCAL = 2,
    ROOT_STICKY_CLASS = 5,
    ROOT_VM_INTERNAL = 13,
    ROOT_MAX = 14,
    /* Tops of the tree that are no root kind: objects the dominator tree
     * hangs from its virtual root without being roots themselves (two
     * roots reach them), and the objects no root reaches. */
    TOP_SEVERAL = 15,
    TOP_UNREACHABLE = 16,
    N_TOPS = 17,
    NO_ROOT = 0xff,
};
enum { HEAP_ZYGOTE = 2, HEAP_BOOT_IMAGE = 3, HEAP_MAX = 3 };
enum { KIND_WEAK = 9, KIND_FINALIZER = 10, KIND_PHANTOM = 11, KIND_MAX = 11 };

#define UNSEEN UINT32_MAX
#define TOP (UINT32_MAX - 1)
/* Object indexes stay below the markers above, and reference slices
 * within 32 bits. */
#define MAX_OBJECTS (UINT32_MAX - 2)
#define MAX_REFS ((size_t)UINT32_MAX)

static const char *const top_names[N_TOPS] = {
    "[root: unknown]", "[root: JNI global]", "[root: JNI local]", "[root: Java frame]",
    "[root: native stack]", "[root: sticky class]", "[root: thread block]",
    "[root: monitor used]", "[root: thread object]", "[root: interned string]",
    "[root: finalizing]", "[root: debugger]", "[root: reference cleanup]",
    "[root: VM internal]", "[root: JNI monitor]", "[reachable from several roots]",
    "[unreachable]",
};

/* One dump being read. */
typedef struct hg_build {
    uint32_t seq;
    int64_t pid;
    uint64_t ts;
    int has_ts, started, bad_index;
    uint64_t last_id, next_index;
    uint8_t last_heap;
    struct {
        uint64_t *size;
        uint32_t *type, *ref0, *nref;
        uint8_t *heap, *root;
        size_t n, cap;
    } obj;
    /* Object id -> index.  Every reference is looked up here, at random:
     * the id beside its index makes a lookup one cache miss, not two. */
    struct hg_slot {
        uint64_t id;
        uint32_t v;     /* index + 1; 0: empty */
    } *slot;
    size_t slot_cap;
    /* Every object's references, its slice [ref0, ref0 + nref); PC_NONE
     * for a null one.  field holds the field name ids objects state
     * themselves (older traces), allocated at the first. */
    struct {
        uint32_t *target;
        uint64_t *field;
        size_t n, cap, field_cap;
    } ref;
    struct {
        uint64_t *id, *size, *super, *loc;
        uint32_t *name, *f0, *nf;
        uint8_t *kind, *has_loc;
        size_t n, cap;
        pc_htab idx;
    } type;
    struct {
        uint64_t *v;
        size_t n, cap;
    } tfield;
    struct {
        uint64_t *iid;
        uint32_t *name;
        size_t n, cap;
        pc_htab idx;
    } loc;
    /* Ids of the field names that are java.lang.ref.Reference.referent. */
    struct {
        uint64_t *v;
        size_t n, cap;
    } referent;
    struct {
        uint64_t *id;
        uint8_t *kind;
        size_t n, cap;
    } root;
} hg_build;

/* One dump's tree: nodes per (parent node, type), tops per (kind, type);
 * a node's parent comes before it. */
typedef struct hg_tree {
    int64_t pid;
    uint64_t ts;
    struct {
        uint32_t *parent, *type;
        uint8_t *top;
        uint64_t *size, *count;
        size_t n, cap;
        pc_htab idx;
    } node;
    /* Types: class name and install path (string ids, PC_NONE: none);
     * the last one stands for objects of no known type. */
    uint32_t *tname, *tloc;
    size_t n_types;
} hg_tree;

typedef struct pf_hgraph pf_hgraph;

/* Per sequence that sent a heap graph, its open dump (NULL: none), so
 * that finding it costs the same however many sequences a trace has. */
struct pf_hgraph {
    hg_build **open;
    uint32_t *open_seq;
    size_t n_open, cap_open;
    pc_htab open_idx;
    hg_tree *tree;
    size_t n_tree, cap_tree;
};

/* ---- Reading ---- */

/* NEXT lets a length-delimited field through where a varint is expected
 * (a packed repeated one); these fields are single values. */
static int next_scalar(pf_reader *r, pb_reader *pr, pb_field *f, const uint8_t *ex, size_t n,
                       const char *what)
{
    int got = pf_next(r, pr, f, ex, n, what);
    if (got > 0 && f->number < n && ex[f->number] == V && pf_scalar(r, pr, f, what) != PC_OK)
        return -1;
    return got;
}
#define NEXT_S(r, pr, f, ex, what) next_scalar(r, pr, f, ex, sizeof ex, what)

/* A repeated varint field, packed or not: any other wire type is an
 * error (the tables above let repeated fields through unchecked). */
static int each_varint(pf_reader *r, pb_reader *pr, const pb_field *f, pf_each_fn fn, void *ctx,
                       const char *what)
{
    if (f->wiretype != V && f->wiretype != L) {
        pb_expect(pr, f, L);
        return pf_wire_fail(r, pr, what);
    }
    return pf_each_varint(r, pr, f, fn, ctx, what);
}

static void build_free(hg_build *b)
{
    if (!b)
        return;
    free(b->obj.size);
    free(b->obj.type);
    free(b->obj.ref0);
    free(b->obj.nref);
    free(b->obj.heap);
    free(b->obj.root);
    free(b->slot);
    free(b->ref.target);
    free(b->ref.field);
    free(b->type.id);
    free(b->type.size);
    free(b->type.super);
    free(b->type.loc);
    free(b->type.name);
    free(b->type.f0);
    free(b->type.nf);
    free(b->type.kind);
    free(b->type.has_loc);
    pc_htab_free(&b->type.idx);
    free(b->tfield.v);
    free(b->loc.iid);
    free(b->loc.name);
    pc_htab_free(&b->loc.idx);
    free(b->referent.v);
    free(b->root.id);
    free(b->root.kind);
    free(b);
}

static void tree_free(hg_tree *t)
{
    free(t->node.parent);
    free(t->node.type);
    free(t->node.top);
    free(t->node.size);
    free(t->node.count);
    pc_htab_free(&t->node.idx);
    free(t->tname);
    free(t->tloc);
}

void pf_heap_graph_free(pf_reader *r)
{
    pf_hgraph *g = r->hg;
    if (!g)
        return;
    for (size_t i = 0; i < g->n_open; i++)
        build_free(g->open[i]);
    for (size_t i = 0; i < g->n_tree; i++)
        tree_free(&g->tree[i]);
    free(g->open);
    free(g->open_seq);
    pc_htab_free(&g->open_idx);
    free(g->tree);
    free(g);
    r->hg = NULL;
}

/* Ids mixed with the process's secret key (hashtab.h): ids come from
 * the input, which must not be able to send them all to one slot. */
static size_t slot_of(const hg_build *b, uint64_t id)
{
    return (size_t)pc_mix64(id ^ pc_hash_key()) & (b->slot_cap - 1);
}

/* Linear probing kept under 3/4 full. */
static int slots_grow(hg_build *b)
{
    size_t cap = b->slot_cap ? b->slot_cap * 2 : 1024;
    struct hg_slot *old = b->slot;
    size_t old_cap = b->slot_cap;
    if (cap > SIZE_MAX / sizeof *b->slot || !(b->slot = calloc(cap, sizeof *b->slot))) {
        b->slot = old;
        return -1;
    }
    b->slot_cap = cap;
    for (size_t k = 0; k < old_cap; k++)
        if (old[k].v) {
            size_t i = slot_of(b, old[k].id);
            while (b->slot[i].v)
                i = (i + 1) & (cap - 1);
            b->slot[i] = old[k];
        }
    free(old);
    return 0;
}

/* The object with id, added when new; PC_NONE when out of memory. */
static uint32_t object_of(hg_build *b, uint64_t id)
{
    if ((b->obj.n + 1) * 4 > b->slot_cap * 3 && slots_grow(b) < 0)
        return PC_NONE;
    size_t i = slot_of(b, id);
    for (; b->slot[i].v; i = (i + 1) & (b->slot_cap - 1))
        if (b->slot[i].id == id)
            return b->slot[i].v - 1;
    struct pc_col cols[] = {PC_COL(b->obj.size), PC_COL(b->obj.type), PC_COL(b->obj.ref0),
                            PC_COL(b->obj.nref), PC_COL(b->obj.heap), PC_COL(b->obj.root)};
    if (b->obj.n >= MAX_OBJECTS || pc_grow_cols(&b->obj.cap, b->obj.n + 1, cols, 6) < 0)
        return PC_NONE;
    uint32_t o = (uint32_t)b->obj.n++;
    b->obj.size[o] = 0;
    b->obj.type[o] = PC_NONE;
    b->obj.ref0[o] = b->obj.nref[o] = 0;
    b->obj.heap[o] = 0;
    b->obj.root[o] = NO_ROOT;
    b->slot[i].id = id;
    b->slot[i].v = o + 1;
    return o;
}

static uint32_t find_object(const hg_build *b, uint64_t id)
{
    if (!b->obj.n)
        return PC_NONE;
    for (size_t i = slot_of(b, id); b->slot[i].v; i = (i + 1) & (b->slot_cap - 1))
        if (b->slot[i].id == id)
            return b->slot[i].v - 1;
    return PC_NONE;
}

/* The type with id, added (nameless, of size 0) when new. */
static uint32_t type_of(hg_build *b, uint64_t id)
{
    pc_probe pr;
    if (pc_htab_reserve(&b->type.idx, b->type.n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&b->type.idx, id, &pr);
    for (uint32_t i; (i = pc_probe_next(&b->type.idx, &pr)) != PC_NONE;)
        if (b->type.id[i] == id)
            return i;
    struct pc_col cols[] = {PC_COL(b->type.id), PC_COL(b->type.size), PC_COL(b->type.super),
                            PC_COL(b->type.loc), PC_COL(b->type.name), PC_COL(b->type.f0),
                            PC_COL(b->type.nf), PC_COL(b->type.kind),
                            PC_COL(b->type.has_loc)};
    if (b->type.n >= MAX_OBJECTS || pc_grow_cols(&b->type.cap, b->type.n + 1, cols, 9) < 0)
        return PC_NONE;
    uint32_t i = (uint32_t)b->type.n++;
    b->type.id[i] = id;
    b->type.size[i] = b->type.super[i] = b->type.loc[i] = 0;
    b->type.name[i] = PC_NONE;
    b->type.f0[i] = b->type.nf[i] = 0;
    b->type.kind[i] = b->type.has_loc[i] = 0;
    pc_htab_insert(&b->type.idx, &pr, i);
    return i;
}

static uint32_t find_type(const hg_build *b, uint64_t id)
{
    pc_probe pr;
    if (!b->type.n)
        return PC_NONE;
    pc_probe_start(&b->type.idx, id, &pr);
    for (uint32_t i; (i = pc_probe_next(&b->type.idx, &pr)) != PC_NONE;)
        if (b->type.id[i] == id)
            return i;
    return PC_NONE;
}

static int push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
    if (pc_grow(v, cap, *n + 1, sizeof **v, 16) < 0)
        return -1;
    (*v)[(*n)++] = x;
    return 0;
}

static int add_root(hg_build *b, uint64_t id, uint8_t kind)
{
    struct pc_col cols[] = {PC_COL(b->root.id), PC_COL(b->root.kind)};
    if (pc_grow_cols(&b->root.cap, b->root.n + 1, cols, 2) < 0)
        return -1;
    b->root.id[b->root.n] = id;
    b->root.kind[b->root.n++] = kind;
    return 0;
}

static int count_value(pf_reader *r, void *ctx, uint64_t v)
{
    (void)r;
    (void)v;
    ++*(size_t *)ctx;
    return PC_OK;
}

typedef struct ref_ctx {
    hg_build *b;
    uint64_t base;
    size_t at;    /* next slot for a field id */
} ref_ctx;

static int add_ref(pf_reader *r, void *ctx, uint64_t v)
{
    ref_ctx *c = ctx;
    hg_build *b = c->b;
    uint32_t target = PC_NONE;
    /* The base applies to references, never to null ones (as
     * trace_processor reads reference_field_id_base). */
    if (v && (target = object_of(b, v + c->base)) == PC_NONE)
        return pf_nomem(r);
    if (b->ref.n >= MAX_REFS ||
        pc_grow(&b->ref.target, &b->ref.cap, b->ref.n + 1, sizeof *b->ref.target, 256) < 0)
        return pf_nomem(r);
    if (b->ref.field) {
        if (pc_grow(&b->ref.field, &b->ref.field_cap, b->ref.cap, sizeof *b->ref.field, 256) < 0)
            return pf_nomem(r);
        b->ref.field[b->ref.n] = 0;
    }
    b->ref.target[b->ref.n++] = target;
    return PC_OK;
}

static int add_field(pf_reader *r, void *ctx, uint64_t v)
{
    ref_ctx *c = ctx;
    hg_build *b = c->b;
    if (!b->ref.field) {
        /* The first object that names its fields: earlier references
         * had none. */
        if (pc_grow(&b->ref.field, &b->ref.field_cap, b->ref.cap > 256 ? b->ref.cap : 256,
                    sizeof *b->ref.field, 256) < 0)
            return pf_nomem(r);
        memset(b->ref.field, 0, b->ref.field_cap * sizeof *b->ref.field);
    }
    if (c->at < b->ref.n)
        b->ref.field[c->at++] = v;
    return PC_OK;
}

static int on_object(pf_reader *r, pb_reader *pr, hg_build *b)
{
    static const uint8_t ex[] = {ANY, V, V, V, ANY, ANY, V, V, V, V, ANY};
    pb_field f;
    int got;
    uint64_t id = 0, delta = 0, type = 0, size = 0, base = 0;
    int has_heap = 0;
    uint8_t heap = 0;
    size_t n_fields = 0, n_refs = 0;
    pb_reader scan = *pr, again = *pr;
    while ((got = NEXT_S(r, &scan, &f, ex, "HeapGraphObject")) > 0) {
        switch (f.number) {
        case 1: id = f.value; break;
        case 2: type = f.value; break;
        case 3: size = f.value; break;
        case 6: base = f.value; break;
        case 7: delta = f.value; break;
        case 9: heap = f.value <= HEAP_MAX ? (uint8_t)f.value : 0; has_heap = 1; break;
        case 4:
            if (each_varint(r, &scan, &f, count_value, &n_fields, "HeapGraphObject") != PC_OK)
                return r->err->status;
            break;
        case 5:
            if (each_varint(r, &scan, &f, count_value, &n_refs, "HeapGraphObject") != PC_OK)
                return r->err->status;
            break;
        }
    }
    if (got < 0)
        return r->err->status;
    id = delta ? b->last_id + delta : id;
    b->last_id = id;
    if (has_heap)
        b->last_heap = heap;
    heap = b->last_heap;
    /* Field names that do not pair with the references leave the object
     * out, as trace_processor does. */
    if (n_fields && n_fields != n_refs) {
        r->st.heap_graph_bad++;
        return PC_OK;
    }
    uint32_t o = object_of(b, id), t = type_of(b, type);
    if (o == PC_NONE || t == PC_NONE)
        return pf_nomem(r);
    b->obj.size[o] = size;
    b->obj.type[o] = t;
    b->obj.heap[o] = heap;
    b->obj.ref0[o] = (uint32_t)b->ref.n;
    /* The GC never collects the zygote's and the boot image's objects:
     * trace_processor makes them roots. */
    if ((heap == HEAP_ZYGOTE || heap == HEAP_BOOT_IMAGE) && add_root(b, id, ROOT_VM_INTERNAL) < 0)
        return pf_nomem(r);
    ref_ctx c = {b, base, b->ref.n};
    while ((got = pb_next(pr, &f)) > 0) {
        if (f.number == 5 && each_varint(r, pr, &f, add_ref, &c, "HeapGraphObject") != PC_OK)
            return r->err->status;
    }
    if (got < 0)
        return pf_wire_fail(r, pr, "HeapGraphObject");
    if (b->ref.n - b->obj.ref0[o] > UINT32_MAX)
        return pf_nomem(r);
    b->obj.nref[o] = (uint32_t)(b->ref.n - b->obj.ref0[o]);
    if (n_fields) {
        while ((got = pb_next(&again, &f)) > 0)
            if (f.number == 4 &&
                each_varint(r, &again, &f, add_field, &c, "HeapGraphObject") != PC_OK)
                return r->err->status;
    }
    return PC_OK;
}

static int add_type_field(pf_reader *r, void *ctx, uint64_t v)
{
    hg_build *b = ctx;
    if (push_u64(&b->tfield.v, &b->tfield.n, &b->tfield.cap, v) < 0)
        return pf_nomem(r);
    return PC_OK;
}

static int on_type(pf_reader *r, pb_reader *pr, hg_build *b)
{
    static const uint8_t ex[] = {ANY, V, V, L, V, V, ANY, V, V};
    pb_field f;
    int got;
    uint64_t id = 0, loc = 0, size = 0, super = 0, kind = 0;
    int has_loc = 0;
    const uint8_t *name = NULL;
    size_t name_len = 0;
    pb_reader scan = *pr;
    while ((got = NEXT_S(r, &scan, &f, ex, "HeapGraphType")) > 0) {
        switch (f.number) {
        case 1: id = f.value; break;
        case 2: loc = f.value; has_loc = 1; break;
        case 3: name = f.data; name_len = f.len; break;
        case 4: size = f.value; break;
        case 5: super = f.value; break;
        case 7: kind = f.value; break;
        }
    }
    if (got < 0)
        return r->err->status;
    uint32_t t = type_of(b, id);
    if (t == PC_NONE)
        return pf_nomem(r);
    uint32_t sid = pc_intern(r->p, name ? (const void *)name : "", name_len);
    if (sid == PC_NONE)
        return pf_nomem(r);
    b->type.name[t] = sid;
    b->type.size[t] = size;
    b->type.super[t] = super;
    b->type.loc[t] = loc;
    b->type.has_loc[t] = (uint8_t)has_loc;
    b->type.kind[t] = kind <= KIND_MAX ? (uint8_t)kind : 0;
    b->type.f0[t] = (uint32_t)(b->tfield.n > UINT32_MAX ? UINT32_MAX : b->tfield.n);
    size_t before = b->tfield.n;
    while ((got = pb_next(pr, &f)) > 0)
        if (f.number == 6 && each_varint(r, pr, &f, add_type_field, b, "HeapGraphType") != PC_OK)
            return r->err->status;
    if (got < 0)
        return pf_wire_fail(r, pr, "HeapGraphType");
    if (b->tfield.n > UINT32_MAX)
        return pf_nomem(r);
    b->type.nf[t] = (uint32_t)(b->tfield.n - before);
    return PC_OK;
}

/* InternedString: a field name ("type name", or the name alone) or a
 * location. */
static int on_string(pf_reader *r, pb_reader *pr, hg_build *b, int location)
{
    static const uint8_t ex[] = {ANY, V, L};
    pb_field f;
    int got;
    uint64_t iid = 0;
    const uint8_t *s = NULL;
    size_t n = 0;
    while ((got = NEXT_S(r, pr, &f, ex, "InternedString")) > 0) {
        if (f.number == 1)
            iid = f.value;
        else if (f.number == 2) {
            s = f.data;
            n = f.len;
        }
    }
    if (got < 0)
        return r->err->status;
    if (!location) {
        static const char referent[] = "java.lang.ref.Reference.referent";
        const uint8_t *sp = s ? memchr(s, ' ', n) : NULL;
        if (sp) {
            n -= (size_t)(sp + 1 - s);
            s = sp + 1;
        }
        if (n == sizeof referent - 1 && memcmp(s, referent, n) == 0 &&
            push_u64(&b->referent.v, &b->referent.n, &b->referent.cap, iid) < 0)
            return pf_nomem(r);
        return PC_OK;
    }
    uint32_t sid = pc_intern(r->p, s ? (const void *)s : "", n);
    pc_probe pp;
    if (sid == PC_NONE || pc_htab_reserve(&b->loc.idx, b->loc.n + 1) < 0)
        return pf_nomem(r);
    pc_probe_start(&b->loc.idx, iid, &pp);
    for (uint32_t i; (i = pc_probe_next(&b->loc.idx, &pp)) != PC_NONE;)
        if (b->loc.iid[i] == iid) {
            b->loc.name[i] = sid;
            return PC_OK;
        }
    struct pc_col cols[] = {PC_COL(b->loc.iid), PC_COL(b->loc.name)};
    if (b->loc.n >= MAX_OBJECTS || pc_grow_cols(&b->loc.cap, b->loc.n + 1, cols, 2) < 0)
        return pf_nomem(r);
    b->loc.iid[b->loc.n] = iid;
    b->loc.name[b->loc.n] = sid;
    pc_htab_insert(&b->loc.idx, &pp, (uint32_t)b->loc.n++);
    return PC_OK;
}

typedef struct root_ctx {
    hg_build *b;
    uint8_t kind;
} root_ctx;

static int add_root_id(pf_reader *r, void *ctx, uint64_t v)
{
    root_ctx *c = ctx;
    return add_root(c->b, v, c->kind) < 0 ? pf_nomem(r) : PC_OK;
}

static int on_root(pf_reader *r, pb_reader *pr, hg_build *b)
{
    static const uint8_t ex[] = {ANY, ANY, V};
    pb_field f;
    int got;
    root_ctx c = {b, ROOT_UNKNOWN};
    pb_reader scan = *pr;
    while ((got = NEXT_S(r, &scan, &f, ex, "HeapGraphRoot")) > 0)
        if (f.number == 2)
            c.kind = f.value <= ROOT_MAX ? (uint8_t)f.value : ROOT_UNKNOWN;
    if (got < 0)
        return r->err->status;
    while ((got = pb_next(pr, &f)) > 0)
        if (f.number == 1 && each_varint(r, pr, &f, add_root_id, &c, "HeapGraphRoot") != PC_OK)
            return r->err->status;
    return got < 0 ? pf_wire_fail(r, pr, "HeapGraphRoot") : PC_OK;
}

static pf_hgraph *graphs(pf_reader *r)
{
    if (!r->hg)
        r->hg = calloc(1, sizeof *r->hg);
    return r->hg;
}

/* The slot of sequence seq, added when new; PC_NONE when out of memory. */
static uint32_t slot_of_seq(pf_hgraph *g, uint32_t seq)
{
    pc_probe pr;
    if (pc_htab_reserve(&g->open_idx, g->n_open + 1) < 0)
        return PC_NONE;
    pc_probe_start(&g->open_idx, seq, &pr);
    for (uint32_t i; (i = pc_probe_next(&g->open_idx, &pr)) != PC_NONE;)
        if (g->open_seq[i] == seq)
            return i;
    struct pc_col cols[] = {PC_COL(g->open), PC_COL(g->open_seq)};
    if (g->n_open >= MAX_OBJECTS || pc_grow_cols(&g->cap_open, g->n_open + 1, cols, 2) < 0)
        return PC_NONE;
    uint32_t i = (uint32_t)g->n_open++;
    g->open[i] = NULL;
    g->open_seq[i] = seq;
    pc_htab_insert(&g->open_idx, &pr, i);
    return i;
}

static int finish(pf_reader *r, size_t which);

/* The slots of the ids a packet's objects declare and refer to, asked
 * for before the objects are read: they are all over a table of hundreds
 * of megabytes, and a few thousand misses at once cost about what one
 * does.  The table grows first if the packet could fill it.  Nothing is
 * checked here; on_object reads the objects properly. */
static int prefetch_objects(hg_build *b, const pb_reader *packet)
{
    pb_reader pr = *packet;
    pb_field f;
    size_t ids = 0;
    while (pb_next(&pr, &f) > 0)
        if (f.number == 2 && f.wiretype == L)
            ids += 1 + f.len / 2;   /* a reference takes two bytes or more */
    /* A damaged packet may claim anything: grow for real packets only. */
    if (ids > (1u << 20))
        ids = 1u << 20;
    while ((b->obj.n + ids) * 4 > b->slot_cap * 3)
        if (slots_grow(b) < 0)
            return -1;
    uint64_t last = b->last_id;
    pr = *packet;
    while (pb_next(&pr, &f) > 0) {
        if (f.number != 2 || f.wiretype != L)
            continue;
        pb_reader o, refs;
        pb_field g;
        pb_reader_sub(&pr, &f, &o);
        uint64_t id = 0, delta = 0, base = 0;
        int has_refs = 0;
        while (pb_next(&o, &g) > 0) {
            if (g.number == 1 && g.wiretype == V)
                id = g.value;
            else if (g.number == 7 && g.wiretype == V)
                delta = g.value;
            else if (g.number == 6 && g.wiretype == V)
                base = g.value;
            else if (g.number == 5 && g.wiretype == L) {
                pb_reader_sub(&o, &g, &refs);
                has_refs = 1;
            }
        }
        last = delta ? last + delta : id;
        __builtin_prefetch(&b->slot[slot_of(b, last)]);
        uint64_t v;
        while (has_refs && pb_packed_varint(&refs, &v) > 0)
            if (v)
                __builtin_prefetch(&b->slot[slot_of(b, v + base)]);
    }
    return 0;
}

int pf_on_heap_graph(pf_reader *r, pb_reader *pr, pf_seq *s, const pf_packet *pk)
{
    static const uint8_t ex[] = {ANY, V, L, ANY, L, V, V, L, L, L, V};
    pb_field f;
    int got;
    int64_t pid = 0;
    uint64_t index = 0;
    int continued = 0;
    r->st.heap_graphs++;
    pf_hgraph *g = graphs(r);
    if (!g)
        return pf_nomem(r);
    pb_reader scan = *pr;
    while ((got = NEXT_S(r, &scan, &f, ex, "HeapGraph")) > 0) {
        switch (f.number) {
        case 1: pid = (int32_t)f.value; break;
        case 5: continued = f.value != 0; break;
        case 6: index = f.value; break;
        }
    }
    if (got < 0)
        return r->err->status;
    /* Packets without a time belong to the dump they continue
     * (trace_processor gives them the time of the packet before). */
    uint64_t ts = 0;
    int has_ts = pk->has_ts && pf_packet_time(r, s, pk, &ts) == 0;
    uint32_t k = slot_of_seq(g, s->id);
    if (k == PC_NONE)
        return pf_nomem(r);
    if (!g->open[k]) {
        if (!(g->open[k] = calloc(1, sizeof *g->open[k])))
            return pf_nomem(r);
        g->open[k]->seq = s->id;
    }
    hg_build *b = g->open[k];
    /* perfetto_hprof numbers a dump's packets from 0. */
    if (b->started ? index != b->next_index : index != 0)
        b->bad_index = 1;
    b->next_index = index + 1;
    if (!b->started) {
        b->pid = pid;
        b->ts = ts;
        b->has_ts = has_ts;
        b->started = 1;
    } else if (has_ts && !b->has_ts) {
        b->ts = ts;
        b->has_ts = 1;
    }
    if (b->pid != pid || (has_ts && b->ts != ts)) {
        /* Packets of another process or time inside a dump: trace_processor
         * leaves them out, and so do we. */
        r->st.heap_graph_bad++;
        return continued ? PC_OK : finish(r, k);
    }
    if (prefetch_objects(b, pr) < 0)
        return pf_nomem(r);
    while ((got = pb_next(pr, &f)) > 0) {
        pb_reader sub;
        if (f.wiretype != L)
            continue;
        pb_reader_sub(pr, &f, &sub);
        int st = PC_OK;
        switch (f.number) {
        case 2: st = on_object(r, &sub, b); break;
        case 4: st = on_string(r, &sub, b, 0); break;
        case 7: st = on_root(r, &sub, b); break;
        case 8: st = on_string(r, &sub, b, 1); break;
        case 9: st = on_type(r, &sub, b); break;
        }
        if (st != PC_OK)
            return st;
    }
    if (got < 0)
        return pf_wire_fail(r, pr, "HeapGraph");
    return continued ? PC_OK : finish(r, k);
}

/* ---- The tree ---- */

static uint8_t root_rank(uint8_t kind)
{
    switch (kind) {
    case ROOT_STICKY_CLASS: return 0;
    case ROOT_JNI_GLOBAL: return 1;
    case ROOT_JNI_LOCAL: return 2;
    }
    return 3;
}

/* v sorted. */
static int in_set(const uint64_t *v, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] == x)
            return 1;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Weak, finalizer and phantom references do not keep their referent
 * alive: trace_processor leaves their java.lang.ref.Reference.referent
 * out of the paths.  The field is found by position: an object's
 * references follow its class's fields, then its superclass's. */
static void drop_referents(hg_build *b)
{
    if (!b->referent.n)
        return;
    qsort(b->referent.v, b->referent.n, sizeof *b->referent.v, cmp_u64);
    size_t nt = b->type.n;
    uint32_t *pos = malloc((nt + 1) * sizeof *pos);
    int any = 0;
    for (size_t t = 0; pos && t < nt; t++) {
        pos[t] = PC_NONE;
        uint8_t k = b->type.kind[t];
        if (k != KIND_WEAK && k != KIND_FINALIZER && k != KIND_PHANTOM)
            continue;
        uint64_t off = 0;
        uint32_t c = (uint32_t)t;
        /* Class hierarchies are shallow (the referent is a few classes
         * up); a bound keeps a looping or endless chain cheap. */
        for (size_t hops = 0; c != PC_NONE && hops < 64 && pos[t] == PC_NONE; hops++) {
            for (uint32_t j = 0; j < b->type.nf[c]; j++)
                if (in_set(b->referent.v, b->referent.n, b->tfield.v[b->type.f0[c] + j])) {
                    pos[t] = (uint32_t)(off + j > UINT32_MAX ? UINT32_MAX : off + j);
                    break;
                }
            off += b->type.nf[c];
            c = b->type.super[c] ? find_type(b, b->type.super[c]) : PC_NONE;
        }
        any |= pos[t] != PC_NONE || b->ref.field != NULL;
    }
    for (size_t o = 0; pos && any && o < b->obj.n; o++) {
        uint32_t t = b->obj.type[o];
        if (t == PC_NONE)
            continue;
        uint8_t k = b->type.kind[t];
        if (k != KIND_WEAK && k != KIND_FINALIZER && k != KIND_PHANTOM)
            continue;
        uint32_t r0 = b->obj.ref0[o], n = b->obj.nref[o];
        int own = 0;
        for (uint32_t j = 0; b->ref.field && j < n; j++)
            if (b->ref.field[r0 + j]) {
                own = 1;
                if (in_set(b->referent.v, b->referent.n, b->ref.field[r0 + j]))
                    b->ref.target[r0 + j] = PC_NONE;
            }
        if (!own && pos[t] < n)
            b->ref.target[r0 + pos[t]] = PC_NONE;
    }
    free(pos);
}

static void sort_u32(uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Once the references are final: each object's non-null ones moved
 * together in object order, ref0 becoming their start (with one more
 * entry, the end), so that a search finds an object's references at one
 * place, and nref is let go. */
static int compact_references(hg_build *b)
{
    size_t n = b->obj.n, e = 0;
    uint32_t *start = malloc((n + 1) * sizeof *start);
    if (!start)
        return -1;
    for (size_t o = 0; o < n; o++) {
        start[o] = (uint32_t)e;
        for (uint32_t j = 0; j < b->obj.nref[o]; j++)
            e += b->ref.target[b->obj.ref0[o] + j] != PC_NONE;
    }
    start[n] = (uint32_t)e;
    uint32_t *adj = malloc((e + 1) * sizeof *adj);
    if (!adj) {
        free(start);
        return -1;
    }
    for (size_t o = 0, k = 0; o < n; o++)
        for (uint32_t j = 0; j < b->obj.nref[o]; j++) {
            uint32_t w = b->ref.target[b->obj.ref0[o] + j];
            if (w != PC_NONE)
                adj[k++] = w;
        }
    free(b->ref.target);
    free(b->ref.field);
    free(b->obj.ref0);
    free(b->obj.nref);
    b->ref.target = adj;
    b->ref.field = NULL;
    b->ref.n = b->ref.cap = e;
    b->obj.ref0 = start;
    b->obj.nref = NULL;
    return 0;
}

/* After compact_references: object v's references. */
#define REF_FIRST(b, v) ((b)->obj.ref0[v])
#define REF_END(b, v) ((b)->obj.ref0[(v) + 1])

/* trace_processor's search takes each object's references in the order
 * of the objects they point to (their order of first appearance), which
 * decides which of two equally short paths an object is reached by. */
static void sort_references(hg_build *b)
{
    for (size_t o = 0; o < b->obj.n; o++) {
        size_t n = REF_END(b, o) - REF_FIRST(b, o);
        if (!n)
            continue;
        uint32_t *v = b->ref.target + REF_FIRST(b, o);
        if (n <= 16)
            sort_u32(v, n);
        else
            qsort(v, n, sizeof *v, cmp_u32);
    }
}

typedef struct name_ctx {
    const pc_profile *p;
    const uint32_t *tname;
} name_ctx;

static const char *name_str(const name_ctx *c, uint32_t type)
{
    uint32_t s = c->tname[type];
    return s == PC_NONE ? "" : pc_str(&c->p->str, s);
}

static int cmp_type_name(const void *a, const void *b, const void *ctx)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int c = strcmp(name_str(ctx, x), name_str(ctx, y));
    return c ? c : (x > y) - (x < y);
}

/* The node (parent, type) or top (kind, type), added when new. */
static uint32_t node_of(hg_tree *t, uint32_t parent, uint32_t type, uint8_t top)
{
    pc_probe pr;
    if (pc_htab_reserve(&t->node.idx, t->node.n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&t->node.idx, ((uint64_t)parent << 32 | type) ^ (uint64_t)top << 59, &pr);
    for (uint32_t i; (i = pc_probe_next(&t->node.idx, &pr)) != PC_NONE;)
        if (t->node.parent[i] == parent && t->node.type[i] == type && t->node.top[i] == top)
            return i;
    struct pc_col cols[] = {PC_COL(t->node.parent), PC_COL(t->node.type), PC_COL(t->node.top),
                            PC_COL(t->node.size), PC_COL(t->node.count)};
    if (t->node.n >= MAX_OBJECTS || pc_grow_cols(&t->node.cap, t->node.n + 1, cols, 5) < 0)
        return PC_NONE;
    uint32_t i = (uint32_t)t->node.n++;
    t->node.parent[i] = parent;
    t->node.type[i] = type;
    t->node.top[i] = top;
    t->node.size[i] = t->node.count[i] = 0;
    pc_htab_insert(&t->node.idx, &pr, i);
    return i;
}

/* An object's node under its parent in the tree (PC_NONE: a top), whose
 * node is parent_node: objects of the parent's class stay in its node,
 * as trace_processor merges them, so that a chain of one class is one
 * node. */
static uint32_t place(hg_tree *t, const hg_build *b, uint32_t o, uint32_t parent,
                      uint32_t parent_node, uint8_t top)
{
    uint32_t ty = b->obj.type[o] == PC_NONE ? (uint32_t)b->type.n : b->obj.type[o];
    uint32_t n;
    if (parent == PC_NONE)
        n = node_of(t, PC_NONE, ty, top);
    else if (b->obj.type[parent] == b->obj.type[o])
        n = parent_node;
    else
        n = node_of(t, parent_node, ty, NO_ROOT);
    if (n != PC_NONE) {
        t->node.size[n] += b->obj.size[o];
        t->node.count[n]++;
    }
    return n;
}

/* Shortest paths: a breadth-first search from every root at once, the
 * roots taken by class name then order of appearance, as trace_processor
 * does.  mark[] holds an object's parent until the object is placed,
 * then its node. */
static int shortest_paths(hg_tree *t, const hg_build *b, const uint32_t *seeds, size_t ns,
                          uint32_t *mark)
{
    size_t n = b->obj.n, qh = 0, qt = 0;
    uint32_t *queue = malloc((n + 1) * sizeof *queue);
    if (!queue)
        return -1;
    for (size_t i = 0; i < ns; i++)
        if (mark[seeds[i]] == UNSEEN) {
            mark[seeds[i]] = TOP;
            queue[qt++] = seeds[i];
        }
    while (qh < qt) {
        uint32_t v = queue[qh++];
        for (uint32_t j = REF_FIRST(b, v); j < REF_END(b, v); j++) {
            uint32_t w = b->ref.target[j];
            if (mark[w] == UNSEEN) {
                mark[w] = v;
                queue[qt++] = w;
            }
        }
    }
    int st = 0;
    for (size_t i = 0; i < qt && st == 0; i++) {
        uint32_t o = queue[i], parent = mark[o] == TOP ? PC_NONE : mark[o];
        uint32_t node = place(t, b, o, parent, parent == PC_NONE ? PC_NONE : mark[parent],
                              b->obj.root[o]);
        if (node == PC_NONE)
            st = -1;
        mark[o] = node;
    }
    free(queue);
    return st;
}

/* Lengauer and Tarjan's dominators, the version with path compression
 * (O(E log N)), on the objects a depth-first search from a virtual root
 * over every GC root reaches; everything is numbered in that search's
 * preorder, the virtual root 0.  Iterative throughout: a heap's paths run
 * millions of objects deep.  mark[] receives each object's preorder
 * number (UNSEEN: unreachable). */
typedef struct dom {
    uint32_t *vertex, *parent, *semi, *idom, *ancestor, *label, *bhead, *bnext, *path;
    uint32_t *pstart, *pred;
    size_t n;
} dom;

static void dom_free(dom *d)
{
    free(d->vertex);
    free(d->parent);
    free(d->semi);
    free(d->idom);
    free(d->ancestor);
    free(d->label);
    free(d->bhead);
    free(d->bnext);
    free(d->path);
    free(d->pstart);
    free(d->pred);
}

/* What the forest's search touches of a vertex, together: its ancestor,
 * the vertex of least semidominator on its path, and that semidominator,
 * so that a step of the search reads one place rather than three. */
typedef struct dom_node {
    uint32_t anc, label, lsemi;
} dom_node;

/* The vertex of least semidominator on v's path in the forest, with
 * path compression; *semi receives its semidominator. */
static uint32_t dom_eval(dom_node *t, uint32_t *path, uint32_t v, uint32_t *semi)
{
    if (t[v].anc == PC_NONE) {
        *semi = t[v].lsemi;
        return v;
    }
    size_t np = 0;
    for (uint32_t x = v; t[t[x].anc].anc != PC_NONE; x = t[x].anc)
        path[np++] = x;
    while (np) {
        uint32_t x = path[--np], a = t[x].anc;
        if (t[a].lsemi < t[x].lsemi) {
            t[x].label = t[a].label;
            t[x].lsemi = t[a].lsemi;
        }
        t[x].anc = t[a].anc;
    }
    *semi = t[v].lsemi;
    return t[v].label;
}

static int dominators(dom *d, const hg_build *b, const uint32_t *seeds, size_t ns,
                      uint32_t *mark)
{
    size_t n = b->obj.n + 1, cap = 0;
    d->vertex = malloc(n * sizeof *d->vertex);
    d->parent = malloc(n * sizeof *d->parent);
    d->ancestor = malloc(n * sizeof *d->ancestor);   /* the search's stack first */
    d->label = malloc(n * sizeof *d->label);         /* and its cursors */
    /* Every edge the search meets, as preorder numbers at both ends: the
     * predecessor lists are built from them without a second walk over
     * the objects, whose references are all over memory. */
    uint32_t *efrom = NULL, *eto = NULL;
    struct pc_col ecols[] = {PC_COL(efrom), PC_COL(eto)};
    if (!d->vertex || !d->parent || !d->ancestor || !d->label)
        return -1;
    uint32_t *stack = d->ancestor, *cursor = d->label;
    size_t r = 1, sp = 1, ne = 0;
    d->vertex[0] = PC_NONE;
    d->parent[0] = PC_NONE;
    stack[0] = 0;
    cursor[0] = 0;
    while (sp) {
        uint32_t i = stack[sp - 1], w;
        if (i == 0) {
            if (cursor[sp - 1] >= ns) {
                sp--;
                continue;
            }
            w = seeds[cursor[sp - 1]++];
        } else {
            uint32_t v = d->vertex[i];
            if (cursor[sp - 1] >= REF_END(b, v) - REF_FIRST(b, v)) {
                sp--;
                continue;
            }
            w = b->ref.target[REF_FIRST(b, v) + cursor[sp - 1]++];
        }
        if (w == PC_NONE)
            continue;
        if (ne >= UINT32_MAX || pc_grow_cols(&cap, ne + 1, ecols, 2) < 0) {
            free(efrom);
            free(eto);
            return -1;
        }
        efrom[ne] = i;
        if (mark[w] != UNSEEN) {
            eto[ne++] = mark[w];
            continue;
        }
        eto[ne++] = (uint32_t)r;
        mark[w] = (uint32_t)r;
        d->vertex[r] = w;
        d->parent[r] = i;
        stack[sp] = (uint32_t)r;
        cursor[sp++] = 0;
        r++;
    }
    d->n = r;
    /* Predecessors, by preorder number. */
    d->pstart = calloc(r + 2, sizeof *d->pstart);
    d->pred = malloc((ne + 1) * sizeof *d->pred);
    if (!d->pstart || !d->pred) {
        free(efrom);
        free(eto);
        return -1;
    }
    for (size_t k = 0; k < ne; k++)
        d->pstart[eto[k] + 1]++;
    for (size_t i = 1; i <= r; i++)
        d->pstart[i] += d->pstart[i - 1];
    for (size_t k = 0; k < ne; k++)
        d->pred[d->pstart[eto[k]]++] = efrom[k];
    free(efrom);
    free(eto);
    for (size_t i = r; i > 0; i--)
        d->pstart[i] = d->pstart[i - 1];
    d->pstart[0] = 0;

    /* The search's stack and cursors are done with. */
    free(d->ancestor);
    free(d->label);
    d->ancestor = d->label = NULL;
    d->semi = malloc(r * sizeof *d->semi);
    d->idom = malloc(r * sizeof *d->idom);
    d->bhead = malloc(r * sizeof *d->bhead);
    d->bnext = malloc(r * sizeof *d->bnext);
    d->path = malloc(r * sizeof *d->path);
    dom_node *t = malloc(r * sizeof *t);
    if (!d->semi || !d->idom || !d->bhead || !d->bnext || !d->path || !t) {
        free(t);
        return -1;
    }
    for (uint32_t i = 0; i < r; i++) {
        d->semi[i] = i;
        t[i] = (dom_node){PC_NONE, i, i};
        d->bhead[i] = d->idom[i] = PC_NONE;
    }
    for (size_t w = r - 1; w >= 1; w--) {
        uint32_t sw = d->semi[w], su;
        /* The next vertex's predecessors are all over t: ask for them
         * while this one is worked on. */
        for (uint32_t k = d->pstart[w - 1]; k < d->pstart[w]; k++)
            __builtin_prefetch(&t[d->pred[k]]);
        for (uint32_t k = d->pstart[w]; k < d->pstart[w + 1]; k++) {
            dom_eval(t, d->path, d->pred[k], &su);
            if (su < sw)
                sw = su;
        }
        d->semi[w] = sw;
        t[w].lsemi = sw;
        d->bnext[w] = d->bhead[sw];
        d->bhead[sw] = (uint32_t)w;
        uint32_t pw = d->parent[w];
        t[w].anc = pw;
        for (uint32_t v = d->bhead[pw]; v != PC_NONE; v = d->bnext[v]) {
            uint32_t u = dom_eval(t, d->path, v, &su);
            d->idom[v] = su < d->semi[v] ? u : pw;
        }
        d->bhead[pw] = PC_NONE;
    }
    free(t);
    for (size_t w = 1; w < r; w++)
        if (d->idom[w] != d->semi[w])
            d->idom[w] = d->idom[d->idom[w]];
    return 0;
}

static int retained_paths(hg_tree *t, const hg_build *b, const uint32_t *seeds, size_t ns,
                          uint32_t *mark)
{
    dom d;
    memset(&d, 0, sizeof d);
    int st = dominators(&d, b, seeds, ns, mark);
    /* An object's node, by preorder number: the idom is numbered before
     * the objects it dominates. */
    uint32_t *node = d.semi;
    for (size_t i = 1; st == 0 && i < d.n; i++) {
        uint32_t o = d.vertex[i], id = d.idom[i];
        uint32_t parent = id == 0 ? PC_NONE : d.vertex[id];
        uint8_t top = b->obj.root[o] != NO_ROOT ? b->obj.root[o] : TOP_SEVERAL;
        node[i] = place(t, b, o, parent, id == 0 ? PC_NONE : node[id], top);
        if (node[i] == PC_NONE)
            st = -1;
    }
    dom_free(&d);
    return st;
}

static uint32_t location_of(const hg_build *b, uint32_t type)
{
    pc_probe pr;
    if (!b->type.has_loc[type] || !b->loc.n)
        return PC_NONE;
    pc_probe_start(&b->loc.idx, b->type.loc[type], &pr);
    for (uint32_t i; (i = pc_probe_next(&b->loc.idx, &pr)) != PC_NONE;)
        if (b->loc.iid[i] == b->type.loc[type])
            return b->loc.name[i];
    return PC_NONE;
}

static int analyse(pf_reader *r, hg_build *b, hg_tree *t)
{
    const pc_profile *p = r->p;
    size_t n = b->obj.n, nt = b->type.n;
    int st = 0;
    for (size_t i = 0; i < b->root.n; i++) {
        uint32_t o = find_object(b, b->root.id[i]);
        if (o == PC_NONE)
            continue;
        if (b->obj.root[o] == NO_ROOT || root_rank(b->root.kind[i]) < root_rank(b->obj.root[o]))
            b->obj.root[o] = b->root.kind[i];
    }
    free(b->slot);
    b->slot = NULL;
    b->slot_cap = 0;
    /* Objects that state no size have their class's. */
    for (size_t o = 0; o < n; o++)
        if (!b->obj.size[o] && b->obj.type[o] != PC_NONE)
            b->obj.size[o] = b->type.size[b->obj.type[o]];
    drop_referents(b);
    if (compact_references(b) < 0)
        return -1;
    /* The dominators do not depend on the order of the references. */
    if (!r->o->heap_graph)
        sort_references(b);

    t->n_types = nt + 1;
    t->tname = malloc(t->n_types * sizeof *t->tname);
    t->tloc = malloc(t->n_types * sizeof *t->tloc);
    uint32_t *by_name = malloc(t->n_types * sizeof *by_name);
    uint32_t *first = calloc(t->n_types + 1, sizeof *first);
    uint32_t *mark = malloc((n + 1) * sizeof *mark);
    uint32_t *seeds = NULL;
    size_t ns = 0;
    if (!t->tname || !t->tloc || !by_name || !first || !mark) {
        st = -1;
        goto done;
    }
    for (size_t i = 0; i < nt; i++) {
        t->tname[i] = b->type.name[i];
        t->tloc[i] = location_of(b, (uint32_t)i);
    }
    t->tname[nt] = t->tloc[nt] = PC_NONE;
    /* Roots by class name, then order of appearance: a counting sort
     * over the ranks of the types' names. */
    {
        name_ctx c = {p, t->tname};
        uint32_t *order = malloc(t->n_types * sizeof *order);
        if (!order) {
            st = -1;
            goto done;
        }
        for (size_t i = 0; i < t->n_types; i++)
            order[i] = (uint32_t)i;
        pc_sort_ctx(order, t->n_types, sizeof *order, cmp_type_name, &c);
        uint32_t rank = 0;
        for (size_t i = 0; i < t->n_types; i++) {
            if (i && strcmp(name_str(&c, order[i - 1]), name_str(&c, order[i])) != 0)
                rank++;
            by_name[order[i]] = rank;
        }
        free(order);
    }
    for (size_t i = 0; i < n; i++)
        mark[i] = UNSEEN;
    for (size_t o = 0; o < n; o++)
        if (b->obj.root[o] != NO_ROOT) {
            uint32_t ty = b->obj.type[o] == PC_NONE ? (uint32_t)nt : b->obj.type[o];
            first[by_name[ty] + 1]++;
            ns++;
        }
    for (size_t i = 1; i <= t->n_types; i++)
        first[i] += first[i - 1];
    seeds = malloc((ns + 1) * sizeof *seeds);
    if (!seeds) {
        st = -1;
        goto done;
    }
    for (size_t o = 0; o < n; o++)
        if (b->obj.root[o] != NO_ROOT) {
            uint32_t ty = b->obj.type[o] == PC_NONE ? (uint32_t)nt : b->obj.type[o];
            seeds[first[by_name[ty]]++] = (uint32_t)o;
        }
    st = r->o->heap_graph ? retained_paths(t, b, seeds, ns, mark)
                          : shortest_paths(t, b, seeds, ns, mark);
    /* What no root reaches, by class: trace_processor leaves it out of
     * its flame graph; it is shown apart here, so that the dump's total
     * is the heap's. */
    for (size_t o = 0; st == 0 && o < n; o++)
        if (mark[o] == UNSEEN && b->obj.type[o] != PC_NONE &&
            place(t, b, (uint32_t)o, PC_NONE, PC_NONE, TOP_UNREACHABLE) == PC_NONE)
            st = -1;
done:
    free(by_name);
    free(first);
    free(mark);
    free(seeds);
    return st;
}

/* The dump open at g->open[which] is whole: its tree is made and the
 * objects let go. */
static int finish(pf_reader *r, size_t which)
{
    pf_hgraph *g = r->hg;
    hg_build *b = g->open[which];
    g->open[which] = NULL;
    if (b->bad_index)
        r->st.heap_graph_gaps++;
    int st = PC_OK;
    if (pc_grow(&g->tree, &g->cap_tree, g->n_tree + 1, sizeof *g->tree, 4) < 0) {
        st = pf_nomem(r);
    } else {
        hg_tree *t = &g->tree[g->n_tree++];
        memset(t, 0, sizeof *t);
        t->pid = b->pid;
        t->ts = b->ts;
        if (analyse(r, b, t) < 0)
            st = pf_nomem(r);
    }
    build_free(b);
    return st;
}

/* ---- Names and rows ---- */

typedef struct emit {
    pc_deobf files;          /* --proguard-mapping-file */
    pc_deobf_result res;
    char *buf;
    size_t cap;
    uint32_t res_java;
    uint32_t top_frame[N_TOPS];
    struct {
        uint32_t *name, *frame;
        size_t n, cap;
        pc_htab idx;
    } cls;
} emit;

/* The mapping's package of a class, from its app's install path. */
static uint32_t package_of_path(const pc_deobf *d, const char *s)
{
    size_t n;
    const char *a = pc_app_package(s, &n);
    return a ? pc_deobf_package(d, a, n) : PC_NONE;
}

/* Class name base[0..n) looked up in d; 1 with the name in e->res. */
static int lookup_class(emit *e, const pc_deobf *d, uint32_t pkg, const char *base, size_t n)
{
    /* The engine looks up "Class.method": a method no mapping can name
     * leaves the class's original name with it, which is cut off. */
    static const char probe[] = ".<class>";
    if (pc_grow(&e->buf, &e->cap, n + sizeof probe, 1, 64) < 0)
        return -1;
    memcpy(e->buf, base, n);
    memcpy(e->buf + n, probe, sizeof probe);
    int got = pc_deobf_lookup(d, pkg, e->buf, n + sizeof probe - 1, 0, &e->res);
    if (got <= 0)
        return got;
    size_t len;
    const char *s = pc_deobf_name(&e->res, 0, &len);
    return len > sizeof probe - 1 && memcmp(s + len - (sizeof probe - 1), probe,
                                            sizeof probe - 1) == 0;
}

/* A class name deobfuscated, with its array brackets and a
 * java.lang.Class<...> around it kept as they are. */
static uint32_t class_name(pf_reader *r, emit *e, uint32_t name, uint32_t loc, int64_t pid)
{
    pc_profile *p = r->p;
    if (name == PC_NONE)
        return pc_intern_cstr(p, "[unknown class]");
    if (!r->deobf.cls.n && !e->files.cls.n)
        return name;
    static const char wrap[] = "java.lang.Class<";
    const char *s = pc_str(&p->str, name);
    size_t n = pc_str_len(&p->str, name), pre = 0, post = 0;
    if (n > sizeof wrap && memcmp(s, wrap, sizeof wrap - 1) == 0 && s[n - 1] == '>') {
        pre = sizeof wrap - 1;
        post = 1;
    }
    size_t end = n - post;
    while (end - pre >= 2 && s[end - 2] == '[' && s[end - 1] == ']')
        end -= 2;
    if (end == pre)
        return name;
    int got = 0;
    if (r->deobf.cls.n) {
        uint32_t pkg = loc == PC_NONE ? PC_NONE : package_of_path(&r->deobf, pc_str(&p->str, loc));
        if (pkg == PC_NONE) {
            uint32_t proc = pc_process_name(p, pid);
            if (proc != PC_NONE)
                pkg = pc_deobf_package(&r->deobf, pc_str(&p->str, proc),
                                       strcspn(pc_str(&p->str, proc), ":"));
        }
        got = lookup_class(e, &r->deobf, pkg, s + pre, end - pre);
    }
    if (got == 0 && e->files.cls.n)
        got = lookup_class(e, &e->files, PC_NONE, s + pre, end - pre);
    if (got < 0)
        return PC_NONE;
    if (!got)
        return name;
    size_t len;
    const char *orig = pc_deobf_name(&e->res, 0, &len);
    len -= sizeof ".<class>" - 1;
    /* s is in the string table, which interning may move: copied first. */
    size_t total = pre + len + (n - end);
    if (pc_grow(&e->buf, &e->cap, total + 1, 1, 64) < 0)
        return PC_NONE;
    memmove(e->buf + pre, orig, len);
    memcpy(e->buf, s, pre);
    memcpy(e->buf + pre + len, s + end, n - end);
    return pc_intern(p, e->buf, total);
}

static uint32_t class_frame(pc_profile *p, emit *e, uint32_t name)
{
    pc_probe pr;
    if (pc_htab_reserve(&e->cls.idx, e->cls.n + 1) < 0)
        return PC_NONE;
    pc_probe_start(&e->cls.idx, name, &pr);
    for (uint32_t i; (i = pc_probe_next(&e->cls.idx, &pr)) != PC_NONE;)
        if (e->cls.name[i] == name)
            return e->cls.frame[i];
    struct pc_col cols[] = {PC_COL(e->cls.name), PC_COL(e->cls.frame)};
    if (pc_grow_cols(&e->cls.cap, e->cls.n + 1, cols, 2) < 0)
        return PC_NONE;
    /* DEX, the category of Java code; the frames are no code, so nothing
     * later takes them for methods to deobfuscate or symbolize. */
    uint32_t f = pc_add_frame(p, pc_func(p, name, e->res_java), 0, PC_CAT_DEX, PC_EXEC_NATIVE);
    if (f == PC_NONE)
        return PC_NONE;
    e->cls.name[e->cls.n] = name;
    e->cls.frame[e->cls.n] = f;
    pc_htab_insert(&e->cls.idx, &pr, (uint32_t)e->cls.n++);
    return f;
}

static uint32_t top_frame(pc_profile *p, emit *e, uint8_t top)
{
    if (e->top_frame[top] == PC_NONE)
        e->top_frame[top] = pc_add_frame(p, pc_func(p, pc_intern_cstr(p, top_names[top]),
                                                    e->res_java),
                                         0, PC_CAT_OTHER, PC_EXEC_NATIVE);
    return e->top_frame[top];
}

static int emit_tree(pf_reader *r, emit *e, const hg_tree *t)
{
    pc_profile *p = r->p;
    size_t nn = t->node.n;
    uint32_t *name = malloc((t->n_types + 1) * sizeof *name);
    uint32_t *stack = malloc((nn + 1) * sizeof *stack);
    uint32_t *row = NULL;
    uint64_t *size = NULL, *count = NULL;
    uint32_t *rstack = NULL;
    int st = -1;
    if (!name || !stack)
        goto done;
    for (size_t i = 0; i < t->n_types; i++)
        if ((name[i] = class_name(r, e, t->tname[i], t->tloc[i], t->pid)) == PC_NONE)
            goto done;
    /* Nodes whose class names turn out equal merge: a child named as its
     * parent joins it, siblings share their stack. */
    for (size_t i = 0; i < nn; i++) {
        uint32_t ty = t->node.type[i], parent = t->node.parent[i];
        uint32_t nm = name[ty];
        if (parent == PC_NONE) {
            uint32_t base = pc_stack(p, PC_NONE, top_frame(p, e, t->node.top[i]));
            stack[i] = pc_stack(p, base, class_frame(p, e, nm));
        } else if (name[t->node.type[parent]] == nm) {
            stack[i] = stack[parent];
        } else {
            stack[i] = pc_stack(p, stack[parent], class_frame(p, e, nm));
        }
        if (p->oom)
            goto done;
    }
    row = malloc((p->stack.n + 1) * sizeof *row);
    size = calloc(nn + 1, sizeof *size);
    count = calloc(nn + 1, sizeof *count);
    rstack = malloc((nn + 1) * sizeof *rstack);
    if (!row || !size || !count || !rstack)
        goto done;
    for (size_t i = 0; i < nn; i++)
        row[stack[i]] = PC_NONE;
    size_t nr = 0;
    for (size_t i = 0; i < nn; i++) {
        uint32_t s = stack[i];
        if (row[s] == PC_NONE) {
            row[s] = (uint32_t)nr;
            rstack[nr++] = s;
        }
        size[row[s]] += t->node.size[i];
        count[row[s]] += t->node.count[i];
    }
    uint32_t thread = pf_thread_of(r, t->pid, t->pid);
    uint32_t heap = pc_intern_cstr(p, "java heap");
    if (thread == PC_NONE || heap == PC_NONE)
        goto done;
    p->meta.object_heap = heap;
    p->meta.object_retained = r->o->heap_graph != 0;
    uint32_t dump = (uint32_t)p->heap.n_dumps++;
    for (size_t i = 0; i < nr && !p->oom; i++)
        if (count[i])
            pc_add_heap(p, thread, heap, dump, t->ts, rstack[i], size[i], 0, count[i], 0);
    st = p->oom ? -1 : 0;
done:
    free(name);
    free(stack);
    free(row);
    free(size);
    free(count);
    free(rstack);
    return st;
}

int pf_heap_graph_end(pf_reader *r)
{
    pf_hgraph *g = r->hg;
    if (!g)
        return PC_OK;
    /* A dump the trace ends inside keeps what arrived of it, as
     * trace_processor keeps it. */
    for (size_t k = 0; k < g->n_open; k++) {
        if (!g->open[k])
            continue;
        r->st.heap_graph_unfinished++;
        int st = finish(r, k);
        if (st != PC_OK)
            return st;
    }
    if (!g->n_tree)
        return PC_OK;
    pc_profile *p = r->p;
    emit e;
    memset(&e, 0, sizeof e);
    for (size_t i = 0; i < N_TOPS; i++)
        e.top_frame[i] = PC_NONE;
    int st = PC_OK;
    for (size_t i = 0; st == PC_OK && i < r->o->proguard_mapping_files.n; i++)
        st = pc_proguard_load(&e.files, r->o->proguard_mapping_files.items[i], r->err);
    if (st == PC_OK && ((r->deobf.cls.n && pc_deobf_seal(&r->deobf) < 0) ||
                        (e.files.cls.n && pc_deobf_seal(&e.files) < 0)))
        st = pf_nomem(r);
    e.res_java = pc_resource(p, pc_intern_cstr(p, "JAVA"));
    if (st == PC_OK && (e.res_java == PC_NONE || p->oom))
        st = pf_nomem(r);
    for (size_t i = 0; st == PC_OK && i < g->n_tree; i++)
        if (emit_tree(r, &e, &g->tree[i]) < 0)
            st = pf_nomem(r);
    pc_deobf_free(&e.files);
    pc_deobf_result_free(&e.res);
    free(e.buf);
    free(e.cls.name);
    free(e.cls.frame);
    pc_htab_free(&e.cls.idx);
    return st;
}
