/*
 * The Metrics-Discovery view's objects, shared by the md_*.c files: the
 * device view with its global symbols, concurrent groups (each with at most
 * one open stream) and metric sets with their metrics, information items and
 * raw report layout.
 */
#ifndef TALLY_MD_INTERNAL_H
#define TALLY_MD_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "tally/metrics_discovery.h"
#include "tally/tally.h"

/*
 * Raw report layout (little-endian, every field naturally aligned):
 *   0x00 u32 report id: the report's sequence number in its stream
 *   0x04 u32 reason mask (tally_md_report_reason) | CONTEXT_VALID
 *   0x08 u32 context id of the last command executed
 *   0x0c u32 core frequency in MHz
 *   0x10 u64 GPU timestamp in ns
 *   0x18 u32 context switches since the device opened, modulo 2^32
 *   0x1c u16 metric set index, u16 raw counter count N
 *   0x20 u32 low 32 bits of each of the N counters
 *   then u8  bits 32..39 of each counter, padded with zeros to 8 bytes
 */
#define MD_HEADER_SIZE 0x20u
/* Raw slots one derived counter may read: far more than any catalogue's. */
#define TALLY_MD_MAX_COUNTER_INPUTS 64u
#define MD_CONTEXT_VALID (1u << 31)
#define MD_COUNTER_MASK ((1ull << TALLY_MD_RAW_COUNTER_BITS) - 1)

struct tally_md_metric_set {
    tally_md_metric_set_params params;
    struct tally_md_device *device;
    uint32_t index; /* in the catalogue */
    tally_md_metric_params *metrics;
    tally_md_information_params information[TALLY_MD_INFO_COUNT];
    uint32_t *raw_slots; /* engine raw slot of each report counter */
};

struct md_stream {
    tally_sampler *sampler;
    tally_md_metric_set *set;
    uint32_t capacity; /* reports */
    tally_sample *headers;
    uint64_t *raw; /* capacity x raw_count */
};

struct tally_md_concurrent_group {
    tally_md_concurrent_group_params params;
    struct tally_md_device *device;
    uint32_t index;
    tally_md_metric_set **sets;
    pthread_mutex_t lock; /* guards stream */
    struct md_stream *stream;
};

struct tally_md_device {
    tally_md_device_params params;
    tally_device *engine;
    /* the engine's, read once through the public API */
    const tally_catalogue *catalogue;
    const uint64_t *constants;
    tally_device_info info;
    uint32_t raw_count;
    bool shared; /* release the shared device on close */
    tally_md_global_symbol *symbols;
    tally_md_concurrent_group *groups;
    tally_md_metric_set *sets;
    uint32_t set_count;
};

/*
 * Query report layout (little-endian; one command's begin-to-end counters):
 *   0x00 u32 query id (the results' report number)
 *   0x04 u32 reason mask: 0 | CONTEXT_VALID
 *   0x08 u32 context id of the measured command
 *   0x0c u32 core frequency in MHz
 *   0x10 u64 GPU time the command began, ns
 *   0x18 u64 GPU time it ended, ns
 *   0x20 u16 metric set index, u16 raw counter count N, u32 MD_QUERY_TAG
 *   0x28 u64 delta of each of the N counters (the set's raw slots, in order)
 */
#define MD_QUERY_HEADER_SIZE 0x28u
#define MD_QUERY_TAG 0x59525154u /* "TQRY": not a stream report */

static inline void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* metric_set.c: fills md->sets[index] from the catalogue. */
tally_status md_build_metric_set(struct tally_md_device *md, uint32_t index);

/* calculate.c: one raw report from a sample of the engine's sampler. */
void md_encode_report(const tally_md_metric_set *set, const tally_sample *header,
                      const uint64_t *raw, uint32_t reason_mask, void *report);

/* calculate.c: the set's metric values from a vector of raw deltas. */
void md_evaluate_metrics(const tally_md_metric_set *set, const uint64_t *deltas,
                         tally_md_typed_value *out);

/* stream.c: claims a concurrent group of an engine device for one set. */
void md_close_stream(tally_md_concurrent_group *group);

#endif
