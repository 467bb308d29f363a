"""Fixtures: a real framerated on a temporary socket.

The daemon binary comes from ``$FRAMERATED_BIN_DIR`` (default: ``<repo>/.build/debug``).
Readiness is polled with backoff (connect, then a Health/Check answered
``SERVING``); there are no fixed sleeps.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterator, List, Optional, Sequence

import pytest

REPO = Path(__file__).resolve().parents[3]
BIN_DIR = Path(os.environ.get("FRAMERATED_BIN_DIR") or REPO / ".build" / "debug")
FRAMERATED = BIN_DIR / "framerated"


def health_check(path: str, timeout: float = 1.0) -> Optional[str]:
    """The daemon's Health/Check status at ``path``, or None when it does not answer."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(path)
            sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"grpc.health.v1.Health/Check"}\n')
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(4096)
                if not chunk:
                    return None
                data += chunk
        return json.loads(data).get("result", {}).get("status")
    except (OSError, ValueError):
        return None


def wait_until(predicate, timeout: float, what: str, first: float = 0.005, cap: float = 0.2):
    """Polls ``predicate`` with exponential backoff until it returns a truthy value."""
    deadline = time.monotonic() + timeout
    delay = first
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, cap)


class Daemon:
    """One framerated process on ``socket_path``; restartable on the same path."""

    def __init__(self, directory: Path, args: Sequence[str] = ()) -> None:
        self.directory = directory
        self.socket_path = str(directory / "framerated.sock")
        self.args = list(args)
        self.process: Optional[subprocess.Popen] = None
        self.logs: List[Path] = []
        #: time.monotonic() (CLOCK_MONOTONIC, the ticks' clock) when the latest daemon was spawned.
        self.started_at = 0.0

    def start(self) -> "Daemon":
        if not FRAMERATED.exists():
            pytest.fail(f"{FRAMERATED} not found: build it with `swift build --product framerated` or set FRAMERATED_BIN_DIR")
        log = self.directory / f"framerated-{len(self.logs)}.log"
        self.logs.append(log)
        self.started_at = time.monotonic()
        with open(log, "wb") as stderr:
            self.process = subprocess.Popen(
                [str(FRAMERATED), "--socket", self.socket_path, "--log-target", "stderr", *self.args],
                stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
            )
        wait_until(self._answers, 20, f"framerated to answer on {self.socket_path}")
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"framerated exited with {self.process.returncode}:\n{self.log_text()}")
        return health_check(self.socket_path) == "SERVING"

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def restart(self) -> None:
        self.stop()
        self.start()

    def log_text(self) -> str:
        return "\n".join(path.read_text(errors="replace") for path in self.logs if path.exists())


@pytest.fixture
def tmp_socket_dir() -> Iterator[Path]:
    # Short (Unix socket paths are at most 107 bytes) and traversable by the `nobody` test.
    directory = Path(tempfile.mkdtemp(prefix="frpy-"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def make_daemon(tmp_socket_dir: Path):
    daemons: List[Daemon] = []

    def make(*args: str, name: str = "") -> Daemon:
        directory = tmp_socket_dir / name if name else tmp_socket_dir
        directory.mkdir(exist_ok=True)
        daemon = Daemon(directory, args).start()
        daemons.append(daemon)
        return daemon

    yield make
    for daemon in daemons:
        daemon.stop()


@pytest.fixture
def daemon(make_daemon) -> Daemon:
    return make_daemon()
