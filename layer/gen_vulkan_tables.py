#!/usr/bin/env python3
"""Generates the layer's Vulkan tables from the registry (vk.xml).

Outputs, into the output directory:
  vk_tables.h        dispatch table structs, extension enum, entry-point record
  vk_dispatch.c      functions that fill the dispatch tables through the next
                     layer's GetInstanceProcAddr / GetDeviceProcAddr
  vk_entry_points.c  the intercepted entry points (hand-written hooks listed in
                     hooked_commands.txt, every draw/dispatch command of the
                     registry, each with its aliases), what enables each one,
                     the wrappers of the draw/dispatch commands, and the block
                     size of every format

Usage: gen_vulkan_tables.py vk.xml hooked_commands.txt outdir
"""
import os
import sys
import xml.etree.ElementTree as ET

DEVICE_HANDLES = {"VkDevice", "VkQueue", "VkCommandBuffer"}
INSTANCE_HANDLES = {"VkInstance", "VkPhysicalDevice"}
# Commands that record work the engine counts.
WORK_PREFIXES = ("vkCmdDraw", "vkCmdDispatch", "vkCmdTraceRays", "vkCmdSubpassShading")


def for_vulkan(element):
    api = element.get("api")
    return api is None or "vulkan" in api.split(",")


class Registry:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.commands = {}  # name -> (return type, [(type, name, decl)])
        self.aliases = {}  # alias -> canonical
        for c in root.find("commands"):
            if not for_vulkan(c):
                continue
            if c.get("alias"):
                self.aliases[c.get("name")] = c.get("alias")
                continue
            proto = c.find("proto")
            name = proto.find("name").text
            params = []
            for p in c.findall("param"):
                if not for_vulkan(p):
                    continue
                decl = " ".join("".join(p.itertext()).split())
                params.append((p.find("type").text, p.find("name").text, decl))
            self.commands[name] = (proto.find("type").text, params)
        # name -> core version number (e.g. 0x401000) and providing extensions
        self.core = {}
        self.providers = {}
        self.platform_only = set()
        for f in root.findall("feature"):
            if not for_vulkan(f):
                continue
            major, minor = f.get("number").split(".")
            version = (int(major) << 22) | (int(minor) << 12)
            for req in f.findall("require"):
                for c in req.findall("command"):
                    self.core.setdefault(c.get("name"), version)
        self.extensions = []
        platform_commands = set()
        plain_commands = set()
        for e in root.find("extensions"):
            supported = e.get("supported", "").split(",")
            if "vulkan" not in supported:
                continue
            self.extensions.append(e.get("name"))
            for req in e.findall("require"):
                if not for_vulkan(req):
                    continue
                for c in req.findall("command"):
                    n = c.get("name")
                    self.providers.setdefault(n, [])
                    if e.get("name") not in self.providers[n]:
                        self.providers[n].append(e.get("name"))
                    (platform_commands if e.get("platform") else plain_commands).add(n)
        self.platform_only = platform_commands - plain_commands - set(self.core)
        # Structures with an sType that a non-platform feature or extension defines.
        required_types = set()
        for f in root.findall("feature"):
            if for_vulkan(f):
                for t in f.iter("type"):
                    required_types.add(t.get("name"))
        for e in root.find("extensions"):
            if "vulkan" in e.get("supported", "").split(",") and not e.get("platform") \
                    and not e.get("provisional"):
                for t in e.iter("type"):
                    required_types.add(t.get("name"))
        self.structs = []
        for t in root.find("types"):
            if t.get("category") != "struct" or t.get("alias") or t.get("name") not in required_types:
                continue
            for m in t.findall("member"):
                if m.find("name").text == "sType" and m.get("values") and for_vulkan(m):
                    self.structs.append((m.get("values"), t.get("name")))
        self.formats = []
        formats = root.find("formats")
        values = {}
        for enums in root.findall("enums"):
            if enums.get("name") == "VkFormat":
                for v in enums.findall("enum"):
                    if v.get("value"):
                        values[v.get("name")] = int(v.get("value"))
        for e in root.iter("enum"):
            if e.get("extends") == "VkFormat" and e.get("offset"):
                ext = int(e.get("extnumber") or 0)
                if not ext:
                    continue
                values[e.get("name")] = 1000000000 + (ext - 1) * 1000 + int(e.get("offset"))
        if formats is not None:
            for f in formats:
                if f.get("name") in values:
                    self.formats.append((values[f.get("name")], f.get("name"), int(f.get("blockSize"))))
        # extension numbers for enums extending via offset need the extension's number
        self._fix_extension_formats(root, values)

    def _fix_extension_formats(self, root, values):
        numbers = {}
        for e in root.find("extensions"):
            numbers[e.get("name")] = int(e.get("number"))
            for req in e.findall("require"):
                for en in req.findall("enum"):
                    if en.get("extends") == "VkFormat" and en.get("offset") and not en.get("extnumber"):
                        v = 1000000000 + (numbers[e.get("name")] - 1) * 1000 + int(en.get("offset"))
                        values[en.get("name")] = v
                    elif en.get("extends") == "VkFormat" and en.get("alias") is None and en.get("value"):
                        values[en.get("name")] = int(en.get("value"))
        for f in root.find("formats"):
            if f.get("name") in values and all(f.get("name") != n for _, n, _ in self.formats):
                self.formats.append((values[f.get("name")], f.get("name"), int(f.get("blockSize"))))
        self.formats.sort()

    def canonical(self, name):
        while name in self.aliases:
            name = self.aliases[name]
        return name

    def names_of(self, canonical):
        """The canonical name and every alias of it, canonical first."""
        names = [canonical] + sorted(a for a in self.aliases if self.canonical(a) == canonical)
        return names

    def level(self, canonical):
        params = self.commands[canonical][1]
        if canonical in ("vkGetInstanceProcAddr", "vkGetDeviceProcAddr"):
            return None
        first = params[0][0] if params else None
        if first in DEVICE_HANDLES:
            return "device"
        if first in INSTANCE_HANDLES:
            return "instance"
        return None

    def usable(self, name):
        return name in self.core or (name in self.providers and name not in self.platform_only)


def field(name):
    return name[2:]


def hook_names(reg, hooked, work):
    """(function name suffix, canonical command) of every hook: one per
    hand-written hook, and one per name of each draw/dispatch command so that
    reports carry the name the program called."""
    names = [(n, reg.canonical(n)) for n in hooked]
    for c in work:
        names += [(n, c) for n in reg.names_of(c) if reg.usable(n)]
    return names


def write_header(reg, out, hooked, work):
    lines = ["/* Generated by gen_vulkan_tables.py from vk.xml; do not edit. */",
             "#ifndef TALLY_LAYER_VK_TABLES_H", "#define TALLY_LAYER_VK_TABLES_H",
             "#include <stdbool.h>", "#include <stddef.h>", "#include <stdint.h>", "#include <vulkan/vulkan.h>", ""]
    for level in ("instance", "device"):
        lines.append("struct layer_%s_dispatch {" % level)
        for c in sorted(reg.commands):
            if reg.level(c) == level and any(reg.usable(n) for n in reg.names_of(c)):
                lines.append("    PFN_%s %s;" % (c, field(c)))
        lines.append("};")
        lines.append("")
    lines.append("enum layer_extension {")
    for e in reg.extensions:
        lines.append("    LAYER_EXT_%s," % e[3:])
    lines.append("    LAYER_EXTENSION_COUNT")
    lines.append("};")
    lines += ["",
              "/* Enabled extensions of an instance and its device, one bit each. */",
              "typedef struct layer_extension_set {",
              "    uint64_t bits[(LAYER_EXTENSION_COUNT + 63) / 64];",
              "} layer_extension_set;",
              "",
              "/* The extension's index, or LAYER_EXTENSION_COUNT if the registry has none of that name. */",
              "uint32_t layer_extension_index(const char *name);",
              "extern const char *const layer_extension_names[LAYER_EXTENSION_COUNT];",
              "",
              "/* An entry point the layer intercepts, and what makes it available. */",
              "typedef struct layer_entry_point {",
              "    const char *name;",
              "    PFN_vkVoidFunction function;",
              "    bool device_level;",
              "    uint32_t core_version; /* 0: not in any core version */",
              "    uint16_t extension_count;",
              "    const uint16_t *extensions; /* enum layer_extension */",
              "} layer_entry_point;",
              "",
              "/* Sorted by name. */",
              "extern const layer_entry_point layer_entry_points[];",
              "extern const uint32_t layer_entry_point_count;",
              "",
              "void layer_instance_dispatch_fill(struct layer_instance_dispatch *table,",
              "                                  PFN_vkGetInstanceProcAddr gipa, VkInstance instance);",
              "void layer_device_dispatch_fill(struct layer_device_dispatch *table,",
              "                                PFN_vkGetDeviceProcAddr gdpa, VkDevice device);",
              "",
              "/* sizeof the structure an sType names; 0 if unknown. */",
              "size_t layer_struct_size(VkStructureType type);",
              "",
              "/* Bytes per texel block of a format; 0 if unknown. */",
              "uint32_t layer_format_block_size(VkFormat format);",
              "",
              "/* Hooks, written by hand or generated. */"]
    for name, canonical in sorted(hook_names(reg, hooked, work)):
        ret, params = reg.commands[canonical]
        lines.append("VKAPI_ATTR %s VKAPI_CALL hook_%s(%s);" % (ret, name, ", ".join(p[2] for p in params)))
    lines += ["", "#endif", ""]
    out.write("\n".join(lines))


def write_dispatch(reg, out):
    lines = ["/* Generated by gen_vulkan_tables.py from vk.xml; do not edit. */",
             '#include "vk_tables.h"', ""]
    for level, proc, handle, handle_type in (("instance", "gipa", "instance", "PFN_vkGetInstanceProcAddr"),
                                             ("device", "gdpa", "device", "PFN_vkGetDeviceProcAddr")):
        htype = "VkInstance" if level == "instance" else "VkDevice"
        lines.append("void layer_%s_dispatch_fill(struct layer_%s_dispatch *table, %s %s, %s %s)"
                     % (level, level, handle_type, proc, htype, handle))
        lines.append("{")
        for c in sorted(reg.commands):
            if reg.level(c) != level:
                continue
            names = [n for n in reg.names_of(c) if reg.usable(n)]
            if not names:
                continue
            f = field(c)
            lines.append("    table->%s = (PFN_%s)%s(%s, \"%s\");" % (f, c, proc, handle, names[0]))
            for n in names[1:]:
                lines.append("    if (!table->%s)" % f)
                lines.append("        table->%s = (PFN_%s)%s(%s, \"%s\");" % (f, c, proc, handle, n))
        lines.append("}")
        lines.append("")
    out.write("\n".join(lines))


def draw_call(reg, name, params):
    """The recording call of a draw/dispatch wrapper, from the parameter names."""
    p = {n for _, n, _ in params}
    api = '"%s"' % name
    if "Dispatch" in name or "TraceRays" in name or "SubpassShading" in name:
        if "groupCountX" in p:
            base = ("baseGroupX, baseGroupY, baseGroupZ" if "baseGroupX" in p else "0, 0, 0")
            return "layer_record_dispatch(cb, %s, groupCountX, groupCountY, groupCountZ, %s, 0);" % (api, base)
        if "width" in p and "depth" in p:
            return "layer_record_dispatch(cb, %s, width, height, depth, 0, 0, 0, 0);" % api
        if "buffer" in p and "offset" in p:
            return ("layer_record_indirect(cb, %s, TALLY_INDIRECT_DISPATCH, buffer, offset, 1, 0, "
                    "VK_NULL_HANDLE, 0);" % api)
        return "layer_record_dispatch(cb, %s, 0, 0, 0, 0, 0, 0, TALLY_DISPATCH_INDIRECT);" % api
    if "pVertexInfo" in p:
        return ("layer_record_multi_draw(cb, %s, drawCount, pVertexInfo, instanceCount, firstInstance, stride);" % api)
    if "pIndexInfo" in p:
        return ("layer_record_multi_draw_indexed(cb, %s, drawCount, pIndexInfo, instanceCount, firstInstance, "
                "stride, pVertexOffset);" % api)
    if "vertexCount" in p:
        return "layer_record_draw(cb, %s, vertexCount, instanceCount, firstVertex, firstInstance, 0, 0);" % api
    if "indexCount" in p:
        return ("layer_record_draw(cb, %s, indexCount, instanceCount, firstIndex, firstInstance, vertexOffset, "
                "TALLY_DRAW_INDEXED);" % api)
    indexed = "TALLY_DRAW_INDIRECT | TALLY_DRAW_INDEXED" if "Indexed" in name else "TALLY_DRAW_INDIRECT"
    if "Mesh" in name or "Cluster" in name:
        # No input assembly: these draws have no vertices to count.
        return "layer_record_draw(cb, %s, 0, 0, 0, 0, 0, 0);" % api
    layout = "TALLY_INDIRECT_DRAW_INDEXED" if "Indexed" in name else "TALLY_INDIRECT_DRAW"
    if "countBuffer" in p:
        return ("layer_record_indirect(cb, %s, %s, buffer, offset, maxDrawCount, stride, countBuffer, "
                "countBufferOffset);" % (api, layout))
    if "buffer" in p and "drawCount" in p:
        return ("layer_record_indirect(cb, %s, %s, buffer, offset, drawCount, stride, VK_NULL_HANDLE, 0);"
                % (api, layout))
    if "counterBuffer" in p:
        return "layer_record_draw(cb, %s, 0, instanceCount, 0, firstInstance, 0, TALLY_DRAW_INDIRECT);" % api
    return "layer_record_draw(cb, %s, 0, 0, 0, 0, 0, %s);" % (api, indexed)


def write_entry_points(reg, out, hooked, work):
    lines = ["/* Generated by gen_vulkan_tables.py from vk.xml; do not edit. */",
             '#include "vk_tables.h"', '#include "command_recording.h"', '#include "driver_measure.h"',
             "#include <string.h>", ""]
    lines.append("const char *const layer_extension_names[LAYER_EXTENSION_COUNT] = {")
    for e in reg.extensions:
        lines.append('    "%s",' % e)
    lines.append("};")
    lines.append("")
    # Wrappers of the draw and dispatch commands.
    for name, c in sorted(hook_names(reg, set(), work)):
        ret, params = reg.commands[c]
        args = ", ".join(n for _, n, _ in params)
        decls = ", ".join(d for _, _, d in params)
        record = draw_call(reg, c, params).replace('"%s"' % c, '"%s"' % name)
        fast = record.startswith("layer_record_draw(cb, ") and ("vertexCount" in args or "indexCount" in args)
        # A plain draw has a fast path with no call but the one going down,
        # as its last act (a tail call: no registers saved, no frame); the
        # rest (no cached record, a program to bind, a full lane) takes the
        # general body, out of line.
        lines.append("%sVKAPI_ATTR void VKAPI_CALL %s_%s(%s)" % (
            "static __attribute__((noinline)) " if fast else "", "general" if fast else "hook", name, decls))
        lines.append("{")
        # One lookup per draw: the command buffer's record leads to its device.
        lines.append("    layer_command_buffer *cb = layer_command_buffer_of(commandBuffer);")
        lines.append("    if (__builtin_expect(!cb, 0)) {")
        lines.append("        layer_device_of(commandBuffer)->dispatch.%s(%s);" % (field(c), args))
        lines.append("        return;")
        lines.append("    }")
        # TALLY_BACKEND=driver: the GPU's own queries around the command.
        lines.append("    if (__builtin_expect(cb->measured != NULL, 0)) {")
        lines.append("        layer_measure_before(cb);")
        lines.append("        cb->device->dispatch.%s(%s);" % (field(c), args))
        lines.append("        if (cb->stream)")
        lines.append("            %s" % record)
        lines.append("        layer_measure_after(cb);")
        lines.append("        return;")
        lines.append("    }")
        # Recorded before the call goes down, so that the call is the
        # wrapper's last act (the order is unobservable: the stream is the layer's).
        lines.append("    if (cb->stream)")
        lines.append("        %s" % record)
        lines.append("    cb->device->dispatch.%s(%s);" % (field(c), args))
        lines.append("}")
        lines.append("")
        if fast:
            lines.append("VKAPI_ATTR void VKAPI_CALL hook_%s(%s)" % (name, decls))
            lines.append("{")
            lines.append("    layer_command_buffer *cb = layer_command_buffer_cached(commandBuffer);")
            lines.append("    if (__builtin_expect(cb && %s, 1)) {" % record.replace("layer_record_draw(", "layer_try_draw(").rstrip(";"))
            lines.append("        cb->device->dispatch.%s(%s);" % (field(c), args))
            lines.append("        return;")
            lines.append("    }")
            lines.append("    general_%s(%s);" % (name, args))
            lines.append("}")
            lines.append("")
    entries = []
    ext_lists = []
    for c in sorted({reg.canonical(n) for n in hooked} | work):
        for n in reg.names_of(c):
            if not reg.usable(n) and n not in ("vkGetInstanceProcAddr", "vkGetDeviceProcAddr",
                                               "vkCreateInstance", "vkEnumerateInstanceExtensionProperties",
                                               "vkEnumerateInstanceLayerProperties"):
                continue
            exts = [reg.extensions.index(e) for e in reg.providers.get(n, []) if e in reg.extensions]
            hook = n if (c in work or n in hooked) else c
            entries.append((n, hook, reg.core.get(n, 0), exts, reg.level(c) == "device"))
    entries.sort()
    for i, (n, c, core, exts, dev) in enumerate(entries):
        if exts:
            lines.append("static const uint16_t extensions_%d[] = {%s};" % (i, ", ".join(map(str, exts))))
    lines.append("")
    lines.append("const layer_entry_point layer_entry_points[] = {")
    for i, (n, c, core, exts, dev) in enumerate(entries):
        lines.append('    {"%s", (PFN_vkVoidFunction)hook_%s, %s, 0x%x, %d, %s},'
                     % (n, c, "true" if dev else "false", core, len(exts),
                        "extensions_%d" % i if exts else "NULL"))
    lines.append("};")
    lines.append("const uint32_t layer_entry_point_count = %d;" % len(entries))
    lines.append("")
    lines.append("uint32_t layer_extension_index(const char *name)")
    lines.append("{")
    lines.append("    for (uint32_t i = 0; i < LAYER_EXTENSION_COUNT; i++)")
    lines.append("        if (strcmp(layer_extension_names[i], name) == 0)")
    lines.append("            return i;")
    lines.append("    return LAYER_EXTENSION_COUNT;")
    lines.append("}")
    lines.append("")
    lines.append("size_t layer_struct_size(VkStructureType type)")
    lines.append("{")
    lines.append("    switch (type) {")
    for stype, name in sorted(set(reg.structs)):
        lines.append("    case %s: return sizeof(%s);" % (stype, name))
    lines.append("    default: return 0;")
    lines.append("    }")
    lines.append("}")
    lines.append("")
    lines.append("uint32_t layer_format_block_size(VkFormat format)")
    lines.append("{")
    lines.append("    switch ((int64_t)format) {")
    seen = set()
    for value, name, size in reg.formats:
        if value in seen:
            continue
        seen.add(value)
        lines.append("    case %d: return %d; /* %s */" % (value, size, name))
    lines.append("    default: return 0;")
    lines.append("    }")
    lines.append("}")
    lines.append("")
    out.write("\n".join(lines))


def main():
    reg = Registry(sys.argv[1])
    with open(sys.argv[2]) as f:
        listed = [l.split("#")[0].strip() for l in f]
    hooked = {n for n in listed if n}
    work = {c for c in reg.commands if c.startswith(WORK_PREFIXES)
            and any(reg.usable(n) for n in reg.names_of(c))}
    outdir = sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "vk_tables.h"), "w") as f:
        write_header(reg, f, hooked, work)
    with open(os.path.join(outdir, "vk_dispatch.c"), "w") as f:
        write_dispatch(reg, f)
    with open(os.path.join(outdir, "vk_entry_points.c"), "w") as f:
        write_entry_points(reg, f, hooked, work)


if __name__ == "__main__":
    main()
