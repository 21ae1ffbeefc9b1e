#!/usr/bin/env python3
"""Lists the MPI tests of a build that suite.sh reruns on fake hosts, one per line, fields separated by \\x1e:
name, ranks, timeout (s), environment (VAR=VAL joined by \\x1f), program and its arguments (joined
by \\x1f). Read from `ctest --show-only=json-v1`, so the list is the build's own: a test added to
tests/mpi or tests/mpi_mt is rerun across hosts with nothing to add here.

Taken: tests labelled `mpi` whose command is `<mpiexec> -n N --timeout T program args...`, except
those that choose their own transports (mpi.ofi.*: WEFT_TRANSPORTS or WEFT_NODE_SPLIT in their
environment, which would defeat the point) and those judged by their output (a pass or fail
regular expression, WILL_FAIL). The others (scripts: error, finalize and launcher behaviour) are
listed on stderr with the reason, as `left out`.

usage: suite_list.py BUILD_DIR MPIEXEC MIN_RANKS [NAME_REGEX]  (only tests of at least MIN_RANKS)
"""
import json
import re
import subprocess
import sys

SEP = "\x1f"


def main():
    build, mpiexec = sys.argv[1], sys.argv[2]
    min_np = int(sys.argv[3])
    pick = re.compile(sys.argv[4]) if len(sys.argv) > 4 else None
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    left = 0
    for t in json.loads(out)["tests"]:
        name = t["name"]
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        if "mpi" not in props.get("LABELS", []) or (pick and not pick.search(name)):
            continue
        cmd = t.get("command") or []
        if len(cmd) > 2 and cmd[1] == "-n" and cmd[2].isdigit() and int(cmd[2]) < min_np:
            continue
        env = props.get("ENVIRONMENT", [])
        why = None
        if len(cmd) < 6 or cmd[0] != mpiexec or cmd[1] != "-n" or cmd[3] != "--timeout":
            why = "not a plain mpiexec -n N --timeout T launch"
        elif any(e.startswith(("WEFT_TRANSPORTS=", "WEFT_NODE_SPLIT=")) for e in env):
            why = "chooses its own transports"
        elif any(k in props for k in ("WILL_FAIL", "PASS_REGULAR_EXPRESSION",
                                      "FAIL_REGULAR_EXPRESSION")):
            why = "judged by its output"
        if why:
            left += 1
            print(f"left out: {name}: {why}", file=sys.stderr)
            continue
        print("\x1e".join([name, cmd[2], cmd[4], SEP.join(env), SEP.join(cmd[5:])]))
    print(f"left out: {left} tests in all", file=sys.stderr)


if __name__ == "__main__":
    main()
