#version 450
// Positions come from the vertex index alone: no vertex buffers to set up.
void main()
{
    float x = float(gl_VertexIndex % 7) / 3.5 - 1.0;
    float y = float(gl_VertexIndex / 7) / 3.5 - 1.0;
    gl_Position = vec4(x, y, 0.0, 1.0);
    gl_PointSize = 1.0;
}
