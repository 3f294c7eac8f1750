/*
 * What the event monitor can report: eglGetEventConstantBRCM,
 * eglGetEventTrackInfoBRCM, eglGetEventInfoBRCM and
 * eglGetEventDataFieldInfoBRCM, from the engine's tracks and event kinds.
 */
#include <string.h>

#include "event_records.h"

/* Copies at most size bytes, the terminating NUL included; nothing for size 0
 * or no buffer. */
static void copy_name(const char *name, EGLint size, char *out)
{
    if (size <= 0 || !out)
        return;
    size_t length = strlen(name);
    if (length > (size_t)size - 1)
        length = (size_t)size - 1;
    memcpy(out, name, length);
    out[length] = '\0';
}

static size_t longer(size_t length, const char *name)
{
    size_t n = strlen(name);
    return n > length ? n : length;
}

/* The buffer size that holds every name of tracks, events and fields with its
 * terminating NUL. */
static EGLint max_string_len(tally_device *device)
{
    size_t length = 0;
    for (uint32_t t = 0; t < tally_timeline_track_count(device); t++)
        length = longer(length, tally_timeline_track_name(device, t));
    for (uint32_t k = 0; k < TALLY_EVENT_KIND_COUNT; k++) {
        const tally_event_kind_info *kind = tally_event_kind_get(k);
        length = longer(length, kind->name);
        for (uint32_t f = 0; f < kind->field_count; f++)
            length = longer(length, kind->fields[f].name);
    }
    return (EGLint)length + 1;
}

SHIM_EXPORT EGLint EGLAPIENTRY eglGetEventConstantBRCM(EGLenum pname)
{
    if (pname != EGL_NUM_EVENT_TRACKS_BRCM && pname != EGL_NUM_EVENTS_BRCM &&
        pname != EGL_MAX_EVENT_STRING_LEN_BRCM) {
        egl_error_set(EGL_BAD_PARAMETER); /* as Broadcom's driver does */
        return -1;
    }
    tally_device *device = shim_device();
    if (!device) {
        egl_error_set(EGL_NOT_INITIALIZED);
        return -1;
    }
    EGLint value = pname == EGL_NUM_EVENT_TRACKS_BRCM ? (EGLint)tally_timeline_track_count(device)
                   : pname == EGL_NUM_EVENTS_BRCM     ? TALLY_EVENT_KIND_COUNT
                                                      : max_string_len(device);
    egl_error_set(EGL_SUCCESS);
    return value;
}

SHIM_EXPORT EGLBoolean EGLAPIENTRY eglGetEventTrackInfoBRCM(EGLint track, EGLint nameStrSize,
                                                            char *trackNameStr)
{
    if (nameStrSize < 0)
        return egl_error_set(EGL_BAD_PARAMETER);
    tally_device *device = shim_device();
    if (!device)
        return egl_error_set(EGL_NOT_INITIALIZED);
    if (track < 0 || (uint32_t)track >= tally_timeline_track_count(device))
        return egl_error_set(EGL_BAD_PARAMETER);
    copy_name(tally_timeline_track_name(device, (uint32_t)track), nameStrSize, trackNameStr);
    return egl_error_set(EGL_SUCCESS);
}

static const tally_event_kind_info *kind_at(EGLint event)
{
    return event < 0 ? NULL : tally_event_kind_get((uint32_t)event);
}

SHIM_EXPORT EGLBoolean EGLAPIENTRY eglGetEventInfoBRCM(EGLint event, EGLint nameStrSize,
                                                       char *nameStr, EGLint *numDataFields,
                                                       EGLint *totalDataBytes)
{
    const tally_event_kind_info *kind = kind_at(event);
    if (!kind || nameStrSize < 0)
        return egl_error_set(EGL_BAD_PARAMETER);
    copy_name(kind->name, nameStrSize, nameStr);
    if (numDataFields)
        *numDataFields = (EGLint)kind->field_count;
    if (totalDataBytes)
        *totalDataBytes = (EGLint)event_data_bytes((uint32_t)event);
    return egl_error_set(EGL_SUCCESS);
}

SHIM_EXPORT EGLBoolean EGLAPIENTRY eglGetEventDataFieldInfoBRCM(EGLint event, EGLint field,
                                                                EGLint nameStrSize, char *nameStr,
                                                                EGLBoolean *isSigned,
                                                                EGLint *numBytes)
{
    const tally_event_kind_info *kind = kind_at(event);
    if (!kind || field < 0 || (uint32_t)field >= kind->field_count || nameStrSize < 0)
        return egl_error_set(EGL_BAD_PARAMETER);
    const tally_event_field_info *info = &kind->fields[field];
    copy_name(info->name, nameStrSize, nameStr);
    if (isSigned)
        *isSigned = info->is_signed ? EGL_TRUE : EGL_FALSE;
    if (numBytes)
        *numBytes = (EGLint)info->bytes;
    return egl_error_set(EGL_SUCCESS);
}
