/*
 * Primitives per topology, as Vulkan's input-assembly statistics count them:
 * complete primitives only (incomplete trailing vertices assemble nothing),
 * and GL's extra topologies by their GL definitions.
 */
#include "engine.h"

static uint64_t strip(uint64_t vertices, uint64_t needed)
{
    return vertices >= needed ? vertices - (needed - 1) : 0;
}

uint64_t tally_topology_primitives(tally_topology topology, uint64_t vertices,
                                   uint32_t patch_control_points)
{
    switch (topology) {
    case TALLY_TOPOLOGY_POINT_LIST: return vertices;
    case TALLY_TOPOLOGY_LINE_LIST: return vertices / 2;
    case TALLY_TOPOLOGY_LINE_STRIP: return strip(vertices, 2);
    case TALLY_TOPOLOGY_TRIANGLE_LIST: return vertices / 3;
    case TALLY_TOPOLOGY_TRIANGLE_STRIP: return strip(vertices, 3);
    case TALLY_TOPOLOGY_TRIANGLE_FAN: return strip(vertices, 3);
    case TALLY_TOPOLOGY_LINE_LIST_WITH_ADJACENCY: return vertices / 4;
    case TALLY_TOPOLOGY_LINE_STRIP_WITH_ADJACENCY: return strip(vertices, 4);
    case TALLY_TOPOLOGY_TRIANGLE_LIST_WITH_ADJACENCY: return vertices / 6;
    case TALLY_TOPOLOGY_TRIANGLE_STRIP_WITH_ADJACENCY:
        return vertices >= 6 ? (vertices - 4) / 2 : 0;
    case TALLY_TOPOLOGY_PATCH_LIST:
        return patch_control_points ? vertices / patch_control_points : 0;
    case TALLY_TOPOLOGY_LINE_LOOP: return vertices >= 2 ? vertices : 0;
    case TALLY_TOPOLOGY_QUAD_LIST: return vertices / 4;
    case TALLY_TOPOLOGY_QUAD_STRIP: return vertices >= 4 ? (vertices - 2) / 2 : 0;
    case TALLY_TOPOLOGY_POLYGON: return vertices >= 3 ? 1 : 0;
    default: return 0;
    }
}
