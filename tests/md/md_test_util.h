/* What the Metrics-Discovery tests share: finding sets, reading a whole
 * stream, recording work, summing calculated values. */
#ifndef TALLY_MD_TEST_UTIL_H
#define TALLY_MD_TEST_UTIL_H

#include <tally/tally.h>

/* The set with this symbol; fails the test if there is none. */
tally_md_metric_set *md_find_set(tally_md_device *md, const char *symbol);
tally_md_concurrent_group *md_group_of(tally_md_metric_set *set);
/* Position of a metric in its set by MD symbol; fails the test if absent. */
uint32_t md_metric_index(const tally_md_metric_set *set, const char *symbol);

/* Raw reports gathered from a stream, grown as needed. */
struct md_reports {
    uint8_t *bytes;
    uint32_t count;
    uint32_t report_size;
    uint32_t status_flags; /* ORed over every read */
};

/* Reads what the stream holds now (at most 16384 reports) and appends it. */
void md_read_all(tally_md_concurrent_group *group, const tally_md_metric_set *set,
                 struct md_reports *reports);
void md_reports_free(struct md_reports *reports);

/* Calculated reports of all raw ones gathered; *rows receives their count. */
tally_md_typed_value *md_calculate_all(const tally_md_metric_set *set,
                                       const struct md_reports *reports, uint32_t *rows);
/* Sum of an unsigned metric (or information item) over rows. */
uint64_t md_sum_u64(const tally_md_metric_set *set, const tally_md_typed_value *values,
                    uint32_t rows, uint32_t column);
/* The value at a row and column. */
const tally_md_typed_value *md_at(const tally_md_metric_set *set,
                                  const tally_md_typed_value *values, uint32_t row,
                                  uint32_t column);

/* Records `draws` non-indexed triangle-list draws of `vertices` vertices
 * (and a bound program that shades them) into stream. */
void md_record_draws(tally_stream *stream, tally_program *program, uint32_t draws,
                     uint32_t vertices);
tally_program *md_create_program(tally_device *device);

#endif
