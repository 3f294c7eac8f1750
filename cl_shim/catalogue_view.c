/* The counter catalogue as cl_codeplay_performance_counters sees it: a flat
 * list of records, derived from the catalogue at run time. */
#include <string.h>

#include "shim.h"

static const tally_catalogue *catalogue;
static pthread_once_t catalogue_once = PTHREAD_ONCE_INIT;

static void load_catalogue(void)
{
    /* The shared device's: in a process where another front door opened it
     * first, its catalogue is that door's (docs/driver.md), and counter
     * indices must be the device's. Without a device, the catalogue it
     * would have for OpenCL (session.c). */
    tally_device *device = session_device();
    if (device) {
        catalogue = tally_device_catalogue(device);
        return;
    }
    if (tally_backend_catalogue_measuring(
            NULL, TALLY_MEASURE_COMMANDS | TALLY_MEASURE_CS_INVOCATIONS | TALLY_MEASURE_TIME,
            &catalogue) != TALLY_OK) {
        tally_log(TALLY_LOG_ERROR, "OpenCL: no counter catalogue for TALLY_BACKEND; "
                                   "no performance counters are offered");
        catalogue = NULL;
    }
}

const tally_catalogue *cl_catalogue(void)
{
    pthread_once(&catalogue_once, load_catalogue);
    return catalogue;
}

cl_uint counter_cl_uuid(const tally_counter_info *counter)
{
    return (cl_uint)counter->uuid[0] << 24 | (cl_uint)counter->uuid[1] << 16 |
           (cl_uint)counter->uuid[2] << 8 | (cl_uint)counter->uuid[3];
}

bool counter_index_of_uuid(cl_uint uuid, uint32_t *index)
{
    const tally_catalogue *cat = cl_catalogue();
    uint32_t count = cat ? tally_catalogue_counter_count(cat) : 0;
    for (uint32_t i = 0; i < count; i++) {
        if (counter_cl_uuid(tally_catalogue_counter(cat, i)) == uuid) {
            *index = i;
            return true;
        }
    }
    return false;
}

/* Fills a fixed-size name field, always terminated, cut if longer. */
static void copy_field(char *field, size_t size, const char *text)
{
    strncpy(field, text ? text : "", size - 1);
    field[size - 1] = '\0';
}

static void fill_record(cl_performance_counter_codeplay *record, const tally_counter_info *c)
{
    const tally_catalogue *cat = cl_catalogue();
    memset(record, 0, sizeof(*record));
    /* The catalogue's units and storages have the Codeplay values. */
    record->unit = (cl_performance_counter_unit_codeplay)c->unit;
    record->storage = (cl_performance_counter_storage_codeplay)c->storage;
    record->uuid = counter_cl_uuid(c);
    copy_field(record->name, sizeof(record->name), tally_counter_name_for(c, TALLY_API_CL));
    copy_field(record->category, sizeof(record->category),
               tally_catalogue_group(cat, c->group)->name);
    copy_field(record->description, sizeof(record->description), c->description);
}

/* clGetDeviceInfo(CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY), with the checks
 * of the oneAPI Construction Kit: a size without a buffer or a buffer
 * without a size is CL_INVALID_VALUE, and so is a buffer too small. */
cl_int device_performance_counters(size_t size, void *value, size_t *size_ret)
{
    if ((size == 0) != (value == NULL))
        return CL_INVALID_VALUE;
    const tally_catalogue *cat = cl_catalogue();
    uint32_t count = cat ? tally_catalogue_counter_count(cat) : 0;
    size_t needed = count * sizeof(cl_performance_counter_codeplay);
    if (value && size < needed)
        return CL_INVALID_VALUE;
    if (value) {
        cl_performance_counter_codeplay *records = value;
        for (uint32_t i = 0; i < count; i++)
            fill_record(&records[i], tally_catalogue_counter(cat, i));
    }
    if (size_ret)
        *size_ret = needed;
    return CL_SUCCESS;
}
