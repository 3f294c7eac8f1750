/*
 * Sampling the shared device from the environment (what `tally run --sample`
 * sets): TALLY_SAMPLE (an interval: "100us", "1ms", "250000ns", "2s"),
 * TALLY_SAMPLE_SET (a metric set; default the catalogue's first) and
 * TALLY_SAMPLE_OUTPUT (default "tally-samples.csv"). A thread reads the
 * stream, calculates each interval's values and writes them as CSV rows (and
 * as counter tracks of the device's trace, when there is one). Bad values
 * are logged and ignored: the program runs on unsampled.
 */
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output_file.h"
#include "session.h"
#include "thread_start.h"
#include "tally/metrics_discovery.h"
#include "report_text.h"

#define DEFAULT_OUTPUT "tally-samples.csv"
#define POLL_MS 50u
#define BATCH_MS 10

struct env_sampling {
    tally_device *device;
    tally_md_device *md;
    tally_md_metric_set *set;
    const tally_md_metric_set_params *params;
    tally_md_concurrent_group *group;
    uint32_t interval_ns;
    struct output_file file;
    char *path; /* the file's name, for messages */
    /* the reader's buffers: the previous read's last report, then new ones */
    uint8_t *raw;
    uint32_t raw_capacity; /* reports, besides the carried one */
    bool has_previous;
    tally_md_typed_value *values;
    uint64_t last_end_ns;
    pthread_t thread;
    bool thread_started;
    atomic_bool stopping;
};

/* --- parsing ---------------------------------------------------------------------- */

/* Says why TALLY_SAMPLE's value is not used; false then. */
static bool interval_from(const char *text, uint32_t *interval)
{
    char why[160];
    if (tally_sample_interval_parse(text, interval, why, sizeof why) == TALLY_OK)
        return true;
    tally_log(TALLY_LOG_WARN, "TALLY_SAMPLE: %s; not sampling", why);
    return false;
}

/* The set TALLY_SAMPLE_SET names, else the first set of the first group;
 * NULL if the device has none. */
static tally_md_metric_set *choose_set(tally_md_device *md, const char *name)
{
    tally_md_metric_set *first =
        tally_md_concurrent_group_get_metric_set(tally_md_device_get_concurrent_group(md, 0), 0);
    if (first && name && *name) {
        uint32_t groups = tally_md_device_get_params(md)->concurrent_groups_count;
        for (uint32_t g = 0; g < groups; g++) {
            tally_md_concurrent_group *group = tally_md_device_get_concurrent_group(md, g);
            uint32_t sets = tally_md_concurrent_group_get_params(group)->metric_sets_count;
            for (uint32_t i = 0; i < sets; i++) {
                tally_md_metric_set *set = tally_md_concurrent_group_get_metric_set(group, i);
                if (strcmp(tally_md_metric_set_get_params(set)->symbol_name, name) == 0)
                    return set;
            }
        }
        tally_log(TALLY_LOG_WARN, "TALLY_SAMPLE_SET: no metric set \"%s\"; sampling %s", name,
                  tally_md_metric_set_get_params(first)->symbol_name);
    }
    return first;
}

/* --- output --------------------------------------------------------------------------- */

static void put_header(struct env_sampling *s)
{
    FILE *out = output_file_stream(&s->file);
    const tally_md_metric_set_params *p = s->params;
    for (uint32_t m = 0; m < p->metrics_count; m++)
        fprintf(out, "%s%s", m ? "," : "", tally_md_metric_set_get_metric(s->set, m)->symbol_name);
    for (uint32_t i = 0; i < p->information_count; i++)
        fprintf(out, ",%s", tally_md_metric_set_get_information(s->set, i)->symbol_name);
    fputc('\n', out);
}

static void put_value(FILE *out, const tally_md_typed_value *v)
{
    char text[TEXT_FIXED3_MAX];
    switch (v->type) {
    case TALLY_MD_VALUE_UINT32: fprintf(out, "%" PRIu32, v->value.u32); break;
    case TALLY_MD_VALUE_UINT64: fprintf(out, "%" PRIu64, v->value.u64); break;
    case TALLY_MD_VALUE_BOOL: fputc(v->value.b ? '1' : '0', out); break;
    case TALLY_MD_VALUE_FLOAT:
    case TALLY_MD_VALUE_DOUBLE:
        fwrite(text, 1, (size_t)(text_fixed3(text, tally_md_typed_value_as_double(v)) - text), out);
        break;
    default: break;
    }
}

static void put_rows(struct env_sampling *s, uint32_t rows)
{
    FILE *out = output_file_stream(&s->file);
    uint32_t width = s->params->metrics_count + s->params->information_count;
    for (uint32_t r = 0; r < rows; r++) {
        for (uint32_t c = 0; c < width; c++) {
            if (c)
                fputc(',', out);
            put_value(out, &s->values[(size_t)r * width + c]);
        }
        fputc('\n', out);
    }
}

/* Each metric's value holds over its interval: it is set at the interval's
 * begin; the track returns to 0 where sampling ended. */
static void trace_rows(struct env_sampling *s, uint32_t rows, bool final)
{
    const tally_md_metric_set_params *p = s->params;
    uint32_t width = p->metrics_count + p->information_count;
    char name[160];
    for (uint32_t r = 0; r < rows; r++) {
        const tally_md_typed_value *row = &s->values[(size_t)r * width];
        uint64_t begin = row[p->metrics_count + TALLY_MD_INFO_QUERY_BEGIN_TIME].value.u64;
        for (uint32_t m = 0; m < p->metrics_count; m++) {
            snprintf(name, sizeof(name), "%s.%s", p->symbol_name,
                     tally_md_metric_set_get_metric(s->set, m)->symbol_name);
            tally_device_trace_counter(s->device, name, begin,
                                       tally_md_typed_value_as_double(&row[m]));
        }
    }
    for (uint32_t m = 0; final && s->last_end_ns && m < p->metrics_count; m++) {
        snprintf(name, sizeof(name), "%s.%s", p->symbol_name,
                 tally_md_metric_set_get_metric(s->set, m)->symbol_name);
        tally_device_trace_counter(s->device, name, s->last_end_ns, 0.0);
    }
}

/* --- reading ---------------------------------------------------------------------------- */

/* Reads what the stream holds and writes its rows, until a read comes back
 * short or, when until_ns is not 0, the rows reach that GPU time (a stream
 * that produces faster than this reads must not keep it here forever). The
 * last report read is carried to the front of the buffer to open the next
 * interval. */
static void drain(struct env_sampling *s, uint64_t until_ns)
{
    uint32_t size = s->params->raw_report_size;
    uint32_t width = s->params->metrics_count + s->params->information_count;
    for (;;) {
        uint32_t count = s->raw_capacity, status = 0;
        uint8_t *fresh = s->raw + (s->has_previous ? size : 0);
        if (tally_md_read_io_stream(s->group, &count, fresh, 0, &status) != TALLY_OK || !count)
            return;
        uint32_t total = count + (s->has_previous ? 1 : 0), rows = 0;
        tally_md_calculate_metrics(s->set, s->raw, (size_t)total * size, s->values,
                                   (size_t)total * width, &rows);
        if (rows)
            s->last_end_ns = s->values[(size_t)(rows - 1) * width + s->params->metrics_count +
                                       TALLY_MD_INFO_QUERY_END_TIME]
                                 .value.u64;
        put_rows(s, rows);
        trace_rows(s, rows, false);
        memmove(s->raw, s->raw + (size_t)(total - 1) * size, size);
        s->has_previous = true;
        if (count < s->raw_capacity || (until_ns && s->last_end_ns >= until_ns) ||
            (!until_ns && atomic_load(&s->stopping)))
            return;
    }
}

/* Reports are read in batches: the stream holds about a second of them, so
 * pausing between reads costs nothing but saves a wake-up per report. */
static void *read_loop(void *arg)
{
    struct env_sampling *s = arg;
    const struct timespec pause = {0, BATCH_MS * 1000000L};
    while (!atomic_load(&s->stopping)) {
        if (tally_md_wait_for_reports(s->group, POLL_MS) != TALLY_OK)
            continue;
        drain(s, 0);
        /* The file is written live: a reader following it, or the file a
         * killed program leaves, has every sample read so far. A failed
         * write is said at stop. */
        (void)output_file_flush(&s->file);
        nanosleep(&pause, NULL);
    }
    return NULL;
}

/* --- start and stop ---------------------------------------------------------------------- */

static void destroy(struct env_sampling *s)
{
    tally_md_device_close(s->md);
    free(s->raw);
    free(s->values);
    free(s->path);
    free(s);
}

/* The samples get a file of their own: one shared with the report or the
 * trace would be replaced by whichever is committed last. */
static bool shares_a_file(const char *path)
{
    static const char *const others[] = {"TALLY_OUTPUT", "TALLY_TRACE"};
    for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        char other[PATH_MAX];
        if (tally_output_path_for_process(secure_getenv(others[i]), other, sizeof other) &&
            output_file_same_destination(path, other)) {
            tally_log(TALLY_LOG_ERROR,
                      "TALLY_SAMPLE_OUTPUT names the same file as %s (%s); not sampling", others[i],
                      path);
            return true;
        }
    }
    return false;
}

/* pattern: "%p" stands for the process id (tally_output_path_for_process). */
static tally_status open_output(struct env_sampling *s, const char *pattern)
{
    char path[PATH_MAX];
    if (!tally_output_path_for_process(pattern, path, sizeof path)) {
        tally_log(TALLY_LOG_ERROR, "TALLY_SAMPLE_OUTPUT: %s is too long", pattern);
        return TALLY_ERROR_INVALID_ARGUMENT;
    }
    if (shares_a_file(path))
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_status status = output_file_open(&s->file, path, OUTPUT_FILE_LIVE);
    if (status != TALLY_OK) {
        tally_log(TALLY_LOG_ERROR, "TALLY_SAMPLE_OUTPUT: cannot create %s: %s", path,
                  status == TALLY_ERROR_IO ? output_file_strerror(errno)
                                           : tally_status_string(status));
        return status;
    }
    if (!(s->path = strdup(path))) {
        output_file_abort(&s->file);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    put_header(s);
    (void)output_file_flush(&s->file); /* a failed write is said at stop */
    return TALLY_OK;
}

static tally_status start_stream(struct env_sampling *s, uint32_t interval)
{
    uint32_t buffer_size = 0;
    tally_status status = tally_md_open_io_stream(s->group, s->set, &interval, &buffer_size);
    if (status != TALLY_OK) {
        tally_log(TALLY_LOG_ERROR, "TALLY_SAMPLE: cannot sample %s: %s", s->params->symbol_name,
                  tally_status_string(status));
        return status;
    }
    s->interval_ns = interval;
    s->raw_capacity = buffer_size / s->params->raw_report_size;
    size_t width = (size_t)s->params->metrics_count + s->params->information_count;
    s->raw = malloc((size_t)(s->raw_capacity + 1) * s->params->raw_report_size);
    s->values = malloc((size_t)(s->raw_capacity + 1) * width * sizeof(*s->values));
    return s->raw && s->values ? TALLY_OK : TALLY_ERROR_OUT_OF_MEMORY;
}

struct env_sampling *env_sampling_start(tally_device *device)
{
    const char *interval_text = secure_getenv("TALLY_SAMPLE");
    if (!interval_text || !*interval_text)
        return NULL;
    uint32_t interval = 0;
    if (!interval_from(interval_text, &interval))
        return NULL;
    struct env_sampling *s = calloc(1, sizeof(*s));
    if (!s || tally_md_device_open(device, &s->md) != TALLY_OK ||
        !(s->set = choose_set(s->md, secure_getenv("TALLY_SAMPLE_SET")))) {
        tally_log(TALLY_LOG_ERROR, "TALLY_SAMPLE: cannot sample this device");
        if (s)
            destroy(s);
        return NULL;
    }
    s->device = device;
    s->params = tally_md_metric_set_get_params(s->set);
    s->group = tally_md_metric_set_get_concurrent_group(s->set);
    const char *path = secure_getenv("TALLY_SAMPLE_OUTPUT");
    atomic_init(&s->stopping, false);
    if (start_stream(s, interval) != TALLY_OK ||
        open_output(s, path && *path ? path : DEFAULT_OUTPUT) != TALLY_OK) {
        destroy(s);
        return NULL;
    }
    s->thread_started = tally_thread_start(&s->thread, "tally-samples", read_loop, s) == 0;
    if (!s->thread_started)
        tally_log(TALLY_LOG_WARN, "TALLY_SAMPLE: no reader thread; samples are read at exit");
    return s;
}

void env_sampling_stop(struct env_sampling *s)
{
    if (!s)
        return;
    tally_device_wait_idle(s->device);
    /* the report that ends the last interval of work comes within one interval */
    uint64_t until = tally_device_covered_gpu_ns(s->device);
    uint64_t timeout_ms = 2ull * s->interval_ns / 1000000u + 1000u;
    if (tally_md_flush_io_stream(s->group, (uint32_t)timeout_ms) != TALLY_OK)
        tally_log(TALLY_LOG_WARN, "TALLY_SAMPLE: the last interval of work may be missing");
    atomic_store(&s->stopping, true);
    if (s->thread_started)
        pthread_join(s->thread, NULL);
    drain(s, until ? until : 1);
    trace_rows(s, 0, true);
    if (output_file_commit(&s->file) == TALLY_OK)
        tally_log(TALLY_LOG_INFO, "samples of %s written to %s", s->params->symbol_name, s->path);
    else
        tally_log(TALLY_LOG_ERROR,
                  "TALLY_SAMPLE_OUTPUT: the samples could not be written to %s: %s", s->path,
                  output_file_strerror(errno));
    destroy(s);
}
