/*
 * Protocol buffers' wire format, as much of it as tally's Perfetto traces
 * use: varints, doubles, strings and nested messages, appended to a growing
 * buffer. A nested message is opened, filled in place and closed, so that
 * no message is built twice. Internal to libtally.
 */
#ifndef TALLY_PERFETTO_PROTO_H
#define TALLY_PERFETTO_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* `failed` once an allocation failed: what followed was not written. */
struct proto_buffer {
    uint8_t *data;
    size_t length, capacity;
    bool failed;
};

void proto_uint(struct proto_buffer *b, uint32_t field, uint64_t value);
/* An int64 field: negative values take ten bytes, as protobuf says. */
void proto_int(struct proto_buffer *b, uint32_t field, int64_t value);
void proto_double(struct proto_buffer *b, uint32_t field, double value);
void proto_bytes(struct proto_buffer *b, uint32_t field, const void *data, size_t size);
void proto_string(struct proto_buffer *b, uint32_t field, const char *text);

/* A nested message: open returns where its content starts, close writes
 * its length in front of it. Messages nest; close them innermost first. */
size_t proto_open(struct proto_buffer *b, uint32_t field);
void proto_close(struct proto_buffer *b, size_t start);

void proto_free(struct proto_buffer *b);

#endif
