#!/usr/bin/env python3
"""Generates libtally_gl.so's GL tables from gl.xml (standard library only).

usage: gen_gl_api.py gl.xml gl_commands.txt OUTDIR

OUTDIR/gl_api.h       GL types, the listed enums, prototypes and pointer
                      types of every wrapped command, the hooks' prototypes
OUTDIR/gl_wrappers.c  generated wrappers, real-function slots and the
                      registry table (tally_gl_symbols)
"""
import re
import sys
import xml.etree.ElementTree as ET


def text_of(element):
    """The C text of a <proto> or <param>, without the <name>."""
    parts = [element.text or ""]
    for child in element:
        if child.tag != "name":
            parts.append(child.text or "")
        parts.append(child.tail or "")
    return " ".join("".join(parts).split())


class Command:
    def __init__(self, element):
        proto = element.find("proto")
        self.name = proto.find("name").text
        self.result = text_of(proto)
        self.params = [(text_of(p), p.find("name").text) for p in element.findall("param")]
        alias = element.find("alias")
        self.alias = alias.get("name") if alias is not None else None
        self.types = {t.text for t in element.iter("ptype")}

    def param_list(self):
        if not self.params:
            return "void"
        return ", ".join(f"{ctype} {name}" if not ctype.endswith("*") else f"{ctype}{name}"
                         for ctype, name in self.params)

    def arg_list(self):
        return ", ".join(name for _, name in self.params)


# Roles of the commands the driver backend measures (driver_queries.c), each
# also an "after" command: draw and dispatch bracket the real call with the
# shim's queries; begin_draw opens them before the call (glBegin) and
# end_draw closes them after it (glEnd). A draw or dispatch nobody would see
# is only the real call, a tail call (draw_lane.h's tally_gl_unheard_context);
# a lane command's inline form (tally_gl_lane_NAME, true when it took the
# draw) also takes the common recorded case. (kind, opens, closes)
MEASURED = {
    "draw": ("TALLY_GL_MEASURE_DRAW", True, True),
    "lane": ("TALLY_GL_MEASURE_DRAW", True, True),
    "dispatch": ("TALLY_GL_MEASURE_DISPATCH", True, True),
    "begin_draw": ("TALLY_GL_MEASURE_DRAW", True, False),
    "end_draw": (None, False, True),
}


def read_list(path):
    entries = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            role, value = line.split(None, 1)
            entries.append((role, value))
    return entries


def fast_wrapper(c, real, lane):
    """A draw's or dispatch's wrapper: its inline test (the lane command's
    form, or whether nobody would see it), then the real call as a tail call.
    Everything that needs the arguments after a call (resolving the real
    function on first use, the general way) is out of line and tail-called
    too, so the arguments stay in their registers."""
    name, params, args = c.name, c.param_list(), c.arg_list()
    test = f"tally_gl_lane_{name}({args})" if lane else "tally_gl_unheard_context()"
    return [
        f"static void general_{name}({params});\n",
        "static __attribute__((noinline, cold)) void",
        f"resolve_and_call_{name}({params})\n{{",
        f"    PFN_{name} real = {real};",
        f"    if (real)\n        real({args});",
        "}\n",
        f"void {name}({params})\n{{",
        f"    if (__builtin_expect(!{test}, 0)) {{",
        f"        general_{name}({args});",
        "        return;\n    }",
        f"    PFN_{name} real = (PFN_{name})atomic_load_explicit(&tally_gl_real_{name},",
        f"                                        memory_order_acquire);",
        "    if (__builtin_expect(!real, 0)) {",
        f"        resolve_and_call_{name}({args});",
        "        return;\n    }",
        f"    real({args});",
        "}\n",
    ]


def main():
    gl_xml, list_path, outdir = sys.argv[1:4]
    root = ET.parse(gl_xml).getroot()
    commands = {}
    for element in root.find("commands"):
        command = Command(element)
        commands[command.name] = command
    enums = {}
    for group in root.findall("enums"):
        for enum in group.findall("enum"):
            enums.setdefault(enum.get("name"), enum.get("value"))

    roles = {}
    before = set()  # "after" commands with a hook before the real call too
    measured = {}  # command -> how the driver backend measures it (MEASURED)
    fast = {}  # command -> whether draw_lane.h has its inline lane form
    wanted_enums = []
    for role, value in read_list(list_path):
        if role == "enum":
            wanted_enums.append(value)
        elif role == "vertex":
            pattern = re.compile(value)
            for name in sorted(commands):
                if pattern.match(name):
                    roles[name] = "vertex"
        else:
            if value not in commands:
                sys.exit(f"{value} is not a command of gl.xml")
            if role == "before":
                before.add(value)
                role = "after"
            if role in MEASURED:
                measured[value] = role
                if role in ("lane", "draw", "dispatch"):
                    if commands[value].result != "void":
                        sys.exit(f"{role} command {value} must return void")
                    fast[value] = role == "lane"
                role = "after"
            roles[value] = role
    # Aliases of what the shim records are recorded too (glDrawArraysEXT...),
    # and measured like them.
    for name, command in sorted(commands.items()):
        if command.alias in roles and roles[command.alias] == "after" and name not in roles:
            roles[name] = "alias"
            if command.alias in before:
                before.add(name)
            if command.alias in measured:
                measured[name] = measured[command.alias]

    wrapped = sorted(roles)
    used_types = set()
    for name in wrapped:
        used_types |= commands[name].types
    used_types |= {"GLenum", "GLuint", "GLint", "GLsizei", "GLboolean", "GLubyte", "GLchar",
                   "GLfloat", "GLdouble", "GLint64", "GLuint64", "GLbitfield", "GLintptr",
                   "GLsizeiptr", "GLvoid", "GLshort", "GLushort", "GLbyte"}

    out = []
    out.append("/* Generated by gen_gl_api.py from gl.xml: do not edit. */")
    out.append("#ifndef TALLY_GL_API_H\n#define TALLY_GL_API_H\n")
    out.append("#include <KHR/khrplatform.h>\n#include <stddef.h>\n#include <stdint.h>\n")
    for t in root.find("types").findall("type"):
        name = t.get("name") or (t.find("name").text if t.find("name") is not None else None)
        if name in used_types and t.get("api") is None:
            text = "".join(t.itertext()).strip()
            if text.startswith("typedef") or text.startswith("#ifdef"):
                out.append(text)
    out.append("")
    for name in wanted_enums:
        if name not in enums:
            sys.exit(f"{name} is not an enum of gl.xml")
        out.append(f"#define {name} {enums[name]}")
    out.append("")
    for name in wrapped:
        c = commands[name]
        out.append(f"typedef {c.result} (*PFN_{name})({c.param_list()});")
        if roles[name] != "call":
            out.append(f"{c.result} {name}({c.param_list()}) __attribute__((visibility(\"default\")));")
    out.append("\n/* Hooks the generated wrappers call after the real function. */")
    for name in wrapped:
        c = commands[name]
        if roles[name] == "after":
            result = [f"{c.result} result"] if c.result != "void" else []
            params = result + [f"{t} {n}" if not t.endswith("*") else f"{t}{n}"
                               for t, n in c.params]
            out.append(f"void tally_gl_after_{name}({', '.join(params) or 'void'});")
            if name in before:
                params = [f"{t} {n}" if not t.endswith("*") else f"{t}{n}" for t, n in c.params]
                out.append(f"void tally_gl_before_{name}({', '.join(params) or 'void'});")
    out.append("void tally_gl_after_vertex(void);")
    out.append("\n/* The driver backend's measurement of one command (driver_queries.c). */")
    out.append("enum { TALLY_GL_MEASURE_DRAW = 0, TALLY_GL_MEASURE_DISPATCH = 1 };")
    out.append("/* Whether the device's backend measures GPU work (the driver backend's),")
    out.append(" * set once when the device opens: on simgpu a command makes no call to")
    out.append(" * measure. */")
    out.append("extern _Atomic _Bool tally_gl_device_measures;")
    out.append("_Bool tally_gl_measure_begin(int kind);")
    out.append("void tally_gl_measure_end(void);")
    out.append("void tally_gl_measure_drop(void);")
    out.append("\n/* Real functions, for the shim's own calls. */")
    for name in wrapped:
        if roles[name] != "shim":
            out.append(f"extern _Atomic(void *) tally_gl_real_{name};")
            out.append(f"#define REAL_{name} ((PFN_{name})TALLY_PRELOAD_NEXT(tally_gl_real_{name}, \"{name}\"))")
    out.append("\n#endif")
    open(f"{outdir}/gl_api.h", "w").write("\n".join(out) + "\n")

    src = ["/* Generated by gen_gl_api.py from gl.xml: do not edit. */",
           "#include \"gl_api.h\"", "#include \"tally_preload.h\""]
    if fast:
        src.append("#include \"draw_lane.h\"")
    src.append("")
    for name in wrapped:
        role = roles[name]
        c = commands[name]
        if role == "shim":
            continue
        src.append(f"_Atomic(void *) tally_gl_real_{name};")
        if role in ("custom", "call"):
            continue
        hook_of = {"after": name, "alias": c.alias, "vertex": "vertex"}[role]
        real = f"((PFN_{name})TALLY_PRELOAD_NEXT(tally_gl_real_{name}, \"{name}\"))"
        if name in fast:
            src += fast_wrapper(c, real, fast[name])
            src.append("/* The general way, for what the inline test does not take. */")
            src.append("static __attribute__((noinline)) void")
            src.append(f"general_{name}({c.param_list()})\n{{")
        else:
            src.append(f"{c.result} {name}({c.param_list()})\n{{")
        src.append(f"    PFN_{name} real = {real};")
        if name in before:
            src.append(f"    tally_gl_before_{hook_of}({c.arg_list()});")
        kind, opens, closes = MEASURED.get(measured.get(name), (None, False, False))
        # Only a command that opens and closes its own measurement needs to
        # know whether it opened one; end and drop check for themselves.
        test = "if (measured)\n        " if opens and closes else ""
        measures = "atomic_load_explicit(&tally_gl_device_measures, memory_order_relaxed)"
        if opens and closes:
            src.append(f"    _Bool measured = {measures} &&\n"
                       f"                     tally_gl_measure_begin({kind});")
        elif opens:
            src.append(f"    if ({measures})\n        tally_gl_measure_begin({kind});")
        if c.result == "void":
            src.append(f"    if (real)\n        real({c.arg_list()});")
            call_result = []
        else:
            src.append(f"    {c.result} result = real ? real({c.arg_list()}) : ({c.result})0;")
            call_result = ["result"]
        if closes:
            src.append(f"    {test}tally_gl_measure_end();")
        if hook_of == "vertex":
            src.append("    tally_gl_after_vertex();")
        else:
            args = call_result + [n for _, n in c.params]
            src.append(f"    tally_gl_after_{hook_of}({', '.join(args)});")
        if closes:
            src.append(f"    {test}tally_gl_measure_drop();")
        if c.result != "void":
            src.append("    return result;")
        src.append("}\n")
    src.append("tally_preload_symbol tally_gl_symbols[] = {")
    for name in wrapped:
        role = roles[name]
        if role == "call":
            continue
        slot = "NULL" if role == "shim" else f"&tally_gl_real_{name}"
        shim_only = "true" if role == "shim" else "false"
        src.append(f"    {{\"{name}\", (void *){name}, {slot}, {shim_only}}},")
    src.append("};")
    src.append("const size_t tally_gl_symbol_count = sizeof(tally_gl_symbols) / sizeof(tally_gl_symbols[0]);")
    open(f"{outdir}/gl_wrappers.c", "w").write("\n".join(src) + "\n")


if __name__ == "__main__":
    main()
