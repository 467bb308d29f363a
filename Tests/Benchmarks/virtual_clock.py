#!/usr/bin/env python3
"""The virtual clock's speed (issue 14 §3): 10 virtual minutes with two links, 120 Hz and
30 Hz, each answering every tick with FrameDone, against `framerated --clock virtual`.

Starts its own daemon (the binary given), one connection per link, FrameDone sent as a
notification the moment a tick arrives (the cheapest client: a raw socket and a scan for
the fields it needs, so the daemon's side is what the wall time measures). Prints one
JSON line: virtual and wall seconds, ticks per link, vsync round trips per wall second.

Usage: virtual_clock.py FRAMERATED [--minutes 10]
"""
import argparse
import json
import os
import re
import select
import socket
import subprocess
import sys
import tempfile
import time

TICK = re.compile(rb'"method":"framerate\.v1\.DisplayLink/Tick","params":\{"link":(\d+),"sequence":(\d+),"timestamp":([0-9.]+)')


def connect(path, deadline):
    while True:
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(path)
            return sock
        except OSError:
            sock.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def call(sock, line):
    sock.sendall(line + b"\n")
    data = b""
    while b"\n" not in data:
        data += sock.recv(65536)
    return data


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("framerated")
    parser.add_argument("--minutes", type=float, default=10)
    arguments = parser.parse_args()
    directory = tempfile.mkdtemp(prefix="framerated-virtual-bench-")
    path = os.path.join(directory, "framerated.sock")
    daemon = subprocess.Popen(
        [arguments.framerated, "--socket", path, "--clock", "virtual", "--log-level", "warning", "--log-target", "stderr"],
        stderr=open(os.path.join(directory, "framerated.log"), "wb"))
    try:
        fast = connect(path, time.monotonic() + 20)
        slow = connect(path, time.monotonic() + 20)
        end = 1000.0 + 60 * arguments.minutes
        started = time.monotonic()
        buffers = {}
        for sock, rate in ((fast, 120), (slow, 30)):
            reply = call(sock, b'{"jsonrpc":"2.0","id":1,"method":"framerate.v1.DisplayLink/Register","params":{"range":{"minimum":%d,"maximum":%d,"preferred":%d},"highFrameRate":true}}' % (rate, rate, rate))
            buffers[sock] = reply.partition(b"\n")[2]
        ticks = {fast: 0, slow: 0}
        state = {"done": False, "last": 0.0}

        def answer(sock):
            *lines, buffers[sock] = buffers[sock].split(b"\n")
            answers = []
            for line in lines:
                match = TICK.search(line)
                if not match:
                    continue
                link, sequence, timestamp = int(match[1]), int(match[2]), float(match[3])
                state["last"] = max(state["last"], timestamp)
                if timestamp >= end:
                    state["done"] = True
                    continue
                ticks[sock] += 1
                answers.append(b'{"jsonrpc":"2.0","method":"framerate.v1.DisplayLink/FrameDone","params":{"link":%d,"sequence":%d}}\n' % (link, sequence))
            if answers:
                sock.sendall(b"".join(answers))

        for sock in (fast, slow):
            answer(sock)
        while not state["done"]:
            readable, _, _ = select.select([fast, slow], [], [], 30)
            if not readable:
                raise SystemExit("no tick for 30 wall seconds")
            for sock in readable:
                chunk = sock.recv(65536)
                if not chunk:
                    raise SystemExit("the daemon closed a connection")
                buffers[sock] += chunk
                answer(sock)
        last = state["last"]
        wall = time.monotonic() - started
        virtual = last - 1000.0
        print(json.dumps({
            "virtualSeconds": round(virtual, 3), "wallSeconds": round(wall, 3),
            "ticks120Hz": ticks[fast], "ticks30Hz": ticks[slow],
            "vsyncRoundTripsPerWallSecond": round(ticks[fast] / wall),
            "speedup": round(virtual / wall, 1),
        }))
    finally:
        daemon.terminate()
        daemon.wait(timeout=30)


if __name__ == "__main__":
    main()
