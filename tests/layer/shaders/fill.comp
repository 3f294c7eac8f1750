#version 450
// The local size is a specialization constant, so tally must apply the
// pipeline's specialization info to know the invocation count.
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(std430, binding = 0) buffer Out { uint values[]; };
void main()
{
    uint index = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 1024u;
    values[index % 4096u] = index;
}
