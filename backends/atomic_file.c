/* Owns writing a file atomically: temporary file, bounded buffer, rename. */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

enum {
    BUFFER_SIZE = 64 * 1024,
    NAME_ATTEMPTS = 100, /* names tried before giving up on EEXIST */
};

static const char temp_suffix[] = ".tmp.XXXXXX";
static const char name_alphabet[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/* Replaces the six trailing X-positions of name with random characters.
 * Uniqueness comes from O_EXCL; randomness only avoids repeated collisions. */
static void randomize_name(char *name, unsigned attempt) {
    unsigned char bytes[6];
    if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t mix = (uint64_t)now.tv_nsec ^ ((uint64_t)getpid() << 20) ^ attempt;
        for (size_t i = 0; i < sizeof bytes; i++, mix = mix * 6364136223846793005u + 1)
            bytes[i] = (unsigned char)(mix >> 56);
    }
    char *x = name + strlen(name) - sizeof bytes;
    for (size_t i = 0; i < sizeof bytes; i++)
        x[i] = name_alphabet[bytes[i] % (sizeof name_alphabet - 1)];
}

/* Creates the temporary file with the usual 0666 & ~umask permissions. */
static tally_status create_temp(char *temp_path, int *fd) {
    for (unsigned attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        randomize_name(temp_path, attempt);
        *fd = open(temp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (*fd >= 0)
            return TALLY_OK;
        if (errno != EEXIST)
            return errno == ENOMEM ? TALLY_ERROR_OUT_OF_MEMORY : TALLY_ERROR_IO;
    }
    return TALLY_ERROR_IO;
}

static void release(struct atomic_file *f) {
    free(f->path);
    free(f->temp_path);
    free(f->buffer);
    *f = (struct atomic_file){0};
}

static tally_status open_stream(struct atomic_file *f) {
    int fd;
    tally_status status = create_temp(f->temp_path, &fd);
    if (status != TALLY_OK)
        return status;
    f->stream = fdopen(fd, "w");
    if (!f->stream) {
        close(fd);
        unlink(f->temp_path);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    if (setvbuf(f->stream, f->buffer, _IOFBF, BUFFER_SIZE) != 0) {
        fclose(f->stream);
        f->stream = NULL;
        unlink(f->temp_path);
        return TALLY_ERROR_IO;
    }
    return TALLY_OK;
}

tally_status atomic_file_open(struct atomic_file *f, const char *path) {
    if (!f)
        return TALLY_ERROR_INVALID_ARGUMENT;
    *f = (struct atomic_file){0};
    if (!path || !*path)
        return TALLY_ERROR_INVALID_ARGUMENT;
    size_t length = strlen(path);
    f->path = strdup(path);
    f->temp_path = malloc(length + sizeof temp_suffix);
    f->buffer = malloc(BUFFER_SIZE);
    if (!f->path || !f->temp_path || !f->buffer) {
        release(f);
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    memcpy(f->temp_path, path, length);
    memcpy(f->temp_path + length, temp_suffix, sizeof temp_suffix);
    tally_status status = open_stream(f);
    if (status != TALLY_OK)
        release(f);
    return status;
}

FILE *atomic_file_stream(struct atomic_file *f) {
    return f->stream;
}

bool atomic_file_failed(struct atomic_file *f) {
    return ferror(f->stream) != 0;
}

tally_status atomic_file_commit(struct atomic_file *f) {
    if (!f->stream)
        return TALLY_ERROR_INVALID_STATE;
    bool ok = fflush(f->stream) == 0 && !ferror(f->stream) && fsync(fileno(f->stream)) == 0;
    ok = fclose(f->stream) == 0 && ok; /* closes even when already failed */
    f->stream = NULL;
    ok = ok && rename(f->temp_path, f->path) == 0;
    if (!ok)
        unlink(f->temp_path);
    release(f);
    return ok ? TALLY_OK : TALLY_ERROR_IO;
}

void atomic_file_abort(struct atomic_file *f) {
    if (f->stream) {
        fclose(f->stream);
        unlink(f->temp_path);
    }
    release(f);
}

/* Characters of "%.17g" output other than the locale's decimal point. */
static bool is_number_char(char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e';
}

/*
 * snprintf follows LC_NUMERIC, whose decimal point may be ',' or even
 * several bytes; "%g" never groups thousands, so everything in the output
 * that is not a digit, sign or exponent is the decimal point. It is replaced
 * by '.', which keeps this thread-safe without touching the locale.
 */
void atomic_file_format_f64(double v, char out[ATOMIC_FILE_F64_SIZE]) {
    if (!isfinite(v)) {
        strcpy(out, isnan(v) ? "nan" : v < 0 ? "-inf" : "inf");
        return;
    }
    char raw[64];
    snprintf(raw, sizeof raw, "%.17g", v);
    size_t n = 0;
    for (const char *c = raw; *c && n < ATOMIC_FILE_F64_SIZE - 1;) {
        if (is_number_char(*c)) {
            out[n++] = *c++;
            continue;
        }
        out[n++] = '.';
        while (*c && !is_number_char(*c))
            c++;
    }
    out[n] = '\0';
}

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not one:
 * overlong forms, surrogates and code points past U+10FFFF are not. Stops at
 * the first byte that is not a continuation, so it never reads past a NUL. */
static size_t utf8_sequence_length(const unsigned char *s) {
    if (s[0] < 0x80)
        return 1;
    size_t n;
    uint32_t cp, min;
    if ((s[0] & 0xe0) == 0xc0) {
        n = 2, cp = s[0] & 0x1fu, min = 0x80;
    } else if ((s[0] & 0xf0) == 0xe0) {
        n = 3, cp = s[0] & 0x0fu, min = 0x800;
    } else if ((s[0] & 0xf8) == 0xf0) {
        n = 4, cp = s[0] & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    bool valid = cp >= min && cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff);
    return valid ? n : 0;
}

/* Bytes at s that go into a JSON string as they are. */
static size_t plain_run(const unsigned char *s) {
    size_t run = 0;
    for (;;) {
        unsigned char c = s[run];
        if (c < 0x20 || c == '"' || c == '\\')
            return run;
        size_t n = utf8_sequence_length(s + run);
        if (n == 0)
            return run;
        run += n;
    }
}

/* Writes the escape for the byte at *s and steps over it. */
static void put_escape(FILE *out, const unsigned char **s) {
    unsigned char c = **s;
    (*s)++;
    switch (c) {
    case '"': fputs("\\\"", out); return;
    case '\\': fputs("\\\\", out); return;
    case '\b': fputs("\\b", out); return;
    case '\f': fputs("\\f", out); return;
    case '\n': fputs("\\n", out); return;
    case '\r': fputs("\\r", out); return;
    case '\t': fputs("\\t", out); return;
    default: break;
    }
    if (c < 0x20)
        fprintf(out, "\\u%04x", c);
    else
        fputs("\\ufffd", out); /* a byte that is not UTF-8 */
}

void atomic_file_put_json_string(struct atomic_file *f, const char *s) {
    FILE *out = f->stream;
    const unsigned char *p = (const unsigned char *)s;
    putc('"', out);
    while (*p) {
        size_t run = plain_run(p);
        fwrite(p, 1, run, out);
        p += run;
        if (*p)
            put_escape(out, &p);
    }
    putc('"', out);
}
