/* Owns the report benchmarks' rows: their values and records (see
 * bench_rows.h). */
#include "bench_rows.h"

#include <stdlib.h>
#include <string.h>

const char bench_report_counters[] =
    "GpuTime,IaVertices,IaPrimitives,VsInvocations,ClipperPrimitives,RasterizedPixels,"
    "FsInvocations,CsInvocations,ShaderAluInstructions,L2CacheMisses,DramReadBytes,"
    "DramWriteBytes,DrawCalls,GpuBusy,L2CacheHitRate";

const tally_command_record bench_rows_record = {.api_name = "vkCmdDrawIndexed",
                                                .kind = "draw",
                                                .context = 1,
                                                .context_api = "vulkan",
                                                .submission = 1,
                                                .stream = 1,
                                                .label = "frame/opaque"};

/*
 * The rows' varying values, cycled through, so that a figure is the
 * report's and not the making of values: a frame's spread of sizes from 3
 * to 6002, each count a multiple of the size, the ratios (the float
 * columns) changing with the draw. TABLE rows is a power of two. The values
 * are packed like a caller's array for one row: 32 slots a row would
 * spread each row's 15 values over 256 bytes and stream 1 MiB through the
 * cache beside the report's own buffer, which no caller's values do.
 */
enum { TABLE = 4096 };

struct bench_rows {
    uint32_t count;
    uint64_t duration[TABLE];
    tally_value values[];
};

uint32_t bench_rows_columns(const tally_catalogue *cat, uint32_t columns[32])
{
    uint32_t count = 0;
    char list[sizeof bench_report_counters];
    memcpy(list, bench_report_counters, sizeof list);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && count < 32;
         tok = strtok_r(NULL, ",", &save))
        if (tally_catalogue_find(cat, tok, &columns[count]) == TALLY_OK)
            count++;
    return count;
}

struct bench_rows *bench_rows_make(const tally_catalogue *cat, const uint32_t *columns,
                                   uint32_t count)
{
    struct bench_rows *t = malloc(sizeof *t + (size_t)TABLE * count * sizeof(tally_value));
    if (!t)
        return NULL;
    t->count = count;
    for (uint64_t i = 0; i < TABLE; i++) {
        uint64_t size = 3 + (i * 2654435761u >> 7) % 6000;
        t->duration[i] = 200 + size / 4;
        for (uint32_t c = 0; c < count; c++) {
            if (tally_catalogue_counter(cat, columns[c])->storage == TALLY_STORAGE_FLOAT64)
                t->values[i * count + c].f64 = 100.0 * (double)(size % 97) / 97.0;
            else
                t->values[i * count + c].u64 = size * (c + 1);
        }
    }
    return t;
}

void bench_rows_free(struct bench_rows *rows)
{
    free(rows);
}

const tally_value *bench_rows_values(const struct bench_rows *rows, uint64_t i)
{
    return rows->values + (i % TABLE) * rows->count;
}

void bench_rows_next_record(tally_command_record *record, const struct bench_rows *rows, uint64_t i,
                            uint64_t *ns)
{
    record->sequence = i + 1;
    record->submission = 1 + i / 1000;
    record->begin_ns = *ns;
    *ns += rows->duration[i % TABLE];
    record->end_ns = *ns;
}
