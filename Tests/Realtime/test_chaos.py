"""Chaos (issue "Hostile input", item 7): 1,000 client processes that hold links are
killed with SIGKILL at random, others half-close their sockets or stop in the middle of
a line; afterwards no link is left, and the daemon's descriptors and memory are back
near where they started.

Each client is a forked child of this test (cheap, and a real separate process whose
death the kernel reports to the daemon as a closed socket).
"""
from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from test_attacks import BIN_DIR, answers, poll

CLIENTS = 1000
BATCH = 100


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def link_count(path: str) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(5)
        sock.connect(path)
        sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"framerate.v1.Compositor/GetState"}\n')
        reply = json.loads(sock.makefile("rb").readline())
    return sum(len(display["links"]) for display in reply["result"]["displays"])


def client(path: str, behaviour: str) -> None:
    """A child: registers a link (10 Hz, so 1,000 of them tick cheaply), then misbehaves, then waits to be killed."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"framerate.v1.DisplayLink/Register",'
                     b'"params":{"range":{"minimum":10,"maximum":10,"preferred":10}}}\n')
        sock.makefile("rb").readline()
        if behaviour == "half-close":
            sock.shutdown(socket.SHUT_WR)
        elif behaviour == "partial-line":
            sock.sendall(b'{"jsonrpc":"2.0","id":2,"method":"framerate.v1.Compo')
        os.write(1, b"")  # nothing to say: the parent counts registrations through GetState
        signal.pause()
    finally:
        os._exit(0)


@pytest.fixture
def daemon():
    directory = Path(tempfile.mkdtemp(prefix="framerated-chaos-"))
    path = str(directory / "framerated.sock")
    process = subprocess.Popen([str(BIN_DIR / "framerated"), "--socket", path, "--log-target", "stderr", "--log-level", "error"],
                               stderr=subprocess.DEVNULL)
    try:
        poll(lambda: answers(path), 10, "the daemon to answer")
        yield process, path
    finally:
        process.terminate()
        process.wait(10)


def test_killed_and_misbehaving_clients_leak_nothing(daemon):
    process, path = daemon
    rng = random.Random(20261123)
    # Warm up the paths a client takes (allocator arenas, NIO's buffers) before the baseline.
    warm = []
    for _ in range(20):
        child = os.fork()
        if child == 0:
            client(path, "hold")
        warm.append(child)
    poll(lambda: link_count(path) == 20, 30, "20 warm-up links")
    for child in warm:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    poll(lambda: link_count(path) == 0, 30, "the warm-up links to go")
    base_fds, base_rss = descriptors(process.pid), rss_kib(process.pid)

    behaviours = ["hold"] * 6 + ["half-close"] * 2 + ["partial-line"] * 2
    killed = 0
    for start in range(0, CLIENTS, BATCH):
        children = []
        for _ in range(BATCH):
            child = os.fork()
            if child == 0:
                client(path, rng.choice(behaviours))
            children.append(child)
        expected = BATCH
        poll(lambda: link_count(path) >= expected, 60, f"links of clients {start}..{start + BATCH}")
        rng.shuffle(children)
        for child in children:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            killed += 1
            if rng.random() < 0.05:
                time.sleep(0.001)  # a few kills spread over time, most at once
    assert killed == CLIENTS
    poll(lambda: link_count(path) == 0, 60, "every link of a killed client to be released")
    poll(lambda: descriptors(process.pid) <= base_fds + 4, 30, "the daemon's descriptors to return to their baseline")
    rss = rss_kib(process.pid)
    print(f"\nchaos: {CLIENTS} clients killed; fds {base_fds} -> {descriptors(process.pid)}; RSS {base_rss} -> {rss} KiB")
    assert rss <= base_rss + 32 * 1024, f"RSS grew from {base_rss} to {rss} KiB"
    assert process.poll() is None
