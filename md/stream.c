/*
 * Stream mode: a concurrent group samples one metric set through an engine
 * sampler and hands out raw reports. A concurrent group is hardware, so the
 * one-set-at-a-time rule holds per engine device, across every
 * Metrics-Discovery view of it (the claims below); it is checked only when
 * streams open and close, never on a path that work takes.
 */
#include <stdlib.h>
#include <string.h>

#include "md_internal.h"

struct claim {
    struct claim *next;
    const tally_device *engine;
    uint32_t group;
    const char *set_symbol;
};

static pthread_mutex_t claims_lock = PTHREAD_MUTEX_INITIALIZER;
static struct claim *claims;

static tally_status claim_group(const tally_md_concurrent_group *group,
                                const tally_md_metric_set *set)
{
    const tally_device *engine = group->device->engine;
    tally_status status = TALLY_OK;
    pthread_mutex_lock(&claims_lock);
    for (struct claim *c = claims; c; c = c->next) {
        if (c->engine == engine && c->group == group->index) {
            tally_log(TALLY_LOG_WARN,
                      "concurrent group %s already collects metric set %s; one metric set per "
                      "concurrent group at a time (close its stream first)",
                      group->params.symbol_name, c->set_symbol);
            status = TALLY_ERROR_INVALID_STATE;
            break;
        }
    }
    struct claim *c = status == TALLY_OK ? malloc(sizeof(*c)) : NULL;
    if (status == TALLY_OK && !c)
        status = TALLY_ERROR_OUT_OF_MEMORY;
    if (c) {
        *c = (struct claim){claims, engine, group->index, set->params.symbol_name};
        claims = c;
    }
    pthread_mutex_unlock(&claims_lock);
    return status;
}

static void release_group(const tally_md_concurrent_group *group)
{
    pthread_mutex_lock(&claims_lock);
    for (struct claim **p = &claims; *p; p = &(*p)->next) {
        if ((*p)->engine == group->device->engine && (*p)->group == group->index) {
            struct claim *gone = *p;
            *p = gone->next;
            free(gone);
            break;
        }
    }
    pthread_mutex_unlock(&claims_lock);
}

/* --- negotiation -------------------------------------------------------------------- */

/* At least the minimum, then whole timestamp ticks, then whole nanoseconds. */
static uint32_t negotiate_interval(const tally_device *engine, uint32_t requested)
{
    uint64_t ns = requested ? requested : TALLY_MD_DEFAULT_INTERVAL_NS;
    if (ns < TALLY_MD_MIN_INTERVAL_NS)
        ns = TALLY_MD_MIN_INTERVAL_NS;
    tally_device_info info;
    tally_device_get_info(engine, &info);
    uint64_t hz = info.timestamp_frequency_hz;
    uint64_t ticks = (uint64_t)(((unsigned __int128)ns * hz + 500000000u) / 1000000000u);
    if (!ticks)
        ticks = 1;
    uint64_t rounded = (uint64_t)(((unsigned __int128)ticks * 1000000000u + hz / 2) / hz);
    if (rounded < TALLY_MD_MIN_INTERVAL_NS) /* a clock slower than the minimum */
        rounded = TALLY_MD_MIN_INTERVAL_NS;
    return rounded > UINT32_MAX ? UINT32_MAX : (uint32_t)rounded;
}

/* Reports: about a second's worth when asked for 0, else what the bytes hold. */
static uint32_t negotiate_reports(uint32_t interval_ns, uint32_t buffer_size, uint32_t report_size)
{
    uint64_t reports = buffer_size ? buffer_size / report_size : 1000000000u / interval_ns;
    if (reports < TALLY_MD_MIN_BUFFER_REPORTS)
        reports = TALLY_MD_MIN_BUFFER_REPORTS;
    if (reports > TALLY_MD_MAX_BUFFER_REPORTS)
        reports = TALLY_MD_MAX_BUFFER_REPORTS;
    return (uint32_t)reports;
}

/* --- streams ------------------------------------------------------------------------ */

static void free_stream(struct md_stream *stream)
{
    tally_sampler_close(stream->sampler);
    free(stream->headers);
    free(stream->raw);
    free(stream);
}

static tally_status create_stream(tally_md_metric_set *set, uint32_t interval_ns, uint32_t reports,
                                  struct md_stream **out)
{
    tally_device *engine = set->device->engine;
    struct md_stream *stream = calloc(1, sizeof(*stream));
    if (!stream)
        return TALLY_ERROR_OUT_OF_MEMORY;
    stream->set = set;
    stream->capacity = reports;
    stream->headers = calloc(reports, sizeof(*stream->headers));
    stream->raw = calloc((size_t)reports * set->device->raw_count, sizeof(uint64_t));
    tally_status s = stream->headers && stream->raw ? TALLY_OK : TALLY_ERROR_OUT_OF_MEMORY;
    if (s == TALLY_OK)
        s = tally_sampler_open(engine, interval_ns, reports, &stream->sampler);
    if (s != TALLY_OK) {
        free_stream(stream);
        return s;
    }
    *out = stream;
    return TALLY_OK;
}

tally_status tally_md_open_io_stream(tally_md_concurrent_group *group, tally_md_metric_set *set,
                                     uint32_t *interval_ns, uint32_t *buffer_size)
{
    if (!group || !set || !interval_ns || !buffer_size || set->device != group->device ||
        set->params.concurrent_group != group->index)
        return TALLY_ERROR_INVALID_ARGUMENT;
    tally_device *engine = group->device->engine;
    uint32_t interval = negotiate_interval(engine, *interval_ns);
    uint32_t reports = negotiate_reports(interval, *buffer_size, set->params.raw_report_size);
    tally_status s = claim_group(group, set);
    if (s != TALLY_OK)
        return s;
    struct md_stream *stream = NULL;
    s = create_stream(set, interval, reports, &stream);
    if (s != TALLY_OK) {
        release_group(group);
        return s;
    }
    pthread_mutex_lock(&group->lock);
    group->stream = stream;
    pthread_mutex_unlock(&group->lock);
    *interval_ns = interval;
    *buffer_size = reports * set->params.raw_report_size;
    return TALLY_OK;
}

void md_close_stream(tally_md_concurrent_group *group)
{
    pthread_mutex_lock(&group->lock);
    struct md_stream *stream = group->stream;
    group->stream = NULL;
    pthread_mutex_unlock(&group->lock);
    if (!stream)
        return;
    free_stream(stream);
    release_group(group);
}

tally_status tally_md_close_io_stream(tally_md_concurrent_group *group)
{
    if (!group)
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&group->lock);
    bool open = group->stream != NULL;
    pthread_mutex_unlock(&group->lock);
    if (!open)
        return TALLY_ERROR_INVALID_STATE;
    md_close_stream(group);
    return TALLY_OK;
}

tally_status tally_md_wait_for_reports(tally_md_concurrent_group *group, uint32_t timeout_ms)
{
    if (!group)
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&group->lock);
    tally_sampler *sampler = group->stream ? group->stream->sampler : NULL;
    pthread_mutex_unlock(&group->lock);
    if (!sampler)
        return TALLY_ERROR_INVALID_STATE;
    /* The stream's owner does not close it while waiting on it. */
    return tally_sampler_wait(sampler, (uint64_t)timeout_ms * 1000000u);
}

tally_status tally_md_flush_io_stream(tally_md_concurrent_group *group, uint32_t timeout_ms)
{
    if (!group)
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&group->lock);
    tally_sampler *sampler = group->stream ? group->stream->sampler : NULL;
    pthread_mutex_unlock(&group->lock);
    if (!sampler)
        return TALLY_ERROR_INVALID_STATE;
    return tally_sampler_flush(sampler, (uint64_t)timeout_ms * 1000000u);
}

static uint32_t reason_mask(const tally_sample *sample)
{
    if (sample->sequence == 0)
        return TALLY_MD_REPORT_REASON_STREAM_START;
    return sample->reason == TALLY_SAMPLE_FLUSH ? TALLY_MD_REPORT_REASON_FLUSH
                                                : TALLY_MD_REPORT_REASON_TIMER;
}

static tally_status read_reports(struct md_stream *stream, uint32_t *report_count, uint8_t *buffer,
                                 uint32_t flags, uint32_t *status_flags)
{
    uint32_t want = *report_count < stream->capacity ? *report_count : stream->capacity;
    uint32_t dropped = 0;
    if (flags & TALLY_MD_IO_READ_FLAG_DROP_OLD_REPORTS)
        tally_sampler_drop_oldest(stream->sampler, want, &dropped);
    uint32_t count = 0;
    bool lost = false;
    tally_status s =
        tally_sampler_read(stream->sampler, stream->headers, stream->raw, want, &count, &lost);
    if (s != TALLY_OK)
        return s;
    const tally_md_metric_set *set = stream->set;
    uint32_t raw_count = set->device->raw_count;
    for (uint32_t i = 0; i < count; i++)
        md_encode_report(set, &stream->headers[i], &stream->raw[(size_t)i * raw_count],
                         reason_mask(&stream->headers[i]),
                         buffer + (size_t)i * set->params.raw_report_size);
    *report_count = count;
    if (status_flags)
        *status_flags = lost || dropped ? TALLY_MD_IO_STATUS_REPORTS_LOST : 0;
    return TALLY_OK;
}

tally_status tally_md_read_io_stream(tally_md_concurrent_group *group, uint32_t *report_count,
                                     void *buffer, uint32_t flags, uint32_t *status_flags)
{
    if (status_flags)
        *status_flags = 0;
    if (!group || !report_count || (*report_count && !buffer))
        return TALLY_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&group->lock);
    tally_status s = group->stream
                         ? read_reports(group->stream, report_count, buffer, flags, status_flags)
                         : TALLY_ERROR_INVALID_STATE;
    pthread_mutex_unlock(&group->lock);
    if (s != TALLY_OK)
        *report_count = 0;
    return s;
}
