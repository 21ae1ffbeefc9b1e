#!/usr/bin/env python3
"""Generate mpi.h from the ABI table.

    gen_mpi_h.py --header OUT/mpi.h
    gen_mpi_h.py --list                 every function of the table, one per line
    gen_mpi_h.py --list-implemented --unimplemented unimplemented.txt
    gen_mpi_h.py --stats                how much the table holds

Everything comes from mpi_abi_table.py (next to this file).  The entry points (PMPI_ functions,
MPI_ aliases, and the stubs of the functions in unimplemented.txt) come from gen_entry.py, which
reads the table through this module: implementing a function means writing wm_impl_MPI_<name> in
src/mpi/, deleting its line from unimplemented.txt and running gen_entry.py (docs/abi.md).
The generator refuses a table or list it cannot trust (duplicates, unknown types, unsorted or
unknown names), saying which line is wrong.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_abi_table as T  # noqa: E402


class TableError(Exception):
    pass


class Function:
    def __init__(self, ret, name, params, family, tags, lineno):
        self.ret = ret
        self.name = name
        self.params = params          # list of parameter declarations; [] for (void)
        self.family = family
        self.lineno = lineno
        self.deprecated = None
        self.value = False            # int result that is not an error code
        self.weft = False             # beyond the ABI's reference mpi.h
        for tag in tags:
            words = tag.split()
            if words[0] == "deprecated" and len(words) == 2:
                self.deprecated = words[1]
            elif tag == "value":
                self.value = True
            elif tag == "weft":
                self.weft = True
            else:
                raise TableError(f"line {lineno}: unknown tag [{tag}]")

    @property
    def returns_error_code(self):
        return self.ret == "int" and not self.value

    def param_list(self):
        return ", ".join(self.params) if self.params else "void"

    def prototype(self, prefix=""):
        return f"{self.ret} {prefix}{self.name}({self.param_list()})"


# ---- the table, checked -------------------------------------------------------------------

def handle_types():
    """C type -> null handle name, for every handle type with predefined values."""
    nulls = {ctype: values[0][0] for ctype, _, values in T.HANDLES}
    for ctype, _, values in T.T_HANDLES:
        if values:
            nulls[ctype] = values[0][0]
    return nulls


def known_types():
    types = {"void", "int", "char", "double"}
    types.update(name for name, _, _ in T.SCALAR_TYPES)
    types.update(ctype for ctype, _, _ in T.HANDLES)
    types.update(ctype for ctype, _, _ in T.T_HANDLES)
    types.update(name for name, _ in T.T_ENUM_TYPES)
    types.update(cb[0] for cb in T.CALLBACKS + T.T_CALLBACKS)
    types.update(alias for alias, _ in T.CALLBACK_ALIASES)
    types.add("MPI_Status")
    types.add(T.F08_STATUS)
    return types


LINE_RE = re.compile(r"^(?P<ret>[A-Za-z_]\w*)\s+(?P<name>MPI_\w+)\((?P<params>[^()]*)\)"
                     r"(?P<tags>(?:\s*\[[^\]]*\])*)\s*$")
PARAM_RE = re.compile(r"^(?:const\s+)?(?P<type>[A-Za-z_]\w*)[\s\*]+(?:const\s+)?"
                      r"(?P<name>[A-Za-z_]\w*)(?:\[\d*\])*$")


def check_param(param, types, lineno):
    if param == "...":
        return
    m = PARAM_RE.match(param)
    if not m:
        raise TableError(f"line {lineno}: cannot read parameter '{param}'")
    if m.group("type") not in types:
        raise TableError(f"line {lineno}: unknown type '{m.group('type')}' in '{param}'")


def parse_functions(text=None):
    """Returns [(family, description, [Function])] in table order."""
    text = T.FUNCTIONS if text is None else text
    types = known_types()
    families, seen = [], {}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        if line.startswith("@family "):
            name, _, desc = line[len("@family "):].partition(":")
            families.append((name.strip(), desc.strip(), []))
            continue
        m = LINE_RE.match(line)
        if not m:
            raise TableError(f"line {lineno}: not a prototype: {line}")
        if not families:
            raise TableError(f"line {lineno}: function before the first @family")
        ret, name = m.group("ret"), m.group("name")
        if ret not in types:
            raise TableError(f"line {lineno}: unknown return type '{ret}'")
        params = [p.strip() for p in m.group("params").split(",")]
        if params == ["void"]:
            params = []
        for p in params:
            check_param(p, types, lineno)
        tags = [t.strip() for t in re.findall(r"\[([^\]]*)\]", m.group("tags"))]
        if name in seen:
            raise TableError(f"line {lineno}: {name} already on line {seen[name]}")
        seen[name] = lineno
        families[-1][2].append(Function(ret, name, params, families[-1][0], tags, lineno))
    return families


def all_functions(families):
    return [f for _, _, funcs in families for f in funcs]


def check_constants():
    """Every constant name once, and the null handle of each type first."""
    names = {}

    def add(name, where):
        if name in names:
            raise TableError(f"constant {name} in {where} and in {names[name]}")
        names[name] = where

    for ctype, _, values in T.HANDLES + T.T_HANDLES:
        for name, _ in values:
            add(name, ctype)
    for group, values in T.DATATYPES:
        for name, value in values:
            add(name, "datatypes")
            if not 0x200 < value < 0x300:
                raise TableError(f"datatype {name} = {value:#x} outside 0x200-0x2ff")
    for alias, target in T.ALIASES:
        add(alias, "aliases")
        if target not in names:
            raise TableError(f"alias {alias} of unknown {target}")
    for group, values in T.DEFINES:
        for name, _ in values:
            add(name, group)
    for group, values in T.ENUMS:
        for name, _, _ in values:
            add(name, group)
    for group, values in T.POINTER_CONSTANTS:
        for name, _, _ in values:
            add(name, group)
    for name, _ in T.OFFSET_CONSTANTS:
        add(name, "offsets")
    for name, _, _, _ in T.CALLBACK_CONSTANTS:
        add(name, "callback constants")
    for tname, values in T.T_ENUM_TYPES:
        for name, _ in values:
            add(name, tname)
    for group, values in T.T_ENUMS:
        for name, _ in values:
            add(name, group)
    return names


def read_unimplemented(path, functions):
    """The names listed in path: sorted, once each, all in the table."""
    by_name = {f.name: f for f in functions}
    names, prev = [], None
    with open(path) as fp:
        for lineno, line in enumerate(fp, 1):
            name = line.strip()
            if not name or name.startswith("#"):
                continue
            where = f"{path}:{lineno}"
            if name not in by_name:
                raise TableError(f"{where}: {name} is not a function of the table")
            if prev is not None and name <= prev:
                raise TableError(f"{where}: {name} is "
                                 f"{'listed twice' if name == prev else 'out of order'}"
                                 f" (after {prev}); keep the file sorted")
            names.append(name)
            prev = name
    return names


# ---- mpi.h -------------------------------------------------------------------------------

def col(name, width=32):
    """name padded to width, and never glued to what follows."""
    return (name + " ").ljust(width)


def emit_header(families):
    out = []
    w = out.append
    mv, ms = T.MPI_VERSION
    av, asub = T.ABI_VERSION
    w(f"/* mpi.h: the MPI {mv}.{ms} standard ABI (version {av}.{asub}), as implemented by Weft's")
    w(" * libmpi_abi.so.1.  Any library of the same ABI can run a program compiled against it.")
    w(" *")
    w(" * Generated by src/mpi/abi/gen_mpi_h.py from src/mpi/abi/mpi_abi_table.py: edit the table,")
    w(" * not this file. */")
    w("#ifndef MPI_H_INCLUDED")
    w("#define MPI_H_INCLUDED")
    w("")
    w("#include <stdint.h>")
    w("")
    w("#if defined(__cplusplus)")
    w('extern "C" {')
    w("#endif")
    w("")
    w(f"#define MPI_VERSION        {mv}")
    w(f"#define MPI_SUBVERSION     {ms}")
    w(f"#define MPI_ABI_VERSION    {av}")
    w(f"#define MPI_ABI_SUBVERSION {asub}")
    w("")
    w("/* ---- scalar types ---- */")
    for name, ctype, what in T.SCALAR_TYPES:
        w(f"typedef {ctype} {name};".ljust(36) + f"/* {what} */")
    w("")
    w("typedef struct {")
    for field in T.STATUS_FIELDS:
        w(f"    int {field};")
    w(f"    int MPI_internal[{T.STATUS_INTERNAL_INTS}];")
    w("} MPI_Status;")
    w("")
    w("typedef struct {                   /* the mpi_f08 module's TYPE(MPI_Status) */")
    for field in T.STATUS_FIELDS:
        w(f"    MPI_Fint {field};")
    w(f"    MPI_Fint MPI_internal[{T.STATUS_INTERNAL_INTS}];")
    w(f"}} {T.F08_STATUS};")
    w("")
    w("/* ---- handles: pointers to incomplete types; predefined handles are small integers ---- */")
    for ctype, tag, values in T.HANDLES:
        w(f"typedef struct {tag} *{ctype};")
        for name, value in values:
            w(f"#define {col(name)}(({ctype})0x{value:08x})")
        if ctype == "MPI_Datatype":
            for group, dts in T.DATATYPES:
                w(f"/* {group} */")
                for name, value in dts:
                    w(f"#define {col(name)}(({ctype})0x{value:08x})")
            w("/* other names of the same types */")
            for alias, target in T.ALIASES:
                w(f"#define {col(alias)}{target}")
        w("")
    w("/* ---- integer constants ---- */")
    for group, values in T.DEFINES:
        w(f"/* {group} */")
        for name, value in values:
            w(f"#define {col(name)}{value}")
    w("")
    for group, values in T.ENUMS:
        w(f"/* {group} */")
        w("enum {")
        for i, (name, value, note) in enumerate(values):
            sep = "," if i + 1 < len(values) else ""
            line = f"    {col(name, 34)}= {value}{sep}"
            w(line + (f" /* {note} */" if note else ""))
        w("};")
        w("")
    w("/* ---- pointer constants ---- */")
    for group, values in T.POINTER_CONSTANTS:
        w(f"/* {group} */")
        for name, ctype, value in values:
            w(f"#define {col(name)}(({ctype.replace(' ', '')}){value})")
    for name, value in T.OFFSET_CONSTANTS:
        w(f"#define {col(name)}((MPI_Offset){value})")
    w("")
    w("/* ---- callback types ---- */")
    for name, ret, params, note in T.CALLBACKS:
        w(f"typedef {ret} ({name})({params});" + (f" /* {note} */" if note else ""))
    for alias, target in T.CALLBACK_ALIASES:
        w(f"typedef {target} {alias};")
    w("/* predefined callbacks */")
    for name, ctype, value, note in T.CALLBACK_CONSTANTS:
        w(f"#define {col(name)}(({ctype} *){value})" + (f" /* {note} */" if note else ""))
    w("")
    w("/* ---- the tool information interface (MPI_T) ---- */")
    for ctype, tag, values in T.T_HANDLES:
        w(f"typedef struct {tag} *{ctype};")
    for ctype, tag, values in T.T_HANDLES:
        for name, value in values:
            w(f"#define {col(name)}(({ctype}){value})")
    w("")
    for tname, values in T.T_ENUM_TYPES:
        w(f"typedef enum {tname} {{")
        for i, (name, value) in enumerate(values):
            sep = "," if i + 1 < len(values) else ""
            w(f"    {col(name, 34)}= 0x{value:02x}{sep}")
        w(f"}} {tname};")
        w("")
    for group, values in T.T_ENUMS:
        w(f"/* {group} */")
        w("enum {")
        for i, (name, value) in enumerate(values):
            sep = "," if i + 1 < len(values) else ""
            w(f"    {col(name, 34)}= {value}{sep}")
        w("};")
        w("")
    for name, ret, params, note in T.T_CALLBACKS:
        w(f"typedef {ret} ({name})({params});")
    w("")
    for prefix, title in (("", "functions"),
                          ("P", "the profiling interface: every function again as PMPI_")):
        w(f"/* ==== {title} ==== */")
        for family, desc, funcs in families:
            w("")
            w(f"/* ---- {desc} ---- */")
            for f in funcs:
                note = f" /* deprecated since MPI-{f.deprecated} */" if f.deprecated else ""
                w(f"{f.prototype(prefix)};{note}")
        w("")
    w("#if defined(__cplusplus)")
    w("}")
    w("#endif")
    w("")
    w("#endif")
    return "\n".join(out) + "\n"


# ---- stubs --------------------------------------------------------------------------------

def stub_result(f, nulls):
    """The C expression a stub of f returns after raising the error; None: the error code."""
    if f.returns_error_code:
        return None
    if f.ret in nulls:
        return nulls[f.ret]
    if f.ret in ("int", "MPI_Fint") and len(f.params) == 1:
        ptype = PARAM_RE.match(f.params[0]).group("type")
        if ptype in nulls:
            return f"({f.ret})(intptr_t){nulls[ptype]}"
    if f.ret == "double":
        return "0.0"
    if f.ret == "MPI_Aint":
        return "0"
    raise TableError(f"line {f.lineno}: no stub rule for {f.name} returning {f.ret}")


# ---- main ---------------------------------------------------------------------------------

def write_if_changed(path, text):
    """Keeps the timestamp of an unchanged file, so nothing recompiles for nothing."""
    try:
        with open(path) as fp:
            if fp.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as fp:
        fp.write(text)
    os.replace(tmp, path)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--header", help="write mpi.h here")
    ap.add_argument("--unimplemented", help="the list of unimplemented functions")
    ap.add_argument("--list", action="store_true", help="print every function of the table")
    ap.add_argument("--list-implemented", action="store_true",
                    help="print the functions not in --unimplemented")
    ap.add_argument("--stats", action="store_true", help="print what the table holds")
    args = ap.parse_args(argv)

    try:
        families = parse_functions()
        functions = all_functions(families)
        constants = check_constants()
        unimplemented = None
        if args.unimplemented:
            unimplemented = read_unimplemented(args.unimplemented, functions)
        if args.list_implemented and unimplemented is None:
            ap.error("--list-implemented needs --unimplemented")
    except TableError as e:
        print(f"gen_mpi_h.py: {e}", file=sys.stderr)
        return 1

    if args.header:
        write_if_changed(args.header, emit_header(families))
    if args.list:
        print("\n".join(f.name for f in functions))
    if args.list_implemented:
        todo = set(unimplemented)
        print("\n".join(f.name for f in functions if f.name not in todo))
    if args.stats:
        print(f"functions: {len(functions)} "
              f"(large-count _c: {sum(f.name.endswith('_c') for f in functions)}, "
              f"MPI_T: {sum(f.name.startswith('MPI_T_') for f in functions)}, "
              f"deprecated: {sum(bool(f.deprecated) for f in functions)}, "
              f"beyond the reference header [weft]: {sum(f.weft for f in functions)})")
        print(f"families: {len(families)}")
        print(f"named constants: {len(constants)}")
        print(f"types: {len(known_types()) - 4}")  # less void, int, char, double
        if unimplemented is not None:
            print(f"unimplemented: {len(unimplemented)}, "
                  f"implemented: {len(functions) - len(unimplemented)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
