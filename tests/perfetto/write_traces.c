/*
 * Writes the traces check_traces.py decodes:
 *   api.pftrace, api.json      through the trace writer's API, with known
 *                              events, counters and commands (a gap
 *                              between two of them);
 *   device.perfetto-trace with device.csv, device.json with device_json.csv
 *                              from a device that executes the same known
 *                              frames twice (virtual clock, the default
 *                              counters), each time with a per-command
 *                              report, so that the trace can be checked
 *                              against the report of its own run.
 * Usage: write_traces DIRECTORY
 */
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <tally/tally.h>

enum { FRAMES = 24, SHADOW_DRAWS = 20, OPAQUE_DRAWS = 40 };

static const tally_command_record api_command = {
    .api_name = "vkCmdDraw",
    .kind = "draw",
    .context = 1,
    .context_api = "vulkan",
    .label = "",
};

/* Three commands: two back to back, then one after the GPU idled; values
 * of IaVertices and GpuBusy (a float). */
static tally_status api_commands(tally_trace *t, const tally_catalogue *catalogue)
{
    uint32_t counters[2];
    tally_catalogue_find(catalogue, "IaVertices", &counters[0]);
    tally_catalogue_find(catalogue, "GpuBusy", &counters[1]);
    tally_trace_gpu gpu = {.catalogue = catalogue, .counters = counters, .counter_count = 2};
    tally_status s = tally_trace_describe_gpu(t, &gpu);
    tally_command_record r = api_command;
    const tally_value values[3][2] = {
        {{.u64 = 3}, {.f64 = 50.0}}, {{.u64 = 6}, {.f64 = 50.0}}, {{.u64 = 6}, {.f64 = 62.5}}};
    const uint64_t times[3][2] = {{1000, 1100}, {1100, 1300}, {2000, 2050}};
    for (int i = 0; i < 3; i++) {
        r.sequence = (uint64_t)i + 1;
        r.submission = i < 2 ? 1 : 2;
        r.label = i == 2 ? "post/tonemap" : "";
        r.begin_ns = times[i][0];
        r.end_ns = times[i][1];
        s |= tally_trace_command(t, 1, &r, values[i]);
    }
    return s;
}

/* Bad input is refused and writes nothing: 0 when all of it was. */
static int api_refusals(tally_trace *t)
{
    const tally_trace_gpu no_counters = {.counter_count = 1};
    tally_command_record backwards = api_command;
    backwards.begin_ns = 2;
    backwards.end_ns = 1;
    const tally_value values[2] = {{0}};
    int accepted = 0;
    accepted += tally_trace_describe_gpu(NULL, &no_counters) != TALLY_ERROR_INVALID_ARGUMENT;
    accepted += tally_trace_describe_gpu(t, NULL) != TALLY_ERROR_INVALID_ARGUMENT;
    accepted += tally_trace_describe_gpu(t, &no_counters) != TALLY_ERROR_INVALID_ARGUMENT;
    accepted += tally_trace_command(NULL, 1, &api_command, values) != TALLY_ERROR_INVALID_ARGUMENT;
    accepted += tally_trace_command(t, 1, NULL, values) != TALLY_ERROR_INVALID_ARGUMENT;
    accepted += tally_trace_command(t, 1, &backwards, values) != TALLY_ERROR_INVALID_ARGUMENT;
    accepted += tally_trace_command(t, 1, &api_command, NULL) != TALLY_ERROR_INVALID_ARGUMENT;
    return accepted;
}

static int api_trace(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const tally_catalogue *catalogue = NULL;
    tally_trace *t = NULL;
    if (tally_backend_catalogue("simgpu", &catalogue) != TALLY_OK ||
        tally_trace_open(path, "writer test", &t) != TALLY_OK)
        return 1;
    tally_trace_arg args[2] = {{"vertices", TALLY_TRACE_ARG_U64, {.u64 = 3}},
                               {"ratio", TALLY_TRACE_ARG_F64, {.f64 = 1.5}}};
    tally_trace_arg label = {"label", TALLY_TRACE_ARG_STRING, {.string = "shadow pass"}};
    tally_status s = api_commands(t, catalogue);
    if (api_refusals(t))
        s |= TALLY_ERROR_INVALID_ARGUMENT;
    s |= tally_trace_name_track(t, 0, "Driver");
    s |= tally_trace_name_track(t, 1, "Queue");
    s |= tally_trace_begin(t, 1, "Submission", 100, args, 1);
    s |= tally_trace_end(t, 1, "Submission", 200, args, 1);
    s |= tally_trace_instant(t, 0, "Frame", 210, &label, 1);
    s |= tally_trace_slice(t, 0, "Call", 220, 230, args, 2);
    s |= tally_trace_call(t, 0, (uint32_t)syscall(SYS_gettid), "vkQueueSubmit", 240, args, 1);
    s |= tally_trace_call(t, 0, 0, "glFlush", 250, NULL, 0); /* no thread: on the track */
    s |= tally_trace_counter(t, "Sampled", 100, 280.0);
    s |= tally_trace_counter(t, "Sampled", 150, 0.0);
    s |= tally_trace_counter(t, "Sampled", 160, 77.25); /* not whole: a double */
    /* Too late to describe the GPU now. */
    tally_trace_gpu gpu = {0};
    if (tally_trace_describe_gpu(t, &gpu) != TALLY_ERROR_INVALID_STATE)
        s |= TALLY_ERROR_INVALID_STATE;
    s |= tally_trace_close(t);
    return s != TALLY_OK;
}

/* One frame: a shadow pass and an opaque pass of draws whose vertex and
 * instance counts vary from draw to draw, as a scene's do, and a dispatch. */
static void record_frame(tally_stream *stream)
{
    tally_render_state target = {.width = 256,
                                 .height = 256,
                                 .layers = 1,
                                 .samples = 1,
                                 .color_bytes_per_pixel = 4,
                                 .depth_bytes_per_sample = 4};
    tally_stream_set_render_state(stream, &target);
    tally_stream_label_push(stream, "shadow");
    for (uint32_t i = 0; i < SHADOW_DRAWS; i++) {
        tally_draw draw = {.api_name = "vkCmdDraw",
                           .count = 3 * (1 + i % 5),
                           .instance_count = 1,
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        tally_stream_draw(stream, &draw);
    }
    tally_stream_label_pop(stream);
    tally_stream_label_push(stream, "main");
    tally_stream_label_push(stream, "opaque");
    for (uint32_t i = 0; i < OPAQUE_DRAWS; i++) {
        tally_draw draw = {.api_name = "vkCmdDraw",
                           .count = 3 * (1 + i % 7),
                           .instance_count = 1 + i % 4,
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        tally_stream_draw(stream, &draw);
    }
    tally_stream_label_pop(stream);
    tally_stream_label_pop(stream);
    tally_dispatch dispatch = {
        .api_name = "vkCmdDispatch", .groups = {4, 1, 1}, .local_size = {64, 1, 1}};
    tally_stream_dispatch(stream, &dispatch);
    tally_stream_frame_boundary(stream);
}

static int device_trace(const char *dir, const char *trace, const char *report)
{
    char trace_path[4096], report_path[4096];
    snprintf(trace_path, sizeof trace_path, "%s/%s", dir, trace);
    snprintf(report_path, sizeof report_path, "%s/%s", dir, report);
    tally_device_options options = {
        .clock = TALLY_CLOCK_VIRTUAL, .trace_path = trace_path, .report_path = report_path};
    tally_device *device = NULL;
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    if (tally_device_open(&options, &device, NULL, 0) != TALLY_OK ||
        tally_context_create(device, "vulkan", &context) != TALLY_OK ||
        tally_stream_create(context, &stream) != TALLY_OK)
        return 1;
    for (int frame = 0; frame < FRAMES; frame++) {
        record_frame(stream);
        if (tally_submit_stream(device, stream, 0, "vkQueueSubmit", NULL) != TALLY_OK)
            return 1;
    }
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    return tally_device_finish(device) != TALLY_OK;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: write_traces DIRECTORY\n");
        return 2;
    }
    return api_trace(argv[1], "api.pftrace") || api_trace(argv[1], "api.json") ||
           device_trace(argv[1], "device.perfetto-trace", "device.csv") ||
           device_trace(argv[1], "device.json", "device_json.csv");
}
