/* Owns writing a file whole or not at all: where the bytes go, the bounded
 * buffer, and how the file gets its name. */
#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    BUFFER_SIZE = 64 * 1024,
    NAME_ATTEMPTS = 100,      /* names tried before giving up on EEXIST */
    STAGE_SIZE = 1024 * 1024, /* what one O_DIRECT write takes */
    DIRECT_ALIGN = 4096,      /* of the stage's address, and so of its writes */
};

static const char temp_suffix[] = ".tmp.XXXXXX";
static const char name_alphabet[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

const char *atomic_file_strerror(int error)
{
    switch (error) {
    case EINVAL: return "not a regular file, character device or FIFO";
    case ENXIO: return "no process has it open for reading, or no such device";
    default: return strerror(error);
    }
}

/* --- names ---------------------------------------------------------------------- */

/* Replaces the six trailing X-positions of name with random characters.
 * Uniqueness comes from O_EXCL or link's EEXIST; randomness only avoids
 * repeated collisions. */
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

/* The directory part of path ("." when it has none), into dir[PATH_MAX]. */
static bool directory_of(const char *path, char *dir)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return snprintf(dir, PATH_MAX, ".") > 0;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= PATH_MAX)
        return false;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return true;
}

bool atomic_file_same_destination(const char *a, const char *b)
{
    if (!a || !b)
        return false;
    struct stat sa, sb;
    bool has_a = stat(a, &sa) == 0, has_b = stat(b, &sb) == 0;
    if (has_a || has_b)
        return has_a && has_b && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    /* Neither exists yet: the same last component in the same directory. */
    const char *base_a = strrchr(a, '/'), *base_b = strrchr(b, '/');
    base_a = base_a ? base_a + 1 : a;
    base_b = base_b ? base_b + 1 : b;
    char dir_a[PATH_MAX], dir_b[PATH_MAX];
    return strcmp(base_a, base_b) == 0 && directory_of(a, dir_a) && directory_of(b, dir_b) &&
           stat(dir_a, &sa) == 0 && stat(dir_b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* --- writing ------------------------------------------------------------------- */

/* A write to a FIFO or pipe whose reader has gone raises SIGPIPE, which
 * would end the host program: the signal is blocked around the write and a
 * SIGPIPE this write caused is taken back, so the write just fails (EPIPE). */
static ssize_t write_without_sigpipe(int fd, const char *data, size_t size)
{
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigpending(&pending);
    bool was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    ssize_t n = write(fd, data, size);
    int error = errno;
    if (n < 0 && error == EPIPE && !was_pending) {
        const struct timespec now = {0, 0};
        while (sigtimedwait(&pipe_only, NULL, &now) < 0 && errno == EINTR)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = error;
    return n;
}

/* All of data at the file's offset, or a recorded error. */
static void write_all(struct atomic_file *f, const char *data, size_t size)
{
    size_t done = 0;
    while (done < size && !f->error) {
        ssize_t n = f->mode == ATOMIC_FILE_DIRECT
                        ? write_without_sigpipe(f->fd, data + done, size - done)
                        : write(f->fd, data + done, size - done);
        if (n > 0)
            done += (size_t)n;
        else if (n == 0 || errno != EINTR)
            f->error = n == 0 ? EIO : errno;
    }
}

/*
 * A temporary file is written with O_DIRECT where its file system allows
 * it: the bytes go from the stage to the disk, without the page cache. A
 * buffered write costs the kernel about five times as much CPU per byte
 * (page allocation, the copy, then writeback at the commit's fsync), and a
 * report writes hundreds of megabytes. The disk's work is the same, since
 * the commit syncs the file anyway; it is just done along the way instead
 * of at the end. Whole stages go out this way, their addresses and offsets
 * aligned; the last, partial one is written after O_DIRECT is turned off.
 * A file system that refuses a direct write turns it off for good.
 */
static void end_direct(struct atomic_file *f)
{
    int flags = fcntl(f->fd, F_GETFL);
    if (flags >= 0)
        fcntl(f->fd, F_SETFL, flags & ~O_DIRECT);
    f->direct = false;
}

static void write_stage(struct atomic_file *f)
{
    size_t done = 0;
    while (f->direct && f->staged == STAGE_SIZE && !f->error) {
        ssize_t n = write(f->fd, f->stage, f->staged);
        if (n == (ssize_t)f->staged) {
            f->staged = 0;
            return;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno != EINVAL)
            f->error = errno;
        done = n > 0 ? (size_t)n : 0; /* a short write: the rest buffered */
        break;
    }
    end_direct(f);
    write_all(f, f->stage + done, f->staged - done);
    f->staged = 0;
}

/* The stream's write function: everything or a recorded error. */
static ssize_t cookie_write(void *cookie, const char *data, size_t size)
{
    struct atomic_file *f = cookie;
    if (!f->direct) {
        write_all(f, data, size);
        return f->error ? 0 : (ssize_t)size;
    }
    size_t done = 0;
    while (done < size && !f->error) {
        if (!f->direct) { /* refused on the way: the stage is out, the rest follows it */
            write_all(f, data + done, size - done);
            return f->error ? (ssize_t)done : (ssize_t)size;
        }
        size_t n = size - done < STAGE_SIZE - f->staged ? size - done : STAGE_SIZE - f->staged;
        memcpy(f->stage + f->staged, data + done, n);
        f->staged += n;
        done += n;
        if (f->staged == STAGE_SIZE)
            write_stage(f);
    }
    return (ssize_t)done;
}

bool atomic_file_write_aligned(struct atomic_file *f, const char *data, size_t size)
{
    if (!f->direct || (uintptr_t)data % DIRECT_ALIGN || size % DIRECT_ALIGN)
        return false;
    if (fflush(f->stream) != 0 || f->staged || f->error)
        return false; /* earlier bytes wait in the stage: they go first */
    size_t done = 0;
    while (done < size && f->direct && !f->error) {
        ssize_t n = write(f->fd, data + done, size - done);
        if (n > 0 && (size_t)n % DIRECT_ALIGN == 0) {
            done += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            if (n < 0 && errno != EINVAL)
                f->error = errno;
            done += n > 0 ? (size_t)n : 0;
            end_direct(f); /* refused, or a short write: the rest buffered */
        }
    }
    write_all(f, data + done, size - done);
    return true;
}

/* A temporary file's stage, and O_DIRECT on, when its file system takes it. */
static void try_direct(struct atomic_file *f)
{
    int flags = fcntl(f->fd, F_GETFL);
    if (flags < 0 || posix_memalign((void **)&f->stage, DIRECT_ALIGN, STAGE_SIZE) != 0) {
        f->stage = NULL;
        return;
    }
    if (fcntl(f->fd, F_SETFL, flags | O_DIRECT) != 0) {
        free(f->stage);
        f->stage = NULL;
        return;
    }
    f->direct = true;
}

static int cookie_close(void *cookie)
{
    struct atomic_file *f = cookie;
    int r = close(f->fd);
    f->fd = -1;
    if (r != 0 && errno != EINTR && !f->error)
        f->error = errno;
    return f->error ? -1 : 0;
}

static tally_status attach_stream(struct atomic_file *f)
{
    f->stream =
        fopencookie(f, "w", (cookie_io_functions_t){.write = cookie_write, .close = cookie_close});
    if (!f->stream || setvbuf(f->stream, f->buffer, _IOFBF, BUFFER_SIZE) != 0) {
        int error = f->stream ? EIO : ENOMEM;
        if (f->stream)
            fclose(f->stream);
        else
            close(f->fd);
        f->stream = NULL;
        errno = error;
        return error == ENOMEM ? TALLY_ERROR_OUT_OF_MEMORY : TALLY_ERROR_IO;
    }
    return TALLY_OK;
}

/* --- opening ------------------------------------------------------------------- */

/* A device or FIFO is opened as it is. O_NONBLOCK makes opening a FIFO that
 * no process reads fail (ENXIO) instead of waiting for a reader forever;
 * writes then block as usual. */
static tally_status open_direct(struct atomic_file *f)
{
    f->fd = open(f->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f->fd < 0)
        return TALLY_ERROR_IO;
    int flags = fcntl(f->fd, F_GETFL);
    if (flags < 0 || fcntl(f->fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
        int error = errno;
        close(f->fd);
        errno = error;
        return TALLY_ERROR_IO;
    }
    f->mode = ATOMIC_FILE_DIRECT;
    return TALLY_OK;
}

/* An unnamed file in the destination's directory, if the file system has
 * them and /proc can name it for linkat later. Returns false, with errno,
 * only for errors that a named temporary file would hit too. */
static bool open_unnamed(struct atomic_file *f, bool *unsupported)
{
    char dir[PATH_MAX];
    *unsupported = true;
    if (!directory_of(f->path, dir) || access("/proc/self/fd", X_OK) != 0)
        return false;
    f->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (f->fd >= 0) {
        f->mode = ATOMIC_FILE_UNNAMED;
        return true;
    }
    *unsupported = errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL;
    return false;
}

/* The named temporary file, with the usual 0666 & ~umask permissions. */
static tally_status open_named(struct atomic_file *f)
{
    for (unsigned attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        randomize_name(f->temp_path, attempt);
        f->fd = open(f->temp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (f->fd >= 0) {
            f->mode = ATOMIC_FILE_NAMED;
            return TALLY_OK;
        }
        if (errno != EEXIST)
            return errno == ENOMEM ? TALLY_ERROR_OUT_OF_MEMORY : TALLY_ERROR_IO;
    }
    return TALLY_ERROR_IO;
}

/* Where the bytes go, by what the destination is now. */
static tally_status open_destination(struct atomic_file *f)
{
    struct stat st;
    if (stat(f->path, &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
            return open_direct(f);
        if (!S_ISREG(st.st_mode)) {
            errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
            return TALLY_ERROR_IO;
        }
    } else if (errno != ENOENT) {
        return TALLY_ERROR_IO; /* a directory on the way cannot be searched, ... */
    }
    bool unsupported;
    if (open_unnamed(f, &unsupported))
        return TALLY_OK;
    return unsupported ? open_named(f) : TALLY_ERROR_IO;
}

static void release(struct atomic_file *f)
{
    int error = errno;
    free(f->path);
    free(f->temp_path);
    free(f->buffer);
    free(f->stage);
    *f = (struct atomic_file){.fd = -1};
    errno = error;
}

tally_status atomic_file_open(struct atomic_file *f, const char *path)
{
    if (!f)
        return TALLY_ERROR_INVALID_ARGUMENT;
    *f = (struct atomic_file){.fd = -1};
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
    tally_status status = open_destination(f);
    if (status == TALLY_OK && f->mode != ATOMIC_FILE_DIRECT)
        try_direct(f);
    if (status == TALLY_OK && (status = attach_stream(f)) != TALLY_OK &&
        f->mode == ATOMIC_FILE_NAMED)
        unlink(f->temp_path);
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
    if (!ferror(f->stream) && !f->error)
        return false;
    errno = f->error ? f->error : EIO;
    return true;
}

/* --- committing ---------------------------------------------------------------- */

/* Gives the unnamed file the destination's name. link cannot replace a
 * name, so over an existing file it links a temporary name and renames that
 * over the destination (a kill between the two leaves that name behind). */
static bool link_unnamed(struct atomic_file *f)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, f->path, AT_SYMLINK_FOLLOW) == 0)
        return true;
    if (errno != EEXIST)
        return false;
    for (unsigned attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        randomize_name(f->temp_path, attempt);
        if (linkat(AT_FDCWD, proc, AT_FDCWD, f->temp_path, AT_SYMLINK_FOLLOW) == 0) {
            if (rename(f->temp_path, f->path) == 0)
                return true;
            int error = errno;
            unlink(f->temp_path);
            errno = error;
            return false;
        }
        if (errno != EEXIST)
            return false;
    }
    return false;
}

/* Flushed, and on a regular file synced, so the name never points at a
 * file whose data is not on disk yet. */
static bool flush_and_sync(struct atomic_file *f)
{
    if (fflush(f->stream) == 0 && f->stage && !f->error) {
        end_direct(f); /* the last stage is partial */
        write_all(f, f->stage, f->staged);
        f->staged = 0;
    }
    if (fflush(f->stream) != 0 || f->error || ferror(f->stream)) {
        errno = f->error ? f->error : EIO;
        return false;
    }
    if (f->mode != ATOMIC_FILE_DIRECT && fsync(f->fd) != 0)
        return false;
    return true;
}

tally_status atomic_file_commit(struct atomic_file *f)
{
    if (!f->stream)
        return TALLY_ERROR_INVALID_STATE;
    bool ok = flush_and_sync(f);
    if (ok && f->mode == ATOMIC_FILE_UNNAMED)
        ok = link_unnamed(f);
    int error = ok ? 0 : errno;
    bool closed = fclose(f->stream) == 0; /* closes even when already failed */
    if (ok && !closed)
        error = f->error ? f->error : EIO;
    f->stream = NULL;
    ok = ok && closed;
    if (ok && f->mode == ATOMIC_FILE_NAMED && rename(f->temp_path, f->path) != 0) {
        ok = false;
        error = errno;
    }
    if (!ok && f->mode == ATOMIC_FILE_NAMED)
        unlink(f->temp_path);
    errno = error;
    release(f);
    return ok ? TALLY_OK : TALLY_ERROR_IO;
}

void atomic_file_abort(struct atomic_file *f)
{
    if (f->stream) {
        fclose(f->stream);
        if (f->mode == ATOMIC_FILE_NAMED)
            unlink(f->temp_path);
    }
    release(f);
}
