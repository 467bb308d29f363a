"""The package's typed surface: GetState as dataclasses (with dict-style access kept),
``async with`` on a link, the blocking connection's ``fileno()`` for ``select``, and
``next_tick`` returning a Tick or raising."""

from __future__ import annotations

import asyncio
import os
import select
import signal

import pytest

import framerate
from framerate import CompositorState, Display, LinkInfo


def run(coro, timeout: float = 60.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def test_state_is_typed(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(80, 120, 120, label="py-typed", high_frame_rate=True)
            state = await conn.state()
            assert isinstance(state, CompositorState)
            (display,) = state.displays
            assert isinstance(display, Display) and display.id == 0 and display.profile == "promotion-phone"
            assert display.supported_rates[0] == 120.0 and display.refresh_rate in display.supported_rates
            assert display.caps.thermal_state == "nominal" and display.caps.low_power_mode is False
            assert isinstance(display.decision, dict) and display.reason
            (info,) = state.links()
            assert isinstance(info, LinkInfo)
            assert info.link == link.daemon_id and info.label == "py-typed" and info.high_frame_rate
            assert (info.range.minimum, info.range.maximum, info.range.preferred) == (80.0, 120.0, 120.0)
            assert info.paused is False and info.since is not None
            assert (info.pid, info.uid) == (os.getpid(), os.geteuid())  # our own link: never hidden
            assert state.display(0) is display and state.display(7) is None
            # Code written for the dict result keeps working.
            assert state["displays"][0]["links"][0]["label"] == "py-typed"
            assert display["caps"]["thermalState"] == "nominal" and info.get("label") == "py-typed"

    run(main())


def test_display_link_async_with_invalidates(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            async with await conn.register(30, 60, 60, label="py-scoped") as link:
                tick = await link.next_tick(5)
                assert isinstance(tick, framerate.Tick)
            assert link.ended and not list((await conn.state()).links())
            with pytest.raises(framerate.LinkEnded):
                for _ in range(100):  # ticks queued before the invalidation come first
                    await link.next_tick(1)
            with pytest.raises(TimeoutError):
                paused = await conn.register(30, 60, 60, paused=True)
                await paused.next_tick(0.2)

    run(main())


def _readable(conn, timeout: float) -> bool:
    return bool(select.select([conn], [], [], timeout)[0])


def test_blocking_fileno_for_select(daemon):
    with framerate.connect_blocking(daemon.socket_path) as conn:
        fd = conn.fileno()
        link = conn.register(30, 60, 60, label="py-select", paused=True)
        assert not _readable(conn, 0.05) and link.poll_tick() is None
        link.resume()
        assert _readable(conn, 5)
        tick = link.poll_tick()
        assert isinstance(tick, framerate.Tick) and tick.link == link.id
        link.pause()
        while True:  # let the ticks already sent arrive, then take them
            try:
                link.next_tick(0.3)
            except TimeoutError:
                break
        assert link.poll_tick() is None and not _readable(conn, 0)
        # The descriptor survives a reconnect (the socket does not).
        link.resume()
        daemon.restart()
        while link.next_tick(15).timestamp < daemon.started_at:
            pass
        assert conn.fileno() == fd and conn.reconnects == 1
        # An end the application caused is not waiting for it: invalidate() leaves the
        # descriptor unreadable (a select loop would spin on it until the dead link was
        # polled), while poll_tick still returns the ticks queued before, then raises.
        link.invalidate()
        assert not _readable(conn, 0.2)
        with pytest.raises(framerate.LinkEnded):
            for _ in range(100):
                assert link.poll_tick() is not None
        assert not _readable(conn, 0)
        # So do leaving `with` and unwatch(), and nothing of them is kept.
        watch = conn.watch()
        with conn.register(30, 60, 60, label="py-scoped") as scoped:
            scoped.next_tick(5)
        assert watch.next_event(5) is not None  # scoped's linkAdded, at least
        watch.unwatch()
        while watch.poll_event() is not None:  # events queued before the unwatch, then None
            pass
        assert not _readable(conn, 0.2)
        aio_conn = conn.async_connection
        assert not aio_conn._ended_links and not aio_conn._ended_watches
    with pytest.raises(framerate.ConnectionClosed):
        conn.state()


def test_blocking_ends_the_application_caused_are_not_kept(daemon):
    """Links invalidated and watches unwatched by the application are not queued as
    ends to report: the connection keeps nothing of them, however many come and go."""
    with framerate.connect_blocking(daemon.socket_path) as conn:
        for _ in range(20):
            with conn.register(30, 60, 60, paused=True):
                pass
            conn.register(30, 60, 60, paused=True).invalidate()
            with conn.watch():
                pass
        aio_conn = conn.async_connection
        assert not aio_conn._ended_links and not aio_conn._ended_watches
        assert not _readable(conn, 0.1)


def test_daemon_ended_link_disposed_of_is_not_kept(daemon):
    """A link the daemon ended waits (fileno readable) until the application takes the
    end, or disposes of the link: invalidate() (NotFound) or leaving ``with``."""
    with framerate.connect_blocking(daemon.socket_path, reconnect=False) as conn:
        link = conn.register(30, 60, 60, paused=True)
        daemon.stop(signal.SIGTERM)
        assert _readable(conn, 5)
        with pytest.raises(framerate.NotFound):
            link.invalidate()
        assert not _readable(conn, 0.1) and not conn.async_connection._ended_links
        with pytest.raises(framerate.Unavailable):  # the error it ended with, as documented
            link.poll_tick()


def test_blocking_end_by_the_daemon_wakes_select(daemon):
    with framerate.connect_blocking(daemon.socket_path, reconnect=False) as conn:
        link = conn.register(30, 60, 60, paused=True)
        assert not _readable(conn, 0.05)
        daemon.stop(signal.SIGTERM)
        assert _readable(conn, 5)
        with pytest.raises(framerate.Unavailable):
            while link.poll_tick() is None:
                assert _readable(conn, 5)
