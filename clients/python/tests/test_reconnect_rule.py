"""The reconnect rule of docs/protocol.md ("Reconnecting"), shared with the Swift and
C clients: the backoff as a pure function, and against a real daemon that is frozen,
killed, stopped and restarted: calls pending at the drop and calls made during the
outage fail at once with ConnectionLost, links and watches come back, and a policy
with maximum_attempts gives up after exactly that many attempts."""

from __future__ import annotations

import asyncio
import math
import os
import signal
import time

import pytest

import framerate
from framerate import ReconnectPolicy


def run(coro, timeout: float = 60.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_backoff_is_the_protocol_rule():
    policy = ReconnectPolicy()
    assert [policy.delay(n, 0.5) for n in range(10)] == pytest.approx(
        [0.010, 0.020, 0.040, 0.080, 0.160, 0.320, 0.640, 1.0, 1.0, 1.0], abs=1e-12)
    assert policy.delay(0, 0.0) == pytest.approx(0.009)  # -10 %
    assert policy.delay(0, 1.0) == pytest.approx(0.011)  # +10 %
    assert policy.delay(3, 0.25) == pytest.approx(0.076)  # 80 ms * 0.95
    assert policy.delay(7, 1.0) == 1.0  # the jitter never passes the maximum
    assert policy.delay(7, 0.0) == pytest.approx(0.9)
    assert policy.delay(10_000, 0.5) == 1.0 and policy.delay(-3, 0.5) == pytest.approx(0.010)
    assert policy.delay(0, math.nan) == pytest.approx(0.009)
    assert policy.allows_attempt(10 ** 9)
    limited = ReconnectPolicy(maximum_attempts=3)
    assert [limited.allows_attempt(n) for n in range(5)] == [True, True, True, False, False]
    for bad in (dict(initial_delay=-1), dict(initial_delay=2, maximum_delay=1), dict(multiplier=0.5),
                dict(jitter=1.5), dict(maximum_attempts=0), dict(maximum_delay=math.inf), dict(multiplier=math.nan)):
        with pytest.raises(ValueError):
            ReconnectPolicy(**bad)


def test_calls_fail_at_once_while_the_daemon_is_gone(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(30, 60, 60, label="py-outage")
            watch = conn.watch()
            await watch.start()
            watch_id = watch.id
            last = await link.next_tick(5)
            # A call in flight when the connection drops fails at once: the daemon
            # is frozen (no answer), then killed.
            daemon.process.send_signal(signal.SIGSTOP)
            _, status = os.waitpid(daemon.process.pid, os.WUNTRACED)  # stopped now
            assert os.WIFSTOPPED(status)
            pending = asyncio.ensure_future(conn.health())
            await asyncio.sleep(0)  # the request is written
            daemon.process.kill()
            daemon.process.wait()
            with pytest.raises(framerate.ConnectionLost):
                await asyncio.wait_for(pending, 2)
            assert not conn.connected
            # Calls made during the outage fail at once; a FrameDone is dropped.
            started = time.monotonic()
            with pytest.raises(framerate.ConnectionLost):
                await conn.state()
            with pytest.raises(framerate.ConnectionLost):
                await link.pause()
            with pytest.raises(framerate.ConnectionLost):
                await conn.register(30, 60, 60)
            await link.frame_done(last.sequence)
            assert time.monotonic() - started < 1.0
            assert not link.ended
            # The link and the watch come back with the daemon; next_tick waits through it.
            await asyncio.get_running_loop().run_in_executor(None, daemon.start)
            while True:
                tick = await link.next_tick(15)
                assert tick.sequence == last.sequence + tick.skipped + 1
                if tick.timestamp > daemon.started_at:
                    break
                last = tick
            expected = max(1, math.floor((tick.timestamp - last.timestamp) * tick.callback_rate + 0.5) - 1)
            assert tick.skipped == expected and tick.link == link.id
            event = await watch.next_event(5)
            while event.kind != "resynchronized":
                event = await watch.next_event(5)
            assert event.watch == watch_id and "displays" in event["state"]
            assert watch.state is not None and [l.label for l in watch.state.links()] == ["py-outage"]
            assert await conn.health() == "SERVING" and conn.reconnects == 1

    run(main())


def test_backoff_against_a_stopped_daemon(daemon):
    async def main():
        policy = ReconnectPolicy(maximum_attempts=4)  # waits 10, 20, 40, 80 ms (±10 %), then gives up
        async with framerate.connect(daemon.socket_path, reconnect=policy) as conn:
            assert conn.policy == policy
            link = await conn.register(30, 60, 60)
            await link.next_tick(5)
            await asyncio.get_running_loop().run_in_executor(None, daemon.stop)
            stopped = time.monotonic()
            with pytest.raises(framerate.DaemonNotRunning) as caught:
                while True:
                    await link.next_tick(10)
            elapsed = time.monotonic() - stopped
            # 150 ms of waits less 10 % at least; far less than the 30 s reconnect_timeout.
            assert 0.135 <= elapsed < 3, elapsed
            assert "gave up reconnecting after 4 attempts" in caught.value.message
            with pytest.raises(framerate.DaemonNotRunning):
                await conn.health()

    run(main())
