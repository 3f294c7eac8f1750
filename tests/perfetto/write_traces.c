/*
 * Writes the two Perfetto traces check_traces.py decodes: one through the
 * trace writer's API with known events, one from a device that executes a
 * known frame with TALLY_TRACE-style options.
 * Usage: write_traces DIRECTORY
 */
#include <stdio.h>
#include <string.h>

#include <tally/tally.h>

static int api_trace(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/api.pftrace", dir);
    tally_trace *t = NULL;
    if (tally_trace_open(path, "writer test", &t) != TALLY_OK)
        return 1;
    tally_trace_arg args[2] = {{"vertices", TALLY_TRACE_ARG_U64, {.u64 = 3}},
                               {"ratio", TALLY_TRACE_ARG_F64, {.f64 = 1.5}}};
    tally_trace_arg label = {"label", TALLY_TRACE_ARG_STRING, {.string = "shadow pass"}};
    tally_status s = TALLY_OK;
    s |= tally_trace_name_track(t, 0, "Driver");
    s |= tally_trace_name_track(t, 1, "Queue");
    s |= tally_trace_begin(t, 1, "Submission", 100, args, 1);
    s |= tally_trace_begin(t, 1, "Draw", 100, args, 2);
    s |= tally_trace_end(t, 1, "Draw", 150, args, 2);
    s |= tally_trace_end(t, 1, "Submission", 200, args, 1);
    s |= tally_trace_instant(t, 0, "Frame", 210, &label, 1);
    s |= tally_trace_counter(t, "GpuTime", 100, 280.0);
    s |= tally_trace_counter(t, "GpuTime", 150, 0.0);
    s |= tally_trace_counter(t, "GpuTime", 160, 77.25); /* not whole: a double */
    s |= tally_trace_close(t);
    return s != TALLY_OK;
}

static int device_trace(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/device.perfetto-trace", dir);
    tally_device_options options = {
        .clock = TALLY_CLOCK_VIRTUAL, .trace_path = path, .report_counters = "IaVertices,GpuBusy"};
    tally_device *device = NULL;
    tally_context *context = NULL;
    tally_stream *stream = NULL;
    if (tally_device_open(&options, &device, NULL, 0) != TALLY_OK ||
        tally_context_create(device, "vulkan", &context) != TALLY_OK ||
        tally_stream_create(context, &stream) != TALLY_OK)
        return 1;
    /* Two submissions of five draws of 3, 6, ... 15 vertices. */
    for (int submission = 0; submission < 2; submission++) {
        for (uint32_t i = 1; i <= 5; i++) {
            tally_draw draw = {.api_name = "vkCmdDraw",
                               .count = 3 * i,
                               .instance_count = 1,
                               .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
            tally_stream_draw(stream, &draw);
        }
        if (tally_submit_stream(device, stream, 0, "vkQueueSubmit", NULL) != TALLY_OK)
            return 1;
    }
    tally_stream_destroy(stream);
    tally_context_destroy(context);
    tally_device_close(device);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: write_traces DIRECTORY\n");
        return 2;
    }
    return api_trace(argv[1]) || device_trace(argv[1]);
}
