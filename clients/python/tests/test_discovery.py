"""Finding the daemon (docs/protocol.md, "Finding the daemon") and checking who answers.

Discovery runs against real files: listening sockets, a stale socket, a regular
file, nothing. The trust check runs against a real listener started as another
user (``setpriv --reuid 65534``), which needs root, as the test suite runs.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

import framerate
from framerate import _trust

SYSTEM = "/run/framerated/framerated.sock"


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="frxdg-"))
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def listening_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(1)
    return sock


def test_explicit_path_wins_over_everything(runtime_dir):
    listener = listening_socket(runtime_dir / "framerated.sock")
    try:
        env = {"FRAMERATED_SOCKET": "/x/env.sock", "XDG_RUNTIME_DIR": str(runtime_dir)}
        assert framerate.find_socket("/explicit.sock", env) == framerate.SocketChoice("/explicit.sock", "explicit")
        assert framerate.socket_path("/explicit.sock", env) == "/explicit.sock"
    finally:
        listener.close()


def test_environment_wins_over_the_per_user_socket(runtime_dir):
    listener = listening_socket(runtime_dir / "framerated.sock")
    try:
        env = {"FRAMERATED_SOCKET": "/x/env.sock", "XDG_RUNTIME_DIR": str(runtime_dir)}
        assert framerate.find_socket(None, env) == framerate.SocketChoice("/x/env.sock", "environment")
        assert framerate.find_socket("", env).path == "/x/env.sock"
    finally:
        listener.close()


def test_per_user_socket_is_chosen_when_it_exists(runtime_dir):
    per_user = runtime_dir / "framerated.sock"
    listener = listening_socket(per_user)
    try:
        for env in ({"XDG_RUNTIME_DIR": str(runtime_dir)}, {"XDG_RUNTIME_DIR": str(runtime_dir) + "/", "FRAMERATED_SOCKET": ""}):
            choice = framerate.find_socket(None, env)
            assert choice == framerate.SocketChoice(str(per_user), "per-user")
            assert choice.paths_tried == [str(per_user)]
    finally:
        listener.close()
    # A socket file with no listener (a dead per-user daemon) is still a socket: it is chosen.
    assert framerate.find_socket(None, {"XDG_RUNTIME_DIR": str(runtime_dir)}).source == "per-user"


def test_system_socket_when_there_is_no_per_user_socket(runtime_dir):
    per_user = str(runtime_dir / "framerated.sock")
    choice = framerate.find_socket(None, {"XDG_RUNTIME_DIR": str(runtime_dir)})
    assert choice == framerate.SocketChoice(SYSTEM, "system", per_user)
    assert choice.paths_tried == [per_user, SYSTEM]
    # A regular file at the per-user path is not a daemon's socket.
    Path(per_user).write_text("not a socket")
    assert framerate.find_socket(None, {"XDG_RUNTIME_DIR": str(runtime_dir)}).path == SYSTEM
    # No XDG_RUNTIME_DIR (root's usual case, or `runuser -u nobody`): only the system socket is tried.
    for env in ({}, {"XDG_RUNTIME_DIR": ""}):
        choice = framerate.find_socket(None, env)
        assert choice == framerate.SocketChoice(SYSTEM, "system", None)
        assert choice.paths_tried == [SYSTEM]


def test_no_predictable_fallback_in_tmp():
    assert framerate.find_socket(None, {}).path == SYSTEM
    assert "/tmp" not in framerate.find_socket(None, {}, is_socket=lambda path: False).path


def test_not_running_advice_names_exactly_the_paths_tried(runtime_dir, monkeypatch):
    monkeypatch.delenv("FRAMERATED_SOCKET", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    per_user = str(runtime_dir / "framerated.sock")
    missing_system = framerate.SocketChoice(str(runtime_dir / "system.sock"), "system", per_user)
    error = framerate.DaemonNotRunning(missing_system.path, choice=missing_system)
    assert error.paths_tried == [per_user, missing_system.path]
    assert f"tried {per_user} (no socket there: no per-user daemon) and {missing_system.path} (nothing listening" in error.message
    assert "systemctl start framerated.socket" in error.message and "`framerated`" in error.message

    no_runtime = framerate.DaemonNotRunning(SYSTEM, choice=framerate.SocketChoice(SYSTEM, "system"))
    assert no_runtime.paths_tried == [SYSTEM]
    assert f"tried {SYSTEM} (nothing listening" in no_runtime.message
    assert "XDG_RUNTIME_DIR is not set, so no per-user daemon was looked for" in no_runtime.message
    assert "/tmp" not in no_runtime.message

    stale = framerate.DaemonNotRunning(per_user, "connection refused", choice=framerate.SocketChoice(per_user, "per-user"))
    assert f"nothing is listening on {per_user} (connection refused), your per-user daemon's socket" in stale.message
    assert "systemctl" not in stale.message

    from_env = framerate.DaemonNotRunning("/x/env.sock", choice=framerate.SocketChoice("/x/env.sock", "environment"))
    assert "(from $FRAMERATED_SOCKET)" in from_env.message and "unset FRAMERATED_SOCKET" in from_env.message
    assert framerate.DaemonNotRunning("/x/a.sock").paths_tried == ["/x/a.sock"]


def test_connect_reports_the_paths_it_tried(runtime_dir, monkeypatch):
    """A real connect by the default rule to a stale per-user socket: only that path is tried."""
    per_user = runtime_dir / "framerated.sock"
    listening_socket(per_user).close()  # leaves a socket file nobody listens on
    monkeypatch.delenv("FRAMERATED_SOCKET", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    with pytest.raises(framerate.DaemonNotRunning) as caught:
        framerate.connect_blocking(reconnect=False)
    assert caught.value.path == str(per_user)
    assert caught.value.paths_tried == [str(per_user)]
    assert "your per-user daemon's socket" in caught.value.message


def test_connect_finds_the_per_user_daemon(daemon, monkeypatch):
    monkeypatch.delenv("FRAMERATED_SOCKET", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(Path(daemon.socket_path).parent))
    with framerate.connect_blocking(reconnect=False) as conn:
        assert conn.path == daemon.socket_path
        assert conn.health() == "SERVING"


def test_trusted_uids_rule():
    assert _trust.trusted_uids(1000, 999) == {0, 1000, 999}
    assert _trust.trusted_uids(1000, None, resolve_service=False) == {0, 1000}
    assert _trust.trusted_uids(0, None, resolve_service=False) == {0}
    assert _trust.service_uid("no-such-user-framerated-test") is None
    assert _trust.service_uid("root") == 0


def test_peer_uid_reads_so_peercred():
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert _trust.peer_uid(left) == os.geteuid()


# A listener run as another user: binds, says "ready", accepts once, holds the
# connection until the client closes it.
FAKE_DAEMON = """
import socket, sys
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(sys.argv[1])
listener.listen(4)
print("ready", flush=True)
conn, _ = listener.accept()
conn.recv(1)
"""


def start_fake_daemon_as(uid: int, path: Path) -> subprocess.Popen:
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to run a listener as another user"
    as_user = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    # This interpreter may live where uid cannot read it (e.g. under /root): take the first that runs.
    runnable = [candidate for candidate in dict.fromkeys([sys.executable, "/usr/bin/python3"])
                if subprocess.run([*as_user, candidate, "-c", "pass"], capture_output=True, cwd="/").returncode == 0]
    assert runnable, f"no Python that uid {uid} can run"
    process = subprocess.Popen(
        [*as_user, runnable[0], "-c", FAKE_DAEMON, str(path)],
        stdout=subprocess.PIPE, text=True, cwd="/",
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready", "the fake daemon did not start"
    return process


@pytest.mark.parametrize("use_environment", [False, True])
def test_a_daemon_run_by_another_user_is_refused(runtime_dir, monkeypatch, use_environment):
    if os.geteuid() != 0:
        pytest.skip("needs root to run a listener as uid 65534")
    runtime_dir.chmod(0o755)
    os.chown(runtime_dir, 65534, 65534)
    path = runtime_dir / "framerated.sock"
    fake = start_fake_daemon_as(65534, path)
    try:
        monkeypatch.delenv("FRAMERATED_SOCKET", raising=False)
        if use_environment:
            monkeypatch.setenv("FRAMERATED_SOCKET", str(path))
        with pytest.raises(framerate.UntrustedDaemon) as caught:
            framerate.connect_blocking(None if use_environment else str(path), reconnect=False)
        error = caught.value
        assert isinstance(error, framerate.PermissionDenied)
        assert (error.path, error.uid) == (str(path), 65534)
        assert error.message.startswith(f"refusing the daemon at {path}: the process listening there runs as uid 65534")
        assert "impersonating framerated" in error.message
    finally:
        fake.kill()
        fake.wait()


def test_a_daemon_run_by_root_is_trusted(tmp_socket_dir):
    """Tests run as root: a listener of our own uid (here root) passes the check and the call reaches it."""
    path = tmp_socket_dir / "own.sock"
    process = subprocess.Popen([sys.executable, "-c", FAKE_DAEMON, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        conn = framerate.connect_blocking(str(path), reconnect=False)
        conn.close()
    finally:
        process.kill()
        process.wait()
