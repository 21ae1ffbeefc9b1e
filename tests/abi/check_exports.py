#!/usr/bin/env python3
"""Checks the dynamic symbols of libmpi_abi.so against the ABI table.

    check_exports.py --lib libmpi_abi.so --nm nm --gen src/mpi/abi/gen_mpi_h.py --all-functions
        every function of the table is exported as PMPI_<name> (strong) and MPI_<name> (weak,
        so a profiling library can replace it)
    check_exports.py --lib libmpi_abi.so --nm nm --only-public
        nothing else leaks: every exported symbol is MPI_*, PMPI_*, MPIX_* or weft_*

Prints every offender, then one line 'N passed, N failed'; exits 1 on any failure.
"""

import argparse
import subprocess
import sys

PUBLIC_PREFIXES = ("MPI_", "PMPI_", "MPIX_", "weft_")
# Symbols the toolchain itself puts into every shared object.
TOOLCHAIN_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}


def dynamic_symbols(nm, lib):
    """name -> nm type letter, for the defined dynamic symbols of lib."""
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 2:
            symbols[fields[-1].split("@")[0]] = fields[-2]
    return symbols


def table_functions(gen):
    out = subprocess.run([sys.executable, gen, "--list"], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


def check_all_functions(symbols, functions):
    failures = []
    for name in functions:
        pname = "P" + name
        if pname not in symbols:
            failures.append(f"{pname}: not exported")
        elif symbols[pname] not in ("T", "i"):
            failures.append(f"{pname}: expected a strong function (T), got '{symbols[pname]}'")
        if name not in symbols:
            failures.append(f"{name}: not exported")
        elif symbols[name] != "W":
            failures.append(f"{name}: expected a weak alias (W), got '{symbols[name]}'")
    return len(functions), failures


def check_only_public(symbols):
    failures = [f"{name}: exported ({kind}) but not a public name"
                for name, kind in sorted(symbols.items())
                if not name.startswith(PUBLIC_PREFIXES) and name not in TOOLCHAIN_SYMBOLS]
    return len(symbols), failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--gen", help="gen_mpi_h.py, for the list of functions")
    ap.add_argument("--all-functions", action="store_true")
    ap.add_argument("--only-public", action="store_true")
    args = ap.parse_args()

    symbols = dynamic_symbols(args.nm, args.lib)
    if args.all_functions:
        if not args.gen:
            ap.error("--all-functions needs --gen")
        checked, failures = check_all_functions(symbols, table_functions(args.gen))
        what = "functions"
    elif args.only_public:
        checked, failures = check_only_public(symbols)
        what = "symbols"
    else:
        ap.error("say --all-functions or --only-public")

    for f in failures:
        print(f"FAIL {f}")
    failed_items = len({f.split(":")[0].lstrip("P") for f in failures}) if args.all_functions \
        else len(failures)
    print(f"checked {checked} {what} of {args.lib}")
    print(f"{checked - failed_items} passed, {failed_items} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
