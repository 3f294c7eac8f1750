// Sums the layer's statistics queries of one range into the shadow slot of an application query (layer/statistics_copy.c).
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

// One invocation: a range holds a few records, and it runs once per query.
layout(local_size_x = 1) in;

// The parameter arena's address: no descriptor set or push constant of the
// application's is disturbed. The workgroup (vkCmdDispatchBase) names the slot.
layout(constant_id = 0) const uint ARENA_LO = 0;
layout(constant_id = 1) const uint ARENA_HI = 0;

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Params {
    uvec2 records;   // the range's first record (64-bit statistics, the family's order)
    uvec2 slot;      // the application query's shadow slot
    uint count;      // records in the range
    uint stride;     // 64-bit words per record
    uint n;          // statistics of the application's pool
    uint accumulate; // add to the slot (a later range of the same query)
    uint map[4];     // per statistic, a byte: its word in a record, 255 for none
};
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Records {
    uvec2 words[];
};
// Both layouts of vkCmdCopyQueryPoolResults: 64-bit values then availability,
// and the same in 32 bits.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Slot {
    uvec2 wide[12];
    uint narrow[12];
};

uvec2 add64(uvec2 a, uvec2 b)
{
    uint carry;
    uint lo = uaddCarry(a.x, b.x, carry);
    return uvec2(lo, a.y + b.y + carry);
}

void main()
{
    uvec2 at = add64(uvec2(ARENA_LO, ARENA_HI), uvec2(gl_WorkGroupID.x * 64u, 0u));
    Params p = Params(at);
    Records r = Records(p.records);
    Slot s = Slot(p.slot);
    for (uint i = 0; i < p.n; i++) {
        uint from = (p.map[i / 4u] >> (8u * (i % 4u))) & 0xffu;
        uvec2 sum = p.accumulate != 0u ? s.wide[i] : uvec2(0u);
        if (from != 0xffu)
            for (uint q = 0; q < p.count; q++)
                sum = add64(sum, r.words[q * p.stride + from]);
        s.wide[i] = sum;
        s.narrow[i] = sum.x;
    }
    s.wide[p.n] = uvec2(1u, 0u);
    s.narrow[p.n] = 1u;
}
