/*
 * Submitting a stream whose measurements the front end already read (GL and
 * OpenCL read their queries and event profiles on the application's thread,
 * where their API lives, before they submit): the submission's measurement
 * reader answers from an array the engine owns from then on.
 */
#include <stdlib.h>

#include "engine.h"

struct read_values {
    tally_measurement *values;
    uint32_t count;
};

static bool read_value(void *user, uint64_t key, tally_measurement *measurement)
{
    const struct read_values *r = user;
    if (key >= r->count || !r->values[key].valid)
        return false;
    *measurement = r->values[key];
    return true;
}

static void release_values(void *user)
{
    struct read_values *r = user;
    free(r->values);
    free(r);
}

tally_status tally_submit_stream_measured(tally_device *device, tally_stream *stream,
                                          uint32_t flags, const char *api_name,
                                          tally_measurement *measurements, uint32_t count,
                                          uint64_t issued_ns, uint64_t *seqno)
{
    if (!device || !stream || (count && !measurements)) {
        free(measurements);
        return TALLY_ERROR_INVALID_ARGUMENT;
    }
    struct read_values *r = malloc(sizeof(*r));
    if (!r) {
        free(measurements);
        tally_stream_consume(stream);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    *r = (struct read_values){measurements, count};
    tally_measurement_reader reader = {
        .read = read_value,
        .release = release_values,
        .user = r,
    };
    tally_submission submission = {
        .streams = &stream,
        .stream_count = 1,
        .flags = flags | TALLY_SUBMIT_CONSUME,
        .api_name = api_name,
        .measurement_reader = &reader,
        .issued_ns = issued_ns,
    };
    tally_status status = tally_submit(device, &submission, seqno);
    if (status != TALLY_OK) {
        release_values(r); /* the engine releases only what it accepted */
        tally_stream_consume(stream);
    }
    return status;
}
