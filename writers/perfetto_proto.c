/* Owns the protobuf wire encoding of tally's Perfetto traces (perfetto_proto.h). */
#include "perfetto_proto.h"

#include <stdlib.h>
#include <string.h>

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2 };
enum { VARINT_MAX = 10 };

static bool reserve(struct proto_buffer *b, size_t more)
{
    if (b->failed)
        return false;
    if (b->length + more <= b->capacity)
        return true;
    size_t capacity = b->capacity ? b->capacity : 4096;
    while (capacity < b->length + more)
        capacity *= 2;
    uint8_t *data = realloc(b->data, capacity);
    if (!data) {
        b->failed = true;
        return false;
    }
    b->data = data;
    b->capacity = capacity;
    return true;
}

static size_t varint_size(uint64_t v)
{
    size_t n = 1;
    for (; v >= 0x80; v >>= 7)
        n++;
    return n;
}

/* Into room the caller reserved. */
static uint8_t *encode_varint(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}

static void put_varint(struct proto_buffer *b, uint64_t v)
{
    if (reserve(b, VARINT_MAX))
        b->length = (size_t)(encode_varint(b->data + b->length, v) - b->data);
}

static void put_tag(struct proto_buffer *b, uint32_t field, uint32_t wire)
{
    put_varint(b, (uint64_t)field << 3 | wire);
}

void proto_uint(struct proto_buffer *b, uint32_t field, uint64_t value)
{
    put_tag(b, field, WIRE_VARINT);
    put_varint(b, value);
}

void proto_int(struct proto_buffer *b, uint32_t field, int64_t value)
{
    proto_uint(b, field, (uint64_t)value);
}

void proto_double(struct proto_buffer *b, uint32_t field, double value)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    put_tag(b, field, WIRE_FIXED64);
    if (!reserve(b, 8))
        return;
    for (int i = 0; i < 8; i++) /* little-endian whatever the host */
        b->data[b->length++] = (uint8_t)(bits >> (8 * i));
}

void proto_bytes(struct proto_buffer *b, uint32_t field, const void *data, size_t size)
{
    put_tag(b, field, WIRE_BYTES);
    put_varint(b, size);
    if (size && reserve(b, size)) {
        memcpy(b->data + b->length, data, size);
        b->length += size;
    }
}

void proto_string(struct proto_buffer *b, uint32_t field, const char *text)
{
    proto_bytes(b, field, text, strlen(text));
}

/* One byte is kept for the length, which is what most messages need;
 * a longer message moves up when it closes. */
size_t proto_open(struct proto_buffer *b, uint32_t field)
{
    put_tag(b, field, WIRE_BYTES);
    if (reserve(b, 1))
        b->data[b->length++] = 0;
    return b->length;
}

void proto_close(struct proto_buffer *b, size_t start)
{
    if (b->failed)
        return;
    size_t size = b->length - start, extra = varint_size(size) - 1;
    if (extra) {
        if (!reserve(b, extra))
            return;
        memmove(b->data + start + extra, b->data + start, size);
        b->length += extra;
    }
    encode_varint(b->data + start - 1, size);
}

void proto_free(struct proto_buffer *b)
{
    free(b->data);
    *b = (struct proto_buffer){0};
}
