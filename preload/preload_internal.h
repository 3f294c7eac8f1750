/* What the files of libtally_preload share and nobody else sees. */
#ifndef TALLY_PRELOAD_INTERNAL_H
#define TALLY_PRELOAD_INTERNAL_H

#include "tally_preload.h"

#define TALLY_PRELOAD_HIDDEN __attribute__((visibility("hidden")))

TALLY_PRELOAD_HIDDEN tally_preload_symbol *tally_preload_lookup(const char *name);
/* The wrapper to hand out for a registered name whose real address a lookup
 * found (real may be NULL): records real when keep_real and returns the
 * wrapper. */
TALLY_PRELOAD_HIDDEN void *tally_preload_substitute(const char *name, void *real, bool keep_real);

#endif
