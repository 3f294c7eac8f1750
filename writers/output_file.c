/* Owns writing tally's output files, whole or live: where the bytes go, the
 * bounded buffer, and how the file gets its name. */
#include "output_file.h"

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
    NAME_ATTEMPTS = 100, /* names tried before giving up on EEXIST */
};

/* Short and of a fixed length, so that a temporary name fits wherever the
 * destination's name does, however long that is. */
static const char temp_template[] = "tally-XXXXXXXXXX.tmp";
enum { TEMP_RANDOM_AT = 6, TEMP_RANDOM_LENGTH = 10 };
_Static_assert(sizeof temp_template == OUTPUT_FILE_TEMP_NAME_SIZE, "the field holds the name");
static const char name_alphabet[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

const char *output_file_strerror(int error)
{
    switch (error) {
    case EINVAL: return "not a regular file, character device or FIFO";
    case ENXIO: return "no process has it open for reading, or no such device";
    case ESTALE: return "it changed while it was being opened";
    default: return strerror(error);
    }
}

/* --- names ---------------------------------------------------------------------- */

/* A new temporary name: the template with random characters for its X's.
 * Uniqueness comes from O_EXCL or link's EEXIST; randomness only avoids
 * repeated collisions. */
static void new_temp_name(char *name, unsigned attempt)
{
    unsigned char bytes[TEMP_RANDOM_LENGTH];
    if (getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != (ssize_t)sizeof bytes) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t mix = (uint64_t)now.tv_nsec ^ ((uint64_t)getpid() << 20) ^ attempt;
        for (size_t i = 0; i < sizeof bytes; i++, mix = mix * 6364136223846793005u + 1)
            bytes[i] = (unsigned char)(mix >> 56);
    }
    memcpy(name, temp_template, sizeof temp_template);
    for (size_t i = 0; i < sizeof bytes; i++)
        name[TEMP_RANDOM_AT + i] = name_alphabet[bytes[i] % (sizeof name_alphabet - 1)];
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

bool output_file_same_destination(const char *a, const char *b)
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
static void write_all(struct output_file *f, const char *data, size_t size)
{
    size_t done = 0;
    while (done < size && !f->error) {
        ssize_t n = f->mode == OUTPUT_FILE_DIRECT
                        ? write_without_sigpipe(f->fd, data + done, size - done)
                        : write(f->fd, data + done, size - done);
        if (n > 0)
            done += (size_t)n;
        else if (n == 0 || errno != EINTR)
            f->error = n == 0 ? EIO : errno;
    }
}

/* The stream's write function: everything or a recorded error. */
static ssize_t cookie_write(void *cookie, const char *data, size_t size)
{
    struct output_file *f = cookie;
    write_all(f, data, size);
    return f->error ? 0 : (ssize_t)size;
}

static int cookie_close(void *cookie)
{
    struct output_file *f = cookie;
    int r = close(f->fd);
    f->fd = -1;
    if (r != 0 && errno != EINTR && !f->error)
        f->error = errno;
    return f->error ? -1 : 0;
}

/* The stream over f->fd; on failure f->fd stays open for the caller. */
static tally_status attach_stream(struct output_file *f)
{
    f->stream =
        fopencookie(f, "w", (cookie_io_functions_t){.write = cookie_write, .close = cookie_close});
    if (!f->stream) {
        errno = ENOMEM;
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    if (setvbuf(f->stream, f->buffer, _IOFBF, BUFFER_SIZE) != 0) {
        errno = EIO;
        return TALLY_ERROR_IO;
    }
    return TALLY_OK;
}

/* --- opening ------------------------------------------------------------------- */

static tally_status io_error(void)
{
    return errno == ENOMEM ? TALLY_ERROR_OUT_OF_MEMORY : TALLY_ERROR_IO;
}

/* The object that the lookup found (found: an O_PATH descriptor of it,
 * checked: what fstat said of it), opened with `flags` into f->fd: through
 * /proc, which reopens that very object whatever its name points at by now,
 * or, where /proc is not mounted, by its name again, kept only if that is
 * still the object checked. */
static tally_status reopen_checked(struct output_file *f, int found, const struct stat *checked,
                                   int flags)
{
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", found);
    f->fd = open(proc, flags);
    if (f->fd < 0 && errno == ENOENT && access("/proc/self/fd", X_OK) != 0) {
        f->fd = openat(f->directory, f->name, flags);
        struct stat opened;
        if (f->fd >= 0 && (fstat(f->fd, &opened) != 0 || opened.st_dev != checked->st_dev ||
                           opened.st_ino != checked->st_ino)) {
            close(f->fd);
            f->fd = -1;
            errno = ESTALE;
        }
    }
    return f->fd < 0 ? io_error() : TALLY_OK;
}

/* The device or FIFO that the lookup found, opened for writing. O_NONBLOCK
 * makes opening a FIFO that no process reads fail (ENXIO) instead of
 * waiting for a reader forever; writes then block as usual. */
static tally_status open_direct(struct output_file *f, int found, const struct stat *checked)
{
    if (reopen_checked(f, found, checked, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) != TALLY_OK)
        return io_error();
    int flags = fcntl(f->fd, F_GETFL);
    if (flags < 0 || fcntl(f->fd, F_SETFL, flags & ~O_NONBLOCK) < 0)
        return TALLY_ERROR_IO;
    f->mode = OUTPUT_FILE_DIRECT;
    close(f->directory); /* only a file to be named needs it */
    f->directory = -1;
    return TALLY_OK;
}

/* The regular file that the lookup found, emptied and written in place: its
 * inode, and so its owner and permission bits, stay. */
static tally_status open_in_place(struct output_file *f, int found, const struct stat *checked)
{
    if (reopen_checked(f, found, checked, O_WRONLY | O_NOCTTY | O_CLOEXEC) != TALLY_OK)
        return io_error();
    if (ftruncate(f->fd, 0) != 0)
        return TALLY_ERROR_IO;
    f->mode = OUTPUT_FILE_IN_PLACE;
    return TALLY_OK;
}

/* A new file at the destination's name, with the usual 0666 & ~umask
 * permissions. Exclusive, so a link put there since the lookup is never
 * followed: the open fails instead (EEXIST). */
static tally_status create_in_place(struct output_file *f)
{
    enum { CREATING = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC };
    f->fd = openat(f->directory, f->name, CREATING, 0666);
    /* A dangling symlink the user named is replaced by the file, as a whole
     * file would replace it, rather than followed into another directory. */
    struct stat link;
    if (f->fd < 0 && errno == EEXIST &&
        fstatat(f->directory, f->name, &link, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(link.st_mode) &&
        unlinkat(f->directory, f->name, 0) == 0)
        f->fd = openat(f->directory, f->name, CREATING, 0666);
    if (f->fd < 0)
        return io_error();
    f->mode = OUTPUT_FILE_IN_PLACE;
    f->created = true;
    return TALLY_OK;
}

/* A new file in the destination's directory, with the usual 0666 & ~umask
 * permissions: unnamed (O_TMPFILE) if the file system has them and /proc
 * can name it for linkat later, else under a temporary name. */
static tally_status open_temporary(struct output_file *f)
{
    if (access("/proc/self/fd", X_OK) == 0) {
        f->fd = openat(f->directory, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        if (f->fd >= 0) {
            f->mode = OUTPUT_FILE_UNNAMED;
            return TALLY_OK;
        }
        if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
            return io_error(); /* what a named file would meet too */
    }
    for (unsigned attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        new_temp_name(f->temp_name, attempt);
        f->fd = openat(f->directory, f->temp_name,
                       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (f->fd >= 0) {
            f->mode = OUTPUT_FILE_NAMED;
            return TALLY_OK;
        }
        if (errno != EEXIST)
            return io_error();
    }
    return TALLY_ERROR_IO;
}

/* A file that replaces an existing one (old) gets its permission bits, and
 * its owner and group where this process may give them (root may; another
 * user may give a group of its own), as a shell redirection into it would
 * keep them: a private report stays private. Done before anything is
 * written. */
static tally_status keep_owner_and_mode(struct output_file *f, const struct stat *old)
{
    struct stat now;
    if (fstat(f->fd, &now) != 0)
        return TALLY_ERROR_IO;
    if (now.st_uid != old->st_uid || now.st_gid != old->st_gid) {
        bool kept = fchown(f->fd, old->st_uid, old->st_gid) == 0 ||
                    fchown(f->fd, (uid_t)-1, old->st_gid) == 0;
        (void)kept; /* not ours to give: the file is this user's, with the old bits */
    }
    mode_t bits = old->st_mode & 0777;
    if ((now.st_mode & 07777) != bits && fchmod(f->fd, bits) != 0)
        return TALLY_ERROR_IO;
    return TALLY_OK;
}

/* Looks the destination up once, and decides by what that found: the
 * object checked is the object written, or a new file replaces it. */
static tally_status open_destination(struct output_file *f, const char *path,
                                     enum output_file_kind kind)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    char dir[PATH_MAX];
    if (!*name) {
        errno = EISDIR; /* "dir/" names a directory, as a shell's redirection says */
        return TALLY_ERROR_IO;
    }
    if (!directory_of(path, dir)) {
        errno = ENAMETOOLONG;
        return TALLY_ERROR_IO;
    }
    if (!(f->name = strdup(name))) {
        errno = ENOMEM;
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    f->directory = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (f->directory < 0)
        return TALLY_ERROR_IO;
    /* Follows a symlink at the name, which the user named. Nothing after
     * this looks the name up again, but reopen_checked without /proc, which
     * then checks that it opened the same object. */
    int found = openat(f->directory, f->name, O_PATH | O_CLOEXEC);
    bool live = kind == OUTPUT_FILE_LIVE;
    if (found < 0 && errno == ENOENT) /* no file, or a symlink to none */
        return live ? create_in_place(f) : open_temporary(f);
    if (found < 0)
        return io_error();
    struct stat st;
    tally_status status = TALLY_ERROR_IO;
    if (fstat(found, &st) == 0) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
            status = open_direct(f, found, &st);
        else if (S_ISREG(st.st_mode) && live)
            status = open_in_place(f, found, &st);
        else if (S_ISREG(st.st_mode) && (status = open_temporary(f)) == TALLY_OK)
            status = keep_owner_and_mode(f, &st);
        else if (!S_ISREG(st.st_mode))
            errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    }
    int error = errno;
    close(found);
    errno = error;
    return status;
}

/* Closes and discards what open made: the stream or its descriptor, and a
 * temporary name. The destination is untouched; errno is kept. */
static void discard(struct output_file *f)
{
    int error = errno;
    if (f->stream)
        fclose(f->stream); /* closes f->fd */
    else if (f->fd >= 0)
        close(f->fd);
    f->stream = NULL;
    f->fd = -1;
    if (f->mode == OUTPUT_FILE_NAMED)
        unlinkat(f->directory, f->temp_name, 0);
    else if (f->created)
        unlinkat(f->directory, f->name, 0);
    errno = error;
}

/* Frees what open allocated and closes the directory; errno is kept. */
static void release(struct output_file *f)
{
    int error = errno;
    if (f->directory >= 0)
        close(f->directory);
    free(f->name);
    free(f->buffer);
    *f = (struct output_file){.fd = -1, .directory = -1};
    errno = error;
}

tally_status output_file_open(struct output_file *f, const char *path, enum output_file_kind kind)
{
    if (!f)
        return TALLY_ERROR_INVALID_ARGUMENT;
    *f = (struct output_file){.fd = -1, .directory = -1};
    if (!path || !*path)
        return TALLY_ERROR_INVALID_ARGUMENT;
    if (!(f->buffer = malloc(BUFFER_SIZE))) {
        errno = ENOMEM;
        return TALLY_ERROR_OUT_OF_MEMORY;
    }
    tally_status status = open_destination(f, path, kind);
    if (status == TALLY_OK)
        status = attach_stream(f);
    if (status != TALLY_OK) {
        discard(f);
        release(f);
    }
    f->created = false; /* from here on, a live file keeps what reached it */
    return status;
}

FILE *output_file_stream(struct output_file *f)
{
    return f->stream;
}

bool output_file_failed(struct output_file *f)
{
    if (!ferror(f->stream) && !f->error)
        return false;
    errno = f->error ? f->error : EIO;
    return true;
}

tally_status output_file_flush(struct output_file *f)
{
    if (!f->stream)
        return TALLY_ERROR_INVALID_STATE;
    if (fflush(f->stream) != 0 || output_file_failed(f))
        return TALLY_ERROR_IO;
    return TALLY_OK;
}

/* --- committing ---------------------------------------------------------------- */

/* Gives the unnamed file the destination's name. link cannot replace a
 * name, so over an existing file it links a temporary name and renames that
 * over the destination (a kill between the two leaves that name behind). */
static bool link_unnamed(struct output_file *f)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", f->fd);
    if (linkat(AT_FDCWD, proc, f->directory, f->name, AT_SYMLINK_FOLLOW) == 0)
        return true;
    if (errno != EEXIST)
        return false;
    for (unsigned attempt = 0; attempt < NAME_ATTEMPTS; attempt++) {
        new_temp_name(f->temp_name, attempt);
        if (linkat(AT_FDCWD, proc, f->directory, f->temp_name, AT_SYMLINK_FOLLOW) == 0) {
            if (renameat(f->directory, f->temp_name, f->directory, f->name) == 0)
                return true;
            int error = errno;
            unlinkat(f->directory, f->temp_name, 0);
            errno = error;
            return false;
        }
        if (errno != EEXIST)
            return false;
    }
    return false;
}

/* Flushed, and a file to be named synced, so the name never points at a
 * file whose data is not on disk yet. */
static bool flush_and_sync(struct output_file *f)
{
    if (fflush(f->stream) != 0 || f->error || ferror(f->stream)) {
        errno = f->error ? f->error : EIO;
        return false;
    }
    bool named_at_commit = f->mode == OUTPUT_FILE_UNNAMED || f->mode == OUTPUT_FILE_NAMED;
    return !named_at_commit || fsync(f->fd) == 0;
}

tally_status output_file_commit(struct output_file *f)
{
    if (!f->stream)
        return TALLY_ERROR_INVALID_STATE;
    bool ok = flush_and_sync(f);
    if (ok && f->mode == OUTPUT_FILE_UNNAMED)
        ok = link_unnamed(f);
    int error = ok ? 0 : errno;
    bool closed = fclose(f->stream) == 0; /* closes even when already failed */
    if (ok && !closed)
        error = f->error ? f->error : EIO;
    f->stream = NULL;
    ok = ok && closed;
    if (ok && f->mode == OUTPUT_FILE_NAMED &&
        renameat(f->directory, f->temp_name, f->directory, f->name) != 0) {
        ok = false;
        error = errno;
    }
    errno = error;
    if (!ok)
        discard(f);
    release(f);
    return ok ? TALLY_OK : TALLY_ERROR_IO;
}

void output_file_abort(struct output_file *f)
{
    if (!f->stream)
        return; /* not open: it failed to open, or was committed or aborted */
    discard(f);
    release(f);
}
