/* Starting the library's own threads. */
#ifndef PROFCONV_BASE_THREAD_H
#define PROFCONV_BASE_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

/* pthread_create with every signal blocked in the new thread: signals
 * stay with the caller's threads, whose handlers expect them.  Returns
 * 0 or pthread_create's error; the caller's mask is as it was.  The
 * sized form gives the thread a stack of that many bytes, at least the
 * system's least (0, or a size the system refuses: its default, often
 * 8 MiB): a thread's stack counts against --max-memory (RLIMIT_AS) from
 * the start. */
static inline int pc_thread_start_sized(pthread_t *th, void *(*fn)(void *), void *arg,
                                        size_t stack)
{
    sigset_t all, saved;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return -1;
    if (stack) {
        long least = sysconf(_SC_THREAD_STACK_MIN);
        if (least > 0 && stack < (size_t)least)
            stack = (size_t)least;
        (void)pthread_attr_setstacksize(&attr, stack);
    }
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    int e = pthread_create(th, &attr, fn, arg);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    pthread_attr_destroy(&attr);
    return e;
}

static inline int pc_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
    return pc_thread_start_sized(th, fn, arg, 0);
}

/* The threads to use when asked for requested (options.threads): that
 * many, or the machine's cores when requested is 0 or less (at most
 * 1024, and 1 where the system does not say). */
static inline int pc_thread_count(int requested)
{
    if (requested > 0)
        return requested;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)(n > 1024 ? 1024 : n) : 1;
}

#endif
