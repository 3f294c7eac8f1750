/*
 * The event sampler is one per user: a process holds it by holding an
 * exclusive flock on a file in the user's runtime directory
 * ($XDG_RUNTIME_DIR/tally, or /tmp/tally-UID when that is unset or unusable). The kernel drops the
 * lock when the holder exits, however it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egl_shim.h"
#include "tally/device.h"

static const char lock_name[] = "egl_event_monitor.lock";

/* Under the monitor's lock (event_monitor.c serializes every caller). */
static int held_fd = -1;

/* A directory of ours: made if missing, and refused if someone else owns it
 * (or it is a link to one), so it cannot hold a lock for us. */
static bool own_directory(const char *path)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return false;
    struct stat st;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid();
}

static bool runtime_directory(char *path, size_t size)
{
    const char *xdg = secure_getenv("XDG_RUNTIME_DIR");
    int n = xdg && *xdg ? snprintf(path, size, "%s/tally", xdg) : -1;
    if (n > 0 && (size_t)n < size && own_directory(path))
        return true;
    n = snprintf(path, size, "/tmp/tally-%u", (unsigned)getuid());
    return n > 0 && (size_t)n < size && own_directory(path);
}

static int open_lock_file(void)
{
    char path[PATH_MAX];
    if (!runtime_directory(path, sizeof(path) - sizeof(lock_name) - 1))
        return -1;
    size_t length = strlen(path);
    path[length] = '/';
    memcpy(path + length + 1, lock_name, sizeof(lock_name));
    return open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

void sampler_lock_forget(void)
{
    if (held_fd >= 0)
        close(held_fd); /* the parent's reference keeps the lock */
    held_fd = -1;
}

EGLBoolean sampler_lock_take(void)
{
    if (held_fd >= 0)
        return EGL_TRUE;
    int fd = open_lock_file();
    if (fd < 0) {
        /* Without a lock file no other process can be asked: the program
         * keeps its events rather than losing them to a setup problem. */
        tally_log(TALLY_LOG_WARN, "EGL_BRCM_event_monitor: no lock file in the runtime directory "
                                  "(%m); the sampler is not exclusive between processes");
        return EGL_TRUE;
    }
    while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR)
            continue;
        close(fd);
        return EGL_FALSE;
    }
    held_fd = fd;
    return EGL_TRUE;
}

void sampler_lock_give_back(void)
{
    if (held_fd < 0)
        return;
    flock(held_fd, LOCK_UN);
    close(held_fd);
    held_fd = -1;
}
