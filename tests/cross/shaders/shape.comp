#version 450
// Every dimension of the local size is a specialization constant, so one
// shader dispatches any workgroup shape the OpenCL side enqueues. It uses no
// resources: vk_context's pipeline layout is empty, and the counters compared
// depend on the dispatch's shape alone.
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
shared uint last;
void main()
{
    last = gl_LocalInvocationIndex;
}
