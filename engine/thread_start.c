/* Owns how tally's threads start (thread_start.h). */
#include "thread_start.h"

#include <errno.h>
#include <semaphore.h>
#include <signal.h>

struct start {
    void *(*main)(void *);
    void *arg;
    sem_t running;
};

static void *trampoline(void *start_on_creators_stack)
{
    struct start *s = start_on_creators_stack;
    void *(*main)(void *) = s->main;
    void *arg = s->arg;
    sem_post(&s->running); /* s is gone once the creator returns */
    return main(arg);
}

int tally_thread_start(pthread_t *thread, const char *name, void *(*main)(void *), void *arg)
{
    static const int unblocked[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGPROF};
    sigset_t blocked, old;
    sigfillset(&blocked);
    for (size_t i = 0; i < sizeof unblocked / sizeof unblocked[0]; i++)
        sigdelset(&blocked, unblocked[i]);
    struct start start = {.main = main, .arg = arg};
    if (sem_init(&start.running, 0, 0) != 0)
        return errno;
    /* The new thread inherits the mask it was created under. */
    pthread_sigmask(SIG_SETMASK, &blocked, &old);
    int result = pthread_create(thread, NULL, trampoline, &start);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* Returns once the thread runs: a thread still starting when the
     * program forks could leave a lock of the C library's (or of a
     * sanitizer's allocator) held in the child. */
    while (result == 0 && sem_wait(&start.running) != 0 && errno == EINTR)
        ;
    sem_destroy(&start.running);
    if (result == 0 && name)
        pthread_setname_np(*thread, name);
    return result;
}
