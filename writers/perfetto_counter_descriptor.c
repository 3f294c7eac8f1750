/* Owns the GpuCounterDescriptor of tally's counters (perfetto_counter_descriptor.h). */
#include "perfetto_counter_descriptor.h"

#include <stdio.h>
#include <string.h>

/* Field numbers and enumerations from Perfetto's
 * protos/perfetto/common/gpu_counter_descriptor.proto. */
enum {
    DESCRIPTOR_SPECS = 1,
    DESCRIPTOR_BLOCKS = 2,
    DESCRIPTOR_INSTRUMENTED_SAMPLING = 5,
    SPEC_COUNTER_ID = 1,
    SPEC_NAME = 2,
    SPEC_DESCRIPTION = 3,
    SPEC_NUMERATOR_UNITS = 7,
    SPEC_DENOMINATOR_UNITS = 8,
    SPEC_GROUPS = 10,
    BLOCK_ID = 1,
    BLOCK_CAPACITY = 2,
    BLOCK_NAME = 3,
    BLOCK_DESCRIPTION = 4,
    BLOCK_COUNTER_IDS = 5,
};
enum {
    GROUP_UNCLASSIFIED = 0,
    GROUP_SYSTEM = 1,
    GROUP_VERTICES = 2,
    GROUP_FRAGMENTS = 3,
    GROUP_PRIMITIVES = 4,
    GROUP_MEMORY = 5,
    GROUP_COMPUTE = 6,
};
enum {
    UNIT_NONE = 0,
    UNIT_BYTE = 7,
    UNIT_HERTZ = 13,
    UNIT_NANOSECOND = 19,
    UNIT_SECOND = 22,
    UNIT_VERTEX = 25,
    UNIT_PIXEL = 26,
    UNIT_TRIANGLE = 27,
    UNIT_WATT = 29,
    UNIT_VOLT = 32,
    UNIT_AMPERE = 33,
    UNIT_KELVIN = 36,
    UNIT_PERCENT = 37,
    UNIT_PRIMITIVE = 38,
    UNIT_FRAGMENT = 39,
    UNIT_INSTRUCTION = 40,
};

/* The counters being described, by column. */
struct described {
    const tally_catalogue *catalogue;
    const uint32_t *counters;
    uint32_t count;
};

static const tally_counter_info *counter_at(const struct described *d, uint32_t column)
{
    return tally_catalogue_counter(d->catalogue, d->counters[column]);
}

/* Perfetto's MeasureUnit for a counter: from its typed unit where that
 * says more than "a count", else from what one unit counts; NONE where no
 * MeasureUnit fits (cycles, invocations), which its description then says. */
static void unit_of(const tally_counter_info *c, uint32_t *numerator, uint32_t *denominator)
{
    static const uint32_t typed[] = {
        [TALLY_UNIT_PERCENTAGE] = UNIT_PERCENT, [TALLY_UNIT_NANOSECONDS] = UNIT_NANOSECOND,
        [TALLY_UNIT_BYTES] = UNIT_BYTE,         [TALLY_UNIT_BYTES_PER_SECOND] = UNIT_BYTE,
        [TALLY_UNIT_KELVIN] = UNIT_KELVIN,      [TALLY_UNIT_WATTS] = UNIT_WATT,
        [TALLY_UNIT_VOLTS] = UNIT_VOLT,         [TALLY_UNIT_AMPS] = UNIT_AMPERE,
        [TALLY_UNIT_HERTZ] = UNIT_HERTZ,
    };
    static const struct {
        const char *name;
        uint32_t unit;
    } counted[] = {
        {"vertices", UNIT_VERTEX}, {"primitives", UNIT_PRIMITIVE},     {"triangles", UNIT_TRIANGLE},
        {"pixels", UNIT_PIXEL},    {"fragments", UNIT_FRAGMENT},       {"bytes", UNIT_BYTE},
        {"ns", UNIT_NANOSECOND},   {"instructions", UNIT_INSTRUCTION}, {"percent", UNIT_PERCENT},
    };
    *denominator = c->unit == TALLY_UNIT_BYTES_PER_SECOND ? UNIT_SECOND : UNIT_NONE;
    *numerator = (unsigned)c->unit < sizeof typed / sizeof typed[0] ? typed[c->unit] : UNIT_NONE;
    for (size_t i = 0; !*numerator && c->unit_name && i < sizeof counted / sizeof counted[0]; i++)
        if (strcmp(c->unit_name, counted[i].name) == 0)
            *numerator = counted[i].unit;
}

/* Perfetto's counter groups are coarser than the catalogue's blocks: each
 * block goes to the group whose counters it holds. */
static uint32_t group_of(const tally_group_info *block)
{
    static const struct {
        const char *block;
        uint32_t group;
    } groups[] = {
        {"Gpu", GROUP_SYSTEM},
        {"CommandProcessor", GROUP_SYSTEM},
        {"InputAssembler", GROUP_VERTICES},
        {"VertexShader", GROUP_VERTICES},
        {"GeometryShader", GROUP_PRIMITIVES},
        {"PrimitiveSetup", GROUP_PRIMITIVES},
        {"Rasterizer", GROUP_FRAGMENTS},
        {"FragmentShader", GROUP_FRAGMENTS},
        {"ComputeShader", GROUP_COMPUTE},
        {"TextureUnit", GROUP_MEMORY},
        {"L2Cache", GROUP_MEMORY},
        {"Memory", GROUP_MEMORY},
    };
    for (size_t i = 0; block && i < sizeof groups / sizeof groups[0]; i++)
        if (strcmp(block->symbol, groups[i].block) == 0)
            return groups[i].group;
    return GROUP_UNCLASSIFIED;
}

static void put_spec(struct proto_buffer *out, const struct described *d, uint32_t column)
{
    const tally_counter_info *c = counter_at(d, column);
    char description[1024];
    snprintf(description, sizeof description, "%s, in %s. %s", c->name,
             c->unit_name ? c->unit_name : "units", c->description ? c->description : "");
    uint32_t numerator, denominator;
    unit_of(c, &numerator, &denominator);
    size_t spec = proto_open(out, DESCRIPTOR_SPECS);
    proto_uint(out, SPEC_COUNTER_ID, perfetto_counter_id(column));
    proto_string(out, SPEC_NAME, c->symbol);
    proto_string(out, SPEC_DESCRIPTION, description);
    if (numerator)
        proto_uint(out, SPEC_NUMERATOR_UNITS, numerator);
    if (denominator)
        proto_uint(out, SPEC_DENOMINATOR_UNITS, denominator);
    proto_uint(out, SPEC_GROUPS, group_of(tally_catalogue_group(d->catalogue, c->group)));
    proto_close(out, spec);
}

/* The catalogue's block of the counters of one group, with its capacity
 * per pass, as Perfetto's counter blocks describe hardware counter islands. */
static void put_block(struct proto_buffer *out, const struct described *d, uint32_t group)
{
    const tally_group_info *info = tally_catalogue_group(d->catalogue, group);
    if (!info)
        return;
    size_t block = proto_open(out, DESCRIPTOR_BLOCKS);
    proto_uint(out, BLOCK_ID, group + 1);
    proto_uint(out, BLOCK_CAPACITY, info->capacity);
    proto_string(out, BLOCK_NAME, info->symbol);
    if (info->description)
        proto_string(out, BLOCK_DESCRIPTION, info->description);
    for (uint32_t column = 0; column < d->count; column++)
        if (counter_at(d, column)->group == group)
            proto_uint(out, BLOCK_COUNTER_IDS, perfetto_counter_id(column));
    proto_close(out, block);
}

/* Whether column is the first of the described counters in its group. */
static bool first_of_group(const struct described *d, uint32_t column)
{
    uint32_t group = counter_at(d, column)->group;
    for (uint32_t earlier = 0; earlier < column; earlier++)
        if (counter_at(d, earlier)->group == group)
            return false;
    return true;
}

void perfetto_put_counter_descriptor(struct proto_buffer *out, uint32_t field,
                                     const tally_catalogue *catalogue, const uint32_t *counters,
                                     uint32_t count)
{
    const struct described d = {catalogue, counters, count};
    size_t descriptor = proto_open(out, field);
    for (uint32_t column = 0; column < count; column++)
        put_spec(out, &d, column);
    for (uint32_t column = 0; column < count; column++)
        if (first_of_group(&d, column))
            put_block(out, &d, counter_at(&d, column)->group);
    /* Each command is measured in the command stream itself. */
    proto_uint(out, DESCRIPTOR_INSTRUMENTED_SAMPLING, 1);
    proto_close(out, descriptor);
}
