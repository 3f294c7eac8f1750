/* simgpu's device profile: the embedded defaults and INI profile files. */
#include <errno.h>
#include <stdio.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

#include "simgpu.h"

_Static_assert(sizeof(struct simgpu_profile) == SIMGPU_PARAMETER_COUNT * sizeof(uint64_t),
               "the profile struct mirrors the parameter table");

static uint64_t *slots(struct simgpu_profile *profile)
{
    return (uint64_t *)profile;
}

void simgpu_profile_defaults(struct simgpu_profile *profile)
{
    for (uint32_t i = 0; i < SIMGPU_PARAMETER_COUNT; i++)
        slots(profile)[i] = simgpu_catalogue.parameters[i].default_value;
}

struct load {
    struct simgpu_profile *profile;
    char message[192];
};

static const struct tally_parameter_info *find(const char *section, const char *name, int *index)
{
    for (uint32_t i = 0; i < SIMGPU_PARAMETER_COUNT; i++) {
        const struct tally_parameter_info *p = &simgpu_catalogue.parameters[i];
        if (strcmp(p->section, section) == 0 && strcmp(p->name, name) == 0) {
            *index = (int)i;
            return p;
        }
    }
    return NULL;
}

static bool parse_unsigned(const char *text, uint64_t *out)
{
    char *end;
    if (!*text || *text == '-' || *text == '+')
        return false;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    struct load *load = user;
    int index;
    uint64_t v;
    const struct tally_parameter_info *p = find(section, name, &index);
    if (!p)
        snprintf(load->message, sizeof(load->message), "no parameter [%s] %s", section, name);
    else if (!parse_unsigned(value, &v))
        snprintf(load->message, sizeof(load->message), "%s: \"%s\" is not an unsigned integer",
                 name, value);
    else if (v < p->min_value || v > p->max_value)
        snprintf(load->message, sizeof(load->message), "%s = %s is outside %llu to %llu", name,
                 value, (unsigned long long)p->min_value, (unsigned long long)p->max_value);
    else {
        slots(load->profile)[index] = v;
        return 1;
    }
    return 0;
}

tally_status simgpu_profile_load(struct simgpu_profile *profile, const char *path, char *error,
                                 size_t error_size)
{
    struct load load = {.profile = profile};
    int line = ini_parse(path, on_entry, &load);
    if (line == 0)
        return TALLY_OK;
    if (line < 0)
        snprintf(error, error_size, "profile %s: cannot read the file", path);
    else
        snprintf(error, error_size, "profile %s, line %d: %s", path, line,
                 load.message[0] ? load.message : "not a name = value line");
    return TALLY_ERROR_BAD_PROFILE;
}
