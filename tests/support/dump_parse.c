#include "dump_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

static const char *value_of(const char *line, const char *key)
{
    size_t k = strlen(key);
    return strncmp(line, key, k) == 0 ? line + k : NULL;
}

int dump_load(const char *base, dump *d)
{
    static const char *const exec_names[] = {"native_method", "interpreted_jvm_method",
                                             "jit_jvm_method", "art_method"};
    char rel[512];
    size_t len;
    memset(d, 0, sizeof *d);
    snprintf(rel, sizeof rel, "dumps/%s.dump.txt", base);
    char *text = (char *)corpus_read(rel, &len);
    if (!text) {
        snprintf(rel, sizeof rel, "dumps/%s.dump.txt.gz", base);
        text = (char *)corpus_read(rel, &len);
    }
    if (!text)
        return -1;
    size_t cap_s = 0, cap_t = 0;
    enum { NONE, SAMPLE, THREAD, LOST } in = NONE;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        const char *v;
        if (strncmp(line, "sample ", 7) == 0) {
            if (d->n_samples == cap_s) {
                cap_s = cap_s ? cap_s * 2 : 256;
                d->samples = realloc(d->samples, cap_s * sizeof *d->samples);
            }
            memset(&d->samples[d->n_samples++], 0, sizeof *d->samples);
            in = SAMPLE;
        } else if (strcmp(line, "thread:") == 0) {
            if (d->n_threads == cap_t) {
                cap_t = cap_t ? cap_t * 2 : 16;
                d->threads = realloc(d->threads, cap_t * sizeof *d->threads);
            }
            memset(&d->threads[d->n_threads++], 0, sizeof *d->threads);
            in = THREAD;
        } else if (strcmp(line, "lost_situation:") == 0) {
            in = LOST;
        } else if (line[0] != ' ') {
            in = NONE;
        } else if (in == SAMPLE) {
            dump_sample *s = &d->samples[d->n_samples - 1];
            if ((v = value_of(line, "  time: ")))
                s->time = strtoull(v, NULL, 10);
            else if ((v = value_of(line, "  thread_id: ")))
                s->tid = strtoll(v, NULL, 10);
            else if ((v = value_of(line, "  event_type_id: ")))
                s->event = (unsigned)strtoul(v, NULL, 10);
            else if (value_of(line, "    vaddr_in_file: "))
                s->n_frames++;
            else if ((v = value_of(line, "    execution_type: ")))
                for (int k = 0; k < 4; k++)
                    if (strcmp(v, exec_names[k]) == 0)
                        s->n_exec[k]++;
        } else if (in == THREAD) {
            dump_thread *t = &d->threads[d->n_threads - 1];
            if ((v = value_of(line, "  thread_id: ")))
                t->tid = strtoll(v, NULL, 10);
            else if ((v = value_of(line, "  process_id: ")))
                t->pid = strtoll(v, NULL, 10);
            else if ((v = value_of(line, "  thread_name: ")))
                snprintf(t->name, sizeof t->name, "%s", v);
        } else if (in == LOST) {
            if ((v = value_of(line, "  sample_count: ")))
                d->sample_count = strtoull(v, NULL, 10);
            else if ((v = value_of(line, "  lost_count: ")))
                d->lost_count = strtoull(v, NULL, 10);
        }
    }
    free(text);
    return 0;
}

void dump_free(dump *d)
{
    free(d->samples);
    free(d->threads);
    memset(d, 0, sizeof *d);
}

int64_t dump_pid(const dump *d, int64_t tid)
{
    for (size_t i = 0; i < d->n_threads; i++)
        if (d->threads[i].tid == tid)
            return d->threads[i].pid;
    return -1;
}

const char *dump_name(const dump *d, int64_t tid)
{
    for (size_t i = 0; i < d->n_threads; i++)
        if (d->threads[i].tid == tid)
            return d->threads[i].name;
    return "";
}
