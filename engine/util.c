/* Status strings, logging and the small helpers every engine file uses. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

const char *tally_status_string(tally_status status)
{
    switch (status) {
    case TALLY_OK: return "success";
    case TALLY_NOT_READY: return "not ready";
    case TALLY_TIMEOUT: return "timeout";
    case TALLY_INCOMPLETE: return "incomplete";
    case TALLY_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case TALLY_ERROR_OUT_OF_MEMORY: return "out of memory";
    case TALLY_ERROR_UNKNOWN_BACKEND: return "unknown backend";
    case TALLY_ERROR_UNKNOWN_COUNTER: return "unknown counter";
    case TALLY_ERROR_OVER_CAPACITY: return "over capacity";
    case TALLY_ERROR_INVALID_STATE: return "invalid state";
    case TALLY_ERROR_IO: return "input/output error";
    case TALLY_ERROR_BAD_PROFILE: return "bad device profile";
    case TALLY_ERROR_NOT_SUPPORTED: return "not supported";
    }
    return "unknown status";
}

/* Asked once per submission, on the program's thread: cached per thread
 * (a system call otherwise). A forked child's one thread inherits its
 * parent thread's cache, which the fork handler clears. */
static _Thread_local uint32_t cached_thread_id;

uint32_t tally_thread_id(void)
{
    if (!cached_thread_id)
        cached_thread_id = (uint32_t)gettid();
    return cached_thread_id;
}

void tally_thread_id_forget(void)
{
    cached_thread_id = 0;
}

uint64_t tally_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void tally_copy_error(char *error, size_t size, const char *format, ...)
{
    if (!error || !size)
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(error, size, format, args);
    va_end(args);
}

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* The level is read once per process. An unknown one is said once, after
 * it is settled, so that saying it does not read it again. */
static tally_log_level configured_level(void)
{
    static atomic_int level = -1;
    int current = atomic_load_explicit(&level, memory_order_relaxed);
    if (current >= 0)
        return (tally_log_level)current;
    const char *value = secure_getenv("TALLY_LOG");
    bool known = !value || !*value;
    current = TALLY_LOG_WARN;
    for (int i = 0; value && i < 4; i++) {
        if (strcasecmp(value, level_names[i]) == 0) {
            current = i;
            known = true;
        }
    }
    int unset = -1;
    bool first = atomic_compare_exchange_strong(&level, &unset, current);
    if (first && !known) {
        char quoted[96];
        tally_log(TALLY_LOG_WARN, "TALLY_LOG: %s is none of error, warn, info, debug; using warn",
                  tally_quote(quoted, sizeof quoted, value));
    }
    return (tally_log_level)atomic_load_explicit(&level, memory_order_relaxed);
}

void tally_log_level_check(void)
{
    configured_level();
}

void tally_log(tally_log_level level, const char *format, ...)
{
    if (level > configured_level())
        return;
    char line[1024], shown[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof(line), format, args);
    va_end(args);
    /* Messages echo the environment and file names: a control byte among
     * them is shown, never sent to the terminal. */
    tally_escape_controls(shown, sizeof(shown), line, SIZE_MAX);
    /* One write per line keeps lines whole when threads log at once. */
    fprintf(stderr, "tally: %s\n", shown);
}

const struct timespec *tally_deadline(uint64_t timeout_ns, struct timespec *storage)
{
    if (timeout_ns == UINT64_MAX)
        return NULL;
    clock_gettime(CLOCK_MONOTONIC, storage);
    uint64_t ns = (uint64_t)storage->tv_nsec + timeout_ns % 1000000000u;
    storage->tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
    storage->tv_nsec = (long)(ns % 1000000000u);
    return storage;
}

void tally_cond_init(pthread_cond_t *cond)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
}

bool tally_cond_wait(pthread_cond_t *cond, pthread_mutex_t *lock, const struct timespec *deadline)
{
    if (!deadline)
        return pthread_cond_wait(cond, lock) == 0;
    return pthread_cond_timedwait(cond, lock, deadline) == 0;
}
