/*
 * A streaming reader of CSV as RFC 4180 writes it, which is how tally
 * writes its reports and sidecars: fields separated by commas, records by
 * LF or CRLF, a field in double quotes may hold commas, line breaks and
 * quotes (doubled). One record is held at a time, so memory is bounded by
 * the longest record, never by the file.
 */
#ifndef TALLY_ANSWERS_CSV_READER_H
#define TALLY_ANSWERS_CSV_READER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct csv_reader csv_reader;

/* Reads from file, which stays the caller's; NULL without memory. */
csv_reader *csv_reader_open(FILE *file);
void csv_reader_close(csv_reader *reader);

/*
 * The next record: 1 with *fields pointing at *count NUL-terminated fields
 * (valid until the next call), 0 at the end of the file, -1 on malformed
 * input or a read error, with csv_reader_error saying what. Lines that
 * are empty are skipped.
 */
int csv_reader_next(csv_reader *reader, char ***fields, size_t *count);

/* The line (from 1) where the last record returned began. */
uint64_t csv_reader_line(const csv_reader *reader);

/* What went wrong, after csv_reader_next returned -1. */
const char *csv_reader_error(const csv_reader *reader);

#endif
