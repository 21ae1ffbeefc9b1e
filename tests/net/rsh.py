"""rsh [SSH-OPTIONS] [USER@]HOST COMMAND...: ssh for the fake hosts of tests/net/netns.sh.

Called the way a launcher calls ssh (Hydra: `-x HOST "/usr/bin/hydra_pmi_proxy" --control-port
...`): ssh's options are accepted and ignored, the words after HOST are joined by spaces and run
by /bin/sh -c in fake host HOST (h2, weft-h2 or its address), with this process's stdin, stdout,
stderr, environment and working directory. The exit status is the command's (128+N if signal N
killed it); 255 if it could not be run, as with ssh. Killing rsh makes rshd end the command.
Works from the machine itself and from inside any fake host: it asks rshd through
$WEFT_NET_DIR/rshd.sock (net_up exports WEFT_NET_DIR).
"""
import json
import os
import socket
import struct
import sys

# ssh(1) options that take an argument; every other option letter is a flag.
SSH_ARG_OPTIONS = set("BbcDEeFIiJLlmOopQRSWw")


def fail(msg):
    print(f"rsh: {msg}", file=sys.stderr)
    sys.exit(255)


def parse(argv):
    i = 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        word = argv[i]
        i += 1
        if word == "--":
            break
        for j, letter in enumerate(word[1:]):
            if letter in SSH_ARG_OPTIONS:
                if j == len(word) - 2:     # "-p 22": the argument is the next word
                    i += 1
                break                      # "-p22": the rest of the word is the argument
    if i >= len(argv):
        fail("usage: rsh [ssh options] HOST COMMAND...")
    host = argv[i].rsplit("@", 1)[-1]
    command = " ".join(argv[i + 1:])
    if not command:
        fail("no command: rsh runs commands, not login shells")
    return host, command


def std_fds():
    fds = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            fds.append(fd)
        except OSError:
            fds.append(os.open(os.devnull, os.O_RDWR))
    return fds


def main():
    host, command = parse(sys.argv[1:])
    netdir = os.environ.get("WEFT_NET_DIR")
    if not netdir:
        fail("WEFT_NET_DIR is not set: run under net_up of tests/net/netns.sh")
    request = json.dumps({"host": host, "cmd": command, "cwd": os.getcwd(), "env": dict(os.environ)})
    payload = request.encode("utf-8", "surrogateescape")
    message = struct.pack("!I", len(payload)) + payload
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(os.path.join(netdir, "rshd.sock"))
        sent = socket.send_fds(conn, [message], std_fds())
        conn.sendall(message[sent:])
        reply = b""
        while len(reply) < 4:
            chunk = conn.recv(4 - len(reply))
            if not chunk:
                fail(f"rshd closed the connection before {host}'s command ended")
            reply += chunk
    except OSError as e:
        fail(f"rshd at {netdir}: {e}")
    sys.exit(struct.unpack("!i", reply)[0])


if __name__ == "__main__":
    main()
