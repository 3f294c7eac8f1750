/*
 * One worker thread compiles linked programs' GLSL with glslang. The first
 * compile of each stage builds glslang's built-in symbol tables, tens of
 * milliseconds that glLinkProgram's caller would otherwise wait for, which
 * a short replay (glretrace -b) feels in its frame rate. The program is
 * bound at once as a pending engine program; the engine's queue, not the
 * application, waits for its profile.
 */
#include "glsl_worker.h"
#include "glsl_profile.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;
static tally_gl_glsl_job *head, *tail;
static uint32_t in_flight; /* jobs queued or compiling */
static bool worker_running;

static void run(tally_gl_glsl_job *job)
{
    for (uint32_t i = 0; i < job->shader_count; i++) {
        tally_stage_profile *profile = &job->desc.stages[job->stages[i]];
        if (!tally_gl_glsl_profile(job->stages[i], job->sources[i], profile))
            tally_log(TALLY_LOG_DEBUG, "GL shim: glslang could not compile a shader");
        free(job->sources[i]);
    }
    tally_program_complete(job->program, &job->desc);
    tally_program_release(job->program);
    free(job);
}

static void *worker_main(void *unused)
{
    (void)unused;
    /* Named, so profilers do not charge its work to the program. */
    pthread_setname_np(pthread_self(), "tally-glsl");
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!head)
            pthread_cond_wait(&work, &lock);
        tally_gl_glsl_job *job = head;
        head = job->next;
        if (!head)
            tail = NULL;
        pthread_mutex_unlock(&lock);
        run(job);
        pthread_mutex_lock(&lock);
        if (--in_flight == 0)
            pthread_cond_broadcast(&all_done);
    }
    return NULL;
}

/* At exit, glslang's static objects are destroyed: no compile may still be
 * running then. Registered after glslang is initialized (and its own exit
 * handlers with it), so it runs before them. */
static void finish_jobs_at_exit(void)
{
    pthread_mutex_lock(&lock);
    while (worker_running && in_flight)
        pthread_cond_wait(&all_done, &lock);
    pthread_mutex_unlock(&lock);
}

static void before_fork(void)
{
    pthread_mutex_lock(&lock);
}

static void after_fork_in_parent(void)
{
    pthread_mutex_unlock(&lock);
}

/* The child has no worker: the queued jobs wait for the next one it starts.
 * A job the parent's worker was compiling is not the child's to finish (its
 * program stays pending there). */
static void after_fork_in_child(void)
{
    worker_running = false;
    in_flight = 0;
    for (const tally_gl_glsl_job *job = head; job; job = job->next)
        in_flight++;
    pthread_mutex_unlock(&lock);
}

static void register_process_handlers(void)
{
    pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
    tally_gl_glsl_initialize();
    atexit(finish_jobs_at_exit);
}

static bool start_worker(void)
{
    static pthread_once_t process_handlers = PTHREAD_ONCE_INIT;
    pthread_once(&process_handlers, register_process_handlers);
    pthread_attr_t attr;
    pthread_t thread;
    if (pthread_attr_init(&attr) != 0)
        return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool started = pthread_create(&thread, &attr, worker_main, NULL) == 0;
    pthread_attr_destroy(&attr);
    return started;
}

void tally_gl_glsl_submit(tally_gl_glsl_job *job)
{
    job->next = NULL;
    pthread_mutex_lock(&lock);
    if (!worker_running)
        worker_running = start_worker();
    if (!worker_running) {
        pthread_mutex_unlock(&lock);
        run(job); /* no thread to be had: on the caller's */
        return;
    }
    if (tail)
        tail->next = job;
    else
        head = job;
    tail = job;
    in_flight++;
    pthread_cond_signal(&work);
    pthread_mutex_unlock(&lock);
}
