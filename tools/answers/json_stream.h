/*
 * Walks a JSON document as a byte stream, one value at a time, so that a
 * report of millions of commands is read with one command in memory:
 * the caller steps through the outer object's members and the "commands"
 * array's elements, and hands each captured value (its raw text) to
 * json-c. Memory is bounded by the largest single value captured.
 */
#ifndef TALLY_ANSWERS_JSON_STREAM_H
#define TALLY_ANSWERS_JSON_STREAM_H

#include <stddef.h>
#include <stdio.h>

typedef struct json_stream json_stream;

/* Reads from file, which stays the caller's; NULL without memory. */
json_stream *json_stream_open(FILE *file);
void json_stream_close(json_stream *stream);

/* The next byte that is not white space, not consumed; EOF at the end. */
int json_stream_peek(json_stream *stream);
/* Consumes the byte json_stream_peek returned. */
void json_stream_skip(json_stream *stream);

/*
 * Captures the next value whole (skipping white space before it): its raw
 * text, NUL-terminated, valid until the next capture, or NULL when the
 * input ends inside it or holds no value here, with why in
 * json_stream_error.
 */
const char *json_stream_capture(json_stream *stream, size_t *length);

/* The line (from 1) the stream has reached, for messages. */
unsigned long json_stream_line(const json_stream *stream);
const char *json_stream_error(const json_stream *stream);

#endif
