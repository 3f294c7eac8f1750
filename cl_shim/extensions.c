/*
 * What the shim adds to what the driver says about itself: the extension
 * names (cl_codeplay_performance_counters on every device,
 * cl_khr_create_command_queue on every platform, which PoCL 3.1 lacks), the
 * counter list, clCreateCommandQueueWithPropertiesKHR, and MDAPI query mode's
 * clCreatePerfCountersCommandQueueINTEL (perf_counters.c). When the counter
 * device cannot open, none of it is added: the driver's answers go back as
 * they are (session.c says why once).
 */
#include <stdlib.h>
#include <string.h>

#include "shim.h"

SHIM_HIDDEN __typeof__(clCreateCommandQueueWithPropertiesKHR)
    shim_clCreateCommandQueueWithPropertiesKHR;

static const char device_extension[] = "cl_codeplay_performance_counters";
static const char platform_extension[] = "cl_khr_create_command_queue";
/* The oneAPI Construction Kit's version of the extension. */
#define DEVICE_EXTENSION_VERSION CL_MAKE_VERSION(0, 1, 0)
#define PLATFORM_EXTENSION_VERSION CL_MAKE_VERSION(1, 0, 0)

/* Whether the shim offers its extensions: only with a counter device. */
static bool offered(void)
{
    return session_device() != NULL;
}

/* Whether a space-separated list names the extension. */
static bool names_extension(const char *list, const char *name)
{
    size_t length = strlen(name);
    for (const char *p = strstr(list, name); p; p = strstr(p + 1, name)) {
        bool starts = p == list || p[-1] == ' ';
        bool ends = p[length] == '\0' || p[length] == ' ';
        if (starts && ends)
            return true;
    }
    return false;
}

/* The driver's answer to a query, in a malloc'ed buffer of *size bytes. */
typedef cl_int (*info_query)(const void *object, cl_uint name, size_t size, void *value,
                             size_t *size_ret);

static cl_int query_platform(const void *object, cl_uint name, size_t size, void *value,
                             size_t *size_ret)
{
    return next_cl()->clGetPlatformInfo((cl_platform_id)object, name, size, value, size_ret);
}

static cl_int query_device(const void *object, cl_uint name, size_t size, void *value,
                           size_t *size_ret)
{
    return next_cl()->clGetDeviceInfo((cl_device_id)object, name, size, value, size_ret);
}

static cl_int driver_answer(info_query query, const void *object, cl_uint name, void **data,
                            size_t *size)
{
    cl_int err = query(object, name, 0, NULL, size);
    if (err != CL_SUCCESS)
        return err;
    *data = malloc(*size + 1);
    if (!*data)
        return CL_OUT_OF_HOST_MEMORY;
    err = query(object, name, *size, *data, NULL);
    if (err != CL_SUCCESS)
        free(*data);
    return err;
}

/* The driver's extension string with `extra` appended unless named already. */
static cl_int extension_string(info_query query, const void *object, cl_uint name,
                               const char *extra, size_t value_size, void *value, size_t *size_ret)
{
    void *data;
    size_t size;
    cl_int err = driver_answer(query, object, name, &data, &size);
    if (err != CL_SUCCESS)
        return err;
    char *text = data;
    text[size] = '\0';
    size_t length = strlen(text);
    while (length > 0 && text[length - 1] == ' ')
        text[--length] = '\0';
    if (!names_extension(text, extra)) {
        char *longer = malloc(length + strlen(extra) + 2);
        if (!longer) {
            free(data);
            return CL_OUT_OF_HOST_MEMORY;
        }
        strcpy(longer, text);
        if (length > 0)
            strcat(longer, " ");
        strcat(longer, extra);
        free(data);
        text = longer;
    }
    err = shim_answer_info(text, strlen(text) + 1, value_size, value, size_ret);
    free(text);
    return err;
}

static cl_int extension_versions(info_query query, const void *object, cl_uint name,
                                 const char *extra, cl_version version, size_t value_size,
                                 void *value, size_t *size_ret)
{
    void *data;
    size_t size;
    cl_int err = driver_answer(query, object, name, &data, &size);
    if (err != CL_SUCCESS)
        return err;
    size_t count = size / sizeof(cl_name_version);
    cl_name_version *list = realloc(data, (count + 1) * sizeof(cl_name_version));
    if (!list) {
        free(data);
        return CL_OUT_OF_HOST_MEMORY;
    }
    bool present = false;
    for (size_t i = 0; i < count; i++)
        present = present || strcmp(list[i].name, extra) == 0;
    if (!present) {
        memset(&list[count], 0, sizeof(list[count]));
        list[count].version = version;
        strcpy(list[count].name, extra);
        count++;
    }
    err = shim_answer_info(list, count * sizeof(cl_name_version), value_size, value, size_ret);
    free(list);
    return err;
}

SHIM_HIDDEN cl_int CL_API_CALL shim_clGetPlatformInfo(cl_platform_id platform,
                                                      cl_platform_info name, size_t size,
                                                      void *value, size_t *size_ret)
{
    if (!offered())
        return next_cl()->clGetPlatformInfo(platform, name, size, value, size_ret);
    if (name == CL_PLATFORM_EXTENSIONS)
        return extension_string(query_platform, platform, name, platform_extension, size, value,
                                size_ret);
    if (name == CL_PLATFORM_EXTENSIONS_WITH_VERSION)
        return extension_versions(query_platform, platform, name, platform_extension,
                                  PLATFORM_EXTENSION_VERSION, size, value, size_ret);
    return next_cl()->clGetPlatformInfo(platform, name, size, value, size_ret);
}
TALLY_CL_EXPORT(clGetPlatformInfo);

SHIM_HIDDEN cl_int CL_API_CALL shim_clGetDeviceInfo(cl_device_id device, cl_device_info name,
                                                    size_t size, void *value, size_t *size_ret)
{
    if (!offered())
        return next_cl()->clGetDeviceInfo(device, name, size, value, size_ret);
    switch (name) {
    case CL_DEVICE_EXTENSIONS:
        return extension_string(query_device, device, name, device_extension, size, value,
                                size_ret);
    case CL_DEVICE_EXTENSIONS_WITH_VERSION:
        return extension_versions(query_device, device, name, device_extension,
                                  DEVICE_EXTENSION_VERSION, size, value, size_ret);
    case CL_DEVICE_PERFORMANCE_COUNTERS_CODEPLAY: {
        /* The driver judges the handle. */
        cl_device_type type;
        cl_int err = next_cl()->clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
        if (err != CL_SUCCESS)
            return err;
        return device_performance_counters(size, value, size_ret);
    }
    default: return next_cl()->clGetDeviceInfo(device, name, size, value, size_ret);
    }
}
TALLY_CL_EXPORT(clGetDeviceInfo);

/* MDAPI query mode's queue (perf_counters.c), only with a counter device. */
static void *perf_counters_entry(const char *name)
{
    return name && offered() && strcmp(name, "clCreatePerfCountersCommandQueueINTEL") == 0
               ? (void *)shim_clCreatePerfCountersCommandQueueINTEL
               : NULL;
}

SHIM_HIDDEN void *CL_API_CALL shim_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform,
                                                                            const char *name)
{
    if (name && strcmp(name, "clCreateCommandQueueWithPropertiesKHR") == 0)
        return (void *)shim_clCreateCommandQueueWithPropertiesKHR;
    if (perf_counters_entry(name))
        return perf_counters_entry(name);
    return next_cl()->clGetExtensionFunctionAddressForPlatform(platform, name);
}
TALLY_CL_EXPORT(clGetExtensionFunctionAddressForPlatform);

SHIM_HIDDEN void *CL_API_CALL shim_clGetExtensionFunctionAddress(const char *name)
{
    if (name && strcmp(name, "clCreateCommandQueueWithPropertiesKHR") == 0)
        return (void *)shim_clCreateCommandQueueWithPropertiesKHR;
    if (perf_counters_entry(name))
        return perf_counters_entry(name);
    return next_cl()->clGetExtensionFunctionAddress(name);
}
TALLY_CL_EXPORT(clGetExtensionFunctionAddress);
