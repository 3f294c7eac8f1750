#version 450
// draw.frag for two colour attachments.
layout(location = 0) out vec4 color;
layout(location = 1) out vec4 second;
void main()
{
    color = vec4(1.0, 0.5, 0.25, 1.0);
    second = vec4(0.25, 0.5, 1.0, 1.0);
}
