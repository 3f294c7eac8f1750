/* Owns writing a file atomically: temporary file, bounded buffer, rename. */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
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
static void randomize_name(char *name, unsigned attempt)
{
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
static tally_status create_temp(char *temp_path, int *fd)
{
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

static void release(struct atomic_file *f)
{
    free(f->path);
    free(f->temp_path);
    free(f->buffer);
    *f = (struct atomic_file){0};
}

static tally_status open_stream(struct atomic_file *f)
{
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

tally_status atomic_file_open(struct atomic_file *f, const char *path)
{
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

FILE *atomic_file_stream(struct atomic_file *f)
{
    return f->stream;
}

bool atomic_file_failed(struct atomic_file *f)
{
    return ferror(f->stream) != 0;
}

tally_status atomic_file_commit(struct atomic_file *f)
{
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

void atomic_file_abort(struct atomic_file *f)
{
    if (f->stream) {
        fclose(f->stream);
        unlink(f->temp_path);
    }
    release(f);
}
