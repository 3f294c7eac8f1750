#version 450
// A fixed local size and a loop-free body: one load, one multiply, one store.
layout(local_size_x = 8, local_size_y = 4, local_size_z = 2) in;
layout(std430, binding = 0) buffer Data { float values[]; };
void main() { values[gl_LocalInvocationIndex] = values[gl_LocalInvocationIndex] * 2.0; }
