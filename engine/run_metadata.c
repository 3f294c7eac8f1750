/*
 * Owns what the device's report says about the run (tally_report_describe):
 * the program and its arguments, the process, when the device opened, the
 * backend and clock, and the real drivers the front doors found under the
 * program (tally_context_set_driver).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"

enum { MAX_DRIVERS = 16, CMDLINE_MAX = 64 * 1024 };

struct tally_run_metadata {
    pthread_mutex_t lock; /* the drivers: any door's thread adds one */
    tally_report_driver drivers[MAX_DRIVERS];
    uint32_t driver_count;
    char *program, *arguments;
    uint64_t start_unix_ns;
};

/* The bytes of /proc/self/cmdline: the arguments, each with its NUL. */
static size_t read_cmdline(char *buffer, size_t size)
{
    FILE *f = fopen("/proc/self/cmdline", "re");
    if (!f)
        return 0;
    size_t n = fread(buffer, 1, size - 1, f);
    fclose(f);
    buffer[n] = '\0';
    return n;
}

static bool shell_plain(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_", *s))
            return false;
    return true;
}

/* Each argument after the first, as a POSIX shell would read it back:
 * plain, or in single quotes with each quote written '\''. */
static char *quoted_arguments(const char *cmdline, size_t length)
{
    char *out = malloc(4 * length + 2), *p = out;
    if (!out)
        return NULL;
    *p = '\0';
    const char *arg = cmdline + strlen(cmdline) + 1;
    for (bool first = true; arg < cmdline + length; arg += strlen(arg) + 1, first = false) {
        if (!first)
            *p++ = ' ';
        if (shell_plain(arg)) {
            p = stpcpy(p, arg);
            continue;
        }
        *p++ = '\'';
        for (const char *c = arg; *c; c++) {
            if (*c == '\'')
                p = stpcpy(p, "'\\''"); /* close, an escaped quote, open again */
            else
                *p++ = *c;
        }
        *p++ = '\'';
    }
    *p = '\0';
    return out;
}

tally_status tally_run_metadata_open(struct tally_device *d)
{
    struct tally_run_metadata *m = calloc(1, sizeof *m);
    char *cmdline = malloc(CMDLINE_MAX);
    if (!m || !cmdline) {
        free(m);
        free(cmdline);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_init(&m->lock, NULL);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    m->start_unix_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
    size_t length = read_cmdline(cmdline, CMDLINE_MAX);
    m->program = strdup(length ? cmdline : "");
    m->arguments = length ? quoted_arguments(cmdline, length) : strdup("");
    free(cmdline);
    d->run_metadata = m;
    if (!m->program || !m->arguments) {
        tally_run_metadata_close(d);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    return TALLY_OK;
}

void tally_run_metadata_close(struct tally_device *d)
{
    struct tally_run_metadata *m = d->run_metadata;
    if (!m)
        return;
    for (uint32_t i = 0; i < m->driver_count; i++) {
        free((char *)m->drivers[i].api);
        free((char *)m->drivers[i].name);
        free((char *)m->drivers[i].version);
    }
    free(m->program);
    free(m->arguments);
    pthread_mutex_destroy(&m->lock);
    free(m);
    d->run_metadata = NULL;
}

/* Under the lock: whether the list holds this driver already. */
static bool known_driver(const struct tally_run_metadata *m, const char *api, const char *name,
                         const char *version)
{
    for (uint32_t i = 0; i < m->driver_count; i++)
        if (strcmp(m->drivers[i].api, api) == 0 && strcmp(m->drivers[i].name, name) == 0 &&
            strcmp(m->drivers[i].version, version) == 0)
            return true;
    return false;
}

tally_status tally_context_set_driver(tally_context *context, const char *name, const char *version)
{
    if (!context || !name)
        return TALLY_ERROR_INVALID_ARGUMENT;
    struct tally_run_metadata *m = context->device->run_metadata;
    version = version ? version : "";
    tally_status s = TALLY_OK;
    pthread_mutex_lock(&m->lock);
    if (known_driver(m, context->api_name, name, version)) {
        /* said once: every context of one driver says the same */
    } else if (m->driver_count == MAX_DRIVERS) {
        s = TALLY_ERROR_OVER_CAPACITY;
    } else {
        tally_report_driver *r = &m->drivers[m->driver_count];
        r->api = strdup(context->api_name);
        r->name = strdup(name);
        r->version = strdup(version);
        if (r->api && r->name && r->version) {
            m->driver_count++;
        } else {
            free((char *)r->api);
            free((char *)r->name);
            free((char *)r->version);
            s = TALLY_ERROR_OUT_OF_MEMORY;
        }
    }
    pthread_mutex_unlock(&m->lock);
    return s;
}

tally_status tally_run_metadata_describe(struct tally_device *d, tally_report *report)
{
    struct tally_run_metadata *m = d->run_metadata;
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", TALLY_VERSION_MAJOR, TALLY_VERSION_MINOR,
             TALLY_VERSION_PATCH);
    pthread_mutex_lock(&m->lock);
    tally_report_metadata metadata = {
        .tally_version = version,
        .backend = d->info.backend,
        .device = d->info.name,
        .clock = d->info.clock == TALLY_CLOCK_VIRTUAL ? "virtual" : "realtime",
        .program = m->program,
        .arguments = m->arguments,
        .pid = (int64_t)getpid(),
        .start_unix_ns = m->start_unix_ns,
        .drivers = m->drivers,
        .driver_count = m->driver_count,
    };
    tally_status s = tally_report_describe(report, &metadata);
    pthread_mutex_unlock(&m->lock);
    return s;
}
