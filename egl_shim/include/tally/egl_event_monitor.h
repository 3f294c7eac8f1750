/*
 * EGL_BRCM_event_monitor, as libtally_egl.so serves it: tokens, types and
 * entry points. Khronos' eglext.h has none of them, and Broadcom's
 * eglext_brcm.h differs from the extension's specification (its
 * eglGetEventInfoBRCM lacks totalDataBytes); this header follows the
 * specification. Prototypes are declared under EGL_EGLEXT_PROTOTYPES; fetch the
 * functions with eglGetProcAddress otherwise.
 */
#ifndef TALLY_EGL_EVENT_MONITOR_H
#define TALLY_EGL_EVENT_MONITOR_H

#include <EGL/egl.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef EGL_BRCM_event_monitor
#define EGL_BRCM_event_monitor 1

typedef khronos_uint64_t EGLuint64BRCM;

#define EGL_ACQUIRE_EVENTS_BRCM 0x33D0
#define EGL_RELEASE_EVENTS_BRCM 0x33D1
#define EGL_START_EVENTS_BRCM 0x33D2
#define EGL_STOP_EVENTS_BRCM 0x33D3
#define EGL_NUM_EVENT_TRACKS_BRCM 0x33D4
#define EGL_NUM_EVENTS_BRCM 0x33D5
#define EGL_MAX_EVENT_STRING_LEN_BRCM 0x33D6

typedef EGLint(EGLAPIENTRYP PFNEGLGETEVENTCONSTANTBRCMPROC)(EGLenum pname);
typedef EGLBoolean(EGLAPIENTRYP PFNEGLGETEVENTTRACKINFOBRCMPROC)(EGLint track, EGLint nameStrSize,
                                                                 char *trackNameStr);
typedef EGLBoolean(EGLAPIENTRYP PFNEGLGETEVENTINFOBRCMPROC)(EGLint event, EGLint nameStrSize,
                                                            char *nameStr, EGLint *numDataFields,
                                                            EGLint *totalDataBytes);
typedef EGLBoolean(EGLAPIENTRYP PFNEGLGETEVENTDATAFIELDINFOBRCMPROC)(EGLint event, EGLint field,
                                                                     EGLint nameStrSize,
                                                                     char *nameStr,
                                                                     EGLBoolean *isSigned,
                                                                     EGLint *numBytes);
typedef EGLBoolean(EGLAPIENTRYP PFNEGLSETEVENTCOLLECTIONBRCMPROC)(EGLenum pname);
typedef EGLBoolean(EGLAPIENTRYP PFNEGLGETEVENTDATABRCMPROC)(EGLint dataBufferBytes, void *data,
                                                            EGLint *bytesWritten,
                                                            EGLBoolean *lostData,
                                                            EGLuint64BRCM *timestampNow);

#ifdef EGL_EGLEXT_PROTOTYPES
EGLAPI EGLint EGLAPIENTRY eglGetEventConstantBRCM(EGLenum pname);
EGLAPI EGLBoolean EGLAPIENTRY eglGetEventTrackInfoBRCM(EGLint track, EGLint nameStrSize,
                                                       char *trackNameStr);
EGLAPI EGLBoolean EGLAPIENTRY eglGetEventInfoBRCM(EGLint event, EGLint nameStrSize, char *nameStr,
                                                  EGLint *numDataFields, EGLint *totalDataBytes);
EGLAPI EGLBoolean EGLAPIENTRY eglGetEventDataFieldInfoBRCM(EGLint event, EGLint field,
                                                           EGLint nameStrSize, char *nameStr,
                                                           EGLBoolean *isSigned, EGLint *numBytes);
EGLAPI EGLBoolean EGLAPIENTRY eglSetEventCollectionBRCM(EGLenum pname);
EGLAPI EGLBoolean EGLAPIENTRY eglGetEventDataBRCM(EGLint dataBufferBytes, void *data,
                                                  EGLint *bytesWritten, EGLBoolean *lostData,
                                                  EGLuint64BRCM *timestampNow);
#endif

/* Every record starts with this header (24 bytes, no padding); the event's
 * data fields follow it, packed, each numBytes long, in native byte order.
 * Records follow each other unpadded: read them with memcpy. */
#define TALLY_EGL_RECORD_HEADER_BYTES 24

#endif

#ifdef __cplusplus
}
#endif

#endif
