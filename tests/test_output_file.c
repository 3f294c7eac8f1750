/*
 * Atomic files (writers/output_file.c), white-box, from their own source:
 * what is checked is what is written, a replaced file keeps its mode and,
 * where permitted, its owner, a name of any valid length can be replaced,
 * and nothing bypasses the stream.
 *
 * The build links this program with stat, fstat, open, openat and access
 * wrapped (-Wl,--wrap), so a case can change the destination right after it
 * was checked, or take O_TMPFILE or /proc away, deterministically instead
 * of by racing or by remounting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output_file.h"
#include "fixture.h"

/* --- the wrapped system calls ---------------------------------------------------- */

int __real_stat(const char *path, struct stat *st);
int __real_fstat(int fd, struct stat *st);
int __real_open(const char *path, int flags, ...);
int __real_openat(int dir, const char *path, int flags, ...);
int __real_access(const char *path, int mode);

/* Once a check finds a character device, the symlink at swap_link is made
 * to point at swap_target instead (once). */
static const char *swap_link, *swap_target;
/* O_TMPFILE fails as on a file system without it (counted). */
static bool no_unnamed_files;
static unsigned unnamed_refused;
/* /proc is not there, as where it is not mounted. */
static bool no_proc;

static void after_check(int result, const struct stat *st)
{
    if (result != 0 || !swap_link || !S_ISCHR(st->st_mode))
        return;
    char temp[PATH_MAX];
    snprintf(temp, sizeof temp, "%s.swap", swap_link);
    if (symlink(swap_target, temp) == 0)
        rename(temp, swap_link); /* atomically, as a racing process would */
    swap_link = NULL;
}

int __wrap_stat(const char *path, struct stat *st)
{
    int result = __real_stat(path, st);
    int error = errno;
    after_check(result, st);
    errno = error;
    return result;
}

int __wrap_fstat(int fd, struct stat *st)
{
    int result = __real_fstat(fd, st);
    int error = errno;
    after_check(result, st);
    errno = error;
    return result;
}

static bool refused(const char *path, int flags)
{
    if (no_proc && strncmp(path, "/proc/", 6) == 0) {
        errno = ENOENT;
        return true;
    }
    if (!no_unnamed_files || (flags & O_TMPFILE) != O_TMPFILE)
        return false;
    unnamed_refused++;
    errno = EOPNOTSUPP;
    return true;
}

int __wrap_access(const char *path, int mode)
{
    return refused(path, 0) ? -1 : __real_access(path, mode);
}

int __wrap_open(const char *path, int flags, ...)
{
    va_list args;
    va_start(args, flags);
    mode_t mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(args, mode_t) : 0;
    va_end(args);
    return refused(path, flags) ? -1 : __real_open(path, flags, mode);
}

int __wrap_openat(int dir, const char *path, int flags, ...)
{
    va_list args;
    va_start(args, flags);
    mode_t mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(args, mode_t) : 0;
    va_end(args);
    return refused(path, flags) ? -1 : __real_openat(dir, path, flags, mode);
}

/* --- fixture ----------------------------------------------------------------------- */

struct fixture {
    char dir[64];
    char path[PATH_MAX];
    mode_t umask;
};

static int make_dir(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    strcpy(fx->dir, "/tmp/tally-atomic-XXXXXX");
    if (!mkdtemp(fx->dir))
        return -1;
    fx->umask = umask(022); /* so that "the usual bits" are known */
    *state = fx;
    return 0;
}

static int remove_dir(void **state)
{
    struct fixture *fx = *state;
    swap_link = NULL;
    no_unnamed_files = no_proc = false;
    unnamed_refused = 0;
    umask(fx->umask);
    remove_tree(fx->dir);
    free(fx);
    return 0;
}

static const char *path_in(struct fixture *fx, const char *name)
{
    snprintf(fx->path, sizeof fx->path, "%s/%s", fx->dir, name);
    return fx->path;
}

static void write_text(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    assert_int_equal(fchmod(fd, mode), 0); /* whatever the umask */
    close(fd);
}

static char *read_text(const char *path)
{
    static char text[4096];
    memset(text, 0, sizeof text);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    return n < 0 ? NULL : text;
}

/* Writes text to path as an atomic file and commits it. */
static tally_status write_atomically(const char *path, const char *text)
{
    struct output_file f;
    tally_status status = output_file_open(&f, path, OUTPUT_FILE_WHOLE);
    if (status != TALLY_OK)
        return status;
    fputs(text, output_file_stream(&f));
    return output_file_commit(&f);
}

/* --- what is checked is what is written (issue 35, item 14) ------------------------ */

static void the_object_written_is_the_object_that_was_checked(void **state)
{
    struct fixture *fx = *state;
    char precious[PATH_MAX], link[PATH_MAX];
    snprintf(precious, sizeof precious, "%s", path_in(fx, "precious"));
    snprintf(link, sizeof link, "%s", path_in(fx, "out.csv"));
    write_text(precious, "precious\n", 0644);
    assert_int_equal(symlink("/dev/null", link), 0);

    /* The link points at /dev/null when the destination is checked, and at
     * the precious file right after. */
    swap_link = link;
    swap_target = precious;
    assert_int_equal(write_atomically(link, "report\n"), TALLY_OK);
    assert_null(swap_link); /* the swap did happen */

    assert_string_equal(read_text(precious), "precious\n");
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode)); /* a device is written into, not replaced */
}

static void without_proc_a_link_changed_after_the_check_is_refused(void **state)
{
    struct fixture *fx = *state;
    char precious[PATH_MAX], link[PATH_MAX];
    snprintf(precious, sizeof precious, "%s", path_in(fx, "precious"));
    snprintf(link, sizeof link, "%s", path_in(fx, "out.csv"));
    write_text(precious, "precious\n", 0644);
    assert_int_equal(symlink("/dev/null", link), 0);

    /* Without /proc the device is opened by its name again, which now
     * leads elsewhere: that is found and refused. */
    no_proc = true;
    swap_link = link;
    swap_target = precious;
    struct output_file f;
    errno = 0;
    assert_int_equal(output_file_open(&f, link, OUTPUT_FILE_WHOLE), TALLY_ERROR_IO);
    assert_int_equal(errno, ESTALE);
    assert_null(swap_link);
    assert_string_equal(read_text(precious), "precious\n");
}

static void without_proc_a_device_is_still_written_into(void **state)
{
    struct fixture *fx = *state;
    const char *link = path_in(fx, "out.csv");
    assert_int_equal(symlink("/dev/null", link), 0);
    no_proc = true;
    assert_int_equal(write_atomically(link, "report\n"), TALLY_OK);
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
}

static void a_symlink_to_a_regular_file_is_replaced_not_written_through(void **state)
{
    struct fixture *fx = *state;
    char precious[PATH_MAX], link[PATH_MAX];
    snprintf(precious, sizeof precious, "%s", path_in(fx, "precious"));
    snprintf(link, sizeof link, "%s", path_in(fx, "out.csv"));
    write_text(precious, "precious\n", 0644);
    assert_int_equal(symlink(precious, link), 0);

    assert_int_equal(write_atomically(link, "report\n"), TALLY_OK);
    assert_string_equal(read_text(precious), "precious\n");
    struct stat st;
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_string_equal(read_text(link), "report\n");
}

/* --- a replaced file keeps its mode and owner (item 15) ------------------------------ */

static void a_replaced_file_keeps_its_permission_bits(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "private.csv");
    write_text(path, "old\n", 0600);
    assert_int_equal(write_atomically(path, "new\n"), TALLY_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0600);
    assert_string_equal(read_text(path), "new\n");
}

static void a_replaced_file_keeps_its_permission_bits_without_unnamed_files(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "private.csv");
    write_text(path, "old\n", 0640);
    no_unnamed_files = true;
    assert_int_equal(write_atomically(path, "new\n"), TALLY_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_true(unnamed_refused > 0);
}

static void a_new_file_gets_the_usual_permission_bits(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "new.csv");
    assert_int_equal(write_atomically(path, "new\n"), TALLY_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0644); /* 0666 less the umask 022 */
}

static void a_replaced_file_keeps_its_owner_where_permitted(void **state)
{
    struct fixture *fx = *state;
    if (geteuid() != 0)
        skip(); /* only root may give a file to another user */
    const char *path = path_in(fx, "theirs.csv");
    write_text(path, "old\n", 0600);
    assert_int_equal(chown(path, 65534, 65534), 0);
    assert_int_equal(write_atomically(path, "new\n"), TALLY_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 65534);
    assert_int_equal(st.st_gid, 65534);
    assert_int_equal(st.st_mode & 07777, 0600);
}

static void a_replaced_file_keeps_a_group_the_user_may_give(void **state)
{
    struct fixture *fx = *state;
    /* Root may give any group; another user, one of its own other groups. */
    gid_t groups[64], other = (gid_t)-1;
    int count = getgroups(64, groups);
    for (int i = 0; i < count && other == (gid_t)-1; i++)
        if (groups[i] != getegid())
            other = groups[i];
    if (geteuid() == 0)
        other = getegid() == 65534 ? 65533 : 65534;
    if (other == (gid_t)-1)
        skip();
    const char *path = path_in(fx, "shared.csv");
    write_text(path, "old\n", 0640);
    assert_int_equal(chown(path, (uid_t)-1, other), 0);
    assert_int_equal(write_atomically(path, "new\n"), TALLY_OK);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_gid, other);
    assert_int_equal(st.st_uid, geteuid());
    assert_int_equal(st.st_mode & 07777, 0640);
}

/* --- names of any valid length (item 17) --------------------------------------------- */

/* A destination whose last component is NAME_MAX bytes long. */
static const char *longest_name_in(struct fixture *fx)
{
    char name[NAME_MAX + 1];
    memset(name, 'r', NAME_MAX - 4);
    memcpy(name + NAME_MAX - 4, ".csv", 5);
    return path_in(fx, name);
}

static void a_name_of_the_longest_length_is_replaced_again_and_again(void **state)
{
    struct fixture *fx = *state;
    const char *path = longest_name_in(fx);
    assert_int_equal(write_atomically(path, "first\n"), TALLY_OK);
    assert_int_equal(write_atomically(path, "second\n"), TALLY_OK);
    assert_int_equal(write_atomically(path, "third\n"), TALLY_OK);
    assert_string_equal(read_text(path), "third\n");
    assert_int_equal(directory_entry_count(fx->dir), 1);
}

static void a_name_of_the_longest_length_is_written_without_unnamed_files(void **state)
{
    struct fixture *fx = *state;
    const char *path = longest_name_in(fx);
    no_unnamed_files = true;
    assert_int_equal(write_atomically(path, "first\n"), TALLY_OK);
    assert_int_equal(write_atomically(path, "second\n"), TALLY_OK);
    assert_string_equal(read_text(path), "second\n");
    assert_int_equal(directory_entry_count(fx->dir), 1);
    assert_true(unnamed_refused > 0);
}

static void a_name_too_long_is_refused_at_open(void **state)
{
    struct fixture *fx = *state;
    char name[NAME_MAX + 2];
    memset(name, 'r', NAME_MAX + 1);
    name[NAME_MAX + 1] = '\0';
    struct output_file f;
    errno = 0;
    assert_int_equal(output_file_open(&f, path_in(fx, name), OUTPUT_FILE_WHOLE), TALLY_ERROR_IO);
    assert_int_equal(errno, ENAMETOOLONG);
    assert_int_equal(directory_entry_count(fx->dir), 0);
}

/* --- everything goes through the stream ---------------------------------------------- */

static void a_large_file_arrives_whole(void **state)
{
    struct fixture *fx = *state;
    const char *path = path_in(fx, "large.csv");
    struct output_file f;
    assert_int_equal(output_file_open(&f, path, OUTPUT_FILE_WHOLE), TALLY_OK);
    for (unsigned i = 0; i < 300000; i++) /* about 5 MB, many buffers' worth */
        fprintf(output_file_stream(&f), "%u,row\n", i);
    assert_false(output_file_failed(&f));
    assert_int_equal(output_file_commit(&f), TALLY_OK);
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    unsigned expected = 0, got = 0;
    char line[64];
    while (fgets(line, sizeof line, in) && sscanf(line, "%u,row", &got) == 1 && got == expected)
        expected++;
    fclose(in);
    assert_int_equal(expected, 300000);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(the_object_written_is_the_object_that_was_checked, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(without_proc_a_link_changed_after_the_check_is_refused,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(without_proc_a_device_is_still_written_into, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_symlink_to_a_regular_file_is_replaced_not_written_through,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_replaced_file_keeps_its_permission_bits, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(
            a_replaced_file_keeps_its_permission_bits_without_unnamed_files, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_new_file_gets_the_usual_permission_bits, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_replaced_file_keeps_its_owner_where_permitted, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_replaced_file_keeps_a_group_the_user_may_give, make_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(a_name_of_the_longest_length_is_replaced_again_and_again,
                                        make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(
            a_name_of_the_longest_length_is_written_without_unnamed_files, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_name_too_long_is_refused_at_open, make_dir, remove_dir),
        cmocka_unit_test_setup_teardown(a_large_file_arrives_whole, make_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
