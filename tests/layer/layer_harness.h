/*
 * Running Vulkan programs under the layer on lavapipe, and reading what they
 * and tally's report say.
 */
#ifndef TALLY_TESTS_LAYER_HARNESS_H
#define TALLY_TESTS_LAYER_HARNESS_H

#include <json-c/json.h>
#include <stdbool.h>

/* How the layer is activated for a run. */
typedef enum activation {
    ACTIVATE_NONE,
    ACTIVATE_EXPLICIT, /* VK_ADD_LAYER_PATH + VK_INSTANCE_LAYERS */
    ACTIVATE_IMPLICIT, /* XDG_DATA_DIRS holding the build's implicit_layer.d */
} activation;

typedef struct run_result {
    int exit_code;
    char *output;        /* the program's stdout and stderr, NUL-terminated */
    json_object *report; /* TALLY_OUTPUT's JSON, or NULL if none was written */
} run_result;

/*
 * Runs argv[0] with the driver restricted to lavapipe, the layer activated as
 * asked, TALLY_OUTPUT pointing at a fresh file, and `extra_env` ("NAME=value"
 * strings, NULL-terminated, may be NULL) added.
 */
run_result run_under_layer(const char *const *argv, activation how, const char *const *extra_env);
void run_result_free(run_result *r);

/* The environment that turns on the validation layer's best-practices and
 * synchronization checks beside its core checks, and has it print warnings
 * and performance warnings too (its settings file, written by the build:
 * the layer reads its report flags from nowhere else). */
#define VALIDATION_BEST_PRACTICES_AND_SYNC "VK_LAYER_SETTINGS_PATH=" VALIDATION_SETTINGS

/* The validation messages (by message id, "[ UNASSIGNED-... ]" or "[ VUID-... ]")
 * in the output `with` beyond those in the output `without`, one line each:
 * what the layer made the validation layer say. "" if none; malloc'ed. */
char *validation_messages_added(const char *without, const char *with);

/* The program's stdout lines parsed as JSON objects (an array). */
json_object *output_lines(const run_result *r);
/* The eleven pipeline statistics: each one's field in a test program's JSON
 * lines and its counter symbol in a report. */
enum { PIPELINE_STATISTICS = 11 };
extern const char *const pipeline_statistics[PIPELINE_STATISTICS][2];

/* A line's unsigned field, or ~0 when it has none. */
unsigned long long line_value(json_object *line, const char *field);

/* vk_workload measures an indirect command of several records with one line
 * ("records"); the report has one command per record. How many records the
 * lines stand for, and the line that report command `index` belongs to. */
size_t lines_record_count(json_object *lines);
json_object *line_of_record(json_object *lines, size_t index);

/* The report's commands array (NULL without a report). */
json_object *report_commands(const run_result *r);
/* A command's counter value, by symbol. */
unsigned long long command_value(json_object *command, const char *symbol);
const char *command_text(json_object *command, const char *field);
unsigned long long command_number(json_object *command, const char *field);

#endif
