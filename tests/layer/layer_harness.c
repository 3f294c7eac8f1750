/* Running programs under the layer (see layer_harness.h). */
#include "layer_harness.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *read_all(int fd)
{
    size_t size = 0, capacity = 4096;
    char *text = malloc(capacity);
    ssize_t n;
    while (text && (n = read(fd, text + size, capacity - size - 1)) > 0) {
        size += (size_t)n;
        if (capacity - size < 2) {
            capacity *= 2;
            text = realloc(text, capacity);
        }
    }
    if (text)
        text[size] = '\0';
    return text;
}

static void set_activation(activation how)
{
    char path[4096];
    switch (how) {
    case ACTIVATE_EXPLICIT:
        snprintf(path, sizeof(path), "%s/share/vulkan/explicit_layer.d", TALLY_BUILD_DIR);
        setenv("VK_ADD_LAYER_PATH", path, 1);
        setenv("VK_INSTANCE_LAYERS", "VK_LAYER_TALLY_counters", 1);
        break;
    case ACTIVATE_IMPLICIT:
        snprintf(path, sizeof(path), "%s/share:/usr/local/share:/usr/share", TALLY_BUILD_DIR);
        setenv("XDG_DATA_DIRS", path, 1);
        break;
    case ACTIVATE_NONE: break;
    }
}

run_result run_under_layer(const char *const *argv, activation how, const char *const *extra_env)
{
    run_result r = {.exit_code = -1};
    char report_path[] = "/tmp/tally_layer_test_XXXXXX";
    int report_fd = mkstemp(report_path);
    char report_json[sizeof(report_path) + 8];
    snprintf(report_json, sizeof(report_json), "%s.json", report_path);
    char output_path[] = "/tmp/tally_layer_out_XXXXXX";
    int output_fd = mkstemp(output_path);
    if (report_fd < 0 || output_fd < 0)
        return r;
    close(report_fd);
    unlink(report_path);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(output_fd, STDOUT_FILENO);
        dup2(output_fd, STDERR_FILENO);
        unsetenv("DISPLAY");
        unsetenv("VK_INSTANCE_LAYERS");
        unsetenv("VK_ADD_LAYER_PATH");
        unsetenv("VK_LAYER_PATH");
        unsetenv("TALLY");
        unsetenv("TALLY_DISABLE");
        unsetenv("TALLY_TRACE");
        setenv("VK_DRIVER_FILES", TALLY_LAVAPIPE_ICD, 1);
        setenv("TALLY_OUTPUT", report_json, 1);
        setenv("ASAN_OPTIONS", "detect_leaks=0", 1); /* the driver's leaks */
        set_activation(how);
        for (const char *const *e = extra_env; e && *e; e++)
            putenv((char *)*e);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    lseek(output_fd, 0, SEEK_SET);
    r.output = read_all(output_fd);
    close(output_fd);
    unlink(output_path);
    if (access(report_json, F_OK) == 0) {
        r.report = json_object_from_file(report_json);
        unlink(report_json);
    }
    return r;
}

void run_result_free(run_result *r)
{
    free(r->output);
    if (r->report)
        json_object_put(r->report);
    memset(r, 0, sizeof(*r));
}

json_object *output_lines(const run_result *r)
{
    json_object *lines = json_object_new_array();
    char *copy = strdup(r->output ? r->output : "");
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_object *o = json_tokener_parse(line);
        if (o)
            json_object_array_add(lines, o);
    }
    free(copy);
    return lines;
}

static size_t records_of(json_object *line)
{
    json_object *records = NULL;
    return json_object_object_get_ex(line, "records", &records)
               ? (size_t)json_object_get_uint64(records)
               : 1;
}

const char *const pipeline_statistics[PIPELINE_STATISTICS][2] = {
    {"ia_vertices", "IaVertices"},
    {"ia_primitives", "IaPrimitives"},
    {"vs_invocations", "VsInvocations"},
    {"gs_invocations", "GsInvocations"},
    {"gs_primitives", "GsPrimitives"},
    {"clipper_invocations", "ClipperInvocations"},
    {"clipper_primitives", "ClipperPrimitives"},
    {"fs_invocations", "FsInvocations"},
    {"tcs_patches", "TessControlPatches"},
    {"tes_invocations", "TessEvalInvocations"},
    {"cs_invocations", "CsInvocations"},
};

unsigned long long line_value(json_object *line, const char *field)
{
    json_object *v = NULL;
    json_object_object_get_ex(line, field, &v);
    return v ? (unsigned long long)json_object_get_uint64(v) : ~0ull;
}

size_t lines_record_count(json_object *lines)
{
    size_t total = 0;
    for (size_t i = 0; i < json_object_array_length(lines); i++)
        total += records_of(json_object_array_get_idx(lines, i));
    return total;
}

json_object *line_of_record(json_object *lines, size_t index)
{
    for (size_t i = 0, first = 0; i < json_object_array_length(lines); i++) {
        json_object *line = json_object_array_get_idx(lines, i);
        first += records_of(line);
        if (index < first)
            return line;
    }
    return NULL;
}

json_object *report_commands(const run_result *r)
{
    json_object *commands = NULL;
    if (!r->report || !json_object_object_get_ex(r->report, "commands", &commands))
        return NULL;
    return commands;
}

unsigned long long command_value(json_object *command, const char *symbol)
{
    json_object *values = NULL, *value = NULL;
    if (!json_object_object_get_ex(command, "values", &values) ||
        !json_object_object_get_ex(values, symbol, &value))
        return ~0ull;
    return (unsigned long long)json_object_get_uint64(value);
}

const char *command_text(json_object *command, const char *field)
{
    json_object *value = NULL;
    if (!json_object_object_get_ex(command, field, &value))
        return NULL;
    return json_object_get_string(value);
}

unsigned long long command_number(json_object *command, const char *field)
{
    json_object *value = NULL;
    if (!json_object_object_get_ex(command, field, &value))
        return ~0ull;
    return (unsigned long long)json_object_get_uint64(value);
}

/* The message ids of the validation layer's messages in an output. */
static size_t message_ids(const char *output, char ***ids)
{
    size_t count = 0, capacity = 0;
    *ids = NULL;
    for (const char *at = output; (at = strstr(at, "Validation ")); at++) {
        const char *open = strstr(at, "[ "), *line_end = strchr(at, '\n');
        if (!open || (line_end && open > line_end))
            continue;
        const char *close = strstr(open + 2, " ]");
        if (!close)
            break;
        if (count == capacity) {
            capacity = capacity ? capacity * 2 : 64;
            *ids = realloc(*ids, capacity * sizeof(**ids));
        }
        (*ids)[count++] = strndup(open + 2, (size_t)(close - open - 2));
    }
    return count;
}

char *validation_messages_added(const char *without, const char *with)
{
    char **before, **after;
    size_t before_count = message_ids(without, &before);
    size_t after_count = message_ids(with, &after);
    size_t size = 1;
    for (size_t i = 0; i < after_count; i++)
        size += strlen(after[i]) + 1;
    char *added = calloc(size, 1);
    for (size_t i = 0; i < after_count; i++) {
        bool matched = false;
        for (size_t j = 0; j < before_count && !matched; j++) {
            if (before[j] && strcmp(before[j], after[i]) == 0) {
                free(before[j]);
                before[j] = NULL; /* each message of the run alone matches once */
                matched = true;
            }
        }
        if (!matched) {
            strcat(added, after[i]);
            strcat(added, "\n");
        }
        free(after[i]);
    }
    for (size_t j = 0; j < before_count; j++)
        free(before[j]);
    free(before);
    free(after);
    return added;
}
