#!/usr/bin/env python3
"""Generate a backend's catalogue tables and reference pages from its TOML.

    gen_catalogue.py CATALOGUE.toml PREFIX OUT_DIR DOCS_DIR

writes OUT_DIR/PREFIX_catalogue.h, OUT_DIR/PREFIX_catalogue.c and
DOCS_DIR/counters.md (and DOCS_DIR/profile.md when the backend has profile
parameters). The TOML is validated first; any inconsistency stops the build
with a message naming the entry.

A catalogue may inherit another (`inherit = "../simgpu/catalogue.toml"`): its
groups and counters then name the parent's by symbol and take every field
they do not set from it, so one meaning is written once and keeps its symbol
and UUID in every backend. A counter's `measure` (the driver backend's) says
what the GPU must measure for the counter to be offered: `time`, a pipeline
statistic (`ia_vertices` ... `cs_invocations`), or `command` (always).
"""

import re
import sys
import tomllib
import uuid
from pathlib import Path

# Counter UUIDs are RFC 4122 version 5 UUIDs of the symbol in this namespace,
# so they never change when anything but the symbol does.
UUID_NAMESPACE = uuid.UUID("6f1c0b9e-3d2a-4e51-9a7c-2b8d4e6f1a30")

UNITS = ["generic", "percentage", "nanoseconds", "bytes", "bytes_per_second",
         "kelvin", "watts", "volts", "amps", "hertz", "cycles"]
STORAGES = ["int32", "int64", "uint32", "uint64", "float32", "float64"]
SEMANTICS = ["event", "duration", "throughput", "ratio", "timestamp"]
SOURCES = ["work", "elapsed_ns", "elapsed_cycles"]
# Vulkan's VkQueryPipelineStatisticFlagBits order, as tally_measure_bits.
STATISTICS = ["ia_vertices", "ia_primitives", "vs_invocations", "gs_invocations",
              "gs_primitives", "clipper_invocations", "clipper_primitives", "fs_invocations",
              "tess_control_patches", "tess_eval_invocations", "cs_invocations"]
MEASURES = ["command", "time"] + STATISTICS
APIS = {"vk": "TALLY_API_VULKAN", "gl": "TALLY_API_GL", "cl": "TALLY_API_CL",
        "md": "TALLY_API_MD"}
OPERATORS = {"+": "ADD", "-": "SUB", "*": "MUL", "/": "DIV", "min": "MIN", "max": "MAX"}
STORAGE_MAX = {"int32": 2**31 - 1, "int64": 2**63 - 1, "uint32": 2**32 - 1,
               "uint64": 2**64 - 1, "float32": "FLT_MAX", "float64": "DBL_MAX"}
STORAGE_MIN = {"int32": -2**31, "int64": -2**63}
REQUIRED_SYMBOLS = [
    "GpuTime", "GpuCoreClocks", "GpuBusy", "DrawCalls", "Dispatches", "IaVertices",
    "IaPrimitives", "VsInvocations", "ClipperInvocations", "ClipperPrimitives",
    "RasterizedPixels", "FsInvocations", "CsInvocations", "CsWorkgroups",
    "ShaderAluInstructions", "ShaderTexInstructions", "L2CacheHits", "L2CacheMisses",
    "DramReadBytes", "DramWriteBytes",
]


class CatalogueError(Exception):
    pass


def macro(symbol):
    """GpuTime -> GPU_TIME, L2CacheHits -> L2_CACHE_HITS."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", symbol)
    s = re.sub(r"([A-Z])([A-Z][a-z])", r"\1_\2", s)
    return s.upper()


def c_string(text):
    if text is None:
        return "NULL"
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped + '"'


def require(condition, message):
    if not condition:
        raise CatalogueError(message)


def inherit(data, source):
    """Fills the groups and counters of an inheriting catalogue from its parent's."""
    parent_path = Path(source).parent / data["inherit"]
    with open(parent_path, "rb") as f:
        parent = tomllib.load(f)
    for section in ["group", "counter", "concurrent_group"]:
        known = {item["symbol"]: item for item in parent.get(section, [])}
        merged = []
        for item in data.get(section, []):
            base = known.get(item["symbol"])
            if base is None and section == "counter":
                raise CatalogueError(f"counter {item['symbol']}: not in {data['inherit']}")
            entry = {**(base or {}), **item}
            if "exactness" in item and "exact_when" not in item:
                entry.pop("exact_when", None)  # the condition was the parent's kind of value
            merged.append(entry)
        data[section] = merged
    return data


class Catalogue:
    def __init__(self, data):
        self.inherits = "inherit" in data
        self.groups = data.get("group", [])
        self.counters = data.get("counter", [])
        self.cgroups = data.get("concurrent_group", [])
        self.sets = data.get("metric_set", [])
        self.units = data.get("unit", [])
        self.constants = data.get("constant", [])
        self.parameters = data.get("parameter", [])
        self.validate()
        self.layout()

    # --- validation ---------------------------------------------------------

    def validate(self):
        self.validate_names()
        for p in self.parameters:
            require(p["min"] <= p["default"] <= p["max"],
                    f"parameter {p['name']}: default outside [min, max]")
        group_symbols = {g["symbol"] for g in self.groups}
        for g in self.groups:
            require(g["capacity"] >= 1, f"group {g['symbol']}: capacity must be at least 1")
        for c in self.counters:
            self.validate_counter(c, group_symbols)
        for s in REQUIRED_SYMBOLS if not self.inherits else []:
            require(s in self.counter_index, f"required counter {s} is missing")
        params = {p["name"] for p in self.parameters}
        for k in self.constants:
            require(k["parameter"] in params, f"constant {k['symbol']}: unknown parameter")
        for u in self.units:
            busy = u.get("busy_counter")
            require(busy is None or self.is_raw(busy),
                    f"unit {u['symbol']}: busy_counter must be a raw counter")
        cgroup_symbols = {g["symbol"] for g in self.cgroups}
        for s in self.sets:
            self.validate_metric_set(s, cgroup_symbols)

    def validate_names(self):
        self.counter_index = {}
        for section, items, key in [("group", self.groups, "symbol"),
                                    ("counter", self.counters, "symbol"),
                                    ("metric_set", self.sets, "symbol"),
                                    ("concurrent_group", self.cgroups, "symbol"),
                                    ("unit", self.units, "symbol"),
                                    ("constant", self.constants, "symbol"),
                                    ("parameter", self.parameters, "name")]:
            seen = set()
            for item in items:
                name = item[key]
                require(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name),
                        f"{section} {name!r}: not an identifier")
                require(name not in seen, f"{section} {name}: defined twice")
                seen.add(name)
        self.counter_index = {c["symbol"]: i for i, c in enumerate(self.counters)}
        aliases = set()
        for c in self.counters:
            for api, alias in c.get("aliases", {}).items():
                require(api in APIS, f"counter {c['symbol']}: unknown alias API {api}")
                for field in alias:
                    require(field in ("symbol", "name", "unit_name"),
                            f"counter {c['symbol']}: unknown {api} alias field {field}")
                sym = alias.get("symbol")
                if sym:
                    require(sym not in self.counter_index and sym not in aliases,
                            f"counter {c['symbol']}: alias {sym} collides")
                    aliases.add(sym)

    def is_raw(self, symbol):
        i = self.counter_index.get(symbol)
        return i is not None and "expression" not in self.counters[i]

    def validate_counter(self, c, group_symbols):
        name = c["symbol"]
        for field in ["name", "group", "unit", "unit_name", "storage", "semantic",
                      "exactness", "description"]:
            require(field in c, f"counter {name}: missing {field}")
        require(c["group"] in group_symbols, f"counter {name}: unknown group {c['group']}")
        require(c["unit"] in UNITS, f"counter {name}: unknown unit {c['unit']}")
        require(c["storage"] in STORAGES, f"counter {name}: unknown storage")
        require(c["semantic"] in SEMANTICS, f"counter {name}: unknown semantic")
        require(c["exactness"] in ("exact", "modeled", "conditional", "measured"),
                f"counter {name}: bad exactness")
        require(("exact_when" in c) == (c["exactness"] == "conditional"),
                f"counter {name}: exact_when goes with exactness = \"conditional\", only")
        require(c.get("measure", "command") in MEASURES, f"counter {name}: unknown measure")
        has_source, has_expr = "source" in c, "expression" in c
        require(has_source != has_expr,
                f"counter {name}: needs exactly one of source (raw) or expression (derived)")
        if has_source:
            require(c["source"] in SOURCES, f"counter {name}: unknown source")
        else:
            self.compile_expression(c)
        if c["unit"] == "percentage":
            require(c.get("max") == 100, f"counter {name}: a percentage needs max = 100")

    def compile_expression(self, c):
        constants = {k["symbol"]: i for i, k in enumerate(self.constants)}
        ops, depth = [], 0
        for token in c["expression"].split():
            if token in OPERATORS:
                require(depth >= 2, f"counter {c['symbol']}: {token} needs two operands")
                ops.append((OPERATORS[token], 0, 0))
                depth -= 1
            elif token.startswith("$"):
                require(token[1:] in constants,
                        f"counter {c['symbol']}: unknown constant {token}")
                ops.append(("CONST", constants[token[1:]], 0))
                depth += 1
            elif token.isdigit():
                ops.append(("INT", 0, int(token)))
                depth += 1
            else:
                require(self.is_raw(token),
                        f"counter {c['symbol']}: {token} is not a raw counter")
                ops.append(("RAW", token, 0))
                depth += 1
            require(depth <= 16, f"counter {c['symbol']}: expression too deep")
        require(depth == 1, f"counter {c['symbol']}: expression leaves {depth} values")
        c["_ops"] = ops

    def validate_metric_set(self, s, cgroup_symbols):
        require(s["concurrent_group"] in cgroup_symbols,
                f"metric set {s['symbol']}: unknown concurrent group")
        per_group = {}
        for sym in s["counters"]:
            require(sym in self.counter_index, f"metric set {s['symbol']}: unknown {sym}")
            g = self.counters[self.counter_index[sym]]["group"]
            per_group[g] = per_group.get(g, 0) + 1
        capacity = {g["symbol"]: g["capacity"] for g in self.groups}
        for g, n in per_group.items():
            require(n <= capacity[g],
                    f"metric set {s['symbol']}: {n} counters of {g} do not fit one pass")

    # --- layout ---------------------------------------------------------------

    def layout(self):
        """Counters are ordered by group, then as written; raw slots likewise."""
        order = {g["symbol"]: i for i, g in enumerate(self.groups)}
        self.counters.sort(key=lambda c: order[c["group"]])  # stable
        self.counter_index = {c["symbol"]: i for i, c in enumerate(self.counters)}
        self.raw = [c["symbol"] for c in self.counters if "source" in c]
        self.raw_index = {s: i for i, s in enumerate(self.raw)}
        self.group_index = {g["symbol"]: i for i, g in enumerate(self.groups)}
        self.cgroup_index = {g["symbol"]: i for i, g in enumerate(self.cgroups)}
        self.param_index = {p["name"]: i for i, p in enumerate(self.parameters)}


# --- C output -------------------------------------------------------------------


def value_literal(storage, value):
    if storage.startswith("float"):
        return "{.f64 = %s}" % (value if isinstance(value, str) else f"{float(value)!r}")
    if storage.startswith("int"):
        return "{.i64 = INT64_C(%d)}" % value if value != -2**63 else "{.i64 = INT64_MIN}"
    return "{.u64 = UINT64_C(%d)}" % value


def counter_record(cat, prefix, i, c):
    storage = c["storage"]
    max_value = c.get("max", STORAGE_MAX[storage])
    min_value = c.get("min", STORAGE_MIN.get(storage, 0))
    raw = cat.raw_index.get(c["symbol"])
    aliases = c.get("aliases", {})
    u = uuid.uuid5(UUID_NAMESPACE, c["symbol"])
    source = c.get("source", "derived").upper()
    alias_table = f"{prefix}_aliases_{c['symbol']}" if aliases else "NULL"
    return "\n".join([
        "    {",
        f"        .index = {i},",
        f"        .symbol = {c_string(c['symbol'])},",
        f"        .name = {c_string(c['name'])},",
        f"        .description = {c_string(c['description'])},",
        f"        .group = {cat.group_index[c['group']]},",
        f"        .unit = TALLY_UNIT_{c['unit'].upper()},",
        f"        .unit_name = {c_string(c['unit_name'])},",
        f"        .storage = TALLY_STORAGE_{storage.upper()},",
        f"        .semantic = TALLY_SEMANTIC_{c['semantic'].upper()},",
        f"        .source = TALLY_SOURCE_{source},",
        f"        .raw_index = {raw if raw is not None else 'TALLY_NOT_RAW'},",
        f"        .expression = {c_string(c.get('expression'))},",
        f"        .exact = {'true' if c['exactness'] == 'exact' else 'false'},",
        f"        .exact_when = {c_string(c.get('exact_when'))},",
        f"        .min_value = {value_literal(storage, min_value)},",
        f"        .max_value = {value_literal(storage, max_value)},",
        "        .uuid = {" + ", ".join(f"0x{b:02x}" for b in u.bytes) + "},",
        f"        .alias_count = {len(aliases)},",
        f"        .aliases = {alias_table},",
        f"        .measured = {'true' if c['exactness'] == 'measured' else 'false'},",
        "    },",
    ])


def emit_c(cat, prefix, header_name):
    out = [f"/* Generated by gen_catalogue.py from catalogue.toml. Do not edit. */",
           "#include <float.h>", "#include <stdint.h>", "",
           f'#include "{header_name}"', ""]
    for c in cat.counters:
        aliases = c.get("aliases", {})
        if aliases:
            rows = [f"    {{{APIS[api]}, {c_string(a.get('symbol'))}, {c_string(a.get('name'))}, "
                    f"{c_string(a.get('unit_name'))}}},"
                    for api, a in aliases.items()]
            out += [f"static const tally_alias {prefix}_aliases_{c['symbol']}[] = {{", *rows,
                    "};"]
    for g in cat.groups:
        members = [str(i) for i, c in enumerate(cat.counters) if c["group"] == g["symbol"]]
        g["_members"] = members
        out.append(f"static const uint32_t {prefix}_group_{g['symbol']}[] = "
                   f"{{{', '.join(members)}}};")
    for s in cat.sets:
        ids = [str(cat.counter_index[x]) for x in s["counters"]]
        out.append(f"static const uint32_t {prefix}_set_{s['symbol']}[] = {{{', '.join(ids)}}};")
    for g in cat.cgroups:
        ids = [str(i) for i, s in enumerate(cat.sets) if s["concurrent_group"] == g["symbol"]]
        g["_sets"] = ids
        out.append(f"static const uint32_t {prefix}_cgroup_{g['symbol']}[] = "
                   f"{{{', '.join(ids) or '0'}}};")
    for c in cat.counters:
        if "_ops" in c:
            ops = []
            for opcode, arg, literal in c["_ops"]:
                if opcode == "RAW":
                    arg = cat.raw_index[arg]
                ops.append(f"    {{TALLY_EXPR_{opcode}, {arg}, UINT64_C({literal})}},")
            out += [f"static const struct tally_expr_op {prefix}_expr_{c['symbol']}[] = {{",
                    *ops, "};"]
    out.append("")
    out.append(f"static const tally_group_info {prefix}_groups[] = {{")
    for i, g in enumerate(cat.groups):
        out.append(f"    {{{i}, {c_string(g['symbol'])}, {c_string(g['name'])}, "
                   f"{c_string(g['description'])}, {g['capacity']}, {len(g['_members'])}, "
                   f"{prefix}_group_{g['symbol']}}},")
    out.append("};")
    out.append(f"static const tally_counter_info {prefix}_counters[] = {{")
    out += [counter_record(cat, prefix, i, c) for i, c in enumerate(cat.counters)]
    out.append("};")
    out.append(f"static const struct tally_expr {prefix}_expressions[] = {{")
    for c in cat.counters:
        if "_ops" in c:
            out.append(f"    {{{len(c['_ops'])}, {prefix}_expr_{c['symbol']}}},")
        else:
            out.append("    {0, NULL},")
    out.append("};")
    raw_ids = [str(cat.counter_index[s]) for s in cat.raw]
    out.append(f"static const uint32_t {prefix}_raw[] = {{{', '.join(raw_ids)}}};")
    out.append(f"static const tally_constant_info {prefix}_constants[] = {{")
    for i, k in enumerate(cat.constants):
        out.append(f"    {{{i}, {c_string(k['symbol'])}, {c_string(k['description'])}}},")
    out.append("};")
    params = [str(cat.param_index[k["parameter"]]) for k in cat.constants]
    scales = [f"UINT64_C({k.get('scale', 1)})" for k in cat.constants]
    out.append(f"static const uint32_t {prefix}_constant_parameters[] = {{{', '.join(params)}}};")
    out.append(f"static const uint64_t {prefix}_constant_scales[] = {{{', '.join(scales)}}};")
    out.append(f"static const tally_unit_info {prefix}_units[] = {{")
    for i, u in enumerate(cat.units):
        busy = u.get("busy_counter")
        busy_raw = cat.raw_index[busy] if busy else "TALLY_NOT_RAW"
        out.append(f"    {{{i}, {c_string(u['symbol'])}, {c_string(u['description'])}, "
                   f"{busy_raw}}},")
    out.append("};")
    out.append(f"static const tally_concurrent_group_info {prefix}_concurrent_groups[] = {{")
    for i, g in enumerate(cat.cgroups):
        out.append(f"    {{{i}, {c_string(g['symbol'])}, {c_string(g['description'])}, "
                   f"{len(g['_sets'])}, {prefix}_cgroup_{g['symbol']}}},")
    out.append("};")
    out.append(f"static const tally_metric_set_info {prefix}_metric_sets[] = {{")
    for i, s in enumerate(cat.sets):
        out.append(f"    {{{i}, {c_string(s['symbol'])}, {c_string(s['short_name'])}, "
                   f"{c_string(s['description'])}, {cat.cgroup_index[s['concurrent_group']]}, "
                   f"{len(s['counters'])}, {prefix}_set_{s['symbol']}}},")
    out.append("};")
    out.append(f"static const struct tally_parameter_info {prefix}_parameters[] = {{")
    for p in cat.parameters:
        out.append(f"    {{{c_string(p['name'])}, {c_string(p['section'])}, "
                   f"{c_string(p['description'])}, UINT64_C({p['default']}), "
                   f"UINT64_C({p['min']}), UINT64_C({p['max']})}},")
    out.append("};")
    if any("measure" in c for c in cat.counters):
        out.append(f"const uint32_t {prefix}_counter_measures[] = {{")
        for c in cat.counters:
            m = c.get("measure", "command")
            out.append("    0," if m == "command" else f"    TALLY_MEASURE_{m.upper()},")
        out.append("};")
    out.append("")
    out.append(f"const struct tally_catalogue {prefix}_catalogue = {{")
    fields = [
        ("backend", c_string(prefix)),
        ("group_count", len(cat.groups)), ("groups", f"{prefix}_groups"),
        ("counter_count", len(cat.counters)), ("counters", f"{prefix}_counters"),
        ("expressions", f"{prefix}_expressions"),
        ("raw_count", len(cat.raw)), ("raw_counters", f"{prefix}_raw"),
        ("constant_count", len(cat.constants)), ("constants", f"{prefix}_constants"),
        ("constant_parameters", f"{prefix}_constant_parameters"),
        ("constant_scales", f"{prefix}_constant_scales"),
        ("unit_count", len(cat.units)), ("units", f"{prefix}_units"),
        ("concurrent_group_count", len(cat.cgroups)),
        ("concurrent_groups", f"{prefix}_concurrent_groups"),
        ("metric_set_count", len(cat.sets)), ("metric_sets", f"{prefix}_metric_sets"),
        ("parameter_count", len(cat.parameters)), ("parameters", f"{prefix}_parameters"),
    ]
    out += [f"    .{k} = {v}," for k, v in fields]
    out.append("};")
    return "\n".join(out) + "\n"


def emit_header(cat, prefix):
    P = prefix.upper()
    guard = f"{P}_CATALOGUE_GENERATED_H"
    out = [f"/* Generated by gen_catalogue.py from catalogue.toml. Do not edit. */",
           f"#ifndef {guard}", f"#define {guard}", "", '#include "catalogue_data.h"',
           '#include "tally/stream.h"', ""]
    out.append("/* Raw counter slots. */")
    out += [f"#define {P}_RAW_{macro(s)} {i}u" for i, s in enumerate(cat.raw)]
    out.append(f"#define {P}_RAW_COUNT {len(cat.raw)}u")
    out.append("")
    out.append("/* Catalogue indices. */")
    out += [f"#define {P}_COUNTER_{macro(c['symbol'])} {i}u"
            for i, c in enumerate(cat.counters)]
    out.append(f"#define {P}_COUNTER_COUNT {len(cat.counters)}u")
    out.append("")
    out.append("/* Hardware units. */")
    out += [f"#define {P}_UNIT_{macro(u['symbol'])} {i}u" for i, u in enumerate(cat.units)]
    out.append(f"#define {P}_UNIT_COUNT {len(cat.units)}u")
    out.append("")
    out.append("/* Profile parameters, in table order; every field is a uint64_t so the")
    out.append(" * struct can be filled from the parameter table by index. */")
    out.append(f"struct {prefix}_profile {{")
    out += [f"    uint64_t {p['name']};" for p in cat.parameters]
    out.append("};")
    out.append(f"#define {P}_PARAMETER_COUNT {len(cat.parameters)}u")
    out.append("")
    out.append(f"extern const struct tally_catalogue {prefix}_catalogue;")
    if any("measure" in c for c in cat.counters):
        out.append("/* Per counter: what must be measurable for it to be offered")
        out.append(" * (tally_measure_bits); 0: always. */")
        out.append(f"extern const uint32_t {prefix}_counter_measures[];")
    out.append("")
    out.append("#endif")
    return "\n".join(out) + "\n"


# --- documentation -----------------------------------------------------------------


def format_range(c):
    storage = c["storage"]
    lo = c.get("min", STORAGE_MIN.get(storage, 0))
    hi = c.get("max", STORAGE_MAX[storage])
    if isinstance(hi, str):
        hi = "max"
    return f"[{lo}, {hi}]"


def emit_counters_md(cat, prefix):
    out = [f"# {prefix} counter reference", "",
           f"Generated from `backends/{prefix}/catalogue.toml` by `backends/gen_catalogue.py`;"
           " do not edit. Every API view (Vulkan, GL AMD and INTEL, OpenCL, the"
           " Metrics-Discovery-style API) shows these counters under the names below.", "",
           f"{len(cat.counters)} counters ({len(cat.raw)} raw, "
           f"{len(cat.counters) - len(cat.raw)} derived) in {len(cat.groups)} groups.", "",
           "*Exact* counters are determined by the commands alone (and follow the Vulkan"
           " pipeline-statistics definitions where they name one); "
           + ("*measured* ones are what the GPU under the program measured, through the"
              " queries its front end inserts (see [driver.md](driver.md)). "
              if cat.inherits else
              "*modeled* ones come from the device profile's parameters (see"
              " [profile.md](profile.md)), within the physical bounds the commands set;"
              " *conditional* ones are exact under the conditions their entry states and"
              " modeled otherwise. ")
           + "Derived"
           " counters are RPN expressions over raw counters; division by zero gives 0 and"
           " results are clamped to the range. UUIDs are RFC 4122 version-5 UUIDs of the"
           f" symbol in namespace `{UUID_NAMESPACE}`.", ""]
    for g in cat.groups:
        out += [f"## {g['name']} (`{g['symbol']}`)", "", g["description"], "",
                f"Capacity: {g['capacity']} counters per pass.", ""]
        for c in cat.counters:
            if c["group"] != g["symbol"]:
                continue
            out += [f"### {c['symbol']}", "", c["description"], "",
                    f"- Name: {c['name']}",
                    f"- Unit: {c['unit']} ({c['unit_name']}); storage {c['storage']};"
                    f" semantic {c['semantic']}; range {format_range(c)}",
                    f"- Kind: " + (f"derived, `{c['expression']}`" if "expression" in c
                                   else f"raw ({c['source'].replace('_', ' ')})")
                    + f"; {c['exactness']}"
                    + (f"; offered when the GPU can measure {c['measure'].replace('_', ' ')}"
                       if c.get("measure", "command") != "command" else ""),
                    f"- UUID: `{uuid.uuid5(UUID_NAMESPACE, c['symbol'])}`"]
            if "exact_when" in c:
                out.append(f"- Exact when: {c['exact_when']}")
            for api, a in c.get("aliases", {}).items():
                parts = [f"symbol `{a['symbol']}`" if a.get("symbol") else None,
                         f"name \"{a['name']}\"" if a.get("name") else None,
                         f"unit \"{a['unit_name']}\"" if a.get("unit_name") else None]
                out.append(f"- {api} alias: " + ", ".join(p for p in parts if p))
            out.append("")
    out += ["## Metric sets", "",
            "The unit of collection of GL_INTEL_performance_query and of the"
            " Metrics-Discovery-style API. One set per concurrent group is collected at"
            " a time; each set fits in one pass.", ""]
    for g in cat.cgroups:
        out += [f"### Concurrent group `{g['symbol']}`", "", g["description"], ""]
        for s in cat.sets:
            if s["concurrent_group"] == g["symbol"]:
                out += [f"- **{s['symbol']}** ({s['short_name']}): {s['description']}"
                        f" Counters: " + ", ".join(f"`{x}`" for x in s["counters"]) + "."]
        out.append("")
    out += ["## Device constants", "", "| symbol | value | description |", "|---|---|---|"]
    for k in cat.constants:
        scale = f" x {k['scale']}" if k.get("scale", 1) != 1 else ""
        out.append(f"| `{k['symbol']}` | `{k['parameter']}`{scale} | {k['description']} |")
    out += ["", "## Hardware units (timeline tracks)", "",
            "| unit | busy counter | description |", "|---|---|---|"]
    for u in cat.units:
        out.append(f"| {u['symbol']} | {u.get('busy_counter', '-')} | {u['description']} |")
    return "\n".join(out) + "\n"


def emit_profile_md(cat, prefix):
    out = [f"# {prefix} device profile", "",
           "Generated from `backends/simgpu/catalogue.toml` by `backends/gen_catalogue.py`;"
           " do not edit.", "",
           "The profile is the simulated GPU's description. The embedded default holds"
           " the values below; a file named by `TALLY_PROFILE` (or"
           " `tally_device_options.profile_path`) replaces any of them. The file is a"
           " small, strict INI: text with lines ending in a line feed (CRLF is fine),"
           " each line blank, a comment starting with `#` or `;`, a section header"
           " `[name]` of a section below, or a `name = value` setting of that section"
           " with an unsigned decimal integer (a `#` or `;` comment may follow the value"
           " after a blank). Lines may be of any length. The file must be a regular"
           " file: a FIFO, a device or a directory (`TALLY_PROFILE=/dev/stdin` on a"
           " pipe or a terminal, say) is refused with its name, without being read"
           " or waited on.", "",
           "Everything else is an error that names the file and the line, and the"
           " device is not opened with a half-read profile: an unknown section or"
           " parameter, text after a header's `]`, an empty section name, a section"
           " with no settings, a section header given twice, a setting before any"
           " section, a parameter set twice, `name: value` or any line without `=`,"
           " a value that is not an unsigned integer or lies outside the parameter's"
           " range, a carriage return that does not end a line (CR-only files), a NUL"
           " byte, and files over 1 MiB. An empty file, or one of only comments,"
           " keeps every default.", "",
           "```ini", "[clock]", "core_clock_mhz = 1500", "", "[model]",
           "pixels_per_triangle = 64 ; inline comment", "```", ""]
    sections = []
    for p in cat.parameters:
        if p["section"] not in sections:
            sections.append(p["section"])
    for section in sections:
        out += [f"## [{section}]", "", "| parameter | default | range | meaning |",
                "|---|---|---|---|"]
        for p in cat.parameters:
            if p["section"] == section:
                out.append(f"| `{p['name']}` | {p['default']} | {p['min']} to {p['max']} |"
                           f" {p['description']} |")
        out.append("")
    return "\n".join(out)


def write_if_changed(path, text):
    path = Path(path)
    if path.exists() and path.read_text() == text:
        return
    path.write_text(text)


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    source, prefix, out_dir, docs_dir = argv[1:]
    with open(source, "rb") as f:
        data = tomllib.load(f)
    try:
        if "inherit" in data:
            data = inherit(data, source)
        cat = Catalogue(data)
    except (CatalogueError, KeyError) as e:
        sys.exit(f"{source}: {e}")
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    Path(docs_dir).mkdir(parents=True, exist_ok=True)
    header = f"{prefix}_catalogue.h"
    write_if_changed(Path(out_dir) / header, emit_header(cat, prefix))
    write_if_changed(Path(out_dir) / f"{prefix}_catalogue.c", emit_c(cat, prefix, header))
    write_if_changed(Path(docs_dir) / "counters.md", emit_counters_md(cat, prefix))
    if cat.parameters:
        write_if_changed(Path(docs_dir) / "profile.md", emit_profile_md(cat, prefix))


if __name__ == "__main__":
    main(sys.argv)
