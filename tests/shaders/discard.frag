#version 450
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
layout(binding = 0) uniform sampler2D image;
void main()
{
    vec4 texel = texture(image, uv);
    if (texel.a < 0.5)
        discard;
    color = texel;
}
