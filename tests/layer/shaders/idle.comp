#version 450
// No resources: a dispatch that needs nothing bound. The local size is a
// specialization constant.
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
shared uint scratch[64];
void main()
{
    scratch[gl_LocalInvocationIndex % 64u] = gl_LocalInvocationIndex;
}
