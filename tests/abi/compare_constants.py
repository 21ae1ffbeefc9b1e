#!/usr/bin/env python3
"""Compare every constant of a reference standard-ABI header with Weft's mpi.h.

The reference is the mpi_abi.h of another implementation of the MPI 5.0 standard ABI (MPICH's
PyPI wheel in `make test`).  The names are read from the reference's text: every object-like
`#define MPI_...` and every enumerator `MPI_... =`.  Their values are not read from text but
compiled: one C program prints each name's value as an integer, built once against each header,
so a value written as an expression or an alias (`MPI_LONG_LONG_INT`) is compared as the
compiler sees it.

Exit 0 when every name of the reference exists in Weft's header with the same value; otherwise
exit 1 and list each missing name and each differing value.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

# Macros of the reference that are not constants of the interface: include guards and the
# type-override hooks of the scalar types.
NOT_CONSTANTS = re.compile(r"^(MPI_H_ABI|MPI_H|MPI_ABI_(Aint|Offset|Count))$")


def reference_names(text):
    """Constant names of a header, in order of appearance, without duplicates."""
    names = []
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    for m in re.finditer(r"^\s*#\s*define\s+(MPIX?_\w+)(\(?)", text, flags=re.M):
        if m.group(2) == "(" or NOT_CONSTANTS.match(m.group(1)):
            continue  # function-like macro, or not a constant
        names.append(m.group(1))
    for body in re.findall(r"\benum\b[^{;]*\{([^}]*)\}", text, flags=re.S):
        for m in re.finditer(r"(MPIX?_\w+)\s*(=|,|$)", body, flags=re.M):
            names.append(m.group(1))
    seen = set()
    return [n for n in names if not (n in seen or seen.add(n))]


def probe_source(names):
    """A C program that prints `name value` for each name, the value as a signed 64-bit integer."""
    lines = ["#include <stdint.h>", "#include <stdio.h>", "#include <mpi.h>",
             "#define P(n) printf(\"%s %lld\\n\", #n, (long long)(intptr_t)(n))",
             "int main(void) {"]
    lines += ["  P(%s);" % n for n in names]
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def compile_and_run(cc, include_dir, header, names, workdir, tag):
    """Values of `names` as compiled against `header` (copied as mpi.h into its own directory)."""
    incdir = os.path.join(workdir, "inc-" + tag)
    os.makedirs(incdir, exist_ok=True)
    src = os.path.join(workdir, "probe-%s.c" % tag)
    exe = os.path.join(workdir, "probe-" + tag)
    with open(src, "w") as f:
        f.write(probe_source(names))
    if header:
        with open(header) as f_in, open(os.path.join(incdir, "mpi.h"), "w") as f_out:
            f_out.write(f_in.read())
        include_dir = incdir
    cmd = [cc, "-std=gnu11", "-w", "-I", include_dir, "-o", exe, src]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        return None, res.stderr
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    values = {}
    for line in out.splitlines():
        name, value = line.split()
        values[name] = int(value)
    return values, ""


def missing_in(cc, include_dir, names, workdir):
    """Names of the list that Weft's mpi.h does not declare: compile each one alone."""
    missing = []
    for n in names:
        src = os.path.join(workdir, "one.c")
        with open(src, "w") as f:
            f.write("#include <stdint.h>\n#include <mpi.h>\n"
                    "long long v(void) { return (long long)(intptr_t)(%s); }\n" % n)
        res = subprocess.run([cc, "-std=gnu11", "-w", "-c", "-I", include_dir, "-o",
                              os.path.join(workdir, "one.o"), src], capture_output=True)
        if res.returncode != 0:
            missing.append(n)
    return missing


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reference", required=True, help="the reference mpi_abi.h")
    ap.add_argument("--weft-include", required=True, help="directory of Weft's mpi.h")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = ap.parse_args()

    with open(args.reference) as f:
        names = reference_names(f.read())
    if len(names) < 200:
        print("only %d constants found in %s: not a standard-ABI header?" % (len(names),
              args.reference))
        return 1

    with tempfile.TemporaryDirectory() as work:
        ref, err = compile_and_run(args.cc, None, args.reference, names, work, "ref")
        if ref is None:
            print("the reference header does not compile:\n" + err)
            return 1
        weft, err = compile_and_run(args.cc, args.weft_include, None, names, work, "weft")
        missing = []
        if weft is None:
            missing = missing_in(args.cc, args.weft_include, names, work)
            present = [n for n in names if n not in missing]
            weft, err = compile_and_run(args.cc, args.weft_include, None, present, work, "weft2")
            if weft is None:
                print("Weft's mpi.h does not compile the probe:\n" + err)
                return 1

    differ = [(n, ref[n], weft[n]) for n in names if n in weft and weft[n] != ref[n]]
    for n in missing:
        print("missing in Weft's mpi.h: %s (reference %#x)" % (n, ref[n]))
    for n, r, w in differ:
        print("differs: %-32s reference %#x (%d), Weft %#x (%d)" % (n, r, r, w, w))
    print("%d constants compared: %d equal, %d differ, %d missing" %
          (len(names), len(names) - len(differ) - len(missing), len(differ), len(missing)))
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
