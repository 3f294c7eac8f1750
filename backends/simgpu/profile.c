/*
 * simgpu's device profile: the embedded defaults, and profile files in the
 * small INI dialect docs/profile.md describes, parsed strictly here. A
 * general INI library accepts what that page calls errors (it splits long
 * lines and parses their tails, takes "name: value", ignores text after a
 * section's "]" and CR-only line ends), so the format is parsed by hand:
 * every line is a blank, a comment, "[section]" or "name = value", and
 * anything else is refused with the file and line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "simgpu.h"

_Static_assert(sizeof(struct simgpu_profile) == SIMGPU_PARAMETER_COUNT * sizeof(uint64_t),
               "the profile struct mirrors the parameter table");

enum { MAX_PROFILE_BYTES = 1 << 20 }; /* a profile is a few hundred bytes */

static uint64_t *slots(struct simgpu_profile *profile)
{
    return (uint64_t *)profile;
}

void simgpu_profile_defaults(struct simgpu_profile *profile)
{
    for (uint32_t i = 0; i < SIMGPU_PARAMETER_COUNT; i++)
        slots(profile)[i] = simgpu_catalogue.parameters[i].default_value;
}

/* The parser's state: where it is, what it has seen, and the first error. */
struct parse {
    struct simgpu_profile *profile;
    const char *section; /* the catalogue's spelling; NULL before the first header */
    uint32_t section_line, section_settings;
    const char *seen[SIMGPU_PARAMETER_COUNT]; /* sections begun so far, and where */
    uint32_t seen_line[SIMGPU_PARAMETER_COUNT], seen_count;
    uint32_t set_on_line[SIMGPU_PARAMETER_COUNT]; /* 0: not set by this file */
    uint32_t line;
    char message[160];
};

/* A line: [begin, end) with blanks trimmed at both ends. */
struct text {
    const char *begin, *end;
};

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static struct text trim(struct text t)
{
    while (t.begin < t.end && blank(*t.begin))
        t.begin++;
    while (t.end > t.begin && blank(t.end[-1]))
        t.end--;
    return t;
}

static bool equals(struct text t, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(t.end - t.begin) == n && memcmp(t.begin, word, n) == 0;
}

__attribute__((format(printf, 2, 3))) static int fail(struct parse *p, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(p->message, sizeof(p->message), format, args);
    va_end(args);
    return -1;
}

static const char *known_section(struct text name)
{
    for (uint32_t i = 0; i < SIMGPU_PARAMETER_COUNT; i++)
        if (equals(name, simgpu_catalogue.parameters[i].section))
            return simgpu_catalogue.parameters[i].section;
    return NULL;
}

/* A header closes the previous section, which must have had a setting. */
static int end_section(struct parse *p)
{
    if (p->section && p->section_settings == 0) {
        p->line = p->section_line;
        return fail(p, "section [%s] has no settings", p->section);
    }
    return 0;
}

static int header(struct parse *p, struct text line)
{
    const char *close = memchr(line.begin, ']', (size_t)(line.end - line.begin));
    if (!close)
        return fail(p, "a section header needs a closing \"]\"");
    if (close + 1 != line.end)
        return fail(p, "text after the section header's \"]\": \"%.*s\"",
                    (int)(line.end - close - 1), close + 1);
    struct text name = trim((struct text){line.begin + 1, close});
    const char *section = known_section(name);
    if (name.begin == name.end)
        return fail(p, "an empty section name");
    if (!section)
        return fail(p, "no section [%.*s] (see docs/profile.md)", (int)(name.end - name.begin),
                    name.begin);
    for (uint32_t i = 0; i < p->seen_count; i++)
        if (p->seen[i] == section)
            return fail(p, "section [%s] is given twice (first on line %u)", section,
                        p->seen_line[i]);
    if (end_section(p))
        return -1;
    p->seen[p->seen_count] = section;
    p->seen_line[p->seen_count++] = p->line;
    p->section = section;
    p->section_line = p->line;
    p->section_settings = 0;
    return 0;
}

static bool parse_unsigned(struct text value, uint64_t *out)
{
    char digits[24];
    size_t n = (size_t)(value.end - value.begin);
    if (n == 0 || n >= sizeof(digits))
        return false;
    for (size_t i = 0; i < n; i++)
        if (value.begin[i] < '0' || value.begin[i] > '9')
            return false;
    memcpy(digits, value.begin, n);
    digits[n] = '\0';
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, 10);
    if (errno)
        return false;
    *out = v;
    return true;
}

/* A comment may follow a value after a blank: "core_clock_mhz = 500 ; slower". */
static struct text strip_inline_comment(struct text value)
{
    for (const char *c = value.begin + 1; c < value.end; c++)
        if ((*c == '#' || *c == ';') && blank(c[-1]))
            return trim((struct text){value.begin, c});
    return value;
}

static int find_parameter(struct parse *p, struct text name)
{
    for (uint32_t i = 0; i < SIMGPU_PARAMETER_COUNT; i++) {
        const struct tally_parameter_info *info = &simgpu_catalogue.parameters[i];
        if (strcmp(info->section, p->section) == 0 && equals(name, info->name))
            return (int)i;
    }
    return -1;
}

static int setting(struct parse *p, struct text line)
{
    const char *eq = memchr(line.begin, '=', (size_t)(line.end - line.begin));
    if (!eq)
        return fail(p, "not a \"name = value\" line: \"%.*s\"", (int)(line.end - line.begin),
                    line.begin);
    struct text name = trim((struct text){line.begin, eq});
    struct text value = strip_inline_comment(trim((struct text){eq + 1, line.end}));
    if (!p->section)
        return fail(p, "\"%.*s\" comes before any [section]", (int)(name.end - name.begin),
                    name.begin);
    int index = find_parameter(p, name);
    if (index < 0) {
        return fail(p, "no parameter %.*s in [%s]", (int)(name.end - name.begin), name.begin,
                    p->section);
    }
    const struct tally_parameter_info *info = &simgpu_catalogue.parameters[index];
    uint64_t v;
    if (p->set_on_line[index]) {
        return fail(p, "%s is set twice (first on line %u)", info->name, p->set_on_line[index]);
    }
    if (!parse_unsigned(value, &v))
        return fail(p, "\"%.*s\" is not an unsigned integer", (int)(value.end - value.begin),
                    value.begin);
    if (v < info->min_value || v > info->max_value) {
        return fail(p, "%s = %llu is outside %llu to %llu", info->name, (unsigned long long)v,
                    (unsigned long long)info->min_value, (unsigned long long)info->max_value);
    }
    slots(p->profile)[index] = v;
    p->set_on_line[index] = p->line;
    p->section_settings++;
    return 0;
}

static int parse_line(struct parse *p, struct text line)
{
    line = trim(line);
    if (line.begin == line.end || *line.begin == '#' || *line.begin == ';')
        return 0;
    return *line.begin == '[' ? header(p, line) : setting(p, line);
}

/* Lines end at LF (CRLF too); a CR anywhere else, or a NUL byte, is refused
 * rather than read as something the file may not mean. */
static int parse_text(struct parse *p, const char *text, size_t size)
{
    const char *at = text, *end = text + size;
    if (size >= 3 && memcmp(at, "\xEF\xBB\xBF", 3) == 0)
        at += 3; /* a UTF-8 byte order mark */
    for (p->line = 1; at < end; p->line++) {
        const char *newline = memchr(at, '\n', (size_t)(end - at));
        const char *stop = newline ? newline : end;
        struct text line = {at, stop};
        if (line.end > line.begin && line.end[-1] == '\r')
            line.end--;
        if (memchr(line.begin, '\0', (size_t)(line.end - line.begin)))
            return fail(p, "a NUL byte; a profile is text");
        if (memchr(line.begin, '\r', (size_t)(line.end - line.begin)))
            return fail(p, "a carriage return inside the line; lines end with a line feed");
        if (parse_line(p, line))
            return -1;
        at = newline ? newline + 1 : end;
    }
    return end_section(p);
}

tally_status simgpu_profile_parse(struct simgpu_profile *profile, const char *name,
                                  const char *text, size_t size, char *error, size_t error_size)
{
    struct parse *p = calloc(1, sizeof(*p));
    if (!p)
        return TALLY_ERROR_OUT_OF_MEMORY;
    struct simgpu_profile parsed = *profile; /* a refused file changes nothing */
    p->profile = &parsed;
    tally_status status = TALLY_OK;
    if (parse_text(p, text, size) == 0)
        *profile = parsed;
    else {
        snprintf(error, error_size, "profile %s, line %u: %s", name, p->line, p->message);
        status = TALLY_ERROR_BAD_PROFILE;
    }
    free(p);
    return status;
}

/* What a file that is not a regular one is, for the message refusing it. */
static const char *kind_of_file(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISDIR(mode)  ? "a directory"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "of an unknown kind";
}

/* The whole file, up to MAX_PROFILE_BYTES; NULL with the reason in why.
 * Only a regular file is read: a FIFO or a terminal (TALLY_PROFILE=/dev/stdin)
 * would wait for a writer or take the program's own input. O_NONBLOCK keeps
 * the open itself from waiting (a FIFO without a writer), and what was
 * opened is what fstat checks. */
static char *read_file(const char *path, size_t *size, char *why, size_t why_size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(why, why_size, "cannot read the file: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "cannot read the file: %s, not a regular file",
                 kind_of_file(st.st_mode));
        close(fd);
        return NULL;
    }
    char *text = malloc(MAX_PROFILE_BYTES + 1);
    size_t n = 0;
    int error = text ? 0 : ENOMEM;
    while (!error && n <= MAX_PROFILE_BYTES) {
        ssize_t got = read(fd, text + n, MAX_PROFILE_BYTES + 1 - n);
        if (got > 0)
            n += (size_t)got;
        else if (got == 0)
            break;
        else if (errno != EINTR)
            error = errno;
    }
    close(fd);
    if (!error && n > MAX_PROFILE_BYTES) {
        snprintf(why, why_size, "cannot read the file: larger than 1 MiB");
        free(text);
        return NULL;
    }
    if (error) {
        snprintf(why, why_size, "cannot read the file: %s", strerror(error));
        free(text);
        return NULL;
    }
    *size = n;
    return text;
}

tally_status simgpu_profile_load(struct simgpu_profile *profile, const char *path, char *error,
                                 size_t error_size)
{
    size_t size = 0;
    char why[96];
    char *text = read_file(path, &size, why, sizeof why);
    if (!text) {
        snprintf(error, error_size, "profile %s: %s", path, why);
        return TALLY_ERROR_BAD_PROFILE;
    }
    tally_status status = simgpu_profile_parse(profile, path, text, size, error, error_size);
    free(text);
    return status;
}
