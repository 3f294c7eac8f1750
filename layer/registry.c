/* The process's instance and device records, found by dispatch key without a lock. */
#include "layer_state.h"

#include <stdlib.h>
#include <string.h>

static object_map instances;
static object_map devices;
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;

static void maps_init(void)
{
    object_map_init(&instances);
    object_map_init(&devices);
}

layer_instance *layer_instance_of(const void *dispatchable)
{
    pthread_once(&maps_once, maps_init);
    return object_map_get(&instances, layer_dispatch_key(dispatchable));
}

layer_device *layer_device_of(const void *dispatchable)
{
    pthread_once(&maps_once, maps_init);
    return object_map_get(&devices, layer_dispatch_key(dispatchable));
}

void layer_instance_register(layer_instance *instance)
{
    pthread_once(&maps_once, maps_init);
    object_map_put(&instances, layer_dispatch_key(instance->handle), instance);
}

void layer_instance_unregister(layer_instance *instance)
{
    object_map_remove(&instances, layer_dispatch_key(instance->handle));
}

void layer_device_register(layer_device *device)
{
    pthread_once(&maps_once, maps_init);
    object_map_put(&devices, layer_dispatch_key(device->handle), device);
}

void layer_device_unregister(layer_device *device)
{
    object_map_remove(&devices, layer_dispatch_key(device->handle));
}

static int compare_entry(const void *name, const void *entry)
{
    return strcmp(name, ((const layer_entry_point *)entry)->name);
}

const layer_entry_point *layer_entry_point_find(const char *name)
{
    return bsearch(name, layer_entry_points, layer_entry_point_count, sizeof(layer_entry_point),
                   compare_entry);
}
