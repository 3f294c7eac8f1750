/*
 * A file written beside its destination and renamed over it when complete,
 * so a reader sees no file or a whole one. The temporary file is created
 * exclusively ("<path>.tmp.XXXXXX", O_CREAT|O_EXCL), so it never follows a
 * symlink; the rename replaces a symlink at the destination instead of
 * writing through it. Output goes through a fixed-size buffer, so memory stays
 * bounded however much is written.
 *
 * Internal to libtally; one thread uses a file at a time.
 */
#ifndef TALLY_ATOMIC_FILE_H
#define TALLY_ATOMIC_FILE_H

#include <stdio.h>

#include "tally/types.h"

/* Owned by its user (usually embedded in a writer); fields are private. */
struct atomic_file {
    FILE *stream;    /* on the temporary file; NULL when not open */
    char *path;      /* the destination, as given */
    char *temp_path; /* the temporary file beside it */
    char *buffer;    /* the stream's buffer */
};

/* Creates the temporary file. On error nothing is left open or on disk:
 * TALLY_ERROR_IO (the directory cannot take the file), OUT_OF_MEMORY,
 * INVALID_ARGUMENT (NULL or empty path). */
tally_status atomic_file_open(struct atomic_file *f, const char *path);

/* Where to write. Write errors are sticky (ferror) and make commit fail. */
FILE *atomic_file_stream(struct atomic_file *f);

/* True once a write has failed; the file cannot be committed any more. */
bool atomic_file_failed(struct atomic_file *f);

/* Flushes, syncs and renames the temporary file over the destination.
 * TALLY_ERROR_IO if any write or step failed; the temporary file is then
 * removed. The file is closed either way. */
tally_status atomic_file_commit(struct atomic_file *f);

/* Closes and removes the temporary file; the destination is untouched.
 * Harmless on a file that failed to open. */
void atomic_file_abort(struct atomic_file *f);

#endif
