/*
 * An output file of tally's: written whole (OUTPUT_FILE_WHOLE), so that it
 * is there complete or not at all, or live (OUTPUT_FILE_LIVE), so that what
 * was written is in the file as it goes and a killed program leaves every
 * byte written before the kill.
 *
 * The destination is looked up once, when the file opens, and what that
 * lookup found decides, so a link changed between a check and a write
 * cannot turn one into a write elsewhere: the object written is the object
 * that was checked, or a new file.
 *
 * Live, a regular destination is written in place: an existing file is
 * truncated and keeps its inode, and so its owner and permission bits, as a
 * shell redirection into it would; a destination that does not exist is
 * created (exclusively, so a link that appears meanwhile is never followed).
 * `tail -f` follows it, and a reader may see the file grow.
 *
 * Whole, a regular destination (or one that does not exist yet) is written
 * into an unnamed file in its directory (O_TMPFILE), which is given the
 * destination's name when committed: a reader sees no file or a whole one,
 * and a process killed before the commit leaves nothing behind. Where the
 * file system has no O_TMPFILE (or /proc is not mounted), a named temporary
 * file "tally-XXXXXXXXXX.tmp" in the same directory stands in, created
 * exclusively so it never follows a symlink; only then can a killed process
 * leave one behind. The temporary name is short, so any destination name
 * the file system takes works. Either way the destination's name is
 * replaced, not written through: a symlink there is replaced by the file.
 * A file that replaces an existing regular file gets its permission bits
 * and, where this process may give them, its owner and group, as a shell
 * redirection into it would keep them.
 *
 * A destination that is a character device or a FIFO (/dev/null,
 * /dev/stdout, a named pipe), also through a symlink, is written into
 * directly, as a shell redirection would, and never replaced; a FIFO that no
 * process reads is refused rather than waited on, and a reader that goes away
 * is a write error, not a SIGPIPE. A directory or any other kind of file is
 * refused.
 *
 * Every failing call returns TALLY_ERROR_IO with errno saying why (as
 * output_file_strerror words it). Output goes through one fixed-size stdio
 * buffer, so memory stays bounded however much is written.
 *
 * Internal to libtally; one thread uses a file at a time.
 */
#ifndef TALLY_OUTPUT_FILE_H
#define TALLY_OUTPUT_FILE_H

#include <stdio.h>

#include "tally/types.h"

/* How a regular file is written; devices and FIFOs are written into
 * either way. */
enum output_file_kind {
    OUTPUT_FILE_WHOLE, /* named at commit: all of it or nothing */
    OUTPUT_FILE_LIVE,  /* in place: what was flushed is there */
};

enum output_file_mode {
    OUTPUT_FILE_UNNAMED,  /* O_TMPFILE, linked at commit */
    OUTPUT_FILE_NAMED,    /* temp_name, renamed at commit */
    OUTPUT_FILE_DIRECT,   /* the destination itself: a device or a FIFO */
    OUTPUT_FILE_IN_PLACE, /* the destination itself: a regular file, live */
};

enum { OUTPUT_FILE_TEMP_NAME_SIZE = sizeof "tally-XXXXXXXXXX.tmp" };

/* Owned by its user (usually embedded in a writer, which must not move
 * while open); fields are private. */
struct output_file {
    FILE *stream;                               /* NULL when not open */
    char *name;                                 /* the destination's last component */
    char *buffer;                               /* the stream's buffer */
    char temp_name[OUTPUT_FILE_TEMP_NAME_SIZE]; /* a temporary name in the directory */
    int directory; /* the destination's directory (O_PATH), -1 if none is open */
    int fd;
    int error; /* errno of the first failed write, 0 if none */
    enum output_file_mode mode;
    bool created; /* in place: the open made the file (unlinked if the open fails) */
};

/* Opens the file for writing. On error nothing is left open or on disk:
 * TALLY_ERROR_IO (errno: why), OUT_OF_MEMORY, INVALID_ARGUMENT (NULL or empty
 * path). */
tally_status output_file_open(struct output_file *f, const char *path, enum output_file_kind kind);

/* Where to write. Write errors are sticky (ferror) and make commit fail. */
FILE *output_file_stream(struct output_file *f);

/* True once a write has failed (errno then says why); the file cannot be
 * committed any more. */
bool output_file_failed(struct output_file *f);

/* Live: what the stream holds reaches the file now. TALLY_ERROR_IO (errno:
 * why) once a write has failed. Whole: the same, into the unnamed file. */
tally_status output_file_flush(struct output_file *f);

/* Flushes, syncs and gives the file its name (or, written directly or in
 * place, just flushes). TALLY_ERROR_IO, errno saying why, if any write or step failed;
 * nothing is then left on disk. The file is closed either way. */
tally_status output_file_commit(struct output_file *f);

/* Closes the file and discards what was written: the destination is
 * untouched, but for a live file, which keeps what reached it. Harmless on a
 * file that failed to open. */
void output_file_abort(struct output_file *f);

/* An errno of these functions in words, for messages that name the path. */
const char *output_file_strerror(int error);

/* True when a and b name the same destination: the same existing file, or
 * the same name in the same directory (spelled differently or not). */
bool output_file_same_destination(const char *a, const char *b);

#endif
