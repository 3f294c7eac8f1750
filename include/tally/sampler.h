/*
 * Periodic sampling: snapshots of the device's cumulative raw counters taken
 * on the GPU clock at every multiple of an interval, whatever context's work
 * the queue executes. A command's counters belong to the first sample whose
 * time is at or after the command's end, but for its cycle counters (busy
 * cycles), which count one a cycle from its beginning: a sample inside the
 * command holds the part run by then. Elapsed cycles (GpuCoreClocks) are the
 * clock's, busy or idle, and never go back. In realtime clock mode samples keep
 * coming while the GPU is idle; in virtual mode the clock, and so sampling,
 * only advances with work.
 */
#ifndef TALLY_SAMPLER_H
#define TALLY_SAMPLER_H

#include "tally/device.h"
#include "tally/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tally_sampler tally_sampler;

typedef enum tally_sample_reason {
    TALLY_SAMPLE_TIMER = 0, /* an interval boundary */
    TALLY_SAMPLE_FLUSH = 1, /* taken by tally_sampler_flush */
} tally_sample_reason;

typedef struct tally_sample {
    uint64_t timestamp_ns; /* GPU time the sample was taken at */
    uint32_t reason;       /* tally_sample_reason */
    uint32_t context_id;   /* context of the last command executed, 0: none */
    uint64_t core_frequency_hz;
    uint64_t sequence;         /* samples this sampler took before, dropped ones included */
    uint64_t context_switches; /* commands, since the device opened, whose context
                                * differed from the previous command's */
} tally_sample;

#define TALLY_SAMPLER_MIN_INTERVAL_NS 1000u

/* interval_ns below TALLY_SAMPLER_MIN_INTERVAL_NS is an INVALID_ARGUMENT;
 * capacity is the number of unread samples kept (new ones are dropped when
 * full). The first sample is taken at open. */
TALLY_API tally_status tally_sampler_open(tally_device *device, uint64_t interval_ns,
                                          uint32_t capacity, tally_sampler **out);
TALLY_API void tally_sampler_close(tally_sampler *sampler);
TALLY_API uint64_t tally_sampler_interval_ns(const tally_sampler *sampler);

/* Up to max_samples of the oldest unread samples: headers into samples[] and
 * each one's raw counters (tally_catalogue_raw_count values) into
 * raw[i * raw_count]. *lost (may be NULL) reports samples dropped since the
 * previous read, and is cleared. */
TALLY_API tally_status tally_sampler_read(tally_sampler *sampler, tally_sample *samples,
                                          uint64_t *raw, uint32_t max_samples, uint32_t *count,
                                          bool *lost);
/* Waits until at least one sample is unread: TALLY_OK or TALLY_TIMEOUT. */
TALLY_API tally_status tally_sampler_wait(tally_sampler *sampler, uint64_t timeout_ns);
/* Drops all but the newest `keep` unread samples; *dropped (may be NULL)
 * receives how many went. */
TALLY_API tally_status tally_sampler_drop_oldest(tally_sampler *sampler, uint32_t keep,
                                                 uint32_t *dropped);
/*
 * Makes the samples cover every command executed so far; call it once the
 * device is idle (tally_device_wait_idle) and nothing is being submitted.
 * Virtual clock: takes a sample now (TALLY_SAMPLE_FLUSH) unless the latest
 * one is already at the current GPU time. Realtime clock: the queue takes
 * samples while idle, so this waits up to timeout_ns for one at or after the
 * current GPU time (TALLY_TIMEOUT otherwise).
 */
TALLY_API tally_status tally_sampler_flush(tally_sampler *sampler, uint64_t timeout_ns);

/*
 * An interval as TALLY_SAMPLE and `tally run -s` take it: a whole number
 * and a unit, ns, us, ms or s ("100us", "1ms", "250000ns", "2s"), up to
 * 4294967295 ns (the metrics API's timer period is 32-bit nanoseconds).
 * TALLY_OK with *interval_ns set, or TALLY_ERROR_INVALID_ARGUMENT and a
 * sentence naming the text and what is wrong with it in error.
 */
TALLY_API tally_status tally_sample_interval_parse(const char *text, uint32_t *interval_ns,
                                                   char *error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
