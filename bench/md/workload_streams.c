/* A frame recorded through libtally streams: a render pass of draws of mixed
 * sizes and programs, a few compute dispatches and an upload, submitted once
 * and waited for, as a game's frame would be. */
#include <stdlib.h>
#include <time.h>

#include "workload.h"

enum { DRAWS = 200, DISPATCHES = 4 };

struct streams_state {
    bool paced;
    tally_results *frame_time; /* no counters: the slot's GPU begin and end */
    tally_device *device;
    tally_context *context;
    tally_stream *stream;
    tally_program *programs[3];
};

static tally_program *program(tally_device *device, uint32_t vs_alu, uint32_t fs_alu,
                              uint32_t fs_tex)
{
    tally_program_desc desc = {.name = "bench"};
    desc.stages[TALLY_STAGE_VERTEX] =
        (tally_stage_profile){.present = true, .mix = {.alu = vs_alu, .load = 2}};
    desc.stages[TALLY_STAGE_FRAGMENT] =
        (tally_stage_profile){.present = true, .mix = {.alu = fs_alu, .tex = fs_tex}};
    desc.stages[TALLY_STAGE_COMPUTE] = (tally_stage_profile){
        .present = true, .mix = {.alu = 40, .load = 4, .store = 2}, .local_size = {64, 1, 1}};
    tally_program *p = NULL;
    return tally_program_create(device, &desc, &p) == TALLY_OK ? p : NULL;
}

static struct streams_state *open_state(tally_device *device, bool paced)
{
    struct streams_state *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->device = device;
    s->paced = paced;
    if (tally_context_create(device, "bench", &s->context) != TALLY_OK ||
        tally_stream_create(s->context, &s->stream) != TALLY_OK ||
        tally_results_create(device, NULL, 0, 1, &s->frame_time) != TALLY_OK)
        return NULL;
    s->programs[0] = program(device, 12, 20, 2);
    s->programs[1] = program(device, 30, 60, 6);
    s->programs[2] = program(device, 8, 8, 1);
    return s;
}

static void *open_unpaced(tally_device *device)
{
    return open_state(device, false);
}

static void *open_paced(tally_device *device)
{
    return open_state(device, true);
}

static void record_frame(struct streams_state *s)
{
    tally_stream_marker_begin(s->stream, s->frame_time, 0);
    tally_transfer upload = {
        .api_name = "upload", .kind = TALLY_TRANSFER_WRITE, .bytes = 256 << 10};
    tally_stream_transfer(s->stream, &upload);
    tally_render_state rs = {.width = 1280,
                             .height = 720,
                             .layers = 1,
                             .samples = 1,
                             .color_bytes_per_pixel = 4,
                             .depth_bytes_per_sample = 4,
                             .flags = TALLY_RENDER_DEPTH_TEST | TALLY_RENDER_DEPTH_WRITE |
                                      TALLY_RENDER_CULL};
    tally_stream_set_render_state(s->stream, &rs);
    for (uint32_t i = 0; i < DRAWS; i++) {
        if (i % 25 == 0)
            tally_stream_bind_program(s->stream, s->programs[(i / 25) % 3]);
        tally_draw draw = {.api_name = "draw",
                           .count = 96 + (i * 37) % 3000,
                           .instance_count = 1 + (i % 7 == 0 ? 15 : 0),
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        tally_stream_draw(s->stream, &draw);
    }
    for (uint32_t i = 0; i < DISPATCHES; i++) {
        tally_dispatch dispatch = {.api_name = "dispatch", .groups = {64 << i, 1, 1}};
        tally_stream_dispatch(s->stream, &dispatch);
    }
    tally_stream_marker_end(s->stream, s->frame_time, 0);
    tally_stream_frame_boundary(s->stream);
}

/* A GPU-bound program waits for its fence until the GPU really finished:
 * here, until the realtime GPU clock reaches the end of the frame's work. */
static void wait_for_gpu_clock(struct streams_state *s)
{
    tally_slot_info info;
    if (tally_results_get(s->frame_time, 0, NULL, 0, &info) != TALLY_OK)
        return;
    uint64_t now = tally_device_gpu_time_ns(s->device);
    if (info.end_ns > now) {
        uint64_t ns = info.end_ns - now;
        struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
        nanosleep(&ts, NULL);
    }
}

static void frame_streams(void *state)
{
    struct streams_state *s = state;
    record_frame(s);
    tally_submission sub = {.streams = &s->stream,
                            .stream_count = 1,
                            .flags = TALLY_SUBMIT_CONSUME,
                            .api_name = "submit"};
    uint64_t seqno = 0;
    if (tally_submit(s->device, &sub, &seqno) == TALLY_OK)
        tally_wait_seqno(s->device, seqno, UINT64_MAX);
    if (s->paced)
        wait_for_gpu_clock(s);
}

static void close_streams(void *state)
{
    struct streams_state *s = state;
    if (!s)
        return;
    for (int i = 0; i < 3; i++)
        tally_program_release(s->programs[i]);
    tally_stream_destroy(s->stream);
    tally_results_release(s->frame_time);
    tally_context_destroy(s->context);
    free(s);
}

#define FRAME_TEXT                                                                                 \
    "per frame: a 256 KiB upload, 200 draws (96-3191 vertices, some instanced, 3 programs, "       \
    "1280x720 depth-tested), 4 dispatches; submitted and waited for"

/* GPU-bound: frames take as long in real time as on the simulated GPU. */
const struct workload streams_paced_workload = {
    .name = "streams, paced",
    .description = FRAME_TEXT ", then until the GPU clock reaches the frame's end",
    .open = open_paced,
    .frame = frame_streams,
    .close = close_streams,
};

/* Simulator-bound: the worst case, the simulated GPU clock runs far ahead of
 * real time, so there are many more reports per real second. */
const struct workload streams_unpaced_workload = {
    .name = "streams, unpaced",
    .description = FRAME_TEXT " (as fast as the simulator runs)",
    .open = open_unpaced,
    .frame = frame_streams,
    .close = close_streams,
};
