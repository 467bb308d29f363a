#!/usr/bin/env python3
"""Tests/Benchmarks/mass_disconnect.py: what closing many connections at once costs.

Starts FRAMERATED on a private socket, registers one 10 Hz link on each of N
connections, adds a probe connection and a 120 Hz victim link whose ticks a thread
reads, then closes the N connections at once and reports, as one JSON line:
- closing_ms: how long this script's N close() calls took (counted in the next two);
- health_ms: from the first close until a Health/Check sent right after the last one is
  answered (it waits behind whatever the control loop does for the closes);
- released_ms: until Compositor/GetState (asked every 5 ms) lists the victim's link alone;
- daemon_cpu_s: the whole daemon's CPU meanwhile (its tick plane and those GetStates too);
- victim_max_gap_ms: the victim's longest wait between two ticks meanwhile.
With --victim-last the 120 Hz link registers after the N links instead of before them.
The daemon's log goes to this script's stderr.
Usage: mass_disconnect.py FRAMERATED [--connections N] [--victim-last]
"""

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time


class Line:
    """One connection speaking newline-delimited JSON-RPC."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # No wait on a wedged daemon is longer than this.
        self.sock.settimeout(60)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 0

    def call(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        while True:
            while b"\n" not in self.buffer:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise ConnectionError("the daemon closed the connection")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def register(line, rate):
    return line.call("framerate.v1.DisplayLink/Register", {"range": {"minimum": rate, "maximum": rate, "preferred": rate}, "highFrameRate": True})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("framerated")
    parser.add_argument("--connections", type=int, default=4000)
    parser.add_argument("--victim-last", action="store_true", help="register the 120 Hz link after the others")
    args = parser.parse_args()
    if not 1 <= args.connections <= 60000:
        sys.exit("--connections must be 1 to 60000")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < args.connections + 64:
        sys.exit(f"{args.connections} connections need {args.connections + 64} descriptors; the limit is {hard}")
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "framerated.sock")
        daemon = subprocess.Popen([args.framerated, "--socket", path, "--max-connections", str(args.connections + 64)])
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    probe = Line(path)
                    break
                except (FileNotFoundError, ConnectionRefusedError):
                    if time.monotonic() > deadline or daemon.poll() is not None:
                        sys.exit("framerated did not start")
                    time.sleep(0.01)
            probe.call("grpc.health.v1.Health/Check")
            victim = Line(path)
            gaps = []
            stop = threading.Event()

            def read_victim():
                last = None
                pending = b""
                while not stop.is_set():
                    try:
                        chunk = victim.sock.recv(1 << 16)
                    except OSError:
                        return
                    if not chunk:
                        return
                    now = time.monotonic()
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    if any(b"DisplayLink/Tick" in line for line in lines):
                        if last is not None:
                            gaps.append(now - last)
                        last = now

            def register_victim():
                link = register(victim, 120)["link"]
                # Read from now on: a client that leaves its ticks unread for 5 s is disconnected.
                threading.Thread(target=read_victim, daemon=True).start()
                return link

            victim_link = None if args.victim_last else register_victim()
            connections = []
            for _ in range(args.connections):
                connection = Line(path)
                register(connection, 10)
                connections.append(connection)
            if victim_link is None:
                victim_link = register_victim()
            time.sleep(0.5)
            gaps.clear()
            cpu_before = cpu_seconds(daemon.pid)
            start = time.monotonic()
            for connection in connections:
                connection.sock.close()
            closing = time.monotonic() - start
            probe.call("grpc.health.v1.Health/Check")
            health = time.monotonic() - start
            while True:
                displays = probe.call("framerate.v1.Compositor/GetState")["displays"]
                links = [link["link"] for display in displays for link in display["links"]]
                if links == [victim_link]:
                    break
                if victim_link not in links:
                    sys.exit("the 120 Hz link is gone: the daemon disconnected it (its log is above)")
                if time.monotonic() - start > 120:
                    sys.exit("the links were not released within 120 s")
                time.sleep(0.005)
            released = time.monotonic() - start
            cpu = cpu_seconds(daemon.pid) - cpu_before
            time.sleep(0.2)
            stop.set()
            print(json.dumps({
                "connections": args.connections, "closing_ms": round(closing * 1e3, 1), "health_ms": round(health * 1e3, 1), "released_ms": round(released * 1e3, 1),
                "daemon_cpu_s": round(cpu, 3), "victim_max_gap_ms": round(max(gaps) * 1e3, 1) if gaps else None,
            }))
        finally:
            daemon.terminate()
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()


if __name__ == "__main__":
    main()
