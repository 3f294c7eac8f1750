/*
 * Finishing the files when a signal ends the program. SIGINT (Ctrl-C),
 * SIGTERM (kill, timeout) and SIGHUP (a closed terminal) end a program that
 * does not catch them without running its exit handlers, so the reports
 * would be cut short. For each of them that the program leaves at its
 * default action when the shared device opens, a handler of tally's takes
 * the signal and wakes a thread of tally's, which finishes the files as
 * exit would; then the signal takes its default course, and the program
 * ends killed by it, as it would have, a moment later. Meanwhile the
 * program runs on: a lock one of its threads held when the signal came is
 * released as usual, so the finish never waits on it.
 *
 * A signal the program catches or ignores is left to it: its handler sees
 * exactly what it would without tally, and if it ends the program with
 * exit() the exit handler finishes the files. A handler the program
 * installs later replaces tally's. A second signal while the files are
 * being finished ends the program at once, as users expect of a second
 * Ctrl-C.
 *
 * The handler does only what is async-signal-safe: a write to a pipe, or
 * restoring the default action and raising the signal again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "session.h"
#include "thread_start.h"

static const int ending_signals[] = {SIGINT, SIGTERM, SIGHUP};
enum { ENDING_SIGNAL_COUNT = sizeof ending_signals / sizeof ending_signals[0] };

/* The process whose finisher thread reads the pipe (0: none yet): a forked
 * child inherits the handler and the pipe, but not the thread. */
static atomic_int finisher_pid;
static int wake_pipe[2] = {-1, -1};
/* The signal being finished (0: none). */
static atomic_int finishing_signal;
static void (*finish_files)(void);

static void restore_default_action(int signal_number)
{
    struct sigaction default_action = {.sa_handler = SIG_DFL};
    sigemptyset(&default_action.sa_mask);
    sigaction(signal_number, &default_action, NULL);
}

/* The signal's default action, now: it was blocked while its handler ran,
 * so it is delivered as the handler returns. */
static void take_default_course(int signal_number)
{
    restore_default_action(signal_number);
    raise(signal_number);
}

static void on_ending_signal(int signal_number)
{
    int saved_errno = errno;
    int none = 0;
    unsigned char byte = (unsigned char)signal_number;
    if (atomic_load(&finisher_pid) != getpid() ||
        !atomic_compare_exchange_strong(&finishing_signal, &none, signal_number) ||
        write(wake_pipe[1], &byte, 1) != 1)
        take_default_course(signal_number);
    errno = saved_errno;
}

/* Waits for a signal, finishes the files, then lets the signal end the
 * process: sent again to the process, not to this thread, which blocks
 * it, so that one of the program's threads takes it as it would have. */
static void *finisher_main(void *unused)
{
    (void)unused;
    unsigned char byte = 0;
    ssize_t n;
    while ((n = read(wake_pipe[0], &byte, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1)
        return NULL;
    finish_files();
    restore_default_action(byte);
    kill(getpid(), byte);
    return NULL;
}

/* A signal is taken over only where the program leaves it at its default
 * action (or where this process inherited tally's handler through fork). */
static void take_over_default_signals(void)
{
    struct sigaction ours = {.sa_handler = on_ending_signal, .sa_flags = SA_RESTART};
    sigemptyset(&ours.sa_mask);
    for (int i = 0; i < ENDING_SIGNAL_COUNT; i++) {
        struct sigaction current;
        if (sigaction(ending_signals[i], NULL, &current) != 0 || (current.sa_flags & SA_SIGINFO) ||
            (current.sa_handler != SIG_DFL && current.sa_handler != on_ending_signal))
            continue;
        sigaction(ending_signals[i], &ours, NULL);
    }
}

bool session_finish_on_ending_signals(void (*finish)(void))
{
    if (atomic_load(&finisher_pid) == getpid())
        return true;
    if (pipe2(wake_pipe, O_CLOEXEC) != 0)
        return false;
    finish_files = finish;
    atomic_store(&finishing_signal, 0);
    pthread_t thread;
    if (tally_thread_start(&thread, "tally-signals", finisher_main, NULL) != 0) {
        close(wake_pipe[0]);
        close(wake_pipe[1]);
        wake_pipe[0] = wake_pipe[1] = -1;
        return false;
    }
    pthread_detach(thread);
    atomic_store(&finisher_pid, getpid());
    take_over_default_signals();
    return true;
}

void session_forget_ending_signals_in_child(void)
{
    /* The parent's pipe: the handler, inherited, sees another pid and
     * lets a signal take its course until the child opens a device. */
    if (wake_pipe[0] >= 0)
        close(wake_pipe[0]);
    if (wake_pipe[1] >= 0)
        close(wake_pipe[1]);
    wake_pipe[0] = wake_pipe[1] = -1;
}
