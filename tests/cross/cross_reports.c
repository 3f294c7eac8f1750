/* What the cross-API tests share (see cross_reports.h). */
#include "cross_reports.h"

#include <stdio.h>
#include <string.h>

run_result run_vk_workload(const char *counters)
{
    static char counters_env[512];
    snprintf(counters_env, sizeof(counters_env), "TALLY_COUNTERS=%s", counters);
    const char *argv[] = {VK_WORKLOAD, SHADER_DIR, NULL};
    const char *env[] = {counters_env, NULL};
    return run_under_layer(argv, ACTIVATE_EXPLICIT, env);
}

json_object *find_command(json_object *commands, const char *api_name, const char *label, size_t n,
                          size_t *index)
{
    size_t count = commands ? json_object_array_length(commands) : 0;
    for (size_t i = 0; i < count; i++) {
        json_object *command = json_object_array_get_idx(commands, i);
        const char *name = command_text(command, "api_name");
        const char *its_label = command_text(command, "label");
        if (!name || strcmp(name, api_name) != 0)
            continue;
        if (label && (!its_label || strcmp(its_label, label) != 0))
            continue;
        if (n-- == 0) {
            if (index)
                *index = i;
            return command;
        }
    }
    return NULL;
}
