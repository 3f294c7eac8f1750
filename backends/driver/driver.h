/* The driver backend's internal interface between its entry and its catalogue subsets. */
#ifndef TALLY_DRIVER_H
#define TALLY_DRIVER_H

#include "backend.h"
#include "driver_catalogue.h"

/* subset.c: the catalogue of a device that can measure `measurable`
 * (tally_measure_bits; 0: everything), kept for the life of the process. */
const struct tally_catalogue *driver_catalogue_for(uint32_t measurable);

#endif
