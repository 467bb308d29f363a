"""Lifetime: a killed client's link is released; reconnect across a daemon restart;
SetCaps and GetState as an unprivileged user; the example program."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import framerate
from framerate.aio import skipped_intervals

from conftest import wait_until

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "animate.py"
PACKAGE_DIR = Path(framerate.__file__).resolve().parent


def run(coro, timeout: float = 60.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def links_of(state):
    return [link for display in state["displays"] for link in display["links"]]


VICTIM = r"""
import sys, framerate
with framerate.connect_blocking(sys.argv[1]) as conn:
    link = conn.register(30, 60, 60, label="victim")
    for tick in link:
        print(link.id, flush=True)
        break
    for tick in link:
        pass
"""


def test_a_killed_client_releases_its_link(daemon):
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, daemon.socket_path], stdout=subprocess.PIPE, text=True)
    try:
        link_id = int(victim.stdout.readline())
        with framerate.connect_blocking(daemon.socket_path) as conn:
            (entry,) = links_of(conn.state())
            assert entry["link"] == link_id and entry["pid"] == victim.pid and entry["label"] == "victim"
            victim.send_signal(signal.SIGKILL)
            killed = time.monotonic()
            victim.wait(5)
            wait_until(lambda: not links_of(conn.state()), 1.0, "the killed client's link to be released", first=0.01, cap=0.05)
            assert time.monotonic() - killed < 1.0
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait()


def test_a_client_that_stops_receiving_is_disconnected(daemon):
    """A client that shuts down only its reading side never hangs up: the daemon's end
    stays readable, so only the first tick send that fails (EPIPE) can tell the daemon
    the client is gone. Its link must go then, not vote and tick for as long as the
    client keeps the socket open."""
    import json
    import socket

    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        raw.connect(daemon.socket_path)
        request = {"jsonrpc": "2.0", "id": 1, "method": "framerate.v1.DisplayLink/Register",
                   "params": {"range": {"minimum": 120, "maximum": 120, "preferred": 120},
                              "highFrameRate": True, "label": "half-closed"}}
        raw.sendall(json.dumps(request).encode() + b"\n")
        reply = raw.makefile("rb").readline()
        assert json.loads(reply)["result"]["link"] >= 1, reply
        with framerate.connect_blocking(daemon.socket_path) as conn:
            (entry,) = links_of(conn.state())
            assert entry["label"] == "half-closed"
            raw.shutdown(socket.SHUT_RD)
            wait_until(lambda: not links_of(conn.state()), 5.0, "the half-closed client's link to be released",
                       first=0.01, cap=0.05)
    finally:
        raw.close()


def _ticks_across_the_restart(next_tick, last, daemon):
    """Reads ticks until the first one of the new daemon (timestamped after it was
    spawned); every tick on the way keeps the sequence invariant. Returns
    (the tick before the outage, the first one after it)."""
    for _ in range(400):
        tick = next_tick()
        assert tick.sequence == last.sequence + tick.skipped + 1, (last, tick)
        if tick.timestamp > daemon.started_at:
            return last, tick
        last = tick
    raise AssertionError("no tick from the new daemon")


def _check_gap(before, after):
    # The application sees one skipped gap: skipped >= 1, the sequence continues,
    # and skipped is computed from the time gap.
    assert after.skipped >= 1, (before, after)
    assert after.sequence == before.sequence + after.skipped + 1
    assert after.skipped == skipped_intervals(before.timestamp, after.timestamp, after.callback_rate), (before, after)


def test_reconnect_re_registers_links_after_a_restart(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(80, 120, 120, label="survivor", high_frame_rate=True)
            paused = await conn.register(30, 60, 30, label="sleeper")
            await paused.pause()
            await link.update(40, 120, 60)  # the last range is what is re-registered
            ticks = [await link.next_tick(5) for _ in range(3)]
            old_ids = (link.id, paused.id)

            await asyncio.get_running_loop().run_in_executor(None, daemon.restart)
            # Nothing raises: the first tick after the restart reports the gap as skipped.
            before, after = ticks[-1], None
            for _ in range(400):
                tick = await link.next_tick(15)
                assert tick.sequence == before.sequence + tick.skipped + 1
                if tick.timestamp > daemon.started_at:
                    after = tick
                    break
                before = tick
            assert after is not None, "no tick from the new daemon"
            _check_gap(before, after)
            follow = await link.next_tick(5)
            assert follow.sequence == after.sequence + follow.skipped + 1 and follow.link == link.id

            assert conn.reconnects == 1 and conn.connected
            assert not link.ended and not paused.ended
            assert link in conn.links and paused in conn.links
            state = await conn.state()
            entries = {entry["label"]: entry for entry in links_of(state)}
            assert set(entries) == {"survivor", "sleeper"}
            assert entries["survivor"]["link"] == link.daemon_id
            assert entries["survivor"]["range"] == {"minimum": 40.0, "maximum": 120.0, "preferred": 60.0}
            assert entries["survivor"]["highFrameRate"] is True
            assert entries["sleeper"]["paused"] is True and entries["sleeper"]["link"] == paused.daemon_id
            assert entries["sleeper"]["range"] == {"minimum": 30.0, "maximum": 60.0, "preferred": 30.0}
            # The objects and their ids are the same; the new daemon numbered them afresh.
            assert (link.id, paused.id) == old_ids and {link.daemon_id, paused.daemon_id} == {1, 2}
            await link.frame_done(follow.sequence)  # mapped to the new registration's sequence
            await paused.resume()
            resumed = await paused.next_tick(5)
            assert resumed.skipped == 0 and resumed.link == paused.id  # a resume reports no skip
            await link.invalidate()

    run(main())


def test_ids_stay_unique_and_watches_resume_after_a_restart(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            first = await conn.register(30, 60, 60, label="first")
            second = await conn.register(30, 60, 30, label="second")
            assert (first.id, second.id) == (1, 2)
            await first.invalidate()
            watch = conn.watch()
            await watch.start()
            watch_id = watch.id
            await asyncio.get_running_loop().run_in_executor(None, daemon.restart)
            while True:  # the watch is started again and says so
                event = await watch.next_event(15)
                if event.kind == "resynchronized":
                    break
            assert event.watch == watch_id == watch.id
            assert [entry["label"] for entry in links_of(event["state"])] == ["second"]
            assert second.id == 2 and second.daemon_id == 1
            # The new daemon gives the next link id 2, which `second` already has.
            third = await conn.register(30, 60, 60, label="third")
            assert third.daemon_id == 2 and third.id == 3
            tick = await third.next_tick(5)
            assert tick.link == 3
            event = await watch.next_event(5)
            while event.kind != "linkAdded":
                event = await watch.next_event(5)
            assert event.watch == watch_id and event["link"]["label"] == "third"

    run(main())


def test_reconnect_with_the_blocking_api(daemon):
    with framerate.connect_blocking(daemon.socket_path) as conn:
        link = conn.register(30, 60, 60, label="blocking-survivor")
        last = link.next_tick(5)
        daemon.restart()
        before, after = _ticks_across_the_restart(lambda: link.next_tick(15), last, daemon)
        _check_gap(before, after)
        assert conn.reconnects == 1
        assert [entry["label"] for entry in links_of(conn.state())] == ["blocking-survivor"]


def test_without_reconnect_the_link_ends_with_unavailable(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path, reconnect=False) as conn:
            link = await conn.register(30, 60, 60)
            await link.next_tick(5)
            await asyncio.get_running_loop().run_in_executor(None, daemon.stop)
            with pytest.raises(framerate.Unavailable) as caught:
                async for _ in link:
                    pass
            assert caught.value.status == "UNAVAILABLE" and link.ended
            with pytest.raises(framerate.Unavailable):
                await conn.state()

    run(main())


def test_reconnect_gives_up_with_daemon_not_running(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path, reconnect_timeout=0.5) as conn:
            link = await conn.register(30, 60, 60)
            await link.next_tick(5)
            await asyncio.get_running_loop().run_in_executor(None, daemon.stop)
            with pytest.raises(framerate.DaemonNotRunning) as caught:
                async for _ in link:
                    pass
            assert caught.value.path == daemon.socket_path
            with pytest.raises(framerate.DaemonNotRunning):
                await conn.health()

    run(main())


NOBODY = r"""
import sys, framerate
with framerate.connect_blocking(sys.argv[1], reconnect=False) as conn:
    try:
        conn.set_caps(low_power_mode=True)
        print("ALLOWED")
    except framerate.PermissionDenied as error:
        print("DENIED", error.status, error.code, error.message)
"""


def _python_for_nobody(runuser):
    for candidate in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if not candidate:
            continue
        probe = subprocess.run([runuser, "-u", "nobody", "--", candidate, "-c",
                                "import sys; assert sys.version_info >= (3, 9)"], capture_output=True)
        if probe.returncode == 0:
            return candidate
    return None


def _run_as_nobody(script: str, daemon, tmp_socket_dir) -> "subprocess.CompletedProcess[str]":
    """Runs ``script`` (with the daemon's socket as ``sys.argv[1]``) as the user nobody,
    with a copy of the package; skips the test where that is not possible."""
    if os.geteuid() != 0:
        pytest.skip("needs root to run a client as `nobody` (runuser -u nobody)")
    runuser = shutil.which("runuser")
    if not runuser:
        pytest.skip("runuser is not installed")
    python = _python_for_nobody(runuser)
    if python is None:
        pytest.skip("no Python 3.9+ that the user nobody can run")
    # A copy of the package that nobody can read (the source tree may be private).
    site = tmp_socket_dir / "site"
    if not site.exists():
        shutil.copytree(PACKAGE_DIR, site / "framerate", ignore=shutil.ignore_patterns("__pycache__"))
        for root, dirs, files in os.walk(site):
            os.chmod(root, 0o755)
            for name in files:
                os.chmod(os.path.join(root, name), 0o644)
    return subprocess.run(
        [runuser, "-u", "nobody", "--", python, "-c", script, daemon.socket_path],
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True, text=True, timeout=30, cwd="/",
    )


def test_set_caps_as_nobody_is_permission_denied(daemon, tmp_socket_dir):
    result = _run_as_nobody(NOBODY, daemon, tmp_socket_dir)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("DENIED PERMISSION_DENIED 7 "), result.stdout
    assert "framerated-admin" in result.stdout
    with framerate.connect_blocking(daemon.socket_path) as conn:
        assert conn.state()["displays"][0]["caps"]["lowPowerMode"] is False


HOLDERS = r"""
import sys, framerate
with framerate.connect_blocking(sys.argv[1], reconnect=False) as conn:
    for info in conn.state().links():
        print(info.label, info.pid, info.uid, info.command)
"""


def test_another_users_link_hides_its_holder_as_none(daemon, tmp_socket_dir):
    """GetState sends ``null`` for the holder of another user's link to a viewer that is
    not root, the daemon's user or an admin: LinkInfo says ``None``, not pid 0, uid 0
    (root)."""
    with framerate.connect_blocking(daemon.socket_path) as conn:
        conn.register(30, 60, 60, label="root-owned", paused=True)
        result = _run_as_nobody(HOLDERS, daemon, tmp_socket_dir)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == ["None None None None"], result.stdout
        (mine,) = conn.state().links()  # root sees its own link's holder
        assert (mine.label, mine.pid, mine.uid) == ("root-owned", os.getpid(), 0)


def test_example_animate(daemon):
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--frames", "30"],
        env=dict(os.environ, FRAMERATED_SOCKET=daemon.socket_path),
        capture_output=True, text=True, timeout=30,
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("frame")]
    assert len(lines) == 30, result.stdout
    assert "ms left" in lines[0]


def test_example_animate_scroll(daemon):
    """animate.py --scroll: boosts while scrolling, the panel following the decelerating
    contentVelocity down to 80 and 60 Hz while the callbacks stay at 120, then idle."""
    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "--scroll"],
        env=dict(os.environ, FRAMERATED_SOCKET=daemon.socket_path),
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any("boosted" in line and "panel 120.0 Hz" in line for line in lines), result.stdout
    panels = [line.split("panel")[1].split("Hz")[0].strip() for line in lines if "decelerating" in line]
    assert panels[-2:] == ["80.0", "60.0"], result.stdout
    assert all("callbacks 120.0 Hz" in line for line in lines if "decelerating" in line), result.stdout
    assert "panel  10.0 Hz" in lines[-1] and "idles" in lines[-1], result.stdout
