#version 450
// The local size's x is specialization constant 7 (unset sizes default to 1); y is fixed.
layout(local_size_x_id = 7, local_size_y = 3) in;
void main() {}
