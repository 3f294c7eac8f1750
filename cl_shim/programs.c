/* Program builds get -cl-kernel-arg-info, so that kernels can be profiled
 * from their arguments (kernel_profile.c). */
#include <stdlib.h>

#include "shim.h"

SHIM_HIDDEN cl_int CL_API_CALL shim_clBuildProgram(cl_program program, cl_uint num_devices,
                                                   const cl_device_id *devices, const char *options,
                                                   void(CL_CALLBACK *notify)(cl_program, void *),
                                                   void *user_data)
{
    char *with_info = options_with_arg_info(options);
    cl_int err = next_cl()->clBuildProgram(program, num_devices, devices,
                                           with_info ? with_info : options, notify, user_data);
    free(with_info);
    return err;
}
TALLY_CL_EXPORT(clBuildProgram);

SHIM_HIDDEN cl_int CL_API_CALL shim_clCompileProgram(
    cl_program program, cl_uint num_devices, const cl_device_id *devices, const char *options,
    cl_uint num_headers, const cl_program *headers, const char **header_names,
    void(CL_CALLBACK *notify)(cl_program, void *), void *user_data)
{
    char *with_info = options_with_arg_info(options);
    cl_int err =
        next_cl()->clCompileProgram(program, num_devices, devices, with_info ? with_info : options,
                                    num_headers, headers, header_names, notify, user_data);
    free(with_info);
    return err;
}
TALLY_CL_EXPORT(clCompileProgram);
