/* Engine events as EGL_BRCM_event_monitor records (layout in event_records.c). */
#ifndef TALLY_EGL_EVENT_RECORDS_H
#define TALLY_EGL_EVENT_RECORDS_H

#include "egl_shim.h"
#include "tally/timeline.h"

/* totalDataBytes of an event kind: its fields' widths summed. */
uint32_t event_data_bytes(uint32_t kind);
uint32_t event_record_bytes(const tally_event *event);
/* Writes event_record_bytes(event) bytes at out. */
void event_record_write(const tally_event *event, unsigned char *out);

#endif
