/* Owns how tally's threads start (thread_start.h). */
#include "thread_start.h"

#include <signal.h>

int tally_thread_start(pthread_t *thread, const char *name, void *(*main)(void *), void *arg)
{
    static const int unblocked[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGPROF};
    sigset_t blocked, old;
    sigfillset(&blocked);
    for (size_t i = 0; i < sizeof unblocked / sizeof unblocked[0]; i++)
        sigdelset(&blocked, unblocked[i]);
    /* The new thread inherits the mask it was created under. */
    pthread_sigmask(SIG_SETMASK, &blocked, &old);
    int result = pthread_create(thread, NULL, main, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (result == 0 && name)
        pthread_setname_np(*thread, name);
    return result;
}
