/*
 * Text from outside the program (the environment, the command line, file
 * names) made safe to show on a terminal: control characters (C0, DEL, C1)
 * and bytes that are not UTF-8 are written as \xNN, so a value cannot move
 * the cursor, retitle the window or clear the screen of whoever reads the
 * log. Valid UTF-8 text is kept as it is.
 */
#include <stdio.h>
#include <string.h>

#include "engine.h"

/* The length of the valid UTF-8 sequence at text (1 to 4), its code point
 * in *point; 0 for a byte that begins none. */
static size_t utf8_sequence(const unsigned char *text, uint32_t *point)
{
    static const struct {
        unsigned char lead_mask, lead, length;
        uint32_t smallest;
    } forms[] = {{0x80, 0x00, 1, 0},
                 {0xe0, 0xc0, 2, 0x80},
                 {0xf0, 0xe0, 3, 0x800},
                 {0xf8, 0xf0, 4, 0x10000}};
    for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
        if ((text[0] & forms[f].lead_mask) != forms[f].lead)
            continue;
        uint32_t cp = text[0] & (unsigned char)~forms[f].lead_mask;
        for (size_t i = 1; i < forms[f].length; i++) {
            if ((text[i] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (text[i] & 0x3f);
        }
        /* Overlong forms, surrogates and values past Unicode are not text. */
        if (cp < forms[f].smallest || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
            return 0;
        *point = cp;
        return forms[f].length;
    }
    return 0;
}

/* C0 and C1 controls and DEL: what a terminal may act on instead of showing. */
static bool control_point(uint32_t point)
{
    return point < 0x20 || (point >= 0x7f && point <= 0x9f);
}

size_t tally_escape_controls(char *out, size_t size, const char *text, size_t most)
{
    const unsigned char *in = (const unsigned char *)text;
    size_t used = 0, read = 0;
    while (in[read] && read < most) {
        uint32_t point = 0;
        size_t n = utf8_sequence(in + read, &point);
        char piece[16];
        size_t length;
        if (n && !control_point(point)) {
            memcpy(piece, in + read, n);
            length = n;
        } else {
            /* Each byte of a control's encoding, or the byte that is not text. */
            size_t bytes = n ? n : 1;
            length = 0;
            for (size_t i = 0; i < bytes; i++)
                length += (size_t)snprintf(piece + length, sizeof(piece) - length, "\\x%02x",
                                           in[read + i]);
            n = bytes;
        }
        if (used + length >= size)
            break;
        memcpy(out + used, piece, length);
        used += length;
        read += n;
    }
    if (size)
        out[used] = '\0';
    return read;
}

const char *tally_quote(char *out, size_t size, const char *text)
{
    if (size < 8)
        return size ? (out[0] = '\0', out) : out;
    out[0] = '"';
    size_t read = tally_escape_controls(out + 1, size - 5, text, SIZE_MAX);
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s\"", text[read] ? "..." : "");
    return out;
}

void tally_escape_text(char *out, size_t size, const char *text)
{
    if (out && size)
        tally_escape_controls(out, size, text ? text : "", SIZE_MAX);
}
