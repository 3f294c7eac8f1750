/*
 * What the exit-path test programs of every door share (tests/layer,
 * tests/gl, tests/cl): forking a child and waiting for it with a time
 * limit, and a thread that runs a door's work in a loop while the main
 * thread exits. A program under test must end as it does without tally:
 * a child that hangs is killed and reported, never left behind.
 */
#ifndef TALLY_TESTS_EXIT_PATHS_H
#define TALLY_TESTS_EXIT_PATHS_H

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { EXIT_PATHS_CHILD_SECONDS = 20 };

/* For the ending-signal tests (check_ending_signals.py): the program says
 * on standard output each round of work it finished (one draw each), then
 * goes on until a signal ends it; no round takes over a minute. */
static inline void exit_paths_say_round(unsigned round)
{
    printf("round %u\n", round);
    fflush(stdout);
}

static inline void exit_paths_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/*
 * Forks; the child runs `child` (which must not return) and the parent
 * waits for it, up to EXIT_PATHS_CHILD_SECONDS. Returns true when the child
 * exited with status 0; otherwise says what happened on stderr (and kills
 * a child that did not end in time).
 */
static inline bool exit_paths_fork(void (*child)(void))
{
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return false;
    }
    if (pid == 0) {
        child();
        _exit(99); /* child() must not return */
    }
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 10) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid)
            break;
        if (done < 0 && errno != EINTR) {
            perror("waitpid");
            return false;
        }
        if (waited_ms >= EXIT_PATHS_CHILD_SECONDS * 1000) {
            fprintf(stderr, "the child did not end within %d s: killed\n",
                    EXIT_PATHS_CHILD_SECONDS);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return false;
        }
        exit_paths_sleep_ms(10);
    }
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "the child died of signal %d\n", WTERMSIG(status));
        return false;
    }
    if (WEXITSTATUS(status) != 0) {
        fprintf(stderr, "the child exited with status %d\n", WEXITSTATUS(status));
        return false;
    }
    return true;
}

/*
 * A thread that calls `work` until the process ends, counting its rounds:
 * the main thread exits once it ran `rounds` of them, so the exit handlers
 * run while the thread is in the middle of a door's calls.
 */
struct exit_paths_loop {
    void (*work)(void *user);
    void *user;
    atomic_ulong rounds;
};

static inline void *exit_paths_loop_main(void *arg)
{
    struct exit_paths_loop *loop = arg;
    for (;;) {
        loop->work(loop->user);
        atomic_fetch_add(&loop->rounds, 1);
    }
    return NULL;
}

/* Registered first, so it runs last of the exit handlers: the loop goes on
 * a while after every other handler (tally's among them) ran. */
static inline void exit_paths_linger(void)
{
    exit_paths_sleep_ms(200);
}

/* Starts the loop and returns once it ran `rounds` rounds. The caller
 * registered exit_paths_linger before anything else. */
static inline bool exit_paths_start_loop(struct exit_paths_loop *loop, unsigned long rounds)
{
    pthread_t thread;
    if (pthread_create(&thread, NULL, exit_paths_loop_main, loop) != 0)
        return false;
    pthread_detach(thread);
    while (atomic_load(&loop->rounds) < rounds)
        exit_paths_sleep_ms(1);
    return true;
}

#endif
