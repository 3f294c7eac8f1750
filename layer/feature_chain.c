/* Turning on a device feature the application left off: a pNext chain whose
 * feature structure is a copy with the feature set. */
#include <stdlib.h>
#include <string.h>

#include "driver_measure.h"

static size_t aligned(size_t size)
{
    return (size + 15) & ~(size_t)15;
}

const void *layer_chain_enabling(const void *pNext, VkStructureType type, size_t field,
                                 void **storage)
{
    size_t total = 0;
    for (const VkBaseInStructure *s = pNext; s; s = s->pNext) {
        size_t size = layer_struct_size(s->sType);
        if (!size)
            return NULL; /* a structure the registry does not know comes first */
        total += aligned(size);
        if (s->sType == type)
            break;
    }
    char *block = malloc(total);
    if (!block)
        return NULL;
    *storage = block;
    VkBaseOutStructure *head = NULL, *tail = NULL;
    for (const VkBaseInStructure *s = pNext; s; s = s->pNext) {
        size_t size = layer_struct_size(s->sType);
        VkBaseOutStructure *copy = (VkBaseOutStructure *)block;
        memcpy(copy, s, size);
        block += aligned(size);
        if (tail)
            tail->pNext = copy;
        else
            head = copy;
        tail = copy;
        if (s->sType == type) {
            VkBool32 on = VK_TRUE;
            memcpy((char *)copy + field, &on, sizeof on);
            break; /* copy->pNext is still the application's rest */
        }
    }
    return head;
}
