"""present() and Presented against a real framerated, asyncio and blocking."""

from __future__ import annotations

import asyncio
import math
import time

import framerate

from conftest import wait_until


def run(coro, timeout: float = 30.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def awaited_frame(conn, link, seconds: float, until=lambda frame: frame is not None):
    """``link``'s ``awaiting_frame`` in GetState, polled until ``until`` holds of it or
    ``seconds`` pass (GetState's encoding is reused for up to 100 ms); the last one read."""
    async def read():
        state = await conn.state()
        return next(info for info in state.links() if info.link == link.daemon_id).awaiting_frame

    deadline = time.monotonic() + seconds
    frame = await read()
    while not until(frame) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
        frame = await read()
    return frame


def test_present_is_shown_at_the_next_vsync_and_reported(daemon):
    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(120, 120, 120, label="py-present", high_frame_rate=True)
            shown = []
            stalled = None
            async for tick in link:
                if tick.refresh_rate != 120:
                    continue
                if stalled is None and len(shown) >= 3:
                    stalled = tick
                    await asyncio.sleep(0.045)  # 45 ms late: past five vsyncs of 8.3 ms
                await link.present(tick.sequence)
                shown += link.presented()
                if stalled is not None and any(frame.sequence == stalled.sequence for frame in shown):
                    break
            assert all(isinstance(frame, framerate.Presented) and frame.link == link.id for frame in shown)
            on_time = [frame for frame in shown if frame.sequence != stalled.sequence]
            # Presented at once, a frame shows at its target (a loaded machine may make one late too).
            assert any(frame.hitch == 0 for frame in on_time)
            assert all(frame.presented_time == frame.expected_time for frame in on_time if frame.hitch == 0)
            late = next(frame for frame in shown if frame.sequence == stalled.sequence)
            assert not late.dropped
            assert math.isclose(late.expected_time, stalled.target_timestamp, abs_tol=2e-9)
            assert late.hitch >= 0.045 - 1 / 120 and math.isclose(late.hitch, late.presented_time - late.expected_time, abs_tol=2e-9)
            state = await conn.state()
            hitches = next(l["hitches"] for d in state["displays"] for l in d["links"] if l["link"] == link.daemon_id)
            assert hitches["late"] >= 1 and hitches["ratioMsPerS"] > 0 and hitches["window"] == 10.0

    run(main())


def test_blocking_present_and_a_dropped_frame(daemon):
    with framerate.connect_blocking(daemon.socket_path) as conn:
        link = conn.register(60, 60, 60, label="py-blocking")
        tick = link.next_tick(timeout=5)
        link.present(tick.sequence)
        link.present(tick.sequence, after_minimum_duration=0.0)  # replaces the first before its vsync
        frames = []

        def two_reports():
            frames.extend(link.presented())
            return len(frames) >= 2

        wait_until(two_reports, timeout=5, what="two Presented")
        assert [frame.dropped for frame in frames] == [True, False]
        assert frames[0].presented_time == 0 and frames[0].hitch == 0
        assert frames[1].presented_time >= time.monotonic() - 5


def test_state_names_the_tick_a_link_waits_for(daemon):
    """A link that answered a tick and then leaves its latest one unanswered gets no
    ticks: the state's ``awaiting_frame`` names that tick, with its timestamp and the
    intervals lost; answering it ends that wait (the link ticks again, and any new wait
    is for a later tick)."""

    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(60, 60, 60, label="py-waits")
            await link.frame_done((await link.__anext__()).sequence)

            frame = await awaited_frame(conn, link, seconds=10)
            assert isinstance(frame, framerate.AwaitingFrame), "no awaitingFrame within 10 s"
            assert frame.skipped >= 1
            # Every tick received so far: the awaited one is the latest (no reconnect, so
            # the link's numbering is the daemon's).
            received = []
            while True:
                try:
                    received.append(await asyncio.wait_for(link.__anext__(), 0.1))
                except asyncio.TimeoutError:
                    break
            # At least one: FrameDone for the first tick made the daemon tick again.
            assert received, "no tick after the answered one"
            assert received[-1].sequence == frame.sequence
            assert math.isclose(received[-1].timestamp, frame.since, abs_tol=2e-9)
            await link.frame_done(frame.sequence)
            after = await awaited_frame(conn, link, seconds=10, until=lambda after: after is None or after.sequence != frame.sequence)
            assert after is None or after.sequence > frame.sequence, f"still waiting for tick {frame.sequence}"

    run(main())


def test_present_of_a_tick_from_before_a_restart_reports_the_frame_done(daemon):
    """The daemon that serves the link after a restart never sent the ticks from before:
    ``Present`` of one (sequence 0 on the wire, which Present refuses, silently for a
    notification) becomes ``FrameDone`` 0, which turns pacing on as the Present would
    have: the link's latest tick, unanswered, holds it back, and GetState says so."""

    async def main():
        async with framerate.connect(daemon.socket_path) as conn:
            link = await conn.register(60, 60, 60, label="py-stale-present")
            old = await link.next_tick(5)
            await asyncio.get_running_loop().run_in_executor(None, daemon.restart)
            tick = await link.next_tick(15)
            while tick.timestamp < daemon.started_at:
                tick = await link.next_tick(15)
            await link.present(old.sequence)
            frame = await awaited_frame(conn, link, seconds=5)
            assert frame is not None, "the stale frame did not turn pacing on"
            assert not [shown for shown in link.presented() if shown.sequence <= old.sequence]

    run(main())
