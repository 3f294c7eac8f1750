/*
 * tally demo: a small frame of draws and dispatches recorded as canonical
 * commands, run on simgpu with the virtual clock, and printed as a
 * per-command counter table. The same bytes on every run and machine.
 * Always simgpu: there is no GPU work under the commands to measure.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tally/tally.h>

#include "tally_cli.h"

static const char *const columns[] = {
    "GpuTime",       "IaVertices",        "IaPrimitives",
    "VsInvocations", "ClipperPrimitives", "RasterizedPixels",
    "FsInvocations", "CsInvocations",     "ShaderAluInstructions",
    "L2CacheMisses", "GpuBusy",
};
#define COLUMN_COUNT (sizeof(columns) / sizeof(columns[0]))

struct step {
    const char *label;
    enum { DRAW, DISPATCH, TRANSFER } kind;
    tally_draw draw;
    tally_dispatch dispatch;
    tally_transfer transfer;
};

static const uint16_t quad_indices[] = {0, 1, 2, 2, 1, 3, 2, 3, 4, 4, 3, 5};

static const struct step steps[] = {
    {"terrain", DRAW, .draw = {"vkCmdDraw", 3000, 1, 0, 0, 0, 0, TALLY_TOPOLOGY_TRIANGLE_LIST}},
    {"quads", DRAW,
     .draw = {"vkCmdDrawIndexed", 12, 1, 0, 0, 0, TALLY_DRAW_INDEXED, TALLY_TOPOLOGY_TRIANGLE_LIST,
              0, 2, quad_indices}},
    {"ribbon", DRAW, .draw = {"vkCmdDraw", 64, 1, 0, 0, 0, 0, TALLY_TOPOLOGY_TRIANGLE_STRIP}},
    {"trees", DRAW,
     .draw = {"vkCmdDrawIndexed", 360, 100, 0, 0, 0, TALLY_DRAW_INDEXED,
              TALLY_TOPOLOGY_TRIANGLE_LIST, 0, 4, NULL}},
    {"particles", DRAW, .draw = {"vkCmdDraw", 5000, 1, 0, 0, 0, 0, TALLY_TOPOLOGY_POINT_LIST}},
    {"outline", DRAW, .draw = {"vkCmdDraw", 200, 1, 0, 0, 0, 0, TALLY_TOPOLOGY_LINE_STRIP}},
    {"blur", DISPATCH, .dispatch = {"vkCmdDispatch", {80, 45, 1}, {0, 0, 0}, {16, 16, 1}, 0}},
    {"histogram", DISPATCH, .dispatch = {"vkCmdDispatch", {256, 1, 1}, {0, 0, 0}, {64, 1, 1}, 0}},
    {"readback", TRANSFER, .transfer = {"vkCmdCopyBuffer", TALLY_TRANSFER_COPY, 1 << 20}},
    {"tonemap", DRAW, .draw = {"vkCmdDraw", 3, 1, 0, 0, 0, 0, TALLY_TOPOLOGY_TRIANGLE_LIST}},
};
#define STEP_COUNT (sizeof(steps) / sizeof(steps[0]))

static const tally_program_desc raster_program = {
    .name = "lit",
    .stages = {[TALLY_STAGE_VERTEX] = {.present = true, .mix = {24, 0, 2, 0, 1}, .input_bytes = 32},
               [TALLY_STAGE_FRAGMENT] = {.present = true, .mix = {40, 3, 0, 0, 2}}},
};

static const tally_program_desc compute_program = {
    .name = "blur",
    .stages = {[TALLY_STAGE_COMPUTE] = {.present = true,
                                        .mix = {30, 4, 2, 1, 3},
                                        .local_size = {16, 16, 1}}},
};

static const tally_render_state render = {
    .width = 1280,
    .height = 720,
    .layers = 1,
    .samples = 1,
    .color_bytes_per_pixel = 4,
    .depth_bytes_per_sample = 4,
    .flags = TALLY_RENDER_DEPTH_TEST | TALLY_RENDER_DEPTH_WRITE | TALLY_RENDER_CULL,
};

static tally_status record_step(tally_stream *s, const struct step *step, tally_program *raster,
                                tally_program *compute)
{
    switch (step->kind) {
    case DRAW: tally_stream_bind_program(s, raster); return tally_stream_draw(s, &step->draw);
    case DISPATCH:
        tally_stream_bind_program(s, compute);
        return tally_stream_dispatch(s, &step->dispatch);
    default: return tally_stream_transfer(s, &step->transfer);
    }
}

static tally_status record(tally_stream *s, tally_results *results, tally_program *raster,
                           tally_program *compute)
{
    tally_status status = tally_stream_set_render_state(s, &render);
    for (uint32_t i = 0; i < STEP_COUNT && status == TALLY_OK; i++) {
        tally_stream_label_push(s, steps[i].label);
        tally_stream_marker_begin(s, results, i);
        status = record_step(s, &steps[i], raster, compute);
        tally_stream_marker_end(s, results, i);
        tally_stream_label_pop(s);
    }
    if (status == TALLY_OK)
        status = tally_stream_frame_boundary(s);
    return status;
}

enum { CELL = 32 }; /* a value as text: at most 20 digits, or a ratio's */

static void format_value(const tally_counter_info *c, tally_value v, char cell[CELL])
{
    if (c->storage == TALLY_STORAGE_FLOAT64 || c->storage == TALLY_STORAGE_FLOAT32)
        snprintf(cell, CELL, "%.2f", v.f64);
    else
        snprintf(cell, CELL, "%llu", (unsigned long long)v.u64);
}

static const char *command_of(const struct step *st)
{
    return st->kind == DRAW       ? st->draw.api_name
           : st->kind == DISPATCH ? st->dispatch.api_name
                                  : st->transfer.api_name;
}

static int wider(int width, const char *text)
{
    int n = (int)strlen(text);
    return n > width ? n : width;
}

/* Each column is as wide as its name or its widest value, so that no
 * counter's name is cut (ShaderAluInstructions, not ShaderAluInstr). */
static void print_table(const tally_catalogue *cat, tally_results *results, const uint32_t *ids)
{
    static char cells[STEP_COUNT][COLUMN_COUNT][CELL];
    int widths[COLUMN_COUNT], label_width = (int)strlen("label"),
                              command_width = (int)strlen("command");
    for (uint32_t k = 0; k < COLUMN_COUNT; k++)
        widths[k] = (int)strlen(columns[k]);
    for (uint32_t i = 0; i < STEP_COUNT; i++) {
        tally_value values[COLUMN_COUNT];
        tally_results_get(results, i, values, COLUMN_COUNT, NULL);
        label_width = wider(label_width, steps[i].label);
        command_width = wider(command_width, command_of(&steps[i]));
        for (uint32_t k = 0; k < COLUMN_COUNT; k++) {
            format_value(tally_catalogue_counter(cat, ids[k]), values[k], cells[i][k]);
            widths[k] = wider(widths[k], cells[i][k]);
        }
    }
    printf("%-3s %-*s %-*s", "#", label_width, "label", command_width, "command");
    for (uint32_t k = 0; k < COLUMN_COUNT; k++)
        printf(" %*s", widths[k], columns[k]);
    printf("\n");
    for (uint32_t i = 0; i < STEP_COUNT; i++) {
        printf("%-3u %-*s %-*s", i, label_width, steps[i].label, command_width,
               command_of(&steps[i]));
        for (uint32_t k = 0; k < COLUMN_COUNT; k++)
            printf(" %*s", widths[k], cells[i][k]);
        printf("\n");
    }
}

static int run(tally_device *device)
{
    const tally_catalogue *cat = tally_device_catalogue(device);
    uint32_t ids[COLUMN_COUNT];
    for (uint32_t k = 0; k < COLUMN_COUNT; k++)
        tally_catalogue_find(cat, columns[k], &ids[k]);
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    tally_program *raster = NULL, *compute = NULL;
    tally_results *results = NULL;
    tally_status s = tally_context_create(device, "demo", &context);
    if (s == TALLY_OK)
        s = tally_stream_create(context, &stream);
    if (s == TALLY_OK)
        s = tally_program_create(device, &raster_program, &raster);
    if (s == TALLY_OK)
        s = tally_program_create(device, &compute_program, &compute);
    if (s == TALLY_OK)
        s = tally_results_create(device, ids, COLUMN_COUNT, STEP_COUNT, &results);
    if (s == TALLY_OK)
        s = record(stream, results, raster, compute);
    tally_submission sub = {
        .streams = &stream, .stream_count = 1, .flags = TALLY_SUBMIT_CONSUME, .api_name = "demo"};
    if (s == TALLY_OK)
        s = tally_submit(device, &sub, NULL);
    if (s == TALLY_OK)
        s = tally_device_wait_idle(device);
    if (s == TALLY_OK)
        print_table(cat, results, ids);
    else
        fprintf(stderr, "tally demo: %s\n", tally_status_string(s));
    tally_results_release(results);
    tally_program_release(raster);
    tally_program_release(compute);
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    return s == TALLY_OK ? 0 : 1;
}

int tally_cli_demo(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: tally demo\n");
        return 2;
    }
    tally_device_options options;
    tally_device_options_from_env(&options);
    options.clock = TALLY_CLOCK_VIRTUAL;
    /* The demo's commands have no GPU work under them, so a measuring
     * backend (driver) would measure nothing and print zeros that look
     * real: the demo is simgpu's. An unknown name is still the device's
     * error. */
    const tally_catalogue *catalogue;
    if (options.backend && strcmp(options.backend, "simgpu") != 0 &&
        tally_backend_catalogue(options.backend, &catalogue) == TALLY_OK) {
        fprintf(stderr,
                "tally demo: the demo is simgpu's built-in workload, with no GPU work to "
                "measure, so it runs on simgpu, not %s; to measure a real program: "
                "tally run --backend %s -- ./app\n",
                options.backend, options.backend);
        options.backend = "simgpu";
    }
    tally_device *device;
    char error[256] = "";
    tally_status s = tally_device_open(&options, &device, error, sizeof(error));
    if (s != TALLY_OK) {
        fprintf(stderr, "tally demo: %s\n", error[0] ? error : tally_status_string(s));
        return 1;
    }
    tally_device_info info;
    tally_device_get_info(device, &info);
    printf("%s on %s, virtual clock\n\n", info.backend, info.name);
    int rc = run(device);
    /* A file that could not be written was said, with why; not announced. */
    if (tally_device_finish(device) != TALLY_OK)
        return 1;
    char path[PATH_MAX];
    if (rc == 0 && tally_output_path_for_process(options.report_path, path, sizeof path))
        fprintf(stderr, "tally demo: per-command report written to %s\n", path);
    if (rc == 0 && tally_output_path_for_process(options.trace_path, path, sizeof path))
        fprintf(stderr, "tally demo: trace written to %s\n", path);
    return rc;
}
