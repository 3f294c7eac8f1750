/* How every clGet*Info the shim answers itself replies: OpenCL's rule for
 * param_value and param_value_size_ret. */
#include <string.h>

#include "shim.h"

cl_int shim_answer_info(const void *data, size_t size, size_t value_size, void *value,
                        size_t *size_ret)
{
    if (value && value_size < size)
        return CL_INVALID_VALUE;
    if (value)
        memcpy(value, data, size);
    if (size_ret)
        *size_ret = size;
    return CL_SUCCESS;
}
