/* Starting the library's own threads. */
#ifndef PROFCONV_BASE_THREAD_H
#define PROFCONV_BASE_THREAD_H

#include <pthread.h>
#include <signal.h>

/* pthread_create with every signal blocked in the new thread: signals
 * stay with the caller's threads, whose handlers expect them.  Returns
 * 0 or pthread_create's error; the caller's mask is as it was. */
static inline int pc_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    sigset_t all, saved;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    int e = pthread_create(th, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    return e;
}

#endif
