"""rshd.py SOCKET HOSTS_TABLE PIDFILE: the far end of tests/net/rsh, started by net_up (netns.sh).

Why a daemon: a process inside fake host h1 cannot start one in h2. setns(2) enters a PID namespace
only if it descends from the caller's, and h2's is a sibling of h1's. So, as ssh has sshd, rsh
asks this daemon, which runs in the machine's own namespaces, to start the command in h2 with
nsenter. The command gets rsh's own stdin, stdout and stderr (passed over the Unix socket, so
nothing is relayed), rsh's environment and working directory; rsh gets its exit status (128+N
for signal N). When rsh goes away before the command ends (killed, as a launcher kills ssh), the
command's process group gets SIGTERM, then SIGKILL 2 s later.

HOSTS_TABLE has one line per host: "h1 weft-h1 10.213.X.1 HOLDER_PID". The daemon exits at EOF on
stdin (the life pipe of netns.sh: its owner is gone) and then kills what it started.

Request (rsh -> rshd): 4-byte big-endian length, then JSON {host, cmd, cwd, env}; the first
sendmsg carries fds 0, 1, 2 (SCM_RIGHTS). Reply: the exit status, 4-byte big-endian.
"""
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading

children = {}                      # pid -> Popen of commands running; guarded by lock
lock = threading.Lock()


def log(msg):
    print(f"rshd: {msg}", file=sys.stderr, flush=True)


def kill_group(proc, sig):
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def read_request(conn):
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    if len(fds) != 3 or len(data) < 4:
        for fd in fds:
            os.close(fd)
        raise ValueError("request without its 3 file descriptors")
    size = struct.unpack("!I", data[:4])[0]
    data = data[4:]
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            for fd in fds:
                os.close(fd)
            raise ValueError("request cut short")
        data += chunk
    return json.loads(data.decode("utf-8", "surrogateescape")), fds


def serve(conn, hosts):
    status = 255
    try:
        req, fds = read_request(conn)
    except (OSError, ValueError) as e:
        log(f"bad request: {e}")
        conn.close()
        return
    try:
        pid = hosts.get(req["host"])
        if pid is None:
            os.write(fds[2], f"rsh: no fake host '{req['host']}' (hosts: {' '.join(sorted(hosts))})\n".encode())
            conn.sendall(struct.pack("!i", 255))
            return
        argv = ["nsenter", "-t", pid, "--net", "--uts", "--ipc", "--mount", "--pid",
                "--wd=" + req["cwd"], "--", "/bin/sh", "-c", req["cmd"]]
        proc = subprocess.Popen(argv, stdin=fds[0], stdout=fds[1], stderr=fds[2], env=req["env"],
                                start_new_session=True)
    except OSError as e:
        os.write(fds[2], f"rsh: cannot start the command on {req['host']}: {e}\n".encode())
        conn.sendall(struct.pack("!i", 255))
        return
    finally:
        for fd in fds:
            os.close(fd)
    with lock:
        children[proc.pid] = proc
    pidfd = os.pidfd_open(proc.pid)
    try:
        while True:
            ready, _, _ = select.select([conn, pidfd], [], [])
            if pidfd in ready:
                break
            if not conn.recv(64):          # rsh is gone: hang up, as sshd would
                kill_group(proc, signal.SIGTERM)
                try:
                    proc.wait(2)
                except subprocess.TimeoutExpired:
                    kill_group(proc, signal.SIGKILL)
                break
        rc = proc.wait()
        status = rc if rc >= 0 else 128 - rc
        conn.sendall(struct.pack("!i", status))
    except OSError:
        pass
    finally:
        os.close(pidfd)
        conn.close()
        with lock:
            children.pop(proc.pid, None)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, table, pidfile = sys.argv[1:]
    hosts = {}
    with open(table) as f:
        for line in f:
            index, name, addr, pid = line.split()
            for key in (index, name, addr):
                hosts[key] = pid
    with open(pidfile, "w") as f:
        f.write(f"{os.getpid()}\n")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path + ".new")                # appears under its name only once it listens
    srv.listen(64)
    os.rename(path + ".new", path)
    while True:
        ready, _, _ = select.select([srv, 0], [], [])
        if 0 in ready and not os.read(0, 64):
            break                          # the owner of the fake hosts is gone
        if srv in ready:
            conn, _ = srv.accept()
            threading.Thread(target=serve, args=(conn, hosts), daemon=True).start()
    with lock:
        for proc in children.values():
            kill_group(proc, signal.SIGKILL)
    os.unlink(path)


if __name__ == "__main__":
    main()
