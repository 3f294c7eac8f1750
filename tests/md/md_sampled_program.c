/* A program that renders through the process's shared device, as a front
 * door would: `md_sampled_program DRAWS` records DRAWS draws of 600 vertices
 * in submissions of 50 and exits. tally run --sample samples it. */
#include <stdio.h>
#include <stdlib.h>

#include <tally/tally.h>

int main(int argc, char **argv)
{
    int draws = argc > 1 ? atoi(argv[1]) : 300;
    tally_device *device = NULL;
    tally_context *ctx = NULL;
    tally_stream *stream = NULL;
    if (tally_device_acquire_shared(&device) != TALLY_OK ||
        tally_context_create(device, "md-program", &ctx) != TALLY_OK ||
        tally_stream_create(ctx, &stream) != TALLY_OK) {
        fprintf(stderr, "md_sampled_program: no device\n");
        return 1;
    }
    for (int i = 0; i < draws; i++) {
        tally_draw draw = {.api_name = "draw",
                           .count = 600,
                           .instance_count = 1,
                           .topology = TALLY_TOPOLOGY_TRIANGLE_LIST};
        tally_stream_draw(stream, &draw);
        if (i % 50 == 49 || i + 1 == draws) {
            tally_submission sub = {.streams = &stream,
                                    .stream_count = 1,
                                    .flags = TALLY_SUBMIT_CONSUME,
                                    .api_name = "submit"};
            tally_submit(device, &sub, NULL);
        }
    }
    tally_stream_destroy(stream);
    tally_context_destroy(ctx);
    /* no release: the shared device finishes its reports at exit */
    return 0;
}
